// decode_params.h - the plain params struct of the sm_90a persistent MLA decode kernels
// (mla_decode_<q>_<kv>_m<M>), shared by the .cu sources and the host launch code
// (src/launch/). Plain C types only: no CUDA header. Layout contract: docs/plan-layout.md.
//
// One CTA per planner cluster runs works work_info_set[work_indptr[c] .. work_indptr[c+1]).
// Every pointer is a device pointer; strides are in elements of the pointed-to dtype.
#pragma once
#include <stdint.h>

#include "../reduce/reduce_params.h"

#define MLA_DECODE_D_QK 576 /* Q / K row: 512 latent (nope) + 64 rope */
#define MLA_DECODE_D_V 512  /* V = the first 512 columns of the KV row */

/* Bits the kernel ORs into *error_flag (when not NULL). A token whose page cannot be read is
 * never read: it counts as a masked key (it gets no weight). */
#define MLA_DECODE_ERR_PAGE_ID 1      /* page id outside [0, num_pages)                        */
#define MLA_DECODE_ERR_PAGE_INDEX 2   /* page-table index outside kv_page_indices / block_table */
#define MLA_DECODE_ERR_PLAN 4         /* a work item that does not fit the kernel (rows > M), or
                                       * works beyond the grid (mla_decode_args.active_clusters) */
#define MLA_DECODE_ERR_SMEM 8         /* launched with less dynamic shared memory than needed  */

