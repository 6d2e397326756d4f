// Rung 1, naive: one thread per element, B[j + i*ldb] = A[i + j*lda], straight from
// global memory to global memory. Consecutive threads of a warp take consecutive
// rows i of one column of A, so the reads are coalesced -- but the same threads
// write consecutive *columns* of B, ldb elements apart, so every warp's store splits
// into 32 separate transactions. That strided write is what the next rungs (a tile
// staged through shared memory) fix; this one is the baseline.
//
// Elements are moved as 32- or 64-bit words, never as floats, so every dtype
// (and every NaN payload) is copied bit for bit.
#include "../kernel_util.cuh"
#include "../ladders.hpp"
#include "../resources.hpp"

#include <cstdint>

namespace gpk::cuda {
namespace {

template <class Word>
__global__ void transpose_naive_kernel(int64_t rows, int64_t cols, const Word *__restrict__ A, int64_t lda,
                                       Word *__restrict__ B, int64_t ldb) {
    for (int64_t j = static_cast<int64_t>(blockIdx.y) * blockDim.y + threadIdx.y; j < cols;
         j += static_cast<int64_t>(gridDim.y) * blockDim.y)
        for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < rows;
             i += static_cast<int64_t>(gridDim.x) * blockDim.x)
            B[j + i * ldb] = A[i + j * lda];
}

template <class Word>
gpk_status transpose(gpk_context &ctx, const TransposeArgs &args) {
    const dim3 block(32, 8);
    transpose_naive_kernel<Word><<<grid_2d(args.rows, args.cols, block), block, 0, stream(ctx)>>>(
        args.rows, args.cols, static_cast<const Word *>(args.A), args.lda, static_cast<Word *>(args.B), args.ldb);
    GPK_LAUNCH_CHECK(ctx, "transpose_naive_kernel");
    return GPK_SUCCESS;
}

}  // namespace

gpk_status transpose_naive(gpk_context &ctx, const TransposeArgs &args) {
    switch (args.elem_size) {
        case 2: return transpose<uint16_t>(ctx, args);
        case 4: return transpose<uint32_t>(ctx, args);
        case 8: return transpose<uint64_t>(ctx, args);
        default:
            return fail(&ctx, GPK_ERROR_INTERNAL, "transpose reached with element size %zu", args.elem_size);
    }
}

}  // namespace gpk::cuda
