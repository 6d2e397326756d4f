// scripts/pi-probe.cu: what bounds pi's persistent rung on the GPU at hand. Times, over
// the same 2^N samples, the persistent loop of libgpk/cuda/pi/05_persistent.cu with the
// inside test done in several ways -- the exact integer test (rung 5 before it took the
// single-precision filter), the generator alone (no test), tests in double and single
// precision, a single-precision filter with a vote per group of triples and an exact
// redo, mixes -- across chains, groups, unroll, blocks per SM and block sizes, next to
// the simple fused kernel of the cuRAND device API (apps/bench/pi_reference.cuh, the
// one gpk-bench times) as the reference. Every variant of the library's
// definition must count the same hits ("same"), and the integer test is checked
// against the host over one small launch.
// Build and run on a GPU machine:
//   nvcc -O3 -std=c++17 -arch=sm_90 -I libgpk scripts/pi-probe.cu -o pi-probe
//   ./pi-probe [log2 samples (32)] [repeats (11)] [variants to run, e.g. 0,3 (all)]
// -DPI_PROBE_COUNT_HOT_PATH drops the exact redo, to count the hot path's instructions.
#include "../apps/bench/pi_reference.cuh"
#include "common/philox.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#define CK(x)                                                                                    \
    do {                                                                                         \
        cudaError_t e_ = (x);                                                                    \
        if (e_ != cudaSuccess) {                                                                 \
            std::printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_));               \
            std::exit(1);                                                                        \
        }                                                                                        \
    } while (0)

using namespace gpk;

constexpr int kBlock = 256;
constexpr int kChains = 4;
constexpr int kGroups = 8;
constexpr uint32_t kChunk = uint32_t(kBlock) * kChains * kGroups;

enum Variant : int {
    kBase = 0,       // the rung as it is
    kGenOnly = 1,    // Philox only: the words are folded into one bit, no inside test
    kHiLo = 2,       // Philox's products as mul.hi + mul.lo instead of mul.wide
    kFloatVote = 3,  // single-precision test; the warp takes the exact test when any lane is near the arc
    kSq = 4,         // x(x + 1) as x*x + x through one mad.wide with a 64-bit addend
    kRung = 5,       // the rung's own Philox (common/philox.hpp) and test
    kF64Half = 6,    // test in double precision on (x + 1/2, y + 1/2) made from 2^51 + x + 1/2
    kF64Int = 7,     // test in double precision on x(x + 1) + y(y + 1) made from 2^52 + x
    kF32 = 8,        // single precision on the rung's Philox; a group with a point near the arc is redone exactly
    kF32Sat = 9,     // as kF32, hits counted by the single-precision units (saturated -d)
    kRungVecKey = 10,  // the rung with the key in per-thread registers instead of uniform ones
    kF32VecKey = 11,   // kF32 with the key in per-thread registers
    kMixed = 12,       // the first two samples of a triple in single precision, the third in integers
    kF32Fp = 13,       // kF32 with hits and the undecided check summed by the floating-point units
};

__device__ __forceinline__ void mulwide(uint32_t a, uint32_t b, uint32_t &hi, uint32_t &lo) {
    const uint64_t p = static_cast<uint64_t>(a) * b;
    hi = static_cast<uint32_t>(p >> 32);
    lo = static_cast<uint32_t>(p);
}
__device__ __forceinline__ void mulhilo(uint32_t a, uint32_t b, uint32_t &hi, uint32_t &lo) {
    asm("mul.hi.u32 %0, %1, %2;" : "=r"(hi) : "r"(a), "r"(b));
    asm("mul.lo.u32 %0, %1, %2;" : "=r"(lo) : "r"(a), "r"(b));
}

template <int V>
__device__ __forceinline__ Philox4 philox(uint32_t c0, uint32_t c1, uint32_t k0, uint32_t k1) {
    if constexpr (V >= kRung) return philox4x32_10(Philox4{{c0, c1, 0u, 0u}}, k0, k1);
    constexpr uint32_t M0 = 0xD2511F53u, M1 = 0xCD9E8D57u;
    constexpr uint32_t W0 = 0x9E3779B9u, W1 = 0xBB67AE85u;
    Philox4 c{{c0, c1, 0u, 0u}};
#pragma unroll
    for (int round = 0; round < 10; ++round) {
        uint32_t hi0, lo0, hi1, lo1;
        if constexpr (V == kHiLo) {
            mulhilo(M0, c.v[0], hi0, lo0);
            mulhilo(M1, c.v[2], hi1, lo1);
        } else {
            mulwide(M0, c.v[0], hi0, lo0);
            mulwide(M1, c.v[2], hi1, lo1);
        }
        c = Philox4{{hi1 ^ c.v[1] ^ k0, lo1, hi0 ^ c.v[3] ^ k1, lo0}};
        k0 += W0;
        k1 += W1;
    }
    return c;
}

