// cuBLAS's handle and status types for builds without the CUDA toolkit (see
// cuda_runtime.h beside this file): declared so that the backend's header
// compiles; nothing calls cuBLAS there.
#pragma once

typedef struct cublasContext *cublasHandle_t;
typedef enum { CUBLAS_STATUS_SUCCESS = 0, CUBLAS_STATUS_NOT_INITIALIZED = 1 } cublasStatus_t;
