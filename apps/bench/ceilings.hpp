// Ceiling kernels for memory-bound ops: what moving the same bytes costs when
// nothing has to be rearranged. The transpose table times them next to the ladder
// (as rows marked "ceiling") so that each rung reads as a fraction of a copy.
//
// Both launch asynchronously on `stream` and return the launch's error, if any.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace gpk_bench {

// dst = src, `bytes` bytes, as a grid-stride loop of 16-byte loads and stores
// (both pointers 16-byte aligned, as cudaMalloc's are). Every byte is read once
// and written once, fully coalesced: the bandwidth roof for a transpose.
cudaError_t launch_copy(const void *src, void *dst, size_t bytes, cudaStream_t stream);

// dst = src for a rows x cols column-major matrix (leading dimension rows) of
// 4- or 8-byte elements, staged 32x32 tile by tile through shared memory with a
// __syncthreads between load and store, as a tiled transpose does, but with no
// transposition: what the tiling costs before any bank conflict or strided access.
cudaError_t launch_copy_smem(const void *src, void *dst, int64_t rows, int64_t cols, size_t elem_bytes,
                             cudaStream_t stream);

}  // namespace gpk_bench
