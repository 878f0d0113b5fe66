// test_amd_gfx9.cpp - gfx942 / gfx950 stage-1 launches on the fake HIP runtime: for one row of
// each route (gfx942 persistent and non-persistent, gfx950 with LSE and with round-robin CP) the
// image loaded, the symbol, grid, block, dynamic LDS and all 368 argument bytes.
#include "amd_test.h"

using amdt::dev;

namespace {

const float* fptr(uintptr_t a) { return static_cast<const float*>(dev(a)); }

}  // namespace

TEST_CASE_METHOD(amdt::Fixture, "gfx942 persistent fp8: 368-byte block, one workgroup per cluster",
                 "[amd][gfx942][persistent]") {
    mla_context* ctx = amdt::create("gfx942", "gfx942:sramecc+:xnack-", 304);
    mla_amd_stage1_args a = amdt::base_args();
    a.q_dtype = a.kv_dtype = MLA_DTYPE_FP8_E4M3FNUZ;
    a.num_heads = 16;
    a.max_seqlen_q = 1;
    a.page_size = 1;
    a.persistent = 1;
    a.work_meta_data = static_cast<const uint64_t*>(dev(0x70000000));
    a.work_indptr = static_cast<const int32_t*>(dev(0x70001000));
    a.work_indptr_len = 305;
    a.q_scale = fptr(0x80000000);
    a.kv_scale = fptr(0x80000010);
    void* stream = dev(0xabc0);
    amdt::launch_ok(ctx, a, stream);

    REQUIRE(fake_rt_launch_count() == 1);
    REQUIRE(fake_rt_function_count() == 1);
    CHECK(std::string(fake_rt_function_name(0)) == "_ZN5aiter24fx_a8w8_qh16_qseqlen1_psE");
    amdt::Gfx9Fields f = amdt::gfx9_fields_of(a);
    f.scale = 0.1352337f;
    f.mqa = 16;                    // 16 heads x 1 token
    f.kv_split = 1;
    f.q_bytes = 16 * 576 * 1 * 1;  // Q.stride(0) * itemsize * max_seqlen_q
    f.page_bytes = 576;            // one token of fp8 per page
    f.log2_page = 0;
    f.stp = a.work_meta_data;      // persistent: the work table
    f.rp = a.output;               // persistent: unsplit works write the output
    f.q_scale = a.q_scale; f.kv_scale = a.kv_scale;
    f.out16 = 1;                   // persistent: the split count
    f.cp_world = 1; f.cp_rank = 0;
    amdt::check_launch(0, {"gfx942/mla/fx_a8w8_qh16_qseqlen1_ps.co",
                           "_ZN5aiter24fx_a8w8_qh16_qseqlen1_psE", {304, 1, 1}, {256, 1, 1}, 0, stream},
                       amdt::gfx9_block(f));

    // Again: the module and function come from the context's cache.
    amdt::launch_ok(ctx, a, nullptr);
    CHECK(fake_rt_module_count() == 1);
    CHECK(fake_rt_function_count() == 1);
    REQUIRE(fake_rt_launch_count() == 2);
    CHECK(fake_rt_launch(1)->stream == nullptr);
    CHECK(std::memcmp(fake_rt_launch(1)->args, fake_rt_launch(0)->args, 368) == 0);
    mla_context_destroy(ctx);
    CHECK(fake_rt_module_unloaded(0) == 1);
}

