// Rung 9, FP64 tensor cores: rung 8 does F64 on the FP64 FMA units, one multiply-add
// per instruction per thread. From sm_80 on, the tensor cores run FP64 too: an mma.sync
// .f64 multiplies tiles across a warp, 256 or 512 multiply-adds per instruction, in
// full FP64 (no lower-precision inputs, round-to-nearest). On the H100 that doubles the
// FP64 rate over the FMA units.
//
// * The warp's unit of work is a 16x8x4 product. On sm_90 it is one m16n8k4 instruction
//   (new in sm_90: the m8n8k4 of sm_80, twice as many instructions for the same work,
//   is reported to stay near half the H100's FP64 tensor rate), elsewhere two m8n8k4.
//   The m16n8k4 fragments are the two m8n8k4 ones stacked (rows g and g + 8 of A and
//   C, g = lane / 4), so everything around the instruction is the same on both.
// * Each warp computes a WM x WN sub-tile of the block's BM x BN tile of C, as
//   (WM/16) x (WN/8) mma tiles held in registers; per step of 4 along k it loads
//   WM/8 + WN/8 fragments from shared memory for (WM/16)(WN/8) mma, so larger warp
//   tiles need fewer shared-memory bytes per flop (64x32: 12 loads per 16 mma).
//   Fragments are double-buffered: those of the next step (and, across the barrier,
//   of the next k-tile) load while the mma of this step run.
// * k-tiles of BK come in through an S-stage cp.async ring as in rung 8, all in
//   16-byte copies: each operand tile is kept in its operand's own layout -- k-major
//   (S[p][o]) when the operand is contiguous along i or j, o-major (S[o][p]) when it
//   is contiguous along k -- so no copy has to transpose. The kernel is compiled for
//   the four layout pairs, so every shared-memory offset in the inner loop is a
//   compile-time constant from one base register.
//
// Bank conflicts. A fragment load has lane l = 4g + q read element (o0 + g, k0 + q) at
// (o0 + g)*so + (k0 + q)*sp: (so, sp) = (1, R) k-major, (R, 1) o-major, R the padded row
// (BM + 4, BN + 4 or BK + 4 doubles). 8-byte loads go as two half-warps (g = 0..3 and
// g = 4..7), each conflict-free when its 16 addresses fall in 16 different 8-byte bank
// slots (address / 8 bytes mod 16). With R = 4 * odd (R = 4 mod 8), R * c mod 16 over
// any 4 consecutive c is a permutation of {0, 4, 8, 12}; the coordinate R multiplies
// (q k-major, g o-major) takes those 4 slots, the other one (4 consecutive values)
// fills the gaps between them, and the warp-uniform o0, k0 shift every slot alike.
// Hence BM, BN and BK are multiples of 8 and rows are padded by 4 doubles, in every
// tile shape (static_asserts below).
//
// The kernel is dmma_kernel.cuh's (batched rung 4 runs it too); its tile sizes can be
// set at compile time (see there).
// F64 only. Below sm_80, or where the GPU cannot give a block the shared memory (more
// than 48 KiB needs the opt-in), the rung refuses the call (GPK_ERROR_NOT_SUPPORTED).
#include "dmma_kernel.cuh"
#include "gemm_util.cuh"

namespace gpk::cuda {
namespace {

using namespace gemm_util;

using dmma::kSmemBytes;
using dmma::kThreads;
using dmma::kTileM;
using dmma::kTileN;

gpk_status gemm(gpk_context &ctx, const GemmArgs &args) {
    const char *why_not = nullptr;
    GPK_FORWARD_IF_ERROR(takes_sm80(ctx, kSmemBytes, &why_not));
    if (why_not != nullptr) return refuse(ctx, "gemm", "dmma_f64", why_not);
    const dmma::Kernel kernel = dmma::kKernels<false>[args.transa][args.transb];
    bool fits = false;
    GPK_FORWARD_IF_ERROR(allow_shared(ctx, kernel, kSmemBytes, &fits));
    const double *A = static_cast<const double *>(args.A);
    const double *B = static_cast<const double *>(args.B);
    // One product: strides 0 (kKernels<false>: the product offsets compiled out).
    kernel<<<tile_grid(args.m, args.n, kTileM, kTileN), kThreads, kSmemBytes, stream(ctx)>>>(
        vec16_ok<double>(A, args.lda), vec16_ok<double>(B, args.ldb), args.m, args.n, args.k, args.alpha, A,
        args.lda, 0, B, args.ldb, 0, args.beta, static_cast<double *>(args.C), args.ldc, 0, 0);
    GPK_LAUNCH_CHECK(ctx, "gemm dmma::kernel");
    return GPK_SUCCESS;
}

}  // namespace

gpk_status gemm_dmma_f64_takes(gpk_context &ctx, const GemmArgs &, const char **why_not) {
    return takes_sm80(ctx, kSmemBytes, why_not);
}

gpk_status gemm_dmma_f64(gpk_context &ctx, const GemmArgs &args) {
    GPK_RETURN_ERROR_IF(args.dtype != GPK_F64, &ctx, GPK_ERROR_NOT_SUPPORTED,
                        "gemm variant \"dmma_f64\" supports F64 only");
    return gemm(ctx, args);
}

}  // namespace gpk::cuda
