// test_amd_errors.cpp - what mla_amd_decode_stage1 refuses, with which status and message, and
// that nothing is loaded or launched then: bad input, remap rejections, missing rows, a missing
// code-object file, archs without tables, a refused launch, malformed PS1 rows, duplicate keys.
#include "amd_test.h"

#include <filesystem>
#include <stdlib.h>
#include <unistd.h>

using amdt::dev;

namespace {

const float* fptr(uintptr_t a) { return static_cast<const float*>(dev(a)); }

bool has(const std::string& hay, const std::string& needle) {
    return hay.find(needle) != std::string::npos;
}

// A fresh folder removed at scope exit.
struct Tmp {
    std::string path;
    Tmp() {
        std::string t = (std::filesystem::temp_directory_path() / "mla_amd_XXXXXX").string();
        REQUIRE(mkdtemp(&t[0]) != nullptr);
        path = t;
    }
    ~Tmp() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
    void write(const std::string& rel, const std::string& text) const {
        const std::filesystem::path p = std::filesystem::path(path) / rel;
        std::filesystem::create_directories(p.parent_path());
        std::ofstream(p, std::ios::binary) << text;
    }
    void copy_co(const std::string& fixture_rel, const std::string& rel) const {
        write(rel, amdt::read_file(amdt::fixture_root() + "/" + fixture_rel));
    }
};

// A valid gfx942 persistent fp8 request (the fixture's first row).
mla_amd_stage1_args good_gfx942() {
    mla_amd_stage1_args a = amdt::base_args();
    a.q_dtype = a.kv_dtype = MLA_DTYPE_FP8_E4M3FNUZ;
    a.num_heads = 16;
    a.max_seqlen_q = 1;
    a.page_size = 1;
    a.persistent = 1;
    a.work_meta_data = static_cast<const uint64_t*>(dev(0x70000000));
    a.work_indptr_len = 305;
    a.q_scale = fptr(0x80000000);
    a.kv_scale = fptr(0x80000010);
    return a;
}

void refuse(mla_context* ctx, const mla_amd_stage1_args& a, mla_status want, const std::string& msg) {
    const mla_status st = mla_amd_decode_stage1(ctx, &a, nullptr);
    INFO(mla_last_error());
    CHECK(st == want);
    CHECK(has(mla_last_error(), msg));
    CHECK(fake_rt_launch_count() == 0);
    CHECK(fake_rt_module_count() == 0);
}

}  // namespace

