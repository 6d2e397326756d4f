// Rung 5, persistent: a grid of exactly the blocks the GPU holds at once, each block
// taking contiguous chunks of triples from a work counter until none is left.
//
// Rungs 3 and 4 give every thread a fixed share of the launch, so the launch lasts as
// long as its slowest multiprocessor, one that shares its time with another kernel,
// say. Here each block asks a global counter for its next chunk (one atomic per 8192
// triples, fetched while the current chunk is computed) and faster multiprocessors
// simply take more chunks. Hits are integers, so who counted which chunk changes
// nothing. Within a chunk each thread keeps kChains Philox evaluations in flight, as
// in rung 4, and tests points with common/philox.hpp's exact test, which for 21-bit
// coordinates is already two 32x32->64-bit multiplies and a compare of one word.
#include "pi_common.cuh"

#include "../ladders.hpp"

namespace gpk::cuda {
namespace {

constexpr int kBlock = 256;
constexpr int kChains = 4;  // triples a thread has in flight, as in rung 4
constexpr int kGroups = 8;  // groups of kChains triples per thread per chunk
constexpr uint32_t kChunk = uint32_t(kBlock) * kChains * kGroups;
constexpr uint32_t kMaxTriplesPerLaunch = uint32_t(1) << 31;  // as in rung 3
static_assert(kMaxTriplesPerLaunch % kChunk == 0, "launches end on chunk boundaries");
// No thread sees more than kMaxTriplesPerLaunch / kBlock triples, 3 hits each.
static_assert(uint64_t(kMaxTriplesPerLaunch) / kBlock * 3 < (uint64_t(1) << 32), "per-thread hits must fit in 32 bits");

// Hits of kChains triples: (hi << 32) | (lo + c * kBlock) for c < kChains.
__device__ __forceinline__ uint32_t group_hits(uint32_t hi, uint32_t lo, uint64_t seed) {
    uint32_t hits = 0;
#pragma unroll
    for (int c = 0; c < kChains; ++c) hits += pi::triple_hits(hi, lo + c * kBlock, seed);
    return hits;
}

// next_chunk counts the chunks handed out; it is 0 when the launch starts.
__global__ void __launch_bounds__(kBlock)
    pi_persistent_kernel(pi::Piece piece, uint64_t seed, unsigned int *next_chunk, unsigned long long *slots) {
    // Two slots, so that thread 0 can fetch the block's next chunk while the block
    // still reads the current one: one barrier per chunk.
    __shared__ uint32_t chunk_of[2];
    const uint32_t chunks = (piece.triples + kChunk - 1) / kChunk;
    if (threadIdx.x == 0) chunk_of[0] = atomicAdd(next_chunk, 1u);
    __syncthreads();
    // At most kMaxTriplesPerLaunch / kBlock triples, 3 hits each, for one thread.
    uint32_t hits = 0;
    for (int k = 0;; k ^= 1) {
        const uint32_t chunk = chunk_of[k];
        if (chunk >= chunks) break;
        if (threadIdx.x == 0) chunk_of[k ^ 1] = atomicAdd(next_chunk, 1u);
        const uint32_t first = chunk * kChunk;
        if (piece.triples - first >= kChunk) {
            uint32_t lo = piece.lo + first + threadIdx.x;
#pragma unroll 1
            for (int g = 0; g < kGroups; ++g, lo += kChains * kBlock) hits += group_hits(piece.hi, lo, seed);
        } else {
            for (uint32_t i = first + threadIdx.x; i < piece.triples; i += kBlock)
                hits += pi::triple_hits(piece.hi, piece.lo + i, seed);
        }
        __syncthreads();
    }
    const uint64_t block = pi::block_sum<kBlock>(hits);
    if (threadIdx.x == 0) slots[blockIdx.x] += block;
}

}  // namespace

gpk_status pi_persistent(gpk_context &ctx, const PiArgs &args) {
    unsigned int blocks = 0;
    GPK_FORWARD_IF_ERROR(pi::resident_blocks(ctx, pi_persistent_kernel, kBlock, &blocks));
    const cudaStream_t s = stream(ctx);
    return pi::count_hits(ctx, args, blocks, kMaxTriplesPerLaunch,
                          [&](const pi::Piece &piece, const pi::BlockSlots &slots) -> gpk_status {
                              const unsigned int grid = std::min(blocks, (piece.triples + kChunk - 1) / kChunk);
                              GPK_CUDA_TRY(ctx, cudaMemsetAsync(slots.counter(), 0, sizeof(unsigned int), s));
                              pi_persistent_kernel<<<grid, kBlock, 0, s>>>(piece, args.seed, slots.counter(),
                                                                           slots.slots());
                              GPK_LAUNCH_CHECK(ctx, "pi_persistent_kernel");
                              return GPK_SUCCESS;
                          });
}

}  // namespace gpk::cuda
