// Rung 6, complete unrolling: reduction #6 of the lecture. Rung 5 still runs the
// upper steps of its tree in a loop bounded by blockDim.x, a value known only at run
// time, so every step pays a loop test and a branch and every `tid < s` compares two
// registers. Here the block size is a template parameter: reduce::block_reduce_smem
// unrolls the whole tree at compile time, the steps a smaller block does not need
// vanish, and each `tid < s` tests against a constant. The lecture instantiates every
// power of two from 1 to 512 and picks one at run time; libgpk builds the one block
// size it launches, 256, which keeps the build small (every kernel is compiled for
// several GPU architectures), and the template is what lets the compiler unroll.
//
// Loads are rung 5's: two elements per thread, blockSize apart.
#include "../ladders.hpp"
#include "reduce_common.cuh"

namespace gpk::cuda {
namespace {

template <int kBlockSize, class In, class Acc, class Op>
__global__ void __launch_bounds__(kBlockSize)
    reduce_unroll_complete_kernel(const In *__restrict__ x, int64_t n, Acc *__restrict__ partial) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * (2 * kBlockSize) + threadIdx.x;
    Acc v = i < n ? static_cast<Acc>(x[i]) : Op::template identity<Acc>();
    if (i + kBlockSize < n) v = Op()(v, static_cast<Acc>(x[i + kBlockSize]));
    v = reduce::block_reduce_smem<kBlockSize, Acc, Op>(v);
    if (threadIdx.x == 0) partial[blockIdx.x] = v;
}

constexpr int kBlock = 256;
static_assert(kBlock >= 64 && kBlock <= 1024 && (kBlock & (kBlock - 1)) == 0,
              "the unrolled tree needs a power-of-two block of 64 to 1024 threads");

template <class T, class Op>
struct UnrollCompleteReduction {
    static gpk_status run(gpk_context &ctx, const ReduceArgs &args) {
        using Acc = accumulator_t<T>;
        constexpr reduce::PassShape kShape{kBlock, 2 * kBlock, 0};
        return reduce::run_passes<T, Op>(ctx, args, kShape, reduce_unroll_complete_kernel<kBlock, T, Acc, Op>,
                                         reduce_unroll_complete_kernel<kBlock, Acc, Acc, Op>,
                                         "reduce_unroll_complete_kernel");
    }
};

}  // namespace

gpk_status reduce_unroll_complete(gpk_context &ctx, const ReduceArgs &args) {
    return reduce_dispatch<UnrollCompleteReduction>(ctx, args);
}

}  // namespace gpk::cuda
