// cmd_bench.cpp - `mla bench`: the benchmark grid of issue 5 in one table: b=128, s_k=4096,
// h in {16, 32, 64, 128}, s_q in {1, 2}; b=1, s_k=32768; b=64, s_k=1024; b=1536, s_k=2048,
// h=16; each in bf16 and fp8 (fp8 Q and KV). `--targets`: issue 8's target rows instead, each
// with FlashMLA's figure (anchors.md §0), the target and whether it is met. Fixed lengths (as
// anchors.md §0's FlashMLA runs), causal, page 64 unless a row says otherwise, DeepSeek-V3 scale;
// median of event-timed calls of mla_decode_fwd (decode + reduce), each after do_bench's 256 MB
// L2 flush (triton.testing.do_bench, the method of FlashMLA's figures), and in the last column
// the median of calls started on an idle GPU without a flush; FlashMLA's byte and FLOP formulas.
// KV values are tiled from a random block (timing only: `mla run` and the GPU tests check
// results).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "commands.h"
#include "decode_problem.h"

using namespace mla_tool;

namespace {

// A benchmark problem: fixed or varied lengths, causal, KV tiled from a random block, no spare
// pages; fused: with tile counters (mla_decode_args tile_counters: one launch where the tables
// allow the fused split-KV reduction); always_reduce: no_split_tiles 0 (the reducer after every
// plan that may split; else 1 where the host plan split no tile).
Spec bench_spec(int b, int sk, int h, int sq, int ps, mla_dtype q, mla_dtype kv, bool varlen, bool group_major,
                bool fused, bool always_reduce) {
    Spec s;
    s.always_reduce = always_reduce;
    s.head_group_major = group_major;
    s.fused_reduce = fused;
    s.batch = b;
    s.kv_len = sk;
    s.heads = h;
    s.qlen = sq;
    s.page_size = ps;
    s.varlen = varlen;
    s.q_dtype = q;
    s.kv_dtype = kv;
    s.fast_fill = true;
    s.extra_pages = 0;
    return s;
}

// One timed row: the median of `iters` calls, each after do_bench's L2 flush (decode_problem.h's
// L2Flush), and the median of `iters` calls started on an idle GPU; false (and a message) when it
// cannot run.
struct Timed {
    double us = 0, gbs = 0, tflops = 0;
    double idle_us = 0;  // the idle-GPU method (no flush; the host's launch time included)
    int works = 0, split_tiles = 0;
    bool flag = false;
};
bool time_row(mla_context* ctx, const Spec& s, int iters, const L2Flush& flush, Timed* t, std::string* error) {
    const Problem p = make_problem(s);
    DeviceRun run;
    if (!run.setup(ctx, p) || !run.launch()) {
        *error = run.error;
        return false;
    }
    for (int w = 0; w < 2; ++w) run.launch();
    double med_ms = 0, idle_ms = 0;
    if (!flushed_and_idle_ms(ctx, iters, [&] { return run.launch(); }, flush, &med_ms, &idle_ms)) {
        *error = std::string("timing failed: ") + mla_last_error();
        return false;
    }
    t->idle_us = idle_ms * 1000.0;
    int32_t flag = 0;
    std::vector<float> out, lse;
    if (!run.fetch(p, out, lse, flag)) {
        *error = run.error;
        return false;
    }
    t->us = med_ms * 1000.0;
    t->gbs = problem_bytes(p) / (t->us * 1e-6) / 1e9;
    t->tflops = problem_flops(p) / (t->us * 1e-6) / 1e12;
    t->works = run.summary.num_works;
    t->split_tiles = run.summary.num_split_tiles;
    t->flag = flag != 0;
    return true;
}

// Issue 8's targets (b, s_k, h, s_q, page size, q and kv dtype, FlashMLA µs or 0, target µs).
struct Target {
    int b, sk, h, sq, ps;
    mla_dtype q, kv;
    double flashmla, target;
};
const Target kTargets[] = {
    {128, 4096, 16, 1, 64, MLA_DTYPE_BF16, MLA_DTYPE_BF16, 164.8, 145},
    {128, 4096, 64, 1, 64, MLA_DTYPE_BF16, MLA_DTYPE_BF16, 166.9, 145},
    {128, 16384, 16, 1, 64, MLA_DTYPE_BF16, MLA_DTYPE_BF16, 592.4, 560},
    {128, 4096, 128, 1, 64, MLA_DTYPE_BF16, MLA_DTYPE_BF16, 242.0, 215},
    {128, 4096, 128, 2, 64, MLA_DTYPE_BF16, MLA_DTYPE_BF16, 483.2, 430},
    {128, 4096, 16, 2, 64, MLA_DTYPE_BF16, MLA_DTYPE_BF16, 165.2, 155},
    {1, 32768, 16, 1, 64, MLA_DTYPE_BF16, MLA_DTYPE_BF16, 50.1, 20},
    {64, 1024, 16, 1, 64, MLA_DTYPE_BF16, MLA_DTYPE_BF16, 38.8, 28},
    {1536, 2048, 16, 1, 64, MLA_DTYPE_BF16, MLA_DTYPE_BF16, 904.1, 860},
    {128, 4096, 16, 1, 64, MLA_DTYPE_BF16, MLA_DTYPE_FP8_E4M3FN, 0, 85},        // "fp8 KV"
    {128, 4096, 16, 1, 64, MLA_DTYPE_FP8_E4M3FN, MLA_DTYPE_FP8_E4M3FN, 0, 85},  // and fp8 Q too
    {128, 4096, 128, 1, 64, MLA_DTYPE_FP8_E4M3FN, MLA_DTYPE_FP8_E4M3FN, 0, 150},
    {128, 4096, 16, 1, 1, MLA_DTYPE_BF16, MLA_DTYPE_BF16, 0, 160},              // page size 1
};

const char* dt(mla_dtype d) { return d == MLA_DTYPE_BF16 ? "bf16" : "fp8"; }

// The target table; list_only: the rows without running them (no context needed).
int run_targets(mla_context* ctx, int iters, bool group_major, bool fused, bool always_reduce, double copy_gbs,
                const L2Flush& flush, bool list_only) {
    std::printf("| q / kv | b | s_q | h | s_k | page | FlashMLA us | target us | us | %% of copy | TFLOPS | met | "
                "idle GPU us |\n");
    std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|\n");
    int rc = 0, met = 0;
    for (const Target& r : kTargets) {
        const Spec s = bench_spec(r.b, r.sk, r.h, r.sq, r.ps, r.q, r.kv, false, group_major, fused, always_reduce);
        Timed t;
        std::string error;
        char fm[32] = "-";
        if (r.flashmla > 0) std::snprintf(fm, sizeof fm, "%.1f", r.flashmla);
        // the row's leading cells: shape, FlashMLA's figure, the target
        std::printf("| %s / %s | %d | %d | %d | %d | %d | %s | %.0f |", dt(r.q), dt(r.kv), r.b, r.sq, r.h, r.sk, r.ps,
                    fm, r.target);
        if (list_only) {
            std::printf(" - | - | - | - | - |\n");
            continue;
        }
        if (!time_row(ctx, s, iters, flush, &t, &error)) {
            std::printf(" error: %s | | | no | |\n", error.c_str());
            rc = 1;
            continue;
        }
        const bool ok = !t.flag && t.us <= r.target;
        met += ok;
        if (t.flag) rc = 1;
        std::printf(" %.1f | %.0f%% | %.1f | %s | %.1f |%s\n", t.us, copy_gbs > 0 ? 100.0 * t.gbs / copy_gbs : 0.0,
                    t.tflops, ok ? "yes" : "no", t.idle_us, t.flag ? " (device error flag set)" : "");
        std::fflush(stdout);
    }
    if (!list_only) std::printf("%d of %zu targets met\n", met, sizeof kTargets / sizeof kTargets[0]);
    return rc;
}

}  // namespace

