// The library's side of the strided batched rungs: each launcher of the ladder turns
// the checked call into the rungs' raw BatchedParams on the context's stream (or the
// pipeline lane's), runs the rung, and maps its BatchedResult to a gpk_status with
// the rung's text. The rungs themselves depend on nothing of the library, so the
// standalone harness (scripts/batched-bench.cu) runs the very same kernels.
#include "batched_common.cuh"

#include "../ladders.hpp"
#include "../resources.hpp"

namespace gpk::cuda {
namespace {

batched::BatchedParams params_of(const gpk_context &ctx, const GemmBatchedCall &a) {
    return batched::BatchedParams{a.dtype,    a.layout, a.transa,   a.transb, a.m,   a.n,        a.k,
                                  a.alpha,    a.A,      a.lda,      a.stride_a, a.B, a.ldb,      a.stride_b,
                                  a.beta,     a.C,      a.ldc,      a.stride_c, a.batch_count, stream(ctx)};
}

gpk_status status_of(gpk_context &ctx, const batched::BatchedResult &r) {
    switch (r.code) {
        case batched::BatchedCode::kOk: return GPK_SUCCESS;
        case batched::BatchedCode::kNotSupported: return fail(&ctx, GPK_ERROR_NOT_SUPPORTED, "%s", r.what);
        case batched::BatchedCode::kCudaError: return check(ctx, static_cast<cudaError_t>(r.detail), r.what);
        case batched::BatchedCode::kCublasError:
            return check_cublas(ctx, static_cast<cublasStatus_t>(r.detail), r.what);
    }
    return fail(&ctx, GPK_ERROR_INTERNAL, "internal error: unknown result of a batched gemm rung");
}

}  // namespace

gpk_status gemm_batched_cublas(gpk_context &ctx, const GemmBatchedCall &args) {
    cublasHandle_t handle = nullptr;
    GPK_FORWARD_IF_ERROR(cublas(ctx, &handle));
    // Default math, reductions kept in the compute type's precision (16-bit C rounded
    // once), whatever set the handle before; TF32 only per call, in GPK_MATH_TF32.
    GPK_CUBLAS_TRY(ctx, cublasSetMathMode(handle, static_cast<cublasMath_t>(
                                                      CUBLAS_DEFAULT_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)));
    const bool tf32 = args.dtype == GPK_F32 && ctx.math_mode == GPK_MATH_TF32;
    return status_of(ctx, batched::gemm_batched_cublas(params_of(ctx, args), handle, tf32));
}

gpk_status gemm_batched_thread_product(gpk_context &ctx, const GemmBatchedCall &args) {
    return status_of(ctx, batched::gemm_batched_thread_product(params_of(ctx, args)));
}

gpk_status gemm_batched_staged(gpk_context &ctx, const GemmBatchedCall &args) {
    return status_of(ctx, batched::gemm_batched_staged(params_of(ctx, args)));
}

gpk_status gemm_batched_prefetch(gpk_context &ctx, const GemmBatchedCall &args) {
    return status_of(ctx, batched::gemm_batched_prefetch(params_of(ctx, args)));
}

gpk_status gemm_batched_dmma(gpk_context &ctx, const GemmBatchedCall &args) {
    return status_of(ctx, batched::gemm_batched_dmma(params_of(ctx, args)));
}

}  // namespace gpk::cuda