struct mla_decode_params {
    const void* q;                  /* [total_q, H, 576] bf16 or fp8 (e4m3fn)                    */
    const void* kv;                 /* [num_pages, page_size, 1, 576] bf16 or fp8               */
    void* out;                      /* [total_q, H, 512] bf16, or fp32 with out_fp32            */
    float* lse;                     /* [total_q, H] fp32, natural log; NULL = not written       */
    float* partial_out;             /* [partial_rows, Hk, 512] fp32 (workspace offset 0)        */
    float* partial_lse;             /* [partial_rows, Hk] fp32                                  */
    const int32_t* qo_indptr;       /* [B+1]                                                    */
    const int32_t* kv_indptr;       /* [B+1] pages (CSR indptr the plan was made from)          */
    const int32_t* kv_last_page_lens; /* [B]                                                    */
    const int32_t* page_table;      /* CSR: kv_page_indices; block-table form: block_table      */
    const int32_t* work_indptr;     /* [num_clusters+1]                                         */
    const int32_t* work_info_set;   /* [works][8]                                               */
    const float* q_scale;           /* [1] or NULL (= 1)                                        */
    const float* kv_scale;          /* [1] or NULL (= 1)                                        */
    int32_t* error_flag;            /* [1] or NULL                                              */
    int64_t q_stride_token;
    int64_t q_stride_head;
    int64_t kv_stride_page;
    int64_t out_stride_token;
    int64_t out_stride_head;
    int64_t num_page_indices;       /* CSR: entries of kv_page_indices                          */
    float softmax_scale;            /* caller's scale; scores = q.k * scale * q_scale * kv_scale */
    int32_t batch_size;             /* B                                                        */
    int32_t num_heads;              /* H (caller's heads)                                       */
    int32_t kernel_heads;           /* Hk = H / qk_batch_ratio                                  */
    int32_t qk_batch_ratio;         /* r                                                        */
    int32_t page_size_log2;
    int32_t num_pages;
    int32_t block_table_stride;     /* 0: CSR form; > 0: page_table is block_table [B, stride]   */
    int32_t causal;
    int32_t cp_world_size;          /* round-robin context parallel W (1 = off); local token i of
                                     * a request is its global position i * W + cp_rank         */
    int32_t cp_rank;
    int32_t out_fp32;               /* 1: out is fp32 [total_q, H, 512] (strides in floats), 0: bf16
                                     * (the wgmma families; the mma.sync fallback writes bf16 only) */
    const int32_t* g_kv_indptr;     /* [B+1] global KV lengths (W > 1), NULL otherwise           */
    int32_t kv_tma;                 /* 1: KV tiles load by TMA through kv_tmap, a box per
                                     * 64-column block (the table row's launch_kv_tma 1 or 2);
                                     * 2: a box per 64-token tile through the 4-D map below (row
                                     * launch_kv_tma 2, bf16 KV, page_size >= 64); 0: cp.async    */
    int32_t kv_tmap_pad[3];         /* puts kv_tmap at byte 240 (below)                          */
    /* CUtensorMap (cuTensorMapEncodeTiled) of the KV cache when kv_tma: kv_tma 1, bf16, 3-D
     * {576, page_size, num_pages}, strides {1152 bytes, kv_stride_page * 2 bytes}, box {64,
     * min(page_size, 64), 1} (fp8: bytes, box {128, ..}); kv_tma 2, bf16, 4-D {64, page_size, 9,
     * num_pages}, strides {1152, 128, kv_stride_page * 2 bytes}, box {64, 64, 9, 1}; 128-byte
     * swizzle; opaque to the host code. TMA reads it in place
     * (the kernels take the params __grid_constant__) and needs it 64-byte aligned. The struct
     * keeps 8-byte alignment, so that it starts the kernel's parameter space (libmla launches
     * with a packed argument buffer, which the driver copies there; an over-aligned struct
     * would be placed further in by ptxas). On sm_90 that space starts at constant-bank byte
     * 0x210, so byte 240 of the struct is 128-byte aligned there; a kernel that finds the map
     * misaligned loads by cp.async instead (decode_wgmma.cuh). */
    uint64_t kv_tmap[16];
    /* The fused split-KV reduction (decode/fused_reduce.cuh; the *_fused builds of the 16- and
     * 32-row bf16 wgmma kernels, mla_decode.csv rows keyed fused = 1): when tile_counters is not
     * NULL, the CTA that completes a split tile's count reduces it into out / lse, and no reducer
     * kernel runs. `reduce` is the reducer kernel's params struct as the host fills it for that
     * kernel (src/launch/decode_check.cpp), with num_tiles = the plan's qo tiles
     * (reduce_indptr_len - 1) whether or not a reducer is launched: the kernel checks a split
     * work's tile (work dw 7) against it and reduce_final_map. tile_counters: the caller's zeroed
     * counters, one per planned tile (mla_decode_args tile_counters), which the kernel leaves at 0.
     * NULL: the reducer kernel runs after this one (the other kernels ignore both fields). */
    struct mla_reduce_params reduce;
    int32_t* tile_counters;         /* [reduce.num_tiles] or NULL                               */
    /* The plan's clusters (work_indptr has num_clusters + 1 entries). The grid may be smaller
     * (mla_decode_args.active_clusters): every kernel's last CTA then checks that no work lies
     * beyond it (mla_dec::kernel_start; MLA_DECODE_ERR_PLAN otherwise). */
    int32_t num_clusters;
    /* Rows of work_info_set (mla_metadata_sizes.work_info_set_rows, which the caller's buffer has
     * at least): a kernel may read row c < work_rows before it knows that it is one of its works
     * (the -DMLA_WG_FASTSTART hook: the record of work c read together with work_indptr[c]). */
    int32_t work_rows;
};

#ifdef __cplusplus
/* Tiling of decode variant (M rows, fp8 KV or not): 8 warps; KV tokens per stage (64 for M = 16,
 * 32 otherwise); stages; dynamic shared memory in bytes. The table's launch_threads / launch_smem
 * must equal these (tests/decode checks; the launch code refuses a disagreeing row; the kernel
 * verifies its shared memory at run time). */
