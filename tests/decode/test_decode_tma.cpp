// test_decode_tma.cpp - the TMA loads of KV tiles on the fake CUDA runtime (no GPU): where
// the table row says launch_kv_tma 1 the launch passes a tensor map of the cache (geometry, the
// memo per cache, a driver that refuses it, an empty cache, the L2 promotion launch_kv_tma_l2
// asks for), and a row that the kernel cannot honour is a table error. The kernels' side: codeobjects/sm_90a/decode/kv_load.cuh (issue_tile_tma), docs/kernels.md.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "decode_launch_util.h"

using namespace decode_test;

TEST_CASE("decode launch: launch_kv_tma rows pass a TMA tensor map of the KV cache", "[decode][tma]") {
    // kv_tma and the map's geometry per shape: bf16 KV on the transposed kernels (16, 32 heads) and
    // the qm kernel (64, 128 heads) at page size >= 8 (the rows' launch_kv_tma 2: page boxes, a 4-D
    // map, at pages >= 64; the 3-D map below), and fp8 Q with fp8 KV on the qm kernel (64-row
    // tiles: a map of bytes, boxes of 128 columns, decode_qm8.cuh); fp8 KV on 16-row tiles loads by
    // bulk copies, or by the same map only in a build with the register-A kernels' box ring
    // (MLA_RA_VSWAP 3, or MLA_RA_SSK for fp8 Q; session 40); page sizes 1 and 4, and bf16 Q with
    // fp8 KV on the qm kernel (64 rows), load otherwise
    struct K {
        int H, ps;
        mla_dtype q, kv;
        int tma;
    };
    constexpr int kRaBox = MLA_RA_VSWAP == 3 ? 1 : 0;                  // bf16 Q
    constexpr int kRaBox8 = MLA_RA_VSWAP == 3 || MLA_RA_SSK ? 1 : 0;  // fp8 Q
    const K ks[] = {{16, 64, MLA_DTYPE_BF16, MLA_DTYPE_BF16, 2},  {32, 16, MLA_DTYPE_BF16, MLA_DTYPE_BF16, 1},
                    {16, 8, MLA_DTYPE_BF16, MLA_DTYPE_BF16, 1},   {16, 128, MLA_DTYPE_BF16, MLA_DTYPE_BF16, 2},
                    {16, 4, MLA_DTYPE_BF16, MLA_DTYPE_BF16, 0},   {16, 1, MLA_DTYPE_BF16, MLA_DTYPE_BF16, 0},
                    {64, 64, MLA_DTYPE_BF16, MLA_DTYPE_BF16, 2},  {16, 64, MLA_DTYPE_BF16, MLA_DTYPE_FP8_E4M3FN, kRaBox},
                    {128, 16, MLA_DTYPE_BF16, MLA_DTYPE_BF16, 1}, {64, 64, MLA_DTYPE_BF16, MLA_DTYPE_FP8_E4M3FN, 0},
                    {64, 4, MLA_DTYPE_BF16, MLA_DTYPE_BF16, 0},
                    {16, 64, MLA_DTYPE_FP8_E4M3FN, MLA_DTYPE_FP8_E4M3FN, kRaBox8},
                    {16, 16, MLA_DTYPE_BF16, MLA_DTYPE_FP8_E4M3FN, kRaBox},
                    {16, 4, MLA_DTYPE_FP8_E4M3FN, MLA_DTYPE_FP8_E4M3FN, 0},
                    {64, 64, MLA_DTYPE_FP8_E4M3FN, MLA_DTYPE_FP8_E4M3FN, 1},
                    {128, 16, MLA_DTYPE_FP8_E4M3FN, MLA_DTYPE_FP8_E4M3FN, 1},
                    {64, 4, MLA_DTYPE_FP8_E4M3FN, MLA_DTYPE_FP8_E4M3FN, 0}};
    for (const K& k : ks) {
        INFO("heads " << k.H << " page " << k.ps << " " << mla_dtype_string(k.q) << "/" << mla_dtype_string(k.kv));
        fake_rt_reset();
        mla_context* ctx = make_ctx();
        Call c(3, k.H, 1, k.ps, 700, k.q, k.kv);
        const mla_status st = mla_decode_fwd(ctx, &c.a, nullptr);
        INFO(mla_last_error());
        REQUIRE(st == MLA_SUCCESS);
        const mla_decode_params p = params_of(fake_rt_launch(0));
        CHECK(p.kv_tma == k.tma);
        CHECK(fake_rt_call_count("cuTensorMapEncodeTiled") == (k.tma ? 1 : 0));
        if (k.tma == 1) {  // the 3-D map (the 4-D one: the launch_kv_tma 2 test below)
            const unsigned eb = k.kv == MLA_DTYPE_FP8_E4M3FN ? 1 : 2;  // bytes per KV element
            uint64_t head[2];
            std::memcpy(head, p.kv_tmap, sizeof head);
            CHECK(head[0] == FAKE_RT_TENSOR_MAP_MAGIC);
            CHECK(head[1] == uint64_t(reinterpret_cast<uintptr_t>(c.a.kv_cache)));
            const fake_rt_tensor_map_record* t = fake_rt_last_tensor_map();
            REQUIRE(t != nullptr);
            CHECK(t->data_type == (eb == 1 ? 0 : 9));  // CU_TENSOR_MAP_DATA_TYPE_UINT8 / BFLOAT16
            CHECK(t->rank == 3);
            CHECK(t->base == c.a.kv_cache);
            CHECK(t->dims[0] == 576);
            CHECK(t->dims[1] == unsigned(k.ps));
            CHECK(t->dims[2] == unsigned(c.a.num_pages));
            CHECK(t->strides[0] == 576 * eb);
            CHECK(t->strides[1] == uint64_t(p.kv_stride_page) * eb);
            CHECK(t->box[0] == 128 / eb);  // 128 bytes: the swizzle's row
            CHECK(t->box[1] == unsigned(k.ps < 64 ? k.ps : 64));
            CHECK(t->box[2] == 1);
            CHECK(t->element_strides[0] == 1);
            CHECK(t->swizzle == 3);  // 128-byte swizzle: the kernels' tile layout
            CHECK(t->l2_promotion == 0);  // none: the shipped rows' launch_kv_tma_l2 0 (session 10)
            CHECK(t->interleave == 0);
            CHECK(t->oob_fill == 0);  // zeros: an fp8 row's last box reaches 64 bytes past it
            // the same cache again: the map is not encoded again
            REQUIRE(mla_decode_fwd(ctx, &c.a, nullptr) == MLA_SUCCESS);
            CHECK(fake_rt_call_count("cuTensorMapEncodeTiled") == 1);
            CHECK(std::memcmp(params_of(fake_rt_launch(fake_rt_launch_count() - (c.sz.partial_rows > 0 ? 2 : 1)))
                                  .kv_tmap,
                              p.kv_tmap, sizeof p.kv_tmap) == 0);
            // another cache pointer: encoded again, with the new base
            c.a.kv_cache = static_cast<const char*>(c.a.kv_cache) + 16;
            const int n0 = fake_rt_launch_count();
            REQUIRE(mla_decode_fwd(ctx, &c.a, nullptr) == MLA_SUCCESS);
            CHECK(fake_rt_call_count("cuTensorMapEncodeTiled") == 2);
            CHECK(fake_rt_last_tensor_map()->base == c.a.kv_cache);
            CHECK(params_of(fake_rt_launch(n0)).kv_tma == 1);
            // back to the first cache: still memoised (one map per cache: engines pass one per layer)
            c.a.kv_cache = static_cast<const char*>(c.a.kv_cache) - 16;
            REQUIRE(mla_decode_fwd(ctx, &c.a, nullptr) == MLA_SUCCESS);
            CHECK(fake_rt_call_count("cuTensorMapEncodeTiled") == 2);
            // the same pointer with fewer pages (another geometry): encoded again
            c.a.num_pages -= 1;
            const int n2 = fake_rt_launch_count();
            REQUIRE(mla_decode_fwd(ctx, &c.a, nullptr) == MLA_SUCCESS);
            CHECK(fake_rt_call_count("cuTensorMapEncodeTiled") == 3);
            CHECK(fake_rt_last_tensor_map()->dims[2] == unsigned(c.a.num_pages));
            CHECK(params_of(fake_rt_launch(n2)).kv_tma == 1);
            c.a.num_pages += 1;
            // a driver that refuses the map: the same kernel loads by cp.async (kv_tma 0), and the
            // answer is memoised (no second attempt)
            mla_context* fresh = make_ctx();
            fake_rt_fail("cuTensorMapEncodeTiled", 1);
            const int n1 = fake_rt_launch_count();
            REQUIRE(mla_decode_fwd(fresh, &c.a, nullptr) == MLA_SUCCESS);
            CHECK(fake_rt_launch_count() > n1);
            CHECK(params_of(fake_rt_launch(n1)).kv_tma == 0);
            const int tries = fake_rt_call_count("cuTensorMapEncodeTiled");
            REQUIRE(mla_decode_fwd(fresh, &c.a, nullptr) == MLA_SUCCESS);
            CHECK(fake_rt_call_count("cuTensorMapEncodeTiled") == tries);
            fake_rt_fail("cuTensorMapEncodeTiled", 0);
            mla_context_destroy(fresh);
        }
        mla_context_destroy(ctx);
    }
}

