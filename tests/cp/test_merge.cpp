// test_merge.cpp - the LSE merge (mla_c_api.h, CONTEXT PARALLEL): exact values of the host merge
// (-inf / +inf / NaN partials get weight 0 and are never read, all -inf -> 0 and -inf, bf16 in
// and out), bad arguments (status, message, nothing written), and the sm_90a launch on the fake
// CUDA runtime: symbol, grid, block, params bytes, nothing launched on bad input.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "../../codeobjects/sm_90a/merge/merge_params.h"
#include "fake_runtime.h"
#include "fake_test_util.h"
#include "mla_c_api.h"
#include "reference/dtype_convert.h"

namespace {

constexpr int kV = 512;
const float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

// W partials of `units` (row, head) pairs, fp32.
struct Parts {
    int32_t W, total_q, heads;
    std::vector<float> o, lse;
    Parts(int32_t w, int32_t tq, int32_t h)
        : W(w), total_q(tq), heads(h), o(size_t(w) * tq * h * kV, 0.0f), lse(size_t(w) * tq * h, 0.0f) {}
    int64_t units() const { return int64_t(total_q) * heads; }
    float* row(int32_t k, int64_t u) { return &o[(k * units() + u) * kV]; }
    float& l(int32_t k, int64_t u) { return lse[k * units() + u]; }
};

mla_merge_args args_of(Parts& p, void* out, float* lse, mla_dtype out_dtype = MLA_DTYPE_FP32) {
    mla_merge_args a = MLA_MERGE_ARGS_INIT;
    a.world_size = p.W;
    a.total_q = p.total_q;
    a.num_heads = p.heads;
    a.partial_dtype = MLA_DTYPE_FP32;
    a.out_dtype = out_dtype;
    a.partial_out = p.o.data();
    a.partial_lse = p.lse.data();
    a.out = out;
    a.lse = lse;
    return a;
}

}  // namespace

TEST_CASE("host merge: exact values and non-finite partials", "[cp][merge]") {
    Parts p(3, 1, 4);  // 4 units, 3 partials
    for (int u = 0; u < 4; ++u)
        for (int d = 0; d < kV; ++d) {
            p.row(0, u)[d] = 1.0f;
            p.row(1, u)[d] = 3.0f;
            p.row(2, u)[d] = kNaN;  // poison: read only if its lse were finite
        }
    // unit 0: lse {0, 0, -inf} -> o = 2, lse = ln 2
    p.l(0, 0) = 0; p.l(1, 0) = 0; p.l(2, 0) = -kInf;
    // unit 1: lse {-inf, 5, NaN} -> o = 3 exactly, lse = 5
    p.l(0, 1) = -kInf; p.l(1, 1) = 5; p.l(2, 1) = kNaN;
    // unit 2: all empty (-inf, +inf from aiter's HIP reducer, NaN) -> o = 0, lse = -inf
    p.l(0, 2) = -kInf; p.l(1, 2) = kInf; p.l(2, 2) = kNaN;
    for (int d = 0; d < kV; ++d) { p.row(0, 2)[d] = kNaN; p.row(1, 2)[d] = kNaN; }
    // unit 3: lse {ln 3, 0, -inf}: weights 3/4, 1/4 -> o = 1.5, lse = ln 4
    p.l(0, 3) = std::log(3.0f); p.l(1, 3) = 0; p.l(2, 3) = -kInf;
    std::vector<float> out(4 * kV, -1.0f), lse(4, -1.0f);
    mla_merge_args a = args_of(p, out.data(), lse.data());
    REQUIRE(mla_merge_attn_states_host(&a) == MLA_SUCCESS);
    for (int d = 0; d < kV; ++d) {
        REQUIRE(out[0 * kV + d] == 2.0f);
        REQUIRE(out[1 * kV + d] == 3.0f);
        REQUIRE(out[2 * kV + d] == 0.0f);
        REQUIRE(std::fabs(out[3 * kV + d] - 1.5f) <= 2e-7f);
    }
    CHECK(lse[0] == float(std::log(2.0)));
    CHECK(lse[1] == 5.0f);
    CHECK(lse[2] == -kInf);
    CHECK(std::fabs(lse[3] - float(std::log(4.0))) <= 1e-7f);

    // Large LSE gaps stay finite: exp(-1000) underflows to weight 0, no overflow.
    Parts q(2, 1, 1);
    for (int d = 0; d < kV; ++d) { q.row(0, 0)[d] = float(d); q.row(1, 0)[d] = -1.0f; }
    q.l(0, 0) = 1000.0f;
    q.l(1, 0) = 0.0f;
    std::vector<float> o2(kV), l2(1);
    a = args_of(q, o2.data(), l2.data());
    REQUIRE(mla_merge_attn_states_host(&a) == MLA_SUCCESS);
    for (int d = 0; d < kV; ++d) REQUIRE(o2[d] == float(d));
    CHECK(l2[0] == 1000.0f);
}

