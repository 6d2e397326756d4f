// Vendor rung: cublasSgemm_64 / cublasDgemm_64, the yardstick every gemm kernel of
// ours is measured and validated against. The 64-bit size API takes any m, n, k and
// leading dimension libgpk accepts. The handle is put in cuBLAS's default math mode
// before every call (whatever set it before), so SGEMM is pure FP32 (no TF32), the
// same arithmetic our kernels do.
//
// F16 and BF16 go through cublasGemmEx_64 with A, B and C in the dtype and compute
// type CUBLAS_COMPUTE_32F (F32 accumulation, alpha and beta as floats), the handle
// forbidding reductions in the output's precision (split-k partials would otherwise
// be rounded to 16 bits before they are added: C must be rounded once). F32 in
// GPK_MATH_TF32 goes through cublasGemmEx_64 with CUBLAS_COMPUTE_32F_FAST_TF32, which
// lets cuBLAS round A and B to TF32 for the tensor cores; that compute type is chosen
// per call, and never through the handle's math mode, so no other call can inherit it.
//
// gpk_gemm_ex's calls (ops.hpp's classes): F16/BF16 A and B with F32 C through
// cublasGemmEx_64 (any layout, compute type CUBLAS_COMPUTE_32F); FP8 through cuBLASLt,
// which takes only what its FP8 kernels do: the TN form (op(A) and op(B) both
// k-contiguous: transa and not transb after normalisation), every pointer and leading
// dimension a multiple of 16 bytes, k a multiple of 16, not both operands E5M2, and a
// per-tensor scale (in alpha). Block scales and everything else are refused by name
// (gemm_cublas_takes), and "auto" runs another rung.
//
// When the product vanishes (k == 0, or alpha == 0 in the dtype) BLAS defines
// C = beta * C without reading A or B; that case runs a small kernel of ours instead,
// so that it does not depend on how cuBLAS treats an empty inner dimension, and
// beta == 0 writes zeros without reading C.
#include "../kernel_util.cuh"
#include "../ladders.hpp"
#include "../resources.hpp"

#include "../../common/half.hpp"

#include <cublasLt.h>

#include <type_traits>

