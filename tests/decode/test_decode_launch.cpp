// test_decode_launch.cpp - mla_decode_fwd on the fake CUDA runtime (no GPU): every bad input
// returns its status with a message and launches nothing; good input launches the table's
// kernel with grid = num_clusters, the row's block and shared memory, and a params block whose
// fields match the call (decode_params.h); the reducer follows when the plan can split.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "fake_runtime.h"
#include "decode_call.h"
#include "fake_test_util.h"
#include "host_plan.h"
#include "launch/decode_launch.h"
#include "mla_c_api.h"

#include "decode_launch_util.h"

using namespace decode_test;

TEST_CASE("decode launch: 16 heads bf16 launches the M=16 wgmma kernel over num_clusters CTAs", "[decode]") {
    mla_context* ctx = make_ctx();
    Call c(4, 16, 1, 64, 500);
    REQUIRE(mla_decode_fwd(ctx, &c.a, nullptr) == MLA_SUCCESS);
    REQUIRE(fake_rt_launch_count() >= 1);
    const fake_rt_launch_record* r = fake_rt_launch(0);
    const std::string sym = table_symbol(MLA_DTYPE_BF16, MLA_DTYPE_BF16, 16);
    CHECK(std::string(r->symbol) == sym);
    CHECK(r->grid[0] == unsigned(c.sz.num_clusters));
    CHECK(r->grid[0] == 132);
    CHECK(r->grid[1] == 1);
    CHECK(r->block[0] == 256);
    CHECK(r->shared == table_smem(MLA_DTYPE_BF16, MLA_DTYPE_BF16, 16));
    CHECK(r->packed == 1);
    CHECK(fake_rt_max_dynamic_shared(sym.c_str()) == int(table_smem(MLA_DTYPE_BF16, MLA_DTYPE_BF16, 16)));
    const mla_decode_params p = params_of(r);
    CHECK(p.q == c.a.q);
    CHECK(p.kv == c.a.kv_cache);
    CHECK(p.out == c.a.out);
    CHECK(p.lse == c.a.lse);
    CHECK(p.page_table == c.pages.data());
    CHECK(p.work_indptr == c.plan.work_indptr);
    CHECK(p.work_info_set == c.plan.work_info_set);
    CHECK(p.error_flag == &c.flag);
    CHECK(p.q_stride_token == 16 * 576);
    CHECK(p.q_stride_head == 576);
    CHECK(p.kv_stride_page == 64 * 576);
    CHECK(p.out_stride_token == 16 * 512);
    CHECK(p.out_stride_head == 512);
    CHECK(p.num_page_indices == int64_t(c.pages.size()));
    CHECK(p.softmax_scale == 0.1f);
    CHECK(p.batch_size == 4);
    CHECK(p.num_heads == 16);
    CHECK(p.kernel_heads == 16);
    CHECK(p.qk_batch_ratio == 1);
    CHECK(p.page_size_log2 == 6);
    CHECK(p.num_pages == c.kvi[4]);
    CHECK(p.block_table_stride == 0);
    CHECK(p.causal == 1);
    CHECK(p.cp_world_size == 1);  // no context parallel: W = 1, no global lengths
    CHECK(p.cp_rank == 0);
    CHECK(p.g_kv_indptr == nullptr);
    CHECK(p.out_fp32 == 0);  // bf16 out (the default)
    if (c.sz.partial_rows > 0) {
        REQUIRE(fake_rt_launch_count() == 2);
        const fake_rt_launch_record* rr = fake_rt_launch(1);
        // mla_reduce.csv: spread = 1 (the slim reducer, one unit per CTA of 128 threads: grid
        // tiles x 16 rows x 8 column eighths) when tiles x M <= 2 x clusters, else whole split
        // tiles, one CTA of 512 threads per SM at most (grid min(tiles, SMs) x 1)
        const int64_t tiles = c.sz.reduce_indptr_len - 1;
        const bool spread = tiles * 16 <= 2 * int64_t(c.sz.num_clusters);
        CHECK(std::string(rr->symbol) == (spread ? "mla_reduce_slim_bf16" : "mla_reduce_tiles_bf16"));
        CHECK(rr->grid[0] == unsigned(spread ? tiles : std::min<int64_t>(tiles, mla_context_num_cus(ctx))));
        CHECK(rr->grid[1] == (spread ? 128u : 1u));
        CHECK(rr->block[0] == (spread ? 128u : 512u));
        CHECK(rr->shared == 0);
        // mla_reduce.csv and mla_decode.csv launch_pdl 1: both kernels by cuLaunchKernelEx with
        // programmatic stream serialization
        CHECK(rr->programmatic == 1);
        CHECK(fake_rt_launch(0)->programmatic == 1);
        // a driver that refuses the attribute gets the plain launch, with the same params
        fake_rt_fail("cuLaunchKernelEx", 801);  // CUDA_ERROR_NOT_SUPPORTED
        const mla_status st2 = mla_decode_fwd(ctx, &c.a, nullptr);
        fake_rt_fail("cuLaunchKernelEx", 0);
        INFO(mla_last_error());
        REQUIRE(st2 == MLA_SUCCESS);
        REQUIRE(fake_rt_launch_count() == 4);
        CHECK(fake_rt_launch(2)->programmatic == 0);
        CHECK(fake_rt_launch(3)->programmatic == 0);
        CHECK(std::string(fake_rt_launch(3)->symbol) == rr->symbol);
        CHECK(std::memcmp(fake_rt_launch(3)->args, rr->args, rr->args_bytes) == 0);
        CHECK(fake_rt_call_count("cuLaunchKernelEx") == 4);  // two accepted, two refused
        REQUIRE(rr->args_bytes == sizeof(mla_reduce_params));
        mla_reduce_params rp;
        std::memcpy(&rp, rr->args, sizeof rp);
        CHECK(rp.partial_out == c.a.workspace);
        const int64_t pout = c.sz.partial_rows * 16 * 512 * 4;
        CHECK(reinterpret_cast<const char*>(rp.partial_lse) ==
              static_cast<char*>(c.a.workspace) + (pout + 255) / 256 * 256);
        CHECK(rp.num_tiles == int(c.sz.reduce_indptr_len - 1));
        CHECK(rp.kernel_heads == 16);
        CHECK(rp.out_fp32 == 0);
        CHECK(p.partial_out == rp.partial_out);
        CHECK(p.partial_lse == rp.partial_lse);
    } else {
        CHECK(fake_rt_launch_count() == 1);
    }
    mla_context_destroy(ctx);
}

TEST_CASE("decode launch: the reducer row follows the split shape (mla_reduce.csv spread)", "[decode]") {
    // One long request splits into one tile of many fragments: spread = 1, the slim reducer (one
    // (row, head, 64-column eighth) unit per CTA of 128 threads: M x 8 CTAs per tile; 128 heads
    // run 2 tiles of M = 64). 64 requests x 16
    // rows: 64 tiles x 16 > 2 x 132 clusters: spread = 0, mla_reduce_tiles_bf16 (whole tiles, a
    // CTA of 512 threads per tile up to one per SM: grid 64 x 1).
    // 200 requests: 200 tiles on 132 SMs, so grid 132 and each CTA loops over its tiles (the
    // params still name all 200)
    struct K {
        int B, H, kv;
        const char* symbol;
        unsigned threads, grid_x, grid_y;
    };
    const K ks[] = {{1, 16, 32768, "mla_reduce_slim_bf16", 128u, 1u, 128u},
                    {1, 128, 32768, "mla_reduce_slim_bf16", 128u, 2u, 512u},
                    {64, 16, 1024, "mla_reduce_tiles_bf16", 512u, 64u, 1u},
                    {200, 16, 1024, "mla_reduce_tiles_bf16", 512u, 132u, 1u}};
    for (const K& k : ks) {
        INFO("B " << k.B << " heads " << k.H << " kv " << k.kv);
        mla_context* ctx = make_ctx();
        Call c(k.B, k.H, 1, 64, k.kv);
        REQUIRE(c.sz.partial_rows > 0);
        REQUIRE(mla_decode_fwd(ctx, &c.a, nullptr) == MLA_SUCCESS);
        REQUIRE(fake_rt_launch_count() == 2);
        const fake_rt_launch_record* rr = fake_rt_launch(1);
        CHECK(std::string(rr->symbol) == k.symbol);
        CHECK(rr->block[0] == k.threads);
        CHECK(rr->grid[0] == k.grid_x);
        CHECK(rr->grid[1] == k.grid_y);
        REQUIRE(rr->args_bytes == sizeof(mla_reduce_params));
        mla_reduce_params rp;
        std::memcpy(&rp, rr->args, sizeof rp);
        CHECK(rp.num_tiles == int(c.sz.reduce_indptr_len - 1));
        mla_context_destroy(ctx);
    }
}

