// decode_wgmma.cuh - the persistent sm_90a MLA decode kernel on wgmma (warpgroup MMA, operands in
// shared memory), instantiated per (Q dtype, KV dtype, row tile M) by mla_decode_wg_<q>_<kv>.cu.
// Design and cost model: docs/kernels.md; contract (works, rows, partials): docs/plan-layout.md.
//
// Transposed formulation: the KV tile is the M = 64 side of every MMA, the query rows the N side,
// so 16-row tiles need no padding to 64:
//   S^T [64 tokens x NQ rows] = K [64 x 576] . Q^T         A = K tile (K-major), B = Q (K-major)
//   O^T [512 dims x NQ rows] += V^T [512 x 64] . P^T        A = V^T (MN-major), B = P^T (K-major)
// with V = the first 512 columns of the same tile. Every operand lives in shared memory in the
// 128-byte-swizzled layout: a 64-column block of a row-major [rows][576] matrix is stored as
// rows of 128 bytes whose 16-byte chunk c sits at chunk c ^ (row & 7), blocks one after another.
// Warpgroup 0 (and warpgroup 1 when M = 64, each taking NQ = 32 rows) run the MMAs and the online
// softmax; all 256 threads load KV tiles with cp.async (16-byte chunks, swizzled addresses),
// widen fp8 tiles to bf16 exactly, and write the results out.
#pragma once
#include "decode/decode_kernel.cuh"  // cp.async, ex2, fp8 widening, Work

// Measurement hook (docs/kernels.md, "placing the time"): a build with -DMLA_WG_ABLATE=1 skips the
// O^T MMAs, 2 the S^T MMAs, 4 all MMA-warpgroup work after each tile lands (loads only). Results
// are then wrong; the shipped cubins are built with 0.
#ifndef MLA_WG_ABLATE
#define MLA_WG_ABLATE 0
#endif

namespace mla_wg {

using mla_dec::cp_async16;
using mla_dec::cp_commit;
using mla_dec::cp_wait;
using mla_dec::ex2;
using mla_dec::smem_u32;

constexpr int kD = MLA_DECODE_D_QK;
constexpr int kDV = MLA_DECODE_D_V;
constexpr int kTN = 64;              // KV tokens per tile (the MMA's M)
constexpr int kBlk = kTN * 128;      // one 64-column block of a tile: 64 rows x 128 B
constexpr int kTile = 9 * kBlk;      // bf16 tile, 576 columns
constexpr int kRaw8 = kTN * kD;      // fp8 tile, unswizzled rows of 576 B
constexpr int kOPitch = kDV + 4;     // output staging row, floats
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

template <int N, bool KV8>
struct Cfg {
    static constexpr int NC = N == 64 ? 2 : 1;  // MMA warpgroups
    static constexpr int NQ = N / NC;           // query rows per MMA warpgroup (16 or 32)
    static constexpr int STAGES = mla_decode_wg_stages(N, KV8);
    static constexpr int OFF_Q = 0;
    static constexpr int OFF_KV = N * 1152;
    static constexpr int RING = STAGES * (KV8 ? kRaw8 : kTile);
    static constexpr int OFF_KVB = OFF_KV + RING;  // fp8: the widened bf16 tile
    static constexpr int OFF_P = OFF_KVB + (KV8 ? kTile : 0);
    static constexpr int OFF_RED = OFF_P + N * 128;
    static constexpr int OFF_TOK = OFF_RED + 16 * N;
    static constexpr int SMEM = OFF_TOK + STAGES * kTN * 4;
    static_assert(SMEM == mla_decode_wg_smem_bytes(N, KV8), "smem layout and formula disagree");
    static_assert(SMEM <= 232448, "more than 227 KB of shared memory");
    static_assert(N * kOPitch * 4 <= RING + (KV8 ? kTile : 0), "output staging does not fit the ring");
    static_assert(OFF_KV % 1024 == 0 && OFF_KVB % 1024 == 0 && OFF_P % 1024 == 0, "swizzle atoms");
};

__device__ __forceinline__ void fence_proxy_async() {
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
__device__ __forceinline__ void bar_sync(int id, int n) {
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(n) : "memory");
}
__device__ __forceinline__ void wg_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wg_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wg_wait0() { asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory"); }
template <int R>
__device__ __forceinline__ void reg_fence(float (&d)[R]) {
#pragma unroll
    for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// Shared-memory matrix descriptor, 128-byte swizzle (layout type 1 in bits 62-63). Addresses and
// offsets in bytes; the swizzle atoms (8 rows x 128 B) must start 1024-byte aligned.
__device__ __forceinline__ uint64_t sw128_desc(uint32_t saddr, uint32_t lbo, uint32_t sbo) {
    return uint64_t((saddr & 0x3FFFF) >> 4) | (uint64_t(lbo >> 4) << 16) | (uint64_t(sbo >> 4) << 32) |
           (1ull << 62);
}

// D[64 x 16] (+)= A . B, bf16 in, fp32 accumulate; TA = 1: A is MN-major (transposed).
template <int TA>
__device__ __forceinline__ void wgmma_n16(float (&d)[8], uint64_t a, uint64_t b, int acc) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %10, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 "
        "{%0,%1,%2,%3,%4,%5,%6,%7}, %8, %9, p, 1, 1, %11, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
        : "l"(a), "l"(b), "r"(acc), "n"(TA));
}
template <int TA>
__device__ __forceinline__ void wgmma_n32(float (&d)[16], uint64_t a, uint64_t b, int acc) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 "
        "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15}, %16, %17, p, 1, 1, %19, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
        : "l"(a), "l"(b), "r"(acc), "n"(TA));
}
template <int NQ, int TA>
__device__ __forceinline__ void wgmma(float (&d)[NQ / 2], uint64_t a, uint64_t b, int acc) {
    if constexpr (NQ == 16) wgmma_n16<TA>(d, a, b, acc);
    else wgmma_n32<TA>(d, a, b, acc);
}

// Byte offset of 16-byte chunk q (of 72 per 576-column bf16 row) of row r in a swizzled matrix
// of `rows` rows.
__device__ __forceinline__ uint32_t sw_off(int rows, int r, int q) {
    return uint32_t((q >> 3) * rows * 128 + r * 128 + (((q & 7) ^ (r & 7)) << 4));
}

// 16 fp8 bytes (columns 16 q8 ..) of row r widened to bf16 into a swizzled matrix of `rows` rows.
__device__ __forceinline__ void widen_store(char* base, int rows, int r, int q8, const uint4 v) {
    uint4 w[2];
    mla_dec::fp8x16_to_bf16(v, w);
    *reinterpret_cast<uint4*>(base + sw_off(rows, r, 2 * q8)) = w[0];
    *reinterpret_cast<uint4*>(base + sw_off(rows, r, 2 * q8 + 1)) = w[1];
}

