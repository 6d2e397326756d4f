// CUDA-side state of a context: device discovery, the device buffers and pinned
// buffer reused across calls, lazily created vendor handles, and the checks that
// turn CUDA/cuBLAS/cuRAND failures into a status with the library's error text.
#include "resources.hpp"

#include <cublasLt.h>

#include <new>

namespace gpk::cuda {

struct Resources {
    void *buffers[static_cast<int>(Slot::Count)] = {};
    size_t capacity[static_cast<int>(Slot::Count)] = {};
    void *pinned = nullptr;
    size_t pinned_capacity = 0;
    cublasHandle_t cublas = nullptr;
    cublasLtHandle_t cublas_lt = nullptr;
    curandGenerator_t curand = nullptr;
    cudaEvent_t handoff = nullptr;  // orders a new stream after the old one
    unsigned int *zero_word = nullptr;  // see zero_word()
    bool lane = false;                  // a lane's context (see Lane): scratch grows in 64 KiB steps
    Pipeline *pipeline = nullptr;       // the staging pipeline, made on first use
};

namespace {

// Rounded up so that a slowly growing sequence of requests reallocates rarely.
size_t round_capacity(size_t bytes) {
    constexpr size_t kGranule = size_t{2} << 20;
    if (bytes < 4096) return 4096;
    return (bytes + kGranule - 1) / kGranule * kGranule;
}

const char *curand_status_name(curandStatus_t st) {
    switch (st) {
        case CURAND_STATUS_VERSION_MISMATCH: return "CURAND_STATUS_VERSION_MISMATCH";
        case CURAND_STATUS_NOT_INITIALIZED: return "CURAND_STATUS_NOT_INITIALIZED";
        case CURAND_STATUS_ALLOCATION_FAILED: return "CURAND_STATUS_ALLOCATION_FAILED";
        case CURAND_STATUS_TYPE_ERROR: return "CURAND_STATUS_TYPE_ERROR";
        case CURAND_STATUS_OUT_OF_RANGE: return "CURAND_STATUS_OUT_OF_RANGE";
        case CURAND_STATUS_LENGTH_NOT_MULTIPLE: return "CURAND_STATUS_LENGTH_NOT_MULTIPLE";
        case CURAND_STATUS_DOUBLE_PRECISION_REQUIRED: return "CURAND_STATUS_DOUBLE_PRECISION_REQUIRED";
        case CURAND_STATUS_LAUNCH_FAILURE: return "CURAND_STATUS_LAUNCH_FAILURE";
        case CURAND_STATUS_PREEXISTING_FAILURE: return "CURAND_STATUS_PREEXISTING_FAILURE";
        case CURAND_STATUS_INITIALIZATION_FAILED: return "CURAND_STATUS_INITIALIZATION_FAILED";
        case CURAND_STATUS_ARCH_MISMATCH: return "CURAND_STATUS_ARCH_MISMATCH";
        case CURAND_STATUS_INTERNAL_ERROR: return "CURAND_STATUS_INTERNAL_ERROR";
        default: return "unknown cuRAND status";
    }
}

}  // namespace

// ---- device discovery -------------------------------------------------------------

int device_count() {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return count;
}

namespace {

// Why cudaGetDeviceCount failed, in words. The runtime answers "CUDA driver version is
// insufficient for CUDA runtime version" when there is no driver at all (libcuda
// cannot be loaded), which reads as if an update would help; the driver's version
// (0: none loaded) tells the two apart.
gpk_status no_device(gpk_context *ctx, int device, cudaError_t err) {
    int driver = 0, runtime = 0;
    if (cudaDriverGetVersion(&driver) != cudaSuccess) driver = 0;
    if (cudaRuntimeGetVersion(&runtime) != cudaSuccess) runtime = 0;
    cudaGetLastError();
    if (err == cudaErrorInsufficientDriver && driver > 0)
        return fail(ctx, GPK_ERROR_NO_DEVICE,
                    "device (%d) cannot be used: the NVIDIA driver supports CUDA %d.%d, older than the CUDA %d.%d "
                    "runtime libgpk was built with: update the driver",
                    device, driver / 1000, driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10);
    if (err == cudaErrorInsufficientDriver || err == cudaErrorNoDevice)
        return fail(ctx, GPK_ERROR_NO_DEVICE, "device (%d) cannot be used: no NVIDIA driver or GPU found (%s)", device,
                    driver == 0 ? "no NVIDIA driver is installed" : "the driver sees no GPU");
    return fail(ctx, GPK_ERROR_NO_DEVICE, "device (%d) cannot be used: no usable CUDA GPU: %s", device,
                cudaGetErrorString(err));
}

}  // namespace

gpk_status probe_device(gpk_context *ctx, int device) {
    int count = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) {
        cudaGetLastError();
        return no_device(ctx, device, err);
    }
    GPK_RETURN_ERROR_IF(count == 0, ctx, GPK_ERROR_NO_DEVICE,
                        "device (%d) cannot be used: no NVIDIA driver or GPU found (the driver sees no GPU)", device);
    GPK_RETURN_ERROR_IF(device >= count, ctx, GPK_ERROR_NO_DEVICE,
                        "device (%d) does not exist: %d CUDA GPU%s visible (0..%d)", device, count,
                        count == 1 ? " is" : "s are", count - 1);

