// The simple fused kernel of the cuRAND device API, the yardstick of the pi ladder:
// the straightforward way to fuse generation and counting with the vendor's device
// API (its figures: docs/PERFORMANCE.md, section "Auto: pi"). gpk-bench times it next to the ladder
// (ceilings.cu); runs 32-35 of the lab log timed it next to variants of the persistent rung.
// It is not a library variant: its points come from cuRAND's Philox subsequences, one
// per thread, a stream of their own, so its hits are held to the statistics only.
//
// Each thread draws pairs_per_thread calls of curand_uniform4, two points each, from
// `offset` (in 32-bit numbers) on in its subsequence; a warp's counts are summed in 32
// bits, so a launch draws at most kPiReferenceMaxPairs calls per thread; one atomic
// per block.
#pragma once

#include <curand_kernel.h>

#include <cstdint>

namespace gpk_bench {

constexpr int kPiReferenceBlock = 256;
constexpr uint64_t kPiReferenceMaxPairs = UINT32_MAX / (2 * 32);

// kOffset false is the kernel as it is usually written, curand_init(seed, tid, 0,
// &state) with a literal 0: the compiler builds it differently from the one with a
// run-time offset, and the two measure differently (docs/PERFORMANCE.md, section
// "Auto: pi").
template <bool kOffset>
__global__ void __launch_bounds__(kPiReferenceBlock)
    pi_reference_kernel(uint64_t pairs_per_thread, uint64_t offset, uint64_t seed, unsigned long long *hits) {
    const uint64_t tid = uint64_t(blockIdx.x) * kPiReferenceBlock + threadIdx.x;
    curandStatePhilox4_32_10_t st;
    curand_init(seed, tid, kOffset ? offset : 0, &st);
    uint32_t own = 0;
    for (uint64_t i = 0; i < pairs_per_thread; ++i) {
        const float4 u = curand_uniform4(&st);
        own += (u.x * u.x + u.y * u.y <= 1.0f) + (u.z * u.z + u.w * u.w <= 1.0f);
    }
    __shared__ unsigned int sums[kPiReferenceBlock / 32];
    for (int o = 16; o > 0; o >>= 1) own += __shfl_down_sync(0xffffffffu, own, o);
    if (threadIdx.x % 32 == 0) sums[threadIdx.x / 32] = own;
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned long long t = 0;
        for (int w = 0; w < kPiReferenceBlock / 32; ++w) t += sums[w];
        atomicAdd(hits, t);
    }
}

}  // namespace gpk_bench
