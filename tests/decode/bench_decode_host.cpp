// bench_decode_host.cpp - host cost of one mla_decode_fwd call (validation, table row, kernel
// handles, params, the decode and reduce launches) on the fake CUDA runtime, which records each
// launch instead of running it: what libmla itself adds per call, without the driver's own launch
// cost (measure that on a GPU with `mla run`, which prints "host cost"). A benchmark program, not
// a test: prints ns per call for a few shapes.
// Usage: bench_decode_host <sm_90a tables dir (codeobjects/sm_90a)> [calls]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "fake_codeobject_root.h"
#include "fake_runtime.h"
#include "host_plan.h"
#include "mla_c_api.h"

namespace {

struct Shape {
    const char* name;
    int batch, heads, qlen, kv_len;
    mla_dtype dtype;
};

// ns per mla_decode_fwd call for one shape; -1 on an error (printed).
double time_shape(mla_context* ctx, const Shape& s, int calls) {
    const int B = s.batch, H = s.heads, L = s.qlen, ps = 64;
    std::vector<int32_t> qo(B + 1), kvi(B + 1), last(B);
    for (int b = 0; b < B; ++b) {
        const int np = (s.kv_len + ps - 1) / ps;
        qo[b + 1] = qo[b] + L;
        kvi[b + 1] = kvi[b] + np;
        last[b] = s.kv_len - (np - 1) * ps;
    }
    std::vector<int32_t> pages(kvi[B]);
    for (int i = 0; i < kvi[B]; ++i) pages[i] = i;
    mla_metadata_params mp = MLA_METADATA_PARAMS_INIT;
    mp.arch = "sm_90a";
    mp.batch_size = B;
    mp.num_heads = H;
    mp.max_seqlen_qo = L;
    mp.q_dtype = mp.kv_dtype = s.dtype;
    mp.page_size = ps;
    mp.causal = 1;
    mla_metadata_sizes sz{};
    sz.struct_size = sizeof sz;
    if (mla_metadata_info(&mp, &sz) != MLA_SUCCESS) return std::printf("%s\n", mla_last_error()), -1;
    HostPlan plan(sz);
    if (mla_plan_metadata(&mp, qo.data(), kvi.data(), last.data(), &plan.buffers, nullptr, nullptr, nullptr) !=
        MLA_SUCCESS)
        return std::printf("%s\n", mla_last_error()), -1;
    // Host memory stands in for device memory (the fake never reads it): q / out / lse / workspace
    // at their sizes, the KV cache a stand-in (its size is only num_pages to the call).
    const size_t esz = s.dtype == MLA_DTYPE_BF16 ? 2 : 1;
    std::vector<uint64_t> q(size_t(B) * L * H * 576 * esz / 8 + 2), out(size_t(B) * L * H * 512 * 2 / 8 + 2),
        kv(1024), ws(size_t(sz.workspace_bytes) / 8 + 2);
    std::vector<float> lse(size_t(B) * L * H), scales{1.0f, 1.0f};
    mla_decode_args a = MLA_DECODE_ARGS_INIT;
    a.batch_size = B;
    a.num_heads = H;
    a.max_seqlen_q = L;
    a.total_q = qo[B];
    a.page_size = ps;
    a.num_pages = kvi[B];
    a.causal = 1;
    a.q_dtype = a.kv_dtype = s.dtype;
    a.softmax_scale = 0.1352f;
    a.q = q.data();
    a.kv_cache = kv.data();
    a.qo_indptr = qo.data();
    a.kv_indptr = kvi.data();
    a.kv_page_indices = pages.data();
    a.num_page_indices = kvi[B];
    a.kv_last_page_lens = last.data();
    a.out = out.data();
    a.lse = lse.data();
    if (s.dtype != MLA_DTYPE_BF16) {
        a.q_scale = &scales[0];
        a.kv_scale = &scales[1];
    }
    a.plan_params = &mp;
    a.plan = &plan.buffers;
    a.workspace = ws.data();
    a.workspace_bytes = size_t(sz.workspace_bytes);
    for (int i = 0; i < 50; ++i)
        if (mla_decode_fwd(ctx, &a, nullptr) != MLA_SUCCESS) return std::printf("%s\n", mla_last_error()), -1;
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) mla_decode_fwd(ctx, &a, nullptr);
    const auto t1 = std::chrono::steady_clock::now();
    return std::chrono::duration<double, std::nano>(t1 - t0).count() / calls;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: bench_decode_host <codeobjects/sm_90a> [calls]\n");
        return 2;
    }
    const int calls = argc > 2 ? std::atoi(argv[2]) : 20000;
    const std::string root = fake_root::sm90_decode_root(argv[1]);
    if (root.empty()) return std::fprintf(stderr, "cannot build a code-object root from %s\n", argv[1]), 1;
    fake_rt_install_env();
    fake_rt_reset();
    fake_rt_set_device("9.0", 132);
    mla_context_options o = MLA_CONTEXT_OPTIONS_INIT;
    o.arch = "sm_90a";
    o.codeobject_root = root.c_str();
    mla_context* ctx = nullptr;
    if (mla_context_create(&o, &ctx) != MLA_SUCCESS) return std::fprintf(stderr, "%s\n", mla_last_error()), 1;
    const Shape shapes[] = {{"b=128 s_k=4096 16 heads bf16", 128, 16, 1, 4096, MLA_DTYPE_BF16},
                            {"b=128 s_k=4096 128 heads bf16", 128, 128, 1, 4096, MLA_DTYPE_BF16},
                            {"b=128 s_k=4096 16 heads fp8", 128, 16, 1, 4096, MLA_DTYPE_FP8_E4M3FN},
                            {"b=1 s_k=32768 16 heads bf16", 1, 16, 1, 32768, MLA_DTYPE_BF16}};
    std::printf("mla_decode_fwd on the fake CUDA runtime (launches recorded, not run), %d calls each\n", calls);
    for (const Shape& s : shapes) {
        const double ns = time_shape(ctx, s, calls);
        if (ns < 0) return 1;
        std::printf("  %-32s %8.0f ns per call\n", s.name, ns);
    }
    mla_context_destroy(ctx);
    return 0;
}