    int previous = -1;
    if (cudaGetDevice(&previous) != cudaSuccess) previous = -1;
    cudaError_t e = cudaSetDevice(device);
    if (e == cudaSuccess) e = cudaFree(nullptr);  // creates the primary context: fails on a broken device
    gpk_status status = GPK_SUCCESS;
    if (e != cudaSuccess) {
        cudaGetLastError();
        status = fail(ctx, GPK_ERROR_NO_DEVICE, "GPU %d cannot be used: %s", device, cudaGetErrorString(e));
    } else if (!kernels_runnable(device)) {
        cudaDeviceProp prop{};
        cudaGetDeviceProperties(&prop, device);
        status = fail(ctx, GPK_ERROR_NO_DEVICE,
                      "GPU %d (%s, compute capability %d.%d) has no libgpk kernel image: rebuild with "
                      "-Dgpu_arch=%d%d",
                      device, prop.name, prop.major, prop.minor, prop.major, prop.minor);
    }
    if (previous >= 0 && previous != device) cudaSetDevice(previous);
    return status;
}

// ---- context life -----------------------------------------------------------------

DeviceGuard::DeviceGuard(const gpk_context &ctx) {
    int current = -1;
    if (cudaGetDevice(&current) != cudaSuccess) {
        cudaGetLastError();
        current = -1;
    }
    if (current != ctx.device) {
        previous_ = current;
        cudaSetDevice(ctx.device);
    }
}

DeviceGuard::~DeviceGuard() {
    if (previous_ >= 0) cudaSetDevice(previous_);
}

gpk_status create(gpk_context &ctx) {
    ctx.cuda = new (std::nothrow) Resources;
    GPK_RETURN_ERROR_IF(ctx.cuda == nullptr, &ctx, GPK_ERROR_OUT_OF_MEMORY, "out of host memory for the context");
    return GPK_SUCCESS;
}

void destroy(gpk_context &ctx) {
    Resources *r = ctx.cuda;
    if (r == nullptr) return;
    DeviceGuard guard(ctx);
    cudaStreamSynchronize(stream(ctx));
    destroy_pipeline(r->pipeline);
    r->pipeline = nullptr;
    for (void *p : r->buffers) cudaFree(p);
    cudaFreeHost(r->pinned);
    if (r->cublas != nullptr) cublasDestroy(r->cublas);
    if (r->cublas_lt != nullptr) cublasLtDestroy(r->cublas_lt);
    if (r->curand != nullptr) curandDestroyGenerator(r->curand);
    if (r->handoff != nullptr) cudaEventDestroy(r->handoff);
    cudaFree(r->zero_word);
    cudaGetLastError();  // nothing to report to: the context is going away
    delete r;
    ctx.cuda = nullptr;
}