TEST_CASE("decode launch: row tile, fold and dtype pick the kernel", "[decode]") {
    // M: the row tile (table Gqa); the kernel and its launch values come from the table row of
    // (dtypes, M), whose values the table test checks against the kernel build
    struct K {
        int H, L;
        mla_dtype q, kv;
        int m, hk, r;
    };
    const K ks[] = {
        {8, 1, MLA_DTYPE_BF16, MLA_DTYPE_BF16, 16, 8, 1},
        {32, 1, MLA_DTYPE_BF16, MLA_DTYPE_BF16, 32, 32, 1},
        {16, 2, MLA_DTYPE_BF16, MLA_DTYPE_FP8_E4M3FN, 32, 16, 1},
        {128, 1, MLA_DTYPE_BF16, MLA_DTYPE_BF16, 64, 64, 2},
        {96, 1, MLA_DTYPE_FP8_E4M3FN, MLA_DTYPE_FP8_E4M3FN, 64, 48, 2},
        {16, 1, MLA_DTYPE_FP8_E4M3FN, MLA_DTYPE_FP8_E4M3FN, 16, 16, 1},
    };
    for (const K& k : ks) {
        const std::string sym = table_symbol(k.q, k.kv, k.m), base = plain_build(sym);
        INFO(sym);
        CHECK(base.size() > 4);
        CHECK(base.substr(base.size() - 4) == "_m" + std::to_string(k.m));
        mla_context* ctx = make_ctx();  // fake_rt_reset forgets modules: one context per case
        Call c(3, k.H, k.L, 16, 300, k.q, k.kv);
        const mla_status st = mla_decode_fwd(ctx, &c.a, nullptr);
        INFO(mla_last_error());
        REQUIRE(st == MLA_SUCCESS);
        const fake_rt_launch_record* r = fake_rt_launch(0);
        REQUIRE(r != nullptr);
        CHECK(std::string(r->symbol) == sym);
        CHECK(r->block[0] == kernel_threads(sym));
        CHECK(r->shared == table_smem(k.q, k.kv, k.m));
        CHECK(r->grid[0] == unsigned(c.sz.num_clusters));
        const mla_decode_params p = params_of(r);
        CHECK(p.kernel_heads == k.hk);
        CHECK(p.qk_batch_ratio == k.r);
        CHECK(p.num_heads == k.H);
        CHECK(p.page_size_log2 == 4);
        mla_context_destroy(ctx);
    }
}

TEST_CASE("decode launch: block_table form passes the table and its stride", "[decode]") {
    mla_context* ctx = make_ctx();
    Call c(2, 16, 1, 16, 100);
    std::vector<int32_t> bt(2 * 10, -1);
    c.a.kv_page_indices = nullptr;
    c.a.num_page_indices = 0;
    c.a.block_table = bt.data();
    c.a.block_table_stride = 10;
    REQUIRE(mla_decode_fwd(ctx, &c.a, nullptr) == MLA_SUCCESS);
    const mla_decode_params p = params_of(fake_rt_launch(0));
    CHECK(p.page_table == bt.data());
    CHECK(p.block_table_stride == 10);
    CHECK(p.num_page_indices == 0);
    mla_context_destroy(ctx);
}

TEST_CASE("decode launch: bad input launches nothing", "[decode]") {
    mla_context* ctx = make_ctx();
    Call c(4, 16, 1, 64, 500);
    const mla_decode_args good = c.a;
    mla_decode_args a;

    CHECK(mla_decode_fwd(nullptr, &good, nullptr) == MLA_ERROR_INVALID_ARGUMENT);
    CHECK(mla_decode_fwd(ctx, nullptr, nullptr) == MLA_ERROR_INVALID_ARGUMENT);
    a = good;
    a.struct_size = 0;
    expect_reject(ctx, a, MLA_ERROR_INVALID_ARGUMENT, "struct_size");
    a = good;
    a.q = nullptr;
    expect_reject(ctx, a, MLA_ERROR_INVALID_ARGUMENT, "q is NULL");
    a = good;
    a.q = static_cast<const char*>(good.q) + 2;
    expect_reject(ctx, a, MLA_ERROR_INVALID_ARGUMENT, "aligned");
    a = good;
    a.out = static_cast<char*>(good.out) + 8;
    expect_reject(ctx, a, MLA_ERROR_INVALID_ARGUMENT, "out");
    a = good;
    a.kv_cache = static_cast<const char*>(good.kv_cache) + 4;
    expect_reject(ctx, a, MLA_ERROR_INVALID_ARGUMENT, "kv_cache");
    a = good;
    a.kv_indptr = nullptr;
    expect_reject(ctx, a, MLA_ERROR_INVALID_ARGUMENT, "kv_indptr");
    a = good;
    a.kv_page_indices = nullptr;
    expect_reject(ctx, a, MLA_ERROR_INVALID_ARGUMENT, "kv_page_indices");
    a = good;
    a.q_stride_head = 500;
    expect_reject(ctx, a, MLA_ERROR_INVALID_ARGUMENT, "q strides");
    a = good;
    a.q_stride_head = 580;  // not a multiple of 16 bytes
    expect_reject(ctx, a, MLA_ERROR_INVALID_ARGUMENT, "multiples of 16 bytes");
    a = good;
    a.out_stride_head = 516;
    expect_reject(ctx, a, MLA_ERROR_INVALID_ARGUMENT, "out strides");
    a = good;
    a.kv_stride_page = 576;
    expect_reject(ctx, a, MLA_ERROR_INVALID_ARGUMENT, "kv_stride_page");
    a = good;
    a.page_size = 48;
    expect_reject(ctx, a, MLA_ERROR_INVALID_ARGUMENT, "page_size");
    a = good;
    a.softmax_scale = 0.f;
    expect_reject(ctx, a, MLA_ERROR_INVALID_ARGUMENT, "softmax_scale");
    a = good;
    a.softmax_scale = NAN;
    expect_reject(ctx, a, MLA_ERROR_INVALID_ARGUMENT, "softmax_scale");
    a = good;
    a.batch_size = 0;
    expect_reject(ctx, a, MLA_ERROR_INVALID_ARGUMENT, "batch_size");
    a = good;
    a.lse = reinterpret_cast<float*>(reinterpret_cast<char*>(c.lse.data()) + 1);
    expect_reject(ctx, a, MLA_ERROR_INVALID_ARGUMENT, "lse");

    // the plan against the call
    a = good;
    a.plan = nullptr;
    expect_reject(ctx, a, MLA_ERROR_INVALID_ARGUMENT, "plan");
    a = good;
    a.plan_params = nullptr;
    expect_reject(ctx, a, MLA_ERROR_INVALID_ARGUMENT, "plan_params");
    a = good;
    a.num_heads = 32;
    expect_reject(ctx, a, MLA_ERROR_INVALID_ARGUMENT, "num_heads = 16");
    a = good;
    a.batch_size = 3;
    expect_reject(ctx, a, MLA_ERROR_INVALID_ARGUMENT, "batch_size = 4");
    a = good;
    a.max_seqlen_q = 2;
    expect_reject(ctx, a, MLA_ERROR_INVALID_ARGUMENT, "max_seqlen_qo");
    a = good;
    a.causal = 0;
    expect_reject(ctx, a, MLA_ERROR_INVALID_ARGUMENT, "causal");
    a = good;
    a.kv_dtype = MLA_DTYPE_FP8_E4M3FN;
    a.kv_stride_page = 64 * 576;
    expect_reject(ctx, a, MLA_ERROR_INVALID_ARGUMENT, "kv_dtype");
    a = good;
    a.page_size = 16;
    a.kv_stride_page = 64 * 576;
    expect_reject(ctx, a, MLA_ERROR_INVALID_ARGUMENT, "page_size = 64");
    {
        mla_metadata_params other = c.mp;
        other.arch = "gfx950";
        a = good;
        a.plan_params = &other;
        expect_reject(ctx, a, MLA_ERROR_INVALID_ARGUMENT, "arch gfx950");
    }
    {
        mla_metadata_buffers short_plan = c.plan;
        short_plan.work_info_set_rows -= 1;
        a = good;
        a.plan = &short_plan;
        expect_reject(ctx, a, MLA_ERROR_BUFFER_TOO_SMALL, "work_info_set");
        short_plan = c.plan;
        short_plan.work_indptr_len = 10;
        a.plan = &short_plan;
        expect_reject(ctx, a, MLA_ERROR_BUFFER_TOO_SMALL, "work_indptr");
    }
    if (c.sz.workspace_bytes > 0) {
        a = good;
        a.workspace_bytes = size_t(c.sz.workspace_bytes) - 1;
        expect_reject(ctx, a, MLA_ERROR_BUFFER_TOO_SMALL, "workspace");
        a = good;
        a.workspace = static_cast<char*>(good.workspace) + 4;
        expect_reject(ctx, a, MLA_ERROR_INVALID_ARGUMENT, "workspace");
    }
    // dtypes the table / head plan cannot run
    a = good;
    a.q_dtype = MLA_DTYPE_FP16;
    expect_reject(ctx, a, MLA_ERROR_UNSUPPORTED_SHAPE, "bf16/bf16, bf16/fp8, fp8/fp8");
    a = good;
    a.kv_dtype = MLA_DTYPE_FP8_E4M3FNUZ;
    expect_reject(ctx, a, MLA_ERROR_UNSUPPORTED_SHAPE, "fp8_fnuz");
    mla_context_destroy(ctx);
}

