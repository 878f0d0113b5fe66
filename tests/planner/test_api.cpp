// test_api.cpp - buffer sizes (§3.2 and the split-cap sizing test of §8), bad arguments
// (edge-cases.md §5: a status and no write), mla_update_metadata (§3.4) and the device
// planner's launch through the fake CUDA runtime.
#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <sys/stat.h>

#include "fake_runtime.h"
#include "plan_helpers.h"
#include "planner/planner.h"
#include "ref_helpers.h"

using namespace plantest;

namespace {

mla_metadata_params base(const char* arch, int B, int L, int H) {
    mla_metadata_params p = MLA_METADATA_PARAMS_INIT;
    p.arch = arch;
    p.batch_size = B;
    p.max_seqlen_qo = L;
    p.num_heads = H;
    return p;
}

bool untouched(const Plan& pl) {
    for (uint64_t v : pl.md) if (v != 0) return false;
    for (int32_t v : pl.work_indptr) if (v != kSentinel) return false;
    for (int32_t v : pl.work_info) if (v != kSentinel) return false;
    for (int32_t v : pl.reduce_indptr) if (v != kSentinel) return false;
    for (int32_t v : pl.final_map) if (v != kSentinel) return false;
    for (int32_t v : pl.partial_map) if (v != kSentinel) return false;
    return true;
}

// Plans `b` with `p` and expects `want` with nothing written.
void expect_rejected(const mla_metadata_params& p, const Batch& b, mla_status want,
                     const char* what) {
    Plan pl = alloc_plan(p);
    INFO(what);
    const mla_status st = run_plan(p, b, pl);
    INFO(mla_last_error());
    CHECK(st == want);
    CHECK(std::string(mla_last_error()).size() > 10);
    CHECK(untouched(pl));
}

}  // namespace

TEST_CASE("sizes follow get_mla_metadata_info_v1", "[planner][sizes]") {
    mla_metadata_params p = base("sm_90a", 64, 1, 16);
    mla_metadata_sizes z = sizes_of(p);
    CHECK(z.num_clusters == 132);
    CHECK(z.kernel_num_heads == 16);
    CHECK(z.qk_batch_ratio == 1);
    CHECK(z.work_metadata_len == 2);
    CHECK(z.work_indptr_len == 133);
    CHECK(z.work_info_set_rows == 64 + 131);
    CHECK(z.reduce_indptr_len == 65);
    CHECK(z.reduce_final_map_rows == 64);
    CHECK(z.reduce_partial_map_len == 64 + 131);  // min(B + C - 1, 2(C - 1)) * 1
    CHECK(z.partial_rows == 131 + 64);            // (C - 1) + min(tiles, C - 1) fragments, T = 1
    CHECK(z.workspace_bytes == (195 * 16 * 512 * 4 + 255) / 256 * 256 + 195 * 16 * 4);
    // 128 heads fold into 2 x 64 on sm_90a; MTP 4 -> one-token tiles (64 / 64 = 1).
    p = base("sm_90a", 8, 4, 128);
    z = sizes_of(p);
    CHECK(z.qk_batch_ratio == 2);
    CHECK(z.kernel_num_heads == 64);
    CHECK(z.reduce_final_map_rows == 8 * 2 * 4);
    CHECK(z.work_info_set_rows == (16 + 131) * 4);
    // 16 heads at MTP 4: T = min(4, 64 / 16) = 4 tokens, one tile; partial rows x 4.
    p = base("sm_90a", 8, 4, 16);
    z = sizes_of(p);
    CHECK(z.reduce_final_map_rows == 8);
    CHECK(z.partial_rows == (131 + 8) * 4);
    // Explicit num_clusters is the CU count.
    p.num_clusters = 10;
    CHECK(sizes_of(p).num_clusters == 10);
    // Empty batch.
    p = base("sm_90a", 0, 1, 16);
    z = sizes_of(p);
    CHECK(z.reduce_indptr_len == 1);
    CHECK(z.reduce_final_map_rows == 0);
}

TEST_CASE("split-cap sizing (§8): never enlarges, tight cap shrinks, monotone", "[planner][sizes]") {
    const int64_t uncapped[] = {1024, 1052, 1276}, cap1[] = {5, 40, 320};
    const int batches[] = {1, 8, 64};
    for (int i = 0; i < 3; ++i) {
        mla_metadata_params p = base("gfx950", batches[i], 4, 128);
        p.q_dtype = p.kv_dtype = MLA_DTYPE_FP8_E4M3FN;
        INFO("B " << batches[i]);
        CHECK(sizes_of(p).reduce_partial_map_len == uncapped[i]);
        p.max_split_per_batch = 1;
        CHECK(sizes_of(p).reduce_partial_map_len == cap1[i]);
        int64_t prev = 0;
        for (int cap = 1; cap <= 512; cap *= 2) {
            p.max_split_per_batch = cap;
            const int64_t n = sizes_of(p).reduce_partial_map_len;
            CHECK(n >= prev);
            CHECK(n <= uncapped[i]);
            prev = n;
        }
        // Non-fast mode ignores the cap.
        p.fast_mode = 0;
        p.max_split_per_batch = -1;
        const int64_t a = sizes_of(p).reduce_partial_map_len;
        p.max_split_per_batch = 1;
        CHECK(sizes_of(p).reduce_partial_map_len == a);
    }
    // A capped plan fits its smaller buffers (the sizes are a bound, not a guess).
    std::mt19937 rng(3);
    for (int it = 0; it < 200; ++it) {
        mla_metadata_params p = base("sm_90a", 1 + int(rng() % 20), 1 + int(rng() % 4), 128);
        p.max_split_per_batch = 1 + int(rng() % 3);
        const Batch b = random_batch(rng, p.batch_size, p.max_seqlen_qo, 100000, 1, true);
        Plan pl = alloc_plan(p);
        REQUIRE(run_plan(p, b, pl) == MLA_SUCCESS);
        REQUIRE(check_invariants(p, b, pl, true) == "");
    }
}

