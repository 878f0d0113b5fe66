// mma_ceiling.cu - the tensor-core ceiling of the 64-row qm bodies for issue 8's 128-head rows
// (docs/performance.md, session 24; benchmarks/mma_ceiling.py launches these kernels). Each kernel
// issues the MMAs of one tile step of a shipped body, `steps` times per CTA, through the same
// wrappers and descriptors on the same shared-memory layout. It does no KV loads, no softmax and
// no epilogue: what it measures is the tensor pipe for that instruction mix at the clock the GPU
// holds under it. Nothing here is part of libmla and no table names these kernels.
//
//   mma_qm_bf16   decode_qm_tma.cuh's tile step (bf16 Q and KV, 64 query rows):
//                 S = Q . K^T       36 x wgmma.m64n64k16 (A = Q, B = K, both in shared memory)
//                 O_w += P . V_w    4 x wgmma.m64n256k16 per warpgroup (A = P from registers)
//                 Per tile: 64 x 64 x 576 + 64 x 64 x 512 MACs = 2176 cycles at 2048 bf16 MAC a
//                 cycle per SM (989 TFLOP/s dense at 1.83 GHz on 132 SMs).
//   mma_qm_fp8    decode_qm8.cuh's tile step (fp8 Q and KV; O^T's 16 MMAs in one commit group,
//                 where the shipped body commits one group a k-step and waits between them):
//                 S = Q . K^T       18 x wgmma.m64n64k32.e4m3 in two accumulator chains
//                 O^T_w += V^T P^T  16 x wgmma.m64n64k16.f16 per warpgroup (A = V^T fragments
//                                   from registers: built from the fp8 rows in the shipped body,
//                                   fixed here; B = P^T in shared memory)
//                 Per tile: 576 (fp8, 4096 MAC a cycle) + 1024 (f16) = 1600 cycles.
//
// `mode` bits: 1 the S MMAs (warpgroup 0's), 2 the P.V / O^T MMAs (both warpgroups), 4 the shipped
// bodies' order of dependences: warpgroup 0 waits for S(t) before a CTA barrier that warpgroup 1's
// P.V(t) waits behind, and each warpgroup waits for its P.V before the next tile (without 4, each
// warpgroup keeps its commit groups in flight, waiting only for the older one: the free-running
// rate), 8 S on both warpgroups, tile t's on warpgroup t % 2 (the seesaw's split of S; bf16 only).
// Shared memory is filled from `fill` (bf16 or e4m3 values: the tensor pipe's power depends on
// the operands). cyc[blockIdx.x] gets thread 0's clock64 cycles over the steps (warpgroup 0's
// loop: the one with the S MMAs, never shorter than warpgroup 1's); sink is written
// only if the accumulators sum to a value no real data gives (so nothing is dropped).
#include "decode/decode_qm8.cuh"

namespace {

using namespace mla_wg;

constexpr uint32_t kModeS = 1, kModePV = 2, kModeChain = 4, kModeSplitS = 8;
constexpr int kSmemBf16 = 64 * 1152 + 2 * kTile;                  // Q, a ring of 2 tiles
constexpr int kSmemFp8 = 5 * kBlk + mla_q8::kSlots * mla_q8::kTile8;  // Q, a ring of 4 fp8 tiles
constexpr float kNeverSum = 1.2345e30f;

// every thread: `bytes` of fill into shared memory, visible to the MMAs (the async proxy)
__device__ __forceinline__ void fill_smem(char* smem, const uint4* fill, int bytes) {
    for (int i = threadIdx.x; i < bytes / 16; i += blockDim.x) reinterpret_cast<uint4*>(smem)[i] = fill[i];
    fence_proxy_async();
    __syncthreads();
}

// thread 0: the cycles of the step loop; any thread whose sum is the never-value: the sink
template <int R>
__device__ __forceinline__ void finish(const float (&acc)[R], long long t0, unsigned long long* cyc, float* sink) {
    const long long t1 = clock64();
    float sum = 0.0f;
#pragma unroll
    for (int e = 0; e < R; ++e) sum += acc[e];
    if (sum == kNeverSum) sink[0] = sum;
    __syncthreads();
    if (threadIdx.x == 0) cyc[blockIdx.x] = static_cast<unsigned long long>(t1 - t0);
}

}  // namespace