TEST_CASE("decode launch: round-robin context parallel launches the cprr row with W, rank and "
          "g_kv_indptr", "[decode][cp]") {
    struct K {
        int H, L;
        mla_dtype q, kv;
        int W, rank, m;
    };
    const K ks[] = {
        {16, 1, MLA_DTYPE_BF16, MLA_DTYPE_BF16, 2, 1, 16},
        {16, 4, MLA_DTYPE_BF16, MLA_DTYPE_FP8_E4M3FN, 2, 0, 64},
        {128, 2, MLA_DTYPE_FP8_E4M3FN, MLA_DTYPE_FP8_E4M3FN, 4, 3, 64},
        {32, 1, MLA_DTYPE_BF16, MLA_DTYPE_BF16, 3, 2, 32},
    };
    for (const K& k : ks) {
        INFO("heads " << k.H << " qlen " << k.L << " W " << k.W << " rank " << k.rank);
        mla_context* ctx = make_ctx();
        // kv_len 2000 over 132 clusters: the plan splits, so the reducer runs after the decode
        Call plain(3, k.H, k.L, 16, 2000, k.q, k.kv);
        Call c(3, k.H, k.L, 16, 2000, k.q, k.kv, 1, true, k.W, k.rank);
        REQUIRE(c.mp.is_cp_round_robin == 1);
        REQUIRE(mla_decode_fwd(ctx, &plain.a, nullptr) == MLA_SUCCESS);
        const int n_plain = fake_rt_launch_count();
        const mla_status st = mla_decode_fwd(ctx, &c.a, nullptr);
        INFO(mla_last_error());
        REQUIRE(st == MLA_SUCCESS);
        REQUIRE(fake_rt_launch_count() > n_plain);
        const fake_rt_launch_record* r0 = fake_rt_launch(0);
        const fake_rt_launch_record* r = fake_rt_launch(n_plain);
        // the same kernel and launch values as without context parallel
        CHECK(std::string(r->symbol) == table_symbol(k.q, k.kv, k.m));
        CHECK(std::string(r0->symbol) == table_symbol(k.q, k.kv, k.m));
        CHECK(r->grid[0] == unsigned(c.sz.num_clusters));
        CHECK(r->block[0] == r0->block[0]);
        CHECK(r->shared == r0->shared);
        const mla_decode_params p = params_of(r);
        CHECK(p.cp_world_size == k.W);
        CHECK(p.cp_rank == k.rank);
        CHECK(p.g_kv_indptr == c.g.data());
        CHECK(p.causal == 1);
        CHECK(p.out_fp32 == 0);
        CHECK(p.q == c.a.q);
        CHECK(p.kv_indptr == c.kvi.data());
        CHECK(p.page_table == c.pages.data());
        CHECK(p.work_info_set == c.plan.work_info_set);
        CHECK(p.batch_size == 3);
        CHECK(p.num_heads == k.H);
        // the params bytes: W, rank and the pointer at their offsets in the packed block
        int32_t w_bytes = 0, rank_bytes = 0;
        const int32_t* g_bytes = nullptr;
        std::memcpy(&w_bytes, r->args + offsetof(mla_decode_params, cp_world_size), 4);
        std::memcpy(&rank_bytes, r->args + offsetof(mla_decode_params, cp_rank), 4);
        std::memcpy(&g_bytes, r->args + offsetof(mla_decode_params, g_kv_indptr),
                    sizeof g_bytes);
        CHECK(w_bytes == k.W);
        CHECK(rank_bytes == k.rank);
        CHECK(g_bytes == c.g.data());
        // the reducer is the same as without context parallel (it merges splits of this rank)
        CHECK(fake_rt_launch_count() - n_plain == n_plain);
        if (c.sz.partial_rows > 0) {
            REQUIRE(fake_rt_launch_count() == n_plain + 2);
            CHECK(std::string(fake_rt_launch(n_plain + 1)->symbol) == fake_rt_launch(1)->symbol);
            CHECK(fake_rt_launch(n_plain + 1)->grid[1] == fake_rt_launch(1)->grid[1]);
        }
        mla_context_destroy(ctx);
    }
}

TEST_CASE("decode launch: the row cache keeps cprr and plain rows apart", "[decode][cp]") {
    mla_context* ctx = make_ctx();
    Call plain(2, 16, 2, 64, 500);
    Call cp(2, 16, 2, 64, 500, MLA_DTYPE_BF16, MLA_DTYPE_BF16, 1, true, 2, 1);
    for (int round = 0; round < 2; ++round) {
        const mla::launch::DecodeLaunch a = mla::launch::check_decode(ctx, plain.a);
        const mla::launch::DecodeLaunch b = mla::launch::check_decode(ctx, cp.a);
        CHECK(a.decode_row->get_int("cprr") == 0);
        CHECK(b.decode_row->get_int("cprr") == 1);
        CHECK(b.decode_row->get_int("causal") == 1);
        CHECK(a.decode_row->knl_name == b.decode_row->knl_name);
        CHECK(a.decode.cp_world_size == 1);
        CHECK(b.decode.cp_world_size == 2);
        CHECK(b.decode.cp_rank == 1);
    }
    CHECK(fake_rt_launch_count() == 0);
    mla_context_destroy(ctx);
}

TEST_CASE("decode launch: context-parallel bad input launches nothing", "[decode][cp]") {
    mla_context* ctx = make_ctx();
    Call c(3, 16, 2, 16, 300, MLA_DTYPE_BF16, MLA_DTYPE_BF16, 1, true, 2, 1);
    Call plain(3, 16, 2, 16, 300);
    const mla_decode_args good = c.a;
    REQUIRE(mla_decode_fwd(ctx, &good, nullptr) == MLA_SUCCESS);  // the baseline runs
    mla_decode_args a;

    a = good;
    a.cp_world_size = 0;
    expect_reject(ctx, a, MLA_ERROR_INVALID_ARGUMENT, "cp_world_size 0 < 1");
    a = good;
    a.cp_world_size = -3;
    expect_reject(ctx, a, MLA_ERROR_INVALID_ARGUMENT, "cp_world_size -3 < 1");
    a = good;
    a.cp_rank = 2;
    expect_reject(ctx, a, MLA_ERROR_INVALID_ARGUMENT, "cp_rank 2 is outside [0, cp_world_size = 2)");
    a = good;
    a.cp_rank = -1;
    expect_reject(ctx, a, MLA_ERROR_INVALID_ARGUMENT, "cp_rank -1 is outside");
    a = good;
    a.g_kv_indptr = nullptr;
    expect_reject(ctx, a, MLA_ERROR_INVALID_ARGUMENT, "needs g_kv_indptr");
    a = good;
    a.g_kv_indptr = reinterpret_cast<const int32_t*>(reinterpret_cast<const char*>(c.g.data()) + 2);
    expect_reject(ctx, a, MLA_ERROR_INVALID_ARGUMENT, "g_kv_indptr");
    {
        // causal = 0 with W > 1 (plan_params say causal 0 too, so the plan check cannot be first)
        mla_metadata_params nc = c.mp;
        nc.causal = 0;
        a = good;
        a.causal = 0;
        a.plan_params = &nc;
        expect_reject(ctx, a, MLA_ERROR_INVALID_ARGUMENT, "causal only: causal must be 1");
    }
    // W > 1 with a plan made without is_cp_round_robin (its causal trim drops visible keys)
    a = good;
    a.plan = &plain.plan;
    a.plan_params = &plain.mp;
    expect_reject(ctx, a, MLA_ERROR_INVALID_ARGUMENT, "is_cp_round_robin = 0");
    // a cprr plan with W = 1: a forgotten cp_world_size
    a = good;
    a.cp_world_size = 1;
    a.cp_rank = 0;
    expect_reject(ctx, a, MLA_ERROR_INVALID_ARGUMENT, "is_cp_round_robin = 1 but cp_world_size is 1");
    a = good;
    a.cp_world_size = 1;
    a.cp_rank = 1;  // rank checked against W = 1 first
    expect_reject(ctx, a, MLA_ERROR_INVALID_ARGUMENT, "cp_rank 1 is outside [0, cp_world_size = 1)");
    // W = 1 ignores g_kv_indptr: a plain call with one given still runs, and passes NULL
    a = plain.a;
    a.g_kv_indptr = c.g.data();
    const int before = fake_rt_launch_count();
    REQUIRE(mla_decode_fwd(ctx, &a, nullptr) == MLA_SUCCESS);
    REQUIRE(fake_rt_launch_count() > before);
    const mla_decode_params p = params_of(fake_rt_launch(before));
    CHECK(p.cp_world_size == 1);
    CHECK(p.g_kv_indptr == nullptr);
    mla_context_destroy(ctx);
}

TEST_CASE("decode launch: a caller built before the cprr fields gets W = 1", "[decode][cp]") {
    // struct_size ends before g_kv_indptr: whatever lies beyond is not read (W = 1, rank 0).
    mla_context* ctx = make_ctx();
    Call c(2, 16, 1, 64, 300);
    mla_decode_args a = c.a;
    a.struct_size = offsetof(mla_decode_args, g_kv_indptr);
    a.g_kv_indptr = reinterpret_cast<const int32_t*>(uintptr_t(0x3));  // garbage, never read
    a.cp_world_size = -7;
    a.cp_rank = 99;
    const mla_status st = mla_decode_fwd(ctx, &a, nullptr);
    INFO(mla_last_error());
    REQUIRE(st == MLA_SUCCESS);
    const mla_decode_params p = params_of(fake_rt_launch(0));
    CHECK(p.cp_world_size == 1);
    CHECK(p.cp_rank == 0);
    CHECK(p.g_kv_indptr == nullptr);
    // ... and a cprr plan from such a caller is refused (it cannot have set W)
    Call cp(2, 16, 1, 64, 300, MLA_DTYPE_BF16, MLA_DTYPE_BF16, 1, true, 2, 0);
    a = cp.a;
    a.struct_size = offsetof(mla_decode_args, g_kv_indptr);
    expect_reject(ctx, a, MLA_ERROR_INVALID_ARGUMENT, "is_cp_round_robin = 1");
    // the INIT macro's defaults
    const mla_decode_args init = MLA_DECODE_ARGS_INIT;
    CHECK(init.struct_size == sizeof(mla_decode_args));
    CHECK(init.g_kv_indptr == nullptr);
    CHECK(init.cp_world_size == 1);
    CHECK(init.cp_rank == 0);
    CHECK(init.error_flag == nullptr);
    mla_context_destroy(ctx);
}

namespace {

// The int32 at `off` of a launch's packed params bytes.
int32_t param_i32(const fake_rt_launch_record* r, size_t off) {
    int32_t v = -1;
    REQUIRE(off + 4 <= r->args_bytes);
    std::memcpy(&v, r->args + off, 4);
    return v;
}

}  // namespace

