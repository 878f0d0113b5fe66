// test_plan_props.cpp - property tests of the host planners over thousands of random batches:
// the v1_2 plan equals the serial walk byte for byte, and every plan satisfies the invariants of
// docs/plan-layout.md (coverage exactly once, cluster order, partial rows, reduce maps).
#include <catch2/catch.hpp>

#include <cstring>

#include "plan_helpers.h"

using namespace plantest;

namespace {

mla_metadata_params params_for(const char* arch, int B, int L, int H, int ps, int gran, int cus,
                               int cap, int causal, mla_dtype q, mla_dtype kv) {
    mla_metadata_params p = MLA_METADATA_PARAMS_INIT;
    p.arch = arch;
    p.batch_size = B;
    p.max_seqlen_qo = L;
    p.num_heads = H;
    p.page_size = ps;
    p.kv_granularity = gran;
    p.num_clusters = cus;
    p.max_split_per_batch = cap;
    p.causal = causal;
    p.q_dtype = q;
    p.kv_dtype = kv;
    return p;
}

// Every output buffer of two plans equal, byte for byte.
void require_same_plan(const Plan& got, const Plan& want) {
    REQUIRE(got.work_indptr == want.work_indptr);
    REQUIRE(got.work_info == want.work_info);
    REQUIRE(got.reduce_indptr == want.reduce_indptr);
    REQUIRE(got.final_map == want.final_map);
    REQUIRE(got.partial_map == want.partial_map);
}

}  // namespace

TEST_CASE("v1_2 plan equals the serial walk and keeps every invariant", "[planner][props]") {
    std::mt19937 rng(20261129);
    const int kPageSizes[] = {1, 2, 4, 8, 16, 32, 64};
    const int kHeads[] = {8, 16, 20, 32, 48, 64, 96, 100, 128};
    const int kGran[] = {1, 16, 32, 64, 256};
    int checked = 0, splits = 0;
    for (int iter = 0; iter < 3000; ++iter) {
        const bool gfx = iter % 4 == 3;
        const int ps = kPageSizes[rng() % 7];
        const int L = 1 + int(rng() % 8);
        int H = kHeads[rng() % 9];
        mla_dtype q = MLA_DTYPE_BF16, kv = MLA_DTYPE_BF16;
        if (!gfx && rng() % 3 == 0) kv = MLA_DTYPE_FP8_E4M3FN;
        if (gfx && rng() % 2) q = kv = MLA_DTYPE_FP8_E4M3FN;
        if (gfx && q == MLA_DTYPE_FP8_E4M3FN && H % 16) H = 64;  // keep the gfx950 head plan accepting
        const int B = 1 + int(rng() % (iter % 10 == 0 ? 200 : 40));
        const int cus = (rng() % 3 == 0) ? int(4 + rng() % 40) : 0;
        const int cap = (rng() % 4 == 0) ? int(1 + rng() % 4) : -1;
        const int64_t max_kv = (rng() % 3 == 0) ? 200000 : int64_t(1 + rng() % 3000);
        const int gran = kGran[rng() % 5];
        const int causal = int(rng() % 4 != 0);
        const bool varlen = rng() % 2;
        mla_metadata_params p = params_for(gfx ? "gfx950" : "sm_90a", B, L, H, ps, gran, cus, cap,
                                           causal, q, kv);
        // the work overhead: the arch's (-1, most draws), aiter's rule (0) or any token count
        const int ov = int(rng() % 4);
        p.work_overhead_tokens = ov < 2 ? -1 : ov == 2 ? 0 : int(rng() % 3000);
        // the split tail likewise (its own stream, so the draws above stay those of earlier sweeps)
        {
            static std::mt19937 tail_rng(29);
            const unsigned t = tail_rng() % 4;
            p.split_tail_tokens = t < 2 ? -1 : t == 2 ? 0 : int(tail_rng() % 3000);
        }
        const Batch b = random_batch(rng, B, L, max_kv, ps, varlen);
        mla_metadata_sizes z{};
        z.struct_size = sizeof(z);
        if (mla_metadata_info(&p, &z) != MLA_SUCCESS) continue;  // head plan rejects this shape
        Plan got = alloc_plan(p), want = alloc_plan(p);
        mla_plan_summary sum{};
        sum.struct_size = sizeof(sum);
        INFO("iter " << iter << " arch " << p.arch << " B " << B << " L " << L << " H " << H
                     << " ps " << ps << " gran " << p.kv_granularity << " cus " << cus << " cap "
                     << cap << " causal " << p.causal << " overhead tokens " << p.work_overhead_tokens
                     << " tail tokens " << p.split_tail_tokens);
        const mla_status st = run_plan(p, b, got, &sum);
        INFO(mla_last_error());
        REQUIRE(st == MLA_SUCCESS);
        REQUIRE(check_invariants(p, b, got, true) == "");
        serial_walk_v1_2(p, b, want);
        require_same_plan(got, want);
        CHECK(sum.work_overhead_blocks == serial_overhead_blocks(p));  // the defaults resolved alike
        CHECK(sum.split_tail_blocks == serial_tail_blocks(p));
        REQUIRE(got.md[0] == uint64_t(reinterpret_cast<uintptr_t>(got.work_indptr.data())));
        REQUIRE(got.md[1] == uint64_t(reinterpret_cast<uintptr_t>(got.work_info.data())));
        REQUIRE(sum.num_works == got.work_indptr[z.num_clusters]);
        splits += sum.num_split_tiles;
        ++checked;
    }
    CHECK(checked > 2000);
    CHECK(splits > 1000);  // the sweep exercises split tiles, not just whole ones
}

