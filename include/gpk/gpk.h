/*
 * libgpk: a GPU performance kit.
 *
 * Four primitives -- matrix multiply, reduction, transpose and Monte Carlo pi --
 * each backed by a ladder of CUDA kernels (the fastest one is the default) and
 * by a plain C++ host backend that doubles as the reference implementation.
 *
 * This header is the whole public API. It is C99, uses no CUDA types, and its
 * names, argument orders and enum values are part of the ABI.
 */
#ifndef GPK_GPK_H
#define GPK_GPK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*======   Visibility   ======*/
#ifndef GPK_API
#  if defined(_WIN32)
#    define GPK_API
#  elif defined(__GNUC__) && (__GNUC__ >= 4)
#    define GPK_API __attribute__((visibility("default")))
#  else
#    define GPK_API
#  endif
#endif

/*======   Version   ======*/
/* GPK_VERSION_MAJOR, GPK_VERSION_MINOR and GPK_VERSION_PATCH: written by the
 * build from the project version into gpk_version.h, installed beside this file. */
#include "gpk_version.h"
#define GPK_VERSION_NUMBER \
    (GPK_VERSION_MAJOR * 10000 + GPK_VERSION_MINOR * 100 + GPK_VERSION_PATCH)

/*======   Types and constants   ======*/

/*! gpk_context : an opaque handle holding the backend, the device, the CUDA
 *  stream, a reusable device workspace, vendor library handles (created on
 *  first use), the chosen variant of each op and the last error message.
 *  Contexts are independent; one context must be used by one thread at a time.
 *  The pointer is a handle, not the context's address: a handle is never handed
 *  out twice, so once destroyed it stays invalid (GPK_ERROR_INVALID_HANDLE) in
 *  every thread, whatever contexts are created later. */
typedef struct gpk_context gpk_context;

/*! gpk_status : every function that can fail returns one of these. */
typedef enum gpk_status {
    GPK_SUCCESS = 0,
    GPK_ERROR_INVALID_ARGUMENT = 1, /* a parameter broke a rule; see gpk_last_error() */
    GPK_ERROR_INVALID_HANDLE = 2,   /* NULL or destroyed context */
    GPK_ERROR_NO_DEVICE = 3,        /* no usable GPU for the requested backend/device */
    GPK_ERROR_OUT_OF_MEMORY = 4,    /* a host or device allocation failed */
    GPK_ERROR_NOT_SUPPORTED = 5,    /* valid request the op/variant/backend cannot do */
    GPK_ERROR_CUDA = 6,             /* the CUDA runtime reported an error */
    GPK_ERROR_CUBLAS = 7,           /* cuBLAS reported an error */
    GPK_ERROR_CURAND = 8,           /* cuRAND reported an error */
    GPK_ERROR_VALIDATION = 9,       /* validation mode: result differs from the vendor's */
    GPK_ERROR_INTERNAL = 99         /* a bug in libgpk */
} gpk_status;

/* Backends (gpk_create). */
enum { GPK_BACKEND_AUTO = 0, GPK_BACKEND_CUDA = 1, GPK_BACKEND_HOST = 2 };
/* Element types. GPK_F16 is IEEE binary16, GPK_BF16 bfloat16 (the upper half of
 * an IEEE binary32): 2-byte elements, passed as arrays of uint16_t (or the
 * compiler's _Float16 / __half / __nv_bfloat16). */
enum { GPK_F32 = 0, GPK_F64 = 1, GPK_I32 = 2, GPK_I64 = 3 };
enum { GPK_F16 = 4, GPK_BF16 = 5 };
/* OCP FP8, 1-byte elements (arrays of uint8_t): inputs of gpk_gemm_ex and
 * gpk_gemm_blockscaled only. E4M3: bias 7, no infinities, NaN S.1111.111,
 * largest finite 448. E5M2: bias 15, with infinities and NaNs. */
enum { GPK_F8E4M3 = 6, GPK_F8E5M2 = 7 };
/* Matrix layouts (CBLAS values). */
enum { GPK_ROW_MAJOR = 101, GPK_COL_MAJOR = 102 };
/* Transposition (CBLAS values). */
enum { GPK_NO_TRANS = 111, GPK_TRANS = 112 };
/* Reduction operators. */
enum { GPK_SUM = 0, GPK_MIN = 1, GPK_MAX = 2 };
/* Operations, for the variant functions. */
enum { GPK_OP_GEMM = 0, GPK_OP_REDUCE = 1, GPK_OP_TRANSPOSE = 2, GPK_OP_PI = 3 };
enum { GPK_OP_GEMM_BATCHED = 4 };               /* gpk_gemm_strided_batched's own ladder */
/* Math modes of F32 gemm (gpk_set_math_mode). */
enum { GPK_MATH_DEFAULT = 0, GPK_MATH_TF32 = 1 };

/*! gpk_pi_result : what gpk_pi() reports.
 *  estimate  = 4 * hits / samples
 *  std_error = 4 * sqrt(p * (1 - p) / samples), p = hits / samples
 *  samples   = the number of points actually drawn
 *  hits      = how many of them fell inside the quarter circle */
