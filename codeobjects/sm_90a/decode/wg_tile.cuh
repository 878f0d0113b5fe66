// wg_tile.cuh - the per-tile and per-work pieces of the sm_90a wgmma decode bodies: LSE and output
// stores, the online softmax of a tile (column maxima and sums across a warpgroup), the O rescale,
// and tile_mma (S^T = K . Q^T, softmax, O^T += V^T . P^T of one 64-token tile). Used by
// decode_wgmma.cuh, decode_wg_pp.cuh, decode_wg_xwork.cuh and decode_qm.cuh; layouts: decode_wgmma.cuh.
#pragma once
#include "decode/kv_load.cuh"
#include "decode/trace.cuh"  // in-tile stamps of the MLA_WG_TRACE hook (no code when 0)

namespace mla_wg {

// The LSE of tile row `row` of work w: the split partial (plan's partial rows) or the caller's lse.
// (Not remapped by MLA_WG_ABLATE 64, below: only the output rows are.)
__device__ __forceinline__ void store_lse(const mla_decode_params& p, const mla_dec::Work& w, int row, float lse) {
    const int Hk = p.kernel_heads;
    const mla_div::DivMod th = mla_div::divmod_row<mla_div::kDivLse>(row, Hk);
    const int tt = th.q, h = th.r;
    if (w.pql >= 0)
        p.partial_lse[(int64_t)(w.pql + tt) * Hk + h] = lse;
    else if (p.lse)
        p.lse[(int64_t)(w.qo_b + w.t0 + tt) * p.num_heads + w.g * Hk + h] = lse;
}

// Measurement hook (session 23): the L2 eviction priority of the output stores (store_rows_part,
// so every kernel that stages its output through it): 0 (shipped) plain stores; 1 evict_last
// (createpolicy + .L2::cache_hint: asks the L2 to keep the output past the KV stream; at b 1536 it
// kept about a third of it, docs/performance.md session 23); 2 streaming (st.global.cs). The policy
// is created per store, as measured (about 6 uniform instructions a store, and the store loop
// unrolled less).
#ifndef MLA_OUT_L2
#define MLA_OUT_L2 0
#endif
#if MLA_OUT_L2 < 0 || MLA_OUT_L2 > 2
#error "MLA_OUT_L2 is 0, 1 or 2"
#endif
// One 16-byte output store with MLA_OUT_L2's priority.
__device__ __forceinline__ void st_out16(void* dst, uint4 v) {
    if constexpr (MLA_OUT_L2 == 1)
        asm volatile(
            "{\n.reg .b64 pol;\ncreatepolicy.fractional.L2::evict_last.b64 pol, 1.0;\n"
            "st.global.L2::cache_hint.v4.u32 [%0], {%1, %2, %3, %4}, pol;\n}\n" ::"l"(dst),
            "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
            : "memory");
    else if constexpr (MLA_OUT_L2 == 2)
        asm volatile("st.global.cs.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"l"(dst), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
                     : "memory");
    else
        *reinterpret_cast<uint4*>(dst) = v;
}

// The query token of row-token tt of work w's output, and the first partial row of a split work.
// -DMLA_WG_ABLATE=64 (a measurement hook; it remaps every store_rows_part user: the wg, pp, qm and
// cross-work bodies): token / partial row blockIdx.x + tt instead, so that every work of a CTA
// writes over one region; results wrong, and the stores go out of bounds unless there are at least
// gridDim.x + (query tokens a work) - 1 query tokens and as many partial rows (e.g. b 1536).
__device__ __forceinline__ int out_token(const mla_dec::Work& w, int tt) {
    if constexpr ((MLA_WG_ABLATE & 64) != 0) return (int)blockIdx.x + tt;
    else return w.qo_b + w.t0 + tt;
}
__device__ __forceinline__ int out_pql(const mla_dec::Work& w) {
    if constexpr ((MLA_WG_ABLATE & 64) != 0) return (int)blockIdx.x;
    else return w.pql;
}

#if MLA_WG_TRACE
// The traced work's record (trace.cuh) written over the first bytes of its first output row (head
// 0 of its partial row when split, of its bf16 `out` row otherwise), after a CTA barrier that
// follows the work's stores; all threads call it, thread 0 writes.
__device__ __forceinline__ void trace_dump_work(const mla_decode_params& p, const mla_dec::Work& w, int n_tiles,
                                                int works) {
    __syncthreads();
    const int Hk = p.kernel_heads;
    char* dst = w.pql >= 0 ? reinterpret_cast<char*>(p.partial_out + (int64_t)out_pql(w) * Hk * kDV)
                           : static_cast<char*>(p.out) + 2 * ((int64_t)out_token(w, 0) * p.out_stride_token +
                                                              (int64_t)(w.g * Hk) * p.out_stride_head);
    mla_trace::dump(reinterpret_cast<unsigned long long*>(dst), n_tiles, works);
}
#endif

// MLA_QM_OUT_TOUCH=1 (session 33, measurement hook; 0 shipped): the qm TMA body's warpgroup 0
// prefetches (prefetch.global.L2) the first line of each of the work's output rows and its LSE
// entry at the work's start, so that their address translations are in place long before the
// epilogue's stores (session 32 call 8: the epilogue's staging step, which holds the LSE stores,
// ends at one moment in every CTA). Row `row` of work w, as store_rows_part and store_lse address it.
__device__ __forceinline__ void touch_out_row(const mla_decode_params& p, const mla_dec::Work& w, int row) {
    if (row >= w.nrows) return;
    const int Hk = p.kernel_heads;
    const mla_div::DivMod th = mla_div::divmod_row<mla_div::kDivStore>(row, Hk);
    const int tt = th.q, h = th.r;
    const void* o;
    const void* l = nullptr;
    if (w.pql >= 0) {
        o = p.partial_out + ((int64_t)(out_pql(w) + tt) * Hk + h) * kDV;
        l = p.partial_lse + (int64_t)(w.pql + tt) * Hk + h;
    } else {
        const int64_t e = (int64_t)out_token(w, tt) * p.out_stride_token + (int64_t)(w.g * Hk + h) * p.out_stride_head;
        o = p.out_fp32 ? static_cast<const void*>(static_cast<const float*>(p.out) + e)
                       : static_cast<const void*>(static_cast<const char*>(p.out) + 2 * e);
        if (p.lse) l = p.lse + (int64_t)(w.qo_b + w.t0 + tt) * p.num_heads + w.g * Hk + h;
    }
    asm volatile("prefetch.global.L2 [%0];" ::"l"(o));
    if (l) asm volatile("prefetch.global.L2 [%0];" ::"l"(l));
}

// Rows [r_begin, r_begin + nr) of work w from obuf [nr][kOPitch] fp32 (staged, normalised; obuf row
// 0 is work row r_begin), written coalesced by NT threads (tid = 0 .. NT - 1): fp32 partial rows for
// a split work, `out` rows otherwise (bf16, or fp32 with out_fp32). nr <= 0 stores nothing. Thread
// tid stores chunk tid % CPR (CPR 16-byte chunks a row: 128 fp32, 64 bf16) of rows tid / CPR + k
// NT / CPR, its (query token, head) pair stepped from one division instead of divided per row
// (session 33: the per-row `row / Hk`, `row % Hk` by the runtime kernel_heads made this loop ~850
// instructions in the qm cubin; the stores are the same). The loop it makes is not unrolled (its
// `while`), so each step's loads wait behind the last store: shorter code, fetched once per SM, for
// a longer run on every work. MLA_STORE_ROWS_STEP (1 by default) keeps it in every cubin but the
// bf16 qm one (session 33 call 4, same machine: main job -0.4 µs, b 64 -0.4, bf16 Q / fp8 KV -0.7;
// fp8 128 heads 258.6 in that call's table against 264.1 in call 3's without it, two machines),
// which sets 0, the per-row division (64 rows a work: 128 heads +2.3 µs with the step).
#ifndef MLA_STORE_ROWS_STEP
#define MLA_STORE_ROWS_STEP 1
#endif
template <int CPR, int NT, class F>
__device__ __forceinline__ void for_rows_chunk(int tid, int r_begin, int nr, int Hk, F&& f) {
    static_assert(NT % CPR == 0, "a thread keeps one chunk of its rows");
    constexpr int RS = NT / CPR;  // rows a step
    const int ch = tid % CPR;
    int rs = tid / CPR;
    if (rs >= nr) return;
    const mla_div::DivMod th = mla_div::divmod_row<mla_div::kDivStore>(r_begin + rs, Hk);
    int tt = th.q, h = th.r;
    for (; rs < nr; rs += RS) {
        f(rs, ch, tt, h);
        h += RS;
        while (h >= Hk) {
            h -= Hk;
            ++tt;
        }
    }
}
// One 16-byte chunk ch (CPR 128) of staged row rs, query token tt and head h of work w: an fp32
// partial row of a split work or an fp32 `out` row.
__device__ __forceinline__ void store_chunk_f32(const mla_decode_params& p, const mla_dec::Work& w, const float* obuf,
                                                int Hk, int rs, int ch, int tt, int h) {
    const float4 v = *reinterpret_cast<const float4*>(obuf + rs * kOPitch + 4 * ch);
    float* dst = w.pql >= 0 ? p.partial_out + ((int64_t)(out_pql(w) + tt) * Hk + h) * kDV
                            : static_cast<float*>(p.out) + (int64_t)out_token(w, tt) * p.out_stride_token +
                                  (int64_t)(w.g * Hk + h) * p.out_stride_head;
    if constexpr (MLA_OUT_L2 == 0)  // (the float4 store of the shipped SASS)
        *reinterpret_cast<float4*>(dst + 4 * ch) = v;
    else
        st_out16(dst + 4 * ch,
                 make_uint4(__float_as_uint(v.x), __float_as_uint(v.y), __float_as_uint(v.z), __float_as_uint(v.w)));
}
// The same for a bf16 `out` row: chunk ch (CPR 64) holds 8 values.
__device__ __forceinline__ void store_chunk_bf16(const mla_decode_params& p, const mla_dec::Work& w, const float* obuf,
                                                 int Hk, int rs, int ch, int tt, int h) {
    const float4 a = *reinterpret_cast<const float4*>(obuf + rs * kOPitch + 8 * ch);
    const float4 b = *reinterpret_cast<const float4*>(obuf + rs * kOPitch + 8 * ch + 4);
    const uint4 v = make_uint4(mla_dec::pack_bf16(a.x, a.y), mla_dec::pack_bf16(a.z, a.w), mla_dec::pack_bf16(b.x, b.y),
                               mla_dec::pack_bf16(b.z, b.w));
    char* dst = static_cast<char*>(p.out) +
                2 * ((int64_t)out_token(w, tt) * p.out_stride_token + (int64_t)(w.g * Hk + h) * p.out_stride_head) +
                16 * ch;
    st_out16(dst, v);
}
template <int NT>
__device__ __forceinline__ void store_rows_part(const mla_decode_params& p, const mla_dec::Work& w, const float* obuf,
                                                int tid, int r_begin, int nr) {
    const int Hk = p.kernel_heads;
#if MLA_STORE_ROWS_STEP
    if (w.pql >= 0 || p.out_fp32) {
        for_rows_chunk<kDV / 4, NT>(tid, r_begin, nr, Hk, [&](int rs, int ch, int tt, int h) {
            store_chunk_f32(p, w, obuf, Hk, rs, ch, tt, h);
        });
    } else {
        for_rows_chunk<kDV / 8, NT>(tid, r_begin, nr, Hk, [&](int rs, int ch, int tt, int h) {
            store_chunk_bf16(p, w, obuf, Hk, rs, ch, tt, h);
        });
    }
#else
    if (w.pql >= 0 || p.out_fp32) {
        for (int c = tid; c < nr * (kDV / 4); c += NT) {
            const int rs = c / (kDV / 4), ch = c % (kDV / 4), row = r_begin + rs;
            const mla_div::DivMod th = mla_div::divmod_row<mla_div::kDivStore>(row, Hk);
            const int tt = th.q, h = th.r;
            store_chunk_f32(p, w, obuf, Hk, rs, ch, tt, h);
        }
    } else {
        for (int c = tid; c < nr * (kDV / 8); c += NT) {
            const int rs = c / (kDV / 8), ch = c % (kDV / 8), row = r_begin + rs;
            const mla_div::DivMod th = mla_div::divmod_row<mla_div::kDivStore>(row, Hk);
            const int tt = th.q, h = th.r;
            store_chunk_bf16(p, w, obuf, Hk, rs, ch, tt, h);
        }
    }
#endif
}

// The staged, normalised output rows obuf [nrows][kOPitch] fp32 of work w, written coalesced by
// all 256 threads (store_rows_part).
__device__ __forceinline__ void store_rows(const mla_decode_params& p, const mla_dec::Work& w, const float* obuf, int tid) {
    store_rows_part<256>(p, w, obuf, tid, 0, w.nrows);
}

// Independent accumulator chains of the S^T phase (registers: NA x NQ / 2 floats per thread).
// (The wg bf16/bf16 cubin defines 2 at 16 rows before including this: mla_decode_wg_bf16_bf16.cu.)
#ifndef MLA_WG_SCHAINS16
#define MLA_WG_SCHAINS16 4
#endif
#ifndef MLA_WG_SCHAINS32
#define MLA_WG_SCHAINS32 2
#endif
template <int NQ>
constexpr int kSChains = NQ == 16 ? MLA_WG_SCHAINS16 : MLA_WG_SCHAINS32;

// The lazy running max of tile_softmax in tile_mma and the register-A body (decode_ra.cuh):
// kLazy, in base-2 units; 0 the exact running max (with MLA_WG_STSM 0 too: session 28's SASS).
// Shipped 8 (session 29 call
// 2, A/B on one machine: 16 x MTP 2 159.0 -> 156.5 µs, bf16 Q / fp8 KV 121.4 -> 119.6, the main
// job and b 64 equal); the fp8 / fp8 register-A cubin keeps 0 (112.1 -> 112.6 with it,
// mla_decode_ra_fp8_fp8.cu).
#ifndef MLA_WG_LAZY
#define MLA_WG_LAZY 8
#endif
// MLA_WG_STSM 1: tile_softmax writes P^T with stmatrix (m8n8.x4.trans: one instruction a warp per
// 16 columns, from bf16x2 / f16x2 pairs of adjacent columns) instead of one 2-byte store per
// element (NQ / 2 a thread); the same swizzled K-major layout. 0: the 2-byte stores. Shipped 1
// (session 29 call 4, A/B on one machine: b 64 39.5 -> 39.1 µs, 16 x MTP 2 156.0 -> 155.2, fp8 16
// heads 112.1 -> 108.5, bf16 Q / fp8 KV 119.6 -> 119.2, the main job equal).
#ifndef MLA_WG_STSM
#define MLA_WG_STSM 1
#endif
// MLA_WG_LAZY1B 1 (needs MLA_WG_LAZY > 0 and MLA_WG_STSM): tile_softmax computes P against the
// running max before it knows whether a max moved, stores P^T, and takes the warpgroup's decision
// at the barrier that makes P^T visible (one bar.red.or, C'), so a tile whose maxima stay has one
// barrier instead of two (B', C); a tile where some max moved then runs the exact path (B, C) and
// rewrites P^T: three barriers. 0: B' decides first (session 29's SASS). Shipped 1 (session 30
// call 1, A/B on one machine: b 64 39.0 -> 38.3 µs, 16 x MTP 2 157.9 -> 157.5; call 2: 16 x MTP 2
// with fp8 KV 196.5 -> 189.3); m16 186, m32_fused 255 registers (before MLA_WG_LATESHFL). The
// register-A bf16 / fp8 cubin keeps 0: it spills 4 bytes with it and ran 119.0 -> 120.7 µs
// (mla_decode_ra_bf16_fp8.cu).
#ifndef MLA_WG_LAZY1B
#define MLA_WG_LAZY1B 1
#endif
// MLA_WG_LATESHFL 1 (with MLA_WG_LAZY1B): the one-barrier path takes its decision from each
// thread's own elements (some element past its column's running max + kLazy is the same test as
// some column max past it), so the shuffle rounds of the column maxima run only on a tile where a
// max moved, before the exchange through red[]. Shipped 1 (session 30 call 3, A/B on one machine:
// 16 x MTP 2 154.9 -> 154.5 µs, 16 x MTP 2 with fp8 KV 187.9 -> 182.7, b 64 and the main job
// equal); m16 195, m32_fused 255 registers. 0: session 30 call 2's SASS.
#ifndef MLA_WG_LATESHFL
#define MLA_WG_LATESHFL 1
#endif
// MLA_WG_EARLYTOK 1 (off: b 64 39.0 -> 39.2 µs, 16 x MTP 2 157.9 -> 158.5 with it, session 30
// call 1): tile_mma takes the key mask
// (mask_bits: two flag loads and the causal compares) before issuing the S^T MMAs, so none of it
// is on the chain from the S wait to the P.V issue.
#ifndef MLA_WG_EARLYTOK
#define MLA_WG_EARLYTOK 0
#endif
#if MLA_WG_LAZY < 0 || MLA_WG_LAZY > 14
#error "MLA_WG_LAZY is 0 (exact) .. 14 (P <= 2^14: f16 P of the register-A body holds that)"
#endif

// A work's starting state of this thread's NQ / 4 query columns (tile rows row0 + 8 (i >> 1) +
// 2 (lane & 3) + (i & 1)): running max -inf, sum 0, causal / cprr limit, and O^T = 0.
template <int NQ>
__device__ __forceinline__ void start_columns(const mla_decode_params& p, const mla_dec::Work& w, int row0,
                                              float (&m_run)[NQ / 4], float (&l_run)[NQ / 4], int (&lim)[NQ / 4],
                                              float (&o)[8][NQ / 2]) {
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int i = 0; i < NQ / 4; ++i) {
        m_run[i] = -INFINITY;
        l_run[i] = 0.f;
        lim[i] = mla_dec::row_limit(p, w, row0 + 8 * (i >> 1) + 2 * (lane & 3) + (i & 1));
    }
#pragma unroll
    for (int mb = 0; mb < 8; ++mb)
#pragma unroll
        for (int e = 0; e < NQ / 2; ++e) o[mb][e] = 0.f;
}

