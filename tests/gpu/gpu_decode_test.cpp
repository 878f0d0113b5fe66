// gpu_decode_test.cpp - sm_90a decode kernels against the CPU reference (mla_decode_reference),
// through the public API exactly as an engine calls it: host plan, device buffers,
// mla_decode_fwd, copy back. Exits 77 (skip) without a CUDA runtime or device, or on a non-sm_90a
// device.
//
// Every row of codeobjects/sm_90a/decode/mla_decode.csv (dtypes x row tile M x causal x lse, and
// the causal cprr rows: round-robin context-parallel shards, cp_shard) is hit by at least one
// case (checked at the end). Cases mix heads 8..128 (folded above 64), qlen
// 1..4, page sizes 1/16/64, ragged qo lengths (some 0), zero-length KV, permuted pages, NaN in
// every KV slot no request owns, both page-table forms, long contexts that split (reducer); and
// the TMA loads of bf16 tiles at pages 8/32/128/256 and with many works per CTA, on the
// transposed kernels (16, 32 rows), the qm TMA body (64, 128 heads) and the qm fp8 body (fp8 Q and
// KV: 64, 128 heads, 16 heads x MTP 4) (37 cases, 15 in --quick);
// a page id outside the cache at 16 and at 64 heads.
// Tolerances (docs/kernels.md): FlashMLA's for every dtype pair (out abs 8e-4 or rel 1.6%, LSE
// abs 1e-6 or rel 1.2e-4; tolerance_for): fp8 inputs are widened exactly, so fp8 cases differ
// from the reference (fed the same fp8 codes) only as bf16 cases do, except that fp8 Q with fp8
// KV at up to 16 rows (mla_decode_ra_fp8_*) and at 64 rows (mla_decode_qm_fp8_fp8_*, the TMA body)
// sum S on the fp8 tensor cores: LSE abs floor 2e-4.
// bf16 Q times 2^-40 .. 2^20 with fp8 KV on 16-row tiles (6 cases, each checked to route to the
// register-A bf16-Q kernel: its per-work f16 exponent, k > 0 and k < 0, MTP, splits).
// fp32 out (out_dtype, the context-parallel partials): 6 cases, every dtype pair, the reducer
// writing fp32 (split tiles required), 128 heads, a cprr shard; run in --quick too.
// Usage: gpu_decode_test [--quick] [--verbose]
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "gpu_context.h"
#include "../../tools/mla/decode_problem.h"

using namespace mla_tool;