TEST_CASE("decode launch: fp32 out sets out_fp32 in the decode and the reduce params",
          "[decode][out_dtype]") {
    // Same kernels, grid, block and shared memory as bf16 out: out_dtype is a run-time flag of
    // both kernels (params out_fp32), never a table key. kv_len 2000 over 132 clusters splits,
    // so the reducer (which then writes fp32 out) follows the decode.
    struct K {
        int H, L;
        mla_dtype q, kv;
        int m, W, rank;
    };
    const K ks[] = {
        {16, 1, MLA_DTYPE_BF16, MLA_DTYPE_BF16, 16, 1, 0},
        {16, 2, MLA_DTYPE_BF16, MLA_DTYPE_FP8_E4M3FN, 32, 1, 0},
        {128, 1, MLA_DTYPE_BF16, MLA_DTYPE_BF16, 64, 1, 0},
        {64, 1, MLA_DTYPE_FP8_E4M3FN, MLA_DTYPE_FP8_E4M3FN, 64, 1, 0},
        {16, 1, MLA_DTYPE_BF16, MLA_DTYPE_BF16, 16, 2, 1},        // a context-parallel rank
        {128, 2, MLA_DTYPE_FP8_E4M3FN, MLA_DTYPE_FP8_E4M3FN, 64, 4, 3},
    };
    int reduced = 0;
    for (const K& k : ks) {
        INFO("heads " << k.H << " qlen " << k.L << " W " << k.W);
        mla_context* ctx = make_ctx();
        Call c(3, k.H, k.L, 16, 2000, k.q, k.kv, 1, true, k.W, k.rank);
        mla_decode_args bf = c.a;
        REQUIRE(bf.out_dtype == MLA_DTYPE_BF16);  // MLA_DECODE_ARGS_INIT's default
        REQUIRE(mla_decode_fwd(ctx, &bf, nullptr) == MLA_SUCCESS);
        const int n_bf = fake_rt_launch_count();
        mla_decode_args f = c.a;
        f.out_dtype = MLA_DTYPE_FP32;
        const mla_status st = mla_decode_fwd(ctx, &f, nullptr);
        INFO(mla_last_error());
        REQUIRE(st == MLA_SUCCESS);
        REQUIRE(fake_rt_launch_count() == 2 * n_bf);
        const fake_rt_launch_record* r0 = fake_rt_launch(0);
        const fake_rt_launch_record* r = fake_rt_launch(n_bf);
        CHECK(std::string(r->symbol) == table_symbol(k.q, k.kv, k.m));
        CHECK(std::string(r->symbol) == r0->symbol);
        CHECK(r->grid[0] == r0->grid[0]);
        CHECK(r->block[0] == r0->block[0]);
        CHECK(r->shared == r0->shared);
        // the params bytes: out_fp32 at its offset, 0 for the bf16 call, 1 for the fp32 call
        CHECK(param_i32(r0, offsetof(mla_decode_params, out_fp32)) == 0);
        CHECK(param_i32(r, offsetof(mla_decode_params, out_fp32)) == 1);
        const mla_decode_params p = params_of(r);
        CHECK(p.out == c.a.out);
        CHECK(p.out_stride_token == int64_t(k.H) * 512);  // elements (floats) either way
        CHECK(p.out_stride_head == 512);
        CHECK(p.cp_world_size == k.W);
        CHECK(p.cp_rank == (k.W > 1 ? k.rank : 0));
        // every other byte of the params equals the bf16 call's
        mla_decode_params pb = params_of(r0);
        pb.out_fp32 = 1;
        pb.reduce.out_fp32 = 1;  // (the fused reduction's copy of the reducer's params)
        CHECK(p.reduce.out_fp32 == 1);
        CHECK(std::memcmp(&pb, &p, sizeof p) == 0);
        if (c.sz.partial_rows > 0) {
            REQUIRE(n_bf == 2);
            const fake_rt_launch_record* rr0 = fake_rt_launch(1);
            const fake_rt_launch_record* rr = fake_rt_launch(n_bf + 1);
            CHECK(std::string(rr->symbol) == rr0->symbol);  // the same reducer writes both
            REQUIRE(rr->args_bytes == sizeof(mla_reduce_params));
            CHECK(param_i32(rr0, offsetof(mla_reduce_params, out_fp32)) == 0);
            CHECK(param_i32(rr, offsetof(mla_reduce_params, out_fp32)) == 1);
            mla_reduce_params a0, a1;
            std::memcpy(&a0, rr0->args, sizeof a0);
            std::memcpy(&a1, rr->args, sizeof a1);
            CHECK(a1.out == c.a.out);
            CHECK(a1.out_stride_token == int64_t(k.H) * 512);
            CHECK(a1.out_stride_head == 512);
            a0.out_fp32 = 1;
            CHECK(std::memcmp(&a0, &a1, sizeof a1) == 0);
            CHECK(rr->grid[0] == rr0->grid[0]);
            CHECK(rr->grid[1] == rr0->grid[1]);
            ++reduced;
        }
        // check_decode sets both flags
        const mla::launch::DecodeLaunch d = mla::launch::check_decode(ctx, f);
        CHECK(d.decode.out_fp32 == 1);
        CHECK(d.reduce.out_fp32 == 1);
        const mla::launch::DecodeLaunch d0 = mla::launch::check_decode(ctx, bf);
        CHECK(d0.decode.out_fp32 == 0);
        CHECK(d0.reduce.out_fp32 == 0);
        mla_context_destroy(ctx);
    }
    CHECK(reduced >= 4);  // the reducer path is exercised with fp32 out
}

TEST_CASE("decode launch: out strides and alignment are checked in out_dtype's element size",
          "[decode][out_dtype]") {
    mla_context* ctx = make_ctx();
    Call c(2, 16, 1, 64, 300);
    mla_decode_args f = c.a;
    f.out_dtype = MLA_DTYPE_FP32;
    mla_decode_args a;
    // 516 elements: 2064 bytes as fp32 (a multiple of 16: accepted), 1032 as bf16 (refused)
    a = f;
    a.out_stride_head = 516;
    a.out_stride_token = 16 * 516;
    {
        const int before = fake_rt_launch_count();
        REQUIRE(mla_decode_fwd(ctx, &a, nullptr) == MLA_SUCCESS);
        REQUIRE(fake_rt_launch_count() > before);
        const mla_decode_params p = params_of(fake_rt_launch(before));
        CHECK(p.out_stride_head == 516);
        CHECK(p.out_stride_token == 16 * 516);
        CHECK(p.out_fp32 == 1);
    }
    a.out_dtype = MLA_DTYPE_BF16;
    expect_reject(ctx, a, MLA_ERROR_INVALID_ARGUMENT, "multiples of 16 bytes (8 elements of bf16 out)");
    // 514 / 8228 elements: 2056 / 32912 bytes as fp32, not multiples of 16
    a = f;
    a.out_stride_head = 514;
    expect_reject(ctx, a, MLA_ERROR_INVALID_ARGUMENT, "multiples of 16 bytes (4 elements of fp32 out)");
    a = f;
    a.out_stride_token = 16 * 512 + 2;
    expect_reject(ctx, a, MLA_ERROR_INVALID_ARGUMENT, "out strides (token 8194, head 512)");
    // bf16 strides that are multiples of 8 elements stay fine for fp32 (multiples of 4)
    a = f;
    a.out_stride_head = 520;
    a.out_stride_token = 16 * 520;
    CHECK(mla_decode_fwd(ctx, &a, nullptr) == MLA_SUCCESS);
    // overlap is in elements whatever the dtype
    a = f;
    a.out_stride_head = 508;
    expect_reject(ctx, a, MLA_ERROR_INVALID_ARGUMENT, "overlap rows of 512 elements");
    // out 16-byte aligned for fp32 too (a float-aligned pointer is not enough)
    for (int off : {4, 8, 12}) {
        a = f;
        a.out = static_cast<char*>(f.out) + off;
        expect_reject(ctx, a, MLA_ERROR_INVALID_ARGUMENT, "out (");
    }
    a = f;
    a.out = nullptr;
    expect_reject(ctx, a, MLA_ERROR_INVALID_ARGUMENT, "out is NULL");
    mla_context_destroy(ctx);
}

TEST_CASE("decode launch: an out_dtype other than bf16 / fp32 launches nothing",
          "[decode][out_dtype]") {
    mla_context* ctx = make_ctx();
    Call c(2, 16, 1, 64, 2000);  // splits: neither kernel may run
    struct Bad {
        int value;
        const char* words;
    };
    const Bad bad[] = {
        {MLA_DTYPE_FP16, "out_dtype 1 (fp16) is not MLA_DTYPE_BF16 (0) or MLA_DTYPE_FP32 (5)"},
        {MLA_DTYPE_FP8_E4M3FN, "out_dtype 2 (fp8)"},
        {MLA_DTYPE_FP8_E4M3FNUZ, "out_dtype 3 (fp8_fnuz)"},
        {MLA_DTYPE_BYTE, "out_dtype 4 (byte)"},
        {6, "out_dtype 6 (unknown)"},
        {77, "out_dtype 77 (unknown)"},
        {-1, "out_dtype -1 (unknown)"},
    };
    for (const Bad& b : bad) {
        mla_decode_args a = c.a;
        a.out_dtype = static_cast<mla_dtype>(b.value);
        INFO("out_dtype " << b.value);
        expect_reject(ctx, a, MLA_ERROR_INVALID_ARGUMENT, b.words);
    }
    CHECK(fake_rt_launch_count() == 0);
    // a context-parallel call too (out_dtype is checked whatever W)
    Call cp(2, 16, 1, 64, 2000, MLA_DTYPE_BF16, MLA_DTYPE_BF16, 1, true, 2, 1);
    mla_decode_args a = cp.a;
    a.out_dtype = MLA_DTYPE_FP16;
    expect_reject(ctx, a, MLA_ERROR_INVALID_ARGUMENT, "out_dtype 1");
    CHECK(fake_rt_launch_count() == 0);
    mla_context_destroy(ctx);
}

