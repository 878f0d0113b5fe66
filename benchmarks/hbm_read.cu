// hbm_read.cu - read-only bandwidth kernels for sm_90a, the ceiling against which issue 8's
// memory-bound rows are measured (benchmarks/hbm_read.py launches them; docs/performance.md).
// Nothing here is part of libmla: no table names these kernels.
//
//   hbm_read_ldg   grid-stride 16-byte loads (ld.global.nc, no L1 allocation), eight
//                  independent loads in flight per thread, folded into one XOR per thread.
//   hbm_read_bulk  one CTA per SM streams its contiguous share of `chunk`-byte pieces (a
//                  decode tile is one 73,728-byte page of 64 bf16 tokens) through a ring of
//                  `slots` shared-memory slots, one cp.async.bulk per piece completing on the
//                  slot's mbarrier: the decode kernels' ring shape (not their load: that is
//                  hbm_read_tma), with no MMA work.
//   hbm_read_hold  hbm_read_bulk's ring with a serial hold of `hold` clocks on each piece before
//                  its slot is refilled (a decode CTA's chain per tile), one CTA per SM.
//   hbm_read_tma   the same ring of pages, each page loaded as the decode kernels load a tile:
//                  9 TMA boxes of 64 bf16 columns x 64 rows, 128-byte swizzle (tensor map
//                  {576, 64, pages}, strides {1152, 73728} bytes).
//   hbm_read_tma_split  hbm_read_tma's pages through 3 slots, each page's boxes in two halves
//                  issued one step apart (what a tile refilled in pieces asks of the memory).
//   hbm_read_tma_mc  hbm_read_tma's pages on clusters of 2 CTAs that both read every page of the
//                  cluster's share, each CTA issuing half of a page's boxes multicast into both
//                  (the 128-head rows' two head groups sharing a tile: one L2 read for two SMs).
//   hbm_read_rows  the same ring of pages, each page as 64 cp.async.bulk copies of one 1152-byte
//                  token row into rows of 1168 bytes (a layout ldmatrix reads without bank
//                  conflicts), issued by the 32 lanes of one warp.
//   hbm_read_gather  token rows gathered one by one, as a page-size-1 cache places them: steps of
//                  32 rows of 1152 bytes, row ids from `order` (a permutation of the cache's
//                  rows: identity, or random as a page table makes it), each lane one
//                  cp.async.bulk of its row into a padded row, `slots` steps in flight; the
//                  next refill's row ids loaded a step ahead.
//   hbm_read_ldg_gather  the same rows by 16-byte loads (ld.global.nc, eight in flight per
//                  thread, grid-stride over the rows' 72 chunks each).
//   hbm_read_relayout  the candidate for the decode kernels' loads (docs/kernels.md next steps 8):
//                  each page as two bulk copies of half a page (36,864 B) into a raw ring of
//                  `raw` slots, re-laid by warpgroup 1 into one of `tiles` 128-byte-swizzled tiles
//                  (the layout the TMA boxes give), which warpgroup 0 takes and frees as an MMA
//                  warpgroup would. Warpgroup 0 reads one word of each tile, so the MMAs' operand
//                  reads do not compete with the re-layout here: its figure is a best case.
// The page kernels take the page of each step from `order` (a permutation: identity, or random
// as a KV cache's page table makes it), CTA b taking steps [b per, (b + 1) per).
// Each kernel writes `sink` only if the value it folds from the loaded bytes equals a constant no
// real data is expected to give, so the loads cannot be dropped and nothing is written in
// practice. hbm_read_tma and hbm_read_relayout also copy CTA 0's first tile to `dump` when it is
// not null (the .py compares the two: the re-layout must give the TMA boxes' layout).
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
constexpr uint32_t kPage = 64 * 1152;  // bytes of one 64-token bf16 page
constexpr uint32_t kPitch = 1168;      // padded row of hbm_read_rows

struct alignas(64) TensorMap {  // a CUtensorMap (cuTensorMapEncodeTiled), 128 bytes
    uint64_t w[16];
};

