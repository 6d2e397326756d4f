// Rung 4, the single-gemm FP64 tensor-core kernel with a batch index (F64): rung 2
// runs F64 on the FMA units from whole products held in shared memory, which stops
// fitting past 64 x 64 and is bound by its shared-memory reads well before. From
// sm_80 on, the tensor cores run FP64 (mma.sync .f64, m16n8k4 on sm_90), twice the
// FMA units' rate on the H100. Large products are single gemms in all but number, so
// this rung runs the library's F64 tensor-core gemm kernel (rung 9 of the gemm
// ladder: 128 x 128 block tiles of 8 warps of 32 x 64, k-tiles of 16 through a
// 3-stage cp.async ring, conflict-free padded tiles, double-buffered fragments) over
// a grid whose z index is the product: one launch for the whole batch (one per 65535
// products past the grid's z limit), stride 0 sharing an operand.
//
// The kernel is gemm/dmma_kernel.cuh's, the one rung 9 runs, at its tuned defaults;
// gemm/09_dmma_f64.cu says what its parts are for (fragment layouts, bank conflicts). Takes F64, any size, transposes,
// ld and stride, on sm_80 or newer with 120 KiB of shared memory for a block; F32,
// older GPUs or a smaller shared memory are answered with kNotSupported.
#include "../gemm/dmma_kernel.cuh"
#include "batched_common.cuh"

#include <cstddef>

namespace gpk::cuda::batched {
namespace {

using dmma::kSmemBytes;
using dmma::kThreads;
using dmma::kTileM;
using dmma::kTileN;

// What the rung takes beyond its dtype, the one statement of it, on a GPU of compute
// capability `major` whose blocks can have `optin` bytes of shared memory: nullptr,
// or why not, in the takes function's words or, `named`, in the computation's, which
// name the rung.
const char *refusal(int major, int optin, bool named) {
    static const char *const kTensorCores[2] = {
        "it needs FP64 tensor cores (sm_80 or newer)",
        "gemm_batched variant \"dmma\" needs FP64 tensor cores (sm_80 or newer)"};
    static const char *const kShared[2] = {
        "it needs 120 KiB of shared memory for a block",
        "gemm_batched variant \"dmma\" needs 120 KiB of shared memory for a block"};
    return major < 8 ? kTensorCores[named] : kSmemBytes > static_cast<size_t>(optin) ? kShared[named] : nullptr;
}

BatchedResult compute(const BatchedParams &params) {
    if (batched_empty(params)) return batched_ok();
    if (params.dtype != GPK_F64) return batched_unsupported("gemm_batched variant \"dmma\" supports F64 only");
    int device = 0, major = 0, optin = 0;
    cudaError_t e = cudaGetDevice(&device);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
    if (e != cudaSuccess) return batched_cuda(e, "cudaDeviceGetAttribute (gemm_batched dmma)");
    if (const char *why = refusal(major, optin, true)) return batched_unsupported(why);
    const ColMajor c = col_major(params);
    if (product_vanishes<double>(c, params.alpha)) return scale_batched<double>(c, params.beta, params.stream);
    const dmma::Kernel kernel = dmma::kKernels<true>[c.transa][c.transb];
    e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(kSmemBytes));
    if (e != cudaSuccess) return batched_cuda(e, "cudaFuncSetAttribute (gemm_batched dmma::kernel)");
    const double *A = static_cast<const double *>(c.A);
    const double *B = static_cast<const double *>(c.B);
    // 16-byte copies need every product's matrix aligned, not only the first.
    const bool vec_a = aligned16(A) && c.lda % 2 == 0 && c.sa % 2 == 0;
    const bool vec_b = aligned16(B) && c.ldb % 2 == 0 && c.sb % 2 == 0;
    return launch_in_parts(c.batch, "gemm_batched dmma::kernel", [&](int64_t first, unsigned int count) {
        const dim3 grid(grid_blocks(c.m, kTileM), grid_blocks(c.n, kTileN, kMaxGridYZ), count);
        kernel<<<grid, kThreads, kSmemBytes, params.stream>>>(vec_a, vec_b, c.m, c.n, c.k, params.alpha, A, c.lda, c.sa,
                                                              B, c.ldb, c.sb, params.beta, static_cast<double *>(c.C),
                                                              c.ldc, c.sc, first);
    });
}

}  // namespace
}  // namespace gpk::cuda::batched

namespace gpk::cuda {

gpk_status gemm_batched_dmma_takes(gpk_context &ctx, const GemmBatchedCall &, const char **why_not) {
    int major = 0, optin = 0;
    GPK_CUDA_TRY(ctx, cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, ctx.device));
    GPK_CUDA_TRY(ctx, cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, ctx.device));
    *why_not = batched::refusal(major, optin, false);
    return GPK_SUCCESS;
}

gpk_status gemm_batched_dmma(gpk_context &ctx, const GemmBatchedCall &args) {
    return batched::status_of(ctx, batched::compute(batched::params_of(ctx, args)));
}

}  // namespace gpk::cuda
