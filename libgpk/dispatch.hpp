// Runs a checked, column-major-normalized call on the context's backend: picks the
// variant, sends host arrays through the staging pipeline (staging/pipeline.hpp) for the
// CUDA backend, and in validation mode compares the result with a second, independent
// computation (validation.hpp): the pipeline chunk by chunk, device arrays whole.
#pragma once

#include "ops.hpp"

namespace gpk {

// NOT_SUPPORTED when the variant set on the context does not support dtype; checked
// before the quick return for empty sizes, so that a variant answers the same for
// every size of one dtype.
gpk_status check_variant_dtype(gpk_context &ctx, int op, int dtype);
// `layout` is the caller's (args are already normalized to column-major): it says
// which operand is the caller's B, which the staging pipeline keeps resident.
gpk_status run_gemm(gpk_context &ctx, const GemmArgs &args, int layout);
gpk_status run_gemm_batched(gpk_context &ctx, const GemmBatchedCall &call);
gpk_status run_reduce(gpk_context &ctx, const ReduceArgs &args);
gpk_status run_transpose(gpk_context &ctx, const TransposeArgs &args);
gpk_status run_pi(gpk_context &ctx, const PiArgs &args);
// Copies `bytes` from host memory to `dst`, which may be host or device memory.
gpk_status write_result(gpk_context &ctx, void *dst, const void *src, size_t bytes, const char *name);

}  // namespace gpk
