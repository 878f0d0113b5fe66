// meta_params.h - plain params of the device metadata planner (mla_meta_v1_2, table mla_meta),
// shared by the kernel (meta_v1_2.cu), the host launch (src/planner/plan_device.cpp) and the
// host planner, whose v1_2 core (src/planner/v1_2_core.h) reads the same config struct.
// Plain C types only: no CUDA header.
#pragma once
#include <stdint.h>

// Resolved v1_2 configuration (computed on the host from mla_metadata_params and the head plan;
// every field is an int32 so the struct has one layout everywhere).
typedef struct mla_v12_config {
    int32_t num_batches;      // B: real requests (qo/kv indptr have B + 1 entries)
    int32_t ratio;            // qk_batch_ratio r: pseudo-requests per request
    int32_t kernel_heads;     // Hk = H / r
    int32_t packed;           // packed_qo_len_per_wg of the head plan
    int32_t tile_rule;        // 0: sm_90a (T = min(L, max(1, packed / Hk))), 1: aiter rule
    int32_t max_seqlen_qo;    // L: longest request in query tokens; also the tail threshold
    int32_t page_size;        // tokens per page (power of two)
    int32_t pages_per_block;  // split unit in pages: max(1, kv_granularity / page_size)
    int32_t overhead;         // fixed cost blocks per work: max(1, ceil(16 / page_size), ceil(
                              // work_overhead_tokens / block tokens)) (mla_c_api.h)
    int32_t causal_trim;      // 1: page_size 1, causal, not round-robin: trim tile ends
    int32_t num_clusters;     // C: persistent workgroups (work_indptr has C + 1 entries)
    int32_t num_splits;       // min(C, cap * B * r) with a cap, else C
    int32_t auto_splits;      // 1: effective split count from the workload (no cap given)
    int32_t block_shift;      // log2(pages_per_block)
    int32_t tile_tokens;      // sm_90a: max(1, packed / kernel_heads); aiter rule: 0
    int32_t group_major;      // 1: pseudo-requests laid out head group by head group (host only)
    int32_t tile_ids;         // 1 (sm_90a): work dw 7 = the work's qo tile (the decode kernels' fused
                              // reduction counts fragments per tile); 0: 0, aiter's pad
    int32_t tail_blocks;      // 0: none; else a fragment boundary never leaves fewer than this
                              // many blocks of its tile (split_tail_tokens in blocks, mla_c_api.h)
} mla_v12_config;

// Kernel params, passed by value (const __grid_constant__).
typedef struct mla_meta_params {
    // Inputs (device pointers).
    const int32_t* qo_indptr;          // [B + 1]
    const int32_t* kv_indptr;          // [B + 1] pages
    const int32_t* kv_last_page_lens;  // [B]
    // Outputs (device pointers), aiter layout (docs/plan-layout.md).
    uint64_t* work_metadata;           // [2]
    int32_t* work_indptr;              // [work_indptr_len]
    int32_t* work_info_set;            // [work_info_set_rows][8]
    int32_t* reduce_indptr;            // [reduce_indptr_len]
    int32_t* reduce_final_map;         // [reduce_final_map_rows][2]
    int32_t* reduce_partial_map;       // [reduce_partial_map_len]
    // Buffer lengths: the kernel pads work_indptr / reduce_indptr to these and never writes
    // past any of them, whatever the device-resident inputs hold.
    int32_t work_indptr_len;
    int32_t work_info_set_rows;
    int32_t reduce_indptr_len;
    int32_t reduce_final_map_rows;
    int32_t reduce_partial_map_len;
    int32_t pad;
    mla_v12_config cfg;
} mla_meta_params;

// Threads per block of the kernel and the largest batch / cluster count it plans (shared memory
// holds 24 bytes per request and 32 per cluster, see below).
#define MLA_META_THREADS 1024
#define MLA_META_MAX_BATCH 8192
#define MLA_META_MAX_CLUSTERS 1024
// CTAs per launch: every CTA computes the plan skeleton and writes 1/n of the outputs. The host
// launches min(table launch_max_blocks, ceil(B / MLA_META_REQS_PER_CTA)), at least 1.
#define MLA_META_REQS_PER_CTA 128

// Dynamic shared memory of the kernel for B requests and C clusters (bytes). Layout, in order:
// int64 R[B+1], X[C+1], scratch[64], chain z[16], misc[4]; int32 QO[B+1], KV[B+1], LAST[B+1],
// TR[B+1], TB[C+1], IN[C+1], XB[C+1], WI[C+1], ERED[C+1], EPART[C+1] (buckets during the chain),
// chain masks[16], misc[8]. B = 8192, C = 1024: 230200 bytes (the sm_90 limit is 232448).
static inline uint32_t mla_meta_smem_bytes(int32_t B, int32_t C) {
    return (uint32_t)(8 * ((B + 1) + (C + 1) + 64 + 16 + 4) + 4 * (4 * (B + 1) + 6 * (C + 1) + 24));
}
