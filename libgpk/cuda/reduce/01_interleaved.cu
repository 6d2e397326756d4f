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
// is left, written to the result. No atomics: the tree, and so the result, is fixed.
#include "../kernel_util.cuh"
#include "../ladders.hpp"
#include "../resources.hpp"

#include <algorithm>
#include <utility>

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

int64_t partials_of(int64_t n) { return n / kBlock + (n % kBlock != 0 ? 1 : 0); }

// One pass: x[0..n) to partials_of(n) values in out. A grid holds at most 2^31 - 1
// blocks, so a larger n takes several launches; each starts on a block boundary, so
// block b of the whole pass still writes out[b].
template <class In, class Acc, class Op>
gpk_status reduce_pass(gpk_context &ctx, const In *x, int64_t n, Acc *out) {
    constexpr int64_t kMaxLaunch = kMaxGridX * kBlock;
    for (int64_t offset = 0; offset < n; offset += kMaxLaunch) {
        const int64_t count = std::min(n - offset, kMaxLaunch);
        reduce_interleaved_kernel<In, Acc, Op>
            <<<grid_size(count, kBlock), kBlock, 0, stream(ctx)>>>(x + offset, count, out + offset / kBlock);
        GPK_LAUNCH_CHECK(ctx, "reduce_interleaved_kernel");
    }
    return GPK_SUCCESS;
}

template <class T, class Op>
struct InterleavedReduction {
    static gpk_status run(gpk_context &ctx, const ReduceArgs &args) {
        using Acc = accumulator_t<T>;
        const T *x = static_cast<const T *>(args.x);
        Acc *result = static_cast<Acc *>(args.result);
        const int64_t first = partials_of(args.n);
        if (first == 1) return reduce_pass<T, Acc, Op>(ctx, x, args.n, result);

        // Partials ping-pong between two pieces of one scratch request: the first
        // holds the first pass's output, the second the next pass's, and every later
        // pass is smaller still.
        const int64_t second = partials_of(first);
        void *scratch = nullptr;
        GPK_FORWARD_IF_ERROR(buffer(ctx, Slot::Scratch, static_cast<size_t>(first + second) * sizeof(Acc), &scratch));
        Acc *src = static_cast<Acc *>(scratch);
        Acc *dst = src + first;

        GPK_FORWARD_IF_ERROR((reduce_pass<T, Acc, Op>(ctx, x, args.n, src)));
        int64_t count = first;
        while (count > kBlock) {
            GPK_FORWARD_IF_ERROR((reduce_pass<Acc, Acc, Op>(ctx, src, count, dst)));
            count = partials_of(count);
            std::swap(src, dst);
        }
        // At most one block's worth is left: a single block writes the result.
        return reduce_pass<Acc, Acc, Op>(ctx, src, count, result);
    }
};

}  // namespace

gpk_status reduce_interleaved(gpk_context &ctx, const ReduceArgs &args) {
    return reduce_dispatch<InterleavedReduction>(ctx, args);
}

}  // namespace gpk::cuda