// Waits for the warpgroup's S^T wgmmas and sums the NA independent accumulator chains into s.
template <int NA, int NR>
__device__ __forceinline__ void wait_sum_chains(float (&sa)[NA][NR], float (&s)[NR]) {
    wg_commit();
    wg_wait0();
#pragma unroll
    for (int a = 0; a < NA; ++a) reg_fence(sa[a]);
#pragma unroll
    for (int e = 0; e < NR; ++e) {
        s[e] = sa[0][e];
#pragma unroll
        for (int a = 1; a < NA; ++a) s[e] += sa[a][e];
    }
}

// Column (query row) totals of this thread's per-token partial sums l_run over the warpgroup's
// 64 tokens: shuffles within the warp, then red[4][NQ] (the warpgroup's exchange) behind named
// barrier bar_id. lt[i] = the total of column 8 (i >> 1) + 2 (lane & 3) + (i & 1).
template <int NQ>
__device__ __forceinline__ void column_sums(const float (&l_run)[NQ / 4], float* red, int bar_id,
                                            float (&lt)[NQ / 4]) {
    constexpr int NI = NQ / 4;
    const int lane = threadIdx.x & 31, wl = (threadIdx.x >> 5) & 3;
#pragma unroll
    for (int i = 0; i < NI; ++i) {
        float l = l_run[i];
        l += __shfl_xor_sync(0xffffffffu, l, 4);
        l += __shfl_xor_sync(0xffffffffu, l, 8);
        l += __shfl_xor_sync(0xffffffffu, l, 16);
        lt[i] = l;
    }
    if (lane < 4) {
#pragma unroll
        for (int i = 0; i < NI; ++i) red[wl * NQ + 8 * (i >> 1) + 2 * lane + (i & 1)] = lt[i];
    }
    bar_sync(bar_id, 128);
#pragma unroll
    for (int i = 0; i < NI; ++i) {
        const int col = 8 * (i >> 1) + 2 * (lane & 3) + (i & 1);
        float l = 0.f;
#pragma unroll
        for (int k = 0; k < 4; ++k) l += red[k * NQ + col];
        lt[i] = l;
    }
}