TEST_CASE_METHOD(amdt::Fixture, "bad input: a status and a message, nothing loaded or launched",
                 "[amd][errors]") {
    mla_context* ctx = amdt::create("gfx942", "gfx942", 304);
    mla_amd_stage1_args a = good_gfx942();
    const std::string w = "mla_amd_decode_stage1: ";

    CHECK(mla_amd_decode_stage1(nullptr, &a, nullptr) == MLA_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(mla_last_error()) == "context is NULL");
    CHECK(mla_amd_decode_stage1(ctx, nullptr, nullptr) == MLA_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(mla_last_error()) == w + "args is NULL");
    mla_amd_stage1_args b = a;
    b.struct_size = 0;
    refuse(ctx, b, MLA_ERROR_INVALID_ARGUMENT, "initialise the struct with its *_INIT macro");

    b = a; b.q = nullptr;
    refuse(ctx, b, MLA_ERROR_INVALID_ARGUMENT, w + "q is NULL");
    b = a; b.kv_cache = dev(0x20000004);
    refuse(ctx, b, MLA_ERROR_INVALID_ARGUMENT, "is not 16-byte aligned");
    b = a; b.split_lse = nullptr;
    refuse(ctx, b, MLA_ERROR_INVALID_ARGUMENT, w + "split_lse is NULL");
    b = a; b.output = nullptr;
    refuse(ctx, b, MLA_ERROR_INVALID_ARGUMENT, w + "output is NULL");
    b = a; b.work_meta_data = nullptr;
    refuse(ctx, b, MLA_ERROR_INVALID_ARGUMENT, w + "work_meta_data is NULL");
    b = a; b.work_indptr_len = 1;
    refuse(ctx, b, MLA_ERROR_INVALID_ARGUMENT, "work_indptr_len 1 must be num_clusters + 1 >= 2");
    b = a; b.kv_scale = nullptr;
    refuse(ctx, b, MLA_ERROR_INVALID_ARGUMENT, "fp8 Q requires q_scale and kv_scale (got q_scale set, kv_scale NULL)");
    b = a; b.q_scale = nullptr;
    refuse(ctx, b, MLA_ERROR_INVALID_ARGUMENT, "fp8 Q requires q_scale and kv_scale");
    b = a; b.nhead_kv = 2;
    refuse(ctx, b, MLA_ERROR_INVALID_ARGUMENT, w + "nhead_kv 2: only 1 KV head (absorbed MLA) is supported");
    b = a; b.cp_world_size = 4; b.cp_rank = 4;
    refuse(ctx, b, MLA_ERROR_INVALID_ARGUMENT, w + "cp_rank 4 is outside [0, cp_world_size = 4)");
    b = a; b.cp_rank = -1;
    refuse(ctx, b, MLA_ERROR_INVALID_ARGUMENT, "cp_rank -1 is outside");
    b = a; b.cp_world_size = 0;
    refuse(ctx, b, MLA_ERROR_INVALID_ARGUMENT, "cp_world_size 0 < 1");
    b = a; b.q_dtype = b.kv_dtype = MLA_DTYPE_FP8_E4M3FN;
    refuse(ctx, b, MLA_ERROR_INVALID_ARGUMENT, "gfx942 code objects read fp8 as fp8_fnuz");
    b = a; b.q_dtype = MLA_DTYPE_FP16;
    refuse(ctx, b, MLA_ERROR_INVALID_ARGUMENT, "q_dtype fp16: aiter's stage-1 kernels take bf16 or fp8");
    b = a; b.batch_size = 0;
    refuse(ctx, b, MLA_ERROR_INVALID_ARGUMENT, "batch_size 0 < 1");
    b = a; b.page_size = 3;
    refuse(ctx, b, MLA_ERROR_INVALID_ARGUMENT, "page_size 3 is not a power of two");
    b = a; b.softmax_scale = 0.f;
    refuse(ctx, b, MLA_ERROR_INVALID_ARGUMENT, "softmax_scale 0 is not a positive finite number");
    b = a; b.q_stride_head = 768;
    refuse(ctx, b, MLA_ERROR_INVALID_ARGUMENT, "only gfx1250 page 64 takes padded rows");
    b = a; b.q_stride_token = 17 * 576;
    refuse(ctx, b, MLA_ERROR_INVALID_ARGUMENT, "q_stride_token 9792 must be num_heads * q_stride_head = 9216");
    b = a; b.kv_stride_page = 500;
    refuse(ctx, b, MLA_ERROR_INVALID_ARGUMENT, "kv_stride_page 500 < page_size * 576 = 576");
    b = a; b.kv_dtype = MLA_DTYPE_BYTE; b.q_dtype = MLA_DTYPE_BF16;
    refuse(ctx, b, MLA_ERROR_INVALID_ARGUMENT, "byte KV needs kv_stride_page");
    b = a; b.num_splits = 2;
    refuse(ctx, b, MLA_ERROR_INVALID_ARGUMENT, "a persistent launch has one split column");
    b = a; b.split_dtype = MLA_DTYPE_BF16;
    refuse(ctx, b, MLA_ERROR_INVALID_ARGUMENT, "split_dtype must be fp32 for a persistent launch");
    b = a; b.persistent = 0; b.num_kv_splits_indptr = nullptr;
    refuse(ctx, b, MLA_ERROR_INVALID_ARGUMENT, w + "num_kv_splits_indptr is NULL");
    b = a; b.persistent = 0; b.num_kv_splits_indptr = static_cast<const int32_t*>(dev(0x70002000));
    refuse(ctx, b, MLA_ERROR_INVALID_ARGUMENT, "split_dtype must be bf16 with num_splits 1");
    b.num_splits = 0;
    refuse(ctx, b, MLA_ERROR_INVALID_ARGUMENT, "num_splits 0 is not in 1..65535");
    b = a; b.max_seqlen_q = 1 << 20; b.num_heads = 16;
    refuse(ctx, b, MLA_ERROR_INVALID_ARGUMENT, "does not fit the kernel's 32-bit field");
    mla_context_destroy(ctx);
}

