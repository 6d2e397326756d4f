// Rung 8, eight tiles per step: a block takes eight tiles of blockDim consecutive
// elements at a time instead of rung 7's two. Rung 7's loop issues two loads and then
// waits out the memory latency before its next turn, far too little traffic in flight
// to cover DRAM latency at Hopper's bandwidth. Here each thread issues its eight
// independent loads back to back and only then combines them, so eight are in flight
// at once; the bounds checks leave the loop, since only the one step that runs past
// the end of the array needs them (reduce::thread_reduce_tiles). Each warp still reads
// 32 consecutive elements per load, and the grid and the block tree are rung 7's.
//
// What is left: the block tree still goes through shared memory, with a barrier per
// step. Rung 9 moves it into registers.
#include "../ladders.hpp"
#include "reduce_common.cuh"

namespace gpk::cuda {
namespace {

constexpr int kBlock = 256;
constexpr int kTiles = 8;

template <class In, class Acc, class Op>
__global__ void __launch_bounds__(kBlock)
    reduce_unroll8_kernel(const In *__restrict__ x, int64_t n, Acc *__restrict__ partial) {
    Acc acc = reduce::thread_reduce_tiles<kBlock, kTiles, In, Acc, Op>(x, n);
    acc = reduce::block_reduce_smem<kBlock, Acc, Op>(acc);
    if (threadIdx.x == 0) partial[blockIdx.x] = acc;
}

template <class T, class Op>
struct Unroll8Reduction {
    static gpk_status run(gpk_context &ctx, const ReduceArgs &args) {
        using Acc = accumulator_t<T>;
        int64_t grid = 0;
        GPK_FORWARD_IF_ERROR(reduce::resident_grid(ctx, reduce_unroll8_kernel<T, Acc, Op>, kBlock, &grid));
        const reduce::PassShape shape{kBlock, int64_t{kBlock} * kTiles, grid};
        return reduce::run_passes<T, Op>(ctx, args, shape, reduce_unroll8_kernel<T, Acc, Op>,
                                         reduce_unroll8_kernel<Acc, Acc, Op>, "reduce_unroll8_kernel");
    }
};

}  // namespace

gpk_status reduce_unroll8(gpk_context &ctx, const ReduceArgs &args) {
    return reduce_dispatch<Unroll8Reduction>(ctx, args);
}

}  // namespace gpk::cuda