namespace gpk::cuda {
namespace {

// C = beta * C over a 16-bit C, beta applied in F32 and the result rounded once; C
// never read when beta == 0.
template <bool kBf16>
__global__ void scale16_kernel(int64_t m, int64_t n, float beta, uint16_t *C, int64_t ldc) {
    for (int64_t j = static_cast<int64_t>(blockIdx.y) * blockDim.y + threadIdx.y; j < n;
         j += static_cast<int64_t>(gridDim.y) * blockDim.y)
        for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < m;
             i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
            uint16_t &c = C[i + j * ldc];
            const float v = beta == 0.0f ? 0.0f : beta * half_bits_to_float(c, kBf16);
            c = kBf16 ? float_to_bf16(v) : float_to_half(v);
        }
}

// The product-free case of a 16-bit gemm (k == 0 or alpha == 0 as a float).
gpk_status scale16(gpk_context &ctx, const GemmArgs &args) {
    const float beta = static_cast<float>(args.beta);
    if (beta == 1.0f) return GPK_SUCCESS;
    const dim3 block(32, 8);
    auto *C = static_cast<uint16_t *>(args.C);
    if (args.dtype == GPK_BF16)
        scale16_kernel<true><<<grid_2d(args.m, args.n, block), block, 0, stream(ctx)>>>(args.m, args.n, beta, C, args.ldc);
    else
        scale16_kernel<false><<<grid_2d(args.m, args.n, block), block, 0, stream(ctx)>>>(args.m, args.n, beta, C, args.ldc);
    GPK_LAUNCH_CHECK(ctx, "gemm scale16_kernel");
    return GPK_SUCCESS;
}

// The handle of this call, in the default math mode, reductions kept in the compute
// type's precision.
gpk_status exact_handle(gpk_context &ctx, cublasHandle_t *handle) {
    GPK_FORWARD_IF_ERROR(cublas(ctx, handle));
    GPK_CUBLAS_TRY(ctx, cublasSetMathMode(*handle, static_cast<cublasMath_t>(
                                                       CUBLAS_DEFAULT_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)));
    return GPK_SUCCESS;
}

// cublasGemmEx_64 with A, B, C of `type`, alpha and beta as floats.
gpk_status gemm_ex(gpk_context &ctx, const GemmArgs &args, cudaDataType_t type, cublasComputeType_t compute) {
    const float alpha = static_cast<float>(args.alpha);
    const float beta = static_cast<float>(args.beta);
    cublasHandle_t handle = nullptr;
    GPK_FORWARD_IF_ERROR(exact_handle(ctx, &handle));
    const cublasOperation_t transa = args.transa ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t transb = args.transb ? CUBLAS_OP_T : CUBLAS_OP_N;
    GPK_CUBLAS_TRY(ctx, cublasGemmEx_64(handle, transa, transb, args.m, args.n, args.k, &alpha, args.A, type, args.lda,
                                        args.B, type, args.ldb, &beta, args.C, type, args.ldc, compute,
                                        CUBLAS_GEMM_DEFAULT));
    return GPK_SUCCESS;
}

gpk_status gemm16(gpk_context &ctx, const GemmArgs &args) {
    if (args.k == 0 || static_cast<float>(args.alpha) == 0.0f) return scale16(ctx, args);
    return gemm_ex(ctx, args, args.dtype == GPK_BF16 ? CUDA_R_16BF : CUDA_R_16F, CUBLAS_COMPUTE_32F);
}

// C = beta * C over the m x n matrix, C never read when beta == 0 (NaN in C must not leak).
template <class T>
__global__ void scale_kernel(int64_t m, int64_t n, T beta, T *C, int64_t ldc) {
    for (int64_t j = static_cast<int64_t>(blockIdx.y) * blockDim.y + threadIdx.y; j < n;
         j += static_cast<int64_t>(gridDim.y) * blockDim.y)
        for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < m;
             i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
            T &c = C[i + j * ldc];
            c = beta == T(0) ? T(0) : beta * c;
        }
}

template <class T>
gpk_status scale(gpk_context &ctx, const GemmArgs &args, T beta) {
    if (beta == T(1)) return GPK_SUCCESS;
    const dim3 block(32, 8);
    scale_kernel<T><<<grid_2d(args.m, args.n, block), block, 0, stream(ctx)>>>(args.m, args.n, beta,
                                                                                static_cast<T *>(args.C), args.ldc);
    GPK_LAUNCH_CHECK(ctx, "gemm scale_kernel");
    return GPK_SUCCESS;
}

template <class T>
gpk_status gemm(gpk_context &ctx, const GemmArgs &args) {
    const T alpha = static_cast<T>(args.alpha);
    const T beta = static_cast<T>(args.beta);
    if (args.k == 0 || alpha == T(0)) return scale(ctx, args, beta);

    if constexpr (std::is_same_v<T, float>)
        if (ctx.math_mode == GPK_MATH_TF32) return gemm_ex(ctx, args, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32);
    cublasHandle_t handle = nullptr;
    GPK_FORWARD_IF_ERROR(exact_handle(ctx, &handle));
    const cublasOperation_t transa = args.transa ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t transb = args.transb ? CUBLAS_OP_T : CUBLAS_OP_N;
    const T *A = static_cast<const T *>(args.A);
    const T *B = static_cast<const T *>(args.B);
    T *C = static_cast<T *>(args.C);
    if constexpr (std::is_same_v<T, float>)
        GPK_CUBLAS_TRY(ctx, cublasSgemm_64(handle, transa, transb, args.m, args.n, args.k, &alpha, A, args.lda, B,
                                           args.ldb, &beta, C, args.ldc));
    else
        GPK_CUBLAS_TRY(ctx, cublasDgemm_64(handle, transa, transb, args.m, args.n, args.k, &alpha, A, args.lda, B,
                                           args.ldb, &beta, C, args.ldc));
    return GPK_SUCCESS;
}

// ---- gpk_gemm_ex ------------------------------------------------------------------

