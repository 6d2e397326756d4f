// The arguments every backend's launchers receive, after api.cpp has checked them
// and normalized them to column-major. Pointers are in the backend's memory (device
// memory for the CUDA backend, host memory for the host backend).
#pragma once

#include "gpk/gpk.h"

#include <cstddef>
#include <cstdint>

namespace gpk {

// The classes of a gpk_gemm_ex / gpk_gemm_blockscaled call whose three dtypes are not
// all equal (all equal is gpk_gemm's call, whose class is that dtype). GemmArgs::dtype
// holds the class: a rung's dtypes column (cuda/ladders.hpp) and the tuning tables
// key on it, so a rung that does not list a class never sees its calls.
enum : int {
    kGemmFp8 = 16,             // A, B each GPK_F8E4M3 or GPK_F8E5M2; C F32, F16 or BF16; per-tensor
    kGemmFp8Blockscaled = 17,  // the same with block scales (scale_a, scale_b below)
    kGemmHalfF32 = 18,         // A and B both F16 or both BF16, C F32
};

// C = alpha * op(A) * op(B) + beta * C, column-major. Row-major calls arrive here
// already swapped (C^T = op(B)^T op(A)^T), so no launcher deals with layouts.
// m, n > 0 (quick returns never reach a launcher); k may be 0.
//
// What a rung receives for a gpk_gemm_ex / gpk_gemm_blockscaled call: the same
// normalised column-major problem, `dtype` its class above, and each operand's own
// dtype in a_dtype, b_dtype, c_dtype (after the row-major swap: a_dtype is the
// normalised A's, which is the caller's B for a row-major call). Leading dimensions
// and pointers are in elements of each operand's own dtype, with no alignment
// promised. alpha and beta are applied in F32 (a per-tensor FP8 scale is in alpha);
// beta == 0 (as a float): C is not read; k == 0 or alpha == 0 (as a float): C = beta C,
// A and B not read (the reference rung runs those). FP8 products are exact in F32 and
// accumulate in F32, a partial sum of at most 128 consecutive products along k may be
// kept at reduced precision before it joins the F32 accumulator; C is rounded once.
// Block scales (kGemmFp8Blockscaled), kb = ceil(k / 128) blocks of k, q in [0, kb):
//   sa(i, q) = scale_a[q * scale_a_ld + i / scale_a_group]   (rows i of op(A))
//   sb(j, q) = scale_b[q * scale_b_ld + j / scale_b_group]   (columns j of op(B))
//   C(i, j) = alpha * sum_q sa(i, q) * sb(j, q) * sum_{p in [128q, 128q + 128)} op(A)(i, p) op(B)(p, j) + beta C
// where the groups are 1 and 128 for a column-major call (the caller's 1 x 128 scales
// of A's rows, 128 x 128 blocks of B) and 128 and 1 for a row-major one (swapped). The
// scales live where A and B do. Per-tensor calls: scale_a == scale_b == nullptr.
// gpk_gemm calls leave the fields below at their defaults (-1: the dtype is `dtype`);
// read them through the helpers after the struct.
struct GemmArgs {
    int dtype;  // GPK_F32, GPK_F64, GPK_F16 or GPK_BF16 (A, B and C all of it), or a class above
    bool transa, transb;
    int64_t m, n, k;
    double alpha;
    const void *A;
    int64_t lda;
    const void *B;
    int64_t ldb;
    double beta;  // beta == 0: C must not be read
    void *C;
    int64_t ldc;
    int a_dtype = -1, b_dtype = -1, c_dtype = -1;  // -1: `dtype`
    const float *scale_a = nullptr, *scale_b = nullptr;
    int64_t scale_a_group = 1, scale_b_group = 128;
    int64_t scale_a_ld = 0, scale_b_ld = 0;
};

// gpk_gemm_strided_batched, checked (batch_count, m, n > 0) and column-major, as
// GemmArgs: a row-major call arrives swapped (C_i^T = op(B_i)^T op(A_i)^T), A and B
// each with its ld, stride and transpose, m and n exchanged.
struct GemmBatchedCall {
    int dtype;
    int transa, transb;  // GPK_NO_TRANS or GPK_TRANS
    int64_t m, n, k;
    double alpha;
    const void *A;
    int64_t lda, stride_a;
    const void *B;
    int64_t ldb, stride_b;
    double beta;  // beta == 0: C must not be read
    void *C;
    int64_t ldc, stride_c;
    int64_t batch_count;
};

// One value of x[0..n) into *result (float for F32, F16 and BF16, double for F64,
// int64_t for I32/I64). n > 0 for MIN/MAX, n >= 0 for SUM.
struct ReduceArgs {
    int dtype;
    int op;  // GPK_SUM, GPK_MIN, GPK_MAX
    const void *x;
    int64_t n;
    void *result;
};

// B (cols x rows, ldb) = A (rows x cols, lda)^T, column-major. rows, cols > 0.
struct TransposeArgs {
    int dtype;
    size_t elem_size;  // 2, 4 or 8
    int64_t rows, cols;
    const void *A;
    int64_t lda;
    void *B;
    int64_t ldb;
};

// Hits among samples [first, first + count) of the sequence keyed by seed.
// `hits` is host memory; launchers return with it written.
struct PiArgs {
    uint64_t first;
    uint64_t count;
    uint64_t seed;
    uint64_t *hits;
};

template <class Args>
using Launcher = gpk_status (*)(gpk_context &ctx, const Args &args);

// Element size of a dtype (0 for an unknown one).
inline size_t dtype_size(int dtype) {
    switch (dtype) {
        case GPK_F8E4M3: case GPK_F8E5M2: return 1;
        case GPK_F16: case GPK_BF16: return 2;
        case GPK_F32: case GPK_I32: return 4;
        case GPK_F64: case GPK_I64: return 8;
        default: return 0;
    }
}

// A dtype's name as the API spells it, for messages ("?" for an unknown one).
inline const char *dtype_name(int dtype) {
    switch (dtype) {
        case GPK_F32: return "GPK_F32";
        case GPK_F64: return "GPK_F64";
        case GPK_I32: return "GPK_I32";
        case GPK_I64: return "GPK_I64";
        case GPK_F16: return "GPK_F16";
        case GPK_BF16: return "GPK_BF16";
        case GPK_F8E4M3: return "GPK_F8E4M3";
        case GPK_F8E5M2: return "GPK_F8E5M2";
        case kGemmFp8: return "FP8 (gpk_gemm_ex)";
        case kGemmFp8Blockscaled: return "block-scaled FP8 (gpk_gemm_blockscaled)";
        case kGemmHalfF32: return "F16/BF16 with F32 C (gpk_gemm_ex)";
        default: return "?";
    }
}

// The 2-byte floating-point dtypes: F32 accumulation, one rounding of a gemm result.
inline bool is_16bit(int dtype) { return dtype == GPK_F16 || dtype == GPK_BF16; }

// The FP8 dtypes (operands of gpk_gemm_ex and gpk_gemm_blockscaled only).
inline bool is_fp8(int dtype) { return dtype == GPK_F8E4M3 || dtype == GPK_F8E5M2; }

// The classes of gpk_gemm_ex whose alpha and beta, like the 16-bit dtypes', apply in F32.
inline bool is_gemm_ex_class(int dtype) {
    return dtype == kGemmFp8 || dtype == kGemmFp8Blockscaled || dtype == kGemmHalfF32;
}

// Each operand's dtype and element size, for gpk_gemm's calls and gpk_gemm_ex's alike.
inline int a_dtype_of(const GemmArgs &a) { return a.a_dtype >= 0 ? a.a_dtype : a.dtype; }
inline int b_dtype_of(const GemmArgs &a) { return a.b_dtype >= 0 ? a.b_dtype : a.dtype; }
inline int c_dtype_of(const GemmArgs &a) { return a.c_dtype >= 0 ? a.c_dtype : a.dtype; }
inline size_t a_size(const GemmArgs &a) { return dtype_size(a_dtype_of(a)); }
inline size_t b_size(const GemmArgs &a) { return dtype_size(b_dtype_of(a)); }
inline size_t c_size(const GemmArgs &a) { return dtype_size(c_dtype_of(a)); }

// Bytes of the reduce result for a dtype: a float for F32 and the 16-bit dtypes.
inline size_t reduce_result_size(int dtype) { return dtype == GPK_F32 || is_16bit(dtype) ? 4 : 8; }

}  // namespace gpk
