// Bit-exact conversions between float and the 2-byte dtypes, written on the bits so
// that the host backend (the reference), the tests' helpers and device code share one
// definition, free of any compiler's _Float16 or CUDA's __half:
//  - GPK_F16 is IEEE binary16: 1 sign, 5 exponent (bias 15), 10 mantissa bits;
//  - GPK_BF16 is bfloat16, the upper 16 bits of an IEEE binary32.
// Widening to float is exact (every value of either type is a float). Narrowing rounds
// to nearest, ties to even, as IEEE 754 and the contract's "one rounding" require:
// overflow becomes infinity, values below half the smallest subnormal become a signed
// zero, NaN stays NaN (quiet, with as much of its payload as fits) and infinities stay
// infinities.
//
// A double narrowed through float would be rounded twice, which can miss the nearest
// 16-bit value at a tie; float_round_to_odd() makes the intermediate float safe
// (round to odd, then to a format of at most 22 bits of significand, equals one
// correct rounding), so that double_to_half() and double_to_bf16() round once.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define GPK_HALF_FN __host__ __device__ inline
#else
#define GPK_HALF_FN inline
#endif

namespace gpk {

GPK_HALF_FN uint32_t float_bits(float f) {
#if defined(__CUDA_ARCH__)
    return __float_as_uint(f);
#else
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
#endif
}

GPK_HALF_FN float bits_float(uint32_t u) {
#if defined(__CUDA_ARCH__)
    return __uint_as_float(u);
#else
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
#endif
}

// ---- binary16 ---------------------------------------------------------------------

GPK_HALF_FN float half_to_float(uint16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    const uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t man = h & 0x3ffu;
    if (exp == 0x1f) return bits_float(sign | 0x7f800000u | (man << 13));  // Inf, NaN (payload kept)
    if (exp != 0) return bits_float(sign | ((exp + 112u) << 23) | (man << 13));
    if (man == 0) return bits_float(sign);
    // Subnormal: man * 2^-24. Shift the leading 1 up to the implicit bit's place.
    uint32_t e = 113;  // float exponent of 2^-14, the subnormals' scale
    while ((man & 0x400u) == 0) {
        man <<= 1;
        --e;
    }
    return bits_float(sign | (e << 23) | ((man & 0x3ffu) << 13));
}

GPK_HALF_FN uint16_t float_to_half(float f) {
    const uint32_t x = float_bits(f);
    const uint32_t sign = (x >> 16) & 0x8000u;
    const uint32_t ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u) {
        if (ax == 0x7f800000u) return static_cast<uint16_t>(sign | 0x7c00u);
        // NaN: quiet, the payload's top bits kept.
        return static_cast<uint16_t>(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
    }
    // 65520 lies halfway between the largest half, 65504 (odd mantissa), and 2^16:
    // it and everything above round to infinity.
    if (ax >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);
    if (ax < 0x38800000u) {
        // Below 2^-14: a subnormal half, in units of 2^-24. At most 2^-25 (the tie
        // with zero, which is even) rounds to zero.
        if (ax <= 0x33000000u) return static_cast<uint16_t>(sign);
        const uint32_t e = ax >> 23;                      // 102 .. 112
        const uint32_t man = (ax & 0x7fffffu) | 0x800000u;
        const uint32_t shift = 126u - e;                  // 14 .. 24
        uint32_t q = man >> shift;
        const uint32_t rest = man & ((1u << shift) - 1u), half = 1u << (shift - 1u);
        if (rest > half || (rest == half && (q & 1u))) ++q;  // may carry into the smallest normal
        return static_cast<uint16_t>(sign | q);
    }
    // Normal: rebias the exponent (127 - 15 = 112) and round off 13 mantissa bits; a
    // carry out of the mantissa moves to the next binade, as it should.
    const uint32_t r = ax - 0x38000000u;
    uint32_t q = r >> 13;
    const uint32_t rest = r & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (q & 1u))) ++q;
    return static_cast<uint16_t>(sign | q);
}

// ---- bfloat16 ---------------------------------------------------------------------

GPK_HALF_FN float bf16_to_float(uint16_t b) { return bits_float(static_cast<uint32_t>(b) << 16); }

GPK_HALF_FN uint16_t float_to_bf16(float f) {
    const uint32_t x = float_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x0040u);  // NaN, quieted
    // Adding 0x7fff plus the lowest kept bit rounds to nearest, ties to even; a carry
    // runs into the exponent, and past the largest finite value to infinity.
    return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

// ---- from double, rounded once ----------------------------------------------------

// d rounded to float with round to odd: truncated toward zero, its last bit set when
// anything was cut off. Keeps the information a later rounding to at most 22 bits needs.
GPK_HALF_FN float float_round_to_odd(double d) {
    const float f = static_cast<float>(d);
    if (static_cast<double>(f) == d || d != d) return f;
    uint32_t u = float_bits(f);
    const double af = f < 0 ? -static_cast<double>(f) : static_cast<double>(f);
    const double ad = d < 0 ? -d : d;
    if (af > ad) --u;  // step toward zero (the magnitude is in the low 31 bits)
    return bits_float(u | 1u);
}

GPK_HALF_FN uint16_t double_to_half(double d) { return float_to_half(float_round_to_odd(d)); }
GPK_HALF_FN uint16_t double_to_bf16(double d) { return float_to_bf16(float_round_to_odd(d)); }

// The 16-bit dtype `bits` widened to float, and a float narrowed to it; `bf16` picks
// GPK_BF16 over GPK_F16.
GPK_HALF_FN float half_bits_to_float(uint16_t bits, bool bf16) { return bf16 ? bf16_to_float(bits) : half_to_float(bits); }
GPK_HALF_FN uint16_t double_to_half_bits(double d, bool bf16) { return bf16 ? double_to_bf16(d) : double_to_half(d); }

}  // namespace gpk

#undef GPK_HALF_FN