TEST_CASE("decode launch: a caller built before out_dtype gets bf16 out", "[decode][out_dtype]") {
    // MLA_DTYPE_BF16 is 0, so a zeroed field would mean bf16 as well; the INIT macro says it.
    static_assert(MLA_DTYPE_BF16 == 0, "a zeroed out_dtype must mean bf16");
    const mla_decode_args init = MLA_DECODE_ARGS_INIT;
    CHECK(init.out_dtype == MLA_DTYPE_BF16);
    CHECK(init.struct_size == sizeof(mla_decode_args));
    CHECK(offsetof(mla_decode_args, out_dtype) == offsetof(mla_decode_args, cp_rank) + 4);
    mla_context* ctx = make_ctx();
    for (int cprr = 0; cprr < 2; ++cprr) {
        INFO("cprr " << cprr);
        Call c(2, 16, 1, 64, 2000, MLA_DTYPE_BF16, MLA_DTYPE_BF16, 1, true, cprr ? 2 : 1, cprr);
        for (int garbage : {int(MLA_DTYPE_FP32), 77, -5}) {
            mla_decode_args a = c.a;
            a.struct_size = offsetof(mla_decode_args, out_dtype);  // the previous header's size
            a.out_dtype = static_cast<mla_dtype>(garbage);        // beyond struct_size: not read
            const int before = fake_rt_launch_count();
            const mla_status st = mla_decode_fwd(ctx, &a, nullptr);
            INFO(mla_last_error());
            REQUIRE(st == MLA_SUCCESS);
            REQUIRE(fake_rt_launch_count() > before);
            const fake_rt_launch_record* r = fake_rt_launch(before);
            CHECK(param_i32(r, offsetof(mla_decode_params, out_fp32)) == 0);
            CHECK(params_of(r).cp_world_size == (cprr ? 2 : 1));  // the cprr fields still read
            for (int i = before + 1; i < fake_rt_launch_count(); ++i)
                CHECK(param_i32(fake_rt_launch(i), offsetof(mla_reduce_params, out_fp32)) == 0);
        }
    }
    mla_context_destroy(ctx);
}

TEST_CASE("decode launch: fp8 needs its scales", "[decode]") {
    mla_context* ctx = make_ctx();
    Call c(2, 16, 1, 64, 200, MLA_DTYPE_FP8_E4M3FN, MLA_DTYPE_FP8_E4M3FN);
    mla_decode_args a = c.a;
    a.q_scale = nullptr;
    expect_reject(ctx, a, MLA_ERROR_INVALID_ARGUMENT, "q_scale");
    a = c.a;
    a.kv_scale = nullptr;
    expect_reject(ctx, a, MLA_ERROR_INVALID_ARGUMENT, "kv_scale");
    a = c.a;
    a.q_stride_head = 584;  // 584 bytes: not a multiple of 16
    expect_reject(ctx, a, MLA_ERROR_INVALID_ARGUMENT, "multiples of 16 bytes");
    CHECK(fake_rt_launch_count() == 0);
    REQUIRE(mla_decode_fwd(ctx, &c.a, nullptr) == MLA_SUCCESS);
    CHECK(std::string(fake_rt_launch(0)->symbol) == table_symbol(MLA_DTYPE_FP8_E4M3FN, MLA_DTYPE_FP8_E4M3FN, 16));
    mla_context_destroy(ctx);
}

TEST_CASE("decode launch: a runtime launch failure is MLA_ERROR_LAUNCH", "[decode]") {
    // the shipped rows launch the decode programmatically (cuLaunchKernelEx); a plain launch
    // (cuLaunchKernel) is what a row with launch_pdl 0 or a driver without the attribute takes
    for (const char* entry : {"cuLaunchKernelEx", "cuLaunchKernel"}) {
        INFO(entry);
        fake_rt_reset();
        mla_context* ctx = make_ctx();
        Call c(2, 16, 1, 64, 200);
        fake_rt_fail(entry, 719);  // CUDA_ERROR_LAUNCH_FAILED
        if (std::string(entry) == "cuLaunchKernel") fake_rt_fail("cuLaunchKernelEx", 801);  // NOT_SUPPORTED
        const mla_status st = mla_decode_fwd(ctx, &c.a, nullptr);
        CHECK(st == MLA_ERROR_LAUNCH);
        // the failing entry point is named: "cuLaunchKernelEx(...)" for the programmatic launch,
        // "cuLaunchKernel" without the Ex for the plain one
        const std::string msg = mla_last_error();
        INFO(msg);
        CHECK(msg.find(entry) != std::string::npos);
        CHECK((msg.find("cuLaunchKernelEx") != std::string::npos) == (std::string(entry) == "cuLaunchKernelEx"));
        fake_rt_fail("cuLaunchKernel", 0);
        fake_rt_fail("cuLaunchKernelEx", 0);
        mla_context_destroy(ctx);
    }
}

TEST_CASE("decode table: every row's launch values match the kernel build", "[decode]") {
    std::ifstream in(tables_src() + "/decode/mla_decode.csv");
    REQUIRE(in.good());
    std::string header;
    std::getline(in, header);
    CHECK(header ==
          "qType,kvType,Gqa,ps,qSeqLen,prefill,causal,lse,cprr,launch_threads,launch_smem,knl_name,co_name,launch_kv_tma,"
          "launch_pdl,launch_kv_tma_l2,fused");
    int rows = 0;
    std::map<std::string, std::string> plain, cprr;  // key without cprr -> launch columns
    std::map<std::string, std::string> fused;        // fused = 1 rows: key -> launch columns
    std::map<std::string, std::string> unfused;      // fused = 0 rows: the same
    for (const std::vector<std::string>& f0 : decode_rows()) {
        std::string line = f0[0];
        for (size_t i = 1; i < f0.size(); ++i) line += "," + f0[i];
        REQUIRE(f0.size() == 17);
        // key fused = 1: the bf16-KV wgmma kernels of 16 and 32 rows with the fused reduction,
        // *_fused, each with the launch values of its fused = 0 row (checked after the loop)
        REQUIRE((f0[16] == "0" || f0[16] == "1"));
        if (f0[16] == "1") {
            INFO(line);
            CHECK(f0[0] == "bf16");
            CHECK(f0[1] == "bf16");
            CHECK((f0[2] == "16" || f0[2] == "32"));
            CHECK(f0[8] == "0");
            CHECK(f0[11] == "mla_decode_wg_bf16_bf16_m" + f0[2] + "_fused");
            std::string key = f0[0], rest = f0[9];
            for (int i : {1, 2, 3, 4, 5, 6, 7, 8}) key += "," + f0[i];
            for (int i : {10, 12, 13, 14, 15}) rest += "," + f0[i];
            fused[key] = rest;
            continue;
        }
        const std::vector<std::string>& f = f0;
        const int m = std::stoi(f[2]);
        const bool kv8 = f[1] == "fp8";
        INFO(line);
        // every row names a wgmma kernel: mla_decode_qm_* (decode_qm.cuh), mla_decode_ra_*
        // (decode_ra.cuh: fp8 KV with fp8 or bf16 Q, 16-row tiles) or mla_decode_wg_* (decode_wgmma.cuh), with
        // that family's launch values; the mma.sync family stays built as the fallback and is
        // checked by the launch code if a row names it
        const bool qm = f[11].rfind("mla_decode_qm_", 0) == 0;
        const bool ra = f[1] == "fp8" && m == 16;
        CHECK((ra || f[11].rfind("mla_decode_ra_", 0) != 0));
        const std::string fam = qm ? "mla_decode_qm_" : ra ? "mla_decode_ra_" : "mla_decode_wg_";
        // the three-warpgroup build (*_ws, 384 threads; decode_qm8_ws.cuh, session 21) is only an
        // fp8 qm build, in the cubin only with -DMLA_QM8_WS=1 (measured slower, session 22): no
        // shipped row names it
        const bool ws = kernel_threads(f[11]) == 384u;
        CHECK((!ws || (qm && f[0] == "fp8" && f[1] == "fp8" && m == 64)));
        CHECK(!ws);
        CHECK(std::stoi(f[9]) == (ws   ? mla_decode_qm_ws_threads()
                                  : qm ? mla_decode_qm_threads()
                                  : ra ? mla_decode_ra_threads()
                                       : mla_decode_wg_threads()));
        CHECK(std::stoi(f[10]) == (qm   ? mla_decode_qm_smem_bytes(kv8)
                                   : ra ? mla_decode_ra_smem_bytes(m, f[0] == "fp8")
                                        : mla_decode_wg_smem_bytes(m, kv8)));
        CHECK(std::stoi(f[10]) <= 227 * 1024);
        // the family's build for the row, or for bf16 KV at 16 / 32 rows its *_fused build (which
        // runs as the plain kernel without tile counters; the m32 rows name it: session 17)
        CHECK((f[11] == fam + f[0] + "_" + f[1] + "_m" + f[2] + (ws ? "_ws" : "") ||
               (f[0] == "bf16" && f[1] == "bf16" && !qm && f[11] == fam + "bf16_bf16_m" + f[2] + "_fused")));
        CHECK(f[12] == fam + f[0] + "_" + f[1] + ".cubin");
        // TMA loads: the bf16-KV wgmma kernels (wg 16 / 32 rows, qm 64) with page boxes (2: one 4-D
        // box a tile at pages >= 64; session 27) and the qm fp8 kernel (fp8 Q and KV, 64 rows:
        // decode_qm8.cuh) with a box per 64-column block (1), and the register-A kernels with the
        // same fp8 boxes where their ring holds them (MLA_RA_VSWAP 3, or MLA_RA_SSK for fp8 Q;
        // decode_ra.cuh; session 40)
        CHECK(f[13] == (f[0] == "bf16" && f[1] == "bf16" && f[11].rfind("mla_decode_ra_", 0) != 0 ? "2"
                        : f[0] == "fp8" && f[1] == "fp8" && qm                                     ? "1"
                        : ra && (MLA_RA_VSWAP == 3 || (f[0] == "fp8" && MLA_RA_SSK))              ? "1"
                                                                                                    : "0"));
        // every decode kernel starts with griddepcontrol.wait: launched as a programmatic dependent launch
        CHECK(f[14] == "1");
        // the TMA map's L2 promotion: none on every row (session 10: the 256-byte promotion cost
        // the box stream 4-9% against the read ceiling; docs/performance.md, session 10 calls 1-2)
        CHECK(f[15] == "0");
        // cprr (round-robin context parallel) rows: causal only, the same kernel and launch
        // values as the cprr = 0 row of the key (the kernel reads cp_world_size at run time)
        CHECK((f[8] == "0" || f[8] == "1"));
        if (f[8] == "1") CHECK(f[6] == "1");
        std::string key = f[0];
        for (int i : {1, 2, 3, 4, 5, 6, 7}) key += "," + f[i];
        std::string rest = f[9];
        for (int i : {10, 11, 12, 13, 14, 15}) rest += "," + f[i];
        (f[8] == "1" ? cprr : plain)[key] = rest;
        std::string rest_no_kernel = f[9];
        for (int i : {10, 12, 13, 14, 15}) rest_no_kernel += "," + f[i];
        unfused[key + "," + f[8]] = rest_no_kernel;
        ++rows;
    }
    // 3 dtype pairs x 3 row tiles x causal x lse, plus cprr for the 18 causal ones
    CHECK(rows == 54);
    CHECK(plain.size() == 36);
    CHECK(cprr.size() == 18);
    // fused = 1: bf16 / bf16 x 2 row tiles x causal x lse, each with its fused = 0 row's launch
    // values; no cprr rows yet (context parallel with tile counters runs the reducer: the fused
    // kernels have not run a round-robin shard on a GPU)
    CHECK(fused.size() == 8);
    for (const auto& kv : fused) {
        INFO(kv.first);
        const auto it = unfused.find(kv.first);
        REQUIRE(it != unfused.end());
        CHECK(it->second == kv.second);
    }
    for (const auto& kv : plain) {
        INFO(kv.first);
        const bool causal = kv.first.substr(kv.first.size() - 3, 1) == "1";
        const auto it = cprr.find(kv.first);
        CHECK((it != cprr.end()) == causal);
        if (it != cprr.end()) CHECK(it->second == kv.second);
    }
}

