// gpu_plan_check.cpp - the device planner on a real GPU (meson test `gpu_plan`), public C API
// only: a random sweep comparing mla_plan_metadata_device with mla_plan_metadata byte for byte
// (all six buffers, both pre-filled with the same byte pattern), then the device plan time for
// 1536 requests, two ways: 200 back-to-back launches between events (launch gaps included) and
// 200 plans captured in one CUDA graph, replayed between events ("GPU time": the graph removes
// the host launch gaps). Exit 77 (skipped) without a CUDA driver or device.
// Environment: MLA_GPU_PLAN_SWEEP=n random cases (default 400; 0 = timing only),
// MLA_GPU_PLAN_REPS=n launches per timing (default 200), MLA_GPU_PLAN_PROFILE=1 prints the phase
// clocks of a -DMLA_META_PROFILE cubin.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gpu_context.h"
#include "gpu_driver.h"
#include "host_plan.h"
#include "mla_c_api.h"

namespace {

constexpr unsigned char kFill = 0xA5;

#define CHECK_OK(call)                                                                      \
    do {                                                                                    \
        const mla_status st_ = (call);                                                      \
        if (st_ != MLA_SUCCESS) {                                                           \
            std::fprintf(stderr, "%s:%d: %s -> %s: %s\n", __FILE__, __LINE__, #call,        \
                         mla_status_string(st_), mla_last_error());                         \
            return false;                                                                   \
        }                                                                                   \
    } while (0)

struct Batch {
    std::vector<int32_t> qo, kv, last;
};

Batch random_batch(std::mt19937& rng, int B, int L, int ps, bool varlen) {
    Batch b;
    b.qo.push_back(0);
    b.kv.push_back(0);
    for (int i = 0; i < B; ++i) {
        const int q = varlen ? int(rng() % (L + 1)) : L;
        int64_t n;
        switch (rng() % 6) {
        case 0: n = 0; break;
        case 1: n = 1 + rng() % 16; break;
        case 2: n = 200000; break;
        default: n = rng() % 8192;
        }
        const int pages = int((n + ps - 1) / ps);
        b.qo.push_back(b.qo.back() + q);
        b.kv.push_back(b.kv.back() + pages);
        b.last.push_back(pages ? int(n - int64_t(pages - 1) * ps) : ps);
    }
    return b;
}

struct DevBuf {
    mla_context* ctx = nullptr;
    void* p = nullptr;
    size_t bytes = 0;
    ~DevBuf() {
        if (p) mla_device_free(ctx, p);
    }
};

// One case: host vs device plan. Returns false on any difference or error.
bool one_case(mla_context* ctx, const mla_metadata_params& prm, const Batch& b, int iter) {
    mla_metadata_sizes z{};
    z.struct_size = sizeof(z);
    CHECK_OK(mla_metadata_info(&prm, &z));
    int64_t rows[kPlanBuffers];
    plan_rows(z, rows);
    DevBuf d[6], in[3];
    std::vector<unsigned char> host[6], back[6];
    for (int i = 0; i < 6; ++i) {
        d[i].ctx = ctx;
        d[i].bytes = rows[i] > 0 ? size_t(rows[i]) * kPlanRowBytes[i] : 4;
        CHECK_OK(mla_device_malloc(ctx, &d[i].p, d[i].bytes));
        CHECK_OK(mla_memset_d8(ctx, d[i].p, kFill, d[i].bytes, nullptr));
        host[i].assign(d[i].bytes, kFill);
        back[i].assign(d[i].bytes, 0);
    }
    const std::vector<int32_t>* src[3] = {&b.qo, &b.kv, &b.last};
    for (int i = 0; i < 3; ++i) {
        in[i].ctx = ctx;
        in[i].bytes = src[i]->size() * 4 + 4;
        CHECK_OK(mla_device_malloc(ctx, &in[i].p, in[i].bytes));
        CHECK_OK(mla_memcpy_htod(ctx, in[i].p, src[i]->data(), src[i]->size() * 4, nullptr));
    }
    void* hp[kPlanBuffers];
    void* dp[kPlanBuffers];
    for (int i = 0; i < kPlanBuffers; ++i) {
        hp[i] = host[i].data();
        dp[i] = d[i].p;
    }
    mla_metadata_buffers hm = plan_buffers_view(hp, rows), dm = plan_buffers_view(dp, rows);
    CHECK_OK(mla_plan_metadata(&prm, b.qo.data(), b.kv.data(), b.last.data(), &hm, d[1].p, d[2].p,
                               nullptr));
    CHECK_OK(mla_plan_metadata_device(ctx, &prm, static_cast<int32_t*>(in[0].p),
                                      static_cast<int32_t*>(in[1].p),
                                      static_cast<int32_t*>(in[2].p), &dm, nullptr));
    CHECK_OK(mla_stream_synchronize(ctx, nullptr));
    bool same = true;
    for (int i = 0; i < 6; ++i) {
        CHECK_OK(mla_memcpy_dtoh(ctx, back[i].data(), d[i].p, d[i].bytes, nullptr));
        if (back[i] != host[i]) {
            size_t at = 0;
            while (back[i][at] == host[i][at]) ++at;
            std::fprintf(stderr,
                         "case %d (B %d L %d H %d ps %d gran %d cap %d causal %d group-major %d "
                         "overhead %d tail %d): %s differs at byte %zu (int32 %zu)\n",
                         iter, prm.batch_size, prm.max_seqlen_qo, prm.num_heads, prm.page_size,
                         prm.kv_granularity, prm.max_split_per_batch, prm.causal, prm.head_group_major,
                         prm.work_overhead_tokens, prm.split_tail_tokens,
                         kPlanBufferNames[i], at, at / 4);
            same = false;
        }
    }
    return same;
}

}  // namespace

