// Rung 4, instruction-level parallelism: each thread keeps kChains independent Philox
// evaluations in flight.
//
// A Philox round is a chain: each round's multiplies need the XORs of the round
// before, and each multiply takes several cycles to deliver. With one triple per
// iteration (rung 3) a warp has only the two multiplies of a round to issue before it
// waits, so the scheduler depends on many resident warps to keep the multiplier busy.
// Here the loop is unrolled over kChains triples a thread sweeps at once, and the
// compiler interleaves their rounds: a warp always has independent work to issue, the
// loop's add, compare and branch are paid once per kChains triples, and the grid is
// sized to what the GPU holds at once, so every thread has an equal share.
#include "pi_common.cuh"

#include "../ladders.hpp"

namespace gpk::cuda {
namespace {

constexpr int kBlock = 256;
constexpr int kChains = 4;
constexpr uint32_t kMaxTriplesPerLaunch = uint32_t(1) << 31;  // as in rung 3
// No thread sees more than kMaxTriplesPerLaunch / kBlock triples, 3 hits each.
static_assert(uint64_t(kMaxTriplesPerLaunch) / kBlock * 3 < (uint64_t(1) << 32), "per-thread hits must fit in 32 bits");

__global__ void __launch_bounds__(kBlock)
    pi_ilp_kernel(pi::Piece piece, uint64_t seed, unsigned long long *slots) {
    const uint32_t threads = gridDim.x * kBlock;
    const uint32_t sweep = kChains * threads;
    // Triples [0, full) go in sweeps of kChains per thread; the rest, fewer than one
    // sweep, one per thread per step.
    const uint32_t full = piece.triples - piece.triples % sweep;
    uint32_t hits = 0;
    uint32_t i = blockIdx.x * kBlock + threadIdx.x;
    for (; i < full; i += sweep) {
#pragma unroll
        for (int c = 0; c < kChains; ++c) hits += pi::triple_hits(piece.hi, piece.lo + i + c * threads, seed);
    }
    for (; i < piece.triples; i += threads) hits += pi::triple_hits(piece.hi, piece.lo + i, seed);
    const uint64_t block = pi::block_sum<kBlock>(hits);
    if (threadIdx.x == 0) slots[blockIdx.x] += block;
}

}  // namespace

gpk_status pi_ilp(gpk_context &ctx, const PiArgs &args) {
    return pi::launch_shares<kBlock>(ctx, args, pi_ilp_kernel, kMaxTriplesPerLaunch, "pi_ilp_kernel");
}

}  // namespace gpk::cuda
