// Rung 14, gram: Gram-like products C = op(A) op(B) with both m and n small (8 to
// 128) and k long (a million and more): X^T Y of two tall, thin matrices, as block
// Krylov and least-squares methods, covariances and tall-skinny QR form them. Their
// bytes are all in k, and the rungs below give C's few tiles to a few blocks, each
// walking the whole of k: most of the GPU idles. Rung skinny splits k in pieces of a
// fixed length, which fills the GPU only when the long side is long too. Here
// (membound/kernel.cuh):
//
// * k is split over the whole GPU: about 1024 blocks of (output tile, piece of k)
//   whatever the shape (gram_splits), each reducing its piece on chip, the pieces'
//   partials added by a second kernel in piece order.
// * The output tile fits C: 8x8, 16x16, 32x32 or 64x64 elements, the threads of a
//   block split between the tile's elements and k-groups that share each piece and
//   are joined by a fixed tree in shared memory (F16 and BF16: warps on 16x16 mma
//   tiles, the same way); from 65 rows, rung skinny's tiles.
// * Both layouts of both operands, every transposition, any leading dimension (16-byte
//   copies where the operand is aligned for them, element copies where not). F32 and
//   F64 on the FMA units, exact (GPK_MATH_TF32 too: exact products are within TF32's
//   tolerance), F16 and BF16 on mma.sync tensor cores with F32 accumulation and one
//   rounding of C.
//
// Deterministic: the order of every sum is fixed by the shape (membound/order.hpp),
// no atomics, the same bits every run. It is not batch-invariant (the pieces of k
// depend on how many tiles C has): that is rung skinny's promise. It takes what rung
// skinny takes: m or n at most 128, GPUs from sm_80 (else GPK_ERROR_NOT_SUPPORTED).
#include "membound/launch.cuh"

namespace gpk::cuda {
namespace membound {
namespace {

// The kernels of gram_shape's tiles (membound/order.hpp), by the long side L and the
// short side s <= L: k-groups fill 128 or 256 threads a block, and the k-tile gives
// every group a chunk (F32: 4 elements, F64 too) or an mma step (16) per tile. Tiles
// of 128 rows are rung skinny's kernels (one k-group), shared with 13_skinny.cu.
template <int64_t L, int64_t S>
using F32Cfg = SimtCfg<float, 4, gram_shape(L, S, 4).bp / 4, 8, gram_shape(L, S, 4).bq / 8, gram_shape(L, S, 4).groups,
                       (4 * gram_shape(L, S, 4).groups > 16 ? 4 * gram_shape(L, S, 4).groups : 16)>;
template <int64_t L, int64_t S>
using F64Cfg = SimtCfg<double, 4, gram_shape(L, S, 8).bp / 4, 4, gram_shape(L, S, 8).bq / 4, gram_shape(L, S, 8).groups,
                       (4 * gram_shape(L, S, 8).groups > 8 ? 4 * gram_shape(L, S, 8).groups : 8)>;
template <bool kBf16, int64_t L, int64_t S>
using HalfCfg = MmaCfg<kBf16, gram_shape(L, S, 2).bp / 16, gram_shape(L, S, 2).bq / 16, gram_shape(L, S, 2).groups,
                       (16 * gram_shape(L, S, 2).groups > 32 ? 16 * gram_shape(L, S, 2).groups : 32)>;

Plan<double, double> f64_plan(int64_t L, bool wk, bool xk) {
    if (L <= 8) return F64Cfg<8, 8>::plan(wk, xk);
    if (L <= 16) return F64Cfg<16, 16>::plan(wk, xk);
    if (L <= 32) return F64Cfg<32, 32>::plan(wk, xk);
    return F64Cfg<64, 64>::plan(wk, xk);
}

struct Gram {
    static constexpr const char *kName = "gram";

    static Plans plans(const Form &f) {
        const int64_t L = f.L;
        const bool wk = f.wk, xk = f.xk;
        if (L > 64) {
            // gram_shape's 128 x 64 and 128 x 128 tiles: skinny's kernels for s = 64, 128.
            static_assert(gram_shape(128, 64, 4).groups == 1 && gram_shape(128, 64, 2).groups == 1, "one k-group");
            Plans p = skinny_plans(f.s <= 64 ? 64 : 128, wk, xk);
            p.f64 = f64_plan(L, wk, xk);
            return p;
        }
        Plans p{};
        p.f64 = f64_plan(L, wk, xk);
        if (L <= 8) {
            p.f32 = F32Cfg<8, 8>::plan(wk, xk);
            p.f16 = HalfCfg<false, 16, 16>::plan(wk, xk), p.bf16 = HalfCfg<true, 16, 16>::plan(wk, xk);
        } else if (L <= 16) {
            p.f32 = F32Cfg<16, 16>::plan(wk, xk);
            p.f16 = HalfCfg<false, 16, 16>::plan(wk, xk), p.bf16 = HalfCfg<true, 16, 16>::plan(wk, xk);
        } else if (L <= 32) {
            p.f32 = F32Cfg<32, 32>::plan(wk, xk);
            p.f16 = HalfCfg<false, 32, 32>::plan(wk, xk), p.bf16 = HalfCfg<true, 32, 32>::plan(wk, xk);
        } else {
            p.f32 = F32Cfg<64, 64>::plan(wk, xk);
            p.f16 = HalfCfg<false, 64, 64>::plan(wk, xk), p.bf16 = HalfCfg<true, 64, 64>::plan(wk, xk);
        }
        return p;
    }

    // About kGramBlocks blocks over the output tiles of the call's plan.
    static Splits splits(const Form &f, int64_t k, const Plans &plans, int dtype) {
        int bp = plans.f16.bp, bq = plans.f16.bq;
        if (dtype == GPK_F32) bp = plans.f32.bp, bq = plans.f32.bq;
        if (dtype == GPK_F64) bp = plans.f64.bp, bq = plans.f64.bq;
        return gram_splits(k, ceil_div(f.L, bp) * ceil_div(f.s, bq));
    }
};

}  // namespace
}  // namespace membound

gpk_status gemm_gram_takes(gpk_context &ctx, const GemmArgs &args, const char **why_not) {
    return membound::rung_takes<membound::Gram>(ctx, args, why_not);
}

gpk_status gemm_gram(gpk_context &ctx, const GemmArgs &args) { return membound::rung_run<membound::Gram>(ctx, args); }

}  // namespace gpk::cuda
