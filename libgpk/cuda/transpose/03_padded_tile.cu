// Rung 3: the shared tile padded to 32x33.
//
// Rung 2 reads its shared tile down a column: the 32 words a warp reads are 32 words
// apart and all fall in one of the 32 banks, so the read is replayed 32 times. One
// extra word per row shifts each row by one bank, so a column's 32 words land in 32
// different banks and the read takes one pass. What it leaves: a 32x32 block moves
// one element per thread per phase, so each thread has a single load in flight and
// the block spends much of its time at the barrier; rung 4 gives each thread
// several rows.
#include "../kernel_util.cuh"

namespace gpk::cuda {
namespace {

constexpr int kTile = 32;

template <class T>
__global__ void transpose_padded_tile_kernel(const T *__restrict__ A, int64_t lda, T *__restrict__ B, int64_t ldb,
                                             int64_t rows, int64_t cols) {
    __shared__ T tile[kTile][kTile + 1];
    const int64_t tiles_i = (rows + kTile - 1) / kTile, tiles_j = (cols + kTile - 1) / kTile;
    for (int64_t tj = blockIdx.y; tj < tiles_j; tj += gridDim.y) {
        for (int64_t ti = blockIdx.x; ti < tiles_i; ti += gridDim.x) {
            const int64_t i = ti * kTile + threadIdx.x, j = tj * kTile + threadIdx.y;
            if (i < rows && j < cols) tile[threadIdx.y][threadIdx.x] = A[i + j * lda];
            __syncthreads();
            const int64_t jb = tj * kTile + threadIdx.x, ib = ti * kTile + threadIdx.y;
            if (jb < cols && ib < rows) B[jb + ib * ldb] = tile[threadIdx.x][threadIdx.y];
            __syncthreads();
        }
    }
}

template <class T>
gpk_status launch(gpk_context &ctx, const TransposeArgs &a) {
    const dim3 block(kTile, kTile);
    transpose_padded_tile_kernel<T><<<grid_2d(a.rows, a.cols, block), block, 0, stream(ctx)>>>(
        static_cast<const T *>(a.A), a.lda, static_cast<T *>(a.B), a.ldb, a.rows, a.cols);
    GPK_LAUNCH_CHECK(ctx, "transpose_padded_tile_kernel");
    return GPK_SUCCESS;
}

}  // namespace

gpk_status transpose_padded_tile(gpk_context &ctx, const TransposeArgs &args) {
    switch (args.elem_size) {
        case 2: return launch<uint16_t>(ctx, args);
        case 4: return launch<uint32_t>(ctx, args);
        default: return launch<uint64_t>(ctx, args);
    }
}

}  // namespace gpk::cuda
