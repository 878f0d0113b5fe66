// mla_reduce.cu - sm_90a split-KV reducers: merge the fp32 partial rows of every split qo tile
// into bf16 (or fp32, out_fp32) out and fp32 LSE (docs/plan-layout.md "Reduce"). Four kernels, one
// params struct; mla_reduce.csv picks one by `spread` and gives its units per CTA (the shipped
// table: mla_reduce_tiles_bf16 for spread 0, mla_reduce_slim_bf16 (reduce_slim.cuh, included at
// the end) for spread 1; mla_reduce_wide_bf16, the spread-1 kernel up to session 25, and
// mla_reduce_bf16, the spread-0 kernel up to session 11, stay for tables that name them).
//
// mla_reduce_tiles_bf16 (many tiles, units_per_cta 0 = whole tiles; defined at the end):
// Grid: min(tiles, SMs) CTAs of 512 threads (128 registers: one per SM). CTA c checks the
// contiguous tiles [c T / G, (c + 1) T / G) a thread each, keeps the split ones in shared memory
// and reduces them one after the other with all its W warps: warp w takes (row, head) pairs w,
// w + W, ...; lane k holds fragment k's partial row and lse_k (chunks of 32), and the lanes read
// the fragments' o_k, 16 columns each, four fragments in flight. The request of a tile comes from
// a 128-way search of qo_indptr whose last round also gives its bounds. The tile header, the
// first 32 fragments' partial rows and the search are read from the plan before
// griddepcontrol.wait (the decode kernel does not write the plan); every thread waits before the
// grid ends. Session 12: b = 1536 reducer 20.7 -> 8.3 µs (`ncu`); end to end, same machine, 128
// heads 353.6 -> 336.0 µs, b = 1536 891.9 -> 880.4 (docs/performance.md). The per-tile reduction
// (reduce_split_tile) and its measurement hooks (MLA_RTILES_NO_OUT / _NO_STORE) live in
// split_tile.cuh, shared with the decode kernels' fused reduction (decode/fused_reduce.cuh).
//
// mla_reduce_bf16 (many tiles, units_per_cta 4):
// Grid: x = planned tile (reduce_indptr_len - 1; unsplit tiles return), y = groups of 4 units.
// A unit is (row, head, 128-column quarter) of the tile; CTA y takes units y * 4 + slot (+ 4
// gridDim.y ...), and each unit's fragments are split over the S = blockDim.x / 128 warps of its
// slot (warp `split` takes fragments f0 + split, + S, ...), whose partial sums meet in shared
// memory. So one long split tile (b = 1, 128 fragments x 16 heads) spreads over 64 x S warps on
// 16 SMs and each warp's chain of dependent loads is S times shorter (launch_threads in
// mla_reduce.csv sets S: 128 threads = 1 warp per unit, 512 = 4).
// For row i, head h: lse* = m + log sum_k exp(lse_k - m), m the largest finite lse_k;
// o = sum_k exp(lse_k - lse*) o_k. A fragment with lse_k = -inf (or NaN) gets weight 0 and its
// o_k is never read, so 0 * NaN cannot occur; all -inf -> o = 0, lse* = -inf.
//
// mla_reduce_wide_bf16 (a few long-split tiles, units_per_cta 1): one unit per CTA of 16 warps.
// Pass 1: every thread folds a strided share of the fragments' lse_k into a running (max, sum),
// the block combines them into lse*; the first 512 fragments' partial rows and lse_k stay in
// shared memory. Pass 2, per chunk of 512 fragments: thread k turns fragment k's lse_k into its
// weight (later chunks: looks the row and lse_k up first), then warp w loads the o_k of
// fragments w, w + 16, ... (eight loads in flight, no dependent index loads between them) and
// the 16 warps' sums meet in shared memory. For b = 1 at 16 heads (128 fragments, 64 units) that
// is 64 CTAs and one round of loads per warp, where mla_reduce_bf16 ran 16 CTAs and four rounds
// of three dependent loads each.
#include <cuda_bf16.h>
#include <stdint.h>

#include "common/lse_math.cuh"
#include "reduce/reduce_params.h"
#include "reduce/split_tile.cuh"


