// merge.h - internal interface of the context-parallel LSE merge (src/cp/*): validation of
// mla_merge_args (merge_check.cpp), the float64 host merge (merge_host.cpp) and the sm_90a launch
// (merge_launch.cpp). Contract: mla_c_api.h, CONTEXT PARALLEL section; docs/context-parallel.md.
#pragma once
#include <cstdint>

#include "../../codeobjects/sm_90a/merge/merge_params.h"
#include "mla_c_api.h"

namespace mla::cp {

constexpr int kVDim = 512;

// A validated merge call.
struct Merge {
    mla_merge_args a{};       // with defaults applied (read_struct)
    int64_t units = 0;        // total_q * num_heads: (row, head) pairs
    int64_t out_stride = 0;   // elements between ranks' partial_out blocks (0 resolved to units * 512)
    int64_t lse_stride = 0;   // floats between ranks' partial_lse blocks (0 resolved to units)
};

// Validates a caller's args [INVALID_ARGUMENT naming the field: null struct or pointer, bad
// counts, rank strides or dtypes, overlapping outputs; device = true adds the kernel's rules:
// out_dtype bf16 is left to the table (NO_KERNEL), 16-byte alignment of partial_out, its rank
// stride and out, 4-byte of the LSE arrays, total_q * H <= 2^31 - 1]. Touches no buffer.
Merge check_merge(const mla_merge_args* args, bool device);

// lse* and the weights of one (row, head) from its W partial LSEs (stride apart), float64:
// returns lse* (-inf when no lse_k is finite); w[k] = exp(lse_k - lse*), 0 for a non-finite lse_k.
double merge_weights(const float* lse, int64_t stride, int32_t W, double* w);

// The host merge on a validated call (mla_merge_attn_states_host).
void merge_host(const Merge& m);

// Kernel params of a validated device call.
mla_merge_params merge_params(const Merge& m);

}  // namespace mla::cp
