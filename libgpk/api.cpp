// The extern "C" entry points: check arguments, normalize layouts, hand the call to
// dispatch, and turn every failure -- an exception included -- into a status.
#include "gpk/gpk.h"

#include "checks.hpp"
#include "context.hpp"
#include "cuda/resources.hpp"
#include "staging/pipeline.hpp"
#include "dispatch.hpp"
#include "handles.hpp"
#include "registry.hpp"
#include "status.hpp"
#include "tuning.hpp"

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string_view>

using namespace gpk;

namespace {

// No exception may cross the C boundary.
template <class F>
gpk_status guarded(gpk_context *ctx, F &&body) noexcept {
    try {
        return body();
    } catch (const std::bad_alloc &) {
        return fail(ctx, GPK_ERROR_OUT_OF_MEMORY, "out of host memory");
    } catch (const std::length_error &) {
        // A container asked for more elements than it can hold: a size no host
        // allocation can satisfy, which is running out of memory, not a library fault.
        return fail(ctx, GPK_ERROR_OUT_OF_MEMORY, "out of host memory: a buffer larger than the host can allocate");
    } catch (...) {
        return fail(ctx, GPK_ERROR_INTERNAL, "internal error: unexpected exception");
    }
}

gpk_status check_op(gpk_context *ctx, int op) {
    GPK_RETURN_ERROR_IF(op < 0 || op >= GPK_OP_COUNT, ctx, GPK_ERROR_INVALID_ARGUMENT,
                        "op (%d) must be GPK_OP_GEMM (0), GPK_OP_REDUCE (1), GPK_OP_TRANSPOSE (2), GPK_OP_PI (3) or "
                        "GPK_OP_GEMM_BATCHED (4)",
                        op);
    return GPK_SUCCESS;
}

// The backend a context gets: AUTO falls back to the host when no GPU is usable,
// but a device index beyond the visible GPUs is an error whatever the backend.
gpk_status resolve_backend(int backend, int device, int *resolved) {
    if (backend == GPK_BACKEND_HOST) {
        *resolved = GPK_BACKEND_HOST;
        return GPK_SUCCESS;
    }
    const int count = cuda::device_count();
    if (backend == GPK_BACKEND_AUTO && count == 0) {
        *resolved = GPK_BACKEND_HOST;
        return GPK_SUCCESS;
    }
    const gpk_status probed = cuda::probe_device(nullptr, device);
    if (probed == GPK_SUCCESS) {
        *resolved = GPK_BACKEND_CUDA;
        return GPK_SUCCESS;
    }
    if (backend == GPK_BACKEND_AUTO && device < count) {
        *resolved = GPK_BACKEND_HOST;  // the GPU exists but cannot run our kernels
        return GPK_SUCCESS;
    }
    return probed;
}

// An op in messages by its name, as the apps and bindings spell it.
const char *op_name(int op) {
    static const char *const names[GPK_OP_COUNT] = {"gemm", "reduce", "transpose", "pi", "gemm_batched"};
    return names[op];
}

const char *backend_word(int backend) { return backend == GPK_BACKEND_CUDA ? "CUDA" : "host"; }

// gpk_set_variant's refusal of `name`, in words: the op by its name, whether the name
// is a variant of the other backend (a CUDA rung asked of a host context, or the other
// way round), and the choices this context has.
gpk_status unknown_variant(gpk_context *ctx, int op, const char *name) {
    char choices[320] = "";
    size_t used = 0;
    const int count = variant_count(op, ctx->backend);
    for (int i = 0; i < count && used < sizeof choices; ++i) {
        const int wrote = std::snprintf(choices + used, sizeof choices - used, "%s%s", i > 0 ? ", " : "",
                                        variant_name(op, ctx->backend, i));
        if (wrote < 0) break;
        used += static_cast<size_t>(wrote);
    }
    const char *here = backend_word(ctx->backend);
    const int other = ctx->backend == GPK_BACKEND_CUDA ? GPK_BACKEND_HOST : GPK_BACKEND_CUDA;
    if (variant_index(op, other, name) >= 0)
        return fail(ctx, GPK_ERROR_INVALID_ARGUMENT,
                    "name ('%.64s') is not a variant of %s on the %s backend, where this context runs: it is %s of "
                    "%s; the choices here are: %s, or \"auto\"",
                    name, op_name(op), here, other == GPK_BACKEND_CUDA ? "a CUDA rung" : "the host backend's variant",
                    op_name(op), choices);
    return fail(ctx, GPK_ERROR_INVALID_ARGUMENT,
                "name ('%.64s') is not a variant of %s on the %s backend, where this context runs; the choices here "
                "are: %s, or \"auto\"",
                name, op_name(op), here, choices);
}

// The figures of gpk_pi_result for `hits` among `samples` points; no samples, no
// estimate: NaN rather than a 0 that reads like one.
gpk_pi_result pi_result(uint64_t samples, uint64_t hits) {
    if (samples == 0) return gpk_pi_result{std::nan(""), std::nan(""), 0, 0};
    const double n = static_cast<double>(samples), p = static_cast<double>(hits) / n;
    return gpk_pi_result{4 * p, 4 * std::sqrt(p * (1 - p) / n), samples, hits};
}

}  // namespace

