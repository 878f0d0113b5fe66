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

#include "decode_call.h"
#include "fake_codeobject_root.h"
#include "fake_runtime.h"
#include "mla_c_api.h"

namespace {

struct Shape {
    const char* name;
    int batch, heads, qlen, kv_len;
    mla_dtype dtype;
};

// ns per mla_decode_fwd call for one shape (all requests kv_len tokens, page 64); -1 on an error
// (printed).
double time_shape(mla_context* ctx, const Shape& s, int calls) {
    DecodeCall c(s.batch, s.heads, s.qlen, 64, s.kv_len, s.dtype, s.dtype, /*causal=*/1, /*cp_world=*/1,
                 /*cp_rank=*/0, /*len_step=*/0);
    if (!c.ok) return std::printf("%s\n", c.why.c_str()), -1;
    mla_decode_args a = c.a;
    if (s.dtype == MLA_DTYPE_BF16) a.q_scale = a.kv_scale = nullptr;  // as an engine calls bf16
    for (int i = 0; i < 50; ++i)
        if (mla_decode_fwd(ctx, &a, nullptr) != MLA_SUCCESS) return std::printf("%s\n", mla_last_error()), -1;
    // batches of 256 calls, the fake's launch records cleared between batches (untimed): the
    // records would otherwise grow by two per call and the time would be the allocator's
    double ns = 0;
    for (int done = 0; done < calls;) {
        const int n = calls - done < 256 ? calls - done : 256;
        fake_rt_clear_launches();
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < n; ++i) mla_decode_fwd(ctx, &a, nullptr);
        const auto t1 = std::chrono::steady_clock::now();
        ns += std::chrono::duration<double, std::nano>(t1 - t0).count();
        done += n;
    }
    return ns / calls;
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