TEST_CASE_METHOD(amdt::Fixture, "gfx942 non-persistent: grid (ceil(L*gqa/sub_Q), B, splits)",
                 "[amd][gfx942][split]") {
    mla_context* ctx = amdt::create("gfx942", "gfx942", 304);
    mla_amd_stage1_args a = amdt::base_args();
    a.persistent = 0;
    a.num_kv_splits_indptr = static_cast<const int32_t*>(dev(0x70002000));

    SECTION("bf16 16 heads, qlen 1: sub_Q 16, 4 fp32 splits, LSE pointer passed, no scales") {
        a.batch_size = 5;
        a.num_heads = 16;
        a.max_seqlen_q = 1;
        a.page_size = 16;
        a.num_splits = 4;
        a.split_dtype = MLA_DTYPE_FP32;
        a.lse = static_cast<float*>(dev(0x90000000));
        a.q_scale = fptr(0x80000000);   // bf16 Q: aiter passes neither scale
        a.kv_scale = fptr(0x80000010);
        amdt::launch_ok(ctx, a, nullptr);
        amdt::Gfx9Fields f = amdt::gfx9_fields_of(a);
        f.mqa = 16;
        f.kv_split = 4;
        f.q_bytes = 16 * 576 * 2;      // bf16, one token per request
        f.page_bytes = 16 * 576 * 2;   // 16 tokens per page
        f.log2_page = 4;
        f.stp = a.num_kv_splits_indptr;
        f.rp = nullptr;
        f.out16 = 0;                   // 4 splits: partials, stage 2 merges
        f.lsep = a.lse;
        f.cp_world = 1;
        amdt::check_launch(0, {"gfx942/mla/fx_a16w16_qh16_qseqlen1.co",
                               "_ZN5aiter23fx_a16w16_qh16_qseqlen1E", {1, 5, 4}, {256, 1, 1}, 0, nullptr},
                           amdt::gfx9_block(f));
    }
    SECTION("bf16 128 heads, qlen 2, one bf16 split: sub_Q 128 -> 2 x-groups, direct output") {
        a.batch_size = 2;
        a.num_heads = 128;
        a.max_seqlen_q = 2;
        a.page_size = 64;
        a.num_splits = 1;
        a.split_dtype = MLA_DTYPE_BF16;
        amdt::launch_ok(ctx, a, nullptr);
        amdt::Gfx9Fields f = amdt::gfx9_fields_of(a);
        f.mqa = 256;
        f.kv_split = 1;
        f.q_bytes = 128 * 576 * 2 * 2;
        f.page_bytes = 64 * 576 * 2;
        f.log2_page = 6;
        f.stp = a.num_kv_splits_indptr;
        f.out16 = 1;
        f.cp_world = 1;
        amdt::check_launch(0, {"gfx942/mla/fx_a16w16_qh128.co", "_ZN5aiter15fx_a16w16_qh128E",
                               {2, 2, 1}, {256, 1, 1}, 0, nullptr},
                           amdt::gfx9_block(f));
    }
    SECTION("fp8 16 heads, qlen 3: row qSeqLen 4, sub_Q 64, both scales") {
        a.q_dtype = a.kv_dtype = MLA_DTYPE_FP8_E4M3FNUZ;
        a.num_heads = 16;
        a.max_seqlen_q = 3;
        a.page_size = 1;
        a.num_splits = 2;
        a.q_scale = fptr(0x80000000);
        a.kv_scale = fptr(0x80000010);
        a.cp_world_size = 3;  // no g_kv_indptr: passed through, plain kernel
        a.cp_rank = 2;
        amdt::launch_ok(ctx, a, nullptr);
        amdt::Gfx9Fields f = amdt::gfx9_fields_of(a);
        f.mqa = 48;
        f.kv_split = 2;
        f.q_bytes = 16 * 576 * 3;
        f.page_bytes = 576;
        f.stp = a.num_kv_splits_indptr;
        f.q_scale = a.q_scale; f.kv_scale = a.kv_scale;
        f.cp_world = 3; f.cp_rank = 2;
        amdt::check_launch(0, {"gfx942/mla/fx_a8w8_qh16_qseqlen4.co",
                               "_ZN5aiter21fx_a8w8_qh16_qseqlen4E", {1, 3, 2}, {256, 1, 1}, 0, nullptr},
                           amdt::gfx9_block(f));
    }
    mla_context_destroy(ctx);
}

TEST_CASE_METHOD(amdt::Fixture, "gfx950 persistent with final LSE: remapped (32,4) lse row, s_MQA = gqa",
                 "[amd][gfx950][lse]") {
    mla_context* ctx = amdt::create("gfx950", "gfx950:sramecc+:xnack-", 256);
    mla_amd_stage1_args a = amdt::base_args();
    a.q_dtype = a.kv_dtype = MLA_DTYPE_FP8_E4M3FN;
    a.batch_size = 7;
    a.num_heads = 64;
    a.max_seqlen_q = 2;   // gfx950 fp8 override: 64 heads at L >= 2 -> key (32, 4)
    a.page_size = 1;
    a.persistent = 1;
    a.work_meta_data = static_cast<const uint64_t*>(dev(0x70000000));
    a.work_indptr_len = 257;
    a.lse = static_cast<float*>(dev(0x90000000));
    a.q_scale = fptr(0x80000000);
    a.kv_scale = fptr(0x80000010);
    amdt::launch_ok(ctx, a, dev(0x77));
    amdt::Gfx9Fields f = amdt::gfx9_fields_of(a);
    f.mqa = 64;                     // remapped: the kernel packs gqa rows per token
    f.kv_split = 1;
    f.q_bytes = 64 * 576 * 1 * 2;
    f.page_bytes = 576;
    f.stp = a.work_meta_data;
    f.rp = a.output;
    f.q_scale = a.q_scale; f.kv_scale = a.kv_scale;
    f.out16 = 1;
    f.lsep = a.lse;
    f.cp_world = 1;
    amdt::check_launch(0, {"gfx950/mla/fx_a8w8_qh32_qseqlen4_lse_ps.co",
                           "_ZN5aiter28fx_a8w8_qh32_qseqlen4_lse_psE", {256, 1, 1}, {256, 1, 1}, 0,
                           dev(0x77)},
                       amdt::gfx9_block(f));
    mla_context_destroy(ctx);
}

