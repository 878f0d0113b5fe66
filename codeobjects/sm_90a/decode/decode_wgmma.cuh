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
// softmax; all 256 threads load KV tiles with cp.async (16-byte chunks, swizzled addresses),
// widen fp8 tiles to bf16 exactly, and write the results out.
#pragma once
#include "decode/decode_kernel.cuh"  // cp.async, ex2, fp8 widening, Work

namespace mla_wg {

using mla_dec::cp_async16;
using mla_dec::cp_commit;
using mla_dec::cp_wait;
using mla_dec::ex2;
using mla_dec::smem_u32;

constexpr int kD = MLA_DECODE_D_QK;
constexpr int kDV = MLA_DECODE_D_V;
constexpr int kTN = 64;              // KV tokens per tile (the MMA's M)
constexpr int kBlk = kTN * 128;      // one 64-column block of a tile: 64 rows x 128 B
constexpr int kTile = 9 * kBlk;      // bf16 tile, 576 columns
constexpr int kRaw8 = kTN * kD;      // fp8 tile, unswizzled rows of 576 B
constexpr int kOPitch = kDV + 4;     // output staging row, floats
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

template <int N, bool KV8>
struct Cfg {
    static constexpr int NC = N == 64 ? 2 : 1;  // MMA warpgroups
    static constexpr int NQ = N / NC;           // query rows per MMA warpgroup (16 or 32)
    static constexpr int STAGES = mla_decode_wg_stages(N, KV8);
    static constexpr int OFF_Q = 0;
    static constexpr int OFF_KV = N * 1152;
    static constexpr int RING = STAGES * (KV8 ? kRaw8 : kTile);
    static constexpr int OFF_KVB = OFF_KV + RING;  // fp8: the widened bf16 tile
    static constexpr int OFF_P = OFF_KVB + (KV8 ? kTile : 0);
    static constexpr int OFF_RED = OFF_P + N * 128;
    static constexpr int OFF_TOK = OFF_RED + 16 * N;
    static constexpr int SMEM = OFF_TOK + STAGES * kTN * 4;
    static_assert(SMEM == mla_decode_wg_smem_bytes(N, KV8), "smem layout and formula disagree");
    static_assert(SMEM <= 232448, "more than 227 KB of shared memory");
    static_assert(N * kOPitch * 4 <= RING + (KV8 ? kTile : 0), "output staging does not fit the ring");
    static_assert(OFF_KV % 1024 == 0 && OFF_KVB % 1024 == 0 && OFF_P % 1024 == 0, "swizzle atoms");
};

__device__ __forceinline__ void fence_proxy_async() {
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
__device__ __forceinline__ void bar_sync(int id, int n) {
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(n) : "memory");
}
__device__ __forceinline__ void wg_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wg_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wg_wait0() { asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory"); }
template <int R>
__device__ __forceinline__ void reg_fence(float (&d)[R]) {
#pragma unroll
    for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// Shared-memory matrix descriptor, 128-byte swizzle (layout type 1 in bits 62-63). Addresses and
// offsets in bytes; the swizzle atoms (8 rows x 128 B) must start 1024-byte aligned.
__device__ __forceinline__ uint64_t sw128_desc(uint32_t saddr, uint32_t lbo, uint32_t sbo) {
    return uint64_t((saddr & 0x3FFFF) >> 4) | (uint64_t(lbo >> 4) << 16) | (uint64_t(sbo >> 4) << 32) |
           (1ull << 62);
}

// D[64 x 16] (+)= A . B, bf16 in, fp32 accumulate; TA = 1: A is MN-major (transposed).
template <int TA>
__device__ __forceinline__ void wgmma_n16(float (&d)[8], uint64_t a, uint64_t b, int acc) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %10, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 "
        "{%0,%1,%2,%3,%4,%5,%6,%7}, %8, %9, p, 1, 1, %11, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
        : "l"(a), "l"(b), "r"(acc), "n"(TA));
}
template <int TA>
__device__ __forceinline__ void wgmma_n32(float (&d)[16], uint64_t a, uint64_t b, int acc) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 "
        "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15}, %16, %17, p, 1, 1, %19, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
        : "l"(a), "l"(b), "r"(acc), "n"(TA));
}
template <int NQ, int TA>
__device__ __forceinline__ void wgmma(float (&d)[NQ / 2], uint64_t a, uint64_t b, int acc) {
    if constexpr (NQ == 16) wgmma_n16<TA>(d, a, b, acc);
    else wgmma_n32<TA>(d, a, b, acc);
}

