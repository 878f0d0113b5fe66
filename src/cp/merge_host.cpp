// merge_host.cpp - mla_merge_attn_states_host: the float64 CPU merge of W partial (O, LSE)
// pairs (mla_c_api.h, CONTEXT PARALLEL section), the reference of the sm_90a merge kernel.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "common/error.h"
#include "cp/merge.h"
#include "reference/dtype_convert.h"

namespace mla::cp {

double merge_weights(const float* lse, int64_t stride, int32_t W, double* w) {
    constexpr double kNegInf = -std::numeric_limits<double>::infinity();
    double m = kNegInf;
    for (int32_t k = 0; k < W; ++k) {
        const double x = lse[k * stride];
        if (std::isfinite(x)) m = std::max(m, x);
    }
    if (m == kNegInf) {
        for (int32_t k = 0; k < W; ++k) w[k] = 0;
        return kNegInf;
    }
    double sum = 0;
    for (int32_t k = 0; k < W; ++k) {
        const double x = lse[k * stride];
        if (std::isfinite(x)) sum += std::exp(x - m);
    }
    const double ls = m + std::log(sum);  // sum >= 1: the max term is exp(0)
    for (int32_t k = 0; k < W; ++k) {
        const double x = lse[k * stride];
        w[k] = std::isfinite(x) ? std::exp(x - ls) : 0.0;
    }
    return ls;
}

void merge_host(const Merge& m) {
    const mla_merge_args& a = m.a;
    const int32_t W = a.world_size;
    std::vector<double> w(static_cast<size_t>(W)), acc(kVDim);
    for (int64_t u = 0; u < m.units; ++u) {
        const double ls = merge_weights(a.partial_lse + u, m.lse_stride, W, w.data());
        for (double& v : acc) v = 0;
        for (int32_t k = 0; k < W; ++k) {
            if (w[k] == 0) continue;  // non-finite lse_k (or an underflowing weight): o_k unread
            const int64_t base = k * m.out_stride + u * kVDim;
            for (int d = 0; d < kVDim; ++d)
                acc[d] += w[k] * dt::load(a.partial_dtype, a.partial_out, base + d);
        }
        for (int d = 0; d < kVDim; ++d) dt::store(a.out_dtype, a.out, u * kVDim + d, float(acc[d]));
        if (a.lse) a.lse[u] = float(ls);
    }
}

}  // namespace mla::cp

extern "C" MLA_API mla_status mla_merge_attn_states_host(const mla_merge_args* args) {
    return mla::guard([&] {
        const mla::cp::Merge m = mla::cp::check_merge(args, false);
        mla::cp::merge_host(m);
    });
}
