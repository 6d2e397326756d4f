// What the reduce rungs from rung 2 up share: the passes that take x to partials and
// partials to the result, the grid of a grid-stride rung, and the thread- and
// block-level steps each rung introduces and the rungs above it keep (the last warp of
// rung 5, the unrolled tree of rung 6, the eight tiles of rung 8, the shuffles of
// rung 9, the 16-byte loads of rung 10).
//
// Every step combines values in an order fixed by n, the rung and the grid, never by
// timing, so results repeat bit for bit from run to run.
#pragma once

#include "../kernel_util.cuh"
#include "../resources.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <utility>

namespace gpk::cuda::reduce {

// ---- passes -----------------------------------------------------------------------

// A pass kernel: in[0..count) to one partial per block, written to out[blockIdx.x].
template <class In, class Acc>
using PassKernel = void (*)(const In *, int64_t, Acc *);

// How a rung's kernel covers its input. A tile is the per_block elements a block takes
// at a time.
//  - Tiled passes (max_grid == 0; rungs 2 to 6, as in the lecture): block b reduces
//    tile b and nothing else, so a pass has one block per tile. A grid holds at most
//    kMaxGridX blocks; a larger pass takes several launches, each starting on a tile
//    boundary, so block b of the whole pass still writes partial b.
//  - Grid-stride passes (max_grid > 0; rungs 7 up): at most max_grid blocks, each
//    looping over tiles b, b + grid, b + 2 grid, ...; one launch takes any n.
struct PassShape {
    int block;          // threads per block
    int64_t per_block;  // elements per tile, >= 2
    int64_t max_grid;   // grid-stride passes: most blocks, in [1, kMaxGridX]; tiled: 0

    // Partials a pass leaves of `count` >= 1 values: fewer than count when count > 1.
    int64_t partials(int64_t count) const {
        const int64_t tiles = count / per_block + (count % per_block != 0 ? 1 : 0);
        return max_grid > 0 ? std::min(tiles, max_grid) : tiles;
    }
};

// One pass: in[0..count) to shape.partials(count) values in out.
template <class In, class Acc>
gpk_status launch_pass(gpk_context &ctx, const PassShape &shape, PassKernel<In, Acc> kernel, const char *name,
                       const In *in, int64_t count, Acc *out) {
    if (shape.max_grid > 0) {
        const auto grid = static_cast<unsigned int>(shape.partials(count));
        kernel<<<grid, shape.block, 0, stream(ctx)>>>(in, count, out);
        GPK_LAUNCH_CHECK(ctx, name);
        return GPK_SUCCESS;
    }
    const int64_t max_launch = kMaxGridX * shape.per_block;
    for (int64_t offset = 0; offset < count; offset += max_launch) {
        const int64_t part = std::min(count - offset, max_launch);
        const auto grid = static_cast<unsigned int>(shape.partials(part));
        kernel<<<grid, shape.block, 0, stream(ctx)>>>(in + offset, part, out + offset / shape.per_block);
        GPK_LAUNCH_CHECK(ctx, name);
    }
    return GPK_SUCCESS;
}

// x[0..n) to *result: a first pass of `first` over x, then passes of `rest` over the
// partials until one block is left, which writes the result.
template <class T, class Op>
gpk_status run_passes(gpk_context &ctx, const ReduceArgs &args, const PassShape &shape,
                      PassKernel<T, accumulator_t<T>> first, PassKernel<accumulator_t<T>, accumulator_t<T>> rest,
                      const char *name) {
    using Acc = accumulator_t<T>;
    const T *x = static_cast<const T *>(args.x);
    Acc *result = static_cast<Acc *>(args.result);
    const int64_t first_count = shape.partials(args.n);
    if (first_count == 1) return launch_pass<T, Acc>(ctx, shape, first, name, x, args.n, result);

    // Partials ping-pong between two pieces of one scratch request: the first holds
    // the first pass's output, the second the next pass's, and every later pass is
    // smaller still.
    const int64_t second_count = shape.partials(first_count);
    void *scratch = nullptr;
    GPK_FORWARD_IF_ERROR(
        buffer(ctx, Slot::Scratch, static_cast<size_t>(first_count + second_count) * sizeof(Acc), &scratch));
    Acc *src = static_cast<Acc *>(scratch);
    Acc *dst = src + first_count;

    GPK_FORWARD_IF_ERROR((launch_pass<T, Acc>(ctx, shape, first, name, x, args.n, src)));
    int64_t count = first_count;
    while (shape.partials(count) > 1) {
        GPK_FORWARD_IF_ERROR((launch_pass<Acc, Acc>(ctx, shape, rest, name, src, count, dst)));
        count = shape.partials(count);
        std::swap(src, dst);
    }
    return launch_pass<Acc, Acc>(ctx, shape, rest, name, src, count, result);
}

// Blocks of `block` threads of `kernel` that the context's GPU holds at once, at least
// one: the grid of a grid-stride rung. It depends on the GPU and the build only, so
// the reduction tree, and with it the result, is the same from run to run.
template <class Kernel>
gpk_status resident_grid(gpk_context &ctx, Kernel kernel, int block, int64_t *blocks) {
    int sms = 0, per_sm = 0;
    GPK_CUDA_TRY(ctx, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, ctx.device));
    GPK_CUDA_TRY(ctx, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block, 0));
    *blocks = std::min<int64_t>(kMaxGridX, int64_t{std::max(1, sms)} * std::max(1, per_sm));
    return GPK_SUCCESS;
}