gpk_status switch_stream(gpk_context &ctx, void *next) {
    if (next == ctx.stream) return GPK_SUCCESS;
    Resources &r = *ctx.cuda;
    DeviceGuard guard(ctx);
    if (r.handoff == nullptr) {
        cudaEvent_t e = nullptr;
        GPK_CUDA_TRY(ctx, cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
        r.handoff = e;
    }
    // An event rather than a synchronize: the order is kept on the GPU, and the
    // caller's thread goes on issuing work.
    GPK_CUDA_TRY(ctx, cudaEventRecord(r.handoff, stream(ctx)));
    GPK_CUDA_TRY(ctx, cudaStreamWaitEvent(static_cast<cudaStream_t>(next), r.handoff, 0));
    ctx.stream = next;
    return GPK_SUCCESS;
}

// ---- buffers ----------------------------------------------------------------------

namespace {

// A lane's scratch: rounded as the staging planner counts it (plan::reduce_scratch).
gpk_status lane_scratch(gpk_context &ctx, Resources &r, size_t bytes, void **ptr) {
    const int i = static_cast<int>(Slot::Scratch);
    if (r.buffers[i] == nullptr || r.capacity[i] < bytes) {
        // Work queued earlier on the lane may still use the old buffer.
        if (r.buffers[i] != nullptr) {
            GPK_CUDA_TRY(ctx, cudaStreamSynchronize(stream(ctx)));
            cudaFree(r.buffers[i]);
            r.buffers[i] = nullptr;
            r.capacity[i] = 0;
        }
        constexpr size_t kGranule = size_t{64} << 10;
        const size_t want = (bytes + kGranule - 1) / kGranule * kGranule + (bytes == 0 ? kGranule : 0);
        void *p = nullptr;
        const cudaError_t e = cudaMalloc(&p, want);
        if (e != cudaSuccess) {
            cudaGetLastError();
            return fail(&ctx, GPK_ERROR_OUT_OF_MEMORY, "cannot allocate %zu bytes of device memory on GPU %d: %s",
                        want, ctx.device, cudaGetErrorString(e));
        }
        r.buffers[i] = p;
        r.capacity[i] = want;
    }
    *ptr = r.buffers[i];
    return GPK_SUCCESS;
}

}  // namespace

gpk_status buffer(gpk_context &ctx, Slot slot, size_t bytes, void **ptr) {
    Resources &r = *ctx.cuda;
    if (slot == Slot::Scratch && r.lane) return lane_scratch(ctx, r, bytes, ptr);
    const int i = static_cast<int>(slot);
    if (r.capacity[i] < bytes || r.buffers[i] == nullptr) {
        // Work queued earlier on the stream may still use the old buffer.
        GPK_CUDA_TRY(ctx, cudaStreamSynchronize(stream(ctx)));
        GPK_CUDA_TRY(ctx, cudaFree(r.buffers[i]));
        r.buffers[i] = nullptr;
        r.capacity[i] = 0;
        const size_t want = round_capacity(bytes);
        const cudaError_t e = cudaMalloc(&r.buffers[i], want);
        if (e != cudaSuccess) {
            cudaGetLastError();
            r.buffers[i] = nullptr;
            return fail(&ctx, GPK_ERROR_OUT_OF_MEMORY, "cannot allocate %zu bytes of device memory on GPU %d: %s",
                        want, ctx.device, cudaGetErrorString(e));
        }
        r.capacity[i] = want;
    }
    *ptr = r.buffers[i];
    return GPK_SUCCESS;
}

gpk_status zero_word(gpk_context &ctx, unsigned int **word) {
    Resources &r = *ctx.cuda;
    // A lane has its own (in its context): kernels of two lanes may count at the same time.
    unsigned int *&mine = r.zero_word;
    if (mine == nullptr) {
        unsigned int *p = nullptr;
        const cudaError_t e = cudaMalloc(&p, sizeof *p);
        if (e != cudaSuccess) {
            cudaGetLastError();
            return fail(&ctx, GPK_ERROR_OUT_OF_MEMORY, "cannot allocate a word of device memory on GPU %d: %s",
                        ctx.device, cudaGetErrorString(e));
        }
        mine = p;
        GPK_CUDA_TRY(ctx, cudaMemsetAsync(p, 0, sizeof *p, stream(ctx)));
    }
    *word = mine;
    return GPK_SUCCESS;
}

// ---- lanes ------------------------------------------------------------------------

gpk_status make_lane(gpk_context &owner, Lane &lane) {
    if (lane.stream == nullptr)
        GPK_CUDA_TRY(owner, cudaStreamCreateWithFlags(&lane.stream, cudaStreamNonBlocking));
    if (lane.ctx.cuda == nullptr) {
        // Launchers read the device and their stream from the context, nothing else.
        lane.ctx.backend = owner.backend;
        lane.ctx.device = owner.device;
        lane.ctx.stream = lane.stream;
        lane.ctx.cuda = new (std::nothrow) Resources;
        GPK_RETURN_ERROR_IF(lane.ctx.cuda == nullptr, &owner, GPK_ERROR_OUT_OF_MEMORY,
                            "out of host memory for a lane of the staging pipeline");
        lane.ctx.cuda->lane = true;
    }
    return GPK_SUCCESS;
}

gpk_status lane_failed(gpk_context &owner, Lane &lane, gpk_status status) {
    if (status != GPK_SUCCESS) owner.last_error.swap(lane.ctx.last_error);  // no allocation
    return status;
}

gpk_status reserve_lane_scratch(gpk_context &owner, Lane &lane, size_t bytes) {
    void *p = nullptr;
    return lane_failed(owner, lane, buffer(lane.ctx, Slot::Scratch, bytes, &p));
}

size_t lane_scratch_capacity(const Lane &lane) {
    return lane.ctx.cuda != nullptr ? lane.ctx.cuda->capacity[static_cast<int>(Slot::Scratch)] : 0;
}

void release_lane_scratch(Lane &lane) {
    if (lane.ctx.cuda == nullptr) return;
    Resources &r = *lane.ctx.cuda;
    const int i = static_cast<int>(Slot::Scratch);
    if (r.buffers[i] != nullptr) cudaFree(r.buffers[i]);
    r.buffers[i] = nullptr;
    r.capacity[i] = 0;
}

void release_lane(Lane &lane) {
    if (lane.stream != nullptr) cudaStreamSynchronize(lane.stream);
    destroy(lane.ctx);  // the lane's scratch, zero word and cuBLAS handle
    if (lane.stream != nullptr) cudaStreamDestroy(lane.stream);
    cudaGetLastError();
    lane.stream = nullptr;
    lane.ctx.stream = nullptr;
    lane.ctx.last_error.clear();
}

Pipeline *&pipeline_of(gpk_context &ctx) { return ctx.cuda->pipeline; }

// ---- vendor handles ---------------------------------------------------------------

gpk_status cublas(gpk_context &ctx, cublasHandle_t *handle) {
    Resources &r = *ctx.cuda;
    // A lane has its own handle (in its context), and so its own workspace: one
    // handle's workspace must not serve two streams at once.
    cublasHandle_t &mine = r.cublas;
    if (mine == nullptr) {
        cublasHandle_t h = nullptr;
        GPK_CUBLAS_TRY(ctx, cublasCreate(&h));
        mine = h;
        GPK_CUBLAS_TRY(ctx, cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));
    }
    GPK_CUBLAS_TRY(ctx, cublasSetStream(mine, stream(ctx)));
    *handle = mine;
    return GPK_SUCCESS;
}

