// decode_qm8_split.cuh - the fp8 qm body with S and the softmax split between the two warpgroups by
// tokens (MLA_QM8_SPLIT 1, session 41; a measurement build, off). decode_qm8.cuh's body runs S(t)
// and the softmax of every tile on warpgroup 0 while warpgroup 1 waits at PREADY (~25% of its
// stall samples, session 41 call 1). Here both warpgroups do the same work on every tile t:
//   S half      warpgroup w: S[64 rows x 32 tokens] of tokens 32 w .. 32 w + 31, 18 x
//               wgmma.m64n32k32.e4m3 in MLA_QM8_SCHAINS chains (Q read twice: 3 KB of operands a
//               16-cycle MMA, shared-memory bound at ~24 cycles, 864 a tile against 576);
//   row max     each warpgroup's 32-token row max into mxp[w][64]; barrier X (256): both S halves
//               done (the rope block is free for P^T) and both maxima visible;
//   softmax     both warpgroups take the tile's row max = max of the two halves, so the lazy
//               running max (MLA_QM8_LAZY), alpha and the rescale flags come out the same in both;
//               each stores the f16 P^T of its 32 tokens (warpgroup 0 also alpha and the flags);
//               barrier P (256): all of P^T visible;
//   O^T half    pv_half as before (warpgroup w: dims 256 w .., all 64 tokens); warpgroup 0 arrives
//               at EMPTY(t), warpgroup 1 syncs on it and refills the slot.
// Each warpgroup keeps its own running sums l (added in the epilogue) and running max (registers).
// Same ring, Q, tensor maps, masking and epilogue as decode_qm8.cuh; exact (f16 P).
#pragma once
#include "decode/decode_qm8.cuh"

#ifndef MLA_QM8_SPLIT
#define MLA_QM8_SPLIT 0
#endif