TEST_CASE_METHOD(amdt::Fixture, "routing refusals: remap reject, no row; a missing code object",
                 "[amd][errors][route]") {
    mla_context* ctx = amdt::create("gfx942", "gfx942", 304);
    mla_amd_stage1_args a = good_gfx942();

    SECTION("fp8 64 heads non-persistent: the remap rejects it") {
        a.persistent = 0;
        a.num_heads = 64;
        a.num_splits = 2;
        a.num_kv_splits_indptr = static_cast<const int32_t*>(dev(0x70002000));
        refuse(ctx, a, MLA_ERROR_UNSUPPORTED_SHAPE,
               "gfx942 remap rejects the request: fp8 gqa 64 only supports persistent mode");
    }
    SECTION("no table row: the message gives the remapped key") {
        a.num_heads = 32;
        a.max_seqlen_q = 2;
        refuse(ctx, a, MLA_ERROR_NO_KERNEL,
               "no gfx942 kernel for mla_asm key qType=fp8 kvType=fp8 Gqa=32 ps=1 qSeqLen=2 (from 32 "
               "heads, max_seqlen_q 2) lse=0 cprr=0");
    }
    SECTION("the row's file is missing: CODE_OBJECT naming the path, nothing loaded") {
        a.q_dtype = a.kv_dtype = MLA_DTYPE_BF16;
        a.persistent = 0;
        a.num_heads = 32;
        a.num_splits = 2;
        a.num_kv_splits_indptr = static_cast<const int32_t*>(dev(0x70002000));
        const std::string co = amdt::fixture_root() + "/gfx942/mla/fx_a16w16_qh32_missing.co";
        REQUIRE(!std::filesystem::exists(co));
        refuse(ctx, a, MLA_ERROR_CODE_OBJECT,
               "code object file missing: " + co + " (kernel _ZN5aiter22fx_a16w16_qh32_missingE, table " +
                   amdt::fixture_root() + "/gfx942/mla/mla_asm.csv:7)");
        CHECK(fake_rt_function_count() == 0);
    }
    SECTION("the runtime refuses the launch") {
        fake_rt_fail("hipModuleLaunchKernel", 98);
        CHECK(mla_amd_decode_stage1(ctx, &a, nullptr) == MLA_ERROR_LAUNCH);
        CHECK(has(mla_last_error(), "hipModuleLaunchKernel failed"));
        CHECK(fake_rt_call_count("hipModuleLaunchKernel") == 1);
        CHECK(fake_rt_launch_count() == 0);
    }
    SECTION("the symbol is not in the code object") {
        fake_rt_fail("hipModuleGetFunction", 500);
        CHECK(mla_amd_decode_stage1(ctx, &a, nullptr) == MLA_ERROR_CODE_OBJECT);
        CHECK(has(mla_last_error(), "_ZN5aiter24fx_a8w8_qh16_qseqlen1_psE"));
        CHECK(fake_rt_launch_count() == 0);
    }
    mla_context_destroy(ctx);
}

TEST_CASE_METHOD(amdt::Fixture, "archs: no table -> ARCH_NOT_BUILT, sm_90a context -> UNSUPPORTED_SHAPE",
                 "[amd][errors][arch]") {
    Tmp root;
    root.write("gfx942/mla/mla_asm.csv", "qType,kvType,Gqa,ps,qSeqLen,prefill,causal,lse,knl_name,co_name\n"
                                         "fp8,fp8,16,1,1,0,1,0,_ZN5aiter1kE,k.co\n");
    root.write("sm_90a/smoke/smoke.csv", "kind,launch_threads,knl_name,co_name\nsmoke,128,s,s.cubin\n");
    mla_context_options o = MLA_CONTEXT_OPTIONS_INIT;
    o.codeobject_root = root.path.c_str();
    mla_context* ctx = reinterpret_cast<mla_context*>(0x1);

    fake_rt_set_device("gfx950", 256);
    o.arch = "gfx950";
    CHECK(mla_context_create(&o, &ctx) == MLA_ERROR_ARCH_NOT_BUILT);
    CHECK(std::string(mla_last_error()) == "no code-object tables for gfx950 under " + root.path + "/gfx950");
    o.arch = "gfx1250";
    CHECK(mla_context_create(&o, &ctx) == MLA_ERROR_ARCH_NOT_BUILT);
    fake_rt_set_device("gfx1100", 96);  // a gfx arch libmla has no rules for
    o.arch = "gfx1100";
    CHECK(mla_context_create(&o, &ctx) == MLA_ERROR_ARCH_NOT_BUILT);
    CHECK(has(mla_last_error(), "unknown arch 'gfx1100'"));
    CHECK(ctx == reinterpret_cast<mla_context*>(0x1));

    fake_rt_set_device("9.0", 132);
    o.arch = "sm_90a";
    REQUIRE(mla_context_create(&o, &ctx) == MLA_SUCCESS);
    mla_amd_stage1_args a = good_gfx942();
    refuse(ctx, a, MLA_ERROR_UNSUPPORTED_SHAPE, "runs aiter's AMD code objects; the context is sm_90a");
    mla_context_destroy(ctx);
}

