// Rung 2, fused: random numbers are generated, tested and counted in one kernel,
// never stored, by a generator with no state to build. Over the lecture's rung it
// drops the 48-byte curandState each thread initialized with curand_init (a skip-ahead
// through precomputed matrices), the doubles (points are tested in exact 32-bit
// integer arithmetic), and the one atomic per thread: each thread walks pairs of
// samples grid-stride with the counter-based generator of common/philox.hpp, keeps
// its hits in a register, the block sums them in shared memory, and one 64-bit
// atomicAdd per block adds the block's total to a counter. Over the vendor rung
// (cuRAND writes two floats per sample to memory, then Thrust reads them back) it
// removes all that memory traffic. Integer hits add up to the same total in any
// order, so the count is bit-identical to the host backend whatever the GPU and the
// launch configuration.
#include "../../common/philox.hpp"
#include "../kernel_util.cuh"
#include "../ladders.hpp"
#include "../resources.hpp"

#include <algorithm>
#include <cstdint>

namespace gpk::cuda {
namespace {

constexpr int kBlock = 256;
constexpr int kBlocksPerSm = 8;
// At most 2^34 samples (2^33 pairs) a launch keeps each kernel to tens of
// milliseconds on a large GPU, so a display GPU stays responsive.
constexpr uint64_t kMaxPairsPerLaunch = uint64_t(1) << 33;
// A thread's hits live in 32 bits: with at least one block of kBlock threads, no
// thread sees more than kMaxPairsPerLaunch / kBlock pairs, 2 hits each.
static_assert(kMaxPairsPerLaunch / kBlock * 2 < (uint64_t(1) << 32), "per-thread hits must fit in 32 bits");

__global__ void __launch_bounds__(kBlock)
    pi_fused_kernel(uint64_t first_pair, uint64_t pairs, uint64_t seed, unsigned long long *hits) {
    uint32_t own = 0;
    const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
    for (uint64_t p = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; p < pairs; p += stride)
        own += pi_pair_hits(pi_pair(first_pair + p, seed));

    // A block's total can pass 2^32 when the grid is small, so the tree sums in 64 bits.
    __shared__ unsigned long long block_hits[kBlock];
    block_hits[threadIdx.x] = own;
    __syncthreads();
    for (unsigned int s = kBlock / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) block_hits[threadIdx.x] += block_hits[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(hits, block_hits[0]);
}

}  // namespace

gpk_status pi_fused(gpk_context &ctx, const PiArgs &args) {
    if (args.count == 0) {
        *args.hits = 0;
        return GPK_SUCCESS;
    }
    const cudaStream_t s = stream(ctx);
    const uint64_t end = args.first + args.count;
    // Whole pairs [first_pair, end_pair) go to the kernel. A range starting on an odd
    // sample begins with the second half of a pair, one ending after an even sample
    // ends with the first half of one; those samples are counted here, on the host,
    // with the same functions. (Both exist only when count is even, hence >= 2, so
    // they are two different samples.)
    const uint64_t first_pair = (args.first + 1) / 2;
    const uint64_t end_pair = end / 2;
    uint64_t split_hits = 0;
    if (args.first % 2 != 0) split_hits += pi_sample_inside(args.first, args.seed);
    if (end % 2 != 0) split_hits += pi_sample_inside(end - 1, args.seed);

    uint64_t kernel_hits = 0;
    if (end_pair > first_pair) {
        int sms = 0;
        GPK_CUDA_TRY(ctx, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, ctx.device));
        void *counter = nullptr;
        GPK_FORWARD_IF_ERROR(buffer(ctx, Slot::Scratch, sizeof(unsigned long long), &counter));
        auto *hits = static_cast<unsigned long long *>(counter);
        GPK_CUDA_TRY(ctx, cudaMemsetAsync(hits, 0, sizeof(unsigned long long), s));
        for (uint64_t pair = first_pair; pair < end_pair; pair += kMaxPairsPerLaunch) {
            const uint64_t pairs = std::min(end_pair - pair, kMaxPairsPerLaunch);
            const unsigned int grid =
                grid_size(static_cast<int64_t>(pairs), kBlock, static_cast<int64_t>(std::max(sms, 1)) * kBlocksPerSm);
            pi_fused_kernel<<<grid, kBlock, 0, s>>>(pair, pairs, args.seed, hits);
            GPK_LAUNCH_CHECK(ctx, "pi_fused_kernel");
        }
        unsigned long long total = 0;
        GPK_CUDA_TRY(ctx, cudaMemcpyAsync(&total, hits, sizeof(total), cudaMemcpyDeviceToHost, s));
        GPK_CUDA_TRY(ctx, cudaStreamSynchronize(s));
        kernel_hits = total;
    }
    *args.hits = kernel_hits + split_hits;
    return GPK_SUCCESS;
}

}  // namespace gpk::cuda
