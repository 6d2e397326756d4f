// What the strided batched gemm rungs share: the raw parameters of one call, the
// status a rung's computation answers with, the call's transposes as flags, the
// batch-aware "C = beta * C" kernel of products that vanish,
// 16-byte vectors, and the two conversions between the library's GemmBatchedCall and
// the raw parameters that every rung file's launcher makes (params_of, status_of).
//
// Each rung file defines its launcher (and, for a `checked` rung, its _takes) over
// GemmBatchedCall: the computation on BatchedParams answers a BatchedResult, which
// status_of maps to a gpk_status and its message.
//
// Semantics are CBLAS's, column-major, per product i in [0, batch_count):
//   C_i = alpha * op(A_i) * op(B_i) + beta * C_i,  X_i = X + i * stride_x elements.
// The API layer hands the rungs column-major calls only (api.cpp rewrites a row-major
// call as C_i^T = op(B_i)^T op(A_i)^T, as for gpk_gemm), so no rung deals with layouts.
// stride_a or stride_b may be 0 (one matrix shared by every product). beta == 0 means
// C is written, never read, so NaN in C does not leak; k == 0 or alpha == 0 means A
// and B are not read (C = beta * C). Arguments are assumed valid (checked before).
#pragma once

#include "../ladders.hpp"
#include "../resources.hpp"
#include "gpk/gpk.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

namespace gpk::cuda::batched {

struct BatchedParams {
    int dtype;   // GPK_F32 or GPK_F64 (and F16/BF16 for the vendor rung)
    int transa;  // GPK_NO_TRANS or GPK_TRANS
    int transb;
    int64_t m, n, k;
    double alpha;
    const void *A;
    int64_t lda, stride_a;
    const void *B;
    int64_t ldb, stride_b;
    double beta;
    void *C;
    int64_t ldc, stride_c;
    int64_t batch_count;
    cudaStream_t stream;
};

enum class BatchedCode {
    kOk = 0,
    kNotSupported,  // the rung does not take this call (dtype, size); `what` says why
    kCudaError,     // `detail` is the cudaError_t
    kCublasError,   // `detail` is the cublasStatus_t
};

struct BatchedResult {
    BatchedCode code;
    int detail;        // cudaError_t / cublasStatus_t, 0 otherwise
    const char *what;  // static text naming the rung and the reason (or the failed call)
};

inline BatchedResult batched_ok() { return {BatchedCode::kOk, 0, ""}; }
inline BatchedResult batched_unsupported(const char *what) { return {BatchedCode::kNotSupported, 0, what}; }
inline BatchedResult batched_cuda(cudaError_t e, const char *what) {
    return {BatchedCode::kCudaError, static_cast<int>(e), what};
}
// The launch just made, by its last error.
inline BatchedResult batched_launched(const char *what) {
    const cudaError_t e = cudaGetLastError();
    return e == cudaSuccess ? batched_ok() : batched_cuda(e, what);
}

// The call as the kernels take it: column-major (as every call arrives), transposes
// as flags, the strides under short names. rows_x/cols_x are the dimensions of X as
// stored.
struct ColMajor {
    bool transa, transb;
    int64_t m, n, k;
    const void *A;
    int64_t lda, sa;
    const void *B;
    int64_t ldb, sb;
    void *C;
    int64_t ldc, sc;
    int64_t batch;
    int64_t rows_a() const { return transa ? k : m; }
    int64_t cols_a() const { return transa ? m : k; }
    int64_t rows_b() const { return transb ? n : k; }
    int64_t cols_b() const { return transb ? k : n; }
};

inline ColMajor col_major(const BatchedParams &p) {
    const bool ta = p.transa == GPK_TRANS, tb = p.transb == GPK_TRANS;
    return ColMajor{ta, tb, p.m, p.n, p.k, p.A, p.lda, p.stride_a, p.B, p.ldb, p.stride_b,
                    p.C, p.ldc, p.stride_c, p.batch_count};
}

// Nothing to do: no product, or products with no element.
inline bool batched_empty(const BatchedParams &p) { return p.batch_count == 0 || p.m == 0 || p.n == 0; }

// Grid limits of every GPU the library builds for.
constexpr int64_t kMaxGridX = 2147483647;
constexpr int64_t kMaxGridYZ = 65535;

inline unsigned int grid_blocks(int64_t work, int64_t per_block, int64_t limit = kMaxGridX) {
    const int64_t blocks = work / per_block + (work % per_block != 0 ? 1 : 0);
    return static_cast<unsigned int>(blocks < 1 ? 1 : (blocks > limit ? limit : blocks));
}

// A batch for kernels whose grid z index is a product: one launch per 65535 products
// (the grid's z limit). launch(first, count) issues the kernel for products first ..
// first + count - 1; what names it in an error.
template <class Launch>
BatchedResult launch_in_parts(int64_t batch, const char *what, Launch &&launch) {
    for (int64_t first = 0; first < batch; first += kMaxGridYZ) {
        launch(first, static_cast<unsigned int>(batch - first < kMaxGridYZ ? batch - first : kMaxGridYZ));
        const BatchedResult r = batched_launched(what);
        if (r.code != BatchedCode::kOk) return r;
    }
    return batched_ok();
}

// ---- products that vanish --------------------------------------------------------

// C_i = beta * C_i over every product, C not read when beta == 0. The product
// alpha * op(A) * op(B) is zero when k == 0 or alpha == 0 and CBLAS then reads
// neither A nor B (NaN there must not reach C), so every rung answers those calls
// with this kernel rather than by multiplying.
template <class T>
__global__ void scale_batched_kernel(int64_t m, int64_t n, T beta, T *C, int64_t ldc, int64_t sc, int64_t batch) {
    const int64_t per = m * n, total = per * batch;
    for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
         e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
        const int64_t b = e / per, r = e - b * per, j = r / m, i = r - j * m;
        T &c = C[b * sc + i + j * ldc];
        c = beta == T(0) ? T(0) : beta * c;
    }
}

