#include "dispatch.hpp"
#include "dispatch_util.hpp"

#include "checks.hpp"
#include "context.hpp"
#include "host/host.hpp"
#include "matrix_view.hpp"
#include "cuda/ladders.hpp"
#include "cuda/resources.hpp"
#include "registry.hpp"
#include "scalars.hpp"
#include "staging/pipeline.hpp"
#include "status.hpp"
#include "tuning.hpp"
#include "validation.hpp"

#include <cmath>
#include <cstring>
#include <new>
#include <vector>

namespace gpk {
namespace {

using cuda::Slot;

const char *op_label(int op) {
    static const char *const names[GPK_OP_COUNT] = {"gemm", "reduce", "transpose", "pi", "gemm_batched"};
    return names[op];
}

// NOT_SUPPORTED when rung `i` does not support dtype (-1: the op has no dtype).
template <class Args>
gpk_status check_dtype_of(gpk_context &ctx, int op, const Ladder<Args> &ladder, int i, int dtype) {
    GPK_RETURN_ERROR_IF(dtype >= 0 && !(ladder.rungs[i].dtypes & dtype_bit(dtype)), &ctx, GPK_ERROR_NOT_SUPPORTED,
                        "variant '%s' of %s does not support dtype %s", ladder.rungs[i].name, op_label(op),
                        dtype_name(dtype));
    return GPK_SUCCESS;
}

// Whether rung i takes this call: its dtypes, then what its takes function checks.
template <class Args>
gpk_status takes(gpk_context &ctx, const Ladder<Args> &ladder, int i, const Args &args, int dtype,
                 const char **why_not) {
    *why_not = nullptr;
    if (dtype >= 0 && !(ladder.rungs[i].dtypes & dtype_bit(dtype))) {
        *why_not = "dtype";
        return GPK_SUCCESS;
    }
    return ladder.rungs[i].takes != nullptr ? ladder.rungs[i].takes(ctx, args, why_not) : GPK_SUCCESS;
}

tuning::Key key_for(const gpk_context &ctx, const GemmArgs &a) { return tuning::key_of(a, ctx.math_mode); }
tuning::Key key_for(const gpk_context &ctx, const GemmBatchedCall &c) { return tuning::key_of(c, ctx.math_mode); }
tuning::Key key_for(const gpk_context &, const ReduceArgs &a) { return tuning::key_of(a); }
tuning::Key key_for(const gpk_context &, const TransposeArgs &a) { return tuning::key_of(a); }
tuning::Key key_for(const gpk_context &, const PiArgs &a) { return tuning::key_of(a); }

// "auto": the rung the context's table holds fastest for calls like this one that
// takes it, else the ladder's default (tuning.hpp); rungs in `passed_over` (bit i:
// rung i) are not considered.
template <class Args>
gpk_status pick(gpk_context &ctx, int op, const Ladder<Args> &ladder, const Args &args, int dtype, int *index,
                uint64_t passed_over = 0) {
    const auto accepts = [&](int i, bool *yes) {
        *yes = false;
        if (i < 64 && (passed_over >> i & 1)) return GPK_SUCCESS;
        const char *why_not = nullptr;
        GPK_FORWARD_IF_ERROR(takes(ctx, ladder, i, args, dtype, &why_not));
        *yes = why_not == nullptr;
        return GPK_SUCCESS;
    };
    GPK_FORWARD_IF_ERROR(tuning::choose(ctx.tuning.get(), key_for(ctx, args), ladder.autos, ladder.auto_count,
                                        ladder.never, accepts, index));
    GPK_RETURN_ERROR_IF(*index < 0, &ctx, GPK_ERROR_NOT_SUPPORTED,
                        "no variant of %s that \"auto\" may choose takes this call", op_label(op));
    return GPK_SUCCESS;
}

// The variant for this call: the one set on the context, if it takes the call, or
// the pick of "auto".
template <class Args>
gpk_status select(gpk_context &ctx, int op, const Ladder<Args> &ladder, const Args &args, int dtype, int *index) {
    const int i = ctx.variant[op];
    if (i < 0) return pick(ctx, op, ladder, args, dtype, index);
    GPK_FORWARD_IF_ERROR(check_dtype_of(ctx, op, ladder, i, dtype));
    const char *why_not = nullptr;
    GPK_FORWARD_IF_ERROR(takes(ctx, ladder, i, args, dtype, &why_not));
    GPK_RETURN_ERROR_IF(why_not != nullptr, &ctx, GPK_ERROR_NOT_SUPPORTED, "variant '%s' of %s cannot take this call: %s",
                        ladder.rungs[i].name, op_label(op), why_not);
    *index = i;
    return GPK_SUCCESS;
}

// A call that runs in pieces (the staging pipeline's chunks, gpk_gemm_ex's device
// copies) runs the rung chosen for the whole call, *index, on every piece, and the
// pieces exist only once the call is under way: `stage(i, &refused)` runs the call on
// rung i after asking it about every piece, and says whether it refused one, before
// anything was written. Under "auto" such a rung is passed over and the pick made
// again without it (the reference rung takes every piece); a rung set by name
// refuses the call.
template <class Args, class Stage>
gpk_status run_in_pieces(gpk_context &ctx, int op, const Ladder<Args> &ladder, const Args &args, int dtype, int *index,
                         Stage &&stage) {
    uint64_t passed_over = 0;
    for (;;) {
        bool refused = false;
        const gpk_status st = stage(*index, &refused);
        if (!refused || ctx.variant[op] >= 0 || *index >= 64) return st;
        passed_over |= uint64_t(1) << *index;
        GPK_FORWARD_IF_ERROR(pick(ctx, op, ladder, args, dtype, index, passed_over));
    }
}

template <class Args>
cuda::Rung<Args> rung_of(const Ladder<Args> &ladder, int index) {
    return {ladder.rungs[index].name, ladder.rungs[index].run, ladder.rungs[index].takes};
}

// Validation compares with the vendor variant, or with the reference rung when the
// vendor variant is the one being checked.
template <class Args>
int checker_of(const Ladder<Args> &ladder, int index) {
    return index != ladder.vendor ? ladder.vendor : ladder.reference;
}

}  // namespace

// Shared with dispatch_batched.cpp (dispatch_util.hpp).
bool gpus_present() {
    static const bool present = cuda::device_count() > 0;
    return present;
}

// Where p lives: true for memory of the context's GPU. On the host backend device
// memory is an invalid argument.
gpk_status locate(gpk_context &ctx, const void *p, const char *name, bool *device) {
    *device = false;
    if (ctx.backend == GPK_BACKEND_HOST && !gpus_present()) return GPK_SUCCESS;
    return cuda::on_device(ctx, p, name, device);
}

// Copies a matrix of `outer` lines of `inner` elements between leading dimensions.
gpk_status copy_matrix(gpk_context &ctx, void *dst, int64_t dld, const void *src, int64_t sld, int64_t inner,
                       int64_t outer, size_t elem, cudaMemcpyKind kind) {
    return cuda::check(ctx,
                       cudaMemcpy2DAsync(dst, dld * elem, src, sld * elem, inner * elem, outer, kind, cuda::stream(ctx)),
                       "cudaMemcpy2DAsync (validation copy)");
}

gpk_status copy_bytes(gpk_context &ctx, void *dst, const void *src, size_t bytes, cudaMemcpyKind kind) {
    return cuda::check(ctx, cudaMemcpyAsync(dst, src, bytes, kind, cuda::stream(ctx)), "cudaMemcpyAsync (staging)");
}

gpk_status sync(gpk_context &ctx) { return cuda::check(ctx, cudaStreamSynchronize(cuda::stream(ctx)), "cudaStreamSynchronize"); }

namespace {

// Host memory for a validation's comparison. It is taken before the variant runs, so
// that running out of it cannot come after an output was written.
gpk_status reserve(gpk_context &ctx, std::vector<unsigned char> *space, size_t bytes) {
    try {
        space->resize(bytes);
    } catch (const std::bad_alloc &) {
        return fail(&ctx, GPK_ERROR_OUT_OF_MEMORY, "out of host memory for the validation copy (%zu bytes)", bytes);
    }
    return GPK_SUCCESS;
}

// Device memory to host memory, packed (ld == inner).
gpk_status fetch(gpk_context &ctx, void *out, const void *src, int64_t ld, int64_t inner, int64_t outer, size_t es) {
    GPK_FORWARD_IF_ERROR(copy_matrix(ctx, out, inner, src, ld, inner, outer, es, cudaMemcpyDeviceToHost));
    return sync(ctx);
}

// Host arrays go through the staging pipeline (staging/pipeline.cpp), in validation mode
// too (the pipeline then checks chunk by chunk). Device arrays are computed in place
// here and, in validation mode, recomputed by the checker into the context's Check
// buffer and compared on the host (validation.hpp).
// GPK_ERROR_VALIDATION lets the call go on to deliver the variant's result: it is what
// was checked, as the header promises. Device arrays hold it already.

// ---- gemm -------------------------------------------------------------------------

// The rung that checks rung `index` on this call: the vendor's when it takes the call
// and is not the one checked, else the reference rung when it takes the dtype and is
// not the one checked; -1 otherwise (F16 and BF16 checking the vendor's; a gpk_gemm_ex
// call that the vendor's refuses, checking the reference), and the host backend's
// reference checks it instead (gemm_on_host).
gpk_status gemm_checker(gpk_context &ctx, const Ladder<GemmArgs> &ladder, int index, const GemmArgs &a, int *ci) {
    const char *why_not = nullptr;
    if (index != ladder.vendor) {
        GPK_FORWARD_IF_ERROR(takes(ctx, ladder, ladder.vendor, a, a.dtype, &why_not));
        if (why_not == nullptr) {
            *ci = ladder.vendor;
            return GPK_SUCCESS;
        }
    }
    const bool reference = index != ladder.reference && (ladder.rungs[ladder.reference].dtypes & dtype_bit(a.dtype));
    *ci = reference ? ladder.reference : -1;
    return GPK_SUCCESS;
}

// The host backend's reference as a checker's launcher: the device operands are
// fetched on the context's stream, computed by the host backend, and the result sent
// back into C's place (which holds C's old values when beta != 0). Its host memory is
// taken when it runs: in the staging pipeline, after earlier chunks were written.
gpk_status gemm_on_host(gpk_context &ctx, const GemmArgs &a) {
    // Each operand in its own element size (gpk_gemm_ex's differ).
    const size_t esa = a_size(a), esb = b_size(a), es = c_size(a);
    const MatrixView sa = MatrixView::of_op(a.transa, a.m, a.k, a.lda);
    const MatrixView sb = MatrixView::of_op(a.transb, a.k, a.n, a.ldb);
    // Block scales: kb lines of one scale per group of rows (columns), ld apart.
    const int64_t kb = (a.k + 127) / 128;
    const MatrixView ssa{(a.m + a.scale_a_group - 1) / a.scale_a_group, kb, a.scale_a_ld};
    const MatrixView ssb{(a.n + a.scale_b_group - 1) / a.scale_b_group, kb, a.scale_b_ld};
    const bool scaled = a.scale_a != nullptr && a.k > 0;
    std::vector<unsigned char> A, B, C;
    std::vector<float> SA, SB;
    try {
        A.resize(static_cast<size_t>(sa.inner * sa.outer) * esa);
        B.resize(static_cast<size_t>(sb.inner * sb.outer) * esb);
        C.resize(static_cast<size_t>(a.m * a.n) * es);
        if (scaled) SA.resize(static_cast<size_t>(ssa.span())), SB.resize(static_cast<size_t>(ssb.span()));
    } catch (const std::bad_alloc &) {
        return fail(&ctx, GPK_ERROR_OUT_OF_MEMORY, "out of host memory for the validation copy");
    }
    GPK_FORWARD_IF_ERROR(copy_matrix(ctx, A.data(), sa.inner, a.A, a.lda, sa.inner, sa.outer, esa, cudaMemcpyDeviceToHost));
    GPK_FORWARD_IF_ERROR(copy_matrix(ctx, B.data(), sb.inner, a.B, a.ldb, sb.inner, sb.outer, esb, cudaMemcpyDeviceToHost));
    if (scaled) {
        GPK_FORWARD_IF_ERROR(copy_bytes(ctx, SA.data(), a.scale_a, SA.size() * sizeof(float), cudaMemcpyDeviceToHost));
        GPK_FORWARD_IF_ERROR(copy_bytes(ctx, SB.data(), a.scale_b, SB.size() * sizeof(float), cudaMemcpyDeviceToHost));
    }
    if (gemm_reads_c(a))
        GPK_FORWARD_IF_ERROR(copy_matrix(ctx, C.data(), a.m, a.C, a.ldc, a.m, a.n, es, cudaMemcpyDeviceToHost));
    GPK_FORWARD_IF_ERROR(sync(ctx));
    GemmArgs h = a;
    h.A = A.data(), h.lda = sa.inner;
    h.B = B.data(), h.ldb = sb.inner;
    h.C = C.data(), h.ldc = a.m;
    if (scaled) h.scale_a = SA.data(), h.scale_b = SB.data();
    GPK_FORWARD_IF_ERROR(host::gemm(ctx, h));
    GPK_FORWARD_IF_ERROR(copy_matrix(ctx, a.C, a.ldc, C.data(), a.m, a.m, a.n, es, cudaMemcpyHostToDevice));
    return sync(ctx);
}

// Device arrays: rung *run_index computes C in place; in validation mode the checker
// of rung `index` recomputes into its own buffer from a snapshot of C, everything it
// needs taken before the variant runs, and the two are compared on the host.
gpk_status gemm_device(gpk_context &ctx, const GemmArgs &a, int *run_index, int index, bool validate) {
    const Ladder<GemmArgs> &ladder = gemm_ladder(GPK_BACKEND_CUDA);
    const size_t es = c_size(a);  // C's element size (every operand's for gpk_gemm)
    const auto run = [&]() { return ladder.rungs[*run_index].run(ctx, a); };
    if (!validate) return run();
    int ci = -1;
    GPK_FORWARD_IF_ERROR(gemm_checker(ctx, ladder, index, a, &ci));
    Launcher<GemmArgs> check_run = ci >= 0 ? ladder.rungs[ci].run : gemm_on_host;
    const char *check_name = ci >= 0 ? ladder.rungs[ci].name : "host";
    void *check = nullptr;
    std::vector<unsigned char> space;
    const size_t bytes_c = static_cast<size_t>(a.m * a.n) * es;
    GPK_FORWARD_IF_ERROR(reserve(ctx, &space, 2 * bytes_c));
    GPK_FORWARD_IF_ERROR(cuda::buffer(ctx, Slot::Check, bytes_c, &check));
    if (gemm_reads_c(a))
        GPK_FORWARD_IF_ERROR(copy_matrix(ctx, check, a.m, a.C, a.ldc, a.m, a.n, es, cudaMemcpyDeviceToDevice));
    GPK_FORWARD_IF_ERROR(run());
    GemmArgs c = a;
    c.C = check, c.ldc = a.m;
    GPK_FORWARD_IF_ERROR(check_run(ctx, c));
    unsigned char *got = space.data(), *want = got + bytes_c;
    GPK_FORWARD_IF_ERROR(fetch(ctx, got, a.C, a.ldc, a.m, a.n, es));
    GPK_FORWARD_IF_ERROR(fetch(ctx, want, check, a.m, a.m, a.n, es));
    validation::GemmCheck verdict(ctx, a);
    verdict.add(got, a.m, want, a.m, a.m, a.n, 0, 0);
    return verdict.verdict(ctx, ladder.rungs[index].name, check_name);
}

// *ran: the rung that ran.
gpk_status gemm_cuda(gpk_context &ctx, const GemmArgs &user, int index, bool row_major, int *ran) {
    const Ladder<GemmArgs> &ladder = gemm_ladder(GPK_BACKEND_CUDA);
    GemmArgs a = user;
    // k == 0 or alpha == 0 (in the dtype: scalars.hpp) leaves C = beta * C: A and B
    // are not read (CBLAS), and the reference rung does exactly that with k = 0,
    // whatever variant was chosen. For the 16-bit dtypes, which the reference rung does
    // not take, the vendor rung's launcher does it with a kernel of its own (no cuBLAS
    // call), beta applied in F32.
    const bool scale_only = !gemm_forms_product(a);
    if (scale_only) a.k = 0;
    *ran = !scale_only ? index : is_16bit(a.dtype) ? ladder.vendor : ladder.reference;
    const bool validate = ctx.validation && !scale_only;

    bool dev_a = true, dev_b = true, dev_c = true, dev_s = true;
    if (a.k > 0) {
        GPK_FORWARD_IF_ERROR(locate(ctx, a.A, "A", &dev_a));
        GPK_FORWARD_IF_ERROR(locate(ctx, a.B, "B", &dev_b));
        if (a.scale_a != nullptr) {
            bool sa = true, sb = true;
            GPK_FORWARD_IF_ERROR(locate(ctx, a.scale_a, row_major ? "scale_b" : "scale_a", &sa));
            GPK_FORWARD_IF_ERROR(locate(ctx, a.scale_b, row_major ? "scale_a" : "scale_b", &sb));
            dev_s = sa && sb;
        }
    }
    GPK_FORWARD_IF_ERROR(locate(ctx, a.C, "C", &dev_c));
    if (is_gemm_ex_class(a.dtype) && !(dev_a && dev_b && dev_c && dev_s)) {
        // gpk_gemm_ex's host arrays go up in one piece (dispatch_ex.cpp), whose
        // alignment may differ from the caller's: the rung is asked again on it.
        return gemm_ex_staged(ctx, a, [&](const GemmArgs &d) -> gpk_status {
            if (scale_only) return gemm_device(ctx, d, ran, index, validate);
            return run_in_pieces(ctx, GPK_OP_GEMM, ladder, d, d.dtype, ran, [&](int i, bool *refused) -> gpk_status {
                const char *why_not = nullptr;
                GPK_FORWARD_IF_ERROR(takes(ctx, ladder, i, d, d.dtype, &why_not));
                *refused = why_not != nullptr;
                if (*refused) return cuda::refuse(ctx, "gemm", ladder.rungs[i].name, why_not);
                return gemm_device(ctx, d, &i, i, validate);
            });
        });
    }
    if (!(dev_a && dev_b && dev_c)) {
        // The caller's B stays resident: after the row-major swap that is the normalized A.
        if (scale_only) {  // *ran takes every call with k == 0; nothing is validated
            bool refused = false;
            return cuda::staged_gemm(ctx, a, rung_of(ladder, *ran), row_major, dev_a, dev_b, dev_c, nullptr, &refused);
        }
        return run_in_pieces(ctx, GPK_OP_GEMM, ladder, a, a.dtype, ran, [&](int i, bool *refused) -> gpk_status {
            int ci = -1;
            GPK_FORWARD_IF_ERROR(gemm_checker(ctx, ladder, i, a, &ci));
            const cuda::Checker<GemmArgs> check{ci >= 0 ? ladder.rungs[ci].run : gemm_on_host, ladder.rungs[i].name,
                                                ci >= 0 ? ladder.rungs[ci].name : "host"};
            return cuda::staged_gemm(ctx, a, rung_of(ladder, i), row_major, dev_a, dev_b, dev_c,
                                     validate ? &check : nullptr, refused);
        });
    }
    return gemm_device(ctx, a, ran, index, validate);
}

// ---- reduce -----------------------------------------------------------------------

gpk_status reduce_cuda(gpk_context &ctx, const ReduceArgs &user, int index, int *ran) {
    const Ladder<ReduceArgs> &ladder = reduce_ladder(GPK_BACKEND_CUDA);
    const size_t es = dtype_size(user.dtype), rs = reduce_result_size(user.dtype);
    const int ci = checker_of(ladder, index);
    ReduceArgs a = user;
    bool dev_x = true, dev_r = true;
    if (a.n > 0) GPK_FORWARD_IF_ERROR(locate(ctx, a.x, "x", &dev_x));
    GPK_FORWARD_IF_ERROR(locate(ctx, a.result, "result", &dev_r));
    const Launcher<ReduceArgs> run = ladder.rungs[index].run;
    *ran = index;
    if (!dev_x)
        return run_in_pieces(ctx, GPK_OP_REDUCE, ladder, a, a.dtype, ran, [&](int i, bool *refused) {
            const int c = checker_of(ladder, i);
            const cuda::Checker<ReduceArgs> check{ladder.rungs[c].run, ladder.rungs[i].name, ladder.rungs[c].name};
            return cuda::staged_reduce(ctx, a, rung_of(ladder, i), dev_r, ctx.validation ? &check : nullptr, refused);
        });

    // x on the device: a host result is computed into the context's Stage buffer.
    if (!dev_r) GPK_FORWARD_IF_ERROR(cuda::buffer(ctx, Slot::Stage, rs, &a.result));
    // Everything validation needs is taken before the variant runs (see reserve).
    ReduceArgs c = a;
    std::vector<unsigned char> space;
    if (ctx.validation) {
        GPK_FORWARD_IF_ERROR(cuda::buffer(ctx, Slot::Check, rs, &c.result));
        const bool float_sum = a.op == GPK_SUM && (a.dtype == GPK_F32 || a.dtype == GPK_F64 || is_16bit(a.dtype));
        if (float_sum) GPK_FORWARD_IF_ERROR(reserve(ctx, &space, static_cast<size_t>(a.n) * es));
    }

    GPK_FORWARD_IF_ERROR(run(ctx, a));

    gpk_status verdict = GPK_SUCCESS;
    if (ctx.validation) {
        GPK_FORWARD_IF_ERROR(ladder.rungs[ci].run(ctx, c));
        unsigned char got[8], want[8];
        GPK_FORWARD_IF_ERROR(copy_bytes(ctx, got, a.result, rs, cudaMemcpyDeviceToHost));
        GPK_FORWARD_IF_ERROR(copy_bytes(ctx, want, c.result, rs, cudaMemcpyDeviceToHost));
        GPK_FORWARD_IF_ERROR(sync(ctx));
        double abs_sum = 0;
        if (validation::reduce_needs_abs_sum(a, got, want)) {
            GPK_FORWARD_IF_ERROR(copy_bytes(ctx, space.data(), a.x, space.size(), cudaMemcpyDeviceToHost));
            GPK_FORWARD_IF_ERROR(sync(ctx));
            abs_sum = validation::reduce_abs_sum(a, space.data());
        }
        verdict = validation::compare_reduce(ctx, a, got, want, abs_sum, ladder.rungs[index].name,
                                             ladder.rungs[ci].name);
        if (verdict != GPK_ERROR_VALIDATION) GPK_FORWARD_IF_ERROR(verdict);
    }
    if (!dev_r) {
        GPK_FORWARD_IF_ERROR(copy_bytes(ctx, user.result, a.result, rs, cudaMemcpyDeviceToHost));
        GPK_FORWARD_IF_ERROR(sync(ctx));
    }
    return verdict;
}

// ---- transpose --------------------------------------------------------------------

gpk_status transpose_cuda(gpk_context &ctx, const TransposeArgs &user, int index, int *ran) {
    const Ladder<TransposeArgs> &ladder = transpose_ladder(GPK_BACKEND_CUDA);
    const size_t es = user.elem_size, bytes = user.rows * user.cols * es;
    const TransposeArgs &a = user;
    bool dev_a = true, dev_b = true;
    GPK_FORWARD_IF_ERROR(locate(ctx, a.A, "A", &dev_a));
    GPK_FORWARD_IF_ERROR(locate(ctx, a.B, "B", &dev_b));
    const Launcher<TransposeArgs> run = ladder.rungs[index].run;
    const char *name = ladder.rungs[index].name;
    *ran = index;
    if (!(dev_a && dev_b))
        return run_in_pieces(ctx, GPK_OP_TRANSPOSE, ladder, a, a.dtype, ran, [&](int i, bool *refused) {
            const cuda::Checker<TransposeArgs> check{nullptr, ladder.rungs[i].name, nullptr};
            return cuda::staged_transpose(ctx, a, rung_of(ladder, i), dev_a, dev_b, ctx.validation ? &check : nullptr,
                                          refused);
        });

    std::vector<unsigned char> space;
    if (ctx.validation) GPK_FORWARD_IF_ERROR(reserve(ctx, &space, 2 * bytes));
    GPK_FORWARD_IF_ERROR(run(ctx, a));
    if (!ctx.validation) return GPK_SUCCESS;
    // Transposition is exact, so validation checks every element of B against A.
    unsigned char *A = space.data(), *B = A + bytes;
    GPK_FORWARD_IF_ERROR(fetch(ctx, A, a.A, a.lda, a.rows, a.cols, es));
    GPK_FORWARD_IF_ERROR(fetch(ctx, B, a.B, a.ldb, a.cols, a.rows, es));
    validation::TransposeCheck verdict(a);
    verdict.add(A, a.rows, B, a.cols, a.rows, a.cols, 0, 0);
    return verdict.verdict(ctx, name);
}

// ---- pi ---------------------------------------------------------------------------

// The variant pi validation compares with: the vendor's, unless it is the one being
// checked or the range lies past its reach; then "auto"'s rung, or for that rung
// itself the reference rung.
gpk_status pi_checker(gpk_context &ctx, const Ladder<PiArgs> &ladder, const PiArgs &a, int index, int *checker) {
    const bool vendor_reaches = a.first <= cuda::kCurandPiSamples && a.count <= cuda::kCurandPiSamples - a.first;
    if (index != ladder.vendor && vendor_reaches) {
        *checker = ladder.vendor;
        return GPK_SUCCESS;
    }
    int best = 0;
    GPK_FORWARD_IF_ERROR(pick(ctx, GPK_OP_PI, ladder, a, -1, &best));
    *checker = index != best ? best : ladder.reference;
    return GPK_SUCCESS;
}

gpk_status pi_cuda(gpk_context &ctx, const PiArgs &a, int index) {
    const Ladder<PiArgs> &ladder = pi_ladder(GPK_BACKEND_CUDA);
    GPK_FORWARD_IF_ERROR(ladder.rungs[index].run(ctx, a));
    if (ctx.validation && a.count > 0) {
        // Families differ in their draws, so the check is statistical: both estimates
        // of the same probability must agree within 6 combined standard errors.
        int ci = 0;
        GPK_FORWARD_IF_ERROR(pi_checker(ctx, ladder, a, index, &ci));
        uint64_t other = 0;
        PiArgs c = a;
        c.hits = &other;
        GPK_FORWARD_IF_ERROR(ladder.rungs[ci].run(ctx, c));
        const double n = static_cast<double>(a.count);
        const double p1 = static_cast<double>(*a.hits) / n, p2 = static_cast<double>(other) / n;
        const double se = std::sqrt((p1 * (1 - p1) + p2 * (1 - p2)) / n);
        GPK_RETURN_ERROR_IF(std::fabs(p1 - p2) > 6 * se + 1 / n, &ctx, GPK_ERROR_VALIDATION,
                            "pi variant '%s' estimated %.9f, '%s' %.9f: more than 6 standard errors (%.3g) apart",
                            ladder.rungs[index].name, 4 * p1, ladder.rungs[ci].name, 4 * p2, 4 * se);
    }
    return GPK_SUCCESS;
}

// The status of a call, having noted for gpk_last_variant the rung it ran when it
// succeeded.
gpk_status noted(gpk_context &ctx, int op, int ran, gpk_status st) {
    if (st == GPK_SUCCESS) ctx.last_variant[op] = ran;
    return st;
}

}  // namespace

// ---- entry points -----------------------------------------------------------------

gpk_status check_variant_dtype(gpk_context &ctx, int op, int dtype) {
    const int i = ctx.variant[op];
    if (i < 0) return GPK_SUCCESS;
    switch (op) {
        case GPK_OP_GEMM: return check_dtype_of(ctx, op, gemm_ladder(ctx.backend), i, dtype);
        case GPK_OP_REDUCE: return check_dtype_of(ctx, op, reduce_ladder(ctx.backend), i, dtype);
        case GPK_OP_TRANSPOSE: return check_dtype_of(ctx, op, transpose_ladder(ctx.backend), i, dtype);
        case GPK_OP_GEMM_BATCHED: return check_dtype_of(ctx, op, gemm_batched_ladder(ctx.backend), i, dtype);
        default: return GPK_SUCCESS;
    }
}

gpk_status run_gemm(gpk_context &ctx, const GemmArgs &args, int layout) {
    const Ladder<GemmArgs> &ladder = gemm_ladder(ctx.backend);
    int index = 0;
    GPK_FORWARD_IF_ERROR(select(ctx, GPK_OP_GEMM, ladder, args, args.dtype, &index));
    if (ctx.backend == GPK_BACKEND_CUDA) {
        cuda::DeviceGuard guard(ctx);
        int ran = index;
        const gpk_status st = gemm_cuda(ctx, args, index, layout == GPK_ROW_MAJOR, &ran);
        return noted(ctx, GPK_OP_GEMM, ran, st);
    }
    bool dev = false;
    if (args.k > 0) {
        GPK_FORWARD_IF_ERROR(locate(ctx, args.A, "A", &dev));
        GPK_FORWARD_IF_ERROR(locate(ctx, args.B, "B", &dev));
        // The caller's names: a row-major call's scales swapped with their operands.
        const bool row = layout == GPK_ROW_MAJOR;
        if (args.scale_a != nullptr) GPK_FORWARD_IF_ERROR(locate(ctx, args.scale_a, row ? "scale_b" : "scale_a", &dev));
        if (args.scale_b != nullptr) GPK_FORWARD_IF_ERROR(locate(ctx, args.scale_b, row ? "scale_a" : "scale_b", &dev));
    }
    GPK_FORWARD_IF_ERROR(locate(ctx, args.C, "C", &dev));
    return noted(ctx, GPK_OP_GEMM, index, ladder.rungs[index].run(ctx, args));
}


gpk_status run_gemm_batched(gpk_context &ctx, const GemmBatchedCall &call) {
    const Ladder<GemmBatchedCall> &ladder = gemm_batched_ladder(ctx.backend);
    int index = 0;
    // The rung for the whole call: every chunk of a staged one holds whole products
    // of the same shape.
    GPK_FORWARD_IF_ERROR(select(ctx, GPK_OP_GEMM_BATCHED, ladder, call, call.dtype, &index));
    if (ctx.backend == GPK_BACKEND_CUDA) {
        cuda::DeviceGuard guard(ctx);
        return noted(ctx, GPK_OP_GEMM_BATCHED, index, gemm_batched_cuda(ctx, call, index));
    }
    bool dev = false;
    if (call.k > 0) {
        GPK_FORWARD_IF_ERROR(locate(ctx, call.A, "A", &dev));
        GPK_FORWARD_IF_ERROR(locate(ctx, call.B, "B", &dev));
    }
    GPK_FORWARD_IF_ERROR(locate(ctx, call.C, "C", &dev));
    return noted(ctx, GPK_OP_GEMM_BATCHED, index, ladder.rungs[index].run(ctx, call));
}

gpk_status run_reduce(gpk_context &ctx, const ReduceArgs &args) {
    const Ladder<ReduceArgs> &ladder = reduce_ladder(ctx.backend);
    int index = 0;
    GPK_FORWARD_IF_ERROR(select(ctx, GPK_OP_REDUCE, ladder, args, args.dtype, &index));
    if (ctx.backend == GPK_BACKEND_CUDA) {
        cuda::DeviceGuard guard(ctx);
        int ran = index;
        const gpk_status st = reduce_cuda(ctx, args, index, &ran);
        return noted(ctx, GPK_OP_REDUCE, ran, st);
    }
    bool dev = false;
    if (args.n > 0) GPK_FORWARD_IF_ERROR(locate(ctx, args.x, "x", &dev));
    GPK_FORWARD_IF_ERROR(locate(ctx, args.result, "result", &dev));
    return noted(ctx, GPK_OP_REDUCE, index, ladder.rungs[index].run(ctx, args));
}

gpk_status run_transpose(gpk_context &ctx, const TransposeArgs &args) {
    const Ladder<TransposeArgs> &ladder = transpose_ladder(ctx.backend);
    int index = 0;
    GPK_FORWARD_IF_ERROR(select(ctx, GPK_OP_TRANSPOSE, ladder, args, args.dtype, &index));
    if (ctx.backend == GPK_BACKEND_CUDA) {
        cuda::DeviceGuard guard(ctx);
        int ran = index;
        const gpk_status st = transpose_cuda(ctx, args, index, &ran);
        return noted(ctx, GPK_OP_TRANSPOSE, ran, st);
    }
    bool dev = false;
    GPK_FORWARD_IF_ERROR(locate(ctx, args.A, "A", &dev));
    GPK_FORWARD_IF_ERROR(locate(ctx, args.B, "B", &dev));
    return noted(ctx, GPK_OP_TRANSPOSE, index, ladder.rungs[index].run(ctx, args));
}

gpk_status run_pi(gpk_context &ctx, const PiArgs &args) {
    const Ladder<PiArgs> &ladder = pi_ladder(ctx.backend);
    int index = 0;
    GPK_FORWARD_IF_ERROR(select(ctx, GPK_OP_PI, ladder, args, -1, &index));
    if (ctx.backend == GPK_BACKEND_CUDA) {
        cuda::DeviceGuard guard(ctx);
        return noted(ctx, GPK_OP_PI, index, pi_cuda(ctx, args, index));
    }
    return noted(ctx, GPK_OP_PI, index, ladder.rungs[index].run(ctx, args));
}

gpk_status write_result(gpk_context &ctx, void *dst, const void *src, size_t bytes, const char *name) {
    if (ctx.backend == GPK_BACKEND_CUDA) {
        cuda::DeviceGuard guard(ctx);
        bool dev = false;
        GPK_FORWARD_IF_ERROR(locate(ctx, dst, name, &dev));
        if (dev) {
            GPK_FORWARD_IF_ERROR(copy_bytes(ctx, dst, src, bytes, cudaMemcpyHostToDevice));
            return sync(ctx);
        }
    } else {
        bool dev = false;
        GPK_FORWARD_IF_ERROR(locate(ctx, dst, name, &dev));
    }
    std::memcpy(dst, src, bytes);
    return GPK_SUCCESS;
}

}  // namespace gpk
