// Rung 2, coalesced: rung 1 with the thread mapping turned around. Consecutive
// threads of a warp now take consecutive *rows* i of the column-major C, so a warp's
// stores to C are one contiguous run of 32 elements (one or two transactions instead
// of up to 32), and so are its loads of A when A is not transposed: A(i, p) for
// consecutive i sits side by side in memory. The warp's threads share one column j,
// so each load of B is a single broadcast element. The arithmetic is rung 1's: every
// element of A and B is still fetched once per element of C that needs it.
#include "gemm_util.cuh"

namespace gpk::cuda {
namespace {

using namespace gemm_util;

template <class T>
__global__ void gemm_coalesced_kernel(bool transa, bool transb, int64_t m, int64_t n, int64_t k, T alpha,
                                      const T *__restrict__ A, int64_t lda, const T *__restrict__ B, int64_t ldb,
                                      T beta, T *__restrict__ C, int64_t ldc) {
    // x walks the rows i of C, y its columns j.
    for (int64_t j = static_cast<int64_t>(blockIdx.y) * blockDim.y + threadIdx.y; j < n;
         j += static_cast<int64_t>(gridDim.y) * blockDim.y)
        for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < m;
             i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
            // op(A)(i, p) is A[i + p*lda], or A[p + i*lda] when transposed.
            const T *a = transa ? A + i * lda : A + i;
            const int64_t a_step = transa ? 1 : lda;
            // op(B)(p, j) is B[p + j*ldb], or B[j + p*ldb] when transposed.
            const T *b = transb ? B + j : B + j * ldb;
            const int64_t b_step = transb ? ldb : 1;
            T acc = T(0);
            for (int64_t p = 0; p < k; ++p) acc += a[p * a_step] * b[p * b_step];
            store_c(C + (i + j * ldc), alpha, acc, beta);
        }
}

template <class T>
gpk_status gemm(gpk_context &ctx, const GemmArgs &args) {
    const dim3 block(32, 8);
    gemm_coalesced_kernel<T><<<grid_2d(args.m, args.n, block), block, 0, stream(ctx)>>>(
        args.transa, args.transb, args.m, args.n, args.k, static_cast<T>(args.alpha), static_cast<const T *>(args.A),
        args.lda, static_cast<const T *>(args.B), args.ldb, static_cast<T>(args.beta), static_cast<T *>(args.C),
        args.ldc);
    GPK_LAUNCH_CHECK(ctx, "gemm_coalesced_kernel");
    return GPK_SUCCESS;
}

}  // namespace

gpk_status gemm_coalesced(gpk_context &ctx, const GemmArgs &args) {
    return gemm_util::by_dtype(ctx, args, "coalesced", gemm<float>, gemm<double>);
}

}  // namespace gpk::cuda