namespace mla_q8 {

// D[64 x 32] (+)= A . B, e4m3 x e4m3 -> fp32, both operands K-major in shared memory (as
// wgmma_n64_e4m3_ss_lo).
__device__ __forceinline__ void wgmma_n32_e4m3_ss_lo(float (&d)[16], uint32_t alo, uint32_t blo, uint32_t hi,
                                                     int acc) {
    asm volatile(
        "{\n.reg .pred p;\n.reg .b64 da, db;\nsetp.ne.b32 p, %19, 0;\n"
        "mov.b64 da, {%16, %18};\nmov.b64 db, {%17, %18};\n"
        "wgmma.mma_async.sync.aligned.m64n32k32.f32.e4m3.e4m3 {"
        "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15}, da, db, p, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
        : "r"(alo), "r"(blo), "r"(hi), "r"(acc));
}

// S [64 x 32] = Q . K^T of the 32 tile rows at descriptor dK (NA chains, summed in fp32), issued
// and waited for by one warpgroup.
template <int NA>
__device__ __forceinline__ void s_half(float (&s)[16], uint64_t dQ, uint64_t dK) {
    float acc[NA][16];
#pragma unroll
    for (int a = 0; a < NA; ++a) reg_fence(acc[a]);
    wg_fence();
    const uint32_t qlo = desc_lo_bcast(dQ), klo = desc_lo_bcast(dK);
#pragma unroll
    for (int kk = 0; kk < kSSteps; ++kk) {
        const uint32_t koff = uint32_t(((kk >> 2) * kBlk + (kk & 3) * 32) >> 4);
        wgmma_n32_e4m3_ss_lo(acc[kk % NA], qlo + koff, klo + koff, sw128_desc_hi(1024), kk >= NA ? 1 : 0);
    }
    wg_commit();
    wg_wait0();
#pragma unroll
    for (int a = 0; a < NA; ++a) reg_fence(acc[a]);
#pragma unroll
    for (int e = 0; e < 16; ++e) {
        s[e] = acc[0][e];
#pragma unroll
        for (int a = 1; a < NA; ++a) s[e] += acc[a][e];
    }
}

// First half of the split softmax: s[e] (row r0 + 8 ((e >> 1) & 1), half-token 8 (e >> 2) + cq +
// (e & 1); tk and jt0 already offset to the half's first token) masked (flag 0 in tk[], past the
// row's limit lim[]) and scaled by sl2 in place; mx = the rows' max over the half (quad-reduced).
__device__ __forceinline__ void split_max(float (&s)[16], const int* tk, int jt0, const int (&lim)[2], float sl2,
                                          int cq, float (&mx)[2]) {
    mx[0] = mx[1] = -INFINITY;
#pragma unroll
    for (int e = 0; e < 16; ++e) {
        const int ri = (e >> 1) & 1, jj = 8 * (e >> 2) + cq + (e & 1);
        s[e] = (tk[jj] != 0 && jt0 + jj <= lim[ri]) ? s[e] * sl2 : -INFINITY;
        mx[ri] = fmaxf(mx[ri], s[e]);
    }
#pragma unroll
    for (int i = 0; i < 2; ++i) {
        mx[i] = fmaxf(mx[i], __shfl_xor_sync(0xffffffffu, mx[i], 1));
        mx[i] = fmaxf(mx[i], __shfl_xor_sync(0xffffffffu, mx[i], 2));
    }
}

// Second half: against the running max m (updated in place, lazily as qm_softmax_p with kLazy)
// and the tile's row max mx, P = 2^(s - m) into s, l = l alpha + this thread's share of the half's
// row sums; alpha = 2^(m_in - m) (0 while m_in is -inf; 1 where the max stayed).
template <int kLazy>
__device__ __forceinline__ void split_p(float (&s)[16], const float (&mx)[2], float (&m)[2], float (&alpha)[2],
                                        float (&l)[2]) {
#pragma unroll
    for (int i = 0; i < 2; ++i) {
        const float m_in = m[i];
        m[i] = mx[i] > m_in + float(kLazy) ? mx[i] : m_in;  // -inf: takes mx
        alpha[i] = m_in == -INFINITY ? 0.f : (m[i] == m_in ? 1.f : ex2(m_in - m[i]));
        l[i] *= alpha[i];
    }
#pragma unroll
    for (int e = 0; e < 16; e += 2) {
        const int ri = (e >> 1) & 1;
        const float pa = m[ri] == -INFINITY ? 0.f : ex2(s[e] - m[ri]);
        const float pb = m[ri] == -INFINITY ? 0.f : ex2(s[e + 1] - m[ri]);
        l[ri] += pa + pb;
        s[e] = pa;
        s[e + 1] = pb;
    }
}

// The half's P (split_p's layout) as f16 into P^T at pt (store_pt's layout), tokens 32 w ...
__device__ __forceinline__ void store_pt_half(char* pt, const float (&s)[16], int r0, int q, int w) {
#pragma unroll
    for (int e = 0; e < 16; e += 2) {
        const int row = r0 + 8 * ((e >> 1) & 1), g = 4 * w + (e >> 2);
        *reinterpret_cast<__half2*>(pt + row * 128 + ((g ^ (row & 7)) << 4) + 4 * q) = __floats2half2_rn(s[e], s[e + 1]);
    }
}

// CfgQM8's layout plus the halves' row maxima [2][64] and warpgroup 1's row sums [64].
struct CfgSplit {
    static constexpr int OFF_MXP = CfgQM8::SMEM, OFF_LP = OFF_MXP + 2 * 64 * 4, SMEM = OFF_LP + 64 * 4;
    static_assert(SMEM <= mla_decode_qm_smem_bytes(true), "more than the qm rows' launch_smem");
};

// named barriers of this body besides decode_qm8.cuh's EMPTY (5 + t % 4): X and P, all 256 threads
constexpr int kBarX = 10, kBarP = 11;

template <int M>
__device__ __forceinline__ void decode_qm8_split_body(const mla_decode_params& p, char* smem) {
    using C = CfgQM8;
    constexpr int OFF_MXP = CfgSplit::OFF_MXP, OFF_LP = CfgSplit::OFF_LP, SMEM = CfgSplit::SMEM;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, wg = warp >> 2, wl = warp & 3;
    const int wt = tid & 127, q = lane & 3;
    if (!launch_ok(p, smem, SMEM)) return;
    const uint32_t sbase = smem_u32(smem);
    float* alx = reinterpret_cast<float*>(smem + C::OFF_AL);  // [kSlots][64] (warpgroup 0 writes)
    float* mx = reinterpret_cast<float*>(smem + C::OFF_MX);   // [64] the final running max (epilogue)
    int* sfl = reinterpret_cast<int*>(smem + C::OFF_SF);      // [kSlots][4]
    int* tokok = reinterpret_cast<int*>(smem + C::OFF_TOK);   // [kSlots][64]
    float* mxp = reinterpret_cast<float*>(smem + OFF_MXP);    // [2][64] the halves' row maxima
    float* lpart = reinterpret_cast<float*>(smem + OFF_LP);   // [64] warpgroup 1's row sums
    const uint32_t bar0 = sbase + C::OFF_BAR;
    if (tid < kSlots) mbar_init(bar0 + 8 * tid, 64);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    uint32_t phase = 0;

    const mla_dec::Scales scl = mla_dec::decode_scales(p);
    const float kvsc = scl.kvsc, sl2 = scl.sl2;
    const int r0 = 16 * wl + (lane >> 2), cq = 2 * q;
    const uint64_t dQ = sw128_desc(sbase + C::OFF_Q, 16, 1024);
    auto slot = [&](int s) { return C::OFF_KV + s * kTile8; };

    const int w_begin = p.work_indptr[blockIdx.x], w_end = p.work_indptr[blockIdx.x + 1];
    for (int wi = w_begin; wi < w_end; ++wi) {
        mla_dec::Work w;
        if (!mla_dec::load_work(p, wi, M, w)) continue;
        const int n_tiles = w.tiles(kTN);

        fence_proxy_async();
        __syncthreads();
        PagePrefetch pf;
        auto issue = [&](int tile, int s, const PagePrefetch& pg) {
            issue_tile8(p, w, tile, n_tiles, sbase + slot(s), tokok + s * kTN, bar0 + 8 * s, pg, wt);
        };
        if (wg == 1) {
            issue_ring8(p, w, n_tiles, sbase, tokok, bar0, wt);
            pf.fetch(p, w, kSlots, n_tiles, wt >> 1, (wt & 1) == 0);
        }
        load_q8(p, w, sbase + C::OFF_Q, tid);
        float l_run[2] = {0.f, 0.f}, m_run[2] = {-INFINITY, -INFINITY};
        int lim[2];
#pragma unroll
        for (int i = 0; i < 2; ++i) lim[i] = mla_dec::row_limit(p, w, r0 + 8 * i);
        float o[4][32];
#pragma unroll
        for (int mb = 0; mb < 4; ++mb)
#pragma unroll
            for (int e = 0; e < 32; ++e) o[mb][e] = 0.f;
        cp_wait<0>();
        fence_proxy_async();
        __syncthreads();

        for (int tile = 0; tile < n_tiles; ++tile) {
            const int s = tile & (kSlots - 1);
            char* tp = smem + slot(s);
            const int* tk = tokok + s * kTN;
            mbar_wait(bar0 + 8 * s, (phase >> s) & 1);
            phase ^= 1u << s;
            if (MLA_QM_RA_LATE_TRIG && tid == 0 && mla_dec::last_tile(wi, w_end, tile, n_tiles))
                mla_dec::trigger_dependents();
            float sv[16], mh[2], alpha[2];
            s_half<MLA_QM8_SCHAINS>(sv, dQ, sw128_desc(sbase + slot(s) + wg * 32 * 128, 16, 1024));
            split_max(sv, tk + 32 * wg, w.tok_begin + tile * kTN + 32 * wg, lim, sl2, cq, mh);
            if (q == 0) {
                mxp[wg * 64 + r0] = mh[0];
                mxp[wg * 64 + r0 + 8] = mh[1];
            }
            bar_sync(kBarX, 256);  // both S halves done (the rope block is free), both maxima visible
            const float mt[2] = {fmaxf(mh[0], mxp[(1 - wg) * 64 + r0]), fmaxf(mh[1], mxp[(1 - wg) * 64 + r0 + 8])};
            split_p<MLA_QM8_LAZY>(sv, mt, m_run, alpha, l_run);
            store_pt_half(tp + 4 * kBlk, sv, r0, q, wg);
            if (wg == 0) {
                if (q == 0) {
                    alx[s * 64 + r0] = alpha[0];
                    alx[s * 64 + r0 + 8] = alpha[1];
                }
                const bool moved = __any_sync(0xffffffffu, alpha[0] != 1.f || alpha[1] != 1.f);
                if (lane == 0) sfl[s * 4 + wl] = moved ? 1 : 0;
            }
            const bool masked = __any_sync(0xffffffffu, tk[lane] == 0 || tk[lane + 32] == 0);
            fence_proxy_async();   // P^T -> the MMAs' async proxy
            bar_sync(kBarP, 256);  // all of P^T, alpha and the flags visible
            const int4 f4 = *reinterpret_cast<const int4*>(sfl + s * 4);
            pv_half(o, tp, sbase + slot(s), wg, alx + s * 64, tk, masked, (f4.x | f4.y | f4.z | f4.w) != 0);
            if (wg == 0) {
                fence_proxy_async();
                if (tile + kSlots < n_tiles) bar_arrive(kBarEmpty + s, 256);
            } else if (tile + kSlots < n_tiles) {
                fence_proxy_async();
                bar_sync(kBarEmpty + s, 256);
                issue(tile + kSlots, s, pf);
                pf.fetch(p, w, tile + kSlots + 1, n_tiles, wt >> 1, (wt & 1) == 0);
            }
        }
        // warpgroup 1's row sums (quad-reduced) to warpgroup 0, whose quad leaders add them; the
        // final running max for the LSE (both warpgroups hold the same)
        if (wg == 1) {
#pragma unroll
            for (int i = 0; i < 2; ++i) {
                float lt = l_run[i] + __shfl_xor_sync(0xffffffffu, l_run[i], 1);
                lt += __shfl_xor_sync(0xffffffffu, lt, 2);
                if (q == 0) lpart[r0 + 8 * i] = lt;
            }
        } else if (q == 0) {
            mx[r0] = m_run[0];
            mx[r0 + 8] = m_run[1];
        }
        __syncthreads();
        if (wg == 0 && q == 0) {
            l_run[0] += lpart[r0];
            l_run[1] += lpart[r0 + 8];
        }
        epilogue(p, w, reinterpret_cast<float*>(smem + C::OFF_KV), reinterpret_cast<float*>(smem + C::OFF_LX), o,
                 l_run, n_tiles > 0 ? mx : nullptr, kvsc * mla_ra::kE4m3Fold);
    }
}

}  // namespace mla_q8
