// The library's side of the strided batched rungs: each launcher of the ladder turns
// the checked call into the rungs' raw BatchedParams on the context's stream (or the
// pipeline lane's), runs the rung, and maps its BatchedResult to a gpk_status with
// the rung's text. The rungs themselves depend on nothing of the library.
#include "batched_common.cuh"

#include "../ladders.hpp"
#include "../resources.hpp"

#include <algorithm>

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

// The _takes of the checked rungs say, before any launch, what the rungs themselves
// refuse (their files' opening comments): the launchers still refuse such a call by
// name, so the two cannot drift into running a call a rung does not take.
gpk_status gemm_batched_thread_product_takes(gpk_context &, const GemmBatchedCall &args, const char **why_not) {
    *why_not = std::max(args.m, std::max(args.n, args.k)) <= 8 ? nullptr : "it takes m, n, k <= 8 only";
    return GPK_SUCCESS;
}

gpk_status gemm_batched_staged_takes(gpk_context &ctx, const GemmBatchedCall &args, const char **why_not) {
    // 02_staged.cu's rule: one product's A, B and C, each in shared memory with odd
    // leading dimensions past 4 rows and odd lengths, within 100 KiB.
    const batched::ColMajor c = batched::col_major(params_of(ctx, args));
    auto ld = [](int64_t rows) { return rows > 4 ? rows | 1 : rows; };
    const int64_t one_a = ld(c.rows_a()) * c.cols_a(), one_b = ld(c.rows_b()) * c.cols_b();
    const int64_t bytes = ((one_a | 1) + (one_b | 1) + ((c.m * c.n) | 1)) * static_cast<int64_t>(dtype_size(args.dtype));
    *why_not = bytes <= 100 * 1024 ? nullptr : "its A, B and C must fit 100 KiB of shared memory";
    return GPK_SUCCESS;
}

gpk_status gemm_batched_dmma_takes(gpk_context &ctx, const GemmBatchedCall &, const char **why_not) {
    int major = 0, optin = 0;
    GPK_CUDA_TRY(ctx, cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, ctx.device));
    GPK_CUDA_TRY(ctx, cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, ctx.device));
    *why_not = major < 8               ? "it needs FP64 tensor cores (sm_80 or newer)"
               : optin < 120 * 1024    ? "it needs 120 KiB of shared memory for a block"
                                       : nullptr;
    return GPK_SUCCESS;
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
