// Rung 1, naive: one thread per element of C, each walking a row of op(A) and a
// column of op(B) straight from global memory and accumulating in the dtype. It is
// the baseline every later rung improves on, and it keeps the textbook thread
// mapping on purpose: consecutive threads of a warp take consecutive *columns* of
// the column-major C, so their stores to C (and their loads of B) are ldc (ldb)
// elements apart and every warp access splits into up to 32 memory transactions.
// Nothing is reused through shared memory or registers: each element of A and B is
// fetched from memory (or cache) once per element of C that needs it.
//
// It is also the reference for gpk_gemm_ex's calls (FP8, block-scaled FP8, F16/BF16
// with F32 C): each element decoded exactly to float (common/fp8.hpp, common/half.hpp),
// products exact in F32, summed in F32 in p order, block by block of 128 along k when
// block-scaled, alpha and beta in F32, and C rounded once to its dtype. Any layout,
// transposition and leading dimension; no alignment needed.
#include "../kernel_util.cuh"
#include "../ladders.hpp"
#include "../resources.hpp"

#include "../../common/fp8.hpp"
#include "../../common/half.hpp"

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

// ---- gpk_gemm_ex ------------------------------------------------------------------

// An element of an operand of dtype `dtype` (FP8, F16, BF16 or F32) as a float, exactly.
__device__ __forceinline__ float load_ex(const void *X, int dtype, int64_t at) {
    switch (dtype) {
        case GPK_F8E4M3: return e4m3_to_float(static_cast<const uint8_t *>(X)[at]);
        case GPK_F8E5M2: return e5m2_to_float(static_cast<const uint8_t *>(X)[at]);
        case GPK_F16: return half_to_float(static_cast<const uint16_t *>(X)[at]);
        case GPK_BF16: return bf16_to_float(static_cast<const uint16_t *>(X)[at]);
        default: return static_cast<const float *>(X)[at];
    }
}

struct ExOperands {
    int a_dtype, b_dtype, c_dtype;
    const float *scale_a, *scale_b;  // null: per-tensor
    int64_t scale_a_group, scale_b_group, scale_a_ld, scale_b_ld;
};

// One thread per element of C, as the kernel above; C's old value read only when
// beta != 0, and written once, rounded to its dtype.
__global__ void gemm_naive_ex_kernel(bool transa, bool transb, int64_t m, int64_t n, int64_t k, bool product,
                                     float alpha, const void *__restrict__ A, int64_t lda, const void *__restrict__ B,
                                     int64_t ldb, float beta, void *__restrict__ C, int64_t ldc, ExOperands o) {
    for (int64_t i = static_cast<int64_t>(blockIdx.y) * blockDim.y + threadIdx.y; i < m;
         i += static_cast<int64_t>(gridDim.y) * blockDim.y)
        for (int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < n;
             j += static_cast<int64_t>(gridDim.x) * blockDim.x) {
            float acc = 0.0f;
            if (product) {
                const int64_t a_step = transa ? 1 : lda, a0 = transa ? i * lda : i;
                const int64_t b_step = transb ? ldb : 1, b0 = transb ? j : j * ldb;
                // Blocks of 128 along k: the unit of the block scales (one block of all
                // of k per-tensor, so that the sum runs in p order either way).
                const int64_t block = o.scale_a != nullptr ? 128 : k;
                for (int64_t p0 = 0; p0 < k; p0 += block) {
                    const int64_t p1 = p0 + block < k ? p0 + block : k;
                    float part = 0.0f;
                    for (int64_t p = p0; p < p1; ++p)
                        part += load_ex(A, o.a_dtype, a0 + p * a_step) * load_ex(B, o.b_dtype, b0 + p * b_step);
                    if (o.scale_a != nullptr) {
                        const int64_t q = p0 / 128;
                        part *= o.scale_a[q * o.scale_a_ld + i / o.scale_a_group] *
                                o.scale_b[q * o.scale_b_ld + j / o.scale_b_group];
                    }
                    acc += part;
                }
            }
            const int64_t at = i + j * ldc;
            float v = product ? alpha * acc : 0.0f;
            if (beta != 0.0f) v += beta * load_ex(C, o.c_dtype, at);
            if (o.c_dtype == GPK_F32) static_cast<float *>(C)[at] = v;
            else static_cast<uint16_t *>(C)[at] = o.c_dtype == GPK_BF16 ? float_to_bf16(v) : float_to_half(v);
        }
}

gpk_status gemm_ex(gpk_context &ctx, const GemmArgs &args) {
    const float alpha = static_cast<float>(args.alpha), beta = static_cast<float>(args.beta);
    const bool product = args.k > 0 && alpha != 0.0f;
    if (!product && beta == 1.0f) return GPK_SUCCESS;  // BLAS's quick return: C stays as it is
    const ExOperands o{a_dtype_of(args),    b_dtype_of(args),    c_dtype_of(args), args.scale_a,
                       args.scale_b,        args.scale_a_group,  args.scale_b_group,
                       args.scale_a_ld,     args.scale_b_ld};
    const dim3 block(32, 8);
    gemm_naive_ex_kernel<<<grid_2d(args.n, args.m, block), block, 0, stream(ctx)>>>(
        args.transa, args.transb, args.m, args.n, args.k, product, alpha, args.A, args.lda, args.B, args.ldb, beta,
        args.C, args.ldc, o);
    GPK_LAUNCH_CHECK(ctx, "gemm_naive_ex_kernel");
    return GPK_SUCCESS;
}

}  // namespace

gpk_status gemm_naive(gpk_context &ctx, const GemmArgs &args) {
    if (is_gemm_ex_class(args.dtype)) return gemm_ex(ctx, args);
    switch (args.dtype) {
        case GPK_F32: return gemm<float>(ctx, args);
        case GPK_F64: return gemm<double>(ctx, args);
        default: return fail(&ctx, GPK_ERROR_NOT_SUPPORTED, "gemm variant \"naive\" supports F32 and F64 only");
    }
}

}  // namespace gpk::cuda
