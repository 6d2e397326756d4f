// A transpose without shared memory, timed by scripts/tune-transpose against the
// shared-tile rung 6, geam and a copy; a template over its launch shape. It is not a
// rung of the library: on the H100 its best shape reached 0.94x geam for F32 where
// rung 6 reached 0.98x (docs/PERFORMANCE.md).
//
// No shared memory: each thread loads an LxL block of A as L 16-byte vectors (one per
// column, L = 16 / sizeof(T): 4 for 4-byte elements, 2 for 8-byte), transposes it in
// registers (a renaming, no instructions) and stores it as L 16-byte vectors, one per
// column of B. Lanes are grouped G to a block row, so that the G threads of a group
// store G*16 contiguous bytes of one column of B (whole 32-byte sectors for G >= 2),
// while the 32/G groups of a warp load (32/G)*16 contiguous bytes of each column of
// A. WI x WJ warps make the block's tile. Needs 16-byte aligned A and B and leading
// dimensions that are multiples of L (the launcher checks); blocks that straddle the
// matrix edge move element by element. Streaming uses the evict-first cache hints
// (__ldcs/__stcs): every byte is touched once.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace gpk::cuda::register_block {

template <class T>
struct Vec;
template <>
struct Vec<uint32_t> {
    using type = uint4;
    __device__ static type make(const uint32_t (&e)[4]) { return make_uint4(e[0], e[1], e[2], e[3]); }
    __device__ static void split(const type &v, uint32_t (&e)[4]) { e[0] = v.x, e[1] = v.y, e[2] = v.z, e[3] = v.w; }
};
template <>
struct Vec<uint64_t> {
    using type = ulonglong2;
    __device__ static type make(const uint64_t (&e)[2]) { return make_ulonglong2(e[0], e[1]); }
    __device__ static void split(const type &v, uint64_t (&e)[2]) { e[0] = v.x, e[1] = v.y; }
};

template <class T, int G, int WI, int WJ>
struct Shape {
    static constexpr int kLanes = 16 / static_cast<int>(sizeof(T));  // L
    static constexpr int kThreads = 32 * WI * WJ;
    static constexpr int kTileI = WI * (32 / G) * kLanes;  // rows of A per block
    static constexpr int kTileJ = WJ * G * kLanes;         // columns of A per block
    static_assert(G >= 1 && G <= 32 && 32 % G == 0, "G must divide a warp");
};

template <class T, int G, int WI, int WJ, bool Streaming>
__global__ void __launch_bounds__(Shape<T, G, WI, WJ>::kThreads)
    transpose_kernel(const T *__restrict__ A, int64_t lda, T *__restrict__ B, int64_t ldb, int64_t rows,
                     int64_t cols) {
    using S = Shape<T, G, WI, WJ>;
    using V = typename Vec<T>::type;
    constexpr int L = S::kLanes;
    static_assert(sizeof(V) == L * sizeof(T), "one vector is one block line");
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int wi = warp % WI, wj = warp / WI;
    const int64_t di = (int64_t(wi) * (32 / G) + lane / G) * L;
    const int64_t dj = (int64_t(wj) * G + lane % G) * L;
    const int64_t tiles_j = (cols + S::kTileJ - 1) / S::kTileJ;
    const int64_t i0 = int64_t(blockIdx.x) * S::kTileI + di;
    if (i0 >= rows) return;
    for (int64_t tj = blockIdx.y; tj < tiles_j; tj += gridDim.y) {
        const int64_t j0 = tj * S::kTileJ + dj;
        if (j0 >= cols) continue;
        if (i0 + L <= rows && j0 + L <= cols) {
            T e[L][L];  // e[c][r] = A(i0 + r, j0 + c)
#pragma unroll
            for (int c = 0; c < L; ++c) {
                const V *p = reinterpret_cast<const V *>(A + i0 + (j0 + c) * lda);
                if constexpr (Streaming)
                    Vec<T>::split(__ldcs(p), e[c]);
                else
                    Vec<T>::split(*p, e[c]);
            }
#pragma unroll
            for (int r = 0; r < L; ++r) {
                T f[L];
#pragma unroll
                for (int c = 0; c < L; ++c) f[c] = e[c][r];
                const V w = Vec<T>::make(f);
                V *q = reinterpret_cast<V *>(B + j0 + (i0 + r) * ldb);
                if constexpr (Streaming)
                    __stcs(q, w);
                else
                    *q = w;
            }
        } else {
            for (int c = 0; c < L && j0 + c < cols; ++c)
                for (int r = 0; r < L && i0 + r < rows; ++r) B[j0 + c + (i0 + r) * ldb] = A[i0 + r + (j0 + c) * lda];
        }
    }
}

// True when A, B and their leading dimensions allow the 16-byte accesses.
template <class T>
inline bool aligned(const void *A, int64_t lda, const void *B, int64_t ldb) {
    constexpr int L = 16 / static_cast<int>(sizeof(T));
    return reinterpret_cast<uintptr_t>(A) % 16 == 0 && reinterpret_cast<uintptr_t>(B) % 16 == 0 && lda % L == 0 &&
           ldb % L == 0;
}

template <class T, int G, int WI, int WJ, bool Streaming>
inline cudaError_t launch(const void *A, int64_t lda, void *B, int64_t ldb, int64_t rows, int64_t cols,
                          cudaStream_t stream) {
    using S = Shape<T, G, WI, WJ>;
    const int64_t bi = (rows + S::kTileI - 1) / S::kTileI, bj = (cols + S::kTileJ - 1) / S::kTileJ;
    if (bi > 2147483647) return cudaErrorInvalidConfiguration;
    const dim3 grid(static_cast<unsigned>(bi < 1 ? 1 : bi), static_cast<unsigned>(bj < 1 ? 1 : (bj > 65535 ? 65535 : bj)));
    transpose_kernel<T, G, WI, WJ, Streaming><<<grid, S::kThreads, 0, stream>>>(static_cast<const T *>(A), lda,
                                                                     static_cast<T *>(B), ldb, rows, cols);
    return cudaGetLastError();
}

}  // namespace gpk::cuda::register_block
