// decode_ra.cuh - the sm_90a MLA decode kernels for fp8 KV with fp8 or bf16 Q and 16-row tiles, on
// wgmma with the A operand in registers ("ra"), instantiated by mla_decode_ra_fp8_fp8.cu and
// mla_decode_ra_bf16_fp8.cu. Design, cost model and measurements: docs/kernels.md; contract
// (works, rows, partials): docs/plan-layout.md.
//
// Transposed formulation as in decode_wgmma.cuh (the KV tile is the MMA's M = 64 side, the 16
// query rows its N side), but the KV tile never goes through a widened shared-memory copy:
//   S^T [64 tokens x 16] = K [64 x 576] . Q^T   fp8 Q: fp8 x fp8 wgmma (m64n16k32.e4m3), A = K
//                                               fragments read from the raw fp8 tile into
//                                               registers, B = Q; bf16 Q: f16 wgmma (m64n16k16),
//                                               A = K fragments widened exactly in registers,
//                                               B = Q staged as f16 times 2^k (load_q_perm_f16)
//   O^T [512 dims x 16] += V^T [512 x 64] . P^T f16 wgmma (m64n16k16), A = V^T fragments built in
//                                               registers (exact e4m3 -> f16), B = P^T in f16
// Two permutations make every fragment a 16-byte shared-memory load:
// * S^T contracts over the 576 dims, so they may be reordered as long as Q uses the same order:
//   the thread with lane quad q holds, for its S^T rows r0 and r0 + 8 (tokens tile_token(r0),
//   tile_token(r0 + 8): MLA_RA_VSWAP below), the 16-byte chunks 4 i + q
//   (i < 9) of the row, and chunk (q, i) byte 8 e + 4 j + b is k-step 2 i + e, column
//   16 j + 4 q + b. Q is staged in that order (logical 4-byte word 8 s + 4 j + q of a row = the
//   row's word 4 (4 (s / 2) + q) + 2 (s % 2) + j). bf16 Q: chunk (q, i) byte pair 2 s' + j is
//   k-step 4 i + s', columns 2 q + 8 j and + 1 (load_q_perm_f16 stages Q in that order).
// * The O^T rows (output dims) may be reordered as long as the epilogue undoes it: in m-block mb
//   the thread's rows r0 and r0 + 8 are dims 16 G + 2 mb and 16 G + 2 mb + 1, G = 8 warp + lane / 4,
//   so the thread's V fragment of a token is one 16-byte chunk (dims 16 G .. 16 G + 15); bytes of
//   the tokens of two adjacent k-positions are paired with prmt and widened with one cvt per
//   f16x2 register.
// Ping-pong: warpgroup g runs tiles g, g + 2, ... with its own O^T, m, l; the two merge at the end
// (pp_epilogue). Loads: a ring of kSlots raw fp8 tiles shared by both warpgroups, one bulk copy
// (cp.async.bulk) per run of the tile's rows on one page, completing on the slot's mbarrier; the
// warpgroup that finishes tile t refills its slot with tile t + kSlots (its own next tile but one
// with kSlots 4, the other warpgroup's with an odd kSlots), so up to kSlots - 1 tiles are in
// flight with no producer warp and no cross-warpgroup barrier.
// fp8 arithmetic (fp8 Q): e4m3 products are exact, but Hopper's fp8 wgmma adds them with fewer mantissa
// bits than fp32 (the LSE differs from an fp32 sum by up to ~1e-4 where Q.K cancels; the test
// tolerance is documented in docs/kernels.md); the MLA_RA_SCHAINS accumulator chains are summed
// in fp32. V and P enter the O MMA as f16 (V exactly, P rounded to f16: 3 more mantissa bits than
// the bf16 P of the other kernels), accumulated in fp32.
#pragma once
#include "decode/decode_wgmma.cuh"

