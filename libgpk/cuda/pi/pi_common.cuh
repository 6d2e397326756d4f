// What the tuned Philox rungs of pi share: the split of a sample range into whole
// Philox triples (for the kernels) and edge samples (counted on the host), launches of
// bounded length that never cross a 2^32-triple boundary, the block sum of hit counts,
// and per-block hit slots summed in a fixed order once the last launch is done.
//
// Why launches stop at 2^32-triple boundaries: inside one, every triple shares the
// high word of its 64-bit counter, so a kernel walks 32-bit low words only, and the
// parts of Philox rounds 1 and 2 that depend on the high word alone (it enters round 1
// as counter word 1, which round 2 multiplies) are the same for every triple of the
// launch.
#pragma once

#include "../../common/philox.hpp"
#include "../../ops.hpp"
#include "../../status.hpp"
#include "../kernel_util.cuh"
#include "../resources.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

namespace gpk::cuda::pi {

// ---- the range --------------------------------------------------------------------

// One launch's triples: (hi << 32) | (lo + i) for i in [0, triples), with
// lo + triples <= 2^32.
struct Piece {
    uint32_t hi;
    uint32_t lo;
    uint32_t triples;
};

// Calls launch(piece) for consecutive pieces covering [first_triple, end_triple), each
// at most max_triples long and inside one aligned span of 2^32 triples.
template <class Launch>
gpk_status for_each_piece(uint64_t first_triple, uint64_t end_triple, uint32_t max_triples, Launch &&launch) {
    constexpr uint64_t kSpan = uint64_t(1) << 32;  // triples sharing a high word
    for (uint64_t t = first_triple; t < end_triple;) {
        const uint64_t room = kSpan - (t & (kSpan - 1));
        const uint64_t n = std::min(std::min(end_triple - t, room), uint64_t(max_triples));
        GPK_FORWARD_IF_ERROR(launch(Piece{static_cast<uint32_t>(t >> 32), static_cast<uint32_t>(t),
                                          static_cast<uint32_t>(n)}));
        t += n;
    }
    return GPK_SUCCESS;
}

// ---- device helpers ---------------------------------------------------------------

// Hits of triple (hi << 32) | lo: the definition of common/philox.hpp, unchanged.
__device__ __forceinline__ uint32_t triple_hits(uint32_t hi, uint32_t lo, uint64_t seed) {
    return pi_triple_hits(pi_triple((static_cast<uint64_t>(hi) << 32) | lo, seed));
}

// Sum of v over the block, valid in thread 0. Runs once per block, after the hot
// loop, so it sums in 64 bits whatever the per-thread counts.
template <int kBlock>
__device__ __forceinline__ uint64_t block_sum(uint64_t v) {
    return block_reduce_shuffle<kBlock, uint64_t, SumOp>(v);
}

// ---- per-block hit slots ----------------------------------------------------------

constexpr int kSumBlock = 256;

// slots[count] = slots[0] + ... + slots[count - 1], in a fixed order.
template <int kBlock>
__global__ void __launch_bounds__(kBlock) sum_slots_kernel(unsigned long long *slots, unsigned int count) {
    uint64_t v = 0;
    for (unsigned int i = threadIdx.x; i < count; i += kBlock) v += slots[i];
    v = block_sum<kBlock>(v);
    if (threadIdx.x == 0) slots[count] = v;
}

// One 64-bit slot per block of the largest grid a rung launches. Block b of every
// launch adds its hits to slot b, and only that block's thread 0 touches it; launches
// on one stream run in order, so the slots need no atomics and their final sum runs in
// a fixed order. One more word serves a rung as a work counter.
class BlockSlots {
public:
    gpk_status open(gpk_context &ctx, unsigned int blocks) {
        void *p = nullptr;
        GPK_FORWARD_IF_ERROR(buffer(ctx, Slot::Scratch, (size_t(blocks) + 2) * sizeof(unsigned long long), &p));
        slots_ = static_cast<unsigned long long *>(p);
        blocks_ = blocks;
        GPK_CUDA_TRY(ctx, cudaMemsetAsync(slots_, 0, size_t(blocks) * sizeof(unsigned long long), stream(ctx)));
        return GPK_SUCCESS;
    }

