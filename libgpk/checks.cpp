#include "checks.hpp"

#include "context.hpp"
#include "matrix_view.hpp"
#include "ops.hpp"
#include "status.hpp"

#include <cinttypes>
#include <cstdint>
#include <cstdio>

namespace gpk {
namespace {

gpk_status check_dtype(gpk_context *ctx, int dtype) {
    GPK_RETURN_ERROR_IF(is_fp8(dtype), ctx, GPK_ERROR_INVALID_ARGUMENT,
                        "dtype (%s) is an operand dtype of gpk_gemm_ex and gpk_gemm_blockscaled only: use GPK_F32 (0), "
                        "GPK_F64 (1), GPK_I32 (2), GPK_I64 (3), GPK_F16 (4) or GPK_BF16 (5)",
                        dtype_name(dtype));
    GPK_RETURN_ERROR_IF(dtype_size(dtype) == 0, ctx, GPK_ERROR_INVALID_ARGUMENT,
                        "dtype (%d) must be GPK_F32 (0), GPK_F64 (1), GPK_I32 (2), GPK_I64 (3), GPK_F16 (4) or "
                        "GPK_BF16 (5)",
                        dtype);
    return GPK_SUCCESS;
}

gpk_status check_layout(gpk_context *ctx, int layout) {
    GPK_RETURN_ERROR_IF(layout != GPK_ROW_MAJOR && layout != GPK_COL_MAJOR, ctx, GPK_ERROR_INVALID_ARGUMENT,
                        "layout (%d) must be GPK_ROW_MAJOR (101) or GPK_COL_MAJOR (102)", layout);
    return GPK_SUCCESS;
}

gpk_status check_trans(gpk_context *ctx, const char *name, int trans) {
    GPK_RETURN_ERROR_IF(trans != GPK_NO_TRANS && trans != GPK_TRANS, ctx, GPK_ERROR_INVALID_ARGUMENT,
                        "%s (%d) must be GPK_NO_TRANS (111) or GPK_TRANS (112)", name, trans);
    return GPK_SUCCESS;
}

gpk_status check_size(gpk_context *ctx, const char *name, int64_t value) {
    GPK_RETURN_ERROR_IF(value < 0, ctx, GPK_ERROR_INVALID_ARGUMENT, "%s (%" PRId64 ") must be >= 0", name,
                        value);
    return GPK_SUCCESS;
}

// ld >= max(1, inner), where `inner_name` says which size `inner` is.
gpk_status check_ld(gpk_context *ctx, const char *ld_name, int64_t ld, const char *inner_name, int64_t inner) {
    const int64_t least = inner > 1 ? inner : 1;
    GPK_RETURN_ERROR_IF(ld < least, ctx, GPK_ERROR_INVALID_ARGUMENT,
                        "%s (%" PRId64 ") must be >= max(1, %s) = %" PRId64, ld_name, ld, inner_name, least);
    return GPK_SUCCESS;
}

// The byte count of a matrix must fit in int64 (and so in size_t and in pointers).
gpk_status check_bytes_of(gpk_context *ctx, const char *name, const MatrixView &s, size_t elem) {
    int64_t elems = 0, bytes = 0;
    const bool overflow = s.inner > 0 && s.outer > 0 &&
                          (__builtin_mul_overflow(s.outer - 1, s.ld, &elems) ||
                           __builtin_add_overflow(elems, s.inner, &elems) ||
                           __builtin_mul_overflow(elems, static_cast<int64_t>(elem), &bytes));
    GPK_RETURN_ERROR_IF(overflow, ctx, GPK_ERROR_INVALID_ARGUMENT,
                        "%s: %" PRId64 " x %" PRId64 " elements with leading dimension %" PRId64
                        " span more than 2^63 bytes",
                        name, s.inner, s.outer, s.ld);
    return GPK_SUCCESS;
}

gpk_status check_bytes(gpk_context *ctx, const char *name, const MatrixView &s, int dtype) {
    return check_bytes_of(ctx, name, s, dtype_size(dtype));
}

gpk_status check_pointer(gpk_context *ctx, const char *name, const void *p, bool needed) {
    GPK_RETURN_ERROR_IF(needed && p == nullptr, ctx, GPK_ERROR_INVALID_ARGUMENT,
                        "%s is NULL but holds elements that are accessed", name);
    return GPK_SUCCESS;
}

// The bytes of a matrix: check_bytes has made sure they fit in int64.
uintptr_t extent(const MatrixView &s, size_t elem) { return static_cast<uintptr_t>(s.span()) * elem; }

// An array whose last byte lies past the end of the address space is no memory at all;
// computing its end would wrap, so the question is asked without computing it.
// `what` says what the bytes are when they are more than one array's ("" otherwise).
gpk_status check_extent(gpk_context *ctx, const char *name, const void *p, const MatrixView &s, size_t elem,
                        const char *what = "") {
    const auto lo = reinterpret_cast<uintptr_t>(p);
    const uintptr_t bytes = extent(s, elem);
    GPK_RETURN_ERROR_IF(bytes > 0 && bytes - 1 > UINTPTR_MAX - lo, ctx, GPK_ERROR_INVALID_ARGUMENT,
                        "%s (%p) with %" PRIuPTR " bytes%s runs past the end of the address space", name, p, bytes,
                        what);
    return GPK_SUCCESS;
}

// Whether [a, a + bytes_a) and [b, b + bytes_b) share a byte. Only differences of
// addresses are formed, never an end address, so that arrays reaching the top of the
// address space cannot wrap around and hide an overlap.
bool overlap(const void *a, const MatrixView &sa, const void *b, const MatrixView &sb, size_t elem, size_t elem_b = 0) {
    const auto lo_a = reinterpret_cast<uintptr_t>(a), lo_b = reinterpret_cast<uintptr_t>(b);
    const uintptr_t bytes_a = extent(sa, elem), bytes_b = extent(sb, elem_b != 0 ? elem_b : elem);
    if (bytes_a == 0 || bytes_b == 0) return false;
    return lo_a <= lo_b ? lo_b - lo_a < bytes_a : lo_a - lo_b < bytes_b;
}

// How op(A), op(B) and C of one product lie in memory, by the CBLAS rules: which of
// their sizes is contiguous depends on the layout and the transposition.
struct GemmViews {
    MatrixView a, b, c;
    bool a_inner_m, b_inner_k;
};

GemmViews gemm_views(int layout, int transa, int transb, int64_t m, int64_t n, int64_t k, int64_t lda,
                     int64_t ldb, int64_t ldc) {
    const bool col = layout == GPK_COL_MAJOR;
    const bool ta = transa == GPK_TRANS, tb = transb == GPK_TRANS;
    const bool a_inner_m = col != ta, b_inner_k = col != tb;
    return GemmViews{MatrixView{a_inner_m ? m : k, a_inner_m ? k : m, lda},
                     MatrixView{b_inner_k ? k : n, b_inner_k ? n : k, ldb}, MatrixView{col ? m : n, col ? n : m, ldc},
                     a_inner_m, b_inner_k};
}

// gpk_gemm's checks after its dtype and before its pointers: layout, transposes, sizes,
// leading dimensions and the bytes of one matrix, each operand in its element size.
gpk_status check_gemm_geometry(gpk_context *ctx, int layout, int transa, int transb, int64_t m, int64_t n, int64_t k,
                               int64_t lda, int64_t ldb, int64_t ldc, size_t esa, size_t esb, size_t esc,
                               GemmViews *s) {
    GPK_FORWARD_IF_ERROR(check_layout(ctx, layout));
    GPK_FORWARD_IF_ERROR(check_trans(ctx, "transa", transa));
    GPK_FORWARD_IF_ERROR(check_trans(ctx, "transb", transb));
    GPK_FORWARD_IF_ERROR(check_size(ctx, "m", m));
    GPK_FORWARD_IF_ERROR(check_size(ctx, "n", n));
    GPK_FORWARD_IF_ERROR(check_size(ctx, "k", k));
    *s = gemm_views(layout, transa, transb, m, n, k, lda, ldb, ldc);
    const bool col = layout == GPK_COL_MAJOR;
    GPK_FORWARD_IF_ERROR(check_ld(ctx, "lda", lda, s->a_inner_m ? "m" : "k", s->a.inner));
    GPK_FORWARD_IF_ERROR(check_ld(ctx, "ldb", ldb, s->b_inner_k ? "k" : "n", s->b.inner));
    GPK_FORWARD_IF_ERROR(check_ld(ctx, "ldc", ldc, col ? "m" : "n", s->c.inner));
    GPK_FORWARD_IF_ERROR(check_bytes_of(ctx, "A", s->a, esa));
    GPK_FORWARD_IF_ERROR(check_bytes_of(ctx, "B", s->b, esb));
    GPK_FORWARD_IF_ERROR(check_bytes_of(ctx, "C", s->c, esc));
    return GPK_SUCCESS;
}

// Everything gpk_gemm checks before its pointers: dtype, then the geometry.
gpk_status check_gemm_shape(gpk_context *ctx, const char *fn, int dtype, int layout, int transa, int transb,
                            int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb, int64_t ldc, GemmViews *s) {
    GPK_FORWARD_IF_ERROR(check_dtype(ctx, dtype));
    GPK_RETURN_ERROR_IF(dtype == GPK_I32 || dtype == GPK_I64, ctx, GPK_ERROR_NOT_SUPPORTED,
                        "dtype (%s) is not supported by %s: use GPK_F32, GPK_F64, GPK_F16 or GPK_BF16",
                        dtype_name(dtype), fn);
    const size_t es = dtype_size(dtype);
    return check_gemm_geometry(ctx, layout, transa, transb, m, n, k, lda, ldb, ldc, es, es, es, s);
}

// gpk_gemm's pointer checks: A and B when read, C when written, each within the address
// space in its element size, and C aliasing neither A nor B.
gpk_status check_gemm_pointers(gpk_context *ctx, int64_t m, int64_t n, int64_t k, const void *A, const void *B,
                               const void *C, const GemmViews &s, size_t esa, size_t esb, size_t esc) {
    const bool c_used = m > 0 && n > 0, ab_used = c_used && k > 0;
    GPK_FORWARD_IF_ERROR(check_pointer(ctx, "A", A, ab_used));
    GPK_FORWARD_IF_ERROR(check_pointer(ctx, "B", B, ab_used));
    GPK_FORWARD_IF_ERROR(check_pointer(ctx, "C", C, c_used));
    if (ab_used) {
        GPK_FORWARD_IF_ERROR(check_extent(ctx, "A", A, s.a, esa));
        GPK_FORWARD_IF_ERROR(check_extent(ctx, "B", B, s.b, esb));
    }
    if (c_used) GPK_FORWARD_IF_ERROR(check_extent(ctx, "C", C, s.c, esc));
    if (ab_used) {
        GPK_RETURN_ERROR_IF(overlap(A, s.a, C, s.c, esa, esc), ctx, GPK_ERROR_INVALID_ARGUMENT,
                            "C overlaps A: the output must not alias an input");
        GPK_RETURN_ERROR_IF(overlap(B, s.b, C, s.c, esb, esc), ctx, GPK_ERROR_INVALID_ARGUMENT,
                            "C overlaps B: the output must not alias an input");
    }
    return GPK_SUCCESS;
}

// The elements from the first of matrix 0 to one past the last of matrix
// batch_count - 1, as one line (MatrixView{span, 1, span}); false when that, or where
// the last matrix starts, in bytes, does not fit in int64. The start is bounded even
// when the matrices hold no element (k == 0 for A and B, m or n == 0 for C): the
// contract's "batch_count times a stride overflowing int64 bytes" holds whatever the
// sizes, and every launcher may compute each product's offsets. Matrices with no
// element span nothing.
bool batch_span(const MatrixView &one, int64_t stride, int64_t batch_count, size_t elem, MatrixView *whole) {
    const auto es = static_cast<int64_t>(elem);
    int64_t span = one.span(), offset = 0, bytes = 0;
    if (batch_count > 1 && (__builtin_mul_overflow(batch_count - 1, stride, &offset) ||
                            __builtin_mul_overflow(offset, es, &bytes)))
        return false;
    if (span > 0 && __builtin_add_overflow(offset, span, &span)) return false;
    if (__builtin_mul_overflow(span, es, &bytes)) return false;
    *whole = MatrixView{span, span > 0 ? 1 : 0, span};
    return true;
}

}  // namespace

gpk_status check_gemm(gpk_context *ctx, int dtype, int layout, int transa, int transb, int64_t m, int64_t n,
                      int64_t k, const void *A, int64_t lda, const void *B, int64_t ldb, const void *C,
                      int64_t ldc) {
    GemmViews s{};
    GPK_FORWARD_IF_ERROR(check_gemm_shape(ctx, "gpk_gemm", dtype, layout, transa, transb, m, n, k, lda, ldb, ldc, &s));
    const size_t elem = dtype_size(dtype);
    return check_gemm_pointers(ctx, m, n, k, A, B, C, s, elem, elem, elem);
}

namespace {

// Whether `dtype` is one an operand of gpk_gemm_ex may have at all.
bool gemm_ex_operand(int dtype) { return dtype_size(dtype) != 0 && dtype != GPK_I32 && dtype != GPK_I64; }

gpk_status check_operand_dtype(gpk_context *ctx, const char *name, int dtype) {
    GPK_RETURN_ERROR_IF(!gemm_ex_operand(dtype), ctx, GPK_ERROR_INVALID_ARGUMENT,
                        "%s (%d) must be GPK_F32 (0), GPK_F64 (1), GPK_F16 (4), GPK_BF16 (5), GPK_F8E4M3 (6) or "
                        "GPK_F8E5M2 (7)",
                        name, dtype);
    return GPK_SUCCESS;
}

// The contract's combinations other than all three equal (gpk_gemm's call): FP8 A and
// B (any mix) with C F32, F16 or BF16; A and B both F16 or both BF16 with C F32. The
// message names the first dtype that breaks the rule, and the rule.
gpk_status check_gemm_ex_dtypes(gpk_context *ctx, const char *fn, int a, int b, int c, bool blockscaled, int *cls) {
    GPK_FORWARD_IF_ERROR(check_operand_dtype(ctx, "a_dtype", a));
    GPK_FORWARD_IF_ERROR(check_operand_dtype(ctx, "b_dtype", b));
    GPK_FORWARD_IF_ERROR(check_operand_dtype(ctx, "c_dtype", c));
    if (blockscaled || is_fp8(a) || is_fp8(b)) {
        const char *why = blockscaled ? "%s multiplies FP8 operands only" : "%s multiplies an FP8 operand only by another";
        char rule[96];
        std::snprintf(rule, sizeof rule, why, fn);
        GPK_RETURN_ERROR_IF(!is_fp8(a), ctx, GPK_ERROR_INVALID_ARGUMENT,
                            "a_dtype (%s) must be GPK_F8E4M3 or GPK_F8E5M2 with b_dtype %s: %s", dtype_name(a),
                            dtype_name(b), rule);
        GPK_RETURN_ERROR_IF(!is_fp8(b), ctx, GPK_ERROR_INVALID_ARGUMENT,
                            "b_dtype (%s) must be GPK_F8E4M3 or GPK_F8E5M2 with a_dtype %s: %s", dtype_name(b),
                            dtype_name(a), rule);
        GPK_RETURN_ERROR_IF(c != GPK_F32 && !is_16bit(c), ctx, GPK_ERROR_INVALID_ARGUMENT,
                            "c_dtype (%s) must be GPK_F32, GPK_F16 or GPK_BF16 with FP8 A and B (a_dtype %s, b_dtype "
                            "%s): FP8 is an input dtype only",
                            dtype_name(c), dtype_name(a), dtype_name(b));
        *cls = blockscaled ? kGemmFp8Blockscaled : kGemmFp8;
        return GPK_SUCCESS;
    }
    GPK_RETURN_ERROR_IF(a != b, ctx, GPK_ERROR_INVALID_ARGUMENT,
                        "b_dtype (%s) must equal a_dtype (%s): %s mixes only FP8 operands, or takes F16 or BF16 A "
                        "and B of one dtype with F32 C",
                        dtype_name(b), dtype_name(a), fn);
    GPK_RETURN_ERROR_IF(!is_16bit(a) || c != GPK_F32, ctx, GPK_ERROR_INVALID_ARGUMENT,
                        "c_dtype (%s) must be %s with A and B %s: %s takes all three dtypes equal (gpk_gemm), F16 "
                        "or BF16 A and B with F32 C, or FP8 A and B with F32, F16 or BF16 C",
                        dtype_name(c), is_16bit(a) ? "GPK_F32 or a_dtype" : "a_dtype", dtype_name(a), fn);
    *cls = kGemmHalfF32;
    return GPK_SUCCESS;
}

// One scale array of gpk_gemm_blockscaled, rows x kb floats. The contract makes a NULL
// scale pointer invalid whatever the sizes (unlike A and B, which may be NULL where they
// are not read); the extent and overlap checks apply where the scales are read.
gpk_status check_scales(gpk_context *ctx, const char *name, const float *p, int64_t rows, const char *rows_text,
                        int64_t kb, const void *C, const MatrixView &sc, size_t esc, bool used) {
    GPK_RETURN_ERROR_IF(p == nullptr, ctx, GPK_ERROR_INVALID_ARGUMENT,
                        "%s is NULL: gpk_gemm_blockscaled needs %s x ceil(k / 128) = %" PRId64 " x %" PRId64
                        " scales",
                        name, rows_text, rows, kb);
    if (!used) return GPK_SUCCESS;
    const MatrixView s{rows, kb, rows};
    GPK_FORWARD_IF_ERROR(check_bytes_of(ctx, name, s, sizeof(float)));
    GPK_FORWARD_IF_ERROR(check_extent(ctx, name, p, s, sizeof(float)));
    GPK_RETURN_ERROR_IF(overlap(p, s, C, sc, sizeof(float), esc), ctx, GPK_ERROR_INVALID_ARGUMENT,
                        "C overlaps %s: the output must not alias an input", name);
    return GPK_SUCCESS;
}

}  // namespace

gpk_status check_gemm_ex(gpk_context *ctx, const char *fn, int layout, int transa, int transb, int64_t m, int64_t n,
                         int64_t k, int a_dtype, const void *A, int64_t lda, int b_dtype, const void *B, int64_t ldb,
                         int c_dtype, const void *C, int64_t ldc, bool blockscaled, const float *scale_a,
                         const float *scale_b, int *cls) {
    GPK_FORWARD_IF_ERROR(check_gemm_ex_dtypes(ctx, fn, a_dtype, b_dtype, c_dtype, blockscaled, cls));
    const size_t esa = dtype_size(a_dtype), esb = dtype_size(b_dtype), esc = dtype_size(c_dtype);
    GemmViews s{};
    GPK_FORWARD_IF_ERROR(check_gemm_geometry(ctx, layout, transa, transb, m, n, k, lda, ldb, ldc, esa, esb, esc, &s));
    GPK_FORWARD_IF_ERROR(check_gemm_pointers(ctx, m, n, k, A, B, C, s, esa, esb, esc));
    if (!blockscaled) return GPK_SUCCESS;
    // ceil(k / 128) without overflow; the scales are read when A and B are.
    const int64_t kb = k / 128 + (k % 128 != 0), nb = n / 128 + (n % 128 != 0);
    const bool used = m > 0 && n > 0 && k > 0;
    GPK_FORWARD_IF_ERROR(check_scales(ctx, "scale_a", scale_a, m, "m", kb, C, s.c, esc, used));
    GPK_FORWARD_IF_ERROR(check_scales(ctx, "scale_b", scale_b, nb, "ceil(n / 128)", kb, C, s.c, esc, used));
    return GPK_SUCCESS;
}

gpk_status check_gemm_strided_batched(gpk_context *ctx, int dtype, int layout, int transa, int transb, int64_t m,
                                      int64_t n, int64_t k, const void *A, int64_t lda, int64_t stride_a,
                                      const void *B, int64_t ldb, int64_t stride_b, const void *C, int64_t ldc,
                                      int64_t stride_c, int64_t batch_count) {
    GemmViews s{};
    GPK_FORWARD_IF_ERROR(
        check_gemm_shape(ctx, "gpk_gemm_strided_batched", dtype, layout, transa, transb, m, n, k, lda, ldb, ldc, &s));
    GPK_FORWARD_IF_ERROR(check_size(ctx, "stride_a", stride_a));
    GPK_FORWARD_IF_ERROR(check_size(ctx, "stride_b", stride_b));
    GPK_FORWARD_IF_ERROR(check_size(ctx, "stride_c", stride_c));
    GPK_FORWARD_IF_ERROR(check_size(ctx, "batch_count", batch_count));
    // C matrices written by different products must not share an element: every
    // product would race for it (and the result would depend on the rung). A or B
    // may be shared (stride 0) since they are only read.
    const int64_t span_c = s.c.span();
    GPK_RETURN_ERROR_IF(batch_count > 1 && span_c > 0 && stride_c < span_c, ctx, GPK_ERROR_INVALID_ARGUMENT,
                        "stride_c (%" PRId64 ") must be >= %" PRId64
                        ", the span of one C matrix (%" PRId64 " x %" PRId64 " elements, ldc %" PRId64
                        "), when batch_count (%" PRId64 ") > 1: the C matrices must not overlap one another",
                        stride_c, span_c, s.c.outer, s.c.inner, ldc, batch_count);
    const size_t elem = dtype_size(dtype);
    MatrixView wa{}, wb{}, wc{};
    GPK_RETURN_ERROR_IF(!batch_span(s.a, stride_a, batch_count, elem, &wa), ctx, GPK_ERROR_INVALID_ARGUMENT,
                        "stride_a (%" PRId64 ") times batch_count (%" PRId64
                        "): the A matrices would reach beyond 2^63 bytes",
                        stride_a, batch_count);
    GPK_RETURN_ERROR_IF(!batch_span(s.b, stride_b, batch_count, elem, &wb), ctx, GPK_ERROR_INVALID_ARGUMENT,
                        "stride_b (%" PRId64 ") times batch_count (%" PRId64
                        "): the B matrices would reach beyond 2^63 bytes",
                        stride_b, batch_count);
    GPK_RETURN_ERROR_IF(!batch_span(s.c, stride_c, batch_count, elem, &wc), ctx, GPK_ERROR_INVALID_ARGUMENT,
                        "stride_c (%" PRId64 ") times batch_count (%" PRId64
                        "): the C matrices would reach beyond 2^63 bytes",
                        stride_c, batch_count);

    const bool c_used = m > 0 && n > 0 && batch_count > 0, ab_used = c_used && k > 0;
    GPK_FORWARD_IF_ERROR(check_pointer(ctx, "A", A, ab_used));
    GPK_FORWARD_IF_ERROR(check_pointer(ctx, "B", B, ab_used));
    GPK_FORWARD_IF_ERROR(check_pointer(ctx, "C", C, c_used));
    // gpk_gemm's address-space rule, for each operand's whole batch: matrix 0 may fit
    // where the last one would run past the end.
    constexpr const char *kBatch = " (its batch of matrices, strides included)";
    if (ab_used) {
        GPK_FORWARD_IF_ERROR(check_extent(ctx, "A", A, wa, elem, kBatch));
        GPK_FORWARD_IF_ERROR(check_extent(ctx, "B", B, wb, elem, kBatch));
    }
    if (c_used) GPK_FORWARD_IF_ERROR(check_extent(ctx, "C", C, wc, elem, kBatch));
    if (ab_used) {
        // The whole spans, as the contract says: a C matrix lying in the padding
        // between two A matrices is refused too, which keeps the rule simple and lets
        // the staging pipeline copy an operand's batch as one range.
        GPK_RETURN_ERROR_IF(overlap(A, wa, C, wc, elem), ctx, GPK_ERROR_INVALID_ARGUMENT,
                            "C overlaps A (the spans of the batch's matrices, strides %" PRId64 " and %" PRId64
                            "): the output must not alias an input",
                            stride_c, stride_a);
        GPK_RETURN_ERROR_IF(overlap(B, wb, C, wc, elem), ctx, GPK_ERROR_INVALID_ARGUMENT,
                            "C overlaps B (the spans of the batch's matrices, strides %" PRId64 " and %" PRId64
                            "): the output must not alias an input",
                            stride_c, stride_b);
    }
    return GPK_SUCCESS;
}

gpk_status check_reduce(gpk_context *ctx, int dtype, int op, const void *x, int64_t n, const void *result) {
    GPK_FORWARD_IF_ERROR(check_dtype(ctx, dtype));
    GPK_RETURN_ERROR_IF(op != GPK_SUM && op != GPK_MIN && op != GPK_MAX, ctx, GPK_ERROR_INVALID_ARGUMENT,
                        "op (%d) must be GPK_SUM (0), GPK_MIN (1) or GPK_MAX (2)", op);
    GPK_FORWARD_IF_ERROR(check_size(ctx, "n", n));
    GPK_RETURN_ERROR_IF(n == 0 && op != GPK_SUM, ctx, GPK_ERROR_INVALID_ARGUMENT,
                        "n (0) must be >= 1 for GPK_%s: the %s of no elements is undefined",
                        op == GPK_MIN ? "MIN" : "MAX", op == GPK_MIN ? "minimum" : "maximum");
    GPK_FORWARD_IF_ERROR(check_bytes(ctx, "x", MatrixView::packed(n, 1), dtype));
    GPK_FORWARD_IF_ERROR(check_pointer(ctx, "x", x, n > 0));
    if (n > 0) GPK_FORWARD_IF_ERROR(check_extent(ctx, "x", x, MatrixView::packed(n, 1), dtype_size(dtype)));
    GPK_RETURN_ERROR_IF(result == nullptr, ctx, GPK_ERROR_INVALID_ARGUMENT, "result is NULL");
    return GPK_SUCCESS;
}

gpk_status check_transpose(gpk_context *ctx, int dtype, int layout, int64_t rows, int64_t cols, const void *A,
                           int64_t lda, const void *B, int64_t ldb) {
    GPK_FORWARD_IF_ERROR(check_dtype(ctx, dtype));
    GPK_FORWARD_IF_ERROR(check_layout(ctx, layout));
    GPK_FORWARD_IF_ERROR(check_size(ctx, "rows", rows));
    GPK_FORWARD_IF_ERROR(check_size(ctx, "cols", cols));
    const bool col = layout == GPK_COL_MAJOR;
    const MatrixView sa{col ? rows : cols, col ? cols : rows, lda};
    const MatrixView sb{col ? cols : rows, col ? rows : cols, ldb};
    GPK_FORWARD_IF_ERROR(check_ld(ctx, "lda", lda, col ? "rows" : "cols", sa.inner));
    GPK_FORWARD_IF_ERROR(check_ld(ctx, "ldb", ldb, col ? "cols" : "rows", sb.inner));
    GPK_FORWARD_IF_ERROR(check_bytes(ctx, "A", sa, dtype));
    GPK_FORWARD_IF_ERROR(check_bytes(ctx, "B", sb, dtype));
    const bool used = rows > 0 && cols > 0;
    GPK_FORWARD_IF_ERROR(check_pointer(ctx, "A", A, used));
    GPK_FORWARD_IF_ERROR(check_pointer(ctx, "B", B, used));
    if (used) {
        GPK_FORWARD_IF_ERROR(check_extent(ctx, "A", A, sa, dtype_size(dtype)));
        GPK_FORWARD_IF_ERROR(check_extent(ctx, "B", B, sb, dtype_size(dtype)));
    }
    GPK_RETURN_ERROR_IF(used && overlap(A, sa, B, sb, dtype_size(dtype)), ctx, GPK_ERROR_INVALID_ARGUMENT,
                        "B overlaps A: gpk_transpose is out of place");
    return GPK_SUCCESS;
}

gpk_status check_pi(gpk_context *ctx, uint64_t samples, const void *result) {
    constexpr uint64_t kMaxSamples = uint64_t{1} << 63;
    GPK_RETURN_ERROR_IF(samples == 0, ctx, GPK_ERROR_INVALID_ARGUMENT, "samples (0) must be >= 1");
    GPK_RETURN_ERROR_IF(samples > kMaxSamples, ctx, GPK_ERROR_INVALID_ARGUMENT,
                        "samples (%" PRIu64 ") must be <= 2^63", samples);
    GPK_RETURN_ERROR_IF(result == nullptr, ctx, GPK_ERROR_INVALID_ARGUMENT, "result is NULL");
    return GPK_SUCCESS;
}

gpk_status check_pi_range(gpk_context *ctx, uint64_t first_sample, uint64_t count, const void *result) {
    // The end of the range, first_sample + count, is an index every launcher computes:
    // it must not wrap.
    GPK_RETURN_ERROR_IF(count > UINT64_MAX - first_sample, ctx, GPK_ERROR_INVALID_ARGUMENT,
                        "count (%" PRIu64 ") must be <= 2^64 - 1 - first_sample (%" PRIu64
                        "): the range must end within 64-bit sample indices",
                        count, first_sample);
    GPK_RETURN_ERROR_IF(result == nullptr, ctx, GPK_ERROR_INVALID_ARGUMENT, "result is NULL");
    return GPK_SUCCESS;
}

}  // namespace gpk
