// Counter-based Philox4x32-10 (Salmon et al., SC'11) and the fixed mapping from a pi
// sample index to its point. Written once for host and device, so that the hits of
// (samples, seed) are identical on the host backend and every GPU variant, whatever
// the launch configuration.
//
// The mapping: samples come in triples. Triple t (a 64-bit index) is one Philox4x32-10
// block, counter (lo(t), hi(t), 0, 0) and key (lo(seed), hi(seed)), whose words w0..w3
// give six 21-bit coordinates from disjoint bits (M = 2^21 - 1):
//   c0 = w0 & M, c1 = w1 & M, c2 = w2 & M, c3 = w3 & M,
//   c4 = bits 21..31 of w0, then bits 21..30 of w1 above them: ((w0 >> 21) | ((w1 >> 21) << 11)) & M,
//   c5 = the same of w2 and w3:                             ((w2 >> 21) | ((w3 >> 21) << 11)) & M.
// Sample 3t is the point (c0, c1), 3t + 1 is (c2, c3), 3t + 2 is (c4, c5). So one
// Philox evaluation (ten rounds, four 32x32 multiplies each: what bounds the kernels)
// serves three samples; only the top bits of w1 and w3 go unused.
//
// The test: coordinate x stands for the midpoint (x + 1/2) / 2^21 of its cell, and the
// point is inside when (2x + 1)^2 + (2y + 1)^2 < 2^44. Expanded, that is
// 4(x(x + 1) + y(y + 1)) + 2 < 2^44, and as the left side is 2 mod 4, exactly
// x(x + 1) + y(y + 1) < 2^42: exact integers, no floating point. The sum is below 2^43,
// so it takes two 32x32->64-bit products and one compare of its high word with 2^10.
//
// Why 21-bit midpoints are honest: every one of the 2^42 lattice points is equally
// likely, so the expected hit fraction is the share of them inside, counted exactly
// (scripts/pi-lattice-bias, a few seconds) as 3454217651952 / 2^42 =
// 0.7853981633052172: pi/4 - 9.2e-11, a relative bias of -1.2e-10 (-3.7e-10 in the
// estimate of pi). That is far below the standard error of any run that fits in time:
// 2^46 samples have a standard error of 2e-7 in pi, 500 times the bias; the bias
// reaches a tenth of the standard error only past 2^57 samples. Midpoints matter:
// cell corners (x / 2^21) would count every cell the arc crosses as inside, a bias of
// about +2^-21 in the hit fraction (+1.9e-6 in pi), ten times that standard error.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define GPK_HD __host__ __device__ __forceinline__
#else
#define GPK_HD inline
#endif

namespace gpk {

struct Philox4 {
    uint32_t v[4];
};

GPK_HD uint32_t mulhi32(uint32_t a, uint32_t b) {
#if defined(__CUDA_ARCH__)
    return __umulhi(a, b);
#else
    return static_cast<uint32_t>((static_cast<uint64_t>(a) * b) >> 32);
#endif
}

// Ten rounds of Philox4x32 on counter c with key (k0, k1).
GPK_HD Philox4 philox4x32_10(Philox4 c, uint32_t k0, uint32_t k1) {
    constexpr uint32_t M0 = 0xD2511F53u, M1 = 0xCD9E8D57u;
    constexpr uint32_t W0 = 0x9E3779B9u, W1 = 0xBB67AE85u;
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int round = 0; round < 10; ++round) {
        const uint32_t hi0 = mulhi32(M0, c.v[0]), lo0 = M0 * c.v[0];
        const uint32_t hi1 = mulhi32(M1, c.v[2]), lo1 = M1 * c.v[2];
        c = Philox4{{hi1 ^ c.v[1] ^ k0, lo1, hi0 ^ c.v[3] ^ k1, lo0}};
        k0 += W0;
        k1 += W1;
    }
    return c;
}

