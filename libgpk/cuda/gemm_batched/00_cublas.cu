// Vendor rung: cublasSgemmStridedBatched_64 / cublasDgemmStridedBatched_64, the
// yardstick the batched rungs are measured and validated against. The 64-bit API takes
// every size, leading dimension, stride and batch count the contract allows, stride 0
// included. The handle is expected in cuBLAS's default math mode (pure FP32 SGEMM).
//
// When the product vanishes (k == 0, or alpha == 0 in the dtype) CBLAS defines
// C = beta * C without reading A or B; that case runs the shared scale kernel, so
// that it does not depend on how cuBLAS treats an empty inner dimension.
#include "batched_common.cuh"

#include <cublas_v2.h>

namespace gpk::cuda::batched {
namespace {

inline BatchedResult cublas_failed(cublasStatus_t s, const char *what) {
    return {BatchedCode::kCublasError, static_cast<int>(s), what};
}

template <class T>
BatchedResult run(const BatchedParams &p, cublasHandle_t handle) {
    const ColMajor c = col_major(p);
    if (product_vanishes<T>(c, p.alpha)) return scale_batched<T>(c, p.beta, p.stream);
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

}  // namespace

BatchedResult gemm_batched_cublas(const BatchedParams &params, cublasContext *handle) {
    if (batched_empty(params)) return batched_ok();
    switch (params.dtype) {
        case GPK_F32: return run<float>(params, handle);
        case GPK_F64: return run<double>(params, handle);
        default: return batched_unsupported("gemm_batched variant \"cublas\" supports F32 and F64 only");
    }
}

}  // namespace gpk::cuda::batched
