// cmd_bench.cpp - `mla bench`: the benchmark grid of issue 5 in one table: b=128, s_k=4096,
// h in {16, 32, 64, 128}, s_q in {1, 2}; b=1, s_k=32768; b=64, s_k=1024; b=1536, s_k=2048,
// h=16; each in bf16 and fp8 (fp8 Q and KV). Fixed lengths (as anchors.md §0's FlashMLA runs),
// causal, page 64, DeepSeek-V3 scale; median of event-timed launches of mla_decode_fwd (decode +
// reduce); FlashMLA's byte and FLOP formulas. KV values are tiled from a random block (timing
// only: `mla run` and the GPU tests check results).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "commands.h"
#include "decode_problem.h"

using namespace mla_tool;

int cmd_bench(int argc, char** argv) {
    int iters = 20;
    bool varlen = false, only_bf16 = false, quick = false, group_major = true;
    for (int i = 0; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--help" || a == "-h") {
            std::printf("usage: mla bench [--iters N] [--varlen] [--bf16-only] [--quick] [--aiter-order]\n"
                        "  the issue-5 grid, one table; --quick: b=128 s_k=4096 rows only;\n"
                        "  plans are head-group-major (head_group_major = 1: a request's head groups\n"
                        "  and uniform-MTP qo tiles read its KV at the same time) unless --aiter-order\n");
            return 0;
        } else if (a == "--iters" && i + 1 < argc) iters = std::max(1, std::atoi(argv[++i]));
        else if (a == "--varlen") varlen = true;
        else if (a == "--bf16-only") only_bf16 = true;
        else if (a == "--quick") quick = true;
        else if (a == "--head-group-major") group_major = true;  // the default
        else if (a == "--aiter-order") group_major = false;
        else {
            std::fprintf(stderr, "mla bench: unknown option '%s'\n", a.c_str());
            return 2;
        }
    }
    mla_context_options o = MLA_CONTEXT_OPTIONS_INIT;
    mla_context* ctx = nullptr;
    const mla_status st = mla_context_create(&o, &ctx);
    if (st) {
        std::printf("mla bench: needs a CUDA sm_90a device (%s: %s)\n", mla_status_string(st), mla_last_error());
        return st == MLA_ERROR_RUNTIME_UNAVAILABLE || st == MLA_ERROR_NO_DEVICE ? 77 : 1;
    }
    struct Row {
        int b, sk, h, sq;
    };
    std::vector<Row> grid;
    for (int h : {16, 32, 64, 128})
        for (int sq : {1, 2}) grid.push_back({128, 4096, h, sq});
    if (!quick) {
        grid.push_back({1, 32768, 16, 1});
        grid.push_back({1, 32768, 128, 1});
        grid.push_back({64, 1024, 16, 1});
        grid.push_back({64, 1024, 128, 1});
        grid.push_back({1536, 2048, 16, 1});
    }
    // The bandwidth yardstick of this run: a 1 GiB device-to-device copy (read + write).
    double copy_gbs = 0;
    {
        DeviceRun copy_run;
        copy_run.ctx = ctx;
        std::string error;
        copy_gbs = copy_bandwidth_gbs(ctx, copy_run, size_t(1) << 30, 10, &error);
        if (copy_gbs <= 0) std::printf("mla bench: copy yardstick unavailable: %s\n", error.c_str());
    }
    std::printf("mla bench on %s (%d SMs), causal, page 64, %s lengths, median of %d; device copy "
                "%.0f GB/s (read + write)\n",
                mla_context_arch(ctx), mla_context_num_cus(ctx), varlen ? "varied" : "fixed", iters,
                copy_gbs);
    std::printf("| dtype | b | s_q | h | s_k | works | split tiles | us | GB/s | %% of copy | TFLOPS |\n");
    std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    int rc = 0;
    for (int d = 0; d < (only_bf16 ? 1 : 2); ++d)
        for (const Row& r : grid) {
            Spec s;
            s.head_group_major = group_major;
            s.batch = r.b;
            s.kv_len = r.sk;
            s.heads = r.h;
            s.qlen = r.sq;
            s.varlen = varlen;
            s.q_dtype = s.kv_dtype = d ? MLA_DTYPE_FP8_E4M3FN : MLA_DTYPE_BF16;
            s.fast_fill = true;
            s.extra_pages = 0;
            const Problem p = make_problem(s);
            DeviceRun run;
            if (!run.setup(ctx, p) || !run.launch()) {
                std::printf("| %s | %d | %d | %d | %d | - | - | error: %s | | | |\n", d ? "fp8" : "bf16", r.b, r.sq, r.h,
                            r.sk, run.error.c_str());
                rc = 1;
                continue;
            }
            for (int w = 0; w < 2; ++w) run.launch();
            double med_ms = 0;
            if (!median_event_ms(ctx, iters, [&] { return run.launch(); }, &med_ms)) rc = 1;
            int32_t flag = 0;
            std::vector<float> out, lse;
            if (!run.fetch(p, out, lse, flag) || flag) rc = 1;
            const double us = med_ms * 1000.0;
            const double gbs = problem_bytes(p) / (us * 1e-6) / 1e9;
            std::printf("| %s | %d | %d | %d | %d | %d | %d | %.1f | %.0f | %.0f%% | %.1f |%s\n",
                        d ? "fp8" : "bf16", r.b, r.sq, r.h, r.sk, run.summary.num_works,
                        run.summary.num_split_tiles, us, gbs,
                        copy_gbs > 0 ? 100.0 * gbs / copy_gbs : 0.0,
                        problem_flops(p) / (us * 1e-6) / 1e12,
                        flag ? " (device error flag set)" : "");
            std::fflush(stdout);
        }
    mla_context_destroy(ctx);
    return rc;
}
