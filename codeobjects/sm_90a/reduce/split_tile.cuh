// split_tile.cuh - the reduction of one split qo tile (docs/plan-layout.md "Reduce"), shared by the
// whole-tile reducer (mla_reduce_tiles_bf16, reduce/mla_reduce.cu) and the fused reduction at the
// end of the 16- and 32-row bf16 decode kernels (decode/fused_reduce.cuh). What is CTA-wide (which
// tiles, when their partials are complete) is the caller's; this file reduces one tile with the
// calling CTA's W warps. kFused selects how the partials are read:
//   false (the reducer kernel): after griddepcontrol.wait (the decode grid has finished), partial O
//     through the read-only path (__ldg);
//   true (the decode kernel's tail): no wait (the caller's tile counter said that every fragment
//     is written), and through L2 only (ld.global.cg): the SM's L1 may still hold a line of
//     partial LSEs it read for another tile before this tile's fragments wrote their part of it.
#pragma once
#include <cuda_bf16.h>
#include <stdint.h>

#include "common/lse_math.cuh"
#include "reduce/reduce_params.h"

// Measurement hooks of mla_reduce_tiles_bf16 (never set in the shipped build; variants are built
// with scripts/variant_bench.sh build NAME codeobjects/sm_90a/reduce/mla_reduce.cu -DHOOK=1, to
// place its time by taking differences, docs/performance.md session 12):
// -DMLA_RTILES_NO_OUT=1 reads no partial_out (the weights and lse* as usual, o = 0);
// -DMLA_RTILES_NO_STORE=1 stores nothing (out and lse are left as they were; the sums are still
// computed: the store stays behind a condition that never holds, batch_size < 0).
#ifndef MLA_RTILES_NO_OUT
#define MLA_RTILES_NO_OUT 0
#endif
#ifndef MLA_RTILES_NO_STORE
#define MLA_RTILES_NO_STORE 0
#endif

