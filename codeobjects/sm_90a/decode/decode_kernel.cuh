// decode_kernel.cuh - the persistent sm_90a MLA decode kernel body, instantiated per
// (Q dtype, KV dtype, row tile M) by mla_decode_<q>_<kv>.cu. Design and cost model:
// docs/kernels.md. Contract (works, rows, partials): docs/plan-layout.md.
//
// One CTA per planner cluster. For each work: the tile's query rows (tokens x Hk heads, <= M)
// go to shared memory as bf16; the work's KV tokens stream through a cp.async ring of
// MLA_DECODE_TILE_N-token stages (zero-filled, never read, past the work's end or for a bad
// page); each stage serves S = Q.K^T over 576 dims and O += P.V over the first 512 dims with
// mma.sync m16n8k16 bf16 (fp32 accumulate), online softmax in base 2 in fp32.
// fp8 (e4m3fn) inputs are widened to bf16 exactly (every e4m3 value is a bf16 value); their
// scales fold into the score scale (q_scale * kv_scale) and into the output (kv_scale).
//
// Warp roles per stage: S phase, warp w owns rows 16*(w % RG).. and KV columns CW*(w / RG)..;
// P.V phase, warp w owns all M rows and output columns COLS*w... Row max / sum partials meet in
// shared memory (three barriers per stage).
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <stdint.h>

#include "common/small_div.cuh"
#include "decode/decode_params.h"

namespace mla_dec {

constexpr int kD = MLA_DECODE_D_QK;
constexpr int kDV = MLA_DECODE_D_V;
constexpr int kRow = kD * 2 + 16;  // padded bf16 row, bytes (1168: 16-byte rows hit 8 banks)
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

template <int M, bool KV8>
struct Cfg {
    static constexpr int NW = mla_decode_warps(M);
    static constexpr int TN = mla_decode_tile_n(M);  // KV tokens per stage
    static constexpr int PROW = TN * 2 + 16;         // padded P row, bytes
    static constexpr int THREADS = NW * 32;
    static constexpr int RG = M / 16;            // row groups (S phase)
    static constexpr int NS = NW / RG;           // column groups (S phase)
    static constexpr int CW = TN / NS;           // S columns per warp (8 or 16)
    static constexpr int NTS = CW / 8;
    static constexpr int MT = M / 16;            // m16 tiles (P.V phase)
    static constexpr int COLS = kDV / NW;        // output columns per warp
    static constexpr int NTO = COLS / 8;
    static constexpr int STAGES = mla_decode_stages(M, KV8);
    static constexpr int STAGE_BYTES = KV8 ? TN * kD : TN * kRow;
    static constexpr int TPT = THREADS / TN;     // loader threads per KV token
    static constexpr int OFF_Q = 0;
    static constexpr int OFF_KV = M * kRow;
    static constexpr int OFF_KVB = OFF_KV + STAGES * STAGE_BYTES;
    static constexpr int OFF_P = OFF_KVB + (KV8 ? TN * kRow : 0);
    static constexpr int OFF_STAT = OFF_P + M * PROW;
    static constexpr int OFF_TOK = OFF_STAT + (4 * M + 2 * NS * M) * 4;
    static constexpr int SMEM = OFF_TOK + STAGES * TN * 4;
    static_assert(SMEM == mla_decode_smem_bytes(M, KV8), "smem layout and formula disagree");
    static_assert(NS * CW == TN && NTS >= 1 && THREADS % TN == 0, "bad tiling");
};

__device__ __forceinline__ uint32_t smem_u32(const void* p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void cp_async16(uint32_t dst, const void* src, int src_bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
                 "r"(src_bytes)
                 : "memory");
}
__device__ __forceinline__ void cp_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}
__device__ __forceinline__ void ldsm_x4(uint32_t (&r)[4], uint32_t addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}
__device__ __forceinline__ void ldsm_x4_t(uint32_t (&r)[4], uint32_t addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}
__device__ __forceinline__ void mma16816(float (&c)[4], const uint32_t (&a)[4], uint32_t b0,
                                         uint32_t b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
__device__ __forceinline__ float ex2(float x) {  // 2^x, ex2(-inf) = +0
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}
__device__ __forceinline__ uint32_t pack_bf16(float a, float b) {
    __nv_bfloat162 v = __floats2bfloat162_rn(a, b);
    return *reinterpret_cast<uint32_t*>(&v);
}
// 16 e4m3fn bytes -> 16 bf16 (exact), written as two 16-byte vectors.
__device__ __forceinline__ void fp8x16_to_bf16(const uint4 in, uint4* out) {
    const uint32_t w[4] = {in.x, in.y, in.z, in.w};
    uint32_t r[8];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            __half2_raw hr = __nv_cvt_fp8x2_to_halfraw2(
                static_cast<__nv_fp8x2_storage_t>((w[i] >> (16 * h)) & 0xffffu), __NV_E4M3);
            float2 f = __half22float2(*reinterpret_cast<__half2*>(&hr));
            r[2 * i + h] = pack_bf16(f.x, f.y);
        }
    }
    out[0] = make_uint4(r[0], r[1], r[2], r[3]);
    out[1] = make_uint4(r[4], r[5], r[6], r[7]);
}

