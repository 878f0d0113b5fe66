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

// Measurement variants (session 11, shipped 0): MLA_WG_BLK_SLEEP=N: the producer backs off N ns
// between polls of an empty barrier; MLA_WG_BLK_TILEBAR=1: one full barrier per tile in flight
// (count 9, tile t at t % 4, aliasing the first four position barriers) instead of one per block,
// so the MMA warpgroup waits once per tile.
#ifndef MLA_WG_BLK_SLEEP
#define MLA_WG_BLK_SLEEP 0
#endif
#ifndef MLA_WG_BLK_TILEBAR
#define MLA_WG_BLK_TILEBAR 0
#endif

__device__ __forceinline__ bool mbar_try(uint32_t bar, uint32_t parity) {
    uint32_t ok;
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(ok)
        : "r"(bar), "r"(parity)
        : "memory");
    return ok != 0;
}

struct BlkCfg {
    static constexpr int N = 16, NB = MLA_DECODE_WG_BLOCKS;
    static constexpr int OFF_Q = 0;
    static constexpr int OFF_KV = N * 1152;
    static constexpr int OFF_P = OFF_KV + NB * kBlk;
    static constexpr int OFF_RED = OFF_P + N * 128;
    static constexpr int OFF_TOK = OFF_RED + 16 * N;  // [4][64] token flags, tile t at t % 4
    static constexpr int OFF_BAR = OFF_TOK + 4 * kTN * 4;  // full[NB], empty[NB]
    static constexpr int SMEM = OFF_BAR + 2 * 8 * NB;
    static_assert(SMEM == mla_decode_wg_blk_smem_bytes(N), "smem layout and formula disagree");
    static_assert(SMEM <= 232448 - 1024, "more than 227 KB of shared memory with the ring body's static mbarriers");
    static_assert(NB >= 18 && NB <= 32, "a tile's 9 blocks twice over, and one bit per position");
    static_assert(N * kOPitch * 4 <= NB * kBlk, "output staging does not fit the ring");
    static_assert(OFF_KV % 1024 == 0 && OFF_P % 1024 == 0, "swizzle atoms");
};

// The ring position of block b of a work's tile t.
__device__ __forceinline__ int blk_pos(int t, int b) { return (9 * t + b) % BlkCfg::NB; }

// Producer (one warp): the tile's page runs, looked up by lanes r < 64 / run rows (run r's first
// token; -1 past the work's end or past n_tiles; a bad page-table index is flagged here).
__device__ __forceinline__ int blk_run_page(const mla_decode_params& p, const mla_dec::Work& w, int tile, int n_tiles,
                                            int lane, int run_rows) {
    const int j = w.tok_begin + tile * kTN + lane * run_rows;
    return (lane * run_rows < kTN && tile < n_tiles && j < w.tok_end) ? kv_page(p, w, j, true) : -1;
}

// Producer: issues tile `tile` of work w, whose runs' pages are `page` (lane r: run r), into the
// ring; writes the tile's token flags to tok[64] first.
__device__ __forceinline__ void blk_issue_tile(const mla_decode_params& p, const mla_dec::Work& w, int tile,
                                               int page, int run_rows, uint32_t ring, uint32_t full0, uint32_t empty0,
                                               uint32_t& ph, uint32_t& used, int* tok, int lane, uint32_t tbar) {
    const int psz = 1 << p.page_size_log2;
    const int nruns = kTN / run_rows;
    const int j = w.tok_begin + tile * kTN + lane * run_rows;
    // a run is read when its first token is in the work and its page id is inside the cache
    const bool run_ok = lane < nruns && page >= 0 && j < w.tok_end && kv_row_on<false>(p, page, j, true) != nullptr;
    const uint32_t okm = __ballot_sync(0xffffffffu, run_ok);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const int lt = lane + 32 * h;
        tok[lt] = (((okm >> (lt / run_rows)) & 1) && w.tok_begin + tile * kTN + lt < w.tok_end) ? 1 : 0;
    }
    __syncwarp();
    const int bytes = __popc(okm) * run_rows * 128;
#pragma unroll 1
    for (int b = 0; b < 9; ++b) {
        const int s = blk_pos(tile, b);
        if ((used >> s) & 1) {
            if (MLA_WG_BLK_SLEEP) {
                while (!mbar_try(empty0 + 8 * s, (ph >> s) & 1)) __nanosleep(MLA_WG_BLK_SLEEP);
            } else {
                mbar_wait(empty0 + 8 * s, (ph >> s) & 1);  // the MMAs that read this position are done
            }
            ph ^= 1u << s;
        }
        used |= 1u << s;
        const uint32_t fb = MLA_WG_BLK_TILEBAR ? tbar : full0 + 8 * s;
        if (lane == 0) mbar_arrive_tx(fb, bytes);  // (releases the flags with the first block)
        __syncwarp();
        if (run_ok) tma_load_3d(ring + s * kBlk + lane * run_rows * 128, p.kv_tmap, 64 * b, j & (psz - 1), page, fb);
    }
}

