// gpk_gemm_ex and gpk_gemm_blockscaled on the CUDA backend with host arrays.
//
// The staging pipeline (staging/pipeline.cpp) cuts gpk_gemm's calls into chunks of one
// element size; a gpk_gemm_ex call's operands each have their own, and block scales
// would have to be cut with the chunks on multiples of 128. Until the pipeline carries
// both, such a call goes up in one piece: every host array (A, B, C when it is read,
// the scale arrays) is copied, packed, into the context's Stage buffer, the rung runs
// on the device copies as on device arrays (validation included), and C comes back.
// A call whose copies do not fit the device -- gpk_set_staging's device_bytes when set,
// else the GPU's free memory less a margin -- is NOT_SUPPORTED, before anything is
// written: device arrays take it whatever its size.
#include "dispatch_util.hpp"

#include "checks.hpp"
#include "cuda/resources.hpp"
#include "matrix_view.hpp"
#include "scalars.hpp"
#include "status.hpp"

#include <algorithm>

namespace gpk {
namespace {

using cuda::Slot;

// A device copy's leading dimension: whole 16-byte vectors, so that an operand the
// caller aligned stays aligned (rungs such as the vendor's take only those).
int64_t packed_ld(int64_t inner, size_t es) {
    const int64_t per = static_cast<int64_t>(16 / es);
    return (std::max<int64_t>(inner, 1) + per - 1) / per * per;
}

constexpr size_t kAlign = 256;
size_t round_up(size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

// What the device keeps free beside the copies: the rungs' own scratch (cuBLASLt's
// workspace, validation's check buffer) and the runtime's.
constexpr size_t kMargin = size_t{512} << 20;

// One array of the call: where it is and its lines (host.ptr null: on the device
// already, or not read), and its copy's lines and place in the Stage buffer.
struct Part {
    MatrixView host;
    size_t es = 0;
    int64_t dev_ld = 0;
    size_t offset = 0;
    size_t bytes() const { return static_cast<size_t>(dev_ld) * static_cast<size_t>(host.outer) * es; }
    bool staged() const { return host.ptr != nullptr; }
};

}  // namespace

gpk_status gemm_ex_staged(gpk_context &ctx, const GemmArgs &a,
                          const std::function<gpk_status(const GemmArgs &)> &device) {
    const bool product = a.k > 0;
    const bool read_c = gemm_reads_c(a);
    bool dev_a = true, dev_b = true, dev_c = true, dev_sa = true, dev_sb = true;
    if (product) {
        GPK_FORWARD_IF_ERROR(locate(ctx, a.A, "A", &dev_a));
        GPK_FORWARD_IF_ERROR(locate(ctx, a.B, "B", &dev_b));
        if (a.scale_a != nullptr) {
            GPK_FORWARD_IF_ERROR(locate(ctx, a.scale_a, "scale_a", &dev_sa));
            GPK_FORWARD_IF_ERROR(locate(ctx, a.scale_b, "scale_b", &dev_sb));
        }
    }
    GPK_FORWARD_IF_ERROR(locate(ctx, a.C, "C", &dev_c));

    // The arrays as stored: op(A) m x k, op(B) k x n (column-major after normalisation),
    // the scales kb lines of one float per group of rows (columns), C m x n.
    const int64_t kb = (a.k + 127) / 128;
    Part pa, pb, psa, psb, pc;
    if (product && !dev_a) pa = Part{MatrixView::of_op(a.transa, a.m, a.k, a.lda, a.A), a_size(a)};
    if (product && !dev_b) pb = Part{MatrixView::of_op(a.transb, a.k, a.n, a.ldb, a.B), b_size(a)};
    if (product && a.scale_a != nullptr && !dev_sa)
        psa = Part{MatrixView{(a.m + a.scale_a_group - 1) / a.scale_a_group, kb, a.scale_a_ld, a.scale_a}, sizeof(float)};
    if (product && a.scale_b != nullptr && !dev_sb)
        psb = Part{MatrixView{(a.n + a.scale_b_group - 1) / a.scale_b_group, kb, a.scale_b_ld, a.scale_b}, sizeof(float)};
    if (!dev_c) pc = Part{MatrixView{a.m, a.n, a.ldc, a.C}, c_size(a)};
    Part *parts[] = {&pa, &pb, &psa, &psb, &pc};
    size_t total = 0;
    for (Part *p : parts) {
        if (!p->staged()) continue;
        p->dev_ld = p == &psa || p == &psb ? p->host.inner : packed_ld(p->host.inner, p->es);
        p->offset = total;
        total += round_up(p->bytes());
    }

    // Room: the caller's budget, else the GPU's free memory less a margin (the Stage
    // buffer already held counts as free).
    size_t room = ctx.staging.device_bytes;
    if (room == 0) {
        size_t free_bytes = 0, total_bytes = 0;
        GPK_CUDA_TRY(ctx, cudaMemGetInfo(&free_bytes, &total_bytes));
        room = free_bytes > kMargin ? free_bytes - kMargin : 0;
    }
    GPK_RETURN_ERROR_IF(total > room, &ctx, GPK_ERROR_NOT_SUPPORTED,
                        "%s with host arrays goes up to the GPU in one piece, and its %zu bytes do not fit the %zu "
                        "the device has room for: pass device arrays",
                        a.dtype == kGemmFp8Blockscaled ? "gpk_gemm_blockscaled" : "gpk_gemm_ex", total, room);
    char *base = nullptr;
    if (total > 0) {
        void *buf = nullptr;
        GPK_FORWARD_IF_ERROR(cuda::buffer(ctx, Slot::Stage, total, &buf));
        base = static_cast<char *>(buf);
    }

    // Up: every host array but a C that is not read.
    GemmArgs d = a;
    for (Part *p : parts) {
        if (!p->staged() || (p == &pc && !read_c)) continue;
        const MatrixView &h = p->host;
        GPK_FORWARD_IF_ERROR(copy_matrix(ctx, base + p->offset, p->dev_ld, h.ptr, h.ld, h.inner, h.outer, p->es,
                                         cudaMemcpyHostToDevice));
    }
    if (pa.staged()) d.A = base + pa.offset, d.lda = pa.dev_ld;
    if (pb.staged()) d.B = base + pb.offset, d.ldb = pb.dev_ld;
    if (psa.staged()) d.scale_a = reinterpret_cast<const float *>(base + psa.offset), d.scale_a_ld = psa.dev_ld;
    if (psb.staged()) d.scale_b = reinterpret_cast<const float *>(base + psb.offset), d.scale_b_ld = psb.dev_ld;
    if (pc.staged()) d.C = base + pc.offset, d.ldc = pc.dev_ld;

    // GPK_ERROR_VALIDATION still delivers the variant's result, as for device arrays.
    const gpk_status verdict = device(d);
    if (verdict != GPK_SUCCESS && verdict != GPK_ERROR_VALIDATION) return verdict;
    if (pc.staged())
        GPK_FORWARD_IF_ERROR(copy_matrix(ctx, a.C, a.ldc, d.C, d.ldc, a.m, a.n, pc.es, cudaMemcpyDeviceToHost));
    GPK_FORWARD_IF_ERROR(sync(ctx));
    return verdict;
}

}  // namespace gpk
