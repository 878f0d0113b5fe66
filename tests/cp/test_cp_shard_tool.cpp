// test_cp_shard_tool.cpp - the round-robin shard of tools/mla/decode_problem.h (cp_shard), which
// the GPU decode test (tests/gpu/gpu_decode_test.cpp) uses for the cprr table rows: the W
// shards' CPU references (and their plans executed as the kernels must) merge to the whole
// problem's reference, a subset of requests keeps its global lengths, and a shard's DeviceRun
// launches mla_decode_fwd with W, the rank and g_kv_indptr (fake CUDA runtime, no GPU).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "../../tools/mla/decode_problem.h"
#include "fake_runtime.h"
#include "fake_codeobject_root.h"
#include "fake_test_util.h"
#include "launch/decode_launch.h"

using namespace mla_tool;

namespace {

Spec shard_spec(int seed) {
    Spec s;
    s.batch = 1 + seed % 4;
    s.heads = seed % 2 ? 16 : 128;
    s.qlen = 1 + seed % 4;
    s.kv_len = seed % 3 == 0 ? 3 : 150;  // 3: global lengths below W, ranks without keys
    s.varlen = true;
    s.page_size = seed % 3 == 0 ? 1 : 16;
    s.zero_kv_frac = 0.25;
    s.ragged_q = seed % 2;
    s.q_dtype = seed % 4 == 0 ? MLA_DTYPE_FP8_E4M3FN : MLA_DTYPE_BF16;
    s.kv_dtype = seed % 2 == 0 ? MLA_DTYPE_FP8_E4M3FN : MLA_DTYPE_BF16;
    s.seed = uint64_t(seed);
    return s;
}

std::vector<int> all_requests(const Problem& p) {
    std::vector<int> r(p.spec.batch);
    for (int b = 0; b < p.spec.batch; ++b) r[b] = b;
    return r;
}

}  // namespace

TEST_CASE("cp_shard: the W shards' references merge to the whole problem's", "[cp][tool]") {
    for (int seed = 1; seed <= 12; ++seed) {
        const Spec s = shard_spec(seed);
        const Problem whole = make_problem(s);
        const int W = 2 + seed % 3;
        INFO("seed " << seed << " W " << W << " B " << s.batch << " H " << s.heads << " L " << s.qlen);
        std::vector<float> wo, wl;
        REQUIRE(reference_subset(whole, all_requests(whole), wo, wl) == MLA_SUCCESS);
        const size_t H = size_t(s.heads), T = size_t(whole.total_q);
        std::vector<float> po(W * T * H * 512), pl(W * T * H);
        for (int r = 0; r < W; ++r) {
            const Problem sh = cp_shard(whole, W, r);
            REQUIRE(sh.cp_world == W);
            REQUIRE(sh.cp_rank == r);
            for (int b = 0; b < s.batch; ++b) {
                const int G = sh.g_kv_indptr[b + 1] - sh.g_kv_indptr[b];
                CHECK(G == whole.kv_lens[b]);
                CHECK(sh.kv_lens[b] == (G > r ? (G - r + W - 1) / W : 0));
            }
            std::vector<float> o, l;
            INFO("rank " << r);
            REQUIRE(reference_subset(sh, all_requests(sh), o, l) == MLA_SUCCESS);
            std::copy(o.begin(), o.end(), po.begin() + long(r * T * H * 512));
            std::copy(l.begin(), l.end(), pl.begin() + long(r * T * H));
            // the shard's plan (is_cp_round_robin), executed as the kernels must, is the reference
            mla_metadata_params mp = plan_params_of(sh, "sm_90a", 8);
            CHECK(mp.is_cp_round_robin == 1);
            mla_metadata_sizes sz{};
            sz.struct_size = sizeof sz;
            REQUIRE(mla_metadata_info(&mp, &sz) == MLA_SUCCESS);
            HostPlan plan(sz);
            REQUIRE(mla_plan_metadata(&mp, sh.qo_indptr.data(), sh.kv_indptr.data(),
                                      sh.kv_last_page_lens.data(), &plan.buffers, nullptr, nullptr,
                                      nullptr) == MLA_SUCCESS);
            const mla_host_problem hp = host_problem_of(sh);
            std::vector<float> eo(T * H * 512), el(T * H);
            REQUIRE(mla_execute_plan_reference(&hp, &mp, &plan.buffers, eo.data(), el.data()) ==
                    MLA_SUCCESS);
            for (size_t i = 0; i < eo.size(); ++i)
                if (!(std::fabs(eo[i] - o[i]) <= 1e-5f)) FAIL("plan execution differs at " << i);
            // one request alone keeps its global length (SubProblem's g_kv_indptr)
            if (s.batch > 1) {
                std::vector<float> so, sl;
                REQUIRE(reference_subset(sh, {s.batch - 1}, so, sl) == MLA_SUCCESS);
                for (int t = sh.qo_indptr[s.batch - 1]; t < sh.qo_indptr[s.batch]; ++t)
                    for (size_t i = 0; i < H * 512; ++i)
                        if (so[t * H * 512 + i] != o[t * H * 512 + i]) FAIL("subset differs at row " << t);
            }
        }
        mla_merge_args ma = MLA_MERGE_ARGS_INIT;
        ma.world_size = W;
        ma.total_q = int(T);
        ma.num_heads = int(H);
        ma.partial_dtype = MLA_DTYPE_FP32;
        ma.out_dtype = MLA_DTYPE_FP32;
        std::vector<float> mo(T * H * 512), ml(T * H);
        ma.partial_out = po.data();
        ma.partial_lse = pl.data();
        ma.out = mo.data();
        ma.lse = ml.data();
        REQUIRE(mla_merge_attn_states_host(&ma) == MLA_SUCCESS);
        double mx = 0;
        for (size_t i = 0; i < mo.size(); ++i) mx = std::max(mx, double(std::fabs(mo[i] - wo[i])));
        CHECK(mx < 1e-5);
        for (size_t i = 0; i < ml.size(); ++i) {
            CHECK(std::isinf(ml[i]) == std::isinf(wl[i]));
            if (std::isfinite(wl[i])) CHECK(std::fabs(ml[i] - wl[i]) <= 1e-5 * std::max(1.f, std::fabs(wl[i])));
        }
    }
}

