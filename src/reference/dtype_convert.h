// dtype_convert.h - scalar conversions between float and the 16/8-bit storage types of libmla
// (bf16, fp16, fp8 e4m3fn, fp8 e4m3fnuz), for the CPU reference, tests and tools. Header only,
// exact: decoding is bit manipulation, encoding rounds to nearest even.
//  - bf16 / fp16: NaN stays NaN; fp16 overflows to +-inf.
//  - e4m3fn (OCP, NVIDIA / gfx950 / gfx1250): bias 7, max 448, NaN = 0x7F / 0xFF, no inf.
//  - e4m3fnuz (gfx942): bias 8, max 240, NaN = 0x80, no inf, no negative zero.
//  - fp8 encoding saturates finite values beyond the max to +-max ("satfinite"); NaN -> NaN.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

#include "mla_c_api.h"

namespace mla::dt {

inline uint32_t f32_bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}
inline float bits_f32(uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

inline float bf16_to_f32(uint16_t h) { return bits_f32(uint32_t(h) << 16); }
inline uint16_t f32_to_bf16(float f) {
    const uint32_t u = f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40);  // quiet NaN
    return uint16_t((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

inline float f16_to_f32(uint16_t h) {
    const uint32_t sign = uint32_t(h & 0x8000u) << 16;
    const int exp = (h >> 10) & 0x1f;
    const uint32_t man = h & 0x3ffu;
    if (exp == 0) {
        const float v = std::ldexp(float(man), -24);
        return (h & 0x8000u) ? -v : v;
    }
    if (exp == 31) return bits_f32(sign | 0x7f800000u | (man << 13));
    return bits_f32(sign | (uint32_t(exp - 15 + 127) << 23) | (man << 13));
}
inline uint16_t f32_to_f16(float f) {
    const uint16_t sign = (f32_bits(f) >> 16) & 0x8000u;
    const float a = std::fabs(f);
    if (std::isnan(f)) return uint16_t(sign | 0x7e00u);
    if (a >= 65520.0f) return uint16_t(sign | 0x7c00u);  // rounds to inf
    if (a < std::ldexp(1.0f, -14)) {                      // subnormal (or zero)
        const float q = std::nearbyint(a * std::ldexp(1.0f, 24));
        return uint16_t(sign | uint16_t(q));               // q == 1024 is the min normal
    }
    int e;
    std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
    const float q = std::nearbyint(std::ldexp(a, 11 - e));  // in [1024, 2048]
    uint32_t qi = uint32_t(q), ex = uint32_t(e - 1 + 15);
    if (qi == 2048) {
        qi = 1024;
        ++ex;
    }
    return uint16_t(sign | (ex << 10) | (qi - 1024));
}

// fp8 e4m3 family. fnuz selects e4m3fnuz.
inline float fp8_to_f32(uint8_t v, bool fnuz) {
    const int bias = fnuz ? 8 : 7;
    if (fnuz ? v == 0x80 : (v & 0x7f) == 0x7f) return std::nanf("");
    const int exp = (v >> 3) & 0xf, man = v & 7;
    const float a = exp == 0 ? std::ldexp(float(man), 1 - bias - 3)
                             : std::ldexp(float(8 + man), exp - bias - 3);
    return (v & 0x80) ? -a : a;
}
inline uint8_t f32_to_fp8(float f, bool fnuz) {
    if (std::isnan(f)) return fnuz ? 0x80 : 0x7f;
    const int bias = fnuz ? 8 : 7;
    const uint8_t sign = std::signbit(f) ? 0x80 : 0;
    const float a = std::fabs(f);
    const float maxv = fnuz ? 240.0f : 448.0f;
    const uint8_t maxcode = fnuz ? 0x7f : 0x7e;
    uint8_t code;
    if (a >= maxv) {
        code = maxcode;
    } else if (a < std::ldexp(1.0f, 1 - bias)) {  // subnormal: steps of 2^(1-bias-3)
        code = uint8_t(std::nearbyint(std::ldexp(a, bias + 2)));  // 8 = the min normal
    } else {
        int e;
        std::frexp(a, &e);
        int ex = e - 1;                                            // a in [2^ex, 2^(ex+1))
        int q = int(std::nearbyint(std::ldexp(a, 3 - ex)));        // in [8, 16]
        if (q == 16) {
            q = 8;
            ++ex;
        }
        const int c = ((ex + bias) << 3) | (q - 8);
        code = uint8_t(c > maxcode ? maxcode : c);
    }
    if (fnuz && code == 0) return 0;  // no negative zero in fnuz
    return uint8_t(sign | code);
}

// Element i of a buffer of dtype d as float (bf16, fp16, fp8, fp8_fnuz, fp32; others 0).
inline float load(mla_dtype d, const void* base, int64_t i) {
    switch (d) {
    case MLA_DTYPE_BF16: return bf16_to_f32(static_cast<const uint16_t*>(base)[i]);
    case MLA_DTYPE_FP16: return f16_to_f32(static_cast<const uint16_t*>(base)[i]);
    case MLA_DTYPE_FP8_E4M3FN: return fp8_to_f32(static_cast<const uint8_t*>(base)[i], false);
    case MLA_DTYPE_FP8_E4M3FNUZ: return fp8_to_f32(static_cast<const uint8_t*>(base)[i], true);
    case MLA_DTYPE_FP32: return static_cast<const float*>(base)[i];
    default: return 0.0f;
    }
}

// Stores v (rounded to nearest even) as element i of a buffer of dtype d.
inline void store(mla_dtype d, void* base, int64_t i, float v) {
    switch (d) {
    case MLA_DTYPE_BF16: static_cast<uint16_t*>(base)[i] = f32_to_bf16(v); break;
    case MLA_DTYPE_FP16: static_cast<uint16_t*>(base)[i] = f32_to_f16(v); break;
    case MLA_DTYPE_FP8_E4M3FN: static_cast<uint8_t*>(base)[i] = f32_to_fp8(v, false); break;
    case MLA_DTYPE_FP8_E4M3FNUZ: static_cast<uint8_t*>(base)[i] = f32_to_fp8(v, true); break;
    case MLA_DTYPE_FP32: static_cast<float*>(base)[i] = v; break;
    default: break;
    }
}

// v rounded through dtype d and back (bf16(v), fp8(v), ...).
inline float round_to(mla_dtype d, float v) {
    unsigned char tmp[4];
    store(d, tmp, 0, v);
    return load(d, tmp, 0);
}

}  // namespace mla::dt
