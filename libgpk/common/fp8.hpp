// Bit-exact decoding of OCP FP8 (GPK_F8E4M3, GPK_F8E5M2) to float, on the bits, so
// that the host backend (the reference), the tests and device code share one
// definition, free of any compiler's or CUDA's FP8 types:
//  - E4M3: 1 sign, 4 exponent (bias 7), 3 mantissa bits; no infinities; S.1111.111 is
//    NaN, so the largest finite value is S.1111.110 = 448; exponent 0 is subnormal
//    (m * 2^-9).
//  - E5M2: 1 sign, 5 exponent (bias 15), 2 mantissa bits, IEEE-like: exponent 31 is
//    infinity (m == 0) or NaN; exponent 0 is subnormal (m * 2^-16).
// Every value of either format is a float, and so is the product of any two (at most
// 8 significant bits, exponents well inside F32's range): decoding and multiplying are
// exact.
#pragma once

#include "half.hpp"

#include <cstdint>

#if defined(__CUDACC__)
#define GPK_FP8_FN __host__ __device__ inline
#else
#define GPK_FP8_FN inline
#endif

namespace gpk {

// 2^e for e in F32's normal range, built on the bits (exact, no libm).
GPK_FP8_FN float pow2f(int e) { return bits_float(static_cast<uint32_t>(e + 127) << 23); }

GPK_FP8_FN float e4m3_to_float(uint8_t b) {
    const int e = (b >> 3) & 0xF, m = b & 7;
    const float sign = (b & 0x80) ? -1.0f : 1.0f;
    if (e == 15 && m == 7) return bits_float((b & 0x80 ? 0x80000000u : 0u) | 0x7FC00000u);  // NaN
    if (e == 0) return sign * static_cast<float>(m) * pow2f(-9);
    return sign * static_cast<float>(8 + m) * pow2f(e - 7 - 3);
}

GPK_FP8_FN float e5m2_to_float(uint8_t b) {
    const int e = (b >> 2) & 0x1F, m = b & 3;
    const float sign = (b & 0x80) ? -1.0f : 1.0f;
    if (e == 31) return m == 0 ? sign * bits_float(0x7F800000u) : bits_float((b & 0x80 ? 0x80000000u : 0u) | 0x7FC00000u);
    if (e == 0) return sign * static_cast<float>(m) * pow2f(-16);
    return sign * static_cast<float>(4 + m) * pow2f(e - 15 - 2);
}

// An FP8 element by its dtype: e5m2 false for GPK_F8E4M3, true for GPK_F8E5M2.
GPK_FP8_FN float fp8_to_float(uint8_t b, bool e5m2) { return e5m2 ? e5m2_to_float(b) : e4m3_to_float(b); }

}  // namespace gpk

#undef GPK_FP8_FN
