// decode_wg_xwork.cuh - measurement variant (off: MLA_WG_XWORK 0): the 16-row bf16-KV TMA body
// with the KV pipeline carried across work items. Warpgroup 1 (producer) walks the CTA's works and
// their tiles as one sequence (tile g of the sequence into ring slot g % STAGES), so the next work's
// first tiles are in flight while warpgroup 0 (consumer) finishes a work, writes its output and
// stages the next Q. In the ring body (decode_wgmma.cuh) the ring drains at every work boundary:
// the last tiles of a work are not followed by a refill, and the next work's first tiles are issued
// only after its epilogue (12-13 drains per CTA at b = 1536).
//
// Consumer: per work, Q by cp.async (its own 128 threads), then per tile: wait for the slot's
// mbarrier, zero the V columns of flagged rows, tile_mma, arrive on the named barrier EMPTY + slot.
// Epilogue: the normalised output staged over the dead Q region, 8 rows at a time, and written
// coalesced (store_rows_part); the ring is never output staging, so no CTA barrier between works.
// Producer: syncs on EMPTY + slot after each tile and issues tile g + STAGES of the sequence
// (issue_tile_tma_wg, 2 threads per token) from a cursor that runs ahead into the next works, the
// page looked up one tile ahead.
// Same shared-memory layout and table rows as the ring body (Cfg<16, false>). Works without tiles
// (an empty KV range) get the consumer's epilogue only (o = 0, lse = -inf).
//
// MLA_WG_XWORK: 0 (shipped) the ring body; 1 this body where the host passed a tensor map (the ring
// body otherwise); 3 this body only, the ring body compiled out of the 16-row bf16 kernel (the
// _m16_fused kernel keeps the ring body: this body has no fused reduction) (invalid,
// and may fault or hang, without a tensor map: page size below 8, or launch_kv_tma 0), to test
// whether the second body's code costs time. Measured (docs/performance.md, session 14): correct
// (gpu_check 34 of 34 with its cubin in place of the shipped one) and slower on every row; decode
// kernel at b = 64 33.5 -> 49.3 us (ncu), end to end main job 158.4 -> 167.4 us; instruction-fetch
// stalls (no_inst) 28% of its stall samples at b = 64 against 5% in the shipped kernel, with as
// many distinct SASS instructions executed. Not understood.
#pragma once
#include "decode/wg_tile.cuh"

#ifndef MLA_WG_XWORK
#define MLA_WG_XWORK 0
#endif
#if MLA_WG_XWORK != 0 && MLA_WG_XWORK != 1 && MLA_WG_XWORK != 3
#error "MLA_WG_XWORK is 0, 1 or 3"
#endif

