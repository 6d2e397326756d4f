// Host strided batched gemm: the reference the batched GPU rungs are compared with.
// Each product is computed as the host gemm computes one (every element of C
// accumulated in double, so the F32 reference is more accurate than any F32 kernel),
// CBLAS semantics included: k == 0 or alpha == 0 reads neither A nor B, beta == 0
// writes C without reading it. Products are independent, which is the OpenMP split:
// many small products parallelise over the batch where one product alone would not.
// Each thread's accumulator is allocated before the parallel region (an exception
// thrown inside one cannot be caught outside it), so running out of memory is a
// status, never a crash.
#include "gemm_batched.hpp"

#include "host.hpp"

#include "../scalars.hpp"
#include "../status.hpp"

#include <new>
#include <stdexcept>
#include <vector>

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace gpk::host {
namespace {

// C = alpha * op(A) * op(B) + beta * C for one product, column-major; acc holds m
// doubles.
template <class T>
void product(const GemmArgs &a, const T *A, const T *B, T *C, double *acc) {
    const int64_t m = a.m, n = a.n, k = a.k;
    // alpha and beta as the dtype has them (scalars.hpp): the decisions and the
    // arithmetic use the converted values, as the single gemm's do.
    const double alpha = in_dtype(a.dtype, a.alpha), beta = in_dtype(a.dtype, a.beta);
    const bool scale_only = k == 0 || alpha == 0.0;
    for (int64_t j = 0; j < n; ++j) {
        T *c = C + j * a.ldc;
        if (!scale_only) {
            for (int64_t i = 0; i < m; ++i) acc[i] = 0.0;
            if (!a.transa) {
                for (int64_t p = 0; p < k; ++p) {
                    const double b = a.transb ? B[j + p * a.ldb] : B[p + j * a.ldb];
                    const T *col = A + p * a.lda;
                    for (int64_t i = 0; i < m; ++i) acc[i] += static_cast<double>(col[i]) * b;
                }
            } else {
                for (int64_t i = 0; i < m; ++i) {
                    const T *row = A + i * a.lda;
                    double s = 0.0;
                    if (a.transb)
                        for (int64_t p = 0; p < k; ++p) s += static_cast<double>(row[p]) * B[j + p * a.ldb];
                    else
                        for (int64_t p = 0; p < k; ++p) s += static_cast<double>(row[p]) * B[p + j * a.ldb];
                    acc[i] = s;
                }
            }
        }
        for (int64_t i = 0; i < m; ++i) {
            const double ab = scale_only ? 0.0 : alpha * acc[i];
            // beta == 0: C is written, never read, so NaN in C does not leak.
            c[i] = static_cast<T>(beta == 0.0 ? ab : ab + beta * static_cast<double>(c[i]));
        }
    }
}

template <class T>
void batched(const GemmBatchedArgs &args, std::vector<double> &acc, int threads) {
    const GemmArgs &a = args.gemm;
    const T *A = static_cast<const T *>(a.A);
    const T *B = static_cast<const T *>(a.B);
    T *C = static_cast<T *>(a.C);
    const int64_t m = a.m;
#if defined(_OPENMP)
#pragma omp parallel for schedule(static) num_threads(threads)
#endif
    for (int64_t b = 0; b < args.batch_count; ++b) {
#if defined(_OPENMP)
        double *mine = acc.data() + static_cast<size_t>(omp_get_thread_num()) * static_cast<size_t>(m);
#else
        double *mine = acc.data();
#endif
        product<T>(a, A + b * args.stride_a, B + b * args.stride_b, C + b * args.stride_c, mine);
    }
    (void)threads;
}

}  // namespace

gpk_status gemm_strided_batched(gpk_context &ctx, const GemmBatchedArgs &args) {
    const GemmArgs &a = args.gemm;
    if (args.batch_count == 0 || a.m == 0 || a.n == 0) return GPK_SUCCESS;
    int threads = 1;
#if defined(_OPENMP)
    threads = omp_get_max_threads();
    if (static_cast<int64_t>(threads) > args.batch_count) threads = static_cast<int>(args.batch_count);
    if (threads < 1) threads = 1;
#endif
    std::vector<double> acc;
    try {
        acc.resize(static_cast<size_t>(threads) * static_cast<size_t>(a.m));
    } catch (const std::bad_alloc &) {
        return fail(&ctx, GPK_ERROR_OUT_OF_MEMORY,
                    "out of host memory for batched gemm accumulators of m = %lld rows on %d threads",
                    static_cast<long long>(a.m), threads);
    } catch (const std::length_error &) {
        return fail(&ctx, GPK_ERROR_OUT_OF_MEMORY,
                    "out of host memory for batched gemm accumulators of m = %lld rows on %d threads",
                    static_cast<long long>(a.m), threads);
    }
    if (is_16bit(a.dtype)) {
        // F16 and BF16: each product is the single gemm's 16-bit reference (F32
        // accumulation, alpha and beta in F32, one rounding of each element of C).
        const size_t es = dtype_size(a.dtype);
        for (int64_t b = 0; b < args.batch_count; ++b) {
            GemmArgs one = a;
            one.A = static_cast<const unsigned char *>(a.A) + static_cast<size_t>(b * args.stride_a) * es;
            one.B = static_cast<const unsigned char *>(a.B) + static_cast<size_t>(b * args.stride_b) * es;
            one.C = static_cast<unsigned char *>(a.C) + static_cast<size_t>(b * args.stride_c) * es;
            GPK_FORWARD_IF_ERROR(gemm_16bit(ctx, one));
        }
        return GPK_SUCCESS;
    }
    if (a.dtype == GPK_F32)
        batched<float>(args, acc, threads);
    else
        batched<double>(args, acc, threads);
    return GPK_SUCCESS;
}

gpk_status gemm_batched(gpk_context &ctx, const GemmBatchedCall &c) {
    const bool ta = c.transa == GPK_TRANS, tb = c.transb == GPK_TRANS;
    GemmBatchedArgs args{GemmArgs{c.dtype, ta, tb, c.m, c.n, c.k, c.alpha, c.A, c.lda, c.B, c.ldb, c.beta, c.C, c.ldc},
                         c.stride_a, c.stride_b, c.stride_c, c.batch_count};
    if (c.layout == GPK_ROW_MAJOR) {
        // Row-major C_i is column-major C_i^T = op(B_i)^T op(A_i)^T: the operands swap,
        // each with its leading dimension, stride and transpose.
        args = GemmBatchedArgs{GemmArgs{c.dtype, tb, ta, c.n, c.m, c.k, c.alpha, c.B, c.ldb, c.A, c.lda, c.beta, c.C,
                                        c.ldc},
                               c.stride_b, c.stride_a, c.stride_c, c.batch_count};
    }
    return gemm_strided_batched(ctx, args);
}

}  // namespace gpk::host
