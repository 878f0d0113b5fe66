// reduce_params.h - the plain params struct of the sm_90a split-KV reducers (mla_reduce.cu),
// shared by mla_reduce.cu, the host launch code (src/launch/) and the decode kernels' params
// (decode_params.h: mla_decode_params.reduce, the fused reduction's view). Plain C types only.
// Contract: docs/plan-layout.md "Reduce".
#pragma once
#include <stdint.h>

/* Reducers: mla_reduce_bf16 and mla_reduce_wide_bf16 run on grid (tiles, M x 4 / units per CTA),
 * a unit being (row, head, 128-column quarter) of a tile, and unsplit tiles return at once;
 * mla_reduce_slim_bf16 on grid (tiles, M x 8), a unit being (row, head, 64-column eighth);
 * mla_reduce_tiles_bf16 on grid (min(tiles, SMs), 1). The launch contract each table row must
 * keep (checked on the host against the row's knl_name: MLA_ERROR_TABLE otherwise):
 *   mla_reduce_bf16       4 units per CTA (a loop over the tile's units), 128..512 threads in
 *                         steps of 128 (warps per unit = threads / 128);
 *   mla_reduce_wide_bf16  1 unit per CTA (unit = blockIdx.y, no loop), exactly 512 threads;
 *   mla_reduce_slim_bf16  1 unit per CTA (unit = blockIdx.y, no loop), exactly 128 threads (at
 *                         most 96 registers: it fits beside a 16-row decode CTA, reduce_slim.cuh);
 *   mla_reduce_tiles_bf16 launch_units_per_cta 0: whole split tiles, grid (min(tiles, SMs), 1),
 *                         CTA c taking the contiguous tiles [c T / G, (c + 1) T / G) (its
 *                         registers allow one CTA of 512 threads per SM), 128..512 threads in
 *                         steps of 128. */
#define MLA_REDUCE_UNITS_PER_CTA 4
#define MLA_REDUCE_WIDE_THREADS 512
#define MLA_REDUCE_SLIM_THREADS 128
#define MLA_REDUCE_TILES_MAX_THREADS 512
struct mla_reduce_params {
    const float* partial_out;       /* [partial_rows, Hk, 512]                                  */
    const float* partial_lse;       /* [partial_rows, Hk]                                       */
    const int32_t* reduce_indptr;   /* [num_tiles+1]                                            */
    const int32_t* reduce_final_map;/* [num_tiles][2] folded (qo_start, qo_end)                 */
    const int32_t* reduce_partial_map;
    const int32_t* qo_indptr;       /* [B+1]                                                    */
    void* out;                      /* [total_q, H, 512] bf16, or fp32 with out_fp32            */
    float* lse;                     /* [total_q, H] or NULL                                     */
    int64_t out_stride_token;
    int64_t out_stride_head;
    int32_t batch_size;
    int32_t num_heads;
    int32_t kernel_heads;
    int32_t qk_batch_ratio;
    int32_t num_tiles;
    int32_t out_fp32;               /* 1: out is fp32 (strides in floats), 0: bf16              */
};