// Dynamic shared memory: kSmemBf16 = 221,184 bytes. 256 threads, one CTA per SM.
extern "C" __global__ void __launch_bounds__(256, 1) mma_qm_bf16(const uint4* fill, uint32_t steps, uint32_t mode,
                                                                 unsigned long long* cyc, float* sink) {
    extern __shared__ __align__(1024) char smem[];
    fill_smem(smem, fill, kSmemBf16);
    const int wg = threadIdx.x >> 7;
    const uint32_t sbase = smem_u32(smem);
    const uint64_t dQ = sw128_desc(sbase, 16, 1024);
    float sacc[32], o[128];
    uint32_t a[4][4];  // P: bf16 pairs from the fill
    const uint32_t* fw = reinterpret_cast<const uint32_t*>(fill) + 16 * (threadIdx.x & 127);
#pragma unroll
    for (int kb = 0; kb < 4; ++kb)
#pragma unroll
        for (int i = 0; i < 4; ++i) a[kb][i] = fw[4 * kb + i];
#pragma unroll
    for (int e = 0; e < 128; ++e) o[e] = 0.0f;
#pragma unroll
    for (int e = 0; e < 32; ++e) sacc[e] = 0.0f;
    __syncthreads();
    const long long t0 = clock64();
    for (uint32_t t = 0; t < steps; ++t) {
        const uint32_t slot = sbase + 64 * 1152 + (t & 1) * kTile;
        const bool s_here = (mode & kModeSplitS) ? int(t & 1) == wg : wg == 0;
        if ((mode & kModeS) && s_here) {
            qm_s_mma(sacc, dQ, sw128_desc(slot, 16, 1024));
            if (mode & kModeChain) {
                wg_wait0();
                reg_fence(sacc);
            }
        }
        if (mode & kModeChain) bar_sync(1, 256);  // P(t) "ready": warpgroup 1's P.V waits for S(t)
        if (mode & kModePV) qm_pv_issue(o, a, sw128_desc(slot + wg * 4 * kBlk, kVLbo, kVSbo));
        if (mode & kModeChain) wg_wait0();
        else wg_wait1();
    }
    wg_wait0();
    reg_fence(o);
    reg_fence(sacc);
    float acc[2] = {o[0] + o[127], sacc[0] + sacc[31]};
    finish(acc, t0, cyc, sink);
}

// Dynamic shared memory: kSmemFp8 = 204,800 bytes. 256 threads, one CTA per SM.
extern "C" __global__ void __launch_bounds__(256, 1) mma_qm_fp8(const uint4* fill, uint32_t steps, uint32_t mode,
                                                                unsigned long long* cyc, float* sink) {
    using namespace mla_q8;
    extern __shared__ __align__(1024) char smem[];
    fill_smem(smem, fill, kSmemFp8);
    const int wg = threadIdx.x >> 7;
    const uint32_t sbase = smem_u32(smem);
    const uint64_t dQ = sw128_desc(sbase, 16, 1024);
    float sa[MLA_QM8_SCHAINS][32], o[4][32];
    uint32_t va[4][4];  // V^T fragments: f16 pairs (the fill's e4m3 bytes masked into finite f16 below 1)
    const uint32_t* fw = reinterpret_cast<const uint32_t*>(fill) + 16 * (threadIdx.x & 127);
#pragma unroll
    for (int mb = 0; mb < 4; ++mb)
#pragma unroll
        for (int i = 0; i < 4; ++i) va[mb][i] = fw[4 * mb + i] & 0x3bff3bffu;  // |x| < 1 as f16
#pragma unroll
    for (int mb = 0; mb < 4; ++mb)
#pragma unroll
        for (int e = 0; e < 32; ++e) o[mb][e] = 0.0f;
#pragma unroll
    for (int c = 0; c < MLA_QM8_SCHAINS; ++c)
#pragma unroll
        for (int e = 0; e < 32; ++e) sa[c][e] = 0.0f;
    __syncthreads();
    const long long t0 = clock64();
    for (uint32_t t = 0; t < steps; ++t) {
        const uint32_t slot = sbase + 5 * kBlk + (t % kSlots) * kTile8;
        if ((mode & kModeS) && wg == 0) {
            s_issue(sa, dQ, sw128_desc(slot, 16, 1024));
            if (mode & kModeChain) {
                wg_wait0();
#pragma unroll
                for (int c = 0; c < MLA_QM8_SCHAINS; ++c) reg_fence(sa[c]);
            }
        }
        if (mode & kModeChain) bar_sync(1, 256);
        if (mode & kModePV) {
#pragma unroll
            for (int mb = 0; mb < 4; ++mb) reg_fence(o[mb]);
            wg_fence();
            const uint64_t dP = sw128_desc(slot + 4 * kBlk, 16, 1024);
#pragma unroll
            for (int ks = 0; ks < kTN / 16; ++ks)
#pragma unroll
                for (int mb = 0; mb < 4; ++mb) wgmma_n64_f16_rs(o[mb], va[mb], dP + uint64_t((ks * 32) >> 4));
            wg_commit();
        }
        if (mode & kModeChain) wg_wait0();
        else wg_wait1();
    }
    wg_wait0();
#pragma unroll
    for (int mb = 0; mb < 4; ++mb) reg_fence(o[mb]);
#pragma unroll
    for (int c = 0; c < MLA_QM8_SCHAINS; ++c) reg_fence(sa[c]);
    float acc[4 + MLA_QM8_SCHAINS];  // every accumulator array read (ptxas drops the MMAs of one never read)
#pragma unroll
    for (int mb = 0; mb < 4; ++mb) acc[mb] = o[mb][0] + o[mb][31];
#pragma unroll
    for (int c = 0; c < MLA_QM8_SCHAINS; ++c) acc[4 + c] = sa[c][0] + sa[c][31];
    finish(acc, t0, cyc, sink);
}
