// test_head_plan.cpp - planner choice, native support, folding and classification (§4.2, §4.3,
// §8 "test_planner_verdict" and the native-gate table; gfx1250 PS1 per aiter PR #6563).
#include "routing_test.h"

using rt_test::plan_of;
using rt_test::shape;

namespace {
const mla_dtype F8 = MLA_DTYPE_FP8_E4M3FN, F8Z = MLA_DTYPE_FP8_E4M3FNUZ, B16 = MLA_DTYPE_BF16;

int fold(const char* arch, int h, int l, mla_dtype q, mla_dtype kv) {
    return plan_of(shape(arch, h, l, q, kv)).qk_batch_ratio;
}
// aiter's `native`: natively supported, no head fold, no seqlen fold.
bool native(const mla_decode_shape& s) {
    const mla_head_plan p = plan_of(s);
    return p.natively_supported && p.qk_batch_ratio == 1 && p.seqlen_fold == 1;
}
}  // namespace

TEST_CASE("planner choice follows fast_mode then intra_batch_mode", "[routing][head_plan]") {
    mla_decode_shape s = shape("gfx950", 16, 1);
    CHECK(plan_of(s).planner == MLA_PLANNER_V1_2);
    s.fast_mode = 0;
    s.intra_batch_mode = 1;
    CHECK(plan_of(s).planner == MLA_PLANNER_V1_0);
    s.intra_batch_mode = 0;
    CHECK(plan_of(s).planner == MLA_PLANNER_V1_1);
    s.fast_mode = 1;
    s.intra_batch_mode = 1;
    CHECK(plan_of(s).planner == MLA_PLANNER_V1_2);
}

TEST_CASE("v1_2 fold factors of aiter's planner verdict test", "[routing][head_plan]") {
    // gfx950 fp8: 48 -> 3; 64/96/128 -> 1; 96 at L6 -> 1, at L7 -> 6; 24 rejected.
    CHECK(fold("gfx950", 48, 1, F8, F8) == 3);
    for (int h : {64, 96, 128}) CHECK(fold("gfx950", h, 1, F8, F8) == 1);
    CHECK(fold("gfx950", 96, 6, F8, F8) == 1);
    CHECK(fold("gfx950", 96, 7, F8, F8) == 6);
    const mla_head_plan p24 = plan_of(shape("gfx950", 24, 1, F8, F8));
    CHECK(p24.plan == MLA_HEAD_PLAN_UNSUPPORTED);
    CHECK(p24.planner_accepts == 0);
    CHECK(p24.qk_batch_ratio == 1);
    CHECK(p24.kernel_num_heads == 24);
    // gfx950 bf16: 40/48/144 native.
    for (int h : {40, 48, 144}) {
        const mla_head_plan p = plan_of(shape("gfx950", h, 1, B16, B16));
        CHECK(p.qk_batch_ratio == 1);
        CHECK(p.plan == MLA_HEAD_PLAN_NATIVE);
        CHECK(p.kernel_num_heads == h);
    }
    // gfx942 fp8 (fnuz) 64: native at L1, folded 4x at L2; gfx942 bf16 128 -> 8.
    CHECK(fold("gfx942", 64, 1, F8Z, F8Z) == 1);
    CHECK(fold("gfx942", 64, 2, F8Z, F8Z) == 4);
    CHECK(fold("gfx942", 128, 1, B16, B16) == 8);
    // gfx1250 fp8 64 with FlyDSL PS1 off -> 4.
    CHECK(fold("gfx1250", 64, 1, F8, F8) == 4);
    // 144 fp8 heads fold 9x to 16 (aiter PR #6107: "fp8 144 now runs").
    const mla_head_plan p144 = plan_of(shape("gfx950", 144, 1, F8, F8));
    CHECK(p144.plan == MLA_HEAD_PLAN_FOLDED);
    CHECK(p144.qk_batch_ratio == 9);
    CHECK(p144.kernel_num_heads == 16);
}

TEST_CASE("both fp8 variants and a byte KV plan as fp8", "[routing][head_plan]") {
    CHECK(fold("gfx950", 64, 2, F8Z, F8Z) == 1);
    CHECK(fold("gfx942", 128, 1, F8, F8) == 1);
    CHECK(fold("gfx950", 128, 1, F8, MLA_DTYPE_BYTE) == 1);
    // fp16 is neither bf16 nor fp8: gfx950 folds it like any other dtype.
    CHECK(fold("gfx950", 64, 1, MLA_DTYPE_FP16, MLA_DTYPE_FP16) == 4);
}

TEST_CASE("native-gate table (gfx950, gfx942)", "[routing][head_plan]") {
    for (int h : {32, 64, 96, 128}) CHECK(native(shape("gfx950", h, 4, F8, F8)));
    CHECK_FALSE(native(shape("gfx950", 48, 4, F8, F8)));
    CHECK_FALSE(native(shape("gfx950", 96, 8, F8, F8)));
    for (int h : {16, 32, 48, 64, 96, 128})
        for (int l : {1, 2, 4}) {
            INFO("gfx942 heads " << h << " qlen " << l);
            CHECK(native(shape("gfx942", h, l, F8Z, F8Z)) == (h == 16 || h == 128 || (h == 64 && l == 1)));
        }
}

