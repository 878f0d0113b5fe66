// test_cp_reference.cpp - round-robin context parallelism on the CPU (§7): W in {2, 3, 4} ranks
// simulated in one process. Each rank's reference decode of its shard, merged with
// mla_merge_attn_states_host, equals the single-rank reference of the whole KV (fp32 rounding);
// each rank's plan (is_cp_round_robin = 1) executes to that rank's direct reference; the cprr
// plan has no local causal trim; rows that see no local key give exactly out 0 / LSE -inf; bad
// CP input is an error with a message and writes nothing.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "cp_sim.h"
#include "mla_c_api.h"
#include "reference/dtype_convert.h"

using namespace cptest;

namespace {

constexpr int kV = 512;
constexpr double kTol = 1e-6;  // fp32 rounding (measured <= 1e-7)

struct Plan {
    mla_metadata_sizes sz{};
    std::vector<uint64_t> wm;
    std::vector<int32_t> wi, wis, ri, rfm, rpm;
    mla_metadata_buffers buf{};
    mla_plan_summary summary{};
};

mla_metadata_params params_of(const Batch& b, const Shard& s, int cprr, int clusters) {
    mla_metadata_params mp = MLA_METADATA_PARAMS_INIT;
    mp.arch = "sm_90a";
    mp.num_clusters = clusters;
    mp.batch_size = b.batch();
    mp.max_seqlen_qo = b.qlen;
    mp.num_heads = b.heads;
    mp.kv_dtype = b.kv_dtype;
    mp.page_size = s.page_size;
    mp.causal = 1;
    mp.is_cp_round_robin = cprr;
    return mp;
}

void make_plan(const mla_metadata_params& mp, const Shard& s, Plan* pl) {
    pl->sz.struct_size = sizeof pl->sz;
    REQUIRE(mla_metadata_info(&mp, &pl->sz) == MLA_SUCCESS);
    pl->wm.assign(size_t(pl->sz.work_metadata_len), 0);
    pl->wi.assign(size_t(pl->sz.work_indptr_len), -7);
    pl->wis.assign(size_t(pl->sz.work_info_set_rows) * 8, -7);
    pl->ri.assign(size_t(pl->sz.reduce_indptr_len), -7);
    pl->rfm.assign(size_t(pl->sz.reduce_final_map_rows) * 2, -7);
    pl->rpm.assign(size_t(std::max<int64_t>(1, pl->sz.reduce_partial_map_len)), -7);
    mla_metadata_buffers& bf = pl->buf;
    bf.struct_size = sizeof bf;
    bf.work_metadata = pl->wm.data();
    bf.work_metadata_len = pl->sz.work_metadata_len;
    bf.work_indptr = pl->wi.data();
    bf.work_indptr_len = pl->sz.work_indptr_len;
    bf.work_info_set = pl->wis.data();
    bf.work_info_set_rows = pl->sz.work_info_set_rows;
    bf.reduce_indptr = pl->ri.data();
    bf.reduce_indptr_len = pl->sz.reduce_indptr_len;
    bf.reduce_final_map = pl->rfm.data();
    bf.reduce_final_map_rows = pl->sz.reduce_final_map_rows;
    bf.reduce_partial_map = pl->rpm.data();
    bf.reduce_partial_map_len = pl->sz.reduce_partial_map_len;
    pl->summary.struct_size = sizeof pl->summary;
    const mla_status st = mla_plan_metadata(&mp, s.qo.data(), s.kv.data(), s.last.data(), &bf,
                                            nullptr, nullptr, &pl->summary);
    INFO(mla_last_error());
    REQUIRE(st == MLA_SUCCESS);
}

Result executed(const Batch& b, const Shard& s, const mla_metadata_params& mp,
                int32_t* split_tiles = nullptr) {
    Plan pl;
    make_plan(mp, s, &pl);
    if (split_tiles) *split_tiles = pl.summary.num_split_tiles;
    Result r;
    r.out.assign(size_t(b.total_q()) * b.heads * kV, std::nanf(""));
    r.lse.assign(size_t(b.total_q()) * b.heads, std::nanf(""));
    const mla_host_problem p = s.problem(b);
    const mla_status st = mla_execute_plan_reference(&p, &mp, &pl.buf, r.out.data(), r.lse.data());
    INFO(mla_last_error());
    REQUIRE(st == MLA_SUCCESS);
    return r;
}

// Global lengths: 0, 1, 2, 3, 4 hold W - 1 and W for every W in {2, 3, 4}; 4097 splits.
const std::vector<int32_t> kLens = {0, 1, 2, 3, 4, 4097};

int page_size_for(int W) { return W == 2 ? 1 : W == 3 ? 16 : 64; }

// Shards the batch over W ranks, decodes each with the reference (and, if `plans`, executes the
// rank's cprr plan), merges, compares with the whole-KV reference `whole`.
void check_world(const Batch& b, const Result& whole, int W, bool plans) {
    std::vector<Result> parts;
    for (int r = 0; r < W; ++r) {
        const Shard s = make_shard(b, W, r, page_size_for(W), 100 + r);
        parts.push_back(reference(b, s));
        if (plans) {
            INFO("rank " << r << " of " << W << ": the cprr plan vs the rank's direct reference");
            int32_t split_tiles = 0;
            const Result e = executed(b, s, params_of(b, s, 1, 8), &split_tiles);
            CHECK(split_tiles > 0);  // the long request splits: partials and the reduce run
            CHECK(max_diff(e.out, parts.back().out) <= kTol);
            CHECK(max_diff(e.lse, parts.back().lse) <= kTol);
        }
    }
    const Result m = merge(parts, b.total_q(), b.heads);
    INFO("W " << W << ", heads " << b.heads << ", qlen " << b.qlen << ", kv "
              << mla_dtype_string(b.kv_dtype));
    CHECK(max_diff(m.out, whole.out) <= kTol);
    CHECK(max_diff(m.lse, whole.lse) <= kTol);
    // Rows of the empty request (G = 0) and rows before every key: exactly 0 and -inf.
    for (int t = 0; t < b.qlen; ++t)
        for (int h = 0; h < b.heads; ++h) {
            const size_t u = size_t(t) * b.heads + h;  // request 0 has G = 0
            CHECK(std::isinf(m.lse[u]));
            CHECK(m.lse[u] < 0);
            for (int d = 0; d < kV; d += 97) CHECK(m.out[u * kV + d] == 0.0f);
        }
}

}  // namespace

