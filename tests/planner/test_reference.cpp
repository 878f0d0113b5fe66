// test_reference.cpp - the CPU reference and plan execution on the derived cases of
// edge-cases.md §1 (edge lengths) and §2 (scheduler and split boundaries), with their exact
// closed-form values (§0 constructions), NaN in every unused slot.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "ref_helpers.h"
#include "reference/dtype_convert.h"

using namespace reftest;

namespace {

const double kNegInf = -std::numeric_limits<double>::infinity();

// Visible keys of token t of request b.
int64_t visible(const Case& c, int32_t b, int32_t t) {
    const int64_t n = c.kv_lens[b];
    if (!c.causal) return n;
    return std::max<int64_t>(0, std::min<int64_t>(n, n - c.qlens[b] + t + 1));
}

// Every row and head of r has the U(L) value: out = mean, LSE = ln(count) (-inf when none).
void check_uniform(const Case& c, const Result& r, bool off, const char* what) {
    INFO(what);
    for (int32_t b = 0; b < int32_t(c.qlens.size()); ++b)
        for (int32_t t = 0; t < c.qlens[b]; ++t) {
            const int64_t n = visible(c, b, t);
            const double mean = uniform_mean(n, b, off);
            const double lse = n ? std::log(double(n)) : kNegInf;
            const int64_t row = c.qo[b] + t;
            for (int32_t h = 0; h < c.heads; ++h) {
                INFO("request " << b << " token " << t << " head " << h << " keys " << n);
                const float* o = &r.out[(row * c.heads + h) * 512];
                for (int d = 0; d < 512; d += 37) REQUIRE(o[d] == Approx(mean).epsilon(1e-6).margin(1e-6));
                REQUIRE(o[511] == Approx(mean).epsilon(1e-6).margin(1e-6));
                const float l = r.lse[row * c.heads + h];
                if (n == 0) REQUIRE(l == -INFINITY);
                else REQUIRE(l == Approx(lse).margin(1e-5));
            }
        }
}

// Direct reference and plan execution agree to fp32 rounding and both give the U(L) values.
void both_uniform(const Case& c, mla_metadata_params p, bool off, const char* what) {
    const Result d = direct(c);
    check_uniform(c, d, off, what);
    const Result e = executed(c, p);
    check_uniform(c, e, off, what);
    REQUIRE(max_rel_diff(e.out, d.out) < 1e-5);
    REQUIRE(max_rel_diff(e.lse, d.lse) < 1e-5);
}

mla_metadata_params small_clusters(const Case& c, int clusters, int gran = 1) {
    mla_metadata_params p = params_of(c);
    p.num_clusters = clusters;
    p.kv_granularity = gran;
    return p;
}

}  // namespace

TEST_CASE("U(L) closed forms of edge-cases.md §0", "[planner][reference]") {
    struct V {
        int64_t n;
        double out, lse;
    } vals[] = {{1, 1.0, 0.0},          {2, 1.5, 0.693147},        {13, 7.0, 2.564949},
                {16, 8.5, 2.772589},    {63, 8.380952, 4.143135},  {64, 8.5, 4.158883},
                {65, 8.384615, 4.174387}, {1000, 8.468, 6.907755}, {4096, 8.5, 8.317766},
                {8193, 8.499085, 9.011035}};
    for (const V& v : vals) {
        const Case c = uniform_case({1}, {v.n}, 16, 16);
        const Result r = direct(c);
        INFO("L = " << v.n);
        CHECK(r.out[0] == Approx(v.out).margin(1e-6));
        CHECK(r.lse[0] == Approx(v.lse).margin(1e-6));
    }
}

TEST_CASE("§1.1 all-zero batch: out 0, LSE -inf, no KV read", "[planner][reference][edge]") {
    for (int ps : {1, 64}) {
        Case c = uniform_case(std::vector<int32_t>(16, 1), std::vector<int64_t>(16, 0), ps, 16);
        REQUIRE(c.num_pages == 0);
        REQUIRE(c.cache.empty());  // the problem passes kv_cache = NULL
        plantest::Plan plan;
        const Result e = executed(c, params_of(c), &plan);
        const Result d = direct(c);
        for (float v : d.out) REQUIRE(v == 0.0f);
        for (float v : d.lse) REQUIRE(v == -INFINITY);
        REQUIRE(e.out == d.out);
        REQUIRE(e.lse == d.lse);
        // One unsplit empty work per request tile, kv_start == kv_end == kv_indptr[b].
        REQUIRE(plan.work_indptr[plan.sizes.num_clusters] == 16);
        for (int w = 0; w < 16; ++w) {
            const int32_t* wi = &plan.work_info[w * 8];
            CHECK(wi[1] == -1);
            CHECK(wi[4] == 0);
            CHECK(wi[5] == 0);
            CHECK(wi[6] == 0);
        }
    }
}