// The launch matches the kernel: 256 threads, at least `bytes` of dynamic shared memory at `smem`,
// 1024-byte aligned (the swizzle atoms). Otherwise nothing runs and (too little or misaligned
// shared memory) MLA_DECODE_ERR_SMEM is flagged; a wrong block size means a table row disagrees
// with the build, which the launch code already refuses.
__device__ __forceinline__ bool launch_ok(const mla_decode_params& p, const char* smem, int bytes) {
    if (blockDim.x != 256) return false;
    uint32_t dsmem;
    asm("mov.u32 %0, %%dynamic_smem_size;\n" : "=r"(dsmem));
    if (dsmem < static_cast<uint32_t>(bytes) || (smem_u32(smem) & 1023u) != 0) {
        if (threadIdx.x == 0 && p.error_flag) atomicOr(p.error_flag, MLA_DECODE_ERR_SMEM);
        return false;
    }
    return true;
}

// ---- pieces shared by the wgmma kernel bodies (this file and decode_qm.cuh) ----

// Byte address of tile row `row` (token row / Hk, head row % Hk) of work w's Q in global memory.
template <bool Q8>
__device__ __forceinline__ const char* q_row(const mla_decode_params& p, const mla_dec::Work& w, int row) {
    const int Hk = p.kernel_heads, tt = row / Hk, h = row % Hk;
    return static_cast<const char*>(p.q) + (Q8 ? 1 : 2) * ((int64_t)(w.qo_b + w.t0 + tt) * p.q_stride_token +
                                                         (int64_t)(w.g * Hk + h) * p.q_stride_head);
}

// Work w's Q tile -> shared memory at off_q as bf16 in the swizzled layout of ROWS rows; rows
// past w.nrows are zero. bf16 Q: cp.async, one commit group (the caller waits); fp8 Q: loaded,
// widened and stored by the threads (visible after the next barrier). All 256 threads call it.
template <int ROWS, bool Q8>
__device__ __forceinline__ void load_q(const mla_decode_params& p, const mla_dec::Work& w, char* smem,
                                       uint32_t sbase, uint32_t off_q, int tid) {
    if constexpr (!Q8) {
        for (int c = tid; c < ROWS * 72; c += 256) {
            const int row = c / 72, q = c - row * 72;
            const bool ok = row < w.nrows;
            cp_async16(sbase + off_q + sw_off(ROWS, row, q), ok ? q_row<false>(p, w, row) + 16 * q : p.q, ok ? 16 : 0);
        }
        cp_commit();
    } else {
        for (int c = tid; c < ROWS * 36; c += 256) {
            const int row = c / 36, q8 = c - row * 36;
            uint4 v = make_uint4(0, 0, 0, 0);
            if (row < w.nrows) v = *reinterpret_cast<const uint4*>(q_row<true>(p, w, row) + 16 * q8);
            widen_store(smem + off_q, ROWS, row, q8, v);
        }
    }
}

// mbarriers (shared::cta, 64-bit) and bulk copies completing on them: the register-A kernel's ring
// (decode_ra.cuh) and the TMA loads of bf16 tiles below.
__device__ __forceinline__ void mbar_init(uint32_t bar, int count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void mbar_arrive_tx(uint32_t bar, int bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
    asm volatile(
        "{\n.reg .pred done;\nWAIT_%=:\n"
        "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
        "@!done bra WAIT_%=;\n}\n" ::"r"(bar), "r"(parity)
        : "memory");
}
// `bytes` (a multiple of 16) from global src to shared dst by the bulk-copy engine, completing
// on mbarrier bar.
__device__ __forceinline__ void bulk_copy(uint32_t dst, const void* src, int bytes, uint32_t bar) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst),
                 "l"(src), "r"(bytes), "r"(bar)
                 : "memory");
}

// One box of a 3-D TMA tensor map (cuTensorMapEncodeTiled, passed in the __grid_constant__ params)
// at element coordinates (c0, c1, c2) to shared dst, completing on mbarrier bar.
__device__ __forceinline__ void tma_load_3d(uint32_t dst, const void* tmap, int c0, int c1, int c2, uint32_t bar) {
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(
            dst),
        "l"(reinterpret_cast<uint64_t>(tmap)), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
        : "memory");
}

// The page id holding token j (the request's j-th token) of work w: one load from the page table
// (block_table row w.b, or the CSR indices from w.kvi_b), or -1 when the page-table index is out of
// range (flagged when `report`). Split from the address (kv_row_on) so that a loader can issue this
// load a tile ahead and not stall on it when it issues the tile's copies (PagePrefetch).
__device__ __forceinline__ int kv_page(const mla_decode_params& p, const mla_dec::Work& w, int j, bool report) {
    const int pi = j >> p.page_size_log2;
    int page = -1;
    if (p.block_table_stride > 0) {
        if (pi < p.block_table_stride)
            page = p.page_table[(int64_t)w.b * p.block_table_stride + pi];
        else if (p.error_flag && report)
            atomicOr(p.error_flag, MLA_DECODE_ERR_PAGE_INDEX);
    } else {
        const int64_t idx = (int64_t)w.kvi_b + pi;
        if (idx >= 0 && idx < p.num_page_indices)
            page = p.page_table[idx];
        else if (p.error_flag && report)
            atomicOr(p.error_flag, MLA_DECODE_ERR_PAGE_INDEX);
    }
    return page;
}

// Byte address of token j on page `page` (kv_page), or nullptr when the page id is outside the
// cache (flagged when `report`; a negative id was flagged by kv_page). Such a token is never read;
// it counts as a masked key.
template <bool KV8>
__device__ __forceinline__ const char* kv_row_on(const mla_decode_params& p, int page, int j, bool report) {
    if (page < 0 || page >= p.num_pages) {
        if (p.error_flag && report) atomicOr(p.error_flag, MLA_DECODE_ERR_PAGE_ID);
        return nullptr;
    }
    const int64_t tok = (int64_t)page * p.kv_stride_page + (int64_t)(j & ((1 << p.page_size_log2) - 1)) * kD;
    return static_cast<const char*>(p.kv) + tok * (KV8 ? 1 : 2);
}

// Byte address of KV token j of work w, or nullptr when its page cannot be read: page-table index
// or page id out of range (flagged when `report`).
template <bool KV8>
__device__ __forceinline__ const char* kv_row(const mla_decode_params& p, const mla_dec::Work& w, int j, bool report) {
    return kv_row_on<KV8>(p, kv_page(p, w, j, report), j, report);
}

// The page of one loader token of a later tile, looked up ahead (docs/kernels.md, "page
// lookups a tile ahead"): fetch() issues the page-table load and returns at once, the value is
// first used when that tile's copies are issued, so the load's latency is hidden behind the MMAs
// of the tiles in between instead of stalling the warpgroup (a page-table read costs an L2 round
// trip). `page` is -1 for a token past the work's end or a tile past n_tiles.
struct PagePrefetch {
    int page = -1;
    __device__ __forceinline__ void fetch(const mla_decode_params& p, const mla_dec::Work& w, int tile, int n_tiles,
                                          int token, bool report) {
        const int j = w.tok_begin + tile * kTN + token;
        page = (tile < n_tiles && j < w.tok_end) ? kv_page(p, w, j, report) : -1;
    }
};

