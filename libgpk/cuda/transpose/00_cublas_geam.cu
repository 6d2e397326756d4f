// Vendor rung: cublasSgeam_64 / cublasDgeam_64 with op(A) = A^T, alpha = 1, beta = 0,
// i.e. B = A^T. cuBLAS has no transpose routine of its own; geam, documented as
// "matrix-matrix addition/transposition", is how it transposes, at close to copy
// bandwidth, so it is the yardstick of the transpose ladder. geam computes in
// floating point, so it serves F32 and F64 only (integer elements go to our kernels,
// which move bits). F16 and BF16 are not taken either: cuBLAS has no half-precision
// geam, and a geam in F32 would quiet signalling NaNs and rewrite their payloads, where
// gpk_transpose moves 2-byte elements bit for bit.
#include "../ladders.hpp"
#include "../resources.hpp"

#include <type_traits>

namespace gpk::cuda {
namespace {

template <class T>
gpk_status transpose(gpk_context &ctx, const TransposeArgs &args) {
    cublasHandle_t handle = nullptr;
    GPK_FORWARD_IF_ERROR(cublas(ctx, &handle));
    const T one = T(1), zero = T(0);
    const T *A = static_cast<const T *>(args.A);
    T *B = static_cast<T *>(args.B);
    // B (cols x rows) = 1 * A^T + 0 * B. The second operand is not needed: cuBLAS
    // documents that with beta == 0 it need not be valid input, so the old contents of
    // B (NaN included) do not leak, and passing the output itself with its own ldb and
    // CUBLAS_OP_N is the documented form for an operand that aliases C.
    if constexpr (std::is_same_v<T, float>)
        GPK_CUBLAS_TRY(ctx, cublasSgeam_64(handle, CUBLAS_OP_T, CUBLAS_OP_N, args.cols, args.rows, &one, A, args.lda,
                                           &zero, B, args.ldb, B, args.ldb));
    else
        GPK_CUBLAS_TRY(ctx, cublasDgeam_64(handle, CUBLAS_OP_T, CUBLAS_OP_N, args.cols, args.rows, &one, A, args.lda,
                                           &zero, B, args.ldb, B, args.ldb));
    return GPK_SUCCESS;
}

}  // namespace

gpk_status transpose_geam(gpk_context &ctx, const TransposeArgs &args) {
    switch (args.dtype) {
        case GPK_F32: return transpose<float>(ctx, args);
        case GPK_F64: return transpose<double>(ctx, args);
        default:
            return fail(&ctx, GPK_ERROR_NOT_SUPPORTED, "transpose variant \"cublas_geam\" supports F32 and F64 only");
    }
}

}  // namespace gpk::cuda