TEST_CASE("decode launch: a launch_kv_tma value the kernel cannot take is a table error", "[decode][tma]") {
    struct K {
        const char* row;  // the bf16 / bf16, 16-row, causal, lse row
        mla_status st;
        const char* msg;
    };
    const K ks[] = {
        {"bf16,bf16,16,1,0,0,1,1,0,256,170752,mla_decode_wg_bf16_bf16_m16,mla_decode_wg_bf16_bf16.cubin,0", MLA_SUCCESS,
         ""},
        {"bf16,bf16,16,1,0,0,1,1,0,256,170752,mla_decode_wg_bf16_bf16_m16,mla_decode_wg_bf16_bf16.cubin,2", MLA_SUCCESS,
         ""},
        {"bf16,bf16,16,1,0,0,1,1,0,256,170752,mla_decode_wg_bf16_bf16_m16,mla_decode_wg_bf16_bf16.cubin,3",
         MLA_ERROR_TABLE, "launch_kv_tma must be 0 (cp.async), 1 (TMA, a box per 64-column block) or 2 (TMA, a box "
                          "per 64-token tile where pages hold >= 64 tokens), got 3"},
        {"bf16,bf16,16,1,0,0,1,1,0,256,170752,mla_decode_wg_bf16_bf16_m16,mla_decode_wg_bf16_bf16.cubin,-1",
         MLA_ERROR_TABLE, "launch_kv_tma must be 0 (cp.async), 1 (TMA, a box per 64-column block) or 2 (TMA, a box "
                          "per 64-token tile where pages hold >= 64 tokens), got -1"},
        {"bf16,bf16,64,1,0,0,1,1,0,256,231936,mla_decode_qm_bf16_bf16_m64,mla_decode_qm_bf16_bf16.cubin,2", MLA_SUCCESS,
         ""},
        // the fp8 qm kernel takes TMA boxes of a 3-D map only (its last box reads past the row)
        {"bf16,bf16,64,1,0,0,1,1,0,256,231936,mla_decode_qm_fp8_fp8_m64,mla_decode_qm_fp8_fp8.cubin,2",
         MLA_ERROR_TABLE, "launch_kv_tma 2 (page boxes) needs a bf16-KV kernel whose TMA loads are verified"},
        {"bf16,bf16,16,1,0,0,1,1,0,256,170752,mla_decode_wg_bf16_fp8_m16,mla_decode_wg_bf16_fp8.cubin,1",
         MLA_ERROR_TABLE, "launch_kv_tma 1 needs a kernel whose TMA loads are verified"},
        {"bf16,bf16,64,1,0,0,1,1,0,256,231936,mla_decode_qm_bf16_bf16_m64,mla_decode_qm_bf16_bf16.cubin,1", MLA_SUCCESS,
         ""},
        {"bf16,bf16,64,1,0,0,1,1,0,256,231936,mla_decode_qm_bf16_fp8_m64,mla_decode_qm_bf16_fp8.cubin,1",
         MLA_ERROR_TABLE, "launch_kv_tma 1 needs a kernel whose TMA loads are verified"},
#if MLA_RA_VSWAP != 3
        // a register-A kernel takes a map only when built with its box layout (MLA_RA_VSWAP 3; for fp8 Q
        // also MLA_RA_SSK; session 40)
        {"bf16,bf16,16,1,0,0,1,1,0,256,171808,mla_decode_ra_bf16_fp8_m16,mla_decode_ra_bf16_fp8.cubin,1",
         MLA_ERROR_TABLE, "launch_kv_tma 1 needs a kernel whose TMA loads are verified"},
#endif
        // the 64-row transposed kernel (no table row) compiles the TMA loader but was never verified with it
        {"bf16,bf16,64,1,0,0,1,1,0,256,230912,mla_decode_wg_bf16_bf16_m64,mla_decode_wg_bf16_bf16.cubin,1",
         MLA_ERROR_TABLE, "launch_kv_tma 1 needs a kernel whose TMA loads are verified"},
    };
    for (const K& k : ks) {
        INFO(k.row);
        fake_rt_reset();
        const std::string root = fake_root::sm90_decode_root(
            tables_src(),
            std::string("qType,kvType,Gqa,ps,qSeqLen,prefill,causal,lse,cprr,launch_threads,launch_smem,knl_name,"
                        "co_name,launch_kv_tma\n") +
                k.row + "\n");
        REQUIRE(!root.empty());
        mla_context* ctx = fake_test::fake_context(root);
        const std::string row = k.row;
        const int gqa = std::stoi(row.substr(10, row.find(',', 10) - 10));  // "bf16,bf16,<Gqa>,..."
        Call c(3, gqa, 1, 64, 700);  // heads = the row's tile: the call routes to this row
        const mla_status st = mla_decode_fwd(ctx, &c.a, nullptr);
        INFO(mla_last_error());
        CHECK(st == k.st);
        if (k.st == MLA_SUCCESS) {
            const int tma = row.back() - '0';  // the row's launch_kv_tma (page 64: 2 gives page boxes)
            CHECK(params_of(fake_rt_launch(0)).kv_tma == tma);
            CHECK(fake_rt_call_count("cuTensorMapEncodeTiled") == (tma ? 1 : 0));
        } else {
            CHECK(std::string(mla_last_error()).find(k.msg) != std::string::npos);
            CHECK(fake_rt_launch_count() == 0);
        }
        mla_context_destroy(ctx);
    }
}

