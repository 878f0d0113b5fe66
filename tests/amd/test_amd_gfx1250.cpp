// test_amd_gfx1250.cpp - gfx1250 launches on the fake HIP runtime: the page-64 stage-1 kernels
// (120-byte packed ABI, 128 threads, padded Q rows, the 128-head two-workgroup grid) and the PS1
// FP8 code objects of mla_dsl (their dyn_lds, the PS1 block of docs/amd.md, cprr tail).
#include "amd_test.h"

using amdt::dev;

namespace {

const float* fptr(uintptr_t a) { return static_cast<const float*>(dev(a)); }

// The 120-byte packed block, field by field (§5.2).
struct PackedFields {
    const void *r, *lse, *q, *kv, *ltp, *ltd, *ltl, *qtp, *q_scale, *kv_scale, *valid;
    uint32_t out16;
    float scale;
    uint32_t q_seq_lens, passes, page_bytes, log2_page, q_bytes, use_valid;
};
amdt::Block packed_block(const PackedFields& f) {
    amdt::Block b(120);
    const void* ptrs[11] = {f.r, f.lse, f.q, f.kv, f.ltp, f.ltd, f.ltl, f.qtp, f.q_scale, f.kv_scale,
                            f.valid};
    for (int i = 0; i < 11; ++i) b.ptr(8 * i, ptrs[i]);
    b.u32(88, f.out16);
    b.f32(92, f.scale);
    b.u32(96, f.q_seq_lens);
    b.u32(100, f.passes);
    b.u32(104, f.page_bytes);
    b.u32(108, f.log2_page);
    b.u32(112, f.q_bytes);
    b.u32(116, f.use_valid);
    return b;
}

mla_amd_stage1_args page64_args() {
    mla_amd_stage1_args a = amdt::base_args();
    a.q_dtype = a.kv_dtype = MLA_DTYPE_FP8_E4M3FN;
    a.page_size = 64;
    a.causal = 0;
    a.persistent = 0;
    a.num_kv_splits_indptr = static_cast<const int32_t*>(dev(0x70002000));
    a.q_scale = fptr(0x80000000);
    a.kv_scale = fptr(0x80000010);
    a.valid_split_count = static_cast<int32_t*>(dev(0x70003000));
    return a;
}

}  // namespace