gpk_status cublas_lt(gpk_context &ctx, cublasLtContext **handle) {
    cublasLtHandle_t &mine = ctx.cuda->cublas_lt;
    if (mine == nullptr) GPK_CUBLAS_TRY(ctx, cublasLtCreate(&mine));
    *handle = mine;
    return GPK_SUCCESS;
}

gpk_status curand(gpk_context &ctx, curandGenerator_t *generator) {
    Resources &r = *ctx.cuda;
    if (r.curand == nullptr) {
        curandGenerator_t g = nullptr;
        GPK_CURAND_TRY(ctx, curandCreateGenerator(&g, CURAND_RNG_PSEUDO_PHILOX4_32_10));
        r.curand = g;
    }
    GPK_CURAND_TRY(ctx, curandSetStream(r.curand, stream(ctx)));
    *generator = r.curand;
    return GPK_SUCCESS;
}

// ---- pointers ---------------------------------------------------------------------

gpk_status on_device(gpk_context &ctx, const void *p, const char *name, bool *result) {
    *result = false;
    if (p == nullptr) return GPK_SUCCESS;
    cudaPointerAttributes attr{};
    if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
        cudaGetLastError();  // memory the runtime does not know: plain host memory
        return GPK_SUCCESS;
    }
    if (attr.type == cudaMemoryTypeDevice) {
        GPK_RETURN_ERROR_IF(ctx.backend != GPK_BACKEND_CUDA, &ctx, GPK_ERROR_INVALID_ARGUMENT,
                            "%s is device memory, but the host backend needs host-accessible memory", name);
        GPK_RETURN_ERROR_IF(attr.device != ctx.device, &ctx, GPK_ERROR_INVALID_ARGUMENT,
                            "%s is memory of GPU %d, but the context uses GPU %d", name, attr.device, ctx.device);
        *result = true;
    } else if (attr.type == cudaMemoryTypeManaged) {
        *result = ctx.backend == GPK_BACKEND_CUDA;
    }
    return GPK_SUCCESS;
}