namespace {

using namespace mla_split;
constexpr int kSlots = 4;     // units per CTA and loop step
constexpr int kMaxSplit = 4;  // warps per unit at most (512 threads)



// Request b of folded row f (qo_indptr[b] * r <= f < qo_indptr[b + 1] * r), its query token t
// (rel % L) and head group g (rel / L); false when the request has no query token. qo0 / qo1:
// qo_indptr[0] / [1], which the caller loads together with its other first loads (one round
// trip, not one more after them, when the row is request 0's: always for b = 1).
__device__ __forceinline__ bool row_of(const mla_reduce_params& p, int f, int qo0, int qo1, int& b, int& t,
                                       int& g) {
    const int r = p.qk_batch_ratio;
    int lo = 0, hi = p.batch_size - 1;
    while (lo < hi) {
        const int mid = (lo + hi + 1) >> 1;
        if ((int64_t)p.qo_indptr[mid] * r <= f) lo = mid; else hi = mid - 1;
    }
    b = lo;
    const int qo_b = b == 0 ? qo0 : p.qo_indptr[b], L = (b == 0 ? qo1 : p.qo_indptr[b + 1]) - qo_b;
    if (L <= 0) return false;
    const int rel = f - qo_b * r;
    g = rel / L;
    t = rel % L;
    return true;
}

// store_token_row of token qo_indptr[b] + t.
__device__ __forceinline__ void store_row(const mla_reduce_params& p, int b, int t, int g, int h, int quarter,
                                          int lane, float4 acc, float lse) {
    store_token_row(p, p.qo_indptr[b] + t, g, h, quarter, lane, acc, lse);
}

// (m, s) with s = sum exp(x - m) over the finite x folded in so far; m = -inf, s = 0: none yet.
__device__ __forceinline__ void fold_lse(float& m, float& s, float m2, float s2) {
    const float mx = fmaxf(m, m2);
    if (mx == -INFINITY) return;
    s = (m == -INFINITY ? 0.f : s * __expf(m - mx)) + (m2 == -INFINITY ? 0.f : s2 * __expf(m2 - mx));
    m = mx;
}

}  // namespace

extern "C" __global__ void __launch_bounds__(512) mla_reduce_bf16(const __grid_constant__ mla_reduce_params p) {
    __shared__ float4 red[kSlots][kMaxSplit - 1][32];  // partial sums of splits 1..S-1
    wait_for_decode();
    const int tile = blockIdx.x;
    if (tile >= p.num_tiles) return;
    const int f0 = p.reduce_indptr[tile], f1 = p.reduce_indptr[tile + 1];
    if (f1 <= f0) return;  // unsplit tile: the decode kernel wrote it
    const int qs = p.reduce_final_map[2 * tile], qe = p.reduce_final_map[2 * tile + 1];
    const int Hk = p.kernel_heads;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int S = min(max((int)(blockDim.x >> 5) / kSlots, 1), kMaxSplit);  // warps per unit
    const int slot = warp / S, split = warp % S;
    const int units = (qe - qs) * Hk * 4;
    // every warp of the CTA runs the same number of iterations (the barrier below)
    for (int ub = blockIdx.y * kSlots; ub < units; ub += gridDim.y * kSlots) {
        const int u = ub + slot;
        float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
        float lse = -INFINITY;
        int b = 0, t = 0, g = 0, quarter = u & 3, h = 0;
        bool has_row = false;
        if (slot < kSlots && u < units) {
            const int pr = u >> 2;
            const int i = pr / Hk;
            h = pr % Hk;
            has_row = row_of(p, qs + i, p.qo_indptr[0], p.qo_indptr[1], b, t, g);  // folded row qs + i
            if (has_row) {
                // lse* over all fragments (every warp of the slot computes it)
                float m = -INFINITY;
                for (int k = f0 + lane; k < f1; k += 32) {
                    const float x = p.partial_lse[((int64_t)p.reduce_partial_map[k] + i) * Hk + h];
                    if (finite_lse(x)) m = fmaxf(m, x);
                }
#pragma unroll
                for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
                float sum = 0.f;
                if (m > -INFINITY)
                    for (int k = f0 + lane; k < f1; k += 32) {
                        const float x = p.partial_lse[((int64_t)p.reduce_partial_map[k] + i) * Hk + h];
                        if (finite_lse(x)) sum += __expf(x - m);
                    }
#pragma unroll
                for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
                lse = mla_lse::combined_lse(m, sum);

                // this lane's 4 columns: quarter * 128 + 4 lane; fragments f0 + split + S j,
                // eight in flight
                if (lse > -INFINITY) {
                    const int col = quarter * 128 + 4 * lane;
                    int k = f0 + split;
                    for (; k + 7 * S < f1; k += 8 * S) {
                        float wgt[8];
                        float4 v[8];
#pragma unroll
                        for (int u4 = 0; u4 < 8; ++u4) {
                            const int64_t prow = ((int64_t)p.reduce_partial_map[k + u4 * S] + i) * Hk + h;
                            const float x = p.partial_lse[prow];
                            const bool fin = finite_lse(x);
                            wgt[u4] = fin ? __expf(x - lse) : 0.f;
                            v[u4] = make_float4(0.f, 0.f, 0.f, 0.f);
                            if (fin) v[u4] = __ldg(reinterpret_cast<const float4*>(p.partial_out + prow * kDV + col));
                        }
#pragma unroll
                        for (int u4 = 0; u4 < 8; ++u4) add4(acc, wgt[u4], v[u4]);
                    }
                    for (; k < f1; k += S) {
                        const int64_t prow = ((int64_t)p.reduce_partial_map[k] + i) * Hk + h;
                        const float x = p.partial_lse[prow];
                        if (!finite_lse(x)) continue;
                        const float wgt = __expf(x - lse);
                        add4(acc, wgt, *reinterpret_cast<const float4*>(p.partial_out + prow * kDV + col));
                    }
                }
            }
        }
        if (S > 1) {  // the slot's splits meet in shared memory; split 0 adds them in order
            if (split > 0 && slot < kSlots) red[slot][split - 1][lane] = acc;
            __syncthreads();
            if (split == 0 && slot < kSlots)
                for (int s2 = 1; s2 < S; ++s2) add4(acc, 1.f, red[slot][s2 - 1][lane]);
            __syncthreads();
        }
        if (split != 0 || slot >= kSlots || u >= units || !has_row) continue;
        store_row(p, b, t, g, h, quarter, lane, acc, lse);
    }
}

