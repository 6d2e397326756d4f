// The CUDA backend's entry points in a build without CUDA (-Dgpu=disabled, or no
// CUDA toolkit): the library keeps its header and its symbols, and every way into
// the CUDA backend says that it is absent. There is no device, so gpk_create with
// GPK_BACKEND_CUDA fails with GPK_ERROR_NO_DEVICE and GPK_BACKEND_AUTO takes the
// host; no CUDA context can exist, so the launchers and the staging pipeline are
// never reached with one, and answer GPK_ERROR_NO_DEVICE if they were.
#include "../cuda/ladders.hpp"
#include "../cuda/pipeline.hpp"
#include "../cuda/resources.hpp"

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

gpk_status staged_gemm(gpk_context &ctx, const GemmArgs &, Launcher<GemmArgs>, bool, bool, bool, bool) {
    return absent(&ctx);
}

gpk_status staged_transpose(gpk_context &ctx, const TransposeArgs &, Launcher<TransposeArgs>, bool, bool) {
    return absent(&ctx);
}

gpk_status staged_reduce(gpk_context &ctx, const ReduceArgs &, Launcher<ReduceArgs>, bool) { return absent(&ctx); }

// No staged call ever ran: an empty trace, as on the host backend.
gpk_status stage_trace(gpk_context &, gpk_stage_event *, int64_t, int64_t *count) {
    *count = 0;
    return GPK_SUCCESS;
}

void forget_trace(gpk_context &) {}

void destroy_pipeline(Pipeline *) {}

// The rungs of each ladder (cuda/ladders.hpp): the registry lists them whatever the
// build, so that variant names do not depend on it.
#define GPK_ABSENT_RUNG(name, Args) \
    gpk_status name(gpk_context &ctx, const Args &) { return absent(&ctx); }

GPK_ABSENT_RUNG(gemm_cublas, GemmArgs)
GPK_ABSENT_RUNG(gemm_naive, GemmArgs)
GPK_ABSENT_RUNG(gemm_coalesced, GemmArgs)
GPK_ABSENT_RUNG(gemm_smem_tile, GemmArgs)
GPK_ABSENT_RUNG(gemm_multi_output, GemmArgs)
GPK_ABSENT_RUNG(gemm_transposed_b, GemmArgs)
GPK_ABSENT_RUNG(gemm_rank1, GemmArgs)
GPK_ABSENT_RUNG(gemm_register_2d, GemmArgs)
GPK_ABSENT_RUNG(gemm_warptile_async, GemmArgs)
GPK_ABSENT_RUNG(gemm_dmma_f64, GemmArgs)
GPK_ABSENT_RUNG(gemm_prefetch, GemmArgs)

GPK_ABSENT_RUNG(reduce_cub, ReduceArgs)
GPK_ABSENT_RUNG(reduce_interleaved, ReduceArgs)
GPK_ABSENT_RUNG(reduce_interleaved_strided, ReduceArgs)
GPK_ABSENT_RUNG(reduce_sequential, ReduceArgs)
GPK_ABSENT_RUNG(reduce_first_add, ReduceArgs)
GPK_ABSENT_RUNG(reduce_unroll_last_warp, ReduceArgs)
GPK_ABSENT_RUNG(reduce_unroll_complete, ReduceArgs)
GPK_ABSENT_RUNG(reduce_multi_add, ReduceArgs)
GPK_ABSENT_RUNG(reduce_unroll8, ReduceArgs)
GPK_ABSENT_RUNG(reduce_warp_shuffle, ReduceArgs)
GPK_ABSENT_RUNG(reduce_vec16, ReduceArgs)
GPK_ABSENT_RUNG(reduce_single_pass, ReduceArgs)

GPK_ABSENT_RUNG(transpose_geam, TransposeArgs)
GPK_ABSENT_RUNG(transpose_naive, TransposeArgs)
GPK_ABSENT_RUNG(transpose_smem_tile, TransposeArgs)
GPK_ABSENT_RUNG(transpose_padded_tile, TransposeArgs)
GPK_ABSENT_RUNG(transpose_block_rows, TransposeArgs)
GPK_ABSENT_RUNG(transpose_tile64, TransposeArgs)
GPK_ABSENT_RUNG(transpose_tile64_vec2, TransposeArgs)
GPK_ABSENT_RUNG(transpose_tile64_vec16, TransposeArgs)

GPK_ABSENT_RUNG(pi_curand, PiArgs)
GPK_ABSENT_RUNG(pi_lecture, PiArgs)
GPK_ABSENT_RUNG(pi_fused, PiArgs)
GPK_ABSENT_RUNG(pi_registers, PiArgs)
GPK_ABSENT_RUNG(pi_ilp, PiArgs)
GPK_ABSENT_RUNG(pi_persistent, PiArgs)
GPK_ABSENT_RUNG(pi_sobol, PiArgs)

#undef GPK_ABSENT_RUNG

}  // namespace gpk::cuda
