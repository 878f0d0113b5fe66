// kv_load.cuh - the sm_90a wgmma decode kernels' KV loaders: mbarriers, bulk copies and TMA boxes
// completing on them, page-table lookups (looked up a tile ahead: PagePrefetch), 64-token tiles by
// cp.async (TileLoader, issue_tile; issue_tile_cp8, 8 threads a 128-byte line) or by TMA (issue_tile_tma: all 256 threads; issue_tile_tma_wg:
// one warpgroup, the qm TMA body, the 16-row ring body with MLA_WG_DEC and its cross-work variant),
// the zeroing of masked rows, and the exact fp8 -> bf16 widening of a raw tile. Shared-memory
// layout: decode_wgmma.cuh; measurements: docs/kernels.md, docs/performance.md.
#pragma once
// KV loads with the L2 eviction priority evict_first (createpolicy + .L2::cache_hint on the TMA
// boxes and bulk copies): measurement hook, off by default.
#ifndef MLA_KV_EVICT_FIRST
#define MLA_KV_EVICT_FIRST 0
#endif
#include "decode/wg_common.cuh"

namespace mla_wg {

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
// kCluster: with acquire semantics at cluster scope (pairs with a remote release arrival,
// cluster_pair.cuh); else the default (acquire, CTA scope).
template <bool kCluster = false>
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
    if constexpr (kCluster)
        asm volatile(
            "{\n.reg .pred done;\nWAIT_%=:\n"
            "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 done, [%0], %1;\n"
            "@!done bra WAIT_%=;\n}\n" ::"r"(bar), "r"(parity)
            : "memory");
    else
        asm volatile(
            "{\n.reg .pred done;\nWAIT_%=:\n"
            "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
            "@!done bra WAIT_%=;\n}\n" ::"r"(bar), "r"(parity)
            : "memory");
}
// Whether mbarrier bar's phase with the given parity has completed, without waiting (acquire,
// CTA scope, like mbar_wait when it returns true).
__device__ __forceinline__ bool mbar_test(uint32_t bar, uint32_t parity) {
    uint32_t done;
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
    return done != 0;
}
// `bytes` (a multiple of 16) from global src to shared dst by the bulk-copy engine, completing
// on mbarrier bar.
__device__ __forceinline__ void bulk_copy(uint32_t dst, const void* src, int bytes, uint32_t bar) {
#if MLA_KV_EVICT_FIRST
    asm volatile(
        "{\n.reg .b64 pol;\ncreatepolicy.fractional.L2::evict_first.b64 pol, 1.0;\n"
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], pol;\n}\n" ::"r"(dst),
        "l"(src), "r"(bytes), "r"(bar)
        : "memory");
#else
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst),
                 "l"(src), "r"(bytes), "r"(bar)
                 : "memory");
#endif
}

// The number of bits set in m (a compile-time block mask).
__host__ __device__ constexpr int popcount_c(unsigned m) { return m ? int(m & 1u) + popcount_c(m >> 1) : 0; }

// One box of a 3-D TMA tensor map (cuTensorMapEncodeTiled, passed in the __grid_constant__ params)
// at element coordinates (c0, c1, c2) to shared dst, completing on mbarrier bar.
__device__ __forceinline__ void tma_load_3d(uint32_t dst, const void* tmap, int c0, int c1, int c2, uint32_t bar) {
#if MLA_KV_EVICT_FIRST
    asm volatile(
        "{\n.reg .b64 pol;\ncreatepolicy.fractional.L2::evict_first.b64 pol, 1.0;\n"
        "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1, {%2, %3, %4}], [%5], pol;\n}\n" ::"r"(
            dst),
        "l"(reinterpret_cast<uint64_t>(tmap)), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
        : "memory");
#else
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(
            dst),
        "l"(reinterpret_cast<uint64_t>(tmap)), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
        : "memory");
#endif
}

