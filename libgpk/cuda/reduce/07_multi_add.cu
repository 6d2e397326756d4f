// Rung 7, several elements per thread: reduction #7 of the lecture. Rungs 2 to 6
// launch one block per tile, so a large array means millions of blocks, each loading
// two elements per thread and then paying a whole tree (barriers, idle threads) for
// them, and one more pass over the millions of partials. Here the grid is only as
// many blocks as the GPU holds at once, and each thread walks the array grid-stride,
// combining many elements in a register before the block's single tree (the
// lecture's appeal to Brent's theorem: O(n / log n) threads doing O(log n) work each
// cost no more steps and far less overhead). The first pass leaves about one partial
// per resident block, and a one-block second pass finishes, whatever n.
//
// What is left: every turn of the loop waits for its two loads before it can move
// on, with little memory traffic in flight per thread. Rung 8 issues more loads at
// once.
#include "../ladders.hpp"
#include "reduce_common.cuh"

namespace gpk::cuda {
namespace {

constexpr int kBlock = 256;

template <class In, class Acc, class Op>
__global__ void __launch_bounds__(kBlock)
    reduce_multi_add_kernel(const In *__restrict__ x, int64_t n, Acc *__restrict__ partial) {
    const int64_t stride = static_cast<int64_t>(gridDim.x) * (2 * kBlock);
    Acc acc = Op::template identity<Acc>();
    for (int64_t i = static_cast<int64_t>(blockIdx.x) * (2 * kBlock) + threadIdx.x; i < n; i += stride) {
        acc = Op()(acc, static_cast<Acc>(x[i]));
        if (i + kBlock < n) acc = Op()(acc, static_cast<Acc>(x[i + kBlock]));
    }
    acc = reduce::block_reduce_smem<kBlock, Acc, Op>(acc);
    if (threadIdx.x == 0) partial[blockIdx.x] = acc;
}

template <class T, class Op>
struct MultiAddReduction {
    static gpk_status run(gpk_context &ctx, const ReduceArgs &args) {
        using Acc = accumulator_t<T>;
        int64_t grid = 0;
        GPK_FORWARD_IF_ERROR(reduce::resident_grid(ctx, reduce_multi_add_kernel<T, Acc, Op>, kBlock, &grid));
        const reduce::PassShape shape{kBlock, 2 * kBlock, grid};
        return reduce::run_passes<T, Op>(ctx, args, shape, reduce_multi_add_kernel<T, Acc, Op>,
                                         reduce_multi_add_kernel<Acc, Acc, Op>, "reduce_multi_add_kernel");
    }
};

}  // namespace

gpk_status reduce_multi_add(gpk_context &ctx, const ReduceArgs &args) {
    return reduce_dispatch<MultiAddReduction>(ctx, args);
}

}  // namespace gpk::cuda
