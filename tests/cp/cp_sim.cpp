// cp_sim.cpp - see cp_sim.h.
#include "cp_sim.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "reference/dtype_convert.h"

namespace cptest {
namespace {

constexpr int kQk = 576, kV = 512;

size_t esize(mla_dtype d) { return mla_dtype_size(d); }

void fill_nan(mla_dtype d, std::vector<uint8_t>& buf) {
    if (d == MLA_DTYPE_BF16) {
        for (size_t i = 0; i + 1 < buf.size(); i += 2) {
            buf[i] = 0xC0;
            buf[i + 1] = 0x7F;
        }
    } else {
        std::fill(buf.begin(), buf.end(), uint8_t(0x7F));
    }
}

}  // namespace

int32_t local_len(int32_t g, int32_t world, int32_t rank) {
    return g > rank ? (g - rank + world - 1) / world : 0;
}

Batch make_batch(const std::vector<int32_t>& g_len, int32_t heads, int32_t qlen, mla_dtype kv_dtype,
                 uint32_t seed) {
    Batch b;
    b.heads = heads;
    b.qlen = qlen;
    b.kv_dtype = kv_dtype;
    b.kv_scale = kv_dtype == MLA_DTYPE_BF16 ? 1.0f : 0.5f;
    b.g_len = g_len;
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    const int64_t qn = int64_t(b.total_q()) * heads * kQk;
    b.q.resize(size_t(qn) * 2);
    for (int64_t i = 0; i < qn; ++i) mla::dt::store(MLA_DTYPE_BF16, b.q.data(), i, u(rng));
    for (int32_t g : g_len) {
        std::vector<uint8_t> rows(size_t(g) * kQk * esize(kv_dtype));
        for (int64_t i = 0; i < int64_t(g) * kQk; ++i)
            mla::dt::store(kv_dtype, rows.data(), i, u(rng) * (kv_dtype == MLA_DTYPE_BF16 ? 1 : 2));
        b.kv_rows.push_back(std::move(rows));
    }
    return b;
}

Shard make_shard(const Batch& b, int32_t world, int32_t rank, int32_t page_size, uint32_t seed) {
    Shard s;
    s.world = world;
    s.rank = rank;
    s.page_size = page_size;
    const int32_t B = b.batch();
    s.qo.assign(B + 1, 0);
    s.kv.assign(B + 1, 0);
    s.g_kv.assign(B + 1, 0);
    s.last.assign(B, 1);
    std::vector<int32_t> n(B);
    for (int32_t i = 0; i < B; ++i) {
        n[i] = local_len(b.g_len[i], world, rank);
        const int32_t pages = (n[i] + page_size - 1) / page_size;
        s.qo[i + 1] = s.qo[i] + b.qlen;
        s.kv[i + 1] = s.kv[i] + pages;
        s.g_kv[i + 1] = s.g_kv[i] + b.g_len[i];
        s.last[i] = pages ? n[i] - (pages - 1) * page_size : 1;
    }
    s.num_pages = s.kv[B] + 1;  // one spare page, never referenced
    s.idx.resize(s.kv[B]);
    std::vector<int32_t> perm(s.num_pages);
    std::iota(perm.begin(), perm.end(), 0);
    std::mt19937 rng(seed);
    std::shuffle(perm.begin(), perm.end(), rng);
    std::copy(perm.begin(), perm.begin() + s.kv[B], s.idx.begin());
    const size_t row_bytes = kQk * esize(b.kv_dtype);
    s.cache.resize(size_t(s.num_pages) * page_size * row_bytes);
    fill_nan(b.kv_dtype, s.cache);
    for (int32_t i = 0; i < B; ++i)
        for (int32_t j = 0; j < n[i]; ++j) {
            const int64_t p = int64_t(j) * world + rank;  // global position of local token j
            const int64_t page = s.idx[s.kv[i] + j / page_size];
            std::copy_n(b.kv_rows[i].data() + p * row_bytes, row_bytes,
                        s.cache.data() + (page * page_size + j % page_size) * row_bytes);
        }
    return s;
}

mla_host_problem Shard::problem(const Batch& b) const {
    mla_host_problem p = MLA_HOST_PROBLEM_INIT;
    p.batch_size = b.batch();
    p.num_heads = b.heads;
    p.max_seqlen_q = b.qlen;
    p.page_size = page_size;
    p.num_pages = num_pages;
    p.causal = 1;
    p.q_dtype = MLA_DTYPE_BF16;
    p.kv_dtype = b.kv_dtype;
    p.softmax_scale = b.scale;
    p.kv_scale = b.kv_scale;
    p.q = b.q.data();
    p.kv_cache = cache.data();
    p.qo_indptr = qo.data();
    p.kv_indptr = kv.data();
    p.kv_page_indices = idx.data();
    p.kv_last_page_lens = last.data();
    if (world > 1) {
        p.g_kv_indptr = g_kv.data();
        p.cp_world_size = world;
        p.cp_rank = rank;
    }
    return p;
}

Result reference(const Batch& b, const Shard& s) {
    Result r;
    r.out.assign(size_t(b.total_q()) * b.heads * kV, std::nanf(""));
    r.lse.assign(size_t(b.total_q()) * b.heads, std::nanf(""));
    const mla_host_problem p = s.problem(b);
    const mla_status st = mla_decode_reference(&p, r.out.data(), r.lse.data());
    INFO(mla_last_error());
    REQUIRE(st == MLA_SUCCESS);
    return r;
}

Result merge(const std::vector<Result>& parts, int32_t total_q, int32_t heads) {
    const size_t n_out = size_t(total_q) * heads * kV, n_lse = size_t(total_q) * heads;
    std::vector<float> po, pl;  // the all-gather: [W, total_q, H, 512], [W, total_q, H]
    for (const Result& r : parts) {
        REQUIRE(r.out.size() == n_out);
        po.insert(po.end(), r.out.begin(), r.out.end());
        pl.insert(pl.end(), r.lse.begin(), r.lse.end());
    }
    Result m;
    m.out.assign(n_out, std::nanf(""));
    m.lse.assign(n_lse, std::nanf(""));
    mla_merge_args a = MLA_MERGE_ARGS_INIT;
    a.world_size = int32_t(parts.size());
    a.total_q = total_q;
    a.num_heads = heads;
    a.partial_dtype = MLA_DTYPE_FP32;
    a.out_dtype = MLA_DTYPE_FP32;
    a.partial_out = po.data();
    a.partial_lse = pl.data();
    a.out = m.out.data();
    a.lse = m.lse.data();
    const mla_status st = mla_merge_attn_states_host(&a);
    INFO(mla_last_error());
    REQUIRE(st == MLA_SUCCESS);
    return m;
}

double max_diff(const std::vector<float>& a, const std::vector<float>& b) {
    if (a.size() != b.size()) return INFINITY;
    double worst = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        if (std::isnan(a[i]) || std::isnan(b[i])) return INFINITY;
        if (std::isinf(a[i]) || std::isinf(b[i])) {
            if (a[i] != b[i]) return INFINITY;
            continue;
        }
        worst = std::max(worst, std::fabs(double(a[i]) - b[i]) / (1.0 + std::fabs(double(b[i]))));
    }
    return worst;
}

}  // namespace cptest
