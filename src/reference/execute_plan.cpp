// execute_plan.cpp - mla_execute_plan_reference: runs a plan's work items exactly as
// docs/plan-layout.md says the kernels must (unsplit works write out / lse, split works write
// fp32 partial rows), then the reduce over reduce_indptr / reduce_final_map /
// reduce_partial_map. It also checks the plan: every field in range and every (row, head group)
// written exactly once, so a wrong plan is an error, not a silently wrong output.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "common/error.h"
#include "context/struct_io.h"
#include "planner/planner.h"
#include "reference/reference.h"

namespace mla::ref {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

struct Exec {
    explicit Exec(const Problem& problem) : pr(problem) {}
    const Problem& pr;
    int32_t r = 1, hk = 1;
    std::vector<float> part_o, part_lse;  // [rows][hk][512], [rows][hk]
    std::vector<int32_t> written;         // per (out row, group): writes
    std::map<int32_t, std::vector<float>> kv;  // decoded KV per request

    const std::vector<float>& kv_of(int32_t b) {
        auto it = kv.find(b);
        if (it == kv.end()) it = kv.emplace(b, decode_kv(pr, b)).first;
        return it->second;
    }
    // (b, g, t) of folded row f [INVALID_ARGUMENT when f names no query token].
    void unfold(int32_t f, int32_t* b, int32_t* g, int32_t* t) const {
        const mla_host_problem& p = pr.p;
        int32_t lo = 0, hi = p.batch_size - 1, best = -1;
        while (lo <= hi) {  // last b with qo_indptr[b] * r <= f
            const int32_t mid = (lo + hi) / 2;
            if (int64_t(p.qo_indptr[mid]) * r <= f) {
                best = mid;
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        MLA_CHECK_ARG(best >= 0, "folded row " << f << " is before the first query row");
        // Skip back over requests with no tokens that share the start.
        while (best > 0 && pr.qlen[best] == 0) --best;
        const int64_t off = f - int64_t(p.qo_indptr[best]) * r;
        MLA_CHECK_ARG(pr.qlen[best] > 0 && off < int64_t(pr.qlen[best]) * r,
                      "folded row " << f << " names no query token");
        *b = best;
        *g = int32_t(off / pr.qlen[best]);
        *t = int32_t(off % pr.qlen[best]);
    }
    void mark(int32_t b, int32_t t, int32_t g) {
        ++written[(int64_t(pr.p.qo_indptr[b]) + t) * r + g];
    }
};

}  // namespace

void execute_plan(const Problem& pr, const plan::Setup& s, const mla_metadata_buffers& pl,
                  float* out, float* lse) {
    const mla_host_problem& p = pr.p;
    Exec ex(pr);
    ex.r = s.cfg.ratio;
    ex.hk = s.cfg.kernel_heads;
    const int32_t r = ex.r, hk = ex.hk, B = p.batch_size, C = s.cfg.num_clusters;
    ex.written.assign(size_t(pr.total_q) * r, 0);
    MLA_CHECK_ARG(pl.work_indptr && pl.work_indptr_len >= C + 1, "plan work_indptr too short");
    const int32_t nw = pl.work_indptr[C];
    MLA_CHECK_ARG(pl.work_indptr[0] == 0 && nw >= 0 && nw <= pl.work_info_set_rows,
                  "plan work_indptr [0, " << nw << "] does not fit work_info_set");
    for (int32_t c = 0; c < C; ++c)
        MLA_CHECK_ARG(pl.work_indptr[c + 1] >= pl.work_indptr[c], "work_indptr decreases at " << c);
    // Partial rows needed.
    int64_t rows = 0;
    for (int32_t w = 0; w < nw; ++w) {
        const int32_t* wi = pl.work_info_set + int64_t(w) * 8;
        if (wi[1] >= 0) rows = std::max<int64_t>(rows, int64_t(wi[1]) + (wi[3] - wi[2]));
    }
    ex.part_o.assign(size_t(rows) * hk * kVDim, std::nanf(""));
    ex.part_lse.assign(size_t(rows) * hk, std::nanf(""));
    double o[kVDim], l;
    for (int32_t w = 0; w < nw; ++w) {
        const int32_t* wi = pl.work_info_set + int64_t(w) * 8;
        MLA_CHECK_ARG(wi[0] >= 0 && wi[0] < B * r, "work " << w << ": batch_idx " << wi[0]);
        const int32_t b = wi[0] / r, g = wi[0] % r;
        const int64_t base = int64_t(p.qo_indptr[b]) * r + int64_t(g) * pr.qlen[b];
        MLA_CHECK_ARG(wi[2] >= base && wi[2] < wi[3] && wi[3] <= base + pr.qlen[b],
                      "work " << w << ": qo rows [" << wi[2] << ", " << wi[3]
                              << ") outside pseudo-request " << wi[0]);
        const int32_t kv0 = p.kv_indptr[b], kv1 = p.kv_indptr[b + 1];
        MLA_CHECK_ARG(wi[4] >= kv0 && wi[4] <= wi[5] && wi[5] <= kv1,
                      "work " << w << ": kv pages [" << wi[4] << ", " << wi[5]
                              << ") outside request " << b << " [" << kv0 << ", " << kv1 << ")");
        const int64_t k0 = int64_t(wi[4] - kv0) * p.page_size;
        const int64_t k1 = int64_t(pr.kv_len[b]) - wi[6];
        MLA_CHECK_ARG(wi[6] >= 0 && k1 >= k0 && k1 <= int64_t(wi[5] - kv0) * p.page_size,
                      "work " << w << ": kv_offset " << wi[6] << " disagrees with its pages");
        const std::vector<float>& kv = ex.kv_of(b);
        const int32_t t0 = int32_t(wi[2] - base), t1 = int32_t(wi[3] - base);
        for (int32_t t = t0; t < t1; ++t) {
            if (wi[1] < 0) ex.mark(b, t, g);
            for (int32_t hh = 0; hh < hk; ++hh) {
                attend(pr, b, t, g * hk + hh, int32_t(k0), int32_t(k1), kv.data(), o, &l);
                if (wi[1] < 0) {
                    const int64_t row = int64_t(p.qo_indptr[b]) + t;
                    float* dst = out + (row * p.num_heads + g * hk + hh) * kVDim;
                    for (int d = 0; d < kVDim; ++d) dst[d] = float(o[d]);
                    if (lse) lse[row * p.num_heads + g * hk + hh] = float(l);
                } else {
                    const int64_t prow = int64_t(wi[1]) + (t - t0);
                    float* dst = &ex.part_o[(prow * hk + hh) * kVDim];
                    for (int d = 0; d < kVDim; ++d) dst[d] = float(o[d]);
                    ex.part_lse[prow * hk + hh] = float(l);
                }
            }
        }
    }
    // Reduce: lse* = m + log sum exp(lse_k - m) over finite lse_k; o = sum exp(lse_k - lse*) o_k.
    const int64_t ntiles = pl.reduce_indptr_len - 1;
    for (int64_t t = 0; t < ntiles; ++t) {
        const int32_t f0 = pl.reduce_indptr[t], f1 = pl.reduce_indptr[t + 1];
        if (f1 <= f0) continue;
        MLA_CHECK_ARG(f0 >= 0 && f1 <= pl.reduce_partial_map_len && t < pl.reduce_final_map_rows,
                      "reduce tile " << t << " entries out of range");
        const int32_t q0 = pl.reduce_final_map[2 * t], q1 = pl.reduce_final_map[2 * t + 1];
        for (int32_t f = q0; f < q1; ++f) {
            int32_t b, g, tok;
            ex.unfold(f, &b, &g, &tok);
            ex.mark(b, tok, g);
            const int64_t row = int64_t(p.qo_indptr[b]) + tok;
            for (int32_t hh = 0; hh < hk; ++hh) {
                double m = kNegInf;
                for (int32_t k = f0; k < f1; ++k) {
                    const int64_t prow = int64_t(pl.reduce_partial_map[k]) + (f - q0);
                    MLA_CHECK_ARG(prow >= 0 && prow < rows, "reduce tile " << t << ": partial row "
                                                                           << prow << " never written");
                    const double lk = ex.part_lse[prow * hk + hh];
                    MLA_CHECK_ARG(!std::isnan(lk), "reduce tile " << t << ": partial row " << prow
                                                                  << " never written");
                    m = std::max(m, lk);
                }
                double acc[kVDim] = {0};
                double ls = kNegInf;
                if (m > kNegInf) {
                    double sum = 0;
                    for (int32_t k = f0; k < f1; ++k) {
                        const int64_t prow = int64_t(pl.reduce_partial_map[k]) + (f - q0);
                        sum += std::exp(double(ex.part_lse[prow * hk + hh]) - m);
                    }
                    ls = m + std::log(sum);
                    for (int32_t k = f0; k < f1; ++k) {
                        const int64_t prow = int64_t(pl.reduce_partial_map[k]) + (f - q0);
                        const double lk = ex.part_lse[prow * hk + hh];
                        if (lk == kNegInf) continue;  // weight 0, never 0 * NaN
                        const double wgt = std::exp(lk - ls);
                        const float* ok = &ex.part_o[(prow * hk + hh) * kVDim];
                        for (int d = 0; d < kVDim; ++d) acc[d] += wgt * ok[d];
                    }
                }
                float* dst = out + (row * p.num_heads + g * hk + hh) * kVDim;
                for (int d = 0; d < kVDim; ++d) dst[d] = float(acc[d]);
                if (lse) lse[row * p.num_heads + g * hk + hh] = float(ls);
            }
        }
    }
    for (int32_t b = 0; b < B; ++b)
        for (int32_t t = 0; t < pr.qlen[b]; ++t)
            for (int32_t g = 0; g < r; ++g) {
                const int32_t n = ex.written[(int64_t(p.qo_indptr[b]) + t) * r + g];
                MLA_CHECK_ARG(n == 1, "the plan writes query token " << t << " of request " << b
                                                                     << ", head group " << g << " "
                                                                     << n << " times");
            }
}

}  // namespace mla::ref

using namespace mla;

extern "C" MLA_API mla_status mla_execute_plan_reference(const mla_host_problem* problem,
                                                         const mla_metadata_params* params,
                                                         const mla_metadata_buffers* plan,
                                                         float* out, float* lse) {
    return guard([&] {
        const ref::Problem pr = ref::check_problem(problem);
        const plan::Setup s = plan::resolve_public(params);
        const mla_host_problem& p = pr.p;
        MLA_CHECK_ARG(s.params.batch_size == p.batch_size && s.params.num_heads == p.num_heads &&
                          s.params.page_size == p.page_size &&
                          s.params.max_seqlen_qo >= p.max_seqlen_q &&
                          (s.params.causal != 0) == (p.causal != 0),
                      "the plan's params (batch " << s.params.batch_size << ", heads "
                                                  << s.params.num_heads << ", page "
                                                  << s.params.page_size << ", causal " << s.params.causal
                                                  << ") do not match the problem (batch " << p.batch_size
                                                  << ", heads " << p.num_heads << ", page "
                                                  << p.page_size << ")");
        // Round-robin CP masks on global positions, so a plan with the local causal trim (page
        // size 1, is_cp_round_robin 0) may drop keys a row sees (§7).
        MLA_CHECK_ARG(p.cp_world_size == 1 || s.params.is_cp_round_robin,
                      "the problem is round-robin context parallel (cp_world_size "
                          << p.cp_world_size << ") but the plan was made with is_cp_round_robin 0");
        const mla_metadata_buffers b = plan::check_buffers(s, plan);
        MLA_CHECK_ARG(out != nullptr || pr.total_q == 0, "out is NULL");
        ref::execute_plan(pr, s, b, out, lse);
    });
}