typedef struct gpk_pi_result {
    double estimate;
    double std_error;
    uint64_t samples;
    uint64_t hits;
} gpk_pi_result;

/*======   Library information and errors   ======*/

/*! gpk_version() :
 *  Writes the runtime library version; any pointer may be NULL. Never fails. */
GPK_API void gpk_version(int *major, int *minor, int *patch);

/*! gpk_status_string() :
 *  @return : a static, human-readable name for `status`
 *            ("unknown status" for values outside gpk_status). Never NULL. */
GPK_API const char *gpk_status_string(gpk_status status);

/*! gpk_last_error() :
 *  @return : the message of the most recent failed call on `ctx` -- which names
 *            the parameter, its value and the rule it broke, or carries the
 *            CUDA/cuBLAS/cuRAND error text. With ctx == NULL: the message of the
 *            calling thread's most recent failed call, whatever its context
 *            (this is how to read why gpk_create() failed).
 *            "" when there has been no failure. Successful calls do not clear it.
 *            Never NULL; valid until the next libgpk call on the same context
 *            (or, for NULL, on the same thread). */
GPK_API const char *gpk_last_error(const gpk_context *ctx);

/*======   Context   ======*/

/*! gpk_create() :
 *  Creates a context on `backend` (GPK_BACKEND_AUTO, _CUDA or _HOST) and writes
 *  it to *ctx. `device` is the CUDA device index (ignored by the host backend,
 *  but must be >= 0). AUTO takes the GPU when one is usable and the host
 *  backend otherwise; gpk_get_backend() tells which it took.
 *  The context starts on the default stream, with the "auto" variant of every
 *  op, validation off and GPK_MATH_DEFAULT, and the tuning table built in for
 *  its GPU, or the one in the file named by the environment variable
 *  GPK_TUNING when that is set and not empty (gpk_load_tuning()). Synchronous.
 *  @return : GPK_SUCCESS;
 *            GPK_ERROR_INVALID_ARGUMENT if ctx is NULL, backend is unknown or
 *            device < 0, or GPK_TUNING names a table the context cannot use
 *            (gpk_last_error(NULL) names GPK_TUNING, the file, line and why);
 *            GPK_ERROR_NO_DEVICE if backend is CUDA and no usable GPU exists, or
 *            `device` names a GPU that does not exist;
 *            GPK_ERROR_OUT_OF_MEMORY, GPK_ERROR_CUDA.
 *  On failure *ctx is set to NULL (when ctx is not NULL). */
GPK_API gpk_status gpk_create(gpk_context **ctx, int backend, int device);

/*! gpk_destroy() :
 *  Waits for the context's pending work, then frees it and everything it owns
 *  (workspace, staging buffers, vendor handles). The user's stream is not
 *  destroyed. ctx == NULL is a no-op that succeeds.
 *  @return : GPK_SUCCESS; GPK_ERROR_INVALID_HANDLE for a handle that is not a
 *            live context (destroyed already, or never created): nothing is
 *            freed then. */
GPK_API gpk_status gpk_destroy(gpk_context *ctx);

/*! gpk_get_backend() :
 *  Writes the context's resolved backend (GPK_BACKEND_CUDA or _HOST, never AUTO).
 *  @return : GPK_SUCCESS, GPK_ERROR_INVALID_HANDLE, GPK_ERROR_INVALID_ARGUMENT
 *            (backend NULL). */
GPK_API gpk_status gpk_get_backend(const gpk_context *ctx, int *backend);

/*! gpk_set_stream() :
 *  Makes the context issue its work on `cuda_stream` (a cudaStream_t; NULL is
 *  the default stream). Sticky. The stream stays owned by the caller and must
 *  outlive its use by the context. Work issued on the new stream waits for the
 *  context's work still queued on the previous one (they share the context's
 *  workspace); the host does not wait.
 *  @return : GPK_SUCCESS, GPK_ERROR_INVALID_HANDLE;
 *            GPK_ERROR_NOT_SUPPORTED for a non-NULL stream on the host backend;
 *            GPK_ERROR_CUDA (the stream is not usable; the context keeps the
 *            previous one). */
GPK_API gpk_status gpk_set_stream(gpk_context *ctx, void *cuda_stream);

/*! gpk_synchronize() :
 *  Blocks until all work issued by the context has finished, and reports an
 *  asynchronous failure of that work, if any. Immediate on the host backend.
 *  @return : GPK_SUCCESS, GPK_ERROR_INVALID_HANDLE, GPK_ERROR_CUDA. */
GPK_API gpk_status gpk_synchronize(gpk_context *ctx);

/*======   Variants   ======*/

/*! gpk_variant_count() :
 *  Writes how many variants of `op` (GPK_OP_*) the context's backend offers.
 *  Variants are listed in ladder order: index 0 is the vendor library on the
 *  CUDA backend and the reference on the host backend, then the rungs from the
 *  simplest kernel up.
 *  @return : GPK_SUCCESS, GPK_ERROR_INVALID_HANDLE, GPK_ERROR_INVALID_ARGUMENT
 *            (unknown op, count NULL). */
