// decode_problem.h - a whole MLA decode problem on the host and its run on the device through the
// public C API only (plan on the host with mla_plan_metadata, copy to the device, mla_decode_fwd),
// shared by `mla run`, `mla bench` (tools/mla/cmd_run.cpp, cmd_bench.cpp) and the GPU test
// program (tests/gpu/). Header-only, C++17.
//
// Data follow FlashMLA's test (anchors.md §1.4): q, kv ~ randn/10 clamped to [-1, 1]; pages
// randomly permuted; every KV slot past a request's length and every unused page filled with
// NaN, so an unmasked read poisons the output. fp8 values are e4m3fn codes of randn*4 with scales
// 1/40 (so q*q_scale ~ randn/10).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "../common/host_plan.h"
#include "mla_c_api.h"

namespace mla_tool {

// ---- number formats ----
inline uint16_t f32_to_bf16(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fc0;
    u += 0x7fffu + ((u >> 16) & 1u);
    return uint16_t(u >> 16);
}
inline float bf16_to_f32(uint16_t h) {
    uint32_t u = uint32_t(h) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}
inline float e4m3_to_f32(uint8_t c) {
    const int s = c >> 7, e = (c >> 3) & 15, m = c & 7;
    if (e == 15 && m == 7) return NAN;
    const float v = e == 0 ? std::ldexp(float(m), -9) : std::ldexp(1.0f + m / 8.0f, e - 7);
    return s ? -v : v;
}
// Nearest e4m3fn code (ties to even), saturating at +-448; NaN -> 0x7f, -0 -> 0. Exact, from the
// float's bits: the mantissa rounded to 3 bits half to even at bit 20 (normal codes), or the
// value in units of 2^-9 rounded half to even (subnormal codes, below 2^-6). Equal to the
// nearest-code search over the 127 codes that it replaced (tests/cp/test_tool_e4m3.cpp; 185 M
// floats compared once in session 19), and nearly branch-free on random data: `mla run --dtype
// fp8` builds a b = 1536 x 2048 problem in 20 s instead of 77 (a 90 s timeout cut session 19's
// fp8 b 1536 runs short).
inline uint8_t f32_to_e4m3(float f) {
    if (std::isnan(f)) return 0x7f;
    const uint8_t sign = f < 0 ? 0x80 : 0;
    uint32_t u;
    std::memcpy(&u, &f, 4);
    u &= 0x7fffffffu;
    if (u >= 0x43e00000u) return sign | 0x7e;  // |f| >= 448 (and inf): the largest code
    if (u < 0x3c800000u) {                     // |f| < 2^-6: m x 2^-9, m = 0..8 (8 is code 8, 2^-6)
        float a;
        std::memcpy(&a, &u, 4);
        return sign | uint8_t(std::nearbyint(a * 512.0f));  // the default rounding: half to even
    }
    u += 0x7ffffu + ((u >> 20) & 1);  // round the mantissa to 3 bits, half to even
    const uint32_t code = (((u >> 23) - 120) << 3) | ((u >> 20) & 7);  // exponent bias 127 -> 7
    return sign | uint8_t(code > 0x7e ? 0x7e : code);
}

// One step of the xorshift64 generator (13, 7, 17) behind the bulk test data.
inline uint64_t xorshift64(uint64_t& s) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
}

// Fast approximately normal numbers (Irwin-Hall of 4 uniforms, unit variance) for bulk data.
struct FastNormal {
    uint64_t s;
    explicit FastNormal(uint64_t seed) : s(seed * 0x9E3779B97F4A7C15ull + 1) {}
    float operator()() {
        float acc = 0;
        for (int i = 0; i < 4; ++i) acc += float(xorshift64(s) >> 40) * (1.0f / 16777216.0f);
        return (acc - 2.0f) * 1.7320508f;
    }
};

// DeepSeek-V3 softmax scale: 1/sqrt(qk_nope 128 + rope 64) * mscale^2, yarn mscale with factor 40,
// mscale_all_dim 1.0: mscale = 0.1 * 1.0 * ln(40) + 1.
inline float deepseek_v3_softmax_scale() {
    const double mscale = 0.1 * 1.0 * std::log(40.0) + 1.0;
    return float(mscale * mscale / std::sqrt(192.0));
}

