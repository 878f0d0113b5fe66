// test_decode_fused.cpp - the fused split-KV reduction on the fake CUDA runtime (no GPU): with
// tile_counters, a v1_2 plan, a reducer row saying launch_fused 1 and a decode row keyed fused = 1,
// mla_decode_fwd launches that row's *_fused kernel alone, its params carrying the counters and
// the plan's reduce arrays; everywhere else the plain kernel and the reducer run as before and the
// counters are not passed. Bad counters are refused before anything launches.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
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

namespace {

// Counters for call c: one per planned tile (+ `extra`), host memory standing in for device memory.
std::vector<int32_t> counters_for(Call& c, int64_t extra = 0) {
    std::vector<int32_t> v(size_t(c.sz.reduce_indptr_len - 1 + extra + 1), 0);
    c.a.tile_counters = v.data();
    c.a.tile_counters_len = c.sz.reduce_indptr_len - 1 + extra;
    return v;
}

}  // namespace

TEST_CASE("fused reduction: one launch where both rows allow it, with the counters in the params", "[decode][fused]") {
    // 64 requests x 16 heads of ~1K tokens: 64 split tiles (mla_reduce_tiles_bf16, launch_fused 1);
    // 128 requests of ~4K and 16 / 32 heads (the 16- and 32-row bf16 kernels have fused = 1 rows)
    struct K {
        int B, H, kv;
        int m;
    };
    for (const K& k : {K{64, 16, 1024, 16}, K{128, 16, 4096, 16}, K{128, 32, 4096, 32}}) {
        INFO("B " << k.B << " heads " << k.H << " kv " << k.kv);
        mla_context* ctx = make_ctx();
        Call c(k.B, k.H, 1, 64, k.kv);
        REQUIRE(c.sz.partial_rows > 0);
        std::vector<int32_t> cnt = counters_for(c);
        const mla_status st = mla_decode_fwd(ctx, &c.a, nullptr);
        INFO(mla_last_error());
        REQUIRE(st == MLA_SUCCESS);
        REQUIRE(fake_rt_launch_count() == 1);  // no reducer
        const fake_rt_launch_record* r = fake_rt_launch(0);
        CHECK(std::string(r->symbol) == plain_build(table_symbol(MLA_DTYPE_BF16, MLA_DTYPE_BF16, k.m)) + "_fused");
        const mla_decode_params p = params_of(r);
        CHECK(p.tile_counters == cnt.data());
        // the reducer's params struct, with every tile of the plan (the kernel bounds dw 7 by it)
        CHECK(p.reduce.reduce_indptr == c.plan.reduce_indptr);
        CHECK(p.reduce.reduce_final_map == c.plan.reduce_final_map);
        CHECK(p.reduce.reduce_partial_map == c.plan.reduce_partial_map);
        CHECK(p.reduce.num_tiles == c.sz.reduce_indptr_len - 1);
        CHECK(p.reduce.partial_out == c.a.workspace);
        CHECK(p.reduce.out == c.a.out);
        CHECK(p.reduce.kernel_heads == p.kernel_heads);
        CHECK(p.partial_out == c.a.workspace);
        // without counters: the plain kernel, the same params but for the counters, then the reducer
        c.a.tile_counters = nullptr;
        c.a.tile_counters_len = 0;
        REQUIRE(mla_decode_fwd(ctx, &c.a, nullptr) == MLA_SUCCESS);
        REQUIRE(fake_rt_launch_count() == 3);
        CHECK(std::string(fake_rt_launch(1)->symbol) == table_symbol(MLA_DTYPE_BF16, MLA_DTYPE_BF16, k.m));
        CHECK(std::string(fake_rt_launch(2)->symbol) == "mla_reduce_tiles_bf16");
        const mla_decode_params p2 = params_of(fake_rt_launch(1));
        CHECK(p2.tile_counters == nullptr);
        // p2.reduce is the reducer kernel's params, byte for byte
        const fake_rt_launch_record* rr = fake_rt_launch(2);
        REQUIRE(rr->args_bytes == sizeof(mla_reduce_params));
        mla_reduce_params rp;
        std::memcpy(&rp, rr->args, sizeof rp);
        CHECK(rp.num_tiles == p2.reduce.num_tiles);
        CHECK(std::memcmp(&rp, &p2.reduce, sizeof rp) == 0);
        mla_context_destroy(ctx);
    }
}

