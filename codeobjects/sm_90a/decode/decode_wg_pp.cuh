// decode_wg_pp.cuh - the sm_90a transposed decode body for fp8 KV with 16-row tiles: two ping-pong
// warpgroups that each load, widen and compute every other tile (decode_wg_pp_body), and their
// merge (pp_epilogue). Instantiated through decode_wgmma.cuh's dispatch (mla_decode_wg_pingpong).
#pragma once
#include "decode/wg_tile.cuh"

namespace mla_wg {

// ---- fp8 KV, M = 16: ping-pong warpgroups ----
// Warpgroup g runs tiles g, g + 2, ...: its 128 threads load a tile's fp8 rows straight into
// registers (2 threads per token, 18 x 16 bytes each; one page lookup per thread), widen them into
// the warpgroup's own bf16 tile, issue the loads of its next tile, then run tile_mma on all N
// rows with its own O^T, m, l. One warpgroup's widening and softmax overlap the other's MMAs, and
// every thread keeps one tile of loads in flight. At the end the two (m, l, O^T) merge:
// m = max(m0, m1), l = l0 2^(m0-m) + l1 2^(m1-m), O = (O0 2^(m0-m) + O1 2^(m1-m)) / l.
template <int N>
struct CfgPP {
    static constexpr int OFF_Q = 0;
    static constexpr int OFF_W = N * 1152;               // 2 widened tiles
    static constexpr int OFF_P = OFF_W + 2 * kTile;      // 2 x P^T [N][64]
    static constexpr int OFF_RED = OFF_P + 2 * N * 128;  // 2 x [4][N]
    static constexpr int OFF_TOK = OFF_RED + 2 * 16 * N; // 2 x [64]
    static constexpr int OFF_MRG = OFF_TOK + 2 * kTN * 4; // [warpgroup][m, l][N] floats
    static constexpr int SMEM = OFF_MRG + 2 * 2 * 4 * N;
    static_assert(SMEM == mla_decode_wg_smem_bytes(N, true), "smem layout and formula disagree");
    static_assert(N * kOPitch * 4 <= 2 * kTile, "output staging does not fit the tiles");
    static_assert(OFF_W % 1024 == 0 && OFF_P % 1024 == 0 && (N * 128) % 1024 == 0, "swizzle atoms");
};

// The end of a ping-pong work: each warpgroup's (m, l, O^T) over its own tiles merge
// (m = max(m0, m1), l = l0 2^(m0-m) + l1 2^(m1-m), O = (O0 2^(m0-m) + O1 2^(m1-m)) kv_scale / l;
// l = 0 gives o = 0 and lse = -inf), staged in obuf [N][kOPitch] and written (store_lse,
// store_rows). red: the warpgroup's [4][N] exchange; mrg: [2][m | l][N]. All 256 threads call it;
// the caller has synchronised both warpgroups' MMAs. VPERM: O^T rows are the permuted output dims
// of the register-sourced kernels (decode_ra.cuh), else 64 mb + row.
template <int N, bool VPERM>
__device__ __forceinline__ void pp_epilogue(const mla_decode_params& p, const mla_dec::Work& w, float* obuf, float* red,
                                            float* mrg, const float (&m_run)[N / 4], const float (&l_run)[N / 4],
                                            const float (&o)[8][N / 2], float kvsc) {
    constexpr int NQ = N, NI = NQ / 4;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, wg = warp >> 2, wl = warp & 3;
    float lt[NI];
    column_sums<NQ>(l_run, red, 1 + wg, lt);
    if (wl == 0 && lane < 4) {
#pragma unroll
        for (int i = 0; i < NI; ++i) {
            const int col = 8 * (i >> 1) + 2 * lane + (i & 1);
            mrg[(wg * 2 + 0) * N + col] = m_run[i];
            mrg[(wg * 2 + 1) * N + col] = lt[i];
        }
    }
    __syncthreads();  // both warpgroups' (m, l) visible
    float fac[NI], mt[NI];
#pragma unroll
    for (int i = 0; i < NI; ++i) {
        const int col = 8 * (i >> 1) + 2 * (lane & 3) + (i & 1);
        const float mo = mrg[((wg ^ 1) * 2 + 0) * N + col], lo = mrg[((wg ^ 1) * 2 + 1) * N + col];
        const float m = fmaxf(m_run[i], mo);
        const float sme = m_run[i] == -INFINITY ? 0.f : ex2(m_run[i] - m);
        const float sot = mo == -INFINITY ? 0.f : ex2(mo - m);
        const float l = lt[i] * sme + lo * sot;
        fac[i] = l > 0.f ? sme * kvsc / l : 0.f;
        mt[i] = m;
        lt[i] = l;
    }
    const int r0 = 16 * wl + (lane >> 2);
    for (int pass = 0; pass < 2; ++pass) {
        if (pass == wg) {
#pragma unroll
            for (int mb = 0; mb < 8; ++mb)
#pragma unroll
                for (int i = 0; i < NI; ++i) {
                    const int col = 8 * (i >> 1) + 2 * (lane & 3) + (i & 1);
                    const int e0 = 4 * (i >> 1) + (i & 1);
                    // output dims of o[mb][e0] and o[mb][e0 + 2]: 64 mb + r0 and + 8, or with
                    // VPERM (decode_ra.cuh) 16 (8 wl + lane / 4) + 2 mb and + 1
                    float* d = obuf + col * kOPitch + (VPERM ? 16 * (8 * wl + (lane >> 2)) + 2 * mb : 64 * mb + r0);
                    const float a = o[mb][e0] * fac[i], b = o[mb][e0 + 2] * fac[i];
                    d[0] = pass ? d[0] + a : a;
                    d[VPERM ? 1 : 8] = pass ? d[VPERM ? 1 : 8] + b : b;
                }
        }
        __syncthreads();
    }
    if (wg == 0 && wl == 0 && lane < 4) {
#pragma unroll
        for (int i = 0; i < NI; ++i) {
            const int row = 8 * (i >> 1) + 2 * lane + (i & 1);
            if (row < w.nrows) store_lse(p, w, row, lt[i] > 0.f ? (mt[i] + __log2f(lt[i])) * kLn2 : -INFINITY);
        }
    }
    store_rows(p, w, obuf, tid);
}

template <int N, bool Q8>
__device__ __forceinline__ void decode_wg_pp_body(const mla_decode_params& p, char* smem) {
    using C = CfgPP<N>;
    constexpr int NQ = N, NR = NQ / 2, NI = NQ / 4;
    const int tid = threadIdx.x, warp = tid >> 5, wg = warp >> 2;
    const int wt = tid & 127;
    if (!launch_ok(p, smem, C::SMEM)) return;
    const uint32_t sbase = smem_u32(smem);
    float* red = reinterpret_cast<float*>(smem + C::OFF_RED) + wg * 4 * NQ;
    int* tok = reinterpret_cast<int*>(smem + C::OFF_TOK) + wg * kTN;
    float* mrg = reinterpret_cast<float*>(smem + C::OFF_MRG);  // [wg][m | l][N]
    const uint32_t w_off = C::OFF_W + wg * kTile, p_off = C::OFF_P + wg * N * 128;

    const mla_dec::Scales scl = mla_dec::decode_scales(p);
    const float kvsc = scl.kvsc, sl2 = scl.sl2;
    // loader: token ld_t, 16-byte chunks ld_sub + 2 k (k < 18) of its 576-byte row
    const int ld_t = wt >> 1, ld_sub = wt & 1;

    const int w_begin = p.work_indptr[blockIdx.x], w_end = p.work_indptr[blockIdx.x + 1];
    for (int wi = w_begin; wi < w_end; ++wi) {
        mla_dec::Work w;
        if (!mla_dec::load_work(p, wi, N, w)) continue;
        const int n_tiles = w.tiles(kTN);

        // ---- register loads of one tile (this thread's token and chunks); bad pages never read ----
        uint4 pre[kD / 32];
        bool pre_ok = false;
        auto load = [&](int tile) {
            const char* src = nullptr;
            if (tile < n_tiles) {
                const int j = w.tok_begin + tile * kTN + ld_t;
                if (j < w.tok_end) src = kv_row<true>(p, w, j, ld_sub == 0);
            }
            pre_ok = src != nullptr;
            if (pre_ok) src += 16 * ld_sub;
#pragma unroll
            for (int k = 0; k < kD / 32; ++k)
                pre[k] = pre_ok ? __ldcs(reinterpret_cast<const uint4*>(src + 32 * k)) : make_uint4(0, 0, 0, 0);
        };
        load(wg);  // first tile of this warpgroup, in flight while Q lands

        __syncthreads();  // the previous work's epilogue is done with shared memory
        load_q<N, Q8>(p, w, smem, sbase, C::OFF_Q, tid);  // rows past nrows zero
        if constexpr (!Q8) cp_wait<0>();
        fence_proxy_async();
        __syncthreads();  // Q visible to both warpgroups' MMAs

        float m_run[NI], l_run[NI], o[8][NR];
        int lim[NI];
        start_columns<NQ>(p, w, 0, m_run, l_run, lim, o);
        const uint64_t dQ = sw128_desc(sbase + C::OFF_Q, 16, 1024);

        // widened chunk c of token ld_t: block k / 2, chunks 2 ld_sub + 4 (k & 1) and + 1
        char* wide = smem + w_off + ld_t * 128;
        const int ce = ((2 * ld_sub) ^ (ld_t & 7)) << 4, ce1 = ((2 * ld_sub + 1) ^ (ld_t & 7)) << 4;
        const int co = ((2 * ld_sub + 4) ^ (ld_t & 7)) << 4, co1 = ((2 * ld_sub + 5) ^ (ld_t & 7)) << 4;
        for (int tile = wg; tile < n_tiles; tile += 2) {
            bar_sync(1 + wg, 128);  // the warpgroup's previous MMAs are done with its tile and P^T
#pragma unroll
            for (int k = 0; k < kD / 32; ++k) {
                uint4 wv[2];
                mla_dec::fp8x16_to_bf16(pre[k], wv);
                char* d = wide + (k >> 1) * kBlk;
                *reinterpret_cast<uint4*>(d + ((k & 1) ? co : ce)) = wv[0];
                *reinterpret_cast<uint4*>(d + ((k & 1) ? co1 : ce1)) = wv[1];
            }
            if (ld_sub == 0) tok[ld_t] = pre_ok ? 1 : 0;
            fence_proxy_async();
            bar_sync(1 + wg, 128);  // widened tile and flags visible to the warpgroup
            load(tile + 2);         // next tile of this warpgroup: in flight during the MMAs
            if (!(MLA_WG_ABLATE & 4))
                tile_mma<N, NQ>(smem, sbase, w_off, p_off, red, tok, w.tok_begin + tile * kTN, lim, sl2, m_run,
                                l_run, o, dQ, 1 + wg);
        }
        __syncthreads();  // both warpgroups' MMAs done: the tiles become the output staging

        // ---- merge the two warpgroups, normalise, stage, write ----
        pp_epilogue<N, false>(p, w, reinterpret_cast<float*>(smem + C::OFF_W), red, mrg, m_run, l_run, o, kvsc);
    }
}

}  // namespace mla_wg
