// gpk_gemm's alpha and beta as the call's dtype sees them. The header converts them
// to the dtype, so every decision that depends on them -- whether the product is
// formed at all (alpha == 0) and whether C is read (beta == 0) -- is taken on the
// converted value: in F32, 1e-300 is 0, so alpha = 1e-300 gives beta * C even with
// NaN in A, and beta = 1e-300 never reads C. Shared by the host backend, dispatch and
// the staging pipeline so that every path decides alike.
#pragma once

#include "ops.hpp"

namespace gpk {

// `value` rounded to the type it is applied in and widened back: F32 for F32 and for
// F16 and BF16 and gpk_gemm_ex's classes (whose alpha and beta the contract applies in
// F32), exact for F64.
inline double in_dtype(int dtype, double value) {
    return dtype == GPK_F32 || is_16bit(dtype) || is_gemm_ex_class(dtype) ? static_cast<double>(static_cast<float>(value))
                                                                          : value;
}

// Whether alpha * op(A) * op(B) contributes: k > 0 and alpha is not 0 in the dtype.
// Otherwise C = beta * C and A and B are not read (CBLAS).
inline bool gemm_forms_product(const GemmArgs &a) { return a.k > 0 && in_dtype(a.dtype, a.alpha) != 0.0; }

// Whether C is read: beta is not 0 in the dtype (so NaN or Inf in C cannot leak).
inline bool gemm_reads_c(const GemmArgs &a) { return in_dtype(a.dtype, a.beta) != 0.0; }

}  // namespace gpk
