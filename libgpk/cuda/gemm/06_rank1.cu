// Rung 6, rank-1 updates in registers (Volkov's scheme): rungs 3-5 keep both operands
// in shared memory and read at least one shared word per multiply-add, and each
// thread owns only one or two outputs. Here only op(B) goes through shared memory.
// A block of 128 threads owns a 128x16 tile of C, one row per thread, held in 16
// registers; each thread also loads its own 16 elements of op(A) for the step of k
// (a warp's loads of a plain A are 32 consecutive elements) straight into registers.
// The block then applies 16 rank-1 updates C_tile += op(A)(:, p) op(B)(p, :): for
// each p, every thread reads the row p of the B tile into registers -- the same
// address for the whole warp, a broadcast, and in 16-byte pieces -- and does 16
// multiply-adds with its one element of A. That is a quarter (F32) or a half (F64)
// of a shared-memory read per multiply-add, and none for A.
//
// The B tile is filled along B's contiguous dimension (a uniform branch per block);
// for a plain B those writes run down the columns of Bs and conflict in banks, which
// costs little: two writes per thread per 256 multiply-adds.
#include "gemm_util.cuh"

namespace gpk::cuda {
namespace {

using namespace gemm_util;

constexpr int kThreads = 128;  // = rows of the C tile
constexpr int kTileN = 16;     // columns of the C tile: registers of C per thread
constexpr int kTileK = 16;     // step of k
static_assert(kTileK * kTileN % kThreads == 0, "the B tile splits evenly over the threads");

template <class T>
__global__ void __launch_bounds__(kThreads)
    gemm_rank1_kernel(bool transa, bool transb, int64_t m, int64_t n, int64_t k, T alpha, const T *__restrict__ A,
                      int64_t lda, const T *__restrict__ B, int64_t ldb, T beta, T *__restrict__ C, int64_t ldc) {
    using V = vec16_t<T>;
    constexpr int kLanes = Vec16<T>::kLanes;
    static_assert(kTileN % kLanes == 0, "B rows are read in 16-byte pieces");
    __shared__ __align__(16) T Bs[kTileK][kTileN];  // Bs[p][j] = op(B)(p0 + p, j0 + j)
    const int tid = threadIdx.x;
    const int64_t tiles_m = (m + kThreads - 1) / kThreads, tiles_n = (n + kTileN - 1) / kTileN;
    for (int64_t tj = blockIdx.y; tj < tiles_n; tj += gridDim.y) {
        for (int64_t ti = blockIdx.x; ti < tiles_m; ti += gridDim.x) {
            const int64_t i = ti * kThreads + tid, j0 = tj * kTileN;
            T c[kTileN];
#pragma unroll
            for (int jj = 0; jj < kTileN; ++jj) c[jj] = T(0);
            for (int64_t p0 = 0; p0 < k; p0 += kTileK) {
#pragma unroll
                for (int r = 0; r < kTileK * kTileN / kThreads; ++r) {
                    const int e = tid + r * kThreads;
                    // Consecutive threads walk B's contiguous dimension: p, or j for B^T.
                    const int pp = transb ? e / kTileN : e % kTileK;
                    const int jj = transb ? e % kTileN : e / kTileK;
                    Bs[pp][jj] = op_at_or_zero(B, ldb, transb, p0 + pp, j0 + jj, k, n);
                }
                T a[kTileK];
#pragma unroll
                for (int pp = 0; pp < kTileK; ++pp) a[pp] = op_at_or_zero(A, lda, transa, i, p0 + pp, m, k);
                __syncthreads();  // the B tile is complete
#pragma unroll
                for (int pp = 0; pp < kTileK; ++pp) {
                    const V *row = reinterpret_cast<const V *>(Bs[pp]);
#pragma unroll
                    for (int v = 0; v < kTileN / kLanes; ++v) {
                        V b = row[v];
#pragma unroll
                        for (int q = 0; q < kLanes; ++q) c[v * kLanes + q] += a[pp] * lane<T>(b, q);
                    }
                }
                __syncthreads();  // everyone is done with it before it is refilled
            }
            if (i < m) {
#pragma unroll
                for (int jj = 0; jj < kTileN; ++jj)
                    if (j0 + jj < n) store_c(C + (i + (j0 + jj) * ldc), alpha, c[jj], beta);
            }
        }
    }
}

template <class T>
gpk_status gemm(gpk_context &ctx, const GemmArgs &args) {
    gemm_rank1_kernel<T><<<tile_grid(args.m, args.n, kThreads, kTileN), kThreads, 0, stream(ctx)>>>(
        args.transa, args.transb, args.m, args.n, args.k, static_cast<T>(args.alpha), static_cast<const T *>(args.A),
        args.lda, static_cast<const T *>(args.B), args.ldb, static_cast<T>(args.beta), static_cast<T *>(args.C),
        args.ldc);
    GPK_LAUNCH_CHECK(ctx, "gemm_rank1_kernel");
    return GPK_SUCCESS;
}

}  // namespace

gpk_status gemm_rank1(gpk_context &ctx, const GemmArgs &args) {
    return gemm_util::by_dtype(ctx, args, "rank1", gemm<float>, gemm<double>);
}

}  // namespace gpk::cuda
