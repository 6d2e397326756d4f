// Rung 2, fused: random numbers are generated, tested and counted in one kernel,
// never stored, by a generator with no state to build. Over the lecture's rung it
// drops the 48-byte curandState each thread initialized with curand_init (a skip-ahead
// through precomputed matrices), the doubles (points are tested in exact integer
// arithmetic), and the one atomic per thread: each thread walks triples of samples
// grid-stride with the counter-based generator of common/philox.hpp (one Philox
// evaluation gives three points of 21-bit coordinates), keeps its hits in a register,
// the block sums them in shared memory, and one 64-bit atomicAdd per block adds the
// block's total to a counter. Over the vendor rung (cuRAND writes two floats per
// sample to memory, then Thrust reads them back) it removes all that memory traffic.
// Integer hits add up to the same total in any order, so the count is bit-identical
// to the host backend whatever the GPU and the launch configuration.
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
// At most 2^33 Philox evaluations (3 * 2^33 samples) a launch keeps each kernel to
// tens of milliseconds on a large GPU, so a display GPU stays responsive.
constexpr uint64_t kMaxTriplesPerLaunch = uint64_t(1) << 33;
// A thread's hits live in 32 bits: with at least one block of kBlock threads, no
// thread sees more than kMaxTriplesPerLaunch / kBlock triples, 3 hits each.
static_assert(kMaxTriplesPerLaunch / kBlock * 3 < (uint64_t(1) << 32), "per-thread hits must fit in 32 bits");

__global__ void __launch_bounds__(kBlock)
    pi_fused_kernel(uint64_t first_triple, uint64_t triples, uint64_t seed, unsigned long long *hits) {
    uint32_t own = 0;
    const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
    for (uint64_t t = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; t < triples; t += stride)
        own += pi_triple_hits(pi_triple(first_triple + t, seed));

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
    // Whole triples [first_triple, end_triple) go to the kernel. A range that starts or
    // ends inside a triple has up to two samples at each end outside them; those are
    // counted on the host, with the same functions, by pi_split_range.
    const PiTriples range = pi_split_range(args.first, args.count, args.seed);

    uint64_t kernel_hits = 0;
    if (range.end_triple > range.first_triple) {
        int sms = 0;
        GPK_CUDA_TRY(ctx, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, ctx.device));
        void *counter = nullptr;
        GPK_FORWARD_IF_ERROR(buffer(ctx, Slot::Scratch, sizeof(unsigned long long), &counter));
        auto *hits = static_cast<unsigned long long *>(counter);
        GPK_CUDA_TRY(ctx, cudaMemsetAsync(hits, 0, sizeof(unsigned long long), s));
        for (uint64_t t = range.first_triple; t < range.end_triple; t += kMaxTriplesPerLaunch) {
            const uint64_t triples = std::min(range.end_triple - t, kMaxTriplesPerLaunch);
            const unsigned int grid = grid_size(static_cast<int64_t>(triples), kBlock,
                                                static_cast<int64_t>(std::max(sms, 1)) * kBlocksPerSm);
            pi_fused_kernel<<<grid, kBlock, 0, s>>>(t, triples, args.seed, hits);
            GPK_LAUNCH_CHECK(ctx, "pi_fused_kernel");
        }
        unsigned long long total = 0;
        GPK_CUDA_TRY(ctx, cudaMemcpyAsync(&total, hits, sizeof(total), cudaMemcpyDeviceToHost, s));
        GPK_CUDA_TRY(ctx, cudaStreamSynchronize(s));
        kernel_hits = total;
    }
    *args.hits = kernel_hits + range.edge_hits;
    return GPK_SUCCESS;
}

}  // namespace gpk::cuda