// This thread's key mask of a tile for tile_softmax (bit 2 i: token r0 kept for column i, bit
// 2 i + 1: token r0 + 8; flagged tokens and keys past a column's causal limit are dropped), read
// from the token flags before the S wait (MLA_WG_EARLYTOK: the flag loads cannot cross the
// wgmma wait's memory clobber inside tile_softmax).
template <int NQ>
__device__ __forceinline__ int mask_bits(const int* tok, int jt0, const int (&lim)[NQ / 4]) {
    const int lane = threadIdx.x & 31, wl = (threadIdx.x >> 5) & 3;
    const int r0 = 16 * wl + (lane >> 2), jt = jt0 + r0;
    const bool ok0 = tok[r0] != 0, ok1 = tok[r0 + 8] != 0;
    int keep = 0;
#pragma unroll
    for (int i = 0; i < NQ / 4; ++i)
        keep |= (ok0 && jt <= lim[i] ? 1 : 0) << (2 * i) | (ok1 && jt + 8 <= lim[i] ? 1 : 0) << (2 * i + 1);
    return keep;
}

// P^T [NQ][64] (bf16, or f16 when PF16) at p_off in the swizzled K-major layout from this thread's
// P of tokens r0 (pa[i]) and r0 + 8 (pb[i]), columns 8 (i >> 1) + 2 (lane & 3) + (i & 1)
// (tile_softmax's layout), by stmatrix .trans (MLA_WG_STSM): every thread of the warp calls it.
template <int NQ, bool PF16>
__device__ __forceinline__ void store_pt_stsm(char* smem, uint32_t p_off, const float (&pav)[NQ / 4],
                                              const float (&pbv)[NQ / 4]) {
    const int lane = threadIdx.x & 31, wl = (threadIdx.x >> 5) & 3;
    // P^T by stmatrix .trans: an 8x8 block of (8 tokens) x (8 columns) in the accumulator
    // layout (lane: row lane / 4, columns 2 (lane % 4) + 0, 1) is stored transposed, so each
    // memory row is one column's 8 tokens: a 16-byte chunk of the K-major P^T row. Matrix k of
    // call q: columns 8 c .. 8 c + 7, c = 2 q + k / 2, tokens of this warp's half g = k % 2 (r0
    // or r0 + 8); lane 8 k + j gives the address of column 8 c + j's chunk, 2 wl + g swizzled.
    const int k = lane >> 3, j = lane & 7;
#pragma unroll
    for (int q = 0; q < NQ / 16; ++q) {
        const int c = 2 * q + (k >> 1), g = k & 1, qr = 8 * c + j;
        const uint32_t addr = smem_u32(smem) + p_off + qr * 128 + (((2 * wl + g) ^ j) << 4);
        uint32_t r[4];
#pragma unroll
        for (int m = 0; m < 4; ++m) {
            const int i0 = 4 * q + 2 * (m >> 1);  // columns c' = 2 q + m / 2, pair elements 0, 1
            const float lo = (m & 1) ? pbv[i0] : pav[i0], hi = (m & 1) ? pbv[i0 + 1] : pav[i0 + 1];
            if constexpr (PF16) {
                const __half2 h = __floats2half2_rn(lo, hi);
                r[m] = *reinterpret_cast<const uint32_t*>(&h);
            } else {
                r[m] = mla_dec::pack_bf16(lo, hi);
            }
        }
        asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(addr),
                     "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3])
                     : "memory");
    }
}