// A table whose rows name the mma.sync fallback kernels: their launch values are checked against
// decode_params.h's mla_decode_warps / mla_decode_smem_bytes (not the wgmma family's).
TEST_CASE("decode launch: rows naming the mma.sync fallback launch it with its own values", "[decode]") {
    for (int bad = 0; bad < 2; ++bad) {
        // one root per table (tables are cached per root)
        std::ostringstream t;
        t << "qType,kvType,Gqa,ps,qSeqLen,prefill,causal,lse,cprr,launch_threads,launch_smem,knl_name,co_name\n";
        for (int lse = 0; lse < 2; ++lse)
            t << "bf16,bf16,16,1,0,0,1," << lse << ",0,256,"
              << (bad ? mla_decode_wg_smem_bytes(16, false) : mla_decode_smem_bytes(16, false))
              << ",mla_decode_bf16_bf16_m16,mla_decode_bf16_bf16.cubin\n";
        const std::string root = fake_root::sm90_decode_root(tables_src(), t.str());
        REQUIRE(!root.empty());
        mla_context* ctx = fake_test::fake_context(root);
        Call c(2, 16, 1, 64, 200);
        const mla_status st = mla_decode_fwd(ctx, &c.a, nullptr);
        INFO(mla_last_error());
        if (bad) {
            CHECK(st == MLA_ERROR_TABLE);
            CHECK(fake_rt_launch_count() == 0);
        } else {
            REQUIRE(st == MLA_SUCCESS);
            CHECK(std::string(fake_rt_launch(0)->symbol) == "mla_decode_bf16_bf16_m16");
            CHECK(fake_rt_launch(0)->shared == unsigned(mla_decode_smem_bytes(16, false)));
            // the fallback writes bf16 only: fp32 out is refused before anything is launched
            const int before = fake_rt_launch_count();
            mla_decode_args f = c.a;
            f.out_dtype = MLA_DTYPE_FP32;
            CHECK(mla_decode_fwd(ctx, &f, nullptr) == MLA_ERROR_UNSUPPORTED_SHAPE);
            const std::string msg = mla_last_error();
            CHECK(msg.find("out_dtype fp32 is not supported by mla_decode_bf16_bf16_m16") != std::string::npos);
            CHECK(msg.find("mma.sync fallback") != std::string::npos);
            CHECK(fake_rt_launch_count() == before);
        }
        mla_context_destroy(ctx);
    }
}

// mla_reduce.csv's launch values decide the reducer launch: launch_pdl 0 launches it plainly
// (cuLaunchKernel), 1 as a programmatic dependent launch; a row that breaks its kernel's launch
// contract (reduce_params.h: mla_reduce_bf16 4 units per CTA on 128..512 threads, the wide one 1
// on 512, the slim one 1 on 128 (grid y M x 8 eighths, not M x 4 quarters), mla_reduce_tiles_bf16
// 0 (whole tiles) on 128..512), a launch_pdl other than 0 / 1 or an unknown reducer kernel is a
// table error and nothing is launched.
TEST_CASE("decode launch: the reducer row's launch_pdl and launch_units_per_cta", "[decode]") {
    struct K {
        const char* row;  // the spread = 1 row (b = 1 at 32K splits one tile: spread 1)
        mla_status st;
        int programmatic;
        unsigned grid_y;
        const char* msg;  // for an error: a piece of the message
    };
    const K ks[] = {
        {"reduce,bf16,1,512,1,0,mla_reduce_wide_bf16,mla_reduce.cubin", MLA_SUCCESS, 0, 64u, ""},
        {"reduce,bf16,1,512,1,1,mla_reduce_wide_bf16,mla_reduce.cubin", MLA_SUCCESS, 1, 64u, ""},
        {"reduce,bf16,1,512,4,1,mla_reduce_bf16,mla_reduce.cubin", MLA_SUCCESS, 1, 16u, ""},
        {"reduce,bf16,1,512,4,1,mla_reduce_wide_bf16,mla_reduce.cubin", MLA_ERROR_TABLE, 0, 0u,
         "mla_reduce_wide_bf16 takes launch_units_per_cta 1"},
        {"reduce,bf16,1,512,2,1,mla_reduce_wide_bf16,mla_reduce.cubin", MLA_ERROR_TABLE, 0, 0u, "the row gives 2 and 512"},
        {"reduce,bf16,1,256,1,1,mla_reduce_wide_bf16,mla_reduce.cubin", MLA_ERROR_TABLE, 0, 0u, "the row gives 1 and 256"},
        {"reduce,bf16,1,512,1,2,mla_reduce_wide_bf16,mla_reduce.cubin", MLA_ERROR_TABLE, 0, 0u, "launch_pdl must be 0 or 1"},
        {"reduce,bf16,1,512,1,-1,mla_reduce_wide_bf16,mla_reduce.cubin", MLA_ERROR_TABLE, 0, 0u,
         "launch_pdl must be 0 or 1, got -1"},
        {"reduce,bf16,1,512,-1,1,mla_reduce_wide_bf16,mla_reduce.cubin", MLA_ERROR_TABLE, 0, 0u, "the row gives -1 and 512"},
        {"reduce,bf16,1,128,1,1,mla_reduce_slim_bf16,mla_reduce.cubin", MLA_SUCCESS, 1, 128u, ""},
        {"reduce,bf16,1,128,1,0,mla_reduce_slim_bf16,mla_reduce.cubin", MLA_SUCCESS, 0, 128u, ""},
        {"reduce,bf16,1,256,1,1,mla_reduce_slim_bf16,mla_reduce.cubin", MLA_ERROR_TABLE, 0, 0u, "the row gives 1 and 256"},
        {"reduce,bf16,1,128,4,1,mla_reduce_slim_bf16,mla_reduce.cubin", MLA_ERROR_TABLE, 0, 0u,
         "mla_reduce_slim_bf16 takes launch_units_per_cta 1 and launch_threads 128..128"},
        {"reduce,bf16,1,256,0,1,mla_reduce_tiles_bf16,mla_reduce.cubin", MLA_SUCCESS, 1, 1u, ""},
        {"reduce,bf16,1,512,4,1,mla_reduce_tiles_bf16,mla_reduce.cubin", MLA_ERROR_TABLE, 0, 0u,
         "mla_reduce_tiles_bf16 takes launch_units_per_cta 0"},
        {"reduce,bf16,1,640,0,1,mla_reduce_tiles_bf16,mla_reduce.cubin", MLA_ERROR_TABLE, 0, 0u, "the row gives 0 and 640"},
        {"reduce,bf16,1,512,1,1,mla_reduce_other,mla_reduce.cubin", MLA_ERROR_TABLE, 0, 0u,
         "no launch contract for reducer kernel mla_reduce_other"}};
    for (const K& k : ks) {
        INFO(k.row);
        const std::string root = fake_root::sm90_decode_root(
            tables_src(), "",
            std::string("kind,outType,spread,launch_threads,launch_units_per_cta,launch_pdl,knl_name,co_name\n"
                        "reduce,bf16,0,128,4,1,mla_reduce_bf16,mla_reduce.cubin\n") +
                k.row + "\n");
        REQUIRE(!root.empty());
        mla_context* ctx = fake_test::fake_context(root);
        Call c(1, 16, 1, 64, 32768);
        REQUIRE(c.sz.partial_rows > 0);
        const mla_status st = mla_decode_fwd(ctx, &c.a, nullptr);
        INFO(mla_last_error());
        CHECK(st == k.st);
        if (k.st == MLA_SUCCESS) {
            REQUIRE(fake_rt_launch_count() == 2);
            CHECK(fake_rt_launch(1)->programmatic == k.programmatic);
            CHECK(fake_rt_launch(1)->grid[1] == k.grid_y);
            CHECK(fake_rt_call_count(k.programmatic ? "cuLaunchKernelEx" : "cuLaunchKernel") >= 1);
        } else {
            CHECK(std::string(mla_last_error()).find(k.msg) != std::string::npos);
            CHECK(fake_rt_launch_count() == 0);
        }
        mla_context_destroy(ctx);
    }
}