TEST_CASE("gfx1250 native gate follows the PS1 flag and aiter PR #6563", "[routing][head_plan][ps1]") {
    for (int ps1 : {0, 1, 2}) {
        for (int h : {32, 64, 96, 128}) {
            for (int l = 1; l <= 8; ++l) {
                mla_decode_shape s = shape("gfx1250", h, l, F8, F8);
                s.flydsl_ps1 = ps1;
                // PR #6563: 32/64 at qlen <= 4 with heads x qlen <= 128, 128 at qlen 1, 96 any.
                const bool want = ps1 != 0 && (h == 96 || (l <= 4 && h * l <= 128));
                INFO("ps1 " << ps1 << " heads " << h << " qlen " << l);
                CHECK(native(s) == want);
                CHECK(plan_of(s).qk_batch_ratio == (want ? 1 : h / 16));
            }
        }
    }
    // bf16/bf16 joins the PS1 route (PR #6563).
    mla_decode_shape s = shape("gfx1250", 64, 2, B16, B16);
    s.flydsl_ps1 = 1;
    CHECK(native(s));
    s.flydsl_ps1 = 0;
    CHECK(plan_of(s).qk_batch_ratio == 4);
    // 96 heads at qlen 1 and 7: fold 1 with the flag, 6 without (§8).
    for (int l : {1, 7}) {
        mla_decode_shape t = shape("gfx1250", 96, l, F8, F8);
        t.flydsl_ps1 = 1;
        CHECK(plan_of(t).qk_batch_ratio == 1);
        t.flydsl_ps1 = 0;
        CHECK(plan_of(t).qk_batch_ratio == 6);
    }
}

TEST_CASE("v1_2 accepted non-native shapes and rejections", "[routing][head_plan]") {
    const mla_head_plan a = plan_of(shape("gfx950", 8, 4, F8, F8));
    CHECK(a.plan == MLA_HEAD_PLAN_ACCEPTED_NON_NATIVE);
    CHECK(a.planner_accepts == 1);
    CHECK(a.natively_supported == 0);
    CHECK(plan_of(shape("gfx942", 8, 2, B16, B16)).plan == MLA_HEAD_PLAN_ACCEPTED_NON_NATIVE);
    CHECK(plan_of(shape("gfx942", 8, 1, F8Z, F8Z)).plan == MLA_HEAD_PLAN_UNSUPPORTED);
    CHECK(plan_of(shape("gfx950", 8, 2, F8, F8)).plan == MLA_HEAD_PLAN_UNSUPPORTED);
    // gfx950 fp8 12 heads: native while 12 x qlen <= 128.
    CHECK(plan_of(shape("gfx950", 12, 10, F8, F8)).plan == MLA_HEAD_PLAN_NATIVE);
    CHECK(plan_of(shape("gfx950", 12, 11, F8, F8)).plan == MLA_HEAD_PLAN_UNSUPPORTED);
}

TEST_CASE("hk_mtp_experimental native shapes", "[routing][head_plan]") {
    mla_decode_shape s = shape("gfx942", 32, 4, F8Z, F8Z);
    CHECK(plan_of(s).qk_batch_ratio == 2);
    s.enable_experimental = 1;
    const mla_head_plan p = plan_of(s);
    CHECK(p.qk_batch_ratio == 1);
    CHECK(p.plan == MLA_HEAD_PLAN_NATIVE);
    s.max_seqlen_qo = 2;  // 32 x 2 != 128
    CHECK(plan_of(s).qk_batch_ratio == 2);
}

TEST_CASE("v1_2 packed_qo_len_per_wg exceptions on gfx950", "[routing][head_plan]") {
    auto packed = [](int h, int l, mla_dtype d) {
        return plan_of(shape("gfx950", h, l, d, d)).packed_qo_len_per_wg;
    };
    CHECK(packed(16, 4, B16) == 64);
    CHECK(packed(16, 8, B16) == 128);
    CHECK(packed(16, 2, B16) == 128);
    CHECK(packed(48, 2, B16) == 64);
    CHECK(packed(48, 3, B16) == 64);
    CHECK(packed(64, 1, B16) == 64);
    CHECK(packed(64, 2, B16) == 128);
    CHECK(packed(128, 1, B16) == 128);
    CHECK(packed(32, 3, F8) == 64);
    CHECK(packed(32, 2, F8) == 128);
    CHECK(plan_of(shape("gfx942", 16, 4, B16, B16)).packed_qo_len_per_wg == 128);
}