// Max of v over the 8 lanes of this warp with the same lane % 4: the lanes that hold one query
// column of the S^T accumulator layout, each for its own two tokens of the warp's 16.
__device__ __forceinline__ float warp_col_max(float v) {
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 4));
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 8));
    return fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 16));
}

// The token of S^T row r (< 64) under token map kMap (the register-A body's MLA_RA_VSWAP,
// decode_ra.cuh): 0 the identity; 1 r ^ ((r >> 1) & 1) (the tokens of every second pair swapped);
// 2 within each 16: rows 8 h + x hold token h + (0, 4, 2, 6, 12, 8, 14, 10)[x] (even tokens in rows
// 0..7, odd in 8..15); 3 r ^ ((r & 1) << 2) (bit 2 flipped in odd rows). The rows of S^T are
// P^T's k-positions and V^T's, so one map serves all three.
template <int kMap>
__device__ __forceinline__ int tile_token(int r) {
    if constexpr (kMap == 0) return r;
    if constexpr (kMap == 1) return r ^ ((r >> 1) & 1);
    if constexpr (kMap == 3) return r ^ ((r & 1) << 2);
    const int x = r & 7, q = x >> 1, b = x & 1, hi = q >> 1;
    return (r & ~15) + ((r >> 3) & 1) + 2 * q + 4 * hi + 4 * (b ^ hi);
}

