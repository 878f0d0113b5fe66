// merge_params.h - the plain params struct of the sm_90a context-parallel LSE merge
// (mla_merge_bf16, merge.cu), shared by the kernel and the host launch code (src/cp/).
// Plain C types only. Contract: mla_c_api.h, mla_merge_attn_states; docs/context-parallel.md.
#pragma once
#include <stdint.h>

/* Threads per CTA the kernel is built for (__launch_bounds__); the table's launch_threads must
 * equal it (checked on the host: MLA_ERROR_TABLE otherwise). */
#define MLA_MERGE_THREADS 256

/* Merge (mla_merge_bf16): one warp per (row, head) unit, unit = blockIdx.x * warps + warp;
 * grid.x = ceil(total_q * num_heads / (MLA_MERGE_THREADS / 32)). Each rank's partial block is
 * contiguous; rank k's starts k * *_rank_stride elements after rank 0's. */
struct mla_merge_params {
    const void* partial_out;    /* [world_size][total_q, H, 512] fp32 or bf16 (partial_bf16) */
    const float* partial_lse;   /* [world_size][total_q, H] fp32 natural log                  */
    void* out;                  /* [total_q, H, 512] bf16                                      */
    float* lse;                 /* [total_q, H] fp32, or NULL                                  */
    int64_t num_units;          /* total_q * H                                                 */
    int64_t out_rank_stride;    /* elements (fp32 or bf16) between ranks' partial_out blocks   */
    int64_t lse_rank_stride;    /* floats between ranks' partial_lse blocks                    */
    int32_t world_size;         /* W >= 1                                                      */
    int32_t partial_bf16;       /* 1: partial_out is bf16; 0: fp32                             */
};
