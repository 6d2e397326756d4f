// Argument checking for every backend, in one place. Each check names the parameter,
// its value and the rule in the message, and returns before anything is written.
#pragma once

#include "gpk/gpk.h"

#include <cstddef>
#include <cstdint>

namespace gpk {

// A matrix as it lies in memory: `outer` lines of `inner` contiguous elements, `ld`
// elements apart (a column-major m x n matrix is inner = m, outer = n).
struct Storage {
    int64_t inner, outer, ld;
    // Elements from the first to one past the last that belong to the matrix.
    int64_t span() const { return inner == 0 || outer == 0 ? 0 : (outer - 1) * ld + inner; }
};

gpk_status check_handle(const gpk_context *ctx);

gpk_status check_gemm(gpk_context *ctx, int dtype, int layout, int transa, int transb, int64_t m,
                      int64_t n, int64_t k, const void *A, int64_t lda, const void *B, int64_t ldb,
                      const void *C, int64_t ldc);
// gpk_gemm's checks for one product, then the batch's: strides and batch_count >= 0,
// stride_c at least one C matrix when batch_count > 1 (no two C matrices overlap),
// every span of the batch within int64 bytes, and no C matrix overlapping an A or B
// matrix (the batch's whole spans compared).
gpk_status check_gemm_strided_batched(gpk_context *ctx, int dtype, int layout, int transa, int transb,
                                      int64_t m, int64_t n, int64_t k, const void *A, int64_t lda,
                                      int64_t stride_a, const void *B, int64_t ldb, int64_t stride_b,
                                      const void *C, int64_t ldc, int64_t stride_c, int64_t batch_count);
gpk_status check_reduce(gpk_context *ctx, int dtype, int op, const void *x, int64_t n,
                        const void *result);
gpk_status check_transpose(gpk_context *ctx, int dtype, int layout, int64_t rows, int64_t cols,
                           const void *A, int64_t lda, const void *B, int64_t ldb);
gpk_status check_pi(gpk_context *ctx, uint64_t samples, const void *result);
gpk_status check_pi_range(gpk_context *ctx, uint64_t first_sample, uint64_t count, const void *result);

}  // namespace gpk
