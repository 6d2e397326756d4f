// The shape that every kernel of the wgmma family (gemm rungs 12_wgmma_ws and
// 15_wgmma_fp8) shares, and that the family's other headers build on: a block of three
// warpgroups (one producer, two consumers) computing 128-row tiles, in clusters of two
// blocks that share each Y tile; operand rows of 128 bytes, the width of the 128-byte
// swizzle that TMA writes and wgmma's descriptors read; the epilogue's staging in
// shared memory. What differs between the rungs (the tile's width, the ring's depth,
// the shared memory of each configuration) stays in the rung's file.
//
// GPK_SM90A_CODE is defined in the device pass for the architecture-specific target
// sm_90a alone, the only code in which wgmma, setmaxnreg, clusters and TMA assemble:
// the kernels' bodies and the device helpers of the family exist under it, and are
// empty elsewhere (the launchers then answer NOT_SUPPORTED, see maps.cuh).
#pragma once

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define GPK_SM90A_CODE 1
#endif

namespace gpk::cuda::tc::wgmma {

constexpr int BP = 128, THREADS = 384;  // a tile's rows; a producer and two consumer warpgroups
constexpr int CLUSTER = 2;              // blocks sharing each Y tile
constexpr int ROW_BYTES = 128;          // one row of a k-tile: the width of the 128-byte swizzle
constexpr int X_BYTES = BP * ROW_BYTES;  // a stage's X tile
// The vector epilogue stages each consumer's accumulators through shared memory, 32
// columns of q at a time, as F32 rows padded by 16 bytes (so the fragment writes of one
// warp spread over the banks), then writes C in whole 4-element vectors along q.
constexpr int EPI_COLS = 32, EPI_ROW_BYTES = EPI_COLS * 4 + 16, EPI_BYTES = 64 * EPI_ROW_BYTES;
// The TMA-store epilogue (16-bit C, beta == 0) writes D through boxes of 64 x 64
// elements (one 128-byte swizzled row of q per row of p), staged in shared memory.
constexpr int OUT_BOX = 64, OUT_BOX_BYTES = OUT_BOX * ROW_BYTES;

#ifdef GPK_SM90A_CODE
// Read by the sm_90a kernel bodies alone: elsewhere it would be unused (a warning).
constexpr int MN_BOX_BYTES = 64 * ROW_BYTES;  // an MN-major box: 64 k-rows of 128 bytes
#endif

}  // namespace gpk::cuda::tc::wgmma