// The online softmax of one 64-token tile for a warpgroup's NQ query columns, on the S^T
// accumulator layout (this thread: rows r0, r0 + 8 of the tile, the tokens tile_token<kTokMap>
// of them; columns 8 (i >> 1) + 2 (lane & 3) + (i & 1)): mask (token flags, causal limits, padding rows), scale to base-2 logits, column
// maxima met in red[4][NQ] (named barrier bar_id), p = 2^(s - m) (0 while a column has seen no
// key), l updated, P^T [NQ][64] written at p_off (bf16, or f16 when PF16) in the swizzled K-major
// layout, alpha = 2^(m_old - m_new) returned. Ends with the fence and barrier that make P^T visible
// to the warpgroup's MMAs. Every thread of the warpgroup calls it.
// kLazy > 0 (MLA_WG_LAZY; FA4's trick, as the qm fp8 body's kLazy): the running maxima move only
// when some column's tile max exceeds its running max by more than kLazy (base-2 units, a factor
// 2^kLazy), decided for the whole warpgroup by one bar.red.or (B') from each warp's own maxima:
// then every column takes its exact max as above (red[] and barrier B after B': three barriers on
// such a tile); else the maxima stay, alpha is 1, and barrier B and the exchange through red[]
// are skipped (two barriers, B' and C). With MLA_WG_LAZY1B (the wg cubins' default) P and P^T
// come first, against the running max, and the decision is taken at the barrier that makes P^T
// visible (C'): one barrier on a tile whose maxima stay; with MLA_WG_LATESHFL it comes from each
// thread's own elements, and the shuffle rounds run only on a tile that moved. Then the caller
// must order its P^T stores after every warp's P.V wait of the tile before (a barrier between
// them, or P^T buffers used by tile parity: wg_common.cuh's Cfg::PBUF). P = 2^(s - m) <= 2^kLazy
// (bf16 / f16 hold it to the same relative precision as P <= 1; o = sum p v / sum p for any
// reference max). Returns whether the maxima moved (uniform over the warpgroup; always true when
// kLazy is 0): the caller rescales O only then.
// kTokMap: the rows' token map (tile_token): the masks read each row's token's flag and limit.
template <int NQ, bool PF16, int kLazy = 0, bool kKeep = false, int kTokMap = 0>
__device__ __forceinline__ bool tile_softmax(char* smem, uint32_t p_off, float* red, const int* tok, int jt0,
                                             const int (&lim)[NQ / 4], float sl2, float (&s)[NQ / 2],
                                             float (&m_run)[NQ / 4], float (&l_run)[NQ / 4], float (&alpha)[NQ / 4],
                                             int bar_id, int keep = 0) {
    constexpr int NI = NQ / 4;
    // (MLA_WG_LATESHFL above: the warp's column maxima only where the one-barrier path finds a move)
    constexpr bool kLateShfl = kLazy > 0 && MLA_WG_LAZY1B && MLA_WG_LATESHFL && (MLA_WG_ABLATE & 1024) == 0;
    const int lane = threadIdx.x & 31, wl = (threadIdx.x >> 5) & 3;
    const int r0 = 16 * wl + (lane >> 2);
    MLA_TRACE_SUB_BASE(tsb);
    // ---- mask, scale to base-2 logits, column (query row) maxima ----
    const int t0 = tile_token<kTokMap>(r0), t1 = tile_token<kTokMap>(r0 + 8);  // the rows' tokens
    // (jt + 8 at map 0: the same value, but the shipped wg cubins' SASS depends on the form)
    const int jt = jt0 + t0, jt1 = kTokMap == 0 ? jt + 8 : jt0 + t1;
    const bool ok0 = tok[t0] != 0, ok1 = tok[t1] != 0;
    float mx[NI];
#pragma unroll
    for (int i = 0; i < NI; ++i) {
        const int e0 = 4 * (i >> 1) + (i & 1);
        float a, b;
        if constexpr (kKeep) {  // (the caller's mask_bits, taken before the S wait)
            a = ((keep >> (2 * i)) & 1) != 0 ? s[e0] * sl2 : -INFINITY;
            b = ((keep >> (2 * i + 1)) & 1) != 0 ? s[e0 + 2] * sl2 : -INFINITY;
        } else {
            a = (ok0 && jt <= lim[i]) ? s[e0] * sl2 : -INFINITY;
            b = (ok1 && jt1 <= lim[i]) ? s[e0 + 2] * sl2 : -INFINITY;
        }
        s[e0] = a;
        s[e0 + 2] = b;
        mx[i] = fmaxf(a, b);
        if constexpr (!kLateShfl && (MLA_WG_ABLATE & 1024) == 0) mx[i] = warp_col_max(mx[i]);
    }
    MLA_TRACE_SUB(tsb, 3);
    bool up = false;  // some column of this warp's tokens (kLateShfl: of this thread's elements) past its
                      // running max + kLazy (-inf: any key)
    if constexpr (kLazy > 0) {
#pragma unroll
        for (int i = 0; i < NI; ++i) up |= mx[i] > m_run[i] + float(kLazy);
    }
    if constexpr (kLazy > 0 && MLA_WG_LAZY1B) {  // (MLA_WG_LAZY1B above)
        static_assert(MLA_WG_STSM, "MLA_WG_LAZY1B stores P^T by stmatrix");
        float pav[NI], pbv[NI];  // P against the running max, as if it stayed
#pragma unroll
        for (int i = 0; i < NI; ++i) {
            const int e0 = 4 * (i >> 1) + (i & 1);
            const float mn = m_run[i];
            pav[i] = mn == -INFINITY ? 0.f : ex2(s[e0] - mn);
            pbv[i] = mn == -INFINITY ? 0.f : ex2(s[e0 + 2] - mn);
        }
        MLA_TRACE_SUB(tsb, 4);
        if constexpr ((MLA_WG_ABLATE & 512) == 0) store_pt_stsm<NQ, PF16>(smem, p_off, pav, pbv);
        MLA_TRACE_SUB(tsb, 5);
        if constexpr ((MLA_WG_ABLATE & 256) == 0) fence_proxy_async();
        MLA_TRACE_SUB(tsb, 6);
        const bool mv = bar_red_or(bar_id, 128, up);
        MLA_TRACE_SUB(tsb, 7);
        if (!mv) {  // (C') P^T visible, and no column's max moved
#pragma unroll
            for (int i = 0; i < NI; ++i) {
                alpha[i] = 1.f;
                l_run[i] += pav[i] + pbv[i];
            }
            return false;
        }
        // some column moved (every thread agrees): the exact path below rewrites P^T (no MMA has
        // read it yet) behind barriers B and C
        if constexpr (kLateShfl) {
#pragma unroll
            for (int i = 0; i < NI; ++i) mx[i] = warp_col_max(mx[i]);
        }
    }
    bool moved = true;
    if constexpr (kLazy > 0 && !MLA_WG_LAZY1B) moved = bar_red_or(bar_id, 128, up);  // (B') the warpgroup's decision
    if (moved) {
        if (lane < 4) {
#pragma unroll
            for (int i = 0; i < NI; ++i)
                red[wl * NQ + 8 * (i >> 1) + 2 * lane + (i & 1)] = mx[i];
        }
        bar_sync(bar_id, 128);  // (B) warp maxima visible within the warpgroup
    }
    [[maybe_unused]] float pav[NI], pbv[NI];  // (MLA_WG_STSM: this thread's P, stored after the loop)
#pragma unroll
    for (int i = 0; i < NI; ++i) {
        const int col = 8 * (i >> 1) + 2 * (lane & 3) + (i & 1);
        float mn = m_run[i];
        if (moved) {  // (kLazy 0: always)
#pragma unroll
            for (int k = 0; k < 4; ++k) mn = fmaxf(mn, red[k * NQ + col]);
            alpha[i] = m_run[i] == -INFINITY ? 0.f : ex2(m_run[i] - mn);
            m_run[i] = mn;
        } else {
            alpha[i] = 1.f;
        }
        const int e0 = 4 * (i >> 1) + (i & 1);
        // a row with no visible key so far keeps p = 0 (no -inf - -inf)
        const float pa = mn == -INFINITY ? 0.f : ex2(s[e0] - mn);
        const float pb = mn == -INFINITY ? 0.f : ex2(s[e0 + 2] - mn);
        l_run[i] = moved ? l_run[i] * alpha[i] + pa + pb : l_run[i] + pa + pb;
        const int qr = col;  // swizzle phase: p_off rows start 1024-aligned
        char* prow = smem + p_off + qr * 128 + ((r0 & 7) << 1);
        if constexpr ((MLA_WG_ABLATE & 512) != 0) {
        } else if constexpr (MLA_WG_STSM) {
            pav[i] = pa;
            pbv[i] = pb;
        } else if constexpr (PF16) {
            *reinterpret_cast<__half*>(prow + (((r0 >> 3) ^ (qr & 7)) << 4)) = __float2half_rn(pa);
            *reinterpret_cast<__half*>(prow + ((((r0 >> 3) + 1) ^ (qr & 7)) << 4)) = __float2half_rn(pb);
        } else {
            *reinterpret_cast<__nv_bfloat16*>(prow + (((r0 >> 3) ^ (qr & 7)) << 4)) = __float2bfloat16_rn(pa);
            *reinterpret_cast<__nv_bfloat16*>(prow + ((((r0 >> 3) + 1) ^ (qr & 7)) << 4)) = __float2bfloat16_rn(pb);
        }
    }
    static_assert(!MLA_WG_STSM || NQ % 16 == 0, "stmatrix stores P^T in blocks of 16 columns");
    if constexpr (MLA_WG_STSM && (MLA_WG_ABLATE & 512) == 0) store_pt_stsm<NQ, PF16>(smem, p_off, pav, pbv);
    if constexpr ((MLA_WG_ABLATE & 256) == 0) fence_proxy_async();
    bar_sync(bar_id, 128);  // (C) P^T visible to the warpgroup's MMAs
    return moved;
}

