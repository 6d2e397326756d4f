// Rung 4: 32x8 thread blocks, each thread moving four rows of the padded tile.
//
// In rung 3 every thread loads one element and then waits at the barrier, so a block
// has little memory traffic in flight and 1024 threads synchronize for 1024 elements.
// Here 256 threads move the same 32x33 tile, each issuing four independent loads
// (and later four stores) before it waits: more bytes in flight per thread, a quarter
// of the threads per element, and the index arithmetic is shared by four elements.
#include "../kernel_util.cuh"

namespace gpk::cuda {
namespace {

constexpr int kTile = 32;
constexpr int kBlockRows = 8;
static_assert(kTile % kBlockRows == 0, "each thread must move a whole number of rows");

template <class T>
__global__ void __launch_bounds__(kTile * kBlockRows)
    transpose_block_rows_kernel(const T *__restrict__ A, int64_t lda, T *__restrict__ B, int64_t ldb, int64_t rows,
                                int64_t cols) {
    __shared__ T tile[kTile][kTile + 1];
    const int64_t tiles_i = (rows + kTile - 1) / kTile, tiles_j = (cols + kTile - 1) / kTile;
    for (int64_t tj = blockIdx.y; tj < tiles_j; tj += gridDim.y) {
        for (int64_t ti = blockIdx.x; ti < tiles_i; ti += gridDim.x) {
            const int64_t i = ti * kTile + threadIdx.x;
#pragma unroll
            for (int r = 0; r < kTile; r += kBlockRows) {
                const int64_t j = tj * kTile + threadIdx.y + r;
                if (i < rows && j < cols) tile[threadIdx.y + r][threadIdx.x] = A[i + j * lda];
            }
            __syncthreads();
            const int64_t jb = tj * kTile + threadIdx.x;
#pragma unroll
            for (int r = 0; r < kTile; r += kBlockRows) {
                const int64_t ib = ti * kTile + threadIdx.y + r;
                if (jb < cols && ib < rows) B[jb + ib * ldb] = tile[threadIdx.x][threadIdx.y + r];
            }
            __syncthreads();
        }
    }
}

template <class T>
gpk_status launch(gpk_context &ctx, const TransposeArgs &a) {
    const dim3 block(kTile, kBlockRows);
    transpose_block_rows_kernel<T><<<grid_2d(a.rows, a.cols, dim3(kTile, kTile)), block, 0, stream(ctx)>>>(
        static_cast<const T *>(a.A), a.lda, static_cast<T *>(a.B), a.ldb, a.rows, a.cols);
    GPK_LAUNCH_CHECK(ctx, "transpose_block_rows_kernel");
    return GPK_SUCCESS;
}

}  // namespace

gpk_status transpose_block_rows(gpk_context &ctx, const TransposeArgs &args) {
    switch (args.elem_size) {
        case 2: return launch<uint16_t>(ctx, args);
        case 4: return launch<uint32_t>(ctx, args);
        default: return launch<uint64_t>(ctx, args);
    }
}

}  // namespace gpk::cuda