__device__ __forceinline__ void mbar_init(uint64_t* bar, uint32_t count = 1) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint64_t* bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_u32(bar)) : "memory");
}
__device__ __forceinline__ void mbar_expect(uint64_t* bar, uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(bytes)
                 : "memory");
}
__device__ __forceinline__ void mbar_wait(uint64_t* bar, uint32_t parity) {
    asm volatile(
        "{\n.reg .pred done;\nW_%=:\n"
        "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
        "@!done bra W_%=;\n}\n" ::"r"(smem_u32(bar)), "r"(parity)
        : "memory");
}
__device__ __forceinline__ void bulk(void* dst, const void* src, uint32_t bytes, uint64_t* bar) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                     smem_u32(dst)),
                 "l"(src), "r"(bytes), "r"(smem_u32(bar))
                 : "memory");
}
__device__ __forceinline__ void tma_box(void* dst, const TensorMap* map, int c0, int c1, int c2, uint64_t* bar) {
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], "
        "[%5];\n" ::"r"(smem_u32(dst)),
        "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(smem_u32(bar))
        : "memory");
}

// CTA blockIdx.x's share [c0, c1) of n ring steps, and the ring's `slots` mbarriers initialised
// by lane 0 (the one-warp rings: page_ring, hbm_read_gather).
__device__ __forceinline__ void ring_setup(uint64_t* bar, uint32_t slots, uint32_t n, uint32_t& c0, uint32_t& c1,
                                           int lane) {
    const uint32_t per = (n + gridDim.x - 1) / gridDim.x;
    c0 = blockIdx.x * per;
    c1 = c0 + per < n ? c0 + per : n;
    if (lane == 0) {
        for (uint32_t s = 0; s < slots; ++s) mbar_init(&bar[s]);
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncwarp();
}

// The ring of pages shared by hbm_read_tma and hbm_read_rows: one warp; every lane waits, lane 0
// arms, ISSUE(page, slot base, bar, lane) issues a page's copies (every lane calls it). With
// `dump`, CTA 0 copies its first landed slot there (slot_bytes bytes).
template <typename Issue>
__device__ __forceinline__ void page_ring(char* ring, uint32_t slot_bytes, const int32_t* order, uint32_t n_pages,
                                          uint32_t slots, uint32_t* sink, char* dump, Issue issue) {
    __shared__ __align__(8) uint64_t bar[8];
    const int lane = threadIdx.x;
    if (threadIdx.x >= 32 || slots < 1 || slots > 8) return;
    uint32_t c0, c1;
    ring_setup(bar, slots, n_pages, c0, c1, lane);
    auto start = [&](uint32_t c, uint32_t s) {
        if (lane == 0) mbar_expect(&bar[s], kPage);
        __syncwarp();
        issue(order ? order[c] : int32_t(c), ring + uint64_t(s) * slot_bytes, &bar[s], lane);
    };
    for (uint32_t s = 0; s < slots && c0 + s < c1; ++s) start(c0 + s, s);
    uint32_t phase = 0, acc = 0;
    for (uint32_t c = c0; c < c1; ++c) {
        const uint32_t s = (c - c0) % slots;
        mbar_wait(&bar[s], (phase >> s) & 1);
        phase ^= 1u << s;
        if (dump && blockIdx.x == 0 && c == c0)
            for (uint32_t i = 16 * lane; i < slot_bytes; i += 16 * 32)
                *reinterpret_cast<uint4*>(dump + i) = *reinterpret_cast<const uint4*>(ring + uint64_t(s) * slot_bytes + i);
        acc ^= *reinterpret_cast<const uint32_t*>(ring + uint64_t(s) * slot_bytes + 4 * lane);
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
        __syncwarp();
        if (c + slots < c1) start(c + slots, s);
    }
    if (acc == kNever) sink[0] = acc;
}

// The 16-byte-load readers' loop (hbm_read_ldg, hbm_read_ldg_gather): chunks k = 0 .. n16 - 1
// grid-stride, at(k) their addresses, eight loads in flight per thread, folded into one XOR.
template <typename At>
__device__ __forceinline__ void ldg_fold(uint64_t n16, uint32_t* sink, At at) {
    const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
    uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    uint32_t acc = 0;
    for (; i + 7 * stride < n16; i += 8 * stride) {
        uint4 v[8];
#pragma unroll
        for (int k = 0; k < 8; ++k) v[k] = ldg_nc(at(i + k * stride));
#pragma unroll
        for (int k = 0; k < 8; ++k) acc ^= v[k].x ^ v[k].y ^ v[k].z ^ v[k].w;
    }
    for (; i < n16; i += stride) {
        const uint4 v = ldg_nc(at(i));
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == kNever) sink[0] = acc;
}

}  // namespace

