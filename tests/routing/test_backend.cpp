// test_backend.cpp - backend choice (aiter mla_decode_backend, §4.3), the gfx1250 PS1 backend
// cases of aiter's shape-support test (§8) and aiter PR #6563's PS1 rules, occupancy and the
// reducer table (§3.6, §4.6).
#include "routing_test.h"

using rt_test::plan_of;
using rt_test::shape;
using rt_test::support_of;

namespace {
const mla_dtype F8 = MLA_DTYPE_FP8_E4M3FN, F8Z = MLA_DTYPE_FP8_E4M3FNUZ, B16 = MLA_DTYPE_BF16;

mla_decode_shape ps1(int h, int l, mla_dtype d = F8) {
    mla_decode_shape s = shape("gfx1250", h, l, d, d);
    s.flydsl_ps1 = 1;
    return s;
}
mla_backend backend(const mla_decode_shape& s) { return plan_of(s).backend; }
}  // namespace

TEST_CASE("gfx1250 PS1 backend cases of aiter's shape-support test", "[routing][backend][ps1]") {
    rt_test::use_fixtures();
    // (96, L4, lse) -> ps1_fp8_asm, supported iff the mla_dsl row exists.
    mla_decode_shape s = ps1(96, 4);
    s.return_lse = 1;
    mla_decode_support v = support_of(s);
    CHECK(v.backend == MLA_BACKEND_PS1_FP8_ASM);
    CHECK(v.asm_status == MLA_ASM_OK);
    CHECK(v.supported == 1);
    CHECK(std::string(v.asm_kernel) == "fx1250_ps1_g96_lse");
    CHECK(v.table_gqa == 96);
    CHECK(v.table_qseqlen == 0);
    s.cp_round_robin = 1;  // no lse+cprr row for 96 heads in the fixture
    v = support_of(s);
    CHECK(v.backend == MLA_BACKEND_PS1_FP8_ASM);
    CHECK(v.asm_status == MLA_ASM_NO_KERNEL);
    CHECK(v.supported == 0);
    // (64, L1, cprr) -> flydsl_ps1 (no availability table).
    s = ps1(64, 1);
    s.cp_round_robin = 1;
    v = support_of(s);
    CHECK(v.backend == MLA_BACKEND_FLYDSL_PS1);
    CHECK(v.asm_status == MLA_ASM_NOT_ASM);
    CHECK(v.supported == -1);
    CHECK(std::string(v.reasons) == "flydsl_ps1 backend has no availability table\n");
    // (96, L1, fast_mode False) -> ps1_fp8_asm, fold 6, unsupported.
    s = ps1(96, 1);
    s.fast_mode = 0;
    v = support_of(s);
    CHECK(v.backend == MLA_BACKEND_PS1_FP8_ASM);
    CHECK(v.fold_factor == 6);
    CHECK(v.supported == 0);
    CHECK(std::string(v.reasons).find("ps1_fp8_asm kernels read unfolded heads; planner v1_1 folds 96 heads 6x\n") == 0);
    // AITER_MLA_DECODE_PS1_ASM=0: 128 -> flydsl_ps1; (64, L1, fast_mode False) -> (flydsl_ps1, 4, False).
    s = ps1(128, 1);
    s.use_ps1_asm = 0;
    CHECK(support_of(s).backend == MLA_BACKEND_FLYDSL_PS1);
    s = ps1(64, 1);
    s.use_ps1_asm = 0;
    s.fast_mode = 0;
    v = support_of(s);
    CHECK(v.backend == MLA_BACKEND_FLYDSL_PS1);
    CHECK(v.fold_factor == 4);
    CHECK(v.supported == 0);
}

