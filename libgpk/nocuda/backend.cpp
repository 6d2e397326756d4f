// The CUDA backend's entry points in a build without CUDA (-Dgpu=disabled, or no
// CUDA toolkit): the library keeps its header and its symbols, and every way into
// the CUDA backend says that it is absent. There is no device, so gpk_create with
// GPK_BACKEND_CUDA fails with GPK_ERROR_NO_DEVICE and GPK_BACKEND_AUTO takes the
// host; no CUDA context can exist, so the launchers and the staging pipeline are
// never reached with one, and answer GPK_ERROR_NO_DEVICE if they were.
#include "../cuda/ladders.hpp"
#include "../cuda/resources.hpp"
#include "../staging/pipeline.hpp"

namespace gpk::cuda {

namespace {

constexpr const char *kAbsent = "libgpk was built without CUDA (meson option gpu, or no CUDA toolkit at build time): "
                                "only the host backend is available";

gpk_status absent(gpk_context *ctx) { return fail(ctx, GPK_ERROR_NO_DEVICE, "%s", kAbsent); }

}  // namespace

int device_count() { return 0; }

gpk_status probe_device(gpk_context *ctx, int device) {
    return fail(ctx, GPK_ERROR_NO_DEVICE, "device (%d): %s", device, kAbsent);
}

bool kernels_runnable(int) { return false; }

gpk_status create(gpk_context &ctx) { return absent(&ctx); }

void destroy(gpk_context &) {}

gpk_status switch_stream(gpk_context &ctx, void *) { return absent(&ctx); }

DeviceGuard::DeviceGuard(const gpk_context &) {}
DeviceGuard::~DeviceGuard() = default;

gpk_status buffer(gpk_context &ctx, Slot, size_t, void **ptr) {
    *ptr = nullptr;
    return absent(&ctx);
}

gpk_status pinned(gpk_context &ctx, size_t, void **ptr) {
    *ptr = nullptr;
    return absent(&ctx);
}

gpk_status zero_word(gpk_context &ctx, unsigned int **word) {
    *word = nullptr;
    return absent(&ctx);
}

gpk_status cublas(gpk_context &ctx, cublasHandle_t *handle) {
    *handle = nullptr;
    return absent(&ctx);
}

gpk_status curand(gpk_context &ctx, curandGenerator_t *generator) {
    *generator = nullptr;
    return absent(&ctx);
}

// Without a GPU every pointer is host memory, as on the host backend of a machine
// without one.
gpk_status on_device(gpk_context &, const void *, const char *, bool *result) {
    *result = false;
    return GPK_SUCCESS;
}

gpk_status check(gpk_context &ctx, cudaError_t err, const char *what) {
    if (err == cudaSuccess) return GPK_SUCCESS;
    return fail(&ctx, GPK_ERROR_NO_DEVICE, "%s: %s", what, kAbsent);
}

gpk_status check_launch(gpk_context &ctx, const char *) { return absent(&ctx); }

gpk_status check_cublas(gpk_context &ctx, cublasStatus_t, const char *) { return absent(&ctx); }

gpk_status check_curand(gpk_context &ctx, curandStatus_t, const char *) { return absent(&ctx); }

gpk_status staged_gemm(gpk_context &ctx, const GemmArgs &, const Rung<GemmArgs> &, bool, bool, bool, bool,
                       const Checker<GemmArgs> *, bool *) {
    return absent(&ctx);
}

gpk_status staged_transpose(gpk_context &ctx, const TransposeArgs &, const Rung<TransposeArgs> &, bool, bool,
                            const Checker<TransposeArgs> *, bool *) {
    return absent(&ctx);
}

gpk_status staged_reduce(gpk_context &ctx, const ReduceArgs &, const Rung<ReduceArgs> &, bool, const Checker<ReduceArgs> *,
                         bool *) {
    return absent(&ctx);
}

gpk_status staged_gemm_batched(gpk_context &ctx, const GemmBatchedCall &, Launcher<GemmBatchedCall>,
                               const MatrixView &, const MatrixView &, const MatrixView &, bool, bool, bool,
                               const Checker<GemmBatchedCall> *) {
    return absent(&ctx);
}

// No staged call ever ran: an empty trace, as on the host backend.
gpk_status stage_trace(gpk_context &, gpk_stage_event *, int64_t, int64_t *count) {
    *count = 0;
    return GPK_SUCCESS;
}

void destroy_pipeline(Pipeline *) {}

// The rungs of each ladder, from the same lists as the CUDA build (cuda/<op>/rungs.def):
// the registry lists them whatever the build, so that variant names do not depend on it.
#define GPK_VENDOR(name)
#define GPK_REFERENCE(name)
#define GPK_AUTO(name)
#define GPK_AUTO_NEVER(name)
#define GPK_ABSENT_TAKES_any(launcher, Args)
#define GPK_ABSENT_TAKES_checked(launcher, Args)                                          \
    gpk_status launcher##_takes(gpk_context &ctx, const Args &, const char **why_not) { \
        if (why_not) *why_not = "libgpk was built without CUDA";                           \
        return absent(&ctx);                                                               \
    }
#define GPK_ABSENT_RUNG(launcher, Args, takes)                                          \
    gpk_status launcher(gpk_context &ctx, const Args &) { return absent(&ctx); } \
    GPK_ABSENT_TAKES_##takes(launcher, Args)

#define GPK_RUNG(nn, name, launcher, dtypes, takes) GPK_ABSENT_RUNG(launcher, GemmArgs, takes)
#include "../cuda/gemm/rungs.def"
#undef GPK_RUNG
#define GPK_RUNG(nn, name, launcher, dtypes, takes) GPK_ABSENT_RUNG(launcher, ReduceArgs, takes)
#include "../cuda/reduce/rungs.def"
#undef GPK_RUNG
#define GPK_RUNG(nn, name, launcher, dtypes, takes) GPK_ABSENT_RUNG(launcher, TransposeArgs, takes)
#include "../cuda/transpose/rungs.def"
#undef GPK_RUNG
#define GPK_RUNG(nn, name, launcher, dtypes, takes) GPK_ABSENT_RUNG(launcher, PiArgs, takes)
#include "../cuda/pi/rungs.def"
#undef GPK_RUNG
#define GPK_RUNG(nn, name, launcher, dtypes, takes) GPK_ABSENT_RUNG(launcher, GemmBatchedCall, takes)
#include "../cuda/gemm_batched/rungs.def"
#undef GPK_RUNG

#undef GPK_ABSENT_RUNG
#undef GPK_ABSENT_TAKES_checked
#undef GPK_ABSENT_TAKES_any
#undef GPK_AUTO_NEVER
#undef GPK_AUTO
#undef GPK_REFERENCE
#undef GPK_VENDOR

}  // namespace gpk::cuda