TEST_CASE("v1_2 head-group-major plans equal the serial walk over the group-major tile order",
          "[planner][props]") {
    // sm_90a with folded heads (r = 2 at 128 heads, 4 at 256 rows of tokens x heads...): the
    // pseudo-requests laid out head group by head group. The walk is the same greedy walk over
    // the group-major tile list; the works keep every invariant and the executed plan stays
    // correct (test_reference). Unfolded shapes give the aiter order unchanged.
    std::mt19937 rng(20261130);
    const int kPageSizes[] = {1, 16, 64};
    int checked = 0, folded = 0, tile_sec = 0;
    for (int iter = 0; iter < 600; ++iter) {
        const int ps = kPageSizes[rng() % 3];
        const int L = 1 + int(rng() % 4);
        const int H = (rng() % 4 == 0) ? 64 : 128;
        const int B = 1 + int(rng() % (iter % 10 == 0 ? 200 : 40));
        const int cus = (rng() % 3 == 0) ? int(4 + rng() % 40) : 0;
        const int cap = (rng() % 4 == 0) ? int(1 + rng() % 4) : -1;
        const int64_t max_kv = (rng() % 3 == 0) ? 200000 : int64_t(1 + rng() % 3000);
        mla_metadata_params p = params_for("sm_90a", B, L, H, ps, 16, cus, cap, 1, MLA_DTYPE_BF16,
                                           MLA_DTYPE_BF16);
        p.head_group_major = 1;
        const Batch b = random_batch(rng, B, L, max_kv, ps, rng() % 2);
        mla_metadata_sizes z{};
        z.struct_size = sizeof(z);
        if (mla_metadata_info(&p, &z) != MLA_SUCCESS) continue;
        Plan got = alloc_plan(p), want = alloc_plan(p), aiter = alloc_plan(p);
        INFO("iter " << iter << " B " << B << " L " << L << " H " << H << " ps " << ps);
        mla_plan_summary sum{};
        sum.struct_size = sizeof(sum);
        REQUIRE(run_plan(p, b, got, &sum) == MLA_SUCCESS);
        REQUIRE(check_invariants(p, b, got, true) == "");
        CHECK(sum.num_sections == serial_walk_v1_2(p, b, want));  // the oracle's sections
        CHECK(sum.work_overhead_blocks == serial_overhead_blocks(p));
        CHECK(sum.split_tail_blocks == serial_tail_blocks(p));
        require_same_plan(got, want);
        mla_metadata_params pa = p;
        pa.head_group_major = 0;
        REQUIRE(run_plan(pa, b, aiter) == MLA_SUCCESS);
        if (tile_sections_of(p, b) > 0) ++tile_sec;
        if (z.qk_batch_ratio == 1 && tile_sections_of(p, b) == 0) {
            REQUIRE(got.work_info == aiter.work_info);  // one head group, no tile sections: the same order
        } else {
            ++folded;
        }
        ++checked;
    }
    CHECK(checked > 400);
    CHECK(folded > 300);
    CHECK(tile_sec > 30);
}

