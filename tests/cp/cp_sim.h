// cp_sim.h - round-robin context parallelism simulated in one process (no GPU): a batch of
// requests with global KV lengths G_b, its whole-KV layout (one rank) and each rank's shard
// (global position p on rank p mod W, local index j <-> p = j W + r, §7), as host problems for
// the CPU reference, plus the merge of the ranks' partial (O, LSE).
#pragma once
#include <cstdint>
#include <vector>

#include "mla_c_api.h"

namespace cptest {

// The logical batch: queries and the global KV rows of every request, encoded in their dtypes.
struct Batch {
    int32_t heads = 16, qlen = 1;
    mla_dtype kv_dtype = MLA_DTYPE_BF16;  // q is bf16
    float scale = 0.15f, kv_scale = 1.0f;
    std::vector<int32_t> g_len;                 // G_b
    std::vector<uint8_t> q;                     // [B * qlen, heads, 576] bf16
    std::vector<std::vector<uint8_t>> kv_rows;  // per request: G_b rows of 576 kv_dtype elements
    int32_t batch() const { return int32_t(g_len.size()); }
    int32_t total_q() const { return batch() * qlen; }
};

// Random values in [-1, 1]; kv_scale 0.5 for fp8 KV.
Batch make_batch(const std::vector<int32_t>& g_len, int32_t heads, int32_t qlen, mla_dtype kv_dtype,
                 uint32_t seed);

// One rank's paged KV cache and page table (world 1: the whole KV). Pages are shuffled, unused
// slots and one spare page hold NaN (never read).
struct Shard {
    int32_t world = 1, rank = 0, page_size = 1, num_pages = 0;
    std::vector<uint8_t> cache;
    std::vector<int32_t> qo, kv, idx, last, g_kv;
    mla_host_problem problem(const Batch& b) const;  // pointers into b and this shard
};

// Rank `rank` of `world` holds global positions rank, rank + world, ... of every request.
Shard make_shard(const Batch& b, int32_t world, int32_t rank, int32_t page_size, uint32_t seed);

// Tokens of a request with global length g on rank r of W: ceil((g - r) / W), 0 if g <= r.
int32_t local_len(int32_t g, int32_t world, int32_t rank);

struct Result {
    std::vector<float> out, lse;  // [total_q, H, 512], [total_q, H]
};

// mla_decode_reference of a shard [REQUIRE success].
Result reference(const Batch& b, const Shard& s);

// Merges the ranks' results with mla_merge_attn_states_host (fp32 partials, fp32 out).
Result merge(const std::vector<Result>& parts, int32_t total_q, int32_t heads);

// Largest |a - b| / (1 + |b|); +inf when a NaN appears or an infinity is not matched exactly.
double max_diff(const std::vector<float>& a, const std::vector<float>& b);

}  // namespace cptest