TEST_CASE("bad arguments: a status, a message and no write (§5)", "[planner][args]") {
    const mla_metadata_params p = base("sm_90a", 3, 2, 16);
    const Batch good = make_batch({2, 1, 2}, {100, 0, 37}, 1);
    {
        Plan pl = alloc_plan(p);
        REQUIRE(run_plan(p, good, pl) == MLA_SUCCESS);
    }
    Batch b = good;
    b.qo[2] = 1;  // decreasing
    expect_rejected(p, b, MLA_ERROR_INVALID_ARGUMENT, "qo_indptr decreases");
    b = good;
    b.kv[1] = 200;
    b.kv[2] = 150;
    expect_rejected(p, b, MLA_ERROR_INVALID_ARGUMENT, "kv_indptr decreases");
    b = good;
    b.qo = {0, 3, 4, 6};
    expect_rejected(p, b, MLA_ERROR_INVALID_ARGUMENT, "qlen > max_seqlen_qo");
    b = good;
    b.qo[0] = -2;
    expect_rejected(p, b, MLA_ERROR_INVALID_ARGUMENT, "negative start");
    {
        mla_metadata_params q = p;
        q.page_size = 1024;
        Batch o = make_batch({1, 1, 1}, {1, 1, 1}, 1024);
        o.kv = {0, 1, 1 << 21, (1 << 21) + 1};  // 2^21 pages of 1024 tokens: 2^31 tokens
        expect_rejected(q, o, MLA_ERROR_INVALID_ARGUMENT, "overflowing length");
    }
    {
        mla_metadata_params q = p;
        q.page_size = 64;
        Batch o = make_batch({1, 1, 1}, {129, 64, 1}, 64);
        o.last[0] = 65;  // 129 tokens in 2 pages of 64 (§5.35: block table too narrow)
        expect_rejected(q, o, MLA_ERROR_INVALID_ARGUMENT, "last page length > page_size");
        o.last[0] = 0;
        expect_rejected(q, o, MLA_ERROR_INVALID_ARGUMENT, "last page length 0");
    }
    // Buffers one entry short, each in turn.
    for (int which = 0; which < 6; ++which) {
        Plan pl = alloc_plan(p);
        mla_metadata_buffers m = pl.buffers();
        int64_t* lens[] = {&m.work_metadata_len, &m.work_indptr_len, &m.work_info_set_rows,
                           &m.reduce_indptr_len, &m.reduce_final_map_rows, &m.reduce_partial_map_len};
        --*lens[which];
        INFO("buffer " << which);
        CHECK(mla_plan_metadata(&p, good.qo.data(), good.kv.data(), good.last.data(), &m, nullptr,
                                nullptr, nullptr) == MLA_ERROR_BUFFER_TOO_SMALL);
        CHECK(untouched(pl));
    }
    // Null pointers.
    {
        Plan pl = alloc_plan(p);
        mla_metadata_buffers m = pl.buffers();
        CHECK(mla_plan_metadata(&p, nullptr, good.kv.data(), good.last.data(), &m, nullptr,
                                nullptr, nullptr) == MLA_ERROR_INVALID_ARGUMENT);
        CHECK(mla_plan_metadata(&p, good.qo.data(), good.kv.data(), good.last.data(), nullptr,
                                nullptr, nullptr, nullptr) == MLA_ERROR_INVALID_ARGUMENT);
        m.work_info_set = nullptr;
        CHECK(mla_plan_metadata(&p, good.qo.data(), good.kv.data(), good.last.data(), &m, nullptr,
                                nullptr, nullptr) == MLA_ERROR_INVALID_ARGUMENT);
        CHECK(untouched(pl));
    }
    // Params.
    struct Bad {
        const char* what;
        void (*edit)(mla_metadata_params&);
        mla_status want;
    } bads[] = {
        {"page size 3", [](mla_metadata_params& q) { q.page_size = 3; }, MLA_ERROR_INVALID_ARGUMENT},
        {"page size 2048", [](mla_metadata_params& q) { q.page_size = 2048; }, MLA_ERROR_INVALID_ARGUMENT},
        {"granularity 24", [](mla_metadata_params& q) { q.kv_granularity = 24; }, MLA_ERROR_INVALID_ARGUMENT},
        {"heads_k 2", [](mla_metadata_params& q) { q.num_heads_k = 2; }, MLA_ERROR_INVALID_ARGUMENT},
        {"qlen 9", [](mla_metadata_params& q) { q.max_seqlen_qo = 9; }, MLA_ERROR_INVALID_ARGUMENT},
        {"heads 0", [](mla_metadata_params& q) { q.num_heads = 0; }, MLA_ERROR_INVALID_ARGUMENT},
        {"cap 0", [](mla_metadata_params& q) { q.max_split_per_batch = 0; }, MLA_ERROR_INVALID_ARGUMENT},
        {"batch -1", [](mla_metadata_params& q) { q.batch_size = -1; }, MLA_ERROR_INVALID_ARGUMENT},
        {"sm_90a fp16", [](mla_metadata_params& q) { q.q_dtype = q.kv_dtype = MLA_DTYPE_FP16; }, MLA_ERROR_UNSUPPORTED_SHAPE},
        {"gfx950 fp8 24 heads", [](mla_metadata_params& q) { q.arch = "gfx950"; q.num_heads = 24; q.max_seqlen_qo = 1;
                                                            q.q_dtype = q.kv_dtype = MLA_DTYPE_FP8_E4M3FN; }, MLA_ERROR_UNSUPPORTED_SHAPE},
        {"sm_80", [](mla_metadata_params& q) { q.arch = "sm_80"; }, MLA_ERROR_ARCH_NOT_BUILT},
        {"arch NULL", [](mla_metadata_params& q) { q.arch = nullptr; }, MLA_ERROR_INVALID_ARGUMENT},
        {"struct_size 0", [](mla_metadata_params& q) { q.struct_size = 0; }, MLA_ERROR_INVALID_ARGUMENT},
        {"work overhead -2", [](mla_metadata_params& q) { q.work_overhead_tokens = -2; }, MLA_ERROR_INVALID_ARGUMENT},
        {"work overhead 2^20 + 1", [](mla_metadata_params& q) { q.work_overhead_tokens = (1 << 20) + 1; },
         MLA_ERROR_INVALID_ARGUMENT},
        {"split tail -2", [](mla_metadata_params& q) { q.split_tail_tokens = -2; }, MLA_ERROR_INVALID_ARGUMENT},
        {"split tail 2^20 + 1", [](mla_metadata_params& q) { q.split_tail_tokens = (1 << 20) + 1; },
         MLA_ERROR_INVALID_ARGUMENT},
    };
    for (const Bad& bad : bads) {
        mla_metadata_params q = p;
        bad.edit(q);
        mla_metadata_sizes z{};
        z.struct_size = sizeof(z);
        INFO(bad.what);
        CHECK(mla_metadata_info(&q, &z) == bad.want);
        Plan pl = alloc_plan(p);
        mla_metadata_buffers m = pl.buffers();
        CHECK(mla_plan_metadata(&q, good.qo.data(), good.kv.data(), good.last.data(), &m, nullptr,
                                nullptr, nullptr) == bad.want);
        CHECK(untouched(pl));
    }
    // §5.32 empty batch: success, empty plan.
    {
        const mla_metadata_params e = base("sm_90a", 0, 1, 16);
        Plan pl = alloc_plan(e);
        const Batch none = make_batch({}, {}, 1);
        mla_plan_summary s{};
        s.struct_size = sizeof(s);
        REQUIRE(run_plan(e, none, pl, &s) == MLA_SUCCESS);
        for (int32_t v : pl.work_indptr) CHECK(v == 0);
        CHECK(pl.reduce_indptr[0] == 0);
        CHECK(s.num_works == 0);
    }
}