TEST_CASE_METHOD(amdt::Fixture, "gfx1250 page 64: packed 120-byte block, 128 threads",
                 "[amd][gfx1250][page64]") {
    mla_context* ctx = amdt::create("gfx1250", "gfx1250", 256);
    mla_amd_stage1_args a = page64_args();

    SECTION("16 heads qlen 2, 3 splits, Q rows padded to 768 bytes") {
        a.batch_size = 6;
        a.num_heads = 16;
        a.max_seqlen_q = 2;
        a.num_splits = 3;
        a.q_stride_head = 768;            // stride(1) 768 >= 576
        a.q_stride_token = 16 * 768;
        a.use_valid_split_count_reduce = 1;
        amdt::launch_ok(ctx, a, dev(0x5));
        PackedFields f{a.split_data, a.split_lse, a.q, a.kv_cache, a.kv_indptr, a.kv_page_indices,
                       a.kv_last_page_lens, a.qo_indptr, a.q_scale, a.kv_scale, a.valid_split_count,
                       0, a.softmax_scale, 32, 3, 64 * 576, 6,
                       16 * 2 * 576,  // aiter: gqa * L * 576 * itemsize, not the padded pitch
                       1};
        amdt::check_launch(0, {"gfx1250/mla/fx_a8w8_qh16_16mx2_np.co",
                               "_ZN5aiter21fx_a8w8_qh16_16mx2_npE", {1, 6, 3}, {128, 1, 1}, 0, dev(0x5)},
                           packed_block(f));
    }
    SECTION("128 heads qlen 1, one bf16 split: two workgroups along x") {
        a.batch_size = 4;
        a.num_heads = 128;
        a.max_seqlen_q = 1;
        a.num_splits = 1;
        a.split_dtype = MLA_DTYPE_BF16;
        amdt::launch_ok(ctx, a, nullptr);
        PackedFields f{a.split_data, a.split_lse, a.q, a.kv_cache, a.kv_indptr, a.kv_page_indices,
                       a.kv_last_page_lens, a.qo_indptr, a.q_scale, a.kv_scale, a.valid_split_count,
                       1, a.softmax_scale, 128, 1, 64 * 576, 6, 128 * 576, 0};
        amdt::check_launch(0, {"gfx1250/mla/fx_a8w8_qh128_16mx4_np.co",
                               "_ZN5aiter22fx_a8w8_qh128_16mx4_npE", {2, 4, 1}, {128, 1, 1}, 0, nullptr},
                           packed_block(f));
    }
    SECTION("the page-64 route refuses what it has no kernel for") {
        a.num_heads = 16;
        a.max_seqlen_q = 2;
        a.num_splits = 2;
        a.lse = static_cast<float*>(dev(0x90000000));
        CHECK(mla_amd_decode_stage1(ctx, &a, nullptr) == MLA_ERROR_NO_KERNEL);
        CHECK(std::string(mla_last_error()).find("lse=0 rows only") != std::string::npos);
        a.lse = nullptr;
        a.page_size = 16;
        CHECK(mla_amd_decode_stage1(ctx, &a, nullptr) == MLA_ERROR_NO_KERNEL);
        CHECK(std::string(mla_last_error()).find("need page_size 64") != std::string::npos);
        a.page_size = 64;
        a.g_kv_indptr = static_cast<const int32_t*>(dev(0x30004000));
        CHECK(mla_amd_decode_stage1(ctx, &a, nullptr) == MLA_ERROR_NO_KERNEL);
        a.g_kv_indptr = nullptr;
        a.max_seqlen_q = 3;  // (16, 3) is not a variant: the remap rejects it
        CHECK(mla_amd_decode_stage1(ctx, &a, nullptr) == MLA_ERROR_UNSUPPORTED_SHAPE);
        a.max_seqlen_q = 2;
        a.q_stride_head = 500;
        a.q_stride_token = 16 * 500;
        CHECK(mla_amd_decode_stage1(ctx, &a, nullptr) == MLA_ERROR_INVALID_ARGUMENT);
        a.q_stride_head = 768;
        a.q_stride_token = 16 * 576;  // not heads * row pitch
        CHECK(mla_amd_decode_stage1(ctx, &a, nullptr) == MLA_ERROR_INVALID_ARGUMENT);
        a.q_stride_token = 0;
        a.valid_split_count = nullptr;
        CHECK(mla_amd_decode_stage1(ctx, &a, nullptr) == MLA_ERROR_INVALID_ARGUMENT);
        CHECK(std::string(mla_last_error()) == "mla_amd_decode_stage1: valid_split_count is NULL");
        CHECK(fake_rt_launch_count() == 0);
        CHECK(fake_rt_module_count() == 0);
    }
    mla_context_destroy(ctx);
}

namespace {

mla_amd_stage1_args ps1_args() {
    mla_amd_stage1_args a = amdt::base_args();
    a.q_dtype = a.kv_dtype = MLA_DTYPE_FP8_E4M3FN;
    a.page_size = 1;
    a.persistent = 1;
    a.kv_last_page_lens = nullptr;  // not read by PS1
    a.work_indptr = static_cast<const int32_t*>(dev(0x70001000));
    a.work_info_set = static_cast<const int32_t*>(dev(0x70004000));
    a.work_indptr_len = 257;
    a.num_pages = 123457;
    a.num_page_indices = 98765;
    a.q_scale = fptr(0x80000000);
    a.kv_scale = fptr(0x80000010);
    return a;
}

// The PS1 block (docs/amd.md): 11 pointers, scale, num_pages, num_page_indices, pad.
amdt::Block ps1_block(const mla_amd_stage1_args& a, size_t size) {
    amdt::Block b(size);
    const void* ptrs[11] = {a.split_data, a.split_lse, a.output, a.lse, a.q, a.kv_cache,
                            a.kv_page_indices, a.work_indptr, a.work_info_set, a.q_scale, a.kv_scale};
    for (int i = 0; i < 11; ++i) b.ptr(8 * i, ptrs[i]);
    b.f32(88, a.softmax_scale);
    b.i32(92, int32_t(a.num_pages));
    b.i32(96, int32_t(a.num_page_indices));
    return b;
}

}  // namespace