namespace mla_split {

constexpr int kDV = 512;

using mla_lse::add4;
using mla_lse::finite_lse;

// Launched as a programmatic dependent launch (mla_reduce.csv launch_pdl), the reducer's grid is
// launched as the decode kernel's CTAs exit (their implicit trigger; the 16- and 32-row bf16 kernels
// trigger once each CTA's last tile has landed, MLA_WG_LATE_TRIG since session 25), so its CTAs
// may start while the last decode CTAs still write partials: wait until that grid has finished
// and its writes are visible (returns at once after a plain launch). A trigger at the start of
// the decode kernels measured ~2 µs slower at b = 1 (docs/performance.md, session 5).
__device__ __forceinline__ void wait_for_decode() { asm volatile("griddepcontrol.wait;" ::: "memory"); }

// A partial LSE / four partial O columns, read as kFused says (file comment).
template <bool kFused>
__device__ __forceinline__ float load_lse(const float* a) {
    return kFused ? __ldcg(a) : *a;
}
template <bool kFused>
__device__ __forceinline__ float4 load_o(const float* a) {
    return kFused ? __ldcg(reinterpret_cast<const float4*>(a)) : __ldg(reinterpret_cast<const float4*>(a));
}

// Stores lane's 4 columns (quarter * 128 + 4 lane) of out row (token tok, head g Hk + h), bf16
// or fp32, and the row's lse from lane 0 of quarter 0.
__device__ __forceinline__ void store_token_row(const mla_reduce_params& p, int64_t tok, int g, int h, int quarter,
                                                int lane, float4 acc, float lse) {
    const int head = g * p.kernel_heads + h;
    const int64_t off = tok * p.out_stride_token + (int64_t)head * p.out_stride_head + quarter * 128 + 4 * lane;
    if (p.out_fp32) {
        *reinterpret_cast<float4*>(static_cast<float*>(p.out) + off) = acc;
    } else {
        *reinterpret_cast<uint2*>(static_cast<__nv_bfloat16*>(p.out) + off) = mla_lse::pack_bf16x4(acc);
    }
    if (p.lse && lane == 0 && quarter == 0) p.lse[tok * p.num_heads + head] = lse;
}

// Request b of a split tile whose first folded row is qs (docs/plan-layout.md: the last b with
// qo_indptr[b] * r <= qs; a tile's rows lie in one pseudo-request) and its bounds qo_indptr[b],
// qo_indptr[b + 1], by a 128-way search: each round the warp's lanes load 128 evenly spaced
// candidates, 4 each, so b <= 128 takes one round of loads, b <= 16384 two (a binary search takes
// log2 b dependent loads, and one more for the bounds); the last round also loads the bound after
// its last candidate. Every lane returns the same values.
struct Request {
    int b, qo_begin, qo_end;
};

// Stores row i of a split tile, head h: the lane's 4 quarters acc[0..3] and lse (store_token_row).
// The tile's rows lie in request req (L = its query tokens) at folded offsets rel0 + i
// (docs/plan-layout.md): row i is token t of head group g; a row outside the request is not
// stored. `store` false: nothing.
__device__ __forceinline__ void store_tile_row(const mla_reduce_params& p, const Request& req, int L, int64_t rel0,
                                               int i, int h, int lane, const float4 (&acc)[4], float lse,
                                               bool store = true) {
    const int64_t rel = rel0 + i;
    if (L > 0 && rel >= 0 && rel < (int64_t)p.qk_batch_ratio * L && store) {
        const int g = int(rel / L), t = int(rel % L);
#pragma unroll
        for (int q = 0; q < 4; ++q) store_token_row(p, req.qo_begin + t, g, h, q, lane, acc[q], lse);
    }
}
__device__ __forceinline__ int pick4(const int (&v)[4], int u) {  // v[u] without a local-memory index
    return u == 0 ? v[0] : u == 1 ? v[1] : u == 2 ? v[2] : v[3];
}
__device__ __forceinline__ Request request_of(const mla_reduce_params& p, int qs, int lane) {
    const int64_t r = p.qk_batch_ratio;
    int lo = 0, n = p.batch_size;  // candidates lo .. lo + n - 1
    for (;;) {
        const int step = (n + 127) / 128;
        int v[4];
        int pass = 0;  // candidates c with qo_indptr[lo + c step] r <= qs: a prefix (qo_indptr rises)
#pragma unroll
        for (int u = 0; u < 4; ++u) {
            const int c = 4 * lane + u;
            const bool load = step == 1 ? c <= n : c * step < n;  // lo + n <= batch_size
            v[u] = load ? p.qo_indptr[lo + c * step] : 0;
        }
#pragma unroll
        for (int u = 0; u < 4; ++u) {
            const int c = 4 * lane + u;
            pass += __popc(__ballot_sync(0xffffffffu, c * step < n && (int64_t)v[u] * r <= qs));
        }
        const int j = max(pass - 1, 0);
        if (step > 1) {
            lo += j * step;
            n = min(step, n - j * step);
            continue;
        }
        Request q;
        q.b = lo + j;
        q.qo_begin = __shfl_sync(0xffffffffu, pick4(v, j & 3), j >> 2);
        const int j1 = j + 1;  // <= n: loaded, unless it is candidate 128
        q.qo_end = __shfl_sync(0xffffffffu, pick4(v, j1 & 3), (j1 >> 2) & 31);
        if (j1 > 127) q.qo_end = p.qo_indptr[q.b + 1];
        return q;
    }
}

// Fragment `lane` (< F) of a split tile, for row i and head h: its partial row and lse.
template <bool kFused>
__device__ __forceinline__ void fragment_lse(const mla_reduce_params& p, int f0, int F, int i, int h, int lane,
                                             int64_t& prow, float& x) {
    prow = 0;
    x = -INFINITY;
    if (lane < F) {
        prow = ((int64_t)p.reduce_partial_map[f0 + lane] + i) * p.kernel_heads + h;
        x = load_lse<kFused>(p.partial_lse + prow);
    }
}

// Reduces split tile (f0, f1, qs, qe) with every warp of the CTA: warp w takes the (row, head)
// pairs w, w + W, ...; lane k holds fragment k of each chunk of 32 (its partial row and lse), and
// adds the fragments' o_k in KV order, 4 of them in flight, over its 16 columns (4 + 128 q + 4
// lane, q = 0..3). lse* and the weights are mla_reduce_bf16's arithmetic: m the largest finite
// lse_k, s = sum exp(lse_k - m) (lane k folding k, k + 32, ...; a shuffle tree), lse* = m + log s.
// The first 32 fragments' reduce_partial_map entries and the request search in qo_indptr are read
// before wait_for_decode(): the decode kernel does not write the plan, and the plan was complete
// before it ran (every decode CTA waits for the launches before it, and triggers its dependents
// only after that wait: at its exit, or once its last tile has landed with MLA_WG_LATE_TRIG, so
// this grid starts only after every decode CTA has passed its wait); the partials are read after
// it. A decode kernel that triggered before its own wait (griddepcontrol.launch_dependents ahead
// of griddepcontrol.wait) would break this. kFused: the caller knows the tile's request (a fragment's work names it)
// and passes it as `known`, so no search; otherwise `known` is not read.
template <bool kFused>
__device__ __forceinline__ void reduce_split_tile(const mla_reduce_params& p, int4 tile, int warp, int W, int lane,
                                                  Request known = Request{}) {
    constexpr int kU = 4;  // fragments in flight per lane
    const int f0 = tile.x, F = tile.y - tile.x, qs = tile.z;
    const int Hk = p.kernel_heads, pairs = (tile.w - tile.z) * Hk;
    if (warp >= pairs) return;
    const int pm0 = lane < F ? p.reduce_partial_map[f0 + lane] : 0;  // fragment `lane`'s first partial row
    const Request req = kFused ? known : request_of(p, qs, lane);
    const int L = req.qo_end - req.qo_begin;
    const int64_t rel0 = qs - (int64_t)req.qo_begin * p.qk_batch_ratio;  // folded offset of row 0 in request b
    if (!kFused) wait_for_decode();
    // each later pair's lse loads go out before the previous pair's o_k are summed
    int64_t prow = ((int64_t)pm0 + warp / Hk) * Hk + warp % Hk;
    float x = lane < F ? load_lse<kFused>(p.partial_lse + prow) : -INFINITY;
    if (lane >= F) prow = 0;
    for (int pr = warp; pr < pairs; pr += W) {
        const int i = pr / Hk, h = pr % Hk;
        int64_t next_prow = 0;
        float next_x = -INFINITY;
        if (pr + W < pairs) fragment_lse<kFused>(p, f0, F, (pr + W) / Hk, (pr + W) % Hk, lane, next_prow, next_x);
        // lse* over every fragment
        float m = finite_lse(x) ? x : -INFINITY;
        for (int k = f0 + 32 + lane; k < f0 + F; k += 32) {
            const float y = load_lse<kFused>(p.partial_lse + ((int64_t)p.reduce_partial_map[k] + i) * Hk + h);
            if (finite_lse(y)) m = fmaxf(m, y);
        }
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
        float s = 0.f;
        if (m > -INFINITY) {
            if (finite_lse(x)) s = __expf(x - m);
            for (int k = f0 + 32 + lane; k < f0 + F; k += 32) {
                const float y = load_lse<kFused>(p.partial_lse + ((int64_t)p.reduce_partial_map[k] + i) * Hk + h);
                if (finite_lse(y)) s += __expf(y - m);
            }
        }
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
        const float lse = mla_lse::combined_lse(m, s);
        // o = sum_k exp(lse_k - lse*) o_k, chunk by chunk of 32 fragments
        float4 acc[4];
#pragma unroll
        for (int q = 0; q < 4; ++q) acc[q] = make_float4(0.f, 0.f, 0.f, 0.f);
        if (lse > -INFINITY)
            for (int c = 0; c < F; c += 32) {
                int64_t rk = prow;
                float xk = x;
                if (c > 0) fragment_lse<kFused>(p, f0 + c, F - c, i, h, lane, rk, xk);
                const float wk = finite_lse(xk) ? __expf(xk - lse) : 0.f;  // 0 for lanes past the chunk
                const int n = min(32, F - c);
                for (int k = 0; k < n; k += kU) {
                    float w[kU];
                    float4 v[kU][4];
#pragma unroll
                    for (int u = 0; u < kU; ++u) {
                        const int src = min(k + u, 31);
                        const float wu = __shfl_sync(0xffffffffu, wk, src);
                        const int64_t ru = __shfl_sync(0xffffffffu, rk, src);
                        w[u] = k + u < n ? wu : 0.f;
#pragma unroll
                        for (int q = 0; q < 4; ++q) {
                            v[u][q] = make_float4(0.f, 0.f, 0.f, 0.f);
                            if (w[u] != 0.f && !MLA_RTILES_NO_OUT)
                                v[u][q] = load_o<kFused>(p.partial_out + ru * kDV + q * 128 + 4 * lane);
                        }
                    }
#pragma unroll
                    for (int u = 0; u < kU; ++u)
#pragma unroll
                        for (int q = 0; q < 4; ++q) add4(acc[q], w[u], v[u][q]);
                }
            }
        store_tile_row(p, req, L, rel0, i, h, lane, acc, lse, !MLA_RTILES_NO_STORE || p.batch_size < 0);
        prow = next_prow;
        x = next_x;
    }
}

}  // namespace mla_split