extern "C" {

GPK_API void gpk_version(int *major, int *minor, int *patch) {
    if (major) *major = GPK_VERSION_MAJOR;
    if (minor) *minor = GPK_VERSION_MINOR;
    if (patch) *patch = GPK_VERSION_PATCH;
}

GPK_API const char *gpk_status_string(gpk_status status) {
    // A C caller may pass any int. In C++ a gpk_status outside the range of its
    // enumerators (0..127) is undefined behaviour to read, so read the int it was
    // passed as.
    static_assert(sizeof(gpk_status) == sizeof(int), "gpk_status is passed as an int");
    int value;
    std::memcpy(&value, &status, sizeof value);
    switch (value) {
        case GPK_SUCCESS: return "success";
        case GPK_ERROR_INVALID_ARGUMENT: return "invalid argument";
        case GPK_ERROR_INVALID_HANDLE: return "invalid context handle";
        case GPK_ERROR_NO_DEVICE: return "no usable GPU";
        case GPK_ERROR_OUT_OF_MEMORY: return "out of memory";
        case GPK_ERROR_NOT_SUPPORTED: return "not supported";
        case GPK_ERROR_CUDA: return "CUDA error";
        case GPK_ERROR_CUBLAS: return "cuBLAS error";
        case GPK_ERROR_CURAND: return "cuRAND error";
        case GPK_ERROR_VALIDATION: return "validation failed";
        case GPK_ERROR_INTERNAL: return "internal error";
    }
    return "unknown status";
}

GPK_API const char *gpk_last_error(const gpk_context *handle) {
    // The text stays the context's: valid until its next call (or its gpk_destroy).
    const ContextRef ctx = lookup(handle);
    return ctx == nullptr ? thread_last_error() : ctx->last_error.c_str();
}

GPK_API gpk_status gpk_create(gpk_context **ctx, int backend, int device) {
    return guarded(nullptr, [&]() -> gpk_status {
        GPK_RETURN_ERROR_IF(ctx == nullptr, nullptr, GPK_ERROR_INVALID_ARGUMENT, "ctx is NULL: pass the address of a gpk_context *");
        *ctx = nullptr;
        GPK_RETURN_ERROR_IF(backend != GPK_BACKEND_AUTO && backend != GPK_BACKEND_CUDA && backend != GPK_BACKEND_HOST,
                            nullptr, GPK_ERROR_INVALID_ARGUMENT,
                            "backend (%d) must be GPK_BACKEND_AUTO (0), GPK_BACKEND_CUDA (1) or GPK_BACKEND_HOST (2)",
                            backend);
        GPK_RETURN_ERROR_IF(device < 0, nullptr, GPK_ERROR_INVALID_ARGUMENT, "device (%d) must be >= 0", device);
        int resolved = GPK_BACKEND_HOST;
        GPK_FORWARD_IF_ERROR(resolve_backend(backend, device, &resolved));

        gpk_context *c = new (std::nothrow) gpk_context;
        GPK_RETURN_ERROR_IF(c == nullptr, nullptr, GPK_ERROR_OUT_OF_MEMORY, "out of host memory for the context");
        c->backend = resolved;
        c->device = resolved == GPK_BACKEND_CUDA ? device : 0;
        if (resolved == GPK_BACKEND_CUDA) {
            const gpk_status st = cuda::create(*c);
            if (st != GPK_SUCCESS) {
                delete c;
                return st;
            }
        }
        // "auto"'s table: the built-in one for the GPU, or GPK_TUNING's file.
        const gpk_status tuned = tuning::install_at_create(*c);
        if (tuned != GPK_SUCCESS) {
            cuda::destroy(*c);
            delete c;
            return tuned;
        }
        // From here the registry owns c, and frees it if it cannot take it.
        return register_context(c, ctx);
    });
}

GPK_API gpk_status gpk_destroy(gpk_context *handle) {
    if (handle == nullptr) return GPK_SUCCESS;
    ContextRef ctx;
    // The handle is dead from here on, for every thread; the context goes with the
    // last reference: now, unless a call on another thread still holds it.
    GPK_FORWARD_IF_ERROR(retire(handle, &ctx));
    ctx.reset();
    return GPK_SUCCESS;
}

GPK_API gpk_status gpk_get_backend(const gpk_context *handle, int *backend) {
    ContextRef ref;
    GPK_FORWARD_IF_ERROR(acquire(handle, &ref));
    gpk_context *ctx = ref.get();
    gpk_context *c = ctx;
    GPK_RETURN_ERROR_IF(backend == nullptr, c, GPK_ERROR_INVALID_ARGUMENT, "backend is NULL");
    *backend = ctx->backend;
    return GPK_SUCCESS;
}

GPK_API gpk_status gpk_set_stream(gpk_context *handle, void *cuda_stream) {
    ContextRef ref;
    GPK_FORWARD_IF_ERROR(acquire(handle, &ref));
    gpk_context *ctx = ref.get();
    GPK_RETURN_ERROR_IF(ctx->backend == GPK_BACKEND_HOST && cuda_stream != nullptr, ctx, GPK_ERROR_NOT_SUPPORTED,
                        "cuda_stream must be NULL on the host backend");
    if (ctx->backend == GPK_BACKEND_CUDA) return cuda::switch_stream(*ctx, cuda_stream);
    ctx->stream = cuda_stream;
    return GPK_SUCCESS;
}

GPK_API gpk_status gpk_synchronize(gpk_context *handle) {
    ContextRef ref;
    GPK_FORWARD_IF_ERROR(acquire(handle, &ref));
    gpk_context *ctx = ref.get();
    if (ctx->backend != GPK_BACKEND_CUDA) return GPK_SUCCESS;
    cuda::DeviceGuard guard(*ctx);
    return cuda::check(*ctx, cudaStreamSynchronize(cuda::stream(*ctx)), "cudaStreamSynchronize");
}

GPK_API gpk_status gpk_variant_count(const gpk_context *handle, int op, int *count) {
    ContextRef ref;
    GPK_FORWARD_IF_ERROR(acquire(handle, &ref));
    gpk_context *ctx = ref.get();
    gpk_context *c = ctx;
    GPK_FORWARD_IF_ERROR(check_op(c, op));
    GPK_RETURN_ERROR_IF(count == nullptr, c, GPK_ERROR_INVALID_ARGUMENT, "count is NULL");
    *count = variant_count(op, ctx->backend);
    return GPK_SUCCESS;
}

GPK_API const char *gpk_variant_name(const gpk_context *handle, int op, int index) {
    const ContextRef ctx = lookup(handle);
    if (ctx == nullptr || op < 0 || op >= GPK_OP_COUNT) return nullptr;
    return variant_name(op, ctx->backend, index);
}

GPK_API gpk_status gpk_set_variant(gpk_context *handle, int op, const char *name) {
    ContextRef ref;
    GPK_FORWARD_IF_ERROR(acquire(handle, &ref));
    gpk_context *ctx = ref.get();
    GPK_FORWARD_IF_ERROR(check_op(ctx, op));
    if (name == nullptr || std::string_view(name) == "auto") {
        ctx->variant[op] = -1;
        return GPK_SUCCESS;
    }
    const int index = variant_index(op, ctx->backend, name);
    if (index < 0) return unknown_variant(ctx, op, name);
    ctx->variant[op] = index;
    return GPK_SUCCESS;
}

GPK_API gpk_status gpk_load_tuning(gpk_context *handle, const char *path) {
    ContextRef ref;
    GPK_FORWARD_IF_ERROR(acquire(handle, &ref));
    gpk_context *ctx = ref.get();
    return guarded(ctx, [&]() -> gpk_status {
        if (ctx->backend != GPK_BACKEND_CUDA) return tuning::load(*ctx, path);
        cuda::DeviceGuard guard(*ctx);
        return tuning::load(*ctx, path);
    });
}

GPK_API const char *gpk_tuning_name(const gpk_context *handle) {
    const ContextRef ctx = lookup(handle);
    return ctx == nullptr ? nullptr : ctx->tuning_name.c_str();
}

GPK_API const char *gpk_last_variant(const gpk_context *handle, int op) {
    const ContextRef ctx = lookup(handle);
    if (ctx == nullptr || op < 0 || op >= GPK_OP_COUNT) return nullptr;
    return variant_name(op, ctx->backend, ctx->last_variant[op]);
}

GPK_API gpk_status gpk_set_validation(gpk_context *handle, int enabled) {
    ContextRef ref;
    GPK_FORWARD_IF_ERROR(acquire(handle, &ref));
    gpk_context *ctx = ref.get();
    GPK_RETURN_ERROR_IF(enabled && ctx->backend != GPK_BACKEND_CUDA, ctx, GPK_ERROR_NOT_SUPPORTED,
                        "enabled (%d): validation needs the CUDA backend, where the vendor libraries run", enabled);
    ctx->validation = enabled != 0;
    return GPK_SUCCESS;
}

GPK_API gpk_status gpk_set_math_mode(gpk_context *handle, int mode) {
    ContextRef ref;
    GPK_FORWARD_IF_ERROR(acquire(handle, &ref));
    gpk_context *ctx = ref.get();
    GPK_RETURN_ERROR_IF(mode != GPK_MATH_DEFAULT && mode != GPK_MATH_TF32, ctx, GPK_ERROR_INVALID_ARGUMENT,
                        "mode (%d) must be GPK_MATH_DEFAULT (0) or GPK_MATH_TF32 (1)", mode);
    ctx->math_mode = mode;
    return GPK_SUCCESS;
}

GPK_API gpk_status gpk_get_math_mode(const gpk_context *handle, int *mode) {
    ContextRef ref;
    GPK_FORWARD_IF_ERROR(acquire(handle, &ref));
    gpk_context *ctx = ref.get();
    GPK_RETURN_ERROR_IF(mode == nullptr, ctx, GPK_ERROR_INVALID_ARGUMENT, "mode is NULL");
    *mode = ctx->math_mode;
    return GPK_SUCCESS;
}

GPK_API gpk_status gpk_set_staging(gpk_context *handle, int streams, size_t chunk_bytes, size_t device_bytes) {
    ContextRef ref;
    GPK_FORWARD_IF_ERROR(acquire(handle, &ref));
    gpk_context *ctx = ref.get();
    GPK_RETURN_ERROR_IF(streams < 1 || streams > StagingSettings::kMaxStreams, ctx, GPK_ERROR_INVALID_ARGUMENT,
                        "streams (%d) must be in 1..%d", streams, StagingSettings::kMaxStreams);
    ctx->staging.streams = streams;
    ctx->staging.chunk_bytes = chunk_bytes;
    ctx->staging.device_bytes = device_bytes;
    return GPK_SUCCESS;
}

GPK_API gpk_status gpk_stage_trace(const gpk_context *handle, gpk_stage_event *events, int64_t capacity,
                                   int64_t *count) {
    ContextRef ref;
    GPK_FORWARD_IF_ERROR(acquire(handle, &ref));
    gpk_context *ctx = ref.get();
    gpk_context *c = ctx;
    GPK_RETURN_ERROR_IF(count == nullptr, c, GPK_ERROR_INVALID_ARGUMENT, "count is NULL");
    GPK_RETURN_ERROR_IF(capacity < 0, c, GPK_ERROR_INVALID_ARGUMENT, "capacity (%" PRId64 ") must be >= 0", capacity);
    GPK_RETURN_ERROR_IF(events == nullptr && capacity > 0, c, GPK_ERROR_INVALID_ARGUMENT,
                        "events is NULL but capacity (%" PRId64 ") is > 0", capacity);
    if (ctx->backend != GPK_BACKEND_CUDA) {
        *count = 0;
        return GPK_SUCCESS;
    }
    return guarded(c, [&]() -> gpk_status {
        cuda::DeviceGuard guard(*c);
        return cuda::stage_trace(*c, events, capacity, count);
    });
}

GPK_API gpk_status gpk_gemm(gpk_context *handle, int dtype, int layout, int transa, int transb, int64_t m, int64_t n,
                            int64_t k, double alpha, const void *A, int64_t lda, const void *B, int64_t ldb,
                            double beta, void *C, int64_t ldc) {
    ContextRef ref;
    GPK_FORWARD_IF_ERROR(acquire(handle, &ref));
    gpk_context *ctx = ref.get();
    return guarded(ctx, [&]() -> gpk_status {
        GPK_FORWARD_IF_ERROR(check_gemm(ctx, dtype, layout, transa, transb, m, n, k, A, lda, B, ldb, C, ldc));
        GPK_FORWARD_IF_ERROR(check_variant_dtype(*ctx, GPK_OP_GEMM, dtype));
        if (m == 0 || n == 0) return GPK_SUCCESS;
        GemmArgs args{dtype, transa == GPK_TRANS, transb == GPK_TRANS, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc};
        if (layout == GPK_ROW_MAJOR) {
            // Row-major C is column-major C^T = op(B)^T op(A)^T: swap the operands.
            args = GemmArgs{dtype, transb == GPK_TRANS, transa == GPK_TRANS, n, m, k, alpha, B, ldb, A, lda, beta, C, ldc};
        }
        return run_gemm(*ctx, args, layout);
    });
}

}  // extern "C"

