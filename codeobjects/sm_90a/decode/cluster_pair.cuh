// cluster_pair.cuh - two CTAs of a thread-block cluster sharing KV tiles (the qm TMA body at 128
// heads with MLA_QM_MC, decode_qm_tma.cuh): the cluster registers, the cluster barrier, a remote
// mbarrier arrival (waited for with kv_load.cuh's mbar_wait<true>; the multicast boxes are
// kv_load.cuh's tma_load_3d_pair), the pairing of the head-group-major plan's twin clusters and the
// check that they read the same KV.
//
// Pairing (docs/plan-layout.md, "Head-group-major order"): with two head groups, plan cluster c + C/2
// runs head group 1 of exactly plan cluster c's tiles, in the same order. Launched as clusters of
// two CTAs (mla_decode.csv launch_cluster 2), CTA rank 0 of cluster k runs plan cluster k and rank 1
// plan cluster k + C/2: a bijection of the plan's clusters whatever the plan, so any plan runs
// correctly; the two share tiles only when pair_twins() finds that their works read the same KV.
#pragma once
#include "decode/kv_load.cuh"

namespace mla_wg {

__device__ __forceinline__ uint32_t cluster_nctarank() {
    uint32_t n;
    asm volatile("mov.u32 %0, %%cluster_nctarank;\n" : "=r"(n));
    return n;
}
__device__ __forceinline__ uint32_t cluster_ctarank() {
    uint32_t r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
    return r;
}
// Every thread of both CTAs: the writes before (shared memory, mbarrier inits) are visible to the
// other CTA after.
__device__ __forceinline__ void cluster_sync() {
    asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
// One arrival on the mbarrier at the same shared-memory offset as `bar` in CTA `rank` of the
// cluster, with release semantics at cluster scope (the caller's earlier accesses, and those
// ordered before them by a barrier, happen before what the other CTA does after its wait).
__device__ __forceinline__ void mbar_arrive_remote(uint32_t bar, uint32_t rank) {
    asm volatile(
        "{\n.reg .b32 ra;\nmapa.shared::cluster.u32 ra, %0, %1;\n"
        "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [ra];\n}\n" ::"r"(bar),
        "r"(rank)
        : "memory");
}
// The first query token of work row x within its request (load_work's t0: dw 2 less the folded
// start of its head group; < 0 for a work load_work rejects).
__device__ __forceinline__ int pair_t0(const mla_decode_params& p, const int32_t* x) {
    const int r = p.qk_batch_ratio, b = x[0] / r, g = x[0] % r;
    const int qb = p.qo_indptr[b], L = p.qo_indptr[b + 1] - qb;
    return x[2] - (qb * r + g * L);
}
// Whether plan clusters c0 and c1 (the pair) read the same KV, work for work: as many works, each
// pair of the same request (dw 0 / qk_batch_ratio), the same KV range (dw 4, 5, 6), the same row
// count (dw 3 - dw 2) and the same first query token, one load_work accepts in both (so the two
// CTAs skip the same works and meet at the same cluster barriers). One thread; both CTAs of the
// pair compute the same answer.
__device__ __forceinline__ bool pair_twins(const mla_decode_params& p, int c0, int c1) {
    const int b0 = p.work_indptr[c0], n0 = p.work_indptr[c0 + 1] - b0;
    const int b1 = p.work_indptr[c1], n1 = p.work_indptr[c1 + 1] - b1;
    if (n0 != n1 || p.qk_batch_ratio < 2) return false;
    for (int i = 0; i < n0; ++i) {
        const int32_t* x = p.work_info_set + 8 * (int64_t)(b0 + i);
        const int32_t* y = p.work_info_set + 8 * (int64_t)(b1 + i);
        const int nr = (x[3] - x[2]) * p.kernel_heads, t0 = pair_t0(p, x);
        if (x[0] / p.qk_batch_ratio != y[0] / p.qk_batch_ratio || x[4] != y[4] || x[5] != y[5] || x[6] != y[6] ||
            x[3] - x[2] != y[3] - y[2] || t0 != pair_t0(p, y) || t0 < 0 || nr < 0 || nr > 64)
            return false;
    }
    return true;
}

}  // namespace mla_wg
