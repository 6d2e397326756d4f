// Rung 1, interleaved addressing with divergent branching: reduction #1 of the
// classic parallel-reduction lecture, kept as the lecture wrote it. Each block loads
// 256 elements into shared memory and halves them log2(256) times; in step s the
// threads whose index is a multiple of 2s combine their element with the one s
// slots further. It is the baseline the reduce ladder climbs from, and it shows two
// costs the next rungs remove: `tid % (2*s)` is a slow integer modulo, and the active
// threads are scattered over all the warps, so every warp diverges at every step and
// none retires early, however few threads are still working.
//
// Generalized over the dtype and the operator with a functor; each pass writes one
// partial per block to scratch and passes repeat on the partials until one value
// is left, written to the result (reduce_common.cuh's run_passes). No atomics: the
// tree, and so the result, is fixed.
#include "../ladders.hpp"
#include "reduce_common.cuh"

namespace gpk::cuda {
namespace {

constexpr int kBlock = 256;
static_assert((kBlock & (kBlock - 1)) == 0, "the interleaved tree needs a power-of-two block");

template <class In, class Acc, class Op>
__global__ void __launch_bounds__(kBlock) reduce_interleaved_kernel(const In *__restrict__ x, int64_t n,
                                                                    Acc *__restrict__ partial) {
    __shared__ Acc sdata[kBlock];
    const unsigned int tid = threadIdx.x;
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    // The tail block pads with the operator's identity, which changes no result.
    sdata[tid] = i < n ? static_cast<Acc>(x[i]) : Op::template identity<Acc>();
    __syncthreads();
    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        if (tid % (2 * s) == 0) sdata[tid] = Op()(sdata[tid], sdata[tid + s]);
        __syncthreads();
    }
    if (tid == 0) partial[blockIdx.x] = sdata[0];
}

template <class T, class Op>
struct InterleavedReduction {
    static gpk_status run(gpk_context &ctx, const ReduceArgs &args) {
        using Acc = accumulator_t<T>;
        constexpr reduce::PassShape kShape{kBlock, kBlock, 0};
        return reduce::run_passes<T, Op>(ctx, args, kShape, reduce_interleaved_kernel<T, Acc, Op>,
                                         reduce_interleaved_kernel<Acc, Acc, Op>, "reduce_interleaved_kernel");
    }
};

}  // namespace

gpk_status reduce_interleaved(gpk_context &ctx, const ReduceArgs &args) {
    return reduce_dispatch<InterleavedReduction>(ctx, args);
}

}  // namespace gpk::cuda