TEST_CASE("host merge: W = 1 and bf16 partials and output and lse NULL", "[cp][merge]") {
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> u(-2.0f, 2.0f);
    const int W = 2, TQ = 3, H = 5;
    Parts p(W, TQ, H);
    for (float& v : p.o) v = mla::dt::round_to(MLA_DTYPE_BF16, u(rng));
    for (float& v : p.lse) v = 4 * u(rng);
    std::vector<uint16_t> pb(p.o.size());
    for (size_t i = 0; i < p.o.size(); ++i) pb[i] = mla::dt::f32_to_bf16(p.o[i]);
    // fp32 partials -> fp32 out; bf16 partials (same values) -> bf16 out = bf16(fp32 out)
    std::vector<float> ref(size_t(TQ) * H * kV), ref_lse(size_t(TQ) * H);
    mla_merge_args a = args_of(p, ref.data(), ref_lse.data());
    REQUIRE(mla_merge_attn_states_host(&a) == MLA_SUCCESS);
    std::vector<uint16_t> ob(ref.size());
    a = args_of(p, ob.data(), nullptr, MLA_DTYPE_BF16);
    a.partial_dtype = MLA_DTYPE_BF16;
    a.partial_out = pb.data();
    REQUIRE(mla_merge_attn_states_host(&a) == MLA_SUCCESS);
    for (size_t i = 0; i < ref.size(); ++i) REQUIRE(ob[i] == mla::dt::f32_to_bf16(ref[i]));
    // by hand for unit 0, column 7
    const double l0 = p.l(0, 0), l1 = p.l(1, 0), m = std::max(l0, l1);
    const double ls = m + std::log(std::exp(l0 - m) + std::exp(l1 - m));
    CHECK(ref_lse[0] == float(ls));
    CHECK(ref[7] == float(std::exp(l0 - ls) * p.row(0, 0)[7] + std::exp(l1 - ls) * p.row(1, 0)[7]));
    // W = 1: a copy (finite lse), whatever the lse value
    Parts one(1, TQ, H);
    one.o.assign(p.o.begin(), p.o.begin() + one.o.size());
    one.lse.assign(p.lse.begin(), p.lse.begin() + one.lse.size());
    std::vector<float> o1(ref.size()), l1v(ref_lse.size());
    a = args_of(one, o1.data(), l1v.data());
    REQUIRE(mla_merge_attn_states_host(&a) == MLA_SUCCESS);
    CHECK(o1 == one.o);
    CHECK(l1v == one.lse);
}

