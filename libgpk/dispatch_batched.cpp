// gpk_gemm_strided_batched on the CUDA backend: device arrays computed in place (and
// checked product by product in validation mode), host arrays through the staging
// pipeline in chunks of whole products (checked there in validation mode).
#include "checks.hpp"
#include "context.hpp"
#include "cuda/resources.hpp"
#include "staging/pipeline.hpp"
#include "dispatch_util.hpp"
#include "host/host.hpp"
#include "matrix_view.hpp"
#include "registry.hpp"
#include "scalars.hpp"
#include "status.hpp"
#include "validation.hpp"

#include <cmath>
#include <new>
#include <vector>

namespace gpk {
namespace {

using cuda::Slot;

// Each product follows gpk_gemm's rules (scalars.hpp): whether A and B are read, and
// whether C is, is decided on alpha and beta converted to the dtype.
bool forms_product(const GemmBatchedCall &c) { return c.k > 0 && in_dtype(c.dtype, c.alpha) != 0.0; }
bool reads_c(const GemmBatchedCall &c) { return in_dtype(c.dtype, c.beta) != 0.0; }

// One product's C as stored, column-major: `outer` lines of `inner` (a row-major
// caller's C, read as the C^T that the swapped call computes).
MatrixView batched_c(const GemmBatchedCall &c) { return MatrixView{c.m, c.n, c.ldc}; }
// Of op(A) and op(B), stored.
MatrixView batched_a(const GemmBatchedCall &c) { return MatrixView::of_op(c.transa == GPK_TRANS, c.m, c.k, c.lda); }
MatrixView batched_b(const GemmBatchedCall &c) { return MatrixView::of_op(c.transb == GPK_TRANS, c.k, c.n, c.ldb); }

// Copies `batch` matrices of `s.outer` lines of `s.inner` elements, matrix i at
// i * stride on each side: one 2-D copy when, on both sides, the matrices' lines
// follow one another ld apart (stride == ld * outer), one per matrix otherwise. Only
// the matrices' elements are written, never the padding between lines or matrices.
gpk_status copy_batch(gpk_context &ctx, void *dst, int64_t dld, int64_t dstride, const void *src, int64_t sld,
                      int64_t sstride, const MatrixView &s, int64_t batch, size_t es, cudaMemcpyKind kind) {
    if (batch == 1 || (dstride == dld * s.outer && sstride == sld * s.outer))
        return copy_matrix(ctx, dst, dld, src, sld, s.inner, s.outer * batch, es, kind);
    for (int64_t b = 0; b < batch; ++b)
        GPK_FORWARD_IF_ERROR(copy_matrix(ctx, static_cast<char *>(dst) + b * dstride * es, dld,
                                         static_cast<const char *>(src) + b * sstride * es, sld, s.inner, s.outer, es,
                                         kind));
    return GPK_SUCCESS;
}

// Bytes of a batch's span: matrix 0's first element to matrix batch - 1's last.
size_t span_bytes(const MatrixView &s, int64_t stride, int64_t batch, size_t es) {
    return s.span() == 0 ? 0 : static_cast<size_t>((batch - 1) * stride + s.span()) * es;
}

// Rung `variant`'s C (the caller's matrices) against the checker's (`ref`, packed
// one product after another), product by product, by gemm's rule (validation.hpp):
// each product is a gemm of its own, with its own scale and tolerance.
gpk_status compare_batched(gpk_context &ctx, const GemmBatchedCall &c, const void *ref, const char *variant,
                           const char *checker) {
    const MatrixView sc = batched_c(c);
    const size_t es = dtype_size(c.dtype);
    const size_t per = static_cast<size_t>(sc.inner * sc.outer);
    std::vector<unsigned char> got, want;
    try {
        got.resize(per * static_cast<size_t>(c.batch_count) * es);
        want.resize(per * static_cast<size_t>(c.batch_count) * es);
    } catch (const std::bad_alloc &) {
        return fail(&ctx, GPK_ERROR_OUT_OF_MEMORY, "out of host memory for the validation copy");
    }
    GPK_FORWARD_IF_ERROR(copy_batch(ctx, got.data(), sc.inner, sc.inner * sc.outer, c.C, c.ldc, c.stride_c, sc,
                                    c.batch_count, es, cudaMemcpyDeviceToHost));
    GPK_FORWARD_IF_ERROR(copy_bytes(ctx, want.data(), ref, want.size(), cudaMemcpyDeviceToHost));
    GPK_FORWARD_IF_ERROR(sync(ctx));
    const GemmArgs one{c.dtype, false, false, c.m, c.n, c.k, c.alpha, nullptr, 1, nullptr, 1, c.beta, nullptr, 1};
    for (int64_t b = 0; b < c.batch_count; ++b) {
        const size_t base = static_cast<size_t>(b) * per * es;
        validation::GemmCheck check(ctx, one);
        check.add(got.data() + base, sc.inner, want.data() + base, sc.inner, sc.inner, sc.outer, 0, 0);
        GPK_RETURN_ERROR_IF(!check.passed(), &ctx, GPK_ERROR_VALIDATION,
                            "gemm_batched variant '%s' differs from '%s' in product %lld beyond tolerance %.3g",
                            variant, checker, static_cast<long long>(b), check.tolerance());
    }
    return GPK_SUCCESS;
}

// The host reference of the device call `c` (its C replaced by the packed matrices
// at `check`, holding C's old values when beta != 0): operands fetched, computed on
// the host, sent back.
gpk_status batched_on_host(gpk_context &ctx, const GemmBatchedCall &c) {
    const size_t es = dtype_size(c.dtype);
    const MatrixView sa = batched_a(c), sb = batched_b(c), sc = batched_c(c);
    const size_t ba = span_bytes(sa, c.stride_a, c.batch_count, es), bb = span_bytes(sb, c.stride_b, c.batch_count, es);
    const size_t bc = span_bytes(sc, c.stride_c, c.batch_count, es);
    std::vector<unsigned char> A, B, C;
    try {
        A.resize(ba), B.resize(bb), C.resize(bc);
    } catch (const std::bad_alloc &) {
        return fail(&ctx, GPK_ERROR_OUT_OF_MEMORY, "out of host memory for the validation copy");
    }
    if (ba) GPK_FORWARD_IF_ERROR(copy_bytes(ctx, A.data(), c.A, ba, cudaMemcpyDeviceToHost));
    if (bb) GPK_FORWARD_IF_ERROR(copy_bytes(ctx, B.data(), c.B, bb, cudaMemcpyDeviceToHost));
    GPK_FORWARD_IF_ERROR(copy_bytes(ctx, C.data(), c.C, bc, cudaMemcpyDeviceToHost));
    GPK_FORWARD_IF_ERROR(sync(ctx));
    GemmBatchedCall h = c;
    h.A = A.data(), h.B = B.data(), h.C = C.data();
    GPK_FORWARD_IF_ERROR(host::gemm_batched(ctx, h));
    GPK_FORWARD_IF_ERROR(copy_bytes(ctx, c.C, C.data(), bc, cudaMemcpyHostToDevice));
    return sync(ctx);
}

// The rung that checks rung `index` on call `c`, in *checker: the vendor's, or, when
// the vendor's is checked, the first rung of ours that takes the call (its dtypes,
// then its takes function: what a rung accepts is stated in the rung alone); -1, the
// host reference, when none does (16-bit dtypes).
gpk_status batched_checker(gpk_context &ctx, const Ladder<GemmBatchedCall> &ladder, int index,
                           const GemmBatchedCall &c, int *checker) {
    *checker = -1;
    if (index != ladder.vendor) {
        *checker = ladder.vendor;
        return GPK_SUCCESS;
    }
    for (int i = 0; i < ladder.count; ++i) {
        if (i == ladder.vendor || !(ladder.rungs[i].dtypes & dtype_bit(c.dtype))) continue;
        const char *why_not = nullptr;
        if (ladder.rungs[i].takes != nullptr) GPK_FORWARD_IF_ERROR(ladder.rungs[i].takes(ctx, c, &why_not));
        if (why_not == nullptr) {
            *checker = i;
            return GPK_SUCCESS;
        }
    }
    return GPK_SUCCESS;
}

// A call whose arrays are all on the device: the rung, and in validation mode the
// checker's result in a packed copy of C, compared product by product.
gpk_status batched_on_device(gpk_context &ctx, const GemmBatchedCall &c, int index) {
    const Ladder<GemmBatchedCall> &ladder = gemm_batched_ladder(GPK_BACKEND_CUDA);
    const bool validate = ctx.validation && forms_product(c);
    if (!validate) return ladder.rungs[index].run(ctx, c);
    const size_t es = dtype_size(c.dtype);
    const MatrixView sc = batched_c(c);
    void *check = nullptr;
    GPK_FORWARD_IF_ERROR(cuda::buffer(ctx, Slot::Check, static_cast<size_t>(sc.inner * sc.outer * c.batch_count) * es, &check));
    GemmBatchedCall k = c;
    k.C = check, k.ldc = sc.inner, k.stride_c = sc.inner * sc.outer;
    if (reads_c(c))
        GPK_FORWARD_IF_ERROR(copy_batch(ctx, check, k.ldc, k.stride_c, c.C, c.ldc, c.stride_c, sc, c.batch_count, es,
                                        cudaMemcpyDeviceToDevice));
    GPK_FORWARD_IF_ERROR(ladder.rungs[index].run(ctx, c));
    int ci = -1;
    GPK_FORWARD_IF_ERROR(batched_checker(ctx, ladder, index, c, &ci));
    GPK_FORWARD_IF_ERROR(ci >= 0 ? ladder.rungs[ci].run(ctx, k) : batched_on_host(ctx, k));
    return compare_batched(ctx, c, check, ladder.rungs[index].name, ci >= 0 ? ladder.rungs[ci].name : "host");
}

}  // namespace

gpk_status gemm_batched_cuda(gpk_context &ctx, const GemmBatchedCall &c, int index) {
    bool dev_a = true, dev_b = true, dev_c = true;
    if (forms_product(c)) {
        GPK_FORWARD_IF_ERROR(locate(ctx, c.A, "A", &dev_a));
        GPK_FORWARD_IF_ERROR(locate(ctx, c.B, "B", &dev_b));
    }
    GPK_FORWARD_IF_ERROR(locate(ctx, c.C, "C", &dev_c));
    if (dev_a && dev_b && dev_c) return batched_on_device(ctx, c, index);
    // Host arrays through the staging pipeline (staging/pipeline.cpp), in validation mode
    // too: each chunk is checked there, product by product.
    const Ladder<GemmBatchedCall> &ladder = gemm_batched_ladder(GPK_BACKEND_CUDA);
    const bool validate = ctx.validation && forms_product(c);
    int ci = -1;
    if (validate) GPK_FORWARD_IF_ERROR(batched_checker(ctx, ladder, index, c, &ci));
    const cuda::Checker<GemmBatchedCall> check{ci >= 0 ? ladder.rungs[ci].run : batched_on_host,
                                               ladder.rungs[index].name, ci >= 0 ? ladder.rungs[ci].name : "host"};
    return cuda::staged_gemm_batched(ctx, c, ladder.rungs[index].run, batched_a(c), batched_b(c), batched_c(c),
                                     dev_a, dev_b, dev_c, validate ? &check : nullptr);
}

}  // namespace gpk