extern "C" __global__ void __launch_bounds__(512) mla_reduce_wide_bf16(const __grid_constant__ mla_reduce_params p) {
    constexpr int kWarps = 16, kChunk = 512, kInFlight = 8;
    __shared__ int64_t s_row[kChunk];     // partial row of chunk fragment k
    __shared__ float s_w[kChunk];         // its lse_k, then its weight exp(lse_k - lse*) (0 if not finite)
    __shared__ float4 s_acc[kWarps][32];  // the warps' column sums
    __shared__ float s_m[kWarps], s_s[kWarps];
    // The plan is read before the wait (the decode kernel does not write it: reduce_split_tile,
    // split_tile.cuh, says why that is safe), the partials after it; every thread waits, so this
    // grid completes only after the decode grid (mla_reduce_tiles_bf16's closing comment).
    const int tile = blockIdx.x, tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int Hk = p.kernel_heads;
    const int u = blockIdx.y;  // unit (row, head, quarter): `live` is CTA-uniform
    bool live = tile < p.num_tiles && blockDim.x == 32 * kWarps;
    int f0 = 0, f1 = 0, qs = 0, qe = 0, qo0 = 0, qo1 = 0;
    if (live) {  // the first loads depend on nothing but the tile: issued together
        f0 = p.reduce_indptr[tile], f1 = p.reduce_indptr[tile + 1];
        qs = p.reduce_final_map[2 * tile], qe = p.reduce_final_map[2 * tile + 1];
        qo0 = p.qo_indptr[0], qo1 = p.qo_indptr[1];
    }
    live = live && f1 > f0 && u < (qe - qs) * Hk * 4;  // (unsplit tile: the decode kernel wrote it)
    const int quarter = u & 3, i = (u >> 2) / Hk, h = (u >> 2) % Hk;
    int b = 0, t = 0, g = 0;
    live = live && row_of(p, qs + i, qo0, qo1, b, t, g);
    // blockDim.x == kChunk: thread tid's first fragment is chunk slot tid; its partial row
    const int64_t prow0 = live && f0 + tid < f1 ? ((int64_t)p.reduce_partial_map[f0 + tid] + i) * Hk + h : -1;
    wait_for_decode();
    if (!live) return;

    // pass 1: lse* over every fragment; the first chunk's rows and lse_k stay in shared memory
    float m = -INFINITY, s = 0.f;
    if (prow0 >= 0) {
        const int64_t prow = prow0;
        const float x = p.partial_lse[prow];
        s_row[tid] = prow;
        s_w[tid] = x;
        if (finite_lse(x)) fold_lse(m, s, x, 1.f);
    }
    for (int k = f0 + kChunk + tid; k < f1; k += kChunk) {
        const float x = p.partial_lse[((int64_t)p.reduce_partial_map[k] + i) * Hk + h];
        if (finite_lse(x)) fold_lse(m, s, x, 1.f);
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        fold_lse(m, s, __shfl_xor_sync(0xffffffffu, m, o), __shfl_xor_sync(0xffffffffu, s, o));
    if (lane == 0) s_m[warp] = m, s_s[warp] = s;
    __syncthreads();
    m = -INFINITY, s = 0.f;
    for (int w = 0; w < kWarps; ++w) fold_lse(m, s, s_m[w], s_s[w]);  // the same order in every thread
    const float lse = mla_lse::combined_lse(m, s);

    // pass 2: o = sum_k w_k o_k, chunk by chunk
    float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
    const int col = quarter * 128 + 4 * lane;
    if (lse > -INFINITY)
        for (int c = f0; c < f1; c += kChunk) {
            const int n = min(kChunk, f1 - c);
            if (c != f0) {  // the first chunk was stored by pass 1 (before its barrier)
                __syncthreads();  // the previous chunk's readers are done
                if (tid < n) {
                    const int64_t prow = ((int64_t)p.reduce_partial_map[c + tid] + i) * Hk + h;
                    s_row[tid] = prow;
                    s_w[tid] = p.partial_lse[prow];
                }
            }
            if (tid < n) s_w[tid] = finite_lse(s_w[tid]) ? __expf(s_w[tid] - lse) : 0.f;  // lse_k -> weight
            __syncthreads();
            for (int k = warp; k < n; k += kWarps * kInFlight) {
                float4 v[kInFlight];
                float wk[kInFlight];
#pragma unroll
                for (int j = 0; j < kInFlight; ++j) {
                    const int kk = k + j * kWarps;
                    wk[j] = kk < n ? s_w[kk] : 0.f;
                    v[j] = make_float4(0.f, 0.f, 0.f, 0.f);
                    if (wk[j] != 0.f) v[j] = __ldg(reinterpret_cast<const float4*>(p.partial_out + s_row[kk] * kDV + col));
                }
#pragma unroll
                for (int j = 0; j < kInFlight; ++j) add4(acc, wk[j], v[j]);
            }
        }
    s_acc[warp][lane] = acc;
    __syncthreads();
    if (warp != 0) return;
    acc = make_float4(0.f, 0.f, 0.f, 0.f);
    for (int w = 0; w < kWarps; ++w) add4(acc, 1.f, s_acc[w][lane]);
    store_row(p, b, t, g, h, quarter, lane, acc, lse);
}


extern "C" __global__ void __launch_bounds__(512) mla_reduce_tiles_bf16(const __grid_constant__ mla_reduce_params p) {
    constexpr int kList = 512;            // blockDim.x at most
    __shared__ int4 s_tile[kList];        // (f0, f1, qs, qe) of this round's split tiles
    __shared__ int s_n;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, W = blockDim.x >> 5;
    const int64_t G = gridDim.x, T = p.num_tiles;
    // this CTA's tiles are the block [c T / G, (c + 1) T / G): the decode plan's split tiles lie
    // at its CTAs' work boundaries, spread along the tiles as evenly as these blocks, so each
    // block holds about as many (one at b = 1536 over 132 SMs). One round checks blockDim.x tiles,
    // a thread each, before the decode has finished: reduce_indptr and reduce_final_map are the
    // plan's (reduce_split_tile says why that is safe). A CTA without split tiles never waits.
    const int64_t lo = blockIdx.x * T / G, hi = (blockIdx.x + 1) * T / G;
    for (int64_t first = lo; first < hi; first += blockDim.x) {
        if (tid == 0) s_n = 0;
        __syncthreads();
        const int64_t t = first + tid;
        if (t < hi) {
            const int f0 = p.reduce_indptr[t], f1 = p.reduce_indptr[t + 1];
            const int qs = p.reduce_final_map[2 * t], qe = p.reduce_final_map[2 * t + 1];
            if (f1 > f0) s_tile[atomicAdd(&s_n, 1)] = make_int4(f0, f1, qs, qe);
        }
        __syncthreads();
        const int n = s_n;
        for (int j = 0; j < n; ++j) reduce_split_tile<false>(p, s_tile[j], warp, W, lane);
        __syncthreads();  // s_n and s_tile are rewritten by the next round
    }
    // Every thread waits for the decode grid before this grid can complete (it returns at once
    // after the waits above): a kernel that waits on this grid, e.g. a programmatic launch after
    // mla_decode_fwd, then also finds the decode's own out / lse rows complete and visible, even
    // in a plan that splits no tile, where no thread above waited.
    wait_for_decode();
}

// mla_reduce_slim_bf16: the few-long-tiles reducer that fits beside a 16-row decode CTA.
#include "reduce/reduce_slim.cuh"