TEST_CASE("host merge: rank strides read a packed all-gather buffer as the contiguous arrays", "[cp][merge]") {
    // What an all-gather of each rank's [out | lse] bytes receives: rank k's out block, then its
    // lse block, then 4 floats of padding, then rank k + 1's. Merged through the rank strides it
    // gives the same bytes as the contiguous arrays.
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> u(-2.0f, 2.0f);
    const int W = 3, TQ = 2, H = 3;
    Parts p(W, TQ, H);
    for (float& v : p.o) v = u(rng);
    for (float& v : p.lse) v = 4 * u(rng);
    p.l(1, 4) = -kInf;
    const int64_t units = p.units(), rank = units * kV + units + 4;
    std::vector<float> packed(size_t(W * rank), kNaN);
    for (int k = 0; k < W; ++k) {
        std::copy(p.row(k, 0), p.row(k, 0) + units * kV, packed.begin() + k * rank);
        std::copy(&p.l(k, 0), &p.l(k, 0) + units, packed.begin() + k * rank + units * kV);
    }
    std::vector<float> want(size_t(units) * kV), want_lse(units), got(want.size()), got_lse(units);
    mla_merge_args a = args_of(p, want.data(), want_lse.data());
    REQUIRE(mla_merge_attn_states_host(&a) == MLA_SUCCESS);
    a = args_of(p, got.data(), got_lse.data());
    a.partial_out = packed.data();
    a.partial_lse = packed.data() + units * kV;
    a.partial_out_rank_stride = rank;
    a.partial_lse_rank_stride = rank;
    REQUIRE(mla_merge_attn_states_host(&a) == MLA_SUCCESS);
    CHECK(got == want);
    CHECK(got_lse == want_lse);
    // a rank's lse 4 is -inf: unit 4 merges ranks 0 and 2 only
    CHECK(std::isfinite(got_lse[4]));
}

TEST_CASE("host merge: bad arguments write nothing", "[cp][merge]") {
    Parts p(2, 2, 4);
    std::vector<float> out(size_t(2) * 4 * kV, 42.0f), lse(8, 42.0f);
    auto expect = [&](mla_merge_args a, const char* what) {
        INFO(what);
        CHECK(mla_merge_attn_states_host(&a) == MLA_ERROR_INVALID_ARGUMENT);
        CHECK(std::string(mla_last_error()).find(what) != std::string::npos);
        for (float v : out) REQUIRE(v == 42.0f);
        for (float v : lse) REQUIRE(v == 42.0f);
    };
    mla_merge_args a = args_of(p, out.data(), lse.data());
    a.world_size = 0;
    expect(a, "world_size must be >= 1");
    a = args_of(p, out.data(), lse.data());
    a.total_q = -1;
    expect(a, "total_q is negative");
    a = args_of(p, out.data(), lse.data());
    a.num_heads = 0;
    expect(a, "num_heads must be >= 1");
    a = args_of(p, out.data(), lse.data());
    a.partial_dtype = MLA_DTYPE_FP8_E4M3FN;
    expect(a, "partial_dtype 2 is not fp32 or bf16");
    a = args_of(p, out.data(), lse.data());
    a.out_dtype = MLA_DTYPE_FP16;
    expect(a, "out_dtype 1 is not bf16 or fp32");
    a = args_of(p, out.data(), lse.data());
    a.partial_lse = nullptr;
    expect(a, "must not be NULL");
    a = args_of(p, out.data(), lse.data());
    a.lse = reinterpret_cast<float*>(out.data()) + 100;
    expect(a, "out overlaps lse");
    a = args_of(p, out.data(), lse.data());
    a.out = p.o.data() + kV;  // inside partial_out
    expect(a, "out overlaps partial_out");
    a = args_of(p, out.data(), lse.data());
    a.partial_out_rank_stride = 4 * kV - 1;  // one rank's block is 2 x 4 x 512 elements
    expect(a, "partial_out_rank_stride 2047 is smaller than one rank's block");
    a = args_of(p, out.data(), lse.data());
    a.partial_lse_rank_stride = -8;
    expect(a, "partial_lse_rank_stride -8 is smaller");
    {
        // partial_out's span runs from rank 0's block to the end of rank 1's, 3 blocks later:
        // an out in the gap between them overlaps it
        std::vector<float> big(size_t(4) * 8 * kV, 7.0f);
        a = args_of(p, out.data(), lse.data());
        a.partial_out = big.data();
        a.partial_out_rank_stride = 3 * 8 * kV;
        a.out = big.data() + 8 * kV;
        expect(a, "out overlaps partial_out");
        for (float v : big) REQUIRE(v == 7.0f);
    }
    a = args_of(p, out.data(), lse.data());
    a.struct_size = 0;
    expect(a, "struct_size");
    CHECK(mla_merge_attn_states_host(nullptr) == MLA_ERROR_INVALID_ARGUMENT);
    // total_q 0: nothing to do, NULL pointers allowed
    mla_merge_args e = MLA_MERGE_ARGS_INIT;
    e.world_size = 4;
    CHECK(mla_merge_attn_states_host(&e) == MLA_SUCCESS);
}

