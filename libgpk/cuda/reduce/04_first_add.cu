// Rung 4, first add during load: reduction #4 of the lecture. In rung 3 each thread
// loaded one element and half of the threads went idle before the first step. Here a
// block takes a tile of twice its size and each thread combines two elements, blockDim
// apart so that both loads stay coalesced, on their way into shared memory: every
// thread does useful work, and the pass needs half the blocks. What is left is the
// tree itself: once the data sits in shared memory the kernel is bound by
// instructions, and its last steps pay a block-wide barrier and loop overhead although
// fewer than 32 threads still work. Rung 5 unrolls those steps.
#include "../ladders.hpp"
#include "reduce_common.cuh"

namespace gpk::cuda {
namespace {

constexpr int kBlock = 256;
static_assert((kBlock & (kBlock - 1)) == 0, "the sequential tree needs a power-of-two block");

template <class In, class Acc, class Op>
__global__ void __launch_bounds__(kBlock)
    reduce_first_add_kernel(const In *__restrict__ x, int64_t n, Acc *__restrict__ partial) {
    __shared__ Acc sdata[kBlock];
    const unsigned int tid = threadIdx.x;
    const int64_t i = static_cast<int64_t>(blockIdx.x) * (2 * blockDim.x) + threadIdx.x;
    Acc v = i < n ? static_cast<Acc>(x[i]) : Op::template identity<Acc>();
    if (i + blockDim.x < n) v = Op()(v, static_cast<Acc>(x[i + blockDim.x]));
    sdata[tid] = v;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] = Op()(sdata[tid], sdata[tid + s]);
        __syncthreads();
    }
    if (tid == 0) partial[blockIdx.x] = sdata[0];
}

template <class T, class Op>
struct FirstAddReduction {
    static gpk_status run(gpk_context &ctx, const ReduceArgs &args) {
        using Acc = accumulator_t<T>;
        constexpr reduce::PassShape kShape{kBlock, 2 * kBlock, 0};
        return reduce::run_passes<T, Op>(ctx, args, kShape, reduce_first_add_kernel<T, Acc, Op>,
                                         reduce_first_add_kernel<Acc, Acc, Op>, "reduce_first_add_kernel");
    }
};

}  // namespace

gpk_status reduce_first_add(gpk_context &ctx, const ReduceArgs &args) {
    return reduce_dispatch<FirstAddReduction>(ctx, args);
}

}  // namespace gpk::cuda
