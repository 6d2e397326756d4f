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
#include "persistent.cuh"

#include "../ladders.hpp"

namespace gpk::cuda {

gpk_status pi_persistent(gpk_context &ctx, const PiArgs &args) {
    return pi::count_hits_persistent<pi::triple_hits>(ctx, args, "pi_persistent_kernel");
}

}  // namespace gpk::cuda