// ---- checks -----------------------------------------------------------------------

gpk_status check(gpk_context &ctx, cudaError_t err, const char *what) {
    if (err == cudaSuccess) return GPK_SUCCESS;
    cudaGetLastError();  // clear it unless sticky, so the next call starts clean
    const gpk_status status = err == cudaErrorMemoryAllocation ? GPK_ERROR_OUT_OF_MEMORY : GPK_ERROR_CUDA;
    return fail(&ctx, status, "%s failed: %s (%s)", what, cudaGetErrorString(err), cudaGetErrorName(err));
}

gpk_status check_launch(gpk_context &ctx, const char *kernel) {
    const cudaError_t err = cudaGetLastError();
    if (err == cudaSuccess) return GPK_SUCCESS;
    // A launch can need device memory of its own (a kernel's code loaded on its first
    // launch): when there is none, the call ran out of memory and wrote nothing.
    const gpk_status status = err == cudaErrorMemoryAllocation ? GPK_ERROR_OUT_OF_MEMORY : GPK_ERROR_CUDA;
    return fail(&ctx, status, "launch of %s failed: %s (%s)", kernel, cudaGetErrorString(err), cudaGetErrorName(err));
}

gpk_status check_cublas(gpk_context &ctx, cublasStatus_t st, const char *what) {
    if (st == CUBLAS_STATUS_SUCCESS) return GPK_SUCCESS;
    const gpk_status status = st == CUBLAS_STATUS_ALLOC_FAILED ? GPK_ERROR_OUT_OF_MEMORY : GPK_ERROR_CUBLAS;
    return fail(&ctx, status, "%s failed: %s (%s)", what, cublasGetStatusString(st), cublasGetStatusName(st));
}

gpk_status check_curand(gpk_context &ctx, curandStatus_t st, const char *what) {
    if (st == CURAND_STATUS_SUCCESS) return GPK_SUCCESS;
    const gpk_status status = st == CURAND_STATUS_ALLOCATION_FAILED ? GPK_ERROR_OUT_OF_MEMORY : GPK_ERROR_CURAND;
    return fail(&ctx, status, "%s failed: %s", what, curand_status_name(st));
}

}  // namespace gpk::cuda
