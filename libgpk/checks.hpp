// Argument checking for every backend, in one place. Each check names the parameter,
// its value and the rule in the message, and returns before anything is written.
#pragma once

#include "gpk/gpk.h"

#include <cstddef>
#include <cstdint>

namespace gpk {

gpk_status check_gemm(gpk_context *ctx, int dtype, int layout, int transa, int transb, int64_t m,
                      int64_t n, int64_t k, const void *A, int64_t lda, const void *B, int64_t ldb,
                      const void *C, int64_t ldc);
// gpk_gemm_ex (blockscaled false) and gpk_gemm_blockscaled when the three dtypes are not
// all equal (all equal is gpk_gemm's call, checked as such): the dtype combination first
// (INVALID_ARGUMENT naming c_dtype or the operand, and the rule), then everything
// gpk_gemm checks, each operand in its own element size, then for block scales each
// scale array when read (m, n, k > 0: not NULL, within the address space, not aliased
// by C). *cls: the call's class (ops.hpp). `fn` names the call.
gpk_status check_gemm_ex(gpk_context *ctx, const char *fn, int layout, int transa, int transb, int64_t m, int64_t n,
                         int64_t k, int a_dtype, const void *A, int64_t lda, int b_dtype, const void *B, int64_t ldb,
                         int c_dtype, const void *C, int64_t ldc, bool blockscaled, const float *scale_a,
                         const float *scale_b, int *cls);
// gpk_gemm's checks for one product, then the batch's: strides and batch_count >= 0,
// stride_c at least one C matrix when batch_count > 1 (no two C matrices overlap),
// every span of the batch, and the start of every operand's last matrix, within int64
// bytes (whatever k, m and n), every operand's whole batch within the address space,
// and no C matrix overlapping an A or B matrix (the batch's whole spans compared).
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
