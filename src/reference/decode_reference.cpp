// decode_reference.cpp - mla_decode_reference: the direct float64 reference of MLA decode over a
// paged KV cache (every query row over every key it may see; no plan, no split).
#include <cmath>

#include "common/error.h"
#include "reference/reference.h"

using namespace mla;

extern "C" MLA_API mla_status mla_decode_reference(const mla_host_problem* problem, float* out,
                                                   float* lse) {
    return guard([&] {
        const ref::Problem pr = ref::check_problem(problem);
        const mla_host_problem& p = pr.p;
        MLA_CHECK_ARG(out != nullptr || pr.total_q == 0, "out is NULL");
        double o[ref::kVDim], l;
        for (int32_t b = 0; b < p.batch_size; ++b) {
            const std::vector<float> kv = ref::decode_kv(pr, b);
            for (int32_t t = 0; t < pr.qlen[b]; ++t)
                for (int32_t h = 0; h < p.num_heads; ++h) {
                    ref::attend(pr, b, t, h, 0, pr.kv_len[b], kv.data(), o, &l);
                    const int64_t row = int64_t(p.qo_indptr[b]) + t;
                    float* dst = out + (row * p.num_heads + h) * ref::kVDim;
                    for (int d = 0; d < ref::kVDim; ++d) dst[d] = float(o[d]);
                    if (lse) lse[row * p.num_heads + h] = float(l);
                }
        }
    });
}