__device__ __forceinline__ uint32_t cell_miss(uint32_t x, uint32_t y) {
    const uint64_t s = static_cast<uint64_t>(x) * (x + 1) + static_cast<uint64_t>(y) * (y + 1);
    return static_cast<uint32_t>(s >> 32) >> (2 * kPiCellBits - 32);
}
// x(x + 1) + y(y + 1) = x*x + y*y + (x + y): one 32-bit add and two mad.wide.
__device__ __forceinline__ uint32_t cell_miss_sq(uint32_t x, uint32_t y) {
    const uint64_t s = static_cast<uint64_t>(x) * x + (static_cast<uint64_t>(y) * y + (x + y));
    return static_cast<uint32_t>(s >> 32) >> (2 * kPiCellBits - 32);
}

// Single precision: x + 1/2 and y + 1/2 are exact; d = (x+1/2)^2 + (y+1/2)^2 - 2^42 is
// within 2^20 of the truth, so |d| >= 2^21 decides. *near is set when it does not.
__device__ __forceinline__ float half_float(uint32_t x) {  // x < 2^21: the float x + 1/2
    return __uint_as_float(0x4A800001u | (x << 1)) - 4194304.0f;
}
__device__ __forceinline__ uint32_t cell_miss_float(uint32_t x, uint32_t y, bool &near) {
    const float fx = half_float(x), fy = half_float(y);
    const float d = __fmaf_rn(fx, fx, __fmaf_rn(fy, fy, -0x1p42f));
    near |= fabsf(d) < 0x1p21f;
    return __float_as_uint(d) >> 31 ^ 1u;  // d >= 0: a miss
}

// Exact in double precision: 2^51 + x + 1/2 is the double with high word 0x43200000
// and low word 2x + 1; subtracting 2^51 leaves x + 1/2, and (x+1/2)^2 + (y+1/2)^2 - 2^42
// (a multiple of 1/4 below 2^43 in magnitude) is exact. Inside when negative.
__device__ __forceinline__ double f64_half(uint32_t twice_plus_one) {
    return __hiloint2double(0x43200000, static_cast<int>(twice_plus_one)) - 0x1p51;
}
__device__ __forceinline__ uint32_t cell_hit_f64_half(uint32_t x, uint32_t y) {
    const double ux = f64_half(2 * x + 1), uy = f64_half(2 * y + 1);
    const double d = fma(ux, ux, fma(uy, uy, -0x1p42));
    return static_cast<uint32_t>(__double2hiint(d)) >> 31;
}
// 2^52 + x has high word 0x43300000 and low word x; x(x + 1) + y(y + 1) - 2^42 is an
// integer below 2^43 in magnitude, exact. Inside when negative.
__device__ __forceinline__ double f64_int(uint32_t x) {
    return __hiloint2double(0x43300000, static_cast<int>(x)) - 0x1p52;
}
__device__ __forceinline__ uint32_t cell_hit_f64_int(uint32_t x, uint32_t y) {
    const double dx = f64_int(x), dy = f64_int(y);
    const double d = fma(dx, dx, dx + fma(dy, dy, dy - 0x1p42));
    return static_cast<uint32_t>(__double2hiint(d)) >> 31;
}

