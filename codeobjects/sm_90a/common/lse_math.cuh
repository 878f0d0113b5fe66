// lse_math.cuh - the device arithmetic the sm_90a split-KV reducers (reduce/mla_reduce.cu) and the
// context-parallel merge (merge/merge.cu) share: which partial LSEs count, weighted float4 sums,
// and packing four fp32 values into four bf16 for one 8-byte store.
#pragma once
#include <cuda_bf16.h>
#include <stdint.h>

namespace mla_lse {

// A partial with a non-finite LSE (-inf: no key; +inf or NaN: a foreign "empty" marker) gets
// weight 0 and its O is never added.
__device__ __forceinline__ bool finite_lse(float x) { return x > -INFINITY && x < INFINITY; }

// The combined LSE m + ln s of partials whose largest finite LSE is m and whose weights
// exp(lse_k - m) sum to s; -inf when no partial counts (m = -inf or s = 0).
__device__ __forceinline__ float combined_lse(float m, float s) { return (m > -INFINITY && s > 0.f) ? m + logf(s) : -INFINITY; }

// a += w * o, per component.
__device__ __forceinline__ void add4(float4& a, float w, const float4& o) {
    a.x += w * o.x;
    a.y += w * o.y;
    a.z += w * o.z;
    a.w += w * o.w;
}

// (x, y, z, w) rounded to bf16 (nearest even), packed low to high.
__device__ __forceinline__ uint2 pack_bf16x4(const float4& v) {
    __nv_bfloat162 lo2 = __floats2bfloat162_rn(v.x, v.y);
    __nv_bfloat162 hi2 = __floats2bfloat162_rn(v.z, v.w);
    uint2 pk;
    pk.x = *reinterpret_cast<uint32_t*>(&lo2);
    pk.y = *reinterpret_cast<uint32_t*>(&hi2);
    return pk;
}

}  // namespace mla_lse