TEST_CASE("cp_shard: a shard's DeviceRun passes W, rank and g_kv_indptr to mla_decode_fwd",
          "[cp][tool]") {
    // a code-object root with the real decode / reduce tables and a fake image per code object
    const char* src = std::getenv("MLA_CP_TABLES");
    const std::string root = fake_root::sm90_decode_root(src ? src : "codeobjects/sm_90a");
    REQUIRE(!root.empty());
    mla_context* ctx = fake_test::fake_context(root);

    Spec s = shard_spec(2);  // 128 heads (folded), qlen 3, fp8 KV, page 16
    s.batch = 3;
    const Problem whole = make_problem(s);
    const Problem sh = cp_shard(whole, 3, 2);
    {
        DeviceRun run;
        const int before = fake_rt_launch_count();
        const bool ok = run.setup(ctx, sh) && run.launch();
        INFO(run.error);
        REQUIRE(ok);
        REQUIRE(fake_rt_launch_count() > before);
        const fake_rt_launch_record* r = fake_rt_launch(before);
        mla_decode_params p;
        REQUIRE(r->args_bytes == sizeof p);
        std::memcpy(&p, r->args, sizeof p);
        CHECK(p.cp_world_size == 3);
        CHECK(p.cp_rank == 2);
        REQUIRE(p.g_kv_indptr != nullptr);
        // the fake's device memory is host memory: the uploaded global lengths
        std::vector<int32_t> g(p.g_kv_indptr, p.g_kv_indptr + s.batch + 1);
        CHECK(g == sh.g_kv_indptr);
        CHECK(run.mp.is_cp_round_robin == 1);
        CHECK(run.args.cp_world_size == 3);
    }
    {
        DeviceRun run;  // the whole problem: no context parallel
        REQUIRE(run.setup(ctx, whole));
        const int before = fake_rt_launch_count();
        REQUIRE(run.launch());
        mla_decode_params p;
        std::memcpy(&p, fake_rt_launch(before)->args, sizeof p);
        CHECK(p.cp_world_size == 1);
        CHECK(p.g_kv_indptr == nullptr);
        CHECK(p.out_fp32 == 0);
        CHECK(run.args.out_dtype == MLA_DTYPE_BF16);
    }
    {
        // fp32 out (Spec::out_dtype, what a context-parallel rank writes): out_dtype reaches
        // both kernels' params, and fetch() copies the floats back unrounded
        Problem f = sh;
        f.spec.out_dtype = MLA_DTYPE_FP32;
        DeviceRun run;
        REQUIRE(run.setup(ctx, f));
        CHECK(run.args.out_dtype == MLA_DTYPE_FP32);
        const int before = fake_rt_launch_count();
        REQUIRE(run.launch());
        REQUIRE(fake_rt_launch_count() > before);
        mla_decode_params p;
        std::memcpy(&p, fake_rt_launch(before)->args, sizeof p);
        CHECK(p.out_fp32 == 1);
        CHECK(p.cp_world_size == 3);
        for (int i = before + 1; i < fake_rt_launch_count(); ++i) {
            mla_reduce_params rp;
            REQUIRE(fake_rt_launch(i)->args_bytes == sizeof rp);
            std::memcpy(&rp, fake_rt_launch(i)->args, sizeof rp);
            CHECK(rp.out_fp32 == 1);
        }
        // the fake's device memory is host memory: floats no bf16 can hold come back as written
        const size_t n = size_t(f.total_q) * f.spec.heads * 512;
        float* o = static_cast<float*>(run.args.out);
        for (size_t i = 0; i < n; ++i) o[i] = 1.0f + float(i % 1000) * 1e-6f;
        std::vector<float> out, lse;
        int32_t flag = -1;
        REQUIRE(run.fetch(f, out, lse, flag));
        REQUIRE(out.size() == n);
        size_t same = 0;
        for (size_t i = 0; i < n; ++i) same += out[i] == 1.0f + float(i % 1000) * 1e-6f;
        CHECK(same == n);
        CHECK(flag == 0);
    }
    mla_context_destroy(ctx);
}
