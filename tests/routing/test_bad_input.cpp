// test_bad_input.cpp - bad input gets a status and a message, never a crash, and nothing is
// written: unknown arch or dtype, heads < 1, qlen < 1, nhead_kv != 1, NULL pointers, bad
// struct_size; and the struct_size compatibility rules of mla_c_api.h.
#include <cstddef>
#include <cstring>
#include <string>

#include "routing_test.h"

using rt_test::shape;

namespace {

int asmq(const char* arch, const char* q, const char* kv, int heads, int nkv, int qlen,
         char* buf = nullptr, int len = 0) {
    mla_clear_last_error();
    return mla_decode_asm_query(arch, q, kv, heads, nkv, qlen, 1, 1, 0, 0, buf, len, nullptr);
}
bool error_mentions(const char* what) { return std::string(mla_last_error()).find(what) != std::string::npos; }

// Both shape entry points refuse `s` with `status`, mention `what` and leave outputs untouched.
void refuses(const mla_decode_shape& s, mla_status status, const char* what) {
    mla_head_plan p;
    std::memset(&p, 0xAB, sizeof(p));
    p.struct_size = sizeof(p);
    mla_head_plan p0 = p;
    mla_clear_last_error();
    CHECK(mla_decode_head_plan(&s, &p) == status);
    INFO(mla_last_error());
    CHECK(error_mentions(what));
    CHECK(std::memcmp(&p, &p0, sizeof(p)) == 0);
    mla_decode_support v;
    std::memset(&v, 0xAB, sizeof(v));
    v.struct_size = sizeof(v);
    std::string before(reinterpret_cast<const char*>(&v), sizeof(v));
    mla_clear_last_error();
    CHECK(mla_decode_shape_support(&s, &v) == status);
    CHECK(error_mentions(what));
    CHECK(std::string(reinterpret_cast<const char*>(&v), sizeof(v)) == before);
}

}  // namespace

TEST_CASE("asm query rejects bad arguments with a negative status", "[routing][bad]") {
    rt_test::use_fixtures();
    CHECK(asmq(nullptr, "fp8", "fp8", 16, 1, 1) == -MLA_ERROR_INVALID_ARGUMENT);
    CHECK(error_mentions("arch is NULL"));
    CHECK(asmq("gfx90a", "fp8", "fp8", 16, 1, 1) == -MLA_ERROR_ARCH_NOT_BUILT);
    CHECK(error_mentions("unknown arch 'gfx90a'"));
    CHECK(asmq("gfx950", nullptr, "fp8", 16, 1, 1) == -MLA_ERROR_INVALID_ARGUMENT);
    CHECK(error_mentions("q_type is NULL"));
    CHECK(asmq("gfx950", "fp8", nullptr, 16, 1, 1) == -MLA_ERROR_INVALID_ARGUMENT);
    CHECK(asmq("gfx950", "fp32", "fp8", 16, 1, 1) == -MLA_ERROR_INVALID_ARGUMENT);
    CHECK(error_mentions("q_type 'fp32'"));
    CHECK(asmq("gfx950", "fp8", "int4", 16, 1, 1) == -MLA_ERROR_INVALID_ARGUMENT);
    CHECK(error_mentions("kv_type 'int4'"));
    CHECK(asmq("gfx950", "fp8", "fp8", 0, 1, 1) == -MLA_ERROR_INVALID_ARGUMENT);
    CHECK(error_mentions("num_heads must be >= 1"));
    CHECK(asmq("gfx950", "fp8", "fp8", -16, 1, 1) == -MLA_ERROR_INVALID_ARGUMENT);
    CHECK(asmq("gfx950", "fp8", "fp8", 16, 2, 1) == -MLA_ERROR_INVALID_ARGUMENT);
    CHECK(error_mentions("nhead_kv must be 1"));
    CHECK(asmq("gfx950", "fp8", "fp8", 16, 0, 1) == -MLA_ERROR_INVALID_ARGUMENT);
    CHECK(asmq("gfx950", "fp8", "fp8", 16, 1, 0) == -MLA_ERROR_INVALID_ARGUMENT);
    CHECK(error_mentions("max_seqlen_q must be >= 1"));
    CHECK(asmq("gfx950", "fp8", "fp8", 16, 1, 1, nullptr, 16) == -MLA_ERROR_INVALID_ARGUMENT);
    CHECK(error_mentions("kernel_buf is NULL"));
    char buf[8] = "abcdefg";
    CHECK(asmq("gfx950", "fp8", "fp8", 16, 1, 1, buf, -1) == -MLA_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(buf) == "abcdefg");
    // the PS1 query
    CHECK(mla_ps1_fp8_asm_query(nullptr, 96, 1, 1, 0, 0, nullptr, 0, nullptr) == -MLA_ERROR_INVALID_ARGUMENT);
    CHECK(mla_ps1_fp8_asm_query("gfx2000", 96, 1, 1, 0, 0, nullptr, 0, nullptr) == -MLA_ERROR_ARCH_NOT_BUILT);
    CHECK(mla_ps1_fp8_asm_query("gfx1250", 0, 1, 1, 0, 0, nullptr, 0, nullptr) == -MLA_ERROR_INVALID_ARGUMENT);
    CHECK(mla_ps1_fp8_asm_query("gfx1250", 96, 0, 1, 0, 0, nullptr, 0, nullptr) == -MLA_ERROR_INVALID_ARGUMENT);
    CHECK(mla_ps1_fp8_asm_query("gfx1250", 96, 1, 1, 0, 0, nullptr, 4, nullptr) == -MLA_ERROR_INVALID_ARGUMENT);
}