TEST_CASE_METHOD(amdt::Fixture, "gfx1250 PS1 FP8 code objects: dyn_lds, persistent grid, PS1 block",
                 "[amd][gfx1250][ps1]") {
    mla_context* ctx = amdt::create("gfx1250", "gfx1250", 256);
    mla_amd_stage1_args a = ps1_args();

    SECTION("96 heads qlen 4 with final LSE: qSeqLen-0 row, 254208 bytes of LDS") {
        a.num_heads = 96;
        a.max_seqlen_q = 4;
        a.lse = static_cast<float*>(dev(0x90000000));
        amdt::launch_ok(ctx, a, dev(0x9));
        amdt::check_launch(0, {"gfx1250/mla_dsl/fx_a8w8_qh96_16mx6_lse_ps.co",
                               "_ZN5aiter25fx_a8w8_qh96_16mx6_lse_psE", {256, 1, 1}, {256, 1, 1},
                               254208, dev(0x9)},
                           ps1_block(a, 104));
    }
    SECTION("128 heads round-robin CP (cp_world_size > 1): cprr row and the CP tail") {
        a.num_heads = 128;
        a.max_seqlen_q = 1;
        a.cp_world_size = 2;
        a.cp_rank = 1;
        a.g_kv_indptr = static_cast<const int32_t*>(dev(0x30004000));
        amdt::launch_ok(ctx, a, nullptr);
        amdt::Block b = ps1_block(a, 136);
        b.ptr(104, a.qo_indptr);
        b.ptr(112, a.kv_indptr);
        b.ptr(120, a.g_kv_indptr);
        b.i32(128, 2);
        b.i32(132, 1);
        amdt::check_launch(0, {"gfx1250/mla_dsl/fx_a8w8_qh128_16mx8_cprr_ps.co",
                               "_ZN5aiter27fx_a8w8_qh128_16mx8_cprr_psE", {256, 1, 1}, {256, 1, 1},
                               163840, nullptr},
                           b);
    }
    SECTION("128 heads non-causal qlen 1: exact qSeqLen row, no LDS") {
        a.num_heads = 128;
        a.max_seqlen_q = 1;
        a.causal = 0;
        a.work_indptr_len = 3;
        amdt::launch_ok(ctx, a, nullptr);
        amdt::check_launch(0, {"gfx1250/mla_dsl/fx_a8w8_qh128_16mx8_msk0_ps.co",
                               "_ZN5aiter27fx_a8w8_qh128_16mx8_msk0_psE", {2, 1, 1}, {256, 1, 1}, 0,
                               nullptr},
                           ps1_block(a, 104));
    }
    SECTION("PS1 refusals: no row, CP without g_kv_indptr, page size, dtypes, Q pitch") {
        a.num_heads = 96;
        a.max_seqlen_q = 1;
        a.causal = 0;  // no (96, causal 0, lse 0) row in the fixture
        CHECK(mla_amd_decode_stage1(ctx, &a, nullptr) == MLA_ERROR_NO_KERNEL);
        CHECK(std::string(mla_last_error()).find("mla_dsl key qType=fp8 kvType=fp8 Gqa=96") !=
              std::string::npos);
        a.causal = 1;
        a.num_heads = 128;
        a.cp_world_size = 2;
        CHECK(mla_amd_decode_stage1(ctx, &a, nullptr) == MLA_ERROR_INVALID_ARGUMENT);
        CHECK(std::string(mla_last_error()).find("needs g_kv_indptr") != std::string::npos);
        a.cp_world_size = 1;
        a.page_size = 64;
        CHECK(mla_amd_decode_stage1(ctx, &a, nullptr) == MLA_ERROR_UNSUPPORTED_SHAPE);
        a.page_size = 1;
        a.q_dtype = a.kv_dtype = MLA_DTYPE_BF16;
        CHECK(mla_amd_decode_stage1(ctx, &a, nullptr) == MLA_ERROR_UNSUPPORTED_SHAPE);
        a.q_dtype = a.kv_dtype = MLA_DTYPE_FP8_E4M3FN;
        a.q_stride_head = 768;
        CHECK(mla_amd_decode_stage1(ctx, &a, nullptr) == MLA_ERROR_INVALID_ARGUMENT);
        a.q_stride_head = 0;
        a.work_info_set = nullptr;
        CHECK(mla_amd_decode_stage1(ctx, &a, nullptr) == MLA_ERROR_INVALID_ARGUMENT);
        CHECK(fake_rt_launch_count() == 0);
        CHECK(fake_rt_module_count() == 0);
    }
    mla_context_destroy(ctx);
}
