#include "dispatch.hpp"

#include "checks.hpp"
#include "common/half.hpp"
#include "context.hpp"
#include "host/host.hpp"
#include "cuda/ladders.hpp"
#include "cuda/pipeline.hpp"
#include "cuda/resources.hpp"
#include "registry.hpp"
#include "scalars.hpp"
#include "status.hpp"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstring>
#include <limits>
#include <new>
#include <vector>

namespace gpk {
namespace {

using cuda::Slot;

const char *op_label(int op) {
    static const char *const names[GPK_OP_COUNT] = {"gemm", "reduce", "transpose", "pi"};
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

// "auto": the first rung of the ladder's preference list that takes the call (and
// leads for it, where its entry asks).
template <class Args>
gpk_status pick(gpk_context &ctx, int op, const Ladder<Args> &ladder, const Args &args, int dtype, int *index) {
    for (int k = 0; k < ladder.auto_count; ++k) {
        const char *why_not = nullptr;
        GPK_FORWARD_IF_ERROR(takes(ctx, ladder, ladder.autos[k], args, dtype, &why_not));
        if (why_not == nullptr && ladder.where[k] != nullptr) GPK_FORWARD_IF_ERROR(ladder.where[k](ctx, args, &why_not));
        if (why_not == nullptr) {
            *index = ladder.autos[k];
            return GPK_SUCCESS;
        }
    }
    return fail(&ctx, GPK_ERROR_NOT_SUPPORTED, "no variant of %s that \"auto\" may choose takes this call",
                op_label(op));
}

// The variant for this call: the one set on the context, if it takes the call, or
// the ladder's pick.
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

const Ladder<GemmArgs> &cuda_ladder_for(const GemmArgs &) { return gemm_ladder(GPK_BACKEND_CUDA); }
const Ladder<ReduceArgs> &cuda_ladder_for(const ReduceArgs &) { return reduce_ladder(GPK_BACKEND_CUDA); }
const Ladder<TransposeArgs> &cuda_ladder_for(const TransposeArgs &) { return transpose_ladder(GPK_BACKEND_CUDA); }
int op_of(const GemmArgs &) { return GPK_OP_GEMM; }
int op_of(const ReduceArgs &) { return GPK_OP_REDUCE; }
int op_of(const TransposeArgs &) { return GPK_OP_TRANSPOSE; }

// "auto" for each launch on the CUDA backend: the staging pipeline launches on
// pieces of the arrays, and a piece may be aligned where the whole is not, or the
// other way round, so the rung that takes it is chosen piece by piece.
template <class Args>
gpk_status run_auto(gpk_context &ctx, const Args &args) {
    const Ladder<Args> &ladder = cuda_ladder_for(args);
    int index = 0;
    GPK_FORWARD_IF_ERROR(pick(ctx, op_of(args), ladder, args, args.dtype, &index));
    return ladder.rungs[index].run(ctx, args);
}

// What the CUDA backend launches for rung `index`: the rung itself when it was set on
// the context or "auto" has one choice only, else run_auto.
template <class Args>
Launcher<Args> launcher(const gpk_context &ctx, int op, const Ladder<Args> &ladder, int index) {
    return ctx.variant[op] >= 0 || ladder.auto_count == 1 ? ladder.rungs[index].run : run_auto<Args>;
}

// Validation compares with the vendor variant, or with the reference rung when the
// vendor variant is the one being checked.
template <class Args>
int checker_of(const Ladder<Args> &ladder, int index) {
    return index != ladder.vendor ? ladder.vendor : ladder.reference;
}

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

size_t aligned(size_t bytes) { return (bytes + 255) / 256 * 256; }

// Hands out consecutive, aligned pieces of the context's staging buffer.
struct Arena {
    char *next;
    void *take(size_t bytes) {
        void *p = next;
        next += aligned(bytes);
        return p;
    }
};

gpk_status stage_buffer(gpk_context &ctx, size_t bytes, Arena *arena) {
    arena->next = nullptr;
    if (bytes == 0) return GPK_SUCCESS;
    void *p = nullptr;
    GPK_FORWARD_IF_ERROR(cuda::buffer(ctx, Slot::Stage, bytes, &p));
    arena->next = static_cast<char *>(p);
    return GPK_SUCCESS;
}

// Copies a matrix of `outer` lines of `inner` elements between leading dimensions.
gpk_status copy_matrix(gpk_context &ctx, void *dst, int64_t dld, const void *src, int64_t sld, int64_t inner,
                       int64_t outer, size_t elem, cudaMemcpyKind kind) {
    return cuda::check(ctx,
                       cudaMemcpy2DAsync(dst, dld * elem, src, sld * elem, inner * elem, outer, kind, cuda::stream(ctx)),
                       "cudaMemcpy2DAsync (staging a matrix)");
}

gpk_status copy_bytes(gpk_context &ctx, void *dst, const void *src, size_t bytes, cudaMemcpyKind kind) {
    return cuda::check(ctx, cudaMemcpyAsync(dst, src, bytes, kind, cuda::stream(ctx)), "cudaMemcpyAsync (staging)");
}

gpk_status sync(gpk_context &ctx) { return cuda::check(ctx, cudaStreamSynchronize(cuda::stream(ctx)), "cudaStreamSynchronize"); }

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

template <class T>
gpk_status fetch(gpk_context &ctx, T *out, const void *src, int64_t ld, int64_t inner, int64_t outer) {
    GPK_FORWARD_IF_ERROR(copy_matrix(ctx, out, inner, src, ld, inner, outer, sizeof(T), cudaMemcpyDefault));
    return sync(ctx);
}

// A validation's verdict lets the call go on: GPK_ERROR_VALIDATION still delivers the
// variant's result to the outputs (it is what was checked), as the header promises.
bool stops(gpk_status verdict) { return verdict != GPK_SUCCESS && verdict != GPK_ERROR_VALIDATION; }

// ---- gemm -------------------------------------------------------------------------

// Elements of C as doubles: F16 and BF16 arrive as their bits.
struct F16Bits {
    uint16_t bits;
};
struct BF16Bits {
    uint16_t bits;
};
double as_double(float v) { return v; }
double as_double(double v) { return v; }
double as_double(F16Bits v) { return half_to_float(v.bits); }
double as_double(BF16Bits v) { return bf16_to_float(v.bits); }

// The tolerance of a gemm comparison, relative to the largest |C| of the reference:
// each side's F32/F64 accumulation error, plus, for 16-bit C, each side's rounding of
// the result (2^-11 for F16, 2^-8 for BF16, relative), and in TF32 mode each side's
// rounding of A and B to a 10-bit mantissa (2^-11 relative each, 2^-10 when the
// hardware truncates: a product errs by about 2^-9). The gemm comparisons have always
// measured against the largest |C| rather than sum |a b|, which holds for the random
// and the one-signed data they are made for.
double gemm_tolerance(const gpk_context &ctx, const GemmArgs &a) {
    const double k = static_cast<double>(a.k + 2);
    switch (a.dtype) {
        case GPK_F64: return 8 * 0x1p-53 * k;
        case GPK_F16: return 8 * 0x1p-24 * k + 2 * 0x1p-11;
        case GPK_BF16: return 8 * 0x1p-24 * k + 2 * 0x1p-8;
        default: return 8 * 0x1p-24 * k + (ctx.math_mode == GPK_MATH_TF32 ? 8 * 0x1p-9 : 0.0);
    }
}

// `space`: 2 m n elements, reserved before the variant ran.
template <class T>
gpk_status compare_gemm(gpk_context &ctx, const GemmArgs &a, const void *ref, const char *variant,
                        const char *checker, std::vector<unsigned char> &space) {
    const size_t count = static_cast<size_t>(a.m * a.n);
    T *got = reinterpret_cast<T *>(space.data()), *want = got + count;
    GPK_FORWARD_IF_ERROR(fetch(ctx, got, a.C, a.ldc, a.m, a.n));
    GPK_FORWARD_IF_ERROR(fetch(ctx, want, ref, a.m, a.m, a.n));
    double scale = 0, worst = 0;
    size_t at = 0;
    for (size_t i = 0; i < count; ++i) {
        const double g = as_double(got[i]), w = as_double(want[i]);
        if (std::isnan(g) != std::isnan(w)) {
            worst = std::numeric_limits<double>::infinity();
            at = i;
            break;
        }
        if (std::isnan(g)) continue;
        scale = std::max(scale, std::fabs(w));
        const double d = g == w ? 0.0 : std::fabs(g - w);
        if (d > worst) worst = d, at = i;
    }
    const double tol = gemm_tolerance(ctx, a) * scale;
    GPK_RETURN_ERROR_IF(!(worst <= tol), &ctx, GPK_ERROR_VALIDATION,
                        "gemm variant '%s' differs from '%s': |difference| %.3g at C(%zu, %zu) exceeds tolerance %.3g",
                        variant, checker, worst, at % static_cast<size_t>(a.m), at / static_cast<size_t>(a.m), tol);
    return GPK_SUCCESS;
}

gpk_status compare_gemm_any(gpk_context &ctx, const GemmArgs &a, const void *ref, const char *variant,
                            const char *checker, std::vector<unsigned char> &space) {
    switch (a.dtype) {
        case GPK_F32: return compare_gemm<float>(ctx, a, ref, variant, checker, space);
        case GPK_F64: return compare_gemm<double>(ctx, a, ref, variant, checker, space);
        case GPK_F16: return compare_gemm<F16Bits>(ctx, a, ref, variant, checker, space);
        default: return compare_gemm<BF16Bits>(ctx, a, ref, variant, checker, space);
    }
}

// The rung that checks rung `index` for a dtype: the vendor's, or, when the vendor's
// is the one checked, the reference rung; -1 when that does not take the dtype (F16
// and BF16), and the host backend's reference checks it instead.
int gemm_checker(const Ladder<GemmArgs> &ladder, int index, int dtype) {
    if (index != ladder.vendor) return ladder.vendor;
    return (ladder.rungs[ladder.reference].dtypes & dtype_bit(dtype)) ? ladder.reference : -1;
}

// The host reference of the device call `a` into the device matrix `check` (m x m
// leading dimension, holding C's old values when beta != 0): the operands are fetched,
// computed by the host backend and sent back.
gpk_status gemm_on_host(gpk_context &ctx, const GemmArgs &a, void *check) {
    const size_t es = dtype_size(a.dtype);
    const Storage sa{a.transa ? a.k : a.m, a.transa ? a.m : a.k, a.lda};
    const Storage sb{a.transb ? a.n : a.k, a.transb ? a.k : a.n, a.ldb};
    std::vector<unsigned char> A, B, C;
    try {
        A.resize(static_cast<size_t>(sa.inner * sa.outer) * es);
        B.resize(static_cast<size_t>(sb.inner * sb.outer) * es);
        C.resize(static_cast<size_t>(a.m * a.n) * es);
    } catch (const std::bad_alloc &) {
        return fail(&ctx, GPK_ERROR_OUT_OF_MEMORY, "out of host memory for the validation copy");
    }
    GPK_FORWARD_IF_ERROR(copy_matrix(ctx, A.data(), sa.inner, a.A, a.lda, sa.inner, sa.outer, es, cudaMemcpyDeviceToHost));
    GPK_FORWARD_IF_ERROR(copy_matrix(ctx, B.data(), sb.inner, a.B, a.ldb, sb.inner, sb.outer, es, cudaMemcpyDeviceToHost));
    if (gemm_reads_c(a))
        GPK_FORWARD_IF_ERROR(copy_matrix(ctx, C.data(), a.m, check, a.m, a.m, a.n, es, cudaMemcpyDeviceToHost));
    GPK_FORWARD_IF_ERROR(sync(ctx));
    GemmArgs h = a;
    h.A = A.data(), h.lda = sa.inner;
    h.B = B.data(), h.ldb = sb.inner;
    h.C = C.data(), h.ldc = a.m;
    GPK_FORWARD_IF_ERROR(host::gemm(ctx, h));
    GPK_FORWARD_IF_ERROR(copy_matrix(ctx, check, a.m, C.data(), a.m, a.m, a.n, es, cudaMemcpyHostToDevice));
    return sync(ctx);
}

// Host arrays go through the staging pipeline (cuda/pipeline.cpp), except in
// validation mode, which stages every array whole, computes, recomputes with the
// checker and compares: the path below.
gpk_status gemm_cuda(gpk_context &ctx, const GemmArgs &user, int index, bool row_major) {
    const Ladder<GemmArgs> &ladder = gemm_ladder(GPK_BACKEND_CUDA);
    const size_t es = dtype_size(user.dtype);
    GemmArgs a = user;
    // k == 0 or alpha == 0 (in the dtype: scalars.hpp) leaves C = beta * C: A and B
    // are not read (CBLAS), and the reference rung does exactly that with k = 0,
    // whatever variant was chosen. For the 16-bit dtypes, which the reference rung does
    // not take, the vendor rung's launcher does it with a kernel of its own (no cuBLAS
    // call), beta applied in F32.
    const bool scale_only = !gemm_forms_product(a);
    if (scale_only) a.k = 0;
    const Launcher<GemmArgs> scaler = is_16bit(a.dtype) ? ladder.rungs[ladder.vendor].run : ladder.rungs[ladder.reference].run;

    const Storage sa{a.transa ? a.k : a.m, a.transa ? a.m : a.k, a.lda};
    const Storage sb{a.transb ? a.n : a.k, a.transb ? a.k : a.n, a.ldb};
    bool dev_a = true, dev_b = true, dev_c = true;
    if (a.k > 0) {
        GPK_FORWARD_IF_ERROR(locate(ctx, a.A, "A", &dev_a));
        GPK_FORWARD_IF_ERROR(locate(ctx, a.B, "B", &dev_b));
    }
    GPK_FORWARD_IF_ERROR(locate(ctx, a.C, "C", &dev_c));
    if (!(dev_a && dev_b && dev_c) && !ctx.validation) {
        // The caller's B stays resident: after the row-major swap that is the normalized A.
        const Launcher<GemmArgs> run = scale_only ? scaler : launcher(ctx, GPK_OP_GEMM, ladder, index);
        return cuda::staged_gemm(ctx, a, run, row_major, dev_a, dev_b, dev_c);
    }
    if (!(dev_a && dev_b && dev_c)) cuda::forget_trace(ctx);

    const size_t bytes_a = sa.inner * sa.outer * es, bytes_b = sb.inner * sb.outer * es, bytes_c = a.m * a.n * es;
    Arena arena{};
    GPK_FORWARD_IF_ERROR(stage_buffer(
        ctx, (dev_a ? 0 : aligned(bytes_a)) + (dev_b ? 0 : aligned(bytes_b)) + (dev_c ? 0 : aligned(bytes_c)), &arena));
    if (!dev_a) {
        void *p = arena.take(bytes_a);
        GPK_FORWARD_IF_ERROR(copy_matrix(ctx, p, sa.inner, a.A, a.lda, sa.inner, sa.outer, es, cudaMemcpyHostToDevice));
        a.A = p, a.lda = sa.inner;
    }
    if (!dev_b) {
        void *p = arena.take(bytes_b);
        GPK_FORWARD_IF_ERROR(copy_matrix(ctx, p, sb.inner, a.B, a.ldb, sb.inner, sb.outer, es, cudaMemcpyHostToDevice));
        a.B = p, a.ldb = sb.inner;
    }
    if (!dev_c) {
        void *p = arena.take(bytes_c);
        if (gemm_reads_c(a))
            GPK_FORWARD_IF_ERROR(copy_matrix(ctx, p, a.m, a.C, a.ldc, a.m, a.n, es, cudaMemcpyHostToDevice));
        a.C = p, a.ldc = a.m;
    }

    // Validation recomputes into its own buffer from a snapshot of C.
    void *check = nullptr;
    const bool validate = ctx.validation && !scale_only;
    std::vector<unsigned char> space;
    if (validate) {
        GPK_FORWARD_IF_ERROR(reserve(ctx, &space, 2 * bytes_c));
        GPK_FORWARD_IF_ERROR(cuda::buffer(ctx, Slot::Check, bytes_c, &check));
        if (gemm_reads_c(a))
            GPK_FORWARD_IF_ERROR(copy_matrix(ctx, check, a.m, a.C, a.ldc, a.m, a.n, es, cudaMemcpyDeviceToDevice));
    }

    GPK_FORWARD_IF_ERROR(scale_only ? scaler(ctx, a) : launcher(ctx, GPK_OP_GEMM, ladder, index)(ctx, a));

    gpk_status verdict = GPK_SUCCESS;
    if (validate) {
        const int ci = gemm_checker(ladder, index, a.dtype);
        GemmArgs c = a;
        c.C = check, c.ldc = a.m;
        GPK_FORWARD_IF_ERROR(ci >= 0 ? ladder.rungs[ci].run(ctx, c) : gemm_on_host(ctx, c, check));
        const char *vn = ladder.rungs[index].name, *cn = ci >= 0 ? ladder.rungs[ci].name : "host";
        verdict = compare_gemm_any(ctx, a, check, vn, cn, space);
        if (stops(verdict)) return verdict;
    }
    if (!dev_c) GPK_FORWARD_IF_ERROR(copy_matrix(ctx, user.C, user.ldc, a.C, a.ldc, a.m, a.n, es, cudaMemcpyDeviceToHost));
    if (!(dev_a && dev_b && dev_c)) GPK_FORWARD_IF_ERROR(sync(ctx));
    return verdict;
}

// ---- reduce -----------------------------------------------------------------------

// Reads one result value as double (integers exactly enough for comparison as int64).
struct Value {
    double f;
    int64_t i;
};

Value read_value(int dtype, const void *p) {
    Value v{0, 0};
    if (dtype == GPK_F32 || is_16bit(dtype)) {  // the result of a 16-bit reduce is a float
        float f;
        std::memcpy(&f, p, 4);
        v.f = f;
    } else if (dtype == GPK_F64) {
        std::memcpy(&v.f, p, 8);
    } else {
        std::memcpy(&v.i, p, 8);
    }
    return v;
}

// `space`: n elements of x when a floating-point SUM may need its tolerance, reserved
// before the variant ran (reduce_space).
gpk_status compare_reduce(gpk_context &ctx, const ReduceArgs &a, const void *ref, const char *variant,
                          const char *checker, std::vector<unsigned char> &space) {
    unsigned char got_raw[8], want_raw[8];
    const size_t rs = reduce_result_size(a.dtype);
    GPK_FORWARD_IF_ERROR(copy_bytes(ctx, got_raw, a.result, rs, cudaMemcpyDeviceToHost));
    GPK_FORWARD_IF_ERROR(copy_bytes(ctx, want_raw, ref, rs, cudaMemcpyDeviceToHost));
    GPK_FORWARD_IF_ERROR(sync(ctx));
    const Value got = read_value(a.dtype, got_raw), want = read_value(a.dtype, want_raw);
    if (a.dtype == GPK_I32 || a.dtype == GPK_I64) {
        GPK_RETURN_ERROR_IF(got.i != want.i, &ctx, GPK_ERROR_VALIDATION,
                            "reduce variant '%s' gave %" PRId64 ", '%s' gave %" PRId64, variant, got.i, checker, want.i);
        return GPK_SUCCESS;
    }
    const bool same = (std::isnan(got.f) && std::isnan(want.f)) || got.f == want.f;
    double tol = 0;
    if (!same && a.op == GPK_SUM && std::isfinite(got.f) && std::isfinite(want.f)) {
        // Two summation trees each err by at most ~eps * depth * sum |x|.
        const size_t es = dtype_size(a.dtype);
        std::vector<unsigned char> &x = space;
        GPK_FORWARD_IF_ERROR(copy_bytes(ctx, x.data(), a.x, x.size(), cudaMemcpyDeviceToHost));
        GPK_FORWARD_IF_ERROR(sync(ctx));
        double abs_sum = 0;
        for (int64_t i = 0; i < a.n; ++i) {
            const unsigned char *e = x.data() + i * es;
            uint16_t bits = 0;
            if (is_16bit(a.dtype)) std::memcpy(&bits, e, sizeof bits);
            abs_sum += std::fabs(a.dtype == GPK_F16    ? half_to_float(bits)
                                 : a.dtype == GPK_BF16 ? bf16_to_float(bits)
                                                       : read_value(a.dtype, e).f);
        }
        // F16 and BF16 accumulate in F32.
        const double eps = a.dtype == GPK_F64 ? 0x1p-53 : 0x1p-24;
        tol = 4 * eps * (std::log2(static_cast<double>(a.n) + 1) + 2) * abs_sum;
    }
    GPK_RETURN_ERROR_IF(!same && !(std::fabs(got.f - want.f) <= tol), &ctx, GPK_ERROR_VALIDATION,
                        "reduce variant '%s' gave %.17g, '%s' gave %.17g (tolerance %.3g)", variant, got.f, checker,
                        want.f, tol);
    return GPK_SUCCESS;
}

gpk_status reduce_cuda(gpk_context &ctx, const ReduceArgs &user, int index) {
    const Ladder<ReduceArgs> &ladder = reduce_ladder(GPK_BACKEND_CUDA);
    const size_t es = dtype_size(user.dtype), rs = reduce_result_size(user.dtype);
    ReduceArgs a = user;
    bool dev_x = true, dev_r = true;
    if (a.n > 0) GPK_FORWARD_IF_ERROR(locate(ctx, a.x, "x", &dev_x));
    GPK_FORWARD_IF_ERROR(locate(ctx, a.result, "result", &dev_r));
    const Launcher<ReduceArgs> run = launcher(ctx, GPK_OP_REDUCE, ladder, index);
    if (!dev_x && !ctx.validation) return cuda::staged_reduce(ctx, a, run, dev_r);
    if (!dev_x) cuda::forget_trace(ctx);

    Arena arena{};
    GPK_FORWARD_IF_ERROR(stage_buffer(ctx, (dev_x ? 0 : aligned(a.n * es)) + (dev_r ? 0 : aligned(rs)), &arena));
    if (!dev_x) {
        void *p = arena.take(a.n * es);
        GPK_FORWARD_IF_ERROR(copy_bytes(ctx, p, a.x, a.n * es, cudaMemcpyHostToDevice));
        a.x = p;
    }
    if (!dev_r) a.result = arena.take(rs);

    // Everything validation needs is taken before the variant runs (see reserve).
    ReduceArgs c = a;
    std::vector<unsigned char> space;
    if (ctx.validation) {
        GPK_FORWARD_IF_ERROR(cuda::buffer(ctx, Slot::Check, rs, &c.result));
        const bool float_sum = a.op == GPK_SUM && (a.dtype == GPK_F32 || a.dtype == GPK_F64);
        if (float_sum) GPK_FORWARD_IF_ERROR(reserve(ctx, &space, static_cast<size_t>(a.n) * es));
    }

    GPK_FORWARD_IF_ERROR(run(ctx, a));

    gpk_status verdict = GPK_SUCCESS;
    if (ctx.validation) {
        const int ci = checker_of(ladder, index);
        GPK_FORWARD_IF_ERROR(ladder.rungs[ci].run(ctx, c));
        verdict = compare_reduce(ctx, a, c.result, ladder.rungs[index].name, ladder.rungs[ci].name, space);
        if (stops(verdict)) return verdict;
    }
    if (!dev_r) {
        GPK_FORWARD_IF_ERROR(copy_bytes(ctx, user.result, a.result, rs, cudaMemcpyDeviceToHost));
        GPK_FORWARD_IF_ERROR(sync(ctx));
    }
    return verdict;
}

// ---- transpose --------------------------------------------------------------------

// Transposition is exact, so validation checks every element of B against A.
// `space`: 2 rows cols elements, reserved before the variant ran.
template <class T>
gpk_status compare_transpose(gpk_context &ctx, const TransposeArgs &a, const char *variant,
                             std::vector<unsigned char> &space) {
    T *A = reinterpret_cast<T *>(space.data()), *B = A + static_cast<size_t>(a.rows * a.cols);
    GPK_FORWARD_IF_ERROR(fetch(ctx, A, a.A, a.lda, a.rows, a.cols));
    GPK_FORWARD_IF_ERROR(fetch(ctx, B, a.B, a.ldb, a.cols, a.rows));
    for (int64_t i = 0; i < a.rows; ++i)
        for (int64_t j = 0; j < a.cols; ++j)
            GPK_RETURN_ERROR_IF(B[j + i * a.cols] != A[i + j * a.rows], &ctx, GPK_ERROR_VALIDATION,
                                "transpose variant '%s': B(%" PRId64 ", %" PRId64 ") is not A(%" PRId64 ", %" PRId64 ")",
                                variant, j, i, i, j);
    return GPK_SUCCESS;
}

gpk_status transpose_cuda(gpk_context &ctx, const TransposeArgs &user, int index) {
    const Ladder<TransposeArgs> &ladder = transpose_ladder(GPK_BACKEND_CUDA);
    const size_t es = user.elem_size, bytes = user.rows * user.cols * es;
    TransposeArgs a = user;
    bool dev_a = true, dev_b = true;
    GPK_FORWARD_IF_ERROR(locate(ctx, a.A, "A", &dev_a));
    GPK_FORWARD_IF_ERROR(locate(ctx, a.B, "B", &dev_b));
    const Launcher<TransposeArgs> run = launcher(ctx, GPK_OP_TRANSPOSE, ladder, index);
    if (!(dev_a && dev_b) && !ctx.validation) return cuda::staged_transpose(ctx, a, run, dev_a, dev_b);
    if (!(dev_a && dev_b)) cuda::forget_trace(ctx);

    Arena arena{};
    GPK_FORWARD_IF_ERROR(stage_buffer(ctx, (dev_a ? 0 : aligned(bytes)) + (dev_b ? 0 : aligned(bytes)), &arena));
    if (!dev_a) {
        void *p = arena.take(bytes);
        GPK_FORWARD_IF_ERROR(copy_matrix(ctx, p, a.rows, a.A, a.lda, a.rows, a.cols, es, cudaMemcpyHostToDevice));
        a.A = p, a.lda = a.rows;
    }
    if (!dev_b) a.B = arena.take(bytes), a.ldb = a.cols;
    std::vector<unsigned char> space;
    if (ctx.validation) GPK_FORWARD_IF_ERROR(reserve(ctx, &space, 2 * bytes));

    GPK_FORWARD_IF_ERROR(run(ctx, a));

    gpk_status verdict = GPK_SUCCESS;
    if (ctx.validation) {
        const char *name = ladder.rungs[index].name;
        verdict = es == 2   ? compare_transpose<uint16_t>(ctx, a, name, space)
                  : es == 4 ? compare_transpose<uint32_t>(ctx, a, name, space)
                            : compare_transpose<uint64_t>(ctx, a, name, space);
        if (stops(verdict)) return verdict;
    }
    if (!dev_b) {
        GPK_FORWARD_IF_ERROR(copy_matrix(ctx, user.B, user.ldb, a.B, a.ldb, a.cols, a.rows, es, cudaMemcpyDeviceToHost));
        GPK_FORWARD_IF_ERROR(sync(ctx));
    }
    return verdict;
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

}  // namespace

// ---- entry points -----------------------------------------------------------------

gpk_status check_variant_dtype(gpk_context &ctx, int op, int dtype) {
    const int i = ctx.variant[op];
    if (i < 0) return GPK_SUCCESS;
    switch (op) {
        case GPK_OP_GEMM: return check_dtype_of(ctx, op, gemm_ladder(ctx.backend), i, dtype);
        case GPK_OP_REDUCE: return check_dtype_of(ctx, op, reduce_ladder(ctx.backend), i, dtype);
        case GPK_OP_TRANSPOSE: return check_dtype_of(ctx, op, transpose_ladder(ctx.backend), i, dtype);
        default: return GPK_SUCCESS;
    }
}

gpk_status run_gemm(gpk_context &ctx, const GemmArgs &args, int layout) {
    const Ladder<GemmArgs> &ladder = gemm_ladder(ctx.backend);
    int index = 0;
    GPK_FORWARD_IF_ERROR(select(ctx, GPK_OP_GEMM, ladder, args, args.dtype, &index));
    if (ctx.backend == GPK_BACKEND_CUDA) {
        cuda::DeviceGuard guard(ctx);
        return gemm_cuda(ctx, args, index, layout == GPK_ROW_MAJOR);
    }
    bool dev = false;
    if (args.k > 0) {
        GPK_FORWARD_IF_ERROR(locate(ctx, args.A, "A", &dev));
        GPK_FORWARD_IF_ERROR(locate(ctx, args.B, "B", &dev));
    }
    GPK_FORWARD_IF_ERROR(locate(ctx, args.C, "C", &dev));
    return ladder.rungs[index].run(ctx, args);
}

gpk_status run_reduce(gpk_context &ctx, const ReduceArgs &args) {
    const Ladder<ReduceArgs> &ladder = reduce_ladder(ctx.backend);
    int index = 0;
    GPK_FORWARD_IF_ERROR(select(ctx, GPK_OP_REDUCE, ladder, args, args.dtype, &index));
    if (ctx.backend == GPK_BACKEND_CUDA) {
        cuda::DeviceGuard guard(ctx);
        return reduce_cuda(ctx, args, index);
    }
    bool dev = false;
    if (args.n > 0) GPK_FORWARD_IF_ERROR(locate(ctx, args.x, "x", &dev));
    GPK_FORWARD_IF_ERROR(locate(ctx, args.result, "result", &dev));
    return ladder.rungs[index].run(ctx, args);
}

gpk_status run_transpose(gpk_context &ctx, const TransposeArgs &args) {
    const Ladder<TransposeArgs> &ladder = transpose_ladder(ctx.backend);
    int index = 0;
    GPK_FORWARD_IF_ERROR(select(ctx, GPK_OP_TRANSPOSE, ladder, args, args.dtype, &index));
    if (ctx.backend == GPK_BACKEND_CUDA) {
        cuda::DeviceGuard guard(ctx);
        return transpose_cuda(ctx, args, index);
    }
    bool dev = false;
    GPK_FORWARD_IF_ERROR(locate(ctx, args.A, "A", &dev));
    GPK_FORWARD_IF_ERROR(locate(ctx, args.B, "B", &dev));
    return ladder.rungs[index].run(ctx, args);
}

gpk_status run_pi(gpk_context &ctx, const PiArgs &args) {
    const Ladder<PiArgs> &ladder = pi_ladder(ctx.backend);
    int index = 0;
    GPK_FORWARD_IF_ERROR(select(ctx, GPK_OP_PI, ladder, args, -1, &index));
    if (ctx.backend == GPK_BACKEND_CUDA) {
        cuda::DeviceGuard guard(ctx);
        return pi_cuda(ctx, args, index);
    }
    return ladder.rungs[index].run(ctx, args);
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
