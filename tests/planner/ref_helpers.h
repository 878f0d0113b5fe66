// ref_helpers.h - host decode problems for the reference tests: the closed-form constructions of
// edge-cases.md §0 (U(L): uniform scores, out = mean of the visible values, LSE = ln(count)),
// NaN-poisoned unused slots, and runners for the direct reference and plan execution.
#pragma once
#include <cstdint>
#include <random>
#include <vector>

#include "mla_c_api.h"
#include "plan_helpers.h"

namespace reftest {

struct Case {
    int32_t heads = 16, page_size = 1, max_q = 1, causal = 1;
    mla_dtype q_dtype = MLA_DTYPE_BF16, kv_dtype = MLA_DTYPE_BF16;
    std::vector<int32_t> qlens;
    std::vector<int64_t> kv_lens;
    std::vector<uint8_t> q, cache;  // raw element bytes
    std::vector<int32_t> qo, kv, idx, last;
    int32_t num_pages = 0;
    float scale = 1.0f / 24.0f, q_scale = 1.0f, kv_scale = 1.0f;
    int fp8_p_quant = 0;
    mla_host_problem problem() const;
    plantest::Batch batch() const;
    int32_t total_q() const { return qo.back(); }
};

// Pages: each request gets ceil(N/ps) pages (physical ids shuffled when `shuffle`), plus
// `extra_pages` unreferenced pages. Every slot starts as NaN (0x7FC0 bf16 / 0x7F fp8).
// U(L) data: valid row j of request b = [(j % 16) + 1 + 16 * b * offset (or * 2^b for fp8
// caches when offset), x 512 | 0 x 64]; q = [0 x 512 | random rope].
Case uniform_case(const std::vector<int32_t>& qlens, const std::vector<int64_t>& kv_lens,
                  int32_t ps, int32_t heads, bool per_request_offset = false,
                  int32_t extra_pages = 0, bool shuffle = false, uint32_t seed = 1);

// Random data case (values in [-1, 1], bf16), NaN in unused slots.
Case random_case(const std::vector<int32_t>& qlens, const std::vector<int64_t>& kv_lens,
                 int32_t ps, int32_t heads, uint32_t seed, mla_dtype kv_dtype = MLA_DTYPE_BF16);

// Expected U(L) output value of a row that sees keys [0, n) of request b (mean), or 0.
double uniform_mean(int64_t n, int32_t b, bool per_request_offset);

struct Result {
    std::vector<float> out, lse;
};
// Direct reference [REQUIRE success].
Result direct(const Case& c);
// Plans with `p` (batch / heads / page / qlen / causal taken from the case) and executes the
// plan [REQUIRE success of both]; `plan_out` (optional) gets the plan.
Result executed(const Case& c, mla_metadata_params p, plantest::Plan* plan_out = nullptr);
mla_metadata_params params_of(const Case& c, const char* arch = "sm_90a");

// max |a - b| / max(1, |b|) over all elements; NaN anywhere or -inf mismatches -> +inf.
double max_rel_diff(const std::vector<float>& a, const std::vector<float>& b);

}  // namespace reftest