struct Spec {
    int batch = 128;
    int heads = 16;
    int qlen = 1;             // max_seqlen_q (L)
    int kv_len = 4096;        // mean KV length
    bool varlen = true;       // lengths ~ normal(kv_len, kv_len / 2) clamped to [qlen, 2 kv_len]
    int page_size = 64;
    bool causal = true;
    mla_dtype q_dtype = MLA_DTYPE_BF16;
    mla_dtype kv_dtype = MLA_DTYPE_BF16;
    bool lse = true;
    bool ragged_q = false;    // qo lengths uniform in [0, L] (at least one request has L)
    double zero_kv_frac = 0;  // fraction of requests with KV length 0
    int long_first = 1;       // request 0's KV length is long_first x kv_len (one long request among
                              // short ones: its tile splits into many fragments)
    int extra_pages = 3;      // unused (NaN) pages in the cache
    bool block_table = false; // pass the page table as block_table [B, max pages]
    float softmax_scale = deepseek_v3_softmax_scale();
    uint64_t seed = 1;
    bool fast_fill = false;   // KV rows cut from a 64K-element random block at random offsets (benchmarks)
    float q_mult = 1;         // bf16 Q values (in [-1, 1]) times this: the magnitudes a kernel
                              // that rescales Q (the register-A bf16-Q kernel) must handle
    float q_elem0 = 0;        // nonzero: element 0 of every bf16 Q row is this value instead (e.g.
                              // bf16's largest, 0x1.fep127: a work's max |Q| above 3e38, the edge of
                              // the register-A bf16-Q staging's exponent; every row dominated alike)
    // mla_decode_args.out_dtype: MLA_DTYPE_BF16, or MLA_DTYPE_FP32 (out written as floats, as
    // context-parallel ranks do; DeviceRun::fetch copies them back unrounded)
    mla_dtype out_dtype = MLA_DTYPE_BF16;
    // mla_metadata_params.head_group_major (host plans): the tiles of a request that read the
    // same KV (its head groups, its qo tiles with uniform MTP) laid out as twin sections that run
    // at the same time (docs/planner.md)
    bool head_group_major = false;
    // mla_decode_args.tile_counters: pass zeroed counters, so that the kernels whose table rows
    // allow it reduce split tiles themselves (one launch per call); false (libmla's default, no
    // counters): the reducer kernel
    bool fused_reduce = false;
    // mla_decode_args.active_clusters: false (the tools' default) passes the host plan's
    // mla_plan_summary.active_clusters, so that no CTA is launched for a cluster without work;
    // true passes 0 (one CTA per cluster, libmla's default)
    bool all_clusters = false;
    // mla_decode_args.no_split_tiles: false (the tools' default) passes 1 where the host plan's
    // mla_plan_summary.num_split_tiles is 0, so that no reducer is launched after a plan that
    // split no tile; true passes 0 (the reducer whenever the plan's sizes allow splits, libmla's
    // default)
    bool always_reduce = false;
    // tests: pass no_split_tiles 1 whatever the plan (where a tile split, the kernel must reject
    // its split works and flag MLA_DECODE_ERR_PLAN)
    bool force_no_split = false;
    // the reference rounds exp(s - max) to e4m3 before P.V (mla_host_problem.fp8_p_quant: aiter's
    // fp8-Q semantics), for kernels built to do so (decode_qm8.cuh's MLA_QM8_P8)
    bool ref_p_fp8 = false;
    // mla_metadata_params.num_clusters: CUs / SMs the plan spreads over; 0 = the context's count
    // (the device's SMs on the GPU path, the arch's default on the CPU path)
    int num_clusters = 0;
    // mla_metadata_params.work_overhead_tokens: -1 = the arch's (sm_90a: 1024 for 64-row
    // tiles and 16-row fp8-KV tiles, else aiter's rule), 0 = aiter's rule
    int work_overhead_tokens = -1;
    // mla_metadata_params.split_tail_tokens: -1 = the arch's (sm_90a: 512 for 16-row and 256 for
    // 32-row bf16 tiles, else 0), 0 = none
    int split_tail_tokens = -1;
};

struct Problem {
    Spec spec;
    int total_q = 0, num_pages = 0, max_pages = 0;
    float q_scale = 1, kv_scale = 1;
    std::vector<uint8_t> q, kv;  // raw bytes, [total_q, H, 576] and [num_pages, ps, 576]
    std::vector<int32_t> qo_indptr, kv_indptr, kv_page_indices, kv_last_page_lens, kv_lens;
    std::vector<int32_t> block_table;  // [B, max_pages] (-1 past a request's pages)
    // Round-robin context parallel (cp_shard): this is rank cp_rank of cp_world's shard, the
    // page table and kv_lens are local, g_kv_indptr [B+1] the prefix sums of the global lengths.
    int cp_world = 1, cp_rank = 0;
    std::vector<int32_t> g_kv_indptr;
    size_t q_esize() const { return spec.q_dtype == MLA_DTYPE_BF16 ? 2 : 1; }
    size_t kv_esize() const { return spec.kv_dtype == MLA_DTYPE_BF16 ? 2 : 1; }
    size_t out_esize() const { return spec.out_dtype == MLA_DTYPE_FP32 ? 4 : 2; }
};

// The pages of p's requests (p.kv_indptr, p.max_pages set): num_pages = the pages they use plus
// `extra` unused ones, a shuffled assignment (kv_page_indices, CSR form) drawn from rng, and the
// same pages as block_table [B, max(1, max_pages)] (-1 past a request's pages).
inline void assign_pages(Problem& p, int extra, std::mt19937_64& rng) {
    const int B = int(p.kv_indptr.size()) - 1, used = p.kv_indptr[B];
    p.num_pages = used + extra;
    std::vector<int32_t> perm(p.num_pages);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    p.kv_page_indices.assign(perm.begin(), perm.begin() + used);
    const size_t stride = size_t(std::max(1, p.max_pages));
    p.block_table.assign(size_t(B) * stride, -1);
    for (int b = 0; b < B; ++b)
        for (int i = p.kv_indptr[b]; i < p.kv_indptr[b + 1]; ++i)
            p.block_table[size_t(b) * stride + (i - p.kv_indptr[b])] = p.kv_page_indices[i];
}

