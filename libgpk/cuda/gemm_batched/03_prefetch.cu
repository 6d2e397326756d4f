// Rung 3, the single-gemm prefetch kernel with a batch index (F32): rung 2 holds
// whole products in shared memory and gives each thread a 4 x 4 tile read straight
// from it, which stops fitting past about 90 x 90 and, well before that, spends more
// shared-memory reads than multiply-adds allow. Large products are single gemms in
// all but number, so this rung runs the library's fastest F32 gemm kernel (rung 10 of
// the gemm ladder: 8 x 16 register blocks, global loads prefetched a k-tile ahead,
// double-buffered shared memory and fragments) over a grid whose z index is the
// product: one launch for the whole batch (one per 65535 products past the grid's z
// limit), each product's tiles at A + z * stride_a and so on; for products of one
// small tile, blocks that loop over products. Stride 0 shares an operand.
//
// The kernel is gemm/prefetch_kernel.cuh's, the one rung 10 runs; gemm/10_prefetch.cu
// says what each of its parts is for. The large tiles are that rung's tuned defaults;
// a 64 x 64 tile runs for products of at most 64 rows or columns (of 64 threads of
// 8 x 8, see Mid) and when the large tiles of the whole batch would not fill every SM
// twice; a 32 x 32 tile of 64 threads for products of at most 32 x 32. Takes F32, any
// size, transposes, ld and stride; F64 is answered with kNotSupported (rung 4
// is the F64 one).
#include "../gemm/prefetch_kernel.cuh"
#include "batched_common.cuh"

#include <algorithm>