cudaDataType_t cuda_type(int dtype) {
    switch (dtype) {
        case GPK_F8E4M3: return CUDA_R_8F_E4M3;
        case GPK_F8E5M2: return CUDA_R_8F_E5M2;
        case GPK_F16: return CUDA_R_16F;
        case GPK_BF16: return CUDA_R_16BF;
        default: return CUDA_R_32F;
    }
}

bool aligned16(const void *p, int64_t ld, size_t es) {
    return reinterpret_cast<uintptr_t>(p) % 16 == 0 && (static_cast<uint64_t>(ld) * es) % 16 == 0;
}

// The product-free case of a gpk_gemm_ex call: C = beta C in C's dtype, beta in F32.
gpk_status scale_ex(gpk_context &ctx, const GemmArgs &args) {
    GemmArgs c = args;
    c.dtype = c_dtype_of(args);
    if (is_16bit(c.dtype)) return scale16(ctx, c);
    return scale(ctx, c, static_cast<float>(args.beta));
}

// Frees cuBLASLt's descriptors on every path out (the handle is the context's).
struct LtObjects {
    cublasLtHandle_t handle = nullptr;
    cublasLtMatmulDesc_t op = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
    cublasLtMatmulPreference_t pref = nullptr;
    ~LtObjects() {
        if (pref) cublasLtMatmulPreferenceDestroy(pref);
        if (c) cublasLtMatrixLayoutDestroy(c);
        if (b) cublasLtMatrixLayoutDestroy(b);
        if (a) cublasLtMatrixLayoutDestroy(a);
        if (op) cublasLtMatmulDescDestroy(op);
    }
};

// cuBLASLt's scratch: what its FP8 kernels may use, taken from the context's buffer.
constexpr size_t kLtWorkspace = size_t{32} << 20;

// The largest power of two up to 256 that divides the address: cuBLASLt assumes 256
// unless told, and would pick a kernel that faults on a pointer aligned to 16 only.
uint32_t alignment_of(const void *p) {
    const auto v = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(p) & 255u);
    return v == 0 ? 256u : (v & (~v + 1u));
}

// What cuBLASLt's heuristic answered for the last FP8 call of this thread: the same
// call again (the common case; and the rung's takes followed by its run) skips it.
struct LtChoice {
    int device = -1, ta = 0, tb = 0, tc = 0;
    int64_t m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldc = 0;
    uint32_t align[3] = {};
    bool found = false;
    cublasLtMatmulAlgo_t algo{};
    bool same(const LtChoice &o) const {
        return device == o.device && ta == o.ta && tb == o.tb && tc == o.tc && m == o.m && n == o.n && k == o.k &&
               lda == o.lda && ldb == o.ldb && ldc == o.ldc && align[0] == o.align[0] && align[1] == o.align[1] &&
               align[2] == o.align[2];
    }
};
thread_local LtChoice t_lt_choice;  // plain data: nothing to run when a thread or the library goes