// Whether the point (x, y) is inside the quarter circle, the test of the Sobol rung:
// 32-bit coordinates u / 2^32, inside when x^2 + y^2 < 2^64, evaluated exactly in
// 64-bit integers: the sum is below 2^64 exactly when it does not wrap. (The Philox
// family uses the 21-bit midpoint test below.)
GPK_HD uint32_t pi_inside(uint32_t x, uint32_t y) {
    const uint64_t xx = static_cast<uint64_t>(x) * x;
    const uint64_t s = xx + static_cast<uint64_t>(y) * y;
    return s >= xx ? 1u : 0u;
}

// ---- the Philox family's samples (see the top of the file) -------------------------

constexpr int kPiCellBits = 21;
constexpr uint32_t kPiCellMask = (uint32_t(1) << kPiCellBits) - 1;

// The Philox block of triple t: samples 3t, 3t + 1 and 3t + 2.
GPK_HD Philox4 pi_triple(uint64_t triple, uint64_t seed) {
    return philox4x32_10(Philox4{{static_cast<uint32_t>(triple), static_cast<uint32_t>(triple >> 32), 0u, 0u}},
                         static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
}

// Whether the cell midpoint of (x, y), both below 2^21, is inside:
// x(x + 1) + y(y + 1) < 2^42, i.e. the high word of the 43-bit sum is below 2^10.
GPK_HD uint32_t pi_cell_inside(uint32_t x, uint32_t y) {
    const uint64_t s = static_cast<uint64_t>(x) * (x + 1) + static_cast<uint64_t>(y) * (y + 1);
    return static_cast<uint32_t>(s >> 32) < (uint32_t(1) << (2 * kPiCellBits - 32)) ? 1u : 0u;
}

// ---- the same test in single precision, for kernels short of integer multiplies ----
//
// pi_cell_f32(x, y) is d = (x + 1/2)^2 + (y + 1/2)^2 - 2^42 in single precision, from
// which pi_cell_inside's answer can be read wherever rounding cannot change it:
//   - x + 1/2 is exact: 0x4B000000 | x is the float 2^23 + x (x < 2^21), and
//     subtracting 2^23 - 1/2 is exact (Sterbenz: both lie in [2^22, 2^24));
//   - t = fma(y', y', -2^42) has an exact value in [-2^42, 0), so it is off by at most
//     half an ulp of 2^42, 2^18; d = fma(x', x', t) has an exact value in [-2^42, 2^42),
//     off by at most 2^18 more. So d is within 2^19 of the exact D;
//   - D = x(x + 1) + y(y + 1) + 1/2 - 2^42 is never 0, and it is negative exactly when
//     pi_cell_inside holds (the integer sum is then at most 2^42 - 1).
// So where |d| >= 2^21 (not pi_f32_undecided), D has d's sign and the point is inside exactly
// when d is negative (pi_f32_hit: its sign bit). The other points, those within about
// half a cell of the arc, some 7.5e-7 of them, need the exact test. Two conversions and
// two fused multiply-adds replace two 32x32->64-bit integer products.
GPK_HD float pi_bits_float(uint32_t bits) {
#if defined(__CUDA_ARCH__)
    return __uint_as_float(bits);
#else
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
#endif
}

// The float 2^23, whose last 23 bits take a coordinate: kPiF32Two23 | x is 2^23 + x.
constexpr uint32_t kPiF32Two23 = 0x4B000000u;

// pi_cell_f32 from the bits of 2^23 + x and 2^23 + y (kPiF32Two23 | x, kPiF32Two23 | y),
// for kernels that build them in one instruction with the coordinate's mask.
GPK_HD float pi_cell_f32_bits(uint32_t xbits, uint32_t ybits) {
    const float fx = pi_bits_float(xbits) - 8388607.5f, fy = pi_bits_float(ybits) - 8388607.5f;
#if defined(__CUDA_ARCH__)
    return __fmaf_rn(fx, fx, __fmaf_rn(fy, fy, -0x1p42f));
#else
    return std::fma(fx, fx, std::fma(fy, fy, -0x1p42f));
#endif
}

GPK_HD float pi_cell_f32(uint32_t x, uint32_t y) { return pi_cell_f32_bits(x | kPiF32Two23, y | kPiF32Two23); }

// Whether d = pi_cell_f32(x, y) leaves the point undecided: |d| < 2^21.
GPK_HD bool pi_f32_undecided(float d) {
#if defined(__CUDA_ARCH__)
    return fabsf(d) < 0x1p21f;
#else
    return std::fabs(d) < 0x1p21f;
#endif
}

// Where d decides it: 1 when the point is inside (d < 0), else 0.
GPK_HD uint32_t pi_f32_hit(float d) {
    uint32_t bits;
#if defined(__CUDA_ARCH__)
    bits = __float_as_uint(d);
#else
    std::memcpy(&bits, &d, sizeof bits);
#endif
    return bits >> 31;
}

// The third coordinate made of two words: bits 21..31 of a, then bits 21..30 of b.
GPK_HD uint32_t pi_top_bits(uint32_t a, uint32_t b) {
    return ((a >> kPiCellBits) | ((b >> kPiCellBits) << (32 - kPiCellBits))) & kPiCellMask;
}

// Hits of the three samples of a triple.
GPK_HD uint32_t pi_triple_hits(const Philox4 &r) {
    return pi_cell_inside(r.v[0] & kPiCellMask, r.v[1] & kPiCellMask) +
           pi_cell_inside(r.v[2] & kPiCellMask, r.v[3] & kPiCellMask) +
           pi_cell_inside(pi_top_bits(r.v[0], r.v[1]), pi_top_bits(r.v[2], r.v[3]));
}

// Whether one sample (by its index) is inside.
GPK_HD uint32_t pi_sample_inside(uint64_t sample, uint64_t seed) {
    const Philox4 r = pi_triple(sample / 3, seed);
    switch (sample % 3) {
        case 0: return pi_cell_inside(r.v[0] & kPiCellMask, r.v[1] & kPiCellMask);
        case 1: return pi_cell_inside(r.v[2] & kPiCellMask, r.v[3] & kPiCellMask);
        default: return pi_cell_inside(pi_top_bits(r.v[0], r.v[1]), pi_top_bits(r.v[2], r.v[3]));
    }
}

// ---- ranges -----------------------------------------------------------------------

// Samples [first, first + count) as the whole triples [first_triple, end_triple) plus
// at most two leading samples (a range starting inside a triple) and at most two
// trailing ones (one ending inside a triple). A range inside one triple, or with no
// whole triple, is all edges: up to four samples. The edges' hits are counted here,
// one sample at a time, so every backend splits a range the same way.
struct PiTriples {
    uint64_t first_triple;
    uint64_t end_triple;
    uint32_t edge_hits;
};

// Needs first + count <= 2^64 - 1 (gpk_pi_range's rule), so the end never wraps.
inline PiTriples pi_split_range(uint64_t first, uint64_t count, uint64_t seed) {
    const uint64_t end = first + count;
    // Leading samples: up to the next multiple of 3, within the range. Trailing: back
    // from the end to the multiple of 3 below it, within what the leading ones left.
    // When either is cut short the range has no whole triple, and the middle
    // [first + lead, end - trail) is empty; otherwise both its ends are multiples of 3.
    const uint64_t to_boundary = (3 - first % 3) % 3;
    const uint64_t lead = to_boundary < count ? to_boundary : count;
    const uint64_t trail = end % 3 < count - lead ? end % 3 : count - lead;
    PiTriples r{(first + lead) / 3, (end - trail) / 3, 0};
    for (uint64_t s = first; s < first + lead; ++s) r.edge_hits += pi_sample_inside(s, seed);
    for (uint64_t s = end - trail; s < end; ++s) r.edge_hits += pi_sample_inside(s, seed);
    return r;
}

}  // namespace gpk