inline Problem make_problem(const Spec& s) {
    Problem p;
    p.spec = s;
    std::mt19937_64 rng(s.seed);
    std::normal_distribution<float> nd(0.f, 1.f);
    const int B = s.batch, L = s.qlen, ps = s.page_size;
    p.qo_indptr.assign(B + 1, 0);
    p.kv_indptr.assign(B + 1, 0);
    p.kv_last_page_lens.assign(B, 1);
    p.kv_lens.assign(B, 0);
    for (int b = 0; b < B; ++b) {
        int lq = L;
        if (s.ragged_q && b != 0) lq = int(rng() % uint64_t(L + 1));
        int n = s.kv_len;
        if (s.varlen) {
            const float x = s.kv_len + nd(rng) * s.kv_len / 2.0f;
            n = int(std::max<float>(float(L), std::min<float>(x, 2.0f * s.kv_len)));
        }
        if (s.zero_kv_frac > 0 && std::uniform_real_distribution<double>(0, 1)(rng) < s.zero_kv_frac)
            n = 0;
        if (b == 0 && s.long_first > 1) n = s.kv_len * s.long_first;
        p.kv_lens[b] = n;
        const int pages = (n + ps - 1) / ps;
        p.qo_indptr[b + 1] = p.qo_indptr[b] + lq;
        p.kv_indptr[b + 1] = p.kv_indptr[b] + pages;
        p.kv_last_page_lens[b] = pages ? n - (pages - 1) * ps : 1;
        p.max_pages = std::max(p.max_pages, pages);
    }
    p.total_q = p.qo_indptr[B];
    assign_pages(p, s.extra_pages, rng);

    const bool q8 = s.q_dtype != MLA_DTYPE_BF16, kv8 = s.kv_dtype != MLA_DTYPE_BF16;
    if (q8) p.q_scale = 1.0f / 40;
    if (kv8) p.kv_scale = 1.0f / 40;
    FastNormal fn(s.seed + 17);
    auto val = [&](bool f8) {
        float x = fn();
        if (f8) return float(f32_to_e4m3(x * 4.0f));  // code, stored below
        return std::max(-1.f, std::min(1.f, x / 10.f));
    };
    const size_t nq = size_t(p.total_q) * s.heads * 576;
    p.q.resize(nq * p.q_esize());
    for (size_t i = 0; i < nq; ++i) {
        if (q8) p.q[i] = uint8_t(val(true));
        else {
            const float x = val(false) * s.q_mult;
            const uint16_t h = f32_to_bf16(s.q_elem0 != 0 && i % 576 == 0 ? s.q_elem0 : x);
            std::memcpy(&p.q[2 * i], &h, 2);
        }
    }
    // KV: NaN everywhere, then real values in the slots each request owns.
    const size_t nkv = size_t(p.num_pages) * ps * 576;
    p.kv.resize(nkv * p.kv_esize());
    if (kv8) std::fill(p.kv.begin(), p.kv.end(), uint8_t(0x7f));
    else std::fill_n(reinterpret_cast<uint16_t*>(p.kv.data()), nkv, uint16_t(0x7fc0));
    if (s.fast_fill) {
        std::vector<uint8_t> block(65536 * p.kv_esize());
        for (size_t i = 0; i < 65536; ++i) {
            if (kv8) block[i] = uint8_t(val(true));
            else {
                const uint16_t h = f32_to_bf16(val(false));
                std::memcpy(&block[2 * i], &h, 2);
            }
        }
        // each token row copies the block from its own random element offset (xorshift, seeded):
        // up to 64961 distinct rows, so a row read from the wrong place shows in a check (a
        // wrapping offset, before session 19, cycled through a few hundred rows)
        const size_t es = p.kv_esize(), rowb = 576 * es, starts = (block.size() - rowb) / es + 1;
        uint64_t x = (s.seed + 1) * 0x9E3779B97F4A7C15ull;
        for (int b = 0; b < B; ++b)
            for (int j = 0; j < p.kv_lens[b]; ++j) {
                const size_t row = (size_t(p.kv_page_indices[p.kv_indptr[b] + j / ps]) * ps + j % ps) * rowb;
                std::memcpy(&p.kv[row], &block[size_t(xorshift64(x) % starts) * es], rowb);
            }
        return p;
    }
    for (int b = 0; b < B; ++b)
        for (int j = 0; j < p.kv_lens[b]; ++j) {
            const size_t row = (size_t(p.kv_page_indices[p.kv_indptr[b] + j / ps]) * ps + j % ps) * 576;
            for (int d = 0; d < 576; ++d) {
                if (kv8) p.kv[row + d] = uint8_t(val(true));
                else {
                    const uint16_t h = f32_to_bf16(val(false));
                    std::memcpy(&p.kv[2 * (row + d)], &h, 2);
                }
            }
        }
    return p;
}