// The descriptors of C = alpha op(A) op(B) + beta C on cuBLASLt's FP8 kernels (the
// call is TN: A stored k x m, B k x n).
gpk_status fp8_describe(gpk_context &ctx, const GemmArgs &args, LtObjects &lt) {
    GPK_FORWARD_IF_ERROR(cublas_lt(ctx, &lt.handle));
    GPK_CUBLAS_TRY(ctx, cublasLtMatmulDescCreate(&lt.op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    const cublasOperation_t opT = CUBLAS_OP_T, opN = CUBLAS_OP_N;
    GPK_CUBLAS_TRY(ctx, cublasLtMatmulDescSetAttribute(lt.op, CUBLASLT_MATMUL_DESC_TRANSA, &opT, sizeof opT));
    GPK_CUBLAS_TRY(ctx, cublasLtMatmulDescSetAttribute(lt.op, CUBLASLT_MATMUL_DESC_TRANSB, &opN, sizeof opN));
    // Promotion into F32 at cuBLASLt's own interval (no fast accumulation): the
    // contract's bound.
    const int8_t fast = 0;
    GPK_CUBLAS_TRY(ctx, cublasLtMatmulDescSetAttribute(lt.op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast));
    GPK_CUBLAS_TRY(ctx, cublasLtMatrixLayoutCreate(&lt.a, cuda_type(a_dtype_of(args)), args.k, args.m, args.lda));
    GPK_CUBLAS_TRY(ctx, cublasLtMatrixLayoutCreate(&lt.b, cuda_type(b_dtype_of(args)), args.k, args.n, args.ldb));
    GPK_CUBLAS_TRY(ctx, cublasLtMatrixLayoutCreate(&lt.c, cuda_type(c_dtype_of(args)), args.m, args.n, args.ldc));
    return GPK_SUCCESS;
}

// Whether cuBLASLt has an FP8 kernel for the call, and which: its heuristic's answer,
// asked once for a run of like calls (the descriptors are made only then).
gpk_status fp8_algo(gpk_context &ctx, const GemmArgs &args, cublasLtMatmulAlgo_t *algo, bool *found) {
    LtChoice want;
    want.device = ctx.device, want.ta = cuda_type(a_dtype_of(args)), want.tb = cuda_type(b_dtype_of(args));
    want.tc = cuda_type(c_dtype_of(args));
    want.m = args.m, want.n = args.n, want.k = args.k, want.lda = args.lda, want.ldb = args.ldb, want.ldc = args.ldc;
    want.align[0] = alignment_of(args.A), want.align[1] = alignment_of(args.B), want.align[2] = alignment_of(args.C);
    if (!t_lt_choice.same(want)) {
        LtObjects lt;
        GPK_FORWARD_IF_ERROR(fp8_describe(ctx, args, lt));
        GPK_CUBLAS_TRY(ctx, cublasLtMatmulPreferenceCreate(&lt.pref));
        GPK_CUBLAS_TRY(ctx, cublasLtMatmulPreferenceSetAttribute(lt.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                                  &kLtWorkspace, sizeof kLtWorkspace));
        const cublasLtMatmulPreferenceAttributes_t aligns[4] = {
            CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
            CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
        for (int i = 0; i < 4; ++i)
            GPK_CUBLAS_TRY(ctx, cublasLtMatmulPreferenceSetAttribute(lt.pref, aligns[i], &want.align[i < 3 ? i : 2],
                                                                      sizeof(uint32_t)));
        cublasLtMatmulHeuristicResult_t result{};
        int count = 0;
        // cuBLASLt answers a configuration it has no kernel for with NOT_SUPPORTED or
        // with no algorithm.
        const cublasStatus_t heuristic =
            cublasLtMatmulAlgoGetHeuristic(lt.handle, lt.op, lt.a, lt.b, lt.c, lt.c, lt.pref, 1, &result, &count);
        if (heuristic != CUBLAS_STATUS_NOT_SUPPORTED)
            GPK_FORWARD_IF_ERROR(check_cublas(ctx, heuristic, "cublasLtMatmulAlgoGetHeuristic"));
        want.found = heuristic == CUBLAS_STATUS_SUCCESS && count >= 1;
        if (want.found) want.algo = result.algo;
        t_lt_choice = want;
    }
    *found = t_lt_choice.found;
    *algo = t_lt_choice.algo;
    return GPK_SUCCESS;
}

// The FP8 product on cuBLASLt; the rung's takes has asked fp8_algo already, so a
// shape without a kernel never gets here from "auto".
gpk_status fp8_lt(gpk_context &ctx, const GemmArgs &args) {
    const float alpha = static_cast<float>(args.alpha), beta = static_cast<float>(args.beta);
    cublasLtMatmulAlgo_t algo{};
    bool found = false;
    GPK_FORWARD_IF_ERROR(fp8_algo(ctx, args, &algo, &found));
    if (!found) return refuse(ctx, "gemm", "cublas", "cuBLASLt has no FP8 kernel for this shape, dtypes and alignment");
    void *work = nullptr;
    GPK_FORWARD_IF_ERROR(buffer(ctx, Slot::Scratch, kLtWorkspace, &work));
    LtObjects lt;
    GPK_FORWARD_IF_ERROR(fp8_describe(ctx, args, lt));
    GPK_CUBLAS_TRY(ctx, cublasLtMatmul(lt.handle, lt.op, &alpha, args.A, lt.a, args.B, lt.b, &beta, args.C, lt.c,
                                       args.C, lt.c, &algo, work, kLtWorkspace, stream(ctx)));
    return GPK_SUCCESS;
}

gpk_status gemm_ex_call(gpk_context &ctx, const GemmArgs &args) {
    const char *why_not = nullptr;
    GPK_FORWARD_IF_ERROR(gemm_cublas_takes(ctx, args, &why_not));
    if (why_not != nullptr) return refuse(ctx, "gemm", "cublas", why_not);
    if (args.k == 0 || static_cast<float>(args.alpha) == 0.0f) return scale_ex(ctx, args);
    if (args.dtype == kGemmHalfF32) {
        // cublasGemmEx_64 with 16-bit A and B and F32 C, alpha and beta as floats.
        const float alpha = static_cast<float>(args.alpha), beta = static_cast<float>(args.beta);
        const cudaDataType_t t = cuda_type(a_dtype_of(args));
        cublasHandle_t handle = nullptr;
        GPK_FORWARD_IF_ERROR(exact_handle(ctx, &handle));
        GPK_CUBLAS_TRY(ctx, cublasGemmEx_64(handle, args.transa ? CUBLAS_OP_T : CUBLAS_OP_N,
                                            args.transb ? CUBLAS_OP_T : CUBLAS_OP_N, args.m, args.n, args.k, &alpha,
                                            args.A, t, args.lda, args.B, t, args.ldb, &beta, args.C, CUDA_R_32F,
                                            args.ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
        return GPK_SUCCESS;
    }
    return fp8_lt(ctx, args);
}

}  // namespace

gpk_status gemm_cublas_takes(gpk_context &ctx, const GemmArgs &args, const char **why_not) {
    *why_not = nullptr;
    if (!is_gemm_ex_class(args.dtype) || args.dtype == kGemmHalfF32) return GPK_SUCCESS;
    if (args.dtype == kGemmFp8Blockscaled) {
        *why_not = "cuBLASLt has no 1x128 / 128x128 block-scaled FP8 on this path (block scales)";
        return GPK_SUCCESS;
    }
    if (args.k == 0 || static_cast<float>(args.alpha) == 0.0f) return GPK_SUCCESS;  // C = beta C, ours
    if (!args.transa || args.transb)
        *why_not = "cuBLASLt's FP8 takes only the TN form (op(A) and op(B) both contiguous along k)";
    else if (a_dtype_of(args) == GPK_F8E5M2 && b_dtype_of(args) == GPK_F8E5M2)
        *why_not = "cuBLASLt's FP8 has no E5M2 x E5M2 product";
    else if (args.k % 16 != 0)
        *why_not = "cuBLASLt's FP8 needs k a multiple of 16";
    else if (!aligned16(args.A, args.lda, 1) || !aligned16(args.B, args.ldb, 1) ||
             !aligned16(args.C, args.ldc, c_size(args)))
        *why_not = "cuBLASLt's FP8 needs every pointer and leading dimension a multiple of 16 bytes";
    if (*why_not != nullptr) return GPK_SUCCESS;
    // Whether cuBLASLt has a kernel for the shape is its heuristic's answer alone:
    // asked here, so that "auto" moves on to the next rung before anything runs.
    cublasLtMatmulAlgo_t algo{};
    bool found = false;
    GPK_FORWARD_IF_ERROR(fp8_algo(ctx, args, &algo, &found));
    if (!found) *why_not = "cuBLASLt has no FP8 kernel for this shape, dtypes and alignment";
    return GPK_SUCCESS;
}

gpk_status gemm_cublas(gpk_context &ctx, const GemmArgs &args) {
    if (is_gemm_ex_class(args.dtype)) return gemm_ex_call(ctx, args);
    switch (args.dtype) {
        case GPK_F32: return gemm<float>(ctx, args);
        case GPK_F64: return gemm<double>(ctx, args);
        case GPK_F16: case GPK_BF16: return gemm16(ctx, args);
        default: return fail(&ctx, GPK_ERROR_NOT_SUPPORTED, "gemm variant \"cublas\" does not support dtype %d", args.dtype);
    }
}

}  // namespace gpk::cuda
