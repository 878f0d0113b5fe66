// problem.cpp - validation of the CPU reference's host problem and the float64 attention of one
// query row (shared by mla_decode_reference and mla_execute_plan_reference).
#include <algorithm>
#include <cmath>
#include <limits>

#include "common/error.h"
#include "context/struct_io.h"
#include "reference/dtype_convert.h"
#include "reference/reference.h"

namespace mla::ref {
namespace {

bool ref_dtype(mla_dtype d) {
    return d == MLA_DTYPE_BF16 || d == MLA_DTYPE_FP16 || d == MLA_DTYPE_FP8_E4M3FN ||
           d == MLA_DTYPE_FP8_E4M3FNUZ;
}

}  // namespace

Problem check_problem(const mla_host_problem* in) {
    const mla_host_problem defaults = MLA_HOST_PROBLEM_INIT;
    Problem pr;
    pr.p = read_struct(in, defaults, "problem");
    const mla_host_problem& p = pr.p;
    const int B = p.batch_size;
    MLA_CHECK_ARG(B >= 0, "batch_size is negative (" << B << ")");
    MLA_CHECK_ARG(p.num_heads >= 1, "num_heads must be >= 1 (got " << p.num_heads << ")");
    MLA_CHECK_ARG(p.max_seqlen_q >= 1, "max_seqlen_q must be >= 1 (got " << p.max_seqlen_q << ")");
    MLA_CHECK_ARG(p.page_size >= 1 && (p.page_size & (p.page_size - 1)) == 0,
                  "page_size must be a power of two (got " << p.page_size << ")");
    MLA_CHECK_ARG(p.num_pages >= 0, "num_pages is negative");
    MLA_CHECK_ARG(ref_dtype(p.q_dtype), "q_dtype " << int(p.q_dtype)
                                                   << " is not bf16, fp16, fp8 or fp8_fnuz");
    MLA_CHECK_ARG(ref_dtype(p.kv_dtype), "kv_dtype " << int(p.kv_dtype)
                                                     << " is not bf16, fp16, fp8 or fp8_fnuz");
    MLA_CHECK_ARG(std::isfinite(p.softmax_scale) && std::isfinite(p.q_scale) &&
                      std::isfinite(p.kv_scale),
                  "softmax_scale, q_scale and kv_scale must be finite");
    MLA_CHECK_ARG(p.qo_indptr && p.kv_indptr, "qo_indptr / kv_indptr is NULL");
    MLA_CHECK_ARG(B == 0 || p.kv_last_page_lens, "kv_last_page_lens is NULL");
    MLA_CHECK_ARG(p.cp_world_size >= 1, "cp_world_size must be >= 1");
    if (p.cp_world_size > 1) {  // round-robin CP (§7): causal only, rank in [0, W)
        MLA_CHECK_ARG(p.g_kv_indptr, "round-robin CP (cp_world_size " << p.cp_world_size
                                                                     << ") needs g_kv_indptr");
        MLA_CHECK_ARG(p.cp_rank >= 0 && p.cp_rank < p.cp_world_size,
                      "cp_rank " << p.cp_rank << " is outside [0, cp_world_size = "
                                 << p.cp_world_size << ")");
        MLA_CHECK_ARG(p.causal, "round-robin CP is causal only (aiter §7): causal must be 1");
        MLA_CHECK_ARG(p.g_kv_indptr[0] >= 0, "g_kv_indptr[0] is negative");
    }
    pr.q_stride_head = p.q_stride_head ? p.q_stride_head : kQkDim;
    pr.q_stride_token = p.q_stride_token ? p.q_stride_token : int64_t(p.num_heads) * kQkDim;
    MLA_CHECK_ARG(pr.q_stride_head >= kQkDim &&
                      pr.q_stride_token >= (p.num_heads - 1) * pr.q_stride_head + kQkDim,
                  "q strides overlap (token " << pr.q_stride_token << ", head "
                                              << pr.q_stride_head << ")");
    MLA_CHECK_ARG(p.qo_indptr[0] >= 0 && p.kv_indptr[0] >= 0, "indptr[0] is negative");
    pr.kv_len.resize(B);
    pr.qlen.resize(B);
    pr.g_kv_len.resize(B);
    for (int b = 0; b < B; ++b) {
        const int64_t L = int64_t(p.qo_indptr[b + 1]) - p.qo_indptr[b];
        const int64_t P = int64_t(p.kv_indptr[b + 1]) - p.kv_indptr[b];
        MLA_CHECK_ARG(L >= 0 && L <= p.max_seqlen_q,
                      "request " << b << " has " << L << " query tokens (0.." << p.max_seqlen_q
                                 << " allowed)");
        MLA_CHECK_ARG(P >= 0, "kv_indptr decreases at request " << b);
        int64_t N = 0;
        if (P > 0) {
            const int32_t last = p.kv_last_page_lens[b];
            MLA_CHECK_ARG(last >= 1 && last <= p.page_size,
                          "kv_last_page_lens[" << b << "] = " << last << " is outside 1.."
                                               << p.page_size);
            N = (P - 1) * p.page_size + last;
            MLA_CHECK_ARG(N < (int64_t(1) << 31), "request " << b << " KV length overflows");
            MLA_CHECK_ARG(p.kv_page_indices && p.kv_cache, "kv_page_indices / kv_cache is NULL");
            for (int64_t i = p.kv_indptr[b]; i < p.kv_indptr[b + 1]; ++i) {
                const int32_t page = p.kv_page_indices[i];
                MLA_CHECK_ARG(page >= 0 && page < p.num_pages,
                              "kv_page_indices[" << i << "] = " << page << " (request " << b
                                                 << ") is outside 0.." << p.num_pages - 1);
            }
        }
        pr.qlen[b] = int32_t(L);
        pr.kv_len[b] = int32_t(N);
        pr.g_kv_len[b] = int32_t(N);
        if (p.cp_world_size > 1) {
            // Rank r holds global positions r, r + W, ...: ceil((G - r) / W) of them (0 if G <= r).
            const int64_t G = int64_t(p.g_kv_indptr[b + 1]) - p.g_kv_indptr[b];
            MLA_CHECK_ARG(G >= 0 && G < (int64_t(1) << 31),
                          "g_kv_indptr decreases or overflows at request " << b);
            const int64_t W = p.cp_world_size, r = p.cp_rank;
            const int64_t local = G > r ? (G - r + W - 1) / W : 0;
            MLA_CHECK_ARG(N == local, "request " << b << ": the local page table holds " << N
                                                 << " tokens, but rank " << r << " of " << W
                                                 << " holds " << local << " of its " << G
                                                 << " global tokens (g_kv_indptr)");
            pr.g_kv_len[b] = int32_t(G);
        }
    }
    pr.total_q = p.qo_indptr[B];
    MLA_CHECK_ARG(pr.total_q == 0 || p.q, "q is NULL");
    return pr;
}

std::vector<float> decode_kv(const Problem& pr, int32_t b) {
    const mla_host_problem& p = pr.p;
    const int32_t N = pr.kv_len[b];
    std::vector<float> kv(size_t(N) * kQkDim);
    for (int64_t j = 0; j < N; ++j) {
        const int64_t page = p.kv_page_indices[p.kv_indptr[b] + j / p.page_size];
        const int64_t kvrow = page * p.page_size + j % p.page_size;
        for (int d = 0; d < kQkDim; ++d)
            kv[size_t(j) * kQkDim + d] = dt::load(p.kv_dtype, p.kv_cache, kvrow * kQkDim + d);
    }
    return kv;
}

int attend(const Problem& pr, int32_t b, int32_t t, int32_t h, int32_t k0, int32_t k1,
           const float* kv, double* o, double* lse) {
    const mla_host_problem& p = pr.p;
    const int32_t N = pr.kv_len[b], L = pr.qlen[b], G = pr.g_kv_len[b];
    const int W = p.cp_world_size, rank = p.cp_rank;
    // Visible request tokens j: global position gj = j (or j * W + rank under round-robin CP);
    // causal: gj <= G - L + t; else gj < G.
    const int64_t limit = p.causal ? int64_t(G) - L + t : int64_t(G) - 1;
    auto visible = [&](int64_t j) { return (W > 1 ? j * W + rank : j) <= limit; };
    const int64_t row = int64_t(p.qo_indptr[b]) + t;
    double q[kQkDim];
    for (int d = 0; d < kQkDim; ++d)
        q[d] = dt::load(p.q_dtype, p.q, row * pr.q_stride_token + h * pr.q_stride_head + d);
    const double scale = double(p.softmax_scale) * p.q_scale * p.kv_scale;
    std::vector<double> s;
    std::vector<int64_t> keys;
    k1 = std::min(k1, N);
    for (int64_t j = std::max(k0, 0); j < k1; ++j) {
        if (!visible(j)) continue;
        const float* k = kv + j * kQkDim;
        double acc = 0;
        for (int d = 0; d < kQkDim; ++d) acc += q[d] * k[d];
        s.push_back(acc * scale);
        keys.push_back(j);
    }
    for (int d = 0; d < kVDim; ++d) o[d] = 0;
    if (s.empty()) {
        *lse = -std::numeric_limits<double>::infinity();
        return 0;
    }
    double m = s[0];
    for (double v : s) m = std::max(m, v);
    double l = 0;
    for (size_t i = 0; i < s.size(); ++i) {
        const double e = std::exp(s[i] - m);
        l += e;
        // fp8 Q kernels quantise the unnormalised probabilities before P.V (§1).
        const double pw = p.fp8_p_quant ? dt::round_to(MLA_DTYPE_FP8_E4M3FN, float(e)) : e;
        const float* v = kv + keys[i] * kQkDim;
        for (int d = 0; d < kVDim; ++d) o[d] += pw * v[d];
    }
    for (int d = 0; d < kVDim; ++d) o[d] = o[d] / l * p.kv_scale;
    *lse = m + std::log(l);
    return int(s.size());
}

}  // namespace mla::ref