TEST_CASE("§1.2 mixed zero / one / page edge with an unreferenced NaN page", "[planner][reference][edge]") {
    Case c = uniform_case({1, 1, 1, 1}, {0, 1, 64, 65}, 64, 16, false, 1);
    const Result d = direct(c);
    const double out[] = {0, 1.0, 8.5, 8.384615}, lse[] = {kNegInf, 0, 4.158883, 4.174387};
    for (int b = 0; b < 4; ++b)
        for (int h = 0; h < 16; ++h) {
            CHECK(d.out[(b * 16 + h) * 512 + 100] == Approx(out[b]).margin(1e-6));
            if (b == 0) CHECK(d.lse[b * 16 + h] == -INFINITY);
            else CHECK(d.lse[b * 16 + h] == Approx(lse[b]).margin(1e-6));
        }
    both_uniform(c, params_of(c), false, "default plan");
    both_uniform(c, small_clusters(c, 5), false, "5 clusters, 1-page units");
}

TEST_CASE("§1.3 partial last page holding NaN", "[planner][reference][edge]") {
    for (int ps : {4, 16}) {
        const int64_t n = ps == 4 ? 13 : 17;
        Case c = uniform_case({1}, {n}, ps, 16);
        const Result d = direct(c);
        CHECK(d.out[0] == Approx(ps == 4 ? 7.0 : uniform_mean(17, 0, false)).margin(1e-6));
        CHECK(d.lse[0] == Approx(std::log(double(n))).margin(1e-6));
        both_uniform(c, small_clusters(c, 3), false, "3 clusters");
    }
}

TEST_CASE("§1.4 NaN past the used length in other requests", "[planner][reference][edge]") {
    Case c = uniform_case({1, 1, 1, 1}, {32, 64, 96, 48}, 64, 16, true, 0, true);
    // Each request owns 2 pages of 64 (the last one partial or unused): give 32- and 48-token
    // requests a second, all-NaN page by planning them with 2 pages would change N; the NaN
    // slots past each length inside the owned pages are what matters here.
    const Result d = direct(c);
    const double out[] = {8.5, 24.5, 40.5, 56.5}, lse[] = {3.465736, 4.158883, 4.564348, 3.871201};
    for (int b = 0; b < 4; ++b) {
        CHECK(d.out[(b * 16) * 512] == Approx(out[b]).margin(1e-6));
        CHECK(d.lse[b * 16 + 15] == Approx(lse[b]).margin(1e-6));
    }
    both_uniform(c, params_of(c), true, "default plan");
    both_uniform(c, small_clusters(c, 7), true, "7 clusters");
}

TEST_CASE("§1.5 single key is exact, also beside a long split request", "[planner][reference][edge]") {
    Case c = random_case({1}, {1}, 1, 16, 5);
    const Result d = direct(c);
    const mla_host_problem p = c.problem();
    for (int h = 0; h < 16; ++h) {
        double dot = 0;
        for (int e = 0; e < 576; ++e)
            dot += double(mla::dt::load(c.q_dtype, c.q.data(), h * 576 + e)) *
                   mla::dt::load(c.kv_dtype, c.cache.data(), int64_t(c.idx[0]) * 576 + e);
        for (int e = 0; e < 512; ++e)
            REQUIRE(d.out[h * 512 + e] ==
                    mla::dt::load(c.kv_dtype, c.cache.data(), int64_t(c.idx[0]) * 576 + e));
        REQUIRE(d.lse[h] == float(dot * double(p.softmax_scale)));
    }
    // L = 1 beside L = 131072 (U data, 8 heads to keep the CPU time small): the long request is
    // split, the single key is not.
    Case u = uniform_case({1, 1}, {1, 131072}, 64, 8);
    plantest::Plan plan;
    const Result e = executed(u, params_of(u), &plan);
    check_uniform(u, e, false, "executed");
    REQUIRE(plan.reduce_indptr[1] == plan.reduce_indptr[0]);  // tile 0 (1 key) unsplit
    REQUIRE(plan.reduce_indptr[2] - plan.reduce_indptr[1] > 1);  // tile 1 split
}

