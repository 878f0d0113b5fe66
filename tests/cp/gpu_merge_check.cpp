// gpu_merge_check.cpp - the sm_90a merge kernel (mla_merge_attn_states) on a real GPU against the
// host merge (mla_merge_attn_states_host, float64) over random partials, through the public API
// only. Partial LSEs include -inf (the rank saw no key), +inf and NaN (foreign "empty" markers),
// whole rows of them, and gaps of 1000; the O of every such partial is NaN, so a kernel that
// adds one in fails (the kernel may load it: for W <= 32 it loads the first two ranks' O with the
// LSEs). W in 1..40 (up to 32: one LSE per lane, W = 32 and 17 included; above 32: the lane
// loop), fp32 and bf16 partials, lse NULL, and
// packed partials: one buffer of per-rank [out | lse | padding] blocks (what an all-gather of each
// rank's out and lse bytes receives) merged through the rank strides.
// Prints one "PASS gpu_merge ..." or "FAIL gpu_merge ..." line; exit 0 / 1, 77 without a
// CUDA device or on a non-sm_90a device. Runs in well under a second of GPU time.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gpu_context.h"
#include "mla_c_api.h"

namespace {

constexpr int kV = 512;
const float kInf = std::numeric_limits<float>::infinity();

uint16_t to_bf16(float f) {  // round to nearest even (finite and NaN inputs)
    uint32_t u;
    std::memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40);
    return uint16_t((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
float from_bf16(uint16_t h) {
    const uint32_t u = uint32_t(h) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

struct Case {
    int W, total_q, heads;
    bool bf16_in, want_lse;
    bool packed = false;  // one buffer of per-rank [out | lse | pad to 16 bytes] blocks
};

std::string run_case(mla_context* ctx, const Case& c, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    const size_t units = size_t(c.total_q) * c.heads, n_po = size_t(c.W) * units * kV;
    std::vector<float> po(n_po), pl(size_t(c.W) * units);
    for (size_t i = 0; i < pl.size(); ++i) {
        const unsigned r = rng() % 100;
        pl[i] = r < 20 ? -kInf : r < 23 ? kInf : r < 26 ? std::nanf("") : 8 * u(rng);
        if (r >= 26 && r < 30) pl[i] += (rng() % 2 ? 1000.0f : -1000.0f);
    }
    for (size_t x = 0; x < units; x += 7)  // every 7th unit: no partial has a key
        for (int k = 0; k < c.W; ++k) pl[k * units + x] = k % 3 == 1 ? kInf : -kInf;
    for (size_t i = 0; i < n_po; ++i) {
        const size_t k_u = i / kV;
        po[i] = std::isfinite(pl[k_u]) ? u(rng) : std::nanf("");
    }
    std::vector<uint16_t> pob;
    if (c.bf16_in) {
        pob.resize(n_po);
        for (size_t i = 0; i < n_po; ++i) pob[i] = to_bf16(po[i]);
    }
    // host merge
    std::vector<uint16_t> want(units * kV);
    std::vector<float> want_lse(units);
    mla_merge_args a = MLA_MERGE_ARGS_INIT;
    a.world_size = c.W;
    a.total_q = c.total_q;
    a.num_heads = c.heads;
    a.partial_dtype = c.bf16_in ? MLA_DTYPE_BF16 : MLA_DTYPE_FP32;
    a.out_dtype = MLA_DTYPE_BF16;
    a.partial_out = c.bf16_in ? static_cast<const void*>(pob.data()) : po.data();
    a.partial_lse = pl.data();
    a.out = want.data();
    a.lse = want_lse.data();
    if (mla_merge_attn_states_host(&a) != MLA_SUCCESS) return std::string("host merge: ") + mla_last_error();
    // device; packed: rank k's block at k * blk bytes, its lse after its out
    const size_t eb = c.bf16_in ? 2 : 4, out_b = units * kV * eb, blk = (out_b + units * 4 + 31) / 16 * 16;
    std::vector<unsigned char> pk;
    if (c.packed) {
        pk.assign(c.W * blk, 0xFF);  // NaN padding
        for (int k = 0; k < c.W; ++k) {
            std::memcpy(&pk[k * blk], static_cast<const char*>(a.partial_out) + k * out_b, out_b);
            std::memcpy(&pk[k * blk + out_b], &pl[k * units], units * 4);
        }
    }
    const size_t po_bytes = c.packed ? pk.size() : n_po * eb;
    void *d_po = nullptr, *d_pl = nullptr, *d_out = nullptr, *d_lse = nullptr;
    std::string err;
    auto ok = [&](mla_status st, const char* what) {
        if (st != MLA_SUCCESS && err.empty()) err = std::string(what) + ": " + mla_last_error();
        return st == MLA_SUCCESS;
    };
    if (ok(mla_device_malloc(ctx, &d_po, po_bytes), "malloc") &&
        ok(mla_device_malloc(ctx, &d_pl, pl.size() * 4), "malloc") &&
        ok(mla_device_malloc(ctx, &d_out, units * kV * 2), "malloc") &&
        ok(mla_device_malloc(ctx, &d_lse, units * 4), "malloc") &&
        ok(mla_memcpy_htod(ctx, d_po, c.packed ? pk.data() : a.partial_out, po_bytes, nullptr), "htod") &&
        ok(mla_memcpy_htod(ctx, d_pl, pl.data(), pl.size() * 4, nullptr), "htod") &&
        ok(mla_memset_d8(ctx, d_out, 0xFF, units * kV * 2, nullptr), "memset") &&
        ok(mla_memset_d8(ctx, d_lse, 0xFF, units * 4, nullptr), "memset")) {
        mla_merge_args g = a;
        g.partial_out = d_po;
        g.partial_lse = static_cast<const float*>(d_pl);
        if (c.packed) {
            g.partial_lse = reinterpret_cast<const float*>(static_cast<const char*>(d_po) + out_b);
            g.partial_out_rank_stride = int64_t(blk / eb);
            g.partial_lse_rank_stride = int64_t(blk / 4);
        }
        g.out = d_out;
        g.lse = c.want_lse ? static_cast<float*>(d_lse) : nullptr;
        std::vector<uint16_t> got(units * kV);
        std::vector<float> got_lse(units);
        if (ok(mla_merge_attn_states(ctx, &g, nullptr), "mla_merge_attn_states") &&
            ok(mla_stream_synchronize(ctx, nullptr), "sync") &&
            ok(mla_memcpy_dtoh(ctx, got.data(), d_out, got.size() * 2, nullptr), "dtoh") &&
            ok(mla_memcpy_dtoh(ctx, got_lse.data(), d_lse, got_lse.size() * 4, nullptr), "dtoh")) {
            for (size_t i = 0; i < got.size() && err.empty(); ++i) {
                const float x = from_bf16(got[i]), y = from_bf16(want[i]);
                if (!(std::fabs(x - y) <= 8e-3f * std::fabs(y) + 1e-5f) || (y == 0 && got[i] != want[i]))
                    err = "out[" + std::to_string(i) + "] = " + std::to_string(x) + ", host " + std::to_string(y);
            }
            for (size_t i = 0; i < units && err.empty(); ++i) {
                if (!c.want_lse) {
                    uint32_t bits;
                    std::memcpy(&bits, &got_lse[i], 4);
                    if (bits != 0xFFFFFFFFu) err = "lse written although NULL";
                    continue;
                }
                const float x = got_lse[i], y = want_lse[i];
                const bool good = std::isinf(y) ? x == y : std::fabs(x - y) <= 1e-5f * (1 + std::fabs(y));
                if (!good) err = "lse[" + std::to_string(i) + "] = " + std::to_string(x) + ", host " + std::to_string(y);
            }
        }
    }
    for (void* p : {d_po, d_pl, d_out, d_lse})
        if (p) mla_device_free(ctx, p);
    return err;
}

}  // namespace

int main() {
    mla_context* ctx = nullptr;
    if (const int rc = open_gpu_context("gpu_merge", /*need_sm90=*/true, &ctx)) return rc;
    const Case cases[] = {
        {1, 5, 16, false, true},   {2, 37, 16, false, true},  {2, 37, 16, true, true},
        {3, 64, 128, false, false}, {4, 33, 128, true, true}, {8, 17, 16, false, true},
        {2, 1, 1, true, true},     {40, 3, 16, false, true},  {33, 2, 128, true, true},
        {2, 256, 128, true, true},  {32, 5, 16, false, true},  {17, 9, 128, true, true},
        {2, 1, 16, false, true, true}, {3, 7, 128, true, true, true}, {40, 3, 16, false, false, true},
    };
    int n = 0, failed = 0;
    for (const Case& c : cases) {
        const std::string e = run_case(ctx, c, 1234u + n);
        ++n;
        if (!e.empty()) {
            ++failed;
            std::printf("  case W=%d total_q=%d heads=%d %s lse=%d packed=%d: %s\n", c.W, c.total_q, c.heads,
                        c.bf16_in ? "bf16" : "fp32", int(c.want_lse), int(c.packed), e.c_str());
        }
    }
    // total_q 0: nothing to do.
    mla_merge_args z = MLA_MERGE_ARGS_INIT;
    z.world_size = 2;
    if (mla_merge_attn_states(ctx, &z, nullptr) != MLA_SUCCESS) {
        ++failed;
        std::printf("  total_q 0: %s\n", mla_last_error());
    }
    mla_context_destroy(ctx);
    if (failed) {
        std::printf("FAIL gpu_merge: %d of %d cases differ from the host merge\n", failed, n + 1);
        return 1;
    }
    std::printf("PASS gpu_merge: %d cases equal the host merge (bf16 rounding)\n", n + 1);
    return 0;
}
