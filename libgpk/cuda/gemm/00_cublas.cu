// Vendor rung: cublasSgemm_64 / cublasDgemm_64, the yardstick every gemm kernel of
// ours is measured and validated against. The 64-bit size API takes any m, n, k and
// leading dimension libgpk accepts. The handle stays in cuBLAS's default math mode,
// so SGEMM is pure FP32 (no TF32), the same arithmetic our kernels do.
//
// When the product vanishes (k == 0, or alpha == 0 in the dtype) BLAS defines
// C = beta * C without reading A or B; that case runs a small kernel of ours instead,
// so that it does not depend on how cuBLAS treats an empty inner dimension, and
// beta == 0 writes zeros without reading C.
#include "../kernel_util.cuh"
#include "../ladders.hpp"
#include "../resources.hpp"

#include <type_traits>

namespace gpk::cuda {
namespace {

// C = beta * C over the m x n matrix, C never read when beta == 0 (NaN in C must not leak).
template <class T>
__global__ void scale_kernel(int64_t m, int64_t n, T beta, T *C, int64_t ldc) {
    for (int64_t j = static_cast<int64_t>(blockIdx.y) * blockDim.y + threadIdx.y; j < n;
         j += static_cast<int64_t>(gridDim.y) * blockDim.y)
        for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < m;
             i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
            T &c = C[i + j * ldc];
            c = beta == T(0) ? T(0) : beta * c;
        }
}

template <class T>
gpk_status scale(gpk_context &ctx, const GemmArgs &args, T beta) {
    if (beta == T(1)) return GPK_SUCCESS;
    const dim3 block(32, 8);
    scale_kernel<T><<<grid_2d(args.m, args.n, block), block, 0, stream(ctx)>>>(args.m, args.n, beta,
                                                                                static_cast<T *>(args.C), args.ldc);
    GPK_LAUNCH_CHECK(ctx, "gemm scale_kernel");
    return GPK_SUCCESS;
}

template <class T>
gpk_status gemm(gpk_context &ctx, const GemmArgs &args) {
    const T alpha = static_cast<T>(args.alpha);
    const T beta = static_cast<T>(args.beta);
    if (args.k == 0 || alpha == T(0)) return scale(ctx, args, beta);

    cublasHandle_t handle = nullptr;
    GPK_FORWARD_IF_ERROR(cublas(ctx, &handle));
    const cublasOperation_t transa = args.transa ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t transb = args.transb ? CUBLAS_OP_T : CUBLAS_OP_N;
    const T *A = static_cast<const T *>(args.A);
    const T *B = static_cast<const T *>(args.B);
    T *C = static_cast<T *>(args.C);
    if constexpr (std::is_same_v<T, float>)
        GPK_CUBLAS_TRY(ctx, cublasSgemm_64(handle, transa, transb, args.m, args.n, args.k, &alpha, A, args.lda, B,
                                           args.ldb, &beta, C, args.ldc));
    else
        GPK_CUBLAS_TRY(ctx, cublasDgemm_64(handle, transa, transb, args.m, args.n, args.k, &alpha, A, args.lda, B,
                                           args.ldb, &beta, C, args.ldc));
    return GPK_SUCCESS;
}

}  // namespace

gpk_status gemm_cublas(gpk_context &ctx, const GemmArgs &args) {
    switch (args.dtype) {
        case GPK_F32: return gemm<float>(ctx, args);
        case GPK_F64: return gemm<double>(ctx, args);
        default: return fail(&ctx, GPK_ERROR_NOT_SUPPORTED, "gemm variant \"cublas\" supports F32 and F64 only");
    }
}

}  // namespace gpk::cuda
