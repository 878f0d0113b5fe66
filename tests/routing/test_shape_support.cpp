// test_shape_support.cpp - mla_decode_shape_support: every field, the supported verdict
// (1 / 0 / -1) and aiter's reason wording (§3.5), on the fixture tables.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include <unistd.h>

#include <sys/stat.h>

#include "routing_test.h"

using rt_test::shape;
using rt_test::support_of;

namespace {
const mla_dtype F8 = MLA_DTYPE_FP8_E4M3FN, B16 = MLA_DTYPE_BF16;
bool ends_with(const std::string& s, const std::string& t) {
    return s.size() >= t.size() && s.compare(s.size() - t.size(), t.size(), t) == 0;
}
}  // namespace

TEST_CASE("a supported persistent asm shape fills every field", "[routing][support]") {
    rt_test::use_fixtures();
    mla_decode_shape s = shape("gfx950", 128, 2, F8, F8);
    s.return_lse = 1;
    const mla_decode_support v = support_of(s);
    CHECK(v.struct_size == sizeof(mla_decode_support));
    CHECK(std::string(v.arch) == "gfx950");
    CHECK(v.enable_experimental == 0);
    CHECK(v.flydsl_ps1 == 0);
    CHECK(v.planner == MLA_PLANNER_V1_2);
    CHECK(v.plan == MLA_HEAD_PLAN_NATIVE);
    CHECK(v.planner_accepts == 1);
    CHECK(v.natively_supported == 1);
    CHECK(v.fold_factor == 1);
    CHECK(v.seqlen_fold == 1);
    CHECK(v.native == 1);
    CHECK(v.kernel_num_heads == 128);
    CHECK(v.packed_qo_len_per_wg == 128);
    CHECK(v.reduce_supported == 1);
    CHECK(v.backend == MLA_BACKEND_ASM);
    CHECK(v.asm_status == MLA_ASM_OK);
    CHECK(v.table_gqa == 32);
    CHECK(v.table_qseqlen == 4);
    CHECK(std::string(v.asm_kernel) == "fx950_fp8_g32_q4_lse_ps");
    CHECK(ends_with(v.code_object, "/fx950_fp8_g32_q4_lse_ps.co"));
    CHECK(v.supported == 1);
    CHECK(v.num_reasons == 0);
    CHECK(std::string(v.reasons).empty());
    CHECK(v.libmla_reducer == 0);  // AMD: split tiles need aiter's mla_reduce_v1
}

TEST_CASE("persistent asm queries the folded kernel heads", "[routing][support]") {
    rt_test::use_fixtures();
    const mla_decode_support v = support_of(shape("gfx942", 64, 2, MLA_DTYPE_FP8_E4M3FNUZ,
                                                  MLA_DTYPE_FP8_E4M3FNUZ));
    CHECK(v.plan == MLA_HEAD_PLAN_FOLDED);
    CHECK(v.fold_factor == 4);
    CHECK(v.native == 0);
    CHECK(v.kernel_num_heads == 16);
    CHECK(v.table_gqa == 16);
    CHECK(v.table_qseqlen == 2);
    CHECK(std::string(v.asm_kernel) == "fx942_fp8_g16_q2_ps");
    CHECK(v.supported == 1);
}

TEST_CASE("rejections give one reason each in aiter's wording", "[routing][support]") {
    rt_test::use_fixtures();
    mla_decode_support v = support_of(shape("gfx950", 24, 1, F8, F8));
    CHECK(v.plan == MLA_HEAD_PLAN_UNSUPPORTED);
    CHECK(v.planner_accepts == 0);
    CHECK(v.supported == 0);
    CHECK(v.num_reasons == 2);
    CHECK(std::string(v.reasons) ==
          "planner v1_2 rejects 24 heads on gfx950 (max_seqlen_qo=1, fp8/fp8)\n"
          "asm NO_KERNEL on gfx950: q=fp8 kv=fp8 heads=24 qlen=1 (table gqa=24 qseqlen=1) "
          "persistent=True causal=True lse=False cprr=False\n");
    // native 40 bf16 heads: no (40, 512) reducer case
    v = support_of(shape("gfx950", 40, 1, B16, B16));
    CHECK(v.native == 1);
    CHECK(v.reduce_supported == 0);
    CHECK(v.supported == 0);
    CHECK(std::string(v.reasons).find("mla_reduce_v1 has no (40 heads, head_dim 512) case\n") == 0);
    // remap reject: the aiter line, then the remap's reason
    mla_decode_shape s = shape("gfx950", 64, 2, F8, F8);
    s.persistent = 0;
    v = support_of(s);
    CHECK(v.asm_status == MLA_ASM_REMAP_REJECT);
    CHECK(v.table_gqa == -1);
    CHECK(v.table_qseqlen == -1);
    CHECK(v.supported == 0);
    CHECK(std::string(v.reasons) ==
          "asm REMAP_REJECT on gfx950: q=fp8 kv=fp8 heads=64 qlen=2 (table gqa=-1 qseqlen=-1) "
          "persistent=False causal=True lse=False cprr=False: fp8 gqa 64 only supports persistent "
          "mode\n");
}

