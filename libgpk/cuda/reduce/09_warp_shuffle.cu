// Rung 9, warp shuffles: rung 8's block tree goes through shared memory, each of its
// eight steps a store, a barrier (block- or warp-wide) and two loads. Here each warp
// reduces its 32 values in registers with five __shfl_down_sync exchanges, no shared
// memory and no barrier; one value per warp then goes through shared memory, behind a
// single __syncthreads(), and the first warp reduces those the same way
// (reduce::block_reduce_shuffle). The loads are rung 8's: eight tiles per step,
// grid-stride over a grid of resident blocks.
//
// What is left: every load moves 4 or 8 bytes, so moving the array takes many load
// instructions per byte. Rung 10 loads 16 bytes at a time.
#include "../ladders.hpp"
#include "reduce_common.cuh"

namespace gpk::cuda {
namespace {

constexpr int kBlock = 256;
constexpr int kTiles = 8;

template <class In, class Acc, class Op>
__global__ void __launch_bounds__(kBlock)
    reduce_warp_shuffle_kernel(const In *__restrict__ x, int64_t n, Acc *__restrict__ partial) {
    Acc acc = reduce::thread_reduce_tiles<kBlock, kTiles, In, Acc, Op>(x, n);
    acc = reduce::block_reduce_shuffle<kBlock, Acc, Op>(acc);
    if (threadIdx.x == 0) partial[blockIdx.x] = acc;
}

template <class T, class Op>
struct WarpShuffleReduction {
    static gpk_status run(gpk_context &ctx, const ReduceArgs &args) {
        using Acc = accumulator_t<T>;
        int64_t grid = 0;
        GPK_FORWARD_IF_ERROR(reduce::resident_grid(ctx, reduce_warp_shuffle_kernel<T, Acc, Op>, kBlock, &grid));
        const reduce::PassShape shape{kBlock, int64_t{kBlock} * kTiles, grid};
        return reduce::run_passes<T, Op>(ctx, args, shape, reduce_warp_shuffle_kernel<T, Acc, Op>,
                                         reduce_warp_shuffle_kernel<Acc, Acc, Op>, "reduce_warp_shuffle_kernel");
    }
};

}  // namespace

gpk_status reduce_warp_shuffle(gpk_context &ctx, const ReduceArgs &args) {
    return reduce_dispatch<WarpShuffleReduction>(ctx, args);
}

}  // namespace gpk::cuda