TEST_CASE("§1.6 page-boundary sweep over every page size", "[planner][reference][edge]") {
    for (int ps = 1; ps <= 1024; ps *= 2) {
        std::vector<int64_t> lens;
        for (int64_t n : {int64_t(ps) - 1, int64_t(ps), int64_t(ps) + 1, 2 * int64_t(ps) - 1,
                          2 * int64_t(ps), 2 * int64_t(ps) + 1})
            if (n > 0) lens.push_back(n);
        Case c = uniform_case(std::vector<int32_t>(lens.size(), 1), lens, ps, 2, false, 1, true);
        INFO("page size " << ps);
        both_uniform(c, small_clusters(c, 4, 1), false, "4 clusters");
        both_uniform(c, params_of(c), false, "default plan");
    }
    // Random data against the direct reference, MTP 2, pages of 16.
    Case r = random_case({2, 2, 2}, {15, 16, 33}, 16, 16, 9);
    const Result d = direct(r), e = executed(r, small_clusters(r, 6));
    REQUIRE(max_rel_diff(e.out, d.out) < 1e-5);
    REQUIRE(max_rel_diff(e.lse, d.lse) < 1e-5);
}

TEST_CASE("§1.8 fewer keys than query rows (causal MTP)", "[planner][reference][edge]") {
    for (int heads : {16, 128}) {  // 128 folds into 2 x 64 with one-token tiles (trimmed ends)
        Case c = uniform_case({4}, {2}, 1, heads);
        const Result d = direct(c);
        const double out[] = {0, 0, 1.0, 1.5}, lse[] = {kNegInf, kNegInf, 0, 0.693147};
        for (int t = 0; t < 4; ++t) {
            CHECK(d.out[(t * heads + 3) * 512 + 7] == Approx(out[t]).margin(1e-6));
            if (t < 2) CHECK(d.lse[t * heads] == -INFINITY);
            else CHECK(d.lse[t * heads] == Approx(lse[t]).margin(1e-6));
        }
        both_uniform(c, params_of(c), false, "default plan");
        both_uniform(c, small_clusters(c, 3), false, "3 clusters");
    }
}

TEST_CASE("§1.9 ragged q lengths leave guard rows untouched", "[planner][reference][edge]") {
    Case c = random_case({4, 4, 1}, {300, 300, 300}, 1, 16, 11);
    c.max_q = 4;
    const mla_host_problem p = c.problem();
    const size_t rows = 9, guard = 64;
    std::vector<float> out((rows + guard) * 16 * 512, 12345.0f), lse((rows + guard) * 16, 12345.0f);
    REQUIRE(mla_decode_reference(&p, out.data(), lse.data()) == MLA_SUCCESS);
    for (size_t i = rows * 16 * 512; i < out.size(); ++i) REQUIRE(out[i] == 12345.0f);
    for (size_t i = rows * 16; i < lse.size(); ++i) REQUIRE(lse[i] == 12345.0f);
    mla_metadata_params mp = small_clusters(c, 9, 16);
    plantest::Plan plan = plantest::alloc_plan(mp);
    REQUIRE(plantest::run_plan(mp, c.batch(), plan) == MLA_SUCCESS);
    std::vector<float> out2((rows + guard) * 16 * 512, 12345.0f), lse2((rows + guard) * 16, 12345.0f);
    mla_metadata_buffers m = plan.buffers();
    REQUIRE(mla_execute_plan_reference(&p, &mp, &m, out2.data(), lse2.data()) == MLA_SUCCESS);
    for (size_t i = rows * 16 * 512; i < out2.size(); ++i) REQUIRE(out2[i] == 12345.0f);
    std::vector<float> a(out.begin(), out.begin() + rows * 16 * 512),
        b(out2.begin(), out2.begin() + rows * 16 * 512);
    REQUIRE(max_rel_diff(b, a) < 1e-5);
}