// cp.async loads of one 64-token tile of work w into a ring slot by 64 TPT loader threads (lt = 0
// .. 64 TPT - 1: token lt / TPT, 16-byte chunks lt % TPT + TPT k, k < K): bf16 KV into the
// swizzled layout, fp8 KV as raw 576-byte rows. Tokens past the work's end or on a bad page are
// zero-filled and flagged 0 in tok[64]. begin() looks the page up and writes the flag, part<K0,
// K1>() issues chunks k in [K0, K1) (a tile can be issued in pieces between other work, so no
// thread stalls long on a full load queue), commit() closes the tile's group (one per tile, even
// empty: uniform waits).
template <bool KV8, int TPT>
struct TileLoader {
    static constexpr int K = (KV8 ? kD : 2 * kD) / 16 / TPT;  // chunks per thread
    static constexpr int NP = 8 / TPT;                         // bf16: distinct swizzled slots
    const char* src = nullptr;
    uint32_t dst[KV8 ? 1 : NP];
    int nb = 0;
    bool active = false;

    // begin() looking the page up now
    __device__ __forceinline__ void begin(const mla_decode_params& p, const mla_dec::Work& w, int tile, int n_tiles,
                                          uint32_t slot, int* tok, int lt) {
        PagePrefetch pf;
        pf.fetch(p, w, tile, n_tiles, lt / TPT, lt % TPT == 0);
        begin(p, w, tile, n_tiles, slot, tok, lt, pf);
    }
    // begin() with the page looked up ahead by pf.fetch(p, w, tile, n_tiles, lt / TPT, lt % TPT == 0)
    __device__ __forceinline__ void begin(const mla_decode_params& p, const mla_dec::Work& w, int tile, int n_tiles,
                                          uint32_t slot, int* tok, int lt, const PagePrefetch& pf) {
        active = tile < n_tiles;
        if (!active) return;
        const int ld_t = lt / TPT, ld_sub = lt % TPT;
        const int j = w.tok_begin + tile * kTN + ld_t;
        place(p, j < w.tok_end ? kv_row_on<KV8>(p, pf.page, j, ld_sub == 0) : nullptr, slot, tok, lt);
    }
    // the copies' source (row, or nothing for a masked token), destination and token flag
    __device__ __forceinline__ void place(const mla_decode_params& p, const char* row, uint32_t slot, int* tok, int lt) {
        const int ld_t = lt / TPT, ld_sub = lt % TPT;
        const bool ok = row != nullptr;
        src = ok ? row + 16 * ld_sub : static_cast<const char*>(p.kv);
        nb = ok ? 16 : 0;
        if (ld_sub == 0) tok[ld_t] = ok ? 1 : 0;
        if constexpr (KV8) {
            dst[0] = slot + ld_t * kD + 16 * ld_sub;
        } else {
            // chunk q = sub + TPT k: block q / 8, swizzled 16-byte slot (q % 8) ^ (token % 8)
#pragma unroll
            for (int k = 0; k < NP; ++k)
                dst[k] = slot + uint32_t(ld_t * 128 + (((ld_sub + TPT * k) ^ (ld_t & 7)) << 4));
        }
    }
    template <int K0, int K1>
    __device__ __forceinline__ void part() const {
        if (!active) return;
#pragma unroll
        for (int k = K0; k < K1; ++k) {
            const char* s = src + (nb ? 16 * TPT * k : 0);
            if constexpr (KV8) cp_async16(dst[0] + 16 * TPT * k, s, nb);
            else cp_async16(dst[k % NP] + (k / NP) * kBlk, s, nb);
        }
    }
    __device__ __forceinline__ void commit() const { cp_commit(); }
};

// A whole tile at once (TileLoader begin, every part, commit), with the page looked up ahead
// (PagePrefetch).
template <bool KV8, int TPT = 4>
__device__ __forceinline__ void issue_tile(const mla_decode_params& p, const mla_dec::Work& w, int tile, int n_tiles,
                                           uint32_t slot, int* tok, int lt, const PagePrefetch& pf) {
    TileLoader<KV8, TPT> ld;
    ld.begin(p, w, tile, n_tiles, slot, tok, lt, pf);
    ld.template part<0, TileLoader<KV8, TPT>::K>();
    ld.commit();
}
// The same, looking the page up now.
template <bool KV8, int TPT = 4>
__device__ __forceinline__ void issue_tile(const mla_decode_params& p, const mla_dec::Work& w, int tile, int n_tiles,
                                           uint32_t slot, int* tok, int lt) {
    PagePrefetch pf;
    pf.fetch(p, w, tile, n_tiles, lt / TPT, lt % TPT == 0);
    issue_tile<KV8, TPT>(p, w, tile, n_tiles, slot, tok, lt, pf);
}

// bf16 tile `tile` of work w into ring slot `slot` by TMA (p.kv_tma: the host encoded p.kv_tmap,
// the cache as a 3-D tensor {576, page_size, num_pages} with boxes {64, min(page_size, 64), 1} and
// 128-byte swizzle, which is this file's tile layout; src/launch/decode_check.cpp). All 256 threads
// call it, 4 per token (lt = token, sub): the first token of each run of the tile on one page
// (the tile's first token, or a token at a page start; tiles start on a page boundary or, at page
// size > 64, on a 64-token boundary of one) issues the run's 9 boxes (one per 64-column block) and
// arrives with their bytes; the other 63 token threads arrive without bytes (mbarrier count 64).
// A token past the work's end or on a bad page is flagged 0 in tok[64] (its row is then zeroed
// when the tile lands: *zero bit `stage` set for its 4 threads); pages past the end are not read.
// Returns at once for a tile past n_tiles (no arrival: the loop never waits for it).
__device__ __forceinline__ void issue_tile_tma(const mla_decode_params& p, const mla_dec::Work& w, int tile,
                                               int n_tiles, int stage, uint32_t slot, int* tok, uint32_t bar,
                                               const PagePrefetch& pf, uint32_t* zero) {
    if (tile >= n_tiles) return;
    const int tid = threadIdx.x, lt = tid >> 2, sub = tid & 3;
    const int j = w.tok_begin + tile * kTN + lt;
    const char* row = j < w.tok_end ? kv_row_on<false>(p, pf.page, j, sub == 0) : nullptr;
    *zero = row != nullptr ? (*zero & ~(1u << stage)) : (*zero | (1u << stage));
    if (sub != 0) return;
    tok[lt] = row != nullptr ? 1 : 0;
    const int psz = 1 << p.page_size_log2, box_rows = min(psz, kTN);
    if (row != nullptr && (lt == 0 || (j & (psz - 1)) == 0)) {
        mbar_arrive_tx(bar, 9 * box_rows * 128);
#pragma unroll
        for (int b = 0; b < 9; ++b) tma_load_3d(slot + b * kBlk + lt * 128, p.kv_tmap, 64 * b, j & (psz - 1), pf.page, bar);
    } else {
        mbar_arrive(bar);
    }
}

// Zeroes this thread's quarter of token lt's row in a landed bf16 tile (a token flagged 0 by
// issue_tile_tma whose row the boxes filled with whatever the page holds past the work's end, or
// that no box filled): masked keys must hold finite values, since P.V multiplies them by p = 0.
__device__ __forceinline__ void zero_row_quarter(char* tile, int lt, int sub) {
#pragma unroll
    for (int b = 0; b < 9; ++b) {
        uint4* d = reinterpret_cast<uint4*>(tile + b * kBlk + lt * 128 + 32 * sub);
        d[0] = make_uint4(0, 0, 0, 0);
        d[1] = make_uint4(0, 0, 0, 0);
    }
}