TEST_CASE("head plan and shape support reject bad shapes", "[routing][bad]") {
    rt_test::use_fixtures();
    mla_decode_shape s = shape("gfx950", 16, 1);
    s.arch = nullptr;
    refuses(s, MLA_ERROR_INVALID_ARGUMENT, "arch is NULL");
    s.arch = "sm_80";
    refuses(s, MLA_ERROR_ARCH_NOT_BUILT, "unknown arch 'sm_80'");
    s = shape("gfx950", 0, 1);
    refuses(s, MLA_ERROR_INVALID_ARGUMENT, "num_heads must be >= 1");
    s = shape("gfx950", 16, 0);
    refuses(s, MLA_ERROR_INVALID_ARGUMENT, "max_seqlen_qo must be >= 1");
    s = shape("gfx950", 16, 1);
    s.num_heads_k = 2;
    refuses(s, MLA_ERROR_INVALID_ARGUMENT, "num_heads_k must be 1");
    s = shape("gfx950", 16, 1, MLA_DTYPE_FP32, MLA_DTYPE_BF16);
    refuses(s, MLA_ERROR_INVALID_ARGUMENT, "q_dtype 5");
    s = shape("gfx950", 16, 1, MLA_DTYPE_BF16, static_cast<mla_dtype>(42));
    refuses(s, MLA_ERROR_INVALID_ARGUMENT, "kv_dtype 42");
    s = shape("gfx950", 16, 1);
    s.page_size = 3;
    refuses(s, MLA_ERROR_INVALID_ARGUMENT, "page_size must be a power of two");
    s.page_size = 0;
    refuses(s, MLA_ERROR_INVALID_ARGUMENT, "page_size must be a power of two");
    s = shape("gfx950", 16, 1);
    s.uni_seqlen_qo = 0;
    refuses(s, MLA_ERROR_INVALID_ARGUMENT, "uni_seqlen_qo");
    s = shape("gfx950", 16, 1);
    s.cp_world_size = 0;
    refuses(s, MLA_ERROR_INVALID_ARGUMENT, "cp_world_size");
    s = shape("gfx950", 16, 1);
    s.v_head_dim = 0;
    refuses(s, MLA_ERROR_INVALID_ARGUMENT, "v_head_dim");
    s = shape("gfx950", 16, 1);
    s.struct_size = 0;
    refuses(s, MLA_ERROR_INVALID_ARGUMENT, "struct_size");
}

