// decode_qm.cuh - the persistent sm_90a MLA decode kernel with the query rows on the MMA's M side
// ("qm"), for row tiles of up to 64 rows (padded to 64), instantiated per (Q dtype, KV dtype, M)
// by mla_decode_qm_<q>_<kv>.cu. Design, cost model and measurements: docs/kernels.md; contract
// (works, rows, partials): docs/plan-layout.md.
//
// Per 64-token KV tile, two warpgroups (256 threads):
//   warpgroup 0:  S [64 rows x 64 tokens] = Q [64 x 576] . K^T    36 x m64n64k16, A = Q, B = K
//                 (both K-major in shared memory); mask, base-2 online softmax in registers; P
//                 (bf16) becomes the A fragments of its own P.V MMAs and is copied, with the
//                 rescale factor alpha, to shared memory for warpgroup 1;
//   both:         O_w [64 x 256] = alpha O_w + P [64 x 64] . V[:, 256 w .. 256 w + 255]
//                 4 x m64n256k16, A = P from registers, B = V (MN-major)
// so the output is split by columns (128 fp32 registers per thread), every K and V tile is read
// from shared memory once, in 36 + 8 MMAs. The KV loads (cp.async, 4 threads per token, a ring
// of 2 tiles) of the next tile are issued in three parts: warpgroup 1 right after the tile
// barrier, warpgroup 0 one part there and two around its S MMAs and softmax, so neither stalls
// long on the load queue. fp8 KV lands as raw rows and is widened to bf16 by all threads; fp8 Q
// is widened when staged. Loads, Q staging, widening and output writes: decode_wgmma.cuh. bf16 Q
// and KV with a tensor map of the cache run decode_qm_tma.cuh's body instead (decode_qm_dispatch,
// below): the same MMAs with decoupled warpgroups and TMA loads (or, built with
// -DMLA_QM_SEESAW=1, decode_qm_ss.cuh's seesaw body). Pieces the bodies share: qm_common.cuh.
#pragma once
#include "decode/decode_qm8.cuh"    // the fp8 TMA body (fp8 tensor cores)
#include "decode/decode_qm_ss.cuh"  // the TMA bodies (decoupled; seesaw with MLA_QM_SEESAW); qm_common.cuh
#include "decode/decode_wgmma.cuh"