TEST_CASE("v1_2 head-group-major: cluster c + C/2 runs group 1 of exactly cluster c's tiles",
          "[planner][props]") {
    // 128 requests x 4096 tokens, 128 heads (two 64-head groups), page 64, and a ragged batch:
    // group 0 fills the first half of the clusters, group 1 the second, and cluster c + C/2's
    // works are cluster c's with the pseudo-request (b, 1) for (b, 0): the same KV pages in the
    // same order (so the two CTAs stream them together and the L2 serves one of them).
    for (int ragged = 0; ragged < 2; ++ragged) {
        std::vector<int32_t> q(128, 1);
        std::vector<int64_t> n(128, 4096);
        if (ragged)
            for (int i = 0; i < 128; ++i) n[size_t(i)] = 1 + (i * 7919) % 9000;
        const Batch b = make_batch(q, n, 64);
        mla_metadata_params p = params_for("sm_90a", 128, 1, 128, 64, 16, 0, -1, 1, MLA_DTYPE_BF16,
                                           MLA_DTYPE_BF16);
        p.head_group_major = 1;
        Plan plan = alloc_plan(p);
        mla_plan_summary sum{};
        sum.struct_size = sizeof(sum);
        REQUIRE(run_plan(p, b, plan, &sum) == MLA_SUCCESS);
        REQUIRE(check_invariants(p, b, plan, true) == "");
        const int32_t C = plan.sizes.num_clusters, r = plan.sizes.qk_batch_ratio;
        REQUIRE(r == 2);
        REQUIRE(C % 2 == 0);
        CHECK(sum.num_sections == 2);
        int twins = 0;
        for (int32_t c = 0; c < C / 2; ++c) {
            const int32_t w0 = plan.work_indptr[c], n0 = plan.work_indptr[c + 1] - w0;
            const int32_t w1 = plan.work_indptr[c + C / 2], n1 = plan.work_indptr[c + C / 2 + 1] - w1;
            INFO("ragged " << ragged << " cluster " << c);
            REQUIRE(n0 == n1);
            for (int32_t k = 0; k < n0; ++k) {
                const int32_t* a = &plan.work_info[size_t(w0 + k) * 8];
                const int32_t* t = &plan.work_info[size_t(w1 + k) * 8];
                CHECK(a[0] % 2 == 0);
                CHECK(t[0] == a[0] + 1);               // (b, 1) for (b, 0)
                CHECK(t[2] == a[2] + 1);               // its folded rows: one token later
                CHECK(t[3] == a[3] + 1);
                CHECK((t[1] < 0) == (a[1] < 0));       // split alike
                CHECK(t[4] == a[4]);                   // the same pages
                CHECK(t[5] == a[5]);
                CHECK(t[6] == a[6]);
                ++twins;
            }
        }
        CHECK(twins * 2 == plan.work_indptr[C]);
    }
}

TEST_CASE("v1_2 head-group-major, MTP: the qo tiles of a request run as twins C / (r n) apart",
          "[planner][props]") {
    // 64 heads x qlen 2 (one head group, 2 qo tiles per request) and 128 heads x qlen 2 (2 groups x
    // 2 tiles): section s = g n + i holds tile i of group g of every request, on clusters s C/S ..;
    // cluster c + s C/S's works are cluster c's with tile s for tile 0 (same pages, same splits).
    // A ragged batch (tile counts differ) keeps the head-group sections only.
    for (const int H : {64, 128}) {
        std::vector<int32_t> q(128, 2);
        std::vector<int64_t> n(128, 4096);
        for (int i = 0; i < 128; ++i) n[size_t(i)] = 1 + (i * 7919) % 9000;
        const Batch b = make_batch(q, n, 64);
        mla_metadata_params p = params_for("sm_90a", 128, 2, H, 64, 16, 0, -1, 1, MLA_DTYPE_BF16,
                                           MLA_DTYPE_BF16);
        p.head_group_major = 1;
        REQUIRE(tile_sections_of(p, b) == 2);
        Plan plan = alloc_plan(p);
        mla_plan_summary sum{};
        sum.struct_size = sizeof(sum);
        REQUIRE(run_plan(p, b, plan, &sum) == MLA_SUCCESS);
        REQUIRE(check_invariants(p, b, plan, true) == "");
        const int32_t C = plan.sizes.num_clusters, r = plan.sizes.qk_batch_ratio, S = 2 * r, Cs = C / S;
        CHECK(sum.num_sections == S);
        int twins = 0;
        for (int32_t s = 1; s < S; ++s)
            for (int32_t c = 0; c < Cs; ++c) {
                const int32_t w0 = plan.work_indptr[c], n0 = plan.work_indptr[c + 1] - w0;
                const int32_t w1 = plan.work_indptr[c + s * Cs], n1 = plan.work_indptr[c + s * Cs + 1] - w1;
                INFO("H " << H << " section " << s << " cluster " << c);
                REQUIRE(n0 == n1);
                for (int32_t k = 0; k < n0; ++k) {
                    const int32_t* a = &plan.work_info[size_t(w0 + k) * 8];
                    const int32_t* t = &plan.work_info[size_t(w1 + k) * 8];
                    const int32_t g = s / 2, i = s % 2;        // tile i of head group g
                    CHECK(t[0] == a[0] + g);                   // pseudo-request (b, g)
                    CHECK(t[2] == a[2] + g * 2 + i);           // its rows: group g's token i
                    CHECK((t[1] < 0) == (a[1] < 0));
                    CHECK(t[4] == a[4]);
                    CHECK(t[5] == a[5]);
                    CHECK(t[6] == a[6]);
                    ++twins;
                }
            }
        CHECK(twins * S == plan.work_indptr[C] * (S - 1));
        std::vector<int32_t> ragged = q;
        ragged[5] = 1;
        REQUIRE(tile_sections_of(p, make_batch(ragged, n, 64)) == 0);
    }
}