// One box of a 4-D TMA tensor map at element coordinates (c0, c1, c2, c3) to shared dst, completing
// on mbarrier bar: the page boxes of p.kv_tma 2 (issue_tile_tma_tpt).
__device__ __forceinline__ void tma_load_4d(uint32_t dst, const void* tmap, int c0, int c1, int c2, int c3,
                                            uint32_t bar) {
    asm volatile(
        "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], [%6];\n" ::"r"(
            dst),
        "l"(reinterpret_cast<uint64_t>(tmap)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(bar)
        : "memory");
}

// tma_load_3d into the same shared-memory offset `dst` of both CTAs of a 2-CTA cluster (mask 0b11),
// each completing its bytes on the mbarrier at offset `bar` of that CTA (the qm pair,
// cluster_pair.cuh).
__device__ __forceinline__ void tma_load_3d_pair(uint32_t dst, const void* tmap, int c0, int c1, int c2, uint32_t bar) {
    const uint16_t mask = 3;
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
        " [%0], [%1, {%2, %3, %4}], [%5], %6;\n" ::"r"(dst),
        "l"(reinterpret_cast<uint64_t>(tmap)), "r"(c0), "r"(c1), "r"(c2), "r"(bar), "h"(mask)
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

// The two pages of a thread of issue_tile_cp8 (tokens t / 8 and t / 8 + 32 of a tile), looked up
// ahead as PagePrefetch does (MLA_WG_CP8).
struct PagePrefetch2 {
    PagePrefetch a, b;
    __device__ __forceinline__ void fetch(const mla_decode_params& p, const mla_dec::Work& w, int tile, int n_tiles,
                                          int t) {
        a.fetch(p, w, tile, n_tiles, t >> 3, (t & 7) == 0);
        b.fetch(p, w, tile, n_tiles, (t >> 3) + 32, (t & 7) == 0);
    }
};

// A bf16 tile by cp.async with 8 threads a 128-byte line (MLA_WG_CP8), all 256 threads: thread t
// copies 16-byte chunk sub = t % 8 of each 64-column block b (bytes 128 b + 16 sub of the row) of
// tokens lt = t / 8 and lt + 32, which share the swizzled slot sub ^ (lt & 7) of their 128-byte row
// (rows lt and lt + 32, 4 KB apart): 18 copies, global and shared offsets immediate. One warp's copy
// then covers 4 whole 128-byte lines (4 token rows) where TileLoader<false, 4>'s covers 8 half
// lines. Tokens past the work's end or on a bad page are zero-filled (0 source bytes; the address
// is p.kv + 128 b, as TileLoader's is p.kv) and flagged 0 in tok[64]. One commit group per tile,
// even empty (uniform waits).
__device__ __forceinline__ void issue_tile_cp8(const mla_decode_params& p, const mla_dec::Work& w, int tile,
                                               int n_tiles, uint32_t slot, int* tok, int t, const PagePrefetch2& pf) {
    if (tile < n_tiles) {
        const int lt = t >> 3, sub = t & 7;
        const uint32_t d = slot + uint32_t(lt * 128 + ((sub ^ (lt & 7)) << 4));
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int tk = lt + 32 * h;
            const int j = w.tok_begin + tile * kTN + tk;
            const char* row = j < w.tok_end ? kv_row_on<false>(p, h ? pf.b.page : pf.a.page, j, sub == 0) : nullptr;
            const bool ok = row != nullptr;
            if (sub == 0) tok[tk] = ok ? 1 : 0;
            const char* s = ok ? row + 16 * sub : static_cast<const char*>(p.kv);
            const int nb = ok ? 16 : 0;
#pragma unroll
            for (int b = 0; b < 9; ++b) cp_async16(d + uint32_t(h * 32 * 128 + b * kBlk), s + 128 * b, nb);
        }
    }
    cp_commit();
}

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
// 128-byte swizzle, which is this file's tile layout; src/launch/decode_check.cpp), by TPT threads
// per token (thread t: token lt = t / TPT, sub = t % TPT): the first token of each run of the tile
// on one page (the tile's first token, or a token at a page start; tiles start on a page boundary
// or, at page size > 64, on a 64-token boundary of one) issues the run's 9 boxes (one per 64-column
// block) and arrives with their bytes; the other 63 tokens' first threads arrive without bytes
// (mbarrier count 64; arriving per warp with a count measured no faster, session 26). A token past the work's end or on a bad page is flagged 0 in tok[64] and its
// row must be zeroed when the tile lands; pages past the end are not read. Returns at once for a
// tile past n_tiles (no arrival: the loop never waits for it). TPT = 4 (issue_tile_tma, all 256
// threads): *zero bit `stage` is set for the 4 threads of such a token; TPT = 2
// (issue_tile_tma_wg, one warpgroup): zero is unused, the consumer zeroes from the flags, and a
// token's second thread does nothing. kPair (TPT = 2; the qm pair of a 2-CTA cluster,
// cluster_pair.cuh): every arrival as above (the whole tile's bytes expected on this CTA's
// mbarrier), but only this CTA's share of a run's boxes is issued (`rank` 0: blocks 0..4, 1:
// 5..8), each multicast into both CTAs' slot. kBlocks (TPT = 2; the qm seesaw body,
// decode_qm_ss.cuh): only the 64-column blocks b with bit b set, their bytes on bar; kFlags
// false: tok is not written (the issuer of the tile's other blocks writes the flags). kCols 128
// (TPT = 2, kBlocks 0x1F; the fp8 qm body, decode_qm8.cuh): an fp8 cache whose tensor map has
// boxes of {128 bytes, min(page_size, 64), 1}: 5 boxes per run, at columns 128 b, the last one
// half past the row (its 64 out-of-bounds bytes land as zeros); the same 8 KB per block.
// p.kv_tma 2 (the row's launch_kv_tma 2, bf16 KV in pages of >= 64 tokens: the host encoded the
// 4-D map {64 columns, page_size, 9 blocks, num_pages}, decode_check.cpp): a tile is one run
// (tiles start on 64-token boundaries of a page), and token 0's thread issues one box of all 9
// blocks ({64, 64, 9, 1}, 73.7 KB) instead of 9 boxes; the same bytes, layout and arrivals. Taken
// by the whole-tile issue only (not kPair, a kBlocks subset or kCols 128: their hooks need a row
// with launch_kv_tma 1). kBlockBars (TPT = 2, whole tiles of the 3-D map; the qm TMA body with
// MLA_QMT_BLOCKBAR): bar is the first of 9 consecutive mbarriers, one per 64-column block, each
// counting the same 64 arrivals (a thread without a box arrives on all 9; an issuing one expects
// box_rows x 128 bytes on each, what its box of that block delivers: 8 KB a block over a whole
// tile), so that S can start on a tile's first blocks before its last ones land.
template <int TPT, bool kPair = false, unsigned kBlocks = 0x1FFu, bool kFlags = true, int kCols = 64,
          bool kBlockBars = false>
__device__ __forceinline__ void issue_tile_tma_tpt(const mla_decode_params& p, const mla_dec::Work& w, int tile,
                                                   int n_tiles, int stage, uint32_t slot, int* tok, uint32_t bar,
                                                   const PagePrefetch& pf, uint32_t* zero, int t, uint32_t rank = 0) {
    static_assert(!kPair || TPT == 2, "the pair issues by one warpgroup");
    static_assert(kBlocks == 0x1FFu || (TPT == 2 && !kPair), "a block subset is issued by one warpgroup");
    static_assert(kCols == 64 || (kCols == 128 && kBlocks == 0x1Fu && !kPair), "fp8 boxes: five, no pair");
    static_assert(!kBlockBars || (TPT == 2 && !kPair && kBlocks == 0x1FFu && kCols == 64), "block barriers: whole bf16 tiles");
    constexpr int kBlockCount = popcount_c(kBlocks);
    if (tile >= n_tiles || (TPT != 4 && (t & (TPT - 1)))) return;
    const int lt = t >> (TPT == 4 ? 2 : 1), sub = TPT == 4 ? t & 3 : 0;
    const int j = w.tok_begin + tile * kTN + lt;
    // (only whether the row exists is read: the boxes address the page through the map, so the bf16
    // byte offset serves an fp8 cache too)
    const char* row = j < w.tok_end ? kv_row_on<false>(p, pf.page, j, sub == 0) : nullptr;
    if (TPT == 4) *zero = row != nullptr ? (*zero & ~(1u << stage)) : (*zero | (1u << stage));
    if (sub != 0) return;
    if (kFlags) tok[lt] = row != nullptr ? 1 : 0;
    const int psz = 1 << p.page_size_log2, box_rows = min(psz, kTN);
    if (row != nullptr && (lt == 0 || (j & (psz - 1)) == 0)) {
        constexpr bool kPageBox = !kPair && kBlocks == 0x1FFu && kCols == 64 && !kBlockBars;
        if (kPageBox && p.kv_tma == 2) {
            mbar_arrive_tx(bar, 9 * kTN * 128);
            tma_load_4d(slot + lt * 128, p.kv_tmap, 0, j & (psz - 1), 0, pf.page, bar);
            return;
        }
        if constexpr (kBlockBars) {
#pragma unroll
            for (int b = 0; b < 9; ++b) {
                mbar_arrive_tx(bar + 8 * b, box_rows * 128);
                tma_load_3d(slot + b * kBlk + lt * 128, p.kv_tmap, 64 * b, j & (psz - 1), pf.page, bar + 8 * b);
            }
            return;
        }
        mbar_arrive_tx(bar, kBlockCount * box_rows * 128);
        if constexpr (kPair) {
            for (int b = rank ? 5 : 0; b < (rank ? 9 : 5); ++b)
                tma_load_3d_pair(slot + b * kBlk + lt * 128, p.kv_tmap, 64 * b, j & (psz - 1), pf.page, bar);
        } else {
#pragma unroll
            for (int b = 0; b < 9; ++b)
                if ((kBlocks >> b) & 1u)
                    tma_load_3d(slot + b * kBlk + lt * 128, p.kv_tmap, kCols * b, j & (psz - 1), pf.page, bar);
        }
    } else if constexpr (kBlockBars) {
#pragma unroll
        for (int b = 0; b < 9; ++b) mbar_arrive(bar + 8 * b);
    } else {
        mbar_arrive(bar);
    }
}
// All 256 threads, 4 per token (issue_tile_tma_tpt).
__device__ __forceinline__ void issue_tile_tma(const mla_decode_params& p, const mla_dec::Work& w, int tile,
                                               int n_tiles, int stage, uint32_t slot, int* tok, uint32_t bar,
                                               const PagePrefetch& pf, uint32_t* zero) {
    issue_tile_tma_tpt<4>(p, w, tile, n_tiles, stage, slot, tok, bar, pf, zero, threadIdx.x);
}

// The 128 threads of one warpgroup (wt = 0 .. 127), 2 per token (issue_tile_tma_tpt); the consumer
// (the qm TMA body, decode_qm_tma.cuh; the 16-row ring body with MLA_WG_DEC) zeroes masked rows
// itself (zero_v_half).
__device__ __forceinline__ void issue_tile_tma_wg(const mla_decode_params& p, const mla_dec::Work& w, int tile,
                                                  int n_tiles, uint32_t slot, int* tok, uint32_t bar,
                                                  const PagePrefetch& pf, int wt) {
    issue_tile_tma_tpt<2>(p, w, tile, n_tiles, 0, slot, tok, bar, pf, nullptr, wt);
}

// Zeroes half h (64-column blocks 4 h .. 4 h + 3, the V columns) of token lt's row in a landed bf16
// tile: what P.V reads of a masked key (a token issue_tile_tma_wg flagged 0).
__device__ __forceinline__ void zero_v_half(char* tile, int lt, int h) {
#pragma unroll
    for (int b = 0; b < 4; ++b) {
        uint4* d = reinterpret_cast<uint4*>(tile + (4 * h + b) * kBlk + lt * 128);
#pragma unroll
        for (int c = 0; c < 8; ++c) d[c] = make_uint4(0, 0, 0, 0);
    }
}

// The consumer warpgroup's side of issue_tile_tma_wg (wt = 0 .. 127, every thread calls it, on a
// warpgroup-uniform branch taken when any of the landed tile's 64 flags tok[] is 0): the V columns
// of every flagged row zeroed (2 threads per row, zero_v_half), made visible to the warpgroup's
// MMAs (proxy fence, then named barrier bar_id over its 128 threads).
__device__ __forceinline__ void zero_flagged_v(char* tile, const int* tok, int wt, int bar_id) {
    if (tok[wt >> 1] == 0) zero_v_half(tile, wt >> 1, wt & 1);
    fence_proxy_async();  // zeroed rows -> the warpgroup's P.V (async proxy)
    bar_sync(bar_id, 128);
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

}  // namespace mla_wg