namespace {

bool g_verbose = false;

struct CaseResult {
    bool ok = false;
    std::string msg;
};

std::string describe(const Spec& s) {
    char buf[256];
    std::snprintf(buf, sizeof buf, "%s/%s b=%d h=%d L=%d kv~%d%s%s ps=%d causal=%d lse=%d%s%s%s%s%s%s",
                  mla_dtype_string(s.q_dtype), mla_dtype_string(s.kv_dtype), s.batch, s.heads, s.qlen,
                  s.kv_len, s.varlen ? "(var)" : "", s.long_first > 1 ? " (request 0 longer)" : "", s.page_size, int(s.causal), int(s.lse),
                  s.ragged_q ? " ragged" : "", s.zero_kv_frac > 0 ? " zero-kv" : "",
                  s.block_table ? " block_table" : "", s.out_dtype == MLA_DTYPE_FP32 ? " out=fp32" : "",
                  s.fused_reduce ? " tile_counters" : "", s.always_reduce ? " no_split_tiles=0" : "");
    return buf;
}

int row_tile(const Spec& s);

// Runs one problem; `bad_page` >= 0 corrupts that page index (expects error flag bit 1).
// A round-robin shard (cp_shard) is compared with the CPU reference of the shard (the
// reference masks on global positions when cp_world > 1). need_split: the plan must have split
// tiles (the reducer writes part of out). fp32 out (spec.out_dtype) is compared unrounded, with
// the same tolerances, and must hold values no bf16 can (else the kernels wrote bf16 values).
// need_whole_tiles: the launch rule must pick mla_reduce.csv's spread-0 row (the whole-tile
// reducer: tiles x M > 2 x clusters, src/launch/decode_check.cpp).
// The probes' call: every tile counter set to `byte` in each byte (memset_d8), the error flag
// cleared, one launch, then the counters and the flag read back. false (and run.error) on a
// runtime failure.
bool launch_counted(DeviceRun& run, unsigned char byte, std::vector<int32_t>& cnt, int32_t& flag) {
    mla_context* ctx = run.ctx;
    const size_t bytes = size_t(run.args.tile_counters_len) * 4;
    if (mla_memset_d8(ctx, run.args.tile_counters, byte, bytes, nullptr) ||
        mla_memset_d8(ctx, run.error_flag, 0, 4, nullptr) || !run.launch() || mla_stream_synchronize(ctx, nullptr) ||
        !run.fetch_counters(cnt) || mla_memcpy_dtoh(ctx, &flag, run.error_flag, 4, nullptr)) {
        run.error += std::string(" ") + mla_last_error();
        return false;
    }
    return true;
}

// The plan's reduce_indptr (T + 1 entries, T = its qo tiles), copied back.
bool fetch_reduce_indptr(DeviceRun& run, std::vector<int32_t>& ri) {
    ri.assign(size_t(run.sizes.reduce_indptr_len), 0);
    return mla_memcpy_dtoh(run.ctx, ri.data(), run.plan.reduce_indptr, ri.size() * 4, nullptr) == MLA_SUCCESS;
}

// The fused route is the one that ran (expect_fused): one more call with every tile counter preset
// to kProbe (a caller's error: no tile can then complete its count, so none is reduced) must leave
// counter t at kProbe + the tile's fragments (each split work of t counted in once) and the error
// flag clear (every split work's dw 7 passed the kernel's bound check); the reducer route leaves
// kProbe. The counters are zeroed again after. false + why otherwise.
bool probe_fused_route(DeviceRun& run, std::string& why) {
    constexpr int32_t kProbe = 0x01010101;  // memset_d8 of 0x01
    const int64_t T = run.sizes.reduce_indptr_len - 1;
    std::vector<int32_t> ri, cnt;
    int32_t flag = -1;
    if (T < 1 || !run.args.tile_counters) return why = "no tile counters to probe", false;
    if (!fetch_reduce_indptr(run, ri) || !launch_counted(run, 0x01, cnt, flag) ||
        mla_memset_d8(run.ctx, run.args.tile_counters, 0, size_t(run.args.tile_counters_len) * 4, nullptr))
        return why = "route probe: " + run.error + " " + mla_last_error(), false;
    if (flag != 0) return why = "route probe: error flag " + std::to_string(flag), false;
    int64_t counted = 0;
    for (int64_t t = 0; t < T; ++t) {
        const int32_t want = kProbe + (ri[t + 1] - ri[t]);
        counted += cnt[t] - kProbe;
        if (cnt[t] != want)
            return why = "route probe: tile " + std::to_string(t) + " counter " + std::to_string(cnt[t] - kProbe) +
                         " above the preset, its fragments " + std::to_string(ri[t + 1] - ri[t]) +
                         " (the *_fused kernel did not count it in)",
                   false;
    }
    if (counted == 0) return why = "route probe: no split work counted in (the reducer route ran)", false;
    return true;
}

// The fused kernel's tile check: one split work whose dw 7 names no tile of its own (the tile
// count, -1, another tile) must set MLA_DECODE_ERR_PLAN (4) and never count in, so its own tile
// t stops one short (counter F_t - 1, not reduced) while every other tile completes and resets
// its counter (0). The plan and the counters are restored after. false + why otherwise.
bool probe_bad_tile(DeviceRun& run, std::string& why) {
    mla_context* ctx = run.ctx;
    const int64_t T = run.sizes.reduce_indptr_len - 1, rows = run.sizes.work_info_set_rows;
    std::vector<int32_t> ri, fmap(size_t(2 * T)), ws(size_t(8 * rows)), cnt;
    auto fail = [&](const std::string& m) { return why = "bad-tile probe: " + m, false; };
    if (!fetch_reduce_indptr(run, ri) ||
        mla_memcpy_dtoh(ctx, fmap.data(), run.plan.reduce_final_map, fmap.size() * 4, nullptr) ||
        mla_memcpy_dtoh(ctx, ws.data(), run.plan.work_info_set, ws.size() * 4, nullptr))
        return fail(std::string("copy the plan back: ") + mla_last_error());
    int64_t wi = -1;  // a split work (partial_qo_loc, dw 1, >= 0) of a tile of >= 2 fragments
    for (int64_t i = 0; i < rows && wi < 0; ++i) {
        const int32_t t = ws[8 * i + 7];
        if (ws[8 * i + 1] >= 0 && t >= 0 && t < T && ri[t + 1] - ri[t] >= 2) wi = i;
    }
    if (wi < 0 || T < 2) return fail("no split work to corrupt");
    const int32_t t = ws[8 * wi + 7];
    int32_t other = (t + 1) % int32_t(T);
    while (fmap[2 * other] == fmap[2 * t] && fmap[2 * other + 1] == fmap[2 * t + 1]) other = (other + 1) % int32_t(T);
    for (const int32_t bad : {int32_t(T), int32_t(-1), other}) {
        std::vector<int32_t> w2 = ws;
        w2[8 * wi + 7] = bad;
        int32_t flag = -1;
        if (mla_memcpy_htod(ctx, run.plan.work_info_set, w2.data(), w2.size() * 4, nullptr) ||
            !launch_counted(run, 0, cnt, flag))
            return fail(run.error + " " + mla_last_error());
        const std::string tag = "dw 7 = " + std::to_string(bad) + " (tile " + std::to_string(t) + "): ";
        if (!(flag & 4)) return fail(tag + "error flag " + std::to_string(flag) + ", expected bit 4");
        for (int64_t u = 0; u < T; ++u) {
            const int32_t want = u == t ? ri[t + 1] - ri[t] - 1 : 0;
            if (cnt[u] != want)
                return fail(tag + "counter " + std::to_string(u) + " is " + std::to_string(cnt[u]) + ", expected " +
                            std::to_string(want));
        }
    }
    if (mla_memcpy_htod(ctx, run.plan.work_info_set, ws.data(), ws.size() * 4, nullptr) ||
        mla_memset_d8(ctx, run.args.tile_counters, 0, size_t(run.args.tile_counters_len) * 4, nullptr) ||
        mla_memset_d8(ctx, run.error_flag, 0, 4, nullptr))
        return fail("restore the plan");
    return true;
}

CaseResult run_problem(mla_context* ctx, Problem p, int bad_page = -1, bool need_split = false,
                       bool need_whole_tiles = false, bool expect_fused = false) {
    CaseResult cr;
    const Spec& s = p.spec;
    std::set<int> poisoned_reqs;
    if (bad_page >= 0 && !p.kv_page_indices.empty()) {
        const int i = bad_page % int(p.kv_page_indices.size());
        p.kv_page_indices[i] = p.num_pages + 7;
        for (int b = 0; b < s.batch; ++b)
            if (i >= p.kv_indptr[b] && i < p.kv_indptr[b + 1]) poisoned_reqs.insert(b);
    }
    // Two launches, the outputs poisoned again between them: the second one checks that the
    // first left the fused reduction's tile counters at 0 (a tile reduced twice, or never, would
    // show in its rows), and the counters must read 0 after it.
    DeviceRun run;
    if (!run.setup(ctx, p) || !run.launch() || !run.poison(p) || !run.launch()) {
        cr.msg = run.error;
        return cr;
    }
    std::vector<float> out, lse, rout, rlse;
    std::vector<int32_t> counters;
    int32_t flag = -1;
    if (!run.fetch(p, out, lse, flag) || !run.fetch_counters(counters)) {
        cr.msg = run.error;
        return cr;
    }
    for (size_t i = 0; i < counters.size(); ++i)
        if (counters[i] != 0) {
            cr.msg = "tile counter " + std::to_string(i) + " is " + std::to_string(counters[i]) + " after the call, not 0";
            return cr;
        }
    if (bad_page >= 0) {
        // the bad page is never read: every output finite, the flag says why
        for (float v : out)
            if (!std::isfinite(v)) {
                cr.msg = "non-finite output with a bad page id";
                return cr;
            }
        cr.ok = (flag & 1) != 0;
        if (!cr.ok) cr.msg = "error flag " + std::to_string(flag) + ", expected bit 1 (page id out of range)";
        return cr;
    }
    if (flag != 0) {
        cr.msg = "device error flag " + std::to_string(flag);
        return cr;
    }
    if (s.always_reduce && (run.summary.num_split_tiles != 0 || run.args.no_split_tiles != 0)) {
        cr.msg = "the case must run the reducer (no_split_tiles 0) on a plan with no split tile";
        return cr;
    }
    if (need_split && run.summary.num_split_tiles == 0) {
        cr.msg = "the plan has no split tiles (the case must exercise the reducer)";
        return cr;
    }
    if (need_whole_tiles &&
        (run.sizes.reduce_indptr_len - 1) * int64_t(row_tile(s)) <= 2 * int64_t(run.sizes.num_clusters)) {
        cr.msg = "the launch rule picks the slim reducer (the case must exercise the whole-tile one)";
        return cr;
    }
    long not_bf16 = 0;  // fp32 out: values that bf16 cannot represent
    if (s.out_dtype == MLA_DTYPE_FP32) {
        for (float v : out)
            if (std::isfinite(v) && bf16_to_f32(f32_to_bf16(v)) != v) ++not_bf16;
    }
    std::vector<int> reqs(s.batch);
    for (int b = 0; b < s.batch; ++b) reqs[b] = b;
    const mla_status st = reference_subset(p, reqs, rout, rlse);
    if (st) {
        cr.msg = std::string("mla_decode_reference: ") + mla_last_error();
        return cr;
    }
    std::vector<int> rows(p.total_q);
    for (int t = 0; t < p.total_q; ++t) rows[t] = t;
    CompareResult r;
    compare_rows(p, rows, out, lse, rout, rlse, tolerance_for(s), r);
    cr.ok = r.ok();
    // a problem with outputs that are not all zero must show fp32 values when out is fp32
    bool any_nonzero = false;
    for (float v : rout) any_nonzero |= v != 0.f;
    const bool rounded = s.out_dtype == MLA_DTYPE_FP32 && any_nonzero && not_bf16 == 0;
    if (rounded) cr.ok = false;
    char buf[400];
    std::snprintf(buf, sizeof buf, "%ld values, %ld bad out, %ld bad lse, %ld non-finite, max abs %.2e, "
                  "max lse rel %.2e, works %d, split tiles %d%s%s%s",
                  r.checked, r.bad_out, r.bad_lse, r.nonfinite_out, r.max_abs, r.max_rel_lse,
                  run.summary.num_works, run.summary.num_split_tiles,
                  rounded ? "; fp32 out holds only bf16 values (written as bf16?)" : "",
                  r.first_bad.empty() ? "" : "; first: ", r.first_bad.c_str());
    cr.msg = buf;
    std::string why;
    if (cr.ok && expect_fused && (!probe_fused_route(run, why) || !probe_bad_tile(run, why))) {
        cr.ok = false;
        cr.msg += "; " + why;
    }
    return cr;
}

CaseResult run_case(mla_context* ctx, const Spec& s, int bad_page = -1, bool need_split = false,
                    bool need_whole_tiles = false, bool expect_fused = false) {
    return run_problem(ctx, make_problem(s), bad_page, need_split, need_whole_tiles, expect_fused);
}

// A plan that splits tiles, decoded with no_split_tiles 1 (s.force_no_split; no partial buffers,
// no reducer): the kernel must reject the split works and flag MLA_DECODE_ERR_PLAN (bit 4); the
// requests whose tiles did not split must still match the reference.
CaseResult run_forced_unsplit(mla_context* ctx, Spec s) {
    CaseResult cr;
    s.force_no_split = true;
    const Problem p = make_problem(s);
    DeviceRun run;
    std::vector<float> out, lse, rout, rlse;
    int32_t flag = -1;
    if (!run.setup(ctx, p) || !run.launch() || !run.fetch(p, out, lse, flag)) {
        cr.msg = run.error;
        return cr;
    }
    if (run.args.no_split_tiles != 1 || run.summary.num_split_tiles == 0) {
        cr.msg = "the case must pass no_split_tiles 1 on a plan with split tiles";
        return cr;
    }
    if (!(flag & 4)) {
        cr.msg = "error flag " + std::to_string(flag) + ", expected bit 4 (a split work without partial buffers)";
        return cr;
    }
    // the requests of unsplit tiles: every work of the request has partial_qo_loc < 0 (dw 1);
    // dw 0 is b * qk_batch_ratio + the head group (plan-layout.md)
    std::vector<int32_t> wptr(size_t(run.sizes.work_indptr_len)), info(size_t(run.sizes.work_info_set_rows) * 8);
    if (mla_memcpy_dtoh(ctx, wptr.data(), run.plan.work_indptr, wptr.size() * 4, nullptr) ||
        mla_memcpy_dtoh(ctx, info.data(), run.plan.work_info_set, info.size() * 4, nullptr)) {
        cr.msg = std::string("plan read-back: ") + mla_last_error();
        return cr;
    }
    const mla_decode_shape sh = sm90_shape_of(s);
    mla_head_plan hp = MLA_HEAD_PLAN_INIT;
    if (mla_decode_head_plan(&sh, &hp) != MLA_SUCCESS) {
        cr.msg = std::string("head plan: ") + mla_last_error();
        return cr;
    }
    const int r = std::max(1, int(hp.qk_batch_ratio));
    std::vector<char> split(size_t(s.batch), 0);
    for (int w = 0; w < wptr.back(); ++w)
        if (info[8 * size_t(w) + 1] >= 0) split[size_t(info[8 * size_t(w)] / r)] = 1;
    std::vector<int> reqs;
    for (int b = 0; b < s.batch; ++b)
        if (!split[size_t(b)]) reqs.push_back(b);
    if (reqs.empty()) {
        cr.msg = "every request split: nothing left to compare";
        return cr;
    }
    if (reference_subset(p, reqs, rout, rlse)) {
        cr.msg = std::string("mla_decode_reference: ") + mla_last_error();
        return cr;
    }
    std::vector<int> rows;
    for (int b : reqs)
        for (int t = p.qo_indptr[b]; t < p.qo_indptr[b + 1]; ++t) rows.push_back(t);
    CompareResult cmp;
    compare_rows(p, rows, out, lse, rout, rlse, tolerance_for(s), cmp);
    cr.ok = cmp.ok();
    cr.msg = "flag " + std::to_string(flag) + ", " + std::to_string(reqs.size()) + " of " + std::to_string(s.batch) +
             " requests unsplit: " + (cr.ok ? "match" : cmp.first_bad);
    return cr;
}

int row_tile(const Spec& s) {
    const mla_decode_shape sh = sm90_shape_of(s);
    mla_head_plan hp = MLA_HEAD_PLAN_INIT;
    if (mla_decode_head_plan(&sh, &hp) != MLA_SUCCESS) return -1;
    const int hk = hp.kernel_num_heads;
    const int t = std::min(s.qlen, std::max(1, 64 / hk));
    const int rows = t * hk;
    return rows <= 16 ? 16 : rows <= 32 ? 32 : 64;
}

}  // namespace