// A raw fp8 tile (64 rows of 576 bytes) widened to the swizzled bf16 tile `wide`, exactly; all 256
// threads: thread (token tid / 4, sub tid % 4) converts fp8 chunks sub + 4 k into bf16 chunks
// 2 sub, 2 sub + 1 of block k.
__device__ __forceinline__ void widen_tile(const char* raw_tile, char* wide_tile, int tid) {
    const int ld_t = tid >> 2, ld_sub = tid & 3;
    const char* raw = raw_tile + ld_t * kD + 16 * ld_sub;
    char* wide = wide_tile + ld_t * 128;
    const int c0 = ((2 * ld_sub) ^ (ld_t & 7)) << 4, c1 = ((2 * ld_sub + 1) ^ (ld_t & 7)) << 4;
#pragma unroll
    for (int k = 0; k < kD / 64; ++k) {
        uint4 wv[2];
        mla_dec::fp8x16_to_bf16(*reinterpret_cast<const uint4*>(raw + 64 * k), wv);
        *reinterpret_cast<uint4*>(wide + k * kBlk + c0) = wv[0];
        *reinterpret_cast<uint4*>(wide + k * kBlk + c1) = wv[1];
    }
}

// The LSE of tile row `row` of work w: the split partial (plan's partial rows) or the caller's lse.
__device__ __forceinline__ void store_lse(const mla_decode_params& p, const mla_dec::Work& w, int row, float lse) {
    const int Hk = p.kernel_heads, tt = row / Hk, h = row % Hk;
    if (w.pql >= 0)
        p.partial_lse[(int64_t)(w.pql + tt) * Hk + h] = lse;
    else if (p.lse)
        p.lse[(int64_t)(w.qo_b + w.t0 + tt) * p.num_heads + w.g * Hk + h] = lse;
}

// The staged, normalised output rows obuf [nrows][kOPitch] fp32 of work w, written coalesced by
// all 256 threads: fp32 partial rows for a split work, `out` rows otherwise (bf16, or fp32 with
// out_fp32).
__device__ __forceinline__ void store_rows(const mla_decode_params& p, const mla_dec::Work& w, const float* obuf, int tid) {
    const int Hk = p.kernel_heads;
    if (w.pql >= 0 || p.out_fp32) {
        for (int c = tid; c < w.nrows * (kDV / 4); c += 256) {
            const int row = c / (kDV / 4), ch = c % (kDV / 4);
            const int tt = row / Hk, h = row % Hk;
            const float4 v = *reinterpret_cast<const float4*>(obuf + row * kOPitch + 4 * ch);
            float* dst = w.pql >= 0 ? p.partial_out + ((int64_t)(w.pql + tt) * Hk + h) * kDV
                                    : static_cast<float*>(p.out) + (int64_t)(w.qo_b + w.t0 + tt) * p.out_stride_token +
                                          (int64_t)(w.g * Hk + h) * p.out_stride_head;
            *reinterpret_cast<float4*>(dst + 4 * ch) = v;
        }
    } else {
        for (int c = tid; c < w.nrows * (kDV / 8); c += 256) {
            const int row = c / (kDV / 8), ch = c % (kDV / 8);
            const int tt = row / Hk, h = row % Hk;
            const float4 a = *reinterpret_cast<const float4*>(obuf + row * kOPitch + 8 * ch);
            const float4 b = *reinterpret_cast<const float4*>(obuf + row * kOPitch + 8 * ch + 4);
            const uint4 v = make_uint4(mla_dec::pack_bf16(a.x, a.y), mla_dec::pack_bf16(a.z, a.w),
                                       mla_dec::pack_bf16(b.x, b.y), mla_dec::pack_bf16(b.z, b.w));
            char* dst = static_cast<char*>(p.out) +
                        2 * ((int64_t)(w.qo_b + w.t0 + tt) * p.out_stride_token + (int64_t)(w.g * Hk + h) * p.out_stride_head) +
                        16 * ch;
            *reinterpret_cast<uint4*>(dst) = v;
        }
    }
}

// Independent accumulator chains of the S^T phase (registers: NA x NQ / 2 floats per thread).
#ifndef MLA_WG_SCHAINS16
#define MLA_WG_SCHAINS16 4
#endif
#ifndef MLA_WG_SCHAINS32
#define MLA_WG_SCHAINS32 2
#endif
template <int NQ>
constexpr int kSChains = NQ == 16 ? MLA_WG_SCHAINS16 : MLA_WG_SCHAINS32;

// A work's starting state of this thread's NQ / 4 query columns (tile rows row0 + 8 (i >> 1) +
// 2 (lane & 3) + (i & 1)): running max -inf, sum 0, causal / cprr limit, and O^T = 0.
template <int NQ>
__device__ __forceinline__ void start_columns(const mla_decode_params& p, const mla_dec::Work& w, int row0,
                                              float (&m_run)[NQ / 4], float (&l_run)[NQ / 4], int (&lim)[NQ / 4],
                                              float (&o)[8][NQ / 2]) {
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int i = 0; i < NQ / 4; ++i) {
        m_run[i] = -INFINITY;
        l_run[i] = 0.f;
        lim[i] = mla_dec::row_limit(p, w, row0 + 8 * (i >> 1) + 2 * (lane & 3) + (i & 1));
    }
#pragma unroll
    for (int mb = 0; mb < 8; ++mb)
#pragma unroll
        for (int e = 0; e < NQ / 2; ++e) o[mb][e] = 0.f;
}

// Waits for the warpgroup's S^T wgmmas and sums the NA independent accumulator chains into s.
template <int NA, int NR>
__device__ __forceinline__ void wait_sum_chains(float (&sa)[NA][NR], float (&s)[NR]) {
    wg_commit();
    wg_wait0();
#pragma unroll
    for (int a = 0; a < NA; ++a) reg_fence(sa[a]);
#pragma unroll
    for (int e = 0; e < NR; ++e) {
        s[e] = sa[0][e];
#pragma unroll
        for (int a = 1; a < NA; ++a) s[e] += sa[a][e];
    }
}

// Column (query row) totals of this thread's per-token partial sums l_run over the warpgroup's
// 64 tokens: shuffles within the warp, then red[4][NQ] (the warpgroup's exchange) behind named
// barrier bar_id. lt[i] = the total of column 8 (i >> 1) + 2 (lane & 3) + (i & 1).
template <int NQ>
__device__ __forceinline__ void column_sums(const float (&l_run)[NQ / 4], float* red, int bar_id,
                                            float (&lt)[NQ / 4]) {
    constexpr int NI = NQ / 4;
    const int lane = threadIdx.x & 31, wl = (threadIdx.x >> 5) & 3;
#pragma unroll
    for (int i = 0; i < NI; ++i) {
        float l = l_run[i];
        l += __shfl_xor_sync(0xffffffffu, l, 4);
        l += __shfl_xor_sync(0xffffffffu, l, 8);
        l += __shfl_xor_sync(0xffffffffu, l, 16);
        lt[i] = l;
    }
    if (lane < 4) {
#pragma unroll
        for (int i = 0; i < NI; ++i) red[wl * NQ + 8 * (i >> 1) + 2 * lane + (i & 1)] = lt[i];
    }
    bar_sync(bar_id, 128);
#pragma unroll
    for (int i = 0; i < NI; ++i) {
        const int col = 8 * (i >> 1) + 2 * (lane & 3) + (i & 1);
        float l = 0.f;
#pragma unroll
        for (int k = 0; k < 4; ++k) l += red[k * NQ + col];
        lt[i] = l;
    }
}

