// Rung 5, B tile stored transposed: rung 4 fills Bs[p][j] with threadIdx.x walking
// j, so for the plain (non-transposed) column-major B, whose contiguous dimension is
// k, every thread of a warp loads from a different column, ldb elements apart: 32
// transactions per warp. Here the B tile is stored transposed, Bs[j][p] (a column of
// op(B) per row of the array), and filled with threadIdx.x walking p, so a warp reads
// 32 consecutive elements of one column of B. The inner loop reads Bs[j][p] with j
// fixed per warp, still a broadcast.
//
// The same rule is applied to whichever operand is transposed: each tile is filled
// along its operand's contiguous dimension in memory (a uniform branch per block), so
// every global load is coalesced whatever transa and transb are. The fills that run
// across the rows of a shared array would then put all 32 threads of a warp in one
// bank; one column of padding (33 words per row) spreads them over all 32 banks.
#include "gemm_util.cuh"

namespace gpk::cuda {
namespace {

using namespace gemm_util;

constexpr int kTile = 32;
constexpr int kRows = 16;  // threadIdx.y range; each thread covers rows y and y + 16 of a tile
constexpr int kPad = 1;    // against bank conflicts when a fill runs down a column of the array
static_assert(kTile == 2 * kRows, "each thread computes two outputs of the tile");

template <class T>
__global__ void __launch_bounds__(kTile * kRows)
    gemm_transposed_b_kernel(bool transa, bool transb, int64_t m, int64_t n, int64_t k, T alpha,
                             const T *__restrict__ A, int64_t lda, const T *__restrict__ B, int64_t ldb, T beta,
                             T *__restrict__ C, int64_t ldc) {
    __shared__ T As[kTile][kTile + kPad];  // As[p][i] = op(A)(i0 + i, p0 + p)
    __shared__ T Bs[kTile][kTile + kPad];  // Bs[j][p] = op(B)(p0 + p, j0 + j): transposed
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int64_t tiles_m = (m + kTile - 1) / kTile, tiles_n = (n + kTile - 1) / kTile;
    for (int64_t tj = blockIdx.y; tj < tiles_n; tj += gridDim.y) {
        for (int64_t ti = blockIdx.x; ti < tiles_m; ti += gridDim.x) {
            const int64_t i0 = ti * kTile, j0 = tj * kTile;
            T acc0 = T(0), acc1 = T(0);  // C(i0 + tx, j0 + ty) and C(i0 + tx, j0 + ty + 16)
            for (int64_t p0 = 0; p0 < k; p0 += kTile) {
#pragma unroll
                for (int r = 0; r < kTile; r += kRows) {
                    const int y = ty + r;
                    // x walks the contiguous dimension of each operand: i of A, p of A^T;
                    // p of B, j of B^T.
                    if (!transa)
                        As[y][tx] = op_at_or_zero(A, lda, false, i0 + tx, p0 + y, m, k);
                    else
                        As[tx][y] = op_at_or_zero(A, lda, true, i0 + y, p0 + tx, m, k);
                    if (!transb)
                        Bs[y][tx] = op_at_or_zero(B, ldb, false, p0 + tx, j0 + y, k, n);
                    else
                        Bs[tx][y] = op_at_or_zero(B, ldb, true, p0 + y, j0 + tx, k, n);
                }
                __syncthreads();  // the tiles are complete
#pragma unroll
                for (int p = 0; p < kTile; ++p) {
                    const T a = As[p][tx];
                    acc0 += a * Bs[ty][p];
                    acc1 += a * Bs[ty + kRows][p];
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
    gemm_transposed_b_kernel<T><<<tile_grid(args.m, args.n, kTile, kTile), block, 0, stream(ctx)>>>(
        args.transa, args.transb, args.m, args.n, args.k, static_cast<T>(args.alpha), static_cast<const T *>(args.A),
        args.lda, static_cast<const T *>(args.B), args.ldb, static_cast<T>(args.beta), static_cast<T *>(args.C),
        args.ldc);
    GPK_LAUNCH_CHECK(ctx, "gemm_transposed_b_kernel");
    return GPK_SUCCESS;
}

}  // namespace

gpk_status gemm_transposed_b(gpk_context &ctx, const GemmArgs &args) {
    return gemm_util::by_dtype(ctx, args, "transposed_b", gemm<float>, gemm<double>);
}

}  // namespace gpk::cuda