GPK_API gpk_status gpk_variant_count(const gpk_context *ctx, int op, int *count);

/*! gpk_variant_name() :
 *  @return : the name of variant `index` of `op` on the context's backend, a
 *            static string; NULL if ctx is NULL, op is unknown or index is out
 *            of range. */
GPK_API const char *gpk_variant_name(const gpk_context *ctx, int op, int index);

/*! gpk_set_variant() :
 *  Chooses the variant of `op` used by later calls on this context. Sticky.
 *  NULL or "auto" restores the default: for each call, the rung measured fastest
 *  for calls like it on a GPU of this kind (gpk_load_tuning()). A chosen variant that does not support a call's dtype,
 *  or cannot take the call (arrays not aligned for its vector accesses, a GPU
 *  without the instructions it needs), makes that call return
 *  GPK_ERROR_NOT_SUPPORTED, with a message naming the variant and why.
 *  @return : GPK_SUCCESS, GPK_ERROR_INVALID_HANDLE;
 *            GPK_ERROR_INVALID_ARGUMENT (unknown op, or no variant of that name
 *            on the context's backend). */
GPK_API gpk_status gpk_set_variant(gpk_context *ctx, int op, const char *name);

/*! gpk_load_tuning() :
 *  Chooses the tuning table that "auto" chooses from: the table in the file at
 *  `path`, as `gpk-bench --tune FILE` writes it on a GPU of this context's kind,
 *  or with path == NULL the table built into libgpk for the context's GPU (none
 *  where the library has none). Sticky. A table maps each op's calls -- by
 *  dtype, math mode, layout, alignment and shape -- to the rungs measured
 *  fastest there; "auto" runs the first of those at the nearest measured shape
 *  that takes the call, and where the table has none, the vendor library for
 *  gemm and the ladder's default for the other ops. The same table and call
 *  always make the same choice. gpk_tuning_name() says which table is in use,
 *  gpk_last_variant() which rung a call ran.
 *  @return : GPK_SUCCESS, GPK_ERROR_INVALID_HANDLE;
 *            GPK_ERROR_INVALID_ARGUMENT when path is empty, or the file cannot be
 *            read, is a table for another device kind (GPU name, compute
 *            capability, SM count), has a malformed line or names a rung that
 *            its op's ladder does not have: gpk_last_error() names the file and
 *            line. The context then keeps its table. */
GPK_API gpk_status gpk_load_tuning(gpk_context *ctx, const char *path);

/*! gpk_tuning_name() :
 *  @return : the table "auto" is choosing from: "built-in: NVIDIA H200" (the
 *            library's own for the context's GPU), the path given to
 *            gpk_load_tuning() or in GPK_TUNING, or "none: the vendor library
 *            and each ladder's default". Valid until the context's next
 *            gpk_load_tuning() or its gpk_destroy(); NULL for an invalid handle. */
GPK_API const char *gpk_tuning_name(const gpk_context *ctx);

/*! gpk_last_variant() :
 *  @return : the name of the rung that the op's last successful call on this
 *            context ran ("cublas", "wgmma_ws", ...; "host" on the host backend),
 *            whether "auto" chose it or gpk_set_variant() did: for a staged call
 *            (host arrays), the rung of its chunks (of the last, should they
 *            differ); for a gemm that forms no product (k == 0 or alpha == 0),
 *            the rung that scaled C. A static string; NULL before any such call,
 *            for an unknown op or an invalid handle. */
GPK_API const char *gpk_last_variant(const gpk_context *ctx, int op);

/*! gpk_set_validation() :
 *  enabled != 0: every later call on the CUDA backend is recomputed with the
 *  vendor library (cuBLAS, CUB, cuRAND) and, if the two results differ beyond
 *  the tolerance of the dtype and size, returns GPK_ERROR_VALIDATION with the
 *  largest difference found in gpk_last_error(). Host arrays are checked chunk
 *  by chunk as they go through the staging pipeline, with the tolerance of the
 *  whole call (for a reduce of a host x the checker reduces the same pieces).
 *  GPK_ERROR_VALIDATION is the one error after which the outputs are
 *  written: they hold the variant's result (what was checked), in host and in
 *  device memory alike.
 *  Validation makes every call synchronous. Sticky.
 *  When the variant in use is the vendor's own, gemm and reduce are checked
 *  against the first libgpk rung that takes the dtype instead (for a gemm dtype
 *  no rung of libgpk computes, against the host backend's result). The gemm
 *  tolerance grows by the result's rounding for F16 and BF16, and by the
 *  rounding of A and B to TF32 in GPK_MATH_TF32. gpk_transpose is exact, so its check
 *  compares every element of B with A on the host. For gpk_pi the check is
 *  statistical: the two estimates must agree within 6 combined standard
 *  errors.
 *  @return : GPK_SUCCESS, GPK_ERROR_INVALID_HANDLE;
 *            GPK_ERROR_NOT_SUPPORTED when enabling it on the host backend
 *            (there is no vendor library to compare with). */
