// Host gemm and reduce of the 16-bit dtypes (GPK_F16, GPK_BF16): the reference the
// GPU rungs are compared with. Elements are widened to double (exactly, through
// common/half.hpp), products accumulate in double, alpha and beta are the F32 values
// the contract applies, and each element of C is rounded to the dtype once, from the
// double, to nearest even. The reduce tree is the F32 one of reduce.cpp -- blocks of
// kBlock elements in order, then the block partials pairwise -- so the result depends
// on n alone, whatever the number of threads; the sum accumulates in double and is
// written as a float, as for F32.
#include "host.hpp"

#include "parallel.hpp"

#include "../common/half.hpp"
#include "../status.hpp"

#include <cmath>
#include <cstring>
#include <new>
#include <vector>

namespace gpk::host {
namespace {

template <bool kBf16>
double widen(uint16_t bits) {
    return static_cast<double>(half_bits_to_float(bits, kBf16));
}

// Rows of a column of C accumulated at once: gemm.cpp's block, on each thread's stack.
// Nothing is allocated, so no size of m can make a call fail for want of memory, and
// a batch of products needs nothing per product: none can fail after an earlier one
// was written.
constexpr int64_t kRowBlock = 512;

// Column j of C = alpha * op(A) * op(B) + beta * C. Each element's products are
// summed in p order from 0, in double, on either path: the result does not depend on
// the blocking.
template <bool kBf16>
void column16(const GemmArgs &a, double alpha, double beta, bool scale_only, int64_t j) {
    const auto *A = static_cast<const uint16_t *>(a.A);
    const auto *B = static_cast<const uint16_t *>(a.B);
    uint16_t *c = static_cast<uint16_t *>(a.C) + j * a.ldc;
    const int64_t m = a.m, k = a.k;
    // beta == 0: C is written, never read, so NaN in C does not leak.
    auto store = [&](int64_t i, double ab) {
        const double v = beta == 0.0 ? ab : ab + beta * widen<kBf16>(c[i]);
        c[i] = double_to_half_bits(v, kBf16);
    };
    if (!scale_only && a.transa) {
        // op(A)(i, :) is column i of A: a dot product of unit stride.
        for (int64_t i = 0; i < m; ++i) {
            const uint16_t *row = A + i * a.lda;
            double s = 0.0;
            for (int64_t p = 0; p < k; ++p)
                s += widen<kBf16>(row[p]) * widen<kBf16>(a.transb ? B[j + p * a.ldb] : B[p + j * a.ldb]);
            store(i, alpha * s);
        }
        return;
    }
    for (int64_t i0 = 0; i0 < m; i0 += kRowBlock) {
        const int64_t rows = m - i0 < kRowBlock ? m - i0 : kRowBlock;
        double acc[kRowBlock];
        if (!scale_only) {
            for (int64_t i = 0; i < rows; ++i) acc[i] = 0.0;
            for (int64_t p = 0; p < k; ++p) {
                const double b = widen<kBf16>(a.transb ? B[j + p * a.ldb] : B[p + j * a.ldb]);
                const uint16_t *col = A + i0 + p * a.lda;
                for (int64_t i = 0; i < rows; ++i) acc[i] += widen<kBf16>(col[i]) * b;
            }
        }
        for (int64_t i = 0; i < rows; ++i) store(i0 + i, scale_only ? 0.0 : alpha * acc[i]);
    }
}

template <bool kBf16>
void gemm_columns16(const GemmArgs &a, bool parallel) {
    // The contract applies alpha and beta in F32: the reference takes the same values.
    const double alpha = static_cast<float>(a.alpha), beta = static_cast<float>(a.beta);
    const bool scale_only = a.k == 0 || alpha == 0.0;
    auto one = [&](int64_t j) { column16<kBf16>(a, alpha, beta, scale_only, j); };
    if (parallel)
        parallel_for(a.n, gemm_work(a), one);
    else
        for (int64_t j = 0; j < a.n; ++j) one(j);
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
    parallel_for(blocks, n, [&](int64_t b) {
        const int64_t lo = b * kBlock, hi = lo + kBlock < n ? lo + kBlock : n;
        double r = a.op == GPK_SUM ? 0.0 : widen<kBf16>(x[lo]);
        for (int64_t i = a.op == GPK_SUM ? lo : lo + 1; i < hi; ++i) r = combine(a.op, r, widen<kBf16>(x[i]));
        part[b] = r;
    });
    for (int64_t width = 1; width < blocks; width *= 2)
        for (int64_t b = 0; b + width < blocks; b += 2 * width) part[b] = combine(a.op, part[b], part[b + width]);
    const float r = static_cast<float>(part[0]);
    std::memcpy(a.result, &r, sizeof r);
}

}  // namespace

void gemm_16bit(const GemmArgs &args, bool parallel) {
    if (args.dtype == GPK_BF16)
        gemm_columns16<true>(args, parallel);
    else
        gemm_columns16<false>(args, parallel);
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