// Byte offset of 16-byte chunk q (of 72 per 576-column bf16 row) of row r in a swizzled matrix
// of `rows` rows.
__device__ __forceinline__ uint32_t sw_off(int rows, int r, int q) {
    return uint32_t((q >> 3) * rows * 128 + r * 128 + (((q & 7) ^ (r & 7)) << 4));
}

// 16 fp8 bytes (columns 16 q8 ..) of row r widened to bf16 into a swizzled matrix of `rows` rows.
__device__ __forceinline__ void widen_store(char* base, int rows, int r, int q8, const uint4 v) {
    uint4 w[2];
    mla_dec::fp8x16_to_bf16(v, w);
    *reinterpret_cast<uint4*>(base + sw_off(rows, r, 2 * q8)) = w[0];
    *reinterpret_cast<uint4*>(base + sw_off(rows, r, 2 * q8 + 1)) = w[1];
}

template <int N, bool Q8, bool KV8>
__device__ __forceinline__ void decode_wg_body(const mla_decode_params& p, char* smem) {
    using C = Cfg<N, KV8>;
    constexpr int NQ = C::NQ, NR = NQ / 2, NI = NQ / 4;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, wg = warp >> 2, wl = warp & 3;
    if (blockDim.x != 256) return;  // the table's launch_threads disagrees: do nothing
    const uint32_t sbase = smem_u32(smem);
    {
        uint32_t dsmem;
        asm("mov.u32 %0, %%dynamic_smem_size;\n" : "=r"(dsmem));
        if (dsmem < static_cast<uint32_t>(C::SMEM) || (sbase & 1023u) != 0) {
            if (tid == 0 && p.error_flag) atomicOr(p.error_flag, MLA_DECODE_ERR_SMEM);
            return;
        }
    }
    float* red = reinterpret_cast<float*>(smem + C::OFF_RED);  // [NC][4 warps][NQ]
    int* tokok = reinterpret_cast<int*>(smem + C::OFF_TOK);    // [STAGES][64]
    const bool mma = wg < C::NC;

    const float qsc = p.q_scale ? *p.q_scale : 1.0f;
    const float kvsc = p.kv_scale ? *p.kv_scale : 1.0f;
    const float sl2 = p.softmax_scale * qsc * kvsc * kLog2e;
    const int Hk = p.kernel_heads, r = p.qk_batch_ratio, psl = p.page_size_log2;
    const int psmask = (1 << psl) - 1;
    const char* kv_g = static_cast<const char*>(p.kv);

    const int w_begin = p.work_indptr[blockIdx.x], w_end = p.work_indptr[blockIdx.x + 1];
    for (int wi = w_begin; wi < w_end; ++wi) {
        const int4 wa = *reinterpret_cast<const int4*>(p.work_info_set + 8 * (int64_t)wi);
        const int4 wb = *reinterpret_cast<const int4*>(p.work_info_set + 8 * (int64_t)wi + 4);
        mla_dec::Work w;
        w.b = wa.x / r;
        w.g = wa.x % r;
        w.pql = wa.y;
        w.qo_b = p.qo_indptr[w.b];
        w.L = p.qo_indptr[w.b + 1] - w.qo_b;
        w.t0 = wa.z - (w.qo_b * r + w.g * w.L);
        w.nrows = (wa.w - wa.z) * Hk;
        w.kvi_b = p.kv_indptr[w.b];
        {
            const int np = p.kv_indptr[w.b + 1] - w.kvi_b;
            w.n_kv = np > 0 ? ((np - 1) << psl) + p.kv_last_page_lens[w.b] : 0;
        }
        w.tok_begin = (wb.x - w.kvi_b) << psl;
        w.tok_end = min(w.n_kv - wb.z, w.n_kv);
        if (w.nrows > N || w.nrows < 0 || w.t0 < 0) {
            if (tid == 0 && p.error_flag) atomicOr(p.error_flag, MLA_DECODE_ERR_PLAN);
            continue;
        }
        if (w.tok_begin < 0) w.tok_begin = 0;
        const int n_tiles = w.tok_end > w.tok_begin ? (w.tok_end - w.tok_begin + kTN - 1) / kTN : 0;

        __syncthreads();  // the previous work's epilogue is done with shared memory
        // ---- Q tile -> shared (bf16, swizzled), rows past nrows zero ----
        auto q_src = [&](int row) {
            const int tt = row / Hk, h = row % Hk;
            return static_cast<const char*>(p.q) +
                   (Q8 ? 1 : 2) * ((int64_t)(w.qo_b + w.t0 + tt) * p.q_stride_token +
                                   (int64_t)(w.g * Hk + h) * p.q_stride_head);
        };
        if constexpr (!Q8) {
            for (int c = tid; c < N * 72; c += 256) {
                const int row = c / 72, q = c - row * 72;
                const bool ok = row < w.nrows;
                cp_async16(sbase + C::OFF_Q + sw_off(N, row, q), ok ? q_src(row) + 16 * q : p.q, ok ? 16 : 0);
            }
            cp_commit();
        } else {
            for (int c = tid; c < N * 36; c += 256) {
                const int row = c / 36, q8 = c - row * 36;
                uint4 v = make_uint4(0, 0, 0, 0);
                if (row < w.nrows) v = *reinterpret_cast<const uint4*>(q_src(row) + 16 * q8);
                widen_store(smem + C::OFF_Q, N, row, q8, v);
            }
        }

        // ---- KV tile loader: 16-byte chunks, flat over (token, chunk); bad pages never read ----
        auto issue = [&](int tile) {
            if (tile < n_tiles) {
                const int stage = tile % C::STAGES;
                const int jb = w.tok_begin + tile * kTN;
                constexpr int CPT = KV8 ? 36 : 72;  // chunks per token
#pragma unroll
                for (int k = 0; k < kTN * CPT / 256; ++k) {
                    const int f = tid + 256 * k;
                    const int t = f / CPT, q = f - t * CPT;
                    const int j = jb + t;
                    bool ok = j < w.tok_end;
                    const char* src = kv_g;
                    if (ok) {
                        const int pi = j >> psl;
                        int page = -1;
                        if (p.block_table_stride > 0) {
                            if (pi < p.block_table_stride)
                                page = p.page_table[(int64_t)w.b * p.block_table_stride + pi];
                            else if (p.error_flag && q == 0)
                                atomicOr(p.error_flag, MLA_DECODE_ERR_PAGE_INDEX);
                        } else {
                            const int64_t idx = (int64_t)w.kvi_b + pi;
                            if (idx >= 0 && idx < p.num_page_indices)
                                page = p.page_table[idx];
                            else if (p.error_flag && q == 0)
                                atomicOr(p.error_flag, MLA_DECODE_ERR_PAGE_INDEX);
                        }
                        if (page < 0 || page >= p.num_pages) {
                            if (p.error_flag && q == 0) atomicOr(p.error_flag, MLA_DECODE_ERR_PAGE_ID);
                            ok = false;
                        } else {
                            src = kv_g + ((int64_t)page * p.kv_stride_page + (int64_t)(j & psmask) * kD) *
                                             (KV8 ? 1 : 2);
                        }
                    }
                    if (q == 0) tokok[stage * kTN + t] = ok ? 1 : 0;
                    const uint32_t dst = KV8 ? sbase + C::OFF_KV + stage * kRaw8 + t * kD + 16 * q
                                             : sbase + C::OFF_KV + stage * kTile + sw_off(kTN, t, q);
                    cp_async16(dst, src + (ok ? 16 * q : 0), ok ? 16 : 0);
                }
            }
            cp_commit();  // one group per tile slot, even empty: keeps the wait count uniform
        };
#pragma unroll
        for (int s = 0; s < C::STAGES - 1; ++s) issue(s);

        // ---- per-thread state of the MMA warpgroups: columns (query rows) 8 j + 2 (lane & 3) + e ----
        float m_run[NI], l_run[NI];
        int lim[NI];
#pragma unroll
        for (int i = 0; i < NI; ++i) {
            const int row = wg * NQ + 8 * (i >> 1) + 2 * (lane & 3) + (i & 1);
            m_run[i] = -INFINITY;
            l_run[i] = 0.f;
            lim[i] = row >= w.nrows ? -1 : p.causal ? w.n_kv - w.L + w.t0 + row / Hk : 0x7fffffff;
        }
        float o[8][NR];
#pragma unroll
        for (int mb = 0; mb < 8; ++mb)
#pragma unroll
            for (int e = 0; e < NR; ++e) o[mb][e] = 0.f;

        const uint64_t dQ = sw128_desc(sbase + C::OFF_Q + wg * NQ * 128, 16, 1024);
        const uint64_t dP = sw128_desc(sbase + C::OFF_P + wg * NQ * 128, 16, 1024);
        const int r0 = 16 * wl + (lane >> 2);  // this thread's tokens r0, r0 + 8 of a tile

        for (int tile = 0; tile < n_tiles; ++tile) {
            const int stage = tile % C::STAGES;
            uint32_t kt_off;
            cp_wait<C::STAGES - 2>();
            if constexpr (!KV8) {
                fence_proxy_async();  // cp.async data (and Q) -> the MMA's async proxy
                __syncthreads();      // (A) tile landed for all; the previous slot is free
                issue(tile + C::STAGES - 1);
                kt_off = C::OFF_KV + stage * kTile;
            } else {
                __syncthreads();  // (A) raw tile landed; the widened tile is free
                issue(tile + C::STAGES - 1);
                const char* raw = smem + C::OFF_KV + stage * kRaw8;
#pragma unroll
                for (int k = 0; k < kTN * 36 / 256; ++k) {
                    const int f = tid + 256 * k;
                    const int t = f / 36, q8 = f - t * 36;
                    widen_store(smem + C::OFF_KVB, kTN, t, q8,
                                *reinterpret_cast<const uint4*>(raw + t * kD + 16 * q8));
                }
                fence_proxy_async();
                __syncthreads();  // (A') widened tile visible to the MMAs
                kt_off = C::OFF_KVB;
            }
            if (!mma) continue;

            // ---- S^T = K . Q^T over 576 dims ----
            float s[NR];
#pragma unroll
            for (int e = 0; e < NR; ++e) s[e] = 0.f;
            const uint64_t dK = sw128_desc(sbase + kt_off, 16, 1024);
            reg_fence(s);
            wg_fence();
#pragma unroll
            for (int kk = 0; kk < kD / 16; ++kk) {
                const int kb = kk >> 2, k4 = kk & 3;
                wgmma<NQ, 0>(s, dK + uint64_t((kb * kBlk + k4 * 32) >> 4),
                             dQ + uint64_t((kb * N * 128 + k4 * 32) >> 4), kk > 0);
            }
            wg_commit();
            wg_wait0();
            reg_fence(s);

            // ---- mask, scale to base-2 logits, column (query row) maxima ----
            const int jt = w.tok_begin + tile * kTN + r0;
            const bool ok0 = tokok[stage * kTN + r0] != 0, ok1 = tokok[stage * kTN + r0 + 8] != 0;
            float mx[NI];
#pragma unroll
            for (int i = 0; i < NI; ++i) {
                const int e0 = 4 * (i >> 1) + (i & 1);
                const float a = (ok0 && jt <= lim[i]) ? s[e0] * sl2 : -INFINITY;
                const float b = (ok1 && jt + 8 <= lim[i]) ? s[e0 + 2] * sl2 : -INFINITY;
                s[e0] = a;
                s[e0 + 2] = b;
                mx[i] = fmaxf(a, b);
                mx[i] = fmaxf(mx[i], __shfl_xor_sync(0xffffffffu, mx[i], 4));
                mx[i] = fmaxf(mx[i], __shfl_xor_sync(0xffffffffu, mx[i], 8));
                mx[i] = fmaxf(mx[i], __shfl_xor_sync(0xffffffffu, mx[i], 16));
            }
            if (lane < 4) {
#pragma unroll
                for (int i = 0; i < NI; ++i)
                    red[(wg * 4 + wl) * NQ + 8 * (i >> 1) + 2 * lane + (i & 1)] = mx[i];
            }
            bar_sync(1 + wg, 128);  // (B) warp maxima visible within the warpgroup
            float alpha[NI];
#pragma unroll
            for (int i = 0; i < NI; ++i) {
                const int col = 8 * (i >> 1) + 2 * (lane & 3) + (i & 1);
                float mn = m_run[i];
#pragma unroll
                for (int k = 0; k < 4; ++k) mn = fmaxf(mn, red[(wg * 4 + k) * NQ + col]);
                alpha[i] = m_run[i] == -INFINITY ? 0.f : ex2(m_run[i] - mn);
                m_run[i] = mn;
                const int e0 = 4 * (i >> 1) + (i & 1);
                // a row with no visible key so far keeps p = 0 (no -inf - -inf)
                const float pa = mn == -INFINITY ? 0.f : ex2(s[e0] - mn);
                const float pb = mn == -INFINITY ? 0.f : ex2(s[e0 + 2] - mn);
                l_run[i] = l_run[i] * alpha[i] + pa + pb;
                const int qr = wg * NQ + col;
                char* prow = smem + C::OFF_P + qr * 128 + ((r0 & 7) << 1);
                const __nv_bfloat16 ba = __float2bfloat16_rn(pa), bb = __float2bfloat16_rn(pb);
                *reinterpret_cast<__nv_bfloat16*>(prow + ((((r0 >> 3)) ^ (qr & 7)) << 4)) = ba;
                *reinterpret_cast<__nv_bfloat16*>(prow + ((((r0 >> 3) + 1) ^ (qr & 7)) << 4)) = bb;
            }
            fence_proxy_async();
            bar_sync(1 + wg, 128);  // (C) P^T visible to the warpgroup's MMAs

            // ---- O^T = O^T * alpha + V^T . P^T over this tile's 64 tokens ----
#pragma unroll
            for (int mb = 0; mb < 8; ++mb)
#pragma unroll
                for (int i = 0; i < NI; ++i) {
                    const int e0 = 4 * (i >> 1) + (i & 1);
                    o[mb][e0] *= alpha[i];
                    o[mb][e0 + 2] *= alpha[i];
                }
            const uint64_t dV = sw128_desc(sbase + kt_off, 1024, 1024);
#pragma unroll
            for (int mb = 0; mb < 8; ++mb) reg_fence(o[mb]);
            wg_fence();
#pragma unroll
            for (int mb = 0; mb < 8; ++mb)
#pragma unroll
                for (int kt = 0; kt < kTN / 16; ++kt)
                    wgmma<NQ, 1>(o[mb], dV + uint64_t((mb * kBlk + kt * 2048) >> 4), dP + uint64_t((kt * 32) >> 4), 1);
            wg_commit();
            wg_wait0();
#pragma unroll
            for (int mb = 0; mb < 8; ++mb) reg_fence(o[mb]);
        }
        cp_wait<0>();
        __syncthreads();  // every MMA done; the ring is idle and becomes the output staging

        // ---- epilogue: o = O / l * kv_scale (0 if no key), lse = (m + log2 l) ln 2 ----
        const bool split = w.pql >= 0;
        float* obuf = reinterpret_cast<float*>(smem + C::OFF_KV);  // [N][kOPitch]
        if (mma) {
            float inv[NI], lt[NI];
#pragma unroll
            for (int i = 0; i < NI; ++i) {
                float l = l_run[i];
                l += __shfl_xor_sync(0xffffffffu, l, 4);
                l += __shfl_xor_sync(0xffffffffu, l, 8);
                l += __shfl_xor_sync(0xffffffffu, l, 16);
                lt[i] = l;
            }
            if (lane < 4) {
#pragma unroll
                for (int i = 0; i < NI; ++i) red[(wg * 4 + wl) * NQ + 8 * (i >> 1) + 2 * lane + (i & 1)] = lt[i];
            }
            bar_sync(1 + wg, 128);
#pragma unroll
            for (int i = 0; i < NI; ++i) {
                const int col = 8 * (i >> 1) + 2 * (lane & 3) + (i & 1);
                float l = 0.f;
#pragma unroll
                for (int k = 0; k < 4; ++k) l += red[(wg * 4 + k) * NQ + col];
                lt[i] = l;
                inv[i] = l > 0.f ? kvsc / l : 0.f;
            }
#pragma unroll
            for (int mb = 0; mb < 8; ++mb)
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
                    if (row >= w.nrows) continue;
                    const float lse = lt[i] > 0.f ? (m_run[i] + __log2f(lt[i])) * kLn2 : -INFINITY;
                    const int tt = row / Hk, h = row % Hk;
                    if (split)
                        p.partial_lse[(int64_t)(w.pql + tt) * Hk + h] = lse;
                    else if (p.lse)
                        p.lse[(int64_t)(w.qo_b + w.t0 + tt) * p.num_heads + w.g * Hk + h] = lse;
                }
            }
        }
        __syncthreads();  // staged output visible
        if (split) {
            for (int c = tid; c < w.nrows * (kDV / 4); c += 256) {
                const int row = c / (kDV / 4), ch = c % (kDV / 4);
                const int tt = row / Hk, h = row % Hk;
                const float4 v = *reinterpret_cast<const float4*>(obuf + row * kOPitch + 4 * ch);
                *reinterpret_cast<float4*>(p.partial_out + ((int64_t)(w.pql + tt) * Hk + h) * kDV + 4 * ch) = v;
            }
        } else {
            for (int c = tid; c < w.nrows * (kDV / 8); c += 256) {
                const int row = c / (kDV / 8), ch = c % (kDV / 8);
                const int tt = row / Hk, h = row % Hk;
                const float4 a = *reinterpret_cast<const float4*>(obuf + row * kOPitch + 8 * ch);
                const float4 b = *reinterpret_cast<const float4*>(obuf + row * kOPitch + 8 * ch + 4);
                const uint4 v = make_uint4(mla_dec::pack_bf16(a.x, a.y), mla_dec::pack_bf16(a.z, a.w),
                                           mla_dec::pack_bf16(b.x, b.y), mla_dec::pack_bf16(b.z, b.w));
                char* dst = static_cast<char*>(p.out) +
                            2 * ((int64_t)(w.qo_b + w.t0 + tt) * p.out_stride_token +
                                 (int64_t)(w.g * Hk + h) * p.out_stride_head) +
                            16 * ch;
                *reinterpret_cast<uint4*>(dst) = v;
            }
        }
    }
}

}  // namespace mla_wg

// Defines the extern "C" kernel mla_decode_wg_<QN>_<KVN>_m<M>.
#define MLA_DECODE_WG_KERNEL(QN, KVN, Q8, KV8, M)                                                 \
    extern "C" __global__ void __launch_bounds__(256, 1)                                          \
        mla_decode_wg_##QN##_##KVN##_m##M(const __grid_constant__ mla_decode_params p) {           \
        extern __shared__ __align__(1024) char smem[];                                            \
        mla_wg::decode_wg_body<M, Q8, KV8>(p, smem);                                              \
    }
