// Host strided batched gemm: the reference the batched GPU rungs are compared with.
// Each product is the host gemm's (gemm.cpp: every element of C accumulated in double,
// CBLAS semantics, alpha and beta in the dtype, nothing allocated). Products are
// independent, which is the OpenMP split: many small products parallelise over the
// batch where one product alone would not.
#include "gemm_batched.hpp"

#include "host.hpp"

#include "../status.hpp"

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace gpk::host {
namespace {

// Product b's arguments: the first product's, its matrices b strides on.
GemmArgs product(const GemmBatchedArgs &args, int64_t b) {
    const size_t es = dtype_size(args.gemm.dtype);
    GemmArgs one = args.gemm;
    one.A = static_cast<const unsigned char *>(one.A) + static_cast<size_t>(b * args.stride_a) * es;
    one.B = static_cast<const unsigned char *>(one.B) + static_cast<size_t>(b * args.stride_b) * es;
    one.C = static_cast<unsigned char *>(one.C) + static_cast<size_t>(b * args.stride_c) * es;
    return one;
}

}  // namespace

gpk_status gemm_strided_batched(gpk_context &ctx, const GemmBatchedArgs &args) {
    const GemmArgs &a = args.gemm;
    if (args.batch_count == 0 || a.m == 0 || a.n == 0) return GPK_SUCCESS;
    int threads = 1;
#if defined(_OPENMP)
    threads = omp_get_max_threads();
#endif
    // F16 and BF16 (the single gemm's 16-bit reference), and batches with fewer
    // products than threads: one product after another, each spread over the threads.
    if (is_16bit(a.dtype) || args.batch_count < threads) {
        for (int64_t b = 0; b < args.batch_count; ++b) GPK_FORWARD_IF_ERROR(gemm(ctx, product(args, b)));
        return GPK_SUCCESS;
    }
    // Otherwise whole products to each thread.
#if defined(_OPENMP)
#pragma omp parallel for schedule(static)
#endif
    for (int64_t b = 0; b < args.batch_count; ++b) gemm_serial(product(args, b));
    return GPK_SUCCESS;
}

gpk_status gemm_batched(gpk_context &ctx, const GemmBatchedCall &c) {
    const bool ta = c.transa == GPK_TRANS, tb = c.transb == GPK_TRANS;
    GemmBatchedArgs args{GemmArgs{c.dtype, ta, tb, c.m, c.n, c.k, c.alpha, c.A, c.lda, c.B, c.ldb, c.beta, c.C, c.ldc},
                         c.stride_a, c.stride_b, c.stride_c, c.batch_count};
    if (c.layout == GPK_ROW_MAJOR) {
        // Row-major C_i is column-major C_i^T = op(B_i)^T op(A_i)^T: the operands swap,
        // each with its leading dimension, stride and transpose.
        args = GemmBatchedArgs{GemmArgs{c.dtype, tb, ta, c.n, c.m, c.k, c.alpha, c.B, c.ldb, c.A, c.lda, c.beta, c.C,
                                        c.ldc},
                               c.stride_b, c.stride_a, c.stride_c, c.batch_count};
    }
    return gemm_strided_batched(ctx, args);
}

}  // namespace gpk::host