TEST_CASE("reference: bad problems and plan/problem mismatches (§2.19, §2.20, §5)", "[planner][args]") {
    reftest::Case c = reftest::uniform_case({1, 1}, {10, 20}, 16, 16);
    std::vector<float> out(2 * 16 * 512, 7.0f), lse(2 * 16, 7.0f);
    auto call = [&](const reftest::Case& k) {
        const mla_host_problem p = k.problem();
        return mla_decode_reference(&p, out.data(), lse.data());
    };
    REQUIRE(call(c) == MLA_SUCCESS);
    reftest::Case k = c;
    k.idx[1] = -1;  // §5.36 page id -1 in the used range
    CHECK(call(k) == MLA_ERROR_INVALID_ARGUMENT);
    k.idx[1] = k.num_pages;  // == num_blocks
    CHECK(call(k) == MLA_ERROR_INVALID_ARGUMENT);
    k = c;
    k.last[1] = 17;
    CHECK(call(k) == MLA_ERROR_INVALID_ARGUMENT);
    k = c;
    k.q_dtype = MLA_DTYPE_FP32;  // §5.42
    CHECK(call(k) == MLA_ERROR_INVALID_ARGUMENT);
    {
        mla_host_problem p = c.problem();
        p.q = nullptr;  // §5.33
        CHECK(mla_decode_reference(&p, out.data(), lse.data()) == MLA_ERROR_INVALID_ARGUMENT);
        p = c.problem();
        CHECK(mla_decode_reference(&p, nullptr, lse.data()) == MLA_ERROR_INVALID_ARGUMENT);
    }
    // §2.20: a plan for 16 heads executed on a 64-head problem.
    mla_metadata_params mp = reftest::params_of(c);
    Plan pl = alloc_plan(mp);
    REQUIRE(run_plan(mp, c.batch(), pl) == MLA_SUCCESS);
    mla_metadata_buffers m = pl.buffers();
    mla_metadata_params other = mp;
    other.num_heads = 64;
    const mla_host_problem hp = c.problem();
    CHECK(mla_execute_plan_reference(&hp, &other, &m, out.data(), lse.data()) ==
          MLA_ERROR_INVALID_ARGUMENT);
    // §2.19: the problem has more query rows than the plan covers.
    reftest::Case more = reftest::uniform_case({2, 1}, {10, 20}, 16, 16);
    more.max_q = 1;
    mla_host_problem mh = more.problem();
    mh.max_seqlen_q = 2;
    std::vector<float> out3(3 * 16 * 512), lse3(3 * 16);
    CHECK(mla_execute_plan_reference(&mh, &mp, &m, out3.data(), lse3.data()) ==
          MLA_ERROR_INVALID_ARGUMENT);
}