TEST_CASE("fused reduction: the reducer still runs where a row or the plan does not allow it", "[decode][fused]") {
    // b = 1 at 32K tokens: one tile of many fragments, the slim reducer (launch_fused 0); fp8 KV at
    // 16 heads: the register-A kernel (no fused = 1 row); 64 heads: the qm kernel (none either); a
    // v1_1 plan (fast_mode 0): its works keep aiter's dw 7 = 0, so no tile is named
    struct K {
        int B, H, kv;
        mla_dtype kvd;
        int fast_mode;
        const char* reducer;
    };
    const K ks[] = {{1, 16, 32768, MLA_DTYPE_BF16, 1, "mla_reduce_slim_bf16"},
                    {64, 16, 1024, MLA_DTYPE_FP8_E4M3FN, 1, "mla_reduce_tiles_bf16"},
                    {64, 64, 1024, MLA_DTYPE_BF16, 1, "mla_reduce_tiles_bf16"},
                    {64, 16, 1024, MLA_DTYPE_BF16, 0, "mla_reduce_tiles_bf16"}};
    for (const K& k : ks) {
        INFO("B " << k.B << " heads " << k.H << " kv " << k.kv << " kv dtype " << mla_dtype_string(k.kvd)
                  << " fast_mode " << k.fast_mode);
        mla_context* ctx = make_ctx();
        Call c(k.B, k.H, 1, 64, k.kv, MLA_DTYPE_BF16, k.kvd);
        if (k.fast_mode == 0) {  // re-plan with v1_1
            c.mp.fast_mode = 0;
            c.mp.intra_batch_mode = 0;
            c.sz.struct_size = sizeof c.sz;
            REQUIRE(mla_metadata_info(&c.mp, &c.sz) == MLA_SUCCESS);
            c.host.reset(new HostPlan(c.sz));
            c.plan = c.host->buffers;
            REQUIRE(mla_plan_metadata(&c.mp, c.qo.data(), c.kvi.data(), c.last.data(), &c.plan, nullptr, nullptr,
                                      nullptr) == MLA_SUCCESS);
            c.work.resize(size_t(c.sz.workspace_bytes) + 64);
            c.a.workspace = DecodeCall::align16(c.work.data());
            c.a.workspace_bytes = size_t(c.sz.workspace_bytes);
        }
        REQUIRE(c.sz.partial_rows > 0);
        std::vector<int32_t> cnt = counters_for(c);
        const mla_status st = mla_decode_fwd(ctx, &c.a, nullptr);
        INFO(mla_last_error());
        REQUIRE(st == MLA_SUCCESS);
        REQUIRE(fake_rt_launch_count() == 2);
        CHECK(std::string(fake_rt_launch(1)->symbol) == k.reducer);
        CHECK(std::string(fake_rt_launch(0)->symbol).find("_fused") == std::string::npos);
        CHECK(params_of(fake_rt_launch(0)).tile_counters == nullptr);
        mla_context_destroy(ctx);
    }
}

TEST_CASE("fused reduction: counters that are too short, misaligned or of negative length are refused", "[decode][fused]") {
    mla_context* ctx = make_ctx();
    Call c(64, 16, 1, 64, 1024);
    std::vector<int32_t> cnt = counters_for(c);
    c.a.tile_counters_len = c.sz.reduce_indptr_len - 2;
    expect_reject(ctx, c.a, MLA_ERROR_BUFFER_TOO_SMALL, "tile_counters has");
    c.a.tile_counters_len = c.sz.reduce_indptr_len - 1;
    c.a.tile_counters = reinterpret_cast<int32_t*>(reinterpret_cast<char*>(cnt.data()) + 2);
    expect_reject(ctx, c.a, MLA_ERROR_INVALID_ARGUMENT, "tile_counters");
    c.a.tile_counters = nullptr;
    c.a.tile_counters_len = -1;
    expect_reject(ctx, c.a, MLA_ERROR_INVALID_ARGUMENT, "tile_counters_len");
    // a caller whose struct ends before the fields (an older mla_decode_args) gets the reducer
    c.a.tile_counters = cnt.data();
    c.a.tile_counters_len = int64_t(cnt.size());
    c.a.struct_size = offsetof(mla_decode_args, tile_counters);
    REQUIRE(mla_decode_fwd(ctx, &c.a, nullptr) == MLA_SUCCESS);
    REQUIRE(fake_rt_launch_count() == 2);
    CHECK(params_of(fake_rt_launch(0)).tile_counters == nullptr);
    mla_context_destroy(ctx);
}

TEST_CASE("fused reduction: a fused = 1 row naming a kernel without it is refused; none falls back", "[decode][fused]") {
    const char* head = "qType,kvType,Gqa,ps,qSeqLen,prefill,causal,lse,cprr,launch_threads,launch_smem,knl_name,co_name,fused\n";
    const char* plain = "bf16,bf16,16,1,0,0,1,1,0,256,170752,mla_decode_wg_bf16_bf16_m16,mla_decode_wg_bf16_bf16.cubin,0\n";
    for (int bad = 0; bad < 2; ++bad) {
        fake_rt_reset();
        const std::string root = fake_root::sm90_decode_root(
            tables_src(), std::string(head) + plain +
                              (bad ? "bf16,bf16,16,1,0,0,1,1,0,256,170752,mla_decode_wg_bf16_bf16_m16,"
                                     "mla_decode_wg_bf16_bf16.cubin,1\n"
                                   : ""));
        REQUIRE(!root.empty());
        mla_context* ctx = fake_test::fake_context(root);
        Call c(64, 16, 1, 64, 1024);
        std::vector<int32_t> cnt = counters_for(c);
        if (bad) {
            expect_reject(ctx, c.a, MLA_ERROR_TABLE, "a fused = 1 row needs a kernel with the fused reduction");
        } else {  // no fused = 1 row: the plain kernel and the reducer
            REQUIRE(mla_decode_fwd(ctx, &c.a, nullptr) == MLA_SUCCESS);
            REQUIRE(fake_rt_launch_count() == 2);
            CHECK(std::string(fake_rt_launch(0)->symbol) == "mla_decode_wg_bf16_bf16_m16");
            CHECK(params_of(fake_rt_launch(0)).tile_counters == nullptr);
        }
        mla_context_destroy(ctx);
    }
}
