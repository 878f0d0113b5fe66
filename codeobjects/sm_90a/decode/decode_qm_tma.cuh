// decode_qm_tma.cuh - the qm kernel's body for bf16 Q and KV loaded by TMA (64-row tiles: 64 and 128
// heads), with the two warpgroups decoupled. decode_qm.cuh's body runs both warpgroups in lock
// step (two CTA barriers per tile): warpgroup 1 idles through warpgroup 0's S MMAs and softmax,
// and warpgroup 0's next S waits for warpgroup 1's P.V. Here, per 64-token tile t (ring slot
// t % 2):
//   warpgroup 0:  waits for S(t); softmax; P(t) (bf16, fragment order) into the tile's rope block
//                 (columns 512..575, read by S(t) only, so dead once S(t) is done: 8 KB, exactly
//                 P's size) and alpha(t) into a 2-deep buffer; arrives on barrier PREADY;
//                 O_0 = alpha O_0 + P . V[:, 0..255] (4 x m64n256k16, A = P from registers);
//                 when it is done, arrives on barrier EMPTY (its share of slot t is free) and
//                 issues S(t+1) = Q . K(t+1)^T (36 x m64n64k16) as soon as tile t+1 lands;
//   warpgroup 1:  syncs on PREADY; O_1 = alpha O_1 + P . V[:, 256..511]; syncs on EMPTY and issues
//                 tile t + 2's TMA boxes into slot t (2 threads per token, page looked up a tile
//                 ahead).
// So warpgroup 1's P.V runs beside warpgroup 0's P.V and next S instead of after them, and
// there is no CTA-wide barrier inside a work. PREADY and EMPTY are named barriers (bar.arrive
// by warpgroup 0, bar.sync by warpgroup 1), one pair per slot parity: a barrier id is reused two
// tiles later only after the other side has passed it (tile t + 2 is loaded only after EMPTY(t),
// which warpgroup 1 passes after PREADY(t)). Masked keys (past the work's end, bad pages) are
// zeroed in their V columns by warpgroup 0 before any P.V reads them. Shared with decode_qm.cuh's
// body: the S issue, softmax, P exchange, P.V step and epilogue (qm_common.cuh); Q staging
// (wg_common.cuh); measurements: docs/performance.md (session 8).
#pragma once
#include "decode/kv_load.cuh"
#include "decode/qm_common.cuh"
#include "decode/trace.cuh"  // the MLA_WG_TRACE measurement hook (no code when 0)

// MLA_QM_MC=1 (off: measured slower, docs/performance.md session 16 calls 7-8; correct): launched
// as clusters of two CTAs
// (mla_decode.csv launch_cluster 2), the twin plan clusters of the head-group-major plan's two head
// groups run side by side and, where their works read the same KV (pair_twins), each CTA's
// warpgroup 1 issues half of a tile's boxes, multicast into both CTAs (cluster_pair.cuh): each KV
// tile leaves the L2 once for both head groups (session 16 call 3: at 128 heads the loads alone are
// L2-throughput bound, 235-239 µs). A slot is refilled only after both CTAs released it (one
// remote arrival on the other CTA's `cfree` mbarrier each); a cluster barrier opens every work
// (the epilogue stages its output in the ring the other CTA writes into) and ends the kernel.
// Measured at 128 heads: the L2 reads halve (53.3 M → 29.6 M sectors) and the kernel is slower
// (321.8 → 334.0 µs; loads alone 235 → 255 µs): the coupled refills cost more than they save.
#ifndef MLA_QM_MC
#define MLA_QM_MC 0
#endif
#if MLA_QM_MC
#include "decode/cluster_pair.cuh"
#endif