// ---- block trees in shared memory (rungs 5 to 8) ----------------------------------

// The last six steps of a shared-memory tree, run by threads 0..31 once sdata[0..64)
// holds the block's last 64 values; returns the block's value in thread 0.
//
// The lecture ran these steps without any barrier on a volatile sdata, trusting the
// 32 threads of a warp to run in lockstep. Since Volta the threads of a warp are
// scheduled independently, and nothing then stops thread t from reading sdata[t + 16]
// before or after thread t + 16 has updated it. A __syncwarp() between each step's
// reads and its writes, and another before the next step's reads, restores the order
// the lecture assumed, at the cost of a warp barrier rather than a block barrier; the
// barrier also orders the shared-memory accesses, so no volatile is needed.
template <class Acc, class Op>
__device__ __forceinline__ Acc warp_reduce_smem(Acc *sdata, unsigned int tid) {
    Acc v = sdata[tid];
#pragma unroll
    for (unsigned int s = 32; s > 0; s >>= 1) {
        v = Op()(v, sdata[tid + s]);  // tid + s <= 63
        __syncwarp();
        sdata[tid] = v;
        __syncwarp();
    }
    return v;
}

// Rung 6's tree: the block size is a compile-time constant, so the loop unrolls
// completely and every `tid < s` compares against a constant. Every thread passes its
// value; the block's value is returned in thread 0. Callers that use it twice in one
// kernel put a __syncthreads() between the two.
template <int kBlock, class Acc, class Op>
__device__ __forceinline__ Acc block_reduce_smem(Acc v) {
    static_assert(kBlock >= 64 && kBlock <= 1024 && (kBlock & (kBlock - 1)) == 0,
                  "the tree needs a power-of-two block of 64 to 1024 threads");
    __shared__ Acc sdata[kBlock];
    const unsigned int tid = threadIdx.x;
    sdata[tid] = v;
    __syncthreads();
#pragma unroll
    for (unsigned int s = kBlock / 2; s > 32; s >>= 1) {
        if (tid < s) sdata[tid] = Op()(sdata[tid], sdata[tid + s]);
        __syncthreads();
    }
    if (tid < 32) v = warp_reduce_smem<Acc, Op>(sdata, tid);
    return v;
}

// ---- block trees in registers (rungs 9 up) ----------------------------------------

// Shared with the pi ladder (kernel_util.cuh).
using ::gpk::cuda::block_reduce_shuffle;
using ::gpk::cuda::warp_reduce_shuffle;

// ---- per-thread loads (rungs 8 up) ------------------------------------------------

