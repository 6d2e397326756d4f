// Rung 3, sequential addressing: reduction #3 of the lecture. Rung 2's threads worked
// on elements 2s apart, so in every step several threads of a warp hit the same
// shared-memory bank and waited for each other. Here the tree is turned around: in
// step s the threads tid < s combine sdata[tid] with sdata[tid + s], s halving from
// half the block down to 1. A warp's threads read and write consecutive elements,
// free of bank conflicts, and the working threads stay packed into the lowest warps.
// What is left: half of the threads idle from the very first step, having loaded one
// element each and added nothing. Rung 4 sets them to work.
#include "../ladders.hpp"
#include "reduce_common.cuh"

namespace gpk::cuda {
namespace {

constexpr int kBlock = 256;
static_assert((kBlock & (kBlock - 1)) == 0, "the sequential tree needs a power-of-two block");

template <class In, class Acc, class Op>
__global__ void __launch_bounds__(kBlock)
    reduce_sequential_kernel(const In *__restrict__ x, int64_t n, Acc *__restrict__ partial) {
    __shared__ Acc sdata[kBlock];
    const unsigned int tid = threadIdx.x;
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    sdata[tid] = i < n ? static_cast<Acc>(x[i]) : Op::template identity<Acc>();
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] = Op()(sdata[tid], sdata[tid + s]);
        __syncthreads();
    }
    if (tid == 0) partial[blockIdx.x] = sdata[0];
}

template <class T, class Op>
struct SequentialReduction {
    static gpk_status run(gpk_context &ctx, const ReduceArgs &args) {
        using Acc = accumulator_t<T>;
        constexpr reduce::PassShape kShape{kBlock, kBlock, 0};
        return reduce::run_passes<T, Op>(ctx, args, kShape, reduce_sequential_kernel<T, Acc, Op>,
                                         reduce_sequential_kernel<Acc, Acc, Op>, "reduce_sequential_kernel");
    }
};

}  // namespace

gpk_status reduce_sequential(gpk_context &ctx, const ReduceArgs &args) {
    return reduce_dispatch<SequentialReduction>(ctx, args);
}

}  // namespace gpk::cuda