GPK_API gpk_status gpk_set_validation(gpk_context *ctx, int enabled);

/*! gpk_set_math_mode() :
 *  Chooses the arithmetic of later F32 gemm calls on this context. Sticky;
 *  a context starts in GPK_MATH_DEFAULT.
 *  GPK_MATH_DEFAULT : exact FP32, no TF32 anywhere: every product is formed
 *                     from the full 24-bit significands and accumulated in F32.
 *  GPK_MATH_TF32    : F32 gemm may round A and B to TF32 (a 10-bit mantissa,
 *                     F32's exponent range) and multiply them on tensor cores,
 *                     accumulating in F32 (as cuBLAS does with
 *                     CUBLAS_TF32_TENSOR_OP_MATH); the error bound is then TF32's,
 *                     about 2^-11 of sum |alpha a b| per element rather than F32's.
 *  The mode affects F32 gemm only: F64, F16, BF16, reduce and transpose compute
 *  the same in both. The host backend accepts both modes and computes exactly;
 *  variants without tensor-core code keep exact FP32 in either mode.
 *  @return : GPK_SUCCESS, GPK_ERROR_INVALID_HANDLE;
 *            GPK_ERROR_INVALID_ARGUMENT (mode not GPK_MATH_DEFAULT or
 *            GPK_MATH_TF32; the context keeps its mode). */
GPK_API gpk_status gpk_set_math_mode(gpk_context *ctx, int mode);

/*! gpk_get_math_mode() :
 *  Writes the context's math mode (GPK_MATH_DEFAULT or GPK_MATH_TF32) to *mode.
 *  @return : GPK_SUCCESS, GPK_ERROR_INVALID_HANDLE, GPK_ERROR_INVALID_ARGUMENT
 *            (mode NULL). */
GPK_API gpk_status gpk_get_math_mode(const gpk_context *ctx, int *mode);

/*======   Host arrays: the staging pipeline   ======*/
/*
 * On the CUDA backend, gpk_gemm, gpk_transpose and gpk_reduce move host arrays
 * through the GPU in chunks, on the context's pipeline of S streams: chunk c goes
 * to stream c mod S as its copies to the GPU, the kernel of the chosen variant
 * and its copy back, so that the copies and kernels of different chunks overlap.
 * The chunks are
 *  - gemm: panels of rows of C and of op(A) (rows of C in the caller's layout),
 *    while B is copied to the GPU once and stays there (resident). When B does
 *    not fit beside one chunk per stream in the device memory the pipeline may
 *    use, it is cut into blocks of columns of C (each at most half of that
 *    memory) and the panels of A are copied once per block: matrices larger than
 *    the GPU's memory run this way (out of core);
 *  - transpose: panels along the longer side of A (rows of A to columns of B,
 *    or columns of A to rows of B);
 *  - reduce: pieces of x, each reduced on the GPU to a partial; the partials are
 *    reduced in the order of the pieces at the end.
 * Arrays in device memory are used in place; only host arrays are copied. Host
 * arrays in pinned memory (cudaHostAlloc, cudaHostRegister) are copied by DMA at
 * the link's speed, straight from and to the caller's array; pageable ones pass
 * through the context's pinned buffers (two per stream), which the host fills
 * and empties while the GPU works on other chunks. The buffers, device and
 * pinned, are the context's: reused from call to call, grown when a call needs
 * more, freed by gpk_destroy.
 * Defaults: 4 streams; chunks of about 32 MiB of host data, and at least two
 * per stream when the arrays are large enough; device memory up to what the GPU
 * has free, less a margin for others (1/16 of it, 64 MiB to 256 MiB).
 * A floating-point SUM of a host x is grouped by piece, so its last bits may
 * change with the settings below (and without a device_bytes cap, with pieces
 * made smaller when the GPU lacks the memory for them); for given settings the
 * result is the same from run to run. MIN, MAX and integer results are exact.
 * In validation mode (gpk_set_validation) host arrays go through the pipeline
 * too: each chunk is also computed by the checker, on the same stream, and
 * compared on the host while later chunks run; the verdict comes once every
 * chunk's result is in place. The checker's copy of each chunk of C counts in
 * device_bytes; the chunks are those of the same call without validation unless
 * the device memory the pipeline may use is too small for that copy beside them.
 * Every buffer a call needs is allocated before its first copy, so that
 * GPK_ERROR_OUT_OF_MEMORY, like every error found before the work starts, leaves
 * the outputs as they were (see "What a failed call leaves behind" below). After
 * any failure the context is ready for the next call.
 */

