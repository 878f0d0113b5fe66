// decode_launch_util.h - what the decode launch tests share (test_decode_launch.cpp,
// test_decode_tma.cpp): the project's sm_90a decode table, a code-object root of fake images for
// it, a planned call (Call), and the launch record's params block.
#pragma once
#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "decode_call.h"
#include "fake_runtime.h"
#include "fake_test_util.h"
#include "launch/decode_launch.h"
#include "mla_c_api.h"

namespace decode_test {

inline std::string tables_src() {
    const char* s = std::getenv("MLA_DECODE_TABLES");
    return s ? s : "codeobjects/sm_90a";
}

// The project's mla_decode.csv rows (14 fields each, header dropped).
inline const std::vector<std::vector<std::string>>& decode_rows() {
    static std::vector<std::vector<std::string>> rows;
    if (!rows.empty()) return rows;
    std::ifstream in(tables_src() + "/decode/mla_decode.csv");
    REQUIRE(in.good());
    std::string line;
    std::getline(in, line);
    while (std::getline(in, line)) {
        if (line.empty()) continue;
        std::vector<std::string> f;
        std::stringstream ss(line);
        std::string x;
        while (std::getline(ss, x, ',')) f.push_back(x);
        rows.push_back(f);
    }
    return rows;
}

// The table's kernel (and its launch_smem) for dtypes and row tile M: one symbol per (dtypes, M),
// whatever causal, lse or cprr (the table test checks that).
inline const std::vector<std::string>& table_row(mla_dtype q, mla_dtype kv, int m) {
    for (const auto& f : decode_rows())
        if (f[0] == mla_dtype_string(q) && f[1] == mla_dtype_string(kv) && f[2] == std::to_string(m))
            return f;
    FAIL("no mla_decode.csv row for " << mla_dtype_string(q) << "/" << mla_dtype_string(kv) << " M " << m);
    return decode_rows().front();
}
inline std::string table_symbol(mla_dtype q, mla_dtype kv, int m) { return table_row(q, kv, m)[11]; }
// The build a symbol names without its "_fused" or "_ws" suffix: a plain row (fused = 0) may name the *_fused
// build, which runs as the plain kernel without tile counters (the bf16 m32 rows since session 17:
// measured faster, docs/performance.md); an fp8 qm row may name the three-warpgroup build *_ws (built with
// -DMLA_QM8_WS=1 only; no shipped row does).
inline std::string plain_build(const std::string& sym) {
    for (const std::string suf : {"_fused", "_ws"})
        if (sym.size() > suf.size() && sym.compare(sym.size() - suf.size(), suf.size(), suf) == 0)
            return sym.substr(0, sym.size() - suf.size());
    return sym;
}
// The block size of a table row's kernel: 384 for the three-warpgroup fp8 qm build (_ws), else 256.
inline unsigned kernel_threads(const std::string& sym) { return plain_build(sym) + "_ws" == sym ? 384u : 256u; }
inline unsigned table_smem(mla_dtype q, mla_dtype kv, int m) { return unsigned(std::stoi(table_row(q, kv, m)[10])); }

// A code-object root holding the project's real sm_90a decode/reduce tables and fake images.
inline std::string fixture_root() {
    static std::string root;
    if (!root.empty()) return root;
    root = fake_root::sm90_decode_root(tables_src());  // tables + an image per named code object
    REQUIRE(!root.empty());
    const std::string arch = root + "/sm_90a";
    // and the fallback families no row names today
    for (const char* co : {"mla_decode_bf16_bf16", "mla_decode_bf16_fp8", "mla_decode_fp8_fp8",
                           "mla_decode_wg_bf16_bf16", "mla_decode_wg_bf16_fp8", "mla_decode_wg_fp8_fp8"})
        fake_test::write_fake_image(arch + "/decode/" + co + ".cubin", co);
    return root;
}

inline mla_context* make_ctx() { return fake_test::fake_context(fixture_root()); }

// DecodeCall (decode_call.h) whose planning must succeed unless strict = false.
struct Call : DecodeCall {
    Call(int B_, int H_, int L_, int ps_, int kv_len, mla_dtype qd_ = MLA_DTYPE_BF16,
         mla_dtype kvd_ = MLA_DTYPE_BF16, int causal = 1, bool strict = true, int cp_world = 1,
         int cp_rank = 0)
        : DecodeCall(B_, H_, L_, ps_, kv_len, qd_, kvd_, causal, cp_world, cp_rank) {
        if (!strict) return;
        INFO(why);
        REQUIRE(ok);
    }
};

// The summary of c's plan (planned again into the same buffers: the planner is deterministic).
inline mla_plan_summary summary_of(DecodeCall& c) {
    mla_plan_summary s{};
    s.struct_size = sizeof s;
    REQUIRE(mla_plan_metadata(&c.mp, c.qo.data(), c.kvi.data(), c.last.data(), &c.plan, nullptr, nullptr, &s) ==
            MLA_SUCCESS);
    return s;
}

inline mla_decode_params params_of(const fake_rt_launch_record* r) {
    mla_decode_params p;
    REQUIRE(r->args_bytes == sizeof p);
    std::memcpy(&p, r->args, sizeof p);
    return p;
}

// Resets the fake runtime, then runs a decode call of 3 requests x 16 heads on a fake context
// whose decode table is the one bf16 / bf16, 16-row, causal, lse row of the transposed kernel,
// with launch columns `cols` (",launch_kv_tma,...") set to `vals` (",1,..."): how a test sees
// what one launch column does. *ctx_out owns the context; returns mla_decode_fwd's status.
inline mla_status decode_on_m16_row(const std::string& cols, const std::string& vals, mla_context** ctx_out) {
    fake_rt_reset();
    const std::string root = fake_root::sm90_decode_root(
        tables_src(), "qType,kvType,Gqa,ps,qSeqLen,prefill,causal,lse,cprr,launch_threads,launch_smem,knl_name,co_name" +
                          cols + "\nbf16,bf16,16,1,0,0,1,1,0,256,170752,mla_decode_wg_bf16_bf16_m16," +
                          "mla_decode_wg_bf16_bf16.cubin" + vals + "\n");
    REQUIRE(!root.empty());
    *ctx_out = fake_test::fake_context(root);
    Call c(3, 16, 1, 64, 700);
    return mla_decode_fwd(*ctx_out, &c.a, nullptr);
}

// Expects `status` and no launch.
inline void expect_reject(mla_context* ctx, const mla_decode_args& a, mla_status status, const char* words) {
    const int before = fake_rt_launch_count();
    const mla_status st = mla_decode_fwd(ctx, &a, nullptr);
    INFO(mla_last_error());
    CHECK(st == status);
    CHECK(std::string(mla_last_error()).find(words) != std::string::npos);
    CHECK(fake_rt_launch_count() == before);
}

}  // namespace decode_test
