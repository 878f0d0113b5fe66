// hbm_read.cu - read-only bandwidth kernels for sm_90a, the ceiling against which issue 8's
// memory-bound rows are measured (benchmarks/hbm_read.py launches them; docs/performance.md).
// Nothing here is part of libmla: no table names these kernels.
//
//   hbm_read_ldg   grid-stride 16-byte loads (ld.global.nc, no L1 allocation), eight
//                  independent loads in flight per thread, folded into one XOR per thread.
//   hbm_read_bulk  one CTA per SM streams its contiguous share of `chunk`-byte pieces (a
//                  decode tile is one 73,728-byte page of 64 bf16 tokens) through a ring of
//                  `slots` shared-memory slots, one cp.async.bulk per piece completing on the
//                  slot's mbarrier, as the decode kernels' rings do, with no MMA work.
// Both write `sink` only if the folded value equals a constant no real data is expected to
// give, so the loads cannot be dropped and nothing is written in practice.
#include <stdint.h>

namespace {

__device__ __forceinline__ uint4 ldg_nc(const uint4* p) {
    uint4 v;
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
    return v;
}

__device__ __forceinline__ uint32_t smem_u32(const void* p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

constexpr uint32_t kNever = 0x9E3779B9u;

}  // namespace

extern "C" __global__ void __launch_bounds__(256) hbm_read_ldg(const uint4* __restrict__ src, uint64_t n16,
                                                             uint32_t* sink) {
    const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
    uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    uint32_t acc = 0;
    for (; i + 7 * stride < n16; i += 8 * stride) {
        uint4 v[8];
#pragma unroll
        for (int k = 0; k < 8; ++k) v[k] = ldg_nc(src + i + k * stride);
#pragma unroll
        for (int k = 0; k < 8; ++k) acc ^= v[k].x ^ v[k].y ^ v[k].z ^ v[k].w;
    }
    for (; i < n16; i += stride) {
        const uint4 v = ldg_nc(src + i);
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == kNever) sink[0] = acc;
}

// Dynamic shared memory: slots * chunk bytes (chunk a multiple of 16, slots <= 8).
extern "C" __global__ void __launch_bounds__(32) hbm_read_bulk(const char* __restrict__ src, uint64_t n_chunks,
                                                             uint32_t chunk, uint32_t slots, uint32_t* sink) {
    extern __shared__ __align__(128) char ring[];
    __shared__ __align__(8) uint64_t bar[8];
    if (threadIdx.x != 0 || slots < 1 || slots > 8) return;
    const uint64_t per = (n_chunks + gridDim.x - 1) / gridDim.x;
    const uint64_t c0 = uint64_t(blockIdx.x) * per, c1 = c0 + per < n_chunks ? c0 + per : n_chunks;
    for (uint32_t s = 0; s < slots; ++s)
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(smem_u32(&bar[s])) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    auto issue = [&](uint64_t c, uint32_t s) {
        const uint32_t b = smem_u32(&bar[s]);
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(b), "r"(chunk) : "memory");
        asm volatile(
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                smem_u32(ring + uint64_t(s) * chunk)),
            "l"(src + c * chunk), "r"(chunk), "r"(b)
            : "memory");
    };
    for (uint32_t s = 0; s < slots && c0 + s < c1; ++s) issue(c0 + s, s);
    uint32_t phase = 0, acc = 0;
    for (uint64_t c = c0; c < c1; ++c) {
        const uint32_t s = uint32_t((c - c0) % slots);
        const uint32_t b = smem_u32(&bar[s]), par = (phase >> s) & 1;
        asm volatile(
            "{\n.reg .pred done;\nW_%=:\n"
            "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
            "@!done bra W_%=;\n}\n" ::"r"(b), "r"(par)
            : "memory");
        phase ^= 1u << s;
        acc ^= *reinterpret_cast<const uint32_t*>(ring + uint64_t(s) * chunk);
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");  // the read before the refill
        if (c + slots < c1) issue(c + slots, s);
    }
    if (acc == kNever) sink[0] = acc;
}