// Whether the product vanishes in the dtype (alpha rounded to it).
template <class T>
bool product_vanishes(const ColMajor &c, double alpha) {
    return c.k == 0 || static_cast<T>(alpha) == T(0);
}

template <class T>
BatchedResult scale_batched(const ColMajor &c, double beta_d, cudaStream_t stream) {
    const T beta = static_cast<T>(beta_d);
    if (beta == T(1)) return batched_ok();
    const int64_t total = c.m * c.n * c.batch;
    scale_batched_kernel<T><<<grid_blocks(total, 256, 65536), 256, 0, stream>>>(
        c.m, c.n, beta, static_cast<T *>(c.C), c.ldc, c.sc, c.batch);
    return batched_launched("gemm_batched scale_batched_kernel");
}

// ---- 16-byte vectors --------------------------------------------------------------

template <class T>
struct Vec16;
template <>
struct Vec16<float> {
    using type = float4;
    static constexpr int kLanes = 4;
};
template <>
struct Vec16<double> {
    using type = double2;
    static constexpr int kLanes = 2;
};
template <class T>
using vec16_t = typename Vec16<T>::type;

inline bool aligned16(const void *p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// C(i, j) = alpha * acc + beta * C(i, j); with beta == 0 C is only written.
template <class T>
__device__ __forceinline__ void store_c(T *c, T alpha, T acc, T beta) {
    *c = beta == T(0) ? alpha * acc : alpha * acc + beta * *c;
}

// Element (r, c) of op(X), X column-major with leading dimension ld.
template <class T>
__device__ __forceinline__ T op_at(const T *__restrict__ X, int64_t ld, bool trans, int64_t r, int64_t c) {
    return trans ? X[c + r * ld] : X[r + c * ld];
}

// ---- the library's side ------------------------------------------------------------

// The checked call as raw parameters, on the context's stream (or the pipeline lane's).
inline BatchedParams params_of(const gpk_context &ctx, const GemmBatchedCall &a) {
    return BatchedParams{a.dtype, a.transa,   a.transb, a.m,      a.n,        a.k,           a.alpha,
                         a.A,     a.lda,      a.stride_a, a.B,      a.ldb,      a.stride_b,    a.beta,
                         a.C,     a.ldc,      a.stride_c, a.batch_count, stream(ctx)};
}

// A rung's result as the library's status, with the rung's text (or the failed call's).
inline gpk_status status_of(gpk_context &ctx, const BatchedResult &r) {
    switch (r.code) {
        case BatchedCode::kOk: return GPK_SUCCESS;
        case BatchedCode::kNotSupported: return fail(&ctx, GPK_ERROR_NOT_SUPPORTED, "%s", r.what);
        case BatchedCode::kCudaError: return check(ctx, static_cast<cudaError_t>(r.detail), r.what);
        case BatchedCode::kCublasError: return check_cublas(ctx, static_cast<cublasStatus_t>(r.detail), r.what);
    }
    return fail(&ctx, GPK_ERROR_INTERNAL, "internal error: unknown result of a batched gemm rung");
}

}  // namespace gpk::cuda::batched
