// routing_test.h - helpers of the routing suite: the fixture code-object root and shape builders.
#pragma once
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>

#include "mla_c_api.h"
#include "routing/routing.h"

namespace rt_test {

// Points device-free queries at tests/fixtures (MLA_TEST_FIXTURES, set by tests/meson.build).
inline void use_fixtures() {
    const char* dir = std::getenv("MLA_TEST_FIXTURES");
    REQUIRE(dir != nullptr);
    REQUIRE(mla_set_codeobject_root(dir) == MLA_SUCCESS);
}

// A shape with aiter's query defaults (MLA_DECODE_SHAPE_INIT) and the given essentials.
inline mla_decode_shape shape(const char* arch, int heads, int qlen,
                              mla_dtype q = MLA_DTYPE_FP8_E4M3FN,
                              mla_dtype kv = MLA_DTYPE_FP8_E4M3FN) {
    mla_decode_shape s = MLA_DECODE_SHAPE_INIT;
    s.arch = arch;
    s.num_heads = heads;
    s.max_seqlen_qo = qlen;
    s.q_dtype = q;
    s.kv_dtype = kv;
    return s;
}

inline mla_head_plan plan_of(const mla_decode_shape& s) {
    mla_head_plan p = MLA_HEAD_PLAN_INIT;
    REQUIRE(mla_decode_head_plan(&s, &p) == MLA_SUCCESS);
    return p;
}

inline mla_decode_support support_of(const mla_decode_shape& s) {
    mla_decode_support v = MLA_DECODE_SUPPORT_INIT;
    const mla_status st = mla_decode_shape_support(&s, &v);
    INFO(mla_last_error());
    REQUIRE(st == MLA_SUCCESS);
    return v;
}

// fp8 variant the arch reads natively (aiter's "fp8").
inline mla_dtype fp8_of(const char* arch) {
    return std::string(arch) == "gfx942" ? MLA_DTYPE_FP8_E4M3FNUZ : MLA_DTYPE_FP8_E4M3FN;
}

// Packed return of mla_decode_asm_query.
struct Packed {
    int status, gqa, qseqlen;
};
inline Packed unpack(int r) { return {r & 0xff, (r >> 8) & 0xff, (r >> 16) & 0xff}; }

}  // namespace rt_test