TEST_CASE("v1_0 and v1_1 fold to 16 heads, v1_0 folds 128-head tokens", "[routing][head_plan]") {
    for (int intra : {0, 1}) {
        mla_decode_shape s = shape("gfx950", 64, 4, F8, F8);
        s.fast_mode = 0;
        s.intra_batch_mode = intra;
        mla_head_plan p = plan_of(s);
        CHECK(p.plan == MLA_HEAD_PLAN_FOLDED);
        CHECK(p.qk_batch_ratio == 4);
        CHECK(p.kernel_num_heads == 16);
        CHECK(p.packed_qo_len_per_wg == 128);
        s.num_heads = 96;
        CHECK(plan_of(s).qk_batch_ratio == 6);
        s.num_heads = 144;  // not below 128: no fold, rejected
        p = plan_of(s);
        CHECK(p.plan == MLA_HEAD_PLAN_UNSUPPORTED);
        CHECK(p.kernel_num_heads == 144);
        s.num_heads = 24;
        CHECK(plan_of(s).plan == MLA_HEAD_PLAN_UNSUPPORTED);
        s.num_heads = 128;
        p = plan_of(s);
        CHECK(p.plan == MLA_HEAD_PLAN_NATIVE);
        CHECK(p.seqlen_fold == (intra ? 4 : 1));
        s.uni_seqlen_qo = 3;
        CHECK(plan_of(s).seqlen_fold == (intra ? 3 : 1));
    }
}

TEST_CASE("reducer support follows the kernel heads", "[routing][head_plan]") {
    CHECK(plan_of(shape("gfx950", 128, 1, F8, F8)).reduce_supported == 1);
    CHECK(plan_of(shape("gfx950", 48, 1, F8, F8)).reduce_supported == 1);  // folded to 16
    mla_decode_shape s = shape("gfx950", 40, 1, B16, B16);                   // native 40
    CHECK(plan_of(s).reduce_supported == 0);  // no (40, 512) row
    s.v_head_dim = 128;
    CHECK(plan_of(s).reduce_supported == 1);  // (40, 128)
}

TEST_CASE("sm_90a head plan", "[routing][head_plan][sm90]") {
    struct Case {
        int h, ratio, hk;
    } cases[] = {{16, 1, 16}, {64, 1, 64}, {128, 2, 64}, {96, 2, 48}, {100, 2, 50},
                 {192, 3, 64}, {200, 4, 50}, {67, 67, 1}, {8, 1, 8}, {1, 1, 1}};
    for (const Case& c : cases) {
        INFO("heads " << c.h);
        const mla_head_plan p = plan_of(shape("sm_90a", c.h, 2, B16, B16));
        CHECK(p.qk_batch_ratio == c.ratio);
        CHECK(p.kernel_num_heads == c.hk);
        CHECK(p.plan == (c.ratio > 1 ? MLA_HEAD_PLAN_FOLDED : MLA_HEAD_PLAN_NATIVE));
        CHECK(p.natively_supported == (c.ratio == 1));
        CHECK(p.packed_qo_len_per_wg == 64);
        CHECK(p.seqlen_fold == 1);
        CHECK(p.backend == MLA_BACKEND_SM90);
        CHECK(p.reduce_supported == 1);
    }
    CHECK(plan_of(shape("sm_90a", 128, 1, B16, F8)).plan == MLA_HEAD_PLAN_FOLDED);
    CHECK(plan_of(shape("sm_90a", 64, 1, F8, F8)).plan == MLA_HEAD_PLAN_NATIVE);
    CHECK(plan_of(shape("sm_90a", 64, 1, F8, B16)).plan == MLA_HEAD_PLAN_UNSUPPORTED);
    CHECK(plan_of(shape("sm_90a", 64, 1, F8Z, F8Z)).plan == MLA_HEAD_PLAN_UNSUPPORTED);
    CHECK(plan_of(shape("sm_90a", 64, 1, MLA_DTYPE_FP16, MLA_DTYPE_FP16)).plan ==
          MLA_HEAD_PLAN_UNSUPPORTED);
    CHECK(plan_of(shape("sm_90a", 64, 1, B16, MLA_DTYPE_BYTE)).plan == MLA_HEAD_PLAN_UNSUPPORTED);
    mla_decode_shape s = shape("sm_90a", 64, 1, B16, B16);
    s.page_size = 1024;
    CHECK(plan_of(s).plan == MLA_HEAD_PLAN_NATIVE);
    s.page_size = 2048;
    CHECK(plan_of(s).plan == MLA_HEAD_PLAN_UNSUPPORTED);
    s.page_size = 64;
    s.v_head_dim = 256;
    CHECK(plan_of(s).reduce_supported == 0);
    s.v_head_dim = 512;
    s.fast_mode = 0;
    s.intra_batch_mode = 1;
    const mla_head_plan p = plan_of(s);
    CHECK(p.planner == MLA_PLANNER_V1_0);
    CHECK(p.seqlen_fold == 1);
}

TEST_CASE("internal head_plan matches the C entry point", "[routing][head_plan]") {
    const mla_decode_shape s = shape("gfx950", 48, 2, F8, F8);
    const mla_head_plan a = mla::route::head_plan(s);
    const mla_head_plan b = plan_of(s);
    CHECK(a.qk_batch_ratio == b.qk_batch_ratio);
    CHECK(a.kernel_num_heads == b.kernel_num_heads);
    CHECK(a.plan == b.plan);
    CHECK(a.backend == b.backend);
}