/*! gpk_set_staging() :
 *  Shapes the staging pipeline for the context's later calls on host arrays.
 *  `streams` : 1 to 16 (default 4). With 1 nothing overlaps: each chunk is
 *              copied in, computed and copied back before the next one starts.
 *  `chunk_bytes` : about how much host data one chunk moves, any size (0: the
 *              library's choice, see above). A small size makes many chunks.
 *  `device_bytes` : the most device memory the pipeline may hold during a call
 *              -- the chunks' buffers of every stream and gemm's resident block,
 *              in validation mode also the checker's tiles of C
 *              (0: no cap but the GPU's free memory). A cap below the size of the
 *              operands makes gemm run out of core; a cap below what the smallest
 *              chunk on each stream needs makes those calls fail with
 *              GPK_ERROR_OUT_OF_MEMORY, naming device_bytes. Not counted: the
 *              cuBLAS variants' handles (one per stream) and a word per stream.
 *  Sticky. The host backend checks and keeps the settings, and has no use for
 *  them.
 *  @return : GPK_SUCCESS, GPK_ERROR_INVALID_HANDLE;
 *            GPK_ERROR_INVALID_ARGUMENT (streams out of range). */
GPK_API gpk_status gpk_set_staging(gpk_context *ctx, int streams, size_t chunk_bytes,
                                   size_t device_bytes);

/*! gpk_stage_event :
 *  One step of the context's last call through the staging pipeline: a copy to
 *  the GPU (kind GPK_STAGE_COPY_IN), a kernel (GPK_STAGE_COMPUTE) or a copy back
 *  (GPK_STAGE_COPY_OUT) of chunk `chunk` (0, 1, ... in the order the chunks were
 *  issued), on pipeline stream `stream` (0 .. streams - 1: chunk mod the number
 *  of streams the call used), timed on the GPU in milliseconds from the start of
 *  the call (CUDA events: about half a microsecond of resolution). `bytes` is
 *  what a copy moved, 0 for a kernel; the copies' bytes add up to the host data
 *  the call moved. gemm's copies of its resident B (on stream 0) belong to the
 *  first chunk that uses them. */
enum { GPK_STAGE_COPY_IN = 0, GPK_STAGE_COMPUTE = 1, GPK_STAGE_COPY_OUT = 2 };
typedef struct gpk_stage_event {
    int32_t kind;
    int32_t stream;
    int64_t chunk;
    uint64_t bytes; /* moved by a copy; 0 for a kernel */
    double start_ms;
    double end_ms;
} gpk_stage_event;

/*! gpk_stage_trace() :
 *  Copies the first min(capacity, count) events of the context's last call that
 *  went through the staging pipeline into `events` (host memory; NULL with
 *  capacity 0 asks for the count alone) and writes their number to *count: 0
 *  when no call has, when the last one failed (GPK_ERROR_VALIDATION included),
 *  and always on the host backend. In validation mode a chunk's kernel step
 *  (GPK_STAGE_COMPUTE) holds the variant's kernel, the checker's and the copies
 *  the comparison reads. Calls on device arrays
 *  alone leave the trace as it was. Events are in the order they were issued; a
 *  call keeps its first 65536. The trace costs the calls only the recording of
 *  two CUDA events per step, and reading it waits for nothing.
 *  @return : GPK_SUCCESS, GPK_ERROR_INVALID_HANDLE;
 *            GPK_ERROR_INVALID_ARGUMENT (count NULL, capacity < 0, events NULL
 *            with capacity > 0); GPK_ERROR_CUDA. */
GPK_API gpk_status gpk_stage_trace(const gpk_context *ctx, gpk_stage_event *events,
                                   int64_t capacity, int64_t *count);

/*======   Operations   ======*/
/*
 * Pointers: every array may be host memory or memory of the context's GPU;
 * the library finds out which.
 *  - CUDA backend, all arrays (and the result) in device memory: the call is
 *    asynchronous on the context's stream. Argument errors are still reported
 *    at once; errors of the work itself may surface at gpk_synchronize().
 *  - CUDA backend, any array or the result in host memory: host arrays go
 *    through the staging pipeline (above) and the call returns once every
 *    result is in its final place (synchronous).
 *  - Host backend: arrays must be host-accessible (host or managed memory);
 *    device memory is GPK_ERROR_INVALID_ARGUMENT. Synchronous.
 * An array whose bytes would run past the end of the address space is
 * GPK_ERROR_INVALID_ARGUMENT (and is never touched).
 *
 * What a failed call leaves behind, in host and in device memory alike:
 *  - every error but those of the next two points -- argument errors,
 *    GPK_ERROR_NOT_SUPPORTED and GPK_ERROR_OUT_OF_MEMORY (host or device) among
 *    them -- is found before anything is written: the outputs are as they were;
 *  - GPK_ERROR_VALIDATION (validation mode only): the outputs hold the
 *    variant's result, the one that failed the check (see gpk_set_validation);
 *  - GPK_ERROR_CUDA, GPK_ERROR_CUBLAS and GPK_ERROR_CURAND report a failure of
 *    the work itself, which may have stopped part way: the outputs may be
 *    partly written (for asynchronous calls such errors may surface only at
 *    gpk_synchronize()).
 * Inputs are never written.
 */