namespace mla_wg {

template <bool KV8>
struct CfgQM {
    static constexpr int STAGES = 2;
    static constexpr int OFF_Q = 0;                              // Q, 64 rows bf16, swizzled
    static constexpr int OFF_KV = 64 * 1152;                     // ring
    static constexpr int RING = STAGES * (KV8 ? kRaw8 : kTile);
    static constexpr int OFF_KVB = OFF_KV + RING;                // fp8: the widened bf16 tile
    static constexpr int OFF_P = OFF_KVB + (KV8 ? kTile : 0);    // P fragments [4 k-blocks][128] uint4
    static constexpr int OFF_MX = OFF_P + 2 * 2 * 128 * 16;      // alpha [64]; l exchange [2][128][2]
    static constexpr int OFF_TOK = OFF_MX + 2 * 128 * 2 * 4;     // token flags [STAGES][64]
    static constexpr int SMEM = OFF_TOK + STAGES * kTN * 4;
    static_assert(SMEM == mla_decode_qm_smem_bytes(KV8), "smem layout and formula disagree");
    static_assert(SMEM <= 232448, "more than 227 KB of shared memory");
    static_assert(64 * kOPitch * 4 <= RING + (KV8 ? kTile : 0), "output staging does not fit the ring");
    static_assert(OFF_KV % 1024 == 0 && OFF_KVB % 1024 == 0, "swizzle atoms");
};

// Measurement hook (docs/kernels.md): -DMLA_QM_ABLATE=1 skips every MMA and the softmax (loads,
// widening and barriers only), 2 skips the KV loads (MMAs on stale shared memory). Results are then
// wrong; the shipped cubins are built with 0.
#ifndef MLA_QM_ABLATE
#define MLA_QM_ABLATE 0
#endif

// kLaunch: the kernel's block size (256; 384 where the three-warpgroup fp8 kernel runs this body
// on its first two warpgroups, decode_qm8_ws.cuh, the third having exited).
template <int M, bool Q8, bool KV8, int kLaunch = 256>
__device__ __forceinline__ void decode_qm_body(const mla_decode_params& p, char* smem) {
    using C = CfgQM<KV8>;
    using LD = TileLoader<KV8, 4>;
    constexpr int K3 = LD::K / 3;  // the next tile's loads go out in three parts of K3 chunks
    constexpr bool kSplit = !(MLA_QM_ABLATE & 3);
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, wg = warp >> 2, wl = warp & 3;
    const int wt = tid & 127;
    if (!launch_ok<kLaunch>(p, smem, C::SMEM)) return;
    const uint32_t sbase = smem_u32(smem);
    uint4* pex = reinterpret_cast<uint4*>(smem + C::OFF_P);    // [kb][128]
    float* mex = reinterpret_cast<float*>(smem + C::OFF_MX);   // alpha [64] / l [wg][128][2]
    int* tokok = reinterpret_cast<int*>(smem + C::OFF_TOK);    // [STAGES][64]

    const mla_dec::Scales scl = mla_dec::decode_scales(p);
    const float kvsc = scl.kvsc, sl2 = scl.sl2;
    // this thread's rows r0 and r0 + 8 of the 64 (accumulator layout of m64nN)
    const int r0 = 16 * wl + (lane >> 2), cq = 2 * (lane & 3);

    const int w_begin = p.work_indptr[blockIdx.x], w_end = p.work_indptr[blockIdx.x + 1];
    for (int wi = w_begin; wi < w_end; ++wi) {
        mla_dec::Work w;
        if (!mla_dec::load_work(p, wi, M, w)) continue;
        const int n_tiles = w.tiles(kTN);
        auto slot_of = [&](int tile) { return sbase + C::OFF_KV + (tile % C::STAGES) * (KV8 ? kRaw8 : kTile); };
        auto flags_of = [&](int tile) { return tokok + (tile % C::STAGES) * kTN; };

        __syncthreads();  // the previous work's epilogue is done with shared memory
        load_q<64, Q8>(p, w, smem, sbase, C::OFF_Q, tid);  // rows past nrows zero
        if (MLA_QM_ABLATE & 2) cp_commit();
        else issue_tile<KV8, 4>(p, w, 0, n_tiles, slot_of(0), flags_of(0), tid);

        float m_run[2], l_run[2];
        int lim[2];
#pragma unroll
        for (int i = 0; i < 2; ++i) {
            m_run[i] = -INFINITY;
            l_run[i] = 0.f;
            lim[i] = mla_dec::row_limit(p, w, r0 + 8 * i);
        }
        float o[128];
#pragma unroll
        for (int e = 0; e < 128; ++e) o[e] = 0.f;
        const uint64_t dQ = sw128_desc(sbase + C::OFF_Q, 16, 1024);
        LD ld;
        PagePrefetch pf;  // the page of the tile issued next, looked up one tile ahead
        pf.fetch(p, w, 1, n_tiles, tid >> 2, (tid & 3) == 0);

        for (int tile = 0; tile < n_tiles; ++tile) {
            const int stage = tile % C::STAGES;
            cp_wait<0>();
            if constexpr (!KV8) fence_proxy_async();  // cp.async data (and Q) -> the MMAs' async proxy
            __syncthreads();  // (A) tile landed for all; the other slot (and the widened tile) is free
            // the next tile's loads: part 1 by everyone now, parts 2-3 by warpgroup 1 now and by
            // warpgroup 0 while its S MMAs run / after its softmax
            ld.begin(p, w, tile + 1, n_tiles, slot_of(tile + 1), flags_of(tile + 1), tid, pf);
            pf.fetch(p, w, tile + 2, n_tiles, tid >> 2, (tid & 3) == 0);
            if (kSplit) ld.template part<0, K3>();
            if (wg == 1) {
                if (kSplit) ld.template part<K3, LD::K>();
                ld.commit();
            }
            uint32_t kt_off = C::OFF_KV + stage * kTile;
            if constexpr (KV8) {
                widen_tile(smem + C::OFF_KV + stage * kRaw8, smem + C::OFF_KVB, tid);
                fence_proxy_async();
                __syncthreads();  // (A') widened tile visible to the MMAs
                kt_off = C::OFF_KVB;
            }

            float alpha[2] = {1.f, 1.f};
            uint32_t a[4][4];  // P as the A fragments of the tile's 4 k-blocks (16 tokens each)
            // ---- warpgroup 0: S = Q . K^T [64 rows x 64 tokens], 36 x m64n64k16; softmax ----
            if (wg == 0) {
                float sacc[32];
#pragma unroll
                for (int e = 0; e < 32; ++e) sacc[e] = 0.f;
                qm_s_mma<!(MLA_QM_ABLATE & 1)>(sacc, dQ, sw128_desc(sbase + kt_off, 16, 1024));
                if (kSplit) ld.template part<K3, 2 * K3>();  // while the S MMAs run
                wg_wait0();
                reg_fence(sacc);
                qm_softmax(sacc, tokok + stage * kTN, w.tok_begin + tile * kTN, lim, sl2, cq, m_run, l_run, alpha, a);
                qm_store_p(pex, a, wt);
                if ((lane & 3) == 0) {
                    mex[r0] = alpha[0];
                    mex[r0 + 8] = alpha[1];
                }
                if (kSplit) ld.template part<2 * K3, LD::K>();
                ld.commit();
            }
            __syncthreads();  // (B) P and alpha visible to warpgroup 1
            if (wg == 1) {
                qm_load_p(pex, a, wt);
                alpha[0] = mex[r0];
                alpha[1] = mex[r0 + 8];
            }
            if (MLA_QM_ABLATE & 1) continue;

            // ---- O_w = O_w * alpha + P . V[:, 256 wg ..] over the tile's 4 k-blocks ----
            qm_pv(o, alpha, a, sw128_desc(sbase + kt_off + wg * 4 * kBlk, kVLbo, kVSbo));
        }
        cp_wait<0>();

        // ---- epilogue (qm_common.cuh); the exchange buffers are free after its first barrier ----
        qm_epilogue<true>(p, w, reinterpret_cast<float*>(smem + C::OFF_KV), mex, o, l_run, m_run, kvsc);
    }
}

// With a tensor map of the cache (p.kv_tma: the table row says launch_kv_tma 1 or 2 and the host
// could encode the map, page size >= 8; 64-byte aligned in the parameter space): bf16 Q and KV run
// the decoupled warpgroups of decode_qm_tma.cuh, fp8 Q and KV the fp8 tensor-core body of
// decode_qm8.cuh. Otherwise (bf16 Q with fp8 KV, page sizes below 8, no map) this file's body,
// which is also what an MLA_QM_ABLATE build measures whatever the call passes. The seesaw body
// (MLA_QM_SEESAW) issues block subsets of the 3-D map only: it runs where p.kv_tma is 1, and a
// page-box map (2) takes the TMA body; so does the TMA body's per-block-barrier variant
// (MLA_QMT_BLOCKBAR, decode_qm_tma.cuh).
template <int M, bool Q8, bool KV8>
__device__ __forceinline__ void decode_qm_dispatch(const mla_decode_params& p, char* smem) {
    if constexpr (Q8 == KV8 && MLA_QM_ABLATE == 0) {
        if (p.kv_tma != 0 && (reinterpret_cast<uintptr_t>(p.kv_tmap) & 63) == 0) {
            if constexpr (KV8) mla_q8::decode_qm8_body<M>(p, smem);
            else if constexpr (MLA_QM_SEESAW != 0) {
                if (p.kv_tma == 1) decode_qm_ss_body<M>(p, smem);
                else decode_qm_tma_body<M>(p, smem);
            } else if constexpr (MLA_QMT_BLOCKBAR != 0) {
                if (p.kv_tma == 1) decode_qm_tma_body<M, true>(p, smem);
                else decode_qm_tma_body<M>(p, smem);
            } else decode_qm_tma_body<M>(p, smem);
            return;
        }
    }
    decode_qm_body<M, Q8, KV8>(p, smem);
}

}  // namespace mla_wg

// Defines the extern "C" kernel mla_decode_qm_<QN>_<KVN>_m<M>.
#define MLA_DECODE_QM_KERNEL(QN, KVN, Q8, KV8, M) \
    MLA_DECODE_SM90_KERNEL(mla_decode_qm_##QN##_##KVN##_m##M, mla_wg::decode_qm_dispatch<M, Q8, KV8>)