// Rank r of W's round-robin shard of a whole problem (docs/context-parallel.md): the same q,
// and for each request b the tokens at global positions r, r + W, ... < kv_lens[b] (local
// token j = global position j * W + r) in a paged cache of its own (pages shuffled, NaN in every
// slot no request owns, spec.extra_pages unused pages), with g_kv_indptr holding the global
// lengths. Decoding it with cp_world_size W / cp_rank r gives the rank's partial out and lse.
inline Problem cp_shard(const Problem& whole, int W, int r) {
    Problem p;
    p.spec = whole.spec;
    p.total_q = whole.total_q;
    p.q_scale = whole.q_scale;
    p.kv_scale = whole.kv_scale;
    p.q = whole.q;
    p.qo_indptr = whole.qo_indptr;
    p.cp_world = W;
    p.cp_rank = r;
    const int B = whole.spec.batch, ps = whole.spec.page_size;
    p.g_kv_indptr.assign(B + 1, 0);
    p.kv_indptr.assign(B + 1, 0);
    p.kv_last_page_lens.assign(B, 1);
    p.kv_lens.assign(B, 0);
    for (int b = 0; b < B; ++b) {
        const int G = whole.kv_lens[b];
        const int n = G > r ? (G - r + W - 1) / W : 0;
        const int pages = (n + ps - 1) / ps;
        p.g_kv_indptr[b + 1] = p.g_kv_indptr[b] + G;
        p.kv_lens[b] = n;
        p.kv_indptr[b + 1] = p.kv_indptr[b] + pages;
        p.kv_last_page_lens[b] = pages ? n - (pages - 1) * ps : 1;
        p.max_pages = std::max(p.max_pages, pages);
    }
    std::mt19937_64 rng(whole.spec.seed * 1000 + uint64_t(W) * 10 + uint64_t(r));
    assign_pages(p, whole.spec.extra_pages, rng);
    const size_t rowb = 576 * whole.kv_esize();
    const size_t nkv = size_t(p.num_pages) * ps * 576;
    p.kv.resize(nkv * whole.kv_esize());
    if (whole.kv_esize() == 1) std::fill(p.kv.begin(), p.kv.end(), uint8_t(0x7f));
    else std::fill_n(reinterpret_cast<uint16_t*>(p.kv.data()), nkv, uint16_t(0x7fc0));
    for (int b = 0; b < B; ++b)
        for (int j = 0; j < p.kv_lens[b]; ++j) {
            const int g = j * W + r;
            const size_t src = size_t(whole.kv_page_indices[whole.kv_indptr[b] + g / ps]) * ps + g % ps;
            const size_t dst = size_t(p.kv_page_indices[p.kv_indptr[b] + j / ps]) * ps + j % ps;
            std::memcpy(&p.kv[dst * rowb], &whole.kv[src * rowb], rowb);
        }
    return p;
}

inline mla_metadata_params plan_params_of(const Problem& p, const char* arch, int num_clusters) {
    mla_metadata_params mp = MLA_METADATA_PARAMS_INIT;
    mp.arch = arch;
    mp.num_clusters = num_clusters;
    mp.batch_size = p.spec.batch;
    mp.max_seqlen_qo = p.spec.qlen;
    mp.num_heads = p.spec.heads;
    mp.num_heads_k = 1;
    mp.q_dtype = p.spec.q_dtype;
    mp.kv_dtype = p.spec.kv_dtype;
    mp.page_size = p.spec.page_size;
    mp.causal = p.spec.causal ? 1 : 0;
    mp.is_cp_round_robin = p.cp_world > 1 ? 1 : 0;
    mp.head_group_major = p.spec.head_group_major ? 1 : 0;
    mp.work_overhead_tokens = p.spec.work_overhead_tokens;
    mp.split_tail_tokens = p.spec.split_tail_tokens;
    return mp;
}

inline mla_host_problem host_problem_of(const Problem& p) {
    mla_host_problem hp = MLA_HOST_PROBLEM_INIT;
    hp.batch_size = p.spec.batch;
    hp.num_heads = p.spec.heads;
    hp.max_seqlen_q = p.spec.qlen;
    hp.page_size = p.spec.page_size;
    hp.num_pages = p.num_pages;
    hp.causal = p.spec.causal ? 1 : 0;
    hp.q_dtype = p.spec.q_dtype;
    hp.kv_dtype = p.spec.kv_dtype;
    hp.softmax_scale = p.spec.softmax_scale;
    hp.q_scale = p.q_scale;
    hp.kv_scale = p.kv_scale;
    hp.q = p.q.data();
    hp.q_stride_token = int64_t(p.spec.heads) * 576;
    hp.q_stride_head = 576;
    hp.kv_cache = p.kv.data();
    hp.qo_indptr = p.qo_indptr.data();
    hp.kv_indptr = p.kv_indptr.data();
    hp.kv_page_indices = p.kv_page_indices.data();
    hp.kv_last_page_lens = p.kv_last_page_lens.data();
    hp.fp8_p_quant = p.spec.ref_p_fp8 ? 1 : 0;  // libmla's shipped sm_90a kernels keep P in bf16 / f16 (docs/kernels.md)
    if (p.cp_world > 1) {
        hp.g_kv_indptr = p.g_kv_indptr.data();
        hp.cp_world_size = p.cp_world;
        hp.cp_rank = p.cp_rank;
    }
    return hp;
}

// Subproblem of requests `reqs` (their q rows copied; the KV cache shared) for a fast reference.
struct SubProblem {
    std::vector<uint8_t> q;
    std::vector<int32_t> qo_indptr, kv_indptr, kv_page_indices, kv_last_page_lens;
    std::vector<int32_t> g_kv_indptr;  // context parallel: the requests' global lengths
    std::vector<int> rows;  // original token row of each sub row
};
inline SubProblem sub_problem(const Problem& p, const std::vector<int>& reqs) {
    SubProblem s;
    const size_t rowb = size_t(p.spec.heads) * 576 * p.q_esize();
    s.qo_indptr.push_back(0);
    s.kv_indptr.push_back(0);
    s.g_kv_indptr.push_back(0);
    for (int b : reqs) {
        if (!p.g_kv_indptr.empty())
            s.g_kv_indptr.push_back(s.g_kv_indptr.back() + p.g_kv_indptr[b + 1] - p.g_kv_indptr[b]);
        for (int t = p.qo_indptr[b]; t < p.qo_indptr[b + 1]; ++t) {
            s.q.insert(s.q.end(), p.q.begin() + t * rowb, p.q.begin() + (t + 1) * rowb);
            s.rows.push_back(t);
        }
        s.qo_indptr.push_back(int(s.rows.size()));
        for (int i = p.kv_indptr[b]; i < p.kv_indptr[b + 1]; ++i) s.kv_page_indices.push_back(p.kv_page_indices[i]);
        s.kv_indptr.push_back(int(s.kv_page_indices.size()));
        s.kv_last_page_lens.push_back(p.kv_last_page_lens[b]);
    }
    return s;
}

