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
// softmax; all 256 threads load KV tiles with cp.async (16-byte chunks, swizzled addresses) or,
// for bf16 KV where the host passed a tensor map, with TMA boxes that land in the same layout
// (at 16 rows, with the warpgroups decoupled, MLA_WG_DEC: all 256 threads issue a work's first two
// tiles, warpgroup 1 alone the rest), widen fp8 tiles to bf16 exactly, and write the results out.
// Pieces: wg_common.cuh (constants, wgmma wrappers, Q staging), kv_load.cuh (KV loaders),
// wg_tile.cuh (stores, softmax, tile_mma), decode_wg_pp.cuh (the fp8-KV ping-pong body),
// decode_wg_xwork.cuh (a measurement variant of the 16-row TMA body, off; it has no fused
// reduction), fused_reduce.cuh (the split-KV reduction after the CTA's last work, *_fused); this file:
// the shared-ring body, the dispatch and the kernel macros.
#pragma once
#include "decode/decode_wg_pp.cuh"      // and through it wg_tile.cuh, kv_load.cuh, wg_common.cuh
#include "decode/decode_wg_xwork.cuh"   // the 16-row TMA body with the pipeline across works (MLA_WG_XWORK)
#include "decode/fused_reduce.cuh"
#include "decode/trace.cuh"        // the MLA_WG_TRACE measurement hook (no code when 0)