TEST_CASE("NULL pointers and output struct_size", "[routing][bad]") {
    const mla_decode_shape s = shape("gfx950", 16, 1);
    mla_head_plan p = MLA_HEAD_PLAN_INIT;
    CHECK(mla_decode_head_plan(nullptr, &p) == MLA_ERROR_INVALID_ARGUMENT);
    CHECK(error_mentions("shape is NULL"));
    CHECK(mla_decode_head_plan(&s, nullptr) == MLA_ERROR_INVALID_ARGUMENT);
    CHECK(error_mentions("plan is NULL"));
    mla_decode_support v = MLA_DECODE_SUPPORT_INIT;
    CHECK(mla_decode_shape_support(nullptr, &v) == MLA_ERROR_INVALID_ARGUMENT);
    CHECK(mla_decode_shape_support(&s, nullptr) == MLA_ERROR_INVALID_ARGUMENT);
    p.struct_size = 0;
    CHECK(mla_decode_head_plan(&s, &p) == MLA_ERROR_INVALID_ARGUMENT);
    CHECK(error_mentions("plan->struct_size is 0"));
}

TEST_CASE("older, shorter structs keep working", "[routing][abi]") {
    // A caller built before return_lse existed: later fields take their defaults, whatever
    // lies beyond its struct_size.
    mla_decode_shape s;
    std::memset(&s, 0x7F, sizeof(s));
    s.struct_size = offsetof(mla_decode_shape, return_lse);
    s.arch = "gfx950";
    s.num_heads = 48;
    s.num_heads_k = 1;
    s.max_seqlen_qo = 1;
    s.uni_seqlen_qo = -1;
    s.q_dtype = MLA_DTYPE_FP8_E4M3FN;
    s.kv_dtype = MLA_DTYPE_FP8_E4M3FN;
    s.v_head_dim = 512;
    s.page_size = 1;
    mla_head_plan p = MLA_HEAD_PLAN_INIT;
    REQUIRE(mla_decode_head_plan(&s, &p) == MLA_SUCCESS);
    CHECK(p.planner == MLA_PLANNER_V1_2);  // fast_mode default 1
    CHECK(p.qk_batch_ratio == 3);
    CHECK(p.backend == MLA_BACKEND_ASM);   // no experimental / opus defaults leaked in
    // A shorter output struct: only its bytes are written.
    mla_head_plan q;
    std::memset(&q, 0x5A, sizeof(q));
    q.struct_size = offsetof(mla_head_plan, kernel_num_heads);
    REQUIRE(mla_decode_head_plan(&s, &q) == MLA_SUCCESS);
    CHECK(q.struct_size == offsetof(mla_head_plan, kernel_num_heads));
    CHECK(q.qk_batch_ratio == 3);
    int32_t untouched;
    std::memset(&untouched, 0x5A, sizeof(untouched));
    CHECK(q.kernel_num_heads == untouched);
    CHECK(q.packed_qo_len_per_wg == untouched);
}

TEST_CASE("name strings", "[routing][abi]") {
    CHECK(std::string(mla_planner_string(MLA_PLANNER_V1_0)) == "v1_0");
    CHECK(std::string(mla_planner_string(MLA_PLANNER_V1_2)) == "v1_2");
    CHECK(std::string(mla_head_plan_string(MLA_HEAD_PLAN_ACCEPTED_NON_NATIVE)) == "AcceptedNonNative");
    CHECK(std::string(mla_head_plan_string(MLA_HEAD_PLAN_UNSUPPORTED)) == "Unsupported");
    CHECK(std::string(mla_backend_string(MLA_BACKEND_PS1_FP8_ASM)) == "ps1_fp8_asm");
    CHECK(std::string(mla_backend_string(MLA_BACKEND_SM90)) == "sm90");
    CHECK(std::string(mla_backend_string(static_cast<mla_backend>(99))) == "unknown");
    CHECK(std::string(mla_asm_status_string(MLA_ASM_REMAP_REJECT)) == "REMAP_REJECT");
    CHECK(std::string(mla_asm_status_string(MLA_ASM_NOT_ASM)) == "NOT_ASM");
    CHECK(std::string(mla_planner_string(static_cast<mla_planner>(7))) == "unknown");
}
