// The decode bodies' tile-row division (codeobjects/sm_90a/common/small_div.cuh, MLA_DIV_RCP):
// divmod_rd with any reciprocal of d within 1 ulp (rcp.approx's bound; the kernels use
// __fdividef(1, d)) gives a / d and a % d exactly for the rows it is used on (< 2^20), here for
// every row below 4096 with d = 1 .. 1024 and near 2^20 and the header's bound for sampled d.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>

#include "../../codeobjects/sm_90a/common/small_div.cuh"

namespace {

// The three reciprocals a 1-ulp approximation of 1 / d may return.
void reciprocals(int d, float (&r)[3]) {
    const float e = 1.0f / static_cast<float>(d);
    r[0] = std::nextafter(e, 0.0f);
    r[1] = e;
    r[2] = std::nextafter(e, 2.0f);
}

// How many a in [a0, a1) divmod_rd gets wrong for divisor d with any of the three reciprocals.
int wrong(int d, int a0, int a1) {
    float r[3];
    reciprocals(d, r);
    int bad = 0;
    for (int a = a0; a < a1; ++a)
        for (float rd : r) {
            const mla_div::DivMod m = mla_div::divmod_rd(a, d, rd);
            if (m.q != a / d || m.r != a % d) ++bad;
        }
    return bad;
}

}  // namespace

TEST_CASE("divmod_rd: every tile row below 4096 for kernel_heads 1 .. 1024", "[small_div]") {
    int bad = 0;
    for (int d = 1; d <= 1024; ++d) bad += wrong(d, 0, 4096);
    CHECK(bad == 0);
}

TEST_CASE("divmod_rd: rows up to 2^20 at the multiples of d, and the header's bound", "[small_div]") {
    const int ds[] = {1, 3, 5, 7, 12, 16, 20, 24, 40, 64, 96, 100, 127, 128, 1000, 4095, 65537, (1 << 23) - 1};
    int bad = 0;
    for (int d : ds) {
        for (int a = 0; a < (1 << 20); a += (d > 4096 ? 1 : 4096 / d + 1) * d)  // each multiple's neighbours
            bad += wrong(d, a > 0 ? a - 1 : 0, a + 2 < (1 << 20) ? a + 2 : (1 << 20));
        bad += wrong(d, (1 << 20) - 3000, 1 << 20);  // the top of the range
    }
    CHECK(bad == 0);
    // the bound is not slack to be widened silently: past 2^23 / 3 a 1-ulp reciprocal goes wrong
    // for some d (the rows the kernels divide are < 256)
    int beyond = 0;
    for (int d = 3; d < 400 && beyond == 0; ++d) beyond += wrong(d, (1 << 23) - 2 * d, 1 << 23);
    CHECK(beyond > 0);
}