// The online softmax of one 64-token tile for a warpgroup's NQ query columns, on the S^T
// accumulator layout (this thread: tokens r0, r0 + 8 of the tile; columns 8 (i >> 1) + 2 (lane & 3)
// + (i & 1)): mask (token flags, causal limits, padding rows), scale to base-2 logits, column
// maxima met in red[4][NQ] (named barrier bar_id), p = 2^(s - m) (0 while a column has seen no
// key), l updated, P^T [NQ][64] written at p_off (bf16, or f16 when PF16) in the swizzled K-major
// layout, alpha = 2^(m_old - m_new) returned. Ends with the fence and barrier that make P^T visible
// to the warpgroup's MMAs. Every thread of the warpgroup calls it.
template <int NQ, bool PF16>
__device__ __forceinline__ void tile_softmax(char* smem, uint32_t p_off, float* red, const int* tok, int jt0,
                                             const int (&lim)[NQ / 4], float sl2, float (&s)[NQ / 2],
                                             float (&m_run)[NQ / 4], float (&l_run)[NQ / 4], float (&alpha)[NQ / 4],
                                             int bar_id) {
    constexpr int NI = NQ / 4;
    const int lane = threadIdx.x & 31, wl = (threadIdx.x >> 5) & 3;
    const int r0 = 16 * wl + (lane >> 2);
    // ---- mask, scale to base-2 logits, column (query row) maxima ----
    const int jt = jt0 + r0;
    const bool ok0 = tok[r0] != 0, ok1 = tok[r0 + 8] != 0;
    float mx[NI];
#pragma unroll
    for (int i = 0; i < NI; ++i) {
        const int e0 = 4 * (i >> 1) + (i & 1);
        const float a = (ok0 && jt <= lim[i]) ? s[e0] * sl2 : -INFINITY;
        const float b = (ok1 && jt + 8 <= lim[i]) ? s[e0 + 2] * sl2 : -INFINITY;
        s[e0] = a;
        s[e0 + 2] = b;
        mx[i] = fmaxf(a, b);
        mx[i] = fmaxf(mx[i], __shfl_xor_sync(0xffffffffu, mx[i], 4));
        mx[i] = fmaxf(mx[i], __shfl_xor_sync(0xffffffffu, mx[i], 8));
        mx[i] = fmaxf(mx[i], __shfl_xor_sync(0xffffffffu, mx[i], 16));
    }
    if (lane < 4) {
#pragma unroll
        for (int i = 0; i < NI; ++i)
            red[wl * NQ + 8 * (i >> 1) + 2 * lane + (i & 1)] = mx[i];
    }
    bar_sync(bar_id, 128);  // (B) warp maxima visible within the warpgroup
#pragma unroll
    for (int i = 0; i < NI; ++i) {
        const int col = 8 * (i >> 1) + 2 * (lane & 3) + (i & 1);
        float mn = m_run[i];
#pragma unroll
        for (int k = 0; k < 4; ++k) mn = fmaxf(mn, red[k * NQ + col]);
        alpha[i] = m_run[i] == -INFINITY ? 0.f : ex2(m_run[i] - mn);
        m_run[i] = mn;
        const int e0 = 4 * (i >> 1) + (i & 1);
        // a row with no visible key so far keeps p = 0 (no -inf - -inf)
        const float pa = mn == -INFINITY ? 0.f : ex2(s[e0] - mn);
        const float pb = mn == -INFINITY ? 0.f : ex2(s[e0 + 2] - mn);
        l_run[i] = l_run[i] * alpha[i] + pa + pb;
        const int qr = col;  // swizzle phase: p_off rows start 1024-aligned
        char* prow = smem + p_off + qr * 128 + ((r0 & 7) << 1);
        if constexpr (PF16) {
            *reinterpret_cast<__half*>(prow + (((r0 >> 3) ^ (qr & 7)) << 4)) = __float2half_rn(pa);
            *reinterpret_cast<__half*>(prow + ((((r0 >> 3) + 1) ^ (qr & 7)) << 4)) = __float2half_rn(pb);
        } else {
            *reinterpret_cast<__nv_bfloat16*>(prow + (((r0 >> 3) ^ (qr & 7)) << 4)) = __float2bfloat16_rn(pa);
            *reinterpret_cast<__nv_bfloat16*>(prow + ((((r0 >> 3) + 1) ^ (qr & 7)) << 4)) = __float2bfloat16_rn(pb);
        }
    }
    fence_proxy_async();
    bar_sync(bar_id, 128);  // (C) P^T visible to the warpgroup's MMAs
}

// O^T columns (query rows) scaled by their alpha (accumulator layout of tile_softmax).
template <int NQ>
__device__ __forceinline__ void scale_o(float (&o)[8][NQ / 2], const float (&alpha)[NQ / 4]) {
#pragma unroll
    for (int mb = 0; mb < 8; ++mb)
#pragma unroll
        for (int i = 0; i < NQ / 4; ++i) {
            const int e0 = 4 * (i >> 1) + (i & 1);
            o[mb][e0] *= alpha[i];
            o[mb][e0 + 2] *= alpha[i];
        }
}

// One 64-token tile of a warpgroup's NQ query rows: S^T = K . Q^T (A = tile at kt_off, B = Q rows
// through dQ), the online softmax (tile_softmax: P^T bf16 at p_off), then
// O^T = O^T * alpha + V^T . P^T. Every thread of the warpgroup calls it.
// kt_off, p_off: byte offsets in shared memory (1024-aligned).
template <int N, int NQ>
__device__ __forceinline__ void tile_mma(char* smem, uint32_t sbase, uint32_t kt_off, uint32_t p_off, float* red,
                                         const int* tok, int jt0, const int (&lim)[NQ / 4], float sl2,
                                         float (&m_run)[NQ / 4], float (&l_run)[NQ / 4], float (&o)[8][NQ / 2],
                                         uint64_t dQ, int bar_id) {
    constexpr int NR = NQ / 2, NI = NQ / 4;
    const uint64_t dP = sw128_desc(sbase + p_off, 16, 1024);
    // ---- S^T = K . Q^T over 576 dims, in NA independent accumulator chains (k-step kk goes to
    // chain kk % NA): consecutive wgmmas then do not wait on each other's results ----
    constexpr int NA = kSChains<NQ>;
    float sa[NA][NR];
#pragma unroll
    for (int a = 0; a < NA; ++a)
#pragma unroll
        for (int e = 0; e < NR; ++e) sa[a][e] = 0.f;
    const uint64_t dK = sw128_desc(sbase + kt_off, 16, 1024);
#pragma unroll
    for (int a = 0; a < NA; ++a) reg_fence(sa[a]);
    wg_fence();
#pragma unroll
    for (int kk = 0; kk < ((MLA_WG_ABLATE & 2) ? 0 : kD / 16); ++kk) {
        const int kb = kk >> 2, k4 = kk & 3;
        wgmma<NQ, 0>(sa[kk % NA], dK + uint64_t((kb * kBlk + k4 * 32) >> 4),
                     dQ + uint64_t((kb * N * 128 + k4 * 32) >> 4), kk >= NA);
    }
    float s[NR];
    wait_sum_chains(sa, s);

    float alpha[NI];
    tile_softmax<NQ, false>(smem, p_off, red, tok, jt0, lim, sl2, s, m_run, l_run, alpha, bar_id);

    // ---- O^T = O^T * alpha + V^T . P^T over this tile's 64 tokens ----
    scale_o<NQ>(o, alpha);
    const uint64_t dV = sw128_desc(sbase + kt_off, 1024, 1024);
#pragma unroll
    for (int mb = 0; mb < 8; ++mb) reg_fence(o[mb]);
    wg_fence();
    // token step outer, dim block inner: 8 independent accumulators between dependent wgmmas
#pragma unroll
    for (int kt = 0; kt < ((MLA_WG_ABLATE & 1) ? 0 : kTN / 16); ++kt)
#pragma unroll
        for (int mb = 0; mb < 8; ++mb)
            wgmma<NQ, 1>(o[mb], dV + uint64_t((mb * kBlk + kt * 2048) >> 4), dP + uint64_t((kt * 32) >> 4), 1);
    wg_commit();
    wg_wait0();
#pragma unroll
    for (int mb = 0; mb < 8; ++mb) reg_fence(o[mb]);
}

