// Rung 5, persistent: a grid of exactly the blocks the GPU holds at once, each block
// taking contiguous chunks of triples from a work counter until none is left, with
// each point tested in single precision wherever that decides it.
//
// Rungs 3 and 4 give every thread a fixed share of the launch, so the launch lasts as
// long as its slowest multiprocessor, one that shares its time with another kernel,
// say. Here each block asks a global counter for its next chunk (one atomic per 8192
// triples, fetched while the current chunk is computed) and faster multiprocessors
// simply take more chunks. Hits are integers, so who counted which chunk changes
// nothing.
//
// The test. Philox's ten rounds are 18 wide integer multiplies a triple (what depends
// on the high counter word and the key alone is hoisted), and the exact inside test of
// rungs 2 to 4 adds 6 more products and 6 increments on the same multiplier, which
// bounds that loop. Here each point goes through common/philox.hpp's pi_cell_f32 (two
// exact conversions and two fused multiply-adds on the floating-point units), which
// decides every point but those within about half a cell of the arc (7.5e-7 of them).
// A thread computes kChains triples at once; if any point of any lane's group is
// undecided (one vote a group, about once in 1700 groups), the whole group is counted
// again with the exact test. The hits are the exact test's either way: identical to
// the host backend and the other Philox rungs.
//
// Alone, that bought little: with the multiplier no longer the bound, the loop's
// stalls moved to the dispatch of the integer ALU's instructions (Philox's XORs, the
// coordinates). What moved it was fewer instructions: with the coordinate masks as
// immediates, (w & mask) | 2^23 took two LOP3s, and with the masks in registers (a
// kernel argument, which the compiler cannot fold) it takes one, 6 instructions fewer
// in some 77 a triple. What each step measured is in docs/PERFORMANCE.md, section
// "Auto: pi"; scripts/tune-pi sweeps the GPK_PI_TUNE_* knobs.
#include "pi_common.cuh"

#include "../ladders.hpp"

namespace gpk::cuda {
namespace {

// Tuning knobs (scripts/tune-pi rebuilds this file with -DGPK_PI_TUNE_...=).
#ifndef GPK_PI_TUNE_BLOCK
#define GPK_PI_TUNE_BLOCK 256
#endif
#ifndef GPK_PI_TUNE_CHAINS
#define GPK_PI_TUNE_CHAINS 8
#endif
#ifndef GPK_PI_TUNE_GROUPS
#define GPK_PI_TUNE_GROUPS 4
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

// ---- the test -------------------------------------------------------------------

__device__ __forceinline__ Philox4 triple_block(uint32_t hi, uint32_t lo, uint64_t seed) {
    return pi_triple((static_cast<uint64_t>(hi) << 32) | lo, seed);
}

// The masks of the coordinates, passed to the kernel so that they are not constants
// to the compiler: with a mask in a register and kPiF32Two23 as the immediate,
// (w & mask) | kPiF32Two23 is one LOP3, where two immediates take a LOP3 each (6
// instructions more a triple, of some 77).
struct Masks {
    uint32_t low;  // kPiCellMask: bits 0..20 of a word
    uint32_t top;  // bits 21..30 of a word shifted down by 10 to bits 11..20 of the third coordinate
};
constexpr Masks kMasks{kPiCellMask, kPiCellMask & ~((uint32_t(1) << (32 - kPiCellBits)) - 1)};

// The bits of 2^23 + pi_top_bits(a, b): bits 21..31 of a, then bits 21..30 of b above
// them (in bits 11..20), made with one shift, one LOP3 and one shift-add.
__device__ __forceinline__ uint32_t top_float_bits(uint32_t a, uint32_t b, const Masks &m) {
    return (((b >> (kPiCellBits - (32 - kPiCellBits))) & m.top) | kPiF32Two23) + (a >> kPiCellBits);
}

// Hits of one triple in single precision; sets undecided when a point is not decided.
__device__ __forceinline__ uint32_t triple_hits_f32(const Philox4 &r, const Masks &m, bool &undecided) {
    const float d0 = pi_cell_f32_bits((r.v[0] & m.low) | kPiF32Two23, (r.v[1] & m.low) | kPiF32Two23);
    const float d1 = pi_cell_f32_bits((r.v[2] & m.low) | kPiF32Two23, (r.v[3] & m.low) | kPiF32Two23);
    const float d2 = pi_cell_f32_bits(top_float_bits(r.v[0], r.v[1], m), top_float_bits(r.v[2], r.v[3], m));
    undecided |= pi_f32_undecided(d0);
    undecided |= pi_f32_undecided(d1);
    undecided |= pi_f32_undecided(d2);
    return pi_f32_hit(d0) + pi_f32_hit(d1) + pi_f32_hit(d2);
}

// Hits of kChains triples, (hi << 32) | (lo + c * kBlock) for c < kChains: in single
// precision unless some lane of the warp has a point it does not decide, then exactly.
// Every lane of the warp calls it (the vote needs them all).
__device__ __forceinline__ uint32_t group_hits(uint32_t hi, uint32_t lo, uint64_t seed, const Masks &m) {
    Philox4 r[kChains];
    uint32_t hits = 0;
    bool undecided = false;
#pragma unroll
    for (int c = 0; c < kChains; ++c) {
        r[c] = triple_block(hi, lo + c * kBlock, seed);
        hits += triple_hits_f32(r[c], m, undecided);
    }
    if (__any_sync(0xffffffffu, undecided)) {
        hits = 0;
#pragma unroll
        for (int c = 0; c < kChains; ++c) hits += pi_triple_hits(r[c]);
    }
    return hits;
}

// next_chunk counts the chunks handed out; it is 0 when the launch starts.
__global__ void __launch_bounds__(kBlock, kMinBlocks)
    pi_persistent_kernel(pi::Piece piece, uint64_t seed, Masks masks, unsigned int *next_chunk,
                         unsigned long long *slots) {
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
            // The whole block takes this branch (first is the block's), so every lane of
            // each warp reaches group_hits' vote.
            uint32_t lo = piece.lo + first + threadIdx.x;
#pragma unroll kUnroll
            for (int g = 0; g < kGroups; ++g, lo += kChains * kBlock) hits += group_hits(piece.hi, lo, seed, masks);
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
                              pi_persistent_kernel<<<grid, kBlock, 0, s>>>(piece, args.seed, kMasks, slots.counter(),
                                                                           slots.slots());
                              GPK_LAUNCH_CHECK(ctx, "pi_persistent_kernel");
                              return GPK_SUCCESS;
                          });
}

}  // namespace gpk::cuda
