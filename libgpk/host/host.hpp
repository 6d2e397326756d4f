// The host backend: plain C++ (threads where they pay: parallel.hpp), no CUDA. It is the fallback
// when no GPU is usable and the reference every GPU variant is tested against.
#pragma once

#include "../ops.hpp"

namespace gpk::host {

// Every dtype's gemm; it allocates nothing, so it cannot fail once its arguments are
// checked.
gpk_status gemm(gpk_context &ctx, const GemmArgs &args);
// gemm on the calling thread alone, for callers that spread whole products over the
// threads (the batched reference).
void gemm_serial(const GemmArgs &args);
// About the multiply-adds of a gemm, m * n * max(k, 1), saturated at INT64_MAX: what
// decides whether threads pay.
int64_t gemm_work(const GemmArgs &args);
gpk_status reduce(gpk_context &ctx, const ReduceArgs &args);
gpk_status transpose(gpk_context &ctx, const TransposeArgs &args);
gpk_status pi(gpk_context &ctx, const PiArgs &args);
// gpk_gemm_strided_batched's reference (gemm_batched.cpp): every product of the
// column-major call (api.cpp swaps a row-major one).
gpk_status gemm_batched(gpk_context &ctx, const GemmBatchedCall &call);

// GPK_F16 and GPK_BF16 (half_ops.cpp), reached through gemm(), gemm_serial() and
// reduce(); the gemm spread over the threads when `parallel`.
void gemm_16bit(const GemmArgs &args, bool parallel);
gpk_status reduce_16bit(gpk_context &ctx, const ReduceArgs &args);
// gpk_gemm_ex's and gpk_gemm_blockscaled's classes (gemm_ex.cpp), reached through gemm()
// and gemm_serial(); allocates nothing.
void gemm_ex(const GemmArgs &args, bool parallel);

}  // namespace gpk::host
