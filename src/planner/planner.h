// planner.h - internal interface of the metadata planner (src/planner/*). Every function throws
// mla::Error; the C API (api_planner.cpp) wraps them. Buffer layout: docs/plan-layout.md.
#pragma once
#include <cstdint>
#include <vector>

#include "../../codeobjects/sm_90a/planner/meta_params.h"
#include "mla_c_api.h"
#include "routing/routing.h"

namespace mla::plan {

// Everything resolved from mla_metadata_params: the head plan, cluster count, v1_2 config and
// the buffer sizes (mla_metadata_info).
struct Setup {
    mla_metadata_params params{};  // with defaults applied (read_struct)
    route::Arch arch = route::Arch::sm90a;
    mla_head_plan head{};          // routing's head plan (planner, fold, packing)
    mla_planner planner = MLA_PLANNER_V1_2;
    mla_v12_config cfg{};          // tile rule, pages per block, overhead, clusters, splits
    mla_metadata_sizes sizes{};    // struct_size = sizeof
    int32_t max_tile_tokens = 1;   // largest tile (tokens) over qlen 1..L: rows per fragment
};

// The decode workspace of `rows` partial rows of `hk` kernel heads (docs/plan-layout.md): fp32
// partial outputs [rows, hk, 512] at byte 0, fp32 partial LSEs [rows, hk] at this byte offset (the
// outputs' bytes rounded up to 256); the whole workspace is this offset + rows * hk * 4 bytes.
inline int64_t partial_lse_offset(int64_t rows, int64_t hk) {
    return (rows * hk * 512 * 4 + 255) / 256 * 256;
}

// Validates params and resolves them [INVALID_ARGUMENT naming the field; UNSUPPORTED_SHAPE
// when the head plan rejects the heads / qlen / dtypes; ARCH_NOT_BUILT for an unknown arch].
Setup resolve(const mla_metadata_params& params);

// Reads a caller's params struct (struct_size rules) and resolves it.
Setup resolve_public(const mla_metadata_params* params);

// Checks host (or device) buffers against the sizes [INVALID_ARGUMENT: buffers null or a
// non-empty buffer with a null pointer; BUFFER_TOO_SMALL naming the buffer].
mla_metadata_buffers check_buffers(const Setup& s, const mla_metadata_buffers* buffers);

// Validates host qo_indptr / kv_indptr / kv_last_page_lens of s.params.batch_size requests
// [INVALID_ARGUMENT naming the request: null, decreasing, negative or overflowing lengths,
// qlen > max_seqlen_qo, last page length out of 1..page_size].
void validate_inputs(const Setup& s, const int32_t* qo_indptr, const int32_t* kv_indptr,
                     const int32_t* kv_last_page_lens);

// Host planners. Inputs already validated, buffers checked. work_metadata gets (md0, md1).
// plan_v1_2 returns the twin sections it laid the clusters out in (mla_plan_summary.num_sections:
// 1 in aiter's order).
int32_t plan_v1_2(const Setup& s, const int32_t* qo_indptr, const int32_t* kv_indptr,
                  const int32_t* kv_last_page_lens, const mla_metadata_buffers& b);
// The v1_2 host planner from the resolved config alone (what the device planner receives); the
// test double of the device kernel runs this on the fake runtime.
int32_t plan_v1_2_config(const mla_v12_config& c, const int32_t* qo_indptr, const int32_t* kv_indptr,
                         const int32_t* kv_last_page_lens, const mla_metadata_buffers& b);
void plan_v1_0(const Setup& s, const int32_t* qo_indptr, const int32_t* kv_indptr,
               const int32_t* kv_last_page_lens, const mla_metadata_buffers& b);
void plan_v1_1(const Setup& s, const int32_t* qo_indptr, const int32_t* kv_indptr,
               const int32_t* kv_last_page_lens, const mla_metadata_buffers& b);

// mla_update_metadata on checked host buffers (update.cpp) [INVALID_ARGUMENT].
void update_plan(const Setup& s, const int32_t* new_kv_indptr, const int32_t* num_reject_tokens,
                 const mla_metadata_buffers& b);

// Kernel params of a device plan (plan_device.cpp) [UNSUPPORTED_SHAPE: not v1_2, batch or
// clusters beyond the kernel's limits; INVALID_ARGUMENT: null inputs].
void check_device_plan(const Setup& s, const int32_t* qo_indptr, const int32_t* kv_indptr,
                       const int32_t* kv_last_page_lens);
mla_meta_params device_params(const Setup& s, const int32_t* qo_indptr, const int32_t* kv_indptr,
                              const int32_t* kv_last_page_lens, const mla_metadata_buffers& b);

// Summary of a planned host buffer set (counts, balance).
mla_plan_summary summarize(const Setup& s, const int32_t* kv_indptr,
                           const mla_metadata_buffers& b);

// v1_0 / v1_1 helpers shared by both (plan_v1_x.cpp): one qo tile of one pseudo-request.
struct Tile {
    int32_t batch;      // pseudo-request p = b * r + g
    int32_t req;        // b
    int32_t index;      // tile index within the pseudo-request
    int32_t qo_start;   // folded rows
    int32_t qo_end;
    int32_t tsize;      // nominal tokens per tile (partial rows per fragment)
    int32_t pages;      // P_b
    int32_t tokens;     // N_b
    int32_t blocks;     // split units
};
std::vector<Tile> list_tiles(const Setup& s, const int32_t* qo_indptr, const int32_t* kv_indptr,
                             const int32_t* kv_last_page_lens);

// Writes work (8 int32) for split blocks [j0, j1) (j1 < 0: to the end) of a tile, no trim.
void tile_work(const Setup& s, const Tile& t, const int32_t* kv_indptr,
               const int32_t* kv_last_page_lens, int32_t j0, int32_t j1, int32_t partial,
               int32_t* w);

}  // namespace mla::plan
