// Ceiling kernels for memory-bound ops: what moving the same bytes costs when
// nothing has to be rearranged. The transpose table times them next to the ladder
// (as rows marked "ceiling") so that each rung reads as a fraction of a copy. And
// the pi table's reference kernel, a yardstick timed the same way.
//
// All launch asynchronously on `stream` and return the launch's error, if any.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace gpk_bench {

// An empty kernel of one block: queued between the L2 flush and a timed call's start
// event (harness.cpp says why).
cudaError_t launch_settle(cudaStream_t stream);

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

// The pi table's reference, "simple fused (reference)": the simple fused Monte
// Carlo kernel of the cuRAND device API (Philox, curand_uniform4, a block
// reduction, one atomic per block), the yardstick of the pi ladder (about 550 G
// samples/s on an H100). It is no variant of the library: its points are its own stream, so its hits are held to
// the statistics only. One resident wave of 256-thread blocks, each thread drawing
// pairs_per_thread calls of curand_uniform4 (two points each); `drawn` is what a
// call draws in all, samples rounded up to a whole number of calls per thread.
struct PiReferenceShape {
    unsigned blocks = 0;
    unsigned block_threads = 0;
    uint64_t pairs_per_thread = 0;
    uint64_t drawn = 0;
};

// The launch shape for `samples` (1 <= samples <= 2^63) on `device`, the current
// device: its multiprocessors times the blocks of the kernel that fit on one.
cudaError_t pi_reference_shape(int device, uint64_t samples, PiReferenceShape *shape);

// One estimate on `stream`: *hits (device memory) set to 0, then the kernel,
// launched several times when one launch would overflow its 32-bit warp counts,
// each launch drawing the next points of every thread's subsequence. *hits ends as
// the points of shape.drawn inside the quarter circle.
cudaError_t launch_pi_reference(const PiReferenceShape &shape, uint64_t seed, unsigned long long *hits,
                                cudaStream_t stream);

}  // namespace gpk_bench
