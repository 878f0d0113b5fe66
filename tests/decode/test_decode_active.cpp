// test_decode_active.cpp - mla_decode_args.active_clusters on the fake CUDA runtime (no GPU): the
// host plan's summary reports the clusters that hold works (128 whole tiles on sm_90a's 132
// clusters: 128; more tiles than clusters: all of them), mla_decode_fwd launches that
// many CTAs with the plan's cluster count in the params (the kernels check that no work lies
// beyond the grid), 0 or a caller built before the field gets one CTA per cluster, and a count
// outside 0..num_clusters is refused before anything launches.
#include <catch2/catch.hpp>

#include <cstddef>
#include <string>

#include "decode_launch_util.h"

using namespace decode_test;

TEST_CASE("active_clusters: the grid is the host plan's clusters with work, the params keep the plan's count",
          "[decode][active]") {
    mla_context* ctx = make_ctx();
    // 128 requests of 4096 tokens x 16 heads (the main job): 128 whole tiles on 132 clusters
    DecodeCall c(128, 16, 1, 64, 4096, MLA_DTYPE_BF16, MLA_DTYPE_BF16, 1, 1, 0, /*len_step*/ 0);
    REQUIRE(c.ok);
    REQUIRE(c.sz.num_clusters == 132);
    const mla_plan_summary s = summary_of(c);
    CHECK(s.num_works == 128);
    CHECK(s.num_split_tiles == 0);
    CHECK(s.active_clusters == 128);
    CHECK(s.reserved2 == 0);
    CHECK(c.plan.work_indptr[127] < c.plan.work_indptr[128]);   // cluster 127 holds a work
    CHECK(c.plan.work_indptr[128] == c.plan.work_indptr[132]);  // clusters 128..131 none

    // the decode kernel's launch (the first of the call's launches; the reducer follows, the
    // plan's sizes allowing splits)
    const auto decode_launch = [&](const mla_decode_args& a) {
        const int n = fake_rt_launch_count();
        REQUIRE(mla_decode_fwd(ctx, &a, nullptr) == MLA_SUCCESS);
        REQUIRE(fake_rt_launch_count() > n);
        return fake_rt_launch(n);
    };
    c.a.active_clusters = s.active_clusters;
    const fake_rt_launch_record* r = decode_launch(c.a);
    CHECK(r->grid[0] == 128);
    CHECK(params_of(r).num_clusters == 132);
    // the rows a kernel may read before it knows its works (the fast start's guess of work c)
    CHECK(params_of(r).work_rows == c.sz.work_info_set_rows);
    CHECK(params_of(r).work_rows >= 132);

    // 0: one CTA per cluster
    c.a.active_clusters = 0;
    r = decode_launch(c.a);
    CHECK(r->grid[0] == 132);
    CHECK(params_of(r).num_clusters == 132);

    // a caller built before the field (struct_size ending at tile_counters_len): every cluster,
    // whatever lies past its struct
    mla_decode_args old = c.a;
    old.struct_size = offsetof(mla_decode_args, active_clusters);
    old.active_clusters = 5;
    CHECK(decode_launch(old)->grid[0] == 132);

    // the bounds: 1 (one CTA; the kernel would flag the works beyond it) and num_clusters
    c.a.active_clusters = 1;
    CHECK(decode_launch(c.a)->grid[0] == 1);
    c.a.active_clusters = 132;
    CHECK(decode_launch(c.a)->grid[0] == 132);

    // outside 0..num_clusters: refused, nothing launched
    for (int bad : {-1, 133}) {
        INFO("active_clusters " << bad);
        c.a.active_clusters = bad;
        const int n = fake_rt_launch_count();
        CHECK(mla_decode_fwd(ctx, &c.a, nullptr) == MLA_ERROR_INVALID_ARGUMENT);
        CHECK(std::string(mla_last_error()).find("active_clusters") != std::string::npos);
        CHECK(fake_rt_launch_count() == n);
    }
    mla_context_destroy(ctx);
}

TEST_CASE("active_clusters: a plan with work on every cluster reports all of them, one request split in 128 "
          "works 128; an older summary is not written past its end",
          "[decode][active]") {
    // 1536 requests of 2048 tokens x 16 heads (the b 1536 target row): 1624 works, some split
    DecodeCall full(1536, 16, 1, 64, 2048, MLA_DTYPE_BF16, MLA_DTYPE_BF16, 1, 1, 0, 0);
    REQUIRE(full.ok);
    const mla_plan_summary sf = summary_of(full);
    CHECK(sf.num_works == 1624);
    CHECK(sf.active_clusters == full.sz.num_clusters);
    CHECK(full.plan.work_indptr[full.sz.num_clusters - 1] < full.plan.work_indptr[full.sz.num_clusters]);
    // one request of 32768 tokens x 16 heads (the b 1 target row): its 512-token split tail
    // cuts it into 128 works (docs/planner.md), on clusters 0..127
    DecodeCall c(1, 16, 1, 64, 32768, MLA_DTYPE_BF16, MLA_DTYPE_BF16, 1, 1, 0, 0);
    REQUIRE(c.ok);
    const mla_plan_summary s = summary_of(c);
    CHECK(s.num_split_tiles == 1);
    CHECK(s.num_works == 128);
    CHECK(s.active_clusters == 128);
    CHECK(c.plan.work_indptr[127] < c.plan.work_indptr[128]);

    // a caller built with the 72-byte summary (before active_clusters)
    static_assert(offsetof(mla_plan_summary, active_clusters) == 72, "summary layout");
    mla_plan_summary old{};
    old.struct_size = offsetof(mla_plan_summary, active_clusters);
    old.active_clusters = -7;
    old.reserved2 = -5;
    REQUIRE(mla_plan_metadata(&c.mp, c.qo.data(), c.kvi.data(), c.last.data(), &c.plan, nullptr, nullptr, &old) ==
            MLA_SUCCESS);
    CHECK(old.num_works == s.num_works);
    CHECK(old.reserved2 == 0);
    CHECK(old.active_clusters == -7);
}
