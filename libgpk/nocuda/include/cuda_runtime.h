// The CUDA runtime as a machine without a GPU sees it, for builds without the CUDA
// toolkit (-Dgpu=disabled, or no nvcc). libgpk's own C++ files, the tests and the
// apps talk to the runtime in a few places around the CUDA backend; with these
// declarations they compile unchanged, and every call answers as the real runtime
// does where no device exists: cudaErrorNoDevice, a device count of 0, nothing
// allocated. Only what the host-side code uses is declared; a new use fails to
// compile in the host-only CI build rather than misbehaving.
#pragma once

#include <cstddef>

enum cudaError_t {
    cudaSuccess = 0,
    cudaErrorNoDevice = 100,
    cudaErrorUnknown = 999,
};
typedef enum cudaError_t cudaError;

enum cudaMemcpyKind {
    cudaMemcpyHostToHost = 0,
    cudaMemcpyHostToDevice = 1,
    cudaMemcpyDeviceToHost = 2,
    cudaMemcpyDeviceToDevice = 3,
    cudaMemcpyDefault = 4,
};

typedef struct CUstream_st *cudaStream_t;
typedef struct CUevent_st *cudaEvent_t;

#define cudaStreamNonBlocking 0x01
#define cudaHostAllocDefault 0x00
#define cudaEventDisableTiming 0x02

struct cudaDeviceProp {
    char name[256];
    int major;
    int minor;
    int multiProcessorCount;
};

namespace gpk_nocuda {
inline cudaError_t none() { return cudaErrorNoDevice; }
}  // namespace gpk_nocuda

inline const char *cudaGetErrorString(cudaError_t err) {
    return err == cudaSuccess ? "no error" : "no CUDA-capable device is detected (libgpk was built without CUDA)";
}
inline const char *cudaGetErrorName(cudaError_t err) {
    return err == cudaSuccess ? "cudaSuccess" : err == cudaErrorNoDevice ? "cudaErrorNoDevice" : "cudaErrorUnknown";
}
inline cudaError_t cudaGetLastError() { return cudaSuccess; }
inline cudaError_t cudaGetDeviceCount(int *count) {
    if (count) *count = 0;
    return gpk_nocuda::none();
}
inline cudaError_t cudaSetDevice(int) { return gpk_nocuda::none(); }
inline cudaError_t cudaGetDeviceProperties(cudaDeviceProp *, int) { return gpk_nocuda::none(); }
inline cudaError_t cudaRuntimeGetVersion(int *version) {
    if (version) *version = 0;
    return cudaSuccess;
}
inline cudaError_t cudaDriverGetVersion(int *version) {
    if (version) *version = 0;  // what the real runtime reports without a driver
    return cudaSuccess;
}
inline cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes) {
    if (free_bytes) *free_bytes = 0;
    if (total_bytes) *total_bytes = 0;
    return gpk_nocuda::none();
}
inline cudaError_t cudaMalloc(void **p, size_t) {
    if (p) *p = nullptr;
    return gpk_nocuda::none();
}
template <class T>
inline cudaError_t cudaMalloc(T **p, size_t bytes) {
    return cudaMalloc(reinterpret_cast<void **>(p), bytes);
}
inline cudaError_t cudaHostAlloc(void **p, size_t, unsigned int) {
    if (p) *p = nullptr;
    return gpk_nocuda::none();
}
template <class T>
inline cudaError_t cudaHostAlloc(T **p, size_t bytes, unsigned int flags) {
    return cudaHostAlloc(reinterpret_cast<void **>(p), bytes, flags);
}
inline cudaError_t cudaFree(void *p) { return p == nullptr ? cudaSuccess : gpk_nocuda::none(); }
inline cudaError_t cudaFreeHost(void *p) { return p == nullptr ? cudaSuccess : gpk_nocuda::none(); }
inline cudaError_t cudaMemcpy(void *, const void *, size_t, cudaMemcpyKind) { return gpk_nocuda::none(); }
inline cudaError_t cudaMemcpyAsync(void *, const void *, size_t, cudaMemcpyKind, cudaStream_t = nullptr) {
    return gpk_nocuda::none();
}
inline cudaError_t cudaMemcpy2DAsync(void *, size_t, const void *, size_t, size_t, size_t, cudaMemcpyKind,
                                     cudaStream_t = nullptr) {
    return gpk_nocuda::none();
}
inline cudaError_t cudaMemsetAsync(void *, int, size_t, cudaStream_t = nullptr) { return gpk_nocuda::none(); }
inline cudaError_t cudaStreamCreate(cudaStream_t *s) {
    if (s) *s = nullptr;
    return gpk_nocuda::none();
}
inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned int) { return cudaStreamCreate(s); }
inline cudaError_t cudaStreamDestroy(cudaStream_t) { return gpk_nocuda::none(); }
inline cudaError_t cudaStreamSynchronize(cudaStream_t) { return gpk_nocuda::none(); }
inline cudaError_t cudaDeviceSynchronize() { return gpk_nocuda::none(); }
inline cudaError_t cudaEventCreate(cudaEvent_t *e) {
    if (e) *e = nullptr;
    return gpk_nocuda::none();
}
inline cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned int) { return cudaEventCreate(e); }
inline cudaError_t cudaEventDestroy(cudaEvent_t) { return gpk_nocuda::none(); }
inline cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t, unsigned int = 0) { return gpk_nocuda::none(); }
inline cudaError_t cudaEventRecord(cudaEvent_t, cudaStream_t = nullptr) { return gpk_nocuda::none(); }
inline cudaError_t cudaEventSynchronize(cudaEvent_t) { return gpk_nocuda::none(); }
inline cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t, cudaEvent_t) {
    if (ms) *ms = 0;
    return gpk_nocuda::none();
}
