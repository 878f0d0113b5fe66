// decode_wg_blk.cuh - the transposed sm_90a decode body for bf16 Q and KV, 16-row tiles, KV by TMA:
// the tiles stream through a ring of 8 KB blocks instead of two whole-tile slots (session 11).
// Design and measurements: docs/kernels.md ("block ring"), docs/performance.md (session 11).
//
// Why: with two 73.7 KB slots a slot is held from the TMA issue through the load (L, ~3.3 us under
// full load) and the tile's MMAs (M, ~1.65 us), so a CTA streams at most two tiles per L + M:
// 2.45 us per tile against the ~2.2 us the HBM share of an SM allows (session 11 call 1: the kernel
// takes 152 us, its loads alone 140, and a spin of M clocks in place of the MMAs costs what the
// MMAs cost). Shared memory holds 25 blocks of a tile's 9 (Q, P^T and the rest take 22 KB), so a
// ring of blocks keeps ~2.8 tiles in flight.
//
// Ring: MLA_DECODE_WG_BLOCKS (NB) blocks of one 64-column block of a tile each (64 token rows x
// 128 B, 128-byte swizzle, the layout of decode_wgmma.cuh). Block b of a work's tile t sits at
// ring position (9 t + b) mod NB; every block has a "full" mbarrier (count 1 + the TMA bytes) and
// an "empty" one (count 4: one arrival per MMA warp once the tile's MMAs are done).
//   * Warp 4, the producer, walks the work's tiles: per tile its lanes look up the pages of the
//     tile's page runs (one per page, min(page, 64) rows; looked up a tile ahead) and write the 64
//     token flags (0: past the work's end or on a bad page, never loaded), then per block it waits
//     until the block's ring position is empty, arms the full barrier with the bytes of the valid
//     runs and issues one box per run.
//   * Warpgroup 0 loads Q and, per tile, waits for the 9 full barriers, zeroes flagged rows (P = 0
//     times a NaN is NaN in P.V), runs tile_mma on the blocks where they sit, and frees them.
//   * Warps 5-7 only take part in the work's CTA barriers and the output stores.
// At a work's end the producer stops (the ring drains) and the output is staged in the ring as in
// decode_wgmma.cuh; phases carry over from work to work (bit s of `ph`: the parity of position s's
// next completion, full for the consumer and empty for the producer).
#pragma once
#include "decode/wg_tile.cuh"

namespace mla_wg {

struct BlkCfg {
    static constexpr int N = 16, NB = MLA_DECODE_WG_BLOCKS;
    static constexpr int OFF_Q = 0;
    static constexpr int OFF_KV = N * 1152;
    static constexpr int OFF_P = OFF_KV + NB * kBlk;
    static constexpr int OFF_RED = OFF_P + N * 128;
    static constexpr int OFF_TOK = OFF_RED + 16 * N;       // [4][64] token flags, tile t at t % 4
    static constexpr int OFF_BAR = OFF_TOK + 4 * kTN * 4;  // 4 full barriers, tile t at t % 4
    static constexpr int SMEM = OFF_BAR + 4 * 8;
    static_assert(SMEM == mla_decode_wg_blk_smem_bytes(N), "smem layout and formula disagree");
    static_assert(SMEM <= 232448 - 1024, "more than 227 KB of shared memory with the ring body's static mbarriers");
    static_assert(NB >= 18 && NB <= 27, "a tile's 9 blocks twice over; at most 3 tiles (4 flag entries) in flight");
    static_assert(N * kOPitch * 4 <= NB * kBlk, "output staging does not fit the ring");
    static_assert(OFF_KV % 1024 == 0 && OFF_P % 1024 == 0, "swizzle atoms");
};

// The ring position of block b of a work's tile t.
__device__ __forceinline__ int blk_pos(int t, int b) { return (9 * t + b) % BlkCfg::NB; }

// The page of run `lane` (first token lane x run_rows) of tile `tile`: -1 past the work's end, past
// n_tiles, or for lanes past the tile's runs (a bad page-table index is flagged here).
__device__ __forceinline__ int blk_run_page(const mla_decode_params& p, const mla_dec::Work& w, int tile, int n_tiles,
                                            int lane, int run_rows) {
    const int j = w.tok_begin + tile * kTN + lane * run_rows;
    return (lane * run_rows < kTN && tile < n_tiles && j < w.tok_end) ? kv_page(p, w, j, true) : -1;
}

// The loads of one work, issued block by block in ring order by warp 0 of the MMA warpgroup (lane
// r: page run r of a tile). Block c (tile c / 9, column block c % 9) goes to ring position c % NB
// and completes on the tile's full barrier (count 9: one arrive.expect_tx per block, with the bytes
// of the tile's readable runs). Pages are looked up a tile ahead; a tile's token flags are written
// (and released by its first block's arrival) when its first block is issued.
struct BlkIssuer {
    int c = 0;        // the next block to issue
    int ta = -1;      // the tile whose blocks are being issued
    int page = -1;    // run `lane`'s page in tile ta
    int page_next = -1;
    int bytes = 0;    // bytes per block of tile ta (its readable runs)
    bool ok = false;  // run `lane` of tile ta is read