int main() {
    mla_context* ctx = nullptr;
    if (const int rc = open_gpu_context("gpu_plan", /*need_sm90=*/false, &ctx)) return rc;
    const char* arch = mla_context_arch(ctx);
    const int cus = mla_context_num_cus(ctx);
    std::printf("device %s, %d SMs\n", arch, cus);
    std::mt19937 rng(2026);
    const int heads[] = {8, 16, 32, 64, 96, 128};
    const char* reps_env = std::getenv("MLA_GPU_PLAN_REPS");
    const char* sweep_env = std::getenv("MLA_GPU_PLAN_SWEEP");
    const int sweep = sweep_env ? std::atoi(sweep_env) : 400;
    gpu_test::Driver drv;
    if (!drv.load()) {
        std::fprintf(stderr, "gpu_plan: libcuda.so.1 unusable for streams / graphs\n");
        return 1;
    }
    int failures = 0, cases = 0, group_major = 0;
    std::mt19937 hg_rng(77);
    std::mt19937 ov_rng(91);  // work_overhead_tokens, its own stream (the cases stay those of earlier sweeps)
    std::mt19937 tail_rng(92);  // split_tail_tokens, likewise
    for (int iter = 0; iter < sweep; ++iter) {
        mla_metadata_params p = MLA_METADATA_PARAMS_INIT;
        p.arch = arch;
        p.num_clusters = iter % 5 == 0 ? int(1 + rng() % 200) : 0;
        p.batch_size = iter % 7 == 0 ? int(rng() % 8193) : int(rng() % 300);
        p.max_seqlen_qo = 1 + int(rng() % 8);
        p.num_heads = heads[rng() % 6];
        p.page_size = 1 << (rng() % 11);
        p.kv_granularity = 1 << (rng() % 9);
        p.causal = int(rng() % 4 != 0);
        p.max_split_per_batch = rng() % 4 == 0 ? int(1 + rng() % 8) : -1;
        if (rng() % 3 == 0) p.kv_dtype = MLA_DTYPE_FP8_E4M3FN;
        {  // the arch's work overhead (half the cases), aiter's rule, or any token count
            const unsigned o = ov_rng() % 4;
            p.work_overhead_tokens = o < 2 ? -1 : o == 2 ? 0 : int(ov_rng() % 3000);
            const unsigned t = tail_rng() % 4;  // the split tail likewise
            p.split_tail_tokens = t < 2 ? -1 : t == 2 ? 0 : int(tail_rng() % 3000);
        }
        const Batch b = random_batch(rng, p.batch_size, p.max_seqlen_qo, p.page_size, rng() % 2);
        // Every other case also as a 128-head, qlen-1 head-group-major plan (twin head-group
        // sections: the device planner takes them when the cluster count is a multiple of the 2
        // groups; qo-tile sections are host-only) on its own batch; its own random stream, so the
        // cases above are those of earlier sweeps.
        if (hg_rng() % 2 == 0) {
            mla_metadata_params pg = p;
            pg.head_group_major = 1;
            pg.num_heads = 128;
            pg.max_seqlen_qo = 1;
            const Batch bg = random_batch(hg_rng, pg.batch_size, 1, pg.page_size, hg_rng() % 2);
            mla_metadata_sizes z{};
            z.struct_size = sizeof(z);
            if (mla_metadata_info(&pg, &z) == MLA_SUCCESS && z.qk_batch_ratio > 1 &&
                z.num_clusters % z.qk_batch_ratio == 0) {
                ++cases;
                ++group_major;
                if (!one_case(ctx, pg, bg, iter)) ++failures;
            }
        }
        ++cases;
        if (!one_case(ctx, p, b, iter)) ++failures;
    }
    std::printf("gpu_plan: %d / %d random cases byte-identical (%d of them head-group-major)\n",
                cases - failures, cases, group_major);

    // Device plan time for 1536 requests (qlen 1 and MTP 2, 16 and 128 heads): events around
    // 200 back-to-back launches, and around one replay of a graph of 200 captured plans.
    gpu_test::CUstream stream = nullptr;
    if (!drv.check(drv.cuStreamCreate(&stream, gpu_test::kStreamNonBlocking), "cuStreamCreate"))
        return 1;
    // {heads, qlen, page size, batch, uniform KV length (0: random lengths)}. The uniform rows
    // are the shape where every cluster stride snaps (docs/planner.md: one cluster per round).
    const int shapes[][5] = {{16, 1, 1, 1536, 0},  {128, 1, 1, 1536, 0}, {16, 2, 64, 1536, 0},
                             {128, 4, 1, 1536, 0}, {16, 1, 64, 128, 4096}, {16, 1, 64, 1536, 2048}};
    for (const auto& s : shapes) {
        mla_metadata_params p = MLA_METADATA_PARAMS_INIT;
        p.arch = arch;
        p.batch_size = s[3];
        p.num_heads = s[0];
        p.max_seqlen_qo = s[1];
        p.page_size = s[2];
        Batch b = random_batch(rng, s[3], s[1], s[2], false);
        if (s[4] > 0) {  // every request s[4] tokens
            const int pages = (s[4] + s[2] - 1) / s[2];
            for (int i = 0; i < s[3]; ++i) {
                b.kv[size_t(i) + 1] = b.kv[size_t(i)] + pages;
                b.last[size_t(i)] = s[4] - (pages - 1) * s[2];
            }
        }
        mla_metadata_sizes z{};
        z.struct_size = sizeof(z);
        if (mla_metadata_info(&p, &z) != MLA_SUCCESS) return 1;
        const size_t bytes[6] = {16, size_t(z.work_indptr_len) * 4, size_t(z.work_info_set_rows) * 32,
                                 size_t(z.reduce_indptr_len) * 4, size_t(z.reduce_final_map_rows) * 8,
                                 size_t(z.reduce_partial_map_len) * 4 + 4};
        void* d[6];
        void* in[3];
        for (int i = 0; i < 6; ++i) mla_device_malloc(ctx, &d[i], bytes[i]);
        const std::vector<int32_t>* src[3] = {&b.qo, &b.kv, &b.last};
        for (int i = 0; i < 3; ++i) {
            mla_device_malloc(ctx, &in[i], src[i]->size() * 4);
            mla_memcpy_htod(ctx, in[i], src[i]->data(), src[i]->size() * 4, nullptr);
        }
        mla_metadata_buffers m{};
        m.struct_size = sizeof(m);
        m.work_metadata = static_cast<uint64_t*>(d[0]);
        m.work_metadata_len = 2;
        m.work_indptr = static_cast<int32_t*>(d[1]);
        m.work_indptr_len = z.work_indptr_len;
        m.work_info_set = static_cast<int32_t*>(d[2]);
        m.work_info_set_rows = z.work_info_set_rows;
        m.reduce_indptr = static_cast<int32_t*>(d[3]);
        m.reduce_indptr_len = z.reduce_indptr_len;
        m.reduce_final_map = static_cast<int32_t*>(d[4]);
        m.reduce_final_map_rows = z.reduce_final_map_rows;
        m.reduce_partial_map = static_cast<int32_t*>(d[5]);
        m.reduce_partial_map_len = z.reduce_partial_map_len;
        auto launch = [&] {
            return mla_plan_metadata_device(ctx, &p, static_cast<int32_t*>(in[0]),
                                            static_cast<int32_t*>(in[1]),
                                            static_cast<int32_t*>(in[2]), &m, stream);
        };
        const int reps = reps_env ? std::atoi(reps_env) : 200;
        for (int i = 0; i < 10; ++i) launch();
        mla_stream_synchronize(ctx, stream);
        mla_timer* t = nullptr;
        mla_timer_start(ctx, stream, &t);
        for (int i = 0; i < reps; ++i) launch();
        float ms = 0;
        mla_timer_stop_ms(ctx, t, &ms);
        // The same plans captured in one graph: replay once to warm up, then time one replay.
        float gms = -1;
        gpu_test::CUgraph graph = nullptr;
        gpu_test::CUgraphExec exec = nullptr;
        bool gok = drv.check(drv.cuStreamBeginCapture(stream, gpu_test::kCaptureModeThreadLocal),
                             "cuStreamBeginCapture");
        if (gok) {
            for (int i = 0; i < reps; ++i)
                if (launch() != MLA_SUCCESS) gok = false;
            gok = drv.check(drv.cuStreamEndCapture(stream, &graph), "cuStreamEndCapture") && gok;
        }
        gok = gok && drv.check(drv.cuGraphInstantiateWithFlags(&exec, graph, 0), "instantiate") &&
              drv.check(drv.cuGraphLaunch(exec, stream), "cuGraphLaunch") &&
              drv.check(drv.cuStreamSynchronize(stream), "cuStreamSynchronize");
        if (gok) {
            mla_timer_start(ctx, stream, &t);
            drv.cuGraphLaunch(exec, stream);
            mla_timer_stop_ms(ctx, t, &gms);
        }
        if (exec) drv.cuGraphExecDestroy(exec);
        if (graph) drv.cuGraphDestroy(graph);
        if (!gok) ++failures;
        std::printf("device plan, %d requests (%s), %3d heads, qlen %d, page %2d: %.2f us per plan "
                    "(%d launches), %.2f us per plan in a graph of %d\n",
                    s[3], s[4] > 0 ? ("uniform " + std::to_string(s[4])).c_str() : "random",
                    s[0], s[1], s[2], 1000.0 * ms / reps, reps, 1000.0 * gms / reps, reps);
        if (std::getenv("MLA_GPU_PLAN_PROFILE")) {  // a -DMLA_META_PROFILE cubin's phase clocks
            int32_t ph[6];
            mla_memcpy_dtoh(ctx, ph, d[4], sizeof(ph), nullptr);
            std::printf("  phase cycles (CTA 0): stage %d, costs %d, buckets %d, chain %d, "
                        "clusters %d, fill %d\n", ph[0], ph[1], ph[2], ph[3], ph[4], ph[5]);
        }
        for (int i = 0; i < 6; ++i) mla_device_free(ctx, d[i]);
        for (int i = 0; i < 3; ++i) mla_device_free(ctx, in[i]);
    }
    drv.cuStreamDestroy(stream);
    mla_context_destroy(ctx);
    return failures ? 1 : 0;
}
