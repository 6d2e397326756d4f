// Counter-based Philox4x32-10 (Salmon et al., SC'11) and the fixed mapping from a pi
// sample index to its point. Written once for host and device, so that the hits of
// (samples, seed) are identical on the host backend and every GPU variant, whatever
// the launch configuration.
#pragma once

#include <cstdint>

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

// Samples come in pairs: pair p is Philox(counter = (lo(p), hi(p), 0, 0), key = seed);
// sample 2p is the point (v0, v1), sample 2p + 1 the point (v2, v3), each coordinate
// u / 2^32. The point is inside when u^2 + v^2 < 2^64, evaluated exactly in 64-bit
// integers: the sum is below 2^64 exactly when it does not wrap.
GPK_HD Philox4 pi_pair(uint64_t pair, uint64_t seed) {
    return philox4x32_10(Philox4{{static_cast<uint32_t>(pair), static_cast<uint32_t>(pair >> 32), 0u, 0u}},
                         static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
}

GPK_HD uint32_t pi_inside(uint32_t x, uint32_t y) {
    const uint64_t xx = static_cast<uint64_t>(x) * x;
    const uint64_t s = xx + static_cast<uint64_t>(y) * y;
    return s >= xx ? 1u : 0u;
}

// Hits of both samples of a pair.
GPK_HD uint32_t pi_pair_hits(const Philox4 &r) { return pi_inside(r.v[0], r.v[1]) + pi_inside(r.v[2], r.v[3]); }

// Whether one sample (by its index) is inside.
GPK_HD uint32_t pi_sample_inside(uint64_t sample, uint64_t seed) {
    const Philox4 r = pi_pair(sample >> 1, seed);
    return (sample & 1u) ? pi_inside(r.v[2], r.v[3]) : pi_inside(r.v[0], r.v[1]);
}

}  // namespace gpk
