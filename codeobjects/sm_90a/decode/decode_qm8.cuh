// decode_qm8.cuh - the qm kernel's body for fp8 Q and fp8 KV loaded by TMA (64-row tiles: 64 and 128
// heads, MTP with heads x tokens up to 64), on the fp8 tensor cores. decode_qm.cuh's cp.async body
// widens every fp8 tile to bf16 in shared memory and runs bf16 MMAs in lock step (two CTA
// barriers per tile); here no tile is widened in shared memory:
//   S [64 rows x 64 tokens] = Q . K^T      18 x wgmma.m64n64k32.e4m3 (both operands fp8, K-major,
//                                          128-byte swizzle, straight from the TMA boxes), by
//                                          warpgroup 0; exact products, fp32 accumulators (Hopper
//                                          adds fp8 products with fewer mantissa bits: two chains)
//   softmax in registers (qm_common.cuh, the rows' layout of the bf16 qm bodies); P^T (f16, K-major)
//                                          into the tile's rope block, dead once S is done
//   O^T [512 dims x 64 rows] += V^T . P^T   f16 wgmma.m64n64k16 with A = V^T fragments built in
//                                          registers from the raw fp8 rows (exact e4m3 -> f16, as the
//                                          register-A kernel does, decode_ra.cuh) and B = P^T; warpgroup
//                                          w keeps dims 256 w .. 256 w + 255 (4 m-blocks, 128 fp32
//                                          registers a thread)
// A tile is 5 TMA boxes of 64 tokens x 128 bytes (40 KB: dims 0..511 in blocks 0-3, the rope in the
// first half of block 4), so the ring holds 4 tiles (3 in flight while one is computed) beside Q
// (fp8, 40 KB). Per tile t (slot t % 4):
//   warpgroup 0:  waits for the tile; S(t); softmax; P^T(t), alpha(t) and the tile's rescale flags
//                 stored; barrier PREADY(t); its O^T half; barrier EMPTY(t) (its share of the slot
//                 is free);
//   warpgroup 1:  syncs on PREADY(t); its O^T half; syncs on EMPTY(t) and issues tile t + 4 into the
//                 slot (issue_tile_tma_tpt, 2 threads per token, the page looked up a tile ahead).
// The softmax moves the running max lazily (MLA_QM8_LAZY), so alpha is 1 on most tiles and O^T is
// rescaled only on tiles whose flags say some row's max moved. Named barriers PREADY and EMPTY in
// 4 copies (by t % 4): an id is reused 4 tiles later only after the other side passed it (tile
// t + 4 lands only after warpgroup 1 passed EMPTY(t), after PREADY(t)). Masked keys (past the
// work's end, bad pages; flagged by the issuer) are masked in S and their V bytes replaced by
// zeros in the fragments, so stale or NaN bytes never reach P.V. Measured variants (session 20,
// docs/performance.md): the two warpgroups taking turns with S and the softmax (FlashMLA's seesaw
// idea, the running max handed over through shared memory) was 13% slower at 128 heads; the exact
// running max 4.5% slower.
// Dispatched by decode_qm_dispatch where the host encoded the cache's fp8 tensor map (p.kv_tma:
// table launch_kv_tma 1, page size >= 8); otherwise the cp.async body runs. Design and measurements:
// docs/kernels.md, docs/performance.md (session 20).
#pragma once
#include "decode/decode_ra.cuh"  // prmt, e4m3 -> f16x2, v_fragments_w
#include "decode/kv_load.cuh"
#include "decode/qm_common.cuh"

// Independent accumulator chains of S (k-step kk goes to chain kk % N, summed in fp32): each chain
// adds half the fp8 products on the tensor cores (precision, decode_ra.cuh's file comment).
#ifndef MLA_QM8_SCHAINS
#define MLA_QM8_SCHAINS 2
#endif
// The softmax's lazy max (qm_softmax_p kLazy, base-2 units; 0: the running max is the exact max).
#ifndef MLA_QM8_LAZY
#define MLA_QM8_LAZY 8
#endif
// The epilogue's factors kv_scale / l (MLA_QM8_INV1, shipped 1 since session 34): 1, warpgroup
// 0's quad leaders write each row's factor (and store its LSE) before the barrier, and stage_o
// reads it; 0, stage_o divides for each of its 16 rows (16 divisions a thread, each with its
// slow-path call). Session 34 call 1: fp8 128 heads 258.3 → 256.4 µs alone, 257.0 with MLA_DIV_RCP.
#ifndef MLA_QM8_INV1
#define MLA_QM8_INV1 1
#endif
// MLA_QM8_P8 (session 41, measurement build; 0 shipped): O^T on the fp8 tensor cores. 1: P^T rounded
// to e4m3 (aiter's fp8-Q semantics, aiter-mla-semantics.md: exp(s - max) cast to fp8 before P.V;
// here at the running max) and O^T += V^T . P^T as 8 x wgmma.m64n64k32.e4m3 a warpgroup half a
// tile, A = V^T fragments of raw fp8 bytes (4 x 4 byte transposes, no conversion); 0: f16 P^T and
// f16 MMAs (pv_half).
#ifndef MLA_QM8_P8
#define MLA_QM8_P8 0
#endif
// MLA_QM8_PRE (session 41, measurement build; 0 shipped): warpgroup 1 waits for the tile, builds
// all four k-steps' V^T fragments of its O^T half (64 registers) and only then syncs on PREADY, so
// that its O^T MMAs issue back to back once P^T is there (pv_half_pre); 0: pv_half after PREADY.
#ifndef MLA_QM8_PRE
#define MLA_QM8_PRE 0
#endif
#if MLA_QM8_PRE && MLA_QM8_P8
#error "MLA_QM8_PRE builds f16 V^T fragments: it does not combine with MLA_QM8_P8's e4m3 P^T"
#endif

