// Host strided batched gemm: the reference the batched GPU rungs are compared with.
// Each product is the host gemm's (gemm.cpp, half_ops.cpp: every element of C
// accumulated in double, CBLAS semantics, alpha and beta in the dtype, nothing
// allocated -- so no product can fail after an earlier one was written). Products are
// independent, which is the split over threads (parallel.hpp): many small products
// parallelise over the batch where one product alone would not.
#include "gemm_batched.hpp"

#include "host.hpp"
#include "parallel.hpp"

#include "../status.hpp"

namespace gpk::host {
namespace {

// Product b's arguments: the first product's, its matrices b strides on. The checks
// bound (batch_count - 1) * stride in bytes by int64 for every operand, so the offsets
// cannot overflow. A and B move only when the product reads them: with k == 0 they
// may be NULL, and an offset from NULL is undefined behaviour.
GemmArgs product(const GemmBatchedArgs &args, int64_t b) {
    const auto es = static_cast<int64_t>(dtype_size(args.gemm.dtype));
    GemmArgs one = args.gemm;
    if (one.k > 0) {
        one.A = static_cast<const unsigned char *>(one.A) + b * args.stride_a * es;
        one.B = static_cast<const unsigned char *>(one.B) + b * args.stride_b * es;
    }
    one.C = static_cast<unsigned char *>(one.C) + b * args.stride_c * es;
    return one;
}

}  // namespace

gpk_status gemm_strided_batched(gpk_context &ctx, const GemmBatchedArgs &args) {
    const GemmArgs &a = args.gemm;
    if (args.batch_count == 0 || a.m == 0 || a.n == 0) return GPK_SUCCESS;
    // Fewer products than threads: one after another, each spread over the threads.
    if (args.batch_count < max_threads()) {
        for (int64_t b = 0; b < args.batch_count; ++b) GPK_FORWARD_IF_ERROR(gemm(ctx, product(args, b)));
        return GPK_SUCCESS;
    }
    // Otherwise whole products to each thread.
    const int64_t one = gemm_work(a);
    const int64_t work = one > INT64_MAX / args.batch_count ? INT64_MAX : one * args.batch_count;
    parallel_for(args.batch_count, work, [&](int64_t b) { gemm_serial(product(args, b)); });
    return GPK_SUCCESS;
}

// The call is column-major already (api.cpp swaps a row-major one).
gpk_status gemm_batched(gpk_context &ctx, const GemmBatchedCall &c) {
    const bool ta = c.transa == GPK_TRANS, tb = c.transb == GPK_TRANS;
    const GemmBatchedArgs args{
        GemmArgs{c.dtype, ta, tb, c.m, c.n, c.k, c.alpha, c.A, c.lda, c.B, c.ldb, c.beta, c.C, c.ldc}, c.stride_a,
        c.stride_b, c.stride_c, c.batch_count};
    return gemm_strided_batched(ctx, args);
}

}  // namespace gpk::host