// ---- the sm_90a launch on the fake CUDA runtime ----------------------------------------------

namespace {

// A code-object root with the project's merge table (or `csv_text`) and a fake image, for `arch`.
std::string make_root(const std::string& arch, const std::string& csv_text = "") {
    char tmpl[] = "/tmp/mla_cp_test_XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    const std::string root = tmpl, dir = root + "/" + arch + "/merge";
    REQUIRE(std::system(("mkdir -p " + dir).c_str()) == 0);
    const char* src = std::getenv("MLA_CP_TABLES");
    if (csv_text.empty())
        fake_test::copy_file(std::string(src ? src : "codeobjects/sm_90a") + "/merge/mla_merge.csv", dir + "/mla_merge.csv");
    else
        std::ofstream(dir + "/mla_merge.csv") << csv_text;
    fake_test::write_fake_image(dir + "/mla_merge.cubin", "merge");
    return root;
}

mla_context* make_ctx(const std::string& root, const char* arch = "sm_90a") {
    return fake_test::fake_context(root, arch);
}

// Host emulation of mla_merge_bf16: the host merge on the params the launch carried.
void emulate_merge(const fake_rt_launch_record* l, void*) {
    mla_merge_params p;
    std::memcpy(&p, l->args, sizeof p);
    mla_merge_args a = MLA_MERGE_ARGS_INIT;
    a.world_size = p.world_size;
    a.total_q = int32_t(p.num_units);  // as one head per row: the same (row, head) order
    a.num_heads = 1;
    a.partial_dtype = p.partial_bf16 ? MLA_DTYPE_BF16 : MLA_DTYPE_FP32;
    a.out_dtype = MLA_DTYPE_BF16;
    a.partial_out = p.partial_out;
    a.partial_lse = p.partial_lse;
    a.out = p.out;
    a.lse = p.lse;
    a.partial_out_rank_stride = p.out_rank_stride;
    a.partial_lse_rank_stride = p.lse_rank_stride;
    (void)mla_merge_attn_states_host(&a);
}

// 16-byte aligned host buffer standing in for device memory.
template <class T>
struct Aligned {
    std::vector<unsigned char> raw;
    T* p;
    explicit Aligned(size_t n) : raw(n * sizeof(T) + 16) {
        uintptr_t x = reinterpret_cast<uintptr_t>(raw.data());
        p = reinterpret_cast<T*>((x + 15) / 16 * 16);
    }
};

}  // namespace

