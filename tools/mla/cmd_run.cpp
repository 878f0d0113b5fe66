// cmd_run.cpp - `mla run`: the main job. Builds a decode problem (default DeepSeek-V3 at TP8:
// b=128, s_k=4096 varied, 16 heads, bf16, page 64, causal, softmax_scale 1/sqrt(192) * mscale^2
// with yarn mscale = 0.1 ln(40) + 1), plans on the host, launches mla_decode_fwd on the GPU,
// checks a random subset of requests against mla_decode_reference, and prints the median
// event-timed latency (each call after do_bench's 256 MB L2 flush; then again each call on an
// idle GPU without it), GB/s and TFLOPS (FlashMLA's formulas, anchors.md §1.4), the fraction of
// the device-to-device copy bandwidth measured in the same run (mla_device_copy) and the host
// cost of one call.
// Without a GPU it runs the CPU path on a small default (plan + mla_execute_plan_reference
// against mla_decode_reference) and says so.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "commands.h"
#include "decode_problem.h"
#include "host_plan.h"

using namespace mla_tool;

namespace {

void usage(FILE* f) {
    std::fprintf(f,
                 "usage: mla run [options]\n"
                 "  --batch N        requests (default 128; CPU path 4)\n"
                 "  --kv-len N       mean KV tokens per request (default 4096; CPU path 256)\n"
                 "  --heads N        query heads (default 16)\n"
                 "  --qlen N         query tokens per request, MTP (default 1)\n"
                 "  --dtype T        Q dtype bf16|fp8 (default bf16; also sets the KV dtype)\n"
                 "  --kv-dtype T     KV dtype bf16|fp8 (default: --dtype)\n"
                 "  --page-size N    tokens per page (default 64)\n"
                 "  --causal / --no-causal   causal MTP mask (default causal)\n"
                 "  --varlen / --fixed       varied lengths normal(s_k, s_k/2) (default) or all s_k\n"
                 "  --iters N        GPU: timed calls, median reported (default 20); each after a\n"
                 "                   256 MB L2 flush, as triton's do_bench times (FlashMLA's figures);\n"
                 "                   then a second median of as many calls with no flush (idle GPU)\n"
                 "  --check N        GPU: requests checked against the CPU reference (default 8, 0 =\n"
                 "                   none, -1 = all); the CPU path checks every value\n"
                 "  --scale X        softmax scale (default DeepSeek-V3's %.6f)\n"
                 "  --flush-mb N     GPU: the L2 flush's size in MB (default 256, do_bench's; other sizes\n"
                 "                   measure what the flush itself costs the decode)\n"
                 "  --seed N         data seed (default 1)\n"
                 "  --long-first N   request 0 has N x --kv-len tokens (one long request among short\n"
                 "                   ones: its tile splits into many fragments)\n"
                 "  --aiter-order    plan in aiter's order (request by request). Without it the\n"
                 "                   plan is head-group-major (mla_metadata_params.head_group_major\n"
                 "                   = 1): the tiles of a request that read the same KV (its head\n"
                 "                   groups above 64 heads, its qo tiles with uniform MTP) run at\n"
                 "                   the same time, so the L2 serves the repeated reads\n"
                 "  --clusters N     plan over N clusters (mla_metadata_params.num_clusters; default:\n"
                 "                   the device's SMs; on the CPU path sm_90a's 132); fewer than the\n"
                 "                   SMs leaves SMs idle\n"
                 "  --overhead-tokens N  the planner's fixed cost of a work in KV tokens\n"
                 "                   (mla_metadata_params.work_overhead_tokens; default -1 = the\n"
                 "                   arch's: on sm_90a 1024 for 64-row tiles and 16-row fp8-KV\n"
                 "                   tiles, else aiter's rule; 0 = aiter's rule)\n"
                 "  --tail-tokens N  a split never leaves fewer KV tokens of a tile\n"
                 "                   (mla_metadata_params.split_tail_tokens; default -1 = the\n"
                 "                   arch's: on sm_90a 512 for 16-row and 256 for 32-row bf16\n"
                 "                   tiles, else 0; 0 = none: --overhead-tokens 0 --tail-tokens 0\n"
                 "                   is aiter's rule)\n"
                 "  --fused-reduce   GPU: pass tile_counters (mla_decode_args): where the tables allow it\n"
                 "                   (16 / 32 query rows, bf16) the decode kernel reduces split tiles\n"
                 "                   itself, one launch per call instead of two (on a plan that\n"
                 "                   split no tile the decode runs alone anyway: add --always-reduce\n"
                 "                   to time the fused kernel there)\n"
                 "  --all-clusters   GPU: launch one CTA per planned cluster (mla_decode_args\n"
                 "                   active_clusters 0, libmla's default); without it the call\n"
                 "                   passes the host plan's active_clusters (no CTA for a\n"
                 "                   trailing cluster without work)\n"
                 "  --always-reduce  GPU: pass no_split_tiles 0 (mla_decode_args, libmla's default):\n"
                 "                   the reducer runs after every plan that may split; without it\n"
                 "                   the call passes 1 where the host plan split no tile (one launch)\n"
                 "  --fast-fill      KV rows cut from one random 64K-element block at random\n"
                 "                   offsets, as mla bench fills them (large problems set up in\n"
                 "                   seconds; the check compares against the reference of the same\n"
                 "                   data)\n"
                 "  --ref-p-fp8      the reference rounds exp(s - max) to e4m3 before P.V (aiter's\n"
                 "                   fp8-Q semantics; for kernels built with MLA_QM8_P8)\n"
                 "  --cpu            force the CPU path\n",
                 deepseek_v3_softmax_scale());
}

bool parse_dtype(const char* s, mla_dtype* d) { return mla_dtype_from_string(s, d) == MLA_SUCCESS; }

int cpu_path(Spec s, bool user_batch, bool user_kv) {
    if (!user_batch) s.batch = 4;
    if (!user_kv) s.kv_len = 256;
    std::printf("mla run: no GPU path (no CUDA device or --cpu): CPU reference only.\n"
                "  plan (mla_plan_metadata, sm_90a rules) + mla_execute_plan_reference vs "
                "mla_decode_reference; no kernel runs.\n");
    Problem p = make_problem(s);
    mla_metadata_params mp = plan_params_of(p, "sm_90a", p.spec.num_clusters);
    mla_metadata_sizes sz{};
    sz.struct_size = sizeof sz;
    if (mla_metadata_info(&mp, &sz)) {
        std::fprintf(stderr, "mla run: mla_metadata_info: %s\n", mla_last_error());
        return 1;
    }
    HostPlan host_plan(sz);
    mla_metadata_buffers& b = host_plan.buffers;
    mla_plan_summary sum{};
    sum.struct_size = sizeof sum;
    if (mla_plan_metadata(&mp, p.qo_indptr.data(), p.kv_indptr.data(), p.kv_last_page_lens.data(), &b, nullptr,
                          nullptr, &sum)) {
        std::fprintf(stderr, "mla run: mla_plan_metadata: %s\n", mla_last_error());
        return 1;
    }
    const mla_host_problem hp = host_problem_of(p);
    const size_t H = s.heads;
    std::vector<float> o1(size_t(p.total_q) * H * 512), l1(size_t(p.total_q) * H), o2(o1.size()), l2(l1.size());
    if (mla_execute_plan_reference(&hp, &mp, &b, o1.data(), l1.data()) ||
        mla_decode_reference(&hp, o2.data(), l2.data())) {
        std::fprintf(stderr, "mla run: reference: %s\n", mla_last_error());
        return 1;
    }
    std::vector<int> rows(p.total_q);
    for (int t = 0; t < p.total_q; ++t) rows[t] = t;
    CompareResult r;
    Tolerance tol;
    tol.out_abs = 1e-5;  // both fp32/fp64 paths: only summation order differs
    tol.out_rel = 1e-4;
    tol.lse_rel = 1e-6;
    compare_rows(p, rows, o1, l1, o2, l2, tol, r);
    std::printf("  b=%d h=%d qlen=%d s_k~%d ps=%d %s/%s causal=%d: %d works over %d clusters, %d split tiles\n",
                s.batch, s.heads, s.qlen, s.kv_len, s.page_size, mla_dtype_string(s.q_dtype),
                mla_dtype_string(s.kv_dtype), int(s.causal), sum.num_works, sz.num_clusters, sum.num_split_tiles);
    std::printf("  plan executed on the CPU vs direct reference: %ld values, max abs diff %.3e, %s\n", r.checked,
                r.max_abs, r.ok() ? "PASS" : ("FAIL: " + r.first_bad).c_str());
    return r.ok() ? 0 : 1;
}

}  // namespace

