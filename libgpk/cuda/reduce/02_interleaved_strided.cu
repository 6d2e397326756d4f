// Rung 2, interleaved addressing with strided indexing: reduction #2 of the classic
// parallel-reduction lecture. Rung 1 chose its working threads with `tid % (2*s)`, a
// slow integer modulo that leaves them scattered over every warp of the block. Here
// thread tid works on element 2*s*tid, so the working threads are always the lowest-
// numbered ones: whole warps fall idle together and skip the step, and only the warp
// on the boundary diverges. What it costs instead is shared-memory bank conflicts: in
// step s a warp's threads touch addresses 2s elements apart, so ever more of them land
// in the same bank (2-way for 4-byte values in the first step, and growing), and the
// bank serializes their accesses. Rung 3 removes them.
//
// Like rung 1: one tile of 256 elements per block, one partial per block to scratch,
// passes repeated on the partials until one value is left.
#include "../ladders.hpp"
#include "reduce_common.cuh"

namespace gpk::cuda {
namespace {

constexpr int kBlock = 256;
static_assert((kBlock & (kBlock - 1)) == 0, "the interleaved tree needs a power-of-two block");

template <class In, class Acc, class Op>
__global__ void __launch_bounds__(kBlock)
    reduce_interleaved_strided_kernel(const In *__restrict__ x, int64_t n, Acc *__restrict__ partial) {
    __shared__ Acc sdata[kBlock];
    const unsigned int tid = threadIdx.x;
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    // The tail block pads with the operator's identity, which changes no result.
    sdata[tid] = i < n ? static_cast<Acc>(x[i]) : Op::template identity<Acc>();
    __syncthreads();
    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        // index is a multiple of 2s below blockDim.x, so index + s is inside the block.
        const unsigned int index = 2 * s * tid;
        if (index < blockDim.x) sdata[index] = Op()(sdata[index], sdata[index + s]);
        __syncthreads();
    }
    if (tid == 0) partial[blockIdx.x] = sdata[0];
}

template <class T, class Op>
struct InterleavedStridedReduction {
    static gpk_status run(gpk_context &ctx, const ReduceArgs &args) {
        using Acc = accumulator_t<T>;
        constexpr reduce::PassShape kShape{kBlock, kBlock, 0};
        return reduce::run_passes<T, Op>(ctx, args, kShape, reduce_interleaved_strided_kernel<T, Acc, Op>,
                                         reduce_interleaved_strided_kernel<Acc, Acc, Op>,
                                         "reduce_interleaved_strided_kernel");
    }
};

}  // namespace

gpk_status reduce_interleaved_strided(gpk_context &ctx, const ReduceArgs &args) {
    return reduce_dispatch<InterleavedStridedReduction>(ctx, args);
}

}  // namespace gpk::cuda
