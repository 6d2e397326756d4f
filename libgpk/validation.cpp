// Validation mode's comparisons (validation.hpp).
#include "validation.hpp"

#include "common/half.hpp"
#include "context.hpp"
#include "status.hpp"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstring>
#include <limits>

namespace gpk::validation {

// ---- gemm ---------------------------------------------------------------------------

namespace {

// Elements of C as doubles: F16 and BF16 arrive as their bits.
struct F16Bits {
    uint16_t bits;
};
struct BF16Bits {
    uint16_t bits;
};
double as_double(float v) { return v; }
double as_double(double v) { return v; }
double as_double(F16Bits v) { return half_to_float(v.bits); }
double as_double(BF16Bits v) { return bf16_to_float(v.bits); }

}  // namespace

double gemm_tolerance(const gpk_context &ctx, const GemmArgs &a) {
    const double k = static_cast<double>(a.k + 2);
    if (a.dtype == kGemmFp8 || a.dtype == kGemmFp8Blockscaled) {
        const int c = c_dtype_of(a);
        const double round_c = c == GPK_F16 ? 2 * 0x1p-11 : c == GPK_BF16 ? 2 * 0x1p-8 : 0.0;
        return 2 * 0x1p-9 * std::sqrt(k) + 8 * 0x1p-24 * k + round_c;
    }
    switch (a.dtype) {
        case GPK_F64: return 8 * 0x1p-53 * k;
        case GPK_F16: return 8 * 0x1p-24 * k + 2 * 0x1p-11;
        case GPK_BF16: return 8 * 0x1p-24 * k + 2 * 0x1p-8;
        default: return 8 * 0x1p-24 * k + (ctx.math_mode == GPK_MATH_TF32 ? 8 * 0x1p-9 : 0.0);
    }
}

template <class T>
void GemmCheck::add_typed(const T *got, int64_t ld_got, const T *want, int64_t ld_want, int64_t rows, int64_t cols,
                          int64_t row0, int64_t col0) {
    for (int64_t j = 0; j < cols; ++j)
        for (int64_t i = 0; i < rows; ++i) {
            const double g = as_double(got[i + j * ld_got]), w = as_double(want[i + j * ld_want]);
            double d = 0;
            if (std::isnan(g) != std::isnan(w)) {
                d = std::numeric_limits<double>::infinity();
            } else {
                if (std::isnan(g)) continue;
                scale_ = std::max(scale_, std::fabs(w));
                d = g == w ? 0.0 : std::fabs(g - w);
            }
            // Ties go to the first element in column-major order, whatever order the
            // tiles came in.
            const int64_t r = row0 + i, c = col0 + j;
            if (d > worst_ || (d == worst_ && d > 0 && (c < col_ || (c == col_ && r < row_))))
                worst_ = d, row_ = r, col_ = c;
        }
}

void GemmCheck::add(const void *got, int64_t ld_got, const void *want, int64_t ld_want, int64_t rows, int64_t cols,
                    int64_t row0, int64_t col0) {
    switch (dtype_) {
        case GPK_F32:
            return add_typed(static_cast<const float *>(got), ld_got, static_cast<const float *>(want), ld_want, rows,
                             cols, row0, col0);
        case GPK_F64:
            return add_typed(static_cast<const double *>(got), ld_got, static_cast<const double *>(want), ld_want,
                             rows, cols, row0, col0);
        case GPK_F16:
            return add_typed(static_cast<const F16Bits *>(got), ld_got, static_cast<const F16Bits *>(want), ld_want,
                             rows, cols, row0, col0);
        default:
            return add_typed(static_cast<const BF16Bits *>(got), ld_got, static_cast<const BF16Bits *>(want), ld_want,
                             rows, cols, row0, col0);
    }
}

double GemmCheck::tolerance() const { return relative_ * scale_; }

gpk_status GemmCheck::verdict(gpk_context &ctx, const char *variant, const char *checker) const {
    const double tol = tolerance();
    GPK_RETURN_ERROR_IF(!(worst_ <= tol), &ctx, GPK_ERROR_VALIDATION,
                        "gemm variant '%s' differs from '%s': |difference| %.3g at C(%" PRId64 ", %" PRId64
                        ") exceeds tolerance %.3g",
                        variant, checker, worst_, row_, col_, tol);
    return GPK_SUCCESS;
}

// ---- transpose ------------------------------------------------------------------------

template <class T>
void TransposeCheck::add_typed(const T *A, int64_t lda, const T *B, int64_t ldb, int64_t rows, int64_t cols,
                               int64_t row0, int64_t col0) {
    for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j)
            if (B[j + i * ldb] != A[i + j * lda]) {
                const int64_t r = row0 + i, c = col0 + j;
                if (!bad_ || r < row_ || (r == row_ && c < col_)) bad_ = true, row_ = r, col_ = c;
                return;  // the first of this tile in row-major order
            }
}

