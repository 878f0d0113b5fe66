// bench_plan.cpp - host plan time (mla_plan_metadata, v1_2) for 1536 requests on sm_90a, the
// median over repeated calls, for decode (qlen 1) and MTP shapes; the issue-4 target is <= 50 us
// on the 2-core CI machine. Prints one line per shape.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include "host_plan.h"
#include "mla_c_api.h"

namespace {

struct Shape {
    int heads, qlen, page;
    bool varlen;
};

double bench(const Shape& sh, int reps) {
    mla_metadata_params p = MLA_METADATA_PARAMS_INIT;
    p.arch = "sm_90a";
    p.batch_size = 1536;
    p.num_heads = sh.heads;
    p.max_seqlen_qo = sh.qlen;
    p.page_size = sh.page;
    mla_metadata_sizes z{};
    z.struct_size = sizeof(z);
    if (mla_metadata_info(&p, &z) != MLA_SUCCESS) return -1;
    std::mt19937 rng(1);
    std::vector<int32_t> qo(1, 0), kv(1, 0), last;
    for (int b = 0; b < p.batch_size; ++b) {
        const int n = sh.varlen ? std::uniform_int_distribution<int>(5, 8192)(rng) : 2048;
        const int pages = (n + sh.page - 1) / sh.page;
        qo.push_back(qo.back() + sh.qlen);
        kv.push_back(kv.back() + pages);
        last.push_back(n - (pages - 1) * sh.page);
    }
    HostPlan hp(z);
    mla_metadata_buffers& m = hp.buffers;
    std::vector<double> us;
    for (int i = 0; i < reps; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        if (mla_plan_metadata(&p, qo.data(), kv.data(), last.data(), &m, nullptr, nullptr,
                              nullptr) != MLA_SUCCESS)
            return -1;
        const auto t1 = std::chrono::steady_clock::now();
        us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    }
    std::sort(us.begin(), us.end());
    return us[us.size() / 2];
}

}  // namespace

int main() {
    const Shape shapes[] = {{16, 1, 1, false}, {16, 1, 64, true}, {128, 1, 1, true},
                            {16, 2, 1, true},  {128, 4, 64, true}};
    int rc = 0;
    for (const Shape& s : shapes) {
        const double us = bench(s, 300);
        if (us < 0) {
            std::fprintf(stderr, "bench_plan: %s\n", mla_last_error());
            rc = 1;
            continue;
        }
        std::printf("host plan, 1536 requests, %3d heads, qlen %d, page %2d, %s: %.1f us (median)\n",
                    s.heads, s.qlen, s.page, s.varlen ? "varlen kv" : "kv 2048", us);
    }
    return rc;
}
