// decode_qm8_ws.cuh - the fp8 qm TMA body on three warpgroups (384 threads; kernel
// mla_decode_qm_fp8_fp8_m64_ws): the same tile, ring and MMAs as decode_qm8.cuh's two-warpgroup
// body, with the work split by kind instead of by dims, so that the softmax no longer sits in
// series with an O^T half:
//   warpgroup 0 (S):  per tile t: waits for S(t); waits for tile t + 1 and issues S(t + 1)
//                     (fp8 wgmma, MLA_QM8_WS_SCHAINS chains) so the tensor cores have it while
//                     the softmax of t runs; the softmax of t (running max and sums in
//                     registers, the lazy max of qm_softmax_p); P^T(t) into the tile's dead
//                     rope block, alpha(t) and the rescale flags into shared memory; arrives
//                     at PREADY(t);
//   warpgroups 1, 2 (O^T): sync on PREADY(t); O^T dims 256 (w - 1) .. + 255 += V^T . P^T
//                     (pv_half: V^T fragments built in registers from the fp8 rows, f16 wgmma);
//                     warpgroup 1 arrives at EMPTY(t), warpgroup 2 syncs on it and issues tile
//                     t + 4 into the slot (issue_tile8, 2 threads a token); a work's
//                     first 4 tiles are issued by warpgroup 0, while warpgroups 1-2 stage Q.
// Registers (setmaxnreg; a 384-thread launch gives each thread 168, 504 per thread of each of
// the three warpgroups): warpgroup 0 keeps kRegS (the in-flight S accumulators, the tile's S
// and the softmax), warpgroups 1 and 2 kRegO (O^T: 128 fp32 a thread, the V^T fragments).
// Named barriers: PREADY + t % 4 over 384 threads (warpgroup 0 arrives), EMPTY + t % 4 over
// warpgroups 1-2. An id is reused 4 tiles later only after its previous use completed: warpgroup
// 0 arrives at PREADY(t + 4) only after tile t + 4 landed, which follows EMPTY(t), which follows
// PREADY(t) in both consumers (not under MLA_QM8_WS_NOLOAD, where warpgroup 0 waits for no refill
// and may run ahead; the counts stay whole). Without a tensor map (page sizes below
// MLA_KV_TMA_MIN_PAGE, decode_check.cpp) the third warpgroup
// exits and the first two run decode_qm.cuh's cp.async body, as the 256-thread kernel does.
// Measurements: docs/performance.md (sessions 21-22): correct everywhere the table reaches, 2%
// slower than the two-warpgroup kernel (128 heads 280.8 against 276.0 µs; without its loads 232:
// each role is a latency-bound chain of ~2800-2900 cycles a tile step), so no table row names it
// and the shipped cubin is built without it (MLA_QM8_WS, below). compute-sanitizer synccheck
// reports the role code's CTA-wide barrier (an aligned bar.sync that the roles reach at different
// instructions): to be settled before any row names the kernel.
#pragma once
#ifndef MLA_QM8_WS
#define MLA_QM8_WS 0  // 1: mla_decode_qm_fp8_fp8.cu also builds the kernel (measurement)
#endif
#include "decode/decode_qm.cuh"

// Registers a thread of warpgroup 0 keeps (setmaxnreg; warpgroups 1-2 share the rest of 504).
#ifndef MLA_QM8_WS_REG_S
#define MLA_QM8_WS_REG_S 120
#endif
// S accumulator chains of this body (decode_qm8.cuh's MLA_QM8_SCHAINS is 2). One: at 120 / 192
// registers two chains spill 36 bytes at a work's start (ptxas; the build forbids spills), and
// below 192 for warpgroups 1-2 ptxas serializes every wgmma. One chain adds all 18 k-steps'
// fp8 products in one accumulator: its LSE error against the 2e-4 tolerance is the first thing
// to measure (docs/performance.md, session 21).
#ifndef MLA_QM8_WS_SCHAINS
#define MLA_QM8_WS_SCHAINS 1
#endif

// MLA_QM8_WS_EARLY=1 (measurement): warpgroup 0 issues S(t + 1) before the softmax of t only if
// tile t + 1 has already landed, so that P(t) never waits for tile t + 1's arrival.
#ifndef MLA_QM8_WS_EARLY
#define MLA_QM8_WS_EARLY 0
#endif

// MLA_QM8_WS_NOLOAD=1 (measurement; wrong results): no refills, a work's tiles from the fifth on
// reuse the ring's first four, so the time is the roles' chains without the loads.
#ifndef MLA_QM8_WS_NOLOAD
#define MLA_QM8_WS_NOLOAD 0
#endif

