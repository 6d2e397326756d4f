// Validation mode's comparisons (gpk_set_validation): the variant's result against a
// second, independent one, on host copies of both. Plain C++ (no CUDA), used on whole
// arrays (device-array calls, dispatch.cpp) and chunk by chunk (host arrays, through
// the staging pipeline, staging/pipeline.cpp). gemm and transpose accumulate over the
// pieces they are given and decide once, at the end, by the whole call's rule, so a
// call's verdict and message are the same however it was cut into chunks.
#pragma once

#include "ops.hpp"

#include <cstdint>

namespace gpk::validation {

// The tolerance of a gemm comparison, relative to the largest |C| of the checker's:
// each side's F32/F64 accumulation error, plus, for 16-bit C, each side's rounding of
// the result (2^-11 for F16, 2^-8 for BF16, relative), and in TF32 mode each side's
// rounding of A and B to a 10-bit mantissa (2^-11 relative each, 2^-10 when the
// hardware truncates: a product errs by about 2^-9). The gemm comparisons have always
// measured against the largest |C| rather than sum |a b|, which holds for the random
// and the one-signed data they are made for. gpk_gemm_ex's F16/BF16 with F32 C is F32's;
// FP8 is the contract's 2^-9 per side on sum |a b|, taken as sqrt(k + 2) times the
// largest |C| (sums of k products of random signs grow as sqrt(k), their sum |a b| as
// k), plus each side's rounding of C to its dtype.
double gemm_tolerance(const gpk_context &ctx, const GemmArgs &a);

// gemm: the largest |difference| between the variant's C and the checker's, against
// gemm_tolerance times max |C| of the checker's. A NaN on one side only is an
// infinite difference. The message names the element, the first in column-major
// order among the largest differences.
class GemmCheck {
public:
    // Elements are read in C's dtype (gpk_gemm_ex's C differs from its operands).
    GemmCheck(const gpk_context &ctx, const GemmArgs &a) : dtype_(c_dtype_of(a)), relative_(gemm_tolerance(ctx, a)) {}
    // A tile of C, rows x cols from C(row0, col0): the variant's in `got`, the
    // checker's in `want`, column-major with leading dimensions ld_got and ld_want.
    void add(const void *got, int64_t ld_got, const void *want, int64_t ld_want, int64_t rows, int64_t cols,
             int64_t row0, int64_t col0);
    double tolerance() const;
    bool passed() const { return worst_ <= tolerance(); }
    // GPK_ERROR_VALIDATION with the worst difference, unless it passed.
    gpk_status verdict(gpk_context &ctx, const char *variant, const char *checker) const;

private:
    template <class T>
    void add_typed(const T *got, int64_t ld_got, const T *want, int64_t ld_want, int64_t rows, int64_t cols,
                   int64_t row0, int64_t col0);

    int dtype_;
    double relative_;
    double scale_ = 0, worst_ = 0;
    int64_t row_ = 0, col_ = 0;  // of the worst difference
};

// transpose: exact, every element of B against A, as bits. The message names the first
// difference in row-major order of A.
class TransposeCheck {
public:
    explicit TransposeCheck(const TransposeArgs &a) : es_(a.elem_size) {}
    // A tile: rows x cols of A from A(row0, col0) (leading dimension lda) and its
    // transpose as the variant wrote it, cols x rows (ldb).
    void add(const void *A, int64_t lda, const void *B, int64_t ldb, int64_t rows, int64_t cols, int64_t row0,
             int64_t col0);
    bool passed() const { return !bad_; }
    gpk_status verdict(gpk_context &ctx, const char *variant) const;

private:
    template <class T>
    void add_typed(const T *A, int64_t lda, const T *B, int64_t ldb, int64_t rows, int64_t cols, int64_t row0,
                   int64_t col0);

    size_t es_;
    bool bad_ = false;
    int64_t row_ = 0, col_ = 0;  // of A, at the first difference
};

// reduce: integers, MIN and MAX exactly (two NaNs agree); a floating-point SUM within
// 4 eps (log2(n + 1) + 2) sum |x|, the bound of two summation trees (F16 and BF16 sum
// in F32). `got` and `want`
// hold the results as the call writes them (reduce_result_size bytes).
// Whether the comparison of got and want needs sum |x| (a float SUM that differs):
bool reduce_needs_abs_sum(const ReduceArgs &a, const void *got, const void *want);
// sum |x| over x[0..n), x in host memory.
double reduce_abs_sum(const ReduceArgs &a, const void *x);
// abs_sum: reduce_abs_sum's, read only when reduce_needs_abs_sum.
gpk_status compare_reduce(gpk_context &ctx, const ReduceArgs &a, const void *got, const void *want, double abs_sum,
                          const char *variant, const char *checker);

}  // namespace gpk::validation