namespace mla_q8 {

using namespace mla_wg;

constexpr int kSlots = 4;            // ring of fp8 tiles
constexpr int kTile8 = 5 * kBlk;     // an fp8 tile: 5 blocks of 64 rows x 128 B (the last one half past the row)
constexpr int kSSteps = kD / 32;     // k-steps of S (32 fp8 dims each)

struct CfgQM8 {
    static constexpr int OFF_Q = 0;                          // Q fp8, 5 swizzled blocks of 64 rows
    static constexpr int OFF_KV = 5 * kBlk;                  // ring [kSlots]; P^T(t) in block 4 of its slot
    static constexpr int OFF_AL = OFF_KV + kSlots * kTile8;  // alpha [kSlots][64]
    static constexpr int OFF_MX = OFF_AL + kSlots * 64 * 4;  // the rows' running max [64] (warpgroup 0)
    static constexpr int OFF_LX = OFF_MX + 64 * 4;           // the rows' l [64] (epilogue)
    static constexpr int OFF_SF = OFF_LX + 64 * 4;           // rescale flags [kSlots][4 warps]
    static constexpr int OFF_TOK = OFF_SF + kSlots * 4 * 4;  // token flags [kSlots][64]
    static constexpr int OFF_BAR = OFF_TOK + kSlots * kTN * 4;  // mbarriers [kSlots]
    static constexpr int SMEM = OFF_BAR + kSlots * 8;
    static_assert(SMEM <= mla_decode_qm_smem_bytes(true), "more than the qm rows' launch_smem");
    static_assert(64 * kOPitch * 4 <= kSlots * kTile8, "output staging does not fit the ring");
    static_assert(OFF_KV % 1024 == 0 && kTile8 % 1024 == 0, "swizzle atoms");
};

// named barriers of this body (0 is __syncthreads): PREADY + t % 4, EMPTY + t % 4, warpgroup 0
constexpr int kBarPReady = 1, kBarEmpty = 5, kBarWg0 = 9;

// D[64 x 64] (+)= A . B, e4m3 x e4m3 -> fp32, both operands K-major in shared memory, given by
// their descriptors' low words and common high word (as wgmma_n64_ss_lo, qm_common.cuh).
__device__ __forceinline__ void wgmma_n64_e4m3_ss_lo(float (&d)[32], uint32_t alo, uint32_t blo, uint32_t hi,
                                                     int acc) {
    asm volatile(
        "{\n.reg .pred p;\n.reg .b64 da, db;\nsetp.ne.b32 p, %35, 0;\n"
        "mov.b64 da, {%32, %34};\nmov.b64 db, {%33, %34};\n"
        "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 {"
        "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"
        "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, "
        "da, db, p, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
        : "r"(alo), "r"(blo), "r"(hi), "r"(acc));
}

// D[64 x 64] += A . B, f16 x f16 -> fp32, A (64 x 16) from registers, B (K-major) by descriptor.
__device__ __forceinline__ void wgmma_n64_f16_rs(float (&d)[32], const uint32_t (&a)[4], uint64_t b) {
    asm volatile(
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {"
        "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"
        "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, "
        "{%32,%33,%34,%35}, %36, 1, 1, 1, 0;\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
}

// Work w's fp8 Q rows -> shared memory at qbase (5 blocks of 64 rows x 128 B, 128-byte swizzle:
// the K-major layout of the S MMAs' A operand), by cp.async, one commit group (the caller waits);
// rows past w.nrows are zero. Block 4 holds the rope in its first 64 bytes; the rest is not read.
// NT threads (tid = 0 .. NT - 1) share the copies.
template <int NT = 256>
__device__ __forceinline__ void load_q8(const mla_decode_params& p, const mla_dec::Work& w, uint32_t qbase, int tid) {
    for (int c = tid; c < 64 * (kD / 16); c += NT) {
        const int row = c / (kD / 16), q = c - row * (kD / 16);
        const bool ok = row < w.nrows;
        cp_async16(qbase + sw_off(64, row, q), ok ? q_row<true>(p, w, row) + 16 * q : p.q, ok ? 16 : 0);
    }
    cp_commit();
}

// S [64 x 64] = Q . K^T of the tile at descriptor dK into NA accumulator chains (k-step kk to chain
// kk % NA), issued by one warpgroup and committed, not waited for; s_take waits for them and sums
// them in fp32 into s.
template <int NA>
__device__ __forceinline__ void s_issue(float (&acc)[NA][32], uint64_t dQ, uint64_t dK) {
#pragma unroll
    for (int a = 0; a < NA; ++a) reg_fence(acc[a]);
    wg_fence();
    const uint32_t qlo = desc_lo_bcast(dQ), klo = desc_lo_bcast(dK);  // (MLA_WG_ULO: uniform registers)
#pragma unroll
    for (int kk = 0; kk < kSSteps; ++kk) {
        const uint32_t koff = uint32_t(((kk >> 2) * kBlk + (kk & 3) * 32) >> 4);
        wgmma_n64_e4m3_ss_lo(acc[kk % NA], qlo + koff, klo + koff, sw128_desc_hi(1024), kk >= NA ? 1 : 0);
    }
    wg_commit();
}
template <int NA>
__device__ __forceinline__ void s_take(float (&acc)[NA][32], float (&s)[32]) {
    wg_wait0();
#pragma unroll
    for (int a = 0; a < NA; ++a) reg_fence(acc[a]);
#pragma unroll
    for (int e = 0; e < 32; ++e) {
        s[e] = acc[0][e];
#pragma unroll
        for (int a = 1; a < NA; ++a) s[e] += acc[a][e];
    }
}

// S of the tile at dK with MLA_QM8_SCHAINS chains, issued and waited for.
__device__ __forceinline__ void s_mma(float (&s)[32], uint64_t dQ, uint64_t dK) {
    float sa[MLA_QM8_SCHAINS][32];
    s_issue(sa, dQ, dK);
    s_take(sa, s);
}

// Tile `tile` of work w into the ring slot at shared address slot_s (5 fp8 boxes, token flags tok,
// mbarrier bar), by the 128 threads of one warpgroup, 2 per token (wt = 0 .. 127; pg: the page).
__device__ __forceinline__ void issue_tile8(const mla_decode_params& p, const mla_dec::Work& w, int tile, int n_tiles,
                                            uint32_t slot_s, int* tok, uint32_t bar, const PagePrefetch& pg, int wt) {
    issue_tile_tma_tpt<2, false, 0x1Fu, true, 128>(p, w, tile, n_tiles, 0, slot_s, tok, bar, pg, nullptr, wt);
}

// A work's first kSlots tiles into ring slots 0 .. kSlots - 1 (CfgQM8's layout from shared address
// sbase; token flags tokok [kSlots][64]; mbarriers bar0 + 8 s), their page lookups in flight
// together, by one warpgroup (wt = 0 .. 127).
__device__ __forceinline__ void issue_ring8(const mla_decode_params& p, const mla_dec::Work& w, int n_tiles,
                                            uint32_t sbase, int* tokok, uint32_t bar0, int wt) {
    PagePrefetch pg[kSlots];
#pragma unroll
    for (int s = 0; s < kSlots; ++s) pg[s].fetch(p, w, s, n_tiles, wt >> 1, (wt & 1) == 0);
#pragma unroll
    for (int s = 0; s < kSlots; ++s)
        issue_tile8(p, w, s, n_tiles, sbase + CfgQM8::OFF_KV + s * kTile8, tokok + s * kTN, bar0 + 8 * s, pg[s], wt);
}

// P (fp32, qm_softmax_p's layout: rows r0 + 8 ((e >> 1) & 1), tokens 8 (e >> 2) + 2 q + (e & 1)) as
// f16 P^T [64 rows][64 tokens] at pt: the K-major B operand of the O^T MMAs (128-byte swizzle, one
// 128-byte row per query row), one 4-byte word per token pair.
__device__ __forceinline__ void store_pt(char* pt, const float (&s)[32], int r0, int q) {
#pragma unroll
    for (int e = 0; e < 32; e += 2) {
        const int row = r0 + 8 * ((e >> 1) & 1), g = e >> 2;
        *reinterpret_cast<__half2*>(pt + row * 128 + ((g ^ (row & 7)) << 4) + 4 * q) = __floats2half2_rn(s[e], s[e + 1]);
    }
}

// O^T (one warpgroup's half, o[4][32]) times the rows' alpha al[64] where `rescale` (uniform: some
// row's alpha is not 1); O^T columns are query rows 8 j + 2 q + e (accumulator index 4 j + 2 h + e).
// Then the accumulators are fenced for the MMAs.
__device__ __forceinline__ void rescale_o(float (&o)[4][32], const float* al, bool rescale) {
    const int q = threadIdx.x & 3;
#pragma unroll
    for (int j = 0; j < (rescale ? 8 : 0); ++j) {
        const float2 a2 = *reinterpret_cast<const float2*>(al + 8 * j + 2 * q);
#pragma unroll
        for (int mb = 0; mb < 4; ++mb) {
            o[mb][4 * j] *= a2.x;
            o[mb][4 * j + 1] *= a2.y;
            o[mb][4 * j + 2] *= a2.x;
            o[mb][4 * j + 3] *= a2.y;
        }
    }
#pragma unroll
    for (int mb = 0; mb < 4; ++mb) reg_fence(o[mb]);
}

// The raw V rows of f16 k-step ks for warpgroup wg's O^T half (pv_half, v_frags_all): this thread's
// 8 bytes of tokens t, t + 1, t + 8, t + 9 (t = 16 ks + 2 q) into r[4], zeros for tokens flagged 0
// in tok[] where `masked` (uniform). The thread's dims: block 2 wg + wl / 2, chunk 4 (wl & 1) +
// lane / 8, word pair (lane / 4) & 1; rows of parity 0 / 1 within the swizzle phase 2 q, 2 q + 1.
struct VRows {
    const char* r0p;
    const char* r1p;
    __device__ __forceinline__ VRows(const char* tile, int wg) {
        const int lane = threadIdx.x & 31, wl = (threadIdx.x >> 5) & 3, q = lane & 3;
        const int blk = 2 * wg + (wl >> 1), ch = 4 * (wl & 1) + (lane >> 3), hw = (lane >> 2) & 1;
        r0p = tile + blk * kBlk + 2 * q * 128 + (((ch ^ (2 * q)) << 4) + 8 * hw);
        r1p = tile + blk * kBlk + (2 * q + 1) * 128 + (((ch ^ (2 * q + 1)) << 4) + 8 * hw);
    }
    __device__ __forceinline__ void load(int ks, const int* tok, bool masked, uint2 (&r)[4]) const {
        r[0] = *reinterpret_cast<const uint2*>(r0p + ks * 2048);
        r[1] = *reinterpret_cast<const uint2*>(r1p + ks * 2048);
        r[2] = *reinterpret_cast<const uint2*>(r0p + ks * 2048 + 1024);
        r[3] = *reinterpret_cast<const uint2*>(r1p + ks * 2048 + 1024);
        if (masked) {
            const int t = 16 * ks + 2 * (threadIdx.x & 3);
            const int2 f01 = *reinterpret_cast<const int2*>(tok + t), f89 = *reinterpret_cast<const int2*>(tok + t + 8);
            if (f01.x == 0) r[0] = make_uint2(0, 0);
            if (f01.y == 0) r[1] = make_uint2(0, 0);
            if (f89.x == 0) r[2] = make_uint2(0, 0);
            if (f89.y == 0) r[3] = make_uint2(0, 0);
        }
    }
};

// The V^T fragments of f16 k-step ks from its raw rows (VRows::load): a[mb] for the 4 m-blocks.
__device__ __forceinline__ void v_frags_step(const uint2 (&r)[4], uint32_t (&a)[4][4]) {
    const uint32_t x0[2] = {r[0].x, r[0].y}, x1[2] = {r[1].x, r[1].y};
    const uint32_t x8[2] = {r[2].x, r[2].y}, x9[2] = {r[3].x, r[3].y};
    mla_ra::v_fragments_w<2>(x0, x1, x8, x9, a);
}

// One warpgroup's O^T half (dims 256 wg ..) of a tile: O^T scaled by the rows' alpha (al[64]) where
// `rescale` (uniform: some row's alpha is not 1), then O^T += V^T . P^T over the tile's 4 token
// steps (4 m-blocks each, A = V^T fragments from the raw fp8 rows of `tile`, B = P^T in its block
// 4), waited for. The thread's V dims are
// 256 wg + 8 G .. + 7 (G = 8 warp + lane / 4; m-block mb, rows r0 / r0 + 8: dims 8 G + 2 mb, + 1),
// one 8-byte word of a swizzled 16-byte chunk per token row. `masked` (uniform over the
// warpgroup): some token of the tile is flagged 0 in tok[]; its bytes then enter as zeros.
// kAhead: the raw rows of step ks + 1 are loaded before step ks is converted (8 more registers;
// the three-warpgroup body, decode_qm8_ws.cuh, loads each step's rows just before converting them).
template <bool kAhead = true>
__device__ __forceinline__ void pv_half(float (&o)[4][32], const char* tile, uint32_t tile_s, int wg, const float* al,
                                        const int* tok, bool masked, bool rescale) {
    rescale_o(o, al, rescale);
    const VRows vrows(tile, wg);
    const uint64_t dP = sw128_desc(tile_s + 4 * kBlk, 16, 1024);
#if MLA_WG_ULO  // (the low word broadcast from lane 0, 32-bit adds a k-step)
    const uint32_t plo = desc_lo_bcast(dP), phi = uint32_t(dP >> 32);
#endif
    uint32_t va[2][4][4];
    uint2 vr[kAhead ? 2 : 1][4];
    auto load_v = [&](int ks, uint2 (&r)[4]) { vrows.load(ks, tok, masked, r); };
    if (kAhead) load_v(0, vr[0]);
#pragma unroll
    for (int ks = 0; ks < kTN / 16; ++ks) {
        if (kAhead && ks + 1 < kTN / 16) load_v(ks + 1, vr[(ks + 1) & (kAhead ? 1 : 0)]);
        if (!kAhead) load_v(ks, vr[0]);
        if (ks >= 2) wg_wait1();  // step ks - 2 has read va[ks & 1]
        v_frags_step(vr[ks & (kAhead ? 1 : 0)], va[ks & 1]);
        wg_fence();  // the fragment registers were written: order them before the wgmmas
#pragma unroll
        for (int mb = 0; mb < 4; ++mb)
#if MLA_WG_ULO
            wgmma_n64_f16_rs(o[mb], va[ks & 1][mb], (uint64_t(phi) << 32) | (plo + uint32_t((ks * 32) >> 4)));
#else
            wgmma_n64_f16_rs(o[mb], va[ks & 1][mb], dP + uint64_t((ks * 32) >> 4));
#endif
        wg_commit();
    }
    wg_wait0();
#pragma unroll
    for (int mb = 0; mb < 4; ++mb) reg_fence(o[mb]);
}

// D[64 x 64] += A . B, e4m3 x e4m3 -> fp32, A (64 x 32) from registers, B (K-major) by descriptor.
__device__ __forceinline__ void wgmma_n64_e4m3_rs(float (&d)[32], const uint32_t (&a)[4], uint64_t b) {
    asm volatile(
        "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 {"
        "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"
        "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, "
        "{%32,%33,%34,%35}, %36, 1, 1, 1;\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
}

// P < 2^MLA_QM8_LAZY must stay below e4m3's largest value, 448, or the conversion clamps it.
static_assert(!MLA_QM8_P8 || MLA_QM8_LAZY <= 8, "MLA_QM8_P8 needs MLA_QM8_LAZY <= 8");
// Two fp32 -> e4m3x2 (lo in bits 7..0), round to nearest, saturated to +-448 (MLA_QM8_P8).
__device__ __forceinline__ uint16_t e4m3x2_of(float lo, float hi) {
    uint16_t r;
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;\n" : "=h"(r) : "f"(hi), "f"(lo));
    return r;
}

// P as e4m3 P^T [64 rows][64 tokens] at pt (MLA_QM8_P8): the K-major B operand of the fp8 O^T MMAs,
// a query row's 64 token bytes in the first four 16-byte chunks of its 128-byte swizzled row (k-step
// ks of 32 tokens at byte 32 ks, as store_pt's f16 k-steps of 16); one 2-byte word per token pair.
__device__ __forceinline__ void store_pt8(char* pt, const float (&s)[32], int r0, int q) {
#pragma unroll
    for (int e = 0; e < 32; e += 2) {
        const int row = r0 + 8 * ((e >> 1) & 1), g = e >> 2;  // tokens 8 g + 2 q, + 1
        *reinterpret_cast<uint16_t*>(pt + row * 128 + (((g >> 1) ^ (row & 7)) << 4) + 8 * (g & 1) + 2 * q) =
            e4m3x2_of(s[e], s[e + 1]);
    }
}

// Bytes b of words w0..w3 -> word b (b = 0 .. 3): a 4 x 4 byte transpose by 8 prmt.
__device__ __forceinline__ void transpose4x4(uint32_t w0, uint32_t w1, uint32_t w2, uint32_t w3, uint32_t (&o)[4]) {
    using mla_ra::prmt;
    const uint32_t t0 = prmt(w0, w1, 0x5140), t1 = prmt(w0, w1, 0x7362);
    const uint32_t t2 = prmt(w2, w3, 0x5140), t3 = prmt(w2, w3, 0x7362);
    o[0] = prmt(t0, t2, 0x5410);
    o[1] = prmt(t0, t2, 0x7632);
    o[2] = prmt(t1, t3, 0x5410);
    o[3] = prmt(t1, t3, 0x7632);
}

// pv_half on the fp8 tensor cores (MLA_QM8_P8): the same O^T half, rescale and masking, with B =
// store_pt8's e4m3 P^T and A = V^T fragments of the raw bytes: k-step ks (tokens 32 ks ..) of
// m-block mb holds, for the thread's rows r0 / r0 + 8 (dims 8 G + 2 mb, + 1, as pv_half) the bytes
// of tokens 32 ks + 4 q + b (registers 0, 1) and 32 ks + 16 + 4 q + b (2, 3), b = 0 .. 3: 8 token
// rows of 8 bytes a step, transposed 4 x 4.
__device__ __forceinline__ void pv_half8(float (&o)[4][32], const char* tile, uint32_t tile_s, int wg, const float* al,
                                         const int* tok, bool masked, bool rescale) {
    const int lane = threadIdx.x & 31, wl = (threadIdx.x >> 5) & 3, q = lane & 3;
    rescale_o(o, al, rescale);
    const int blk = 2 * wg + (wl >> 1), ch = 4 * (wl & 1) + (lane >> 3), hw = (lane >> 2) & 1;
    // token T = 32 ks + 16 j + 4 q + b: T & 7 = 4 (q & 1) + b
    const char* base = tile + blk * kBlk + 4 * q * 128 + 8 * hw;
    const uint64_t dP = sw128_desc(tile_s + 4 * kBlk, 16, 1024);
    const uint32_t plo = desc_lo_bcast(dP), phi = uint32_t(dP >> 32);
    uint32_t va[2][4][4];
#pragma unroll
    for (int ks = 0; ks < kTN / 32; ++ks) {
        uint2 r[2][4];
#pragma unroll
        for (int j = 0; j < 2; ++j)
#pragma unroll
            for (int b = 0; b < 4; ++b) {
                const int T0 = 32 * ks + 16 * j + b;  // + 4 q
                r[j][b] = *reinterpret_cast<const uint2*>(base + T0 * 128 + ((ch ^ (4 * (q & 1) + b)) << 4));
                if (masked && tok[T0 + 4 * q] == 0) r[j][b] = make_uint2(0, 0);
            }
        static_assert(kTN / 32 == 2, "one fragment buffer a k-step: no wait between the steps");
#pragma unroll
        for (int j = 0; j < 2; ++j) {
            uint32_t lo[4], hi[4];
            transpose4x4(r[j][0].x, r[j][1].x, r[j][2].x, r[j][3].x, lo);  // dims 0-3 of the run
            transpose4x4(r[j][0].y, r[j][1].y, r[j][2].y, r[j][3].y, hi);  // dims 4-7
#pragma unroll
            for (int c = 0; c < 4; ++c) {
                va[ks & 1][c >> 1][(c & 1) + 2 * j] = lo[c];
                va[ks & 1][2 + (c >> 1)][(c & 1) + 2 * j] = hi[c];
            }
        }
        wg_fence();
#pragma unroll
        for (int mb = 0; mb < 4; ++mb)
            wgmma_n64_e4m3_rs(o[mb], va[ks & 1][mb], (uint64_t(phi) << 32) | (plo + uint32_t((ks * 32) >> 4)));
        wg_commit();
    }
    wg_wait0();
#pragma unroll
    for (int mb = 0; mb < 4; ++mb) reg_fence(o[mb]);
}

// pv_half's V^T fragments of all four k-steps of warpgroup wg's O^T half (MLA_QM8_PRE): va[ks]
// as pv_half's va[ks & 1] (the same loads, masking and conversion).
__device__ __forceinline__ void v_frags_all(const char* tile, int wg, const int* tok, bool masked,
                                            uint32_t (&va)[kTN / 16][4][4]) {
    const VRows vrows(tile, wg);
#pragma unroll
    for (int ks = 0; ks < kTN / 16; ++ks) {
        uint2 r[4];
        vrows.load(ks, tok, masked, r);
        v_frags_step(r, va[ks]);
    }
}

// pv_half's rescale and MMAs from fragments built beforehand (v_frags_all; MLA_QM8_PRE): the 16
// MMAs in one commit group, waited for.
__device__ __forceinline__ void pv_half_pre(float (&o)[4][32], const uint32_t (&va)[kTN / 16][4][4], uint32_t tile_s,
                                            const float* al, bool rescale) {
    rescale_o(o, al, rescale);
    const uint64_t dP = sw128_desc(tile_s + 4 * kBlk, 16, 1024);
    const uint32_t plo = desc_lo_bcast(dP), phi = uint32_t(dP >> 32);
    wg_fence();
#pragma unroll
    for (int ks = 0; ks < kTN / 16; ++ks)
#pragma unroll
        for (int mb = 0; mb < 4; ++mb)
            wgmma_n64_f16_rs(o[mb], va[ks][mb], (uint64_t(phi) << 32) | (plo + uint32_t((ks * 32) >> 4)));
    wg_commit();
    wg_wait0();
#pragma unroll
    for (int mb = 0; mb < 4; ++mb) reg_fence(o[mb]);
}

// What stage_o reads from lx[row] for a row's sum l: under MLA_QM8_INV1 the factor kv_scale / l (0
// for a row with no key), else l. Both epilogues (epilogue below, decode_qm8_ws.cuh) write it.
__device__ __forceinline__ float lx_entry(float l, float kvsc) {
#if MLA_QM8_INV1
    return l > 0.f ? kvsc / l : 0.f;
#else
    (void)kvsc;
    return l;
#endif
}

// One warpgroup's O^T half (dims 256 h ..; o: pv_half's accumulators) as o / l * kv_scale (0 for a
// row with no key: lx[row] 0) into obuf's fp32 rows ([64][kOPitch]).
__device__ __forceinline__ void stage_o(float* obuf, const float* lx, const float (&o)[4][32], int h, float kvsc) {
    const int lane = threadIdx.x & 31, wl = (threadIdx.x >> 5) & 3, q = lane & 3;
    const int dcol = 256 * h + 8 * (8 * wl + (lane >> 2));
#pragma unroll
    for (int j = 0; j < 8; ++j)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
            const int row = 8 * j + 2 * q + e;
#if MLA_QM8_INV1
            const float inv = lx[row];
            (void)kvsc;
#else
            const float l = lx[row], inv = l > 0.f ? kvsc / l : 0.f;
#endif
            const int i0 = 4 * j + e, i1 = 4 * j + 2 + e;  // dims 2 mb, 2 mb + 1 of the thread's run
            float* dst = obuf + row * kOPitch + dcol;
            *reinterpret_cast<float4*>(dst) = make_float4(o[0][i0] * inv, o[0][i1] * inv, o[1][i0] * inv, o[1][i1] * inv);
            *reinterpret_cast<float4*>(dst + 4) =
                make_float4(o[2][i0] * inv, o[2][i1] * inv, o[3][i0] * inv, o[3][i1] * inv);
        }
}

// The epilogue of a work (all 256 threads; every MMA of the work waited for): warpgroup 0's row
// sums over the quad into lx[64] and the LSE (m: the rows' running max, nullptr for a work without
// a tile), then o = O^T / l * kv_scale (0 for a row with no key) staged as fp32 rows in obuf
// ([64][kOPitch], the idle ring) and written out (store_rows).
__device__ __forceinline__ void epilogue(const mla_decode_params& p, const mla_dec::Work& w, float* obuf, float* lx,
                                         const float (&o)[4][32], const float (&l_run)[2], const float* m, float kvsc) {
    const int tid = threadIdx.x, lane = tid & 31, wg = tid >> 7, wl = (tid >> 5) & 3, q = lane & 3;
    const int r0 = 16 * wl + (lane >> 2);
    if (wg == 0) {
#pragma unroll
        for (int i = 0; i < 2; ++i) {
            float lt = l_run[i] + __shfl_xor_sync(0xffffffffu, l_run[i], 1);
            lt += __shfl_xor_sync(0xffffffffu, lt, 2);
#if MLA_QM8_INV1
            if (q == 0) {  // (m[row]: this thread's own writes, decode_qm8_body)
                const int row = r0 + 8 * i;
                lx[row] = lx_entry(lt, kvsc);
                if (row < w.nrows) store_lse(p, w, row, lt > 0.f && m ? (m[row] + __log2f(lt)) * kLn2 : -INFINITY);
            }
#else
            if (q == 0) lx[r0 + 8 * i] = lx_entry(lt, kvsc);
#endif
        }
    }
    __syncthreads();  // every MMA and load done, the ring free; the sums (factors) visible
#if !MLA_QM8_INV1
    if (wg == 0 && q == 0) {
#pragma unroll
        for (int i = 0; i < 2; ++i) {
            const int row = r0 + 8 * i;
            const float lt = lx[row];
            if (row < w.nrows) store_lse(p, w, row, lt > 0.f && m ? (m[row] + __log2f(lt)) * kLn2 : -INFINITY);
        }
    }
#endif
    stage_o(obuf, lx, o, wg, kvsc);
    __syncthreads();  // staged output visible
    store_rows(p, w, obuf, tid);
}

template <int M>
__device__ __forceinline__ void decode_qm8_body(const mla_decode_params& p, char* smem) {
    using C = CfgQM8;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, wg = warp >> 2, wl = warp & 3;
    const int wt = tid & 127, q = lane & 3;
    if (!launch_ok(p, smem, C::SMEM)) return;
    const uint32_t sbase = smem_u32(smem);
    float* alx = reinterpret_cast<float*>(smem + C::OFF_AL);  // [kSlots][64]
    float* mx = reinterpret_cast<float*>(smem + C::OFF_MX);   // [64]
    int* sfl = reinterpret_cast<int*>(smem + C::OFF_SF);      // [kSlots][4]
    int* tokok = reinterpret_cast<int*>(smem + C::OFF_TOK);   // [kSlots][64]
    const uint32_t bar0 = sbase + C::OFF_BAR;
    if (tid < kSlots) mbar_init(bar0 + 8 * tid, 64);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    uint32_t phase = 0;  // bit s: the parity of slot s's next fill, as this warpgroup has waited

    const mla_dec::Scales scl = mla_dec::decode_scales(p);
    const float kvsc = scl.kvsc, sl2 = scl.sl2;
    const int r0 = 16 * wl + (lane >> 2), cq = 2 * q;  // warpgroup 0's S rows r0, r0 + 8; columns cq, cq + 1
    const uint64_t dQ = sw128_desc(sbase + C::OFF_Q, 16, 1024);
    auto slot = [&](int s) { return C::OFF_KV + s * kTile8; };  // byte offset of ring slot s

    const int w_begin = p.work_indptr[blockIdx.x], w_end = p.work_indptr[blockIdx.x + 1];
    for (int wi = w_begin; wi < w_end; ++wi) {
        mla_dec::Work w;
        if (!mla_dec::load_work(p, wi, M, w)) continue;
        const int n_tiles = w.tiles(kTN);

        fence_proxy_async();  // this thread's generic accesses of the ring before the next TMA writes
        __syncthreads();      // the previous work's epilogue is done with shared memory (and mbarrier init)
        PagePrefetch pf;      // warpgroup 1: the page of the tile it issues next
        auto issue = [&](int tile, int s, const PagePrefetch& pg) {
            issue_tile8(p, w, tile, n_tiles, sbase + slot(s), tokok + s * kTN, bar0 + 8 * s, pg, wt);
        };
        if (wg == 1) {
            issue_ring8(p, w, n_tiles, sbase, tokok, bar0, wt);
            pf.fetch(p, w, kSlots, n_tiles, wt >> 1, (wt & 1) == 0);
        }
        load_q8(p, w, sbase + C::OFF_Q, tid);
        // warpgroup 0: the rows' running sums, and their running max in mx[64] (written by the
        // quad's first thread, read by all four after the tile's kBarWg0 barrier: not held in
        // registers through the O^T MMAs)
        float l_run[2] = {0.f, 0.f};
        int lim[2];
#pragma unroll
        for (int i = 0; i < 2; ++i) lim[i] = mla_dec::row_limit(p, w, r0 + 8 * i);
        float o[4][32];
#pragma unroll
        for (int mb = 0; mb < 4; ++mb)
#pragma unroll
            for (int e = 0; e < 32; ++e) o[mb][e] = 0.f;
        cp_wait<0>();
        fence_proxy_async();  // Q (cp.async) -> the MMAs' async proxy
        __syncthreads();

        for (int tile = 0; tile < n_tiles; ++tile) {
            const int s = tile & (kSlots - 1);
            char* tp = smem + slot(s);
            const int* tk = tokok + s * kTN;
            const float* al = alx + s * 64;
            bool masked;
            if (wg == 0) {
                mbar_wait(bar0 + 8 * s, (phase >> s) & 1);
                phase ^= 1u << s;
                if (MLA_QM_RA_LATE_TRIG && tid == 0 && mla_dec::last_tile(wi, w_end, tile, n_tiles))
                    mla_dec::trigger_dependents();  // (wg_common.cuh)
                float sacc[32], mn[2], alpha[2];
                s_mma(sacc, dQ, sw128_desc(sbase + slot(s), 16, 1024));
                const float mprev[2] = {tile ? mx[r0] : -INFINITY, tile ? mx[r0 + 8] : -INFINITY};
                uint32_t unused[4][4];
                masked = qm_softmax_p<false, MLA_QM8_LAZY>(sacc, tk, w.tok_begin + tile * kTN, lim, sl2, cq, mprev, mn,
                                                           alpha, l_run, unused);
#if MLA_QM8_P8
                store_pt8(tp + 4 * kBlk, sacc, r0, q);  // S(t) is done with the rope block
#else
                store_pt(tp + 4 * kBlk, sacc, r0, q);  // S(t) is done with the rope block
#endif
                __syncwarp();  // the quad's reads of mx before its first thread overwrites it
                if (q == 0) {
                    mx[r0] = mn[0];
                    mx[r0 + 8] = mn[1];
                    alx[s * 64 + r0] = alpha[0];
                    alx[s * 64 + r0 + 8] = alpha[1];
                }
                const bool moved = __any_sync(0xffffffffu, alpha[0] != 1.f || alpha[1] != 1.f);
                if (lane == 0) sfl[s * 4 + wl] = moved ? 1 : 0;
                masked = __any_sync(0xffffffffu, masked);  // a quad covers the tile: uniform per warp
                fence_proxy_async();                       // P^T -> the MMAs' async proxy
                bar_sync(kBarWg0, 128);                    // P^T, alpha and the flags visible within warpgroup 0
                bar_arrive(kBarPReady + s, 256);
            } else {
#if MLA_QM8_PRE
                mbar_wait(bar0 + 8 * s, (phase >> s) & 1);  // the tile landed
                phase ^= 1u << s;
                masked = __any_sync(0xffffffffu, tk[lane] == 0 || tk[lane + 32] == 0);
                uint32_t va[kTN / 16][4][4];
                v_frags_all(tp, wg, tk, masked, va);
                bar_sync(kBarPReady + s, 256);  // P^T(tile), alpha(tile), the flags
                const int4 f4 = *reinterpret_cast<const int4*>(sfl + s * 4);
                pv_half_pre(o, va, sbase + slot(s), al, (f4.x | f4.y | f4.z | f4.w) != 0);
#else
                bar_sync(kBarPReady + s, 256);              // P^T(tile), alpha(tile), the flags
                mbar_wait(bar0 + 8 * s, (phase >> s) & 1);  // the tile landed (seen by warpgroup 0 already)
                phase ^= 1u << s;
                masked = __any_sync(0xffffffffu, tk[lane] == 0 || tk[lane + 32] == 0);
#endif
            }
            if (!MLA_QM8_PRE || wg == 0) {  // (MLA_QM8_PRE: warpgroup 1's O^T half is done above)
                const int4 f4 = *reinterpret_cast<const int4*>(sfl + s * 4);
                const bool rescale = (f4.x | f4.y | f4.z | f4.w) != 0;  // some row's alpha is not 1
#if MLA_QM8_P8
                pv_half8(o, tp, sbase + slot(s), wg, al, tk, masked, rescale);
#else
                pv_half(o, tp, sbase + slot(s), wg, al, tk, masked, rescale);
#endif
            }
            if (wg == 0) {
                fence_proxy_async();  // this thread's reads of the slot before the TMA that refills it
                if (tile + kSlots < n_tiles) bar_arrive(kBarEmpty + s, 256);
            } else if (tile + kSlots < n_tiles) {
                fence_proxy_async();           // this thread's reads of the slot before the TMA writes
                bar_sync(kBarEmpty + s, 256);  // warpgroup 0 is done with the slot too
                issue(tile + kSlots, s, pf);
                pf.fetch(p, w, tile + kSlots + 1, n_tiles, wt >> 1, (wt & 1) == 0);
            }
        }
        epilogue(p, w, reinterpret_cast<float*>(smem + C::OFF_KV), reinterpret_cast<float*>(smem + C::OFF_LX), o,
                 l_run, n_tiles > 0 ? mx : nullptr, MLA_QM8_P8 ? kvsc : kvsc * mla_ra::kE4m3Fold);
    }
}

}  // namespace mla_q8