/*! gpk_gemm() :
 *  CBLAS ?gemm:  C = alpha * op(A) * op(B) + beta * C,
 *  op(A) is m x k, op(B) is k x n, C is m x n, all in `layout`
 *  (GPK_ROW_MAJOR or GPK_COL_MAJOR); op(X) = X or X^T per transa/transb
 *  (GPK_NO_TRANS / GPK_TRANS). dtype is GPK_F32 (float arrays), GPK_F64
 *  (double arrays), GPK_F16 or GPK_BF16 (2-byte arrays). For F32 and F64,
 *  alpha and beta are converted to the dtype (F32 products follow the context's
 *  math mode, see gpk_set_math_mode). For F16 and BF16, A, B and C all have the
 *  dtype; products are accumulated in at least F32, alpha and beta are
 *  converted to F32 and applied in F32, and each element of C is rounded once
 *  to the dtype (round to nearest, ties to even): the error bound is F32's plus
 *  one rounding of the result (2^-11 relative for F16, 2^-8 for BF16).
 *  Leading dimensions follow CBLAS: with column-major, lda >= max(1, transa ?
 *  k : m), ldb >= max(1, transb ? n : k), ldc >= max(1, m); with row-major,
 *  lda >= max(1, transa ? m : k), ldb >= max(1, transb ? k : n),
 *  ldc >= max(1, n).
 *  Zero tests are on the converted values (in F32, 1e-300 is 0):
 *  beta == 0: C is only written, never read (NaN or Inf in C does not leak).
 *  m == 0 or n == 0: quick return. k == 0 (or alpha == 0): C = beta * C, and
 *  A and B are not read (NaN in them does not leak).
 *  A and B may be NULL only when they are not read (m, n or k is 0); C may be
 *  NULL only when m or n is 0. C must not overlap A or B.
 *  @return : GPK_SUCCESS; GPK_ERROR_INVALID_HANDLE; GPK_ERROR_INVALID_ARGUMENT
 *            (unknown dtype/layout/trans, negative size, leading dimension too
 *            small, NULL array that is read or written, size overflowing
 *            int64 bytes, device memory on the host backend);
 *            GPK_ERROR_NOT_SUPPORTED (integer dtype, or a chosen variant
 *            without this dtype: the message names both); GPK_ERROR_OUT_OF_MEMORY;
 *            GPK_ERROR_CUDA; GPK_ERROR_CUBLAS; GPK_ERROR_VALIDATION. */
GPK_API gpk_status gpk_gemm(gpk_context *ctx, int dtype, int layout, int transa, int transb,
                            int64_t m, int64_t n, int64_t k, double alpha,
                            const void *A, int64_t lda, const void *B, int64_t ldb,
                            double beta, void *C, int64_t ldc);

/*! gpk_gemm_strided_batched() :
 *  batch_count independent CBLAS gemms of one shape, layout and transposes:
 *    C_i = alpha * op(A_i) * op(B_i) + beta * C_i,  i = 0 .. batch_count - 1,
 *  where matrix i of A starts at A + i * stride_a elements (likewise B with
 *  stride_b and C with stride_c), as in cublasGemmStridedBatchedEx. Each product
 *  follows gpk_gemm's rules (dtypes, math mode, leading dimensions, beta == 0
 *  never reading C, k == 0 or alpha == 0 giving C_i = beta * C_i without
 *  reading A or B).
 *  Strides are in elements and >= 0. stride_a or stride_b may be 0: one matrix
 *  shared by every product. When batch_count > 1, stride_c must be at least the
 *  span of one C matrix (column-major: (n - 1) * ldc + m; row-major:
 *  (m - 1) * ldc + n), so that no two C matrices overlap. No C matrix may
 *  overlap any A or B matrix: the spans of the whole batches, from the first
 *  element of matrix 0 to the last of matrix batch_count - 1, must not meet.
 *  Elements of C outside the C matrices (ldc and stride padding) are not
 *  written.
 *  batch_count == 0, m == 0 or n == 0: quick return (nothing read or written).
 *  The ladder is GPK_OP_GEMM_BATCHED (gpk_variant_*, gpk_set_variant); index 0
 *  is the vendor's strided-batched call. Host or device memory, synchronous
 *  behaviour and the staging of host arrays as for gpk_gemm (host arrays move
 *  through the pipeline in chunks of whole products).
 *  @return : GPK_SUCCESS; GPK_ERROR_INVALID_HANDLE; GPK_ERROR_INVALID_ARGUMENT
 *            (everything gpk_gemm rejects, and: negative stride_a, stride_b,
 *            stride_c or batch_count; stride_c smaller than one C matrix; a C
 *            matrix overlapping an A or B matrix; batch_count times a stride
 *            overflowing int64 bytes -- the message names the parameter);
 *            GPK_ERROR_NOT_SUPPORTED (integer dtype, or a chosen variant
 *            that cannot take the call: the message names it);
 *            GPK_ERROR_OUT_OF_MEMORY; GPK_ERROR_CUDA; GPK_ERROR_CUBLAS;
 *            GPK_ERROR_VALIDATION. On any error nothing is written to C. */
GPK_API gpk_status gpk_gemm_strided_batched(gpk_context *ctx, int dtype, int layout, int transa,
                                            int transb, int64_t m, int64_t n, int64_t k,
                                            double alpha, const void *A, int64_t lda,
                                            int64_t stride_a, const void *B, int64_t ldb,
                                            int64_t stride_b, double beta, void *C,
                                            int64_t ldc, int64_t stride_c,
                                            int64_t batch_count);

