// cuRAND's generator and status types for builds without the CUDA toolkit (see
// cuda_runtime.h beside this file): declared so that the backend's header
// compiles; nothing calls cuRAND there.
#pragma once

typedef struct curandGenerator_st *curandGenerator_t;
typedef enum { CURAND_STATUS_SUCCESS = 0, CURAND_STATUS_NOT_INITIALIZED = 101 } curandStatus_t;