TEST_CASE("update advances a plan one decode step (§3.4)", "[planner][update]") {
    for (int L : {1, 2, 4}) {
        reftest::Case c = reftest::random_case(std::vector<int32_t>(5, L), {3000, 17, 900, 0, 4000}, 1, 16, 31);
        mla_metadata_params p = reftest::params_of(c);
        p.num_clusters = 16;
        Plan pl = alloc_plan(p);
        REQUIRE(run_plan(p, c.batch(), pl) == MLA_SUCCESS);
        const Plan before = pl;
        // One rejected token per request: delta 0, same kv_indptr -> columns 0, 4, 5, 6 unchanged.
        std::vector<int32_t> rej(5, 1);
        mla_metadata_buffers m = pl.buffers();
        INFO("L " << L);
        const mla_status st = mla_update_metadata(&p, c.kv.data(), rej.data(), &m);
        INFO(mla_last_error());
        REQUIRE(st == MLA_SUCCESS);
        const int nw = pl.work_indptr[p.num_clusters];
        for (int w = 0; w < nw; ++w)
            for (int col : {0, 4, 5, 6}) CHECK(pl.work_info[w * 8 + col] == before.work_info[w * 8 + col]);
        if (L > 1)
            for (int w = 0; w < nw; ++w) {
                CHECK(pl.work_info[w * 8 + 2] == pl.work_info[w * 8]);
                CHECK(pl.work_info[w * 8 + 3] == pl.work_info[w * 8] + 1);
            }
    }
    // No rejection at qlen 1: every request grows by one token; the updated plan executes to the
    // direct reference of the grown batch.
    std::vector<int64_t> lens = {3000, 17, 900, 0, 4000};
    reftest::Case c = reftest::random_case(std::vector<int32_t>(5, 1), lens, 1, 16, 41);
    mla_metadata_params p = reftest::params_of(c);
    p.num_clusters = 16;
    Plan pl = alloc_plan(p);
    // Plan for the old lengths (one token shorter each).
    std::vector<int64_t> old_lens = lens;
    for (auto& n : old_lens) n = n ? n - 1 : 0;
    Batch old_b = make_batch(std::vector<int32_t>(5, 1), old_lens, 1);
    // Request 3 is empty and stays empty: it is planned empty and not advanced (a grown empty
    // request needs a replan), so give it no growth by planning on the new batch for it.
    REQUIRE(run_plan(p, old_b, pl) == MLA_SUCCESS);
    std::vector<int32_t> rej = {0, 0, 0, 1, 0};  // request 3 "rejects" its token: delta 0
    mla_metadata_buffers m = pl.buffers();
    Batch new_b = make_batch(std::vector<int32_t>(5, 1), lens, 1);
    const mla_status st = mla_update_metadata(&p, new_b.kv.data(), rej.data(), &m);
    INFO(mla_last_error());
    REQUIRE(st == MLA_SUCCESS);
    REQUIRE(check_invariants(p, new_b, pl, true) == "");
    const reftest::Result d = reftest::direct(c);
    std::vector<float> out(d.out.size()), lse(d.lse.size());
    const mla_host_problem hp = c.problem();
    REQUIRE(mla_execute_plan_reference(&hp, &p, &m, out.data(), lse.data()) == MLA_SUCCESS);
    CHECK(reftest::max_rel_diff(out, d.out) < 1e-5);
    CHECK(reftest::max_rel_diff(lse, d.lse) < 1e-5);
    // Errors: page size 64, inconsistent new lengths; nothing written.
    const Plan saved = pl;
    std::vector<int32_t> wrong = new_b.kv;
    wrong[5] += 3;
    CHECK(mla_update_metadata(&p, wrong.data(), rej.data(), &m) == MLA_ERROR_INVALID_ARGUMENT);
    CHECK(pl.work_info == saved.work_info);
    mla_metadata_params pg = p;  // head_group_major plans are not advanced (replan instead)
    pg.head_group_major = 1;
    pg.num_heads = 128;
    CHECK(mla_update_metadata(&pg, new_b.kv.data(), rej.data(), &m) == MLA_ERROR_UNSUPPORTED_SHAPE);
    CHECK(std::string(mla_last_error()).find("head_group_major") != std::string::npos);
    CHECK(pl.work_info == saved.work_info);
    mla_metadata_params p64 = p;
    p64.page_size = 64;
    CHECK(mla_update_metadata(&p64, new_b.kv.data(), rej.data(), &m) == MLA_ERROR_INVALID_ARGUMENT);
    CHECK(pl.work_info == saved.work_info);
}

// ---- device planner launch on the fake CUDA runtime ---------------------------------------

namespace {

// Test double of mla_meta_v1_2: runs the host v1_2 planner from the launch's params only.
void meta_emulation(const fake_rt_launch_record* l, void*) {
    mla_meta_params p;
    std::memcpy(&p, l->args, sizeof(p));
    mla_metadata_buffers b{};
    b.struct_size = sizeof(b);
    b.work_metadata = p.work_metadata;
    b.work_metadata_len = 2;
    b.work_indptr = p.work_indptr;
    b.work_indptr_len = p.work_indptr_len;
    b.work_info_set = p.work_info_set;
    b.work_info_set_rows = p.work_info_set_rows;
    b.reduce_indptr = p.reduce_indptr;
    b.reduce_indptr_len = p.reduce_indptr_len;
    b.reduce_final_map = p.reduce_final_map;
    b.reduce_final_map_rows = p.reduce_final_map_rows;
    b.reduce_partial_map = p.reduce_partial_map;
    b.reduce_partial_map_len = p.reduce_partial_map_len;
    mla::plan::plan_v1_2_config(p.cfg, p.qo_indptr, p.kv_indptr, p.kv_last_page_lens, b);
    p.work_metadata[0] = uint64_t(uintptr_t(p.work_indptr));
    p.work_metadata[1] = uint64_t(uintptr_t(p.work_info_set));
}

std::string make_root() {
    char tmpl[] = "/tmp/mla_plan_root_XXXXXX";
    const std::string root = mkdtemp(tmpl);
    mkdir((root + "/sm_90a").c_str(), 0755);
    mkdir((root + "/sm_90a/planner").c_str(), 0755);
    std::ofstream(root + "/sm_90a/planner/mla_meta.csv")
        << "kind,launch_threads,knl_name,co_name\nv1_2,1024,mla_meta_v1_2,meta_v1_2.cubin\n";
    const char payload[] = "meta";
    unsigned char img[64];
    const size_t n = fake_rt_format_image(payload, sizeof(payload), img, sizeof(img));
    std::ofstream(root + "/sm_90a/planner/meta_v1_2.cubin", std::ios::binary)
        .write(reinterpret_cast<const char*>(img), std::streamsize(n));
    return root;
}

}  // namespace