    unsigned long long *slots() const { return slots_; }
    // A word after the slots and their total, for the launches to use as they like.
    unsigned int *counter() const { return reinterpret_cast<unsigned int *>(slots_ + blocks_ + 1); }

    // Waits for the launches and returns the total of all slots.
    gpk_status total(gpk_context &ctx, uint64_t *hits) const {
        const cudaStream_t s = stream(ctx);
        sum_slots_kernel<kSumBlock><<<1, kSumBlock, 0, s>>>(slots_, blocks_);
        GPK_LAUNCH_CHECK(ctx, "sum_slots_kernel");
        unsigned long long sum = 0;
        GPK_CUDA_TRY(ctx, cudaMemcpyAsync(&sum, slots_ + blocks_, sizeof sum, cudaMemcpyDeviceToHost, s));
        GPK_CUDA_TRY(ctx, cudaStreamSynchronize(s));
        *hits = sum;
        return GPK_SUCCESS;
    }

private:
    unsigned long long *slots_ = nullptr;
    unsigned int blocks_ = 0;
};

// ---- the launcher skeleton --------------------------------------------------------

// Hits of args: the edge samples on the host (pi_split_range), the whole triples by
// launch(piece, slots) for each piece of at most max_triples triples, each launch at
// most `blocks` blocks wide and adding its hits to slots.slots().
template <class Launch>
gpk_status count_hits(gpk_context &ctx, const PiArgs &args, unsigned int blocks, uint32_t max_triples,
                      Launch &&launch) {
    GPK_RETURN_ERROR_IF(args.count > UINT64_MAX - args.first, &ctx, GPK_ERROR_INTERNAL,
                        "pi range [%llu, +%llu) runs past sample 2^64 - 1",
                        static_cast<unsigned long long>(args.first), static_cast<unsigned long long>(args.count));
    const PiTriples range = pi_split_range(args.first, args.count, args.seed);
    uint64_t triple_hits = 0;
    if (range.end_triple > range.first_triple) {
        BlockSlots slots;
        GPK_FORWARD_IF_ERROR(slots.open(ctx, blocks));
        GPK_FORWARD_IF_ERROR(for_each_piece(range.first_triple, range.end_triple, max_triples,
                                            [&](const Piece &piece) { return launch(piece, slots); }));
        GPK_FORWARD_IF_ERROR(slots.total(ctx, &triple_hits));
    }
    *args.hits = triple_hits + range.edge_hits;
    return GPK_SUCCESS;
}

// Blocks of kBlock threads that fit on the context's GPU at once for `kernel`, at
// least one: the grid of a rung whose threads each take an equal share of a launch.
template <class Kernel>
gpk_status resident_blocks(gpk_context &ctx, Kernel kernel, int block, unsigned int *blocks) {
    int sms = 0, per_sm = 0;
    GPK_CUDA_TRY(ctx, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, ctx.device));
    GPK_CUDA_TRY(ctx, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block, 0));
    *blocks = static_cast<unsigned int>(std::max(1, sms) * std::max(1, per_sm));
    return GPK_SUCCESS;
}

// The launcher of a rung whose kernel gives each thread an equal share of a piece's
// triples, grid-stride (rungs 3 and 4): as many blocks as the GPU holds at once, fewer
// for a piece too small to fill them.
using ShareKernel = void (*)(Piece piece, uint64_t seed, unsigned long long *slots);
template <int kBlock>
gpk_status launch_shares(gpk_context &ctx, const PiArgs &args, ShareKernel kernel, uint32_t max_triples,
                         const char *kernel_name) {
    unsigned int blocks = 0;
    GPK_FORWARD_IF_ERROR(resident_blocks(ctx, kernel, kBlock, &blocks));
    const cudaStream_t s = stream(ctx);
    return count_hits(ctx, args, blocks, max_triples, [&](const Piece &piece, const BlockSlots &slots) -> gpk_status {
        const unsigned int grid = std::min(blocks, (piece.triples + kBlock - 1) / kBlock);
        kernel<<<grid, kBlock, 0, s>>>(piece, args.seed, slots.slots());
        GPK_LAUNCH_CHECK(ctx, kernel_name);
        return GPK_SUCCESS;
    });
}

}  // namespace gpk::cuda::pi
