// Rung 3, registers: the fused kernel's loop rebuilt around 32-bit counters.
//
// The fused rung walks 64-bit triple indices grid-stride, so every triple pays 64-bit
// adds and compares, and the high word of the Philox counter looks different for
// every triple. Here a launch never crosses a 2^32-triple boundary (pi_common.cuh), so
// the high word is a kernel argument and each thread walks 32-bit low words: the loop
// costs one add and one compare, and what Philox rounds 1 and 2 compute from the high
// word and the key alone is hoisted out of the loop by the compiler. The block sum is
// warp shuffles instead of a shared-memory tree with a barrier per level, and each
// block adds its hits to its own slot instead of one global atomic.
#include "pi_common.cuh"

#include "../ladders.hpp"

namespace gpk::cuda {
namespace {

constexpr int kBlock = 256;
// 2^31 Philox evaluations (3 * 2^31 samples) a launch: a few milliseconds on a large
// GPU, so launches stay short enough to keep a display GPU responsive.
constexpr uint32_t kMaxTriplesPerLaunch = uint32_t(1) << 31;
// No thread sees more than kMaxTriplesPerLaunch / kBlock triples, 3 hits each.
static_assert(uint64_t(kMaxTriplesPerLaunch) / kBlock * 3 < (uint64_t(1) << 32), "per-thread hits must fit in 32 bits");

__global__ void __launch_bounds__(kBlock)
    pi_registers_kernel(pi::Piece piece, uint64_t seed, unsigned long long *slots) {
    // A thread's count fits in 32 bits (see kMaxTriplesPerLaunch); the block sums in 64.
    uint32_t hits = 0;
    const uint32_t stride = gridDim.x * kBlock;
    for (uint32_t i = blockIdx.x * kBlock + threadIdx.x; i < piece.triples; i += stride)
        hits += pi::triple_hits(piece.hi, piece.lo + i, seed);
    const uint64_t block = pi::block_sum<kBlock>(hits);
    if (threadIdx.x == 0) slots[blockIdx.x] += block;
}

}  // namespace

gpk_status pi_registers(gpk_context &ctx, const PiArgs &args) {
    return pi::launch_shares<kBlock>(ctx, args, pi_registers_kernel, kMaxTriplesPerLaunch, "pi_registers_kernel");
}

}  // namespace gpk::cuda
