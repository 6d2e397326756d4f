// Rung 10, prefetch: rung 7's 8x8 register blocks, with every wait taken off the
// multiply-adds. Rung 7 stops the whole block twice per k-tile: it loads the next
// tiles from global memory only once the current ones are used up, then waits for
// them at a barrier, and each step of k waits for its shared-memory reads. Rung 8
// hid the global loads with cp.async, but its operand that is contiguous along k can
// only be transposed into the k-major tile with 4-byte copies, and its loads keep
// the layout and alignment tests of every element at run time. Here:
//
// * Global loads are prefetched into registers one k-tile ahead: the loads of tile
//   t + 1 are issued before the multiply-adds of tile t and stored to shared memory
//   after them, so their latency runs under 512 multiply-adds per thread.
// * Shared memory is double-buffered: the prefetched tile goes to the other buffer,
//   so one __syncthreads() per k-tile is enough.
// * Fragments are double-buffered in registers: the operands of step p + 1 are read
//   from shared memory while step p multiplies.
// * The layout of each operand (contiguous along the tile's long side, or along k) is
//   a template parameter, so each of the four cases is its own kernel with no layout
//   test in the loop. A thread loads 4 consecutive elements per piece of a tile, as
//   one 16-byte load when the operand is aligned for it and the piece lies inside the
//   matrix, else as 4 checked element loads; the operand contiguous along k is
//   transposed on its way into shared memory by 4 scalar stores, which cost nothing
//   next to the 512 multiply-adds they feed.
// * A warp's 32 lanes are 8 along m by 4 along n, so each 16-byte shared-memory read
//   of a step touches 8 consecutive vectors of A or 4 of B: one wavefront each.
// * Each step's multiply-adds go column by column of the thread's block (one element
//   of B against the thread's elements of A), which ptxas schedules better than row
//   by row: faster at every tile tried (docs/PERFORMANCE.md, section "Auto: gemm").
//
// The block tile is chosen by the number of tiles the GPU can run at once: 128x128
// when C has enough of them to fill the GPU (128 threads of 8x16, two blocks per SM;
// 256 threads of 8x8 when A or B cannot take 16-byte loads), 64x64 with k-tiles of 16
// (128 threads of 4x8) for small C, where a larger grid would leave SMs idle and each
// SM runs few warps, so the prefetch must reach further ahead. scripts/tune-gemm chose
// them on the H100 against 128x64 tiles with two warps, 256x64 tiles, 16x8 threads
// and k-tiles of 16 (what each measured: docs/PERFORMANCE.md, section "Auto: gemm").
// F32 only: the F64 path is rung 9's FP64 tensor cores. The kernel is
// prefetch_kernel.cuh's (batched rung 3 runs it too). Both tiles and the order can be
// overridden at compile time with -DGPK_PREFETCH_TUNE_{BM,BN,BK,TM,TN,MINBLOCKS,ORDER,
// SMALL_BM,SMALL_BN,SMALL_BK,SMALL_TM,SMALL_TN}=... (scripts/tune-gemm).
#include "gemm_util.cuh"
#include "prefetch_kernel.cuh"

#ifndef GPK_PREFETCH_TUNE_BM
#define GPK_PREFETCH_TUNE_BM 128
#endif
#ifndef GPK_PREFETCH_TUNE_BN
#define GPK_PREFETCH_TUNE_BN 128
#endif
#ifndef GPK_PREFETCH_TUNE_BK
#define GPK_PREFETCH_TUNE_BK 8
#endif
#ifndef GPK_PREFETCH_TUNE_TM
#define GPK_PREFETCH_TUNE_TM 8
#endif
#ifndef GPK_PREFETCH_TUNE_TN
#define GPK_PREFETCH_TUNE_TN 16
#endif
#ifndef GPK_PREFETCH_TUNE_MINBLOCKS
#define GPK_PREFETCH_TUNE_MINBLOCKS 2
#endif
#ifndef GPK_PREFETCH_TUNE_SMALL_BM
#define GPK_PREFETCH_TUNE_SMALL_BM 64
#endif
#ifndef GPK_PREFETCH_TUNE_SMALL_BN
#define GPK_PREFETCH_TUNE_SMALL_BN 64
#endif
#ifndef GPK_PREFETCH_TUNE_SMALL_BK
#define GPK_PREFETCH_TUNE_SMALL_BK 16
#endif
#ifndef GPK_PREFETCH_TUNE_SMALL_TM
#define GPK_PREFETCH_TUNE_SMALL_TM 4
#endif
#ifndef GPK_PREFETCH_TUNE_SMALL_TN
#define GPK_PREFETCH_TUNE_SMALL_TN 8
#endif