// One work item, decoded (docs/plan-layout.md "Work items").
struct Work {
    int b, g, pql, qo_b, L, t0, nrows, kvi_b, n_kv, tok_begin, tok_end;
    // KV tiles of tn tokens covering [tok_begin, tok_end) (0 for an empty range)
    __device__ __forceinline__ int tiles(int tn) const {
        return tok_end > tok_begin ? (tok_end - tok_begin + tn - 1) / tn : 0;
    }
};

// load_work reads work item wi of the plan (plan-layout.md): request b and head group g of the
// folded pseudo-request, first token t0, row count, and the work's token range [tok_begin,
// tok_end) of the request's N_b = n_kv tokens. Returns false (after flagging MLA_DECODE_ERR_PLAN)
// for a work whose rows do not fit a tile of max_rows rows, or a split work (partial_qo_loc >= 0)
// of a call without partial buffers (mla_decode_args.no_split_tiles); every kernel then skips it.
// load_work_rec does the same from the record's two halves (dw 0-3, 4-7), already loaded.
__device__ __forceinline__ bool load_work_rec(const mla_decode_params& p, int4 wa, int4 wb, int max_rows,
                                              Work& w) {
    const int Hk = p.kernel_heads, r = p.qk_batch_ratio, psl = p.page_size_log2;
    w.b = wa.x / r;
    w.g = wa.x % r;
    w.pql = wa.y;
    w.qo_b = p.qo_indptr[w.b];
    w.L = p.qo_indptr[w.b + 1] - w.qo_b;
    w.t0 = wa.z - (w.qo_b * r + w.g * w.L);
    w.nrows = (wa.w - wa.z) * Hk;
    w.kvi_b = p.kv_indptr[w.b];
    const int np = p.kv_indptr[w.b + 1] - w.kvi_b;
    w.n_kv = np > 0 ? ((np - 1) << psl) + p.kv_last_page_lens[w.b] : 0;
    w.tok_begin = (wb.x - w.kvi_b) << psl;
    w.tok_end = min(w.n_kv - wb.z, w.n_kv);
    if (w.nrows > max_rows || w.nrows < 0 || w.t0 < 0 || (w.pql >= 0 && p.partial_out == nullptr)) {
        if (threadIdx.x == 0 && p.error_flag) atomicOr(p.error_flag, MLA_DECODE_ERR_PLAN);
        return false;
    }
    if (w.tok_begin < 0) w.tok_begin = 0;
    return true;
}
__device__ __forceinline__ bool load_work(const mla_decode_params& p, int wi, int max_rows, Work& w) {
    const int4 wa = *reinterpret_cast<const int4*>(p.work_info_set + 8 * (int64_t)wi);
    const int4 wb = *reinterpret_cast<const int4*>(p.work_info_set + 8 * (int64_t)wi + 4);
    return load_work_rec(p, wa, wb, max_rows, w);
}

