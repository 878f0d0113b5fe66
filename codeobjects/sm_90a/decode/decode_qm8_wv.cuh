// decode_qm8_wv.cuh - a measurement body of the fp8 qm kernel (MLA_QM8_WV=1; off): V widened once a
// tile into shared memory, so that P.V runs as in the bf16 TMA body (decode_qm_tma.cuh: O [64 rows x
// 256 dims] a warpgroup, 4 x wgmma.m64n256k16 with A = P from registers, B = V MN-major) instead of
// decode_qm8.cuh's O^T += V^T . P^T, whose V^T fragments each warpgroup converts in registers
// (225 instructions a warp a tile, on warpgroup 0's chain; docs/performance.md, session 42).
//   S [64 x 64] = Q . K^T     18 x wgmma.m64n64k32.e4m3 by warpgroup 0 on the raw tile (as decode_qm8)
//   softmax (qm_softmax_p, lazy max), P as f16 A fragments: warpgroup 0 keeps them and stores them
//                             for warpgroup 1 in the slot's rope block (dead once S is done)
//   V f16 [64 tokens x 512]   widened from the raw tile by warpgroup 1 (exact e4m3 -> f16; keys
//                             flagged 0 enter as zeros) into one buffer in the bf16 tile's V layout
//                             (8 swizzled blocks of 64 dims)
//   O_w += P . V[:, 256 w ..]  f16 wgmma, fp32 accumulators (the qm epilogue)
// Per tile t (ring of 3 raw slots: 40 KB each beside Q's 40 KB and the 64 KB V buffer):
//   warpgroup 0: waits for tile t, S(t), softmax, P(t) and alpha(t) stored, PREADY(t); syncs on
//                VREADY (V(t) widened); its O half; arrives at VFREE (its P.V(t) done);
//   warpgroup 1: syncs on PREADY(t), loads P(t) and alpha(t): the raw slot is then free, and it
//                issues tile t + 3 into it; its O half; syncs on VFREE, waits for tile t + 1,
//                widens V(t + 1), arrives at VREADY.
// So warpgroup 1 widens V(t + 1) while warpgroup 0 runs S(t + 1), and no V^T fragment is built.
#pragma once
#include "decode/decode_qm8.cuh"

#ifndef MLA_QM8_WV
#define MLA_QM8_WV 0
#endif