int main(int argc, char** argv) {
    bool quick = false;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--quick")) quick = true;
        if (!std::strcmp(argv[i], "--verbose")) g_verbose = true;
    }
    mla_context* ctx = nullptr;
    if (const int rc = open_gpu_context("gpu_decode_test", /*need_sm90=*/true, &ctx)) return rc;

    const mla_dtype dts[3][2] = {{MLA_DTYPE_BF16, MLA_DTYPE_BF16},
                                 {MLA_DTYPE_BF16, MLA_DTYPE_FP8_E4M3FN},
                                 {MLA_DTYPE_FP8_E4M3FN, MLA_DTYPE_FP8_E4M3FN}};
    // (heads, qlen): M = 16: (8,1) (16,1); M = 32: (32,1) (16,2) (8,4); M = 64: (64,1) (128,1)
    // (96,2) (16,4) (64,3)
    const int shapes[][2] = {{8, 1}, {16, 1}, {32, 1}, {16, 2}, {8, 4}, {64, 1}, {128, 1}, {96, 2}, {16, 4}, {64, 3}};
    const int page_sizes[3] = {1, 16, 64};
    const int kv_lens[4] = {20, 140, 700, 2100};
    std::mt19937 rng(20261130);
    std::set<std::tuple<int, int, int, int>> covered;  // (dtype pair, M, causal, lse)
    int n = 0, failed = 0;
    auto report = [&](const Spec& s, const CaseResult& r, const char* tag) {
        ++n;
        if (!r.ok) ++failed;
        if (!r.ok || g_verbose) {
            std::printf("%s %s%s: %s\n", r.ok ? "ok  " : "FAIL", tag, describe(s).c_str(), r.msg.c_str());
            std::fflush(stdout);  // (a run cut off by a timeout still shows the failures before it)
        }
    };
    int idx = 0;
    for (int d = 0; d < 3; ++d)
        for (const auto& sh : shapes)
            for (int causal = 0; causal < 2; ++causal) {
                ++idx;
                Spec s;
                s.q_dtype = dts[d][0];
                s.kv_dtype = dts[d][1];
                s.heads = sh[0];
                s.qlen = sh[1];
                s.causal = causal;
                s.lse = ((idx / 2) + d) % 2 == 0 || sh[0] == 128;
                s.batch = 1 + int(rng() % (quick ? 4 : 9));
                s.kv_len = kv_lens[rng() % 4];
                s.varlen = rng() % 2;
                s.page_size = page_sizes[rng() % 3];
                s.ragged_q = s.qlen > 1 && rng() % 2;
                s.zero_kv_frac = rng() % 3 == 0 ? 0.25 : 0;
                s.block_table = rng() % 4 == 0;
                s.seed = idx;
                const CaseResult r = run_case(ctx, s);
                report(s, r, "");
                if (r.ok) covered.insert({d, row_tile(s), causal, int(s.lse)});
            }
    // the other lse value of every (dtype, M, causal), and long contexts that split (reducer)
    for (int d = 0; d < 3; ++d)
        for (int m = 0; m < 3; ++m)
            for (int causal = 0; causal < 2; ++causal)
                for (int lse = 0; lse < 2; ++lse) {
                    const int heads_for_m[3][2] = {{16, 1}, {16, 2}, {64, 1}};
                    Spec s;
                    s.q_dtype = dts[d][0];
                    s.kv_dtype = dts[d][1];
                    s.heads = heads_for_m[m][0];
                    s.qlen = heads_for_m[m][1];
                    s.causal = causal;
                    s.lse = lse;
                    const int mm = row_tile(s);
                    if (covered.count({d, mm, causal, lse}) && (quick || (lse + causal) % 2)) continue;
                    s.batch = 2 + int(rng() % 3);
                    s.kv_len = quick ? 2000 : 4000;  // long for 2-4 requests: the planner splits over many SMs
                    s.page_size = page_sizes[rng() % 3];
                    s.seed = 1000 + d * 100 + m * 10 + causal * 2 + lse;
                    const CaseResult r = run_case(ctx, s);
                    report(s, r, "split ");
                    if (r.ok) covered.insert({d, mm, causal, lse});
                }
    // TMA loads (the launch_kv_tma rows: bf16 tiles on the transposed kernels at 16 and 32 rows and
    // the qm TMA body at 64 and 128 heads; fp8 Q and KV on the qm fp8 body, decode_qm8.cuh, at 64
    // and 128 heads and 16 heads x MTP 4) at the page sizes the main grid does not draw: several
    // page runs per tile (8, 32), tiles inside a page (128, 256: boxes at page offsets 64, 128,
    // ...), with NaN past each length and in unused slots; then many short works per CTA, whose
    // tile counts are odd and even in turn (the slots' mbarrier parity, and the qm TMA bodies'
    // named barriers, carried across works)
    {
        const int tma_pages[4] = {8, 32, 128, 256};
        const int tma_shapes[8][2] = {{16, 1}, {32, 1}, {16, 2}, {64, 1}, {128, 1}, {64, 1}, {128, 1}, {16, 4}};
        for (int pi = 0; pi < 4; ++pi)
            for (int si = 0; si < 8; ++si) {
                if (quick && si != 0 && si != 3 && si != 5) continue;
                Spec s;
                if (si >= 5) s.q_dtype = s.kv_dtype = MLA_DTYPE_FP8_E4M3FN;  // the qm fp8 body
                s.heads = tma_shapes[si][0];
                s.qlen = tma_shapes[si][1];
                s.causal = true;
                s.lse = si != 1;
                s.page_size = tma_pages[pi];
                s.batch = 3 + int(rng() % 5);
                s.kv_len = kv_lens[rng() % 4];
                s.varlen = true;
                s.zero_kv_frac = pi % 2 ? 0.25 : 0;
                s.block_table = pi == 2;
                s.seed = 3000 + pi * 10 + si;
                report(s, run_case(ctx, s), "tma ");
            }
        // (heads, qlen, requests with no KV): 16, 64 and 32 rows (M = 32 also as 16 heads x MTP 2
        // at page 16), the last two with works that have no tile; then 64 heads in fp8 (the qm fp8
        // body: a ring of 4 slots and 4 copies of its named barriers, so tile counts mod 4 matter)
        const int many[5][3] = {{16, 1, 0}, {64, 1, 0}, {32, 1, 1}, {16, 2, 1}, {64, 1, 1}};
        for (int mi = 0; mi < 5; ++mi) {
            if (quick && mi >= 2 && mi != 4) continue;
            Spec s;
            if (mi == 4) s.q_dtype = s.kv_dtype = MLA_DTYPE_FP8_E4M3FN;
            s.heads = many[mi][0];
            s.qlen = many[mi][1];
            s.batch = s.heads == 64 ? 300 : 600;
            s.kv_len = 140;
            s.varlen = true;
            s.zero_kv_frac = many[mi][2] ? 0.2 : 0;
            s.page_size = mi == 3 ? 16 : 64;
            s.seed = 3100 + s.heads + mi;
            report(s, run_case(ctx, s), "tma many works ");
        }
    }
    // The whole-tile reducer (mla_reduce_tiles_bf16: more tiles than 2 x SMs / M): one long
    // request among short ones (about 110 fragments at 64 heads: its chunks of 32; about 60 with
    // tiles of 4 MTP rows, ragged), 128 heads (64 kernel heads, 2 head groups), requests with no
    // KV, more tiles than SMs (each CTA loops over its tiles), and 128 requests of 4500 tokens,
    // each tile split, request 127's too (the search's last candidate, whose upper bound it loads
    // apart). Every case must split and take the whole-tile reducer.
    {
        struct R {
            int heads, qlen, batch, kv_len, long_first, ps;
            bool varlen, ragged;
            double zero;
        };
        const R rs[] = {{64, 1, 5, 300, 30, 16, false, false, 0},   {16, 4, 80, 700, 80, 64, false, true, 0},
                        {128, 1, 20, 2100, 1, 64, false, false, 0}, {16, 1, 40, 2000, 1, 64, true, false, 0.2},
                        {16, 2, 300, 500, 1, 64, true, false, 0},   {16, 1, 128, 4500, 1, 64, false, false, 0}};
        for (int ri = 0; ri < 6; ++ri) {
            if (quick && ri >= 2) continue;
            const R& x = rs[ri];
            Spec s;
            s.heads = x.heads;
            s.qlen = x.qlen;
            s.batch = x.batch;
            s.kv_len = x.kv_len;
            s.long_first = x.long_first;
            s.page_size = x.ps;
            s.varlen = x.varlen;
            s.ragged_q = x.ragged;
            s.zero_kv_frac = x.zero;
            s.causal = true;
            s.lse = true;
            s.seed = 3200 + ri;
            // 128 x 4500: planned with aiter's rule (work overhead 0, no split tail), under which
            // every tile splits; 1024 tokens of overhead would keep these tiles whole
            if (ri == 5) s.work_overhead_tokens = 0, s.split_tail_tokens = 0;
            // with tile counters the 16- and 32-row bf16 kernels reduce these tiles themselves
            // (their *_fused builds); without, the reducer kernel
            for (const bool fused : {true, false}) {
                s.fused_reduce = fused;
                // (16- and 32-row tiles: the *_fused kernel, probed; 64 rows: the qm kernel and
                // the reducer, counters or not)
                report(s, run_case(ctx, s, -1, /*need_split=*/true, /*need_whole_tiles=*/true,
                                   /*expect_fused=*/fused && row_tile(s) <= 32),
                       fused ? "tile reducer " : "tile reducer (reducer kernel) ");
            }
        }
    }
    // The fused reduction's *_fused kernels (16 and 32 rows, bf16) over lse x causal, with block
    // tables and fp32 out on two of them, page size 4 on one and 1 on another: 40 requests of ~2000 tokens split
    // many tiles (spread 0). Each also probes the route and the kernel's tile check (dw 7).
    for (int qlen : {1, 2})
        for (int lse = 0; lse < 2; ++lse)
            for (int causal = 0; causal < 2; ++causal) {
                if (quick && (lse || causal)) continue;
                Spec s;
                s.heads = 16;
                s.qlen = qlen;
                s.batch = 40;
                s.kv_len = 2000;
                // (pages 4 and 1: the *_fused kernel's cp.async loader issue_tile_cp8, MLA_WG_CP8 at
                // pages below 8 since session 36; TMA from MLA_KV_TMA_MIN_PAGE = 8)
                s.page_size = qlen == 1 ? (causal && !lse ? 4 : (lse && !causal ? 1 : 64)) : 16;
                s.lse = lse;
                s.causal = causal;
                s.block_table = lse && !causal;
                if (lse && causal) s.out_dtype = MLA_DTYPE_FP32;
                s.fused_reduce = true;
                s.seed = 4100 + 4 * qlen + 2 * lse + causal;
                report(s, run_case(ctx, s, -1, /*need_split=*/true, /*need_whole_tiles=*/true, /*expect_fused=*/true),
                       "fused reduction ");
            }
    // Round-robin context parallel (cprr rows, causal only): rank r of W's shard of a whole
    // problem, against the CPU reference of the shard. Every (dtype pair, M, lse) cprr row, with
    // MTP where the tile allows it, global lengths below W (ranks with no key) and splits.
    std::set<std::tuple<int, int, int>> covered_cp;  // (dtype pair, M, lse)
    {
        // (heads, qlen): M = 16: (8, 2); M = 32: (8, 4), (16, 2); M = 64: (64, 3), (128, 2), (16, 4)
        const int cp_shapes[][2] = {{8, 2}, {8, 4}, {64, 3}, {16, 2}, {128, 2}, {16, 4}};
        const int cp_lens[4] = {3, 140, 2100, 4000};
        int ci = 0;
        for (int d = 0; d < 3; ++d)
            for (int si = 0; si < 6; ++si)
                for (int lse = 0; lse < 2; ++lse) {
                    const int* sh = cp_shapes[si];
                    ++ci;
                    if (quick && si >= 3) continue;  // one shape per M
                    Spec s;
                    s.q_dtype = dts[d][0];
                    s.kv_dtype = dts[d][1];
                    s.heads = sh[0];
                    s.qlen = sh[1];
                    s.causal = true;
                    s.lse = lse;
                    s.batch = 1 + int(rng() % 5);
                    s.kv_len = cp_lens[ci % 4];
                    s.varlen = rng() % 2;
                    s.page_size = page_sizes[rng() % 3];
                    s.ragged_q = s.qlen > 1 && rng() % 2;
                    s.zero_kv_frac = rng() % 3 == 0 ? 0.25 : 0;
                    s.block_table = rng() % 4 == 0;
                    s.seed = 5000 + ci;
                    const int W = 2 + ci % 3, r = int(rng() % uint64_t(W));
                    const Problem shard = cp_shard(make_problem(s), W, r);
                    const CaseResult res = run_problem(ctx, shard);
                    char tag[48];
                    std::snprintf(tag, sizeof tag, "cprr W=%d rank=%d ", W, r);
                    report(s, res, tag);
                    if (res.ok) covered_cp.insert({d, row_tile(s), lse});
                }
    }
    // A listed case's spec: dtype pair d, shape, page size; split cases (the plan must split a
    // tile) have every request at kv_len, the others varied lengths and, with MTP, ragged qo.
    auto listed_spec = [&](int d, int heads, int qlen, int batch, int kv_len, int ps, bool split) {
        Spec s;
        s.q_dtype = dts[d][0];
        s.kv_dtype = dts[d][1];
        s.heads = heads;
        s.qlen = qlen;
        s.batch = batch;
        s.kv_len = kv_len;
        s.varlen = !split;
        s.page_size = ps;
        s.ragged_q = qlen > 1 && !split;
        return s;
    };
    // bf16 Q far from [-1, 1] with fp8 KV on 16-row tiles: the register-A bf16-Q kernel stages Q
    // as f16 times 2^k, k from the work's max |Q| (decode_ra.cuh), and scales the scores back.
    // k > 0 (small Q), k < 0 (max |Q| >= 2^15, which f16 could not hold unscaled; up to bf16's
    // largest value), MTP rows, a split plan; each case must route to that kernel.
    {
        struct QM {
            float mult;
            int heads, qlen;
            bool split;
            float elem0 = 0;  // Spec::q_elem0
        };
        const QM qms[] = {
            {0x1p-40f, 16, 1, false}, {0x1p-9f, 8, 2, false}, {300.f, 16, 1, false},
            {0x1p18f, 16, 1, false},  {3.0e4f, 8, 2, true},   {0x1p20f, 4, 4, true},
            // element 0 of every row at bf16's largest value (3.39e38, above the 3e38 bound the
            // staging had until session 41): k = -113, the scores ~1e37 (finite), the rest of Q
            // below f16's range after the scale, so every row attends to the keys of the largest
            // element 0 of K, tied alike in the kernel and the reference
            {1.f, 16, 1, false, 0x1.fep127f},
        };
        int qi = 0;
        for (const QM& x : qms) {
            Spec s = listed_spec(1, x.heads, x.qlen, 3, 900, 64, x.split);
            s.q_mult = x.mult;
            s.q_elem0 = x.elem0;
            s.lse = true;
            s.seed = 6000 + qi++;
            char tag[48];
            std::snprintf(tag, sizeof tag, x.elem0 != 0 ? "q[0] = %g " : "q x %g ",
                          double(x.elem0 != 0 ? x.elem0 : x.mult));
            const std::string kn = sm90_kernel_of(s);
            CaseResult r;
            if (kn != "mla_decode_ra_bf16_fp8_m16") {
                r.ok = false;
                r.msg = "routed to '" + kn + "', not mla_decode_ra_bf16_fp8_m16";
            } else {
                r = run_case(ctx, s, -1, x.split);
            }
            report(s, r, tag);
        }
    }
    // fp32 out (mla_decode_args.out_dtype = MLA_DTYPE_FP32, what context-parallel ranks hand to
    // the merge): every dtype pair and row-tile family, a plan with split tiles (the reducer
    // writes fp32), 128 heads (folded, split), a round-robin shard; all in --quick too.
    int n_fp32 = 0, failed_fp32 = 0;
    {
        struct F {
            int d, heads, qlen, batch, kv_len, ps;
            bool causal, lse, block_table, split;
            int W, rank;  // W > 1: rank's round-robin shard
        };
        const F fs[] = {
            {0, 16, 1, 3, 700, 64, true, true, false, false, 1, 0},    // bf16/bf16 M=16 (wg)
            {1, 32, 1, 4, 140, 16, false, true, true, false, 1, 0},    // bf16/fp8 M=32 (wg)
            {2, 16, 4, 3, 2100, 1, true, false, false, false, 1, 0},   // fp8/fp8 M=64 (qm), MTP
            {0, 16, 2, 2, 4000, 64, true, true, false, true, 1, 0},    // split tiles: the reducer
            {1, 128, 1, 2, 6000, 16, true, true, false, true, 1, 0},   // 128 heads, split
            {2, 64, 3, 3, 2100, 16, true, true, true, false, 2, 1},    // a cprr shard, qm
        };
        int fi = 0;
        for (const F& f : fs) {
            Spec s = listed_spec(f.d, f.heads, f.qlen, f.batch, f.kv_len, f.ps, f.split);
            s.causal = f.causal;
            s.lse = f.lse;
            s.block_table = f.block_table;
            s.zero_kv_frac = fi == 1 ? 0.25 : 0;
            s.out_dtype = MLA_DTYPE_FP32;
            s.seed = 7000 + fi++;
            CaseResult r;
            char tag[48] = "fp32-out ";
            if (f.W > 1) {
                r = run_problem(ctx, cp_shard(make_problem(s), f.W, f.rank), -1, f.split);
                std::snprintf(tag, sizeof tag, "fp32-out cprr W=%d rank=%d ", f.W, f.rank);
            } else {
                r = run_case(ctx, s, -1, f.split);
            }
            report(s, r, tag);
            ++n_fp32;
            if (!r.ok) ++failed_fp32;
        }
    }
    // head_group_major plans (the twin layout the tools use on sm_90a for folded heads): 128 and
    // 96 heads, every dtype pair, MTP, ragged lengths, split tiles, both page-table forms
    {
        struct G {
            int d, heads, qlen, batch, kv_len, ps;
            bool block_table, split;
        };
        const G gs[] = {
            {0, 128, 1, 5, 3000, 64, false, false}, {1, 128, 2, 3, 2100, 16, true, false},
            {2, 128, 3, 4, 900, 1, false, false},   {0, 128, 1, 2, 6000, 64, false, true},
            {2, 96, 2, 3, 1500, 64, true, true},
        };
        int gi = 0;
        for (const G& g : gs) {
            Spec s = listed_spec(g.d, g.heads, g.qlen, g.batch, g.kv_len, g.ps, g.split);
            s.block_table = g.block_table;
            s.head_group_major = true;
            s.seed = 7100 + gi++;
            report(s, run_case(ctx, s, -1, g.split), "group-major ");
        }
        // uniform MTP: qo-tile sections (64 heads x 2 tiles; 128 heads x 2 groups x 3 tiles)
        for (const int h : {64, 128}) {
            Spec s = listed_spec(h == 64 ? 0 : 2, h, h == 64 ? 2 : 3, 5, 2500, 16, false);
            s.ragged_q = false;
            s.head_group_major = true;
            s.seed = 7200 + h;
            report(s, run_case(ctx, s), "group-major qo-tile sections ");
        }
    }
    // no_split_tiles (mla_decode_args): the tools pass 1 wherever the host plan split no tile, so
    // every case above whose plan split none ran without the reducer. These run libmla's default
    // (0: the reducer after the decode, finding nothing to reduce) on such plans: 8 fixed requests
    // of 300 tokens planned over 8 clusters (whole tiles, `mla plan --clusters 8`) for the 16-row
    // bf16, 32-row, qm bf16, register-A and qm fp8 kernels; then 1 forced on plans that split (11 requests of
    // 2000 tokens over 8 clusters: 4 split; the kernel rejects the split works: flag bit 4, the
    // other requests still right). Small, for the CPU reference's time.
    {
        // fixed lengths, page 64, lse, planned over 8 clusters
        const auto on8 = [](int heads, int batch, int kv_len) {
            Spec s;
            s.heads = heads;
            s.batch = batch;
            s.kv_len = kv_len;
            s.num_clusters = 8;
            s.varlen = false;
            s.page_size = 64;
            s.lse = true;
            return s;
        };
        const int ds[][3] = {{0, 16, 1}, {0, 16, 2}, {0, 64, 1}, {1, 16, 1}, {2, 128, 1}};  // (dtype pair, heads, qlen)
        for (const auto& d : ds) {
            if (quick && d[1] != 16) continue;
            Spec s = on8(d[1], 8, 300);
            s.q_dtype = dts[d[0]][0];
            s.kv_dtype = dts[d[0]][1];
            s.qlen = d[2];
            s.always_reduce = true;
            s.seed = 7300 + d[0] * 1000 + d[1] + d[2];
            report(s, run_case(ctx, s), "reducer on an unsplit plan ");
        }
        for (const int h : {16, 64}) {
            Spec s = on8(h, 11, 2000);
            s.seed = 7400 + h;
            report(s, run_forced_unsplit(ctx, s), "no_split_tiles forced on a split plan ");
        }
    }
    // a page id outside the cache: never read, flagged (TMA at page 16; the cp.async loaders at
    // page 1, the 16-row one issue_tile_cp8)
    for (const int h : {16, 64})
        for (const int ps : {16, 1}) {
            Spec s;
            s.heads = h;
            s.batch = 3;
            s.kv_len = 300;
            s.page_size = ps;
            const CaseResult r = run_case(ctx, s, 5);
            report(s, r, "bad-page ");
        }
    int missing = 0;
    for (int d = 0; d < 3; ++d)
        for (int m : {16, 32, 64})
            for (int c = 0; c < 2; ++c)
                for (int l = 0; l < 2; ++l)
                    if (!covered.count({d, m, c, l})) {
                        ++missing;
                        std::printf("NOT COVERED (or failed): %s/%s M=%d causal=%d lse=%d\n",
                                    mla_dtype_string(dts[d][0]), mla_dtype_string(dts[d][1]), m, c, l);
                    }
    for (int d = 0; d < 3; ++d)
        for (int m : {16, 32, 64})
            for (int l = 0; l < 2; ++l)
                if (!covered_cp.count({d, m, l})) {
                    ++missing;
                    std::printf("NOT COVERED (or failed): %s/%s M=%d causal=1 lse=%d cprr=1\n",
                                mla_dtype_string(dts[d][0]), mla_dtype_string(dts[d][1]), m, l);
                }
    std::printf("%d cases (%d with fp32 out), %d failed (%d with fp32 out), %d of 54 table rows not covered\n",
                n, n_fp32, failed, failed_fp32, missing);
    mla_context_destroy(ctx);
    return failed || missing ? 1 : 0;
}