TEST_CASE("round-robin shards merged equal the single-rank reference at 16 heads", "[cp]") {
    for (mla_dtype kvd : {MLA_DTYPE_BF16, MLA_DTYPE_FP8_E4M3FN})
        for (int L = 1; L <= 4; ++L) {
            const Batch b = make_batch(kLens, 16, L, kvd, 1000 + L);
            const Result whole = reference(b, make_shard(b, 1, 0, 16, 7));
            for (int W = 2; W <= 4; ++W) check_world(b, whole, W, kvd == MLA_DTYPE_BF16);
        }
}

TEST_CASE("round-robin shards merged equal the single-rank reference at 128 heads", "[cp]") {
    // 128 heads fold into 2 x 64 on sm_90a: the plans run folded pseudo-requests, one token per
    // tile, which is where a local causal trim would drop keys at page size 1 (W = 2).
    {
        const Batch b = make_batch(kLens, 128, 4, MLA_DTYPE_BF16, 77);
        const Result whole = reference(b, make_shard(b, 1, 0, 16, 7));
        check_world(b, whole, 2, true);
        check_world(b, whole, 3, false);
    }
    {
        const Batch b = make_batch(kLens, 128, 2, MLA_DTYPE_FP8_E4M3FN, 78);
        const Result whole = reference(b, make_shard(b, 1, 0, 16, 7));
        check_world(b, whole, 4, false);
        check_world(b, whole, 2, true);
    }
}

