// The opaque gpk_context. Plain C++: CUDA resources live behind `cuda` (see
// cuda/resources.hpp), so this header, and the host backend that includes it, need no
// CUDA headers; code that uses the CUDA runtime (api.cpp, dispatch.cpp, cuda/)
// includes cuda/resources.hpp.
#pragma once

#include "gpk/gpk.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace gpk::cuda {
struct Resources;
}
namespace gpk::tuning {
struct Table;
}

constexpr int GPK_OP_COUNT = 5;

namespace gpk {
// gpk_set_staging's settings: how host arrays flow through the GPU (staging/pipeline.cpp).
struct StagingSettings {
    static constexpr int kMaxStreams = 16;
    static constexpr int kDefaultStreams = 4;
    int streams = kDefaultStreams;  // 1 .. kMaxStreams
    size_t chunk_bytes = 0;         // 0: the library's choice
    size_t device_bytes = 0;        // 0: no cap but the GPU's free memory
};
}  // namespace gpk

// The context itself. Callers never see its address: they hold a handle that the
// registry of live contexts (checks.hpp) maps to it.
struct gpk_context {
    int backend = GPK_BACKEND_HOST;  // resolved: CUDA or HOST
    int device = 0;
    void *stream = nullptr;  // cudaStream_t; null is the default stream
    bool validation = false;
    int math_mode = GPK_MATH_DEFAULT;  // gpk_set_math_mode: F32 gemm only
    int variant[GPK_OP_COUNT] = {-1, -1, -1, -1, -1};  // -1: "auto", else a ladder index
    // What "auto" chooses from (tuning.hpp): shared, since a built-in table serves every
    // context of its device kind; null: no table, each ladder's default.
    std::shared_ptr<const gpk::tuning::Table> tuning;
    std::string tuning_name;  // gpk_tuning_name
    int last_variant[GPK_OP_COUNT] = {-1, -1, -1, -1, -1};  // gpk_last_variant: a ladder index, -1: no call yet
    gpk::StagingSettings staging;
    std::string last_error;
    gpk::cuda::Resources *cuda = nullptr;  // owned; null on the host backend
};