namespace mla_wg {

// kFused: the fused split-KV reduction (fused_reduce.cuh) after the works; the *_fused kernels
// (mla_decode.csv key fused = 1), bf16 KV only. Without it the body has no such code.
template <int N, bool Q8, bool KV8, bool kFused = false>
__device__ __forceinline__ void decode_wg_body(const mla_decode_params& p, char* smem) {
    static_assert(!kFused || !KV8, "the fused reduction is built for bf16 KV only");
    // (fused_prefetch's cp.async joins load_q's commit group, which the fp8-Q staging lacks)
    static_assert(!kFused || !Q8, "the fused reduction is built for bf16 Q only");
    using C = Cfg<N, KV8>;
    constexpr int NQ = C::NQ, NR = NQ / 2, NI = NQ / 4;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, wg = warp >> 2, wl = warp & 3;
    if (!launch_ok(p, smem, C::SMEM)) return;
    const uint32_t sbase = smem_u32(smem);
    float* red = reinterpret_cast<float*>(smem + C::OFF_RED);  // [NC][4 warps][NQ]
    int* tokok = reinterpret_cast<int*>(smem + C::OFF_TOK);    // [STAGES][64]
    const bool mma = wg < C::NC;

    const mla_dec::Scales scl = mla_dec::decode_scales(p);
    const float kvsc = scl.kvsc, sl2 = scl.sl2;

    // bf16 KV by TMA (p.kv_tma, set by the host where the table row says launch_kv_tma 1 or 2 and the
    // cache allows a tensor map; the map 64-byte aligned in the parameter space, decode_params.h):
    // one mbarrier per ring slot, count 64 (issue_tile_tma). `phase`
    // bit s: the parity of slot s's next fill (kept by the threads that wait: with MLA_WG_DEC the
    // MMA warpgroup only); `zero` bit s: this thread's token row of slot s is zeroed when it lands
    // (unused with MLA_WG_DEC, where the MMA warpgroup zeroes from the flags). Else cp.async, one
    // commit group per tile.
    __shared__ __align__(8) uint64_t kv_bar[C::STAGES];
    // (MLA_WG_TMA_ONLY, wg_common.cuh: the 16-row bf16 kernel assumes the tensor map)
    const bool tma = !KV8 && ((MLA_WG_TMA_ONLY && N == 16) ||
                              (p.kv_tma != 0 && (reinterpret_cast<uintptr_t>(p.kv_tmap) & 63) == 0));
    const uint32_t bar0 = smem_u32(kv_bar);
    uint32_t phase = 0, zero = 0;
    if (tma) {
        if (tid < C::STAGES) mbar_init(bar0 + 8 * tid, 64);
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    // (the cross-work variant has no fused reduction: the *_fused kernels keep the ring body)
    if constexpr (N == 16 && !KV8 && !kFused && MLA_WG_XWORK && MLA_WG_EARLY && MLA_WG_DEC && !MLA_WG_NOLOAD) {
        if (tma || MLA_WG_XWORK == 3) {  // (CTA-uniform; MLA_WG_XWORK 3: the ring body compiled out)
            decode_wg_xwork_body<Q8>(p, smem, sbase, bar0, sl2, kvsc);
            return;
        }
    }

    __shared__ mla_dec::FusedPending fpend;  // kFused: split works to count in (fused_reduce.cuh)
    int n_pend = 0;
    // (MLA_WG_FASTSTART: the record of work blockIdx.x, a guess at the first work, read together)
    const bool fast = MLA_WG_FASTSTART && (int)blockIdx.x < p.work_rows;
    int4 fa = make_int4(0, 0, 0, 0), fb = fa;
    if (fast) {
        fa = *reinterpret_cast<const int4*>(p.work_info_set + 8 * (int64_t)blockIdx.x);
        fb = *reinterpret_cast<const int4*>(p.work_info_set + 8 * (int64_t)blockIdx.x + 4);
    }
    const int w_begin = p.work_indptr[blockIdx.x], w_end = p.work_indptr[blockIdx.x + 1];
    for (int wi = w_begin; wi < w_end; ++wi) {
        mla_dec::Work w;
        // the fast start's first tiles: this thread's token's page of tile s, read with the
        // record's lookups (-1: not read; index fidx[s] of the CSR page table)
        int fpg[C::STAGES], fidx[C::STAGES];
        const bool fr = fast && wi == (int)blockIdx.x, fw = fr && p.block_table_stride == 0;
        if (fw) {
#pragma unroll
            for (int s = 0; s < C::STAGES; ++s) {
                fidx[s] = fb.x + ((s * kTN + (tid >> 2)) >> p.page_size_log2);
                fpg[s] = fidx[s] >= 0 && fidx[s] < p.num_page_indices ? p.page_table[fidx[s]] : -1;
            }
        }
        if (!(fr ? mla_dec::load_work_rec(p, fa, fb, N, w) : mla_dec::load_work(p, wi, N, w))) continue;
        const int n_tiles = w.tiles(kTN);
        [[maybe_unused]] const bool tr = MLA_WG_TRACE && (N == 16 || N == 32) && wi == w_begin;  // (MLA_WG_TRACE: the 16- / 32-row first work)
        MLA_TRACE(tr && tid == 0, 2);

        fence_proxy_async();  // this thread's generic accesses of the ring before the next TMA writes
        __syncthreads();  // the previous work's epilogue is done with shared memory (and mbarrier init)
        if constexpr (kFused) mla_dec::fused_prefetch(p, fpend, n_pend, wi, w);  // (before load_q's commit)
        // (MLA_WG_KVFIRST with TMA tiles: the first tiles go out before Q's copies, below)
        const bool kvfirst = MLA_WG_KVFIRST && tma;
        if (!kvfirst) {
            load_q<N, Q8>(p, w, smem, sbase, C::OFF_Q, tid);  // rows past nrows zero
            MLA_TRACE(tr && tid == 0, 3);
        }

        // ---- KV tiles: ring slot tile % STAGES ----
        // (MLA_WG_CP8, wg_common.cuh: the 16-row bf16 cp.async path only)
        constexpr bool kCp8 = MLA_WG_CP8 && N == 16 && !KV8;
        const bool cp8 = kCp8 && !tma && p.page_size_log2 <= MLA_WG_CP8_MAX_LOG2;  // (uniform)
        [[maybe_unused]] PagePrefetch2 pf2;  // (kCp8: the next cp.async tile's two pages per thread)
        auto issue_pf = [&](int tile, const PagePrefetch& pg) {
            const int stage = tile % C::STAGES;
            const uint32_t slot = sbase + C::OFF_KV + stage * (KV8 ? kRaw8 : kTile);
            if (tma)
                issue_tile_tma(p, w, tile, n_tiles, stage, slot, tokok + stage * kTN, bar0 + 8 * stage, pg, &zero);
            else
                issue_tile<KV8>(p, w, tile, n_tiles, slot, tokok + stage * kTN, tid, pg);
        };
        // (wg_common.cuh; 64 rows spill with it; 32 rows: MLA_WG_EARLY32)
        const bool early = MLA_WG_EARLY && (N == 16 || (MLA_WG_EARLY32 && N == 32 && C::NC == 1)) && tma;
        // (a loop to `ahead` compiles to a different, unverified cubin: docs/runs/session10-build-checks.txt)
        const int ahead = early ? C::STAGES : C::STAGES - 1;  // tiles issued before the loop
#pragma unroll
        for (int s = 0; s < C::STAGES; ++s) {
            if (s >= ahead) break;
            if constexpr (kCp8) {
                if (cp8) {  // (the fast start's page reads are for the 4-thread loader: not used)
                    pf2.fetch(p, w, s, n_tiles, tid);
                    issue_tile_cp8(p, w, s, n_tiles, sbase + C::OFF_KV + s * kTile, tokok + s * kTN, tid, pf2);
                    continue;
                }
            }
            PagePrefetch pg;
            const int j = w.tok_begin + s * kTN + (tid >> 2);
            if (fw && fidx[s] == w.kvi_b + (j >> p.page_size_log2) && fpg[s] >= 0)
                pg.page = s < n_tiles && j < w.tok_end ? fpg[s] : -1;  // (the fast start's read)
            else
                pg.fetch(p, w, s, n_tiles, tid >> 2, (tid & 3) == 0);
            issue_pf(s, pg);
        }
        MLA_TRACE(tr && tid == 0, 4);
        if (kvfirst) {  // (the TMA tiles join no cp.async group: Q's stays the only one)
            load_q<N, Q8>(p, w, smem, sbase, C::OFF_Q, tid);  // rows past nrows zero
            MLA_TRACE(tr && tid == 0, 3);
        }
        // decoupled warpgroups (MLA_WG_DEC): warpgroup 1 issues tiles 2, 3, ... with 2 threads per token
        // (not under the MLA_WG_NOLOAD hook: there warpgroup 0 would not wait for warpgroup 1's
        // tiles, and could arrive on an EMPTY id twice before warpgroup 1 syncs on it)
        const bool dec = MLA_WG_DEC && !MLA_WG_NOLOAD && early;
        const int wt = tid & 127;
        // the page of the tile the loop issues next, looked up one tile ahead
        PagePrefetch pf;
        if (cp8) pf2.fetch(p, w, ahead, n_tiles, tid);
        else pf.fetch(p, w, ahead, n_tiles, dec ? wt >> 1 : tid >> 2, dec ? (wt & 1) == 0 : (tid & 3) == 0);
        if (dec) {  // Q (cp.async by all threads) visible to the MMA warpgroup; no barrier A follows
            cp_wait<0>();
            fence_proxy_async();
            __syncthreads();
        }
        MLA_TRACE(tr && tid == 0, 5);

        // ---- per-thread state of the MMA warpgroups: columns (query rows) 8 j + 2 (lane & 3) + e ----
        float m_run[NI], l_run[NI], o[8][NR];
        int lim[NI];
        start_columns<NQ>(p, w, wg * NQ, m_run, l_run, lim, o);

        const uint64_t dQ = sw128_desc(sbase + C::OFF_Q + wg * NQ * 128, 16, 1024);
        const int r0 = 16 * wl + (lane >> 2);  // this thread's output dims r0, r0 + 8 of a block

        auto issue_ahead = [&](int tile) {  // tile's copies with pf's page; then the next tile's page
            if (cp8) {
                issue_tile_cp8(p, w, tile, n_tiles, sbase + C::OFF_KV + (tile % C::STAGES) * kTile,
                               tokok + (tile % C::STAGES) * kTN, tid, pf2);
                pf2.fetch(p, w, tile + 1, n_tiles, tid);
            } else {
                issue_pf(tile, pf);
                pf.fetch(p, w, tile + 1, n_tiles, tid >> 2, (tid & 3) == 0);
            }
        };
        for (int tile = 0; tile < n_tiles; ++tile) {
            const int stage = tile % C::STAGES;
            uint32_t kt_off;  // the tile the MMAs read: its slot (fp8 KV: the widened tile)
            if (dec) {
                if (wg == 1) {  // refill the slot once the MMA warpgroup is done with its tile
                    if (tile + C::STAGES < n_tiles) {
                        bar_sync(kWgEmpty + stage, 256);
                        MLA_TRACE(tr && wt == 0 && tile == 0, 38);
                        issue_tile_tma_wg(p, w, tile + C::STAGES, n_tiles, sbase + C::OFF_KV + stage * kTile,
                                          tokok + stage * kTN, bar0 + 8 * stage, pf, wt);
                        MLA_TRACE(tr && wt == 0 && tile == 0, 39);
                        pf.fetch(p, w, tile + C::STAGES + 1, n_tiles, wt >> 1, (wt & 1) == 0);
                        MLA_TRACE(tr && wt == 0 && tile < 8, 30 + tile);
                    }
                    continue;
                }
                mbar_wait(bar0 + 8 * stage, (phase >> stage) & 1);  // the tile's boxes landed
                phase ^= 1u << stage;
                MLA_TRACE(tr && tid == 0 && tile < 8, 6 + tile);
                MLA_TRACE(tr && tid == 0 && tile == n_tiles - 1, 22);
                // (mla_dec::last_tile / trigger_dependents hold this test for the other bodies; here it stays
                // inline: folding it in reorders this cubin's compares, so its measured SASS would change)
                if (MLA_WG_LATE_TRIG && tid == 0 && wi == w_end - 1 && tile == n_tiles - 1)
                    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
                kt_off = C::OFF_KV + stage * kTile;
                // rows flagged 0 (past the work's end, a bad page) hold whatever the slot held: their V
                // columns are zeroed (every warp sees all 64 flags: the branch is uniform)
                const int* tk = tokok + stage * kTN;
                if (__any_sync(0xffffffffu, tk[lane] == 0 || tk[lane + 32] == 0))
                    zero_flagged_v(smem + C::OFF_KV + stage * kTile, tk, wt, 1);
            } else if (!tma) {
                cp_wait<C::STAGES - 2>();
            } else {
                if (tile == 0) cp_wait<0>();  // Q (cp.async)
                if (!(MLA_WG_NOLOAD && early && tile >= C::STAGES)) {
                    mbar_wait(bar0 + 8 * stage, (phase >> stage) & 1);  // the tile's boxes landed
                    phase ^= 1u << stage;
                    if ((zero >> stage) & 1) zero_row_quarter(smem + C::OFF_KV + stage * kTile, tid >> 2, tid & 3);
                }
            }
            if (!dec) {  // (the decoupled path has no barrier A: its MMA warpgroup waited above)
                if constexpr (!KV8) {
                    fence_proxy_async();  // cp.async / TMA data, zeroed rows (and Q) -> the MMA's async proxy
                    __syncthreads();      // (A) tile landed for all; the previous slot is free
                    if (!early) issue_ahead(tile + C::STAGES - 1);
                    kt_off = C::OFF_KV + stage * kTile;
                } else {
                    __syncthreads();  // (A) raw tile landed; the widened tile is free
                    issue_ahead(tile + C::STAGES - 1);
                    widen_tile(smem + C::OFF_KV + stage * kRaw8, smem + C::OFF_KVB, tid);
                    fence_proxy_async();
                    __syncthreads();  // (A') widened tile visible to the MMAs
                    kt_off = C::OFF_KVB;
                }
            }
            MLA_TRACE_SUBTILE(tr && tid == 0, tile);
            if (mma && !(MLA_WG_ABLATE & 4))
                tile_mma<N, NQ>(smem, sbase, kt_off, C::OFF_P + ((tile & (C::PBUF - 1)) * C::NC + wg) * NQ * 128, red + wg * 4 * NQ,
                                tokok + stage * kTN, w.tok_begin + tile * kTN, lim, sl2, m_run, l_run, o, dQ, 1 + wg);
            MLA_TRACE(tr && tid == 0 && tile < 8, 14 + tile);
            MLA_TRACE(tr && tid == 0 && tile == n_tiles - 1, 23);
            if (MLA_WG_SPIN && mma) spin_clocks(MLA_WG_SPIN);
            if (dec) {
                if (tile + C::STAGES < n_tiles) {
                    fence_proxy_async();  // zeroed rows before the TMA that refills the slot
                    bar_arrive(kWgEmpty + stage, 256);  // the slot is free
                }
            } else if (early && tile + C::STAGES < n_tiles) {  // (CTA-uniform)
                __syncthreads();  // (B) the tile's MMAs are done: its slot is free
                if (!MLA_WG_NOLOAD) issue_ahead(tile + C::STAGES);
            }
        }
        cp_wait<0>();
        __syncthreads();  // every MMA done; the ring is idle and becomes the output staging
        MLA_TRACE(tr && tid == 0, 24);

        // ---- epilogue: o = O / l * kv_scale (0 if no key), lse = (m + log2 l) ln 2 ----
        float* obuf = reinterpret_cast<float*>(smem + C::OFF_KV);  // [N][kOPitch]
        if (mma && !(MLA_WG_ABLATE & 8)) {
            float inv[NI], lt[NI];
            column_sums<NQ>(l_run, red + wg * 4 * NQ, 1 + wg, lt);
#pragma unroll
            for (int i = 0; i < NI; ++i) inv[i] = lt[i] > 0.f ? kvsc / lt[i] : 0.f;
#pragma unroll
            for (int mb = 0; mb < ((MLA_WG_ABLATE & 32) ? 0 : 8); ++mb)
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
        MLA_TRACE(tr && tid == 0, 25);
        __syncthreads();  // staged output visible
        if (!(MLA_WG_ABLATE & (8 | 16))) store_rows(p, w, obuf, tid);
        MLA_TRACE(tr && tid == 0, 26);
#if MLA_WG_TRACE
        if (tr) trace_dump_work(p, w, n_tiles, w_end - w_begin);
#endif
        if constexpr (kFused) mla_dec::fused_note(p, fpend, n_pend, wi, w);
    }
    if constexpr (kFused) n_pend = mla_dec::fused_flush(p, fpend, n_pend);
}


// The table's (M, dtypes) -> the ping-pong body (fp8 KV, M <= 32) or the shared-ring body.
template <int M, bool KV8>
struct IsPingPong {
    static constexpr bool value = mla_decode_wg_pingpong(M, KV8);
};
template <int M, bool Q8, bool KV8, bool kFused = false>
__device__ __forceinline__ void decode_wg_dispatch(const mla_decode_params& p, char* smem) {
    static_assert(!kFused || !IsPingPong<M, KV8>::value, "the ping-pong body has no fused reduction");
    if constexpr (IsPingPong<M, KV8>::value) decode_wg_pp_body<M, Q8>(p, smem);
    else decode_wg_body<M, Q8, KV8, kFused>(p, smem);
}

}  // namespace mla_wg

// Defines extern "C" kernel NAME of the wgmma families: 256 threads, one CTA per SM, dynamic
// shared memory 1024-byte aligned (the swizzle atoms; launch_ok checks it), running
// BODY(p, smem) (a template instance, hence variadic). The kernel first waits for the grids
// ahead of it in the stream (mla_dec::kernel_start: griddepcontrol.wait, at once after a plain launch), so it may be
// launched as a programmatic dependent launch (mla_decode.csv launch_pdl 1): its CTAs become
// resident while the kernel ahead finishes, and read nothing before that kernel's writes are
// visible. No decode kernel triggers its dependents (griddepcontrol.launch_dependents) before
// this wait; the 16- and 32-row ring body triggers after it, once the CTA's last tile has landed
// (MLA_WG_LATE_TRIG, wg_common.cuh): the whole-tile, wide and slim reducers (reduce/mla_reduce.cu) read
// the plan before their own wait, which is safe only while the reducer's grid starts after every
// decode CTA has passed this wait.
#define MLA_DECODE_SM90_KERNEL(NAME, ...) MLA_DECODE_SM90_KERNEL_T(NAME, 256, __VA_ARGS__)
// The same with THREADS threads (the three-warpgroup fp8 qm kernel: 384, decode_qm8_ws.cuh).
#define MLA_DECODE_SM90_KERNEL_T(NAME, THREADS, ...)                                              \
    extern "C" __global__ void __launch_bounds__(THREADS, 1)                                      \
        NAME(const __grid_constant__ mla_decode_params p) {                                       \
        extern __shared__ __align__(1024) char smem[];                                            \
        MLA_TRACE_BEGIN();                                                                        \
        mla_dec::kernel_start(p);                                                                 \
        MLA_TRACE(threadIdx.x == 0, 1);                                                           \
        __VA_ARGS__(p, smem);                                                                     \
    }

// Defines the extern "C" kernel mla_decode_wg_<QN>_<KVN>_m<M>.
#define MLA_DECODE_WG_KERNEL(QN, KVN, Q8, KV8, M) \
    MLA_DECODE_SM90_KERNEL(mla_decode_wg_##QN##_##KVN##_m##M, mla_wg::decode_wg_dispatch<M, Q8, KV8>)

// Defines the extern "C" kernel mla_decode_wg_<QN>_<KVN>_m<M>_fused: the same body with the fused
// split-KV reduction (fused_reduce.cuh; mla_decode.csv rows with fused = 1).
#define MLA_DECODE_WG_FUSED_KERNEL(QN, KVN, Q8, KV8, M) \
    MLA_DECODE_SM90_KERNEL(mla_decode_wg_##QN##_##KVN##_m##M##_fused, mla_wg::decode_wg_dispatch<M, Q8, KV8, true>)
