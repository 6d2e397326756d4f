// Times the launch shapes of a register-block transpose (transpose-register-block.cuh)
// and rung 6's 64x64 shared tile with pair accesses (tile64_vec2.cuh), each with and
// without streaming cache hints, against cublas<t>geam and a plain 16-byte copy
// measured in the same process, and checks each result bit for bit against geam. Built and run by scripts/tune-transpose.
#include "transpose-register-block.cuh"
#include "../libgpk/cuda/transpose/tile64_vec2.cuh"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <type_traits>
#include <string>
#include <vector>

namespace rb = gpk::cuda::register_block;

#define CHECK(x)                                                                               \
    do {                                                                                       \
        cudaError_t e_ = (x);                                                                  \
        if (e_ != cudaSuccess) {                                                               \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            std::exit(1);                                                                      \
        }                                                                                      \
    } while (0)

__global__ void fill(uint32_t *p, size_t n, uint32_t seed) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
        uint32_t h = uint32_t(i) * 2654435761u ^ seed ^ uint32_t(i >> 32);
        h ^= h >> 15, h *= 2246822519u, h ^= h >> 13;
        // A finite float whatever the element size: exponent bits kept away from 0xff.
        p[i] = (h & 0x807fffffu) | 0x3f000000u;
    }
}

__global__ void copy16(const uint4 *__restrict__ s, uint4 *__restrict__ d, size_t n) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) d[i] = s[i];
}

struct Row {
    std::string what;
    double ms;
    bool ok;
};

double time_ms(const std::function<void()> &f, int reps) {
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    for (int i = 0; i < 3; ++i) f();
    std::vector<float> t;
    for (int i = 0; i < reps; ++i) {
        CHECK(cudaEventRecord(a));
        f();
        CHECK(cudaEventRecord(b));
        CHECK(cudaEventSynchronize(b));
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, a, b));
        t.push_back(ms);
    }
    CHECK(cudaEventDestroy(a));
    CHECK(cudaEventDestroy(b));
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

using Launch = std::function<cudaError_t(const void *, void *, int64_t)>;

void candidate(std::vector<Row> &rows_out, const char *name, const Launch &launch, const void *A, void *B,
               const void *ref, int64_t n, size_t bytes, int reps) {
    CHECK(cudaMemset(B, 0xff, bytes));
    const cudaError_t launched = launch(A, B, n);
    CHECK(launched);
    CHECK(cudaDeviceSynchronize());
    std::vector<char> h(bytes), r(bytes);
    CHECK(cudaMemcpy(h.data(), B, bytes, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(r.data(), ref, bytes, cudaMemcpyDeviceToHost));
    const bool ok = h == r;
    const double ms = time_ms([&] { launch(A, B, n); }, reps);
    rows_out.push_back({name, ms, ok});
}

template <class U, int G, int WI, int WJ, bool S>
Launch block_shape() {
    return [](const void *A, void *B, int64_t n) { return rb::launch<U, G, WI, WJ, S>(A, n, B, n, n, n, nullptr); };
}

template <class U, bool S>
Launch tile_vec2() {
    return [](const void *A, void *B, int64_t n) { return gpk::cuda::tile64_vec2::launch<U, S>(A, n, B, n, n, n, nullptr); };
}

template <class T>
void run(int64_t n, int reps, cublasHandle_t handle) {
    const size_t bytes = size_t(n) * n * sizeof(T);
    void *A, *B, *R;
    CHECK(cudaMalloc(&A, bytes));
    CHECK(cudaMalloc(&B, bytes));
    CHECK(cudaMalloc(&R, bytes));
    fill<<<1024, 256>>>(static_cast<uint32_t *>(A), bytes / 4, 12345);
    CHECK(cudaDeviceSynchronize());
    std::vector<Row> out;
    auto geam = [&] {
        if (sizeof(T) == 4) {
            const float one = 1, zero = 0;
            cublasSgeam(handle, CUBLAS_OP_T, CUBLAS_OP_N, int(n), int(n), &one, static_cast<const float *>(A), int(n),
                        &zero, static_cast<const float *>(R), int(n), static_cast<float *>(R), int(n));
        } else {
            const double one = 1, zero = 0;
            cublasDgeam(handle, CUBLAS_OP_T, CUBLAS_OP_N, int(n), int(n), &one, static_cast<const double *>(A), int(n),
                        &zero, static_cast<const double *>(R), int(n), static_cast<double *>(R), int(n));
        }
    };
    const double geam_ms = time_ms(geam, reps);
    const double copy_ms = time_ms([&] { copy16<<<132 * 16, 256>>>(static_cast<const uint4 *>(A), static_cast<uint4 *>(B), bytes / 16); }, reps);
    using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
    const struct {
        const char *name;
        Launch launch;
    } candidates[] = {
        {"tile64_vec2", tile_vec2<U, false>()},
        {"tile64_vec2 cs", tile_vec2<U, true>()},
        {"block G=8 2x4", block_shape<U, 8, 2, 4, false>()},
        {"block G=4 2x4 cs", block_shape<U, 4, 2, 4, true>()},
        {"block G=8 2x4 cs", block_shape<U, 8, 2, 4, true>()},
        {"block G=8 4x2 cs", block_shape<U, 8, 4, 2, true>()},
        {"block G=8 1x8 cs", block_shape<U, 8, 1, 8, true>()},
        {"block G=16 2x4 cs", block_shape<U, 16, 2, 4, true>()},
        {"block G=16 4x2 cs", block_shape<U, 16, 4, 2, true>()},
        {"block G=16 8x1 cs", block_shape<U, 16, 8, 1, true>()},
        {"block G=32 4x2 cs", block_shape<U, 32, 4, 2, true>()},
    };
    for (const auto &c : candidates) candidate(out, c.name, c.launch, A, B, R, n, bytes, reps);
    const double gb = 2.0 * bytes / 1e9;
    std::printf("\n%s %lldx%lld: geam %.4f ms %.0f GB/s, copy %.4f ms %.0f GB/s\n", sizeof(T) == 4 ? "f32" : "f64",
                (long long)n, (long long)n, geam_ms, gb / geam_ms * 1e3, copy_ms, gb / copy_ms * 1e3);
    std::printf("  %-18s %9s %8s %8s %8s %s\n", "shape", "ms", "GB/s", "vs geam", "vs copy", "check");
    for (const Row &r : out)
        std::printf("  %-18s %9.4f %8.0f %7.3fx %7.3fx %s\n", r.what.c_str(), r.ms, gb / r.ms * 1e3, geam_ms / r.ms,
                    copy_ms / r.ms, r.ok ? "ok" : "MISMATCH");
    CHECK(cudaFree(A));
    CHECK(cudaFree(B));
    CHECK(cudaFree(R));
}

int main(int argc, char **argv) {
    const int reps = argc > 1 ? std::atoi(argv[1]) : 20;
    cublasHandle_t handle;
    if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) {
        std::fprintf(stderr, "cublasCreate failed\n");
        return 1;
    }
    run<float>(8192, reps, handle);
    run<float>(16384, reps, handle);
    run<double>(8192, reps, handle);
    cublasDestroy(handle);
    return 0;
}