// CPU reference (mla_decode_reference) of requests `reqs`, scattered into full-size arrays
// out [total_q, H, 512] / lse [total_q, H] (rows of other requests untouched).
inline mla_status reference_subset(const Problem& p, const std::vector<int>& reqs, std::vector<float>& out,
                                   std::vector<float>& lse) {
    const SubProblem s = sub_problem(p, reqs);
    mla_host_problem hp = host_problem_of(p);
    hp.batch_size = int(reqs.size());
    hp.q = s.q.data();
    hp.qo_indptr = s.qo_indptr.data();
    hp.kv_indptr = s.kv_indptr.data();
    hp.kv_page_indices = s.kv_page_indices.data();
    hp.kv_last_page_lens = s.kv_last_page_lens.data();
    if (p.cp_world > 1) hp.g_kv_indptr = s.g_kv_indptr.data();
    const size_t H = p.spec.heads;
    std::vector<float> o(s.rows.size() * H * 512), l(s.rows.size() * H);
    const mla_status st = mla_decode_reference(&hp, o.data(), l.data());
    if (st != MLA_SUCCESS) return st;
    out.resize(size_t(p.total_q) * H * 512, 0.f);
    lse.resize(size_t(p.total_q) * H, 0.f);
    for (size_t i = 0; i < s.rows.size(); ++i) {
        std::copy(o.begin() + i * H * 512, o.begin() + (i + 1) * H * 512, out.begin() + size_t(s.rows[i]) * H * 512);
        std::copy(l.begin() + i * H, l.begin() + (i + 1) * H, lse.begin() + size_t(s.rows[i]) * H);
    }
    return MLA_SUCCESS;
}

// ---- device run ----
struct DeviceRun {
    mla_context* ctx = nullptr;
    std::vector<void*> allocs;
    mla_decode_args args = MLA_DECODE_ARGS_INIT;
    mla_metadata_params mp = MLA_METADATA_PARAMS_INIT;
    mla_metadata_buffers plan{};
    mla_metadata_sizes sizes{};
    mla_plan_summary summary{};
    int32_t* error_flag = nullptr;
    std::string error;

    ~DeviceRun() {
        for (void* a : allocs) mla_device_free(ctx, a);
    }
    void* alloc(size_t bytes) {
        void* d = nullptr;
        if (mla_device_malloc(ctx, &d, std::max<size_t>(bytes, 256)) != MLA_SUCCESS) return nullptr;
        allocs.push_back(d);
        return d;
    }
    template <class T>
    T* upload(const std::vector<T>& v) {
        T* d = static_cast<T*>(alloc(v.size() * sizeof(T)));
        if (d && !v.empty() && mla_memcpy_htod(ctx, d, v.data(), v.size() * sizeof(T), nullptr) != MLA_SUCCESS)
            return nullptr;
        return d;
    }
    bool fail(const char* what, mla_status st) {
        error = std::string(what) + ": " + mla_status_string(st) + ": " + mla_last_error();
        return false;
    }

