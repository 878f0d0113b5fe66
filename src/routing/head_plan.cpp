// head_plan.cpp - the head plan of a decode shape: which planner runs, whether the heads are a
// native kernel shape, how they fold into pseudo-batches, and the packed qo rows per workgroup.
// AMD archs follow aiter's csrc/include/mla_decode_shape.h (§4.2, §4.3 of the semantics doc;
// gfx1250 PS1 as widened by aiter PR #6563); sm_90a follows libmla's own kernels. See
// docs/routing.md for every rule and its source.
#include "routing/rules.h"

namespace mla::route {
namespace {

// Per-planner result before classification.
struct Fold {
    bool native = false;    // natively_supported
    bool accepted = false;  // the planner takes the (possibly folded) heads
    int ratio = 1;          // qk_batch_ratio
    int heads = 0;          // kernel_num_heads
    int seqlen_fold = 1;
    int packed = 128;       // packed_qo_len_per_wg
};

// aiter v1_0 / v1_1: native 16 and 128; other multiples of 16 below 128 fold to 16 heads.
// v1_0 (intra-batch) turns each token of a 128-head request into a pseudo-batch.
Fold plan_v1_0_v1_1(int h, int uni_l, bool v1_0) {
    Fold f;
    f.native = h == 16 || h == 128;
    f.heads = h;
    if (!f.native && h % 16 == 0 && h < 128) {
        f.ratio = h / 16;
        f.heads = 16;
    }
    f.accepted = f.heads == 16 || f.heads == 128;
    if (v1_0 && f.heads == 128) f.seqlen_fold = uni_l;
    return f;
}

// gfx1250 FlyDSL PS1 native head counts. aiter PR #5844: 96 at any qlen, 32/64/128 at qlen 1;
// aiter PR #6563 widened 32/64 to qlen <= 4 with heads x qlen <= 128 and added bf16/bf16.
bool gfx1250_ps1_heads(int h, int l) {
    if (h == 96) return true;
    return (h == 32 || h == 64 || h == 128) && l <= 4 && h * l <= 128;
}

// aiter v1_2 (fast_mode): the native list, the 16-head fold, the accepted list and the
// gfx950 64-row packing exceptions, all from §4.3.
Fold plan_v1_2(Arch a, int h, int l, bool fp8, bool bf16, bool experimental, bool flydsl_ps1) {
    const bool g942 = a == Arch::gfx942, g950 = a == Arch::gfx950, g1250 = a == Arch::gfx1250;
    const bool hk_mtp = (g942 || g950) && experimental && fp8 &&
                        (h == 16 || h == 32 || h == 64 || h == 128) && h * l == 128;
    Fold f;
    f.native = h == 16 ||
               (g1250 && flydsl_ps1 && (fp8 || bf16) && gfx1250_ps1_heads(h, l)) ||
               ((g942 || g950) && fp8 && h == 64 && l == 1) ||
               (g950 && bf16) ||
               (g942 && fp8 && h == 128) ||
               (g950 && fp8 &&
                (h == 32 || h == 64 || h == 128 || (h == 96 && l <= 6) || (h == 12 && h * l <= 128))) ||
               hk_mtp;
    f.heads = h;
    if (!f.native && h % 16 == 0) {
        f.ratio = h / 16;
        f.heads = 16;
    }
    const int k = f.heads;
    f.accepted = f.native || k == 16 || k == 128 || (k == 32 && fp8) || (k == 64 && fp8 && l == 1) ||
                 (g950 && k == 8 && fp8 && l == 4) || (g942 && k == 8 && bf16 && l == 2) ||
                 (g950 && bf16) || (g950 && fp8 && ((k == 32 && l == 4) || k == 64 || k == 128)) ||
                 hk_mtp;
    if ((g950 && bf16 && 64 <= k * l && k <= 64 && (k * l < 128 || k == 48)) ||
        (g950 && fp8 && k == 32 && l == 3))
        f.packed = 64;
    return f;
}

// sm_90a: kernels take up to 64 heads per row; above that the heads fold by the smallest
// divisor r >= ceil(H/64) (128 -> 64 x2, 96 -> 48 x2). q/kv bf16/bf16, bf16/fp8 or fp8/fp8
// (e4m3fn), pages of at most 1024 tokens.
Fold plan_sm90(const mla_decode_shape& s) {
    Fold f;
    const int h = s.num_heads;
    f.ratio = 1;
    if (h > 64) {
        f.ratio = (h + 63) / 64;
        while (h % f.ratio != 0) ++f.ratio;
    }
    f.heads = h / f.ratio;
    f.native = f.ratio == 1;
    const bool dtypes_ok = (s.q_dtype == MLA_DTYPE_BF16 && s.kv_dtype == MLA_DTYPE_BF16) ||
                           (s.q_dtype == MLA_DTYPE_BF16 && s.kv_dtype == MLA_DTYPE_FP8_E4M3FN) ||
                           (s.q_dtype == MLA_DTYPE_FP8_E4M3FN && s.kv_dtype == MLA_DTYPE_FP8_E4M3FN);
    f.accepted = dtypes_ok && s.page_size <= 1024;
    f.packed = 64;
    return f;
}

}  // namespace

const char* dtype_name(mla_dtype d) {
    switch (d) {
    case MLA_DTYPE_BF16: return "bf16";
    case MLA_DTYPE_FP16: return "fp16";
    case MLA_DTYPE_FP8_E4M3FN: return "fp8";
    case MLA_DTYPE_FP8_E4M3FNUZ: return "fp8_fnuz";
    case MLA_DTYPE_BYTE: return "byte";
    case MLA_DTYPE_FP32: return "fp32";
    }
    return "dtype(?)";
}

mla_dtype parse_query_dtype(const char* s, const char* what) {
    MLA_CHECK_ARG(s != nullptr, what << " is NULL");
    static const struct {
        const char* name;
        mla_dtype d;
    } kNames[] = {{"bf16", MLA_DTYPE_BF16},
                  {"fp16", MLA_DTYPE_FP16},
                  {"fp8", MLA_DTYPE_FP8_E4M3FN},
                  {"fp8_fnuz", MLA_DTYPE_FP8_E4M3FNUZ},
                  {"byte", MLA_DTYPE_BYTE}};
    for (const auto& n : kNames)
        if (!std::strcmp(s, n.name)) return n.d;
    MLA_FAIL(MLA_ERROR_INVALID_ARGUMENT,
             what << " '" << s << "' is not a decode dtype (bf16, fp16, fp8, fp8_fnuz, byte)");
}

Arch validate_shape(const mla_decode_shape& s) {
    const Arch a = parse_arch(s.arch);
    MLA_CHECK_ARG(s.num_heads >= 1, "num_heads must be >= 1 (got " << s.num_heads << ")");
    MLA_CHECK_ARG(s.num_heads_k == 1,
                  "num_heads_k must be 1 for absorbed MLA (got " << s.num_heads_k << ")");
    MLA_CHECK_ARG(s.max_seqlen_qo >= 1, "max_seqlen_qo must be >= 1 (got " << s.max_seqlen_qo << ")");
    MLA_CHECK_ARG(s.uni_seqlen_qo == -1 || s.uni_seqlen_qo >= 1,
                  "uni_seqlen_qo must be -1 or >= 1 (got " << s.uni_seqlen_qo << ")");
    MLA_CHECK_ARG(routable_dtype(s.q_dtype),
                  "q_dtype " << static_cast<int>(s.q_dtype)
                             << " is not a decode dtype (bf16, fp16, fp8, fp8_fnuz, byte)");
    MLA_CHECK_ARG(routable_dtype(s.kv_dtype),
                  "kv_dtype " << static_cast<int>(s.kv_dtype)
                              << " is not a decode dtype (bf16, fp16, fp8, fp8_fnuz, byte)");
    MLA_CHECK_ARG(s.v_head_dim >= 1, "v_head_dim must be >= 1 (got " << s.v_head_dim << ")");
    MLA_CHECK_ARG(is_pow2(s.page_size),
                  "page_size must be a power of two (got " << s.page_size << ")");
    MLA_CHECK_ARG(s.cp_world_size >= 1, "cp_world_size must be >= 1 (got " << s.cp_world_size << ")");
    return a;
}

mla_head_plan head_plan(const mla_decode_shape& s) {
    const Arch a = validate_shape(s);
    mla_head_plan p = MLA_HEAD_PLAN_INIT;
    // §4.2: fast_mode -> v1_2; else intra_batch_mode -> v1_0; else v1_1 (sm_90a the same).
    p.planner = s.fast_mode ? MLA_PLANNER_V1_2 : s.intra_batch_mode ? MLA_PLANNER_V1_0
                                                                     : MLA_PLANNER_V1_1;
    Fold f;
    if (a == Arch::sm90a) {
        f = plan_sm90(s);
    } else if (p.planner == MLA_PLANNER_V1_2) {
        f = plan_v1_2(a, s.num_heads, s.max_seqlen_qo, both_fp8(s.q_dtype, s.kv_dtype),
                      both_bf16(s.q_dtype, s.kv_dtype), s.enable_experimental != 0,
                      s.flydsl_ps1 != 0);
    } else {
        f = plan_v1_0_v1_1(s.num_heads, uni_seqlen(s), p.planner == MLA_PLANNER_V1_0);
    }
    // Classification (§4.3): not accepted -> Unsupported; folded -> Folded; else Native or
    // AcceptedNonNative by native support.
    p.plan = !f.accepted        ? MLA_HEAD_PLAN_UNSUPPORTED
             : f.ratio != 1     ? MLA_HEAD_PLAN_FOLDED
             : f.native         ? MLA_HEAD_PLAN_NATIVE
                                : MLA_HEAD_PLAN_ACCEPTED_NON_NATIVE;
    p.planner_accepts = f.accepted ? 1 : 0;
    p.natively_supported = f.native ? 1 : 0;
    p.qk_batch_ratio = f.ratio;
    p.kernel_num_heads = f.heads;
    p.seqlen_fold = f.seqlen_fold;
    p.packed_qo_len_per_wg = f.packed;
    p.reduce_supported = a == Arch::sm90a ? (s.v_head_dim == 512)
                                          : reduce_v1_supports(f.heads, s.v_head_dim);
    p.backend = plan_backend(a, s, p);
    return p;
}

}  // namespace mla::route