TEST_CASE("non-persistent shapes are not gated by the planner or reducer", "[routing][support]") {
    rt_test::use_fixtures();
    mla_decode_shape s = shape("gfx950", 24, 1, F8, F8);
    s.persistent = 0;
    mla_decode_support v = support_of(s);
    CHECK(v.planner_accepts == 0);
    CHECK(v.num_reasons == 1);  // only the table
    CHECK(v.supported == 0);
    s = shape("gfx950", 128, 3, F8, F8);
    s.persistent = 0;
    s.return_lse = 1;  // lse only selects a kernel for persistent launches
    v = support_of(s);
    CHECK(v.supported == 1);
    CHECK(std::string(v.asm_kernel) == "fx950_fp8_g128_np");
    CHECK(v.table_qseqlen == 0);
}

TEST_CASE("gfx1250 stage-1 asm needs page size 64", "[routing][support]") {
    rt_test::use_fixtures();
    mla_decode_shape s = shape("gfx1250", 16, 4, F8, F8);
    s.persistent = 0;
    s.page_size = 64;
    mla_decode_support v = support_of(s);
    CHECK(v.supported == 1);
    CHECK(std::string(v.asm_kernel) == "fx1250_fp8_g16_q4_np");
    s.page_size = 1;
    v = support_of(s);
    CHECK(v.asm_status == MLA_ASM_NO_KERNEL);
    CHECK(v.supported == 0);
    CHECK(std::string(v.reasons).find(": gfx1250 stage-1 asm kernels need page_size 64\n") !=
          std::string::npos);
    // persistent gfx1250 without PS1: folded asm, which gfx1250 does not have
    v = support_of(shape("gfx1250", 64, 1, F8, F8));
    CHECK(v.fold_factor == 4);
    CHECK(v.backend == MLA_BACKEND_ASM);
    CHECK(v.asm_status == MLA_ASM_NO_KERNEL);
    CHECK(v.supported == 0);
}