static inline constexpr int mla_decode_warps(int m) { return m > 0 ? 8 : 8; }
static inline constexpr int mla_decode_tile_n(int m) { return m == 16 ? 64 : 32; }
static inline constexpr int mla_decode_stages(int m, bool kv_fp8) {
    return m == 16 ? (kv_fp8 ? 3 : 2) : kv_fp8 ? (m == 64 ? 4 : 6) : (m == 64 ? 3 : 4);
}
static inline constexpr int mla_decode_smem_bytes(int m, bool kv_fp8) {
    /* Q rows and bf16 KV rows are padded to 1168 bytes (conflict-free ldmatrix). */
    return m * 1168                                                                   /* Q    */
           + mla_decode_stages(m, kv_fp8) * mla_decode_tile_n(m) * (kv_fp8 ? 576 : 1168) /* ring */
           + (kv_fp8 ? mla_decode_tile_n(m) * 1168 : 0)                              /* fp8->bf16 */
           + m * (mla_decode_tile_n(m) * 2 + 16)                                     /* P    */
           + (4 * m + 2 * (mla_decode_warps(m) / (m / 16)) * m) * 4                  /* stats */
           + mla_decode_stages(m, kv_fp8) * mla_decode_tile_n(m) * 4;                /* token flags */
}
/* wgmma kernels (mla_decode_wg_<q>_<kv>_m<M>, decode_wgmma.cuh): 2 warpgroups (256 threads),
 * 64-token KV tiles in a 128-byte-swizzled shared layout; bf16 KV: a ring of `stages` tiles;
 * fp8 KV: a ring of `stages` raw fp8 tiles plus one widened bf16 tile. Shared memory: Q (M rows),
 * the ring, [the bf16 tile], P^T (M x 64 bf16; two of them with bf16 KV at M <= 32, by tile parity:
 * wg_common.cuh's Cfg::PBUF), row-max exchange (4 M floats), token flags. */
static inline constexpr int mla_decode_wg_threads() { return 256; }
static inline constexpr int mla_decode_wg_stages(int m, bool kv_fp8) { return kv_fp8 ? (m == 64 ? 2 : 3) : 2; }
/* fp8 KV with M = 16 runs the ping-pong variant (M = 32 would need ~270 registers): each warpgroup loads its own tiles (every other
 * one) into registers, widens them into its own bf16 tile and keeps its own O^T; the two meet at
 * the end. Shared memory: Q, 2 bf16 tiles, 2 P^T, 2 max exchanges, 2 x 64 flags, 2 x (m, l). */
static inline constexpr int mla_decode_wg_pingpong(int m, bool kv_fp8) { return kv_fp8 && m == 16; }
static inline constexpr int mla_decode_wg_smem_bytes(int m, bool kv_fp8) {
    return mla_decode_wg_pingpong(m, kv_fp8)
               ? m * 1152 + 2 * 64 * 1152 + 2 * m * 128 + 2 * 16 * m + 2 * 64 * 4 + 2 * 2 * 4 * m
               : m * 1152                                                         /* Q, bf16 */
           + mla_decode_wg_stages(m, kv_fp8) * (kv_fp8 ? 64 * 576 : 64 * 1152) /* ring    */
           + (kv_fp8 ? 64 * 1152 : 0)                                       /* widened */
           + (kv_fp8 || m > 32 ? 1 : 2) * m * 128                           /* P^T     */
           + 16 * m                                                         /* maxima  */
           + mla_decode_wg_stages(m, kv_fp8) * 64 * 4;                      /* flags   */
}
/* Register-A kernels (mla_decode_ra_<q>_fp8_m16, decode_ra.cuh): fp8 KV with fp8 or bf16 Q, 16-row
 * tiles, 2 ping-pong warpgroups (256 threads). Shared memory: Q (fp8: 5 swizzled 128-byte blocks
 * per row; bf16 Q split into two e4m3 rows, MLA_RA_QSPLIT: 10; bf16 Q staged as f16: 9),
 * a ring of MLA_DECODE_RA_SLOTS raw fp8 tiles, 2 P^T (f16), 2 exchanges, flags per slot,
 * 2 x (m, l), one mbarrier per slot. */
/* 4 slots since session 39 (5 before; with MLA_RA_VSWAP 1, fp8 16 heads 94.6 -> 93.4 us, bf16 Q /
 * fp8 KV 104.9 -> 104.3, docs/performance.md). */
#ifndef MLA_DECODE_RA_SLOTS
#define MLA_DECODE_RA_SLOTS 4
#endif
/* MLA_RA_VSWAP (session 39; decode_ra.cuh): the register-A ring's token order, 1 shipped (the
 * tokens of every second pair swapped: fp8 16 heads 102.2 -> 94.8 us, bf16 Q / fp8 KV 116.8 ->
 * 105.1, docs/performance.md); with 2 (measured slower) each token row is padded to
 * MLA_DECODE_RA_ROW_PITCH = 592 bytes (576 otherwise); 3 (session 40, measured slower: 93.9 ->
 * 102.7, 104.9 -> 118.8) holds the tiles as the fp8 tensor map's swizzled boxes, conflict-free
 * (the ra rows then need the larger launch_smem, and launch_kv_tma 1 to load by TMA: without it
 * the cp.async loader runs, ~173 us at fp8 16 heads). */
