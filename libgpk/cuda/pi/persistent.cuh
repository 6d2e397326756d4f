// The persistent grid of rungs 5 and 6: a grid of exactly the blocks the GPU holds at
// once, each block taking contiguous chunks of triples from a work counter until none
// is left. The rungs differ only in how they test a triple's points (HitsOf).
#pragma once

#include "pi_common.cuh"

namespace gpk::cuda::pi {

namespace persistent {

constexpr int kBlock = 256;
constexpr int kChains = 4;  // triples a thread has in flight, as in rung 4
constexpr int kGroups = 8;  // groups of kChains triples per thread per chunk
constexpr uint32_t kChunk = uint32_t(kBlock) * kChains * kGroups;
constexpr uint32_t kMaxTriplesPerLaunch = uint32_t(1) << 31;  // as in rung 3
static_assert(kMaxTriplesPerLaunch % kChunk == 0, "launches end on chunk boundaries");
// No thread sees more than kMaxTriplesPerLaunch / kBlock triples, 3 hits each.
static_assert(uint64_t(kMaxTriplesPerLaunch) / kBlock * 3 < (uint64_t(1) << 32), "per-thread hits must fit in 32 bits");

// next_chunk counts the chunks handed out; it is 0 when the launch starts.
// HitsOf(hi, lo, seed) is the hits of triple (hi << 32) | lo.
template <uint32_t (*HitsOf)(uint32_t, uint32_t, uint64_t)>
__global__ void __launch_bounds__(kBlock)
    kernel(Piece piece, uint64_t seed, unsigned int *next_chunk, unsigned long long *slots) {
    // Two slots, so that thread 0 can fetch the block's next chunk while the block
    // still reads the current one: one barrier per chunk.
    __shared__ uint32_t chunk_of[2];
    const uint32_t chunks = (piece.triples + kChunk - 1) / kChunk;
    if (threadIdx.x == 0) chunk_of[0] = atomicAdd(next_chunk, 1u);
    __syncthreads();
    uint32_t hits = 0;
    for (int k = 0;; k ^= 1) {
        const uint32_t chunk = chunk_of[k];
        if (chunk >= chunks) break;
        if (threadIdx.x == 0) chunk_of[k ^ 1] = atomicAdd(next_chunk, 1u);
        const uint32_t first = chunk * kChunk;
        if (piece.triples - first >= kChunk) {
            uint32_t lo = piece.lo + first + threadIdx.x;
#pragma unroll 1
            for (int g = 0; g < kGroups; ++g, lo += kChains * kBlock) {
#pragma unroll
                for (int c = 0; c < kChains; ++c) hits += HitsOf(piece.hi, lo + c * kBlock, seed);
            }
        } else {
            for (uint32_t i = first + threadIdx.x; i < piece.triples; i += kBlock)
                hits += HitsOf(piece.hi, piece.lo + i, seed);
        }
        __syncthreads();
    }
    const uint64_t block = block_sum<kBlock>(hits);
    if (threadIdx.x == 0) slots[blockIdx.x] += block;
}

}  // namespace persistent

// Counts the hits of args' range with the persistent kernel testing points by HitsOf.
template <uint32_t (*HitsOf)(uint32_t, uint32_t, uint64_t)>
gpk_status count_hits_persistent(gpk_context &ctx, const PiArgs &args, const char *kernel_name) {
    using namespace persistent;
    unsigned int blocks = 0;
    GPK_FORWARD_IF_ERROR(resident_blocks(ctx, kernel<HitsOf>, kBlock, &blocks));
    const cudaStream_t s = stream(ctx);
    return count_hits(ctx, args, blocks, kMaxTriplesPerLaunch,
                      [&](const Piece &piece, const BlockSlots &slots) -> gpk_status {
                          const unsigned int grid = std::min(blocks, (piece.triples + kChunk - 1) / kChunk);
                          GPK_CUDA_TRY(ctx, cudaMemsetAsync(slots.counter(), 0, sizeof(unsigned int), s));
                          kernel<HitsOf><<<grid, kBlock, 0, s>>>(piece, args.seed, slots.counter(), slots.slots());
                          GPK_LAUNCH_CHECK(ctx, kernel_name);
                          return GPK_SUCCESS;
                      });
}

}  // namespace gpk::cuda::pi