    // Plans on the host, uploads everything, fills args. false + error on failure.
    bool setup(mla_context* c, const Problem& p) {
        ctx = c;
        mp = plan_params_of(p, mla_context_arch(ctx), p.spec.num_clusters ? p.spec.num_clusters : mla_context_num_cus(ctx));
        sizes.struct_size = sizeof sizes;
        mla_status st = mla_metadata_info(&mp, &sizes);
        if (st) return fail("mla_metadata_info", st);
        // host plan buffers
        HostPlan host(sizes);
        const std::vector<uint64_t>& wm = host.work_metadata;
        const std::vector<int32_t>& wi = host.work_indptr;
        const std::vector<int32_t>& ws = host.work_info_set;
        int32_t* d_wi = static_cast<int32_t*>(alloc(wi.size() * 4));
        int32_t* d_ws = static_cast<int32_t*>(alloc(ws.size() * 4));
        summary.struct_size = sizeof summary;
        st = mla_plan_metadata(&mp, p.qo_indptr.data(), p.kv_indptr.data(), p.kv_last_page_lens.data(),
                               &host.buffers, d_wi, d_ws, &summary);
        if (st) return fail("mla_plan_metadata", st);
        plan = host.buffers;
        plan.work_metadata = static_cast<uint64_t*>(alloc(wm.size() * 8));
        plan.work_indptr = d_wi;
        plan.work_info_set = d_ws;
        plan.reduce_indptr = upload(host.reduce_indptr);
        plan.reduce_final_map = upload(host.reduce_final_map);
        plan.reduce_partial_map = upload(host.reduce_partial_map);
        if (mla_memcpy_htod(ctx, plan.work_metadata, wm.data(), wm.size() * 8, nullptr) ||
            mla_memcpy_htod(ctx, d_wi, wi.data(), wi.size() * 4, nullptr) ||
            mla_memcpy_htod(ctx, d_ws, ws.data(), ws.size() * 4, nullptr))
            return fail("upload plan", MLA_ERROR_LAUNCH);

        mla_decode_args& a = args;
        a = MLA_DECODE_ARGS_INIT;
        a.q_dtype = p.spec.q_dtype;
        a.kv_dtype = p.spec.kv_dtype;
        a.batch_size = p.spec.batch;
        a.num_heads = p.spec.heads;
        a.max_seqlen_q = p.spec.qlen;
        a.total_q = p.total_q;
        a.page_size = p.spec.page_size;
        a.num_pages = p.num_pages;
        a.causal = p.spec.causal;
        a.softmax_scale = p.spec.softmax_scale;
        a.q_scale = upload(std::vector<float>{p.q_scale});
        a.kv_scale = upload(std::vector<float>{p.kv_scale});
        a.q = upload(p.q);
        a.kv_cache = upload(p.kv);
        a.qo_indptr = upload(p.qo_indptr);
        a.kv_indptr = upload(p.kv_indptr);
        a.kv_last_page_lens = upload(p.kv_last_page_lens);
        if (p.spec.block_table) {
            a.block_table = upload(p.block_table);
            a.block_table_stride = std::max(1, p.max_pages);
        } else {
            a.kv_page_indices = upload(p.kv_page_indices);
            a.num_page_indices = int64_t(p.kv_page_indices.size());
        }
        const size_t H = p.spec.heads;
        a.out_dtype = p.spec.out_dtype;
        a.out = alloc(size_t(p.total_q) * H * 512 * p.out_esize());
        a.lse = p.spec.lse ? static_cast<float*>(alloc(size_t(p.total_q) * H * 4)) : nullptr;
        a.plan = &plan;
        a.plan_params = &mp;
        a.workspace = alloc(size_t(sizes.workspace_bytes));
        a.workspace_bytes = size_t(sizes.workspace_bytes);
        error_flag = static_cast<int32_t*>(alloc(4));
        a.error_flag = error_flag;
        a.active_clusters = p.spec.all_clusters ? 0 : summary.active_clusters;
        a.no_split_tiles = p.spec.force_no_split || (!p.spec.always_reduce && summary.num_split_tiles == 0) ? 1 : 0;
        if (p.spec.fused_reduce) {  // zeroed once, left zeroed by every call
            const int64_t tiles = std::max<int64_t>(sizes.reduce_indptr_len - 1, 1);
            a.tile_counters = static_cast<int32_t*>(alloc(size_t(tiles) * 4));
            a.tile_counters_len = tiles;
            if (!a.tile_counters) return fail("device allocation", MLA_ERROR_LAUNCH);
            if (mla_memset_d8(ctx, a.tile_counters, 0, size_t(tiles) * 4, nullptr))
                return fail("zero tile counters", MLA_ERROR_LAUNCH);
        }
        if (p.cp_world > 1) {  // a round-robin shard (cp_shard)
            a.g_kv_indptr = upload(p.g_kv_indptr);
            a.cp_world_size = p.cp_world;
            a.cp_rank = p.cp_rank;
            if (!a.g_kv_indptr) return fail("device allocation", MLA_ERROR_LAUNCH);
        }
        if (!a.q || !a.kv_cache || !a.out || !error_flag) return fail("device allocation", MLA_ERROR_LAUNCH);
        poison(p);
        mla_memset_d8(ctx, error_flag, 0, 4, nullptr);
        return true;
    }

    // Poisons out and lse (NaN bytes): every row must be written by the next launch.
    bool poison(const Problem& p) {
        const size_t H = p.spec.heads;
        if (mla_memset_d8(ctx, args.out, 0xff, size_t(p.total_q) * H * 512 * p.out_esize(), nullptr) ||
            (args.lse && mla_memset_d8(ctx, args.lse, 0xff, size_t(p.total_q) * H * 4, nullptr)))
            return fail("poison outputs", MLA_ERROR_LAUNCH);
        return true;
    }

    // The fused reduction's tile counters, copied back (empty without them): every call must
    // leave them at 0.
    bool fetch_counters(std::vector<int32_t>& c) {
        c.assign(size_t(args.tile_counters ? args.tile_counters_len : 0), -1);
        if (!c.empty() && mla_memcpy_dtoh(ctx, c.data(), args.tile_counters, c.size() * 4, nullptr))
            return fail("copy tile counters", MLA_ERROR_LAUNCH);
        return true;
    }

    bool launch() {
        const mla_status st = mla_decode_fwd(ctx, &args, nullptr);
        return st == MLA_SUCCESS ? true : fail("mla_decode_fwd", st);
    }

    // Reads out (as float: bf16 widened, or fp32 as written when spec.out_dtype is fp32), lse
    // and the error flag back.
    bool fetch(const Problem& p, std::vector<float>& out, std::vector<float>& lse, int32_t& flag) {
        const size_t H = p.spec.heads, n = size_t(p.total_q) * H * 512;
        mla_status st = mla_stream_synchronize(ctx, nullptr);
        if (st) return fail("decode kernels", st);
        out.resize(n);
        if (p.spec.out_dtype == MLA_DTYPE_FP32) {
            if (n && mla_memcpy_dtoh(ctx, out.data(), args.out, n * 4, nullptr))
                return fail("copy out", MLA_ERROR_LAUNCH);
        } else {
            std::vector<uint16_t> ob(n);
            if (n && mla_memcpy_dtoh(ctx, ob.data(), args.out, n * 2, nullptr))
                return fail("copy out", MLA_ERROR_LAUNCH);
            for (size_t i = 0; i < n; ++i) out[i] = bf16_to_f32(ob[i]);
        }
        lse.assign(size_t(p.total_q) * H, NAN);
        if (args.lse && !lse.empty() && mla_memcpy_dtoh(ctx, lse.data(), args.lse, lse.size() * 4, nullptr))
            return fail("copy lse", MLA_ERROR_LAUNCH);
        if (mla_memcpy_dtoh(ctx, &flag, error_flag, 4, nullptr)) return fail("copy error flag", MLA_ERROR_LAUNCH);
        return true;
    }
};