template <int N, bool Q8, bool KV8>
__device__ __forceinline__ void decode_wg_body(const mla_decode_params& p, char* smem) {
    using C = Cfg<N, KV8>;
    constexpr int NQ = C::NQ, NR = NQ / 2, NI = NQ / 4;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, wg = warp >> 2, wl = warp & 3;
    if (!launch_ok(p, smem, C::SMEM)) return;
    const uint32_t sbase = smem_u32(smem);
    float* red = reinterpret_cast<float*>(smem + C::OFF_RED);  // [NC][4 warps][NQ]
    int* tokok = reinterpret_cast<int*>(smem + C::OFF_TOK);    // [STAGES][64]
    const bool mma = wg < C::NC;

    const float qsc = p.q_scale ? *p.q_scale : 1.0f;
    const float kvsc = p.kv_scale ? *p.kv_scale : 1.0f;
    const float sl2 = p.softmax_scale * qsc * kvsc * kLog2e;

    // bf16 KV by TMA (p.kv_tma, set by the host where the table row says launch_kv_tma 1 and the
    // cache allows a tensor map; the map 64-byte aligned in the parameter space, decode_params.h):
    // one mbarrier per ring slot, count 64 (issue_tile_tma). `phase`
    // bit s: the parity of slot s's next fill; `zero` bit s: this thread's token row of slot s
    // is zeroed when it lands. Else cp.async, one commit group per tile.
    __shared__ __align__(8) uint64_t kv_bar[C::STAGES];
    const bool tma = !KV8 && p.kv_tma != 0 && (reinterpret_cast<uintptr_t>(p.kv_tmap) & 63) == 0;
    const uint32_t bar0 = smem_u32(kv_bar);
    uint32_t phase = 0, zero = 0;
    if (tma) {
        if (tid < C::STAGES) mbar_init(bar0 + 8 * tid, 64);
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }

    const int w_begin = p.work_indptr[blockIdx.x], w_end = p.work_indptr[blockIdx.x + 1];
    for (int wi = w_begin; wi < w_end; ++wi) {
        mla_dec::Work w;
        if (!mla_dec::load_work(p, wi, N, w)) continue;
        const int n_tiles = w.tok_end > w.tok_begin ? (w.tok_end - w.tok_begin + kTN - 1) / kTN : 0;

        fence_proxy_async();  // this thread's generic accesses of the ring before the next TMA writes
        __syncthreads();  // the previous work's epilogue is done with shared memory (and mbarrier init)
        load_q<N, Q8>(p, w, smem, sbase, C::OFF_Q, tid);  // rows past nrows zero

        // ---- KV tiles: ring slot tile % STAGES ----
        auto issue_pf = [&](int tile, const PagePrefetch& pg) {
            const int stage = tile % C::STAGES;
            const uint32_t slot = sbase + C::OFF_KV + stage * (KV8 ? kRaw8 : kTile);
            if (tma)
                issue_tile_tma(p, w, tile, n_tiles, stage, slot, tokok + stage * kTN, bar0 + 8 * stage, pg, &zero);
            else
                issue_tile<KV8>(p, w, tile, n_tiles, slot, tokok + stage * kTN, tid, pg);
        };
#pragma unroll
        for (int s = 0; s < C::STAGES - 1; ++s) {
            PagePrefetch pg;
            pg.fetch(p, w, s, n_tiles, tid >> 2, (tid & 3) == 0);
            issue_pf(s, pg);
        }
        // the page of the tile the loop issues next, looked up one tile ahead
        PagePrefetch pf;
        pf.fetch(p, w, C::STAGES - 1, n_tiles, tid >> 2, (tid & 3) == 0);

        // ---- per-thread state of the MMA warpgroups: columns (query rows) 8 j + 2 (lane & 3) + e ----
        float m_run[NI], l_run[NI], o[8][NR];
        int lim[NI];
        start_columns<NQ>(p, w, wg * NQ, m_run, l_run, lim, o);

        const uint64_t dQ = sw128_desc(sbase + C::OFF_Q + wg * NQ * 128, 16, 1024);
        const int r0 = 16 * wl + (lane >> 2);  // this thread's output dims r0, r0 + 8 of a block

        auto issue_ahead = [&](int tile) {  // tile's copies with pf's page; then the next tile's page
            issue_pf(tile, pf);
            pf.fetch(p, w, tile + 1, n_tiles, tid >> 2, (tid & 3) == 0);
        };
        for (int tile = 0; tile < n_tiles; ++tile) {
            const int stage = tile % C::STAGES;
            uint32_t kt_off;
            if (!tma) {
                cp_wait<C::STAGES - 2>();
            } else {
                if (tile == 0) cp_wait<0>();  // Q (cp.async)
                mbar_wait(bar0 + 8 * stage, (phase >> stage) & 1);  // the tile's boxes landed
                phase ^= 1u << stage;
                if ((zero >> stage) & 1) zero_row_quarter(smem + C::OFF_KV + stage * kTile, tid >> 2, tid & 3);
            }
            if constexpr (!KV8) {
                fence_proxy_async();  // cp.async / TMA data, zeroed rows (and Q) -> the MMA's async proxy
                __syncthreads();      // (A) tile landed for all; the previous slot is free
                issue_ahead(tile + C::STAGES - 1);
                kt_off = C::OFF_KV + stage * kTile;
            } else {
                __syncthreads();  // (A) raw tile landed; the widened tile is free
                issue_ahead(tile + C::STAGES - 1);
                widen_tile(smem + C::OFF_KV + stage * kRaw8, smem + C::OFF_KVB, tid);
                fence_proxy_async();
                __syncthreads();  // (A') widened tile visible to the MMAs
                kt_off = C::OFF_KVB;
            }
            if (!mma || (MLA_WG_ABLATE & 4)) continue;

            tile_mma<N, NQ>(smem, sbase, kt_off, C::OFF_P + wg * NQ * 128, red + wg * 4 * NQ, tokok + stage * kTN,
                            w.tok_begin + tile * kTN, lim, sl2, m_run, l_run, o, dQ, 1 + wg);
        }
        cp_wait<0>();
        __syncthreads();  // every MMA done; the ring is idle and becomes the output staging

        // ---- epilogue: o = O / l * kv_scale (0 if no key), lse = (m + log2 l) ln 2 ----
        float* obuf = reinterpret_cast<float*>(smem + C::OFF_KV);  // [N][kOPitch]
        if (mma) {
            float inv[NI], lt[NI];
            column_sums<NQ>(l_run, red + wg * 4 * NQ, 1 + wg, lt);
#pragma unroll
            for (int i = 0; i < NI; ++i) inv[i] = lt[i] > 0.f ? kvsc / lt[i] : 0.f;
#pragma unroll
            for (int mb = 0; mb < 8; ++mb)
#pragma unroll
                for (int i = 0; i < NI; ++i) {
                    const int col = wg * NQ + 8 * (i >> 1) + 2 * (lane & 3) + (i & 1);
                    const int e0 = 4 * (i >> 1) + (i & 1);
                    const int dim = 64 * mb + r0;
                    obuf[col * kOPitch + dim] = o[mb][e0] * inv[i];
                    obuf[col * kOPitch + dim + 8] = o[mb][e0 + 2] * inv[i];
                }
            if (wl == 0 && lane < 4) {
#pragma unroll
                for (int i = 0; i < NI; ++i) {
                    const int row = wg * NQ + 8 * (i >> 1) + 2 * lane + (i & 1);
                    if (row < w.nrows) store_lse(p, w, row, lt[i] > 0.f ? (m_run[i] + __log2f(lt[i])) * kLn2 : -INFINITY);
                }
            }
        }
        __syncthreads();  // staged output visible
        store_rows(p, w, obuf, tid);
    }
}