// Single precision: 2^23 + x is the float with bits 0x4B000000 | x, and subtracting
// 2^23 - 1/2 leaves x + 1/2 exactly. d = (x+1/2)^2 + (y+1/2)^2 - 2^42 in two fmaf is
// within 2^19 of the exact value (each rounding at most half an ulp of a result
// below 2^42 in magnitude), so |d| >= 2^21 decides the sign: inside when negative.
__device__ __forceinline__ float f32_half(uint32_t bits) {  // bits = 0x4B000000 | x
    return __uint_as_float(bits) - 8388607.5f;
}
template <bool kSat>
__device__ __forceinline__ void cell_f32(uint32_t xbits, uint32_t ybits, uint32_t &hits, float &hits_f, bool &near) {
    const float fx = f32_half(xbits), fy = f32_half(ybits);
    const float d = __fmaf_rn(fx, fx, __fmaf_rn(fy, fy, -0x1p42f));
    near |= fabsf(d) < 0x1p21f;
    if constexpr (kSat) hits_f += __saturatef(-d);
    else hits += __float_as_uint(d) >> 31;
}
constexpr uint32_t kF32One = 0x4B000000u;
__device__ __forceinline__ uint32_t top_bits_f32(uint32_t a, uint32_t b) {
    return (a >> kPiCellBits) | (((b >> kPiCellBits) << (32 - kPiCellBits)) & kPiCellMask) | kF32One;
}
// kF32Fp: h = sat(1/2 - d 2^-22) is exactly 1 (inside) or 0 where |d| >= 2^21 and
// strictly between otherwise; u = sat(1 - |d| 2^-21) is 0 where |d| >= 2^21 and positive
// otherwise. Summed over a group: hits, and a sum that is 0 unless a point is undecided.
__device__ __forceinline__ void cell_f32_fp(uint32_t xbits, uint32_t ybits, float &h, float &u) {
    const float fx = f32_half(xbits), fy = f32_half(ybits);
    const float d = __fmaf_rn(fx, fx, __fmaf_rn(fy, fy, -0x1p42f));
    h += __saturatef(__fmaf_rn(d, -0x1p-22f, 0.5f));
    u += __saturatef(1.0f - fabsf(d) * 0x1p-21f);
}
__device__ __forceinline__ void triple_f32_fp(const Philox4 &r, float &h, float &u) {
    cell_f32_fp((r.v[0] & kPiCellMask) | kF32One, (r.v[1] & kPiCellMask) | kF32One, h, u);
    cell_f32_fp((r.v[2] & kPiCellMask) | kF32One, (r.v[3] & kPiCellMask) | kF32One, h, u);
    cell_f32_fp(top_bits_f32(r.v[0], r.v[1]), top_bits_f32(r.v[2], r.v[3]), h, u);
}

// kMixed: samples 3t and 3t + 1 by cell_f32, 3t + 2 by the integer test (its misses).
__device__ __forceinline__ void triple_mixed(const Philox4 &r, uint32_t &hits, uint32_t &misses, bool &near) {
    float unused = 0.0f;
    cell_f32<false>((r.v[0] & kPiCellMask) | kF32One, (r.v[1] & kPiCellMask) | kF32One, hits, unused, near);
    cell_f32<false>((r.v[2] & kPiCellMask) | kF32One, (r.v[3] & kPiCellMask) | kF32One, hits, unused, near);
    misses += cell_miss(pi_top_bits(r.v[0], r.v[1]), pi_top_bits(r.v[2], r.v[3]));
}
template <bool kSat>
__device__ __forceinline__ void triple_f32(const Philox4 &r, uint32_t &hits, float &hits_f, bool &near) {
    cell_f32<kSat>((r.v[0] & kPiCellMask) | kF32One, (r.v[1] & kPiCellMask) | kF32One, hits, hits_f, near);
    cell_f32<kSat>((r.v[2] & kPiCellMask) | kF32One, (r.v[3] & kPiCellMask) | kF32One, hits, hits_f, near);
    cell_f32<kSat>(top_bits_f32(r.v[0], r.v[1]), top_bits_f32(r.v[2], r.v[3]), hits, hits_f, near);
}

