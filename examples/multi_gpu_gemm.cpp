// C = A * B from host arrays to a host array, spread over every GPU of this node:
// one thread per GPU, libgpk for the product on each, NCCL to share B between the
// GPUs. A pattern to copy; gpk-gemm --gpus N (apps/gemm/gpus.cpp) is the same thing
// with the copies cut into chunks that overlap the products, and timings.
//
//   GPU r takes a contiguous block of A's rows and makes the same rows of C.
//   B is needed whole on every GPU: each GPU copies 1/P of B's rows from the host
//   over its own PCIe link, then the GPUs hand each other their slices over NVLink
//   (one ncclBroadcast per slice, from the GPU that copied it), so no link carries
//   all of B. The host arrays are pinned (cudaHostAlloc), so every GPU copies them
//   by DMA, at its own link's speed, at the same time as the others.
//
// libgpk needs neither threads nor NCCL: it multiplies device arrays on the stream
// it is given (gpk_set_stream) and returns at once.
//
// Build against an installed libgpk (NCCL from the CUDA toolkit or its package):
//
//     c++ -std=c++17 multi_gpu_gemm.cpp $(pkg-config --cflags --libs gpk)
//         -I/usr/local/cuda/include -L/usr/local/cuda/lib64 -lcudart -lnccl -pthread
//
// (one command line; NCCL's and CUDA's folders as installed)
//
// Run: ./multi_gpu_gemm [SIZE] (default 2048). Exits 0 when C is right, 1 when a
// call fails or C is wrong, 77 (skipped) on a node with fewer than two GPUs.
#include <gpk/gpk.h>

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#define CUDA(call)                                                                              \
    do {                                                                                        \
        cudaError_t err_ = (call);                                                              \
        if (err_ != cudaSuccess) {                                                              \
            std::fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(err_));                  \
            return false;                                                                       \
        }                                                                                       \
    } while (0)