namespace gpk::cuda {
namespace {

using namespace gemm_util;
using prefetch::Config;

// The large tile for operands that take 16-byte loads, and for those that do not
// (element loads: more threads, each with fewer of them, did better there).
using Large = Config<GPK_PREFETCH_TUNE_BM, GPK_PREFETCH_TUNE_BN, GPK_PREFETCH_TUNE_BK, GPK_PREFETCH_TUNE_TM,
                     GPK_PREFETCH_TUNE_TN, GPK_PREFETCH_TUNE_MINBLOCKS>;
using LargeScalar = Config<128, 128, 8, 8, 8, 2>;
using Small = Config<GPK_PREFETCH_TUNE_SMALL_BM, GPK_PREFETCH_TUNE_SMALL_BN, GPK_PREFETCH_TUNE_SMALL_BK, GPK_PREFETCH_TUNE_SMALL_TM,
                     GPK_PREFETCH_TUNE_SMALL_TN, 1>;

template <class Cfg, bool kAContigM, bool kBContigN>
gpk_status launch(gpk_context &ctx, const GemmArgs &args) {
    const float *A = static_cast<const float *>(args.A);
    const float *B = static_cast<const float *>(args.B);
    float *C = static_cast<float *>(args.C);
    // One product: strides 0, the product offsets compiled out.
    prefetch::kernel<Cfg, kAContigM, kBContigN, false>
        <<<tile_grid(args.m, args.n, Cfg::kTileM, Cfg::kTileN), Cfg::kThreads, 0, stream(ctx)>>>(
            args.m, args.n, args.k, static_cast<float>(args.alpha), A, args.lda, 0, B, args.ldb, 0,
            static_cast<float>(args.beta), C, args.ldc, 0, 0, 1, vec16_ok<float>(A, args.lda),
            vec16_ok<float>(B, args.ldb), vec16_ok<float>(C, args.ldc));
    GPK_LAUNCH_CHECK(ctx, "gemm prefetch::kernel");
    return GPK_SUCCESS;
}

// The four operand layouts of one tile configuration, as a table.
template <class Cfg>
gpk_status launch_layout(gpk_context &ctx, const GemmArgs &args) {
    // [transa][transb]: A is contiguous along m unless transposed, B along n only when
    // transposed.
    static constexpr Launcher<GemmArgs> kByLayout[2][2] = {
        {launch<Cfg, true, false>, launch<Cfg, true, true>},
        {launch<Cfg, false, false>, launch<Cfg, false, true>},
    };
    return kByLayout[args.transa][args.transb](ctx, args);
}

gpk_status gemm_f32(gpk_context &ctx, const GemmArgs &args) {
    // The large tile when its grid fills every SM with the blocks it can hold, else
    // the small one.
    int sms = 0;
    GPK_FORWARD_IF_ERROR(device_attribute(ctx, cudaDevAttrMultiProcessorCount, &sms));
    const int64_t large_tiles = ((args.m + Large::kTileM - 1) / Large::kTileM) *
                                ((args.n + Large::kTileN - 1) / Large::kTileN);
    if (large_tiles < int64_t(sms) * Large::kMinBlocks) return launch_layout<Small>(ctx, args);
    const bool vec = vec16_ok<float>(args.A, args.lda) && vec16_ok<float>(args.B, args.ldb);
    return vec ? launch_layout<Large>(ctx, args) : launch_layout<LargeScalar>(ctx, args);
}

}  // namespace

gpk_status gemm_prefetch(gpk_context &ctx, const GemmArgs &args) {
    if (args.dtype != GPK_F32)
        return fail(&ctx, GPK_ERROR_NOT_SUPPORTED, "gemm variant \"prefetch\" supports F32 only");
    return gemm_f32(ctx, args);
}

}  // namespace gpk::cuda