TEST_CASE("device planner launch: symbol, grid, block, params (fake runtime)", "[planner][device]") {
    fake_rt_install_env();
    fake_rt_reset();
    fake_rt_set_device("9.0", 132);
    fake_rt_set_kernel("mla_meta_v1_2", meta_emulation, nullptr);
    const std::string root = make_root();
    mla_context_options o = MLA_CONTEXT_OPTIONS_INIT;
    o.codeobject_root = root.c_str();
    mla_context* ctx = nullptr;
    mla_status st = mla_context_create(&o, &ctx);
    INFO(mla_last_error());
    REQUIRE(st == MLA_SUCCESS);

    std::mt19937 rng(5);
    for (int it = 0; it < 20; ++it) {
        mla_metadata_params p = base("sm_90a", 1 + int(rng() % 300), 1 + int(rng() % 4),
                                     it % 2 ? 128 : 16);
        p.page_size = 1 << (rng() % 7);
        const Batch b = random_batch(rng, p.batch_size, p.max_seqlen_qo, 50000, p.page_size, true);
        // Device-resident inputs and outputs (fake device memory is host memory).
        Plan host = alloc_plan(p), dev = alloc_plan(p);
        REQUIRE(run_plan(p, b, host) == MLA_SUCCESS);
        void *dqo, *dkv, *dlast;
        REQUIRE(mla_device_malloc(ctx, &dqo, b.qo.size() * 4) == MLA_SUCCESS);
        REQUIRE(mla_device_malloc(ctx, &dkv, b.kv.size() * 4) == MLA_SUCCESS);
        REQUIRE(mla_device_malloc(ctx, &dlast, b.last.size() * 4 + 4) == MLA_SUCCESS);
        REQUIRE(mla_memcpy_htod(ctx, dqo, b.qo.data(), b.qo.size() * 4, nullptr) == MLA_SUCCESS);
        REQUIRE(mla_memcpy_htod(ctx, dkv, b.kv.data(), b.kv.size() * 4, nullptr) == MLA_SUCCESS);
        REQUIRE(mla_memcpy_htod(ctx, dlast, b.last.data(), b.last.size() * 4, nullptr) == MLA_SUCCESS);
        mla_metadata_buffers m = dev.buffers();
        const int before = fake_rt_launch_count();
        void* stream = reinterpret_cast<void*>(0x1234);
        if (p.num_heads == 128) {  // head_group_major: the device planner needs C a multiple of r
            mla_metadata_params pg = p;
            pg.head_group_major = 1;
            pg.num_clusters = 131;  // not a multiple of the 2 head groups: refused, nothing launched
            CHECK(mla_plan_metadata_device(ctx, &pg, static_cast<int32_t*>(dqo), static_cast<int32_t*>(dkv),
                                           static_cast<int32_t*>(dlast), &m, stream) == MLA_ERROR_UNSUPPORTED_SHAPE);
            CHECK(std::string(mla_last_error()).find("head_group_major") != std::string::npos);
            CHECK(fake_rt_launch_count() == before);
        }
        st = mla_plan_metadata_device(ctx, &p, static_cast<int32_t*>(dqo), static_cast<int32_t*>(dkv),
                                      static_cast<int32_t*>(dlast), &m, stream);
        INFO(mla_last_error());
        REQUIRE(st == MLA_SUCCESS);
        REQUIRE(fake_rt_launch_count() == before + 1);
        const fake_rt_launch_record* l = fake_rt_launch(before);
        CHECK(std::string(l->symbol) == "mla_meta_v1_2");
        CHECK(l->grid[0] == 1);
        CHECK(l->grid[1] == 1);
        CHECK(l->block[0] == 1024);
        CHECK(l->block[1] == 1);
        CHECK(l->stream == stream);
        CHECK(l->packed == 1);
        REQUIRE(l->args_bytes == sizeof(mla_meta_params));
        mla_meta_params kp;
        std::memcpy(&kp, l->args, sizeof(kp));
        CHECK(kp.qo_indptr == dqo);
        CHECK(kp.kv_indptr == dkv);
        CHECK(kp.work_info_set == dev.work_info.data());
        CHECK(kp.work_indptr_len == int32_t(dev.work_indptr.size()));
        CHECK(kp.cfg.num_batches == p.batch_size);
        CHECK(kp.cfg.num_clusters == 132);
        CHECK(kp.cfg.ratio == (p.num_heads == 128 ? 2 : 1));
        CHECK(kp.cfg.page_size == p.page_size);
        CHECK(l->shared == mla_meta_smem_bytes(p.batch_size, 132));
        if (l->shared > 48 * 1024) CHECK(fake_rt_max_dynamic_shared("mla_meta_v1_2") == int(l->shared));
        // The emulated kernel (host planner from the params alone) reproduces the host plan.
        CHECK(dev.work_indptr == host.work_indptr);
        CHECK(dev.work_info == host.work_info);
        CHECK(dev.reduce_indptr == host.reduce_indptr);
        CHECK(dev.final_map == host.final_map);
        CHECK(dev.partial_map == host.partial_map);
        if (p.num_heads == 128 && p.max_seqlen_qo > 1) {  // MTP: qo-tile sections are host-only
            mla_metadata_params pg = p;
            pg.head_group_major = 1;
            mla_metadata_buffers mg = dev.buffers();
            const int n0 = fake_rt_launch_count();
            CHECK(mla_plan_metadata_device(ctx, &pg, static_cast<int32_t*>(dqo), static_cast<int32_t*>(dkv),
                                           static_cast<int32_t*>(dlast), &mg, stream) == MLA_ERROR_UNSUPPORTED_SHAPE);
            CHECK(std::string(mla_last_error()).find("qo tiles") != std::string::npos);
            CHECK(fake_rt_launch_count() == n0);
        }
        if (p.num_heads == 128 && p.max_seqlen_qo == 1) {  // head_group_major, C = 132 = 66 r: launched
            mla_metadata_params pg = p;
            pg.head_group_major = 1;
            Plan hg = alloc_plan(pg), dg = alloc_plan(pg);
            REQUIRE(run_plan(pg, b, hg) == MLA_SUCCESS);
            mla_metadata_buffers mg = dg.buffers();
            const int n0 = fake_rt_launch_count();
            REQUIRE(mla_plan_metadata_device(ctx, &pg, static_cast<int32_t*>(dqo), static_cast<int32_t*>(dkv),
                                             static_cast<int32_t*>(dlast), &mg, stream) == MLA_SUCCESS);
            REQUIRE(fake_rt_launch_count() == n0 + 1);
            mla_meta_params kg;
            std::memcpy(&kg, fake_rt_launch(n0)->args, sizeof(kg));
            CHECK(kg.cfg.group_major == 1);
            CHECK(dg.work_indptr == hg.work_indptr);
            CHECK(dg.work_info == hg.work_info);
            CHECK(dg.reduce_indptr == hg.reduce_indptr);
        }
        mla_device_free(ctx, dqo);
        mla_device_free(ctx, dkv);
        mla_device_free(ctx, dlast);
    }
    // Host-side rejections launch nothing.
    const int n0 = fake_rt_launch_count();
    mla_metadata_params p = base("sm_90a", 4, 1, 16);
    Plan dev = alloc_plan(p);
    mla_metadata_buffers m = dev.buffers();
    int32_t dummy[8] = {0};
    m.work_info_set_rows -= 1;
    CHECK(mla_plan_metadata_device(ctx, &p, dummy, dummy, dummy, &m, nullptr) ==
          MLA_ERROR_BUFFER_TOO_SMALL);
    m = dev.buffers();
    p.fast_mode = 0;
    CHECK(mla_plan_metadata_device(ctx, &p, dummy, dummy, dummy, &m, nullptr) ==
          MLA_ERROR_UNSUPPORTED_SHAPE);
    p = base("sm_90a", MLA_META_MAX_BATCH + 1, 1, 16);
    CHECK(mla_plan_metadata_device(ctx, &p, dummy, dummy, dummy, &m, nullptr) ==
          MLA_ERROR_UNSUPPORTED_SHAPE);
    p = base("gfx950", 4, 1, 16);
    CHECK(mla_plan_metadata_device(ctx, &p, dummy, dummy, dummy, &m, nullptr) ==
          MLA_ERROR_INVALID_ARGUMENT);
    CHECK(fake_rt_launch_count() == n0);
    mla_context_destroy(ctx);
}

