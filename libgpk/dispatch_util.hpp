// What dispatch.cpp and dispatch_batched.cpp share: where an array lives, and the
// stream-ordered copies on the context's stream that device-array validation and the
// batched gemm's staging use.
#pragma once

#include "context.hpp"
#include "ops.hpp"

#include <cuda_runtime.h>

#include <functional>

namespace gpk {

bool gpus_present();
// Where p lives: true for memory of the context's GPU. On the host backend device
// memory is an invalid argument.
gpk_status locate(gpk_context &ctx, const void *p, const char *name, bool *device);
// Copies a matrix of `outer` lines of `inner` elements between leading dimensions.
gpk_status copy_matrix(gpk_context &ctx, void *dst, int64_t dld, const void *src, int64_t sld, int64_t inner,
                       int64_t outer, size_t elem, cudaMemcpyKind kind);
gpk_status copy_bytes(gpk_context &ctx, void *dst, const void *src, size_t bytes, cudaMemcpyKind kind);
gpk_status sync(gpk_context &ctx);

// gpk_gemm_ex / gpk_gemm_blockscaled on the CUDA backend with some array (A, B, C or a
// scale array) in host memory (dispatch_ex.cpp): every host array is copied into one
// device buffer, packed, `device` runs the call on the device copies (device arrays
// used in place), and C comes back. NOT_SUPPORTED, before anything is written, when
// the copies do not fit the device.
gpk_status gemm_ex_staged(gpk_context &ctx, const GemmArgs &a,
                          const std::function<gpk_status(const GemmArgs &)> &device);

// gpk_gemm_strided_batched on the CUDA backend with rung `index` (dispatch_batched.cpp).
gpk_status gemm_batched_cuda(gpk_context &ctx, const GemmBatchedCall &c, int index);

}  // namespace gpk