/*! gpk_gemm_ex() :
 *  gpk_gemm with a dtype per operand: a_dtype for A, b_dtype for B, c_dtype
 *  for C. Allowed combinations:
 *   - all three equal: exactly gpk_gemm(ctx, c_dtype, ...);
 *   - A and B both GPK_F16 or both GPK_BF16, C GPK_F32;
 *   - A and B each GPK_F8E4M3 or GPK_F8E5M2 (any mix), C GPK_F32, GPK_F16 or
 *     GPK_BF16.
 *  Inputs are read as they are; NaN propagates. Products are exact in F32 and
 *  accumulated in F32, where a hardware partial sum of at most 128 consecutive
 *  products along k may be kept at reduced precision before it is added to the
 *  F32 accumulator. Bound: |C - exact| <= 2^-9 * sum_k |alpha*a*b| +
 *  |beta*c| * 2^-24, plus one rounding of C to its dtype. alpha and beta are
 *  applied in F32 (a per-tensor FP8 scale goes into alpha). Layouts,
 *  transposes, leading dimensions (no alignment required), host or device
 *  pointers, k == 0 and beta == 0 (C not read) behave as for gpk_gemm. The
 *  ladder is GPK_OP_GEMM: a rung refuses by name what it cannot take.
 *  @return : as gpk_gemm; GPK_ERROR_INVALID_ARGUMENT also for a dtype
 *            combination outside the list above (the message names c_dtype or
 *            the operand, and the rule). */
GPK_API gpk_status gpk_gemm_ex(gpk_context *ctx, int layout, int transa, int transb,
                               int64_t m, int64_t n, int64_t k, double alpha,
                               int a_dtype, const void *A, int64_t lda,
                               int b_dtype, const void *B, int64_t ldb,
                               double beta, int c_dtype, void *C, int64_t ldc);

/*! gpk_gemm_blockscaled() :
 *  FP8 A and B (GPK_F8E4M3 / GPK_F8E5M2, any mix) with fine-grained scales;
 *  C GPK_F32, GPK_F16 or GPK_BF16. With kb = ceil(k / 128) and
 *  nb = ceil(n / 128): scale_a holds m * kb floats, the scale of op(A)'s row i
 *  over k in [128q, 128q + 128) at scale_a[q * m + i]; scale_b holds nb * kb
 *  floats, the scale of op(B)'s block of rows [128q, 128q + 128) and columns
 *  [128j, 128j + 128) at scale_b[q * nb + j].
 *    C[i][j] = alpha * sum_q scale_a[i,q] * scale_b[j/128,q] *
 *              sum_{p in q} A[i][p] * B[p][j] + beta * C[i][j],
 *  with gpk_gemm_ex's bound. The scale arrays live where A and B do (host or
 *  device memory); non-finite scales propagate. Everything else as gpk_gemm_ex.
 *  @return : as gpk_gemm_ex; GPK_ERROR_INVALID_ARGUMENT also for a NULL
 *            scale_a or scale_b, whatever the sizes (the message names it). */
GPK_API gpk_status gpk_gemm_blockscaled(gpk_context *ctx, int layout, int transa, int transb,
                                        int64_t m, int64_t n, int64_t k, double alpha,
                                        int a_dtype, const void *A, int64_t lda,
                                        const float *scale_a,
                                        int b_dtype, const void *B, int64_t ldb,
                                        const float *scale_b,
                                        double beta, int c_dtype, void *C, int64_t ldc);

/*! gpk_reduce() :
 *  Reduces the n elements of x with `op` (GPK_SUM, GPK_MIN, GPK_MAX) and writes
 *  one value to *result: a float for GPK_F32, a double for GPK_F64, an int64_t
 *  for GPK_I32 and GPK_I64 (integers accumulate in 64 bits; sums wrap modulo
 *  2^64), a float for GPK_F16 and GPK_BF16 (their elements are widened to F32
 *  and accumulated in at least F32). Floating-point results are deterministic from run to run (a fixed
 *  reduction tree, no floating-point atomics; for x in host memory the tree
 *  depends on the staging settings, see gpk_set_staging). MIN and MAX
 *  propagate NaN.
 *  SUM of n == 0 is 0; MIN or MAX of n == 0 is an invalid argument.
 *  `result` may be host or device memory; a host result makes the call wait.
 *  @return : GPK_SUCCESS; GPK_ERROR_INVALID_HANDLE; GPK_ERROR_INVALID_ARGUMENT
 *            (unknown dtype/op, n < 0, MIN/MAX with n == 0, x NULL with n > 0,
 *            result NULL); GPK_ERROR_NOT_SUPPORTED; GPK_ERROR_OUT_OF_MEMORY;
 *            GPK_ERROR_CUDA; GPK_ERROR_VALIDATION. */
GPK_API gpk_status gpk_reduce(gpk_context *ctx, int dtype, int op, const void *x, int64_t n,
                              void *result);

