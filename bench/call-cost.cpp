// What one call costs the caller's thread, through libgpk's C API and through the
// vendor library it is measured against, for work small enough that the call, not
// the kernel, is most of it. On a GPU machine, after a build:
//
//   build/bench/call-cost [repeat]     (built with the CUDA build, bench/meson.build)
//
// Device arrays only (the case where gpk_gemm is asynchronous, as cublasSgemm is).
// For each case two medians over `repeat` calls (default 2000), each call followed by
// cudaStreamSynchronize: "issue" is the time until the call returns, "total" until
// the stream is idle again; and "in a row", the time per call of a burst of calls
// with one synchronisation at the end (median of five bursts). Then the CUDA and cuBLAS calls a library call may make,
// each timed alone, so that a difference between the two columns can be put down to
// its parts. Microseconds.
#include <gpk/gpk.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Times {
    double issue, total, burst;
};

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

Times time_call(int repeat, const std::function<void()> &call, cudaStream_t stream) {
    for (int i = 0; i < 20; ++i) call();
    cudaStreamSynchronize(stream);
    std::vector<double> issue, total;
    for (int i = 0; i < repeat; ++i) {
        const auto t0 = Clock::now();
        call();
        const auto t1 = Clock::now();
        cudaStreamSynchronize(stream);
        const auto t2 = Clock::now();
        issue.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
        total.push_back(std::chrono::duration<double, std::micro>(t2 - t0).count());
    }
    // Back to back, one synchronisation at the end: the rate a loop of calls runs at.
    const int burst = std::max(repeat / 10, 10);
    std::vector<double> per_call;
    for (int round = 0; round < 5; ++round) {
        const auto t0 = Clock::now();
        for (int i = 0; i < burst; ++i) call();
        cudaStreamSynchronize(stream);
        per_call.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / burst);
    }
    return {median(issue), median(total), median(per_call)};
}

void row(const char *name, Times t) {
    std::printf("| %-44s | %8.2f | %8.2f | %8.2f |\n", name, t.issue, t.total, t.burst);
}

void require(bool ok, const char *what) {
    if (!ok) {
        std::fprintf(stderr, "call-cost: %s failed\n", what);
        std::exit(1);
    }
}

}  // namespace

