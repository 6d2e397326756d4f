// Rung 13, skinny: products with a short side, C = op(A) op(B) with m or n at most
// 128 -- a few rows against a large matrix (a decode step, a block of right-hand
// sides, a panel update). They are bound by reading the large operand W once, and the
// rungs below, built for big tiles, reach a fraction of that: their tiles hang mostly
// over the short side, and their k loop runs on a handful of blocks. Here
// (membound/kernel.cuh):
//
// * k is split into pieces of 2048 (longer past 256 pieces: skinny_splits), each
//   (piece, 128 rows of W) one block, so even a short W fills the GPU; W streams
//   through shared memory once, in 16-byte copies, X's slice of the piece beside it,
//   and the whole short side is computed per block (up to 128 columns; beyond 64 in
//   F64, two blocks share W's tile through L2).
// * The small side is n, or m through the transpose identity (C^T = op(B)^T op(A)^T),
//   so both orientations of W and every transposition are one kernel family.
// * F32 and F64 run on the FMA units, exact. In GPK_MATH_TF32 F32 is computed the
//   same way, exactly: the mode allows TF32 products, and exact ones are within its
//   tolerance. F16 and BF16 run on mma.sync tensor cores, F32 accumulation, C rounded
//   once.
//
// Deterministic and batch-invariant: the splits are joined in a fixed order by a
// second kernel, no atomics, and every element's order depends on k alone
// (membound/order.hpp), so row i of C has the same bits whether the call has 1 row or
// 128, and every run gives the same bits. Calls with both m and n above 128, and GPUs
// below sm_80, are refused (GPK_ERROR_NOT_SUPPORTED naming the rung).
#include "membound/launch.cuh"

namespace gpk::cuda {
namespace membound {
namespace {

// The configuration by the short side s: 128 rows of W a block, all of s (F64 up to
// 64), one k-group (the order must not depend on s). Thread tiles (RP rows by TQ
// columns) grow with s, so that short sides still give every SM warps to run; k-tiles
// of 128 bytes, 64 from 32 (F64: 16) columns on, where X's tiles grow.
Plan<float, float> f32_plan(int64_t s, bool wk, bool xk) {
    if (s <= 1) return SimtCfg<float, 1, 128, 1, 1, 1, 32>::plan(wk, xk);
    if (s <= 2) return SimtCfg<float, 1, 128, 2, 1, 1, 32>::plan(wk, xk);
    if (s <= 4) return SimtCfg<float, 1, 128, 4, 1, 1, 32>::plan(wk, xk);
    if (s <= 8) return SimtCfg<float, 1, 128, 8, 1, 1, 32>::plan(wk, xk);
    if (s <= 16) return SimtCfg<float, 2, 64, 8, 2, 1, 32>::plan(wk, xk);
    if (s <= 32) return SimtCfg<float, 4, 32, 8, 4, 1, 32>::plan(wk, xk);
    if (s <= 64) return SimtCfg<float, 4, 32, 8, 8, 1, 16>::plan(wk, xk);
    return SimtCfg<float, 4, 32, 8, 16, 1, 16>::plan(wk, xk);
}

Plan<double, double> f64_plan(int64_t s, bool wk, bool xk) {
    if (s <= 1) return SimtCfg<double, 1, 128, 1, 1, 1, 16>::plan(wk, xk);
    if (s <= 2) return SimtCfg<double, 1, 128, 2, 1, 1, 16>::plan(wk, xk);
    if (s <= 4) return SimtCfg<double, 1, 128, 4, 1, 1, 16>::plan(wk, xk);
    if (s <= 8) return SimtCfg<double, 2, 64, 4, 2, 1, 16>::plan(wk, xk);
    if (s <= 16) return SimtCfg<double, 4, 32, 4, 4, 1, 16>::plan(wk, xk);
    if (s <= 32) return SimtCfg<double, 4, 32, 4, 8, 1, 8>::plan(wk, xk);
    return SimtCfg<double, 4, 32, 4, 16, 1, 8>::plan(wk, xk);
}

template <bool kBf16>
Plan<uint16_t, float> half_plan(int64_t s, bool wk, bool xk) {
    if (s <= 16) return MmaCfg<kBf16, 8, 1, 1, 64>::plan(wk, xk);
    if (s <= 32) return MmaCfg<kBf16, 8, 2, 1, 64>::plan(wk, xk);
    if (s <= 64) return MmaCfg<kBf16, 8, 4, 1, 32>::plan(wk, xk);
    return MmaCfg<kBf16, 8, 8, 1, 32>::plan(wk, xk);
}

struct Skinny {
    static constexpr const char *kName = "skinny";
    static Plans plans(const Form &f) { return skinny_plans(f.s, f.wk, f.xk); }
    static Splits splits(const Form &, int64_t k, const Plans &, int) { return skinny_splits(k); }
};

}  // namespace

Plans skinny_plans(int64_t s, bool wk, bool xk) {
    return Plans{f32_plan(s, wk, xk), f64_plan(s, wk, xk), half_plan<false>(s, wk, xk), half_plan<true>(s, wk, xk)};
}

}  // namespace membound

gpk_status gemm_skinny_takes(gpk_context &ctx, const GemmArgs &args, const char **why_not) {
    return membound::rung_takes<membound::Skinny>(ctx, args, why_not);
}

gpk_status gemm_skinny(gpk_context &ctx, const GemmArgs &args) { return membound::rung_run<membound::Skinny>(ctx, args); }

}  // namespace gpk::cuda