// The project's mla_decode.csv (header and rows) with every launch_kv_tma 2 made 1: the 3-D map
// tables of sessions 6-26.
static std::string table_with_3d_boxes() {
    std::ifstream in(tables_src() + "/decode/mla_decode.csv");
    REQUIRE(in.good());
    std::string head;
    std::getline(in, head);  // the rows themselves: decode_rows()
    std::string table = head + "\n";
    const size_t col = std::count(head.begin(), head.begin() + head.find("launch_kv_tma,"), ',');
    for (std::vector<std::string> f : decode_rows()) {
        if (f.size() > col && f[col] == "2") f[col] = "1";
        for (size_t i = 0; i < f.size(); ++i) table += (i ? "," : "") + f[i];
        table += "\n";
    }
    return table;
}

TEST_CASE("decode launch: launch_kv_tma 2 passes a 4-D map of page boxes where pages hold >= 64 tokens",
          "[decode][tma]") {
    // the project's bf16/bf16 rows say 2: at pages of 64 or more tokens a map {64 columns,
    // page_size, 9 blocks, num_pages} with byte strides {1152, 128, page stride} and box {64, 64,
    // 9, 1} (one box a tile, landing as the kernels' [block][token][128 B] tile), p.kv_tma 2, on
    // the 16-, 32- and 64-row kernels, memoised per cache; pages of 8..32 tokens keep the 3-D map
    // (the test above). The same calls under a launch_kv_tma 1 table: the 3-D map, p.kv_tma 1.
    const std::string root1 = fake_root::sm90_decode_root(tables_src(), table_with_3d_boxes());
    REQUIRE(!root1.empty());
    const int shapes[][2] = {{16, 64}, {16, 128}, {32, 64}, {64, 256}, {128, 64}};  // heads, page size
    for (const auto& hp : shapes) {
        INFO("heads " << hp[0] << " page " << hp[1]);
        fake_rt_reset();
        mla_context* ctx = make_ctx();
        Call c(3, hp[0], 1, hp[1], 700);
        REQUIRE(mla_decode_fwd(ctx, &c.a, nullptr) == MLA_SUCCESS);
        const mla_decode_params p = params_of(fake_rt_launch(0));
        CHECK(p.kv_tma == 2);
        CHECK(fake_rt_call_count("cuTensorMapEncodeTiled") == 1);
        const fake_rt_tensor_map_record* t = fake_rt_last_tensor_map();
        REQUIRE(t != nullptr);
        CHECK(t->data_type == 9);
        CHECK(t->base == c.a.kv_cache);
        CHECK(t->swizzle == 3);
        CHECK(t->rank == 4);
        const unsigned long long dims[4] = {64, unsigned(hp[1]), 9, unsigned(c.a.num_pages)};
        const unsigned long long strides[3] = {1152, 128, uint64_t(p.kv_stride_page) * 2};
        const unsigned box[4] = {64, 64, 9, 1};
        for (int i = 0; i < 4; ++i) {
            CHECK(t->dims[i] == dims[i]);
            CHECK(t->box[i] == box[i]);
            CHECK(t->element_strides[i] == 1);
            if (i < 3) CHECK(t->strides[i] == strides[i]);
        }
        // memoised: the same cache again is not encoded again
        REQUIRE(mla_decode_fwd(ctx, &c.a, nullptr) == MLA_SUCCESS);
        CHECK(fake_rt_call_count("cuTensorMapEncodeTiled") == 1);
        // a launch_kv_tma 1 table: the 3-D map of boxes per 64-column block
        mla_context* one = fake_test::fake_context(root1);
        const int n = fake_rt_launch_count();
        REQUIRE(mla_decode_fwd(one, &c.a, nullptr) == MLA_SUCCESS);
        CHECK(params_of(fake_rt_launch(n)).kv_tma == 1);
        CHECK(fake_rt_last_tensor_map()->rank == 3);
        CHECK(fake_rt_last_tensor_map()->box[1] == 64);
        mla_context_destroy(one);
        mla_context_destroy(ctx);
    }
}

