// Rung 6's kernel: a shared-tile transpose with vector accesses to global memory, in
// the configuration 06_tile64_vec2.cu names. scripts/tune-transpose times it, with
// options of its own (bench/transpose-tile-tuned.cuh), against cublas<t>geam and a
// copy.
//
// A TI x TJ tile of A (TI along A's columns, which are contiguous; TJ along its rows)
// goes through shared memory as tile[jj][ii], padded to TI + 1 columns. Loads move
// kLoadBytes along A's columns, stores kStoreBytes along B's columns (B = A^T), each
// a vector of bytes / sizeof(T) elements. Blocks take the tiles of a 1-D grid down
// A's columns (ti fastest), or with JFirst across them (tj fastest: consecutive blocks
// write consecutive parts of B's columns). Interior tiles take an unchecked path (a
// uniform branch); edge tiles check each vector and fall back to elements. Needs A, B
// aligned to the vectors and leading dimensions that keep every vector aligned
// (aligned<>() below).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace gpk::cuda::tile_tuned {

template <int TI_, int TJ_, int Threads_, int LoadBytes_, int StoreBytes_, bool JFirst_ = false>
struct Config {
    static constexpr int TI = TI_, TJ = TJ_, kThreads = Threads_, kLoadBytes = LoadBytes_,
                         kStoreBytes = StoreBytes_;
    static constexpr bool kJFirst = JFirst_;
};

template <class T, int N>
struct alignas(sizeof(T) * N) AVec {
    T v[N];
};

// This thread's part of tile (ti, tj) of A into regs: NL vectors of VL elements, lines
// LY apart, from vector lx of the tile's line ly. Interior tiles load whole vectors
// unchecked; edge tiles check each and fill what lies outside A with zeros.
template <class T, int TI, int TJ, int VL, int LY, int NL>
__device__ __forceinline__ void load_tile(AVec<T, VL> (&regs)[NL], const T *__restrict__ A, int64_t lda,
                                          int64_t rows, int64_t cols, int64_t ti, int64_t tj, int lx, int ly) {
    using LV = AVec<T, VL>;
    const int64_t i = ti * TI + lx * VL, j0 = tj * TJ + ly;
    const T *p = A + i + j0 * lda;
    const bool interior = (ti + 1) * TI <= rows && (tj + 1) * TJ <= cols;
    if (interior) {
#pragma unroll
        for (int r = 0; r < NL; ++r) regs[r] = *reinterpret_cast<const LV *>(p + int64_t(r) * LY * lda);
    } else {
#pragma unroll
        for (int r = 0; r < NL; ++r) {
            const int64_t j = j0 + int64_t(r) * LY;
            if (j < cols && i + VL <= rows) {
                regs[r] = *reinterpret_cast<const LV *>(p + int64_t(r) * LY * lda);
            } else {
#pragma unroll
                for (int k = 0; k < VL; ++k)
                    regs[r].v[k] = (j < cols && i + k < rows) ? p[k + int64_t(r) * LY * lda] : T(0);
            }
        }
    }
}