TEST_CASE("rows that see no local key give out 0 and LSE -inf exactly", "[cp]") {
    // W = 4, one request with G = 3, qlen 3: row t sits at global position t.
    const Batch b = make_batch({3}, 16, 3, MLA_DTYPE_BF16, 5);
    const Shard whole_s = make_shard(b, 1, 0, 1, 1);
    const Result whole = reference(b, whole_s);
    std::vector<Result> parts;
    for (int r = 0; r < 4; ++r) {
        const Shard s = make_shard(b, 4, r, 1, 3 + r);
        REQUIRE(s.kv[1] == (r < 3 ? 1 : 0));  // ranks 0..2 hold one key, rank 3 none
        parts.push_back(reference(b, s));
        for (int t = 0; t < 3; ++t)
            for (int h = 0; h < 16; ++h) {
                const size_t u = size_t(t) * 16 + h;
                if (t < r || r == 3) {  // global key r is after row t, or no local key
                    INFO("rank " << r << " row " << t << " head " << h);
                    CHECK(parts[r].lse[u] == -INFINITY);
                    for (int d = 0; d < kV; ++d) REQUIRE(parts[r].out[u * kV + d] == 0.0f);
                } else {  // exactly one visible key: o = its V row, lse = its score
                    REQUIRE(std::isfinite(parts[r].lse[u]));
                    for (int d = 0; d < kV; ++d)
                        REQUIRE(parts[r].out[u * kV + d] ==
                                mla::dt::load(MLA_DTYPE_BF16, b.kv_rows[0].data(), int64_t(r) * 576 + d));
                }
            }
    }
    // Rank 0 row 0 holds the only key row 0 sees (global 0): its LSE is the whole one.
    for (int h = 0; h < 16; ++h) CHECK(parts[0].lse[h] == whole.lse[h]);
    const Result m = merge(parts, 3, 16);
    CHECK(max_diff(m.out, whole.out) <= kTol);
    CHECK(max_diff(m.lse, whole.lse) <= kTol);
}

TEST_CASE("the cprr plan has no local causal trim", "[cp]") {
    // Page size 1, causal, 128 heads (Hk 64, one token per tile), qlen 4: without cprr tile i of
    // 4 ends 3 - i keys early (aiter batch_tail); with cprr every tile reaches the last key.
    const Batch b = make_batch({0, 0}, 128, 4, MLA_DTYPE_BF16, 1);  // lengths set below
    Shard s;
    s.page_size = 1;
    s.qo = {0, 4, 8};
    s.kv = {0, 300, 333};
    s.last = {1, 1};
    const int32_t N[2] = {300, 33};
    for (int cprr = 0; cprr < 2; ++cprr) {
        Plan pl;
        const mla_metadata_params mp = params_of(b, s, cprr, 16);
        make_plan(mp, s, &pl);
        REQUIRE(pl.sz.qk_batch_ratio == 2);
        // furthest token end per (pseudo-request, tile token)
        std::vector<int32_t> end(2 * 2 * 4, -1);
        for (int32_t w = 0; w < pl.wi[mp.num_clusters]; ++w) {
            const int32_t* wi = &pl.wis[size_t(w) * 8];
            const int32_t req = wi[0] / 2, g = wi[0] % 2;
            const int32_t base = s.qo[req] * 2 + g * 4;
            for (int32_t f = wi[2]; f < wi[3]; ++f) {
                int32_t& e = end[size_t(wi[0]) * 4 + (f - base)];
                e = std::max(e, N[req] - wi[6]);
            }
        }
        for (int32_t p = 0; p < 4; ++p)
            for (int32_t t = 0; t < 4; ++t) {
                INFO("is_cp_round_robin " << cprr << " pseudo-request " << p << " token " << t);
                CHECK(end[size_t(p) * 4 + t] == (cprr ? N[p / 2] : N[p / 2] - (3 - t)));
            }
    }
}

