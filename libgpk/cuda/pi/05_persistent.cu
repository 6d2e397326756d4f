// Rung 5, persistent: a grid of exactly the blocks the GPU holds at once, each block
// taking contiguous chunks of pairs from a work counter until none is left, and an
// inside test with half the multiplies.
//
// Work: rungs 3 and 4 give every thread a fixed share of the launch, so the launch
// lasts as long as its slowest multiprocessor, one that shares its time with another
// kernel, say. Here each block asks a global counter for its next chunk (one atomic
// per 8192 pairs, fetched while the current chunk is computed) and faster
// multiprocessors simply take more chunks. Hits are integers, so who counted which
// chunk changes nothing.
//
// Test: common/philox.hpp decides x^2 + y^2 < 2^64 with two 32x32->64-bit products
// and a 64-bit compare. With X = hi(x^2) and Y = hi(y^2), the sum is below 2^64 when
// X + Y <= 2^32 - 2 and at or above it when X + Y >= 2^32; only X + Y == 2^32 - 1
// depends on the low halves. So each sample costs two multiply-highs, one add whose
// carry is the miss, and one min that spots the undecided case: t = X + Y + 1 never
// exceeds 2^33 - 3 (X, Y <= 2^32 - 2), so its low word is 0 exactly when X + Y is
// 2^32 - 1. A group with such a sample (about one sample in 2^31) is recounted with
// the exact test of philox.hpp, so the hits are those of the host backend.
#include "pi_common.cuh"

#include "../ladders.hpp"

namespace gpk::cuda {
namespace {

constexpr int kBlock = 256;
constexpr int kChains = 4;  // pairs a thread has in flight, as in rung 4
constexpr int kGroups = 8;  // groups of kChains pairs per thread per chunk
constexpr uint32_t kChunk = uint32_t(kBlock) * kChains * kGroups;
constexpr uint32_t kMaxPairsPerLaunch = uint32_t(1) << 31;
static_assert(kMaxPairsPerLaunch % kChunk == 0, "launches end on chunk boundaries");

// Adds 1 to misses when (x, y) is outside, except in the undecided case, which sets
// edge to 0 (see the top of the file).
__device__ __forceinline__ void count_outside(uint32_t x, uint32_t y, uint32_t &misses, uint32_t &edge) {
    const uint64_t t = static_cast<uint64_t>(__umulhi(x, x)) + __umulhi(y, y) + 1;
    misses += static_cast<uint32_t>(t >> 32);
    edge = min(edge, static_cast<uint32_t>(t));
}

// Hits of kChains pairs: (hi << 32) | (lo + c * kBlock) for c < kChains.
__device__ __forceinline__ uint32_t group_hits(uint32_t hi, uint32_t lo, uint64_t seed) {
    uint32_t misses = 0, edge = 0xffffffffu;
#pragma unroll
    for (int c = 0; c < kChains; ++c) {
        const Philox4 r = pi_pair((static_cast<uint64_t>(hi) << 32) | (lo + c * kBlock), seed);
        count_outside(r.v[0], r.v[1], misses, edge);
        count_outside(r.v[2], r.v[3], misses, edge);
    }
    if (edge == 0) {
        uint32_t hits = 0;
#pragma unroll 1
        for (int c = 0; c < kChains; ++c) hits += pi::pair_hits(hi, lo + c * kBlock, seed);
        return hits;
    }
    return 2 * kChains - misses;
}

// next_chunk counts the chunks handed out; it is 0 when the launch starts.
__global__ void __launch_bounds__(kBlock)
    pi_persistent_kernel(pi::Piece piece, uint64_t seed, unsigned int *next_chunk, unsigned long long *slots) {
    // Two slots, so that thread 0 can fetch the block's next chunk while the block
    // still reads the current one: one barrier per chunk.
    __shared__ uint32_t chunk_of[2];
    const uint32_t chunks = (piece.pairs + kChunk - 1) / kChunk;
    if (threadIdx.x == 0) chunk_of[0] = atomicAdd(next_chunk, 1u);
    __syncthreads();
    // At most kMaxPairsPerLaunch / kBlock pairs, 2 hits each, for one thread.
    uint32_t hits = 0;
    for (int k = 0;; k ^= 1) {
        const uint32_t chunk = chunk_of[k];
        if (chunk >= chunks) break;
        if (threadIdx.x == 0) chunk_of[k ^ 1] = atomicAdd(next_chunk, 1u);
        const uint32_t first = chunk * kChunk;
        if (piece.pairs - first >= kChunk) {
            uint32_t lo = piece.lo + first + threadIdx.x;
#pragma unroll 1
            for (int g = 0; g < kGroups; ++g, lo += kChains * kBlock) hits += group_hits(piece.hi, lo, seed);
        } else {
            for (uint32_t i = first + threadIdx.x; i < piece.pairs; i += kBlock)
                hits += pi::pair_hits(piece.hi, piece.lo + i, seed);
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
    return pi::count_hits(ctx, args, blocks, kMaxPairsPerLaunch,
                          [&](const pi::Piece &piece, const pi::BlockSlots &slots) -> gpk_status {
                              const unsigned int grid = std::min(blocks, (piece.pairs + kChunk - 1) / kChunk);
                              GPK_CUDA_TRY(ctx, cudaMemsetAsync(slots.counter(), 0, sizeof(unsigned int), s));
                              pi_persistent_kernel<<<grid, kBlock, 0, s>>>(piece, args.seed, slots.counter(),
                                                                           slots.slots());
                              GPK_LAUNCH_CHECK(ctx, "pi_persistent_kernel");
                              return GPK_SUCCESS;
                          });
}

}  // namespace gpk::cuda