TEST_CASE("sm_90a shape support reads the mla_decode table", "[routing][support][sm90]") {
    rt_test::use_fixtures();
    mla_decode_support v = support_of(shape("sm_90a", 128, 1, B16, B16));
    CHECK(std::string(v.arch) == "sm_90a");
    CHECK(v.backend == MLA_BACKEND_SM90);
    CHECK(v.plan == MLA_HEAD_PLAN_FOLDED);
    CHECK(v.fold_factor == 2);
    CHECK(v.kernel_num_heads == 64);
    CHECK(v.packed_qo_len_per_wg == 64);
    CHECK(v.asm_status == MLA_ASM_OK);
    CHECK(v.table_gqa == 64);
    CHECK(v.table_qseqlen == 0);
    CHECK(std::string(v.asm_kernel) == "fx_sm90_bf16_m64");
    CHECK(ends_with(v.code_object, "/fx_sm90_bf16_m64.cubin"));
    CHECK(v.supported == 1);
    CHECK(v.num_reasons == 0);
    CHECK(v.libmla_reducer == 1);  // libmla's own sm_90a reducer
    // 16 heads, 2 tokens: 32 rows -> M 32
    v = support_of(shape("sm_90a", 16, 2, B16, B16));
    CHECK(v.table_gqa == 32);
    CHECK(v.supported == 1);
    // no lse row for fp8 M32
    mla_decode_shape s = shape("sm_90a", 32, 1, F8, F8);
    s.return_lse = 1;
    v = support_of(s);
    CHECK(v.asm_status == MLA_ASM_NO_KERNEL);
    CHECK(v.supported == 0);
    CHECK(std::string(v.reasons) ==
          "sm90 NO_KERNEL on sm_90a: q=fp8 kv=fp8 heads=32 qlen=1 (table gqa=32 qseqlen=0) "
          "persistent=True causal=True lse=True cprr=False\n");
    // non-persistent: sm_90a has only persistent kernels
    s = shape("sm_90a", 64, 1, B16, B16);
    s.persistent = 0;
    v = support_of(s);
    CHECK(v.backend == MLA_BACKEND_SM90);
    CHECK(v.supported == 0);
    // round-robin CP: the fixture table has no cprr rows (the real table's are checked in
    // tests/decode and tests/python/test_routing.py)
    s = shape("sm_90a", 64, 2, B16, B16);
    s.cp_round_robin = 1;
    v = support_of(s);
    CHECK(v.supported == 0);
    CHECK(std::string(v.reasons).find("cprr=True") != std::string::npos);
    // cp_world_size > 1 alone selects round robin on sm_90a (mla_decode_fwd's key is W > 1)
    s.cp_round_robin = 0;
    s.cp_world_size = 2;
    CHECK(std::string(support_of(s).reasons).find("cprr=True") != std::string::npos);
    // round-robin context parallel is causal only, even at qlen 1
    s = shape("sm_90a", 64, 1, B16, B16);
    s.cp_round_robin = 1;
    s.causal = 0;
    v = support_of(s);
    CHECK(v.supported == 0);
    CHECK(std::string(v.reasons).rfind("sm90 round-robin context parallel (cp_world_size=2) is "
                                       "causal only, causal=False\n", 0) == 0);
    // dtypes, page size and v_head_dim the kernels do not take
    v = support_of(shape("sm_90a", 64, 1, MLA_DTYPE_FP16, MLA_DTYPE_FP16));
    CHECK(v.plan == MLA_HEAD_PLAN_UNSUPPORTED);
    CHECK(v.supported == 0);
    CHECK(std::string(v.reasons).find("sm90 kernels take q/kv bf16/bf16, bf16/fp8 or fp8/fp8 "
                                      "(fp8 = e4m3fn), not fp16/fp16\n") == 0);
    s = shape("sm_90a", 64, 1, B16, B16);
    s.page_size = 2048;
    v = support_of(s);
    CHECK(v.supported == 0);
    CHECK(std::string(v.reasons) == "sm90 kernels take page_size <= 1024, not 2048\n");
    s.page_size = 64;
    s.v_head_dim = 128;
    v = support_of(s);
    CHECK(v.reduce_supported == 0);
    CHECK(v.supported == 0);
    CHECK(std::string(v.reasons) == "sm90 kernels and reducer need v_head_dim 512, not 128\n");
}

TEST_CASE("a malformed table makes the answer unknown, not an error", "[routing][support]") {
    char tmpl[] = "/tmp/mla_route_bad_XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    const std::string dir = std::string(tmpl) + "/gfx950";
    REQUIRE(mkdir(dir.c_str(), 0755) == 0);
    {
        std::ofstream f(dir + "/mla_asm.csv");
        f << "qType,kvType,Gqa,ps,qSeqLen,prefill,causal,lse,cprr,knl_name,co_name\n"
          << "fp8,fp8,16,1,1,0,1,0,0,a,a.co\n"
          << "fp8,fp8,16,1,1,0,1,0,0,b,b.co\n";
    }
    REQUIRE(mla_set_codeobject_root(tmpl) == MLA_SUCCESS);
    const mla_decode_support v = support_of(shape("gfx950", 16, 1, F8, F8));
    CHECK(v.asm_status == MLA_ASM_UNKNOWN);
    CHECK(v.supported == -1);
    CHECK(v.num_reasons == 1);
    CHECK(std::string(v.reasons).rfind("asm query failed: ", 0) == 0);
    CHECK(mla_decode_asm_query("gfx950", "fp8", "fp8", 16, 1, 1, 1, 1, 0, 0, nullptr, 0, nullptr) ==
          -MLA_ERROR_TABLE);
    CHECK(std::string(mla_last_error()).find("duplicate") != std::string::npos);
    std::remove((dir + "/mla_asm.csv").c_str());
    rmdir(dir.c_str());
    rmdir(tmpl);
    rt_test::use_fixtures();
}