// ---- fp8 KV, M = 16: ping-pong warpgroups ----
// Warpgroup g runs tiles g, g + 2, ...: its 128 threads load a tile's fp8 rows straight into
// registers (2 threads per token, 18 x 16 bytes each; one page lookup per thread), widen them into
// the warpgroup's own bf16 tile, issue the loads of its next tile, then run tile_mma on all N
// rows with its own O^T, m, l. One warpgroup's widening and softmax overlap the other's MMAs, and
// every thread keeps one tile of loads in flight. At the end the two (m, l, O^T) merge:
// m = max(m0, m1), l = l0 2^(m0-m) + l1 2^(m1-m), O = (O0 2^(m0-m) + O1 2^(m1-m)) / l.
template <int N>
struct CfgPP {
    static constexpr int OFF_Q = 0;
    static constexpr int OFF_W = N * 1152;               // 2 widened tiles
    static constexpr int OFF_P = OFF_W + 2 * kTile;      // 2 x P^T [N][64]
    static constexpr int OFF_RED = OFF_P + 2 * N * 128;  // 2 x [4][N]
    static constexpr int OFF_TOK = OFF_RED + 2 * 16 * N; // 2 x [64]
    static constexpr int OFF_MRG = OFF_TOK + 2 * kTN * 4; // [warpgroup][m, l][N] floats
    static constexpr int SMEM = OFF_MRG + 2 * 2 * 4 * N;
    static_assert(SMEM == mla_decode_wg_smem_bytes(N, true), "smem layout and formula disagree");
    static_assert(N * kOPitch * 4 <= 2 * kTile, "output staging does not fit the tiles");
    static_assert(OFF_W % 1024 == 0 && OFF_P % 1024 == 0 && (N * 128) % 1024 == 0, "swizzle atoms");
};

// The end of a ping-pong work: each warpgroup's (m, l, O^T) over its own tiles merge
// (m = max(m0, m1), l = l0 2^(m0-m) + l1 2^(m1-m), O = (O0 2^(m0-m) + O1 2^(m1-m)) kv_scale / l;
// l = 0 gives o = 0 and lse = -inf), staged in obuf [N][kOPitch] and written (store_lse,
// store_rows). red: the warpgroup's [4][N] exchange; mrg: [2][m | l][N]. All 256 threads call it;
// the caller has synchronised both warpgroups' MMAs. VPERM: O^T rows are the permuted output dims
// of the register-sourced kernels (decode_ra.cuh), else 64 mb + row.
template <int N, bool VPERM>
__device__ __forceinline__ void pp_epilogue(const mla_decode_params& p, const mla_dec::Work& w, float* obuf, float* red,
                                            float* mrg, const float (&m_run)[N / 4], const float (&l_run)[N / 4],
                                            const float (&o)[8][N / 2], float kvsc) {
    constexpr int NQ = N, NI = NQ / 4;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, wg = warp >> 2, wl = warp & 3;
    float lt[NI];
    column_sums<NQ>(l_run, red, 1 + wg, lt);
    if (wl == 0 && lane < 4) {
#pragma unroll
        for (int i = 0; i < NI; ++i) {
            const int col = 8 * (i >> 1) + 2 * lane + (i & 1);
            mrg[(wg * 2 + 0) * N + col] = m_run[i];
            mrg[(wg * 2 + 1) * N + col] = lt[i];
        }
    }
    __syncthreads();  // both warpgroups' (m, l) visible
    float fac[NI], mt[NI];
#pragma unroll
    for (int i = 0; i < NI; ++i) {
        const int col = 8 * (i >> 1) + 2 * (lane & 3) + (i & 1);
        const float mo = mrg[((wg ^ 1) * 2 + 0) * N + col], lo = mrg[((wg ^ 1) * 2 + 1) * N + col];
        const float m = fmaxf(m_run[i], mo);
        const float sme = m_run[i] == -INFINITY ? 0.f : ex2(m_run[i] - m);
        const float sot = mo == -INFINITY ? 0.f : ex2(mo - m);
        const float l = lt[i] * sme + lo * sot;
        fac[i] = l > 0.f ? sme * kvsc / l : 0.f;
        mt[i] = m;
        lt[i] = l;
    }
    const int r0 = 16 * wl + (lane >> 2);
    for (int pass = 0; pass < 2; ++pass) {
        if (pass == wg) {
#pragma unroll
            for (int mb = 0; mb < 8; ++mb)
#pragma unroll
                for (int i = 0; i < NI; ++i) {
                    const int col = 8 * (i >> 1) + 2 * (lane & 3) + (i & 1);
                    const int e0 = 4 * (i >> 1) + (i & 1);
                    // output dims of o[mb][e0] and o[mb][e0 + 2]: 64 mb + r0 and + 8, or with
                    // VPERM (decode_ra.cuh) 16 (8 wl + lane / 4) + 2 mb and + 1
                    float* d = obuf + col * kOPitch + (VPERM ? 16 * (8 * wl + (lane >> 2)) + 2 * mb : 64 * mb + r0);
                    const float a = o[mb][e0] * fac[i], b = o[mb][e0 + 2] * fac[i];
                    d[0] = pass ? d[0] + a : a;
                    d[VPERM ? 1 : 8] = pass ? d[VPERM ? 1 : 8] + b : b;
                }
        }
        __syncthreads();
    }
    if (wg == 0 && wl == 0 && lane < 4) {
#pragma unroll
        for (int i = 0; i < NI; ++i) {
            const int row = 8 * (i >> 1) + 2 * lane + (i & 1);
            if (row < w.nrows) store_lse(p, w, row, lt[i] > 0.f ? (mt[i] + __log2f(lt[i])) * kLn2 : -INFINITY);
        }
    }
    store_rows(p, w, obuf, tid);
}