namespace mla_q8 {

constexpr int kWsThreads = 384;
constexpr int kRegS = MLA_QM8_WS_REG_S;
constexpr int kRegO = ((3 * 168 - kRegS) / 2) / 8 * 8;
static_assert(kRegS % 8 == 0 && kRegS >= 24 && kRegO <= 256, "setmaxnreg takes multiples of 8, 24 .. 256");
static_assert(kRegS <= 168 && kRegO >= 168 && kRegS + 2 * kRegO <= 3 * 168,
              "warpgroup 0 gives registers back, warpgroups 1-2 take them, within the launch's 168 x 384");

// The CTA-wide barrier of the role code: a named barrier over the 384 threads (id 10; PREADY and
// EMPTY use 1-8, the EARLY variant's bar_red_or 9). It is still an aligned bar.sync, which the
// roles reach at different instructions, so it does not answer synccheck's "divergent thread(s)"
// report (session 22: the same instruction flagged before, as __syncthreads, and after); an
// unaligned barrier.sync would (barrier.sync 0 cost warpgroups 1-2 60 bytes of spills; id 10
// unaligned is not measured).
constexpr int kBarCta = 10;
__device__ __forceinline__ void cta_sync() { bar_sync(kBarCta, kWsThreads); }

template <int N>
__device__ __forceinline__ void reg_dealloc() {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}
template <int N>
__device__ __forceinline__ void reg_alloc() {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}

// What both roles of a CTA share: shared-memory pointers, the mbarriers' parity bits, scales.
struct WsCtx {
    char* smem;
    uint32_t sbase, bar0;
    uint32_t phase;  // bit s: the parity of slot s's next fill, as this thread has waited
    float kvsc, sl2;
    __device__ __forceinline__ float* alx() const { return reinterpret_cast<float*>(smem + CfgQM8::OFF_AL); }
    __device__ __forceinline__ float* lx() const { return reinterpret_cast<float*>(smem + CfgQM8::OFF_LX); }
    __device__ __forceinline__ int* sfl() const { return reinterpret_cast<int*>(smem + CfgQM8::OFF_SF); }
    __device__ __forceinline__ int* tok(int s) const { return reinterpret_cast<int*>(smem + CfgQM8::OFF_TOK) + s * kTN; }
    static __device__ __forceinline__ int slot(int s) { return CfgQM8::OFF_KV + s * kTile8; }
    __device__ __forceinline__ void wait_tile(int s) {
        mbar_wait(bar0 + 8 * s, (phase >> s) & 1);
        phase ^= 1u << s;
    }
};

// A work's start, in every role (all 384 threads, the same barriers): warpgroup 0 issues the
// work's first kSlots tiles (its registers are free here; warpgroup 2's refills take over from
// tile kSlots, pf: that tile's page), warpgroups 1-2 stage Q.
__device__ __forceinline__ void ws_work_start(const mla_decode_params& p, const mla_dec::Work& w, WsCtx& c,
                                              PagePrefetch& pf, int n_tiles) {
    const int tid = threadIdx.x, wt = tid & 127;
    fence_proxy_async();  // this thread's generic accesses of the ring before the next TMA writes
    cta_sync();      // the previous work's epilogue is done with shared memory (and mbarrier init)
    if (tid < 128) {
        issue_ring8(p, w, n_tiles, c.sbase, c.tok(0), c.bar0, wt);
    } else {
        load_q8(p, w, c.sbase + CfgQM8::OFF_Q, tid - 128);
        if (tid >= 256) pf.fetch(p, w, kSlots, n_tiles, wt >> 1, (wt & 1) == 0);
    }
    cp_wait<0>();
    fence_proxy_async();  // Q (cp.async) -> the MMAs' async proxy
    cta_sync();
}

// Warpgroup 0's works: S and the softmax of every tile, then the rows' sums and LSE.
template <int M>
__device__ __forceinline__ void ws_role_s(const mla_decode_params& p, WsCtx& c) {
    const int tid = threadIdx.x, lane = tid & 31, wl = (tid >> 5) & 3, q = lane & 3;
    const int r0 = 16 * wl + (lane >> 2), cq = 2 * q;  // S rows r0, r0 + 8; columns cq, cq + 1
    const uint64_t dQ = sw128_desc(c.sbase + CfgQM8::OFF_Q, 16, 1024);
    const int w_begin = p.work_indptr[blockIdx.x], w_end = p.work_indptr[blockIdx.x + 1];
    for (int wi = w_begin; wi < w_end; ++wi) {
        mla_dec::Work w;
        if (!mla_dec::load_work(p, wi, M, w)) continue;
        const int n_tiles = w.tiles(kTN);
        PagePrefetch pf;
        ws_work_start(p, w, c, pf, n_tiles);
        float l_run[2] = {0.f, 0.f}, m_run[2] = {-INFINITY, -INFINITY};
        int lim[2];
#pragma unroll
        for (int i = 0; i < 2; ++i) lim[i] = mla_dec::row_limit(p, w, r0 + 8 * i);
        // S(t) in sc when tile t's iteration begins; S(t + 1) is issued into acc before the
        // softmax of t and taken after it, so the in-flight accumulators never cross the loop's
        // back edge (where the compiler might move them and serialize the wgmmas)
        float acc[MLA_QM8_WS_SCHAINS][32], sc[32];
        if (n_tiles > 0) {
            c.wait_tile(0);
            s_issue(acc, dQ, sw128_desc(c.sbase + WsCtx::slot(0), 16, 1024));
            s_take(acc, sc);
        }
        for (int tile = 0; tile < n_tiles; ++tile) {
            const int s = tile & (kSlots - 1);
            const bool next = tile + 1 < n_tiles;
            const int s1 = (tile + 1) & (kSlots - 1);
            // S(t + 1) runs while this tile's softmax does; with MLA_QM8_WS_EARLY only when tile
            // t + 1 has already landed (decided for the warpgroup: wgmma is .aligned), else after P(t)
            const bool early = next && (!MLA_QM8_WS_EARLY ||
                                        bar_red_or(kBarWg0, 128, mbar_test(c.bar0 + 8 * s1, (c.phase >> s1) & 1)));
            if (early) {
                if (!MLA_QM8_WS_NOLOAD || tile + 1 < kSlots) c.wait_tile(s1);
                s_issue(acc, dQ, sw128_desc(c.sbase + WsCtx::slot(s1), 16, 1024));
            }
            float mn[2], alpha[2];
            uint32_t unused[4][4];
            qm_softmax_p<false, MLA_QM8_LAZY>(sc, c.tok(s), w.tok_begin + tile * kTN, lim, c.sl2, cq, m_run, mn, alpha,
                                              l_run, unused);
            // a row without a key so far (running max -inf) has O exactly 0: alpha 1 instead of
            // qm_softmax_p's 0, so padding rows and a work's first tile set no rescale flag
#pragma unroll
            for (int i = 0; i < 2; ++i)
                if (m_run[i] == -INFINITY) alpha[i] = 1.f;
            m_run[0] = mn[0];
            m_run[1] = mn[1];
            store_pt(c.smem + WsCtx::slot(s) + 4 * kBlk, sc, r0, q);  // S(t) is done with the rope block
            if (q == 0) {
                c.alx()[s * 64 + r0] = alpha[0];
                c.alx()[s * 64 + r0 + 8] = alpha[1];
            }
            const bool moved = __any_sync(0xffffffffu, alpha[0] != 1.f || alpha[1] != 1.f);
            if (lane == 0) c.sfl()[s * 4 + wl] = moved ? 1 : 0;
            fence_proxy_async();  // P^T -> the MMAs' async proxy
            bar_arrive(kBarPReady + s, kWsThreads);
            if (next && !early) {
                if (!MLA_QM8_WS_NOLOAD || tile + 1 < kSlots) c.wait_tile(s1);
                s_issue(acc, dQ, sw128_desc(c.sbase + WsCtx::slot(s1), 16, 1024));
            }
            if (next) s_take(acc, sc);
        }
        // the epilogue's row sums: l over the quad into lx, the LSE
#pragma unroll
        for (int i = 0; i < 2; ++i) {
            float lt = l_run[i] + __shfl_xor_sync(0xffffffffu, l_run[i], 1);
            lt += __shfl_xor_sync(0xffffffffu, lt, 2);
            const int row = r0 + 8 * i;
            if (q == 0) {
                c.lx()[row] = lx_entry(lt, c.kvsc);
                if (row < w.nrows) store_lse(p, w, row, lt > 0.f ? (m_run[i] + __log2f(lt)) * kLn2 : -INFINITY);
            }
        }
        cta_sync();  // (E1) every MMA and load of the work done, the ring free; the sums visible
        cta_sync();  // (E2) staged output visible
        store_rows_part<kWsThreads>(p, w, reinterpret_cast<const float*>(c.smem + CfgQM8::OFF_KV), tid, 0, w.nrows);
    }
}

// Warpgroups 1-2's works: the O^T halves (dims 256 (wg - 1) ..), warpgroup 2's refills, the
// output staged and stored.
template <int M>
__device__ __forceinline__ void ws_role_o(const mla_decode_params& p, WsCtx& c) {
    const int tid = threadIdx.x, lane = tid & 31, wg = tid >> 7, wt = tid & 127;
    const int w_begin = p.work_indptr[blockIdx.x], w_end = p.work_indptr[blockIdx.x + 1];
    for (int wi = w_begin; wi < w_end; ++wi) {
        mla_dec::Work w;
        if (!mla_dec::load_work(p, wi, M, w)) continue;
        const int n_tiles = w.tiles(kTN);
        PagePrefetch pf;  // warpgroup 2: the page of the tile it issues next
        ws_work_start(p, w, c, pf, n_tiles);
        float o[4][32];
#pragma unroll
        for (int mb = 0; mb < 4; ++mb)
#pragma unroll
            for (int e = 0; e < 32; ++e) o[mb][e] = 0.f;
        for (int tile = 0; tile < n_tiles; ++tile) {
            const int s = tile & (kSlots - 1);
            const int* tk = c.tok(s);
            bar_sync(kBarPReady + s, kWsThreads);  // P^T(tile), alpha(tile), the flags
            if (!MLA_QM8_WS_NOLOAD || tile < kSlots) c.wait_tile(s);  // the tile landed (seen by warpgroup 0 already)
            const bool masked = __any_sync(0xffffffffu, tk[lane] == 0 || tk[lane + 32] == 0);
            const int4 f4 = *reinterpret_cast<const int4*>(c.sfl() + s * 4);
            const bool rescale = (f4.x | f4.y | f4.z | f4.w) != 0;  // some row's alpha is not 1
            pv_half<false>(o, c.smem + WsCtx::slot(s), c.sbase + WsCtx::slot(s), wg - 1, c.alx() + s * 64, tk, masked,
                           rescale);
            if (tile + kSlots < n_tiles) {
                fence_proxy_async();  // this thread's reads of the slot before the TMA that refills it
                if (wg == 1) {
                    bar_arrive(kBarEmpty + s, 256);
                } else {
                    bar_sync(kBarEmpty + s, 256);  // warpgroup 1 is done with the slot too
                    if (!MLA_QM8_WS_NOLOAD) {
                        issue_tile8(p, w, tile + kSlots, n_tiles, c.sbase + WsCtx::slot(s), c.tok(s), c.bar0 + 8 * s,
                                    pf, wt);
                        pf.fetch(p, w, tile + kSlots + 1, n_tiles, wt >> 1, (wt & 1) == 0);
                    }
                }
            }
        }
        cta_sync();  // (E1)
        // o = O^T / l * kv_scale (0 for a row with no key), staged as fp32 rows in the idle ring
        float* obuf = reinterpret_cast<float*>(c.smem + CfgQM8::OFF_KV);
        stage_o(obuf, c.lx(), o, wg - 1, c.kvsc);
        cta_sync();  // (E2)
        store_rows_part<kWsThreads>(p, w, obuf, tid, 0, w.nrows);
    }
}

template <int M>
__device__ __forceinline__ void decode_qm8_ws_body(const mla_decode_params& p, char* smem) {
    if (!launch_ok<kWsThreads>(p, smem, CfgQM8::SMEM)) return;
    WsCtx c;
    c.smem = smem;
    c.sbase = smem_u32(smem);
    c.bar0 = c.sbase + CfgQM8::OFF_BAR;
    c.phase = 0;
    if (threadIdx.x < kSlots) mbar_init(c.bar0 + 8 * threadIdx.x, 64);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    const mla_dec::Scales scl = mla_dec::decode_scales(p);
    c.kvsc = scl.kvsc * mla_ra::kE4m3Fold;  // (MLA_E4M3_BITCVT)
    c.sl2 = scl.sl2;
    // each role's code follows its setmaxnreg (ptxas allocates each region to its own count)
    if (threadIdx.x < 128) {
        reg_dealloc<kRegS>();
        ws_role_s<M>(p, c);
    } else {
        reg_alloc<kRegO>();
        ws_role_o<M>(p, c);
    }
}

// The kernel's body: with a tensor map of the cache (as decode_qm_dispatch decides) the
// three-warpgroup body; otherwise warpgroup 2 gives its registers back and exits, and
// warpgroups 0-1 run the cp.async body (bar.sync 0 then counts the 256 live threads: PTX ISA,
// exit).
template <int M>
__device__ __forceinline__ void decode_qm8_ws_dispatch(const mla_decode_params& p, char* smem) {
    if (blockDim.x != kWsThreads) return;  // before any setmaxnreg (an inc would wait for registers forever)
    if (p.kv_tma != 0 && (reinterpret_cast<uintptr_t>(p.kv_tmap) & 63) == 0) {
        decode_qm8_ws_body<M>(p, smem);
        return;
    }
    if (threadIdx.x >= 256) {
        reg_dealloc<24>();
        return;
    }
    reg_alloc<240>();
    mla_wg::decode_qm_body<M, true, true, kWsThreads>(p, smem);
}

}  // namespace mla_q8

// Defines the extern "C" kernel mla_decode_qm_fp8_fp8_m<M>_ws (384 threads).
#define MLA_DECODE_QM8_WS_KERNEL(M) \
    MLA_DECODE_SM90_KERNEL_T(mla_decode_qm_fp8_fp8_m##M##_ws, 384, mla_q8::decode_qm8_ws_dispatch<M>)