TEST_CASE("work_overhead_tokens: the arch's default, aiter's rule, any count", "[planner][overhead]") {
    // 128 requests x 4096 tokens at 128 heads, page 64: 256 pseudo-request tiles of 64 blocks on
    // 132 clusters. aiter's rule (1 block per work) splits 126 of them (382 works); sm_90a's
    // default 1024 tokens (16 blocks) keeps all 256 whole, 2 per cluster on 128 clusters.
    mla_metadata_params p = base("sm_90a", 128, 1, 128);
    p.page_size = 64;
    p.head_group_major = 1;  // as mla run / mla bench plan
    std::vector<int32_t> qlens(128, 1);
    std::vector<int64_t> kvs(128, 4096);
    const Batch b = make_batch(qlens, kvs, 64);
    auto plan_of = [&](const mla_metadata_params& q) {
        mla_plan_summary s{};
        s.struct_size = sizeof(s);
        Plan pl = alloc_plan(q);
        REQUIRE(run_plan(q, b, pl, &s) == MLA_SUCCESS);
        return s;
    };
    REQUIRE(p.work_overhead_tokens == -1);  // MLA_METADATA_PARAMS_INIT: the arch's
    // mla_plan_summary.work_overhead_blocks sits past the struct's old end (56 bytes), not in
    // its tail padding, so a caller built with the older header is never written there
    static_assert(offsetof(mla_plan_summary, work_overhead_blocks) == 56, "summary layout");
    {
        mla_plan_summary old{};
        old.struct_size = offsetof(mla_plan_summary, reserved0) + sizeof(int32_t);  // 56
        old.work_overhead_blocks = -7;
        old.reserved0 = -5;
        Plan pl = alloc_plan(p);
        REQUIRE(run_plan(p, b, pl, &old) == MLA_SUCCESS);
        CHECK(old.num_works == 256);
        CHECK(old.work_overhead_blocks == -7);
        CHECK(old.reserved0 == 0);  // the explicit padding is written as 0
    }
    mla_plan_summary s = plan_of(p);
    CHECK(s.work_overhead_blocks == 16);
    CHECK(s.num_works == 256);
    CHECK(s.num_split_tiles == 0);
    CHECK(s.max_works_per_cluster == 2);
    // two twin sections of 66 clusters, each with its last two clusters empty: the decode needs
    // CTAs 0..129 (mla_plan_summary.active_clusters; the empty clusters 64, 65 lie before it)
    CHECK(s.active_clusters == 130);
    mla_metadata_params q = p;
    q.work_overhead_tokens = 1024;  // the same as sm_90a's default
    CHECK(plan_of(q).num_works == 256);
    q.work_overhead_tokens = 0;  // aiter's rule
    s = plan_of(q);
    CHECK(s.num_works == 382);
    CHECK(s.num_split_tiles == 126);
    q.work_overhead_tokens = 64;  // 1 block at page 64: aiter's rule again
    CHECK(plan_of(q).num_works == 382);
    q.work_overhead_tokens = 256;  // 4 blocks: already no split here
    CHECK(plan_of(q).num_split_tiles == 0);
    // A caller built before the field (struct_size ends at head_group_major) gets the arch's
    // default whatever lies past its struct; at full size, a bad value is rejected.
    {
        mla_metadata_params old = p;
        old.struct_size = offsetof(mla_metadata_params, work_overhead_tokens);
        old.work_overhead_tokens = -12345;  // past the caller's struct: never read
        s = plan_of(old);
        CHECK(s.num_works == 256);
        CHECK(s.num_split_tiles == 0);
        mla_metadata_params full = old;
        full.struct_size = sizeof(mla_metadata_params);
        mla_metadata_sizes z{};
        z.struct_size = sizeof(z);
        CHECK(mla_metadata_info(&full, &z) == MLA_ERROR_INVALID_ARGUMENT);
        CHECK(std::string(mla_last_error()).find("work_overhead_tokens") != std::string::npos);
    }
    // A caller built with session 19's header (96 bytes, ending in 4 bytes of padding) leaves
    // reserved0 uninitialised; split_tail_tokens lies past its struct, so it gets the arch's tail
    static_assert(offsetof(mla_metadata_params, split_tail_tokens) == 96, "params layout");
    static_assert(offsetof(mla_plan_summary, split_tail_blocks) == 64, "summary layout");
    {  // a summary of the 64-byte header (before split_tail_blocks) is not written past its end
        mla_plan_summary old{};
        old.struct_size = offsetof(mla_plan_summary, reserved1) + sizeof(int32_t);  // 64
        old.split_tail_blocks = -7;
        old.reserved1 = -5;
        Plan pl = alloc_plan(p);
        REQUIRE(run_plan(p, b, pl, &old) == MLA_SUCCESS);
        CHECK(old.num_works == 256);
        CHECK(old.work_overhead_blocks == 16);
        CHECK(old.split_tail_blocks == -7);
        CHECK(old.reserved1 == 0);
    }
    {
        mla_metadata_params d = base("sm_90a", 128, 1, 16);
        d.page_size = 64;
        std::vector<int32_t> ql(128, 1);
        std::vector<int64_t> kv16k(128, 16384);
        const Batch bb = make_batch(ql, kv16k, 64);
        mla_metadata_params old = d;
        old.struct_size = offsetof(mla_metadata_params, reserved0) + sizeof(int32_t);  // 96
        old.reserved0 = 0x7fff1234;             // garbage in the old struct's padding: ignored
        old.split_tail_tokens = -12345;         // past the caller's struct: never read
        mla_plan_summary so{}, sd{};
        so.struct_size = sd.struct_size = sizeof(so);
        Plan po = alloc_plan(d), pd = alloc_plan(d);
        REQUIRE(run_plan(old, bb, po, &so) == MLA_SUCCESS);
        REQUIRE(run_plan(d, bb, pd, &sd) == MLA_SUCCESS);
        CHECK(so.split_tail_blocks == 8);  // 512 tokens at page 64
        CHECK(po.work_info == pd.work_info);
        CHECK(so.num_works == 128);
    }
    // sm_90a's defaults by tile rows (kernel heads x tile tokens at max_seqlen_qo) and KV dtype
    // (the rule table, routing/arch.cpp): a work overhead of 1024 tokens from 64 rows and for up
    // to 16 rows with fp8 KV; a split tail of 512 tokens for up to 16 rows and of 256 tokens for
    // 17-32 rows with bf16 KV; aiter's rule otherwise. 128 requests of 16384 tokens, which aiter's
    // rule splits.
    {
        std::vector<int64_t> kv16k(128, 16384);
        enum { kAiter, kOverhead, kTail, kTail256 };
        // (heads, L, Q fp8, KV fp8, default): bf16 16 x 1 and 8 x 2 take the tail, bf16 16 x 2 (32
        // rows) the 256-token tail; 16 x 3 (48 rows; the 64-row kernel runs it), 48 x 1, fp8-KV
        // 16 x 2 and fp8 48 x 1 keep aiter's rule; 16 x 4, 8 x 8 and fp8 64 x 1 take the overhead,
        // and so do 16-row fp8-KV tiles (16 x 1, 8 x 2; fp8 or bf16 Q)
        const struct { int h, L; bool q8, kv8; int want; } cases[] = {
            {16, 1, false, false, kTail},    {8, 2, false, false, kTail},     {16, 3, false, false, kAiter},
            {48, 1, false, false, kAiter},   {16, 2, false, false, kTail256}, {16, 4, false, false, kOverhead},
            {8, 8, false, false, kOverhead}, {16, 1, true, true, kOverhead},  {16, 1, false, true, kOverhead},
            {8, 2, true, true, kOverhead},   {16, 2, true, true, kAiter},     {16, 2, false, true, kAiter},
            {48, 1, true, true, kAiter},     {64, 1, true, true, kOverhead}};
        for (const auto& cs : cases) {
            const int L = cs.L;
            mla_metadata_params d = base("sm_90a", 128, L, cs.h);
            d.page_size = 64;
            d.q_dtype = cs.q8 ? MLA_DTYPE_FP8_E4M3FN : MLA_DTYPE_BF16;
            d.kv_dtype = cs.kv8 ? MLA_DTYPE_FP8_E4M3FN : MLA_DTYPE_BF16;
            std::vector<int32_t> ql(128, L);
            const Batch bb = make_batch(ql, kv16k, 64);
            mla_metadata_params d0 = d, d1 = d, d2 = d, d3 = d;
            d0.work_overhead_tokens = 0;  // aiter's rule: no overhead, no tail
            d0.split_tail_tokens = 0;
            d1.work_overhead_tokens = 1024;
            d1.split_tail_tokens = 0;
            d2.work_overhead_tokens = 0;
            d2.split_tail_tokens = 512;
            d3.work_overhead_tokens = 0;
            d3.split_tail_tokens = 256;
            Plan pd = alloc_plan(d), p0 = alloc_plan(d0), p1 = alloc_plan(d1), p2 = alloc_plan(d2), p3 = alloc_plan(d3);
            REQUIRE(run_plan(d, bb, pd) == MLA_SUCCESS);
            REQUIRE(run_plan(d0, bb, p0) == MLA_SUCCESS);
            REQUIRE(run_plan(d1, bb, p1) == MLA_SUCCESS);
            REQUIRE(run_plan(d2, bb, p2) == MLA_SUCCESS);
            REQUIRE(run_plan(d3, bb, p3) == MLA_SUCCESS);
            INFO("heads " << cs.h << " max_seqlen_qo " << L << " q fp8 " << cs.q8 << " kv fp8 " << cs.kv8);
            CHECK(p0.work_info != p1.work_info);  // the rules differ on this batch
            CHECK(p0.work_info != p2.work_info);
            CHECK(p0.work_info != p3.work_info);
            const Plan& want = cs.want == kOverhead ? p1 : cs.want == kTail ? p2 : cs.want == kTail256 ? p3 : p0;
            CHECK(pd.work_info == want.work_info);
            CHECK(pd.work_indptr == want.work_indptr);
            // the summary reports the overhead and the tail in effect, in blocks (page 64)
            mla_plan_summary sd{};
            sd.struct_size = sizeof(sd);
            REQUIRE(run_plan(d, bb, pd, &sd) == MLA_SUCCESS);
            CHECK(sd.work_overhead_blocks == (cs.want == kOverhead ? 16 : 1));
            CHECK(sd.split_tail_blocks == (cs.want == kTail ? 8 : cs.want == kTail256 ? 4 : 0));
        }
    }
    // The split tail applies only to tiles of at most 2 W blocks (v1_2_core.h boundary_limit): one
    // request of 32768 tokens (512 blocks at page 64) split over 132 SMs, W ~ 5 blocks, plans as
    // aiter's rule under the default 512-token tail (it loaded the last cluster with 9 blocks
    // instead of 5: 28.9 -> 33.2 us on the H200, session 20); 128 x 16384 (256-block tiles, W ~
    // 250) keeps its tail plan, every tile whole
    {
        mla_metadata_params d = base("sm_90a", 1, 1, 16);
        d.page_size = 64;
        mla_metadata_params a = d;
        a.work_overhead_tokens = 0;
        a.split_tail_tokens = 0;
        const Batch one = make_batch(std::vector<int32_t>(1, 1), std::vector<int64_t>(1, 32768), 64);
        Plan pd = alloc_plan(d), pa = alloc_plan(a);
        mla_plan_summary sd{};
        sd.struct_size = sizeof(sd);
        REQUIRE(run_plan(d, one, pd, &sd) == MLA_SUCCESS);
        REQUIRE(run_plan(a, one, pa) == MLA_SUCCESS);
        CHECK(sd.split_tail_blocks == 8);  // the tail in effect, which this tile does not take
        CHECK(pd.work_info == pa.work_info);
        CHECK(pd.work_indptr == pa.work_indptr);
        CHECK(sd.num_works == 128);
        mla_metadata_params d16 = base("sm_90a", 128, 1, 16);
        d16.page_size = 64;
        const Batch b16 = make_batch(std::vector<int32_t>(128, 1), std::vector<int64_t>(128, 16384), 64);
        Plan p16 = alloc_plan(d16);
        mla_plan_summary s16{};
        s16.struct_size = sizeof(s16);
        REQUIRE(run_plan(d16, b16, p16, &s16) == MLA_SUCCESS);
        CHECK(s16.num_works == 128);
        CHECK(s16.num_split_tiles == 0);
    }
    // AMD archs keep aiter's rule by default: -1 plans as 0 (gfx942, 16 heads, 304 CUs)
    mla_metadata_params g = base("gfx942", 128, 1, 16);
    g.page_size = 64;
    std::vector<int64_t> kv_long(128, 16384);
    const Batch bl = make_batch(qlens, kv_long, 64);
    mla_metadata_params g0 = g;
    g0.work_overhead_tokens = 0;
    Plan pa = alloc_plan(g), pb = alloc_plan(g0);
    REQUIRE(run_plan(g, bl, pa) == MLA_SUCCESS);
    REQUIRE(run_plan(g0, bl, pb) == MLA_SUCCESS);
    CHECK(pa.work_indptr == pb.work_indptr);
    CHECK(pa.work_info == pb.work_info);
    CHECK(pa.partial_map == pb.partial_map);
    // ... and honour an explicit count (the split 16384-token requests split less)
    mla_metadata_params g1 = g;
    g1.work_overhead_tokens = 4096;
    mla_plan_summary s0{}, s1{};
    s0.struct_size = s1.struct_size = sizeof(s0);
    Plan pc = alloc_plan(g1);
    REQUIRE(run_plan(g0, bl, pb, &s0) == MLA_SUCCESS);
    REQUIRE(run_plan(g1, bl, pc, &s1) == MLA_SUCCESS);
    CHECK(s1.num_works < s0.num_works);
}