/*! gpk_transpose() :
 *  Out-of-place transpose: A is rows x cols in `layout` with leading dimension
 *  lda; B receives its cols x rows transpose, in the same layout, with leading
 *  dimension ldb. Any dtype (2-, 4- and 8-byte elements are moved bit for bit).
 *  Column-major: lda >= max(1, rows), ldb >= max(1, cols);
 *  row-major:    lda >= max(1, cols), ldb >= max(1, rows).
 *  Elements of B between rows (the ldb padding) are not written.
 *  @return : GPK_SUCCESS; GPK_ERROR_INVALID_HANDLE; GPK_ERROR_INVALID_ARGUMENT
 *            (unknown dtype/layout, negative size, leading dimension too small,
 *            NULL array with rows * cols > 0, A and B overlapping, size
 *            overflowing int64 bytes); GPK_ERROR_NOT_SUPPORTED;
 *            GPK_ERROR_OUT_OF_MEMORY; GPK_ERROR_CUDA; GPK_ERROR_CUBLAS;
 *            GPK_ERROR_VALIDATION. */
GPK_API gpk_status gpk_transpose(gpk_context *ctx, int dtype, int layout, int64_t rows,
                                 int64_t cols, const void *A, int64_t lda, void *B,
                                 int64_t ldb);

/*! gpk_pi() :
 *  Estimates pi by drawing `samples` points uniformly in the unit square and
 *  counting those inside the quarter circle. Points come from a counter-based
 *  Philox4x32-10 generator keyed by `seed`, sample i from a fixed counter (each
 *  Philox block gives three points on the 2^21 x 2^21 lattice of cell midpoints,
 *  tested exactly; the lattice's bias is -1.2e-10 of pi/4), so
 *  `hits` depends only on (samples, seed) and the variant family -- not on the
 *  GPU, the launch configuration or the backend. The default ("auto") and
 *  every Philox rung give the host backend's hits exactly; the vendor variant
 *  (cuRAND's host API) and the lecture's rung (per-thread XORWOW states) are
 *  families of their own. 1 <= samples <= 2^63. gpk_pi_range() counts a part of
 *  the same sequence, so that several processes can share one estimate exactly.
 *  Writes the estimate, its standard error, the samples drawn and the hits to
 *  *result (host or device memory). Synchronous.
 *  @return : GPK_SUCCESS; GPK_ERROR_INVALID_HANDLE; GPK_ERROR_INVALID_ARGUMENT
 *            (samples == 0 or > 2^63, result NULL); GPK_ERROR_OUT_OF_MEMORY;
 *            GPK_ERROR_CUDA; GPK_ERROR_CURAND; GPK_ERROR_VALIDATION. */
GPK_API gpk_status gpk_pi(gpk_context *ctx, uint64_t samples, uint64_t seed,
                          gpk_pi_result *result);

/*! gpk_pi_range() :
 *  Counts the hits among samples [first_sample, first_sample + count) of the
 *  sequence gpk_pi() draws for `seed`: sample i is the same point in both calls.
 *  So ranges that split [0, samples) -- evenly or not, empty ranges included --
 *  have hits that add up exactly to those of gpk_pi(ctx, samples, seed, ...),
 *  whatever the backend, the GPU or the launch configuration, as long as the
 *  variant family is the same. This is how several processes share one estimate
 *  (one per GPU under MPI, say): each counts its own range, the hits are summed,
 *  and the estimate from the sum is gpk_pi's, bit for bit.
 *  Writes to *result (host or device memory) the range's own figures: samples =
 *  count, its hits, and the estimate and std_error of gpk_pi_result computed over
 *  count samples. count == 0 is valid and does no work: samples = hits = 0, and
 *  estimate = std_error = NaN (no points, no estimate).
 *  The range must end within 64-bit sample indices: first_sample + count <=
 *  2^64 - 1.
 *  Every variant draws the ranges of its own sequence exactly: the Philox rungs,
 *  "auto" and the host backend share one sequence; the lecture's rung, "sobol"
 *  and the vendor variant each have their own. The vendor variant takes sample i
 *  from numbers 2i and 2i + 1 of cuRAND's sequence, whose offset is 64 bits wide,
 *  so it reaches only the first 2^63 samples: a range ending past them is
 *  GPK_ERROR_NOT_SUPPORTED for it. Synchronous.
 *  @return : GPK_SUCCESS; GPK_ERROR_INVALID_HANDLE; GPK_ERROR_INVALID_ARGUMENT
 *            (first_sample + count > 2^64 - 1, result NULL);
 *            GPK_ERROR_NOT_SUPPORTED (see above); GPK_ERROR_OUT_OF_MEMORY;
 *            GPK_ERROR_CUDA; GPK_ERROR_CURAND; GPK_ERROR_VALIDATION. */
GPK_API gpk_status gpk_pi_range(gpk_context *ctx, uint64_t first_sample, uint64_t count,
                                uint64_t seed, gpk_pi_result *result);

#ifdef __cplusplus
}
#endif

#endif /* GPK_GPK_H */
