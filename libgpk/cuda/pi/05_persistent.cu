// Rung 5, persistent: a grid of exactly the blocks the GPU holds at once, each block
// taking contiguous chunks of triples from a work counter until none is left.
//
// Rungs 3 and 4 give every thread a fixed share of the launch, so the launch lasts as
// long as its slowest multiprocessor, one that shares its time with another kernel,
// say. Here each block asks a global counter for its next chunk (one atomic per 8192
// triples, fetched while the current chunk is computed) and faster multiprocessors
// simply take more chunks. Hits are integers, so who counted which chunk changes
// nothing. Within a chunk each thread keeps kChains Philox evaluations in flight, as
// in rung 4, with the group loop unrolled kUnroll times, and tests points with
// common/philox.hpp's exact test (two 32x32->64-bit multiplies and one word for 21-bit
// coordinates) but counts misses, bit 42 of x(x + 1) + y(y + 1): a shift and an add
// per sample where summing the inside predicate took a compare, an add and a select.
// The integer multiplier is not the only bound: a single-precision filter that took
// the test off it (with an exact fallback near the arc) measured no faster (796 G
// samples/s at best), nor did a test in double precision. scripts/tune-pi sweeps the GPK_PI_TUNE_* knobs; the
// defaults are its best on the H100 (2026-11-24, 2^32 samples: 810 G samples/s, 791
// with the group loop not unrolled, about 776 before misses were counted).
#include "pi_common.cuh"

#include "../ladders.hpp"

namespace gpk::cuda {
namespace {

// Tuning knobs (scripts/tune-pi rebuilds this file with -DGPK_PI_TUNE_...=).
#ifndef GPK_PI_TUNE_BLOCK
#define GPK_PI_TUNE_BLOCK 256
#endif
#ifndef GPK_PI_TUNE_CHAINS
#define GPK_PI_TUNE_CHAINS 4
#endif
#ifndef GPK_PI_TUNE_GROUPS
#define GPK_PI_TUNE_GROUPS 8
#endif
#ifndef GPK_PI_TUNE_UNROLL  // of the group loop
#define GPK_PI_TUNE_UNROLL 4
#endif
#ifndef GPK_PI_TUNE_MINBLOCKS  // __launch_bounds__'s minimum blocks per SM; 0: none
#define GPK_PI_TUNE_MINBLOCKS 0
#endif

constexpr int kBlock = GPK_PI_TUNE_BLOCK;
constexpr int kChains = GPK_PI_TUNE_CHAINS;  // triples a thread has in flight, as in rung 4
constexpr int kGroups = GPK_PI_TUNE_GROUPS;  // groups of kChains triples per thread per chunk
constexpr int kUnroll = GPK_PI_TUNE_UNROLL;
constexpr int kMinBlocks = GPK_PI_TUNE_MINBLOCKS;
constexpr uint32_t kChunk = uint32_t(kBlock) * kChains * kGroups;
constexpr uint32_t kMaxTriplesPerLaunch = uint32_t(1) << 31;  // as in rung 3
static_assert(kMaxTriplesPerLaunch % kChunk == 0, "launches end on chunk boundaries");
static_assert(kGroups % kUnroll == 0, "the group loop unrolls evenly");
// No thread sees more than kMaxTriplesPerLaunch / kBlock triples, 3 hits each.
static_assert(uint64_t(kMaxTriplesPerLaunch) / kBlock * 3 < (uint64_t(1) << 32), "per-thread hits must fit in 32 bits");

// ---- the exact test, counting misses ------------------------------------------------
// common/philox.hpp's pi_cell_inside is s = x(x + 1) + y(y + 1) < 2^42 with s < 2^43, so
// bit 42 of s is exactly the miss: 1 - inside. Summing (s >> 42) needs one shift-add
// (LEA.HI) a sample, where summing the predicate took a compare, an add and a select.

__device__ __forceinline__ uint32_t cell_miss(uint32_t x, uint32_t y) {
    const uint64_t s = static_cast<uint64_t>(x) * (x + 1) + static_cast<uint64_t>(y) * (y + 1);
    return static_cast<uint32_t>(s >> 32) >> (2 * kPiCellBits - 32);
}

__device__ __forceinline__ uint32_t triple_misses(const Philox4 &r) {
    return cell_miss(r.v[0] & kPiCellMask, r.v[1] & kPiCellMask) + cell_miss(r.v[2] & kPiCellMask, r.v[3] & kPiCellMask) +
           cell_miss(pi_top_bits(r.v[0], r.v[1]), pi_top_bits(r.v[2], r.v[3]));
}

__device__ __forceinline__ Philox4 triple_block(uint32_t hi, uint32_t lo, uint64_t seed) {
    return pi_triple((static_cast<uint64_t>(hi) << 32) | lo, seed);
}

// Misses of kChains triples: (hi << 32) | (lo + c * kBlock) for c < kChains.
__device__ __forceinline__ uint32_t group_misses(uint32_t hi, uint32_t lo, uint64_t seed) {
    uint32_t misses = 0;
#pragma unroll
    for (int c = 0; c < kChains; ++c) misses += triple_misses(triple_block(hi, lo + c * kBlock, seed));
    return misses;
}

// next_chunk counts the chunks handed out; it is 0 when the launch starts.
__global__ void __launch_bounds__(kBlock, kMinBlocks)
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
            uint32_t misses = 0;
#pragma unroll kUnroll
            for (int g = 0; g < kGroups; ++g, lo += kChains * kBlock) misses += group_misses(piece.hi, lo, seed);
            hits += uint32_t(3 * kChains * kGroups) - misses;
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