// The kernels' scales (every decode body): kvsc the KV cache's dequantisation scale (*p.kv_scale,
// 1 without) and sl2 the factor from a raw Q.K score to a base-2 logit (softmax_scale times the
// Q and KV scales times log2 e).
struct Scales {
    float kvsc, sl2;
};
__device__ __forceinline__ Scales decode_scales(const mla_decode_params& p) {
    const float qsc = p.q_scale ? *p.q_scale : 1.0f;
    const float kvsc = p.kv_scale ? *p.kv_scale : 1.0f;
    return {kvsc, p.softmax_scale * qsc * kvsc * kLog2e};
}

// Every decode kernel's first steps (both kernel macros: MLA_DECODE_KERNEL below, decode_wgmma.cuh's
// MLA_DECODE_SM90_KERNEL_T). It waits for the grids ahead of it in the stream
// (griddepcontrol.wait; at once after a plain launch), so that it may be launched as a
// programmatic dependent launch, and it reads nothing before their writes are visible. Then, with
// a grid smaller than the plan's clusters (mla_decode_args.active_clusters), no work may lie in
// the clusters beyond it, or its rows would never be written: the last CTA's thread 0 compares
// work_indptr at the grid's end and at num_clusters and flags MLA_DECODE_ERR_PLAN when they differ.
// MLA_TMAP_PREFETCH=1 (session 32, measurement build; 0 shipped): thread 0 prefetches the KV
// tensor map (prefetch.tensormap, the descriptor in the kernel's parameter space) before the grid
// dependency wait, so that the first TMA of the CTA does not wait for the descriptor's fetch.
#ifndef MLA_TMAP_PREFETCH
#define MLA_TMAP_PREFETCH 0
#endif
__device__ __forceinline__ void kernel_start(const mla_decode_params& p) {
    if (MLA_TMAP_PREFETCH && threadIdx.x == 0 && p.kv_tma != 0)
        asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<uint64_t>(&p.kv_tmap[0])) : "memory");
    asm volatile("griddepcontrol.wait;" ::: "memory");
    if (threadIdx.x == 0 && blockIdx.x == gridDim.x - 1 && p.num_clusters > int(gridDim.x) && p.error_flag &&
        p.work_indptr[gridDim.x] != p.work_indptr[p.num_clusters])
        atomicOr(p.error_flag, MLA_DECODE_ERR_PLAN);
}

// The late trigger (wg_common.cuh: MLA_QM_RA_LATE_TRIG; MLA_WG_LATE_TRIG writes the same test
// inline, decode_wgmma.cuh): one thread of the CTA,
// having just seen tile `tile` of work `wi` land, triggers the dependent launch
// (trigger_dependents: griddepcontrol.launch_dependents) when that is the last tile of the CTA's
// last work (last_tile; w_end: the CTA's work_indptr end), so that the next grid (the reducer) is
// scheduled during the CTA's last MMAs and epilogue. Only after kernel_start's wait (the reducers
// read the plan before their own).
__device__ __forceinline__ bool last_tile(int wi, int w_end, int tile, int n_tiles) {
    return wi == w_end - 1 && tile == n_tiles - 1;
}
__device__ __forceinline__ void trigger_dependents() { asm volatile("griddepcontrol.launch_dependents;" ::: "memory"); }

// Highest visible local KV index of tile row `row` of work w (-1: sees nothing). Causal MTP:
// query t of L sees global positions <= G - L + t (G = N_b, or g_kv_indptr's length with round-
// robin context parallelism, where local token i is global position i * W + cp_rank, so the
// limit becomes floor((lim - rank) / W)). Non-causal: everything.
__device__ __forceinline__ int row_limit(const mla_decode_params& p, const Work& w, int row) {
    if (row >= w.nrows) return -1;  // padding row
    if (!p.causal) return 0x7fffffff;
    const int tt = w.t0 + mla_div::divmod_row<mla_div::kDivLimit>(row, p.kernel_heads).q;
    if (p.cp_world_size <= 1) return w.n_kv - w.L + tt;
    const int g = p.g_kv_indptr[w.b + 1] - p.g_kv_indptr[w.b];
    const int lim = g - w.L + tt - p.cp_rank;
    return lim < 0 ? -1 : lim / p.cp_world_size;
}