template <int N, bool Q8>
__device__ __forceinline__ void decode_wg_pp_body(const mla_decode_params& p, char* smem) {
    using C = CfgPP<N>;
    constexpr int NQ = N, NR = NQ / 2, NI = NQ / 4;
    const int tid = threadIdx.x, warp = tid >> 5, wg = warp >> 2;
    const int wt = tid & 127;
    if (!launch_ok(p, smem, C::SMEM)) return;
    const uint32_t sbase = smem_u32(smem);
    float* red = reinterpret_cast<float*>(smem + C::OFF_RED) + wg * 4 * NQ;
    int* tok = reinterpret_cast<int*>(smem + C::OFF_TOK) + wg * kTN;
    float* mrg = reinterpret_cast<float*>(smem + C::OFF_MRG);  // [wg][m | l][N]
    const uint32_t w_off = C::OFF_W + wg * kTile, p_off = C::OFF_P + wg * N * 128;

    const float qsc = p.q_scale ? *p.q_scale : 1.0f;
    const float kvsc = p.kv_scale ? *p.kv_scale : 1.0f;
    const float sl2 = p.softmax_scale * qsc * kvsc * kLog2e;
    // loader: token ld_t, 16-byte chunks ld_sub + 2 k (k < 18) of its 576-byte row
    const int ld_t = wt >> 1, ld_sub = wt & 1;

    const int w_begin = p.work_indptr[blockIdx.x], w_end = p.work_indptr[blockIdx.x + 1];
    for (int wi = w_begin; wi < w_end; ++wi) {
        mla_dec::Work w;
        if (!mla_dec::load_work(p, wi, N, w)) continue;
        const int n_tiles = w.tok_end > w.tok_begin ? (w.tok_end - w.tok_begin + kTN - 1) / kTN : 0;

        // ---- register loads of one tile (this thread's token and chunks); bad pages never read ----
        uint4 pre[kD / 32];
        bool pre_ok = false;
        auto load = [&](int tile) {
            const char* src = nullptr;
            if (tile < n_tiles) {
                const int j = w.tok_begin + tile * kTN + ld_t;
                if (j < w.tok_end) src = kv_row<true>(p, w, j, ld_sub == 0);
            }
            pre_ok = src != nullptr;
            if (pre_ok) src += 16 * ld_sub;
#pragma unroll
            for (int k = 0; k < kD / 32; ++k)
                pre[k] = pre_ok ? __ldcs(reinterpret_cast<const uint4*>(src + 32 * k)) : make_uint4(0, 0, 0, 0);
        };
        load(wg);  // first tile of this warpgroup, in flight while Q lands

        __syncthreads();  // the previous work's epilogue is done with shared memory
        load_q<N, Q8>(p, w, smem, sbase, C::OFF_Q, tid);  // rows past nrows zero
        if constexpr (!Q8) cp_wait<0>();
        fence_proxy_async();
        __syncthreads();  // Q visible to both warpgroups' MMAs

        float m_run[NI], l_run[NI], o[8][NR];
        int lim[NI];
        start_columns<NQ>(p, w, 0, m_run, l_run, lim, o);
        const uint64_t dQ = sw128_desc(sbase + C::OFF_Q, 16, 1024);

        // widened chunk c of token ld_t: block k / 2, chunks 2 ld_sub + 4 (k & 1) and + 1
        char* wide = smem + w_off + ld_t * 128;
        const int ce = ((2 * ld_sub) ^ (ld_t & 7)) << 4, ce1 = ((2 * ld_sub + 1) ^ (ld_t & 7)) << 4;
        const int co = ((2 * ld_sub + 4) ^ (ld_t & 7)) << 4, co1 = ((2 * ld_sub + 5) ^ (ld_t & 7)) << 4;
        for (int tile = wg; tile < n_tiles; tile += 2) {
            bar_sync(1 + wg, 128);  // the warpgroup's previous MMAs are done with its tile and P^T
#pragma unroll
            for (int k = 0; k < kD / 32; ++k) {
                uint4 wv[2];
                mla_dec::fp8x16_to_bf16(pre[k], wv);
                char* d = wide + (k >> 1) * kBlk;
                *reinterpret_cast<uint4*>(d + ((k & 1) ? co : ce)) = wv[0];
                *reinterpret_cast<uint4*>(d + ((k & 1) ? co1 : ce1)) = wv[1];
            }
            if (ld_sub == 0) tok[ld_t] = pre_ok ? 1 : 0;
            fence_proxy_async();
            bar_sync(1 + wg, 128);  // widened tile and flags visible to the warpgroup
            load(tile + 2);         // next tile of this warpgroup: in flight during the MMAs
            if (!(MLA_WG_ABLATE & 4))
                tile_mma<N, NQ>(smem, sbase, w_off, p_off, red, tok, w.tok_begin + tile * kTN, lim, sl2, m_run,
                                l_run, o, dQ, 1 + wg);
        }
        __syncthreads();  // both warpgroups' MMAs done: the tiles become the output staging

        // ---- merge the two warpgroups, normalise, stage, write ----
        pp_epilogue<N, false>(p, w, reinterpret_cast<float*>(smem + C::OFF_W), red, mrg, m_run, l_run, o, kvsc);
    }
}

// The table's (M, dtypes) -> the ping-pong body (fp8 KV, M <= 32) or the shared-ring body.
template <int M, bool KV8>
struct IsPingPong {
    static constexpr bool value = mla_decode_wg_pingpong(M, KV8);
};
template <int M, bool Q8, bool KV8>
__device__ __forceinline__ void decode_wg_dispatch(const mla_decode_params& p, char* smem) {
    if constexpr (IsPingPong<M, KV8>::value) decode_wg_pp_body<M, Q8>(p, smem);
    else decode_wg_body<M, Q8, KV8>(p, smem);
}

}  // namespace mla_wg

// Defines extern "C" kernel NAME of the wgmma families: 256 threads, one CTA per SM, dynamic
// shared memory 1024-byte aligned (the swizzle atoms; launch_ok checks it), running
// BODY(p, smem) (a template instance, hence variadic).
#define MLA_DECODE_SM90_KERNEL(NAME, ...)                                                         \
    extern "C" __global__ void __launch_bounds__(256, 1)                                          \
        NAME(const __grid_constant__ mla_decode_params p) {                                       \
        extern __shared__ __align__(1024) char smem[];                                            \
        __VA_ARGS__(p, smem);                                                                     \
    }

// Defines the extern "C" kernel mla_decode_wg_<QN>_<KVN>_m<M>.
#define MLA_DECODE_WG_KERNEL(QN, KVN, Q8, KV8, M) \
    MLA_DECODE_SM90_KERNEL(mla_decode_wg_##QN##_##KVN##_m##M, mla_wg::decode_wg_dispatch<M, Q8, KV8>)