// launch_carveout (mla_decode.csv and mla_reduce.csv): the percent of the SM's L1 / shared memory
// a kernel asks to be shared memory, set once per kernel and context (cuFuncSetAttribute
// PREFERRED_SHARED_MEMORY_CARVEOUT); -1 or no column: nothing is set; outside -1..100 a table
// error before anything launches.
TEST_CASE("decode launch: launch_carveout sets each kernel's shared-memory carve-out", "[decode]") {
    // the shipped decode table with a launch_carveout column of `value` on every row
    const auto decode_csv = [](const std::string& value) {
        std::ifstream in(tables_src() + "/decode/mla_decode.csv");
        std::string line, out;
        for (bool head = true; std::getline(in, line); head = false)
            if (!line.empty()) out += line + (head ? ",launch_carveout" : "," + value) + "\n";
        return out;
    };
    const std::string reduce_head = "kind,outType,spread,launch_threads,launch_units_per_cta,launch_pdl,knl_name,co_name,launch_carveout\n"
                                    "reduce,bf16,0,512,0,1,mla_reduce_tiles_bf16,mla_reduce.cubin,-1\n";
    struct K {
        const char* dec;     // the decode rows' value
        const char* red;     // the spread = 1 (slim) row's value
        mla_status st;
        int dec_set, red_set;  // what the fake runtime saw (-1: nothing set)
        const char* msg;
    };
    const K ks[] = {{"100", "100", MLA_SUCCESS, 100, 100, ""},
                    {"-1", "100", MLA_SUCCESS, -1, 100, ""},
                    {"0", "-1", MLA_SUCCESS, 0, -1, ""},
                    {"100", "101", MLA_ERROR_TABLE, -1, -1, "launch_carveout must be -1 (the driver's choice) or 0..100"},
                    {"-2", "100", MLA_ERROR_TABLE, -1, -1, "launch_carveout must be -1 (the driver's choice) or 0..100"}};
    for (const K& k : ks) {
        INFO("decode " << k.dec << " reduce " << k.red);
        const std::string root = fake_root::sm90_decode_root(
            tables_src(), decode_csv(k.dec),
            reduce_head + "reduce,bf16,1,128,1,1,mla_reduce_slim_bf16,mla_reduce.cubin," + k.red + "\n");
        REQUIRE(!root.empty());
        mla_context* ctx = fake_test::fake_context(root);
        Call c(1, 16, 1, 64, 32768);  // one split tile: spread 1, the slim reducer
        REQUIRE(c.sz.partial_rows > 0);
        for (int call = 0; call < 2; ++call) {
            const mla_status st = mla_decode_fwd(ctx, &c.a, nullptr);
            INFO(mla_last_error());
            CHECK(st == k.st);
        }
        if (k.st == MLA_SUCCESS) {
            REQUIRE(fake_rt_launch_count() == 4);
            CHECK(std::string(fake_rt_launch(1)->symbol) == "mla_reduce_slim_bf16");
            CHECK(fake_rt_smem_carveout("mla_decode_wg_bf16_bf16_m16") == k.dec_set);
            CHECK(fake_rt_smem_carveout("mla_reduce_slim_bf16") == k.red_set);
            // once per kernel and context: the decode's max-dynamic-shared attribute once, each
            // carve-out once
            CHECK(fake_rt_call_count("cuFuncSetAttribute") == 1 + (k.dec_set >= 0) + (k.red_set >= 0));
        } else {
            CHECK(std::string(mla_last_error()).find(k.msg) != std::string::npos);
            CHECK(fake_rt_launch_count() == 0);
            CHECK(fake_rt_call_count("cuFuncSetAttribute") == 0);
        }
        mla_context_destroy(ctx);
    }
    // One kernel named by two rows of one table (lse = 0: 100, lse = 1: -1): a -1 row after a 100
    // row sets the kernel back to the driver's choice (-1), once
    {
        std::ifstream in(tables_src() + "/decode/mla_decode.csv");
        std::string line, csv;
        for (bool head = true; std::getline(in, line); head = false) {
            if (line.empty()) continue;
            // column 7 is lse (qType,kvType,Gqa,ps,qSeqLen,prefill,causal,lse,...)
            size_t at = 0;
            for (int c = 0; c < 7 && !head; ++c) at = line.find(',', at) + 1;
            csv += line + (head ? ",launch_carveout" : line[at] == '1' ? ",-1" : ",100") + "\n";
        }
        const std::string root = fake_root::sm90_decode_root(tables_src(), csv);
        REQUIRE(!root.empty());
        mla_context* ctx = fake_test::fake_context(root);
        Call c(1, 16, 1, 64, 32768);
        c.a.lse = nullptr;
        REQUIRE(mla_decode_fwd(ctx, &c.a, nullptr) == MLA_SUCCESS);
        CHECK(fake_rt_smem_carveout("mla_decode_wg_bf16_bf16_m16") == 100);
        c.a.lse = c.lse.data();
        const int before = fake_rt_call_count("cuFuncSetAttribute");
        REQUIRE(mla_decode_fwd(ctx, &c.a, nullptr) == MLA_SUCCESS);
        REQUIRE(mla_decode_fwd(ctx, &c.a, nullptr) == MLA_SUCCESS);
        CHECK(fake_rt_smem_carveout("mla_decode_wg_bf16_bf16_m16") == -1);
        CHECK(fake_rt_call_count("cuFuncSetAttribute") == before + 1);
        mla_context_destroy(ctx);
    }
}

namespace {

// One value of one launch column on the m16 row: base_cols / base_vals the row's other launch
// columns (",launch_kv_tma" / ",0", ...), `col` the column under test, `value` its value (nullptr:
// no such column). Accepted: check(the decode's launch record); a table error: the message says
// "<col> must be <rule>, got <value>" and nothing is launched.
template <class F>
void launch_column_case(const std::string& base_cols, const std::string& base_vals, const char* col,
                        const char* value, mla_status want, const char* rule, F check) {
    INFO(col << " " << (value ? value : "(no column)"));
    mla_context* ctx = nullptr;
    const mla_status st = value ? decode_on_m16_row(base_cols + "," + col, base_vals + "," + value, &ctx)
                                : decode_on_m16_row(base_cols, base_vals, &ctx);
    INFO(mla_last_error());
    CHECK(st == want);
    if (want == MLA_SUCCESS) {
        REQUIRE(fake_rt_launch_count() >= 1);
        CHECK(std::string(fake_rt_launch(0)->symbol) == "mla_decode_wg_bf16_bf16_m16");
        check(*fake_rt_launch(0));
    } else {
        CHECK(std::string(mla_last_error()).find(std::string(col) + " must be " + rule + ", got " + value) !=
              std::string::npos);
        CHECK(fake_rt_launch_count() == 0);
    }
    mla_context_destroy(ctx);
}

// A launch column's value (nullptr: no such column), the status it gives, and what the launch
// record must then show.
struct ColumnCase {
    const char* value;
    mla_status st;
    unsigned want;
};

}  // namespace

// mla_decode.csv's launch_pdl decides the decode launch: 1 a programmatic dependent launch
// (cuLaunchKernelEx; every decode kernel starts with griddepcontrol.wait), 0 or no such column a
// plain one; any other value is a table error and nothing is launched.
TEST_CASE("decode launch: the decode row's launch_pdl", "[decode]") {
    // want: the record's programmatic flag
    for (const ColumnCase& k : {ColumnCase{"1", MLA_SUCCESS, 1}, ColumnCase{"0", MLA_SUCCESS, 0},
                                ColumnCase{nullptr, MLA_SUCCESS, 0}, ColumnCase{"2", MLA_ERROR_TABLE, 0},
                                ColumnCase{"-1", MLA_ERROR_TABLE, 0}})
        launch_column_case(",launch_kv_tma", ",0", "launch_pdl", k.value, k.st, "0 or 1",
                           [&](const fake_rt_launch_record& r) { CHECK(r.programmatic == int(k.want)); });
}

// mla_decode.csv's launch_cluster: 2 launches the decode grid as clusters of 2 CTAs
// (cuLaunchKernelEx CLUSTER_DIMENSION {2, 1, 1}, with the programmatic attribute of launch_pdl 1);
// 1 or no column: no cluster; other values are table errors (nothing launched). A driver that
// refuses the cluster attribute gets the launch without it (the kernels built for clusters run
// correctly without): here one that refuses cuLaunchKernelEx altogether (NOT_SUPPORTED) ends
// with the plain cuLaunchKernel.
TEST_CASE("decode launch: the decode row's launch_cluster", "[decode]") {
    // want: the record's cluster size along x
    for (const ColumnCase& k : {ColumnCase{"2", MLA_SUCCESS, 2}, ColumnCase{"1", MLA_SUCCESS, 1},
                                ColumnCase{nullptr, MLA_SUCCESS, 1}, ColumnCase{"3", MLA_ERROR_TABLE, 0},
                                ColumnCase{"0", MLA_ERROR_TABLE, 0}})
        launch_column_case(",launch_kv_tma,launch_pdl", ",0,1", "launch_cluster", k.value, k.st, "1 or 2",
                           [&](const fake_rt_launch_record& r) {
                               CHECK(r.grid[0] % k.want == 0);
                               CHECK(r.cluster[0] == k.want);
                               CHECK(r.cluster[1] == 1);
                               CHECK(r.cluster[2] == 1);
                               CHECK(r.programmatic == 1);
                           });
    // launch_pdl 0 with launch_cluster 2: the cluster attribute alone
    {
        mla_context* c0 = nullptr;
        CHECK(decode_on_m16_row(",launch_kv_tma,launch_pdl,launch_cluster", ",0,0,2", &c0) == MLA_SUCCESS);
        REQUIRE(fake_rt_launch_count() >= 1);
        CHECK(fake_rt_launch(0)->cluster[0] == 2);
        CHECK(fake_rt_launch(0)->programmatic == 0);
        mla_context_destroy(c0);
    }
    // the driver's answer to cuLaunchKernelEx on a launch_cluster 2 / launch_pdl 1 row:
    // 801 (NOT_SUPPORTED, a refusal): the programmatic launch (refused too), then the plain one,
    // no cluster; 701 (LAUNCH_OUT_OF_RESOURCES, no refusal): MLA_ERROR_LAUNCH naming the cluster
    // launch after one cuLaunchKernelEx, nothing launched
    const std::string root = fake_root::sm90_decode_root(
        tables_src(), "qType,kvType,Gqa,ps,qSeqLen,prefill,causal,lse,cprr,launch_threads,launch_smem,knl_name,co_name,"
                      "launch_kv_tma,launch_pdl,launch_cluster\nbf16,bf16,16,1,0,0,1,1,0,256,170752,"
                      "mla_decode_wg_bf16_bf16_m16,mla_decode_wg_bf16_bf16.cubin,0,1,2\n");
    REQUIRE(!root.empty());
    for (const int code : {801, 701}) {
        INFO("cuLaunchKernelEx returns " << code);
        mla_context* ctx = fake_test::fake_context(root);
        Call c(3, 16, 1, 64, 700);
        fake_rt_fail("cuLaunchKernelEx", code);
        const int ex0 = fake_rt_call_count("cuLaunchKernelEx");
        const mla_status st = mla_decode_fwd(ctx, &c.a, nullptr);
        const int ex = fake_rt_call_count("cuLaunchKernelEx") - ex0;
        if (code == 801) {
            CHECK(st == MLA_SUCCESS);
            REQUIRE(fake_rt_launch_count() >= 1);
            CHECK(fake_rt_launch(0)->cluster[0] == 1);
            CHECK(fake_rt_launch(0)->programmatic == 0);
            // the decode: the cluster launch, then the programmatic one; the reducer (if any): its own
            CHECK(ex == 2 + (fake_rt_launch_count() - 1));
        } else {
            CHECK(st == MLA_ERROR_LAUNCH);
            CHECK(std::string(mla_last_error()).find("CLUSTER_DIMENSION") != std::string::npos);
            CHECK(ex == 1);
            CHECK(fake_rt_call_count("cuLaunchKernel") == 0);
            CHECK(fake_rt_launch_count() == 0);
        }
        fake_rt_fail("cuLaunchKernelEx", 0);
        mla_context_destroy(ctx);
    }
}