// Rung 8's loop: the thread's value over x[0..n), the block taking kTiles tiles of
// kBlock consecutive elements per step, grid-stride. A whole step's kTiles loads are
// independent and issued before any is used; only the one step that runs past n
// checks its indices.
template <int kBlock, int kTiles, class In, class Acc, class Op>
__device__ __forceinline__ Acc thread_reduce_tiles(const In *__restrict__ x, int64_t n) {
    constexpr int64_t kStep = int64_t{kBlock} * kTiles;
    const int64_t stride = int64_t{gridDim.x} * kStep;
    Acc acc = Op::template identity<Acc>();
    int64_t step = int64_t{blockIdx.x} * kStep;
    for (; step + kStep <= n; step += stride) {
        const In *p = x + step + threadIdx.x;
        In a[kTiles];
#pragma unroll
        for (int k = 0; k < kTiles; ++k) a[k] = p[k * kBlock];
#pragma unroll
        for (int k = 0; k < kTiles; ++k) acc = Op()(acc, static_cast<Acc>(a[k]));
    }
    // Only the last step of the array can be partial, and only one block reaches it.
    if (step < n) {
#pragma unroll
        for (int k = 0; k < kTiles; ++k) {
            const int64_t i = step + k * kBlock + threadIdx.x;
            if (i < n) acc = Op()(acc, static_cast<Acc>(x[i]));
        }
    }
    return acc;
}

// acc combined with the lanes of v, the lanes first paired among themselves.
template <class Acc, class Op, class V>
__device__ __forceinline__ Acc fold(Acc acc, const V &v) {
    if constexpr (kIsHalves8<V>) {
        Acc pair[4];
#pragma unroll
        for (int q = 0; q < 4; ++q) pair[q] = Op()(static_cast<Acc>(v.h[2 * q]), static_cast<Acc>(v.h[2 * q + 1]));
        return Op()(acc, Op()(Op()(pair[0], pair[1]), Op()(pair[2], pair[3])));
    } else if constexpr (sizeof(V) / sizeof(v.x) == 4)
        return Op()(acc, Op()(Op()(static_cast<Acc>(v.x), static_cast<Acc>(v.y)),
                              Op()(static_cast<Acc>(v.z), static_cast<Acc>(v.w))));
    else
        return Op()(acc, Op()(static_cast<Acc>(v.x), static_cast<Acc>(v.y)));
}

// Rung 10's loop: the thread's value over x[0..n) read with 16-byte loads, kUnroll of
// them in flight per thread. x need only be aligned to its element: the head (the
// elements before the first 16-byte boundary) and the tail (those after the last
// whole vector), fewer than 16 bytes each, are loaded one by one by the first threads
// of the grid. The block takes kUnroll tiles of kBlock vectors per step, grid-stride.
template <int kBlock, int kUnroll, class In, class Acc, class Op>
__device__ __forceinline__ Acc thread_reduce_vec16(const In *__restrict__ x, int64_t n) {
    using V = typename Vec16<In>::type;
    constexpr int kLanes = 16 / sizeof(In);
    constexpr int64_t kStep = int64_t{kBlock} * kUnroll;  // vectors per block and step
    const auto misalign = static_cast<int64_t>(reinterpret_cast<uintptr_t>(x) & 15);
    const int64_t head_max = ((16 - misalign) & 15) / static_cast<int64_t>(sizeof(In));
    const int64_t head = head_max < n ? head_max : n;
    const int64_t vectors = (n - head) / kLanes;
    const int64_t tail = head + vectors * kLanes;  // x[tail..n): fewer than kLanes elements
    const V *xv = reinterpret_cast<const V *>(x + head);
    const int64_t thread = int64_t{blockIdx.x} * kBlock + threadIdx.x;

    Acc acc = Op::template identity<Acc>();
    if (thread < head) acc = Op()(acc, static_cast<Acc>(x[thread]));
    if (thread < n - tail) acc = Op()(acc, static_cast<Acc>(x[tail + thread]));

    const int64_t stride = int64_t{gridDim.x} * kStep;
    int64_t step = int64_t{blockIdx.x} * kStep;
    for (; step + kStep <= vectors; step += stride) {
        const V *p = xv + step + threadIdx.x;
        V a[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) a[u] = p[u * kBlock];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) acc = fold<Acc, Op>(acc, a[u]);
    }
    if (step < vectors) {
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
            const int64_t i = step + u * kBlock + threadIdx.x;
            if (i < vectors) acc = fold<Acc, Op>(acc, xv[i]);
        }
    }
    return acc;
}

}  // namespace gpk::cuda::reduce
