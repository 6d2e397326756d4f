// Rung 5: 64x64 tiles, each thread moving sixteen elements each way.
//
// Rung 4 keeps four loads in flight per thread and synchronizes a block every 1024
// elements. On a GPU with Hopper's bandwidth that is not enough traffic in flight to
// cover DRAM latency. A 64x64 tile (padded to 65 columns, still conflict-free) moved
// by the same 32x8 threads gives each thread sixteen independent loads before the
// barrier, a quarter of the barriers per element, and 256-byte contiguous runs per
// warp on both sides.
#include "../kernel_util.cuh"

namespace gpk::cuda {
namespace {

constexpr int kTile = 64;
constexpr int kThreadsX = 32, kThreadsY = 8;
static_assert(kTile % kThreadsX == 0 && kTile % kThreadsY == 0, "threads must tile the tile exactly");

template <class T>
__global__ void __launch_bounds__(kThreadsX * kThreadsY)
    transpose_tile64_kernel(const T *__restrict__ A, int64_t lda, T *__restrict__ B, int64_t ldb, int64_t rows,
                            int64_t cols) {
    __shared__ T tile[kTile][kTile + 1];
    const int64_t tiles_i = (rows + kTile - 1) / kTile, tiles_j = (cols + kTile - 1) / kTile;
    for (int64_t tj = blockIdx.y; tj < tiles_j; tj += gridDim.y) {
        for (int64_t ti = blockIdx.x; ti < tiles_i; ti += gridDim.x) {
#pragma unroll
            for (int c = 0; c < kTile; c += kThreadsX) {
                const int64_t i = ti * kTile + threadIdx.x + c;
#pragma unroll
                for (int r = 0; r < kTile; r += kThreadsY) {
                    const int64_t j = tj * kTile + threadIdx.y + r;
                    if (i < rows && j < cols) tile[threadIdx.y + r][threadIdx.x + c] = A[i + j * lda];
                }
            }
            __syncthreads();
#pragma unroll
            for (int c = 0; c < kTile; c += kThreadsX) {
                const int64_t jb = tj * kTile + threadIdx.x + c;
#pragma unroll
                for (int r = 0; r < kTile; r += kThreadsY) {
                    const int64_t ib = ti * kTile + threadIdx.y + r;
                    if (jb < cols && ib < rows) B[jb + ib * ldb] = tile[threadIdx.x + c][threadIdx.y + r];
                }
            }
            __syncthreads();
        }
    }
}

template <class T>
gpk_status launch(gpk_context &ctx, const TransposeArgs &a) {
    const dim3 block(kThreadsX, kThreadsY);
    transpose_tile64_kernel<T><<<grid_2d(a.rows, a.cols, dim3(kTile, kTile)), block, 0, stream(ctx)>>>(
        static_cast<const T *>(a.A), a.lda, static_cast<T *>(a.B), a.ldb, a.rows, a.cols);
    GPK_LAUNCH_CHECK(ctx, "transpose_tile64_kernel");
    return GPK_SUCCESS;
}

}  // namespace

gpk_status transpose_tile64(gpk_context &ctx, const TransposeArgs &args) {
    switch (args.elem_size) {
        case 2: return launch<uint16_t>(ctx, args);
        case 4: return launch<uint32_t>(ctx, args);
        default: return launch<uint64_t>(ctx, args);
    }
}

}  // namespace gpk::cuda
