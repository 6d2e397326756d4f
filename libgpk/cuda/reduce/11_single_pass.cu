// Rung 11, a single pass: rung 10 takes two launches, and the second, one block over
// the first's partials, can start only once the first has drained, with a launch gap
// between them; at small n the launches, not the data, set the time. Here one launch
// does both. Each block reduces its share as in rung 10 and writes its partial; its
// thread 0 then adds 1 to a counter of finished blocks with release semantics, which
// makes the partial visible to the whole GPU first. The block that draws the last ticket knows that
// every partial is written and combines them itself.
//
// Deterministic: the last block does not fold partials in as they arrive; it reads
// all of them in a fixed order (partial b to thread b mod 256, then the block tree),
// so which block happens to finish last changes nothing. No block waits for another,
// so the grid need not be resident at once for the kernel to finish.
//
// The counter is a word of the context kept zero between calls (cuda::zero_word): the
// last block, which alone still touches it, sets it back to 0, so no memset launch
// precedes the kernel and a call is one launch. The context's calls run in stream
// order, so no two grids count in it at once.
#include "../ladders.hpp"
#include "reduce_common.cuh"

#include <cuda/atomic>

namespace gpk::cuda {
namespace {

// Threads per block and 16-byte loads in flight per thread; -DGPK_REDUCE_TUNE_BLOCK
// and -DGPK_REDUCE_TUNE_UNROLL set them for measurements.
#ifndef GPK_REDUCE_TUNE_BLOCK
#define GPK_REDUCE_TUNE_BLOCK 1024
#endif
#ifndef GPK_REDUCE_TUNE_UNROLL
#define GPK_REDUCE_TUNE_UNROLL 4
#endif
constexpr int kBlock = GPK_REDUCE_TUNE_BLOCK;
constexpr int kUnroll = GPK_REDUCE_TUNE_UNROLL;

template <class In, class Acc, class Op>
__global__ void __launch_bounds__(kBlock)
    reduce_single_pass_kernel(const In *__restrict__ x, int64_t n, Acc *partial, unsigned int *finished,
                              Acc *result) {
    __shared__ bool is_last;
    Acc acc = reduce::thread_reduce_vec16<kBlock, kUnroll, In, Acc, Op>(x, n);
    acc = reduce::block_reduce_shuffle<kBlock, Acc, Op>(acc);
    // One block (n up to one tile): its sum is the result, with no partial, fence or
    // ticket; the counter stays zero.
    if (gridDim.x == 1) {
        if (threadIdx.x == 0) *result = acc;
        return;
    }
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = acc;
        // One acquire-release add: its release makes the partial visible GPU-wide
        // before the count that announces it, its acquire makes the partials the
        // count announces visible to the block that draws the last ticket (to its
        // other threads through the barrier below). Cheaper at the end of the kernel
        // than a sequentially consistent __threadfence() on either side of an add.
        ::cuda::atomic_ref<unsigned int, ::cuda::thread_scope_device> count(*finished);
        const unsigned int ticket = count.fetch_add(1u, ::cuda::memory_order_acq_rel);
        is_last = ticket == gridDim.x - 1;
    }
    // Also parts the two uses of block_reduce_shuffle's shared memory.
    __syncthreads();
    if (!is_last) return;

    // Read from L2 (ld.global.cg): the partials were written by other multiprocessors
    // during this launch.
    Acc total = Op::template identity<Acc>();
    for (unsigned int b = threadIdx.x; b < gridDim.x; b += kBlock) total = Op()(total, __ldcg(partial + b));
    total = reduce::block_reduce_shuffle<kBlock, Acc, Op>(total);
    if (threadIdx.x == 0) {
        *result = total;
        *finished = 0;  // every block has drawn its ticket: ready for the next grid
    }
}

template <class T, class Op>
struct SinglePassReduction {
    static gpk_status run(gpk_context &ctx, const ReduceArgs &args) {
        using Acc = accumulator_t<T>;
        const auto kernel = reduce_single_pass_kernel<T, Acc, Op>;
        int64_t resident = 0;
        GPK_FORWARD_IF_ERROR(reduce::resident_grid(ctx, kernel, kBlock, &resident));
        const reduce::PassShape shape{kBlock, int64_t{kBlock} * kUnroll * static_cast<int64_t>(16 / sizeof(T)),
                                      resident};
        const int64_t grid = shape.partials(args.n);

        void *scratch = nullptr;
        GPK_FORWARD_IF_ERROR(buffer(ctx, Slot::Scratch, static_cast<size_t>(grid) * sizeof(Acc), &scratch));
        unsigned int *finished = nullptr;
        GPK_FORWARD_IF_ERROR(zero_word(ctx, &finished));
        auto *partial = static_cast<Acc *>(scratch);
        const cudaStream_t s = stream(ctx);
        kernel<<<static_cast<unsigned int>(grid), kBlock, 0, s>>>(static_cast<const T *>(args.x), args.n, partial,
                                                                  finished, static_cast<Acc *>(args.result));
        GPK_LAUNCH_CHECK(ctx, "reduce_single_pass_kernel");
        return GPK_SUCCESS;
    }
};

}  // namespace

gpk_status reduce_single_pass(gpk_context &ctx, const ReduceArgs &args) {
    return reduce_dispatch<SinglePassReduction>(ctx, args);
}

}  // namespace gpk::cuda
