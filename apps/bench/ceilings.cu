// The copy ceilings of the transpose table (see ceilings.hpp). They live in the
// app, not in libgpk: they are yardsticks for the ladder, not variants of an op.
#include "ceilings.hpp"

#include <algorithm>

namespace gpk_bench {
namespace {

constexpr int kCopyThreads = 256;
constexpr int kTile = 32;
constexpr int kBlockRows = 8;  // a 32x8 block moves a 32x32 tile, four rows per thread
constexpr unsigned kMaxGridY = 65535;

__global__ void __launch_bounds__(kCopyThreads)
    copy_kernel(const uint4 *__restrict__ src, uint4 *__restrict__ dst, size_t vectors,
                const unsigned char *__restrict__ src_tail, unsigned char *__restrict__ dst_tail, size_t tail) {
    const size_t first = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    const size_t stride = size_t(gridDim.x) * blockDim.x;
    for (size_t i = first; i < vectors; i += stride) dst[i] = src[i];
    // The last bytes % 16 bytes, if any.
    if (first < tail) dst_tail[first] = src_tail[first];
}

template <class T>
__global__ void __launch_bounds__(kTile * kBlockRows)
    copy_smem_kernel(const T *__restrict__ src, T *__restrict__ dst, int64_t rows, int64_t cols) {
    __shared__ T tile[kTile][kTile];
    const int64_t tiles_i = (rows + kTile - 1) / kTile, tiles_j = (cols + kTile - 1) / kTile;
    for (int64_t tj = blockIdx.y; tj < tiles_j; tj += gridDim.y) {
        for (int64_t ti = blockIdx.x; ti < tiles_i; ti += gridDim.x) {
            const int64_t i = ti * kTile + threadIdx.x;
#pragma unroll
            for (int r = 0; r < kTile; r += kBlockRows) {
                const int64_t j = tj * kTile + threadIdx.y + r;
                if (i < rows && j < cols) tile[threadIdx.y + r][threadIdx.x] = src[i + j * rows];
            }
            __syncthreads();
            // The same element goes back where it came from: no transposition.
#pragma unroll
            for (int r = 0; r < kTile; r += kBlockRows) {
                const int64_t j = tj * kTile + threadIdx.y + r;
                if (i < rows && j < cols) dst[i + j * rows] = tile[threadIdx.y + r][threadIdx.x];
            }
            __syncthreads();
        }
    }
}

template <class T>
cudaError_t launch_copy_smem_as(const void *src, void *dst, int64_t rows, int64_t cols, cudaStream_t stream) {
    const int64_t tiles_i = (rows + kTile - 1) / kTile, tiles_j = (cols + kTile - 1) / kTile;
    const dim3 grid(static_cast<unsigned>(std::min<int64_t>(tiles_i, INT32_MAX)),
                    static_cast<unsigned>(std::min<int64_t>(tiles_j, kMaxGridY)));
    copy_smem_kernel<T><<<grid, dim3(kTile, kBlockRows), 0, stream>>>(static_cast<const T *>(src),
                                                                       static_cast<T *>(dst), rows, cols);
    return cudaGetLastError();
}

}  // namespace

cudaError_t launch_copy(const void *src, void *dst, size_t bytes, cudaStream_t stream) {
    if ((reinterpret_cast<uintptr_t>(src) | reinterpret_cast<uintptr_t>(dst)) % 16 != 0) return cudaErrorInvalidValue;
    if (bytes == 0) return cudaSuccess;
    const size_t vectors = bytes / 16, tail = bytes % 16;
    // One vector per thread: on an H100 this matches cudaMemcpy device to device,
    // where a grid of one resident wave looping over the data is about 5% slower.
    // The loop only matters past 2^31 blocks.
    const size_t needed = std::max<size_t>((vectors + kCopyThreads - 1) / kCopyThreads, 1);
    const size_t blocks = std::min<size_t>(needed, INT32_MAX);
    const auto *s = static_cast<const unsigned char *>(src);
    auto *d = static_cast<unsigned char *>(dst);
    copy_kernel<<<static_cast<unsigned>(blocks), kCopyThreads, 0, stream>>>(
        reinterpret_cast<const uint4 *>(s), reinterpret_cast<uint4 *>(d), vectors, s + vectors * 16, d + vectors * 16,
        tail);
    return cudaGetLastError();
}

cudaError_t launch_copy_smem(const void *src, void *dst, int64_t rows, int64_t cols, size_t elem_bytes,
                             cudaStream_t stream) {
    if (rows <= 0 || cols <= 0) return rows < 0 || cols < 0 ? cudaErrorInvalidValue : cudaSuccess;
    switch (elem_bytes) {
        case 4: return launch_copy_smem_as<uint32_t>(src, dst, rows, cols, stream);
        case 8: return launch_copy_smem_as<uint64_t>(src, dst, rows, cols, stream);
        default: return cudaErrorInvalidValue;
    }
}

}  // namespace gpk_bench
