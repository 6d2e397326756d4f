// What the gemm rungs from 02 up share: reading op(A) and op(B) through their
// transposes, the alpha/beta epilogue, the grid of C tiles, 16-byte vectors, the
// cp.async copies of rungs 08 and 09, and the dtype switch.
//
// Every launcher receives column-major arguments with m, n > 0 and k >= 1 (a call
// whose product vanishes is answered by the naive rung before reaching a rung), but
// the kernels stay correct for k == 0: no k-tile runs and C becomes beta * C.
#pragma once

#include "../cp_async.cuh"
#include "../kernel_util.cuh"
#include "../ladders.hpp"
#include "../resources.hpp"

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

namespace gpk::cuda::gemm_util {

// ---- operands ---------------------------------------------------------------------

// Element (r, c) of op(X), X column-major with leading dimension ld.
template <class T>
__device__ __forceinline__ T op_at(const T *__restrict__ X, int64_t ld, bool trans, int64_t r, int64_t c) {
    return trans ? X[c + r * ld] : X[r + c * ld];
}

// The same, zero outside the rows x cols of op(X): tiles that hang over an edge are
// padded with zeros, which add nothing to the dot products.
template <class T>
__device__ __forceinline__ T op_at_or_zero(const T *__restrict__ X, int64_t ld, bool trans, int64_t r, int64_t c,
                                           int64_t rows, int64_t cols) {
    return r < rows && c < cols ? op_at(X, ld, trans, r, c) : T(0);
}

// C(i, j) = alpha * acc + beta * C(i, j). With beta == 0 C is only written, so NaN
// or garbage in it does not leak into the result (BLAS).
template <class T>
__device__ __forceinline__ void store_c(T *c, T alpha, T acc, T beta) {
    *c = beta == T(0) ? alpha * acc : alpha * acc + beta * *c;
}

// ---- grids ------------------------------------------------------------------------

// Blocks over the tiles of C: x over the tiles of m, y over those of n, capped at
// 65535. Kernels walk the tiles grid-stride in both dimensions, so any m and n work.
inline dim3 tile_grid(int64_t m, int64_t n, int64_t tile_m, int64_t tile_n) {
    return dim3(grid_size(m, tile_m), grid_size(n, tile_n, kMaxGridYZ));
}

// ---- 16-byte vectors (Vec16, kernel_util.cuh) ---------------------------------------

// Whether 16-byte accesses fit a matrix: its pointer 16-byte aligned and its leading
// dimension a whole number of vectors, so that every column (or row) starting at a
// multiple of the vector width is aligned too. Runs that cross an edge of the matrix
// still go element by element.
template <class T>
bool vec16_ok(const void *p, int64_t ld) {
    return reinterpret_cast<uintptr_t>(p) % 16 == 0 && ld % Vec16<T>::kLanes == 0;
}

// The asynchronous copies of rungs 08 and 09 are cp_async.cuh's.

// ---- launching --------------------------------------------------------------------

// An attribute of the context's GPU.
inline gpk_status device_attribute(gpk_context &ctx, cudaDeviceAttr attr, int *value) {
    GPK_CUDA_TRY(ctx, cudaDeviceGetAttribute(value, attr, ctx.device));
    return GPK_SUCCESS;
}

// Whether the context's GPU runs a kernel that needs compute capability 8.0
// (cp.async, FP64 tensor cores) and `bytes` of dynamic shared memory per block:
// *why_not is null when it does, else the reason.
inline gpk_status takes_sm80(gpk_context &ctx, size_t bytes, const char **why_not) {
    int major = 0, optin = 0;
    GPK_FORWARD_IF_ERROR(device_attribute(ctx, cudaDevAttrComputeCapabilityMajor, &major));
    GPK_FORWARD_IF_ERROR(device_attribute(ctx, cudaDevAttrMaxSharedMemoryPerBlockOptin, &optin));
    *why_not = major < 8                                   ? "it needs a GPU of compute capability 8.0 or newer"
               : bytes > static_cast<size_t>(optin) ? "the GPU cannot give a block the shared memory it needs"
                                                           : nullptr;
    return GPK_SUCCESS;
}

// Lets `kernel` use `bytes` of dynamic shared memory. *fits is false when the GPU
// cannot give a block that much.
template <class Kernel>
gpk_status allow_shared(gpk_context &ctx, Kernel kernel, size_t bytes, bool *fits) {
    int optin = 0;
    GPK_FORWARD_IF_ERROR(device_attribute(ctx, cudaDevAttrMaxSharedMemoryPerBlockOptin, &optin));
    *fits = bytes <= static_cast<size_t>(optin);
    if (*fits && bytes > 48 * 1024)
        GPK_CUDA_TRY(ctx, cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                               static_cast<int>(bytes)));
    return GPK_SUCCESS;
}

// The F32 or F64 instantiation of a rung, by the call's dtype.
inline gpk_status by_dtype(gpk_context &ctx, const GemmArgs &args, const char *variant,
                           Launcher<GemmArgs> f32, Launcher<GemmArgs> f64) {
    switch (args.dtype) {
        case GPK_F32: return f32(ctx, args);
        case GPK_F64: return f64(ctx, args);
        default:
            return fail(&ctx, GPK_ERROR_NOT_SUPPORTED, "gemm variant \"%s\" supports F32 and F64 only", variant);
    }
}

}  // namespace gpk::cuda::gemm_util
