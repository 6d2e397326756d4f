// What the bench programs that drive the library on a GPU (tc-bench, batched-bench)
// share: how they stop on a CUDA error, how they read their command line, how they
// open the library's CUDA backend and name the GPU, and how one stretch of work is
// timed with events. Kept in one place so that the programs read their arguments and
// time their calls the same way.
#pragma once

#include <gpk/gpk.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

// A CUDA error ends the program with status 2 (1 is a failed check).
#define CK(x)                                                                                         \
    do {                                                                                              \
        cudaError_t e_ = (x);                                                                         \
        if (e_ != cudaSuccess) {                                                                      \
            std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            std::exit(2);                                                                             \
        }                                                                                             \
    } while (0)

namespace bench {

// The command line: a mode first ("all" when there is none), then positional words
// and numbers, each with the value it takes when it is absent.
struct Args {
    int argc;
    char **argv;
    std::string mode() const { return argc > 1 ? argv[1] : "all"; }
    // Whether the command line holds at least `count` words after the program's name.
    bool has(int count) const { return argc > count; }
    std::string word(int i) const { return has(i) ? argv[i] : ""; }
    int64_t integer(int i, int64_t absent = 0) const { return has(i) ? int64_t(std::atoll(argv[i])) : absent; }
    double real(int i, double absent) const { return has(i) ? std::atof(argv[i]) : absent; }
};

// Names GPU 0 (name, SMs, compute capability) and opens the library's CUDA backend on
// it; a program that cannot stops there.
inline gpk_context *open_gpu() {
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    std::printf("device: %s, %d SMs, cc %d.%d\n", p.name, p.multiProcessorCount, p.major, p.minor);
    gpk_context *ctx = nullptr;
    if (gpk_create(&ctx, GPK_BACKEND_CUDA, 0) != GPK_SUCCESS) {
        std::fprintf(stderr, "gpk_create: %s\n", gpk_last_error(nullptr));
        std::exit(2);
    }
    return ctx;
}

inline float median(std::vector<float> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// A pair of events that time what a function enqueues on a stream, in milliseconds.
class Events {
public:
    Events() {
        CK(cudaEventCreate(&a_));
        CK(cudaEventCreate(&b_));
    }
    ~Events() {
        cudaEventDestroy(a_);
        cudaEventDestroy(b_);
    }
    Events(const Events &) = delete;
    Events &operator=(const Events &) = delete;

    template <class F>
    float time(F &&f, cudaStream_t stream = nullptr) {
        CK(cudaEventRecord(a_, stream));
        f();
        CK(cudaEventRecord(b_, stream));
        CK(cudaEventSynchronize(b_));
        float ms;
        CK(cudaEventElapsedTime(&ms, a_, b_));
        return ms;
    }

private:
    cudaEvent_t a_, b_;
};

}  // namespace bench