TEST_CASE_METHOD(amdt::Fixture, "PS1 rows: launch_threads column, malformed dyn_lds", "[amd][errors][table]") {
    Tmp root;
    const char* hdr = "qType,kvType,Gqa,qSeqLen,causal,lse,cprr,dyn_lds,launch_threads,knl_name,co_name\n";
    root.write("gfx1250/mla_dsl/mla_dsl.csv",
               std::string(hdr) + "fp8,fp8,96,0,1,0,0,65536,128,_ZN5aiter2k1E,k1.co\n"
                                  "fp8,fp8,96,0,0,0,0,-4,128,_ZN5aiter2k2E,k2.co\n"
                                  "fp8,fp8,96,0,1,1,0,0,100,_ZN5aiter2k3E,k3.co\n");
    root.copy_co("gfx1250/mla_dsl/fx_a8w8_qh96_16mx6_lse_ps.co", "gfx1250/mla_dsl/k1.co");
    mla_context* ctx = amdt::create("gfx1250", "gfx1250", 256, root.path);
    mla_amd_stage1_args a = amdt::base_args();
    a.q_dtype = a.kv_dtype = MLA_DTYPE_FP8_E4M3FN;
    a.num_heads = 96;
    a.max_seqlen_q = 2;
    a.page_size = 1;
    a.persistent = 1;
    a.work_indptr = static_cast<const int32_t*>(dev(0x70001000));
    a.work_info_set = static_cast<const int32_t*>(dev(0x70004000));
    a.work_indptr_len = 9;
    a.q_scale = fptr(0x80000000);
    a.kv_scale = fptr(0x80000010);
    amdt::launch_ok(ctx, a, nullptr);
    REQUIRE(fake_rt_launch_count() == 1);
    CHECK(fake_rt_launch(0)->block[0] == 128);  // the row's launch_threads
    CHECK(fake_rt_launch(0)->shared == 65536);
    CHECK(fake_rt_launch(0)->grid[0] == 8);
    CHECK(std::string(fake_rt_launch(0)->symbol) == "_ZN5aiter2k1E");

    a.causal = 0;
    CHECK(mla_amd_decode_stage1(ctx, &a, nullptr) == MLA_ERROR_TABLE);
    CHECK(has(mla_last_error(), "mla_dsl.csv:3: dyn_lds must be in 0..1048576, got -4"));
    a.causal = 1;
    a.lse = static_cast<float*>(dev(0x90000000));
    CHECK(mla_amd_decode_stage1(ctx, &a, nullptr) == MLA_ERROR_TABLE);
    CHECK(has(mla_last_error(), "mla_dsl.csv:4: launch_threads must be a multiple of 32 in 32..1024, got 100"));
    CHECK(fake_rt_launch_count() == 1);
    mla_context_destroy(ctx);
}

TEST_CASE_METHOD(amdt::Fixture, "aiter's duplicate gfx950 key: MLA_TABLE_DUPLICATES=first keeps the first row",
                 "[amd][errors][duplicates]") {
    const std::string table =
        "qType,kvType,Gqa,ps,qSeqLen,prefill,causal,lse,cprr,knl_name,co_name\n"
        "bf16,bf16,8,0,2,0,1,0,0,_ZN5aiter5firstE,first.co\n"
        "bf16,bf16,8,0,2,0,1,0,0,_ZN5aiter6secondE,second.co\n";
    mla_context_options o = MLA_CONTEXT_OPTIONS_INIT;
    o.arch = "gfx950";
    fake_rt_set_device("gfx950", 256);
    {
        Tmp root;
        root.write("gfx950/mla/mla_asm.csv", table);
        o.codeobject_root = root.path.c_str();
        mla_context* ctx = nullptr;
        unsetenv("MLA_TABLE_DUPLICATES");
        CHECK(mla_context_create(&o, &ctx) == MLA_ERROR_TABLE);
        CHECK(ctx == nullptr);
    }
    Tmp root;
    root.write("gfx950/mla/mla_asm.csv", table);
    root.copy_co("gfx950/mla/fx_a16w16_qh8_qseqlen2.co", "gfx950/mla/first.co");
    setenv("MLA_TABLE_DUPLICATES", "first", 1);
    mla_context* ctx = amdt::create("gfx950", "gfx950", 256, root.path);
    unsetenv("MLA_TABLE_DUPLICATES");
    mla_amd_stage1_args a = amdt::base_args();
    a.persistent = 0;
    a.num_heads = 8;
    a.max_seqlen_q = 2;
    a.page_size = 1;
    a.num_splits = 2;
    a.num_kv_splits_indptr = static_cast<const int32_t*>(dev(0x70002000));
    amdt::launch_ok(ctx, a, nullptr);
    REQUIRE(fake_rt_launch_count() == 1);
    CHECK(std::string(fake_rt_launch(0)->symbol) == "_ZN5aiter5firstE");
    mla_context_destroy(ctx);
}
