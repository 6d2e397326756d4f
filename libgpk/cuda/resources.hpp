// CUDA-side state of a context and the checked wrappers every CUDA launcher uses.
// Included only by .cu files and by the C++ files that talk to the CUDA runtime.
#pragma once

#include "../context.hpp"
#include "../status.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <curand.h>

#include <cstddef>

struct cublasLtContext;  // cublasLt.h's handle type, which only the FP8 rung includes

namespace gpk::cuda {

// Device buffers owned by the context, each grown on demand and reused across calls.
enum class Slot {
    Scratch,  // temporary storage of a launcher (CUB temp storage, partial sums, ...)
    Stage,    // a device result bound for host memory (reduce of device x into a host result)
    Check,    // validation mode's vendor result
    Count
};

// ---- device discovery -------------------------------------------------------------
int device_count();  // 0 when there is no driver or no GPU
// GPK_SUCCESS if `device` exists and can run libgpk's kernels; otherwise
// NO_DEVICE/CUDA with a message through gpk::fail(ctx, ...).
gpk_status probe_device(gpk_context *ctx, int device);
bool kernels_runnable(int device);  // cuda/probe.cu: is there an image for this GPU?

// ---- context life -----------------------------------------------------------------
gpk_status create(gpk_context &ctx);  // makes ctx.cuda; ctx.device already probed
void destroy(gpk_context &ctx);       // waits, frees everything; never fails
// Moves the context to `next` (a cudaStream_t; null: the default stream). Work
// issued on `next` waits for the context's work still queued on the old stream,
// which may use the same workspace buffers.
gpk_status switch_stream(gpk_context &ctx, void *next);

// Makes the context's device current for the scope and restores the caller's.
class DeviceGuard {
public:
    explicit DeviceGuard(const gpk_context &ctx);
    ~DeviceGuard();
    DeviceGuard(const DeviceGuard &) = delete;
    DeviceGuard &operator=(const DeviceGuard &) = delete;

private:
    int previous_ = -1;
};

inline cudaStream_t stream(const gpk_context &ctx) { return static_cast<cudaStream_t>(ctx.stream); }

// A device buffer of at least `bytes` (256-byte aligned) in `slot`. Contents are
// undefined; the pointer stays valid until the next call for the same slot.
gpk_status buffer(gpk_context &ctx, Slot slot, size_t bytes, void **ptr);
// A device word of the context that is zero between calls (zeroed once, when made):
// a kernel that counts in it, such as a grid's count of finished blocks, must leave
// it zero again. It saves a memset launch before each such kernel.
gpk_status zero_word(gpk_context &ctx, unsigned int **word);

// ---- lanes ------------------------------------------------------------------------
// A lane is one stream of the staging pipeline (staging/executor.cpp) and the context
// its launchers are given: the caller's device and backend on the lane's stream, with
// the lane's own scratch buffer, zero word and cuBLAS handle (ctx.cuda), so that the
// same launchers run on several lanes at once without sharing anything mutable, and
// nothing of the caller's context is changed for the length of a call.
struct Lane {
    cudaStream_t stream = nullptr;  // non-blocking; ctx.stream once made
    gpk_context ctx;                // what the lane's launchers run on
};

// Makes the lane's stream and context for `owner` (errors are reported there).
gpk_status make_lane(gpk_context &owner, Lane &lane);
// A failure of a launcher on the lane: its message moves to `owner`, status unchanged.
gpk_status lane_failed(gpk_context &owner, Lane &lane, gpk_status status);
// A lane's scratch of at least `bytes`, allocated now rather than by its first
// launcher (so that no allocation interrupts the pipeline), rounded up to 64 KiB.
gpk_status reserve_lane_scratch(gpk_context &owner, Lane &lane, size_t bytes);
size_t lane_scratch_capacity(const Lane &lane);
// Frees the lane's scratch (its stream must be idle); the rest stays.
void release_lane_scratch(Lane &lane);
// Frees everything the lane holds, its stream included. Never fails.
void release_lane(Lane &lane);

// The context's staging pipeline (staging/executor.hpp), made on first use; destroy()
// frees it. The context holds it as an opaque pointer, so that this file, beneath
// the staging folder, needs nothing of it but these two names.
class Pipeline;
Pipeline *&pipeline_of(gpk_context &ctx);
// Frees the pipeline and everything it holds (streams, buffers, events); waits for its
// streams first. Null is a no-op. Never fails. Defined by staging/executor.cpp (and,
// without CUDA, nocuda/backend.cpp).
void destroy_pipeline(Pipeline *pipeline);

// Vendor handles, created on first use and bound to the context's current stream.
gpk_status cublas(gpk_context &ctx, cublasHandle_t *handle);
// cuBLASLt's handle (its type is cublasLtHandle_t; a call names its stream itself).
gpk_status cublas_lt(gpk_context &ctx, cublasLtContext **handle);
gpk_status curand(gpk_context &ctx, curandGenerator_t *generator);

// Whether p is memory of the context's GPU (device or managed memory). Host memory
// (pageable or pinned) is false. Device memory of another GPU is an invalid argument.
gpk_status on_device(gpk_context &ctx, const void *p, const char *name, bool *result);

// ---- checks -----------------------------------------------------------------------
gpk_status check(gpk_context &ctx, cudaError_t err, const char *what);
gpk_status check_launch(gpk_context &ctx, const char *kernel);  // cudaGetLastError after a launch
gpk_status check_cublas(gpk_context &ctx, cublasStatus_t st, const char *what);
gpk_status check_curand(gpk_context &ctx, curandStatus_t st, const char *what);

}  // namespace gpk::cuda

#define GPK_CUDA_TRY(ctx, call) GPK_FORWARD_IF_ERROR(::gpk::cuda::check((ctx), (call), #call))
#define GPK_CUBLAS_TRY(ctx, call) GPK_FORWARD_IF_ERROR(::gpk::cuda::check_cublas((ctx), (call), #call))
#define GPK_CURAND_TRY(ctx, call) GPK_FORWARD_IF_ERROR(::gpk::cuda::check_curand((ctx), (call), #call))
#define GPK_LAUNCH_CHECK(ctx, kernel) GPK_FORWARD_IF_ERROR(::gpk::cuda::check_launch((ctx), (kernel)))
