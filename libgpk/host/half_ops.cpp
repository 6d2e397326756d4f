// Host gemm and reduce of the 16-bit dtypes (GPK_F16, GPK_BF16): the reference the
// GPU rungs are compared with. Elements are widened to double (exactly, through
// common/half.hpp), products accumulate in double, alpha and beta are the F32 values
// the contract applies, and each element of C is rounded to the dtype once, from the
// double, to nearest even. The reduce tree is the F32 one of reduce.cpp -- blocks of
// kBlock elements in order, then the block partials pairwise -- so the result depends
// on n alone, whatever the number of threads; the sum accumulates in double and is
// written as a float, as for F32.
#include "host.hpp"

#include "../common/half.hpp"
#include "../status.hpp"

#include <cmath>
#include <cstring>
#include <new>
#include <vector>

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace gpk::host {
namespace {

template <bool kBf16>
double widen(uint16_t bits) {
    return static_cast<double>(half_bits_to_float(bits, kBf16));
}

template <bool kBf16>
void gemm_columns16(const GemmArgs &a) {
    const auto *A = static_cast<const uint16_t *>(a.A);
    const auto *B = static_cast<const uint16_t *>(a.B);
    auto *C = static_cast<uint16_t *>(a.C);
    const int64_t m = a.m, n = a.n, k = a.k;
    // The contract applies alpha and beta in F32: the reference takes the same values.
    const double alpha = static_cast<float>(a.alpha), beta = static_cast<float>(a.beta);
    const bool scale_only = k == 0 || alpha == 0.0;
    // Every thread's accumulator column is allocated here, before the parallel region:
    // an exception must not be thrown inside one (std::bad_alloc reaches the caller).
#if defined(_OPENMP)
    const int threads = omp_get_max_threads();
#else
    const int threads = 1;
#endif
    std::vector<double> columns(static_cast<size_t>(m) * static_cast<size_t>(threads));

#if defined(_OPENMP)
#pragma omp parallel num_threads(threads)
#endif
    {
#if defined(_OPENMP)
        double *acc = columns.data() + static_cast<size_t>(m) * static_cast<size_t>(omp_get_thread_num());
#else
        double *acc = columns.data();
#endif
#if defined(_OPENMP)
#pragma omp for schedule(static)
#endif
        for (int64_t j = 0; j < n; ++j) {
            uint16_t *c = C + j * a.ldc;
            if (!scale_only) {
                for (int64_t i = 0; i < m; ++i) acc[i] = 0.0;
                for (int64_t p = 0; p < k; ++p) {
                    const double b = widen<kBf16>(a.transb ? B[j + p * a.ldb] : B[p + j * a.ldb]);
                    if (!a.transa) {
                        const uint16_t *col = A + p * a.lda;
                        for (int64_t i = 0; i < m; ++i) acc[i] += widen<kBf16>(col[i]) * b;
                    } else {
                        for (int64_t i = 0; i < m; ++i) acc[i] += widen<kBf16>(A[p + i * a.lda]) * b;
                    }
                }
            }
            for (int64_t i = 0; i < m; ++i) {
                const double ab = scale_only ? 0.0 : alpha * acc[i];
                // beta == 0: C is written, never read, so NaN in C does not leak.
                const double v = beta == 0.0 ? ab : ab + beta * widen<kBf16>(c[i]);
                c[i] = double_to_half_bits(v, kBf16);
            }
        }
    }
}

constexpr int64_t kBlock = 4096;  // reduce.cpp's block: the same tree as F32

double combine(int op, double a, double b) {
    if (op == GPK_SUM) return a + b;
    if (std::isnan(a)) return a;
    if (std::isnan(b)) return b;
    return op == GPK_MIN ? (b < a ? b : a) : (b > a ? b : a);
}

template <bool kBf16>
void reduce16(const ReduceArgs &a) {
    const auto *x = static_cast<const uint16_t *>(a.x);
    const int64_t n = a.n;
    const int64_t blocks = (n + kBlock - 1) / kBlock;
    std::vector<double> part(static_cast<size_t>(blocks > 0 ? blocks : 1), 0.0);
#if defined(_OPENMP)
#pragma omp parallel for schedule(static)
#endif
    for (int64_t b = 0; b < blocks; ++b) {
        const int64_t lo = b * kBlock, hi = lo + kBlock < n ? lo + kBlock : n;
        double r = a.op == GPK_SUM ? 0.0 : widen<kBf16>(x[lo]);
        for (int64_t i = a.op == GPK_SUM ? lo : lo + 1; i < hi; ++i) r = combine(a.op, r, widen<kBf16>(x[i]));
        part[b] = r;
    }
    for (int64_t width = 1; width < blocks; width *= 2)
        for (int64_t b = 0; b + width < blocks; b += 2 * width) part[b] = combine(a.op, part[b], part[b + width]);
    const float r = static_cast<float>(part[0]);
    std::memcpy(a.result, &r, sizeof r);
}

}  // namespace

gpk_status gemm_16bit(gpk_context &ctx, const GemmArgs &args) {
    try {
        if (args.dtype == GPK_BF16)
            gemm_columns16<true>(args);
        else
            gemm_columns16<false>(args);
    } catch (const std::bad_alloc &) {
        return fail(&ctx, GPK_ERROR_OUT_OF_MEMORY, "out of host memory for a gemm accumulator of m = %lld rows",
                    static_cast<long long>(args.m));
    }
    return GPK_SUCCESS;
}

gpk_status reduce_16bit(gpk_context &ctx, const ReduceArgs &args) {
    try {
        if (args.dtype == GPK_BF16)
            reduce16<true>(args);
        else
            reduce16<false>(args);
    } catch (const std::bad_alloc &) {
        return fail(&ctx, GPK_ERROR_OUT_OF_MEMORY, "out of host memory for the partial results of n = %lld elements",
                    static_cast<long long>(args.n));
    }
    return GPK_SUCCESS;
}

}  // namespace gpk::host
