// Host gemm: the reference every GPU rung is compared with. Column-major (row-major
// calls arrive swapped). Each element of C accumulates in double, so the F32 reference
// is more accurate than any F32 kernel and the tolerance of a comparison is the
// kernel's error alone. Columns are independent, which is the split over threads
// (parallel.hpp).
//
// Nothing here allocates: an exception cannot leave a loop's thread (it would end the
// process), and the accumulators are a fixed block of rows on each thread's stack, so
// that no size of m can run the host out of memory.
#include "host.hpp"

#include "parallel.hpp"
#include "../scalars.hpp"

namespace gpk::host {
namespace {

// Rows of C accumulated at once in the non-transposed case: 4 KiB of doubles, in L1.
constexpr int64_t kRowBlock = 512;

// Column j of C = alpha * op(A) * op(B) + beta * C, alpha and beta already in the dtype.
template <class T>
void column(const GemmArgs &a, double alpha, double beta, bool product, bool read_c, int64_t j) {
    const T *A = static_cast<const T *>(a.A);
    const T *B = static_cast<const T *>(a.B);
    const int64_t m = a.m, k = a.k;
    T *c = static_cast<T *>(a.C) + j * a.ldc;
    if (!product) {
        // C = beta * C, A and B not read; beta == 0 writes zeros without reading C.
        for (int64_t i = 0; i < m; ++i) c[i] = static_cast<T>(read_c ? beta * static_cast<double>(c[i]) : 0.0);
        return;
    }
    if (!a.transa) {
        // acc += A(i0:i1, p) * op(B)(p, j): unit stride down A's columns.
        for (int64_t i0 = 0; i0 < m; i0 += kRowBlock) {
            const int64_t rows = m - i0 < kRowBlock ? m - i0 : kRowBlock;
            double acc[kRowBlock];
            for (int64_t i = 0; i < rows; ++i) acc[i] = 0.0;
            for (int64_t p = 0; p < k; ++p) {
                const double b = a.transb ? B[j + p * a.ldb] : B[p + j * a.ldb];
                const T *col = A + i0 + p * a.lda;
                for (int64_t i = 0; i < rows; ++i) acc[i] += static_cast<double>(col[i]) * b;
            }
            T *ci = c + i0;
            for (int64_t i = 0; i < rows; ++i) {
                const double ab = alpha * acc[i];
                // beta == 0: C is written, never read, so NaN in C does not leak.
                ci[i] = static_cast<T>(read_c ? ab + beta * static_cast<double>(ci[i]) : ab);
            }
        }
    } else {
        // op(A)(i, :) is column i of A: a dot product of unit stride.
        for (int64_t i = 0; i < m; ++i) {
            const T *row = A + i * a.lda;
            double s = 0.0;
            if (a.transb)
                for (int64_t p = 0; p < k; ++p) s += static_cast<double>(row[p]) * B[j + p * a.ldb];
            else
                for (int64_t p = 0; p < k; ++p) s += static_cast<double>(row[p]) * B[p + j * a.ldb];
            const double ab = alpha * s;
            c[i] = static_cast<T>(read_c ? ab + beta * static_cast<double>(c[i]) : ab);
        }
    }
}

// Every column, spread over the threads when `parallel`.
template <class T>
void gemm_columns(const GemmArgs &a, bool parallel) {
    // alpha and beta as the dtype has them (scalars.hpp): the decisions and the
    // arithmetic both use the converted values.
    const double alpha = in_dtype(a.dtype, a.alpha), beta = in_dtype(a.dtype, a.beta);
    const bool product = gemm_forms_product(a), read_c = gemm_reads_c(a);
    auto one = [&](int64_t j) { column<T>(a, alpha, beta, product, read_c, j); };
    if (parallel)
        parallel_for(a.n, gemm_work(a), one);
    else
        for (int64_t j = 0; j < a.n; ++j) one(j);
}

void gemm_any(const GemmArgs &args, bool parallel) {
    if (is_gemm_ex_class(args.dtype))
        gemm_ex(args, parallel);
    else if (is_16bit(args.dtype))
        gemm_16bit(args, parallel);
    else if (args.dtype == GPK_F32)
        gemm_columns<float>(args, parallel);
    else
        gemm_columns<double>(args, parallel);
}

}  // namespace

int64_t gemm_work(const GemmArgs &a) {
    // m * n * max(k, 1), saturated: the sizes are checked, their product is not.
    int64_t mn = 0, work = 0;
    if (__builtin_mul_overflow(a.m, a.n, &mn) || __builtin_mul_overflow(mn, a.k > 1 ? a.k : 1, &work))
        return INT64_MAX;
    return work;
}

gpk_status gemm(gpk_context &, const GemmArgs &args) {
    gemm_any(args, true);
    return GPK_SUCCESS;
}

void gemm_serial(const GemmArgs &args) { gemm_any(args, false); }

}  // namespace gpk::host
