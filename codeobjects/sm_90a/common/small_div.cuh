// small_div.cuh - q = a / d, r = a % d for the decode bodies' tile-row arithmetic (a row of a
// tile split into query token a / kernel_heads and head a % kernel_heads; kernel_heads is a
// runtime value). An integer division by a runtime divisor is ~25 SASS instructions (I2F.RP,
// MUFU.RCP, IMAD.HI and its fixups), emitted again in every unrolled iteration that needs it: the
// 16-row wg kernel held 21 of them (load_q, row_limit, the work record, the stores; session 34). This is
// one MUFU.RCP (shared by every use with the same d) and four ALU instructions.
//
// Exact for 0 <= a < 2^20 and 1 <= d < 2^24 (tests/decode/test_small_div.cpp checks it with the
// reciprocal 1 ulp either side): x = (a + 0.5) / d lies at least 0.5 / d from an integer, and
// rcp.approx.ftz.f32 (at most 1 ulp, 2^-23 relative) and the product's rounding (2^-24) move it by
// at most 1.5 x 2^-23 x, less than 0.5 / d while a + 0.5 < 2^23 / 3. Callers pass tile rows (< 256)
// only. Host-compilable (no CUDA header) so that the test runs the same formula.
#pragma once

namespace mla_div {

struct DivMod {
    int q, r;
};

// q and r of a / d from rd, a reciprocal of d within 1 ulp (rcp_approx below).
#ifdef __CUDACC__
__host__ __device__
#endif
    inline DivMod divmod_rd(int a, int d, float rd) {
    const int q = static_cast<int>((static_cast<float>(a) + 0.5f) * rd);
    return {q, a - q * d};
}

#ifdef __CUDACC__
// 1 / d within 1 ulp (__fdividef: div.approx, MUFU.RCP; a pure intrinsic, so uses with one d share it)
__device__ __forceinline__ float rcp_approx(int d) { return __fdividef(1.0f, static_cast<float>(d)); }

// MLA_DIV_RCP (shipped 1 since session 34; in the wg bf16/bf16 cubin at `q_row` only in session 35
// and at every site since session 36: its .cu says why):
// the decode bodies' tile rows divided through divmod_rd; 0, the plain `/` and `%` (the cubins
// before session 34). Measured with MLA_LOADQ_ROW (wg_common.cuh), session 34 call 1, same
// machine: 128 heads -4.9 µs, bf16 Q / fp8 KV -1.5, fp8 16 heads -2.7, 64 heads +0.2 (level);
// in the wg bf16/bf16 cubin main job -0.7, b 1 -0.9, b 64 -0.8, 16 x MTP 2 -0.9, but page 1
// +36 (call 2) on that cubin's old cp.async loader.
#ifndef MLA_DIV_RCP
#define MLA_DIV_RCP 1
#endif

// The places that divide tile rows (kSite of divmod_row), for MLA_DIV_RCP_SITES (a measurement
// hook, session 34: which of them changed the page-1 ring's code in the wg bf16/bf16 cubin).
constexpr int kDivQRow = 1, kDivLimit = 2, kDivLse = 4, kDivStore = 8, kDivFused = 16, kDivMmaSync = 32;
#ifndef MLA_DIV_RCP_SITES
#define MLA_DIV_RCP_SITES 63
#endif

// a / d and a % d for a tile row a (0 <= a < 2^20) and d >= 1, at place kSite.
template <int kSite>
__device__ __forceinline__ DivMod divmod_row(int a, int d) {
    if constexpr (MLA_DIV_RCP && (MLA_DIV_RCP_SITES & kSite))
        return divmod_rd(a, d, rcp_approx(d));
    else
        return {a / d, a % d};
}
#endif

}  // namespace mla_div
