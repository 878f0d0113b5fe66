// cmd_plan.cpp - `mla plan`: plans a synthetic batch on the host (mla_plan_metadata) and prints
// a summary (works per cluster, split tiles, partial rows, balance); --dump prints the buffers.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "commands.h"
#include "host_plan.h"
#include "mla_c_api.h"

namespace {

void plan_usage(FILE* f) {
    std::fprintf(f,
                 "usage: mla plan [options]\n"
                 "  --batch N         requests (default 64)\n"
                 "  --kv-len N        KV tokens per request (default 4096; max with --varlen)\n"
                 "  --heads H         query heads (default 16)\n"
                 "  --qlen L          query tokens per request, MTP 1..8 (default 1)\n"
                 "  --arch A          sm_90a, gfx942, gfx950, gfx1250 (default sm_90a)\n"
                 "  --page-size N     tokens per page, power of two (default 1)\n"
                 "  --granularity N   kv_granularity in tokens (default 16)\n"
                 "  --clusters N      CUs / SMs (default: the arch's)\n"
                 "  --cap N           max_split_per_batch (default -1 = automatic)\n"
                 "  --overhead-tokens N  work_overhead_tokens: a work's fixed cost in KV tokens\n"
                 "                    (default -1 = the arch's: sm_90a 1024 for 64-row tiles and\n"
                 "                    16-row fp8-KV tiles, else aiter's rule; 0 = aiter's rule)\n"
                 "  --tail-tokens N   split_tail_tokens: a split never leaves fewer KV tokens of\n"
                 "                    a tile (default -1 = the arch's: sm_90a 512 for 16-row and\n"
                 "                    256 for 32-row bf16 tiles, else 0; 0 = none)\n"
                 "  --dtype Q/KV      e.g. bf16/bf16, bf16/fp8, fp8/fp8 (default bf16/bf16)\n"
                 "  --planner P       v1_2 (default), v1_0, v1_1\n"
                 "  --no-causal       non-causal MTP\n"
                 "  --varlen          KV lengths uniform in [5, kv-len] (seed --seed, default 1)\n"
                 "  --aiter-order     lay the works out in aiter's order (request by request).\n"
                 "                    Without it (sm_90a, v1_2 planner) the plan is head-group-major:\n"
                 "                    the tiles of a request that read the same KV (its head groups,\n"
                 "                    and its qo tiles when every request has as many) run at the same\n"
                 "                    time on clusters C/S apart, so the L2 serves the repeated reads\n"
                 "                    (docs/planner.md); `mla run` and `mla bench` plan the same way\n"
                 "  --dump            print every buffer\n");
}

bool parse_dtypes(const char* s, mla_dtype* q, mla_dtype* kv) {
    std::string a(s);
    const size_t slash = a.find('/');
    if (slash == std::string::npos) return false;
    return mla_dtype_from_string(a.substr(0, slash).c_str(), q) == MLA_SUCCESS &&
           mla_dtype_from_string(a.substr(slash + 1).c_str(), kv) == MLA_SUCCESS;
}

}  // namespace