// The sm_90a decode shape of spec s (for mla_decode_shape_support / mla_decode_head_plan).
inline mla_decode_shape sm90_shape_of(const Spec& s) {
    mla_decode_shape sh = MLA_DECODE_SHAPE_INIT;
    sh.arch = "sm_90a";
    sh.num_heads = s.heads;
    sh.max_seqlen_qo = s.qlen;
    sh.q_dtype = s.q_dtype;
    sh.kv_dtype = s.kv_dtype;
    sh.page_size = s.page_size;
    sh.return_lse = s.lse ? 1 : 0;
    sh.causal = s.causal ? 1 : 0;
    return sh;
}
// The kernel the sm_90a table routes spec s to (mla_decode_shape_support's asm_kernel), or ""
// when the shape is unsupported.
inline std::string sm90_kernel_of(const Spec& s) {
    const mla_decode_shape sh = sm90_shape_of(s);
    mla_decode_support o = MLA_DECODE_SUPPORT_INIT;
    return mla_decode_shape_support(&sh, &o) == MLA_SUCCESS ? std::string(o.asm_kernel) : std::string();
}

// ---- comparison (FlashMLA's rule: an element passes if abs err < abs_tol OR rel err < rel_tol;
// -inf / NaN positions must match) ----
struct Tolerance {
    double out_abs = 8e-4, out_rel = 2.01 / 128, lse_abs = 1e-6, lse_rel = 8.01 / 65536;
};
// The tolerance a GPU result of spec s is held to against the CPU reference (docs/kernels.md,
// "Tolerances"): FlashMLA's bf16 rule for every dtype pair, except an LSE abs floor of 2e-4 when
// the sm_90a table routes s to a kernel that computes S = Q K^T on the fp8 tensor cores (as
// mla_decode_shape_support names it: the fp8-Q register-A kernel mla_decode_ra_fp8_*, 16-row
// tiles, and the qm fp8 kernel mla_decode_qm_fp8_fp8_*, 64-row tiles, whose TMA body does since
// session 20): exact products, but Hopper's fp8 MMA adds them with fewer than fp32's mantissa bits
// (measured LSE errors up to 9e-5 absolute where Q.K cancels, e.g. -0.074346 vs -0.074361, which
// the relative rule alone fails).
inline Tolerance tolerance_for(const Spec& s) {
    Tolerance t;
    const std::string k = sm90_kernel_of(s);
    if (k.rfind("mla_decode_ra_fp8_", 0) == 0 || k.rfind("mla_decode_qm_fp8_fp8_", 0) == 0) t.lse_abs = 2e-4;
    return t;
}
struct CompareResult {
    long checked = 0, bad_out = 0, bad_lse = 0, nonfinite_out = 0;
    double max_abs = 0, max_rel_lse = 0;
    double sum_xy = 0, sum_xx_yy = 0;  // aiter's cosine difference 1 - 2 sum(x y) / sum(x^2 + y^2) (cos_diff)
    double cos_diff() const { return sum_xx_yy > 0 ? 1.0 - 2.0 * sum_xy / sum_xx_yy : 0.0; }
    std::string first_bad;
    bool ok() const { return bad_out == 0 && bad_lse == 0 && nonfinite_out == 0; }
};
inline bool close(double got, double want, double abs_tol, double rel_tol) {
    if (std::isinf(want) || std::isinf(got)) return got == want;
    if (std::isnan(want) || std::isnan(got)) return false;
    const double e = std::fabs(got - want);
    return e < abs_tol || e < rel_tol * std::fabs(want);
}
inline void compare_rows(const Problem& p, const std::vector<int>& rows, const std::vector<float>& out,
                         const std::vector<float>& lse, const std::vector<float>& rout,
                         const std::vector<float>& rlse, const Tolerance& tol, CompareResult& r) {
    const size_t H = p.spec.heads;
    for (int t : rows)
        for (size_t h = 0; h < H; ++h) {
            const size_t i = size_t(t) * H + h;
            for (size_t d = 0; d < 512; ++d) {
                const double g = out[i * 512 + d], w = rout[i * 512 + d];
                ++r.checked;
                if (!std::isfinite(g)) ++r.nonfinite_out;
                r.max_abs = std::max(r.max_abs, std::fabs(g - w));
                if (std::isfinite(g) && std::isfinite(w)) {
                    r.sum_xy += g * w;
                    r.sum_xx_yy += g * g + w * w;
                }
                if (!close(g, w, tol.out_abs, tol.out_rel)) {
                    if (!r.bad_out && r.first_bad.empty())
                        r.first_bad = "out[" + std::to_string(t) + "," + std::to_string(h) + "," + std::to_string(d) +
                                      "] = " + std::to_string(g) + ", reference " + std::to_string(w);
                    ++r.bad_out;
                }
            }
            if (p.spec.lse) {
                const double g = lse[i], w = rlse[i];
                if (std::isfinite(w) && std::isfinite(g))
                    r.max_rel_lse = std::max(r.max_rel_lse, std::fabs(g - w) / std::max(1e-30, std::fabs(w)));
                if (!close(g, w, tol.lse_abs, tol.lse_rel)) {
                    if (r.first_bad.empty())
                        r.first_bad = "lse[" + std::to_string(t) + "," + std::to_string(h) + "] = " +
                                      std::to_string(g) + ", reference " + std::to_string(w);
                    ++r.bad_lse;
                }
            }
        }
}

