// Rung 4, two outputs per thread: in rung 3 every multiply-add needs two shared-
// memory reads (one of As, one of Bs), so the shared-memory pipe, not the FMA units,
// sets the pace. Here a 32x16 block computes the same 32x32 tile of C, each thread
// the two elements C(i, j) and C(i, j + 16): the value of As read for a step of k
// serves both, three reads per two multiply-adds instead of four. Each thread also
// fills two elements of each tile, and with half the threads per block a multi-
// processor holds twice as many blocks, whose loads overlap one another's arithmetic.
#include "gemm_util.cuh"

namespace gpk::cuda {
namespace {

using namespace gemm_util;

constexpr int kTile = 32;
constexpr int kRows = 16;  // threadIdx.y range; each thread covers rows y and y + 16 of a tile
static_assert(kTile == 2 * kRows, "each thread computes two outputs of the tile");

template <class T>
__global__ void __launch_bounds__(kTile * kRows)
    gemm_multi_output_kernel(bool transa, bool transb, int64_t m, int64_t n, int64_t k, T alpha,
                             const T *__restrict__ A, int64_t lda, const T *__restrict__ B, int64_t ldb, T beta,
                             T *__restrict__ C, int64_t ldc) {
    __shared__ T As[kTile][kTile];  // As[p][i] = op(A)(i0 + i, p0 + p)
    __shared__ T Bs[kTile][kTile];  // Bs[p][j] = op(B)(p0 + p, j0 + j)
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int64_t tiles_m = (m + kTile - 1) / kTile, tiles_n = (n + kTile - 1) / kTile;
    for (int64_t tj = blockIdx.y; tj < tiles_n; tj += gridDim.y) {
        for (int64_t ti = blockIdx.x; ti < tiles_m; ti += gridDim.x) {
            const int64_t i0 = ti * kTile, j0 = tj * kTile;
            T acc0 = T(0), acc1 = T(0);  // C(i0 + tx, j0 + ty) and C(i0 + tx, j0 + ty + 16)
            for (int64_t p0 = 0; p0 < k; p0 += kTile) {
#pragma unroll
                for (int r = 0; r < kTile; r += kRows) {
                    As[ty + r][tx] = op_at_or_zero(A, lda, transa, i0 + tx, p0 + ty + r, m, k);
                    Bs[ty + r][tx] = op_at_or_zero(B, ldb, transb, p0 + ty + r, j0 + tx, k, n);
                }
                __syncthreads();  // the tiles are complete
#pragma unroll
                for (int p = 0; p < kTile; ++p) {
                    const T a = As[p][tx];
                    acc0 += a * Bs[p][ty];
                    acc1 += a * Bs[p][ty + kRows];
                }
                __syncthreads();  // everyone is done with them before they are refilled
            }
            const int64_t i = i0 + tx, j = j0 + ty;
            if (i < m) {
                if (j < n) store_c(C + (i + j * ldc), alpha, acc0, beta);
                if (j + kRows < n) store_c(C + (i + (j + kRows) * ldc), alpha, acc1, beta);
            }
        }
    }
}

template <class T>
gpk_status gemm(gpk_context &ctx, const GemmArgs &args) {
    const dim3 block(kTile, kRows);
    gemm_multi_output_kernel<T><<<tile_grid(args.m, args.n, kTile, kTile), block, 0, stream(ctx)>>>(
        args.transa, args.transb, args.m, args.n, args.k, static_cast<T>(args.alpha), static_cast<const T *>(args.A),
        args.lda, static_cast<const T *>(args.B), args.ldb, static_cast<T>(args.beta), static_cast<T *>(args.C),
        args.ldc);
    GPK_LAUNCH_CHECK(ctx, "gemm_multi_output_kernel");
    return GPK_SUCCESS;
}

}  // namespace

gpk_status gemm_multi_output(gpk_context &ctx, const GemmArgs &args) {
    return gemm_util::by_dtype(ctx, args, "multi_output", gemm<float>, gemm<double>);
}

}  // namespace gpk::cuda