namespace {

// gpk_gemm_ex and gpk_gemm_blockscaled once the three dtypes are known not to be all
// equal (or block scales are asked for): checked, normalised to column-major as
// gpk_gemm is, each operand's dtype and scales travelling with its operand.
gpk_status gemm_ex_call(gpk_context *ctx, const char *fn, int layout, int transa, int transb, int64_t m, int64_t n,
                        int64_t k, double alpha, int a_dtype, const void *A, int64_t lda, const float *scale_a,
                        int b_dtype, const void *B, int64_t ldb, const float *scale_b, double beta, int c_dtype,
                        void *C, int64_t ldc, bool blockscaled) {
    int cls = -1;
    GPK_FORWARD_IF_ERROR(check_gemm_ex(ctx, fn, layout, transa, transb, m, n, k, a_dtype, A, lda, b_dtype, B, ldb,
                                       c_dtype, C, ldc, blockscaled, scale_a, scale_b, &cls));
    GPK_FORWARD_IF_ERROR(check_variant_dtype(*ctx, GPK_OP_GEMM, cls));
    if (m == 0 || n == 0) return GPK_SUCCESS;
    GemmArgs args{cls, transa == GPK_TRANS, transb == GPK_TRANS, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc};
    args.a_dtype = a_dtype, args.b_dtype = b_dtype, args.c_dtype = c_dtype;
    const int64_t nb = n / 128 + (n % 128 != 0);
    if (blockscaled) {
        // The caller's scales: 1 x 128 along k for each row of op(A), ld m; 128 x 128
        // blocks of op(B), ld ceil(n / 128) (ops.hpp).
        args.scale_a = scale_a, args.scale_a_group = 1, args.scale_a_ld = m;
        args.scale_b = scale_b, args.scale_b_group = 128, args.scale_b_ld = nb;
    }
    if (layout == GPK_ROW_MAJOR) {
        // C^T = op(B)^T op(A)^T: the operands swap with their dtypes and scales, so the
        // normalised A carries the 128-row blocks and the normalised B the fine scales.
        GemmArgs t = args;
        t.transa = transb == GPK_TRANS, t.transb = transa == GPK_TRANS;
        t.m = n, t.n = m;
        t.A = B, t.lda = ldb, t.B = A, t.ldb = lda;
        t.a_dtype = b_dtype, t.b_dtype = a_dtype;
        t.scale_a = args.scale_b, t.scale_a_group = args.scale_b_group, t.scale_a_ld = args.scale_b_ld;
        t.scale_b = args.scale_a, t.scale_b_group = args.scale_a_group, t.scale_b_ld = args.scale_a_ld;
        args = t;
    }
    return run_gemm(*ctx, args, layout);
}

}  // namespace

