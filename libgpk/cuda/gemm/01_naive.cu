// Rung 1, naive: one thread per element of C, each walking a row of op(A) and a
// column of op(B) straight from global memory and accumulating in the dtype. It is
// the baseline every later rung improves on, and it keeps the textbook thread
// mapping on purpose: consecutive threads of a warp take consecutive *columns* of
// the column-major C, so their stores to C (and their loads of B) are ldc (ldb)
// elements apart and every warp access splits into up to 32 memory transactions.
// Nothing is reused through shared memory or registers: each element of A and B is
// fetched from memory (or cache) once per element of C that needs it.
#include "../kernel_util.cuh"
#include "../ladders.hpp"
#include "../resources.hpp"

namespace gpk::cuda {
namespace {

// `product` is false when BLAS defines C = beta * C without reading A or B (k == 0,
// or alpha == 0 in the dtype). beta == 0: C is only written.
template <class T>
__global__ void gemm_naive_kernel(bool transa, bool transb, int64_t m, int64_t n, int64_t k, bool product, T alpha,
                                  const T *__restrict__ A, int64_t lda, const T *__restrict__ B, int64_t ldb, T beta,
                                  T *__restrict__ C, int64_t ldc) {
    // x walks the columns j of C, y its rows i (see the note at the top).
    for (int64_t i = static_cast<int64_t>(blockIdx.y) * blockDim.y + threadIdx.y; i < m;
         i += static_cast<int64_t>(gridDim.y) * blockDim.y)
        for (int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < n;
             j += static_cast<int64_t>(gridDim.x) * blockDim.x) {
            T *c = C + (i + j * ldc);
            if (!product) {
                *c = beta == T(0) ? T(0) : beta * *c;
                continue;
            }
            // op(A)(i, p) is A[i + p*lda], or A[p + i*lda] when transposed; the
            // steps between consecutive p are hoisted out of the loop.
            const T *a = transa ? A + i * lda : A + i;
            const int64_t a_step = transa ? 1 : lda;
            // op(B)(p, j) is B[p + j*ldb], or B[j + p*ldb] when transposed.
            const T *b = transb ? B + j : B + j * ldb;
            const int64_t b_step = transb ? ldb : 1;
            T acc = T(0);
            for (int64_t p = 0; p < k; ++p) acc += a[p * a_step] * b[p * b_step];
            *c = beta == T(0) ? alpha * acc : alpha * acc + beta * *c;
        }
}

template <class T>
gpk_status gemm(gpk_context &ctx, const GemmArgs &args) {
    const T alpha = static_cast<T>(args.alpha);
    const T beta = static_cast<T>(args.beta);
    const bool product = args.k > 0 && alpha != T(0);
    if (!product && beta == T(1)) return GPK_SUCCESS;  // BLAS's quick return: C stays as it is
    const dim3 block(32, 8);
    gemm_naive_kernel<T><<<grid_2d(args.n, args.m, block), block, 0, stream(ctx)>>>(
        args.transa, args.transb, args.m, args.n, args.k, product, alpha, static_cast<const T *>(args.A), args.lda,
        static_cast<const T *>(args.B), args.ldb, beta, static_cast<T *>(args.C), args.ldc);
    GPK_LAUNCH_CHECK(ctx, "gemm_naive_kernel");
    return GPK_SUCCESS;
}

}  // namespace

gpk_status gemm_naive(gpk_context &ctx, const GemmArgs &args) {
    switch (args.dtype) {
        case GPK_F32: return gemm<float>(ctx, args);
        case GPK_F64: return gemm<double>(ctx, args);
        default: return fail(&ctx, GPK_ERROR_NOT_SUPPORTED, "gemm variant \"naive\" supports F32 and F64 only");
    }
}

}  // namespace gpk::cuda