extern "C" __global__ void __launch_bounds__(256) hbm_read_ldg(const uint4* __restrict__ src, uint64_t n16,
                                                             uint32_t* sink) {
    ldg_fold(n16, sink, [&](uint64_t k) { return src + k; });
}

// Dynamic shared memory: slots * chunk bytes (chunk a multiple of 16, slots <= 8).
// The bulk ring of hbm_read_bulk / hbm_read_hold (thread 0 of the CTA): this CTA's share of the
// `chunk`-byte pieces through `slots` slots of `ring`; with kHold each landed piece is held `hold`
// clocks before it is read and its slot refilled.
template <bool kHold>
__device__ __forceinline__ void bulk_ring(char* ring, const char* __restrict__ src, uint64_t n_chunks, uint32_t chunk,
                                          uint32_t slots, uint32_t hold, uint32_t* sink) {
    __shared__ __align__(8) uint64_t bar[8];
    if (threadIdx.x != 0 || slots < 1 || slots > 8) return;
    const uint64_t per = (n_chunks + gridDim.x - 1) / gridDim.x;
    const uint64_t c0 = uint64_t(blockIdx.x) * per, c1 = c0 + per < n_chunks ? c0 + per : n_chunks;
    for (uint32_t s = 0; s < slots; ++s) mbar_init(&bar[s]);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    auto issue = [&](uint64_t c, uint32_t s) {
        mbar_expect(&bar[s], chunk);
        bulk(ring + uint64_t(s) * chunk, src + c * chunk, chunk, &bar[s]);
    };
    for (uint32_t s = 0; s < slots && c0 + s < c1; ++s) issue(c0 + s, s);
    uint32_t phase = 0, acc = 0;
    for (uint64_t c = c0; c < c1; ++c) {
        const uint32_t s = uint32_t((c - c0) % slots);
        mbar_wait(&bar[s], (phase >> s) & 1);
        phase ^= 1u << s;
        if constexpr (kHold) {
            const long long t0 = clock64();
            while (clock64() - t0 < (long long)hold) {
            }
        }
        acc ^= *reinterpret_cast<const uint32_t*>(ring + uint64_t(s) * chunk);
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");  // the read before the refill
        if (c + slots < c1) issue(c + slots, s);
    }
    if (acc == kNever) sink[0] = acc;
}

extern "C" __global__ void __launch_bounds__(32) hbm_read_bulk(const char* __restrict__ src, uint64_t n_chunks,
                                                             uint32_t chunk, uint32_t slots, uint32_t* sink) {
    extern __shared__ __align__(128) char ring[];
    bulk_ring<false>(ring, src, n_chunks, chunk, slots, 0, sink);
}

// hbm_read_bulk's ring with a serial hold: after piece c lands, thread 0 spins `hold` clocks
// (clock64) before it reads the piece and refills its slot, as a decode CTA's chain holds a tile
// (its MMAs, softmax and barriers) before it frees the slot. The holds of one CTA run one after
// the other, so they also cap its rate at one piece per `hold` clocks. Dynamic shared memory:
// slots * chunk bytes. 32 threads (thread 0 works). docs/performance.md session 32 (call 6).
extern "C" __global__ void __launch_bounds__(32) hbm_read_hold(const char* __restrict__ src, uint64_t n_chunks,
                                                             uint32_t chunk, uint32_t slots, uint32_t hold,
                                                             uint32_t* sink) {
    extern __shared__ __align__(128) char ring[];
    bulk_ring<true>(ring, src, n_chunks, chunk, slots, hold, sink);
}