int cmd_bench(int argc, char** argv) {
    int iters = 20;
    bool varlen = false, only_bf16 = false, quick = false, group_major = true, targets = false, list = false;
    bool fused = false, always_reduce = false;
    for (int i = 0; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--help" || a == "-h") {
            std::printf("usage: mla bench [--iters N] [--varlen] [--bf16-only] [--quick] [--aiter-order]\n"
                        "                 [--fused-reduce] [--always-reduce] [--targets [--list]]\n"
                        "  the benchmark grid in one table: b=128 s_k=4096 at 16/32/64/128 heads and s_q 1/2,\n"
                        "  b=1 s_k=32768, b=64 s_k=1024, b=1536 s_k=2048 (16 heads), bf16 and fp8;\n"
                        "  --quick: b=128 s_k=4096 rows only;\n"
                        "  --targets: the project's target rows instead (FlashMLA's figure on the H200,\n"
                        "  the target, whether it is met);\n"
                        "  --list: print the target rows without a device\n"
                        "  plans are head-group-major (head_group_major = 1: a request's head groups\n"
                        "  and uniform-MTP qo tiles read its KV at the same time) unless --aiter-order;\n"
                        "  --fused-reduce: every call passes tile counters (mla_decode_args tile_counters):\n"
                        "  one launch where the tables allow the fused split-KV reduction (with\n"
                        "  --always-reduce too on plans that split no tile, else the decode runs alone);\n"
                        "  calls pass mla_decode_args no_split_tiles 1 where the host plan split no tile\n"
                        "  (no reducer launch) unless --always-reduce (0, libmla's default)\n");
            return 0;
        } else if (a == "--iters" && i + 1 < argc) iters = std::max(1, std::atoi(argv[++i]));
        else if (a == "--varlen") varlen = true;
        else if (a == "--bf16-only") only_bf16 = true;
        else if (a == "--quick") quick = true;
        else if (a == "--targets") targets = true;
        else if (a == "--list") list = true;
        else if (a == "--head-group-major") group_major = true;  // the default
        else if (a == "--aiter-order") group_major = false;
        else if (a == "--fused-reduce") fused = true;
        else if (a == "--always-reduce") always_reduce = true;
        else {
            std::fprintf(stderr, "mla bench: unknown option '%s'\n", a.c_str());
            return 2;
        }
    }
    if (list) {
        if (!targets) {
            std::fprintf(stderr, "mla bench: --list goes with --targets\n");
            return 2;
        }
        return run_targets(nullptr, iters, group_major, fused, always_reduce, 0, L2Flush{}, true);
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
    // the tables, in a scope of their own: the flush buffer is freed before the context
    const int rc = [&]() -> int {
        // do_bench's L2 flush buffer, one for every row (decode_problem.h)
        DeviceRun flush_owner;
        flush_owner.ctx = ctx;
        const L2Flush flush{flush_owner.alloc(L2Flush::kBytes)};
        if (!flush.buf) {
            std::printf("mla bench: the 256 MB L2 flush buffer: %s\n", mla_last_error());
            return 1;
        }
        std::printf("mla bench on %s (%d SMs), causal, page 64, %s lengths, median of %d (each call after do_bench's "
                    "256 MB L2 flush); device copy %.0f GB/s (read + write)%s%s\n",
                    mla_context_arch(ctx), mla_context_num_cus(ctx), varlen && !targets ? "varied" : "fixed", iters,
                    copy_gbs, fused ? "; tile counters passed (--fused-reduce)" : "",
                    always_reduce ? "; the reducer after every plan that may split (--always-reduce)"
                                  : "; no reducer after a plan that split no tile (no_split_tiles)");
        if (targets) return run_targets(ctx, iters, group_major, fused, always_reduce, copy_gbs, flush, false);
        std::printf("| dtype | b | s_q | h | s_k | works | split tiles | us | GB/s | %% of copy | TFLOPS | "
                    "idle GPU us |\n");
        std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        int status = 0;
        for (int d = 0; d < (only_bf16 ? 1 : 2); ++d)
            for (const Row& r : grid) {
                const mla_dtype dt8 = d ? MLA_DTYPE_FP8_E4M3FN : MLA_DTYPE_BF16;
                const Spec s = bench_spec(r.b, r.sk, r.h, r.sq, 64, dt8, dt8, varlen, group_major, fused, always_reduce);
                Timed t;
                std::string error;
                if (!time_row(ctx, s, iters, flush, &t, &error)) {
                    std::printf("| %s | %d | %d | %d | %d | - | - | error: %s | | | | |\n", d ? "fp8" : "bf16", r.b,
                                r.sq, r.h, r.sk, error.c_str());
                    status = 1;
                    continue;
                }
                if (t.flag) status = 1;
                std::printf("| %s | %d | %d | %d | %d | %d | %d | %.1f | %.0f | %.0f%% | %.1f | %.1f |%s\n",
                            d ? "fp8" : "bf16", r.b, r.sq, r.h, r.sk, t.works, t.split_tiles, t.us, t.gbs,
                            copy_gbs > 0 ? 100.0 * t.gbs / copy_gbs : 0.0, t.tflops, t.idle_us,
                            t.flag ? " (device error flag set)" : "");
                std::fflush(stdout);
            }
        return status;
    }();
    mla_context_destroy(ctx);
    return rc;
}