TEST_CASE("bad round-robin CP input is an error and writes nothing", "[cp]") {
    const Batch b = make_batch({3, 8}, 16, 2, MLA_DTYPE_BF16, 9);
    const Shard s1 = make_shard(b, 2, 1, 1, 2);  // rank 1 of 2: 1 and 4 tokens
    const Shard s0 = make_shard(b, 2, 0, 1, 2);  // rank 0 of 2: 2 and 4 tokens
    const size_t n_out = size_t(b.total_q()) * 16 * kV;
    auto expect_fail = [&](const mla_host_problem& p, const char* what) {
        std::vector<float> out(n_out, 42.0f), lse(size_t(b.total_q()) * 16, 42.0f);
        INFO(what);
        CHECK(mla_decode_reference(&p, out.data(), lse.data()) == MLA_ERROR_INVALID_ARGUMENT);
        const std::string msg = mla_last_error();
        CHECK(msg.find(what) != std::string::npos);
        mla_metadata_params mp = params_of(b, s1, 1, 8);
        Plan pl;
        make_plan(mp, s1, &pl);
        CHECK(mla_execute_plan_reference(&p, &mp, &pl.buf, out.data(), lse.data()) ==
              MLA_ERROR_INVALID_ARGUMENT);
        for (float v : out) REQUIRE(v == 42.0f);
        for (float v : lse) REQUIRE(v == 42.0f);
    };
    mla_host_problem p = s1.problem(b);
    p.cp_rank = 2;
    expect_fail(p, "cp_rank 2 is outside [0, cp_world_size = 2)");
    p.cp_rank = -1;
    expect_fail(p, "cp_rank -1 is outside");
    p = s1.problem(b);
    p.causal = 0;
    expect_fail(p, "causal only");
    p = s1.problem(b);
    p.g_kv_indptr = nullptr;
    expect_fail(p, "needs g_kv_indptr");
    // Rank 0's page table (2 tokens in request 0) declared as rank 1's (1 token).
    p = s0.problem(b);
    p.cp_rank = 1;
    expect_fail(p, "request 0: the local page table holds 2 tokens, but rank 1 of 2 holds 1");
    // The same page table against W = 3 (rank 1 of 3 holds 1 and 3 tokens).
    p = s1.problem(b);
    p.cp_world_size = 3;
    expect_fail(p, "request 1: the local page table holds 4 tokens, but rank 1 of 3 holds 3");
    // Decreasing global lengths.
    std::vector<int32_t> g = {0, 3, 2};
    p = s1.problem(b);
    p.g_kv_indptr = g.data();
    expect_fail(p, "g_kv_indptr decreases");

    // A plan made without is_cp_round_robin (page size 1: it trims) for a cprr problem.
    const mla_host_problem good = s1.problem(b);
    const mla_metadata_params mp = params_of(b, s1, 0, 8);
    Plan pl;
    make_plan(mp, s1, &pl);
    std::vector<float> out(n_out, 42.0f), lse(size_t(b.total_q()) * 16, 42.0f);
    CHECK(mla_execute_plan_reference(&good, &mp, &pl.buf, out.data(), lse.data()) ==
          MLA_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(mla_last_error()).find("is_cp_round_robin 0") != std::string::npos);
    for (float v : out) REQUIRE(v == 42.0f);
    // The planner refuses round-robin CP without the causal mask, and sizes nothing.
    mla_metadata_params nc = params_of(b, s1, 1, 8);
    nc.causal = 0;
    mla_metadata_sizes z{};
    z.struct_size = sizeof z;
    CHECK(mla_metadata_info(&nc, &z) == MLA_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(mla_last_error()) ==
          "is_cp_round_robin needs causal = 1 (round-robin context parallel is causal only)");
    CHECK(z.work_indptr_len == 0);
    // The good problem runs.
    CHECK(mla_decode_reference(&good, out.data(), lse.data()) == MLA_SUCCESS);
}