TEST_CASE("§1.10 long context", "[planner][reference][edge]") {
    for (int64_t n : {65536, 131072}) {
        Case c = uniform_case({1}, {n}, 64, 2);
        const Result d = direct(c);
        CHECK(d.out[0] == Approx(8.5).margin(1e-6));
        CHECK(d.lse[1] == Approx(n == 65536 ? 11.090355 : 11.783502).margin(1e-6));
        const Result e = executed(c, params_of(c));
        REQUIRE(max_rel_diff(e.out, d.out) < 1e-5);
        REQUIRE(max_rel_diff(e.lse, d.lse) < 1e-5);
    }
}

TEST_CASE("§2.11 more splits than blocks", "[planner][reference][edge]") {
    for (int64_t n : {1, 7, 63, 64, 65})
        for (int splits : {1, 2, 4, 8, 16, 32, 64}) {
            Case c = uniform_case({1}, {n}, 1, 16);
            mla_metadata_params p = small_clusters(c, splits, 1);
            p.max_split_per_batch = splits;
            INFO("L " << n << " splits " << splits);
            both_uniform(c, p, false, "forced splits");
        }
}

TEST_CASE("§2.13 split-count invariance and deterministic plans", "[planner][reference][edge]") {
    Case c = random_case({1}, {4096}, 1, 2, 13);
    const Result d = direct(c);
    for (int splits : {1, 8, 16, 32}) {
        mla_metadata_params p = small_clusters(c, splits, 16);
        plantest::Plan a, b;
        const Result e = executed(c, p, &a);
        executed(c, p, &b);
        REQUIRE(a.work_info == b.work_info);  // bit-identical plans
        REQUIRE(a.partial_map == b.partial_map);
        REQUIRE(max_rel_diff(e.out, d.out) < 1e-5);
        REQUIRE(max_rel_diff(e.lse, d.lse) < 1e-5);
    }
}

TEST_CASE("§2.14 split and unsplit requests with LSE in one batch", "[planner][reference][edge]") {
    for (int q : {1, 2})
        for (int heads : {16, 128}) {
            Case c = uniform_case({q, q}, {16, 16384}, 1, heads);
            plantest::Plan plan;
            const Result e = executed(c, params_of(c), &plan);
            check_uniform(c, e, false, "executed");
            for (int h = 0; h < heads; h += 17) {
                CHECK(e.lse[(q * 2 - 1) * heads + h] == Approx(9.704061).margin(1e-5));
                CHECK(e.lse[(q - 1) * heads + h] == Approx(2.772589).margin(1e-5));
            }
            // Request 0's tiles are unsplit, request 1's split.
            int split0 = 0, split1 = 0;
            const int tiles_per_req = (plan.sizes.reduce_indptr_len - 1) / 2;
            for (int t = 0; t < tiles_per_req; ++t)
                split0 += plan.reduce_indptr[t + 1] > plan.reduce_indptr[t];
            for (int t = tiles_per_req; t < 2 * tiles_per_req; ++t)
                split1 += plan.reduce_indptr[t + 1] > plan.reduce_indptr[t];
            CHECK(split0 == 0);
            CHECK(split1 > 0);
        }
}

TEST_CASE("§2.15 padded batch with no-work tiles", "[planner][reference][edge]") {
    Case c = uniform_case({1, 1, 1, 1, 1, 1, 1, 1}, {100, 5000, 1, 0, 0, 0, 0, 0}, 64, 16, false, 1);
    plantest::Plan plan;
    const Result e = executed(c, params_of(c), &plan);
    check_uniform(c, e, false, "executed");
    for (int b = 3; b < 8; ++b) CHECK(e.lse[b * 16] == -INFINITY);
    both_uniform(c, small_clusters(c, 6, 64), false, "6 clusters");
}

TEST_CASE("§2.17 many splits in the reduce", "[planner][reference][edge]") {
    for (int splits : {32, 33, 64, 65, 128, 256}) {
        Case c = uniform_case({1}, {262144}, 64, 1);
        mla_metadata_params p = small_clusters(c, splits, 64);
        p.max_split_per_batch = splits;
        plantest::Plan plan;
        const Result e = executed(c, p, &plan);
        INFO("splits " << splits);
        // About one fragment per cluster (the per-tile overhead makes a few fewer).
        CHECK(plan.reduce_indptr[1] <= splits);
        CHECK(plan.reduce_indptr[1] >= splits - splits / 16);
        CHECK(e.out[0] == Approx(8.5).margin(1e-6));
        CHECK(e.lse[0] == Approx(12.476649).margin(1e-5));
    }
}

