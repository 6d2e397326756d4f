// Rung 6: rung 5 with two-element vector accesses to global memory.
//
// Rung 5 issues one 4- or 8-byte load or store per element, so moving a tile costs
// as many memory instructions as elements. Here each thread moves two neighbouring
// elements with one 8-byte (4-byte elements) or 16-byte (8-byte elements) access on
// both sides, halving the memory instructions and the address arithmetic. Vector
// accesses need both matrices aligned to the vector and even leading dimensions;
// calls that are not fall back to rung 5, and ragged tile edges are moved element by
// element. The shared tile keeps 65 columns: element pairs cost a two-way bank
// conflict there, which is cheap next to the global traffic saved.
#include "../kernel_util.cuh"
#include "../ladders.hpp"

namespace gpk::cuda {
namespace {

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

template <class T>
__global__ void __launch_bounds__(kThreadsX * kThreadsY)
    transpose_tile64_vec2_kernel(const T *__restrict__ A, int64_t lda, T *__restrict__ B, int64_t ldb, int64_t rows,
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
                        const V v = *reinterpret_cast<const V *>(A + i + j * lda);
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
                        *reinterpret_cast<V *>(B + jb + ib * ldb) = v;
                    } else if (jb < cols) {
                        B[jb + ib * ldb] = tile[x][threadIdx.y + r];
                    }
                }
            }
            __syncthreads();
        }
    }
}

template <class T>
gpk_status launch(gpk_context &ctx, const TransposeArgs &a) {
    using V = typename Pair<T>::type;
    const bool aligned = reinterpret_cast<uintptr_t>(a.A) % sizeof(V) == 0 &&
                         reinterpret_cast<uintptr_t>(a.B) % sizeof(V) == 0 && a.lda % 2 == 0 && a.ldb % 2 == 0;
    if (!aligned) return transpose_tile64(ctx, a);
    const dim3 block(kThreadsX, kThreadsY);
    transpose_tile64_vec2_kernel<T><<<grid_2d(a.rows, a.cols, dim3(kTile, kTile)), block, 0, stream(ctx)>>>(
        static_cast<const T *>(a.A), a.lda, static_cast<T *>(a.B), a.ldb, a.rows, a.cols);
    GPK_LAUNCH_CHECK(ctx, "transpose_tile64_vec2_kernel");
    return GPK_SUCCESS;
}

}  // namespace

gpk_status transpose_tile64_vec2(gpk_context &ctx, const TransposeArgs &args) {
    return args.elem_size == 4 ? launch<uint32_t>(ctx, args) : launch<uint64_t>(ctx, args);
}

}  // namespace gpk::cuda