namespace mla_wg {

// The producer's cursor over the CTA's tile sequence: the first work at index wi or later that
// loads and has tiles (load_work flags a bad work from thread 0 only: the consumer's), and its tile
// count nt; wi is left one past it.
__device__ __forceinline__ bool xwork_next_work(const mla_decode_params& p, int& wi, int w_end, mla_dec::Work& w,
                                                int& nt) {
    while (wi < w_end)
        if (mla_dec::load_work(p, wi++, 16, w) && (nt = w.tiles(kTN)) > 0) return true;
    return false;
}

// The cross-work body (this file's header). Called by every thread of the ring body's kernel once
// the slots' mbarriers (bar0 + 8 s, count 64) are initialised and fenced, before any barrier after
// that. Both warpgroups run one loop over the works and their tiles, as the ring body does (the
// first version, a separate producer loop, measured 8 us slower than the ring body on the main job;
// this one loop did not recover it, docs/performance.md session 14). Iteration g of the tile loop:
// the consumer computes tile g and arrives on EMPTY + g % STAGES; the producer syncs there and
// issues tile g + STAGES of the sequence (its cursor pw / pt, which runs ahead into the next works).
// One arrival and one sync per tile; the consumer cannot arrive twice on one id before the producer
// has synced: its arrival for tile g + STAGES follows its mbarrier wait for that tile, which the
// producer issues only after its sync for tile g.
template <bool Q8>
__device__ __forceinline__ void decode_wg_xwork_body(const mla_decode_params& p, char* smem, uint32_t sbase,
                                                      uint32_t bar0, float sl2, float kvsc) {
    using C = Cfg<16, false>;
    static_assert(C::PBUF == 2, "the one-barrier softmax writes P^T by tile parity (wg_common.cuh's PBUF)");
    constexpr int NQ = 16, NI = NQ / 4, STG = C::STAGES;
    static_assert(8 * kOPitch * 4 <= C::OFF_KV - C::OFF_Q, "half the output staging does not fit the Q region");
    const int tid = threadIdx.x, lane = tid & 31, wt = tid & 127, wl = (tid >> 5) & 3;
    const bool prod = tid >= 128;
    float* red = reinterpret_cast<float*>(smem + C::OFF_RED);  // [4 warps][NQ]
    int* tokok = reinterpret_cast<int*>(smem + C::OFF_TOK);    // [STAGES][64]
    float* obuf = reinterpret_cast<float*>(smem + C::OFF_Q);   // epilogue: 8 rows at a time over the dead Q
    const int w_begin = p.work_indptr[blockIdx.x], w_end = p.work_indptr[blockIdx.x + 1];
    __syncthreads();  // the mbarriers' initialisation before any thread uses them

    // ---- the producer's cursor: tile pt of work pw (pnt tiles; only the fields the loads read are
    // kept: b, kvi_b, tok_begin, tok_end), its page looked up ahead in pf ----
    mla_dec::Work pw;
    int pi = w_begin, pnt = 0, pt = 0;
    bool phave = false;
    PagePrefetch pf;
    auto advance = [&]() {  // the cursor to the next work with tiles
        mla_dec::Work w;
        phave = xwork_next_work(p, pi, w_end, w, pnt);
        pw.b = w.b;
        pw.kvi_b = w.kvi_b;
        pw.tok_begin = w.tok_begin;
        pw.tok_end = w.tok_end;
    };
    auto produce = [&](int gi) {  // issues sequence tile gi (the cursor's) and advances the cursor
        const int stage = gi % STG;
        issue_tile_tma_wg(p, pw, pt, pnt, sbase + C::OFF_KV + stage * kTile, tokok + stage * kTN, bar0 + 8 * stage, pf,
                          wt);
        if (++pt == pnt) {
            pt = 0;
            advance();
        }
        if (phave) pf.fetch(p, pw, pt, pnt, wt >> 1, (wt & 1) == 0);  // looked up while the slot is held
    };
    if (prod) {
        advance();
        if (phave) pf.fetch(p, pw, 0, pnt, wt >> 1, (wt & 1) == 0);
        for (int gi = 0; gi < STG && phave; ++gi) produce(gi);
    }

    const uint64_t dQ = sw128_desc(sbase + C::OFF_Q, 16, 1024);
    uint32_t phase = 0;
    int g = 0;  // sequence index of the loop's tile
    for (int wi = w_begin; wi < w_end; ++wi) {
        mla_dec::Work w;
        if (!mla_dec::load_work(p, wi, 16, w)) continue;
        const int n_tiles = w.tiles(kTN);
        float m_run[NI], l_run[NI], o[8][NQ / 2];
        int lim[NI];
        // (every thread: with the producer's copy left unset, ptxas spilled 80 bytes at 255 registers)
        start_columns<NQ>(p, w, 0, m_run, l_run, lim, o);
        if (!prod) {
            // the previous work's MMAs, column sums and output staging are done with Q and red
            bar_sync(1, 128);
            load_q<16, Q8, 128>(p, w, smem, sbase, C::OFF_Q, wt);
            cp_wait<0>();
            fence_proxy_async();  // Q (cp.async, or the widened stores) -> the MMAs' async proxy
            bar_sync(1, 128);
        }
        for (int tile = 0; tile < n_tiles; ++tile, ++g) {
            const int stage = g % STG;
            if (prod) {
                bar_sync(kWgEmpty + stage, 256);  // the consumer is done with tile g: its slot takes g + STAGES
                if (phave) produce(g + STG);
                continue;
            }
            mbar_wait(bar0 + 8 * stage, (phase >> stage) & 1);  // the tile's boxes landed
            phase ^= 1u << stage;
            const int* tk = tokok + stage * kTN;
            // rows flagged 0 hold whatever the slot held: their V columns are zeroed (uniform branch)
            if (__any_sync(0xffffffffu, tk[lane] == 0 || tk[lane + 32] == 0))
                zero_flagged_v(smem + C::OFF_KV + stage * kTile, tk, wt, 1);
            if (!(MLA_WG_ABLATE & 4))
                tile_mma<16, NQ>(smem, sbase, C::OFF_KV + stage * kTile, C::OFF_P + (g & (C::PBUF - 1)) * 16 * 128, red, tk, w.tok_begin + tile * kTN,
                                 lim, sl2, m_run, l_run, o, dQ, 1);
            fence_proxy_async();                // zeroed rows before the TMA that refills the slot
            bar_arrive(kWgEmpty + stage, 256);  // the slot is free
        }
        if (prod) continue;

        // ---- epilogue (consumer): o = O / l * kv_scale (0 if no key), lse = (m + log2 l) ln 2 ----
        float inv[NI], lt[NI];
        column_sums<NQ>(l_run, red, 1, lt);
#pragma unroll
        for (int i = 0; i < NI; ++i) inv[i] = lt[i] > 0.f ? kvsc / lt[i] : 0.f;
        if (wl == 0 && lane < 4) {
#pragma unroll
            for (int i = 0; i < NI; ++i) {
                const int row = 8 * (i >> 1) + 2 * lane + (i & 1);
                if (row < w.nrows) store_lse(p, w, row, lt[i] > 0.f ? (m_run[i] + __log2f(lt[i])) * kLn2 : -INFINITY);
            }
        }
        // rows 8 h .. 8 h + 7 staged over Q (every warp is past the last tile's S^T MMAs: barrier C)
        const int r0 = 16 * wl + (lane >> 2);
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            if (h) bar_sync(1, 128);  // the first half's stores have read obuf
#pragma unroll
            for (int ii = 0; ii < 2; ++ii) {
                const int i = 2 * h + ii, col = 2 * (lane & 3) + ii, e0 = 4 * h + ii;
#pragma unroll
                for (int mb = 0; mb < 8; ++mb) {
                    obuf[col * kOPitch + 64 * mb + r0] = o[mb][e0] * inv[i];
                    obuf[col * kOPitch + 64 * mb + r0 + 8] = o[mb][e0 + 2] * inv[i];
                }
            }
            bar_sync(1, 128);  // staged half visible
            store_rows_part<128>(p, w, obuf, wt, 8 * h, min(8, w.nrows - 8 * h));
        }
    }
}

}  // namespace mla_wg
