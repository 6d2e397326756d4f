// Vendor rung: cublasSgemmStridedBatched_64 / cublasDgemmStridedBatched_64, the
// yardstick the batched rungs are measured and validated against. The 64-bit API takes
// every size, leading dimension, stride and batch count the contract allows, stride 0
// included. The handle is expected in cuBLAS's default math mode (pure FP32 SGEMM).
//
// F16 and BF16 go through cublasGemmStridedBatchedEx_64 with A, B and C in the dtype
// and compute type CUBLAS_COMPUTE_32F (F32 accumulation, alpha and beta as floats,
// each element of C rounded once, as the single gemm's vendor rung does); F32 with
// `tf32` set (the context's GPK_MATH_TF32) goes through the same call with
// CUBLAS_COMPUTE_32F_FAST_TF32, chosen per call so that no other call inherits it.
//
// When the product vanishes (k == 0, or alpha == 0 in the dtype) CBLAS defines
// C = beta * C without reading A or B; that case runs the shared scale kernel, so
// that it does not depend on how cuBLAS treats an empty inner dimension.
#include "batched_common.cuh"

#include "../../common/half.hpp"

#include <cublas_v2.h>

namespace gpk::cuda::batched {
namespace {

inline BatchedResult cublas_failed(cublasStatus_t s, const char *what) {
    return {BatchedCode::kCublasError, static_cast<int>(s), what};
}

// C_i = beta * C_i over 16-bit C matrices, beta applied in F32 and each element
// rounded once; C not read when beta == 0.
template <bool kBf16>
__global__ void scale16_batched_kernel(int64_t m, int64_t n, float beta, uint16_t *C, int64_t ldc, int64_t sc,
                                       int64_t batch) {
    const int64_t per = m * n, total = per * batch;
    for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
         e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
        const int64_t b = e / per, r = e - b * per, j = r / m, i = r - j * m;
        uint16_t &c = C[b * sc + i + j * ldc];
        const float v = beta == 0.0f ? 0.0f : beta * half_bits_to_float(c, kBf16);
        c = kBf16 ? float_to_bf16(v) : float_to_half(v);
    }
}

// cublasGemmStridedBatchedEx_64 with A, B, C of `type`, alpha and beta as floats.
BatchedResult run_ex(const BatchedParams &p, cublasHandle_t handle, cudaDataType_t type,
                     cublasComputeType_t compute) {
    const ColMajor c = col_major(p);
    const float alpha = static_cast<float>(p.alpha), beta = static_cast<float>(p.beta);
    cudaStream_t previous = nullptr;
    cublasStatus_t s = cublasGetStream(handle, &previous);
    if (s != CUBLAS_STATUS_SUCCESS) return cublas_failed(s, "cublasGetStream");
    s = cublasSetStream(handle, p.stream);
    if (s != CUBLAS_STATUS_SUCCESS) return cublas_failed(s, "cublasSetStream");
    s = cublasGemmStridedBatchedEx_64(handle, c.transa ? CUBLAS_OP_T : CUBLAS_OP_N, c.transb ? CUBLAS_OP_T : CUBLAS_OP_N,
                                      c.m, c.n, c.k, &alpha, c.A, type, c.lda, c.sa, c.B, type, c.ldb, c.sb, &beta, c.C,
                                      type, c.ldc, c.sc, c.batch, compute, CUBLAS_GEMM_DEFAULT);
    cublasSetStream(handle, previous);
    if (s != CUBLAS_STATUS_SUCCESS) return cublas_failed(s, "cublasGemmStridedBatchedEx_64");
    return batched_ok();
}

BatchedResult run16(const BatchedParams &p, cublasHandle_t handle) {
    const bool bf16 = p.dtype == GPK_BF16;
    const ColMajor c = col_major(p);
    if (c.k == 0 || static_cast<float>(p.alpha) == 0.0f) {
        const float beta = static_cast<float>(p.beta);
        if (beta == 1.0f) return batched_ok();
        const unsigned int blocks = grid_blocks(c.m * c.n * c.batch, 256, 65536);
        auto *C = static_cast<uint16_t *>(c.C);
        if (bf16)
            scale16_batched_kernel<true><<<blocks, 256, 0, p.stream>>>(c.m, c.n, beta, C, c.ldc, c.sc, c.batch);
        else
            scale16_batched_kernel<false><<<blocks, 256, 0, p.stream>>>(c.m, c.n, beta, C, c.ldc, c.sc, c.batch);
        return batched_launched("gemm_batched scale16_batched_kernel");
    }
    return run_ex(p, handle, bf16 ? CUDA_R_16BF : CUDA_R_16F, CUBLAS_COMPUTE_32F);
}

template <class T>
BatchedResult run(const BatchedParams &p, cublasHandle_t handle, bool tf32) {
    const ColMajor c = col_major(p);
    if (product_vanishes<T>(c, p.alpha)) return scale_batched<T>(c, p.beta, p.stream);
    if constexpr (std::is_same_v<T, float>)
        if (tf32) return run_ex(p, handle, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32);
    const T alpha = static_cast<T>(p.alpha), beta = static_cast<T>(p.beta);
    cudaStream_t previous = nullptr;
    cublasStatus_t s = cublasGetStream(handle, &previous);
    if (s != CUBLAS_STATUS_SUCCESS) return cublas_failed(s, "cublasGetStream");
    s = cublasSetStream(handle, p.stream);
    if (s != CUBLAS_STATUS_SUCCESS) return cublas_failed(s, "cublasSetStream");
    const cublasOperation_t ta = c.transa ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t tb = c.transb ? CUBLAS_OP_T : CUBLAS_OP_N;
    const T *A = static_cast<const T *>(c.A);
    const T *B = static_cast<const T *>(c.B);
    T *C = static_cast<T *>(c.C);
    if constexpr (std::is_same_v<T, float>)
        s = cublasSgemmStridedBatched_64(handle, ta, tb, c.m, c.n, c.k, &alpha, A, c.lda, c.sa, B, c.ldb, c.sb, &beta,
                                         C, c.ldc, c.sc, c.batch);
    else
        s = cublasDgemmStridedBatched_64(handle, ta, tb, c.m, c.n, c.k, &alpha, A, c.lda, c.sa, B, c.ldb, c.sb, &beta,
                                         C, c.ldc, c.sc, c.batch);
    cublasSetStream(handle, previous);
    if (s != CUBLAS_STATUS_SUCCESS)
        return cublas_failed(s, std::is_same_v<T, float> ? "cublasSgemmStridedBatched_64"
                                                          : "cublasDgemmStridedBatched_64");
    return batched_ok();
}

BatchedResult compute(const BatchedParams &params, cublasHandle_t handle, bool tf32) {
    if (batched_empty(params)) return batched_ok();
    switch (params.dtype) {
        case GPK_F32: return run<float>(params, handle, tf32);
        case GPK_F64: return run<double>(params, handle, false);
        case GPK_F16: case GPK_BF16: return run16(params, handle);
        default: return batched_unsupported("gemm_batched variant \"cublas\" supports F32, F64, F16 and BF16 only");
    }
}

}  // namespace
}  // namespace gpk::cuda::batched

namespace gpk::cuda {

gpk_status gemm_batched_cublas(gpk_context &ctx, const GemmBatchedCall &args) {
    cublasHandle_t handle = nullptr;
    GPK_FORWARD_IF_ERROR(cublas(ctx, &handle));
    // Default math, reductions kept in the compute type's precision (16-bit C rounded
    // once), whatever set the handle before; TF32 only per call, in GPK_MATH_TF32.
    GPK_CUBLAS_TRY(ctx, cublasSetMathMode(handle, static_cast<cublasMath_t>(
                                                      CUBLAS_DEFAULT_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)));
    const bool tf32 = args.dtype == GPK_F32 && ctx.math_mode == GPK_MATH_TF32;
    return batched::status_of(ctx, batched::compute(batched::params_of(ctx, args), handle, tf32));
}

}  // namespace gpk::cuda
