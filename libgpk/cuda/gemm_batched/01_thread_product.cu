// Rung 1, one thread per product: the vendor call launches a tiled gemm kernel per
// group of products and spends a block or more on a product of a few hundred bytes,
// so at tiny sizes its blocks sit mostly idle while waiting on memory. Here a thread
// owns a whole product: op(A), op(B) and C live in registers (at most 8 x 8, the
// loops unrolled at the size bound so the arrays stay in registers), the k steps are
// plain multiply-adds, and a grid-stride loop over the batch covers any batch count
// with one launch. Each thread reads its own product's bytes, so neighbouring threads
// touch addresses a product apart: the loads are not coalesced across products, which
// rung 2 fixes.
//
// Takes F32 and F64 with m, n, k <= 8, any transposes, leading dimensions
// and strides (0 included).
#include "batched_common.cuh"

namespace gpk::cuda::batched {
namespace {

// What the rung takes beyond its dtypes, the one statement of it: the unrolled
// register arrays hold products of at most 8 x 8 x 8.
constexpr int64_t kMaxSize = 8;
bool fits(int64_t m, int64_t n, int64_t k) { return m <= kMaxSize && n <= kMaxSize && k <= kMaxSize; }

template <class T, int S, bool TA, bool TB>
__global__ void __launch_bounds__(128)
    thread_product_kernel(int m, int n, int k, T alpha, const T *__restrict__ A, int64_t lda, int64_t sa,
                          const T *__restrict__ B, int64_t ldb, int64_t sb, T beta, T *__restrict__ C, int64_t ldc,
                          int64_t sc, int64_t batch) {
    for (int64_t b = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; b < batch;
         b += static_cast<int64_t>(gridDim.x) * blockDim.x) {
        const T *a = A + b * sa;
        const T *bm = B + b * sb;
        T acc[S][S];
#pragma unroll
        for (int i = 0; i < S; ++i)
#pragma unroll
            for (int j = 0; j < S; ++j) acc[i][j] = T(0);
#pragma unroll
        for (int p = 0; p < S; ++p) {
            if (p >= k) break;
            T av[S], bv[S];
#pragma unroll
            for (int i = 0; i < S; ++i) av[i] = i < m ? (TA ? a[p + i * lda] : a[i + p * lda]) : T(0);
#pragma unroll
            for (int j = 0; j < S; ++j) bv[j] = j < n ? (TB ? bm[j + p * ldb] : bm[p + j * ldb]) : T(0);
#pragma unroll
            for (int j = 0; j < S; ++j)
#pragma unroll
                for (int i = 0; i < S; ++i) acc[i][j] += av[i] * bv[j];
        }
        T *c = C + b * sc;
#pragma unroll
        for (int j = 0; j < S; ++j)
#pragma unroll
            for (int i = 0; i < S; ++i)
                if (i < m && j < n) store_c(c + i + j * ldc, alpha, acc[i][j], beta);
    }
}

template <class T, int S, bool TA, bool TB>
BatchedResult launch(const ColMajor &c, T alpha, T beta, cudaStream_t stream) {
    constexpr int kThreads = 128;
    thread_product_kernel<T, S, TA, TB><<<grid_blocks(c.batch, kThreads), kThreads, 0, stream>>>(
        static_cast<int>(c.m), static_cast<int>(c.n), static_cast<int>(c.k), alpha, static_cast<const T *>(c.A), c.lda,
        c.sa, static_cast<const T *>(c.B), c.ldb, c.sb, beta, static_cast<T *>(c.C), c.ldc, c.sc, c.batch);
    return batched_launched("gemm_batched thread_product_kernel");
}

template <class T, int S>
BatchedResult by_trans(const ColMajor &c, T alpha, T beta, cudaStream_t stream) {
    if (c.transa) return c.transb ? launch<T, S, true, true>(c, alpha, beta, stream)
                                  : launch<T, S, true, false>(c, alpha, beta, stream);
    return c.transb ? launch<T, S, false, true>(c, alpha, beta, stream)
                    : launch<T, S, false, false>(c, alpha, beta, stream);
}

template <class T>
BatchedResult run(const BatchedParams &p) {
    const ColMajor c = col_major(p);
    if (!fits(c.m, c.n, c.k))
        return batched_unsupported("gemm_batched variant \"thread_product\" takes m, n, k <= 8 only");
    if (product_vanishes<T>(c, p.alpha)) return scale_batched<T>(c, p.beta, p.stream);
    const T alpha = static_cast<T>(p.alpha), beta = static_cast<T>(p.beta);
    // The smaller unrolled bound where it fits: an 8 x 8 body on 4 x 4 products
    // would issue four times the predicated work.
    if (c.m <= 4 && c.n <= 4 && c.k <= 4) return by_trans<T, 4>(c, alpha, beta, p.stream);
    return by_trans<T, 8>(c, alpha, beta, p.stream);
}

BatchedResult compute(const BatchedParams &params) {
    if (batched_empty(params)) return batched_ok();
    switch (params.dtype) {
        case GPK_F32: return run<float>(params);
        case GPK_F64: return run<double>(params);
        default: return batched_unsupported("gemm_batched variant \"thread_product\" supports F32 and F64 only");
    }
}

}  // namespace
}  // namespace gpk::cuda::batched

namespace gpk::cuda {

// Says before any launch what compute() refuses, by the same rule, here on the call
// as passed: the rule is symmetric in m and n, which a row-major call swaps.
gpk_status gemm_batched_thread_product_takes(gpk_context &, const GemmBatchedCall &args, const char **why_not) {
    *why_not = batched::fits(args.m, args.n, args.k) ? nullptr : "it takes m, n, k <= 8 only";
    return GPK_SUCCESS;
}

gpk_status gemm_batched_thread_product(gpk_context &ctx, const GemmBatchedCall &args) {
    return batched::status_of(ctx, batched::compute(batched::params_of(ctx, args)));
}

}  // namespace gpk::cuda