int cmd_plan(int argc, char** argv) {
    mla_metadata_params p = MLA_METADATA_PARAMS_INIT;
    p.arch = "sm_90a";
    p.batch_size = 64;
    long kv_len = 4096, seed = 1;
    bool varlen = false, dump = false;
    int group_major = -1;  // -1: the default (sm_90a v1_2: 1)
    for (int i = 0; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&](void) -> const char* {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "mla plan: %s needs a value\n", a.c_str());
                std::exit(2);
            }
            return argv[++i];
        };
        if (a == "--help" || a == "-h") {
            plan_usage(stdout);
            return 0;
        } else if (a == "--batch") p.batch_size = std::atoi(value());
        else if (a == "--kv-len") kv_len = std::atol(value());
        else if (a == "--heads") p.num_heads = std::atoi(value());
        else if (a == "--qlen") p.max_seqlen_qo = std::atoi(value());
        else if (a == "--arch") p.arch = value();
        else if (a == "--page-size") p.page_size = std::atoi(value());
        else if (a == "--granularity") p.kv_granularity = std::atoi(value());
        else if (a == "--clusters") p.num_clusters = std::atoi(value());
        else if (a == "--cap") p.max_split_per_batch = std::atoi(value());
        else if (a == "--overhead-tokens") p.work_overhead_tokens = std::atoi(value());
        else if (a == "--tail-tokens") p.split_tail_tokens = std::atoi(value());
        else if (a == "--seed") seed = std::atol(value());
        else if (a == "--no-causal") p.causal = 0;
        else if (a == "--varlen") varlen = true;
        else if (a == "--dump") dump = true;
        else if (a == "--aiter-order") group_major = 0;
        else if (a == "--head-group-major") group_major = 1;
        else if (a == "--dtype") {
            if (!parse_dtypes(value(), &p.q_dtype, &p.kv_dtype)) {
                std::fprintf(stderr, "mla plan: --dtype wants Q/KV, e.g. bf16/fp8\n");
                return 2;
            }
        } else if (a == "--planner") {
            const std::string v = value();
            if (v == "v1_2") p.fast_mode = 1;
            else if (v == "v1_0") p.fast_mode = 0, p.intra_batch_mode = 1;
            else if (v == "v1_1") p.fast_mode = 0, p.intra_batch_mode = 0;
            else {
                std::fprintf(stderr, "mla plan: unknown planner '%s'\n", v.c_str());
                return 2;
            }
        } else {
            std::fprintf(stderr, "mla plan: unknown option '%s'\n\n", a.c_str());
            plan_usage(stderr);
            return 2;
        }
    }
    if (group_major < 0) group_major = std::strcmp(p.arch, "sm_90a") == 0 && p.fast_mode == 1 ? 1 : 0;
    p.head_group_major = group_major;
    if (p.batch_size < 0 || kv_len < 0 || p.page_size < 1) {
        std::fprintf(stderr, "mla plan: --batch, --kv-len and --page-size must be positive\n");
        return 2;
    }
    mla_metadata_sizes z{};
    z.struct_size = sizeof(z);
    mla_status st = mla_metadata_info(&p, &z);
    if (st != MLA_SUCCESS) {
        std::fprintf(stderr, "mla plan: %s: %s\n", mla_status_string(st), mla_last_error());
        return 1;
    }
    // Batch: qlen tokens per request, kv_len (or U[5, kv_len]) tokens in pages.
    std::mt19937 rng{uint32_t(seed)};
    std::vector<int32_t> qo(1, 0), kv(1, 0), last;
    for (int b = 0; b < p.batch_size; ++b) {
        const long n = varlen ? std::uniform_int_distribution<long>(std::min(5L, kv_len), kv_len)(rng)
                              : kv_len;
        const long pages = (n + p.page_size - 1) / p.page_size;
        qo.push_back(qo.back() + p.max_seqlen_qo);
        kv.push_back(int32_t(kv.back() + pages));
        last.push_back(pages ? int32_t(n - (pages - 1) * p.page_size) : p.page_size);
    }
    HostPlan hp(z);
    const std::vector<int32_t>& wi = hp.work_indptr;
    const std::vector<int32_t>& ws = hp.work_info_set;
    const std::vector<int32_t>& ri = hp.reduce_indptr;
    const std::vector<int32_t>& rf = hp.reduce_final_map;
    const std::vector<int32_t>& rp = hp.reduce_partial_map;
    mla_metadata_buffers& m = hp.buffers;
    mla_plan_summary s{};
    s.struct_size = sizeof(s);
    st = mla_plan_metadata(&p, qo.data(), kv.data(), last.data(), &m, nullptr, nullptr, &s);
    if (st != MLA_SUCCESS) {
        std::fprintf(stderr, "mla plan: %s: %s\n", mla_status_string(st), mla_last_error());
        return 1;
    }
    const int C = z.num_clusters;
    int wmin = 1 << 30, wmax = 0, busy = 0;
    for (int c = 0; c < C; ++c) {
        const int n = wi[c + 1] - wi[c];
        wmin = std::min(wmin, n);
        wmax = std::max(wmax, n);
        busy += n > 0;
    }
    // Split requests: requests with at least one split tile.
    std::vector<char> split_req(size_t(p.batch_size), 0);
    for (int w = 0; w < s.num_works; ++w)
        if (ws[size_t(w) * 8 + 1] >= 0) split_req[size_t(ws[size_t(w) * 8] / z.qk_batch_ratio)] = 1;
    int nsplit_req = 0;
    for (char c : split_req) nsplit_req += c;
    const double balance = s.max_cluster_cost ? double(s.total_kv_blocks) /
                                                    (double(C) * double(s.max_cluster_cost))
                                              : 1.0;
    std::printf("plan %s: batch %d, kv %s%ld, heads %d (kernel %d x %d), qlen %d, page %d, "
                "granularity %d\n",
                p.arch, p.batch_size, varlen ? "<= " : "", kv_len, p.num_heads, z.kernel_num_heads,
                z.qk_batch_ratio, p.max_seqlen_qo, p.page_size, p.kv_granularity);
    const int S = s.num_sections;  // the planner's twin sections (docs/planner.md)
    if (S > 1)
        std::printf("layout          head-group-major: %d sections of %d clusters (a request's tiles that "
                    "read the same KV run at once)\n", S, C / S);
    else
        std::printf("layout          aiter's order (request by request)%s\n",
                    p.head_group_major ? "; head-group-major changes nothing here" : "");
    std::printf("clusters        %d (%d with work; a decode launches %d CTAs with active_clusters)\n", C, busy,
                s.active_clusters);
    std::printf("works           %d (per cluster min %d, mean %.2f, max %d)\n", s.num_works,
                C ? wmin : 0, C ? double(s.num_works) / C : 0.0, wmax);
    std::printf("qo tiles        %d (%d split over several clusters)\n", s.num_tiles,
                s.num_split_tiles);
    std::printf("split requests  %d of %d\n", nsplit_req, p.batch_size);
    std::printf("partials        %d fragments, %d partial rows (buffer %lld rows, %lld bytes)\n",
                s.num_partials, s.num_partial_rows, (long long)z.partial_rows,
                (long long)z.workspace_bytes);
    const long long block_tokens = (long long)std::max(1, p.kv_granularity / p.page_size) * p.page_size;
    const char* blocks_word = s.work_overhead_blocks == 1 ? "block" : "blocks";
    if (p.work_overhead_tokens < 0)
        std::printf("work overhead   %d %s (%lld tokens) per work, the arch's default (work_overhead_tokens -1: on "
                    "sm_90a 1024 tokens for 64-row tiles and for 16-row fp8-KV tiles, else aiter's rule: max(1, "
                    "ceil(16 / page size)) blocks)\n",
                    s.work_overhead_blocks, blocks_word, s.work_overhead_blocks * block_tokens);
    else
        std::printf("work overhead   %d %s (%lld tokens) per work, from work_overhead_tokens %d (0 = aiter's rule "
                    "alone: max(1, ceil(16 / page size)) blocks per work)\n",
                    s.work_overhead_blocks, blocks_word, s.work_overhead_blocks * block_tokens,
                    p.work_overhead_tokens);
    std::printf("split tail      %d %s%s (split_tail_tokens %d%s)\n", s.split_tail_blocks,
                s.split_tail_blocks == 1 ? "block" : "blocks",
                s.split_tail_blocks ? ": a split never leaves fewer of a tile" : ", none",
                p.split_tail_tokens, p.split_tail_tokens < 0 ? " = the arch's: sm_90a 512 tokens for 16-row and 256 for 32-row bf16 tiles" : "");
    std::printf("cost            total %lld units, max cluster %lld, balance %.3f (a unit: a split block of %d "
                "tokens, kv_granularity rounded up to whole pages; every work adds the work overhead in "
                "blocks)\n",
                (long long)s.total_kv_blocks, (long long)s.max_cluster_cost, balance, int(block_tokens));
    if (dump) {
        std::printf("\nwork_indptr [%d]:", C + 1);
        for (int c = 0; c <= C; ++c) std::printf(" %d", wi[c]);
        std::printf("\nwork_info_set [%d x 8]: batch partial qo_start qo_end kv_start kv_end kv_offset tile\n",
                    s.num_works);
        for (int c = 0; c < C; ++c)
            for (int w = wi[c]; w < wi[c + 1]; ++w) {
                const int32_t* r = &ws[size_t(w) * 8];
                std::printf("  c%-4d w%-6d %6d %6d %6d %6d %9d %9d %8d %d\n", c, w, r[0], r[1], r[2],
                            r[3], r[4], r[5], r[6], r[7]);
            }
        std::printf("reduce_indptr [%lld]:", (long long)z.reduce_indptr_len);
        for (int64_t t = 0; t < z.reduce_indptr_len; ++t) std::printf(" %d", ri[size_t(t)]);
        std::printf("\nreduce_final_map [%lld x 2]:", (long long)z.reduce_final_map_rows);
        for (int64_t t = 0; t < z.reduce_final_map_rows; ++t)
            std::printf(" (%d,%d)", rf[size_t(t) * 2], rf[size_t(t) * 2 + 1]);
        std::printf("\nreduce_partial_map [%d used]:", s.num_partials);
        for (int i = 0; i < s.num_partials; ++i) std::printf(" %d", rp[size_t(i)]);
        std::printf("\n");
    }
    return 0;
}