namespace gpk::cuda::batched {
namespace {

using prefetch::Config;

// The single-gemm rung's tiles: 128 x 128 when the operands take 16-byte loads,
// 128 x 128 of 8 x 8 threads when they do not, 64 x 64 with k-tiles of 16 for grids
// too small to fill the GPU twice.
using Large = Config<128, 128, 8, 8, 16, 2>;
using LargeScalar = Config<128, 128, 8, 8, 8, 2>;
using Small = Config<64, 64, 16, 4, 8, 1>;
// The tile of products of at most 64 rows or columns (-DGPK_BATCHED_PREFETCH_MID=
// 0: 64 x 64 of 128 threads of 4 x 8, k-tiles of 16; 1, the default: 64 x 64 of 64
// threads of 8 x 8, half the shared-memory reads per multiply-add of 0, which won at
// 64 x 64 x 64 on the H100; 2: as 0 with k-tiles of 8, which lost), and whether
// products of at most 128 x 128 take it too (-DGPK_BATCHED_PREFETCH_MID128=1; on the
// H100 no faster than the large tile).
#ifndef GPK_BATCHED_PREFETCH_MID
#define GPK_BATCHED_PREFETCH_MID 1
#endif
#ifndef GPK_BATCHED_PREFETCH_MID128
#define GPK_BATCHED_PREFETCH_MID128 0
#endif
#if GPK_BATCHED_PREFETCH_MID == 1
using Mid = Config<64, 64, 16, 8, 8, 2>;
#elif GPK_BATCHED_PREFETCH_MID == 2
using Mid = Config<64, 64, 8, 4, 8, 2>;
#else
using Mid = Small;
#endif
// Products of at most 32 x 32: a 64 x 64 tile would leave three quarters of its
// threads on rows and columns past the product. A product is then one block's few
// thousand multiply-adds, and blocks that run several products in turn are faster
// than a block a product (docs/PERFORMANCE.md, section "Shared kernels").
using Tiny = Config<32, 32, 16, 4, 4, 8, true>;

template <class Cfg, bool kAContigM, bool kBContigN>
BatchedResult launch(const ColMajor &c, float alpha, float beta, cudaStream_t stream) {
    const float *A = static_cast<const float *>(c.A);
    const float *B = static_cast<const float *>(c.B);
    float *C = static_cast<float *>(c.C);
    // 16-byte loads need every product's matrix aligned, not only the first.
    const bool vec_a = aligned16(A) && c.lda % 4 == 0 && c.sa % 4 == 0;
    const bool vec_b = aligned16(B) && c.ldb % 4 == 0 && c.sb % 4 == 0;
    const bool vec_c = aligned16(C) && c.ldc % 4 == 0 && c.sc % 4 == 0;
    const auto run = [&](int64_t first, unsigned int count) {
        const dim3 grid(grid_blocks(c.m, Cfg::kTileM), grid_blocks(c.n, Cfg::kTileN, kMaxGridYZ), count);
        prefetch::kernel<Cfg, kAContigM, kBContigN><<<grid, Cfg::kThreads, 0, stream>>>(
            c.m, c.n, c.k, alpha, A, c.lda, c.sa, B, c.ldb, c.sb, beta, C, c.ldc, c.sc, first,
            Cfg::kLoop ? c.batch : first + count, vec_a, vec_b, vec_c);
    };
    if (!Cfg::kLoop) return launch_in_parts(c.batch, "gemm_batched prefetch::kernel", run);
    // Blocks that loop over products: one launch of min(batch, kMaxGridYZ) along z, a
    // block's products gridDim.z apart.
    run(0, grid_blocks(c.batch, 1, kMaxGridYZ));
    return batched_launched("gemm_batched prefetch::kernel");
}

template <class Cfg>
BatchedResult launch_layout(const ColMajor &c, float alpha, float beta, cudaStream_t stream) {
    // A is contiguous along m unless transposed, B along n only when transposed.
    if (c.transa) return c.transb ? launch<Cfg, false, true>(c, alpha, beta, stream)
                                  : launch<Cfg, false, false>(c, alpha, beta, stream);
    return c.transb ? launch<Cfg, true, true>(c, alpha, beta, stream)
                    : launch<Cfg, true, false>(c, alpha, beta, stream);
}

BatchedResult compute(const BatchedParams &params) {
    if (batched_empty(params)) return batched_ok();
    if (params.dtype != GPK_F32) return batched_unsupported("gemm_batched variant \"prefetch\" supports F32 only");
    const ColMajor c = col_major(params);
    if (product_vanishes<float>(c, params.alpha)) return scale_batched<float>(c, params.beta, params.stream);
    const float alpha = static_cast<float>(params.alpha), beta = static_cast<float>(params.beta);
    int device = 0, sms = 0;
    cudaError_t e = cudaGetDevice(&device);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    if (e != cudaSuccess) return batched_cuda(e, "cudaDeviceGetAttribute (multiprocessor count)");
    const int64_t large_tiles = ((c.m + Large::kTileM - 1) / Large::kTileM) * ((c.n + Large::kTileN - 1) / Large::kTileN);
    // Tiles of the whole batch, saturating: the large tile once the grid fills every SM.
    // Tiles no larger than the product where it is small: in a batch every product
    // pays for its tile's overhang.
    if (c.m <= Tiny::kTileM && c.n <= Tiny::kTileN) return launch_layout<Tiny>(c, alpha, beta, params.stream);
    if (c.m <= 64 || c.n <= 64) return launch_layout<Mid>(c, alpha, beta, params.stream);
    if (GPK_BATCHED_PREFETCH_MID128 && c.m <= 128 && c.n <= 128)
        return launch_layout<Mid>(c, alpha, beta, params.stream);
    const bool fills = large_tiles * std::min<int64_t>(c.batch, int64_t(1) << 20) >= int64_t(sms) * Large::kMinBlocks;
    if (!fills) return launch_layout<Small>(c, alpha, beta, params.stream);
    const bool vec = aligned16(c.A) && c.lda % 4 == 0 && c.sa % 4 == 0 && aligned16(c.B) && c.ldb % 4 == 0 &&
                     c.sb % 4 == 0;
    return vec ? launch_layout<Large>(c, alpha, beta, params.stream)
               : launch_layout<LargeScalar>(c, alpha, beta, params.stream);
}

}  // namespace
}  // namespace gpk::cuda::batched

namespace gpk::cuda {

gpk_status gemm_batched_prefetch(gpk_context &ctx, const GemmBatchedCall &args) {
    return batched::status_of(ctx, batched::compute(batched::params_of(ctx, args)));
}

}  // namespace gpk::cuda
