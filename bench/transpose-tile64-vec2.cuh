// The first kernel of rung 6 ("tile64_vec2"), now scripts/tune-transpose's baseline
// (rung 6 uses libgpk/cuda/transpose/tile_tuned.cuh, which checks bounds only on edge
// tiles): a 64x64 tile in shared memory moved by 32x8 threads, each moving element
// pairs with one 8-byte (4-byte elements) or 16-byte (8-byte elements) access.
// Streaming adds the evict-first cache hints (__ldcs/__stcs) to the global accesses;
// they bought nothing on the H100 (docs/PERFORMANCE.md); tune-transpose times both.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace gpk::cuda::tile64_vec2 {

constexpr int kTile = 64;
constexpr int kThreadsX = 32, kThreadsY = 8;
static_assert(kTile == 2 * kThreadsX, "each thread moves one pair per line");

template <class T>
struct Pair;
template <>
struct Pair<uint32_t> {
    using type = uint2;
};
template <>
struct Pair<uint64_t> {
    using type = ulonglong2;
};

template <class T, bool Streaming>
__global__ void __launch_bounds__(kThreadsX * kThreadsY)
    transpose_kernel(const T *__restrict__ A, int64_t lda, T *__restrict__ B, int64_t ldb, int64_t rows,
                                 int64_t cols) {
    using V = typename Pair<T>::type;
    __shared__ T tile[kTile][kTile + 1];
    const int64_t tiles_i = (rows + kTile - 1) / kTile, tiles_j = (cols + kTile - 1) / kTile;
    const int x = 2 * threadIdx.x;
    for (int64_t tj = blockIdx.y; tj < tiles_j; tj += gridDim.y) {
        for (int64_t ti = blockIdx.x; ti < tiles_i; ti += gridDim.x) {
            const int64_t i = ti * kTile + x;  // even, and lda is even: pairs are aligned
#pragma unroll
            for (int r = 0; r < kTile; r += kThreadsY) {
                const int64_t j = tj * kTile + threadIdx.y + r;
                if (j < cols) {
                    if (i + 1 < rows) {
                        const V *p = reinterpret_cast<const V *>(A + i + j * lda);
                        V v;
                        if constexpr (Streaming)
                            v = __ldcs(p);
                        else
                            v = *p;
                        tile[threadIdx.y + r][x] = v.x;
                        tile[threadIdx.y + r][x + 1] = v.y;
                    } else if (i < rows) {
                        tile[threadIdx.y + r][x] = A[i + j * lda];
                    }
                }
            }
            __syncthreads();
            const int64_t jb = tj * kTile + x;
#pragma unroll
            for (int r = 0; r < kTile; r += kThreadsY) {
                const int64_t ib = ti * kTile + threadIdx.y + r;
                if (ib < rows) {
                    if (jb + 1 < cols) {
                        V v;
                        v.x = tile[x][threadIdx.y + r];
                        v.y = tile[x + 1][threadIdx.y + r];
                        V *q = reinterpret_cast<V *>(B + jb + ib * ldb);
                        if constexpr (Streaming)
                            __stcs(q, v);
                        else
                            *q = v;
                    } else if (jb < cols) {
                        B[jb + ib * ldb] = tile[x][threadIdx.y + r];
                    }
                }
            }
            __syncthreads();
        }
    }
}

// True when A, B and their leading dimensions allow the pair accesses.
template <class T>
inline bool aligned(const void *A, int64_t lda, const void *B, int64_t ldb) {
    constexpr size_t v = 2 * sizeof(T);
    return reinterpret_cast<uintptr_t>(A) % v == 0 && reinterpret_cast<uintptr_t>(B) % v == 0 && lda % 2 == 0 &&
           ldb % 2 == 0;
}

template <class T, bool Streaming>
inline cudaError_t launch(const void *A, int64_t lda, void *B, int64_t ldb, int64_t rows, int64_t cols,
                          cudaStream_t stream) {
    const int64_t bi = (rows + kTile - 1) / kTile, bj = (cols + kTile - 1) / kTile;
    const dim3 grid(static_cast<unsigned>(bi < 1 ? 1 : (bi > 2147483647 ? 2147483647 : bi)),
                    static_cast<unsigned>(bj < 1 ? 1 : (bj > 65535 ? 65535 : bj)));
    transpose_kernel<T, Streaming><<<grid, dim3(kThreadsX, kThreadsY), 0, stream>>>(
        static_cast<const T *>(A), lda, static_cast<T *>(B), ldb, rows, cols);
    return cudaGetLastError();  // the launch's own error: a kernel's faults come later
}

}  // namespace gpk::cuda::tile64_vec2
