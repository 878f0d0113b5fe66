// test_decode_unsplit.cpp - mla_decode_args.no_split_tiles on the fake CUDA runtime (no GPU): with
// 1, a plan whose summary reports no split tile decodes with one launch (the table's plain
// kernel, no reducer, no fused reduction even with tile_counters) and no partial buffers in the
// params (a split work then finds partial_out NULL and the kernel rejects it: gpu_decode_test runs
// that on the GPU); 0, or a caller built before the field, keeps the reducer launch; other values
// are refused before anything launches, and the padding before the field is ignored.
#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "decode_launch_util.h"

using namespace decode_test;

TEST_CASE("no_split_tiles: the decode kernel alone, without partial buffers", "[decode][unsplit]") {
    static_assert(offsetof(mla_decode_args, reserved0) == 284 && offsetof(mla_decode_args, no_split_tiles) == 288,
                  "args layout: the field sits past the older struct's 288 bytes");
    struct K {
        int B, H, L, kv;
        mla_dtype kvd;
        int m;  // the table's row tile
    };
    // fixed lengths, b = 128 x 4K tokens (128 whole tiles on 132 clusters): the 16-row bf16 kernel,
    // the 32-row one (16 heads x MTP 2), the qm kernel (64 heads) and the register-A one (fp8 KV);
    // b = 64 x 1K tokens (the default work overhead keeps its 64 tiles whole)
    const K ks[] = {{128, 16, 1, 4096, MLA_DTYPE_BF16, 16},
                    {128, 16, 2, 4096, MLA_DTYPE_BF16, 32},
                    {128, 64, 1, 4096, MLA_DTYPE_BF16, 64},
                    {128, 16, 1, 4096, MLA_DTYPE_FP8_E4M3FN, 16},
                    {64, 16, 1, 1024, MLA_DTYPE_BF16, 16}};
    for (const K& k : ks) {
        INFO("B " << k.B << " heads " << k.H << " qlen " << k.L << " kv " << k.kv << " kv dtype "
                  << mla_dtype_string(k.kvd));
        mla_context* ctx = make_ctx();
        DecodeCall c(k.B, k.H, k.L, 64, k.kv, MLA_DTYPE_BF16, k.kvd, 1, 1, 0, /*len_step*/ 0);
        INFO(c.why);
        REQUIRE(c.ok);
        REQUIRE(c.sz.partial_rows > 0);  // the sizes allow splits: without the field the reducer runs
        REQUIRE(summary_of(c).num_split_tiles == 0);
        const std::string sym = table_symbol(MLA_DTYPE_BF16, k.kvd, k.m);

        // 0 (the default): the decode kernel, then the reducer; the params carry the partial buffers
        REQUIRE(c.a.no_split_tiles == 0);
        REQUIRE(mla_decode_fwd(ctx, &c.a, nullptr) == MLA_SUCCESS);
        REQUIRE(fake_rt_launch_count() == 2);
        CHECK(std::string(fake_rt_launch(0)->symbol) == sym);
        CHECK(std::string(fake_rt_launch(1)->symbol).rfind("mla_reduce_", 0) == 0);
        const mla_decode_params p0 = params_of(fake_rt_launch(0));
        CHECK(p0.partial_out == c.a.workspace);
        CHECK(p0.partial_lse != nullptr);

        // 1: one launch, the same kernel and grid, no partial buffers; everything else as with 0
        c.a.no_split_tiles = 1;
        REQUIRE(mla_decode_fwd(ctx, &c.a, nullptr) == MLA_SUCCESS);
        REQUIRE(fake_rt_launch_count() == 3);
        const fake_rt_launch_record* r = fake_rt_launch(2);
        CHECK(std::string(r->symbol) == sym);
        CHECK(r->grid[0] == fake_rt_launch(0)->grid[0]);
        const mla_decode_params p1 = params_of(r);
        CHECK(p1.partial_out == nullptr);
        CHECK(p1.partial_lse == nullptr);
        CHECK(p1.tile_counters == nullptr);
        CHECK(p1.out == p0.out);
        CHECK(p1.work_info_set == p0.work_info_set);
        CHECK(p1.kernel_heads == p0.kernel_heads);

        // with tile_counters too: still the plain kernel alone (nothing to reduce), counters unused
        std::vector<int32_t> cnt(size_t(c.sz.reduce_indptr_len), 0);
        c.a.tile_counters = cnt.data();
        c.a.tile_counters_len = c.sz.reduce_indptr_len - 1;
        REQUIRE(mla_decode_fwd(ctx, &c.a, nullptr) == MLA_SUCCESS);
        REQUIRE(fake_rt_launch_count() == 4);
        CHECK(std::string(fake_rt_launch(3)->symbol) == sym);
        CHECK(params_of(fake_rt_launch(3)).tile_counters == nullptr);
        CHECK(params_of(fake_rt_launch(3)).partial_out == nullptr);
        mla_context_destroy(ctx);
    }
}

TEST_CASE("no_split_tiles: a split plan still launches (the host cannot see the plan; the kernel flags it)",
          "[decode][unsplit]") {
    // one request of 32768 tokens x 16 heads (the b 1 target row): one tile split in 128 works
    mla_context* ctx = make_ctx();
    DecodeCall c(1, 16, 1, 64, 32768, MLA_DTYPE_BF16, MLA_DTYPE_BF16, 1, 1, 0, 0);
    REQUIRE(c.ok);
    REQUIRE(summary_of(c).num_split_tiles == 1);
    c.a.no_split_tiles = 1;
    REQUIRE(mla_decode_fwd(ctx, &c.a, nullptr) == MLA_SUCCESS);
    REQUIRE(fake_rt_launch_count() == 1);
    CHECK(params_of(fake_rt_launch(0)).partial_out == nullptr);
    mla_context_destroy(ctx);
}

TEST_CASE("no_split_tiles: values other than 0 / 1 are refused, the padding before it is ignored, an older caller "
          "gets the reducer",
          "[decode][unsplit]") {
    mla_context* ctx = make_ctx();
    DecodeCall c(128, 16, 1, 64, 4096, MLA_DTYPE_BF16, MLA_DTYPE_BF16, 1, 1, 0, 0);
    REQUIRE(c.ok);
    for (int bad : {-1, 2}) {
        INFO("no_split_tiles " << bad);
        c.a.no_split_tiles = bad;
        const int n = fake_rt_launch_count();
        CHECK(mla_decode_fwd(ctx, &c.a, nullptr) == MLA_ERROR_INVALID_ARGUMENT);
        CHECK(std::string(mla_last_error()).find("no_split_tiles") != std::string::npos);
        CHECK(fake_rt_launch_count() == n);
    }
    // reserved0 holds whatever: ignored
    c.a.no_split_tiles = 1;
    c.a.reserved0 = 12345;
    int n = fake_rt_launch_count();
    REQUIRE(mla_decode_fwd(ctx, &c.a, nullptr) == MLA_SUCCESS);
    CHECK(fake_rt_launch_count() == n + 1);
    // a caller built before the field (struct_size 288, its tail padding where reserved0 is): the
    // reducer launches, whatever lies past its struct
    mla_decode_args old = c.a;
    old.struct_size = offsetof(mla_decode_args, no_split_tiles);
    old.reserved0 = 1;
    old.no_split_tiles = 1;
    n = fake_rt_launch_count();
    REQUIRE(mla_decode_fwd(ctx, &old, nullptr) == MLA_SUCCESS);
    REQUIRE(fake_rt_launch_count() == n + 2);
    CHECK(params_of(fake_rt_launch(n)).partial_out == c.a.workspace);
    mla_context_destroy(ctx);
}
