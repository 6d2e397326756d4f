// Argument checking for every backend, in one place. Each check names the parameter,
// its value and the rule in the message, and returns before anything is written.
#pragma once

#include "gpk/gpk.h"

#include <cstddef>
#include <cstdint>
#include <memory>

namespace gpk {

// A matrix as it lies in memory: `outer` lines of `inner` contiguous elements, `ld`
// elements apart (a column-major m x n matrix is inner = m, outer = n).
struct Storage {
    int64_t inner, outer, ld;
    // Elements from the first to one past the last that belong to the matrix.
    int64_t span() const { return inner == 0 || outer == 0 ? 0 : (outer - 1) * ld + inner; }
};

// ---- handles -----------------------------------------------------------------------
// The gpk_context * a caller holds is a handle, not the address of the context: a
// 64-bit serial number, never reused, scrambled by an invertible multiplication (so
// that small integers and nearby values are not live handles), and looked up in a
// registry of live contexts under a mutex. Its validity therefore depends neither on
// freed memory nor on the allocator handing a new context the address of an old
// one: a destroyed handle stays unknown forever, from any thread.
//
// A call holds a reference to its context for its duration, so that a gpk_destroy
// racing with it on another thread (a misuse: one context, one thread at a time)
// retires the handle at once and frees the context when that call returns, instead
// of freeing it under the call.

using ContextRef = std::shared_ptr<gpk_context>;

// Registers a new context (created with `new`; the registry owns it from here, also
// on failure) and writes its handle. OUT_OF_MEMORY when the registry cannot grow.
gpk_status register_context(gpk_context *ctx, gpk_context **handle);
// The live context behind `handle`, or INVALID_HANDLE (with the thread's message)
// for NULL, a destroyed handle or any value that never was one.
gpk_status acquire(const gpk_context *handle, ContextRef *ctx);
// Like acquire, but without a message: for the calls that answer NULL or the
// thread's message instead of a status (gpk_last_error, gpk_variant_name).
ContextRef lookup(const gpk_context *handle) noexcept;
// Removes `handle` from the registry and returns its context, which is freed when the
// last reference goes; INVALID_HANDLE when it was not live.
gpk_status retire(gpk_context *handle, ContextRef *ctx);

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
