// Host gemm: the reference every GPU rung is compared with. Column-major (row-major
// calls arrive swapped). Each column of C accumulates in double, so the F32 reference
// is more accurate than any F32 kernel and the tolerance of a comparison is the
// kernel's error alone. Columns are independent, which is the OpenMP split.
#include "host.hpp"

#include "../status.hpp"

#include <new>
#include <vector>

namespace gpk::host {
namespace {

template <class T>
void gemm_columns(const GemmArgs &a) {
    const T *A = static_cast<const T *>(a.A);
    const T *B = static_cast<const T *>(a.B);
    T *C = static_cast<T *>(a.C);
    const int64_t m = a.m, n = a.n, k = a.k;
    // k == 0 or alpha == 0: C = beta * C, A and B are not read (CBLAS).
    const bool scale_only = k == 0 || a.alpha == 0.0;

#if defined(_OPENMP)
#pragma omp parallel
#endif
    {
        std::vector<double> acc(static_cast<size_t>(m));
#if defined(_OPENMP)
#pragma omp for schedule(static)
#endif
        for (int64_t j = 0; j < n; ++j) {
            T *c = C + j * a.ldc;
            if (!scale_only) {
                for (int64_t i = 0; i < m; ++i) acc[i] = 0.0;
                if (!a.transa) {
                    // acc += A(:, p) * op(B)(p, j): unit stride down A's columns.
                    for (int64_t p = 0; p < k; ++p) {
                        const double b = a.transb ? B[j + p * a.ldb] : B[p + j * a.ldb];
                        const T *col = A + p * a.lda;
                        for (int64_t i = 0; i < m; ++i) acc[i] += static_cast<double>(col[i]) * b;
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
                        acc[i] = s;
                    }
                }
            }
            for (int64_t i = 0; i < m; ++i) {
                const double ab = scale_only ? 0.0 : a.alpha * acc[i];
                // beta == 0: C is written, never read, so NaN in C does not leak.
                c[i] = static_cast<T>(a.beta == 0.0 ? ab : ab + a.beta * static_cast<double>(c[i]));
            }
        }
    }
}

}  // namespace

gpk_status gemm(gpk_context &ctx, const GemmArgs &args) {
    if (is_16bit(args.dtype)) return gemm_16bit(ctx, args);
    try {
        if (args.dtype == GPK_F32)
            gemm_columns<float>(args);
        else
            gemm_columns<double>(args);
    } catch (const std::bad_alloc &) {
        return fail(&ctx, GPK_ERROR_OUT_OF_MEMORY, "out of host memory for a gemm accumulator of m = %lld rows",
                    static_cast<long long>(args.m));
    }
    return GPK_SUCCESS;
}

}  // namespace gpk::host