TEST_CASE_METHOD(amdt::Fixture, "gfx950 persistent round-robin CP: cprr row, g_kv_indptr, world and rank",
                 "[amd][gfx950][cprr]") {
    mla_context* ctx = amdt::create("gfx950", "gfx950", 256);
    mla_amd_stage1_args a = amdt::base_args();
    a.persistent = 1;
    a.work_meta_data = static_cast<const uint64_t*>(dev(0x70000000));
    a.work_indptr_len = 129;
    a.g_kv_indptr = static_cast<const int32_t*>(dev(0x30004000));
    a.cp_world_size = 4;
    a.cp_rank = 3;

    SECTION("fp8 16 heads qlen 4, page 64 with a padded page stride") {
        a.q_dtype = a.kv_dtype = MLA_DTYPE_FP8_E4M3FN;
        a.num_heads = 16;
        a.max_seqlen_q = 4;
        a.page_size = 64;
        a.kv_stride_page = 64 * 576 + 256;
        a.q_scale = fptr(0x80000000);
        a.kv_scale = fptr(0x80000010);
        amdt::launch_ok(ctx, a, nullptr);
        amdt::Gfx9Fields f = amdt::gfx9_fields_of(a);
        f.mqa = 16;                       // gfx950 fp8 override (16, L 4): s_MQA = gqa
        f.kv_split = 1;
        f.q_bytes = 16 * 576 * 4;
        f.page_bytes = 64 * 576 + 256;
        f.log2_page = 6;
        f.stp = a.work_meta_data;
        f.rp = a.output;
        f.q_scale = a.q_scale; f.kv_scale = a.kv_scale;
        f.out16 = 1;
        f.gkvtp = a.g_kv_indptr;
        f.cp_world = 4; f.cp_rank = 3;
        amdt::check_launch(0, {"gfx950/mla/fx_a8w8_qh16_qseqlen4_cprr_ps.co",
                               "_ZN5aiter29fx_a8w8_qh16_qseqlen4_cprr_psE", {128, 1, 1}, {256, 1, 1},
                               0, nullptr},
                           amdt::gfx9_block(f));
    }
    SECTION("bf16 64 heads qlen 1 with LSE and CP; bf16 KV scale not passed") {
        a.num_heads = 64;
        a.max_seqlen_q = 1;
        a.page_size = 1;
        a.lse = static_cast<float*>(dev(0x90000000));
        a.kv_scale = fptr(0x80000010);
        amdt::launch_ok(ctx, a, nullptr);
        amdt::Gfx9Fields f = amdt::gfx9_fields_of(a);
        f.mqa = 64;
        f.kv_split = 1;
        f.q_bytes = 64 * 576 * 2;
        f.page_bytes = 576 * 2;
        f.stp = a.work_meta_data;
        f.rp = a.output;
        f.out16 = 1;
        f.lsep = a.lse;
        f.gkvtp = a.g_kv_indptr;
        f.cp_world = 4; f.cp_rank = 3;
        amdt::check_launch(0, {"gfx950/mla/fx_a16w16_qh64_qseqlen1_lse_cprr_ps.co",
                               "_ZN5aiter35fx_a16w16_qh64_qseqlen1_lse_cprr_psE", {128, 1, 1},
                               {256, 1, 1}, 0, nullptr},
                           amdt::gfx9_block(f));
    }
    mla_context_destroy(ctx);
}

TEST_CASE_METHOD(amdt::Fixture, "gfx950 non-persistent bf16 8 heads qlen 2: sub_Q 16, s_MQA 8",
                 "[amd][gfx950][split]") {
    mla_context* ctx = amdt::create("gfx950", "gfx950", 256);
    mla_amd_stage1_args a = amdt::base_args();
    a.persistent = 0;
    a.num_heads = 8;
    a.max_seqlen_q = 2;
    a.page_size = 1;
    a.batch_size = 9;
    a.num_splits = 16;
    a.num_kv_splits_indptr = static_cast<const int32_t*>(dev(0x70002000));
    amdt::launch_ok(ctx, a, nullptr);
    amdt::Gfx9Fields f = amdt::gfx9_fields_of(a);
    f.mqa = 8;
    f.kv_split = 16;
    f.q_bytes = 8 * 576 * 2 * 2;
    f.page_bytes = 576 * 2;
    f.stp = a.num_kv_splits_indptr;
    f.cp_world = 1;
    amdt::check_launch(0, {"gfx950/mla/fx_a16w16_qh8_qseqlen2.co", "_ZN5aiter22fx_a16w16_qh8_qseqlen2E",
                           {1, 9, 16}, {256, 1, 1}, 0, nullptr},
                       amdt::gfx9_block(f));
    mla_context_destroy(ctx);
}
