// Rung 1, the lecture's exercise as written: 56 blocks of 256 threads; each thread
// seeds its own cuRAND state (XORWOW, the default curandState) with curand_init,
// draws its points with curand_uniform_double, counts those inside the quarter circle
// and atomicAdds its count to a global counter. It is the starting point the fused
// rungs improve on: a grid that fills 56 multiprocessors with one block each, a
// 48-byte generator state per thread that curand_init builds by skipping ahead
// through precomputed matrices, two 32-bit draws and a 64-bit integer-to-double
// conversion per coordinate, and double-precision arithmetic.
//
// Its points come from XORWOW, so its hits form a family of their own. Within the
// family they still depend only on (samples, seed): sample i is drawn by thread
// i mod 14336 as its (i / 14336)-th point, that is from numbers 4 (i / 14336) to
// 4 (i / 14336) + 3 of subsequence i mod 14336 of the generator keyed by seed. For a
// range starting at sample 0 whose count is a multiple of 14336 this is exactly the
// lecture's program; any other range, and every launch after the first of a large
// range, starts each thread's state at its first sample with curand_init's offset.
#include "../ladders.hpp"
#include "../resources.hpp"

#include <curand_kernel.h>

#include <algorithm>
#include <cstdint>

namespace gpk::cuda {
namespace {

constexpr unsigned int kBlocks = 56;
constexpr unsigned int kBlock = 256;
constexpr unsigned int kThreads = kBlocks * kBlock;
// Each launch gives every thread at most 2^17 points (the lecture gave 10^5), so a
// launch lasts milliseconds and the curand_init of each launch stays a small part of it.
constexpr uint32_t kMaxDrawsPerLaunch = uint32_t(1) << 17;
constexpr uint32_t kMaxSamplesPerLaunch = kThreads * kMaxDrawsPerLaunch;
static_assert(uint64_t(kThreads) * kMaxDrawsPerLaunch < (uint64_t(1) << 32), "a launch's length must fit in 32 bits");

// Samples [start, start + length) where start = start_row * kThreads + start_col: the
// samples of thread t are those congruent to t modulo kThreads.
__global__ void __launch_bounds__(kBlock) pi_lecture_kernel(uint64_t seed, uint64_t start_row, uint32_t start_col,
                                                            uint32_t length, unsigned long long *hits) {
    const unsigned int t = blockIdx.x * blockDim.x + threadIdx.x;
    // The first sample of the launch that belongs to thread t is start + skip.
    const uint32_t skip = (t + kThreads - start_col) % kThreads;
    if (skip >= length) return;
    const uint32_t draws = (length - 1 - skip) / kThreads + 1;
    const uint64_t row = start_row + (start_col + skip >= kThreads ? 1 : 0);

    curandState state;
    // Two 32-bit numbers per double, two doubles per point.
    curand_init(seed, t, 4 * row, &state);
    unsigned long long inside = 0;
    for (uint32_t k = 0; k < draws; ++k) {
        const double x = curand_uniform_double(&state);
        const double y = curand_uniform_double(&state);
        // Rounded explicitly: whether the compiler contracts x * x + y * y into an FMA
        // must not decide which points are inside.
        if (__dadd_rn(__dmul_rn(x, x), __dmul_rn(y, y)) <= 1.0) ++inside;
    }
    atomicAdd(hits, inside);
}

}  // namespace

gpk_status pi_lecture(gpk_context &ctx, const PiArgs &args) {
    GPK_RETURN_ERROR_IF(args.count > UINT64_MAX - args.first, &ctx, GPK_ERROR_INTERNAL,
                        "pi range [%llu, +%llu) runs past sample 2^64 - 1",
                        static_cast<unsigned long long>(args.first), static_cast<unsigned long long>(args.count));
    if (args.count == 0) {
        *args.hits = 0;
        return GPK_SUCCESS;
    }
    const cudaStream_t s = stream(ctx);
    void *counter = nullptr;
    GPK_FORWARD_IF_ERROR(buffer(ctx, Slot::Scratch, sizeof(unsigned long long), &counter));
    auto *hits = static_cast<unsigned long long *>(counter);
    GPK_CUDA_TRY(ctx, cudaMemsetAsync(hits, 0, sizeof(unsigned long long), s));
    const uint64_t end = args.first + args.count;
    for (uint64_t start = args.first; start < end;) {
        const uint32_t length = static_cast<uint32_t>(std::min<uint64_t>(end - start, kMaxSamplesPerLaunch));
        pi_lecture_kernel<<<kBlocks, kBlock, 0, s>>>(args.seed, start / kThreads,
                                                     static_cast<uint32_t>(start % kThreads), length, hits);
        GPK_LAUNCH_CHECK(ctx, "pi_lecture_kernel");
        start += length;
    }
    unsigned long long total = 0;
    GPK_CUDA_TRY(ctx, cudaMemcpyAsync(&total, hits, sizeof total, cudaMemcpyDeviceToHost, s));
    GPK_CUDA_TRY(ctx, cudaStreamSynchronize(s));
    *args.hits = total;
    return GPK_SUCCESS;
}

}  // namespace gpk::cuda