TEST_CASE("§4.28 reduce gives a fragment without keys zero weight", "[planner][reference][edge]") {
    // Hand-made plan: request of 4 causal tokens over 2 keys, one tile split at key 1. Rows 0-1
    // see no key in either fragment; row 2 sees key 0 only (fragment 2 is empty for it).
    Case c = uniform_case({4}, {2}, 1, 16);
    mla_metadata_params p = params_of(c);
    p.num_clusters = 2;
    plantest::Plan plan = plantest::alloc_plan(p);
    plan.work_indptr = {0, 1, 2};
    const int32_t w0[8] = {0, 0, 0, 4, 0, 1, 1, 0}, w1[8] = {0, 4, 0, 4, 1, 2, 0, 0};
    std::copy(w0, w0 + 8, plan.work_info.begin());
    std::copy(w1, w1 + 8, plan.work_info.begin() + 8);
    std::fill(plan.reduce_indptr.begin(), plan.reduce_indptr.end(), 2);
    plan.reduce_indptr[0] = 0;
    plan.final_map[0] = 0;
    plan.final_map[1] = 4;
    plan.partial_map[0] = 0;
    plan.partial_map[1] = 4;
    Result e;
    e.out.assign(4 * 16 * 512, -9.0f);
    e.lse.assign(4 * 16, -9.0f);
    const mla_host_problem hp = c.problem();
    mla_metadata_buffers m = plan.buffers();
    const mla_status st = mla_execute_plan_reference(&hp, &p, &m, e.out.data(), e.lse.data());
    INFO(mla_last_error());
    REQUIRE(st == MLA_SUCCESS);
    check_uniform(c, e, false, "hand-made split plan");
}

TEST_CASE("fp8 KV with scales and P quantisation, fp16 and fnuz", "[planner][reference]") {
    // fp8 e4m3fn KV, q_scale / kv_scale not powers of two: execution equals the direct
    // reference, and the direct reference equals a dequantise-then-attend computation.
    Case c = random_case({1, 2}, {50, 77}, 16, 16, 21, MLA_DTYPE_FP8_E4M3FN);
    c.q_scale = 0.3f;
    c.kv_scale = 1.7f;
    c.max_q = 2;
    const Result d = direct(c), e = executed(c, small_clusters(c, 5));
    REQUIRE(max_rel_diff(e.out, d.out) < 1e-5);
    REQUIRE(max_rel_diff(e.lse, d.lse) < 1e-5);
    // Same data dequantised by hand into fp32-exact bf16? fp8 values times 1.7 are not bf16, so
    // check row 0 head 0 directly in double.
    {
        double s[50], m = -1e300, l = 0, o0 = 0;
        for (int j = 0; j < 50; ++j) {
            const int64_t row = int64_t(c.idx[j / 16]) * 16 + j % 16;
            double dot = 0;
            for (int e2 = 0; e2 < 576; ++e2)
                dot += double(mla::dt::load(c.q_dtype, c.q.data(), e2)) * 0.3 *
                       double(mla::dt::load(c.kv_dtype, c.cache.data(), row * 576 + e2)) * 1.7;
            s[j] = dot * double(c.scale);
            m = std::max(m, s[j]);
        }
        for (int j = 0; j < 50; ++j) {
            const int64_t row = int64_t(c.idx[j / 16]) * 16 + j % 16;
            const double w = std::exp(s[j] - m);
            l += w;
            o0 += w * double(mla::dt::load(c.kv_dtype, c.cache.data(), row * 576)) * 1.7;
        }
        CHECK(d.out[0] == Approx(o0 / l).epsilon(1e-6));
        CHECK(d.lse[0] == Approx(m + std::log(l)).epsilon(1e-6));
    }
    // P quantisation: with fp8 P the output moves, by a bounded amount.
    Case qc = c;
    qc.fp8_p_quant = 1;
    // Unsplit execution quantises against the same row max as the direct reference; split
    // fragments quantise against their own max, so they differ by the fp8 rounding only.
    const Result dq = direct(qc), eq = executed(qc, small_clusters(qc, 1));
    REQUIRE(max_rel_diff(eq.out, dq.out) < 1e-5);
    const Result es = executed(qc, small_clusters(qc, 5));
    CHECK(max_rel_diff(es.out, dq.out) < 0.1);
    REQUIRE(dq.lse == d.lse);  // LSE from the unquantised sum
    double moved = 0;
    for (size_t i = 0; i < dq.out.size(); ++i) moved = std::max(moved, double(std::fabs(dq.out[i] - d.out[i])));
    CHECK(moved > 0);
    CHECK(moved < 0.2);
    // fp16 q / kv and e4m3fnuz kv run in the reference (no sm_90a plan: the direct path).
    Case h = random_case({1}, {40}, 8, 4, 3, MLA_DTYPE_FP16);
    h.q_dtype = MLA_DTYPE_FP16;
    h.q.assign(h.q.size(), 0);  // q re-filled as fp16 zeros: out = mean of V, LSE = ln 40
    const Result dh = direct(h);
    CHECK(dh.lse[0] == Approx(std::log(40.0)).margin(1e-6));
    Case z = random_case({1}, {40}, 8, 4, 3, MLA_DTYPE_FP8_E4M3FNUZ);
    const Result dz = direct(z);
    CHECK(std::isfinite(dz.lse[0]));
}