// Measurement hooks (docs/performance.md, sessions 8 and 16): -DMLA_QMT_ABLATE=1 skips every MMA (loads,
// softmax on stale values, barriers), 2 skips the KV loads (MMAs on stale shared memory; the token
// flags set as on good pages, qmt_ablate_flags), 4 skips
// the S MMAs only. Results are then wrong; the shipped cubins are built with 0.
#ifndef MLA_QMT_ABLATE
#define MLA_QMT_ABLATE 0
#endif
// MLA_QMT_S_SLOTCONST=1 (session 17; measured in session 18: 332.4 -> 333.5 µs at 128 heads, off):
// the S issue in two copies, one per ring slot, so that the K descriptor's base is a compile-time
// offset from the (uniform) shared-memory base instead of a per-thread value moved to uniform
// registers for every MMA (two R2UR per HGMMA in the hot instance, cuobjdump).
#ifndef MLA_QMT_S_SLOTCONST
#define MLA_QMT_S_SLOTCONST 0
#endif
// MLA_QMT_EARLY_S=1 (session 17; measured in session 18: 332.4 -> 341.1 µs at 128 heads, off):
// warpgroup 0 issues S(t+1) right after P.V(t), before waiting for it, when tile t+1 has already
// landed (mbarrier test, no blocking: session 8's unconditional version made EMPTY wait for the
// load; decided once for the warpgroup, bar_red_or), so that S(t+1) follows P.V(t) in the tensor
// pipe without the wait, the EMPTY arrival and the issue in between. With MLA_QMT_ABLATE & 2 the
// early path is always taken.
#ifndef MLA_QMT_EARLY_S
#define MLA_QMT_EARLY_S 0
#endif
// MLA_QMT_ROT=d (measurement hook of session 24, 0 shipped): each work's tiles in an order rotated
// by k d tiles, k = g + qk_batch_ratio t0 the work's reader index among the head-group-major plan's
// works that read the same KV, so that those works do not read a tile at the same time (reader k
// reads tile j + k d at step j: a later reader finds it in the L2). The online softmax does not
// depend on the order; the masks follow the tile's tokens.
#ifndef MLA_QMT_ROT
#define MLA_QMT_ROT 0
#endif
// MLA_QMT_BLOCKBAR=1 (session 32, measurement build; 0 shipped): where the call passes a 3-D map
// (p.kv_tma 1: the row's launch_kv_tma 1), each ring slot has 9 mbarriers, one per 64-column
// block (issue_tile_tma_tpt's kBlockBars), and warpgroup 0 issues S(t)'s 4 MMAs of block b as soon
// as block b has landed, instead of waiting for the whole 73.7 KB tile (FlashMLA's decode waits per
// 64-column piece the same way). A page-box map (p.kv_tma 2) keeps the one-barrier body.
#ifndef MLA_QMT_BLOCKBAR
#define MLA_QMT_BLOCKBAR 0
#endif
// MLA_QMT_PGFIRST=1 (session 33, measurement build; 0 shipped): the work's start reordered so that
// the first tiles' page-table reads go out before Q's 73.7 KB: warpgroup 1 issues its two page
// reads and then arrives on kBarStart, warpgroup 0 waits there and then issues all of Q's copies
// (load_q over its 128 threads), and warpgroup 1 issues the two tiles once the pages are back.
// Session 32 (calls 7-8): the first boxes went out 4.7 µs after the work record, behind warpgroup
// 0's half of Q (4.7 MB over the grid), against 0.6 µs without the page reads.
#ifndef MLA_QMT_PGFIRST
#define MLA_QMT_PGFIRST 0
#endif
// MLA_QMT_FENCE_LATE=1 (session 33, measurement build; 0 shipped): on a tile without masked keys,
// warpgroup 0's proxy fence for its P stores (generic writes into the slot, before the TMA that
// refills it) moves from before PREADY to after its P.V's issue, in the MMAs' shadow instead of on
// the chain that holds the slot. A masked tile keeps zero_flagged_v's fence before PREADY (it
// also orders the zeroed V rows before the P.V of both warpgroups).
// MLA_QM_OUT_TOUCH (wg_tile.cuh's touch_out_row; 0 shipped) and MLA_WG_TRACE_LAST=1 (a trace build
// stamps the CTA's last work instead of its first: decode_trace.py --last; session 33).
#ifndef MLA_QM_OUT_TOUCH
#define MLA_QM_OUT_TOUCH 0
#endif
#ifndef MLA_WG_TRACE_LAST
#define MLA_WG_TRACE_LAST 0
#endif
#ifndef MLA_QMT_FENCE_LATE
#define MLA_QMT_FENCE_LATE 0
#endif
#if MLA_QMT_FENCE_LATE && MLA_QMT_EARLY_S
#error "MLA_QMT_FENCE_LATE is written for the body without MLA_QMT_EARLY_S"
#endif
#if MLA_QMT_BLOCKBAR && MLA_QM_MC
#error "MLA_QMT_BLOCKBAR does not combine with MLA_QM_MC"
#endif
#if MLA_QMT_BLOCKBAR && MLA_QMT_EARLY_S
#error "MLA_QMT_BLOCKBAR does not combine with MLA_QMT_EARLY_S (its test reads one mbarrier a slot)"
#endif
#if MLA_QMT_BLOCKBAR && MLA_QMT_S_SLOTCONST
#error "MLA_QMT_BLOCKBAR does not combine with MLA_QMT_S_SLOTCONST (its S issue has no slot copies)"
#endif
#if MLA_QMT_BLOCKBAR && defined(MLA_QM_SEESAW) && MLA_QM_SEESAW
#error "MLA_QMT_BLOCKBAR does not combine with MLA_QM_SEESAW (both take the 3-D map's calls)"
#endif
#if MLA_QMT_ROT && defined(MLA_QM_MC) && MLA_QM_MC
// the pair's two CTAs (head groups 0 and 1) would rotate differently and multicast halves of
// different tiles into each other
#error "MLA_QMT_ROT does not combine with MLA_QM_MC"
#endif

