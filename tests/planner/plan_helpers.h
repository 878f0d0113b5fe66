// plan_helpers.h - shared by the planner tests: host plan buffers sized by mla_metadata_info,
// random batches, the invariant checker and a literal serial v1_2 walk (the oracle the parallel
// formulation of src/planner/v1_2_core.h must equal byte for byte).
#pragma once
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "mla_c_api.h"

namespace plantest {

constexpr int32_t kSentinel = -77;

// A batch: host indptrs.
struct Batch {
    std::vector<int32_t> qo, kv, last;  // [B+1], [B+1], [B]
    int32_t B() const { return int32_t(last.size()); }
};

// Batch from per-request query tokens and KV tokens (pages of page_size).
Batch make_batch(const std::vector<int32_t>& qlens, const std::vector<int64_t>& kv_tokens,
                 int32_t page_size);

// Host plan buffers, pre-filled with kSentinel (work_metadata with 0).
struct Plan {
    mla_metadata_sizes sizes{};
    std::vector<uint64_t> md;
    std::vector<int32_t> work_indptr, work_info, reduce_indptr, final_map, partial_map;
    mla_metadata_buffers buffers() ;
};

// Sizes for params [REQUIRE success].
mla_metadata_sizes sizes_of(const mla_metadata_params& p);
Plan alloc_plan(const mla_metadata_params& p);
// Plans with mla_plan_metadata; returns the status (buffers untouched on error).
mla_status run_plan(const mla_metadata_params& p, const Batch& b, Plan& plan,
                    mla_plan_summary* summary = nullptr);

// The serial v1_2 walk (aiter §4.4, one cluster after another), into `plan`.
// head_group_major's qo-tile sections for these params and batch: the common tile count n of the
// requests when the planner lays tiles out in r n twin sections (docs/planner.md), else 0.
int32_t tile_sections_of(const mla_metadata_params& p, const Batch& b);

int32_t serial_walk_v1_2(const mla_metadata_params& p, const Batch& b, Plan& plan);
// The serial walk's work overhead in cost blocks (its restatement of the arch's default rule),
// for checking mla_plan_summary.work_overhead_blocks.
int32_t serial_overhead_blocks(const mla_metadata_params& p);
// ... and its split tail in blocks (split_tail_tokens, the arch's default restated).
int32_t serial_tail_blocks(const mla_metadata_params& p);

// Checks every plan invariant of docs/plan-layout.md; returns "" or the first violation.
// in_order: v1_2's global order (tiles in order, fragments in KV order across clusters).
std::string check_invariants(const mla_metadata_params& p, const Batch& b, const Plan& plan,
                             bool in_order);

// Random batch for the property sweep: B requests, lengths mixed over 0..max_kv tokens.
Batch random_batch(std::mt19937& rng, int32_t B, int32_t max_qlen, int64_t max_kv,
                   int32_t page_size, bool varlen_q);

}  // namespace plantest