TEST_CASE("decode launch: the three-warpgroup fp8 qm build takes 384 threads", "[decode][tma]") {
    // mla_decode_qm_fp8_fp8_m64_ws (decode_qm8_ws.cuh; in mla_decode_qm_fp8_fp8.cubin when built with
    // -DMLA_QM8_WS=1, measured slower, so no shipped row names it): a row naming it launches 384 threads,
    // with the fp8 tensor map at page size >= 8 and without it below (its cp.async fallback);
    // launch_threads that disagree with the build are a table error before anything launches
    struct K {
        const char* threads;
        const char* kernel;
        int ps;
        mla_status st;
        const char* msg;
    };
    const K ks[] = {
        {"384", "mla_decode_qm_fp8_fp8_m64_ws", 64, MLA_SUCCESS, ""},
        {"384", "mla_decode_qm_fp8_fp8_m64_ws", 16, MLA_SUCCESS, ""},
        {"384", "mla_decode_qm_fp8_fp8_m64_ws", 4, MLA_SUCCESS, ""},
        {"256", "mla_decode_qm_fp8_fp8_m64_ws", 64, MLA_ERROR_TABLE,
         "launch_threads 256 / launch_smem 231936, the kernel is built for 384 / 231936"},
        {"384", "mla_decode_qm_fp8_fp8_m64", 64, MLA_ERROR_TABLE,
         "launch_threads 384 / launch_smem 231936, the kernel is built for 256 / 231936"},
    };
    for (const K& k : ks) {
        INFO(k.kernel << " launch_threads " << k.threads << " page " << k.ps);
        fake_rt_reset();
        const std::string row = std::string("fp8,fp8,64,1,0,0,1,1,0,") + k.threads + ",231936," + k.kernel +
                                ",mla_decode_qm_fp8_fp8.cubin,1\n";
        const std::string root = fake_root::sm90_decode_root(
            tables_src(),
            std::string("qType,kvType,Gqa,ps,qSeqLen,prefill,causal,lse,cprr,launch_threads,launch_smem,knl_name,"
                        "co_name,launch_kv_tma\n") +
                row);
        REQUIRE(!root.empty());
        mla_context* ctx = fake_test::fake_context(root);
        Call c(3, 64, 1, k.ps, 700, MLA_DTYPE_FP8_E4M3FN, MLA_DTYPE_FP8_E4M3FN);
        const mla_status st = mla_decode_fwd(ctx, &c.a, nullptr);
        INFO(mla_last_error());
        CHECK(st == k.st);
        if (k.st == MLA_SUCCESS) {
            const fake_rt_launch_record* r = fake_rt_launch(0);
            REQUIRE(r != nullptr);
            CHECK(std::string(r->symbol) == k.kernel);
            CHECK(r->block[0] == 384u);
            CHECK(r->shared == 231936u);
            const int tma = k.ps >= 8 ? 1 : 0;  // MLA_KV_TMA_MIN_PAGE at its default (decode_check.cpp)
            CHECK(params_of(r).kv_tma == tma);
            CHECK(fake_rt_call_count("cuTensorMapEncodeTiled") == tma);
        } else {
            CHECK(std::string(mla_last_error()).find(k.msg) != std::string::npos);
            CHECK(fake_rt_launch_count() == 0);
        }
        mla_context_destroy(ctx);
    }
}

