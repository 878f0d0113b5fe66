// reference.h - internals of the CPU reference (src/reference/*): the validated host problem
// and the attention of one query row over a key range, in float64.
#pragma once
#include <cstdint>
#include <vector>

#include "mla_c_api.h"

namespace mla::ref {

constexpr int kQkDim = 576;  // 512 latent + 64 rope
constexpr int kVDim = 512;

// A validated mla_host_problem with resolved strides and per-request lengths.
struct Problem {
    mla_host_problem p{};
    int64_t q_stride_token = 0, q_stride_head = 0;
    int32_t total_q = 0;               // qo_indptr[B] (rows of out / lse)
    std::vector<int32_t> kv_len;       // N_b tokens
    std::vector<int32_t> qlen;         // L_b
    std::vector<int32_t> g_kv_len;     // global lengths (round-robin CP), else = kv_len
};

// Validates a problem [INVALID_ARGUMENT: null pointers, bad sizes, unsupported dtype, decreasing
// indptrs, last page length out of range, page ids outside [0, num_pages) in the used range;
// round-robin CP (cp_world_size > 1, §7): g_kv_indptr NULL or decreasing, cp_rank outside
// [0, W), causal 0, a local KV length other than ceil((G_b - rank) / W) (0 when G_b <= rank)].
Problem check_problem(const mla_host_problem* in);

// Attention of query row (request b, token t, head h) over request tokens [k0, k1) that the row
// may see (causal MTP / round-robin CP mask applied here). Returns the number of visible keys;
// o[512] and *lse get the normalised output and natural-log LSE (0 and -inf when none).
// kv: the request's KV rows decoded to float (decode_kv).
int attend(const Problem& pr, int32_t b, int32_t t, int32_t h, int32_t k0, int32_t k1,
           const float* kv, double* o, double* lse);

// The N_b KV rows of request b, decoded to float ([N_b][576]); unused page slots are not read.
std::vector<float> decode_kv(const Problem& pr, int32_t b);

}  // namespace mla::ref