int cmd_run(int argc, char** argv) {
    Spec s;
    s.head_group_major = true;  // sm_90a host plans (the only arch this tool runs; CPU path too)
    int iters = 20, check = 8, flush_mb = 256;
    bool force_cpu = false, user_batch = false, user_kv = false, user_kvd = false;
    for (int i = 0; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&]() -> const char* {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "mla run: %s needs a value\n", a.c_str());
                std::exit(2);
            }
            return argv[++i];
        };
        if (a == "--help" || a == "-h") {
            usage(stdout);
            return 0;
        } else if (a == "--batch") {
            s.batch = std::atoi(next());
            user_batch = true;
        } else if (a == "--kv-len") {
            s.kv_len = std::atoi(next());
            user_kv = true;
        } else if (a == "--heads") s.heads = std::atoi(next());
        else if (a == "--qlen") s.qlen = std::atoi(next());
        else if (a == "--dtype") {
            if (!parse_dtype(next(), &s.q_dtype)) return std::fprintf(stderr, "mla run: %s\n", mla_last_error()), 2;
            if (!user_kvd) s.kv_dtype = s.q_dtype;
        } else if (a == "--kv-dtype") {
            if (!parse_dtype(next(), &s.kv_dtype)) return std::fprintf(stderr, "mla run: %s\n", mla_last_error()), 2;
            user_kvd = true;
        } else if (a == "--page-size") s.page_size = std::atoi(next());
        else if (a == "--causal") s.causal = true;
        else if (a == "--no-causal") s.causal = false;
        else if (a == "--varlen") s.varlen = true;
        else if (a == "--fixed") s.varlen = false;
        else if (a == "--iters") iters = std::max(1, std::atoi(next()));
        else if (a == "--check") check = std::atoi(next());
        else if (a == "--scale") s.softmax_scale = float(std::atof(next()));
        else if (a == "--seed") s.seed = uint64_t(std::atoll(next()));
        else if (a == "--flush-mb") flush_mb = std::max(1, std::atoi(next()));
        else if (a == "--long-first") s.long_first = std::max(1, std::atoi(next()));
        else if (a == "--cpu") force_cpu = true;
        else if (a == "--fused-reduce") s.fused_reduce = true;
        else if (a == "--all-clusters") s.all_clusters = true;
        else if (a == "--always-reduce") s.always_reduce = true;
        else if (a == "--fast-fill") s.fast_fill = true;
        else if (a == "--ref-p-fp8") s.ref_p_fp8 = true;
        else if (a == "--clusters") s.num_clusters = std::max(0, std::atoi(next()));
        else if (a == "--overhead-tokens") s.work_overhead_tokens = std::atoi(next());
        else if (a == "--tail-tokens") s.split_tail_tokens = std::atoi(next());
        else if (a == "--head-group-major") s.head_group_major = true;  // the default
        else if (a == "--aiter-order") s.head_group_major = false;
        else {
            std::fprintf(stderr, "mla run: unknown option '%s'\n", a.c_str());
            usage(stderr);
            return 2;
        }
    }
    if (s.batch < 1 || s.heads < 1 || s.qlen < 1 || s.kv_len < 0 || s.page_size < 1) {
        std::fprintf(stderr, "mla run: batch, heads, qlen, page-size must be >= 1 and kv-len >= 0\n");
        return 2;
    }
    mla_context* ctx = nullptr;
    if (!force_cpu) {
        mla_context_options o = MLA_CONTEXT_OPTIONS_INIT;
        const mla_status st = mla_context_create(&o, &ctx);
        if (st == MLA_ERROR_RUNTIME_UNAVAILABLE || st == MLA_ERROR_NO_DEVICE) {
            // The runtime's message lists every path tried, one indented line each: keep the
            // other lines (what is missing and the hint), joined on one line.
            std::string why, line;
            const std::string msg = std::string(mla_last_error()) + "\n";
            for (char c : msg) {
                if (c != '\n') {
                    line += c;
                    continue;
                }
                const std::string tried = "; tried:";  // its list is the indented lines
                if (line.size() >= tried.size() &&
                    line.compare(line.size() - tried.size(), tried.size(), tried) == 0)
                    line.resize(line.size() - tried.size());
                if (!line.empty() && line.compare(0, 2, "  ") != 0)
                    why += (why.empty() ? "" : why.back() == ':' ? " " : "; ") + line;
                line.clear();
            }
            std::printf("mla run: no CUDA device: %s\n", why.c_str());
            ctx = nullptr;
        } else if (st) {
            std::fprintf(stderr, "mla run: mla_context_create: %s: %s\n", mla_status_string(st), mla_last_error());
            return 1;
        } else if (std::strcmp(mla_context_arch(ctx), "sm_90a") != 0) {
            std::printf("mla run: device is %s; libmla's kernels are sm_90a.\n", mla_context_arch(ctx));
            mla_context_destroy(ctx);
            ctx = nullptr;
        }
    }
    if (!ctx) return cpu_path(s, user_batch, user_kv);

    std::printf("mla run: b=%d s_k=%d%s h=%d s_q=%d q=%s kv=%s page=%d causal=%d scale=%.6f on %s (%d SMs)\n",
                s.batch, s.kv_len, s.varlen ? " (varied)" : "", s.heads, s.qlen, mla_dtype_string(s.q_dtype),
                mla_dtype_string(s.kv_dtype), s.page_size, int(s.causal), s.softmax_scale, mla_context_arch(ctx),
                mla_context_num_cus(ctx));
    // the GPU run, in a scope of its own: its device buffers are freed before the context
    const int rc = [&]() -> int {
        int status = 0;
        const Problem p = make_problem(s);
        DeviceRun run;
        if (!run.setup(ctx, p) || !run.launch()) {
            std::fprintf(stderr, "mla run: %s\n", run.error.c_str());
            return 1;
        }
        std::vector<float> out, lse;
        int32_t flag = 0;
        if (!run.fetch(p, out, lse, flag)) {
            std::fprintf(stderr, "mla run: %s\n", run.error.c_str());
            return 1;
        }
        std::printf("  plan: %d works on %d clusters, %d of %d tiles split, max %d works per cluster; active_clusters %d "
                    "passed (0: every cluster), no_split_tiles %d\n",
                    run.summary.num_works, run.sizes.num_clusters, run.summary.num_split_tiles, run.summary.num_tiles,
                    run.summary.max_works_per_cluster, run.args.active_clusters, run.args.no_split_tiles);
        if (flag) {
            std::printf("  device error flag %d\n", flag);
            status = 1;
        }
        // check a random subset of requests (or all)
        if (check != 0) {
            std::vector<int> reqs;
            std::mt19937 rng(unsigned(s.seed) + 99);
            for (int b = 0; b < s.batch; ++b) reqs.push_back(b);
            if (check > 0 && check < s.batch) {
                std::shuffle(reqs.begin(), reqs.end(), rng);
                reqs.resize(size_t(check));
                std::sort(reqs.begin(), reqs.end());
            }
            std::vector<float> rout, rlse;
            if (reference_subset(p, reqs, rout, rlse)) {
                std::fprintf(stderr, "mla run: reference: %s\n", mla_last_error());
                status = 1;
            } else {
                std::vector<int> rows;
                for (int b : reqs)
                    for (int t = p.qo_indptr[b]; t < p.qo_indptr[b + 1]; ++t) rows.push_back(t);
                CompareResult r;
                compare_rows(p, rows, out, lse, rout, rlse, tolerance_for(p.spec), r);
                std::printf("  check: %zu requests vs mla_decode_reference%s: %ld values, max abs %.2e, max lse rel "
                            "%.2e, cos diff %.1e: %s\n",
                            reqs.size(), s.ref_p_fp8 ? " (P as e4m3)" : "", r.checked, r.max_abs, r.max_rel_lse,
                            r.cos_diff(),
                            r.ok() ? "PASS" : ("FAIL (" + std::to_string(r.bad_out) + " out, " +
                                               std::to_string(r.bad_lse) + " lse; " + r.first_bad + ")").c_str());
                if (!r.ok()) status = 1;
            }
        }
        // timing: do_bench's method (L2 flushed before each call), then the idle-GPU method
        for (int w = 0; w < 3; ++w) run.launch();
        const size_t flush_bytes = size_t(flush_mb) * 1000000;  // 256: L2Flush::kBytes, do_bench's
        const L2Flush flush{run.alloc(flush_bytes), flush_bytes};
        if (!flush.buf) {
            std::fprintf(stderr, "mla run: the %d MB L2 flush buffer: %s\n", flush_mb, mla_last_error());
            return 1;
        }
        double med_ms = 0, idle_ms = 0;
        if (!flushed_and_idle_ms(ctx, iters, [&] { return run.launch(); }, flush, &med_ms, &idle_ms)) {
            std::fprintf(stderr, "mla run: timing: %s\n", mla_last_error());
            return 1;
        }
        const double us = med_ms * 1000.0;
        const double bytes = problem_bytes(p), flops = problem_flops(p);
        const double gbs = bytes / (us * 1e-6) / 1e9, tf = flops / (us * 1e-6) / 1e12;
        // copy yardstick: the KV cache's size (at least 256 MiB), device to device
        std::string copy_error;
        const double copy_gbs = copy_bandwidth_gbs(
            ctx, run, std::max<size_t>(size_t(1) << 28, p.kv.size()), std::max(5, iters / 2),
            &copy_error);
        if (copy_gbs <= 0) std::printf("  copy yardstick unavailable: %s\n", copy_error.c_str());
        std::printf("  decode: %.1f us (median of %d), %.0f GB/s, %.1f TFLOPS", us, iters, gbs, tf);
        if (copy_gbs > 0) std::printf(", %.0f%% of the %.0f GB/s device copy", 100.0 * gbs / copy_gbs, copy_gbs);
        std::printf("\n  (bytes = KV read once + Q + O = %.3f GB; FLOPs = 2 (576 + 512) h s_q s_k = %.2f G;\n"
                    "  timing as do_bench: a %d MB L2 flush before each call, events around the call)\n"
                    "  idle GPU: %.1f us (median of %d calls each started on an idle GPU, no flush: adds the\n"
                    "  host's time to the first launch, and the L2 keeps what the previous call read)\n",
                    bytes / 1e9, flops / 1e9, flush_mb, idle_ms * 1000.0, iters);
        // Host cost of one call (validation, table lookup, the launches): wall clock of 100
        // back-to-back mla_decode_fwd calls, which only enqueue work (no synchronisation).
        {
            mla_stream_synchronize(ctx, nullptr);
            const int n = 100;
            const auto t0 = std::chrono::steady_clock::now();
            bool ok = true;
            for (int i = 0; i < n && ok; ++i) ok = run.launch();
            const auto t1 = std::chrono::steady_clock::now();
            mla_stream_synchronize(ctx, nullptr);
            if (ok)
                std::printf("  host cost: %.2f us per mla_decode_fwd call (validation + launches; "
                            "wall clock of %d enqueues)\n",
                            std::chrono::duration<double, std::micro>(t1 - t0).count() / n, n);
        }
        return status;
    }();
    mla_context_destroy(ctx);
    return rc;
}