// O^T columns (query rows) scaled by their alpha (accumulator layout of tile_softmax).
template <int NQ>
__device__ __forceinline__ void scale_o(float (&o)[8][NQ / 2], const float (&alpha)[NQ / 4]) {
#pragma unroll
    for (int mb = 0; mb < 8; ++mb)
#pragma unroll
        for (int i = 0; i < NQ / 4; ++i) {
            const int e0 = 4 * (i >> 1) + (i & 1);
            o[mb][e0] *= alpha[i];
            o[mb][e0 + 2] *= alpha[i];
        }
}

// One 64-token tile of a warpgroup's NQ query rows: S^T = K . Q^T (A = tile at kt_off, B = Q rows
// through dQ), the online softmax (tile_softmax: P^T bf16 at p_off), then
// O^T = O^T * alpha + V^T . P^T. Every thread of the warpgroup calls it.
// kt_off, p_off: byte offsets in shared memory (1024-aligned).
template <int N, int NQ>
__device__ __forceinline__ void tile_mma(char* smem, uint32_t sbase, uint32_t kt_off, uint32_t p_off, float* red,
                                         const int* tok, int jt0, const int (&lim)[NQ / 4], float sl2,
                                         float (&m_run)[NQ / 4], float (&l_run)[NQ / 4], float (&o)[8][NQ / 2],
                                         uint64_t dQ, int bar_id) {
    constexpr int NR = NQ / 2, NI = NQ / 4;
    MLA_TRACE_SUB_BASE(tsb);
    MLA_TRACE_SUB(tsb, 0);
    const uint64_t dP = sw128_desc(sbase + p_off, 16, 1024);
    // ---- S^T = K . Q^T over 576 dims, in NA independent accumulator chains (k-step kk goes to
    // chain kk % NA): consecutive wgmmas then do not wait on each other's results ----
    constexpr int NA = kSChains<NQ>;
    float sa[NA][NR];
#pragma unroll
    for (int a = 0; a < NA; ++a)
#pragma unroll
        for (int e = 0; e < NR; ++e) sa[a][e] = 0.f;
    const uint64_t dK = sw128_desc(sbase + kt_off, 16, 1024);
    [[maybe_unused]] int keep = 0;
    if constexpr (MLA_WG_EARLYTOK) keep = mask_bits<NQ>(tok, jt0, lim);
#pragma unroll
    for (int a = 0; a < NA; ++a) reg_fence(sa[a]);
    wg_fence();
#if MLA_WG_ULO
    // (MLA_WG_ULO: the bases broadcast from lane 0, so that the compiler may keep the descriptors'
    // low words and their k-step adds in uniform registers; 32-bit adds, wgmma_lo. dQ must be a
    // sw128_desc(., 16, 1024) descriptor, as every caller's is: only its low word is taken, and
    // the high word is sw128_desc_hi(1024))
    const uint32_t kbase = __shfl_sync(0xffffffffu, sbase + kt_off, 0);
    const uint32_t klo = uint32_t(sw128_desc(kbase, 16, 1024)), qlo = desc_lo_bcast(dQ);
#pragma unroll
    for (int kk = 0; kk < ((MLA_WG_ABLATE & 2) ? 0 : kD / 16); ++kk) {
        const int kb = kk >> 2, k4 = kk & 3;
        wgmma_lo<NQ, 0>(sa[kk % NA], klo + uint32_t((kb * kBlk + k4 * 32) >> 4),
                        qlo + uint32_t((kb * N * 128 + k4 * 32) >> 4), sw128_desc_hi(1024), kk >= NA);
    }
#else
#pragma unroll
    for (int kk = 0; kk < ((MLA_WG_ABLATE & 2) ? 0 : kD / 16); ++kk) {
        const int kb = kk >> 2, k4 = kk & 3;
        wgmma<NQ, 0>(sa[kk % NA], dK + uint64_t((kb * kBlk + k4 * 32) >> 4),
                     dQ + uint64_t((kb * N * 128 + k4 * 32) >> 4), kk >= NA);
    }
#endif
    float s[NR];
    MLA_TRACE_SUB(tsb, 1);
    wait_sum_chains(sa, s);
    MLA_TRACE_SUB(tsb, 2);

    float alpha[NI];
    bool moved = true;
    if constexpr ((MLA_WG_ABLATE & 128) != 0) {  // (measurement hook: no softmax, wg_common.cuh)
#pragma unroll
        for (int i = 0; i < NI; ++i) alpha[i] = 1.f;
        reg_fence(s);  // (S^T still waited for and summed)
    } else {
        moved = tile_softmax<NQ, false, MLA_WG_LAZY, MLA_WG_EARLYTOK != 0>(smem, p_off, red, tok, jt0, lim, sl2, s, m_run,
                                                                          l_run, alpha, bar_id, keep);
    }

    // ---- O^T = O^T * alpha + V^T . P^T over this tile's 64 tokens (alpha 1 unless moved) ----
    if (moved) scale_o<NQ>(o, alpha);
    const uint64_t dV = sw128_desc(sbase + kt_off, 1024, 1024);
#pragma unroll
    for (int mb = 0; mb < 8; ++mb) reg_fence(o[mb]);
    wg_fence();
    // token step outer, dim block inner: 8 independent accumulators between dependent wgmmas
#if MLA_WG_ULO
    const uint32_t vlo = uint32_t(sw128_desc(kbase, 1024, 1024));
    const uint32_t plo = uint32_t(sw128_desc(__shfl_sync(0xffffffffu, sbase + p_off, 0), 16, 1024));
#pragma unroll
    for (int kt = 0; kt < ((MLA_WG_ABLATE & 1) ? 0 : kTN / 16); ++kt)
#pragma unroll
        for (int mb = 0; mb < 8; ++mb)
            wgmma_lo<NQ, 1>(o[mb], vlo + uint32_t((mb * kBlk + kt * 2048) >> 4), plo + uint32_t((kt * 32) >> 4),
                            sw128_desc_hi(1024), 1);
#else
#pragma unroll
    for (int kt = 0; kt < ((MLA_WG_ABLATE & 1) ? 0 : kTN / 16); ++kt)
#pragma unroll
        for (int mb = 0; mb < 8; ++mb)
            wgmma<NQ, 1>(o[mb], dV + uint64_t((mb * kBlk + kt * 2048) >> 4), dP + uint64_t((kt * 32) >> 4), 1);
#endif
    wg_commit();
    MLA_TRACE_SUB(tsb, 8);
    wg_wait0();
    MLA_TRACE_SUB(tsb, 9);
#pragma unroll
    for (int mb = 0; mb < 8; ++mb) reg_fence(o[mb]);
}

}  // namespace mla_wg