TEST_CASE("aiter PR #6563 PS1 head/qlen gate", "[routing][backend][ps1]") {
    // 16 heads only at qlen <= 4 (before the PR: any qlen).
    for (int l = 1; l <= 6; ++l)
        CHECK(backend(ps1(16, l)) == (l <= 4 ? MLA_BACKEND_FLYDSL_PS1 : MLA_BACKEND_ASM));
    // 32 heads at qlen <= 4, 64 at qlen <= 2 (heads x qlen <= 128), 128 at qlen 1.
    for (int l = 1; l <= 5; ++l) {
        INFO("qlen " << l);
        CHECK(backend(ps1(32, l)) == (l <= 4 ? MLA_BACKEND_FLYDSL_PS1 : MLA_BACKEND_ASM));
        CHECK(backend(ps1(64, l)) == (l <= 2 ? MLA_BACKEND_FLYDSL_PS1 : MLA_BACKEND_ASM));
        CHECK(backend(ps1(128, l)) == (l == 1 ? MLA_BACKEND_PS1_FP8_ASM : MLA_BACKEND_ASM));
    }
    CHECK(backend(ps1(96, 8)) == MLA_BACKEND_PS1_FP8_ASM);
    CHECK(backend(ps1(48, 1)) == MLA_BACKEND_ASM);
    // bf16/bf16 runs the FlyDSL JIT kernel, even for 96/128 heads, and needs no scales.
    for (int h : {16, 32, 64, 96, 128}) {
        mla_decode_shape s = ps1(h, 1, B16);
        s.has_scales = 0;
        CHECK(backend(s) == MLA_BACKEND_FLYDSL_PS1);
    }
    CHECK(backend(ps1(32, 4, B16)) == MLA_BACKEND_FLYDSL_PS1);
    CHECK(backend(ps1(64, 3, B16)) == MLA_BACKEND_ASM);
    // bf16 Q with fp8 KV is neither pair.
    mla_decode_shape m = shape("gfx1250", 96, 1, B16, F8);
    m.flydsl_ps1 = 1;
    CHECK(backend(m) == MLA_BACKEND_ASM);
}

TEST_CASE("PS1 route conditions", "[routing][backend][ps1]") {
    mla_decode_shape s = ps1(96, 2);
    CHECK(backend(s) == MLA_BACKEND_PS1_FP8_ASM);
    s.flydsl_ps1 = 0;
    CHECK(backend(s) == MLA_BACKEND_ASM);
    s = ps1(96, 2);
    s.page_size = 64;
    CHECK(backend(s) == MLA_BACKEND_ASM);
    s = ps1(96, 2);
    s.has_scales = 0;
    CHECK(backend(s) == MLA_BACKEND_ASM);
    s = ps1(96, 2);
    s.intra_batch_mode = 1;  // even with fast_mode (planner v1_2)
    CHECK(backend(s) == MLA_BACKEND_ASM);
    s = ps1(96, 2);
    s.cp_world_size = 4;
    CHECK(backend(s) == MLA_BACKEND_ASM);
    s.cp_round_robin = 1;
    CHECK(backend(s) == MLA_BACKEND_PS1_FP8_ASM);
    s = ps1(96, 2, F8Z);  // not gfx1250's fp8 variant: asm only
    CHECK(backend(s) == MLA_BACKEND_ASM);
    CHECK(backend(ps1(96, 2, MLA_DTYPE_BYTE)) == MLA_BACKEND_ASM);
    mla_decode_shape g = ps1(96, 2);
    g.arch = "gfx950";
    CHECK(backend(g) == MLA_BACKEND_ASM);
}

TEST_CASE("non-persistent launches always use stage-1 asm", "[routing][backend]") {
    rt_test::use_fixtures();
    mla_decode_shape s = ps1(96, 1);
    s.persistent = 0;
    CHECK(support_of(s).backend == MLA_BACKEND_ASM);
    mla_decode_shape o = shape("gfx950", 16, 1, B16, B16);
    o.use_opus = 1;
    o.persistent = 0;
    CHECK(support_of(o).backend == MLA_BACKEND_ASM);
}

TEST_CASE("opus on gfx950", "[routing][backend]") {
    rt_test::use_fixtures();
    mla_decode_shape s = shape("gfx950", 128, 1, F8, F8);
    s.use_opus = 1;
    CHECK(backend(s) == MLA_BACKEND_OPUS);
    s.has_scales = 0;
    CHECK(backend(s) == MLA_BACKEND_ASM);
    s = shape("gfx950", 16, 2, B16, B16);
    s.use_opus = 1;
    CHECK(backend(s) == MLA_BACKEND_OPUS);
    mla_decode_support v = support_of(s);
    CHECK(v.supported == -1);
    CHECK(std::string(v.reasons) == "opus backend has no availability table\n");
    s.page_size = 16;
    CHECK(backend(s) == MLA_BACKEND_ASM);
    s = shape("gfx950", 16, 2, B16, F8);
    s.use_opus = 1;
    CHECK(backend(s) == MLA_BACKEND_ASM);
    s = shape("gfx942", 16, 1, F8Z, F8Z);
    s.use_opus = 1;
    CHECK(backend(s) == MLA_BACKEND_ASM);
    // opus raises for context parallel without fp8 Q or without round-robin.
    s = shape("gfx950", 16, 2, B16, B16);
    s.use_opus = 1;
    s.cp_world_size = 2;
    v = support_of(s);
    CHECK(v.backend == MLA_BACKEND_OPUS);
    CHECK(v.supported == 0);
    CHECK(std::string(v.reasons) ==
          "opus context parallel (cp_world_size=2) needs fp8 Q and round-robin g_kv_indptr\n");
    s = shape("gfx950", 16, 2, F8, F8);
    s.use_opus = 1;
    s.cp_round_robin = 1;
    CHECK(support_of(s).supported == -1);
}

