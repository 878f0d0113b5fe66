// test_tool_e4m3.cpp - tools/mla/decode_problem.h's fp8 data helpers, which every fp8 GPU check
// (mla run, the GPU decode test) builds its KV cache and queries with: f32_to_e4m3, the bit-level
// round-to-nearest-even encoder, against a nearest-code search over the 127 finite e4m3fn codes
// (ties to the even code, saturation at +-448), on every rounding boundary and a dense sweep.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <vector>

#include "../../tools/mla/decode_problem.h"

using namespace mla_tool;

namespace {

// The definition: the nearest of the finite codes by value, ties to the even code.
uint8_t nearest_code(float f) {
    if (std::isnan(f)) return 0x7f;
    const uint8_t sign = f < 0 ? 0x80 : 0;
    const double a = std::min<double>(std::fabs(f), 448.0);
    int best = 0;
    double bd = 1e30;
    for (int c = 0; c < 127; ++c) {
        const double d = std::fabs(double(e4m3_to_f32(uint8_t(c))) - a);
        if (d < bd || (d == bd && (c & 1) == 0)) {
            bd = d;
            best = c;
        }
    }
    return uint8_t(best) | sign;
}

float from_bits(uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

}  // namespace

TEST_CASE("f32_to_e4m3 rounds to the nearest e4m3fn code, ties to even", "[tool][fp8]") {
    // exact values of every code map back to the code (and -0 to +0, as the tool has always done)
    for (int c = 0; c < 127; ++c) {
        CHECK(f32_to_e4m3(e4m3_to_f32(uint8_t(c))) == c);
        if (c) CHECK(f32_to_e4m3(-e4m3_to_f32(uint8_t(c))) == (c | 0x80));
    }
    CHECK(f32_to_e4m3(-0.0f) == 0);
    CHECK(f32_to_e4m3(NAN) == 0x7f);
    CHECK(f32_to_e4m3(-NAN) == 0x7f);
    CHECK(f32_to_e4m3(-1e-7f) == 0x80);  // a negative that rounds to zero keeps its sign
    CHECK(f32_to_e4m3(1e-7f) == 0);
    CHECK(f32_to_e4m3(INFINITY) == 0x7e);
    CHECK(f32_to_e4m3(-INFINITY) == 0xfe);
    CHECK(f32_to_e4m3(1000.f) == 0x7e);
    // midpoints between neighbouring codes (ties: to the even code) and just either side of them
    long n = 0, bad = 0;
    for (int c = 0; c < 126; ++c) {
        const float lo = e4m3_to_f32(uint8_t(c)), hi = e4m3_to_f32(uint8_t(c + 1));
        const float mid = 0.5f * (lo + hi);  // exact: codes have 4 significant bits
        for (const float x : {mid, std::nextafter(mid, 0.f), std::nextafter(mid, 1000.f)}) {
            for (const float v : {x, -x}) {
                ++n;
                if (f32_to_e4m3(v) != nearest_code(v)) ++bad;
            }
        }
    }
    // a sweep of float bit patterns from 0 to 1000 (both signs), stride chosen to hit every
    // exponent and many mantissa patterns
    for (uint64_t u = 0; u < 0x447a0000ull; u += 104729) {
        for (const uint32_t s : {0u, 0x80000000u}) {
            const float v = from_bits(uint32_t(u) | s);
            ++n;
            if (f32_to_e4m3(v) != nearest_code(v)) ++bad;
        }
    }
    INFO(n << " values");
    CHECK(bad == 0);
    CHECK(n > 20000);
}
