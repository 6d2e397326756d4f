// Rung 10, 16-byte loads: rung 9 moves 4 or 8 bytes per load instruction, one
// instruction per element, so keeping enough bytes in flight to cover DRAM latency
// takes many load instructions, each a slot in the load/store pipeline and in the
// memory system's queues. Here each load moves 16 bytes (float4, int4, double2,
// longlong2): four floats or two doubles per instruction, and each thread issues
// kUnroll of them before using any, 64 bytes in flight per thread
// (reduce::thread_reduce_vec16). A 16-byte load needs a 16-byte aligned address,
// which x need not have: the elements before its first 16-byte boundary and those
// after its last whole vector are read one by one by the first threads of the grid.
// The block tree is rung 9's shuffles.
//
// What is left: two launches, the second waiting for the first to drain; at small n
// the launches, not the data, set the time. Rung 11 does it in one.
#include "../ladders.hpp"
#include "reduce_common.cuh"

namespace gpk::cuda {
namespace {

constexpr int kBlock = 256;
constexpr int kUnroll = 4;  // 16-byte loads in flight per thread

template <class In, class Acc, class Op>
__global__ void __launch_bounds__(kBlock)
    reduce_vec16_kernel(const In *__restrict__ x, int64_t n, Acc *__restrict__ partial) {
    Acc acc = reduce::thread_reduce_vec16<kBlock, kUnroll, In, Acc, Op>(x, n);
    acc = reduce::block_reduce_shuffle<kBlock, Acc, Op>(acc);
    if (threadIdx.x == 0) partial[blockIdx.x] = acc;
}

template <class T, class Op>
struct Vec16Reduction {
    static gpk_status run(gpk_context &ctx, const ReduceArgs &args) {
        using Acc = accumulator_t<T>;
        int64_t grid = 0;
        GPK_FORWARD_IF_ERROR(reduce::resident_grid(ctx, reduce_vec16_kernel<T, Acc, Op>, kBlock, &grid));
        // Elements per tile: kUnroll vectors per thread.
        const reduce::PassShape shape{kBlock, int64_t{kBlock} * kUnroll * static_cast<int64_t>(16 / sizeof(T)), grid};
        return reduce::run_passes<T, Op>(ctx, args, shape, reduce_vec16_kernel<T, Acc, Op>,
                                         reduce_vec16_kernel<Acc, Acc, Op>, "reduce_vec16_kernel");
    }
};

}  // namespace

gpk_status reduce_vec16(gpk_context &ctx, const ReduceArgs &args) { return reduce_dispatch<Vec16Reduction>(ctx, args); }

}  // namespace gpk::cuda
