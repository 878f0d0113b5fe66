// trace.cuh - measurement hook -DMLA_WG_TRACE=1 (0 shipped: no code, the SASS unchanged): time
// stamps of one CTA's first work in the shared-ring body (decode_wgmma.cuh; with =2 the qm TMA
// body, decode_qm_tma.cuh, whose stamps are listed there), to place where a
// short work's time goes (session 25: b = 1 and b = 64 run ~10 µs beyond their bytes). Results are
// then wrong: after the work's output is stored, thread 0 writes the stamps over the first bytes
// of the work's first output row (head 0 of its partial row when split, of its bf16 `out` row
// otherwise), which benchmarks/decode_trace.py reads back.
//
// Record (uint64 words): [0, kN) %globaltimer in ns at stamp i (0: not reached), [kN, 2 kN) clock64
// at stamp i; word 2 kN: %smid, 2 kN + 1: the work's tiles, 2 kN + 2: the CTA's works. Stamps
// (thread 0 = warpgroup 0's first thread unless said): 0 kernel entry, 1 after the grid
// dependency wait (mla_dec::kernel_start), 2 after the first work's record (load_work), 3 Q's
// copies issued, 4 the first tiles issued, 5 Q visible (the barrier after it), 6 + k tile k landed
// (k < 8), 14 + k tile k's MMAs done (k < 8), 22 the last tile landed, 23 its MMAs done, 24 the
// epilogue's start, 25 the output staged, 26 the output stored (this thread's share), 30 + k
// warpgroup 1 (thread 128) issued tile k + 2 (k < 8), 38 warpgroup 1 passed the EMPTY barrier of
// tile 0 (before issuing tile 2), 39 it issued tile 2's boxes (before the next page's lookup).
// Points inside a tile (session 31: where the 16- and 32-row softmax's time goes), clock64 only (no
// globaltimer, so the stamp itself costs a few cycles): 40 + 10 (k - 2) + j for tiles k = 2, 3, 4,
// by the MMA warpgroup's thread 0 in tile_mma / tile_softmax (wg_tile.cuh): j = 0 entry, 1 S^T
// issued, 2 S^T waited for and summed, 3 logits masked and the thread's maxima, 4 P against the
// running max, 5 P^T stored, 6 the proxy fence, 7 barrier C' passed, 8 P.V issued, 9 P.V waited
// for. A tile that moved its maxima passes 7 before the exact path (B, C).
#pragma once
#include <stdint.h>

#ifndef MLA_WG_TRACE
#define MLA_WG_TRACE 0
#endif

// MLA_WG_TRACE=2 (session 32, the qm TMA body, decode_qm_tma.cuh): the same record kept in the
// kernel's dynamic shared memory, in the last 1,120 bytes of the qm rows' launch_smem (past
// every byte the qm TMA body uses, CfgQMT::SMEM, asserted there; the cp.async and seesaw qm
// bodies use that region: valid for the TMA body only, and not for the 16- and 32-row cubins,
// whose launch_smem is smaller), since any static shared memory would move the
// 1024-byte-aligned dynamic array past the SM's limit at that launch_smem; no in-tile base
// (s_sub: the body passes its own).
#if MLA_WG_TRACE == 2
#include "decode/decode_params.h"  // mla_decode_qm_smem_bytes
#endif
#if MLA_WG_TRACE
namespace mla_trace {
constexpr int kN = 70;
#if MLA_WG_TRACE == 2
constexpr int kDynOff = mla_decode_qm_smem_bytes(false) - 2 * kN * 8;
__device__ __forceinline__ unsigned long long* rec() {
    extern __shared__ __align__(1024) char mla_trace_dyn[];  // the kernel's dynamic array
    return reinterpret_cast<unsigned long long*>(mla_trace_dyn + kDynOff);
}
#define MLA_TRACE_NS(i) (mla_trace::rec()[i])
#define MLA_TRACE_CLK(i) (reinterpret_cast<long long*>(mla_trace::rec())[kN + (i)])
#else
__shared__ unsigned long long s_ns[kN];
__shared__ long long s_clk[kN];
__shared__ int s_sub;  // the first in-tile stamp of the tile tile_mma runs (40, 50, 60), or -1
#define MLA_TRACE_NS(i) (mla_trace::s_ns[i])
#define MLA_TRACE_CLK(i) (mla_trace::s_clk[i])
#endif

__device__ __forceinline__ void stamp(int i) {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)::"memory");
    MLA_TRACE_NS(i) = t;
    MLA_TRACE_CLK(i) = clock64();
}
// Thread 0 at kernel entry: clears the record, then stamps 0.
__device__ __forceinline__ void begin() {
    if (threadIdx.x != 0) return;
    for (int i = 0; i < kN; ++i) MLA_TRACE_NS(i) = 0, MLA_TRACE_CLK(i) = 0;
#if MLA_WG_TRACE != 2
    s_sub = -1;
#endif
    stamp(0);
}
// Thread 0 writes the record to dst (after a barrier that follows the work's stores).
__device__ __forceinline__ void dump(unsigned long long* dst, int tiles, int works) {
    if (threadIdx.x != 0) return;
    unsigned smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    for (int i = 0; i < kN; ++i) dst[i] = MLA_TRACE_NS(i), dst[kN + i] = (unsigned long long)MLA_TRACE_CLK(i);
    dst[2 * kN] = smid;
    dst[2 * kN + 1] = (unsigned long long)tiles;
    dst[2 * kN + 2] = (unsigned long long)works;
}
#if MLA_WG_TRACE != 2
// Thread 0 of the traced work, before tile_mma of tile `tile`: its in-tile stamps, if any.
__device__ __forceinline__ void sub_tile(int tile) { s_sub = tile >= 2 && tile < 5 ? 40 + 10 * (tile - 2) : -1; }
__device__ __forceinline__ int sub_base() { return threadIdx.x == 0 ? s_sub : -1; }
#endif
__device__ __forceinline__ void sub_stamp(int base, int j) {
    if (base >= 0) MLA_TRACE_CLK(base + j) = clock64();
}
}  // namespace mla_trace
#define MLA_TRACE_BEGIN() mla_trace::begin()
#if MLA_WG_TRACE == 2  // (the 16- and 32-row bodies' in-tile stamps: not in this build)
#define MLA_TRACE_SUBTILE(cond, tile) ((void)0)
#define MLA_TRACE_SUB_BASE(name) const int name = -1
#else
#define MLA_TRACE_SUBTILE(cond, tile)             \
    do {                                          \
        if (cond) mla_trace::sub_tile(tile);      \
    } while (0)
#define MLA_TRACE_SUB_BASE(name) const int name = mla_trace::sub_base()
#endif
#define MLA_TRACE_SUB(name, j) mla_trace::sub_stamp(name, j)
#define MLA_TRACE(cond, i)             \
    do {                               \
        if (cond) mla_trace::stamp(i); \
    } while (0)
#else
#define MLA_TRACE_BEGIN() ((void)0)
#define MLA_TRACE(cond, i) ((void)0)
#define MLA_TRACE_SUBTILE(cond, tile) ((void)0)
#define MLA_TRACE_SUB_BASE(name) ((void)0)
#define MLA_TRACE_SUB(name, j) ((void)0)
#endif