namespace mla_ra {

using namespace mla_wg;

constexpr int kSlots = MLA_DECODE_RA_SLOTS;  // ring of raw fp8 tiles (decode_params.h)
// Independent accumulator chains of the S^T phase (measured, docs/performance.md: 2 beat 4 and 6).
#ifndef MLA_RA_SCHAINS
#define MLA_RA_SCHAINS 2
#endif
// MLA_RA_QROW (session 34; shipped 1 since session 35, after its gpu_check): Q staged row by row (256 / N
// threads a row, one row address a thread: load_q_perm, load_q_perm_f16); 0, word or pair c =
// tid + 256 u of the tile, a row address for each (18 a thread at 16 rows of bf16 Q, 9 of fp8,
// whose loop issues each load after the previous one's store). Session 34 call 2, same machine:
// fp8 16 heads 105.6 -> 102.4 µs, bf16 Q / fp8 KV level; correct on `mla run --check -1` (built
// with MLA_STORE_ROWS_STEP 0 as well, rqst0).
#ifndef MLA_RA_QROW
#define MLA_RA_QROW 1
#endif
// MLA_RA_VSWAP (session 39; defined in decode_params.h): the order of the tile's tokens on the
// S^T rows, which are also P^T's and V^T's k-positions (wg_tile.cuh's tile_token). A tile row is 576
// bytes, 64 mod 128, so in the identity order (0) the V^T fragment loads (one token row for each
// of a quad's 4 lanes: tokens 2 q, all even) put a quarter-warp's 4 rows on the same banks: a
// 4-way conflict. 1: the tokens of every second pair swapped, so a quad's tokens alternate in
// parity: 2-way (the least a 576-byte pitch allows); the K fragment loads stay conflict-free (a
// quarter-warp still reads two adjacent rows). 2: rows padded to 592 bytes (80 mod 128), one bulk
// copy a token, and map 2, whose quads read tokens of distinct residues mod 8 of one parity
// (V conflict-free) and whose adjacent S^T rows are tokens 4 apart (K conflict-free). 3 (session
// 40): the slot as five 128-byte column blocks of the 64 token rows, 128-byte swizzle (the TMA
// boxes of the cache's fp8 tensor map, launch_kv_tma 1: issue_tile_boxes), and map 3 (bit 2 of
// the token flipped in odd rows): chunk x of a token row sits at x ^ (token & 7) of its 128-byte
// line, so a quad's V tokens (distinct in bits 1-2) and a quarter-warp's two K rows (4 apart)
// meet no bank twice: both loads conflict-free (the layout of the fp8 qm body, decode_qm8.cuh).
static_assert(MLA_RA_VSWAP >= 0 && MLA_RA_VSWAP <= 3, "MLA_RA_VSWAP: 0 .. 3");
constexpr bool kBoxes = MLA_RA_VSWAP == 3;      // the slot as TMA boxes (above)
constexpr int kRowP = MLA_DECODE_RA_ROW_PITCH;  // bytes from one token row of a slot to the next (rows)
constexpr int kSlotB = 64 * kRowP;              // bytes of a ring slot
constexpr int kBoxB = kTN * 128;                // bytes of a column block (box layout)
// (in the box layout, 16-byte chunk x < 36 of tile token t sits at sw_off(kTN, t, x), wg_common.cuh)
// MLA_E4M3_BITCVT (session 39, measurement build; 0 shipped): the e4m3 -> f16 fragments of V (and
// of K with bf16 Q) by integer ops instead of cvt.rn.f16x2.e4m3x2 (F2FP): each byte is placed in the
// high byte of its f16 half (prmt), its sign kept and its other 7 bits moved down one place, which
// is the f16 of the byte's value / 256 exactly (normal and subnormal; the NaN code 0x7f becomes
// 480 / 256). The kernels multiply the factor kE4m3Fold back in: into the output scale (V) and
// into the score scale (K). 3 integer ops and a prmt an f16x2 against a prmt half and one F2FP.
#ifndef MLA_E4M3_BITCVT
#define MLA_E4M3_BITCVT 0
#endif
constexpr float kE4m3Fold = MLA_E4M3_BITCVT ? 256.f : 1.f;


template <int N, bool Q8>
struct CfgRA {
    static_assert(N == 16, "the register-A kernel is built for 16-row tiles");
    // Q: fp8 5, split bf16 (MLA_RA_QSPLIT: 5 blocks of 2 N rows) 10, f16 9 swizzled 128-byte blocks
    static constexpr int OFF_Q = 0;
    static constexpr bool QS = !Q8 && MLA_RA_QSPLIT != 0;  // bf16 Q split into e4m3 hi + lo
    static constexpr int OFF_KV = (Q8 ? 5 : QS ? 10 : 9) * N * 128;  // [kSlots] raw fp8 tiles
    // the slot layout and token map of this build: the box layout with MLA_RA_VSWAP 3 (both
    // kernels) or, for fp8 Q, with MLA_RA_SSK (S^T from shared memory, token map 0)
    static constexpr bool SSK = Q8 && MLA_RA_SSK;
    static constexpr bool BOX = SSK || kBoxes;
    static constexpr int MAP = SSK ? 0 : MLA_RA_VSWAP;
    static constexpr int SLOT = BOX ? 5 * kBoxB : kSlotB;  // bytes of a ring slot
    static_assert(SLOT == mla_decode_ra_slot_bytes(Q8), "slot layout and formula disagree");
    static constexpr int OFF_P = OFF_KV + kSlots * SLOT;        // [warpgroup] P^T [N][64] f16
    static constexpr int OFF_RED = OFF_P + 2 * N * 128;         // [warpgroup][4][N] maxima / sums
    static constexpr int OFF_TOK = OFF_RED + 2 * 16 * N;        // [kSlots][64] token flags
    static constexpr int OFF_MRG = OFF_TOK + kSlots * kTN * 4;  // [warpgroup][m | l][N]
    static constexpr int OFF_BAR = OFF_MRG + 2 * 2 * 4 * N;     // [kSlots] mbarriers ("full")
    static constexpr int SMEM = OFF_BAR + kSlots * 8;
    static_assert(SMEM == mla_decode_ra_smem_bytes(N, Q8), "smem layout and formula disagree");
    static_assert(N * kOPitch * 4 <= kSlots * SLOT, "output staging does not fit the ring");
    static_assert(OFF_KV % 1024 == 0 && OFF_P % 1024 == 0 && OFF_BAR % 8 == 0, "alignment");
};

// Tile `tile` of work w into ring slot `slot` by 64 threads (lt = token; its row at lt x kRowP). The
// tokens of one page are contiguous rows of 576 bytes, so the first token of each run of the tile
// on one page (the tile's first token, or a token at a page start) copies the whole run with one
// bulk copy (cp.async.bulk of run x 576 bytes: one per tile at page size >= 64, 64 at page size
// 1; with MLA_RA_VSWAP 2 one per token, each to its 592-byte row); a token
// past the work's end or on a bad page (never read) gets a zero row instead. Token flags go to
// tok[64]; every thread arrives once on the slot's mbarrier (count 64), a run's first token with
// the run's bytes as its expected transaction count. (One copy per token row made the compiler
// issue the copies one thread at a time: 12% of the kernel's stall samples, docs/performance.md.)
__device__ __forceinline__ void issue_tile_bulk(const mla_decode_params& p, const mla_dec::Work& w, int tile,
                                                char* slot, int* tok, uint32_t bar, int lt) {
    const int t0 = w.tok_begin + tile * kTN, j = t0 + lt;
    const char* row = j < w.tok_end ? kv_row<true>(p, w, j, true) : nullptr;
    tok[lt] = row != nullptr ? 1 : 0;
    if (row != nullptr) {
        const int psz = 1 << p.page_size_log2;
        if (MLA_RA_VSWAP == 2 || lt == 0 || (j & (psz - 1)) == 0) {
            const int run = MLA_RA_VSWAP == 2 ? 1 : min(min((j | (psz - 1)) + 1, t0 + kTN), w.tok_end) - j;
            mbar_arrive_tx(bar, run * kD);
            bulk_copy(smem_u32(slot + lt * kRowP), row, run * kD, bar);
        } else {
            mbar_arrive(bar);
        }
    } else {
#pragma unroll
        for (int c = 0; c < kD / 16; ++c) *reinterpret_cast<uint4*>(slot + lt * kRowP + 16 * c) = make_uint4(0, 0, 0, 0);
        mbar_arrive(bar);
    }
}

// The box layout (MLA_RA_VSWAP 3; MLA_RA_SSK for fp8 Q): tile `tile` of work w into ring slot
// `slot`, by the calling warpgroup's 128 threads (wt). With the cache's tensor map (p.kv_tma: the
// row's launch_kv_tma 1 at pages of >= MLA_KV_TMA_MIN_PAGE tokens) the five boxes of each run of
// the tile on one page (issue_tile_tma_tpt, 2 threads a token, the page looked up now); without
// one, token wt < 64 copies its 36 chunks by cp.async, which arrive on the slot's mbarrier when
// they land (cp.async.mbarrier.arrive, which adds its own pending arrival), then arrives itself
// (a release: its flag store before it; one of the 64 arrivals). Flags to tok[64] either way; the
// row of a flagged token (past the work's end, a bad page) holds whatever the page or the slot
// held, so the consumer masks its scores and zeroes its V bytes in registers. The cp.async writes
// are generic-proxy writes: with MLA_RA_SSK the consumer fences them before its wgmmas read K.
__device__ __forceinline__ void issue_tile_boxes(const mla_decode_params& p, const mla_dec::Work& w, int tile,
                                                 int n_tiles, char* slot, int* tok, uint32_t bar, int wt) {
    if (p.kv_tma) {
        PagePrefetch pf;
        pf.fetch(p, w, tile, n_tiles, wt >> 1, (wt & 1) == 0);
        issue_tile_tma_tpt<2, false, 0x1Fu, true, 128>(p, w, tile, n_tiles, 0, smem_u32(slot), tok, bar, pf, nullptr, wt);
        return;
    }
    if (wt >= kTN) return;
    const int j = w.tok_begin + tile * kTN + wt;
    const char* row = j < w.tok_end ? kv_row<true>(p, w, j, true) : nullptr;
    tok[wt] = row != nullptr ? 1 : 0;
    if (row != nullptr) {
        const uint32_t s = smem_u32(slot);
#pragma unroll
        for (int x = 0; x < kD / 16; ++x) cp_async16(s + uint32_t(sw_off(kTN, wt, x)), row + 16 * x, 16);
        asm volatile("cp.async.mbarrier.arrive.shared::cta.b64 [%0];\n" ::"r"(bar) : "memory");
    }
    mbar_arrive(bar);
}

// D[64 x 16] (+)= A . B, e4m3 x e4m3 -> fp32, A (64 x 32) from registers, B by descriptor.
__device__ __forceinline__ void wgmma_n16_e4m3_ra(float (&d)[8], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                                                  uint64_t b, int acc) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %13, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n16k32.f32.e4m3.e4m3 "
        "{%0,%1,%2,%3,%4,%5,%6,%7}, {%8,%9,%10,%11}, %12, p, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(b), "r"(acc));
}
// D[64 x 16] (+)= A . B, e4m3 x e4m3 -> fp32, A (64 x 32) and B by descriptor (MLA_RA_SSK).
__device__ __forceinline__ void wgmma_n16_e4m3_ss(float (&d)[8], uint64_t a, uint64_t b, int acc) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %10, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n16k32.f32.e4m3.e4m3 "
        "{%0,%1,%2,%3,%4,%5,%6,%7}, %8, %9, p, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
        : "l"(a), "l"(b), "r"(acc));
}
// D[64 x 32] (+)= A . B, e4m3 x e4m3 -> fp32, A (64 x 32) from registers, B (32 rows) by
// descriptor; d0 = columns 0-15, d1 = columns 16-31 (each in the m64n16 accumulator layout).
__device__ __forceinline__ void wgmma_n32_e4m3_ra(float (&d0)[8], float (&d1)[8], uint32_t a0, uint32_t a1, uint32_t a2,
                                                  uint32_t a3, uint64_t b, int acc) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %21, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n32k32.f32.e4m3.e4m3 "
        "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15}, {%16,%17,%18,%19}, %20, p, 1, 1;\n}\n"
        : "+f"(d0[0]), "+f"(d0[1]), "+f"(d0[2]), "+f"(d0[3]), "+f"(d0[4]), "+f"(d0[5]), "+f"(d0[6]), "+f"(d0[7]),
          "+f"(d1[0]), "+f"(d1[1]), "+f"(d1[2]), "+f"(d1[3]), "+f"(d1[4]), "+f"(d1[5]), "+f"(d1[6]), "+f"(d1[7])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(b), "r"(acc));
}
// D[64 x 16] += A . B, f16 x f16 -> fp32, A (64 x 16) from registers, B (K-major) by descriptor.
__device__ __forceinline__ void wgmma_n16_f16_ra(float (&d)[8], const uint32_t (&a)[4], uint64_t b) {
    asm volatile(
        "wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 "
        "{%0,%1,%2,%3,%4,%5,%6,%7}, {%8,%9,%10,%11}, %12, 1, 1, 1, 0;\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
}
__device__ __forceinline__ uint32_t prmt(uint32_t a, uint32_t b, uint32_t sel) {
    uint32_t r;
    asm("prmt.b32 %0, %1, %2, %3;\n" : "=r"(r) : "r"(a), "r"(b), "r"(sel));
    return r;
}
// Two e4m3 bytes (low 16 bits of x) -> f16x2, exactly.
__device__ __forceinline__ uint32_t e4m3x2_to_f16x2(uint32_t x) {
    __half2_raw h = __nv_cvt_fp8x2_to_halfraw2(static_cast<__nv_fp8x2_storage_t>(x & 0xffffu), __NV_E4M3);
    return uint32_t(h.x) | (uint32_t(h.y) << 16);
}

// The e4m3 bytes at bits 15..8 and 31..24 of y (the rest ignored) -> f16x2 of their values / 256,
// exactly (MLA_E4M3_BITCVT).
__device__ __forceinline__ uint32_t e4m3hi_to_f16x2_d256(uint32_t y) {
    return (y & 0x80008000u) | ((y >> 1) & 0x3f803f80u);
}
// 16 e4m3 bytes (one 16-byte chunk of a token row) -> 8 f16x2 registers, exactly (times
// 1 / kE4m3Fold); f[i] = bytes 2 i, 2 i + 1.
__device__ __forceinline__ void chunk_to_f16(const uint4 x, uint32_t (&f)[8]) {
    const uint32_t w[4] = {x.x, x.y, x.z, x.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
#if MLA_E4M3_BITCVT
        f[2 * i] = e4m3hi_to_f16x2_d256(prmt(w[i], w[i], 0x1000));
        f[2 * i + 1] = e4m3hi_to_f16x2_d256(prmt(w[i], w[i], 0x3020));
#else
        f[2 * i] = e4m3x2_to_f16x2(w[i]);
        f[2 * i + 1] = e4m3x2_to_f16x2(w[i] >> 16);
#endif
    }
}

// V^T fragments of one 16-token k-step from W 4-byte words of each of four token rows: x0, x1 =
// this thread's 4 W dims of the tokens at k-positions t and t + 1, x8, x9 at t + 8, t + 9 (t = 2 q;
// the tokens there: tile_token). a[mb] (mb < 2 W) = the 4 f16x2 registers of m-block mb: rows
// (dims 2 mb, 2 mb + 1 of the thread's run) x k-positions (t, t + 1), then (t + 8, t + 9). W = 4:
// the register-A kernel (16 dims); W = 2: the fp8 qm body (8 dims a warpgroup half, decode_qm8.cuh).
template <int W>
__device__ __forceinline__ void v_fragments_w(const uint32_t (&x0)[W], const uint32_t (&x1)[W], const uint32_t (&x8)[W],
                                              const uint32_t (&x9)[W], uint32_t (&a)[2 * W][4]) {
#pragma unroll
    for (int wd = 0; wd < W; ++wd) {
#if MLA_E4M3_BITCVT
        // dim 4 wd + c of tokens t (byte 1), t + 1 (byte 3): prmt selector 0x4000 + 0x1010 c
#pragma unroll
        for (int c = 0; c < 4; ++c) {
            const uint32_t sel = 0x4000u + 0x1010u * uint32_t(c);
            a[2 * wd + c / 2][c % 2] = e4m3hi_to_f16x2_d256(prmt(x0[wd], x1[wd], sel));
            a[2 * wd + c / 2][2 + c % 2] = e4m3hi_to_f16x2_d256(prmt(x8[wd], x9[wd], sel));
        }
#else
        // bytes (dim 4 wd + c of token t, of token t + 1) for c = 0, 1 and c = 2, 3
        const uint32_t l01 = prmt(x0[wd], x1[wd], 0x5140), l23 = prmt(x0[wd], x1[wd], 0x7362);
        const uint32_t h01 = prmt(x8[wd], x9[wd], 0x5140), h23 = prmt(x8[wd], x9[wd], 0x7362);
        a[2 * wd][0] = e4m3x2_to_f16x2(l01);
        a[2 * wd][1] = e4m3x2_to_f16x2(l01 >> 16);
        a[2 * wd][2] = e4m3x2_to_f16x2(h01);
        a[2 * wd][3] = e4m3x2_to_f16x2(h01 >> 16);
        a[2 * wd + 1][0] = e4m3x2_to_f16x2(l23);
        a[2 * wd + 1][1] = e4m3x2_to_f16x2(l23 >> 16);
        a[2 * wd + 1][2] = e4m3x2_to_f16x2(h23);
        a[2 * wd + 1][3] = e4m3x2_to_f16x2(h23 >> 16);
#endif
    }
}

// The register-A kernel's V^T fragments (v_fragments_w<4>): x0, x1 = this thread's dims
// 16 G .. 16 G + 15 at k-positions t and t + 1 (t = 16 kt + 2 q), x8, x9 at t + 8, t + 9;
// a[mb] = rows (dims 16 G + 2 mb, + 1).
__device__ __forceinline__ void v_fragments(const uint4 x0, const uint4 x1, const uint4 x8, const uint4 x9,
                                            uint32_t (&a)[8][4]) {
    const uint32_t lo0[4] = {x0.x, x0.y, x0.z, x0.w}, lo1[4] = {x1.x, x1.y, x1.z, x1.w};
    const uint32_t hi0[4] = {x8.x, x8.y, x8.z, x8.w}, hi1[4] = {x9.x, x9.y, x9.z, x9.w};
    v_fragments_w<4>(lo0, lo1, hi0, hi1, a);
}

// The row's 4-byte word (4 fp8 elements) that the permuted K-major order of the fp8 S^T fragments
// (file comment) puts at logical word L: 4 (4 (s / 2) + q) + 2 (s % 2) + j for s = L / 8,
// j = (L / 4) % 2, q = L % 4 (load_q_split; load_q_perm writes it out).
__device__ __forceinline__ int q_perm_word(int L) {
    const int s = L >> 3, j = (L >> 2) & 1, qq = L & 3;
    return 4 * (4 * (s >> 1) + qq) + 2 * (s & 1) + j;
}

// Byte offset of logical 4-byte word L of staged Q row `row` (128-byte swizzle, blocks of N rows):
// the store address of both Q staging functions below.
template <int N>
__device__ __forceinline__ int q_perm_off(int row, int L) {
    const int col = 4 * L, kb = col >> 7, within = col & 127;
    return kb * N * 128 + row * 128 + ((((within >> 4) ^ (row & 7))) << 4) + (within & 15);
}

// Work w's fp8 Q rows -> shared memory at off_q in the permuted K-major order of the S^T
// fragments (file comment), 128-byte swizzle; rows past w.nrows are zero. All 256 threads.
// kNat (MLA_RA_SSK): the natural order instead (logical word L = the row's word L), for S^T with K
// from shared memory.
template <int N, bool kNat = false>
__device__ __forceinline__ void load_q_perm(const mla_decode_params& p, const mla_dec::Work& w, char* smem,
                                            uint32_t off_q, int tid) {
#if MLA_RA_QROW
    constexpr int TPR = 256 / N;  // threads a row: one row address each
    static_assert(256 % N == 0 && (kD / 4) % TPR == 0, "Q words per thread");
    const char* src = tid / TPR < w.nrows ? q_row<true>(p, w, tid / TPR) : nullptr;
#pragma unroll
    for (int u = 0; u < (kD / 4) / TPR; ++u) {
        const int row = tid / TPR, L = tid % TPR + TPR * u;
#else
    for (int c = tid; c < N * (kD / 4); c += 256) {
        const int row = c / (kD / 4), L = c - row * (kD / 4);
#endif
        // (q_perm_word(L), written out: the shipped cubin's SASS depends on the form)
        const int s = L >> 3, j = (L >> 2) & 1, qq = L & 3;
        const int phys = kNat ? L : 4 * (4 * (s >> 1) + qq) + 2 * (s & 1) + j;
        uint32_t v = 0;
#if MLA_RA_QROW
        if (src) v = *reinterpret_cast<const uint32_t*>(src + 4 * phys);
#else
        if (row < w.nrows) v = *reinterpret_cast<const uint32_t*>(q_row<true>(p, w, row) + 4 * phys);
#endif
        *reinterpret_cast<uint32_t*>(smem + off_q + q_perm_off<N>(row, L)) = v;
    }
}

// The bf16 magnitudes a[] (float bits, sign cleared) folded into the running max mx where finite
// (Inf and NaN left out): what work_q_exponent takes (non-negative floats order as their bits).
template <int K>
__device__ __forceinline__ uint32_t max_finite(uint32_t mx, const uint32_t (&a)[K]) {
#pragma unroll
    for (int i = 0; i < K; ++i) mx = a[i] < 0x7f800000u ? max(mx, a[i]) : mx;
    return mx;
}

// The exponent k of a work's Q scale: mx = this thread's max finite |Q| as float bits (non-negative
// floats order as their bits; the callers leave Inf and NaN out, so any finite max, up to bf16's
// 3.39e38, takes its k); returns k with qmax 2^k < 2^top for the CTA's max qmax (k <= 126; 0 when
// every element is 0 or non-finite). All 256 threads; `scratch` holds 8 floats, free at the call,
// and is read after the call's __syncthreads: the caller orders its next use behind a barrier.
// (Until session 41 the f16 staging passed Inf and NaN in and took k = 0 above 3e38, so a finite
// max |Q| above 3e38 overflowed f16.)
__device__ __forceinline__ int work_q_exponent(uint32_t mx, float* scratch, int tid, int top) {
    mx = __reduce_max_sync(0xffffffffu, mx);
    if ((tid & 31) == 0) reinterpret_cast<uint32_t*>(scratch)[tid >> 5] = mx;
    __syncthreads();
#pragma unroll
    for (int i = 0; i < 8; ++i) mx = max(mx, reinterpret_cast<const uint32_t*>(scratch)[i]);
    const float qmax = __uint_as_float(mx);
    int k = 0;
    if (qmax > 0.f) {
        int e;
        frexpf(qmax, &e);  // qmax < 2^e
        k = min(top - e, 126);
    }
    return k;
}

// Work w's bf16 Q rows -> shared memory at off_q as f16 scaled by 2^k, in the permuted K-major
// order of the f16 S^T fragments (file comment), 128-byte swizzle; rows past w.nrows are zero.
// k is the work's exponent (max finite |Q| 2^k < 2^15, so every bf16 value of at least 2^-17
// after scaling converts exactly: f16 has 3 more mantissa bits; smaller ones lose bits below 2^-32
// of the work's max |Q|; an Inf or NaN element stays Inf or NaN). Returns 2^-k, the factor the scores are scaled back by. All 256 threads;
// `scratch` holds 8 floats (free at the call). Ends with a __syncthreads (for the scratch).
template <int N>
__device__ __forceinline__ float load_q_perm_f16(const mla_decode_params& p, const mla_dec::Work& w, char* smem,
                                                 uint32_t off_q, float* scratch, int tid) {
    constexpr int kPairs = N * (kD / 2), kPer = kPairs / 256;  // bf16 pairs of the tile, per thread
    static_assert(kPairs % 256 == 0, "Q pairs per thread");
    uint32_t v[kPer];
    uint32_t mx = 0;  // max |Q| as bits (non-negative floats order as their bits)
#if MLA_RA_QROW
    // thread tid: row tid / TPR, pairs L = tid % TPR + TPR u (one row address a thread)
    constexpr int TPR = 256 / N;
    static_assert(256 % N == 0 && (kD / 2) % TPR == 0 && kPer == (kD / 2) / TPR, "Q pairs per thread");
    auto rowL = [&](int u, int& row, int& L) {
        row = tid / TPR;
        L = tid % TPR + TPR * u;
    };
    const char* src = tid / TPR < w.nrows ? q_row<false>(p, w, tid / TPR) : nullptr;
#else
    auto rowL = [&](int u, int& row, int& L) {
        const int c = tid + 256 * u;
        row = c / (kD / 2);
        L = c - row * (kD / 2);
    };
#endif
#pragma unroll
    for (int u = 0; u < kPer; ++u) {
        int row, L;
        rowL(u, row, L);
        // logical pair L: k-step s = L / 8, word wp = L % 8 (q = wp % 4, j = wp / 4) = the row's
        // pair 8 (4 (s / 4) + q) + 2 (s % 4) + j
        const int s = L >> 3, qq = L & 3, j = (L >> 2) & 1;
        const int phys = 8 * (4 * (s >> 2) + qq) + 2 * (s & 3) + j;
#if MLA_RA_QROW
        v[u] = src ? *reinterpret_cast<const uint32_t*>(src + 4 * phys) : 0u;
#else
        v[u] = row < w.nrows ? *reinterpret_cast<const uint32_t*>(q_row<false>(p, w, row) + 4 * phys) : 0u;
#endif
        const uint32_t a[2] = {(v[u] << 16) & 0x7fffffffu, v[u] & 0x7fff0000u};
        mx = max_finite(mx, a);
    }
    const int k = work_q_exponent(mx, scratch, tid, 15);
    const float up = ldexpf(1.f, k);
#pragma unroll
    for (int u = 0; u < kPer; ++u) {
        int row, L;
        rowL(u, row, L);
        const __half2 h = __floats2half2_rn(__uint_as_float(v[u] << 16) * up, __uint_as_float(v[u] & 0xffff0000u) * up);
        *reinterpret_cast<__half2*>(smem + off_q + q_perm_off<N>(row, L)) = h;
    }
    __syncthreads();  // every thread has read the scratch
    return ldexpf(1.f, -k);
}

// Work w's bf16 Q rows, times 2^k, as two e4m3 parts (MLA_RA_QSPLIT): x = Q 2^k (exact), hi =
// e4m3(x), lo = e4m3(x - hi), both rounded to nearest; rows 0 .. N - 1 of the staged 2 N-row tile
// hold hi, rows N .. 2 N - 1 lo, in load_q_perm's permuted K-major fp8 order (its logical word L
// of 4 elements is bf16 elements 4 phys .. 4 phys + 3 of the row), 128-byte swizzle; rows past
// w.nrows are zero. k is the work's exponent with max |Q| 2^k < 2^8, so hi never saturates (e4m3
// max 448) and |lo| <= 8. hi + lo = x exactly wherever |x| >= 2^-2 (its 8 significant bits: hi
// takes the top 4, rounded, and the rest, at most 3 significant bits on x's grid, is a multiple
// of e4m3's least subnormal 2^-9): every element within 2^-9 of the work's max |Q| (the scaled
// max is at least 2^7); below, the error is at most 2^-10 absolute, i.e. 2^-17 of the max. k is
// taken over the finite elements; an Inf or NaN element becomes the e4m3 NaN in hi (the hardware
// conversion, cvt.rn.satfinite, would turn Inf into 448: the software one without saturation
// takes ~4,600 more instructions a thread, session 40 call 1). Returns 2^-k, the factor the scores are scaled back by. All 256 threads;
// `scratch` holds 8 floats (free at the call). Ends with a __syncthreads (for the scratch).
template <int N>
__device__ __forceinline__ float load_q_split(const mla_decode_params& p, const mla_dec::Work& w, char* smem,
                                              uint32_t off_q, float* scratch, int tid) {
    constexpr int TPR = 256 / N, kPer = (kD / 4) / TPR;  // threads a row; 4-element words a thread
    static_assert(256 % N == 0 && (kD / 4) % TPR == 0, "Q words per thread");
    const int row = tid / TPR;
    const char* src = row < w.nrows ? q_row<false>(p, w, row) : nullptr;
    uint2 v[kPer];
    uint32_t mx = 0;  // max |Q| as bits
#pragma unroll
    for (int u = 0; u < kPer; ++u) {
        const int L = tid % TPR + TPR * u;
        const int phys = q_perm_word(L);
        v[u] = src ? *reinterpret_cast<const uint2*>(src + 8 * phys) : make_uint2(0u, 0u);
        const uint32_t a[4] = {(v[u].x << 16) & 0x7fffffffu, v[u].x & 0x7fff0000u, (v[u].y << 16) & 0x7fffffffu,
                               v[u].y & 0x7fff0000u};
        mx = max_finite(mx, a);
    }
    const int k = work_q_exponent(mx, scratch, tid, 8);
    const float up = ldexpf(1.f, k);
#pragma unroll
    for (int u = 0; u < kPer; ++u) {
        const int L = tid % TPR + TPR * u;
        const uint32_t wd[2] = {v[u].x, v[u].y};
        uint32_t hi = 0, lo = 0;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const float2 x = make_float2(__uint_as_float(wd[h] << 16) * up, __uint_as_float(wd[h] & 0xffff0000u) * up);
            uint32_t h8 = __nv_cvt_float2_to_fp8x2(x, __NV_SATFINITE, __NV_E4M3);
            const float2 hx = __half22float2(__half2(__nv_cvt_fp8x2_to_halfraw2(__nv_fp8x2_storage_t(h8), __NV_E4M3)));
            const __nv_fp8x2_storage_t l8 =
                __nv_cvt_float2_to_fp8x2(make_float2(x.x - hx.x, x.y - hx.y), __NV_SATFINITE, __NV_E4M3);
            // |x| < 2^8 for finite elements: anything else (Inf, NaN) becomes NaN
            if (!(fabsf(x.x) < 256.f)) h8 |= 0x7fu;
            if (!(fabsf(x.y) < 256.f)) h8 |= 0x7f00u;
            hi |= h8 << (16 * h);
            lo |= uint32_t(l8) << (16 * h);
        }
        *reinterpret_cast<uint32_t*>(smem + off_q + q_perm_off<2 * N>(row, L)) = hi;
        *reinterpret_cast<uint32_t*>(smem + off_q + q_perm_off<2 * N>(row + N, L)) = lo;
    }
    __syncthreads();  // every thread has read the scratch
    return ldexpf(1.f, -k);
}

template <int N, bool Q8>
__device__ __forceinline__ void decode_ra_body(const mla_decode_params& p, char* smem) {
    using C = CfgRA<N, Q8>;
    constexpr int NQ = N, NR = NQ / 2, NI = NQ / 4, NA = MLA_RA_SCHAINS;
    // bf16 Q split into e4m3 hi + lo (MLA_RA_QSPLIT): S^T on the fp8 tensor cores against 2 N
    // staged rows, hi and lo in the two accumulator chains
    constexpr bool kQS = C::QS;
    constexpr int NB = kQS ? 2 * N : N;  // rows of the staged Q (the S^T MMAs' B)
    static_assert(!kQS || NA == 2, "MLA_RA_QSPLIT: the two chains are hi and lo");
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, wg = warp >> 2, wl = warp & 3;
    const int wt = tid & 127, q = lane & 3;
    if (!launch_ok(p, smem, C::SMEM)) return;
    const uint32_t sbase = smem_u32(smem);
    float* red = reinterpret_cast<float*>(smem + C::OFF_RED) + wg * 4 * NQ;
    int* tok_all = reinterpret_cast<int*>(smem + C::OFF_TOK);  // [kSlots][64]
    float* mrg = reinterpret_cast<float*>(smem + C::OFF_MRG);
    const uint32_t bar0 = sbase + C::OFF_BAR, p_off = C::OFF_P + wg * N * 128;
    const int r0 = 16 * wl + (lane >> 2);  // this thread's S^T rows r0, r0 + 8
    // their token rows (tile_token: r0, r0 + 8 without MLA_RA_VSWAP), as byte offsets in a slot
    const int ka_off = mla_wg::tile_token<C::MAP>(r0) * kRowP, kb_off = mla_wg::tile_token<C::MAP>(r0 + 8) * kRowP;
    // box layout (C::BOX): the K chunk 4 c + q of those tokens sits at ka_bo[c & 1] + (c / 2) kBoxB (kb_bo)
    const int ka_bo[2] = {int(sw_off(kTN, mla_wg::tile_token<C::MAP>(r0), q)),
                          int(sw_off(kTN, mla_wg::tile_token<C::MAP>(r0), 4 + q))};
    const int kb_bo[2] = {int(sw_off(kTN, mla_wg::tile_token<C::MAP>(r0 + 8), q)),
                          int(sw_off(kTN, mla_wg::tile_token<C::MAP>(r0 + 8), 4 + q))};
    auto k_chunk = [&](const char* kt, int c, bool b) -> uint4 {
        if constexpr (C::BOX)
            return *reinterpret_cast<const uint4*>(kt + (c >> 1) * kBoxB + (b ? kb_bo : ka_bo)[c & 1]);
        else
            return *reinterpret_cast<const uint4*>(kt + (b ? kb_off : ka_off) + 16 * (4 * c + q));
    };
    // this thread's V^T k-positions of a step, 2 q + (0, 1, 8, 9): their token rows' byte offsets
    int v_off[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) v_off[k] = mla_wg::tile_token<C::MAP>(2 * q + (k & 1) + 8 * (k >> 1)) * kRowP;
    const int vcol = 16 * (8 * wl + (lane >> 2));  // this thread's 16 V dims (O^T rows)
    // box layout: chunk 8 wl + lane / 4 of those tokens (block wl), 16 tokens (2048 bytes) a step
    if constexpr (C::BOX) {
#pragma unroll
        for (int k = 0; k < 4; ++k)
            v_off[k] = int(sw_off(kTN, mla_wg::tile_token<C::MAP>(2 * q + (k & 1) + 8 * (k >> 1)), 8 * wl + (lane >> 2)));
    }

    const mla_dec::Scales scl = mla_dec::decode_scales(p);
    const float kvsc = scl.kvsc, sl2 = scl.sl2;
    const uint64_t dQ = desc_bcast(sw128_desc(sbase + C::OFF_Q, 16, 1024));  // (MLA_WG_ULO)
    const uint64_t dP = desc_bcast(sw128_desc(sbase + p_off, 16, 1024));

    if (tid < kSlots) mbar_init(bar0 + 8 * tid, 64);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    // Tiles are numbered across the CTA's works (seq = base + tile): tile seq fills slot seq % kSlots
    // in that slot's fill number seq / kSlots, whose completion flips the mbarrier's phase parity.
    uint32_t base = 0;

    const int w_begin = p.work_indptr[blockIdx.x], w_end = p.work_indptr[blockIdx.x + 1];
    for (int wi = w_begin; wi < w_end; ++wi) {
        mla_dec::Work w;
        if (!mla_dec::load_work(p, wi, N, w)) continue;
        const int n_tiles = w.tiles(kTN);
        // tile t of this work into its slot, by the calling warpgroup (threads wt < 64 with the
        // 576-byte rows, all 128 in the box layout)
        auto issue = [&](int t) {
            const int sl = int((base + t) % kSlots);
            if constexpr (C::BOX)
                issue_tile_boxes(p, w, t, n_tiles, smem + C::OFF_KV + sl * C::SLOT, tok_all + sl * kTN, bar0 + 8 * sl, wt);
            else if (wt < 64)
                issue_tile_bulk(p, w, t, smem + C::OFF_KV + sl * C::SLOT, tok_all + sl * kTN, bar0 + 8 * sl, wt);
        };

        __syncthreads();  // the previous work's epilogue is done with shared memory (mbarrier init)
        fence_proxy_async();  // earlier generic accesses of the ring before the bulk copies
        for (int t = wg; t < kSlots && t < n_tiles; t += 2) issue(t);
        float sl2w = sl2;
        if constexpr (Q8)
            load_q_perm<N, C::SSK>(p, w, smem, C::OFF_Q, tid);
        else if constexpr (kQS)
            sl2w = sl2 * load_q_split<N>(p, w, smem, C::OFF_Q, reinterpret_cast<float*>(smem + C::OFF_RED), tid);
        else
            sl2w = sl2 * kE4m3Fold *
                   load_q_perm_f16<N>(p, w, smem, C::OFF_Q, reinterpret_cast<float*>(smem + C::OFF_RED), tid);
        fence_proxy_async();
        __syncthreads();  // Q visible to both warpgroups' MMAs

        float m_run[NI], l_run[NI], o[8][NR];
        int lim[NI];
        start_columns<NQ>(p, w, 0, m_run, l_run, lim, o);

        for (int tile = wg; tile < n_tiles; tile += 2) {
            const uint32_t seq = base + tile, sl = seq % kSlots;
            mbar_wait(bar0 + 8 * sl, (seq / kSlots) & 1);  // the tile's rows (and flags) landed
            // (MLA_RA_SSK without a map: cp.async's generic-proxy writes -> the wgmmas' reads of K)
            if constexpr (C::SSK)
                if (!p.kv_tma) fence_proxy_async();
            // (wg_common.cuh: the warpgroup that runs the CTA's last tile triggers)
            if (MLA_QM_RA_LATE_TRIG && wt == 0 && mla_dec::last_tile(wi, w_end, tile, n_tiles))
                mla_dec::trigger_dependents();
            const char* kt = smem + C::OFF_KV + sl * C::SLOT;
            const int* tok = tok_all + sl * kTN;
            // box layout: some token of the tile flagged (its V bytes enter as zeros; warp-uniform)
            const bool masked = C::BOX && !__all_sync(0xffffffffu, tok[lane] != 0 && tok[lane + 32] != 0);
            if (!(MLA_WG_ABLATE & 4)) {
                float sa[NA][NR];
                // the NA accumulator chains at zero, ordered before the first wgmma
                auto start_chains = [&] {
#pragma unroll
                    for (int a = 0; a < NA; ++a)
#pragma unroll
                        for (int e = 0; e < NR; ++e) sa[a][e] = 0.f;
#pragma unroll
                    for (int a = 0; a < NA; ++a) reg_fence(sa[a]);
                    wg_fence();
                };
                if constexpr (C::SSK) {
                    // ---- S^T = K . Q^T: 18 fp8 k-steps, K (the slot's boxes: 64 token rows of
                    // 128 bytes a block, 128-byte swizzle) and Q (natural order) by descriptor ----
                    start_chains();
                    const uint64_t dK = desc_bcast(sw128_desc(sbase + C::OFF_KV + sl * C::SLOT, 16, 1024));
#pragma unroll
                    for (int s = 0; s < ((MLA_WG_ABLATE & 2) ? 0 : kD / 32); ++s)
                        wgmma_n16_e4m3_ss(sa[s % NA], dK + uint64_t(((s >> 2) * kBoxB + (s & 3) * 32) >> 4),
                                          dQ + uint64_t(((s >> 2) * N * 128 + (s & 3) * 32) >> 4), s >= NA);
                } else if constexpr (Q8 || kQS) {
                    // ---- S^T = K . Q^T: 18 fp8 k-steps in NA independent accumulator chains; split
                    // bf16 Q: chain 0 against hi, chain 1 against lo (one n32 MMA a k-step with
                    // MLA_RA_QSPLIT 1, two n16 ones with 2) ----
                    uint4 ka[9], kb[9];
#pragma unroll
                    for (int c = 0; c < 9; ++c) {
                        ka[c] = k_chunk(kt, c, false);
                        kb[c] = k_chunk(kt, c, true);
                    }
                    start_chains();
#pragma unroll
                    for (int s = 0; s < ((MLA_WG_ABLATE & 2) ? 0 : kD / 32); ++s) {
                        const uint4 x = ka[s >> 1], y = kb[s >> 1];
                        const bool e = s & 1;
                        const uint32_t a0 = e ? x.z : x.x, a1 = e ? y.z : y.x, a2 = e ? x.w : x.y, a3 = e ? y.w : y.y;
                        const uint64_t bq = dQ + uint64_t(((s >> 2) * NB * 128 + (s & 3) * 32) >> 4);
                        if constexpr (kQS && MLA_RA_QSPLIT == 1) {
                            wgmma_n32_e4m3_ra(sa[0], sa[1], a0, a1, a2, a3, bq, s > 0);
                        } else if constexpr (kQS) {
                            wgmma_n16_e4m3_ra(sa[0], a0, a1, a2, a3, bq, s > 0);
                            wgmma_n16_e4m3_ra(sa[1], a0, a1, a2, a3, bq + uint64_t((N * 128) >> 4), s > 0);
                        } else {
                            wgmma_n16_e4m3_ra(sa[s % NA], a0, a1, a2, a3, bq, s >= NA);
                        }
                    }
                } else {
                    // ---- S^T = K . Q^T: 36 f16 k-steps; chunk c (16 dims of tokens r0, r0 + 8) is
                    // widened exactly to f16 and feeds k-steps 4 c .. 4 c + 3 (pair 2 s' + j of the
                    // chunk is k-step 4 c + s', columns 2 q + 8 j, + 1). Fragments double-buffered:
                    // chunk c waits for chunk c - 2's wgmmas before reusing their registers. ----
                    start_chains();
                    uint32_t fa[2][8], fb[2][8];
                    uint4 ra = k_chunk(kt, 0, false);
                    uint4 rb = k_chunk(kt, 0, true);
#pragma unroll
                    for (int c = 0; c < ((MLA_WG_ABLATE & 2) ? 0 : 9); ++c) {
                        const uint4 xa = ra, xb = rb;
                        if (c + 1 < 9) {
                            ra = k_chunk(kt, c + 1, false);
                            rb = k_chunk(kt, c + 1, true);
                        }
                        if (c >= 2) wg_wait1();
                        chunk_to_f16(xa, fa[c & 1]);
                        chunk_to_f16(xb, fb[c & 1]);
                        wg_fence();
#pragma unroll
                        for (int sp = 0; sp < 4; ++sp) {
                            const int st = 4 * c + sp;
                            const uint32_t a[4] = {fa[c & 1][2 * sp], fb[c & 1][2 * sp], fa[c & 1][2 * sp + 1],
                                                   fb[c & 1][2 * sp + 1]};
                            wgmma_n16_f16_ra(sa[st % NA], a, dQ + uint64_t(((st >> 2) * N * 128 + (st & 3) * 32) >> 4));
                        }
                        wg_commit();
                    }
                }
                float sv[NR];
                wait_sum_chains(sa, sv);

                float alpha[NI];
                const bool moved = tile_softmax<NQ, true, MLA_WG_LAZY, false, C::MAP>(smem, p_off, red, tok, w.tok_begin + tile * kTN,
                                                                        lim, sl2w, sv, m_run, l_run, alpha, 1 + wg);

                // ---- O^T = O^T * alpha + V^T . P^T: per 16-token step, 8 m-blocks from registers ----
                if (moved) scale_o<NQ>(o, alpha);
#pragma unroll
                for (int mb = 0; mb < 8; ++mb) reg_fence(o[mb]);
                wg_fence();
                uint32_t va[2][8][4];
                // raw V rows of step ks (k-positions t, t + 1, t + 8, t + 9): loaded one step ahead
                uint4 vr[2][4];
                auto load_v = [&](int ks, uint4 (&r)[4]) {
                    // (the box layout: 16 rows of 128 bytes a step, the column in v_off)
                    const char* vt = C::BOX ? kt + 16 * ks * 128 : kt + 16 * ks * kRowP + vcol;
#pragma unroll
                    for (int k = 0; k < 4; ++k) r[k] = *reinterpret_cast<const uint4*>(vt + v_off[k]);
                    if (C::BOX && masked) {
#pragma unroll
                        for (int k = 0; k < 4; ++k)
                            if (tok[mla_wg::tile_token<C::MAP>(16 * ks + 2 * q + (k & 1) + 8 * (k >> 1))] == 0)
                                r[k] = make_uint4(0, 0, 0, 0);
                    }
                };
                load_v(0, vr[0]);
#pragma unroll
                for (int ks = 0; ks < ((MLA_WG_ABLATE & 1) ? 0 : kTN / 16); ++ks) {
                    // the next step's rows first, in flight during this step's wait and conversions
                    if (ks + 1 < kTN / 16) load_v(ks + 1, vr[(ks + 1) & 1]);
                    if (ks >= 2) wg_wait1();  // step ks - 2 has read va[ks & 1]
                    v_fragments(vr[ks & 1][0], vr[ks & 1][1], vr[ks & 1][2], vr[ks & 1][3], va[ks & 1]);
                    wg_fence();  // the fragment registers were written: order them before the wgmmas
#pragma unroll
                    for (int mb = 0; mb < 8; ++mb)
                        wgmma_n16_f16_ra(o[mb], va[ks & 1][mb], dP + uint64_t((ks * 32) >> 4));
                    wg_commit();
                }
                wg_wait0();
#pragma unroll
                for (int mb = 0; mb < 8; ++mb) reg_fence(o[mb]);
            }
            // the warpgroup is done with the slot: refill it with tile + kSlots (the other
            // warpgroup's), ordered after every thread's reads
            bar_sync(1 + wg, 128);
            if (tile + kSlots < n_tiles) {
                fence_proxy_async();
                issue(tile + kSlots);
            }
        }
        base += uint32_t(n_tiles);
        __syncthreads();  // both warpgroups' MMAs done: the ring becomes the output staging

        pp_epilogue<N, true>(p, w, reinterpret_cast<float*>(smem + C::OFF_KV), red, mrg, m_run, l_run, o,
                              kvsc * kE4m3Fold);
    }
}

}  // namespace mla_ra

// Defines the extern "C" kernel mla_decode_ra_<QN>_<KVN>_m<M>.
#define MLA_DECODE_RA_KERNEL(QN, KVN, Q8, M) \
    MLA_DECODE_SM90_KERNEL(mla_decode_ra_##QN##_##KVN##_m##M, mla_ra::decode_ra_body<M, Q8>)