extern "C" {

GPK_API gpk_status gpk_gemm_ex(gpk_context *handle, int layout, int transa, int transb, int64_t m, int64_t n,
                               int64_t k, double alpha, int a_dtype, const void *A, int64_t lda, int b_dtype,
                               const void *B, int64_t ldb, double beta, int c_dtype, void *C, int64_t ldc) {
    // All three equal is gpk_gemm's call, answered exactly as gpk_gemm answers it; all
    // three FP8 is a C dtype outside the contract, which check_gemm_ex names.
    if (a_dtype == b_dtype && b_dtype == c_dtype && !is_fp8(c_dtype))
        return gpk_gemm(handle, a_dtype, layout, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    ContextRef ref;
    GPK_FORWARD_IF_ERROR(acquire(handle, &ref));
    gpk_context *ctx = ref.get();
    return guarded(ctx, [&]() -> gpk_status {
        return gemm_ex_call(ctx, "gpk_gemm_ex", layout, transa, transb, m, n, k, alpha, a_dtype, A, lda, nullptr,
                            b_dtype, B, ldb, nullptr, beta, c_dtype, C, ldc, false);
    });
}

GPK_API gpk_status gpk_gemm_blockscaled(gpk_context *handle, int layout, int transa, int transb, int64_t m, int64_t n,
                                        int64_t k, double alpha, int a_dtype, const void *A, int64_t lda,
                                        const float *scale_a, int b_dtype, const void *B, int64_t ldb,
                                        const float *scale_b, double beta, int c_dtype, void *C, int64_t ldc) {
    ContextRef ref;
    GPK_FORWARD_IF_ERROR(acquire(handle, &ref));
    gpk_context *ctx = ref.get();
    return guarded(ctx, [&]() -> gpk_status {
        return gemm_ex_call(ctx, "gpk_gemm_blockscaled", layout, transa, transb, m, n, k, alpha, a_dtype, A, lda,
                            scale_a, b_dtype, B, ldb, scale_b, beta, c_dtype, C, ldc, true);
    });
}

GPK_API gpk_status gpk_gemm_strided_batched(gpk_context *handle, int dtype, int layout, int transa, int transb,
                                            int64_t m, int64_t n, int64_t k, double alpha, const void *A, int64_t lda,
                                            int64_t stride_a, const void *B, int64_t ldb, int64_t stride_b,
                                            double beta, void *C, int64_t ldc, int64_t stride_c,
                                            int64_t batch_count) {
    ContextRef ref;
    GPK_FORWARD_IF_ERROR(acquire(handle, &ref));
    gpk_context *ctx = ref.get();
    return guarded(ctx, [&]() -> gpk_status {
        GPK_FORWARD_IF_ERROR(check_gemm_strided_batched(ctx, dtype, layout, transa, transb, m, n, k, A, lda, stride_a,
                                                        B, ldb, stride_b, C, ldc, stride_c, batch_count));
        GPK_FORWARD_IF_ERROR(check_variant_dtype(*ctx, GPK_OP_GEMM_BATCHED, dtype));
        if (batch_count == 0 || m == 0 || n == 0) return GPK_SUCCESS;
        GemmBatchedCall call{dtype, transa, transb, m, n, k, alpha, A, lda, stride_a,
                             B, ldb, stride_b, beta, C, ldc, stride_c, batch_count};
        if (layout == GPK_ROW_MAJOR) {
            // Row-major C_i is column-major C_i^T = op(B_i)^T op(A_i)^T, as for gpk_gemm:
            // the operands swap, each with its ld, stride and transpose.
            call = GemmBatchedCall{dtype, transb, transa, n, m, k, alpha, B, ldb, stride_b,
                                   A, lda, stride_a, beta, C, ldc, stride_c, batch_count};
        }
        return run_gemm_batched(*ctx, call);
    });
}

GPK_API gpk_status gpk_reduce(gpk_context *handle, int dtype, int op, const void *x, int64_t n, void *result) {
    ContextRef ref;
    GPK_FORWARD_IF_ERROR(acquire(handle, &ref));
    gpk_context *ctx = ref.get();
    return guarded(ctx, [&]() -> gpk_status {
        GPK_FORWARD_IF_ERROR(check_reduce(ctx, dtype, op, x, n, result));
        return run_reduce(*ctx, ReduceArgs{dtype, op, x, n, result});
    });
}

GPK_API gpk_status gpk_transpose(gpk_context *handle, int dtype, int layout, int64_t rows, int64_t cols, const void *A,
                                 int64_t lda, void *B, int64_t ldb) {
    ContextRef ref;
    GPK_FORWARD_IF_ERROR(acquire(handle, &ref));
    gpk_context *ctx = ref.get();
    return guarded(ctx, [&]() -> gpk_status {
        GPK_FORWARD_IF_ERROR(check_transpose(ctx, dtype, layout, rows, cols, A, lda, B, ldb));
        GPK_FORWARD_IF_ERROR(check_variant_dtype(*ctx, GPK_OP_TRANSPOSE, dtype));
        if (rows == 0 || cols == 0) return GPK_SUCCESS;
        // A row-major rows x cols matrix is a column-major cols x rows one.
        const bool col = layout == GPK_COL_MAJOR;
        return run_transpose(*ctx, TransposeArgs{dtype, dtype_size(dtype), col ? rows : cols, col ? cols : rows, A, lda,
                                                 B, ldb});
    });
}

GPK_API gpk_status gpk_pi(gpk_context *handle, uint64_t samples, uint64_t seed, gpk_pi_result *result) {
    ContextRef ref;
    GPK_FORWARD_IF_ERROR(acquire(handle, &ref));
    gpk_context *ctx = ref.get();
    return guarded(ctx, [&]() -> gpk_status {
        GPK_FORWARD_IF_ERROR(check_pi(ctx, samples, result));
        uint64_t hits = 0;
        // GPK_ERROR_VALIDATION still writes the variant's result (the header's one
        // exception to "a failed call writes nothing").
        const gpk_status verdict = run_pi(*ctx, PiArgs{0, samples, seed, &hits});
        if (verdict != GPK_SUCCESS && verdict != GPK_ERROR_VALIDATION) return verdict;
        const gpk_pi_result r = pi_result(samples, hits);
        GPK_FORWARD_IF_ERROR(write_result(*ctx, result, &r, sizeof r, "result"));
        return verdict;
    });
}

GPK_API gpk_status gpk_pi_range(gpk_context *handle, uint64_t first_sample, uint64_t count, uint64_t seed,
                                gpk_pi_result *result) {
    ContextRef ref;
    GPK_FORWARD_IF_ERROR(acquire(handle, &ref));
    gpk_context *ctx = ref.get();
    return guarded(ctx, [&]() -> gpk_status {
        GPK_FORWARD_IF_ERROR(check_pi_range(ctx, first_sample, count, result));
        uint64_t hits = 0;
        // An empty range (a rank left without samples) launches nothing. As in gpk_pi,
        // GPK_ERROR_VALIDATION writes the variant's result.
        const gpk_status verdict = count > 0 ? run_pi(*ctx, PiArgs{first_sample, count, seed, &hits}) : GPK_SUCCESS;
        if (verdict != GPK_SUCCESS && verdict != GPK_ERROR_VALIDATION) return verdict;
        const gpk_pi_result r = pi_result(count, hits);
        GPK_FORWARD_IF_ERROR(write_result(*ctx, result, &r, sizeof r, "result"));
        return verdict;
    });
}

}  // extern "C"