template <int M, bool Q8, bool KV8>
__device__ __forceinline__ void decode_kernel_body(const mla_decode_params& p, char* smem) {
    using C = Cfg<M, KV8>;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    if (blockDim.x != C::THREADS) return;  // the table's launch_threads disagrees: do nothing
    {
        uint32_t dsmem;
        asm("mov.u32 %0, %%dynamic_smem_size;\n" : "=r"(dsmem));
        if (dsmem < static_cast<uint32_t>(C::SMEM)) {
            if (tid == 0 && p.error_flag) atomicOr(p.error_flag, MLA_DECODE_ERR_SMEM);
            return;
        }
    }
    char* q_s = smem + C::OFF_Q;
    char* kv_s = smem + C::OFF_KV;
    char* kvb_s = smem + C::OFF_KVB;  // fp8 KV: the stage widened to bf16
    char* p_s = smem + C::OFF_P;
    float* mstat = reinterpret_cast<float*>(smem + C::OFF_STAT);  // [2][M] running max (log2)
    float* lstat = mstat + 2 * M;                                 // [2][M] running sum
    float* pmax = lstat + 2 * M;                                  // [NS][M]
    float* psum = pmax + C::NS * M;                               // [NS][M]
    int* tokok = reinterpret_cast<int*>(smem + C::OFF_TOK);       // [STAGES][C::TN]

    const Scales scl = decode_scales(p);
    const float kvsc = scl.kvsc, sl2 = scl.sl2;  // KV scale; score -> base-2 logit
    const int Hk = p.kernel_heads, psl = p.page_size_log2;
    const int psmask = (1 << psl) - 1;
    const int esz_kv = KV8 ? 1 : 2;
    const char* kv_g = static_cast<const char*>(p.kv);

    const int w_begin = p.work_indptr[blockIdx.x], w_end = p.work_indptr[blockIdx.x + 1];
    for (int wi = w_begin; wi < w_end; ++wi) {
        Work w;
        if (!load_work(p, wi, M, w)) continue;
        const int n_tiles = w.tiles(C::TN);

        __syncthreads();  // the previous work's epilogue is done with shared memory
        if (tid < M) {
            mstat[tid] = -INFINITY;
            lstat[tid] = 0.f;
        }
        // ---- Q tile -> shared (bf16), rows past nrows zero ----
        if constexpr (!Q8) {
            for (int c = tid; c < M * (kD / 8); c += C::THREADS) {
                const int row = c / (kD / 8), ch = c % (kD / 8);
                const bool ok = row < w.nrows;
                const mla_div::DivMod th = mla_div::divmod_row<mla_div::kDivMmaSync>(row, Hk);
                const int tt = ok ? th.q : 0, h = ok ? th.r : 0;
                const char* src = static_cast<const char*>(p.q) +
                                  2 * ((int64_t)(w.qo_b + w.t0 + tt) * p.q_stride_token +
                                       (int64_t)(w.g * Hk + h) * p.q_stride_head) +
                                  16 * ch;
                cp_async16(smem_u32(q_s + row * kRow + 16 * ch), ok ? src : p.q, ok ? 16 : 0);
            }
            cp_commit();
        } else {
            for (int c = tid; c < M * (kD / 16); c += C::THREADS) {
                const int row = c / (kD / 16), ch = c % (kD / 16);
                uint4 v = make_uint4(0, 0, 0, 0);
                if (row < w.nrows) {
                    const mla_div::DivMod th = mla_div::divmod_row<mla_div::kDivMmaSync>(row, Hk);
                    const int tt = th.q, h = th.r;
                    v = *reinterpret_cast<const uint4*>(
                        static_cast<const char*>(p.q) + (int64_t)(w.qo_b + w.t0 + tt) * p.q_stride_token +
                        (int64_t)(w.g * Hk + h) * p.q_stride_head + 16 * ch);
                }
                fp8x16_to_bf16(v, reinterpret_cast<uint4*>(q_s + row * kRow + 32 * ch));
            }
        }

        // ---- per-thread row limits for the S phase (rows rs0, rs0 + 8) ----
        const int rg = warp % C::RG, ns = warp / C::RG;
        int lim[2];
#pragma unroll
        for (int i = 0; i < 2; ++i) {
            lim[i] = row_limit(p, w, rg * 16 + (lane >> 2) + 8 * i);
        }

        // ---- KV loader: thread -> (token tid / TPT, chunks tid % TPT + TPT k) ----
        auto issue = [&](int tile) {
            if (tile < n_tiles) {
                const int stage = tile % C::STAGES;
                const int tt = tid / C::TPT, sub = tid % C::TPT;
                const int j = w.tok_begin + tile * C::TN + tt;
                bool ok = j < w.tok_end;
                const char* src = kv_g;
                if (ok) {
                    const int pi = j >> psl;
                    int page = -1;
                    if (p.block_table_stride > 0) {
                        if (pi < p.block_table_stride)
                            page = p.page_table[(int64_t)w.b * p.block_table_stride + pi];
                        else if (p.error_flag)
                            atomicOr(p.error_flag, MLA_DECODE_ERR_PAGE_INDEX);
                    } else {
                        const int64_t idx = (int64_t)w.kvi_b + pi;
                        if (idx >= 0 && idx < p.num_page_indices)
                            page = p.page_table[idx];
                        else if (p.error_flag)
                            atomicOr(p.error_flag, MLA_DECODE_ERR_PAGE_INDEX);
                    }
                    if (page < 0 || page >= p.num_pages) {
                        if (p.error_flag && sub == 0) atomicOr(p.error_flag, MLA_DECODE_ERR_PAGE_ID);
                        ok = false;
                    } else {
                        src = kv_g + ((int64_t)page * p.kv_stride_page + (int64_t)(j & psmask) * kD) * esz_kv;
                    }
                }
                if (sub == 0) tokok[stage * C::TN + tt] = ok ? 1 : 0;
                char* dst = kv_s + stage * C::STAGE_BYTES + tt * (KV8 ? kD : kRow);
                constexpr int CH = KV8 ? kD / 16 : kD * 2 / 16;
#pragma unroll
                for (int k = 0; k < (CH + C::TPT - 1) / C::TPT; ++k) {
                    const int c = sub + k * C::TPT;
                    if (CH % C::TPT == 0 || c < CH)
                        cp_async16(smem_u32(dst + 16 * c), src + (ok ? 16 * c : 0), ok ? 16 : 0);
                }
            }
            cp_commit();  // one group per tile slot, even empty: keeps the wait count uniform
        };
#pragma unroll
        for (int s = 0; s < C::STAGES - 1; ++s) issue(s);

        float acc[C::MT][C::NTO][4];
#pragma unroll
        for (int mt = 0; mt < C::MT; ++mt)
#pragma unroll
            for (int nt = 0; nt < C::NTO; ++nt)
#pragma unroll
                for (int e = 0; e < 4; ++e) acc[mt][nt][e] = 0.f;

        // M = 16: the warp's Q fragments (16 rows x 576) stay in registers for the whole work
        constexpr bool QREG = (M == 16);
        uint32_t qf[QREG ? kD / 16 : 1][4];

        int par = 0;
        for (int tile = 0; tile < n_tiles; ++tile, par ^= 1) {
            const int stage = tile % C::STAGES;
            cp_wait<C::STAGES - 2>();
            __syncthreads();  // (A) stage `tile` landed for all; stage tile-1 is free
            issue(tile + C::STAGES - 1);
            const char* kt_s;  // bf16 K/V rows of this stage, kRow apart
            if constexpr (KV8) {
                const char* raw = kv_s + stage * C::STAGE_BYTES;
                for (int c = tid; c < C::TN * (kD / 16); c += C::THREADS) {
                    const int row = c / (kD / 16), ch = c % (kD / 16);
                    fp8x16_to_bf16(*reinterpret_cast<const uint4*>(raw + row * kD + 16 * ch),
                                   reinterpret_cast<uint4*>(kvb_s + row * kRow + 32 * ch));
                }
                __syncthreads();  // (A') widened stage visible
                kt_s = kvb_s;
            } else {
                kt_s = kv_s + stage * C::STAGE_BYTES;
            }
            const int* tok = tokok + stage * C::TN;

            // ---- S = Q K^T for rows rg*16.., columns ns*CW.. ----
            float s[C::NTS][4];
#pragma unroll
            for (int n = 0; n < C::NTS; ++n)
#pragma unroll
                for (int e = 0; e < 4; ++e) s[n][e] = 0.f;
            {
                const uint32_t a_base =
                    smem_u32(q_s + (rg * 16 + (lane & 15)) * kRow + 16 * (lane >> 4));
                if constexpr (QREG) {
                    if (tile == 0) {
#pragma unroll
                        for (int kk = 0; kk < kD / 16; ++kk) ldsm_x4(qf[kk], a_base + kk * 32);
                    }
                    const uint32_t b_base =
                        smem_u32(kt_s + (ns * C::CW + (lane & 7)) * kRow + 16 * (lane >> 3));
#pragma unroll
                    for (int kk = 0; kk < kD / 16; kk += 2) {
                        uint32_t bb[4];
                        ldsm_x4(bb, b_base + kk * 32);
                        mma16816(s[0], qf[kk], bb[0], bb[1]);
                        mma16816(s[0], qf[kk + 1], bb[2], bb[3]);
                    }
                } else if constexpr (C::NTS == 1) {
                    // x4 over one 8-token n-tile and 32 dims: b for k-steps kk, kk+1
                    const uint32_t b_base =
                        smem_u32(kt_s + (ns * C::CW + (lane & 7)) * kRow + 16 * (lane >> 3));
#pragma unroll 6
                    for (int kk = 0; kk < kD / 16; kk += 2) {
                        uint32_t a0[4], a1[4], bb[4];
                        ldsm_x4(a0, a_base + kk * 32);
                        ldsm_x4(a1, a_base + kk * 32 + 32);
                        ldsm_x4(bb, b_base + kk * 32);
                        mma16816(s[0], a0, bb[0], bb[1]);
                        mma16816(s[0], a1, bb[2], bb[3]);
                    }
                } else {
                    const uint32_t b_base = smem_u32(
                        kt_s + (ns * C::CW + (lane & 7) + 8 * (lane >> 4)) * kRow + 16 * ((lane >> 3) & 1));
#pragma unroll 6
                    for (int kk = 0; kk < kD / 16; ++kk) {
                        uint32_t a0[4], bb[4];
                        ldsm_x4(a0, a_base + kk * 32);
                        ldsm_x4(bb, b_base + kk * 32);
                        mma16816(s[0], a0, bb[0], bb[1]);
                        mma16816(s[1], a0, bb[2], bb[3]);
                    }
                }
            }
            // ---- mask (bad/absent keys, causal, padding rows) and scale to base-2 logits ----
            const int j0 = w.tok_begin + tile * C::TN;
            float mx[2] = {-INFINITY, -INFINITY};
#pragma unroll
            for (int n = 0; n < C::NTS; ++n)
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const int col = ns * C::CW + n * 8 + 2 * (lane & 3) + (e & 1);
                    const int i = e >> 1;
                    const bool vis = tok[col] != 0 && j0 + col <= lim[i];
                    const float t = vis ? s[n][e] * sl2 : -INFINITY;
                    s[n][e] = t;
                    mx[i] = fmaxf(mx[i], t);
                }
#pragma unroll
            for (int i = 0; i < 2; ++i) {
                mx[i] = fmaxf(mx[i], __shfl_xor_sync(0xffffffffu, mx[i], 1));
                mx[i] = fmaxf(mx[i], __shfl_xor_sync(0xffffffffu, mx[i], 2));
            }
            if ((lane & 3) == 0) {
                pmax[ns * M + rg * 16 + (lane >> 2)] = mx[0];
                pmax[ns * M + rg * 16 + (lane >> 2) + 8] = mx[1];
            }
            __syncthreads();  // (B) partial maxima visible
            float mnew[2], sm[2] = {0.f, 0.f};
#pragma unroll
            for (int i = 0; i < 2; ++i) {
                const int row = rg * 16 + (lane >> 2) + 8 * i;
                float m = mstat[par * M + row];
#pragma unroll
                for (int k = 0; k < C::NS; ++k) m = fmaxf(m, pmax[k * M + row]);
                mnew[i] = m;
            }
#pragma unroll
            for (int n = 0; n < C::NTS; ++n) {
                float pv[4];
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const int i = e >> 1;
                    // a row with no visible key so far keeps p = 0 (no -inf - -inf)
                    pv[e] = mnew[i] == -INFINITY ? 0.f : ex2(s[n][e] - mnew[i]);
                    sm[i] += pv[e];
                }
                const int col = ns * C::CW + n * 8 + 2 * (lane & 3);
                const int row = rg * 16 + (lane >> 2);
                *reinterpret_cast<uint32_t*>(p_s + row * C::PROW + col * 2) = pack_bf16(pv[0], pv[1]);
                *reinterpret_cast<uint32_t*>(p_s + (row + 8) * C::PROW + col * 2) = pack_bf16(pv[2], pv[3]);
            }
#pragma unroll
            for (int i = 0; i < 2; ++i) {
                sm[i] += __shfl_xor_sync(0xffffffffu, sm[i], 1);
                sm[i] += __shfl_xor_sync(0xffffffffu, sm[i], 2);
            }
            if ((lane & 3) == 0) {
                const int row = rg * 16 + (lane >> 2);
                psum[ns * M + row] = sm[0];
                psum[ns * M + row + 8] = sm[1];
                if (ns == 0) {
                    mstat[(par ^ 1) * M + row] = mnew[0];
                    mstat[(par ^ 1) * M + row + 8] = mnew[1];
                }
            }
            __syncthreads();  // (C) P, new maxima and partial sums visible
            if (tid < M) {
                const float mo = mstat[par * M + tid], mn = mstat[(par ^ 1) * M + tid];
                const float alpha = mo == -INFINITY ? 0.f : ex2(mo - mn);
                float l = lstat[par * M + tid] * alpha;
#pragma unroll
                for (int k = 0; k < C::NS; ++k) l += psum[k * M + tid];
                lstat[(par ^ 1) * M + tid] = l;
            }
            // ---- O = O * alpha + P V over this warp's COLS output columns ----
#pragma unroll
            for (int mt = 0; mt < C::MT; ++mt)
#pragma unroll
                for (int i = 0; i < 2; ++i) {
                    const int row = mt * 16 + (lane >> 2) + 8 * i;
                    const float mo = mstat[par * M + row], mn = mstat[(par ^ 1) * M + row];
                    const float alpha = mo == -INFINITY ? 0.f : ex2(mo - mn);
#pragma unroll
                    for (int nt = 0; nt < C::NTO; ++nt) {
                        acc[mt][nt][2 * i] *= alpha;
                        acc[mt][nt][2 * i + 1] *= alpha;
                    }
                }
#pragma unroll
            for (int kt = 0; kt < C::TN / 16; ++kt) {
                uint32_t pa[C::MT][4];
#pragma unroll
                for (int mt = 0; mt < C::MT; ++mt)
                    ldsm_x4(pa[mt], smem_u32(p_s + (mt * 16 + (lane & 15)) * C::PROW + kt * 32 + 16 * (lane >> 4)));
                const uint32_t v_base = smem_u32(kt_s + (kt * 16 + (lane & 7) + 8 * ((lane >> 3) & 1)) * kRow +
                                                 2 * (warp * C::COLS + 8 * (lane >> 4)));
#pragma unroll
                for (int np = 0; np < C::NTO / 2; ++np) {
                    uint32_t vb[4];
                    ldsm_x4_t(vb, v_base + np * 32);
#pragma unroll
                    for (int mt = 0; mt < C::MT; ++mt) {
                        mma16816(acc[mt][2 * np], pa[mt], vb[0], vb[1]);
                        mma16816(acc[mt][2 * np + 1], pa[mt], vb[2], vb[3]);
                    }
                }
            }
        }
        cp_wait<0>();
        __syncthreads();  // final row statistics visible; all stages idle

        // ---- epilogue: o = O / l * kv_scale (0 if no key), lse = (m + log2 l) ln 2 ----
        const bool split = w.pql >= 0;