#ifndef MLA_RA_VSWAP
#define MLA_RA_VSWAP 1
#endif
/* bytes of a ring slot per token: 576-byte rows (0, 1), 592-byte rows (2), or with 3 five 128-byte
 * column blocks of 64 rows each (TMA boxes, 128-byte swizzle): 640 */
#define MLA_DECODE_RA_ROW_PITCH (MLA_RA_VSWAP == 3 ? 640 : MLA_RA_VSWAP == 2 ? 592 : 576)
/* MLA_RA_SSK (session 40; decode_ra.cuh): the fp8-Q register-A kernel with its slots as the fp8
 * tensor map's boxes (as MLA_RA_VSWAP 3, 640 bytes a token; launch_kv_tma 1), token map 0, and
 * S^T = K Q^T with K from shared memory by descriptor (no K fragments in registers); 0 shipped. */
#ifndef MLA_RA_SSK
#define MLA_RA_SSK 0
#endif
/* bytes of a register-A ring slot (64 tokens) */
static inline constexpr int mla_decode_ra_slot_bytes(bool q_fp8) {
    return 64 * ((q_fp8 && MLA_RA_SSK) ? 640 : MLA_DECODE_RA_ROW_PITCH);
}
/* MLA_RA_QSPLIT (session 40; decode_ra.cuh): the bf16-Q register-A kernel's S^T on the fp8 tensor
 * cores. Q, times the work's 2^k, is split into two e4m3 parts hi + lo, staged as 2 m rows
 * (10 blocks of m rows); 0: Q staged as f16 (9 blocks), S^T on the f16 tensor cores with K
 * widened in registers (shipped). 1: one m64n32k32 chain whose 32 columns are hi and lo; 2: two
 * m64n16k32 chains, hi and lo (either needs launch_smem 173,856 on the bf16-Q ra rows).
 * Measured, off: 1 ran bf16 Q / fp8 KV 105.2 -> 98.1 us, but the fp8 tensor cores' short adds
 * miss the bf16 tolerance where the logits are large (LSE rel 1.7e-3 with Q x 300;
 * docs/performance.md, session 40 call 2). */
#ifndef MLA_RA_QSPLIT
#define MLA_RA_QSPLIT 0
#endif
static inline constexpr int mla_decode_ra_threads() { return 256; }
static inline constexpr int mla_decode_ra_smem_bytes(int m, bool q_fp8) {
    return (q_fp8 ? 5 : MLA_RA_QSPLIT ? 10 : 9) * m * 128 + MLA_DECODE_RA_SLOTS * mla_decode_ra_slot_bytes(q_fp8) + 2 * m * 128 + 2 * 16 * m + MLA_DECODE_RA_SLOTS * 64 * 4 +
           2 * 2 * 4 * m + MLA_DECODE_RA_SLOTS * 8;
}
/* qm kernels (mla_decode_qm_<q>_<kv>_m<M>, decode_qm.cuh; M = 32 or 64): the query rows are the
 * MMA's M side (padded to 64), 2 warpgroups, 256 threads. Shared memory: Q (64 rows, bf16), a
 * ring of 2 KV tiles (bf16; fp8 KV: 2 raw fp8 tiles plus the widened bf16 tile), the P exchange
 * (2 warpgroups x 2 k-blocks x 128 threads x 16 B), the row-max exchange (2 x 128 x 2 floats),
 * token flags (2 x 64). */
static inline constexpr int mla_decode_qm_threads() { return 256; }
/* The three-warpgroup fp8 qm kernel (mla_decode_qm_fp8_fp8_m64_ws, decode_qm8_ws.cuh): 384
 * threads, the same shared memory as the 256-thread qm kernels' fp8 rows. */
static inline constexpr int mla_decode_qm_ws_threads() { return 384; }
static inline constexpr int mla_decode_qm_smem_bytes(bool kv_fp8) {
    return 64 * 1152 + (kv_fp8 ? 2 * 64 * 576 + 64 * 1152 : 2 * 64 * 1152) + 2 * 2 * 128 * 16 + 2 * 128 * 2 * 4 +
           2 * 64 * 4;
}
#endif
