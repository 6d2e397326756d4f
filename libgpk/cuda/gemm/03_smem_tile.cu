// Rung 3, shared-memory tiles: rung 2 read each element of A and B from memory once
// per element of C that needs it (2k loads per multiply-add pair). Here a 32x32
// block of threads computes a 32x32 tile of C and walks k in steps of 32: each step
// the block copies a 32x32 tile of op(A) and one of op(B) into shared memory, one
// element per thread, waits, and every thread then runs its 32 multiply-adds out of
// shared memory. Each global element loaded now serves 32 elements of C.
//
// Both tiles are stored k-major (As[p][i], Bs[p][j]) and filled with threadIdx.x
// walking i (for A) and j (for B). A warp's loads of a non-transposed A are
// contiguous; those of a non-transposed B are ldb apart, one transaction per thread
// (rung 5 fixes that). In the inner loop a warp reads 32 consecutive words of As
// (no bank conflict) and one word of Bs (a broadcast).
#include "gemm_util.cuh"

namespace gpk::cuda {
namespace {

using namespace gemm_util;

constexpr int kTile = 32;

template <class T>
__global__ void __launch_bounds__(kTile * kTile)
    gemm_smem_tile_kernel(bool transa, bool transb, int64_t m, int64_t n, int64_t k, T alpha, const T *__restrict__ A,
                          int64_t lda, const T *__restrict__ B, int64_t ldb, T beta, T *__restrict__ C, int64_t ldc) {
    __shared__ T As[kTile][kTile];  // As[p][i] = op(A)(i0 + i, p0 + p)
    __shared__ T Bs[kTile][kTile];  // Bs[p][j] = op(B)(p0 + p, j0 + j)
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int64_t tiles_m = (m + kTile - 1) / kTile, tiles_n = (n + kTile - 1) / kTile;
    for (int64_t tj = blockIdx.y; tj < tiles_n; tj += gridDim.y) {
        for (int64_t ti = blockIdx.x; ti < tiles_m; ti += gridDim.x) {
            const int64_t i0 = ti * kTile, j0 = tj * kTile;
            T acc = T(0);
            for (int64_t p0 = 0; p0 < k; p0 += kTile) {
                As[ty][tx] = op_at_or_zero(A, lda, transa, i0 + tx, p0 + ty, m, k);
                Bs[ty][tx] = op_at_or_zero(B, ldb, transb, p0 + ty, j0 + tx, k, n);
                __syncthreads();  // the tiles are complete
#pragma unroll
                for (int p = 0; p < kTile; ++p) acc += As[p][tx] * Bs[p][ty];
                __syncthreads();  // everyone is done with them before they are refilled
            }
            const int64_t i = i0 + tx, j = j0 + ty;
            if (i < m && j < n) store_c(C + (i + j * ldc), alpha, acc, beta);
        }
    }
}

template <class T>
gpk_status gemm(gpk_context &ctx, const GemmArgs &args) {
    const dim3 block(kTile, kTile);
    gemm_smem_tile_kernel<T><<<tile_grid(args.m, args.n, kTile, kTile), block, 0, stream(ctx)>>>(
        args.transa, args.transb, args.m, args.n, args.k, static_cast<T>(args.alpha), static_cast<const T *>(args.A),
        args.lda, static_cast<const T *>(args.B), args.ldb, static_cast<T>(args.beta), static_cast<T *>(args.C),
        args.ldc);
    GPK_LAUNCH_CHECK(ctx, "gemm_smem_tile_kernel");
    return GPK_SUCCESS;
}

}  // namespace

gpk_status gemm_smem_tile(gpk_context &ctx, const GemmArgs &args) {
    return gemm_util::by_dtype(ctx, args, "smem_tile", gemm<float>, gemm<double>);
}

}  // namespace gpk::cuda
