// Rung 7: rung 6 with 16-byte accesses for every element size.
//
// Rung 6 moves pairs: 8-byte accesses for 4-byte elements, 16-byte ones for 8-byte
// elements. Hopper's memory system moves the most bytes per instruction with 16-byte
// accesses, so here 4-byte elements travel four at a time (one 16-byte load per
// thread covers four rows of A, one 16-byte store four columns of B), halving again
// the memory instructions per byte for F32 and I32; 8-byte elements keep rung 6's
// pairs, which are 16 bytes already. The 64x64 tile is moved by 16x16 threads (4-byte
// elements) or 32x8 (8-byte), each thread keeping sixteen elements in flight, and the
// shared tile keeps 65 columns: a thread's four scalar shared accesses cost a two-way
// bank conflict, cheap next to the DRAM traffic. Vector accesses need both matrices
// aligned to 16 bytes and leading dimensions that keep every column aligned; the
// rung refuses calls that are not (GPK_ERROR_NOT_SUPPORTED), and ragged tile edges
// go element by element.
#include "../kernel_util.cuh"
#include "../ladders.hpp"

namespace gpk::cuda {
namespace {

constexpr int kTile = 64;
constexpr int kThreads = 256;

template <class T>
__global__ void __launch_bounds__(kThreads)
    transpose_tile64_vec16_kernel(const T *__restrict__ A, int64_t lda, T *__restrict__ B, int64_t ldb, int64_t rows,
                                  int64_t cols) {
    using W = Vec16<T>;
    using V = typename W::type;
    constexpr int kLanes = W::kLanes;
    constexpr int kThreadsX = kTile / kLanes;           // threads across a 64-element line
    constexpr int kThreadsY = kThreads / kThreadsX;     // lines per pass
    __shared__ T tile[kTile][kTile + 1];                // tile[j][i]: column j of the A tile

    const int tx = threadIdx.x % kThreadsX, ty = threadIdx.x / kThreadsX;
    const int x = kLanes * tx;
    const int64_t tiles_i = (rows + kTile - 1) / kTile, tiles_j = (cols + kTile - 1) / kTile;
    for (int64_t tj = blockIdx.y; tj < tiles_j; tj += gridDim.y) {
        for (int64_t ti = blockIdx.x; ti < tiles_i; ti += gridDim.x) {
            // A's columns are contiguous: each thread loads kLanes rows of one column.
            const int64_t i = ti * kTile + x;
#pragma unroll
            for (int r = 0; r < kTile; r += kThreadsY) {
                const int64_t j = tj * kTile + ty + r;
                if (j < cols) {
                    if (i + kLanes <= rows) {
                        const V v = *reinterpret_cast<const V *>(A + i + j * lda);
#pragma unroll
                        for (int k = 0; k < kLanes; ++k) tile[ty + r][x + k] = lane<T>(v, k);
                    } else {
                        for (int k = 0; k < kLanes && i + k < rows; ++k) tile[ty + r][x + k] = A[i + k + j * lda];
                    }
                }
            }
            __syncthreads();
            // B's columns are A's rows: each thread stores kLanes elements of one.
            const int64_t jb = tj * kTile + x;
#pragma unroll
            for (int r = 0; r < kTile; r += kThreadsY) {
                const int64_t ib = ti * kTile + ty + r;
                if (ib < rows) {
                    if (jb + kLanes <= cols) {
                        V v;
#pragma unroll
                        for (int k = 0; k < kLanes; ++k) lane<T>(v, k) = tile[x + k][ty + r];
                        *reinterpret_cast<V *>(B + jb + ib * ldb) = v;
                    } else {
                        for (int k = 0; k < kLanes && jb + k < cols; ++k) B[jb + k + ib * ldb] = tile[x + k][ty + r];
                    }
                }
            }
            __syncthreads();
        }
    }
}

constexpr const char *kUnaligned =
    "the 16-byte accesses need A and B aligned to 16 bytes and leading dimensions of whole 16-byte vectors";

template <class T>
bool takes(const TransposeArgs &a) {
    constexpr int kLanes = Vec16<T>::kLanes;
    return reinterpret_cast<uintptr_t>(a.A) % 16 == 0 && reinterpret_cast<uintptr_t>(a.B) % 16 == 0 &&
           a.lda % kLanes == 0 && a.ldb % kLanes == 0;
}

template <class T>
gpk_status launch(gpk_context &ctx, const TransposeArgs &a) {
    if (!takes<T>(a)) return refuse(ctx, "transpose", "tile64_vec16", kUnaligned);
    transpose_tile64_vec16_kernel<T><<<grid_2d(a.rows, a.cols, dim3(kTile, kTile)), kThreads, 0, stream(ctx)>>>(
        static_cast<const T *>(a.A), a.lda, static_cast<T *>(a.B), a.ldb, a.rows, a.cols);
    GPK_LAUNCH_CHECK(ctx, "transpose_tile64_vec16_kernel");
    return GPK_SUCCESS;
}

}  // namespace

// 2-byte elements would need eight lanes per vector and their own shared-memory
// layout; the rung's list entry gives it 4- and 8-byte dtypes only.
gpk_status transpose_tile64_vec16_takes(gpk_context &, const TransposeArgs &args, const char **why_not) {
    if (args.elem_size == 2) {
        *why_not = "2-byte elements are not among its dtypes";
        return GPK_SUCCESS;
    }
    *why_not = (args.elem_size == 4 ? takes<uint32_t>(args) : takes<uint64_t>(args)) ? nullptr : kUnaligned;
    return GPK_SUCCESS;
}

gpk_status transpose_tile64_vec16(gpk_context &ctx, const TransposeArgs &args) {
    if (args.elem_size == 2)
        return fail(&ctx, GPK_ERROR_NOT_SUPPORTED, "transpose variant \"tile64_vec16\" does not support 2-byte dtypes");
    return args.elem_size == 4 ? launch<uint32_t>(ctx, args) : launch<uint64_t>(ctx, args);
}

}  // namespace gpk::cuda