namespace mla_wg {

template <bool kBB>
struct CfgQMT {
    static constexpr int OFF_Q = 0;                     // Q, 64 rows bf16, swizzled
    static constexpr int OFF_KV = 64 * 1152;            // ring of 2 bf16 tiles; P in block 8 of each
    static constexpr int OFF_AL = OFF_KV + 2 * kTile;   // alpha [2][64]
    static constexpr int OFF_LX = OFF_AL + 2 * 64 * 4;  // l exchange [2][128][2]
    static constexpr int OFF_TOK = OFF_LX + 2 * 128 * 2 * 4;  // token flags [2][64]
    static constexpr int OFF_BAR = OFF_TOK + 2 * kTN * 4;     // mbarriers [2][NBB] (MLA_QM_MC: [2] + cfree [2])
    static constexpr int NBB = kBB ? 9 : 1;                  // mbarriers per ring slot
    static constexpr int NBAR = MLA_QM_MC ? 4 : 2 * NBB;
    static constexpr int OFF_MC = OFF_BAR + NBAR * 8;         // MLA_QM_MC: the pair's twin flag
    static constexpr int SMEM = OFF_MC + (MLA_QM_MC ? 8 : 0);
    static_assert(SMEM <= mla_decode_qm_smem_bytes(false), "more than the qm rows' launch_smem");
    static_assert(64 * kOPitch * 4 <= 2 * kTile, "output staging does not fit the ring");
    static_assert(OFF_KV % 1024 == 0 && OFF_BAR % 8 == 0, "swizzle atoms, mbarriers");
};

// MLA_QMT_ABLATE & 2 (no KV loads): the token flags of a tile as issue_tile_tma_wg sets them where
// every page is good (1 up to the work's end), so that the timing build zeroes only the rows the
// shipped one zeroes (before session 16 the flags went stale and every V row was zeroed every
// tile). Unordered against warpgroup 0's reads (no mbarrier in this build): timing only.
__device__ __forceinline__ void qmt_ablate_flags(const mla_dec::Work& w, int tile, int n_tiles, int* tok, int wt) {
    if (tile < n_tiles && (wt & 1) == 0) tok[wt >> 1] = w.tok_begin + tile * kTN + (wt >> 1) < w.tok_end ? 1 : 0;
}

// named barriers of this body (0 is __syncthreads): PREADY + parity, EMPTY + parity, warpgroup 0
constexpr int kBarPReady = 1, kBarEmpty = 3, kBarWg0 = 5, kBarStart = 6;

// MLA_WG_TRACE=2 (session 32; trace.cuh's record in dynamic shared memory, benchmarks/
// decode_trace.py --qm; 1 does not fit the qm rows' shared memory): this body's stamps on a
// CTA's first work, by warpgroup 0's thread 0 unless said: 2 the work's record read, 4 the first
// two tiles issued (warpgroup 1, thread 128), 5 Q staged, 6 + k tile k landed (its wait in
// issue_s), 14 + k tile k's P.V done (k < 8), 22 / 23 the same for the last tile, 24 the
// epilogue's start, 27 its sums exchanged, 25 its output staged, 26 the output stored; 30 + k
// warpgroup 1 (thread 128) issued tile k + 2 (the MLA_QMT_BLOCKBAR and MLA_QMT_EARLY_S paths
// take only some of these); in
// tiles k = 2, 3, 4 (40 + 10 (k - 2) + j, clock64 only): j = 0 the tile's entry, 1 S waited for,
// 2 the softmax done, 3 P and alpha stored, 4 the masked-row zeroing and the proxy fence done, 5
// PREADY arrived, 6 P.V done, 7 EMPTY arrived, 8 tile k + 1 landed, 9 S(k + 1) issued.
#if MLA_WG_TRACE
#define MLA_QMT_SUB(tile, j)                                                         \
    do {                                                                             \
        if (tr && tid == 0 && (tile) >= 2 && (tile) < 5) mla_trace::sub_stamp(40 + 10 * ((tile) - 2), j); \
    } while (0)
#else
#define MLA_QMT_SUB(tile, j) ((void)0)
#endif

// S(t) = Q . K^T's MMAs for the tile whose 9 per-block mbarriers start at `bars` (parity par),
// from the descriptors' low words qlo / klo: block B's 4 MMAs are issued once block B has landed,
// each block's behind a wgmma.fence; the caller commits them as one group.
template <bool MMA, int B = 0>
__device__ __forceinline__ void qm_s_mma_blocks(float (&sacc)[32], uint32_t qlo, uint32_t klo, uint32_t bars, uint32_t par) {
    if constexpr (B < 9) {
        mbar_wait(bars + 8 * B, par);
        wg_fence();
        if constexpr (MMA) qm_s_steps_lo<4 * B, 4 * B + 4, B == 0>(sacc, qlo, klo);
        qm_s_mma_blocks<MMA, B + 1>(sacc, qlo, klo, bars, par);
    }
}

template <int M, bool kBB = false>
__device__ __forceinline__ void decode_qm_tma_body(const mla_decode_params& p, char* smem) {
    using C = CfgQMT<kBB>;
#if MLA_WG_TRACE == 2
    static_assert(C::SMEM <= mla_trace::kDynOff, "the trace record overlaps the body's shared memory");
#endif
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, wg = warp >> 2, wl = warp & 3;
    const int wt = tid & 127;
    if (!launch_ok(p, smem, C::SMEM)) return;
    const uint32_t sbase = smem_u32(smem);
    float* alx = reinterpret_cast<float*>(smem + C::OFF_AL);  // alpha [2][64]
    float* lx = reinterpret_cast<float*>(smem + C::OFF_LX);   // l [wg][128][2]
    int* tokok = reinterpret_cast<int*>(smem + C::OFF_TOK);   // [2][64]
    const uint32_t bar0 = sbase + C::OFF_BAR;
    if (tid < 2 * C::NBB) mbar_init(bar0 + 8 * tid, 64);
#if MLA_QM_MC
    // the pair: this CTA runs plan cluster pc (cluster_pair.cuh); cfree[s] (bar0 + 16 + 8 s) counts
    // the other CTA's release of slot s
    const uint32_t ncta = cluster_nctarank(), crank = ncta == 2 ? cluster_ctarank() : 0;
    int* mcflag = reinterpret_cast<int*>(smem + C::OFF_MC);
    int pc = blockIdx.x;
    if (tid >= 2 && tid < 4) mbar_init(bar0 + 8 * tid, 1);
    if (ncta == 2) {
        const int half = gridDim.x >> 1, k = blockIdx.x >> 1;
        pc = crank ? k + half : k;
        if (tid == 0) *mcflag = pair_twins(p, k, k + half) ? 1 : 0;
    }
#endif
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#if MLA_QM_MC
    if (ncta == 2) cluster_sync();  // both CTAs' mbarriers initialised, the twin flag written
    else __syncthreads();
    const bool mc = ncta == 2 && *mcflag != 0 && p.kv_tma == 1;  // (the pair's halves: boxes of the 3-D map)
    uint32_t cphase = 0;  // warpgroup 1: bit s, the parity of cfree[s]'s next phase
#endif
    uint32_t phase = 0;  // warpgroup 0: bit s, the parity of slot s's next fill

    const mla_dec::Scales scl = mla_dec::decode_scales(p);
    const float kvsc = scl.kvsc, sl2 = scl.sl2;
    const int r0 = 16 * wl + (lane >> 2), cq = 2 * (lane & 3);  // rows r0, r0 + 8; columns cq, cq + 1
    const uint64_t dQ = sw128_desc(sbase + C::OFF_Q, 16, 1024);
    auto slot = [&](int s) { return C::OFF_KV + s * kTile; };  // byte offset of ring slot s

#if MLA_QM_MC
    const int w_begin = p.work_indptr[pc], w_end = p.work_indptr[pc + 1];
#else
    const int w_begin = p.work_indptr[blockIdx.x], w_end = p.work_indptr[blockIdx.x + 1];
#endif
    for (int wi = w_begin; wi < w_end; ++wi) {
        mla_dec::Work w;
        if (!mla_dec::load_work(p, wi, M, w)) continue;
        const int n_tiles = w.tiles(kTN);
        // the traced work (MLA_WG_TRACE builds): the CTA's first, or its last with MLA_WG_TRACE_LAST=1
        const bool tr = MLA_WG_TRACE && wi == (MLA_WG_TRACE_LAST ? w_end - 1 : w_begin);
        (void)tr;
        MLA_TRACE(tr && tid == 0, 2);
#if MLA_QMT_ROT
        const int rot = n_tiles > 0 ? ((w.g + p.qk_batch_ratio * w.t0) * MLA_QMT_ROT) % n_tiles : 0;
#else
        constexpr int rot = 0;
#endif
        // the tile of the work read at step t (t itself past the end)
        auto phys = [&](int t) { return t < n_tiles && rot ? (t + rot < n_tiles ? t + rot : t + rot - n_tiles) : t; };

        fence_proxy_async();  // this thread's generic accesses of the ring before the next TMA writes
        // the previous work's epilogue is done with shared memory (and mbarrier init): in this CTA,
        // and for a pair sharing tiles in the other one too (its boxes land in this CTA's ring)
#if MLA_QM_MC
        if (mc) cluster_sync();
        else
#endif
            __syncthreads();
        PagePrefetch pf;  // warpgroup 1: the page of the tile it issues next
        // warpgroup 1: tile `tile` into ring slot s, its page looked up in pg (a pair sharing tiles
        // issues its share, multicast into both CTAs; =2: no load, the flags as on good pages)
        auto issue = [&](int tile, int s, const PagePrefetch& pg) {
            if (MLA_QMT_ABLATE & 2) {
                qmt_ablate_flags(w, phys(tile), n_tiles, tokok + s * kTN, wt);
                return;
            }
#if MLA_QM_MC
            if (mc) {
                issue_tile_tma_tpt<2, true>(p, w, phys(tile), n_tiles, 0, sbase + slot(s), tokok + s * kTN, bar0 + 8 * s, pg,
                                            nullptr, wt, crank);
                return;
            }
#endif
            if constexpr (kBB)
                issue_tile_tma_tpt<2, false, 0x1FFu, true, 64, true>(p, w, phys(tile), n_tiles, 0, sbase + slot(s),
                                                                   tokok + s * kTN, bar0 + 8 * C::NBB * s, pg, nullptr, wt);
            else
                issue_tile_tma_wg(p, w, phys(tile), n_tiles, sbase + slot(s), tokok + s * kTN, bar0 + 8 * s, pg, wt);
        };
        if (wg == 1) {
            PagePrefetch pg0, pg1;
            pg0.fetch(p, w, phys(0), n_tiles, wt >> 1, (wt & 1) == 0);
            pg1.fetch(p, w, phys(1), n_tiles, wt >> 1, (wt & 1) == 0);
            if (MLA_QMT_PGFIRST) bar_arrive(kBarStart, 256);  // the page reads are out: Q may follow
            issue(0, 0, pg0);
            issue(1, 1, pg1);
            MLA_TRACE(tr && wt == 0, 4);
            pf.fetch(p, w, phys(2), n_tiles, wt >> 1, (wt & 1) == 0);
        }
#if MLA_QMT_PGFIRST
        else {
            bar_sync(kBarStart, 256);
            load_q<64, false, 128>(p, w, smem, sbase, C::OFF_Q, wt);
        }
#endif
#if MLA_QM_OUT_TOUCH
        if (wg == 0 && wt < 64) touch_out_row(p, w, wt);
#endif
        float m_run[2], l_run[2], o[128];
        int lim[2];
        qm_work_start<!MLA_QMT_PGFIRST>(p, w, smem, sbase, C::OFF_Q, r0, m_run, l_run, lim, o);
        MLA_TRACE(tr && tid == 0, 5);
        uint32_t a[4][4];  // P(t) as the A fragments of the tile's 4 k-blocks (16 tokens each)

        if (wg == 0) {
            float sacc[32];
            auto s_mma = [&](int s) {  // S = Q . K^T of the tile in slot s, one commit group
#if MLA_QMT_S_SLOTCONST
                if (s == 0) qm_s_mma<!(MLA_QMT_ABLATE & 5)>(sacc, dQ, sw128_desc(sbase + slot(0), 16, 1024));
                else qm_s_mma<!(MLA_QMT_ABLATE & 5)>(sacc, dQ, sw128_desc(sbase + slot(1), 16, 1024));
#else
                qm_s_mma<!(MLA_QMT_ABLATE & 5)>(sacc, dQ, sw128_desc(sbase + slot(s), 16, 1024));
#endif
            };
            auto late_trigger = [&](int tile) {  // once the CTA's last tile has landed (wg_common.cuh)
                if (MLA_QM_RA_LATE_TRIG && wt == 0 && mla_dec::last_tile(wi, w_end, tile, n_tiles))
                    mla_dec::trigger_dependents();
            };
            auto issue_s = [&](int tile) {  // wait for the tile, then its S
                const int s = tile & 1;
                if constexpr (kBB && !(MLA_QMT_ABLATE & 2)) {  // S block by block as they land
                    const uint32_t par = (phase >> s) & 1;
                    phase ^= 1u << s;
                    reg_fence(sacc);
                    qm_s_mma_blocks<!(MLA_QMT_ABLATE & 5)>(sacc, desc_lo_bcast(dQ),
                                                          desc_lo_bcast(sw128_desc(sbase + slot(s), 16, 1024)),
                                                          bar0 + 8 * C::NBB * s, par);
                    wg_commit();
                    late_trigger(tile);  // the tile has landed (its last block waited for)
                    return;
                }
                if (!(MLA_QMT_ABLATE & 2)) mbar_wait(bar0 + 8 * s, (phase >> s) & 1);
                MLA_TRACE(tr && tid == 0 && tile < 8, 6 + tile);
                MLA_TRACE(tr && tid == 0 && tile == n_tiles - 1, 22);
                MLA_QMT_SUB(tile - 1, 8);
                phase ^= 1u << s;
                late_trigger(tile);
                s_mma(s);
                MLA_QMT_SUB(tile - 1, 9);
            };
            if (n_tiles > 0) issue_s(0);
            for (int tile = 0; tile < n_tiles; ++tile) {
                const int s = tile & 1;
                MLA_QMT_SUB(tile, 0);
                wg_wait0();  // S(tile)
                reg_fence(sacc);
                MLA_QMT_SUB(tile, 1);
                float alpha[2];
                const int* tk = tokok + s * kTN;
                const bool masked = qm_softmax(sacc, tk, w.tok_begin + phys(tile) * kTN, lim, sl2, cq, m_run, l_run, alpha, a);
                MLA_QMT_SUB(tile, 2);
                char* tile_p = smem + slot(s);
                uint4* pex = reinterpret_cast<uint4*>(tile_p + 8 * kBlk);  // the rope block: [kb][128]
                qm_store_p(pex, a, wt);
                if ((lane & 3) == 0) {
                    alx[s * 64 + r0] = alpha[0];
                    alx[s * 64 + r0 + 8] = alpha[1];
                }
                MLA_QMT_SUB(tile, 3);
                // every warp sees all 64 flags (a quad covers the tile's tokens), so this branch
                // is uniform over the warpgroup
                const bool any_masked = __any_sync(0xffffffffu, masked);
                if (any_masked) zero_flagged_v(tile_p, tk, wt, kBarWg0);
                if (!MLA_QMT_FENCE_LATE) fence_proxy_async();  // P and zeroed rows before the TMA that refills the slot
                MLA_QMT_SUB(tile, 4);
                bar_arrive(kBarPReady + s, 256);
                MLA_QMT_SUB(tile, 5);

#if MLA_QMT_EARLY_S
                // this tile's P.V, then S(t+1) behind it if its tile is in (two commit groups; the
                // wait for the first frees the slot on this side), else as below
                qm_pv_scaled_issue<!(MLA_QMT_ABLATE & 1)>(o, alpha, a, sw128_desc(sbase + slot(s), kVLbo, kVSbo));
                // the wgmmas must be issued by the whole warpgroup: a thread's test decides for all
                // (bar.red.or on the warpgroup's barrier); one whose own test said no then waits,
                // which returns at once (that fill cannot move on before this warpgroup's EMPTY)
                const int s1 = s ^ 1;
                const uint32_t par1 = (phase >> s1) & 1;
                const bool next = tile + 1 < n_tiles;
                const bool in = (MLA_QMT_ABLATE & 2) || (next && mbar_test(bar0 + 8 * s1, par1));
                if (next && ((MLA_QMT_ABLATE & 2) || bar_red_or(kBarWg0, 128, in))) {
                    if (!(MLA_QMT_ABLATE & 2) && !in) mbar_wait(bar0 + 8 * s1, par1);
                    phase ^= 1u << s1;
                    s_mma(s1);
                    wg_wait1();  // P.V(t) done (groups complete in order); S(t+1) may run on
                    reg_fence(o);
                    if (tile + 2 < n_tiles) bar_arrive(kBarEmpty + s, 256);
                } else {
                    wg_wait0();
                    reg_fence(o);
                    if (tile + 2 < n_tiles) bar_arrive(kBarEmpty + s, 256);
                    if (tile + 1 < n_tiles) issue_s(tile + 1);
                }
#else
                // this tile's P.V, waited for: the slot is free on this side at once
#if MLA_QMT_FENCE_LATE
                qm_pv_scaled_issue<!(MLA_QMT_ABLATE & 1)>(o, alpha, a, sw128_desc(sbase + slot(s), kVLbo, kVSbo));
                if (!any_masked) fence_proxy_async();  // P (a masked tile: zero_flagged_v's fence)
                wg_wait0();
                reg_fence(o);
#else
                qm_pv<!(MLA_QMT_ABLATE & 1)>(o, alpha, a, sw128_desc(sbase + slot(s), kVLbo, kVSbo));
#endif
                MLA_QMT_SUB(tile, 6);
                MLA_TRACE(tr && tid == 0 && tile < 8, 14 + tile);
                MLA_TRACE(tr && tid == 0 && tile == n_tiles - 1, 23);
                if (tile + 2 < n_tiles) bar_arrive(kBarEmpty + s, 256);
                MLA_QMT_SUB(tile, 7);
                if (tile + 1 < n_tiles) issue_s(tile + 1);
#endif
            }
        } else {
            for (int tile = 0; tile < n_tiles; ++tile) {
                const int s = tile & 1;
                bar_sync(kBarPReady + s, 256);  // P(tile), alpha(tile), zeroed rows
                const uint4* pex = reinterpret_cast<const uint4*>(smem + slot(s) + 8 * kBlk);
                qm_load_p(pex, a, wt);
                const float alpha[2] = {alx[s * 64 + r0], alx[s * 64 + r0 + 8]};
                qm_pv<!(MLA_QMT_ABLATE & 1)>(o, alpha, a, sw128_desc(sbase + slot(s) + 4 * kBlk, kVLbo, kVSbo));
                if (tile + 2 < n_tiles) {
                    fence_proxy_async();  // this thread's reads of the slot before the TMA writes
                    bar_sync(kBarEmpty + s, 256);  // warpgroup 0's P.V of the tile is done too
#if MLA_QM_MC
                    if (mc) {  // slot s is free here; the tile goes into both CTAs once free there too
                        if (wt == 0) mbar_arrive_remote(bar0 + 16 + 8 * s, crank ^ 1u);
                        mbar_wait<true>(bar0 + 16 + 8 * s, (cphase >> s) & 1);
                        cphase ^= 1u << s;
                    }
#endif
                    issue(tile + 2, s, pf);
                    MLA_TRACE(tr && wt == 0 && tile < 8, 30 + tile);
                    pf.fetch(p, w, phys(tile + 3), n_tiles, wt >> 1, (wt & 1) == 0);
                }
            }
        }

        // ---- epilogue (qm_common.cuh) ----
        MLA_TRACE(tr && tid == 0, 24);
        qm_epilogue<false>(p, w, reinterpret_cast<float*>(smem + C::OFF_KV), lx, o, l_run, m_run, kvsc, tr);
        MLA_TRACE(tr && tid == 0, 26);
#if MLA_WG_TRACE
        if (tr) trace_dump_work(p, w, n_tiles, w_end - w_begin);
#endif
    }
#if MLA_QM_MC
    if (ncta == 2) cluster_sync();  // no CTA exits while the other may still address its shared memory
#endif
}

}  // namespace mla_wg
