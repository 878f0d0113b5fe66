// ref_helpers.cpp - see ref_helpers.h.
#include "ref_helpers.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <catch2/catch.hpp>

#include "reference/dtype_convert.h"

namespace reftest {
namespace {

size_t esize(mla_dtype d) { return mla_dtype_size(d); }

void layout(Case& c, int32_t extra_pages, bool shuffle, std::mt19937& rng) {
    const int32_t B = int32_t(c.qlens.size());
    c.qo.assign(1, 0);
    c.kv.assign(1, 0);
    c.last.clear();
    int32_t pages = 0;
    for (int32_t b = 0; b < B; ++b) {
        const int32_t n = int32_t((c.kv_lens[b] + c.page_size - 1) / c.page_size);
        c.qo.push_back(c.qo.back() + c.qlens[b]);
        c.kv.push_back(c.kv.back() + n);
        c.last.push_back(n ? int32_t(c.kv_lens[b] - int64_t(n - 1) * c.page_size) : c.page_size);
        pages += n;
    }
    c.num_pages = pages + extra_pages;
    std::vector<int32_t> phys(c.num_pages);
    for (int32_t i = 0; i < c.num_pages; ++i) phys[i] = i;
    if (shuffle) std::shuffle(phys.begin(), phys.end(), rng);
    c.idx.assign(phys.begin(), phys.begin() + pages);
    // Every slot NaN first.
    const size_t kvn = size_t(c.num_pages) * c.page_size * 576;
    c.cache.assign(kvn * esize(c.kv_dtype), 0);
    for (size_t i = 0; i < kvn; ++i) mla::dt::store(c.kv_dtype, c.cache.data(), int64_t(i), NAN);
    c.q.assign(size_t(c.total_q()) * c.heads * 576 * esize(c.q_dtype), 0);
}

int64_t slot_of(const Case& c, int32_t b, int64_t j) {
    return int64_t(c.idx[c.kv[b] + j / c.page_size]) * c.page_size + j % c.page_size;
}

}  // namespace

mla_host_problem Case::problem() const {
    mla_host_problem p = MLA_HOST_PROBLEM_INIT;
    p.batch_size = int32_t(qlens.size());
    p.num_heads = heads;
    p.max_seqlen_q = max_q;
    p.page_size = page_size;
    p.num_pages = num_pages;
    p.causal = causal;
    p.q_dtype = q_dtype;
    p.kv_dtype = kv_dtype;
    p.softmax_scale = scale;
    p.q_scale = q_scale;
    p.kv_scale = kv_scale;
    p.q = q.data();
    p.kv_cache = cache.empty() ? nullptr : cache.data();
    p.qo_indptr = qo.data();
    p.kv_indptr = kv.data();
    p.kv_page_indices = idx.data();
    p.kv_last_page_lens = last.data();
    p.fp8_p_quant = fp8_p_quant;
    return p;
}

plantest::Batch Case::batch() const {
    plantest::Batch b;
    b.qo = qo;
    b.kv = kv;
    b.last = last;
    return b;
}

double uniform_mean(int64_t n, int32_t b, bool off) {
    if (n <= 0) return 0.0;
    double s = 0;
    for (int64_t j = 0; j < n; ++j) s += double(j % 16) + 1;
    return s / double(n) + (off ? 16.0 * b : 0.0);
}

Case uniform_case(const std::vector<int32_t>& qlens, const std::vector<int64_t>& kv_lens,
                  int32_t ps, int32_t heads, bool off, int32_t extra_pages, bool shuffle,
                  uint32_t seed) {
    Case c;
    c.qlens = qlens;
    c.kv_lens = kv_lens;
    c.page_size = ps;
    c.heads = heads;
    c.max_q = std::max(1, *std::max_element(qlens.begin(), qlens.end()));
    std::mt19937 rng(seed);
    layout(c, extra_pages, shuffle, rng);
    for (int32_t b = 0; b < int32_t(qlens.size()); ++b)
        for (int64_t j = 0; j < kv_lens[b]; ++j) {
            const int64_t row = slot_of(c, b, j) * 576;
            const float v = float(j % 16 + 1) + (off ? 16.0f * b : 0.0f);
            for (int d = 0; d < 512; ++d) mla::dt::store(c.kv_dtype, c.cache.data(), row + d, v);
            for (int d = 512; d < 576; ++d) mla::dt::store(c.kv_dtype, c.cache.data(), row + d, 0);
        }
    std::uniform_real_distribution<float> u(-2, 2);
    for (int64_t r = 0; r < int64_t(c.total_q()) * heads; ++r)
        for (int d = 512; d < 576; ++d) mla::dt::store(c.q_dtype, c.q.data(), r * 576 + d, u(rng));
    return c;
}

Case random_case(const std::vector<int32_t>& qlens, const std::vector<int64_t>& kv_lens,
                 int32_t ps, int32_t heads, uint32_t seed, mla_dtype kv_dtype) {
    Case c;
    c.qlens = qlens;
    c.kv_lens = kv_lens;
    c.page_size = ps;
    c.heads = heads;
    c.kv_dtype = kv_dtype;
    c.max_q = std::max(1, *std::max_element(qlens.begin(), qlens.end()));
    std::mt19937 rng(seed);
    layout(c, 1, true, rng);
    std::uniform_real_distribution<float> u(-1, 1);
    for (int32_t b = 0; b < int32_t(qlens.size()); ++b)
        for (int64_t j = 0; j < kv_lens[b]; ++j) {
            const int64_t row = slot_of(c, b, j) * 576;
            for (int d = 0; d < 576; ++d) mla::dt::store(c.kv_dtype, c.cache.data(), row + d, u(rng));
        }
    for (int64_t i = 0; i < int64_t(c.total_q()) * heads * 576; ++i)
        mla::dt::store(c.q_dtype, c.q.data(), i, u(rng));
    c.scale = 0.3f;
    return c;
}

Result direct(const Case& c) {
    Result r;
    r.out.assign(size_t(c.total_q()) * c.heads * 512, -99.0f);
    r.lse.assign(size_t(c.total_q()) * c.heads, -99.0f);
    const mla_host_problem p = c.problem();
    const mla_status st = mla_decode_reference(&p, r.out.data(), r.lse.data());
    INFO(mla_last_error());
    REQUIRE(st == MLA_SUCCESS);
    return r;
}

mla_metadata_params params_of(const Case& c, const char* arch) {
    mla_metadata_params p = MLA_METADATA_PARAMS_INIT;
    p.arch = arch;
    p.batch_size = int32_t(c.qlens.size());
    p.max_seqlen_qo = c.max_q;
    p.num_heads = c.heads;
    p.page_size = c.page_size;
    p.causal = c.causal;
    p.q_dtype = c.q_dtype;
    p.kv_dtype = c.kv_dtype;
    return p;
}

Result executed(const Case& c, mla_metadata_params p, plantest::Plan* plan_out) {
    plantest::Plan plan = plantest::alloc_plan(p);
    const plantest::Batch b = c.batch();
    mla_status st = plantest::run_plan(p, b, plan);
    INFO(mla_last_error());
    REQUIRE(st == MLA_SUCCESS);
    REQUIRE(plantest::check_invariants(p, b, plan, p.fast_mode != 0) == "");
    Result r;
    r.out.assign(size_t(c.total_q()) * c.heads * 512, -99.0f);
    r.lse.assign(size_t(c.total_q()) * c.heads, -99.0f);
    const mla_host_problem hp = c.problem();
    mla_metadata_buffers m = plan.buffers();
    st = mla_execute_plan_reference(&hp, &p, &m, r.out.data(), r.lse.data());
    INFO(mla_last_error());
    REQUIRE(st == MLA_SUCCESS);
    if (plan_out) *plan_out = plan;
    return r;
}

double max_rel_diff(const std::vector<float>& a, const std::vector<float>& b) {
    if (a.size() != b.size()) return INFINITY;
    double m = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        if (std::isnan(a[i]) || std::isnan(b[i])) return INFINITY;
        if (std::isinf(a[i]) || std::isinf(b[i])) {
            if (a[i] != b[i]) return INFINITY;
            continue;
        }
        m = std::max(m, std::fabs(double(a[i]) - b[i]) / std::max(1.0, std::fabs(double(b[i]))));
    }
    return m;
}

}  // namespace reftest