TEST_CASE("decode launch: launch_kv_tma_l2 sets the tensor map's L2 promotion", "[decode][tma]") {
    // bytes in the table -> CUtensorMapL2promotion (0 none, 1 64 B, 2 128 B, 3 256 B); anything
    // else is a table error before anything is encoded or launched
    struct K {
        const char* l2;
        mla_status st;
        int promotion;
    };
    const K ks[] = {{"0", MLA_SUCCESS, 0},  {"64", MLA_SUCCESS, 1},      {"128", MLA_SUCCESS, 2},
                    {"256", MLA_SUCCESS, 3}, {"32", MLA_ERROR_TABLE, -1}, {"-1", MLA_ERROR_TABLE, -1},
                    {"512", MLA_ERROR_TABLE, -1}};
    for (const K& k : ks) {
        INFO("launch_kv_tma_l2 " << k.l2);
        mla_context* ctx = nullptr;
        const mla_status st = decode_on_m16_row(",launch_kv_tma,launch_kv_tma_l2", std::string(",1,") + k.l2, &ctx);
        INFO(mla_last_error());
        CHECK(st == k.st);
        if (k.st == MLA_SUCCESS) {
            CHECK(params_of(fake_rt_launch(0)).kv_tma == 1);
            REQUIRE(fake_rt_last_tensor_map() != nullptr);
            CHECK(fake_rt_last_tensor_map()->l2_promotion == k.promotion);
            CHECK(fake_rt_last_tensor_map()->swizzle == 3);
        } else {
            CHECK(std::string(mla_last_error()).find(std::string("launch_kv_tma_l2 must be 0, 64, 128 or 256, got ") +
                                                     k.l2) != std::string::npos);
            CHECK(fake_rt_call_count("cuTensorMapEncodeTiled") == 0);
            CHECK(fake_rt_launch_count() == 0);
        }
        mla_context_destroy(ctx);
    }
}

TEST_CASE("decode launch: a TMA row with an empty KV cache loads nothing by TMA", "[decode][tma]") {
    // every request has zero KV tokens: num_pages 0 and no cache pointer are valid input; the
    // launch must not ask the driver for a map of nothing (it would refuse it)
    fake_rt_reset();
    mla_context* ctx = make_ctx();
    DecodeCall c(3, 16, 1, 64, 0, MLA_DTYPE_BF16, MLA_DTYPE_BF16, 1, 1, 0, /*len_step=*/0);
    INFO(c.why);
    REQUIRE(c.ok);
    REQUIRE(c.a.num_pages == 0);
    c.a.kv_cache = nullptr;
    const mla_status st = mla_decode_fwd(ctx, &c.a, nullptr);
    INFO(mla_last_error());
    REQUIRE(st == MLA_SUCCESS);
    CHECK(params_of(fake_rt_launch(0)).kv_tma == 0);
    CHECK(fake_rt_call_count("cuTensorMapEncodeTiled") == 0);
    mla_context_destroy(ctx);
}