    __device__ __forceinline__ void start(const mla_decode_params& p, const mla_dec::Work& w, int n_tiles, int lane,
                                          int run_rows) {
        c = 0;
        ta = -1;
        page_next = blk_run_page(p, w, 0, n_tiles, lane, run_rows);
    }
    // Issues blocks up to (not including) c_end; tile_base + t numbers tile t's flag entry and barrier.
    __device__ __forceinline__ void issue_to(const mla_decode_params& p, const mla_dec::Work& w, int n_tiles, int c_end,
                                             int tile_base, int run_rows, uint32_t ring, uint32_t bar0, int* tokok,
                                             int lane) {
        const int psz = 1 << p.page_size_log2;
#pragma unroll 1
        for (; c < c_end; ++c) {
            const int tc = c / 9, b = c - 9 * tc;
            if (b == 0) {  // the next tile: its runs, flags and bytes; the following tile's pages
                ta = tc;
                page = page_next;
                page_next = blk_run_page(p, w, tc + 1, n_tiles, lane, run_rows);
                const int j = w.tok_begin + tc * kTN + lane * run_rows;
                ok = lane < kTN / run_rows && page >= 0 && j < w.tok_end && kv_row_on<false>(p, page, j, true) != nullptr;
                const uint32_t okm = __ballot_sync(0xffffffffu, ok);
                int* tok = tokok + ((tile_base + tc) & 3) * kTN;
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    const int lt = lane + 32 * h;
                    tok[lt] = (((okm >> (lt / run_rows)) & 1) && w.tok_begin + tc * kTN + lt < w.tok_end) ? 1 : 0;
                }
                bytes = __popc(okm) * run_rows * 128;
                __syncwarp();
            }
            const uint32_t bar = bar0 + 8 * ((tile_base + tc) & 3);
            if (lane == 0) mbar_arrive_tx(bar, bytes);  // (the first block's arrival releases the flags)
            __syncwarp();
            if (ok)
                tma_load_3d(ring + (c % BlkCfg::NB) * kBlk + lane * run_rows * 128, p.kv_tmap, 64 * b,
                            (w.tok_begin + tc * kTN + lane * run_rows) & (psz - 1), page, bar);
        }
    }
};

