// The arguments every backend's launchers receive, after api.cpp has checked them
// and normalized them to column-major. Pointers are in the backend's memory (device
// memory for the CUDA backend, host memory for the host backend).
#pragma once

#include "gpk/gpk.h"

#include <cstddef>
#include <cstdint>

namespace gpk {

// C = alpha * op(A) * op(B) + beta * C, column-major. Row-major calls arrive here
// already swapped (C^T = op(B)^T op(A)^T), so no launcher deals with layouts.
// m, n > 0 (quick returns never reach a launcher); k may be 0.
struct GemmArgs {
    int dtype;  // GPK_F32, GPK_F64, GPK_F16 or GPK_BF16
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
        default: return "?";
    }
}

// The 2-byte floating-point dtypes: F32 accumulation, one rounding of a gemm result.
inline bool is_16bit(int dtype) { return dtype == GPK_F16 || dtype == GPK_BF16; }

// Bytes of the reduce result for a dtype: a float for F32 and the 16-bit dtypes.
inline size_t reduce_result_size(int dtype) { return dtype == GPK_F32 || is_16bit(dtype) ? 4 : 8; }

}  // namespace gpk
