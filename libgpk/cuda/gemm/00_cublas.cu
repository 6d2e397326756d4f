// Vendor rung: cublasSgemm_64 / cublasDgemm_64, the yardstick every gemm kernel of
// ours is measured and validated against. The 64-bit size API takes any m, n, k and
// leading dimension libgpk accepts. The handle is put in cuBLAS's default math mode
// before every call (whatever set it before), so SGEMM is pure FP32 (no TF32), the
// same arithmetic our kernels do.
//
// F16 and BF16 go through cublasGemmEx_64 with A, B and C in the dtype and compute
// type CUBLAS_COMPUTE_32F (F32 accumulation, alpha and beta as floats), the handle
// forbidding reductions in the output's precision (split-k partials would otherwise
// be rounded to 16 bits before they are added: C must be rounded once). F32 in
// GPK_MATH_TF32 goes through cublasGemmEx_64 with CUBLAS_COMPUTE_32F_FAST_TF32, which
// lets cuBLAS round A and B to TF32 for the tensor cores; that compute type is chosen
// per call, and never through the handle's math mode, so no other call can inherit it.
//
// When the product vanishes (k == 0, or alpha == 0 in the dtype) BLAS defines
// C = beta * C without reading A or B; that case runs a small kernel of ours instead,
// so that it does not depend on how cuBLAS treats an empty inner dimension, and
// beta == 0 writes zeros without reading C.
#include "../kernel_util.cuh"
#include "../ladders.hpp"
#include "../resources.hpp"

#include "../../common/half.hpp"

#include <type_traits>

namespace gpk::cuda {
namespace {

// C = beta * C over a 16-bit C, beta applied in F32 and the result rounded once; C
// never read when beta == 0.
template <bool kBf16>
__global__ void scale16_kernel(int64_t m, int64_t n, float beta, uint16_t *C, int64_t ldc) {
    for (int64_t j = static_cast<int64_t>(blockIdx.y) * blockDim.y + threadIdx.y; j < n;
         j += static_cast<int64_t>(gridDim.y) * blockDim.y)
        for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < m;
             i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
            uint16_t &c = C[i + j * ldc];
            const float v = beta == 0.0f ? 0.0f : beta * half_bits_to_float(c, kBf16);
            c = kBf16 ? float_to_bf16(v) : float_to_half(v);
        }
}

// The product-free case of a 16-bit gemm (k == 0 or alpha == 0 as a float).
gpk_status scale16(gpk_context &ctx, const GemmArgs &args) {
    const float beta = static_cast<float>(args.beta);
    if (beta == 1.0f) return GPK_SUCCESS;
    const dim3 block(32, 8);
    auto *C = static_cast<uint16_t *>(args.C);
    if (args.dtype == GPK_BF16)
        scale16_kernel<true><<<grid_2d(args.m, args.n, block), block, 0, stream(ctx)>>>(args.m, args.n, beta, C, args.ldc);
    else
        scale16_kernel<false><<<grid_2d(args.m, args.n, block), block, 0, stream(ctx)>>>(args.m, args.n, beta, C, args.ldc);
    GPK_LAUNCH_CHECK(ctx, "gemm scale16_kernel");
    return GPK_SUCCESS;
}

// The handle of this call, in the default math mode, reductions kept in the compute
// type's precision.
gpk_status exact_handle(gpk_context &ctx, cublasHandle_t *handle) {
    GPK_FORWARD_IF_ERROR(cublas(ctx, handle));
    GPK_CUBLAS_TRY(ctx, cublasSetMathMode(*handle, static_cast<cublasMath_t>(
                                                       CUBLAS_DEFAULT_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)));
    return GPK_SUCCESS;
}

// cublasGemmEx_64 with A, B, C of `type`, alpha and beta as floats.
gpk_status gemm_ex(gpk_context &ctx, const GemmArgs &args, cudaDataType_t type, cublasComputeType_t compute) {
    const float alpha = static_cast<float>(args.alpha);
    const float beta = static_cast<float>(args.beta);
    cublasHandle_t handle = nullptr;
    GPK_FORWARD_IF_ERROR(exact_handle(ctx, &handle));
    const cublasOperation_t transa = args.transa ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t transb = args.transb ? CUBLAS_OP_T : CUBLAS_OP_N;
    GPK_CUBLAS_TRY(ctx, cublasGemmEx_64(handle, transa, transb, args.m, args.n, args.k, &alpha, args.A, type, args.lda,
                                        args.B, type, args.ldb, &beta, args.C, type, args.ldc, compute,
                                        CUBLAS_GEMM_DEFAULT));
    return GPK_SUCCESS;
}

gpk_status gemm16(gpk_context &ctx, const GemmArgs &args) {
    if (args.k == 0 || static_cast<float>(args.alpha) == 0.0f) return scale16(ctx, args);
    return gemm_ex(ctx, args, args.dtype == GPK_BF16 ? CUDA_R_16BF : CUDA_R_16F, CUBLAS_COMPUTE_32F);
}

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

    if constexpr (std::is_same_v<T, float>)
        if (ctx.math_mode == GPK_MATH_TF32) return gemm_ex(ctx, args, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32);
    cublasHandle_t handle = nullptr;
    GPK_FORWARD_IF_ERROR(exact_handle(ctx, &handle));
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
        case GPK_F16: case GPK_BF16: return gemm16(ctx, args);
        default: return fail(&ctx, GPK_ERROR_NOT_SUPPORTED, "gemm variant \"cublas\" does not support dtype %d", args.dtype);
    }
}

}  // namespace gpk::cuda