TEST_CASE("dtype conversions round to nearest even", "[planner][reference]") {
    using namespace mla::dt;
    CHECK(f32_to_fp8(448.0f, false) == 0x7e);
    CHECK(f32_to_fp8(1000.0f, false) == 0x7e);  // satfinite
    CHECK(fp8_to_f32(0x7e, false) == 448.0f);
    CHECK(std::isnan(fp8_to_f32(0x7f, false)));
    CHECK(f32_to_fp8(240.0f, true) == 0x7f);
    CHECK(fp8_to_f32(0x7f, true) == 240.0f);
    CHECK(std::isnan(fp8_to_f32(0x80, true)));
    CHECK(f32_to_fp8(-0.0f, true) == 0);
    CHECK(fp8_to_f32(0x01, false) == std::ldexp(1.0f, -9));   // smallest subnormal
    CHECK(fp8_to_f32(0x01, true) == std::ldexp(1.0f, -10));
    CHECK(f32_to_fp8(1.0625f, false) == 0x38);  // 1 + 1/16: tie to even (mantissa 0)
    CHECK(f32_to_fp8(1.1875f, false) == 0x3a);  // 1 + 3/16: tie to even (mantissa 2)
    for (int v = 0; v < 256; ++v) {
        const float f = fp8_to_f32(uint8_t(v), false);
        if (!std::isnan(f)) CHECK(f32_to_fp8(f, false) == v);
        const float g = fp8_to_f32(uint8_t(v), true);
        if (!std::isnan(g) && v != 0x80) CHECK(f32_to_fp8(g, true) == v);
    }
    CHECK(f32_to_bf16(1.0f) == 0x3f80);
    CHECK(f32_to_bf16(bits_f32(0x3f808000u)) == 0x3f80);  // tie to even
    CHECK(f32_to_bf16(bits_f32(0x3f818000u)) == 0x3f82);
    for (uint32_t h = 0; h < 0x7c00; ++h) CHECK(f32_to_f16(f16_to_f32(uint16_t(h))) == h);
    CHECK(f32_to_f16(65504.0f) == 0x7bff);
    CHECK(f32_to_f16(1e6f) == 0x7c00);
}

TEST_CASE("head-group-major plans execute to the reference (128 heads, MTP, splits)",
          "[planner][reference]") {
    // The same work items assigned head group by head group: executing the plan gives the direct
    // reference, with and without splits, for qlen 1 and 2 and a few cluster counts.
    for (int qlen : {1, 2})
        for (int clusters : {8, 32, 132}) {
            Case c = random_case({qlen, qlen, qlen}, {300, 4096, 37}, 64, 128, 5 + qlen);
            mla_metadata_params p = small_clusters(c, clusters, 16);
            p.head_group_major = 1;
            INFO("qlen " << qlen << " clusters " << clusters);
            const Result d = direct(c), e = executed(c, p);
            REQUIRE(max_rel_diff(e.out, d.out) < 1e-5);
            REQUIRE(max_rel_diff(e.lse, d.lse) < 1e-5);
        }
}
