// merge.cu - sm_90a context-parallel LSE merge (mla_merge_bf16): W partial (O, LSE) pairs of
// the same query rows, one per rank of a round-robin context-parallel decode, become the final
// bf16 O and fp32 LSE (mla_c_api.h, mla_merge_attn_states; docs/context-parallel.md).
//
// One warp per (row, head) unit. For unit u: lse* = m + log sum_k exp(lse_k - m), m the largest
// finite lse_k; o = sum_k exp(lse_k - lse*) o_k. A partial whose LSE is not finite (-inf: the
// rank saw no key; +inf or NaN: a foreign reducer's "empty" marker) gets weight 0 and its o_k is
// never multiplied or added (a branch, not a zero weight), so 0 * NaN cannot occur; if no LSE is
// finite: o = 0, lse* = -inf.
// Lane l owns columns c * 128 + 4 l + [0, 4) for c = 0..3 (coalesced 16-byte fp32 or 8-byte
// bf16 loads, 8-byte bf16 stores).
//
// Latency: the kernel runs right after the all-gather on a few dozen units, so its time is its
// chain of dependent loads. For W <= 32 (one LSE per lane) the LSEs and the first kChunk ranks'
// o_k are loaded in one round: o_k is loaded before its weight is known and used only if lse_k
// is finite (the load stays inside the caller's [W] partial blocks). Launched as a programmatic
// dependent launch (mla_merge.csv launch_pdl 1), the grid may be launched before the kernel ahead
// of it in the same stream (the all-gather) has completed — as its CTAs exit, or earlier if it
// triggers its dependents; NCCL's kernels do not, so what overlaps is the launch latency:
// griddepcontrol.wait holds every load until that grid has completed and its writes are visible
// (a no-op after a plain launch).
#include <cuda_bf16.h>
#include <stdint.h>

#include "common/lse_math.cuh"
#include "merge/merge_params.h"

namespace {

using mla_lse::add4;
using mla_lse::finite_lse;

constexpr int kDV = 512;
constexpr int kChunk = 2;  // ranks whose o_k is loaded together with the LSEs (W = 2: all)

__device__ __forceinline__ float4 load4(const mla_merge_params& p, int64_t elem) {
    if (p.partial_bf16) {
        const uint2 raw = __ldg(reinterpret_cast<const uint2*>(
            static_cast<const __nv_bfloat16*>(p.partial_out) + elem));
        const float2 lo = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&raw.x));
        const float2 hi = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&raw.y));
        return make_float4(lo.x, lo.y, hi.x, hi.y);
    }
    return __ldg(reinterpret_cast<const float4*>(static_cast<const float*>(p.partial_out) + elem));
}

__device__ __forceinline__ void add_weighted(float4 (&acc)[4], float wgt, const float4 (&v)[4]) {
#pragma unroll
    for (int c = 0; c < 4; ++c) add4(acc[c], wgt, v[c]);
}

}  // namespace

extern "C" __global__ void __launch_bounds__(MLA_MERGE_THREADS)
    mla_merge_bf16(const __grid_constant__ mla_merge_params p) {
    asm volatile("griddepcontrol.wait;" ::: "memory");
    const int lane = threadIdx.x & 31;
    const int64_t u = int64_t(blockIdx.x) * (blockDim.x >> 5) + (threadIdx.x >> 5);
    if (u >= p.num_units) return;
    const int W = p.world_size;
    const int64_t col = u * kDV + 4 * lane;

    float4 acc[4];
#pragma unroll
    for (int c = 0; c < 4; ++c) acc[c] = make_float4(0.f, 0.f, 0.f, 0.f);
    float lse;
    if (W <= 32) {
        // one round: lane k < W loads lse_k; every lane loads its columns of o_0 .. o_{kChunk-1}
        const float xl = lane < W ? __ldg(p.partial_lse + int64_t(lane) * p.lse_rank_stride + u) : -INFINITY;
        float4 v[kChunk][4];
#pragma unroll
        for (int k = 0; k < kChunk; ++k)
            if (k < W)
#pragma unroll
                for (int c = 0; c < 4; ++c) v[k][c] = load4(p, int64_t(k) * p.out_rank_stride + col + c * 128);
        const bool fin = finite_lse(xl);
        float m = fin ? xl : -INFINITY;
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
        float sum = (fin && m > -INFINITY) ? expf(xl - m) : 0.f;
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
        lse = mla_lse::combined_lse(m, sum);
        const float wl = (fin && lse > -INFINITY) ? expf(xl - lse) : 0.f;  // lane k: weight of rank k
        const unsigned live = __ballot_sync(0xffffffffu, fin && lse > -INFINITY);
#pragma unroll
        for (int k = 0; k < kChunk; ++k) {
            const float wgt = __shfl_sync(0xffffffffu, wl, k);
            if (k < W && ((live >> k) & 1u)) add_weighted(acc, wgt, v[k]);
        }
        for (int k = kChunk; k < W; ++k) {  // W > kChunk: one rank per round
            const float wgt = __shfl_sync(0xffffffffu, wl, k);
            if (!((live >> k) & 1u)) continue;  // weight 0: o_k is never read
            float4 w4[4];
#pragma unroll
            for (int c = 0; c < 4; ++c) w4[c] = load4(p, int64_t(k) * p.out_rank_stride + col + c * 128);
            add_weighted(acc, wgt, w4);
        }
    } else {
        float m = -INFINITY;
        for (int k = lane; k < W; k += 32) {
            const float x = __ldg(p.partial_lse + int64_t(k) * p.lse_rank_stride + u);
            if (finite_lse(x)) m = fmaxf(m, x);
        }
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
        float sum = 0.f;
        if (m > -INFINITY)
            for (int k = lane; k < W; k += 32) {
                const float x = __ldg(p.partial_lse + int64_t(k) * p.lse_rank_stride + u);
                if (finite_lse(x)) sum += expf(x - m);
            }
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
        lse = mla_lse::combined_lse(m, sum);
        if (lse > -INFINITY)
            for (int k = 0; k < W; ++k) {
                const float x = __ldg(p.partial_lse + int64_t(k) * p.lse_rank_stride + u);
                if (!finite_lse(x)) continue;  // weight 0: o_k is never read
                float4 w4[4];
#pragma unroll
                for (int c = 0; c < 4; ++c) w4[c] = load4(p, int64_t(k) * p.out_rank_stride + col + c * 128);
                add_weighted(acc, expf(x - lse), w4);
            }
    }
    __nv_bfloat16* dst = static_cast<__nv_bfloat16*>(p.out) + col;
#pragma unroll
    for (int c = 0; c < 4; ++c) *reinterpret_cast<uint2*>(dst + c * 128) = mla_lse::pack_bf16x4(acc[c]);
    if (p.lse && lane == 0) p.lse[u] = lse;
}