// FlashMLA's counts (anchors.md §1.4): bytes = b (s_q h d 2 + s_k 576 e_kv + s_q h 512 e_out) with the
// mean s_k, FLOPs = b h s_q (2 d s_k + 2 s_k 512). Per-request sums here (ragged inputs).
inline double problem_bytes(const Problem& p) {
    double kv = 0;
    for (int n : p.kv_lens) kv += n;
    return kv * 576 * p.kv_esize() + double(p.total_q) * p.spec.heads * (576 * p.q_esize() + 512 * p.out_esize());
}
inline double problem_flops(const Problem& p) {
    double f = 0;
    for (int b = 0; b < p.spec.batch; ++b)
        f += double(p.qo_indptr[b + 1] - p.qo_indptr[b]) * p.spec.heads * p.kv_lens[b] * 2.0 * (576 + 512);
    return f;
}

// do_bench's L2 flush (triton.testing.do_bench, the method behind anchors.md §0's FlashMLA
// figures): a 256 MB device buffer zeroed on the default stream before each timed launch. It
// evicts the L2 (50 MB on the H200), so each timed call reads its KV from HBM as a serving step
// does, and it keeps the GPU busy while the host enqueues the call, so the time is the call's
// GPU time (decode + reduce), not also the host's validation and launch time before the first
// kernel starts (`mla run` reports that as the host cost). buf == nullptr: no flush (the idle-GPU
// method: each timed call starts on an idle GPU, with the L2 as the previous call left it).
struct L2Flush {
    static constexpr size_t kBytes = 256000000;  // do_bench's int32[256e6 / 4]
    void* buf = nullptr;                          // `bytes` of device memory, or nullptr
    size_t bytes = kBytes;                        // zeroed before each call (`mla run --flush-mb`)
    bool operator()(mla_context* ctx) const {
        return !buf || mla_memset_d8(ctx, buf, 0, bytes, nullptr) == MLA_SUCCESS;
    }
};

// Event-timed runs of launch() on the default stream, each after flush(): the median of `iters`
// timings in milliseconds goes to *median_ms (of the runs completed so far when one fails).
// Returns false (mla_last_error set) when the flush, a timer or launch() fails.
template <class Launch>
bool median_event_ms(mla_context* ctx, int iters, Launch&& launch, double* median_ms, const L2Flush& flush = {}) {
    std::vector<float> ms;
    bool ok = true;
    for (int it = 0; it < iters; ++it) {
        mla_timer* t = nullptr;
        float m = 0;
        if (!flush(ctx) || mla_timer_start(ctx, nullptr, &t) != MLA_SUCCESS) {
            ok = false;
            break;
        }
        const bool launched = launch();  // the timer is stopped (and freed) either way
        if (mla_timer_stop_ms(ctx, t, &m) != MLA_SUCCESS || !launched) {
            ok = false;
            break;
        }
        ms.push_back(m);
    }
    std::sort(ms.begin(), ms.end());
    *median_ms = ms.empty() ? 0 : ms[ms.size() / 2];
    return ok;
}

// launch() timed both ways: the median after flush (do_bench's method) to *flushed_ms, then the
// median of calls started on an idle GPU to *idle_ms (median_event_ms each). False (mla_last_error
// set) when either fails.
template <class Launch>
bool flushed_and_idle_ms(mla_context* ctx, int iters, Launch&& launch, const L2Flush& flush, double* flushed_ms,
                         double* idle_ms) {
    return median_event_ms(ctx, iters, launch, flushed_ms, flush) && median_event_ms(ctx, iters, launch, idle_ms);
}

// Device-to-device copy bandwidth (bytes read + written per second, GB/s) through
// mla_device_copy: `bytes` copied `iters` times between two buffers owned by `run`, median of
// event-timed copies. The yardstick `mla run` and `mla bench` report decode against. 0 (and
// *error set) when the copy kernel or memory is unavailable.
inline double copy_bandwidth_gbs(mla_context* ctx, DeviceRun& run, size_t bytes, int iters,
                                 std::string* error) {
    bytes = std::max<size_t>(bytes / 16 * 16, 16);
    void* a = run.alloc(bytes);
    void* b = run.alloc(bytes);
    if (!a || !b || mla_device_copy(ctx, b, a, bytes, nullptr) != MLA_SUCCESS) {
        *error = mla_last_error();
        return 0;
    }
    double med_ms = 0;
    if (!median_event_ms(ctx, std::max(5, iters),
                         [&] { return mla_device_copy(ctx, b, a, bytes, nullptr) == MLA_SUCCESS; },
                         &med_ms)) {
        *error = mla_last_error();
        return 0;
    }
    return med_ms > 0 ? 2.0 * double(bytes) / (med_ms * 1e-3) / 1e9 : 0;
}

}  // namespace mla_tool
