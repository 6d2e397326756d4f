// Vendor rung: cuRAND's host API fills memory with uniform floats (Philox4x32-10),
// then thrust::count_if counts the points (x, y) with x^2 + y^2 <= 1. It is how the
// vendor libraries alone estimate pi, so it is the yardstick the fused kernels are
// measured against. Its points come from cuRAND's own mapping of the generator to
// floats, so its hits form a family of their own: statistically equivalent to the
// Philox family of the other variants, never bit-identical to it.
//
// Samples are drawn in chunks, so the scratch memory stays bounded whatever the
// sample count. Sample i takes numbers 2i and 2i + 1 of the generator's sequence, and
// each chunk sets the generator's offset to its first number itself rather than
// relying on where the previous call left it.
#include "../ladders.hpp"
#include "../resources.hpp"

#include <thrust/count.h>
#include <thrust/execution_policy.h>
#include <thrust/system/cuda/execution_policy.h>
#include <thrust/system_error.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <new>

namespace gpk::cuda {
namespace {

// 2^26 samples a chunk: 512 MiB of floats, large enough that the host round trip of
// each count_if is a small part of the chunk's time.
constexpr uint64_t kChunkSamples = uint64_t(1) << 26;
// Room after the floats for count_if's own temporary storage (a CUB reduction's
// partials and its result), so that it does not cudaMalloc on every chunk.
constexpr size_t kThrustTemp = size_t(1) << 20;

// Explicitly rounded operations: a contraction into an FMA, which the compiler may or
// may not make depending on the target, could move a point across the circle.
struct InsideQuarterCircle {
    __device__ bool operator()(const float2 &p) const {
        return __fadd_rn(__fmul_rn(p.x, p.x), __fmul_rn(p.y, p.y)) <= 1.0f;
    }
};

// Hands thrust the tail of the scratch buffer, bump-allocated and released as a
// whole when the chunk is done. A request that does not fit falls back to cudaMalloc.
class ScratchTail {
public:
    using value_type = char;

    ScratchTail(char *base, size_t size) : base_(base), size_(size) {}

    char *allocate(std::ptrdiff_t bytes) {
        const size_t aligned = (static_cast<size_t>(bytes) + 255) & ~size_t(255);
        if (aligned <= size_ - used_) {
            char *p = base_ + used_;
            used_ += aligned;
            return p;
        }
        void *p = nullptr;
        if (cudaMalloc(&p, static_cast<size_t>(bytes)) != cudaSuccess) throw std::bad_alloc();
        return static_cast<char *>(p);
    }

    void deallocate(char *p, size_t) {
        const auto at = reinterpret_cast<uintptr_t>(p), base = reinterpret_cast<uintptr_t>(base_);
        if (at < base || at - base >= size_) (void)cudaFree(p);
    }

private:
    char *base_;
    size_t size_;
    size_t used_ = 0;
};

// Hits among `samples` points whose 2 * samples coordinates are in `u`, counted on
// stream `s`. Thrust reports failures with exceptions; they become statuses here.
gpk_status count_inside(gpk_context &ctx, const float *u, uint64_t samples, char *temp, cudaStream_t s,
                        uint64_t *hits) {
    try {
        ScratchTail alloc(temp, kThrustTemp);
        const auto *points = reinterpret_cast<const float2 *>(u);
        const auto inside = thrust::count_if(thrust::cuda::par(alloc).on(s), points,
                                             points + static_cast<std::ptrdiff_t>(samples), InsideQuarterCircle());
        *hits = static_cast<uint64_t>(inside);
        return GPK_SUCCESS;
    } catch (const thrust::system_error &e) {
        return fail(&ctx, GPK_ERROR_CUDA, "thrust::count_if failed: %s", e.what());
    } catch (const std::bad_alloc &) {
        return fail(&ctx, GPK_ERROR_OUT_OF_MEMORY, "thrust::count_if could not allocate temporary storage");
    } catch (...) {
        return fail(&ctx, GPK_ERROR_INTERNAL, "thrust::count_if threw an unexpected exception");
    }
}

}  // namespace

gpk_status pi_curand(gpk_context &ctx, const PiArgs &args) {
    // Past sample 2^63 the generator's offset would wrap to the start of the sequence:
    // a different result, so none at all.
    GPK_RETURN_ERROR_IF(args.first > kCurandPiSamples || args.count > kCurandPiSamples - args.first, &ctx,
                        GPK_ERROR_NOT_SUPPORTED,
                        "variant 'curand_thrust' reaches samples [0, 2^63) only (sample i is numbers 2i and 2i + 1 "
                        "of cuRAND's sequence, a 64-bit offset); the range from first_sample %llu of count %llu ends "
                        "past them: use another variant",
                        static_cast<unsigned long long>(args.first), static_cast<unsigned long long>(args.count));
    const cudaStream_t s = stream(ctx);
    curandGenerator_t gen = nullptr;
    GPK_FORWARD_IF_ERROR(curand(ctx, &gen));
    GPK_CURAND_TRY(ctx, curandSetPseudoRandomGeneratorSeed(gen, args.seed));

    const uint64_t chunk = std::min(args.count, kChunkSamples);
    // One scratch request: 2 * chunk floats (256-byte aligned, as float2 needs), then
    // count_if's temporary storage.
    const size_t float_bytes = ((2 * chunk * sizeof(float)) + 255) & ~size_t(255);
    void *scratch = nullptr;
    GPK_FORWARD_IF_ERROR(buffer(ctx, Slot::Scratch, float_bytes + kThrustTemp, &scratch));
    float *u = static_cast<float *>(scratch);
    char *temp = static_cast<char *>(scratch) + float_bytes;

    uint64_t hits = 0;
    for (uint64_t done = 0; done < args.count; done += chunk) {
        const uint64_t n = std::min(args.count - done, chunk);
        GPK_CURAND_TRY(ctx, curandSetGeneratorOffset(gen, 2 * (args.first + done)));
        GPK_CURAND_TRY(ctx, curandGenerateUniform(gen, u, static_cast<size_t>(2 * n)));
        uint64_t chunk_hits = 0;
        GPK_FORWARD_IF_ERROR(count_inside(ctx, u, n, temp, s, &chunk_hits));
        hits += chunk_hits;
    }
    *args.hits = hits;
    return GPK_SUCCESS;
}

}  // namespace gpk::cuda
