// bench_query.cpp - cost of one device-free routing query once the tables are loaded:
// mla_decode_shape_support and mla_decode_asm_query, in ns per call (target <= 1 us).
// usage: bench_query [CODE_OBJECT_ROOT] [ITERATIONS]   (default root: the library's search order)
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "mla_c_api.h"

namespace {

template <class F>
double ns_per_call(long iters, F&& f) {
    for (long i = 0; i < iters / 10 + 1; ++i) f();  // warm: tables loaded, indexes built
    const auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < iters; ++i) f();
    const auto t1 = std::chrono::steady_clock::now();
    return std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(iters);
}

mla_decode_shape make(const char* arch, int heads, int qlen, mla_dtype q, mla_dtype kv, int lse) {
    mla_decode_shape s = MLA_DECODE_SHAPE_INIT;
    s.arch = arch;
    s.num_heads = heads;
    s.max_seqlen_qo = qlen;
    s.q_dtype = q;
    s.kv_dtype = kv;
    s.return_lse = lse;
    return s;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc > 1 && mla_set_codeobject_root(argv[1]) != MLA_SUCCESS) {
        std::fprintf(stderr, "bench_query: %s\n", mla_last_error());
        return 2;
    }
    const long iters = argc > 2 ? std::atol(argv[2]) : 200000;
    const mla_dtype F8 = MLA_DTYPE_FP8_E4M3FN, B16 = MLA_DTYPE_BF16;
    struct Case {
        const char* what;
        mla_decode_shape s;
    } cases[] = {
        {"gfx950 fp8 128h L2 +lse (supported)", make("gfx950", 128, 2, F8, F8, 1)},
        {"gfx950 fp8 48h L1 (folded)", make("gfx950", 48, 1, F8, F8, 0)},
        {"gfx950 fp8 24h L1 (rejected, 2 reasons)", make("gfx950", 24, 1, F8, F8, 0)},
        {"sm_90a bf16 128h L2 (folded)", make("sm_90a", 128, 2, B16, B16, 0)},
    };
    int sink = 0;
    std::printf("%-44s %10s\n", "query", "ns/call");
    for (Case& c : cases) {
        mla_decode_support v = MLA_DECODE_SUPPORT_INIT;
        if (mla_decode_shape_support(&c.s, &v) != MLA_SUCCESS) {
            std::fprintf(stderr, "bench_query: %s\n", mla_last_error());
            return 1;
        }
        const double ns = ns_per_call(iters, [&] {
            mla_decode_shape_support(&c.s, &v);
            sink += v.supported;
        });
        std::printf("shape support  %-29s %10.0f  (supported %d, %s)\n", c.what, ns, v.supported,
                    mla_asm_status_string(v.asm_status));
    }
    char name[256];
    const double ns = ns_per_call(iters, [&] {
        sink += mla_decode_asm_query("gfx950", "fp8", "fp8", 64, 1, 2, 1, 1, 1, 0, name,
                                     sizeof(name), nullptr);
    });
    std::printf("asm query      %-29s %10.0f\n", "gfx950 fp8 64h L2 +lse", ns);
    mla_head_plan p = MLA_HEAD_PLAN_INIT;
    const double nsp = ns_per_call(iters, [&] {
        mla_decode_head_plan(&cases[1].s, &p);
        sink += p.qk_batch_ratio;
    });
    std::printf("head plan      %-29s %10.0f\n", "gfx950 fp8 48h L1", nsp);
    return sink == 42 ? 3 : 0;  // keeps the calls alive
}