#pragma unroll
        for (int mt = 0; mt < C::MT; ++mt)
#pragma unroll
            for (int i = 0; i < 2; ++i) {
                const int row = mt * 16 + (lane >> 2) + 8 * i;
                if (row >= w.nrows) continue;
                const float l = lstat[par * M + row];
                const float inv = l > 0.f ? kvsc / l : 0.f;
                const mla_div::DivMod th = mla_div::divmod_row<mla_div::kDivMmaSync>(row, Hk);
                const int tt = th.q, h = th.r;
                const int col0 = warp * C::COLS + 2 * (lane & 3);
                if (split) {
                    float* dst = p.partial_out + ((int64_t)(w.pql + tt) * Hk + h) * kDV + col0;
#pragma unroll
                    for (int nt = 0; nt < C::NTO; ++nt)
                        *reinterpret_cast<float2*>(dst + nt * 8) =
                            make_float2(acc[mt][nt][2 * i] * inv, acc[mt][nt][2 * i + 1] * inv);
                } else {
                    char* dst = static_cast<char*>(p.out) +
                                2 * ((int64_t)(w.qo_b + w.t0 + tt) * p.out_stride_token +
                                     (int64_t)(w.g * Hk + h) * p.out_stride_head + col0);
#pragma unroll
                    for (int nt = 0; nt < C::NTO; ++nt)
                        *reinterpret_cast<uint32_t*>(dst + nt * 16) =
                            pack_bf16(acc[mt][nt][2 * i] * inv, acc[mt][nt][2 * i + 1] * inv);
                }
            }
        if (tid < w.nrows) {
            const float l = lstat[par * M + tid], m = mstat[par * M + tid];
            const float lse = l > 0.f ? (m + __log2f(l)) * kLn2 : -INFINITY;
            const mla_div::DivMod th = mla_div::divmod_row<mla_div::kDivMmaSync>(tid, Hk);
            const int tt = th.q, h = th.r;
            if (split)
                p.partial_lse[(int64_t)(w.pql + tt) * Hk + h] = lse;
            else if (p.lse)
                p.lse[(int64_t)(w.qo_b + w.t0 + tt) * p.num_heads + w.g * Hk + h] = lse;
        }
    }
}

}  // namespace mla_dec

// Defines the extern "C" kernel mla_decode_<QN>_<KVN>_m<M>; like the wgmma kernels it first
// waits for the grids ahead of it (mla_dec::kernel_start), so launch_pdl 1 is safe on its rows too,
// and it does not trigger its dependents early (decode_wgmma.cuh says why that matters).
#define MLA_DECODE_KERNEL(QN, KVN, Q8, KV8, M)                                                   \
    extern "C" __global__ void __launch_bounds__(mla_dec::Cfg<M, KV8>::THREADS, 1)                \
        mla_decode_##QN##_##KVN##_m##M(const __grid_constant__ mla_decode_params p) {              \
        extern __shared__ __align__(128) char smem[];                                             \
        mla_dec::kernel_start(p);                                                                 \
        mla_dec::decode_kernel_body<M, Q8, KV8>(p, smem);                                         \
    }
