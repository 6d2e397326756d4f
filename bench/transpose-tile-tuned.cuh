// The configurable shared-tile transpose that scripts/tune-transpose times: rung 6's
// kernel (libgpk/cuda/transpose/tile_tuned.cuh) with the options only the tuner
// varies, against the first rung 6 (bench/transpose-tile64-vec2.cuh),
// cublas<t>geam and a copy. Config's first five parameters are those of the
// library's tile_tuned::Config; a pick that needs none of the others is written in
// its form.
//
// A TI x TJ tile of A (TI along A's columns, which are contiguous; TJ along its rows)
// goes through shared memory as tile[jj][ii], padded to TI + 1 columns. Loads move
// kLoadBytes along A's columns, stores kStoreBytes along B's columns (B = A^T), each
// a vector of V = bytes / sizeof(T) elements whose scalar shared accesses are
// staggered: lanes whose vector positions wrap around the 32 banks take the vector's
// components in a rotated order, so that each scalar shared access of a warp touches
// 32 distinct banks (rung 6's pairs cost a two-way conflict on both sides). Options:
//  - Group: 0 walks tiles down A's columns (ti fastest, rung 6's order); G > 0 walks
//    G tile columns at a time, ti slowest within the group, so that a wave of blocks
//    covers a squarer region of both matrices.
//  - Persistent: a grid of resident blocks only, each looping over tiles.
//  - Prefetch: the next tile's loads are issued before the current tile's stores.
//  - MinBlocks: __launch_bounds__'s blocks per SM (0: none; a bound spills here).
// Interior tiles take an unchecked path (a uniform branch); edge tiles check each
// vector and fall back to elements. Needs A, B aligned to the vectors and leading
// dimensions that keep every vector aligned (tile_tuned::aligned<>()).
#pragma once

#include "../libgpk/cuda/transpose/tile_tuned.cuh"

#include <cuda_runtime.h>

#include <cstdint>

namespace gpk::cuda::tile_tune {

// The library's vectors and alignment rule, which the options leave as they are.
using tile_tuned::AVec;
using tile_tuned::aligned;
using tile_tuned::load_tile;

template <int TI_, int TJ_, int Threads_, int LoadBytes_, int StoreBytes_, int Group_, bool Persistent_,
          bool Prefetch_, bool Stagger_ = true, int MinBlocks_ = 0>
struct Config {
    static constexpr int kMinBlocks = MinBlocks_;  // __launch_bounds__' minimum blocks per SM
    static constexpr int TI = TI_, TJ = TJ_, kThreads = Threads_, kLoadBytes = LoadBytes_,
                         kStoreBytes = StoreBytes_, kGroup = Group_;
    static constexpr bool kPersistent = Persistent_, kPrefetch = Prefetch_, kStagger = Stagger_;
};


// Rotation of a lane's components: lanes of a warp that share a shared-memory row
// hold V * L consecutive elements (L lanes); when that wraps the 32 banks G times,
// the g-th wrap starts its components g * R later (R rows per warp) so that the R*G
// groups cover every bank residue once.
template <class T, int V, int LanesPerRow>
__device__ __forceinline__ int rotation(int lane_in_row, int row_in_warp) {
    constexpr int kBankWords = 32 * 4 / int(sizeof(T) < 4 ? 4 : sizeof(T));
    constexpr int kLanes = LanesPerRow < 32 ? LanesPerRow : 32;
    constexpr int kRows = 32 / kLanes;
    constexpr int kWraps = (V * kLanes + kBankWords - 1) / kBankWords;
    (void)row_in_warp;
    if constexpr (V == 1 || kWraps <= 1) {
        return 0;
    } else {
        const int g = ((lane_in_row % kLanes) * V) / kBankWords;
        return (g * kRows) % V;
    }
}

template <class T, class C>
__global__ void __launch_bounds__(C::kThreads, C::kMinBlocks)
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
    const int rot_l = C::kStagger ? rotation<T, VL, LX>(lx, ly) : 0;
    const int rot_s = C::kStagger ? rotation<T, VS, SX>(sx, sy) : 0;
    const int64_t ntiles = tiles_i * tiles_j;

