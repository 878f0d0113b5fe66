// gpu_graph_check.cpp - issue 4's CUDA graph acceptance (meson test `gpu_graph`): the device
// planner, and the planner followed by mla_decode_fwd, captured once in a CUDA graph, replayed with
// NEW lengths written into the same device indptr buffers (cuMemcpyHtoD outside the graph) before
// each replay. After every replay the six plan buffers must equal the host planner's for those
// lengths byte for byte, and the decode output the CPU reference (mla_decode_reference, FlashMLA's
// tolerances as tests/gpu). Then the time of plan + decode for b=128, s_k=4096, 16 heads bf16,
// page 64: eager launches vs graph replays (issue 8 wants them equal).
// The driver (streams, capture, graphs, copies) comes from dlopen("libcuda.so.1") (gpu_driver.h);
// libmla uses the device's primary context, made current here too. Exit 77 without a device.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "gpu_context.h"
#include "../../tools/mla/decode_problem.h"
#include "gpu_driver.h"
#include "host_plan.h"
#include "mla_c_api.h"

using namespace mla_tool;
using gpu_test::CUdeviceptr;

namespace {

gpu_test::Driver drv;
mla_context* g_ctx = nullptr;
constexpr unsigned char kFill = 0x5A;

#define REQ(cond, ...)                                        \
    do {                                                      \
        if (!(cond)) {                                        \
            std::fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
            std::fprintf(stderr, __VA_ARGS__);                \
            std::fprintf(stderr, "\n");                       \
            return false;                                     \
        }                                                     \
    } while (0)
#define MLA_OK(call) REQ((call) == MLA_SUCCESS, "%s: %s", #call, mla_last_error())

void* dalloc(std::vector<void*>& keep, size_t bytes) {
    void* d = nullptr;
    if (mla_device_malloc(g_ctx, &d, bytes < 256 ? 256 : bytes) != MLA_SUCCESS) return nullptr;
    keep.push_back(d);
    return d;
}
bool htod(void* dst, const void* src, size_t bytes) {
    return bytes == 0 ||
           drv.check(drv.cuMemcpyHtoD(CUdeviceptr(reinterpret_cast<uintptr_t>(dst)), src, bytes),
                     "cuMemcpyHtoD");
}

// Device plan buffers (sized by mla_metadata_info) and their host twins.
struct PlanBufs {
    mla_metadata_sizes z{};
    size_t bytes[6] = {};
    void* d[6] = {};
    std::vector<unsigned char> host[6];
    mla_metadata_buffers dev{}, hb{};
    bool make(std::vector<void*>& keep, const mla_metadata_params& prm) {
        z.struct_size = sizeof z;
        if (mla_metadata_info(&prm, &z) != MLA_SUCCESS) return false;
        int64_t rows[kPlanBuffers];
        plan_rows(z, rows);
        void* hp[kPlanBuffers];
        for (int i = 0; i < kPlanBuffers; ++i) {
            bytes[i] = rows[i] > 0 ? size_t(rows[i]) * kPlanRowBytes[i] : 4;
            d[i] = dalloc(keep, bytes[i]);
            if (!d[i]) return false;
            host[i].assign(bytes[i], kFill);
            hp[i] = host[i].data();
        }
        dev = plan_buffers_view(d, rows);
        hb = plan_buffers_view(hp, rows);
        return true;
    }
    // Resets both sides to the fill pattern (outside any graph).
    bool reset() {
        for (int i = 0; i < 6; ++i) {
            std::fill(host[i].begin(), host[i].end(), kFill);
            if (!htod(d[i], host[i].data(), bytes[i])) return false;
        }
        return true;
    }
    // Host plan for these lengths, then byte comparison with the device buffers.
    bool compare(const mla_metadata_params& prm, const int32_t* qo, const int32_t* kv,
                 const int32_t* last, const char* what) {
        if (mla_plan_metadata(&prm, qo, kv, last, &hb, d[1], d[2], nullptr) != MLA_SUCCESS) {
            std::fprintf(stderr, "FAIL %s: host plan: %s\n", what, mla_last_error());
            return false;
        }
        bool same = true;
        for (int i = 0; i < 6; ++i) {
            std::vector<unsigned char> back(bytes[i]);
            if (mla_memcpy_dtoh(g_ctx, back.data(), d[i], bytes[i], nullptr) != MLA_SUCCESS) return false;
            if (back != host[i]) {
                size_t at = 0;
                while (back[at] == host[i][at]) ++at;
                std::fprintf(stderr, "FAIL %s: %s differs at int32 %zu\n", what, kPlanBufferNames[i], at / 4);
                same = false;
            }
        }
        return same;
    }
};

struct Graph {
    gpu_test::CUgraph g = nullptr;
    gpu_test::CUgraphExec e = nullptr;
    ~Graph() {
        if (e) drv.cuGraphExecDestroy(e);
        if (g) drv.cuGraphDestroy(g);
    }
};

// Random lengths for B requests: KV tokens in [0, 2 kv] (a quarter zero), qo in [0, L] (ragged)
// or L; pages and last-page lengths from the tokens.
void random_lengths(std::mt19937& rng, int B, int L, int ps, int kv, bool ragged,
                    std::vector<int32_t>& qo, std::vector<int32_t>& kvp, std::vector<int32_t>& last) {
    qo.assign(B + 1, 0);
    kvp.assign(B + 1, 0);
    last.assign(B, 1);
    for (int b = 0; b < B; ++b) {
        const int n = rng() % 4 == 0 ? 0 : int(rng() % (2 * kv + 1));
        const int pages = (n + ps - 1) / ps;
        qo[b + 1] = qo[b] + (ragged ? int(rng() % (L + 1)) : L);
        kvp[b + 1] = kvp[b] + pages;
        last[b] = pages ? n - (pages - 1) * ps : 1 + int(rng() % ps);
    }
}

// Part 1: the planner alone in a graph, replayed with new lengths.
bool plan_only(int heads, int L, int ps, int B, int kv, bool ragged, int replays) {
    char what[160];
    std::snprintf(what, sizeof what, "plan graph (B %d, %d heads, qlen %d, page %d, kv ~%d%s)", B,
                  heads, L, ps, kv, ragged ? ", ragged qo" : "");
    std::vector<void*> keep;
    struct Free {
        std::vector<void*>& k;
        ~Free() {
            for (void* p : k) mla_device_free(g_ctx, p);
        }
    } free_all{keep};
    mla_metadata_params prm = MLA_METADATA_PARAMS_INIT;
    prm.arch = mla_context_arch(g_ctx);
    prm.batch_size = B;
    prm.max_seqlen_qo = L;
    prm.num_heads = heads;
    prm.page_size = ps;
    PlanBufs pb;
    REQ(pb.make(keep, prm), "%s: buffers: %s", what, mla_last_error());
    int32_t* dqo = static_cast<int32_t*>(dalloc(keep, (B + 1) * 4));
    int32_t* dkv = static_cast<int32_t*>(dalloc(keep, (B + 1) * 4));
    int32_t* dlast = static_cast<int32_t*>(dalloc(keep, B * 4 + 4));
    REQ(dqo && dkv && dlast, "%s: allocation", what);
    std::mt19937 rng(1000 + heads * 7 + L * 3 + ps);
    std::vector<int32_t> qo, kvp, last;
    random_lengths(rng, B, L, ps, kv, ragged, qo, kvp, last);
    REQ(htod(dqo, qo.data(), qo.size() * 4) && htod(dkv, kvp.data(), kvp.size() * 4) &&
            htod(dlast, last.data(), last.size() * 4), "%s: upload", what);
    gpu_test::CUstream st = nullptr;
    REQ(drv.check(drv.cuStreamCreate(&st, gpu_test::kStreamNonBlocking), "cuStreamCreate"), "%s", what);
    struct SFree {
        gpu_test::CUstream s;
        ~SFree() { drv.cuStreamDestroy(s); }
    } sfree{st};
    // Eager once (loads the module: nothing to load during capture), then capture.
    MLA_OK(mla_plan_metadata_device(g_ctx, &prm, dqo, dkv, dlast, &pb.dev, st));
    REQ(drv.check(drv.cuStreamSynchronize(st), "sync"), "%s", what);
    Graph gr;
    REQ(drv.check(drv.cuStreamBeginCapture(st, gpu_test::kCaptureModeThreadLocal), "capture"), "%s", what);
    const mla_status cs = mla_plan_metadata_device(g_ctx, &prm, dqo, dkv, dlast, &pb.dev, st);
    REQ(drv.check(drv.cuStreamEndCapture(st, &gr.g), "cuStreamEndCapture"), "%s", what);
    REQ(cs == MLA_SUCCESS, "%s: captured plan: %s", what, mla_last_error());
    REQ(drv.check(drv.cuGraphInstantiateWithFlags(&gr.e, gr.g, 0), "instantiate"), "%s", what);
    for (int r = 0; r < replays; ++r) {
        random_lengths(rng, B, L, ps, kv, ragged, qo, kvp, last);
        REQ(pb.reset(), "%s: reset", what);
        REQ(htod(dqo, qo.data(), qo.size() * 4) && htod(dkv, kvp.data(), kvp.size() * 4) &&
                htod(dlast, last.data(), last.size() * 4), "%s: upload", what);
        REQ(drv.check(drv.cuGraphLaunch(gr.e, st), "cuGraphLaunch") &&
                drv.check(drv.cuStreamSynchronize(st), "sync"), "%s", what);
        char w2[200];
        std::snprintf(w2, sizeof w2, "%s replay %d", what, r);
        if (!pb.compare(prm, qo.data(), kvp.data(), last.data(), w2)) return false;
    }
    std::printf("ok   %s: %d replays with new lengths byte-identical to the host planner\n", what,
                replays);
    return true;
}

// Device arrays of a decode problem with room for `cap_pages` pages; args point at them.
struct DecodeBufs {
    std::vector<void*> keep;
    mla_decode_args a = MLA_DECODE_ARGS_INIT;
    mla_metadata_params mp = MLA_METADATA_PARAMS_INIT;
    PlanBufs pb;
    int cap_pages = 0;
    ~DecodeBufs() {
        for (void* p : keep) mla_device_free(g_ctx, p);
    }
    bool make(const Spec& s, int cap) {
        cap_pages = cap;
        const int B = s.batch, H = s.heads, total_q = B * s.qlen;
        mp = MLA_METADATA_PARAMS_INIT;
        mp.arch = mla_context_arch(g_ctx);
        mp.num_clusters = mla_context_num_cus(g_ctx);
        mp.batch_size = B;
        mp.max_seqlen_qo = s.qlen;
        mp.num_heads = H;
        mp.q_dtype = s.q_dtype;
        mp.kv_dtype = s.kv_dtype;
        mp.page_size = s.page_size;
        mp.causal = s.causal;
        if (!pb.make(keep, mp)) return false;
        a = MLA_DECODE_ARGS_INIT;
        a.q_dtype = s.q_dtype;
        a.kv_dtype = s.kv_dtype;
        a.batch_size = B;
        a.num_heads = H;
        a.max_seqlen_q = s.qlen;
        a.total_q = total_q;
        a.page_size = s.page_size;
        a.num_pages = cap;
        a.causal = s.causal;
        a.softmax_scale = s.softmax_scale;
        a.q_scale = static_cast<float*>(dalloc(keep, 4));
        a.kv_scale = static_cast<float*>(dalloc(keep, 4));
        const float one = 1.0f;
        if (!a.q_scale || !a.kv_scale || !htod(const_cast<float*>(a.q_scale), &one, 4) ||
            !htod(const_cast<float*>(a.kv_scale), &one, 4))
            return false;
        a.q = dalloc(keep, size_t(total_q) * H * 576 * 2);
        a.kv_cache = dalloc(keep, size_t(cap) * s.page_size * 576 * 2);
        a.qo_indptr = static_cast<int32_t*>(dalloc(keep, (B + 1) * 4));
        a.kv_indptr = static_cast<int32_t*>(dalloc(keep, (B + 1) * 4));
        a.kv_last_page_lens = static_cast<int32_t*>(dalloc(keep, B * 4));
        a.kv_page_indices = static_cast<int32_t*>(dalloc(keep, size_t(cap) * 4));
        a.num_page_indices = cap;
        a.out = dalloc(keep, size_t(total_q) * H * 512 * 2);
        a.lse = static_cast<float*>(dalloc(keep, size_t(total_q) * H * 4));
        a.plan = &pb.dev;
        a.plan_params = &mp;
        a.workspace = dalloc(keep, size_t(pb.z.workspace_bytes));
        a.workspace_bytes = size_t(pb.z.workspace_bytes);
        a.error_flag = static_cast<int32_t*>(dalloc(keep, 4));
        if (s.fused_reduce) {  // zeroed once here; every replay must leave them at 0
            const int64_t tiles = std::max<int64_t>(pb.z.reduce_indptr_len - 1, 1);
            a.tile_counters = static_cast<int32_t*>(dalloc(keep, size_t(tiles) * 4));
            a.tile_counters_len = tiles;
            if (!a.tile_counters || mla_memset_d8(g_ctx, a.tile_counters, 0, size_t(tiles) * 4, nullptr)) return false;
        }
        return a.q && a.kv_cache && a.qo_indptr && a.kv_indptr && a.kv_last_page_lens &&
               a.kv_page_indices && a.out && a.lse && a.workspace && a.error_flag;
    }
    // Writes problem p (its pages fit in cap_pages) into the buffers; poisons out / lse.
    bool upload(const Problem& p, bool kv_too = true) {
        std::vector<int32_t> idx(size_t(cap_pages), 0);
        std::copy(p.kv_page_indices.begin(), p.kv_page_indices.end(), idx.begin());
        const size_t H = p.spec.heads;
        std::vector<unsigned char> poison(size_t(p.total_q) * H * 512 * 2, 0xff);
        const int32_t zero = 0;
        return htod(const_cast<void*>(a.q), p.q.data(), p.q.size()) &&
               (!kv_too || htod(const_cast<void*>(a.kv_cache), p.kv.data(), p.kv.size())) &&
               htod(const_cast<int32_t*>(a.qo_indptr), p.qo_indptr.data(), p.qo_indptr.size() * 4) &&
               htod(const_cast<int32_t*>(a.kv_indptr), p.kv_indptr.data(), p.kv_indptr.size() * 4) &&
               htod(const_cast<int32_t*>(a.kv_last_page_lens), p.kv_last_page_lens.data(),
                    p.kv_last_page_lens.size() * 4) &&
               htod(const_cast<int32_t*>(a.kv_page_indices), idx.data(), idx.size() * 4) &&
               htod(a.out, poison.data(), poison.size()) &&
               htod(a.lse, poison.data(), size_t(p.total_q) * H * 4) && htod(a.error_flag, &zero, 4);
    }
    mla_status enqueue(gpu_test::CUstream st) {
        const mla_status s1 = mla_plan_metadata_device(g_ctx, &mp, a.qo_indptr, a.kv_indptr,
                                                       a.kv_last_page_lens, &pb.dev, st);
        return s1 != MLA_SUCCESS ? s1 : mla_decode_fwd(g_ctx, &a, st);
    }
};

// Part 2: plan + decode in one graph, replayed with new lengths; output vs the CPU reference.
bool plan_and_decode(int replays) {
    Spec s;
    s.batch = 24;
    s.heads = 16;
    s.qlen = 1;
    s.kv_len = 500;
    s.page_size = 16;
    s.varlen = true;
    s.zero_kv_frac = 0.2;
    s.causal = true;
    s.fused_reduce = true;  // the *_fused kernel: its tile counters must survive graph replays
    const int cap = s.batch * ((2 * s.kv_len + s.page_size - 1) / s.page_size) + s.extra_pages;
    DecodeBufs db;
    REQ(db.make(s, cap), "decode graph: buffers: %s", mla_last_error());
    s.seed = 77;
    Problem p = make_problem(s);
    REQ(db.upload(p), "decode graph: upload");
    gpu_test::CUstream st = nullptr;
    REQ(drv.check(drv.cuStreamCreate(&st, gpu_test::kStreamNonBlocking), "cuStreamCreate"), "stream");
    struct SFree {
        gpu_test::CUstream s;
        ~SFree() { drv.cuStreamDestroy(s); }
    } sfree{st};
    MLA_OK(db.enqueue(st));  // eager once: modules loaded before the capture
    REQ(drv.check(drv.cuStreamSynchronize(st), "sync"), "eager");
    Graph gr;
    REQ(drv.check(drv.cuStreamBeginCapture(st, gpu_test::kCaptureModeThreadLocal), "capture"), "decode graph");
    const mla_status cs = db.enqueue(st);
    REQ(drv.check(drv.cuStreamEndCapture(st, &gr.g), "cuStreamEndCapture"), "decode graph");
    REQ(cs == MLA_SUCCESS, "captured plan + decode: %s", mla_last_error());
    REQ(drv.check(drv.cuGraphInstantiateWithFlags(&gr.e, gr.g, 0), "instantiate"), "decode graph");
    for (int r = 0; r < replays; ++r) {
        s.seed = 100 + r;
        s.zero_kv_frac = r % 2 ? 0.4 : 0.1;
        p = make_problem(s);
        REQ(p.kv_indptr[s.batch] + s.extra_pages <= cap, "problem larger than the buffers");
        REQ(db.pb.reset() && db.upload(p), "decode graph: upload replay %d", r);
        REQ(drv.check(drv.cuGraphLaunch(gr.e, st), "cuGraphLaunch") &&
                drv.check(drv.cuStreamSynchronize(st), "sync"), "decode replay %d", r);
        char what[120];
        int zeros = 0;
        for (int b = 0; b < s.batch; ++b) zeros += p.kv_lens[b] == 0;
        std::snprintf(what, sizeof what, "decode graph replay %d (%d of %d requests with KV 0)", r,
                      zeros, s.batch);
        if (!db.pb.compare(db.mp, p.qo_indptr.data(), p.kv_indptr.data(), p.kv_last_page_lens.data(), what))
            return false;
        const size_t H = s.heads, n = size_t(p.total_q) * H * 512;
        std::vector<uint16_t> ob(n);
        std::vector<float> out(n), lse(size_t(p.total_q) * H), rout, rlse;
        int32_t flag = -1;
        MLA_OK(mla_memcpy_dtoh(g_ctx, ob.data(), db.a.out, n * 2, nullptr));
        MLA_OK(mla_memcpy_dtoh(g_ctx, lse.data(), db.a.lse, lse.size() * 4, nullptr));
        MLA_OK(mla_memcpy_dtoh(g_ctx, &flag, db.a.error_flag, 4, nullptr));
        REQ(flag == 0, "%s: device error flag %d", what, flag);
        if (db.a.tile_counters) {  // the fused reduction leaves every tile counter at 0
            std::vector<int32_t> cnt(size_t(db.a.tile_counters_len), -1);
            MLA_OK(mla_memcpy_dtoh(g_ctx, cnt.data(), db.a.tile_counters, cnt.size() * 4, nullptr));
            for (size_t i = 0; i < cnt.size(); ++i) REQ(cnt[i] == 0, "%s: tile counter %zu is %d", what, i, cnt[i]);
        }
        for (size_t i = 0; i < n; ++i) out[i] = bf16_to_f32(ob[i]);
        std::vector<int> reqs(s.batch), rows(p.total_q);
        for (int b = 0; b < s.batch; ++b) reqs[b] = b;
        for (int t = 0; t < p.total_q; ++t) rows[t] = t;
        MLA_OK(reference_subset(p, reqs, rout, rlse));
        CompareResult cr;
        compare_rows(p, rows, out, lse, rout, rlse, Tolerance{}, cr);
        REQ(cr.ok(), "%s: %ld bad out, %ld bad lse, %ld non-finite; first: %s", what, cr.bad_out,
            cr.bad_lse, cr.nonfinite_out, cr.first_bad.c_str());
        std::printf("ok   %s: plan byte-identical, %ld values within tolerance (max abs %.2e)\n",
                    what, cr.checked, cr.max_abs);
    }
    return true;
}

// Part 3: eager vs graph time of plan + decode (b=128, s_k=4096, 16 heads bf16, page 64).
bool timing() {
    Spec s;
    s.batch = 128;
    s.heads = 16;
    s.qlen = 1;
    s.kv_len = 4096;
    s.varlen = false;
    s.page_size = 64;
    s.fast_fill = true;
    s.seed = 5;
    const Problem p = make_problem(s);
    DecodeBufs db;
    REQ(db.make(s, p.num_pages), "timing: buffers: %s", mla_last_error());
    REQ(db.upload(p), "timing: upload");
    gpu_test::CUstream st = nullptr;
    REQ(drv.check(drv.cuStreamCreate(&st, gpu_test::kStreamNonBlocking), "cuStreamCreate"), "stream");
    struct SFree {
        gpu_test::CUstream s;
        ~SFree() { drv.cuStreamDestroy(s); }
    } sfree{st};
    const int iters = 100;
    for (int i = 0; i < 5; ++i) MLA_OK(db.enqueue(st));
    REQ(drv.check(drv.cuStreamSynchronize(st), "sync"), "warm-up");
    auto time_eager = [&](bool plan, float* ms) {
        mla_timer* t = nullptr;
        mla_timer_start(g_ctx, st, &t);
        for (int i = 0; i < iters; ++i) {
            if (plan) db.enqueue(st);
            else mla_decode_fwd(g_ctx, &db.a, st);
        }
        return mla_timer_stop_ms(g_ctx, t, ms);
    };
    float eager = 0, eager_dec = 0, one = 0, many = 0;
    MLA_OK(time_eager(true, &eager));
    MLA_OK(time_eager(false, &eager_dec));
    Graph g1, gn;  // one plan + decode per replay; `iters` of them in one graph
    REQ(drv.check(drv.cuStreamBeginCapture(st, gpu_test::kCaptureModeThreadLocal), "capture"), "timing");
    mla_status cs = db.enqueue(st);
    REQ(drv.check(drv.cuStreamEndCapture(st, &g1.g), "end") && cs == MLA_SUCCESS, "capture 1");
    REQ(drv.check(drv.cuStreamBeginCapture(st, gpu_test::kCaptureModeThreadLocal), "capture"), "timing");
    for (int i = 0; i < iters && cs == MLA_SUCCESS; ++i) cs = db.enqueue(st);
    REQ(drv.check(drv.cuStreamEndCapture(st, &gn.g), "end") && cs == MLA_SUCCESS, "capture n");
    REQ(drv.check(drv.cuGraphInstantiateWithFlags(&g1.e, g1.g, 0), "inst") &&
            drv.check(drv.cuGraphInstantiateWithFlags(&gn.e, gn.g, 0), "inst"), "timing");
    drv.cuGraphLaunch(g1.e, st);
    drv.cuGraphLaunch(gn.e, st);
    REQ(drv.check(drv.cuStreamSynchronize(st), "sync"), "graph warm-up");
    mla_timer* t = nullptr;
    mla_timer_start(g_ctx, st, &t);
    for (int i = 0; i < iters; ++i) drv.cuGraphLaunch(g1.e, st);
    MLA_OK(mla_timer_stop_ms(g_ctx, t, &one));
    mla_timer_start(g_ctx, st, &t);
    drv.cuGraphLaunch(gn.e, st);
    MLA_OK(mla_timer_stop_ms(g_ctx, t, &many));
    std::printf("time b=128 s_k=4096 16 heads bf16 page 64, per step (%d steps): eager plan+decode "
                "%.2f us, decode alone %.2f us; graph replay (1 step per graph) %.2f us, "
                "(%d steps in one graph) %.2f us\n",
                iters, 1000 * eager / iters, 1000 * eager_dec / iters, 1000 * one / iters, iters,
                1000 * many / iters);
    return true;
}

}  // namespace

int main() {
    if (const int rc = open_gpu_context("gpu_graph", /*need_sm90=*/true, &g_ctx)) return rc;
    if (!drv.load()) {
        std::fprintf(stderr, "gpu_graph: libcuda.so.1 unusable for streams / graphs\n");
        return 1;
    }
    int failed = 0;
    failed += !plan_only(16, 1, 1, 1536, 8000, false, 4);
    failed += !plan_only(128, 4, 1, 700, 30000, true, 4);
    failed += !plan_only(16, 2, 64, 300, 20000, true, 4);
    failed += !plan_only(64, 1, 16, 1, 100, false, 6);
    failed += !plan_and_decode(4);
    failed += !timing();
    std::printf("gpu_graph: %s\n", failed ? "FAILED" : "all checks passed");
    mla_context_destroy(g_ctx);
    return failed ? 1 : 0;
}