int main(int argc, char **argv) {
    const int repeat = argc > 1 ? std::atoi(argv[1]) : 2000;
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        std::printf("call-cost: no GPU\n");
        return 77;
    }
    cudaDeviceProp prop{};
    cudaGetDeviceProperties(&prop, 0);
    gpk_context *ctx = nullptr;
    require(gpk_create(&ctx, GPK_BACKEND_CUDA, 0) == GPK_SUCCESS, "gpk_create");
    cublasHandle_t handle = nullptr;
    require(cublasCreate(&handle) == CUBLAS_STATUS_SUCCESS, "cublasCreate");
    cudaStream_t stream = nullptr;  // both on the default stream, as a caller without streams has them

    std::printf("%s; median of %d calls, each followed by cudaStreamSynchronize; microseconds\n\n", prop.name, repeat);
    std::printf("| call | issue | total | in a row |\n|---|---:|---:|---:|\n");
    for (int n : {64, 256, 1024}) {
        const size_t bytes = sizeof(float) * n * n;
        float *A = nullptr, *B = nullptr, *C = nullptr;
        require(cudaMalloc(&A, bytes) == cudaSuccess && cudaMalloc(&B, bytes) == cudaSuccess &&
                    cudaMalloc(&C, bytes) == cudaSuccess,
                "cudaMalloc");
        std::vector<float> host(static_cast<size_t>(n) * n);
        for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>((i * 7919) % 1000) / 1000.0f - 0.5f;
        cudaMemcpy(A, host.data(), bytes, cudaMemcpyHostToDevice);
        cudaMemcpy(B, host.data(), bytes, cudaMemcpyHostToDevice);
        const float one = 1.0f, zero = 0.0f;
        char name[96];
        std::snprintf(name, sizeof name, "cublasSgemm %dx%d", n, n);
        row(name, time_call(repeat, [&] {
            cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, A, n, B, n, &zero, C, n);
        }, stream));
        std::snprintf(name, sizeof name, "cublasSgemm_64 %dx%d", n, n);
        row(name, time_call(repeat, [&] {
            cublasSgemm_64(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, A, n, B, n, &zero, C, n);
        }, stream));
        for (const char *variant : {"auto", "cublas"}) {
            require(gpk_set_variant(ctx, GPK_OP_GEMM, variant) == GPK_SUCCESS, "gpk_set_variant");
            std::snprintf(name, sizeof name, "gpk_gemm %dx%d, variant %s", n, n, variant);
            row(name, time_call(repeat, [&] {
                gpk_gemm(ctx, GPK_F32, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, n, n, n, 1.0, A, n, B, n, 0.0, C, n);
            }, stream));
        }
        cudaFree(A);
        cudaFree(B);
        cudaFree(C);
    }

    // BF16 on the tensor cores, where a 1024^3 product takes the GPU a few
    // microseconds: what each call costs the host decides the rate.
    for (int n : {1024, 4096}) {
        const size_t bytes = 2 * static_cast<size_t>(n) * n;
        void *A = nullptr, *B = nullptr, *C = nullptr;
        require(cudaMalloc(&A, bytes) == cudaSuccess && cudaMalloc(&B, bytes) == cudaSuccess &&
                    cudaMalloc(&C, bytes) == cudaSuccess,
                "cudaMalloc");
        cudaMemset(A, 0x3c, bytes);  // bf16 0x3c3c, about 0.0115
        cudaMemset(B, 0x3c, bytes);
        const float one = 1.0f, zero = 0.0f;
        char name[96];
        cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH);
        std::snprintf(name, sizeof name, "cublasGemmEx bf16 %dx%dx%d", n, n, n);
        row(name, time_call(repeat / 4, [&] {
            cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, A, CUDA_R_16BF, n, B, CUDA_R_16BF, n,
                         &zero, C, CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
        }, stream));
        for (const char *variant : {"auto", "cublas", "wgmma_ws", "mma_sync"}) {
            require(gpk_set_variant(ctx, GPK_OP_GEMM, variant) == GPK_SUCCESS, "gpk_set_variant");
            std::snprintf(name, sizeof name, "gpk_gemm bf16 %dx%dx%d, variant %s", n, n, n, variant);
            row(name, time_call(repeat / 4, [&] {
                gpk_gemm(ctx, GPK_BF16, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, n, n, n, 1.0, A, n, B, n, 0.0, C, n);
            }, stream));
        }
        cudaFree(A);
        cudaFree(B);
        cudaFree(C);
    }

    float *x = nullptr, *r = nullptr;
    require(cudaMalloc(&x, 4096 * sizeof(float)) == cudaSuccess && cudaMalloc(&r, sizeof(float)) == cudaSuccess,
            "cudaMalloc");
    cudaMemset(x, 0, 4096 * sizeof(float));
    float result = 0;
    require(gpk_set_variant(ctx, GPK_OP_REDUCE, "auto") == GPK_SUCCESS, "gpk_set_variant");
    row("gpk_reduce 2^10 f32, result in host memory", time_call(repeat, [&] {
        gpk_reduce(ctx, GPK_F32, GPK_SUM, x, 1024, &result);
    }, stream));
    row("gpk_reduce 2^10 f32, result in device memory", time_call(repeat, [&] {
        gpk_reduce(ctx, GPK_F32, GPK_SUM, x, 1024, r);
    }, stream));

    // The parts a call may be made of.
    cudaPointerAttributes attr{};
    int dev = 0;
    row("cudaPointerGetAttributes", time_call(repeat, [&] { cudaPointerGetAttributes(&attr, x); }, stream));
    row("cudaGetDevice", time_call(repeat, [&] { cudaGetDevice(&dev); }, stream));
    row("cudaSetDevice (same device)", time_call(repeat, [&] { cudaSetDevice(0); }, stream));
    row("cudaGetLastError", time_call(repeat, [&] { cudaGetLastError(); }, stream));
    row("cublasSetMathMode", time_call(repeat, [&] { cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH); }, stream));
    row("cublasSetStream", time_call(repeat, [&] { cublasSetStream(handle, stream); }, stream));
    row("cudaMemcpyAsync 4 bytes device to host",
        time_call(repeat, [&] { cudaMemcpyAsync(&result, r, 4, cudaMemcpyDeviceToHost, stream); }, stream));
    row("cudaStreamSynchronize (idle)", time_call(repeat, [&] { cudaStreamSynchronize(stream); }, stream));
    row("gpk_last_error", time_call(repeat, [&] { (void)gpk_last_error(ctx); }, stream));

    cudaFree(x);
    cudaFree(r);
    cublasDestroy(handle);
    gpk_destroy(ctx);
    return 0;
}