TEST_CASE("sm_90a merge launch on the fake runtime", "[cp][merge][fake]") {
    const std::string root = make_root("sm_90a");
    mla_context* ctx = make_ctx(root);
    const int W = 3, TQ = 7, H = 16;  // 112 units -> 14 CTAs of 8 warps
    const size_t units = size_t(TQ) * H;
    Aligned<float> po(W * units * kV), pl(W * units), lse(units);
    Aligned<uint16_t> out(units * kV);
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (size_t i = 0; i < W * units * kV; ++i) po.p[i] = u(rng);
    for (size_t i = 0; i < W * units; ++i) pl.p[i] = (i % 5 == 0) ? -kInf : 3 * u(rng);
    mla_merge_args a = MLA_MERGE_ARGS_INIT;
    a.world_size = W;
    a.total_q = TQ;
    a.num_heads = H;
    a.partial_dtype = MLA_DTYPE_FP32;
    a.partial_out = po.p;
    a.partial_lse = pl.p;
    a.out = out.p;
    a.lse = lse.p;
    void* const stream = reinterpret_cast<void*>(0x5150);
    fake_rt_set_kernel("mla_merge_bf16", emulate_merge, nullptr);
    {
        const mla_status st = mla_merge_attn_states(ctx, &a, stream);
        INFO(mla_last_error());
        REQUIRE(st == MLA_SUCCESS);
    }
    fake_rt_set_kernel("mla_merge_bf16", nullptr, nullptr);
    REQUIRE(fake_rt_launch_count() == 1);
    const fake_rt_launch_record* l = fake_rt_launch(0);
    CHECK(std::string(l->symbol) == "mla_merge_bf16");
    CHECK(l->grid[0] == 14);
    CHECK(l->grid[1] == 1);
    CHECK(l->grid[2] == 1);
    CHECK(l->block[0] == MLA_MERGE_THREADS);
    CHECK(l->block[1] == 1);
    CHECK(l->shared == 0);
    CHECK(l->stream == stream);
    CHECK(l->packed == 1);
    // mla_merge.csv launch_pdl 1: cuLaunchKernelEx with programmatic stream serialization (the
    // grid may be resident while the all-gather ahead of it finishes; the kernel waits for it)
    CHECK(l->programmatic == 1);
    REQUIRE(l->args_bytes == sizeof(mla_merge_params));
    mla_merge_params p;
    std::memcpy(&p, l->args, sizeof p);
    CHECK(p.partial_out == po.p);
    CHECK(p.partial_lse == pl.p);
    CHECK(p.out == out.p);
    CHECK(p.lse == lse.p);
    CHECK(p.num_units == int64_t(units));
    CHECK(p.out_rank_stride == int64_t(units) * kV);  // 0 in the args: back to back
    CHECK(p.lse_rank_stride == int64_t(units));
    CHECK(p.world_size == W);
    CHECK(p.partial_bf16 == 0);
    // The emulation ran the host merge on the launched params: same bytes as the direct call.
    std::vector<uint16_t> want(units * kV);
    std::vector<float> want_lse(units);
    a.out = want.data();
    a.lse = want_lse.data();
    REQUIRE(mla_merge_attn_states_host(&a) == MLA_SUCCESS);
    CHECK(std::memcmp(want.data(), out.p, want.size() * 2) == 0);
    CHECK(std::memcmp(want_lse.data(), lse.p, want_lse.size() * 4) == 0);

    // bf16 partials, lse NULL: partial_bf16 1, lse NULL in the params; 1 unit -> 1 CTA.
    a.out = out.p;
    a.lse = nullptr;
    a.partial_dtype = MLA_DTYPE_BF16;
    a.total_q = 1;
    a.num_heads = 1;
    REQUIRE(mla_merge_attn_states(ctx, &a, nullptr) == MLA_SUCCESS);
    REQUIRE(fake_rt_launch_count() == 2);
    std::memcpy(&p, fake_rt_launch(1)->args, sizeof p);
    CHECK(fake_rt_launch(1)->grid[0] == 1);
    CHECK(p.partial_bf16 == 1);
    CHECK(p.lse == nullptr);
    CHECK(p.num_units == 1);

    // rank strides as given (elements): the params carry them
    a.partial_dtype = MLA_DTYPE_FP32;
    a.partial_out_rank_stride = 2 * kV;
    a.partial_lse_rank_stride = 7;
    REQUIRE(mla_merge_attn_states(ctx, &a, nullptr) == MLA_SUCCESS);
    REQUIRE(fake_rt_launch_count() == 3);
    std::memcpy(&p, fake_rt_launch(2)->args, sizeof p);
    CHECK(p.out_rank_stride == 2 * kV);
    CHECK(p.lse_rank_stride == 7);
    a.partial_out_rank_stride = a.partial_lse_rank_stride = 0;

    // total_q 0: success, nothing launched.
    a.total_q = 0;
    CHECK(mla_merge_attn_states(ctx, &a, nullptr) == MLA_SUCCESS);
    CHECK(fake_rt_launch_count() == 3);

    // Bad input: status, nothing launched.
    auto expect = [&](mla_merge_args b, mla_status want_st, const char* what) {
        INFO(what);
        CHECK(mla_merge_attn_states(ctx, &b, nullptr) == want_st);
        INFO(mla_last_error());
        CHECK(std::string(mla_last_error()).find(what) != std::string::npos);
        CHECK(fake_rt_launch_count() == 3);
    };
    a.total_q = TQ;
    a.num_heads = H;
    a.lse = lse.p;
    mla_merge_args b = a;
    b.partial_out = reinterpret_cast<const char*>(po.p) + 8;
    expect(b, MLA_ERROR_INVALID_ARGUMENT, "16-byte aligned");
    b = a;
    b.lse = reinterpret_cast<float*>(reinterpret_cast<char*>(lse.p) + 2);
    expect(b, MLA_ERROR_INVALID_ARGUMENT, "4-byte aligned");
    b = a;
    b.partial_out_rank_stride = int64_t(units) * kV + 2;  // 8 bytes past a rank's block
    expect(b, MLA_ERROR_INVALID_ARGUMENT, "not a multiple of 16 bytes");
    b = a;
    b.out_dtype = MLA_DTYPE_FP32;  // the host merge's option; no sm_90a row
    expect(b, MLA_ERROR_NO_KERNEL, "outType");
    b = a;
    b.world_size = 0;
    expect(b, MLA_ERROR_INVALID_ARGUMENT, "world_size");
    b = a;
    b.total_q = 1 << 30;
    b.num_heads = 4;
    expect(b, MLA_ERROR_INVALID_ARGUMENT, "exceeds 2^31 - 1");
    CHECK(mla_merge_attn_states(nullptr, &a, nullptr) == MLA_ERROR_INVALID_ARGUMENT);
    CHECK(mla_merge_attn_states(ctx, nullptr, nullptr) == MLA_ERROR_INVALID_ARGUMENT);
    CHECK(fake_rt_launch_count() == 3);
    mla_context_destroy(ctx);
}