TEST_CASE("HipKittens is experimental and never runnable", "[routing][backend]") {
    rt_test::use_fixtures();
    mla_decode_shape s = shape("gfx950", 16, 4, F8, F8);  // kernel heads x qlen == 64
    CHECK(backend(s) == MLA_BACKEND_ASM);
    s.enable_experimental = 1;
    CHECK(backend(s) == MLA_BACKEND_HK);
    const mla_decode_support v = support_of(s);
    CHECK(v.backend == MLA_BACKEND_HK);
    CHECK(v.supported == 0);
    CHECK(v.asm_status == MLA_ASM_NOT_ASM);
    CHECK(std::string(v.reasons) ==
          "hk backend: hk_mla_decode_fwd is not defined (AITER_ENABLE_EXPERIMENTAL route)\n");
    s.page_size = 64;
    CHECK(backend(s) == MLA_BACKEND_HK);
    s.page_size = 16;
    CHECK(backend(s) == MLA_BACKEND_ASM);
    s = shape("gfx942", 32, 4, F8Z, F8Z);
    s.enable_experimental = 1;
    CHECK(backend(s) == MLA_BACKEND_HK);
    s.num_heads = 16;  // 64 rows: gfx950 only
    CHECK(backend(s) == MLA_BACKEND_ASM);
    s = shape("gfx950", 16, 4, B16, B16);
    s.enable_experimental = 1;
    CHECK(backend(s) == MLA_BACKEND_ASM);
}

TEST_CASE("occupancy multiplier", "[routing][backend]") {
    CHECK(mla_decode_occupancy("gfx950", 16, 4, F8, F8, 1) == 2);
    CHECK(mla_decode_occupancy("gfx950", 64, 1, F8, F8, 1) == 2);
    CHECK(mla_decode_occupancy("gfx950", 16, 4, F8, F8, 0) == 1);
    CHECK(mla_decode_occupancy("gfx950", 16, 4, B16, B16, 1) == 1);
    CHECK(mla_decode_occupancy("gfx950", 32, 4, F8, F8, 1) == 1);
    CHECK(mla_decode_occupancy("gfx942", 16, 4, F8Z, F8Z, 1) == 1);
    CHECK(mla_decode_occupancy("sm_90a", 16, 4, F8, F8, 1) == 1);
    CHECK(mla_decode_occupancy(nullptr, 16, 4, F8, F8, 1) == -1);
    CHECK(mla_decode_occupancy("gfx9000", 16, 4, F8, F8, 1) == -1);
    CHECK(mla_decode_occupancy("gfx950", 0, 4, F8, F8, 1) == -1);
    CHECK(mla_decode_occupancy("gfx950", 16, 0, F8, F8, 1) == -1);
    CHECK(mla_decode_occupancy("gfx950", 16, 4, MLA_DTYPE_FP32, F8, 1) == -1);
}

TEST_CASE("reducer support table has aiter's 24 rows", "[routing][backend]") {
    const int rows[24][2] = {{1, 128},  {2, 128},  {4, 128},  {8, 128},  {10, 128}, {16, 128},
                             {16, 512}, {24, 512}, {32, 128}, {32, 512}, {40, 128}, {48, 128},
                             {64, 64},  {64, 128}, {64, 512}, {96, 128}, {128, 128}, {128, 512},
                             {8, 512},  {12, 512}, {48, 512}, {80, 512}, {96, 512}, {112, 512}};
    int found = 0;
    for (int h = 0; h <= 256; ++h)
        for (int d : {0, 64, 128, 256, 512, 576}) found += mla_reduce_v1_supports(h, d);
    CHECK(found == 24);
    for (const auto& r : rows) CHECK(mla_reduce_v1_supports(r[0], r[1]) == 1);
    CHECK(mla_reduce_v1_supports(40, 512) == 0);
    CHECK(mla_reduce_v1_supports(-16, 512) == 0);
}