template <int V>
__device__ __forceinline__ uint32_t triple_misses(const Philox4 &r) {
    if constexpr (V == kF64Half) {
        return 3u - (cell_hit_f64_half(r.v[0] & kPiCellMask, r.v[1] & kPiCellMask) +
                     cell_hit_f64_half(r.v[2] & kPiCellMask, r.v[3] & kPiCellMask) +
                     cell_hit_f64_half(pi_top_bits(r.v[0], r.v[1]), pi_top_bits(r.v[2], r.v[3])));
    } else if constexpr (V == kF64Int) {
        return 3u - (cell_hit_f64_int(r.v[0] & kPiCellMask, r.v[1] & kPiCellMask) +
                     cell_hit_f64_int(r.v[2] & kPiCellMask, r.v[3] & kPiCellMask) +
                     cell_hit_f64_int(pi_top_bits(r.v[0], r.v[1]), pi_top_bits(r.v[2], r.v[3])));
    } else if constexpr (V == kGenOnly) {
        return (r.v[0] ^ r.v[1] ^ r.v[2] ^ r.v[3]) & 1u;
    } else if constexpr (V == kSq) {
        return cell_miss_sq(r.v[0] & kPiCellMask, r.v[1] & kPiCellMask) +
               cell_miss_sq(r.v[2] & kPiCellMask, r.v[3] & kPiCellMask) +
               cell_miss_sq(pi_top_bits(r.v[0], r.v[1]), pi_top_bits(r.v[2], r.v[3]));
    } else if constexpr (V == kFloatVote) {
        bool near = false;
        uint32_t m = cell_miss_float(r.v[0] & kPiCellMask, r.v[1] & kPiCellMask, near) +
                     cell_miss_float(r.v[2] & kPiCellMask, r.v[3] & kPiCellMask, near) +
                     cell_miss_float(pi_top_bits(r.v[0], r.v[1]), pi_top_bits(r.v[2], r.v[3]), near);
        if (__any_sync(0xffffffffu, near))
            m = cell_miss(r.v[0] & kPiCellMask, r.v[1] & kPiCellMask) +
                cell_miss(r.v[2] & kPiCellMask, r.v[3] & kPiCellMask) +
                cell_miss(pi_top_bits(r.v[0], r.v[1]), pi_top_bits(r.v[2], r.v[3]));
        return m;
    } else {  // kBase, kRung, kRungVecKey
        return cell_miss(r.v[0] & kPiCellMask, r.v[1] & kPiCellMask) +
               cell_miss(r.v[2] & kPiCellMask, r.v[3] & kPiCellMask) +
               cell_miss(pi_top_bits(r.v[0], r.v[1]), pi_top_bits(r.v[2], r.v[3]));
    }
}

// The persistent loop of rung 5 over triples (hi << 32) | (lo + i), i < triples (a
// multiple of the chunk here), for test V with C triples in flight per thread, G groups
// of C per chunk, the group loop unrolled U times and __launch_bounds__ minimum MB.
template <int V, int C, int G, int U, int MB, int B = kBlock>
__global__ void __launch_bounds__(B, MB)
    persistent(uint32_t hi, uint32_t lo0, uint32_t triples, uint64_t seed, unsigned int *next_chunk,
               unsigned long long *hits) {
    constexpr uint32_t chunk_triples = uint32_t(B) * C * G;
    __shared__ uint32_t chunk_of[2];
    const uint32_t chunks = triples / chunk_triples;
    if (threadIdx.x == 0) chunk_of[0] = atomicAdd(next_chunk, 1u);
    __syncthreads();
    uint32_t own = 0;
    uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
    if constexpr (V == kRungVecKey || V == kF32VecKey) {
        // Read back from another thread's shared-memory slot, the key is a per-thread value
        // to the compiler: the round keys derived from it are not uniform-datapath operands.
        __shared__ uint32_t key_copy[2][B];
        key_copy[0][threadIdx.x] = k0;
        key_copy[1][threadIdx.x] = k1;
        __syncthreads();
        k0 = key_copy[0][(threadIdx.x + 1) % B];
        k1 = key_copy[1][(threadIdx.x + 1) % B];
    }
    for (int k = 0;; k ^= 1) {
        const uint32_t chunk = chunk_of[k];
        if (chunk >= chunks) break;
        if (threadIdx.x == 0) chunk_of[k ^ 1] = atomicAdd(next_chunk, 1u);
        uint32_t lo = lo0 + chunk * chunk_triples + threadIdx.x;
        uint32_t misses = 0;
#pragma unroll U
        for (int g = 0; g < G; ++g, lo += C * B) {
            if constexpr (V == kF32Fp) {
                Philox4 r[C];
                float h = 0.0f, u = 0.0f;
#pragma unroll
                for (int c = 0; c < C; ++c) {
                    r[c] = philox<V>(lo + c * B, hi, k0, k1);
                    triple_f32_fp(r[c], h, u);
                }
#ifndef PI_PROBE_COUNT_HOT_PATH
                if (__any_sync(0xffffffffu, u > 0.0f)) {
                    uint32_t m = 0;
#pragma unroll
                    for (int c = 0; c < C; ++c) m += triple_misses<kBase>(r[c]);
                    misses += m;
                } else
#endif
                {
                    misses += uint32_t(3 * C) - static_cast<uint32_t>(h);
                }
            } else if constexpr (V == kMixed) {
                Philox4 r[C];
                uint32_t h = 0, m3 = 0;
                bool near = false;
#pragma unroll
                for (int c = 0; c < C; ++c) {
                    r[c] = philox<V>(lo + c * B, hi, k0, k1);
                    triple_mixed(r[c], h, m3, near);
                }
                if (__any_sync(0xffffffffu, near)) {
                    uint32_t m = 0;
#pragma unroll
                    for (int c = 0; c < C; ++c) m += triple_misses<kBase>(r[c]);
                    misses += m;
                } else {
                    misses += uint32_t(2 * C) - h + m3;
                }
            } else if constexpr (V == kF32 || V == kF32Sat || V == kF32VecKey) {
                Philox4 r[C];
                uint32_t h = 0;
                float hf = 0.0f;
                bool near = false;
#pragma unroll
                for (int c = 0; c < C; ++c) {
                    r[c] = philox<V>(lo + c * B, hi, k0, k1);
                    triple_f32<V == kF32Sat>(r[c], h, hf, near);
                }
#ifndef PI_PROBE_COUNT_HOT_PATH  // defined only to count the hot path's instructions
                if (__any_sync(0xffffffffu, near)) {
                    uint32_t m = 0;
#pragma unroll
                    for (int c = 0; c < C; ++c) m += triple_misses<kBase>(r[c]);
                    misses += m;
                } else
#endif
                {
                    misses += uint32_t(3 * C) - (V == kF32Sat ? static_cast<uint32_t>(hf) : h);
                }
            } else {
#pragma unroll
                for (int c = 0; c < C; ++c) misses += triple_misses<V>(philox<V>(lo + c * B, hi, k0, k1));
            }
        }
        own += (V == kGenOnly ? misses : uint32_t(3 * C * G) - misses);
        __syncthreads();
    }
    // Block sum and one atomic per block.
    __shared__ unsigned long long warp_sums[B / 32];
    unsigned long long v = own;
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = v;
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned long long t = 0;
        for (int w = 0; w < B / 32; ++w) t += warp_sums[w];
        atomicAdd(hits, t);
    }
}