TEST_CASE("sm_90a merge on the fake runtime: wrong arch and table launch_threads", "[cp][merge][fake]") {
    float po[4 * kV] __attribute__((aligned(16))) = {};
    float pl[4] = {0, 0, 0, 0};
    uint16_t out[2 * kV] __attribute__((aligned(16)));
    mla_merge_args a = MLA_MERGE_ARGS_INIT;
    a.world_size = 2;
    a.total_q = 1;
    a.num_heads = 2;
    a.partial_out = po;
    a.partial_lse = pl;
    a.out = out;
    // each case: the status and a piece of the message, nothing launched
    auto refused = [&](mla_context* ctx, mla_status want, const char* needle) {
        INFO(needle);
        CHECK(mla_merge_attn_states(ctx, &a, nullptr) == want);
        CHECK(std::string(mla_last_error()).find(needle) != std::string::npos);
        CHECK(fake_rt_launch_count() == 0);
        mla_context_destroy(ctx);
    };
    refused(make_ctx(make_root("gfx942"), "gfx942"), MLA_ERROR_UNSUPPORTED_SHAPE, "sm_90a");
    refused(make_ctx(make_root("sm_90a", "kind,outType,launch_threads,knl_name,co_name\n"
                                         "merge,bf16,128,mla_merge_bf16,mla_merge.cubin\n")),
            MLA_ERROR_TABLE, "launch_threads 128");
    // launch_pdl other than 0 / 1
    refused(make_ctx(make_root("sm_90a", "kind,outType,launch_threads,launch_pdl,knl_name,co_name\n"
                                         "merge,bf16,256,2,mla_merge_bf16,mla_merge.cubin\n")),
            MLA_ERROR_TABLE, "launch_pdl must be 0 or 1, got 2");
    for (const char* pdl : {"0", ""}) {  // launch_pdl 0, or no such column: a plain launch
        const std::string csv = std::string(*pdl ? "kind,outType,launch_threads,launch_pdl,knl_name,co_name\n"
                                                 : "kind,outType,launch_threads,knl_name,co_name\n") +
                                "merge,bf16,256," + (*pdl ? std::string(pdl) + "," : std::string()) +
                                "mla_merge_bf16,mla_merge.cubin\n";
        mla_context* ctx = make_ctx(make_root("sm_90a", csv));
        INFO(csv);
        REQUIRE(mla_merge_attn_states(ctx, &a, nullptr) == MLA_SUCCESS);
        REQUIRE(fake_rt_launch_count() == 1);
        CHECK(fake_rt_launch(0)->programmatic == 0);
        mla_context_destroy(ctx);
    }
}
