// backend.cpp - which kernel family runs a persistent decode (aiter mla_decode_backend, §4.3,
// first match wins; gfx1250 PS1 as widened by aiter PR #6563), the reducer's support table
// (§4.6) and the planner's cluster multiplier (§3.6).
#include "routing/rules.h"

namespace mla::route {
namespace {

// gfx1250 FlyDSL PS1 head/qlen gate of the backend rule. Before aiter PR #6563: 16 or 96 heads
// at any qlen, 32/64/128 at qlen 1. PR #6563: 16 heads only at qlen <= 4; 32/64 at qlen <= 4
// with heads x qlen <= 128; 96 at any qlen; 128 at qlen 1.
bool ps1_heads_qlen(int h, int l) {
    if (h == 96) return true;
    if (h == 16) return l <= 4;
    return (h == 32 || h == 64 || h == 128) && l <= 4 && h * l <= 128;
}

}  // namespace

mla_backend plan_backend(Arch a, const mla_decode_shape& s, const mla_head_plan& p) {
    if (a == Arch::sm90a) return MLA_BACKEND_SM90;
    // The shape query's rule: an fp8 variant the arch does not read, or a byte buffer, only
    // has asm kernels (§3.5).
    if (forces_asm(a, s.q_dtype, s.kv_dtype)) return MLA_BACKEND_ASM;
    const int h = s.num_heads, l = s.max_seqlen_qo, hk = p.kernel_num_heads;
    const bool fp8 = both_fp8(s.q_dtype, s.kv_dtype), bf16 = both_bf16(s.q_dtype, s.kv_dtype);
    const bool rr = s.cp_round_robin != 0;
    const int cp_world = (rr && s.cp_world_size == 1) ? 2 : s.cp_world_size;
    // 1. gfx1250 FlyDSL PS1 (page size 1). fp8/fp8 needs both scales; bf16/bf16 (PR #6563)
    //    has none to give. 96/128 fp8 heads take the PS1 FP8 code objects unless use_ps1_asm
    //    is off; bf16 always runs the FlyDSL JIT kernel (the code objects are fp8 only).
    if (s.flydsl_ps1 && a == Arch::gfx1250 && s.page_size == 1 &&
        ((fp8 && s.has_scales) || bf16) && ps1_heads_qlen(h, l) && (cp_world == 1 || rr) &&
        !s.intra_batch_mode) {
        if (s.use_ps1_asm && fp8 && (h == 96 || h == 128)) return MLA_BACKEND_PS1_FP8_ASM;
        return MLA_BACKEND_FLYDSL_PS1;
    }
    // 2. gfx950 opus (page size 1).
    if (s.use_opus && a == Arch::gfx950 && s.page_size == 1 && ((fp8 && s.has_scales) || bf16))
        return MLA_BACKEND_OPUS;
    // 3. HipKittens, experimental, fp8/fp8.
    if (s.enable_experimental && fp8 && (s.page_size == 1 || s.page_size == 64) &&
        (((a == Arch::gfx942 || a == Arch::gfx950) && hk * l == 128) ||
         (a == Arch::gfx950 && hk * l == 64)))
        return MLA_BACKEND_HK;
    return MLA_BACKEND_ASM;
}

bool reduce_v1_supports(int num_heads, int head_dim) {
    // aiter csrc/include/mla_reduce_cases.h: the 24 (heads, head_dim) specialisations.
    static const int kRows[24][2] = {
        {1, 128},  {2, 128},  {4, 128},  {8, 128},  {10, 128}, {16, 128},
        {16, 512}, {24, 512}, {32, 128}, {32, 512}, {40, 128}, {48, 128},
        {64, 64},  {64, 128}, {64, 512}, {96, 128}, {128, 128}, {128, 512},
        {8, 512},  {12, 512}, {48, 512}, {80, 512}, {96, 512}, {112, 512}};
    for (const auto& r : kRows)
        if (r[0] == num_heads && r[1] == head_dim) return true;
    return false;
}

int occupancy(Arch a, int num_heads, int max_seqlen_q, mla_dtype q, mla_dtype kv,
              bool enable_experimental) {
    // aiter mla_metadata_cluster_multiplier (MLA V3.2 dtypes: everything fp8).
    return (a == Arch::gfx950 && enable_experimental && num_heads * max_seqlen_q == 64 &&
            both_fp8(q, kv))
               ? 2
               : 1;
}

}  // namespace mla::route