// Dynamic shared memory: slots * 73,728 bytes, 1024-byte aligned (the swizzle atoms). 32 threads.
extern "C" __global__ void __launch_bounds__(32) hbm_read_tma(const __grid_constant__ TensorMap map,
                                                            const int32_t* order, uint32_t n_pages, uint32_t slots,
                                                            uint32_t* sink, char* dump) {
    extern __shared__ __align__(1024) char ring_t[];
    page_ring(ring_t, kPage, order, n_pages, slots, sink, dump, [&](int32_t page, char* slot, uint64_t* bar, int lane) {
        if (lane == 0)
            for (int b = 0; b < 9; ++b) tma_box(slot + b * 8192, &map, 64 * b, 0, page, bar);
    });
}

// Dynamic shared memory: 3 * 73,728 bytes, 1024-byte aligned. 32 threads. The pages of
// hbm_read_tma through 3 slots, each page's boxes in two halves issued one step apart (session 11:
// the half-tile refill and the block rings issue a tile's column blocks at different times): after
// page c lands, blocks 4-7 of page c + 2 and blocks 0-3 and 8 of page c + 3 (whose slot page c
// frees, armed with the whole page's bytes) go out, so ~2.5 pages are in flight. Same bytes as
// hbm_read_tma; set against it at 2 and 3 whole pages in flight, it shows what splitting costs.
extern "C" __global__ void __launch_bounds__(32) hbm_read_tma_split(const __grid_constant__ TensorMap map,
                                                                  const int32_t* order, uint32_t n_pages,
                                                                  uint32_t* sink) {
    extern __shared__ __align__(1024) char ring_s[];
    __shared__ __align__(8) uint64_t bar[3];
    const int lane = threadIdx.x;
    const uint32_t per = (n_pages + gridDim.x - 1) / gridDim.x;
    const uint32_t c0 = blockIdx.x * per, c1 = c0 + per < n_pages ? c0 + per : n_pages;
    if (lane == 0) {
        for (int s = 0; s < 3; ++s) mbar_init(&bar[s]);
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncwarp();
    auto half = [&](uint32_t c, int h) {  // h = 0: arm the slot, blocks 0-3 and 8; h = 1: blocks 4-7
        const uint32_t s = (c - c0) % 3;
        const int32_t page = order ? order[c] : int32_t(c);
        if (lane == 0) {
            if (h == 0) mbar_expect(&bar[s], kPage);
            for (int b = 0; b < 9; ++b)
                if ((h == 0) == (b < 4 || b == 8)) tma_box(ring_s + uint64_t(s) * kPage + b * 8192, &map, 64 * b, 0, page, &bar[s]);
        }
        __syncwarp();
    };
    for (uint32_t c = c0; c < c1 && c < c0 + 2; ++c) {
        half(c, 0);
        half(c, 1);
    }
    if (c0 + 2 < c1) half(c0 + 2, 0);
    uint32_t phase = 0, acc = 0;
    for (uint32_t c = c0; c < c1; ++c) {
        const uint32_t s = (c - c0) % 3;
        mbar_wait(&bar[s], (phase >> s) & 1);
        phase ^= 1u << s;
        acc ^= *reinterpret_cast<const uint32_t*>(ring_s + uint64_t(s) * kPage + 4 * lane);
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
        __syncwarp();
        if (c + 2 < c1) half(c + 2, 1);
        if (c + 3 < c1) half(c + 3, 0);
    }
    if (acc == kNever) sink[0] = acc;
}

// Dynamic shared memory: slots * 73,728 bytes, 1024-byte aligned. 32 threads, clusters of 2 CTAs.
// The 128-head rows' pages read once from the L2 for both CTAs of a pair (the two 64-row head
// groups of a request, MLA_QM_MC's scheme, decode_qm_tma.cuh): cluster k (CTAs 2k, 2k + 1) takes
// steps [k per, (k + 1) per) of `order` (per = n_pages / clusters, rounded up). CTA rank r issues
// the boxes b of each page with b % 2 == r, each multicast into the same slot of both CTAs, whose
// `full` mbarriers are each armed with the whole page; a slot is refilled only after both CTAs
// read it (each reader arrives on its own and on the other CTA's `free` mbarrier, count 2).
extern "C" __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(32)
    hbm_read_tma_mc(const __grid_constant__ TensorMap map, const int32_t* order, uint32_t n_pages, uint32_t slots,
                    uint32_t* sink) {
    extern __shared__ __align__(1024) char ring_m[];
    __shared__ __align__(8) uint64_t full[8], freeb[8];
    const int lane = threadIdx.x;
    if (slots < 1 || slots > 8) return;  // (uniform over the grid: no CTA waits at the cluster barrier)
    uint32_t rank;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
    const uint32_t pairs = gridDim.x / 2, per = (n_pages + pairs - 1) / pairs;
    const uint32_t c0 = (blockIdx.x / 2) * per, c1 = c0 + per < n_pages ? c0 + per : n_pages;
    if (lane == 0) {
        for (uint32_t s = 0; s < slots; ++s) {
            mbar_init(&full[s]);
            mbar_init(&freeb[s], 2);
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncwarp();
    auto cluster_sync = [] {
        asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
    };
    cluster_sync();  // both CTAs' mbarriers are initialised before any box or arrival reaches them
    auto start = [&](uint32_t c, uint32_t s) {
        if (lane == 0) {
            mbar_expect(&full[s], kPage);  // both CTAs' boxes land here
            const int32_t page = order ? order[c] : int32_t(c);
            const uint16_t mask = 3;
            for (uint32_t b = rank; b < 9; b += 2)
                asm volatile(
                    "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
                    " [%0], [%1, {%2, %3, %4}], [%5], %6;\n" ::"r"(smem_u32(ring_m + uint64_t(s) * kPage + b * 8192)),
                    "l"(reinterpret_cast<uint64_t>(&map)), "r"(int(64 * b)), "r"(0), "r"(page),
                    "r"(smem_u32(&full[s])), "h"(mask)
                    : "memory");
        }
        __syncwarp();
    };
    for (uint32_t s = 0; s < slots && c0 + s < c1; ++s) start(c0 + s, s);
    uint32_t phase = 0, fphase = 0, acc = 0;
    for (uint32_t c = c0; c < c1; ++c) {
        const uint32_t s = (c - c0) % slots;
        mbar_wait(&full[s], (phase >> s) & 1);
        phase ^= 1u << s;
        acc ^= *reinterpret_cast<const uint32_t*>(ring_m + uint64_t(s) * kPage + 4 * lane);
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
        __syncwarp();
        if (lane < 2)  // this CTA has read slot s: one arrival on each CTA's free[s]
            asm volatile(
                "{\n.reg .b32 ra;\nmapa.shared::cluster.u32 ra, %0, %1;\n"
                "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [ra];\n}\n" ::"r"(smem_u32(&freeb[s])),
                "r"(uint32_t(lane))
                : "memory");
        if (c + slots < c1) {
            // both CTAs have read slot s (their boxes refill it in both)
            asm volatile(
                "{\n.reg .pred done;\nW_%=:\n"
                "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 done, [%0], %1;\n"
                "@!done bra W_%=;\n}\n" ::"r"(smem_u32(&freeb[s])), "r"((fphase >> s) & 1)
                : "memory");
            fphase ^= 1u << s;
            start(c + slots, s);
        }
    }
    cluster_sync();  // no CTA exits while the other may still arrive on its mbarriers
    if (acc == kNever) sink[0] = acc;
}

// Dynamic shared memory: slots * 64 * 1168 bytes. 32 threads.
extern "C" __global__ void __launch_bounds__(32) hbm_read_rows(const char* __restrict__ src, const int32_t* order,
                                                             uint32_t n_pages, uint32_t slots, uint32_t* sink) {
    extern __shared__ __align__(128) char ring_r[];
    page_ring(ring_r, 64 * kPitch, order, n_pages, slots, sink, nullptr, [&](int32_t page, char* slot, uint64_t* bar, int lane) {
        const char* base = src + uint64_t(page) * kPage;
        bulk(slot + lane * kPitch, base + lane * 1152, 1152, bar);
        bulk(slot + (lane + 32) * kPitch, base + (lane + 32) * 1152, 1152, bar);
    });
}

// Dynamic shared memory: raw * 36,864 + tiles * 73,728 bytes (raw <= 6, tiles <= 2), 1024-byte
// aligned. 256 threads: warpgroup 0 consumes tiles, warpgroup 1 loads and re-lays.
extern "C" __global__ void __launch_bounds__(256) hbm_read_relayout(const char* __restrict__ src, const int32_t* order,
                                                                  uint32_t n_pages, uint32_t raw, uint32_t tiles,
                                                                  uint32_t* sink, char* dump) {
    constexpr uint32_t kHalf = kPage / 2;
    extern __shared__ __align__(1024) char sm[];
    __shared__ __align__(8) uint64_t raw_full[6], tile_full[2], tile_empty[2];
    if (raw < 1 || raw > 6 || tiles < 1 || tiles > 2) return;
    char* tile_base = sm + raw * kHalf;  // raw * 36,864 is a multiple of 1024
    const int tid = threadIdx.x, wt = tid & 127;
    const uint32_t per = (n_pages + gridDim.x - 1) / gridDim.x;
    const uint32_t c0 = blockIdx.x * per, c1 = c0 + per < n_pages ? c0 + per : n_pages;
    const uint32_t n = c1 > c0 ? c1 - c0 : 0, n_halves = 2 * n;
    if (tid == 0) {
        for (uint32_t s = 0; s < raw; ++s) mbar_init(&raw_full[s]);
        for (uint32_t s = 0; s < tiles; ++s) mbar_init(&tile_full[s], 128), mbar_init(&tile_empty[s], 128);
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();
    auto issue_half = [&](uint32_t k) {  // half k of this CTA's pages into raw slot k % raw
        const uint32_t s = k % raw;
        const int32_t page = order ? order[c0 + k / 2] : int32_t(c0 + k / 2);
        mbar_expect(&raw_full[s], kHalf);
        bulk(sm + uint64_t(s) * kHalf, src + uint64_t(page) * kPage + (k & 1) * kHalf, kHalf, &raw_full[s]);
    };
    uint32_t acc = 0;
    if (tid < 128) {  // warpgroup 0: takes tile p, frees it
        uint32_t ph = 0;
        for (uint32_t p = 0; p < n; ++p) {
            const uint32_t s = p % tiles;
            mbar_wait(&tile_full[s], (ph >> s) & 1);
            ph ^= 1u << s;
            if (dump && blockIdx.x == 0 && p == 0)
                for (uint32_t i = 16 * tid; i < kPage; i += 16 * 128)
                    *reinterpret_cast<uint4*>(dump + i) = *reinterpret_cast<const uint4*>(tile_base + s * kPage + i);
            acc ^= *reinterpret_cast<const uint32_t*>(tile_base + s * kPage + 4 * tid);
            mbar_arrive(&tile_empty[s]);
        }
    } else {  // warpgroup 1: loads halves, re-lays them
        if (wt == 0)
            for (uint32_t k = 0; k < raw && k < n_halves; ++k) issue_half(k);
        uint32_t ph_raw = 0, ph_empty = 0;
        for (uint32_t p = 0; p < n; ++p) {
            const uint32_t s = p % tiles;
            if (p >= tiles) {  // warpgroup 0 is done with this tile's previous page
                mbar_wait(&tile_empty[s], (ph_empty >> s) & 1);
                ph_empty ^= 1u << s;
            }
            char* tile = tile_base + s * kPage;
            for (uint32_t h = 0; h < 2; ++h) {
                const uint32_t k = 2 * p + h, rs = k % raw;
                mbar_wait(&raw_full[rs], (ph_raw >> rs) & 1);
                ph_raw ^= 1u << rs;
                const char* half = sm + uint64_t(rs) * kHalf;
                // 32 rows x 72 chunks of 16 B: chunk c (row c / 72, column chunk c % 72) -> block
                // (c % 72) / 8, row 32 h + c / 72, swizzled chunk ((c % 8) ^ (row & 7))
#pragma unroll 6
                for (int c = wt; c < 32 * 72; c += 128) {
                    const int r = 32 * h + c / 72, q = c % 72;
                    const uint4 v = *reinterpret_cast<const uint4*>(half + 16 * c);
                    *reinterpret_cast<uint4*>(tile + (q >> 3) * 8192 + r * 128 + (((q & 7) ^ (r & 7)) << 4)) = v;
                }
                asm volatile("bar.sync 1, 128;\n" ::: "memory");  // every read of the raw slot done
                if (wt == 0 && k + raw < n_halves) {
                    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
                    issue_half(k + raw);
                }
            }
            // as a kernel whose MMAs read the tile must: the generic stores before the async proxy
            asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
            mbar_arrive(&tile_full[s]);
        }
    }
    if (acc == kNever) sink[0] = acc;
}

// Dynamic shared memory: slots * 32 * 1168 bytes (slots <= 6: 227 KB). 32 threads. n_steps = rows / 32.
extern "C" __global__ void __launch_bounds__(32) hbm_read_gather(const char* __restrict__ src, const int32_t* order,
                                                               uint32_t n_steps, uint32_t slots, uint32_t* sink) {
    extern __shared__ __align__(128) char ring_g[];
    __shared__ __align__(8) uint64_t bar[8];
    const int lane = threadIdx.x;
    if (threadIdx.x >= 32 || slots < 1 || slots > 8) return;
    uint32_t c0, c1;
    ring_setup(bar, slots, n_steps, c0, c1, lane);
    constexpr uint32_t kStep = 32 * kPitch;
    auto start = [&](uint32_t s, int32_t row) {
        if (lane == 0) mbar_expect(&bar[s], 32 * 1152);
        __syncwarp();
        bulk(ring_g + uint64_t(s) * kStep + lane * kPitch, src + uint64_t(row) * 1152, 1152, &bar[s]);
    };
    for (uint32_t s = 0; s < slots && c0 + s < c1; ++s) start(s, order[32 * uint64_t(c0 + s) + lane]);
    int32_t next = c0 + slots < c1 ? order[32 * uint64_t(c0 + slots) + lane] : 0;
    uint32_t phase = 0, acc = 0;
    for (uint32_t c = c0; c < c1; ++c) {
        const uint32_t s = (c - c0) % slots;
        mbar_wait(&bar[s], (phase >> s) & 1);
        phase ^= 1u << s;
        acc ^= *reinterpret_cast<const uint32_t*>(ring_g + uint64_t(s) * kStep + lane * kPitch);
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
        __syncwarp();
        if (c + slots < c1) {
            start(s, next);
            next = c + slots + 1 < c1 ? order[32 * uint64_t(c + slots + 1) + lane] : 0;
        }
    }
    if (acc == kNever) sink[0] = acc;
}

// 256 threads; n_rows token rows of 1152 bytes (72 chunks of 16), row ids from `order`.
extern "C" __global__ void __launch_bounds__(256) hbm_read_ldg_gather(const char* __restrict__ src,
                                                                    const int32_t* __restrict__ order,
                                                                    uint64_t n_rows, uint32_t* sink) {
    ldg_fold(n_rows * 72, sink, [&](uint64_t k) {
        return reinterpret_cast<const uint4*>(src + uint64_t(order[k / 72]) * 1152) + k % 72;
    });
}