TEST_CASE("v1_2 head-group-major: bad values, other archs and the device planner refuse it",
          "[planner]") {
    mla_metadata_params p = params_for("sm_90a", 4, 1, 128, 64, 16, 0, -1, 1, MLA_DTYPE_BF16,
                                       MLA_DTYPE_BF16);
    mla_metadata_sizes z{};
    z.struct_size = sizeof(z);
    p.head_group_major = 2;
    CHECK(mla_metadata_info(&p, &z) == MLA_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(mla_last_error()).find("head_group_major") != std::string::npos);
    p.head_group_major = 1;
    CHECK(mla_metadata_info(&p, &z) == MLA_SUCCESS);
    p.fast_mode = 0;  // v1_0 / v1_1 planners
    CHECK(mla_metadata_info(&p, &z) == MLA_ERROR_INVALID_ARGUMENT);
    mla_metadata_params g = params_for("gfx942", 4, 1, 128, 64, 16, 0, -1, 1, MLA_DTYPE_BF16,
                                       MLA_DTYPE_BF16);
    g.head_group_major = 1;
    CHECK(mla_metadata_info(&g, &z) == MLA_ERROR_INVALID_ARGUMENT);
}

TEST_CASE("v1_0 and v1_1 plans keep the coverage and reduce invariants", "[planner][props]") {
    std::mt19937 rng(7);
    int checked = 0;
    for (int iter = 0; iter < 800; ++iter) {
        const int ps = 1 << (rng() % 7);
        const int L = 1 + int(rng() % 4);
        const int H = (rng() % 2) ? 16 : 128;
        const int B = 1 + int(rng() % 30);
        const int cus = int(4 + rng() % 60);
        mla_metadata_params p = params_for(iter % 2 ? "gfx942" : "sm_90a", B, L, H, ps, 16, cus,
                                           -1, 1, MLA_DTYPE_BF16, MLA_DTYPE_BF16);
        p.fast_mode = 0;
        p.intra_batch_mode = int(rng() % 2);
        p.num_kv_splits = int(1 + rng() % 32);
        const bool varlen = rng() % 2;
        const Batch b = random_batch(rng, B, L, 20000, ps, varlen);
        mla_metadata_sizes z{};
        z.struct_size = sizeof(z);
        if (mla_metadata_info(&p, &z) != MLA_SUCCESS) continue;
        Plan got = alloc_plan(p);
        INFO("iter " << iter << " arch " << p.arch << " intra " << p.intra_batch_mode << " B " << B
                     << " L " << L << " H " << H << " ps " << ps);
        const mla_status st = run_plan(p, b, got);
        INFO(mla_last_error());
        REQUIRE(st == MLA_SUCCESS);
        REQUIRE(check_invariants(p, b, got, p.intra_batch_mode != 0) == "");
        ++checked;
    }
    CHECK(checked > 500);
}

#include "ref_helpers.h"

TEST_CASE("executing random plans equals the direct reference to fp32 rounding",
          "[planner][props][reference]") {
    std::mt19937 rng(99);
    const int kHeads[] = {8, 16, 20, 64, 100, 128};
    int ran = 0;
    for (int iter = 0; iter < 120; ++iter) {
        const int ps = 1 << (rng() % 7);
        const int L = 1 + int(rng() % 4);
        const int H = kHeads[rng() % 6];
        const int B = 1 + int(rng() % 5);
        const int64_t max_n = H >= 64 ? 60 : 250;
        std::vector<int32_t> q(B);
        std::vector<int64_t> n(B);
        for (int b = 0; b < B; ++b) {
            q[b] = int32_t(rng() % (L + 1));
            n[b] = rng() % 5 == 0 ? 0 : int64_t(rng() % max_n);
        }
        q[0] = L;
        reftest::Case c = reftest::random_case(q, n, ps, H, uint32_t(iter));
        c.causal = int(rng() % 3 != 0);
        mla_metadata_params p = reftest::params_of(c);
        p.num_clusters = int(1 + rng() % 12);
        p.kv_granularity = 1 << (rng() % 5);
        INFO("iter " << iter << " B " << B << " L " << L << " H " << H << " ps " << ps);
        const reftest::Result d = reftest::direct(c), e = reftest::executed(c, p);
        REQUIRE(reftest::max_rel_diff(e.out, d.out) < 1e-5);
        REQUIRE(reftest::max_rel_diff(e.lse, d.lse) < 1e-5);
        ++ran;
    }
    CHECK(ran == 120);
}
