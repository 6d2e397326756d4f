// Rung 5, unrolling the last warp: reduction #5 of the lecture. In rung 4's last six
// steps (s = 32 down to 1) only the first warp works, yet each step still pays a
// block-wide __syncthreads() and a turn of the loop. Here the loop stops at s = 64 and
// the first warp finishes alone, its six steps unrolled one after another with no
// block barrier and no `tid < s` test (lanes at or past s compute values nobody
// reads, which costs nothing more: the warp issues the instruction anyway).
//
// The lecture's version of these six steps, on a volatile array with no barrier at
// all, is no longer correct: since Volta the threads of a warp are scheduled
// independently, and thread t may read sdata[t + 16] before or after thread t + 16 has
// overwritten it. reduce::warp_reduce_smem keeps the lesson, one warp without block
// barriers, and makes it correct with a __syncwarp() between each step's reads and its
// writes (see reduce_common.cuh).
//
// What is left: the loop over the other steps still tests and branches at run time,
// because blockDim.x is not known when the kernel is compiled. Rung 6 fixes that.
#include "../ladders.hpp"
#include "reduce_common.cuh"

namespace gpk::cuda {
namespace {

constexpr int kBlock = 256;
static_assert(kBlock >= 64 && (kBlock & (kBlock - 1)) == 0,
              "the last warp reads 64 values: a power-of-two block of at least 64 threads");

template <class In, class Acc, class Op>
__global__ void __launch_bounds__(kBlock)
    reduce_unroll_last_warp_kernel(const In *__restrict__ x, int64_t n, Acc *__restrict__ partial) {
    __shared__ Acc sdata[kBlock];
    const unsigned int tid = threadIdx.x;
    const int64_t i = static_cast<int64_t>(blockIdx.x) * (2 * blockDim.x) + threadIdx.x;
    Acc v = i < n ? static_cast<Acc>(x[i]) : Op::template identity<Acc>();
    if (i + blockDim.x < n) v = Op()(v, static_cast<Acc>(x[i + blockDim.x]));
    sdata[tid] = v;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 32; s >>= 1) {
        if (tid < s) sdata[tid] = Op()(sdata[tid], sdata[tid + s]);
        __syncthreads();
    }
    if (tid < 32) v = reduce::warp_reduce_smem<Acc, Op>(sdata, tid);
    if (tid == 0) partial[blockIdx.x] = v;
}

template <class T, class Op>
struct UnrollLastWarpReduction {
    static gpk_status run(gpk_context &ctx, const ReduceArgs &args) {
        using Acc = accumulator_t<T>;
        constexpr reduce::PassShape kShape{kBlock, 2 * kBlock, 0};
        return reduce::run_passes<T, Op>(ctx, args, kShape, reduce_unroll_last_warp_kernel<T, Acc, Op>,
                                         reduce_unroll_last_warp_kernel<Acc, Acc, Op>,
                                         "reduce_unroll_last_warp_kernel");
    }
};

}  // namespace

gpk_status reduce_unroll_last_warp(gpk_context &ctx, const ReduceArgs &args) {
    return reduce_dispatch<UnrollLastWarpReduction>(ctx, args);
}

}  // namespace gpk::cuda