template <bool Q8>
__device__ __forceinline__ void decode_wg_blk_body(const mla_decode_params& p, char* smem) {
    using C = BlkCfg;
    constexpr int N = C::N, NQ = N, NR = NQ / 2, NI = NQ / 4, NB = C::NB;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, wl = warp & 3;
    if (!launch_ok(p, smem, C::SMEM)) return;
    const uint32_t sbase = smem_u32(smem);
    const uint32_t ring = sbase + C::OFF_KV, full0 = sbase + C::OFF_BAR, empty0 = full0 + 8 * NB;
    float* red = reinterpret_cast<float*>(smem + C::OFF_RED);  // [4 warps][NQ]
    int* tokok = reinterpret_cast<int*>(smem + C::OFF_TOK);    // [4][64]
    const bool mma = warp < 4, producer = warp == 4;

    const float qsc = p.q_scale ? *p.q_scale : 1.0f;
    const float kvsc = p.kv_scale ? *p.kv_scale : 1.0f;
    const float sl2 = p.softmax_scale * qsc * kvsc * kLog2e;
    const int run_rows = min(1 << p.page_size_log2, kTN);  // rows of a page run in a tile (a box)

    if (tid < NB) {
        mbar_init(full0 + 8 * tid, MLA_WG_BLK_TILEBAR && tid < 4 ? 9 : 1);
        mbar_init(empty0 + 8 * tid, 4);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    uint32_t ph = 0, used = 0;  // see the file comment; `used`: positions filled before (producer)
    int tile_base = 0;          // tiles of this CTA's earlier works (the flag ring's numbering)

    const int w_begin = p.work_indptr[blockIdx.x], w_end = p.work_indptr[blockIdx.x + 1];
    for (int wi = w_begin; wi < w_end; ++wi) {
        mla_dec::Work w;
        if (!mla_dec::load_work(p, wi, N, w)) continue;
        const int n_tiles = w.tiles(kTN);

        fence_proxy_async();  // this thread's generic accesses of the ring before the next TMA writes
        __syncthreads();      // the previous work's epilogue is done with shared memory (and mbarrier init)

        if (producer) {
            int page = blk_run_page(p, w, 0, n_tiles, lane, run_rows);
#pragma unroll 1
            for (int tile = 0; tile < n_tiles; ++tile) {
                const int next = blk_run_page(p, w, tile + 1, n_tiles, lane, run_rows);  // a tile ahead
                blk_issue_tile(p, w, tile, page, run_rows, ring, full0, empty0, ph, used,
                               tokok + ((tile_base + tile) & 3) * kTN, lane, full0 + 8 * ((tile_base + tile) & 3));
                page = next;
            }
        }

        // ---- warpgroup 0: per-thread state of its 16 query columns 8 j + 2 (lane & 3) + e ----
        float m_run[NI], l_run[NI], o[8][NR];
        int lim[NI];
        float* obuf = reinterpret_cast<float*>(smem + C::OFF_KV);  // [N][kOPitch], after the last tile
        if (mma) {
            load_q<N, Q8, 128>(p, w, smem, sbase, C::OFF_Q, tid);  // rows past nrows zero
            start_columns<NQ>(p, w, 0, m_run, l_run, lim, o);
            cp_wait<0>();
            fence_proxy_async();  // Q (cp.async) -> the MMAs' async proxy
            bar_sync(1, 128);
            const uint64_t dQ = sw128_desc(sbase + C::OFF_Q, 16, 1024);
            const int r0 = 16 * wl + (lane >> 2);
#pragma unroll 1
            for (int tile = 0; tile < n_tiles; ++tile) {
                const int sb = blk_pos(tile, 0);
                if (MLA_WG_BLK_TILEBAR) {
                    const int e = (tile_base + tile) & 3;
                    mbar_wait(full0 + 8 * e, (ph >> e) & 1);  // the tile's boxes landed
                    ph ^= 1u << e;
                } else {
#pragma unroll 1
                    for (int b = 0; b < 9; ++b) {
                        const int s = blk_pos(tile, b);
                        mbar_wait(full0 + 8 * s, (ph >> s) & 1);  // the block's boxes landed
                        ph ^= 1u << s;
                    }
                }
                const int* tok = tokok + ((tile_base + tile) & 3) * kTN;
                // rows flagged 0 hold whatever the ring held: zeroed (the same answer in every warp)
                if (__any_sync(0xffffffffu, tok[lane] == 0 || tok[lane + 32] == 0)) {
                    const int lt = tid >> 1, half = tid & 1;
                    if (tok[lt] == 0) {
#pragma unroll
                        for (int b = 0; b < 9; ++b) {
                            uint4* d = reinterpret_cast<uint4*>(smem + C::OFF_KV + blk_off<NB>(sb, b) + lt * 128 + 64 * half);
#pragma unroll
                            for (int c = 0; c < 4; ++c) d[c] = make_uint4(0, 0, 0, 0);
                        }
                    }
                    fence_proxy_async();
                    bar_sync(1, 128);
                }
                if (!(MLA_WG_ABLATE & 4))
                    tile_mma<N, NQ, NB>(smem, sbase, C::OFF_KV, C::OFF_P, red, tok, w.tok_begin + tile * kTN, lim,
                                        sl2, m_run, l_run, o, dQ, 1, sb);
                if (lane < 9) mbar_arrive(empty0 + 8 * blk_pos(tile, lane));  // this warp is done with the tile
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