    auto map = [&](int64_t t, int64_t &ti, int64_t &tj) {
        if constexpr (C::kGroup == 0) {
            tj = t / tiles_i;
            ti = t - tj * tiles_i;
        } else {
            const int64_t per = int64_t(C::kGroup) * tiles_i;
            const int64_t g = t / per, r = t - g * per;
            const int64_t first = g * C::kGroup;
            const int64_t size = tiles_j - first < C::kGroup ? tiles_j - first : C::kGroup;
            ti = r / size;
            tj = first + (r - ti * size);
        }
    };

    LV regs[NL];
    auto load = [&](int64_t ti, int64_t tj) {
        load_tile<T, TI, TJ, VL, LY, NL>(regs, A, lda, rows, cols, ti, tj, lx, ly);
    };
    auto to_shared = [&] {
#pragma unroll
        for (int r = 0; r < NL; ++r) {
#pragma unroll
            for (int k = 0; k < VL; ++k) {
                // component kk = (k + rot) % VL, chosen by selects (no indexed registers)
                T x = regs[r].v[k];
                int kk = k;
#pragma unroll
                for (int q = 1; q < VL; ++q)
                    if (rot_l == q) x = regs[r].v[(k + q) % VL], kk = (k + q) % VL;
                tile[ly + r * LY][lx * VL + kk] = x;
            }
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
            for (int k = 0; k < VS; ++k) {
                int kk = k;
#pragma unroll
                for (int s = 1; s < VS; ++s)
                    if (rot_s == s) kk = (k + s) % VS;
                const T x = tile[sx * VS + kk][ii];
#pragma unroll
                for (int c = 0; c < VS; ++c)
                    if (kk == c) v.v[c] = x;
            }
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

    int64_t t = blockIdx.x;
    if (t >= ntiles) return;
    int64_t ti, tj;
    map(t, ti, tj);
    load(ti, tj);
    for (;;) {
        to_shared();
        __syncthreads();
        const int64_t tn = t + gridDim.x;
        int64_t ni = 0, nj = 0;
        if (tn < ntiles) map(tn, ni, nj);
        if constexpr (C::kPrefetch) {
            if (tn < ntiles) load(ni, nj);
        }
        store(ti, tj);
        if (tn >= ntiles) break;
        __syncthreads();
        if constexpr (!C::kPrefetch) load(ni, nj);
        t = tn, ti = ni, tj = nj;
    }
}

template <class T, class C>
inline cudaError_t launch(const void *A, int64_t lda, void *B, int64_t ldb, int64_t rows, int64_t cols,
                          cudaStream_t stream) {
    if (rows <= 0 || cols <= 0) return cudaSuccess;
    const int64_t tiles_i = (rows + C::TI - 1) / C::TI, tiles_j = (cols + C::TJ - 1) / C::TJ;
    const int64_t ntiles = tiles_i * tiles_j;
    int64_t grid = ntiles < 2147483647 ? ntiles : 2147483647;
    if constexpr (C::kPersistent) {
        static thread_local int resident = 0;  // blocks the chip holds at once (first device seen: tuning only)
        if (resident == 0) {
            int dev = 0, sms = 0, per_sm = 0;
            cudaError_t e = cudaGetDevice(&dev);
            if (e == cudaSuccess) e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
            if (e == cudaSuccess)
                e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, transpose_kernel<T, C>, C::kThreads, 0);
            if (e != cudaSuccess) return e;
            resident = sms * (per_sm < 1 ? 1 : per_sm);
        }
        if (grid > resident) grid = resident;
    }
    transpose_kernel<T, C><<<static_cast<unsigned>(grid), C::kThreads, 0, stream>>>(
        static_cast<const T *>(A), lda, static_cast<T *>(B), ldb, rows, cols, tiles_i, tiles_j);
    return cudaGetLastError();
}

}  // namespace gpk::cuda::tile_tune