struct Timing {
    float ms;
    unsigned long long hits;
};

template <class Launch>
Timing timed(Launch &&launch, unsigned long long *d_hits, unsigned int *d_counter, int repeat) {
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    std::vector<float> ms;
    unsigned long long hits = 0;
    for (int r = -2; r < repeat; ++r) {
        CK(cudaMemset(d_hits, 0, sizeof *d_hits));
        CK(cudaMemset(d_counter, 0, sizeof *d_counter));
        CK(cudaEventRecord(e0));
        launch();
        CK(cudaEventRecord(e1));
        CK(cudaGetLastError());
        CK(cudaEventSynchronize(e1));
        float t = 0;
        CK(cudaEventElapsedTime(&t, e0, e1));
        if (r >= 0) ms.push_back(t);
        CK(cudaMemcpy(&hits, d_hits, sizeof hits, cudaMemcpyDeviceToHost));
    }
    std::sort(ms.begin(), ms.end());
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    return {ms[ms.size() / 2], hits};
}

int main(int argc, char **argv) {
    const int log2_samples = argc > 1 ? std::atoi(argv[1]) : 32;
    const int repeat = argc > 2 ? std::atoi(argv[2]) : 11;
    // Optional third argument: the variants to run, e.g. 5,8 (default: all).
    const std::string only = argc > 3 ? argv[3] : "";
    const uint64_t seed = 0x5eed;
    // Whole chunks of triples, hi word 0, lo from 0.
    // Whole chunks of every configuration (at most 2^14 triples each).
    const uint32_t triples = static_cast<uint32_t>(((uint64_t(1) << log2_samples) / 3) >> 16 << 16);
    const double samples = 3.0 * triples;
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    unsigned long long *d_hits;
    unsigned int *d_counter;
    CK(cudaMalloc(&d_hits, sizeof *d_hits));
    CK(cudaMalloc(&d_counter, sizeof *d_counter));

    // The reference: hits of a sparse set of triples on the host would not check the
    // sum, so the check is that every libgpk-definition variant agrees with kBase, and
    // kBase with the host over a small launch.
    std::printf("%-34s %9s %12s %9s  %s\n", "kernel", "ms", "G samples/s", "vs fused", "hits");
    double fused_rate = 0;
    // Timed first and again last: the first measurement may run before the GPU's clocks
    // have risen (run 33 in docs/PERFORMANCE.md).
    auto reference = [&](const char *name, auto kernel) {
        constexpr int block = gpk_bench::kPiReferenceBlock;
        int per_sm = 0;
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block, 0));
        const unsigned int grid = sms * per_sm;
        const uint64_t threads = uint64_t(grid) * block;
        const uint64_t pairs = static_cast<uint64_t>(samples / 2 / threads);
        const uint64_t offset = 0;
        const Timing t = timed([&] { kernel<<<grid, block>>>(pairs, offset, seed, d_hits); }, d_hits, d_counter,
                               repeat);
        const double n = 2.0 * pairs * threads;
        const double rate = n / (t.ms * 1e-3) / 1e9;
        if (fused_rate == 0) fused_rate = rate;
        std::printf("%-34s %9.3f %12.1f %9.2fx  pi ~ %.6f\n", name, t.ms, rate, rate / fused_rate, 4.0 * t.hits / n);
    };
    reference("curand device API fused (reference)", gpk_bench::pi_reference_kernel<false>);
    unsigned long long base_hits = 0;
    int variant = -1;
    auto run = [&](auto kernel, const char *name, bool check, int block = kBlock) -> unsigned long long {
        ++variant;
        if (!only.empty() && ("," + only + ",").find("," + std::to_string(variant) + ",") == std::string::npos) return 0;
        int per_sm = 0;
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block, 0));
        const unsigned int grid = sms * per_sm;
        const Timing t = timed([&] { kernel<<<grid, block>>>(0u, 0u, triples, seed, d_counter, d_hits); }, d_hits,
                               d_counter, repeat);
        const double rate = samples / (t.ms * 1e-3) / 1e9;
        if (base_hits == 0) base_hits = t.hits;
        std::printf("%-34s %9.3f %12.1f %9.2fx  %llu%s  (%d blocks/SM)\n", name, t.ms, rate, rate / fused_rate, t.hits,
                    check ? (t.hits == base_hits ? " same" : " DIFFERENT") : "", per_sm);
        return t.hits;
    };
    // name, kernel: test, chains, groups, unroll, min blocks per SM
    run(persistent<kRung, 4, 8, 4, 0>, "rung: int test 4/8/4/0", true);
    run(persistent<kGenOnly, 4, 8, 4, 0>, "generator only 4/8/4/0", false);
    run(persistent<kF64Int, 4, 8, 4, 0>, "f64 test 4/8/4/0", true);
    run(persistent<kF32, 4, 8, 4, 0>, "f32 test 4/8/4/0", true);
    run(persistent<kF32, 4, 8, 1, 0>, "f32 test 4/8/1/0", true);
    run(persistent<kF32, 4, 8, 2, 0>, "f32 test 4/8/2/0", true);
    run(persistent<kF32, 2, 16, 4, 0>, "f32 test 2/16/4/0", true);
    run(persistent<kF32, 2, 16, 8, 0>, "f32 test 2/16/8/0", true);
    run(persistent<kF32, 8, 4, 2, 0>, "f32 test 8/4/2/0", true);
    run(persistent<kF32, 8, 4, 1, 0>, "f32 test 8/4/1/0", true);
    run(persistent<kF32, 4, 8, 4, 6>, "f32 test 4/8/4/6", true);
    run(persistent<kF32, 4, 8, 4, 8>, "f32 test 4/8/4/8", true);
    run(persistent<kF32, 2, 16, 4, 8>, "f32 test 2/16/4/8", true);
    run(persistent<kF32Sat, 4, 8, 4, 0>, "f32 test, sat hits 4/8/4/0", true);
    run(persistent<kRung, 4, 8, 4, 8>, "rung: int test 4/8/4/8", true);
    run(persistent<kRung, 8, 4, 2, 0>, "rung: int test 8/4/2/0", true);
    run(persistent<kRungVecKey, 4, 8, 4, 0>, "rung, key in registers 4/8/4/0", true);
    run(persistent<kF32VecKey, 4, 8, 4, 0>, "f32, key in registers 4/8/4/0", true);
    run(persistent<kF32VecKey, 8, 4, 2, 0>, "f32, key in registers 8/4/2/0", true);
    run(persistent<kMixed, 4, 8, 4, 0>, "mixed f32/int 4/8/4/0", true);
    run(persistent<kMixed, 8, 4, 2, 0>, "mixed f32/int 8/4/2/0", true);
    run(persistent<kF32, 8, 4, 4, 0>, "f32 test 8/4/4/0", true);
    run(persistent<kF32, 8, 8, 2, 0, 128>, "f32 test 8/8/2/0 block 128", true, 128);
    run(persistent<kF32, 4, 4, 4, 0, 512>, "f32 test 4/4/4/0 block 512", true, 512);
    run(persistent<kRung, 4, 16, 4, 0, 128>, "rung 4/16/4/0 block 128", true, 128);
    run(persistent<kRung, 4, 4, 4, 0, 512>, "rung 4/4/4/0 block 512", true, 512);
    run(persistent<kRung, 8, 4, 4, 0>, "rung 8/4/4/0", true);
    run(persistent<kF32, 8, 4, 4, 4>, "f32 test 8/4/4/4", true);
    run(persistent<kF32, 8, 8, 4, 0, 128>, "f32 test 8/8/4/0 block 128", true, 128);
    run(persistent<kF32, 8, 8, 8, 0, 128>, "f32 test 8/8/8/0 block 128", true, 128);
    run(persistent<kF32, 16, 2, 2, 0>, "f32 test 16/2/2/0", true);
    run(persistent<kF32, 8, 8, 8, 0>, "f32 test 8/8/8/0", true);
    run(persistent<kRung, 8, 8, 4, 0, 128>, "rung 8/8/4/0 block 128", true, 128);
    run(persistent<kRung, 8, 8, 8, 0, 128>, "rung 8/8/8/0 block 128", true, 128);
    run(persistent<kRung, 16, 2, 2, 0>, "rung 16/2/2/0", true);
    run(persistent<kRung, 8, 8, 8, 0>, "rung 8/8/8/0", true);
    run(persistent<kRung, 8, 4, 4, 8>, "rung 8/4/4/8", true);
    run(persistent<kF32, 16, 2, 1, 0>, "f32 test 16/2/1/0", true);
    run(persistent<kF32, 16, 4, 2, 0>, "f32 test 16/4/2/0", true);
    run(persistent<kF32, 16, 4, 4, 0>, "f32 test 16/4/4/0", true);
    run(persistent<kF32, 16, 4, 2, 0, 128>, "f32 test 16/4/2/0 block 128", true, 128);
    run(persistent<kF32, 16, 1, 1, 0, 512>, "f32 test 16/1/1/0 block 512", true, 512);
    run(persistent<kF32, 32, 1, 1, 0>, "f32 test 32/1/1/0", true);
    run(persistent<kF32, 16, 2, 2, 3>, "f32 test 16/2/2/3", true);
    run(persistent<kRung, 16, 4, 4, 0>, "rung 16/4/4/0", true);
    run(persistent<kF32Fp, 8, 4, 4, 0>, "f32, fp sums 8/4/4/0", true);
    run(persistent<kF32Fp, 4, 8, 4, 0>, "f32, fp sums 4/8/4/0", true);
    run(persistent<kF32Fp, 16, 2, 2, 0>, "f32, fp sums 16/2/2/0", true);
    run(persistent<kF32Fp, 8, 4, 2, 0>, "f32, fp sums 8/4/2/0", true);

    reference("the reference again, last", gpk_bench::pi_reference_kernel<false>);
    reference("reference, run-time offset 0", gpk_bench::pi_reference_kernel<true>);

    // kBase against the host definition over one small launch.
    {
        const uint32_t small = kChunk * 4;  // four blocks, one chunk each
        unsigned long long host = 0;
        for (uint32_t t = 0; t < small; ++t) host += pi_triple_hits(pi_triple(t, seed));
        CK(cudaMemset(d_hits, 0, sizeof *d_hits));
        CK(cudaMemset(d_counter, 0, sizeof *d_counter));
        persistent<kRung, 4, 8, 4, 0><<<4, kBlock>>>(0u, 0u, small, seed, d_counter, d_hits);
        CK(cudaGetLastError());
        unsigned long long dev = 0;
        CK(cudaMemcpy(&dev, d_hits, sizeof dev, cudaMemcpyDeviceToHost));
        std::printf("host check over %u triples: %s (%llu / %llu)\n", small, dev == host ? "same" : "DIFFERENT", dev,
                    host);
    }
    return 0;
}
