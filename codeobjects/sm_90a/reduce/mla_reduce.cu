// mla_reduce.cu - sm_90a split-KV reducer (mla_reduce_bf16): merges the fp32 partial rows of
// every split qo tile into bf16 (or fp32, out_fp32) out and fp32 LSE (docs/plan-layout.md "Reduce").
//
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
#include <cuda_bf16.h>
#include <stdint.h>

#include "reduce/reduce_params.h"

namespace {

constexpr int kDV = 512;
constexpr int kSlots = 4;     // units per CTA and loop step
constexpr int kMaxSplit = 4;  // warps per unit at most (512 threads)

__device__ __forceinline__ bool finite_lse(float x) { return x > -INFINITY && x < INFINITY; }

}  // namespace

extern "C" __global__ void __launch_bounds__(512) mla_reduce_bf16(const __grid_constant__ mla_reduce_params p) {
    __shared__ float4 red[kSlots][kMaxSplit - 1][32];  // partial sums of splits 1..S-1
    const int tile = blockIdx.x;
    if (tile >= p.num_tiles) return;
    const int f0 = p.reduce_indptr[tile], f1 = p.reduce_indptr[tile + 1];
    if (f1 <= f0) return;  // unsplit tile: the decode kernel wrote it
    const int qs = p.reduce_final_map[2 * tile], qe = p.reduce_final_map[2 * tile + 1];
    const int Hk = p.kernel_heads, r = p.qk_batch_ratio;
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
        if (slot < kSlots && u < units) {
            const int pr = u >> 2;
            const int i = pr / Hk;
            h = pr % Hk;
            const int f = qs + i;  // folded row
            // request b: qo_indptr[b] * r <= f < qo_indptr[b + 1] * r
            int lo = 0, hi = p.batch_size - 1;
            while (lo < hi) {
                const int mid = (lo + hi + 1) >> 1;
                if ((int64_t)p.qo_indptr[mid] * r <= f) lo = mid; else hi = mid - 1;
            }
            b = lo;
            const int qo_b = p.qo_indptr[b], L = p.qo_indptr[b + 1] - qo_b;
            if (L > 0) {
                const int rel = f - qo_b * r;
                g = rel / L;
                t = rel % L;
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
                lse = (m > -INFINITY && sum > 0.f) ? m + logf(sum) : -INFINITY;

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
                        for (int u4 = 0; u4 < 8; ++u4) {
                            acc.x += wgt[u4] * v[u4].x;
                            acc.y += wgt[u4] * v[u4].y;
                            acc.z += wgt[u4] * v[u4].z;
                            acc.w += wgt[u4] * v[u4].w;
                        }
                    }
                    for (; k < f1; k += S) {
                        const int64_t prow = ((int64_t)p.reduce_partial_map[k] + i) * Hk + h;
                        const float x = p.partial_lse[prow];
                        if (!finite_lse(x)) continue;
                        const float wgt = __expf(x - lse);
                        const float4 o = *reinterpret_cast<const float4*>(p.partial_out + prow * kDV + col);
                        acc.x += wgt * o.x;
                        acc.y += wgt * o.y;
                        acc.z += wgt * o.z;
                        acc.w += wgt * o.w;
                    }
                }
            }
        }
        if (S > 1) {  // the slot's splits meet in shared memory; split 0 adds them in order
            if (split > 0 && slot < kSlots) red[slot][split - 1][lane] = acc;
            __syncthreads();
            if (split == 0 && slot < kSlots)
                for (int s2 = 1; s2 < S; ++s2) {
                    const float4 o = red[slot][s2 - 1][lane];
                    acc.x += o.x;
                    acc.y += o.y;
                    acc.z += o.z;
                    acc.w += o.w;
                }
            __syncthreads();
        }
        if (split != 0 || slot >= kSlots || u >= units) continue;
        const int qo_b = p.qo_indptr[b], L = p.qo_indptr[b + 1] - qo_b;
        if (L <= 0) continue;
        const int64_t tok = qo_b + t;
        const int head = g * Hk + h;
        const int64_t off = tok * p.out_stride_token + (int64_t)head * p.out_stride_head + quarter * 128 + 4 * lane;
        if (p.out_fp32) {
            *reinterpret_cast<float4*>(static_cast<float*>(p.out) + off) = acc;
        } else {
            __nv_bfloat162 lo2 = __floats2bfloat162_rn(acc.x, acc.y);
            __nv_bfloat162 hi2 = __floats2bfloat162_rn(acc.z, acc.w);
            uint2 pk;
            pk.x = *reinterpret_cast<uint32_t*>(&lo2);
            pk.y = *reinterpret_cast<uint32_t*>(&hi2);
            *reinterpret_cast<uint2*>(static_cast<__nv_bfloat16*>(p.out) + off) = pk;
        }
        if (p.lse && lane == 0 && quarter == 0) p.lse[tok * p.num_heads + head] = lse;
    }
}