template <bool Q8>
__device__ __forceinline__ void decode_wg_blk_body(const mla_decode_params& p, char* smem) {
    using C = BlkCfg;
    constexpr int N = C::N, NQ = N, NR = NQ / 2, NI = NQ / 4, NB = C::NB;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, wl = warp & 3;
    if (!launch_ok(p, smem, C::SMEM)) return;
    const uint32_t sbase = smem_u32(smem);
    const uint32_t ring = sbase + C::OFF_KV, bar0 = sbase + C::OFF_BAR;
    float* red = reinterpret_cast<float*>(smem + C::OFF_RED);  // [4 warps][NQ]
    int* tokok = reinterpret_cast<int*>(smem + C::OFF_TOK);    // [4][64]
    const bool mma = warp < 4;

    const float qsc = p.q_scale ? *p.q_scale : 1.0f;
    const float kvsc = p.kv_scale ? *p.kv_scale : 1.0f;
    const float sl2 = p.softmax_scale * qsc * kvsc * kLog2e;
    const int run_rows = min(1 << p.page_size_log2, kTN);  // rows of a page run in a tile (a box)

    if (tid < 4) mbar_init(bar0 + 8 * tid, 9);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    uint32_t ph = 0;    // bit e: the parity of flag entry e's barrier's next completion
    int tile_base = 0;  // tiles of this CTA's earlier works (numbering of the flags and barriers)

    const int w_begin = p.work_indptr[blockIdx.x], w_end = p.work_indptr[blockIdx.x + 1];
    for (int wi = w_begin; wi < w_end; ++wi) {
        mla_dec::Work w;
        if (!mla_dec::load_work(p, wi, N, w)) continue;
        const int n_tiles = w.tiles(kTN);

        fence_proxy_async();  // this thread's generic accesses of the ring before the next TMA writes
        __syncthreads();      // the previous work's epilogue is done with shared memory (and mbarrier init)

        float m_run[NI], l_run[NI], o[8][NR];
        int lim[NI];
        float* obuf = reinterpret_cast<float*>(smem + C::OFF_KV);  // [N][kOPitch], after the last tile
        if (mma) {
            BlkIssuer is;
            if (warp == 0) {  // the ring's first NB blocks, then Q
                is.start(p, w, n_tiles, lane, run_rows);
                is.issue_to(p, w, n_tiles, min(NB, 9 * n_tiles), tile_base, run_rows, ring, bar0, tokok, lane);
            }
            load_q<N, Q8, 128>(p, w, smem, sbase, C::OFF_Q, tid);  // rows past nrows zero
            start_columns<NQ>(p, w, 0, m_run, l_run, lim, o);
            cp_wait<0>();
            fence_proxy_async();  // Q (cp.async) -> the MMAs' async proxy
            bar_sync(1, 128);
            const uint64_t dQ = sw128_desc(sbase + C::OFF_Q, 16, 1024);
            const int r0 = 16 * wl + (lane >> 2);
#pragma unroll 1
            for (int tile = 0; tile < n_tiles; ++tile) {
                const int e = (tile_base + tile) & 3, sb = blk_pos(tile, 0);
                mbar_wait(bar0 + 8 * e, (ph >> e) & 1);  // the tile's 9 blocks landed
                ph ^= 1u << e;
                const int* tok = tokok + e * kTN;
                // rows flagged 0 hold whatever the ring held: zeroed (the same answer in every warp)
                if (__any_sync(0xffffffffu, tok[lane] == 0 || tok[lane + 32] == 0)) {
                    const int lt = tid >> 1, half = tid & 1;
                    if (tok[lt] == 0) {
#pragma unroll
                        for (int b = 0; b < 9; ++b) {
                            uint4* d = reinterpret_cast<uint4*>(smem + C::OFF_KV + blk_off<NB>(sb, b) + lt * 128 + 64 * half);
#pragma unroll
                            for (int q = 0; q < 4; ++q) d[q] = make_uint4(0, 0, 0, 0);
                        }
                    }
                    fence_proxy_async();
                    bar_sync(1, 128);
                }
                if (!(MLA_WG_ABLATE & 4))
                    tile_mma<N, NQ, NB>(smem, sbase, C::OFF_KV, C::OFF_P, red, tok, w.tok_begin + tile * kTN, lim,
                                        sl2, m_run, l_run, o, dQ, 1, sb);
                if (9 * tile + NB < 9 * n_tiles) {  // blocks left to issue (uniform)
                    bar_sync(1, 128);  // every warp's MMAs of the tile are done: its 9 positions are free
                    if (warp == 0)
                        is.issue_to(p, w, n_tiles, min(9 * (tile + 1) + NB, 9 * n_tiles), tile_base, run_rows, ring,
                                    bar0, tokok, lane);
                }
            }

            // ---- epilogue: o = O / l * kv_scale (0 if no key), lse = (m + log2 l) ln 2 ----
            float inv[NI], lt[NI];
            column_sums<NQ>(l_run, red, 1, lt);
#pragma unroll
            for (int i = 0; i < NI; ++i) inv[i] = lt[i] > 0.f ? kvsc / lt[i] : 0.f;
#pragma unroll
            for (int mb = 0; mb < 8; ++mb)
#pragma unroll
                for (int i = 0; i < NI; ++i) {
                    const int col = 8 * (i >> 1) + 2 * (lane & 3) + (i & 1);
                    const int e0 = 4 * (i >> 1) + (i & 1);
                    const int dim = 64 * mb + r0;
                    obuf[col * kOPitch + dim] = o[mb][e0] * inv[i];
                    obuf[col * kOPitch + dim + 8] = o[mb][e0 + 2] * inv[i];
                }
            if (wl == 0 && lane < 4) {
#pragma unroll
                for (int i = 0; i < NI; ++i) {
                    const int row = 8 * (i >> 1) + 2 * lane + (i & 1);
                    if (row < w.nrows) store_lse(p, w, row, lt[i] > 0.f ? (m_run[i] + __log2f(lt[i])) * kLn2 : -INFINITY);
                }
            }
        }
        tile_base += n_tiles;
        __syncthreads();  // staged output visible (every block of the work consumed: the ring is idle)
        store_rows(p, w, obuf, tid);
    }
}

}  // namespace mla_wg