#define NCCL(call)                                                                              \
    do {                                                                                        \
        ncclResult_t r_ = (call);                                                               \
        if (r_ != ncclSuccess) {                                                                \
            std::fprintf(stderr, "%s: %s\n", #call, ncclGetErrorString(r_));                    \
            return false;                                                                       \
        }                                                                                       \
    } while (0)

// Part `i` of [0, n) split over `parts`: first and count.
static void split(int64_t n, int parts, int i, int64_t *first, int64_t *count) {
    *first = n * i / parts;
    *count = n * (i + 1) / parts - *first;
}

// GPU `rank` of `gpus`: its rows of C = its rows of A * B. A is m x k, B k x n, C
// m x n, row-major, in pinned host memory.
static bool part(int rank, int gpus, ncclComm_t comm, int64_t m, int64_t n, int64_t k, const float *A,
                 const float *B, float *C) {
    CUDA(cudaSetDevice(rank));
    int64_t row, rows, brow, brows;
    split(m, gpus, rank, &row, &rows);
    split(k, gpus, rank, &brow, &brows);

    cudaStream_t stream;
    CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    float *dA = nullptr, *dB = nullptr, *dC = nullptr;
    CUDA(cudaMalloc(&dA, sizeof(float) * (rows > 0 ? rows : 1) * k));
    CUDA(cudaMalloc(&dB, sizeof(float) * k * n));
    CUDA(cudaMalloc(&dC, sizeof(float) * (rows > 0 ? rows : 1) * n));

    // This GPU's slice of B from the host, then every GPU's slice over NVLink.
    CUDA(cudaMemcpyAsync(dB + brow * n, B + brow * n, sizeof(float) * brows * n, cudaMemcpyHostToDevice, stream));
    NCCL(ncclGroupStart());
    for (int root = 0; root < gpus; ++root) {
        int64_t first, count;
        split(k, gpus, root, &first, &count);
        NCCL(ncclBroadcast(dB + first * n, dB + first * n, count * n, ncclFloat32, root, comm, stream));
    }
    NCCL(ncclGroupEnd());
    // Its rows of A from the host, over its own link.
    CUDA(cudaMemcpyAsync(dA, A + row * k, sizeof(float) * rows * k, cudaMemcpyHostToDevice, stream));

    // The product on this GPU, on the same stream: after the copies, before the copy back.
    gpk_context *ctx = nullptr;
    gpk_status st = gpk_create(&ctx, GPK_BACKEND_CUDA, rank);
    if (st == GPK_SUCCESS) st = gpk_set_stream(ctx, stream);
    if (st == GPK_SUCCESS && rows > 0)
        st = gpk_gemm(ctx, GPK_F32, GPK_ROW_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, rows, n, k, 1.0, dA, k, dB, n, 0.0, dC,
                      n);
    if (st == GPK_SUCCESS) st = gpk_synchronize(ctx);
    if (st != GPK_SUCCESS) {
        std::fprintf(stderr, "GPU %d: %s: %s\n", rank, gpk_status_string(st), gpk_last_error(ctx));
        gpk_destroy(ctx);
        return false;
    }
    gpk_set_stream(ctx, nullptr);  // before the stream goes
    gpk_destroy(ctx);

    CUDA(cudaMemcpyAsync(C + row * n, dC, sizeof(float) * rows * n, cudaMemcpyDeviceToHost, stream));
    CUDA(cudaStreamSynchronize(stream));
    CUDA(cudaFree(dA));
    CUDA(cudaFree(dB));
    CUDA(cudaFree(dC));
    CUDA(cudaStreamDestroy(stream));
    return true;
}

int main(int argc, char **argv) {
    const int64_t size = argc > 1 ? std::atoll(argv[1]) : 2048;
    const int64_t m = size, n = size, k = size;
    int gpus = 0;
    if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus < 2) {
        std::printf("skipped: this example needs two GPUs or more, this node has %d\n", gpus);
        return 77;
    }
    if (size < 1) {
        std::fprintf(stderr, "usage: %s [SIZE >= 1]\n", argv[0]);
        return 1;
    }

    // Pinned host arrays: every GPU copies them directly, by DMA.
    float *A = nullptr, *B = nullptr, *C = nullptr;
    if (cudaHostAlloc(&A, sizeof(float) * m * k, cudaHostAllocPortable) != cudaSuccess ||
        cudaHostAlloc(&B, sizeof(float) * k * n, cudaHostAllocPortable) != cudaSuccess ||
        cudaHostAlloc(&C, sizeof(float) * m * n, cudaHostAllocPortable) != cudaSuccess) {
        std::fprintf(stderr, "cudaHostAlloc failed\n");
        return 1;
    }
    // Small integers: every sum is exact, so C can be checked without a tolerance.
    for (int64_t i = 0; i < m * k; ++i) A[i] = static_cast<float>(i % 7 - 3);
    for (int64_t i = 0; i < k * n; ++i) B[i] = static_cast<float>(i % 5 - 2);

    // One NCCL communicator per GPU, made in one call; then one thread per GPU.
    std::vector<ncclComm_t> comms(static_cast<size_t>(gpus));
    if (ncclCommInitAll(comms.data(), gpus, nullptr) != ncclSuccess) {
        std::fprintf(stderr, "ncclCommInitAll failed\n");
        return 1;
    }
    std::vector<char> ok(static_cast<size_t>(gpus), 0);
    std::vector<std::thread> threads;
    for (int r = 0; r < gpus; ++r)
        threads.emplace_back([&, r] { ok[r] = part(r, gpus, comms[r], m, n, k, A, B, C); });
    for (std::thread &t : threads) t.join();
    for (ncclComm_t comm : comms) ncclCommDestroy(comm);

    // C against the host at rows and columns spread over the matrix, the last included.
    int64_t wrong = 0, checked = 0;
    const int64_t step_i = m > 97 ? m / 97 : 1, step_j = n > 37 ? n / 37 : 1;
    for (int64_t i = 0; i < m; i = (i + step_i < m || i == m - 1) ? i + step_i : m - 1)
        for (int64_t j = 0; j < n; j += step_j) {
            double want = 0;
            for (int64_t p = 0; p < k; ++p) want += static_cast<double>(A[i * k + p]) * B[p * n + j];
            wrong += C[i * n + j] != want;
            ++checked;
        }
    bool all_ok = wrong == 0;
    for (char o : ok) all_ok = all_ok && o;
    std::printf("C (%lld x %lld) on %d GPUs: %lld of %lld checked entries wrong\n", static_cast<long long>(m),
                static_cast<long long>(n), gpus, static_cast<long long>(wrong), static_cast<long long>(checked));
    cudaFreeHost(A);
    cudaFreeHost(B);
    cudaFreeHost(C);
    return all_ok ? 0 : 1;
}
