// Rung 2: coalesced through a 32x32 shared-memory tile.
//
// The naive rung reads A along its contiguous dimension but writes B with a stride
// of ldb elements, so every warp's store touches 32 different cache lines. Here a
// 32x32 block of threads first copies a tile of A into shared memory (reads
// coalesced), then writes the tile's transpose to B from shared memory, with
// consecutive threads on consecutive elements of B (writes coalesced). What it
// leaves: the write phase reads the shared tile down a column, 32 words apart, so all
// 32 threads of a warp hit the same bank -- a 32-way conflict that rung 3 removes.
#include "../kernel_util.cuh"

namespace gpk::cuda {
namespace {

constexpr int kTile = 32;

template <class T>
__global__ void transpose_smem_tile_kernel(const T *__restrict__ A, int64_t lda, T *__restrict__ B, int64_t ldb,
                                           int64_t rows, int64_t cols) {
    __shared__ T tile[kTile][kTile];
    const int64_t tiles_i = (rows + kTile - 1) / kTile, tiles_j = (cols + kTile - 1) / kTile;
    for (int64_t tj = blockIdx.y; tj < tiles_j; tj += gridDim.y) {
        for (int64_t ti = blockIdx.x; ti < tiles_i; ti += gridDim.x) {
            const int64_t i = ti * kTile + threadIdx.x, j = tj * kTile + threadIdx.y;
            if (i < rows && j < cols) tile[threadIdx.y][threadIdx.x] = A[i + j * lda];
            __syncthreads();
            // Thread (x, y) now writes B(jb, ib) = A(ib, jb), consecutive x along B's columns.
            const int64_t jb = tj * kTile + threadIdx.x, ib = ti * kTile + threadIdx.y;
            if (jb < cols && ib < rows) B[jb + ib * ldb] = tile[threadIdx.x][threadIdx.y];
            __syncthreads();  // the tile is reused by the next iteration
        }
    }
}

template <class T>
gpk_status launch(gpk_context &ctx, const TransposeArgs &a) {
    const dim3 block(kTile, kTile);
    transpose_smem_tile_kernel<T><<<grid_2d(a.rows, a.cols, block), block, 0, stream(ctx)>>>(
        static_cast<const T *>(a.A), a.lda, static_cast<T *>(a.B), a.ldb, a.rows, a.cols);
    GPK_LAUNCH_CHECK(ctx, "transpose_smem_tile_kernel");
    return GPK_SUCCESS;
}

}  // namespace

gpk_status transpose_smem_tile(gpk_context &ctx, const TransposeArgs &args) {
    switch (args.elem_size) {
        case 2: return launch<uint16_t>(ctx, args);
        case 4: return launch<uint32_t>(ctx, args);
        default: return launch<uint64_t>(ctx, args);
    }
}

}  // namespace gpk::cuda