namespace mla_q8 {

constexpr int kWvSlots = 3;

struct CfgQM8W {
    static constexpr int OFF_Q = 0;                            // Q fp8, 5 swizzled blocks of 64 rows
    static constexpr int OFF_KV = 5 * kBlk;                    // raw ring [3]; P(t) in block 4 of its slot
    static constexpr int OFF_VW = OFF_KV + kWvSlots * kTile8;  // V f16: 8 blocks of 64 tokens x 64 dims
    static constexpr int OFF_AL = OFF_VW + 8 * kBlk;           // alpha [3][64]
    static constexpr int OFF_TOK = OFF_AL + kWvSlots * 64 * 4; // token flags [3][64]
    static constexpr int OFF_BAR = OFF_TOK + kWvSlots * kTN * 4;  // mbarriers [3]
    static constexpr int SMEM = OFF_BAR + kWvSlots * 8;
    // the epilogue: output rows staged from OFF_KV over the ring and into the V buffer, the sums'
    // exchange ([2][128] float2) after them
    static constexpr int OFF_LX = OFF_KV + 64 * kOPitch * 4;
    static_assert(SMEM <= mla_decode_qm_smem_bytes(true), "more than the qm rows' launch_smem");
    static_assert(OFF_LX + 2 * 128 * 2 * 4 <= OFF_AL, "output staging and sums do not fit the ring and V");
    static_assert(OFF_VW % 1024 == 0, "swizzle atoms");
};

// named barriers (0 is __syncthreads): PREADY + t % 3, VREADY, VFREE
constexpr int kWvPReady = 1, kWvVReady = 4, kWvVFree = 5;

// V of the raw tile at `raw` (5 boxes of 64 tokens x 128 B, 128-byte swizzle) as f16 into `vw` (8
// blocks of 64 tokens x 128 B: dims 64 b .. 64 b + 63, 128-byte swizzle: the MN-major B layout of
// the bf16 tiles' V), keys flagged 0 in tok[] as zeros; by the 128 threads of one warpgroup (wt):
// token wt % 64, dims 256 (wt / 64) .. + 255, 16 raw chunks of 16 bytes each (8 consecutive tokens
// a quarter warp: the swizzle spreads them over the banks).
__device__ __forceinline__ void widen_v(const char* raw, char* vw, const int* tok, int wt) {
    const int t = wt & 63, h = wt >> 6, sw = t & 7;
    const bool ok = tok[t] != 0;
#pragma unroll
    for (int i = 0; i < 16; ++i) {
        const int c = 16 * h + i;  // raw chunk: dims 16 c .. 16 c + 15
        uint4 x = *reinterpret_cast<const uint4*>(raw + (c >> 3) * kBlk + t * 128 + (((c & 7) ^ sw) << 4));
        uint32_t f[8];
        mla_ra::chunk_to_f16(x, f);
        if (!ok) {
#pragma unroll
            for (int k = 0; k < 8; ++k) f[k] = 0u;
        }
        char* dst = vw + (c >> 2) * kBlk + t * 128;
        const int k0 = 2 * (c & 3);
        *reinterpret_cast<uint4*>(dst + ((k0 ^ sw) << 4)) = make_uint4(f[0], f[1], f[2], f[3]);
        *reinterpret_cast<uint4*>(dst + (((k0 + 1) ^ sw) << 4)) = make_uint4(f[4], f[5], f[6], f[7]);
    }
}

// One warpgroup's O = O alpha + P . V_w (4 x f16 m64n256k16; V_w at descriptor dV), O unscaled where
// every alpha of the warp is 1 (the lazy max), waited for.
__device__ __forceinline__ void wv_pv(float (&o)[128], const float (&alpha)[2], uint32_t (&a)[4][4], uint64_t dV) {
    if (__any_sync(0xffffffffu, alpha[0] != 1.f || alpha[1] != 1.f)) {
#pragma unroll
        for (int e = 0; e < 128; ++e) o[e] *= alpha[(e >> 1) & 1];
    }
    reg_fence(o);
#pragma unroll
    for (int kb = 0; kb < 4; ++kb)
#pragma unroll
        for (int i = 0; i < 4; ++i) asm volatile("" : "+r"(a[kb][i])::"memory");
    wg_fence();
    const uint32_t vlo = desc_lo_bcast(dV), vhi = uint32_t(dV >> 32);
#pragma unroll
    for (int kb = 0; kb < 4; ++kb) wgmma_n256_rs<true>(o, a[kb], (uint64_t(vhi) << 32) | (vlo + uint32_t((kb * 2048) >> 4)));
    wg_commit();
    wg_wait0();
    reg_fence(o);
}

template <int M>
__device__ __forceinline__ void decode_qm8_wv_body(const mla_decode_params& p, char* smem) {
    using C = CfgQM8W;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, wg = warp >> 2, wl = warp & 3;
    const int wt = tid & 127, q = lane & 3;
    if (!launch_ok(p, smem, C::SMEM)) return;
    const uint32_t sbase = smem_u32(smem);
    float* alx = reinterpret_cast<float*>(smem + C::OFF_AL);  // [3][64]
    int* tokok = reinterpret_cast<int*>(smem + C::OFF_TOK);   // [3][64]
    const uint32_t bar0 = sbase + C::OFF_BAR;
    if (tid < kWvSlots) mbar_init(bar0 + 8 * tid, 64);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    uint32_t phase = 0;  // bit s: the parity of slot s's next fill, as this warpgroup has waited

    const mla_dec::Scales scl = mla_dec::decode_scales(p);
    const float kvsc = scl.kvsc, sl2 = scl.sl2;
    const int r0 = 16 * wl + (lane >> 2), cq = 2 * q;
    const uint64_t dQ = sw128_desc(sbase + C::OFF_Q, 16, 1024);
    const uint64_t dV = sw128_desc(sbase + C::OFF_VW + wg * 4 * kBlk, kVLbo, kVSbo);
    auto slot = [&](int s) { return C::OFF_KV + s * kTile8; };
    auto wait_tile = [&](int s) {
        mbar_wait(bar0 + 8 * s, (phase >> s) & 1);
        phase ^= 1u << s;
    };

    const int w_begin = p.work_indptr[blockIdx.x], w_end = p.work_indptr[blockIdx.x + 1];
    for (int wi = w_begin; wi < w_end; ++wi) {
        mla_dec::Work w;
        if (!mla_dec::load_work(p, wi, M, w)) continue;
        const int n_tiles = w.tiles(kTN);

        fence_proxy_async();  // this thread's generic accesses of the ring before the next TMA writes
        __syncthreads();      // the previous work's epilogue is done with shared memory (and mbarrier init)
        PagePrefetch pf;      // warpgroup 1: the page of the tile it issues next
        auto issue = [&](int tile, int s, const PagePrefetch& pg) {
            issue_tile8(p, w, tile, n_tiles, sbase + slot(s), tokok + s * kTN, bar0 + 8 * s, pg, wt);
        };
        if (wg == 1) {
            PagePrefetch pg[kWvSlots];
#pragma unroll
            for (int s = 0; s < kWvSlots; ++s) pg[s].fetch(p, w, s, n_tiles, wt >> 1, (wt & 1) == 0);
#pragma unroll
            for (int s = 0; s < kWvSlots; ++s) issue(s, s, pg[s]);
            pf.fetch(p, w, kWvSlots, n_tiles, wt >> 1, (wt & 1) == 0);
        }
        load_q8(p, w, sbase + C::OFF_Q, tid);
        float m_run[2] = {-INFINITY, -INFINITY}, l_run[2] = {0.f, 0.f};
        int lim[2];
#pragma unroll
        for (int i = 0; i < 2; ++i) lim[i] = mla_dec::row_limit(p, w, r0 + 8 * i);
        float o[128];
#pragma unroll
        for (int e = 0; e < 128; ++e) o[e] = 0.f;
        cp_wait<0>();
        fence_proxy_async();  // Q (cp.async) -> the MMAs' async proxy
        __syncthreads();

        if (wg == 0) {
            for (int tile = 0; tile < n_tiles; ++tile) {
                const int s = tile % kWvSlots;
                wait_tile(s);
                if (MLA_QM_RA_LATE_TRIG && tid == 0 && mla_dec::last_tile(wi, w_end, tile, n_tiles))
                    mla_dec::trigger_dependents();
                float sacc[32], mn[2], alpha[2];
                s_mma(sacc, dQ, sw128_desc(sbase + slot(s), 16, 1024));
                uint32_t unused[4][4], a[4][4];
                qm_softmax_p<false, MLA_QM8_LAZY>(sacc, tokok + s * kTN, w.tok_begin + tile * kTN, lim, sl2, cq, m_run,
                                                  mn, alpha, l_run, unused);
                qm_lazy_unit<MLA_QM8_LAZY>(alpha, m_run, mn);
                m_run[0] = mn[0];
                m_run[1] = mn[1];
#pragma unroll
                for (int e = 0; e < 32; e += 2) {
                    const __half2 h2 = __floats2half2_rn(sacc[e], sacc[e + 1]);
                    a[e >> 3][(e >> 1) & 3] = *reinterpret_cast<const uint32_t*>(&h2);
                }
                qm_store_p(reinterpret_cast<uint4*>(smem + slot(s) + 4 * kBlk), a, wt);  // S(t) is done with the rope
                if (q == 0) {
                    alx[s * 64 + r0] = alpha[0];
                    alx[s * 64 + r0 + 8] = alpha[1];
                }
                fence_proxy_async();  // the P stores before the TMA that refills the slot
                bar_arrive(kWvPReady + s, 256);
                bar_sync(kWvVReady, 256);  // V(t) widened
                wv_pv(o, alpha, a, dV);
                if (tile + 1 < n_tiles) bar_arrive(kWvVFree, 256);
            }
        } else {
            if (n_tiles > 0) {
                wait_tile(0);
                widen_v(smem + slot(0), smem + C::OFF_VW, tokok, wt);
                fence_proxy_async();  // the widened V -> the MMAs' async proxy
                bar_arrive(kWvVReady, 256);
            }
            for (int tile = 0; tile < n_tiles; ++tile) {
                const int s = tile % kWvSlots;
                bar_sync(kWvPReady + s, 256);  // P(t), alpha(t)
                uint32_t a[4][4];
                qm_load_p(reinterpret_cast<const uint4*>(smem + slot(s) + 4 * kBlk), a, wt);
                const float alpha[2] = {alx[s * 64 + r0], alx[s * 64 + r0 + 8]};
                if (tile + kWvSlots < n_tiles) {  // the slot is free: S(t) done, V(t) widened, P(t) read
                    fence_proxy_async();
                    issue(tile + kWvSlots, s, pf);
                    pf.fetch(p, w, tile + kWvSlots + 1, n_tiles, wt >> 1, (wt & 1) == 0);
                }
                wv_pv(o, alpha, a, dV);
                if (tile + 1 < n_tiles) {
                    const int s1 = (tile + 1) % kWvSlots;
                    bar_sync(kWvVFree, 256);  // warpgroup 0's P.V(t) done with the V buffer
                    wait_tile(s1);
                    widen_v(smem + slot(s1), smem + C::OFF_VW, tokok + s1 * kTN, wt);
                    fence_proxy_async();
                    bar_arrive(kWvVReady, 256);
                }
            }
        }
        qm_epilogue<true>(p, w, reinterpret_cast<float*>(smem + C::OFF_KV), reinterpret_cast<float*>(smem + C::OFF_LX),
                          o, l_run, m_run, kvsc * mla_ra::kE4m3Fold);
    }
}

}  // namespace mla_q8