template <class T, class C>
__global__ void __launch_bounds__(C::kThreads)
    transpose_kernel(const T *__restrict__ A, int64_t lda, T *__restrict__ B, int64_t ldb, int64_t rows, int64_t cols,
                     int64_t tiles_i, int64_t tiles_j) {
    constexpr int TI = C::TI, TJ = C::TJ, NT = C::kThreads;
    constexpr int VL = C::kLoadBytes / int(sizeof(T)) < 1 ? 1 : C::kLoadBytes / int(sizeof(T));
    constexpr int VS = C::kStoreBytes / int(sizeof(T)) < 1 ? 1 : C::kStoreBytes / int(sizeof(T));
    constexpr int LX = TI / VL, LY = NT / LX, NL = TJ / LY;  // load: lanes per line, lines per pass, passes
    constexpr int SX = TJ / VS, SY = NT / SX, NS = TI / SY;  // store: likewise over B's columns
    static_assert(TI % VL == 0 && NT % LX == 0 && TJ % LY == 0, "load shape");
    static_assert(TJ % VS == 0 && NT % SX == 0 && TI % SY == 0, "store shape");
    using LV = AVec<T, VL>;
    using SV = AVec<T, VS>;
    __shared__ T tile[TJ][TI + 1];

    const int lx = threadIdx.x % LX, ly = threadIdx.x / LX;
    const int sx = threadIdx.x % SX, sy = threadIdx.x / SX;
    const int64_t ntiles = tiles_i * tiles_j;

    LV regs[NL];
    auto load = [&](int64_t ti, int64_t tj) {
        load_tile<T, TI, TJ, VL, LY, NL>(regs, A, lda, rows, cols, ti, tj, lx, ly);
    };
    auto to_shared = [&] {
#pragma unroll
        for (int r = 0; r < NL; ++r) {
#pragma unroll
            for (int k = 0; k < VL; ++k) tile[ly + r * LY][lx * VL + k] = regs[r].v[k];
        }
    };
    auto store = [&](int64_t ti, int64_t tj) {
        const int64_t jb = tj * TJ + sx * VS, ib0 = ti * TI + sy;
        T *q = B + jb + ib0 * ldb;
        const bool interior = (ti + 1) * TI <= rows && (tj + 1) * TJ <= cols;
#pragma unroll
        for (int r = 0; r < NS; ++r) {
            const int ii = sy + r * SY;
            SV v;
#pragma unroll
            for (int k = 0; k < VS; ++k) v.v[k] = tile[sx * VS + k][ii];
            T *qr = q + int64_t(r) * SY * ldb;
            const int64_t ib = ib0 + int64_t(r) * SY;
            if (interior || (ib < rows && jb + VS <= cols)) {
                *reinterpret_cast<SV *>(qr) = v;
            } else if (ib < rows) {
#pragma unroll
                for (int k = 0; k < VS; ++k)
                    if (jb + k < cols) qr[k] = v.v[k];
            }
        }
    };

    // One tile per block; a grid capped below the tile count loops over the rest.
    for (int64_t t = blockIdx.x; t < ntiles; t += gridDim.x) {
        const int64_t tj = C::kJFirst ? t % tiles_j : t / tiles_i;
        const int64_t ti = C::kJFirst ? t / tiles_j : t - tj * tiles_i;
        load(ti, tj);
        to_shared();
        __syncthreads();
        store(ti, tj);
        if (t + gridDim.x < ntiles) __syncthreads();  // the tile is reused
    }
}

template <class T, class C>
inline bool aligned(const void *A, int64_t lda, const void *B, int64_t ldb) {
    constexpr int VL = C::kLoadBytes / int(sizeof(T)) < 1 ? 1 : C::kLoadBytes / int(sizeof(T));
    constexpr int VS = C::kStoreBytes / int(sizeof(T)) < 1 ? 1 : C::kStoreBytes / int(sizeof(T));
    return reinterpret_cast<uintptr_t>(A) % (VL * sizeof(T)) == 0 &&
           reinterpret_cast<uintptr_t>(B) % (VS * sizeof(T)) == 0 && lda % VL == 0 && ldb % VS == 0;
}

template <class T, class C>
inline cudaError_t launch(const void *A, int64_t lda, void *B, int64_t ldb, int64_t rows, int64_t cols,
                          cudaStream_t stream) {
    if (rows <= 0 || cols <= 0) return cudaSuccess;
    const int64_t tiles_i = (rows + C::TI - 1) / C::TI, tiles_j = (cols + C::TJ - 1) / C::TJ;
    const int64_t ntiles = tiles_i * tiles_j;
    const int64_t grid = ntiles < 2147483647 ? ntiles : 2147483647;
    transpose_kernel<T, C><<<static_cast<unsigned>(grid), C::kThreads, 0, stream>>>(
        static_cast<const T *>(A), lda, static_cast<T *>(B), ldb, rows, cols, tiles_i, tiles_j);
    return cudaGetLastError();
}

}  // namespace gpk::cuda::tile_tuned