namespace {

// Builds a whole call for the shape and runs mla_decode_fwd on the fake runtime. Returns true
// when the call is accepted (and launches); false when planning or the launch refuses it.
bool decode_runs(mla_context* ctx, int H, int L, int ps, mla_dtype qd, mla_dtype kvd, bool lse_on,
                 bool causal, bool cprr, std::string* why) {
    Call c(2, H, L, ps, 300, qd, kvd, causal ? 1 : 0, /*strict=*/false, cprr ? 2 : 1, cprr ? 1 : 0);
    if (!c.ok) {
        *why = c.why;
        return false;
    }
    if (!lse_on) c.a.lse = nullptr;
    const int before = fake_rt_launch_count();
    const mla_status st = mla_decode_fwd(ctx, &c.a, nullptr);
    if (st != MLA_SUCCESS) {
        *why = std::string("mla_decode_fwd: ") + mla_status_string(st) + ": " + mla_last_error();
        CHECK(fake_rt_launch_count() == before);  // a refused call launches nothing
        return false;
    }
    CHECK(fake_rt_launch_count() > before);
    return true;
}

}  // namespace

TEST_CASE("decode: the shape query says supported for exactly the shapes mla_decode_fwd runs",
          "[decode][support]") {
    mla_context* ctx = make_ctx();
    const std::string root = fixture_root();
    REQUIRE(mla_set_codeobject_root(root.c_str()) == MLA_SUCCESS);
    const std::pair<mla_dtype, mla_dtype> dtypes[] = {
        {MLA_DTYPE_BF16, MLA_DTYPE_BF16},       {MLA_DTYPE_BF16, MLA_DTYPE_FP8_E4M3FN},
        {MLA_DTYPE_FP8_E4M3FN, MLA_DTYPE_FP8_E4M3FN}, {MLA_DTYPE_FP16, MLA_DTYPE_FP16},
        {MLA_DTYPE_FP8_E4M3FN, MLA_DTYPE_BF16}, {MLA_DTYPE_FP8_E4M3FNUZ, MLA_DTYPE_FP8_E4M3FNUZ}};
    int runs = 0, refused = 0, cprr_runs = 0;
    for (int H : {1, 8, 12, 16, 24, 32, 48, 64, 96, 100, 128, 160})
        for (int L : {1, 2, 3, 4, 5, 8})
            for (const auto& dt : dtypes)
                for (int ps : {1, 16, 64})
                    for (int lse_on : {0, 1})
                        for (int causal : {0, 1})
                        for (int cprr : {0, 1}) {
                            mla_decode_shape s = MLA_DECODE_SHAPE_INIT;
                            s.arch = "sm_90a";
                            s.num_heads = H;
                            s.max_seqlen_qo = L;
                            s.q_dtype = dt.first;
                            s.kv_dtype = dt.second;
                            s.page_size = ps;
                            s.return_lse = lse_on;
                            s.causal = causal;
                            s.cp_round_robin = cprr;
                            s.cp_world_size = cprr ? 2 : 1;
                            mla_decode_support v = MLA_DECODE_SUPPORT_INIT;
                            REQUIRE(mla_decode_shape_support(&s, &v) == MLA_SUCCESS);
                            std::string why;
                            const bool ran = decode_runs(ctx, H, L, ps, dt.first, dt.second,
                                                         lse_on != 0, causal != 0, cprr != 0, &why);
                            INFO("heads " << H << " qlen " << L << " q " << mla_dtype_string(dt.first)
                                          << " kv " << mla_dtype_string(dt.second) << " page " << ps
                                          << " lse " << lse_on << " causal " << causal
                                          << " cprr " << cprr
                                          << " | shape query: supported " << v.supported
                                          << ", reasons: " << v.reasons << " | launch: " << why);
                            REQUIRE(v.supported != -1);  // sm_90a always answers yes or no
                            CHECK((v.supported == 1) == ran);
                            (ran ? runs : refused) += 1;
                            if (ran && cprr) ++cprr_runs;
                        }
    // Both answers occur: the grid is not trivially all-yes or all-no.
    CHECK(runs > 2000);
    CHECK(refused > 2000);
    CHECK(cprr_runs > 500);
    REQUIRE(mla_set_codeobject_root(nullptr) == MLA_SUCCESS);
    mla_context_destroy(ctx);
}

TEST_CASE("decode launch: the per-context row and kernel caches keep shapes apart", "[decode]") {
    // One context, shapes interleaved: every launch must name its own shape's kernel, and the
    // dynamic shared-memory limit is raised once per kernel, not once per call.
    mla_context* ctx = make_ctx();
    struct Case {
        int H, L;
        mla_dtype q, kv;
        int m;  // row tile: the kernel is the table's for (dtypes, M)
    };
    const Case cases[] = {
        {16, 1, MLA_DTYPE_BF16, MLA_DTYPE_BF16, 16},
        {64, 1, MLA_DTYPE_FP8_E4M3FN, MLA_DTYPE_FP8_E4M3FN, 64},
        {16, 2, MLA_DTYPE_BF16, MLA_DTYPE_FP8_E4M3FN, 32},
        {16, 1, MLA_DTYPE_BF16, MLA_DTYPE_BF16, 16},
        {128, 1, MLA_DTYPE_BF16, MLA_DTYPE_BF16, 64},
        {64, 1, MLA_DTYPE_FP8_E4M3FN, MLA_DTYPE_FP8_E4M3FN, 64},
    };
    for (int round = 0; round < 2; ++round)
        for (const Case& k : cases) {
            Call c(3, k.H, k.L, 64, 700, k.q, k.kv);
            for (int lse_on = 0; lse_on < 2; ++lse_on) {
                if (!lse_on) c.a.lse = nullptr;
                else c.a.lse = c.lse.data();
                const int before = fake_rt_launch_count();
                INFO("heads " << k.H << " qlen " << k.L << " round " << round << " lse " << lse_on);
                REQUIRE(mla_decode_fwd(ctx, &c.a, nullptr) == MLA_SUCCESS);
                REQUIRE(fake_rt_launch_count() > before);
                const fake_rt_launch_record* r = fake_rt_launch(before);
                CHECK(std::string(r->symbol) == table_symbol(k.q, k.kv, k.m));
                CHECK(params_of(r).lse == c.a.lse);
            }
        }
    // four distinct kernels above 48 KB of shared memory, the attribute set once each
    CHECK(fake_rt_call_count("cuFuncSetAttribute") == 4);
    mla_context_destroy(ctx);
}

TEST_CASE("decode launch: plan sizes memoised per context follow the plan params", "[decode]") {
    // mla_decode_fwd memoises the last mla_metadata_info answer per context; a call with other
    // plan params (here more clusters: a longer work_indptr than the call's plan buffers hold)
    // must still be checked against its own params, and the first ones must work again after.
    mla_context* ctx = make_ctx();
    Call c(3, 16, 1, 64, 700);
    const int first = fake_rt_launch_count();
    REQUIRE(mla_decode_fwd(ctx, &c.a, nullptr) == MLA_SUCCESS);
    const int per_call = fake_rt_launch_count() - first;  // decode (+ reduce when the plan splits)
    REQUIRE(per_call >= 1);
    mla_metadata_params other = c.mp;
    other.num_clusters = 200;
    mla_decode_args a = c.a;
    a.plan_params = &other;
    expect_reject(ctx, a, MLA_ERROR_BUFFER_TOO_SMALL, "work_indptr has 133 entries, the plan params need 201");
    REQUIRE(mla_decode_fwd(ctx, &c.a, nullptr) == MLA_SUCCESS);
    // equal params in another struct (another arch pointer to the same string) are the same plan
    const std::string arch = "sm_90a";
    mla_metadata_params same = c.mp;
    same.arch = arch.c_str();
    a.plan_params = &same;
    const int before = fake_rt_launch_count();
    REQUIRE(mla_decode_fwd(ctx, &a, nullptr) == MLA_SUCCESS);
    CHECK(fake_rt_launch_count() == before + per_call);
    mla_context_destroy(ctx);
}