void TransposeCheck::add(const void *A, int64_t lda, const void *B, int64_t ldb, int64_t rows, int64_t cols,
                         int64_t row0, int64_t col0) {
    // Compared as bits: transposition moves elements and computes nothing.
    if (es_ == 2)
        add_typed(static_cast<const uint16_t *>(A), lda, static_cast<const uint16_t *>(B), ldb, rows, cols, row0, col0);
    else if (es_ == 4)
        add_typed(static_cast<const uint32_t *>(A), lda, static_cast<const uint32_t *>(B), ldb, rows, cols, row0, col0);
    else
        add_typed(static_cast<const uint64_t *>(A), lda, static_cast<const uint64_t *>(B), ldb, rows, cols, row0, col0);
}

gpk_status TransposeCheck::verdict(gpk_context &ctx, const char *variant) const {
    GPK_RETURN_ERROR_IF(bad_, &ctx, GPK_ERROR_VALIDATION,
                        "transpose variant '%s': B(%" PRId64 ", %" PRId64 ") is not A(%" PRId64 ", %" PRId64 ")",
                        variant, col_, row_, row_, col_);
    return GPK_SUCCESS;
}

// ---- reduce ---------------------------------------------------------------------------

namespace {

// One result value as double, or for integer dtypes as int64.
struct Value {
    double f;
    int64_t i;
};

Value read_value(int dtype, const void *p) {
    Value v{0, 0};
    if (dtype == GPK_F32 || is_16bit(dtype)) {  // the result of a 16-bit reduce is a float
        float f;
        std::memcpy(&f, p, 4);
        v.f = f;
    } else if (dtype == GPK_F64) {
        std::memcpy(&v.f, p, 8);
    } else {
        std::memcpy(&v.i, p, 8);
    }
    return v;
}

bool is_float(int dtype) { return dtype == GPK_F32 || dtype == GPK_F64 || is_16bit(dtype); }

bool same(const Value &got, const Value &want) {
    return (std::isnan(got.f) && std::isnan(want.f)) || got.f == want.f;
}

}  // namespace

bool reduce_needs_abs_sum(const ReduceArgs &a, const void *got, const void *want) {
    if (!is_float(a.dtype) || a.op != GPK_SUM) return false;
    const Value g = read_value(a.dtype, got), w = read_value(a.dtype, want);
    return !same(g, w) && std::isfinite(g.f) && std::isfinite(w.f);
}

double reduce_abs_sum(const ReduceArgs &a, const void *x) {
    const size_t es = dtype_size(a.dtype);
    const auto *bytes = static_cast<const unsigned char *>(x);
    double abs_sum = 0;
    for (int64_t i = 0; i < a.n; ++i) {
        const unsigned char *e = bytes + i * es;
        uint16_t bits = 0;
        if (is_16bit(a.dtype)) std::memcpy(&bits, e, sizeof bits);
        abs_sum += std::fabs(a.dtype == GPK_F16    ? half_to_float(bits)
                             : a.dtype == GPK_BF16 ? bf16_to_float(bits)
                                                   : read_value(a.dtype, e).f);
    }
    return abs_sum;
}

gpk_status compare_reduce(gpk_context &ctx, const ReduceArgs &a, const void *got_raw, const void *want_raw,
                          double abs_sum, const char *variant, const char *checker) {
    const Value got = read_value(a.dtype, got_raw), want = read_value(a.dtype, want_raw);
    if (!is_float(a.dtype)) {
        GPK_RETURN_ERROR_IF(got.i != want.i, &ctx, GPK_ERROR_VALIDATION,
                            "reduce variant '%s' gave %" PRId64 ", '%s' gave %" PRId64, variant, got.i, checker,
                            want.i);
        return GPK_SUCCESS;
    }
    double tol = 0;
    if (reduce_needs_abs_sum(a, got_raw, want_raw)) {
        // Two summation trees each err by at most ~eps * depth * sum |x|.
        // F16 and BF16 accumulate in F32.
        const double eps = a.dtype == GPK_F64 ? 0x1p-53 : 0x1p-24;
        tol = 4 * eps * (std::log2(static_cast<double>(a.n) + 1) + 2) * abs_sum;
    }
    GPK_RETURN_ERROR_IF(!same(got, want) && !(std::fabs(got.f - want.f) <= tol), &ctx, GPK_ERROR_VALIDATION,
                        "reduce variant '%s' gave %.17g, '%s' gave %.17g (tolerance %.3g)", variant, got.f, checker,
                        want.f, tol);
    return GPK_SUCCESS;
}

}  // namespace gpk::validation
