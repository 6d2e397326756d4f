// The staging pipeline's trace (trace.hpp).
#include "trace.hpp"

#include <algorithm>
#include <cstring>
#include <new>

namespace gpk::cuda {

gpk_status Trace::reserve(gpk_context &ctx, size_t steps) {
    forget();
    const size_t want = std::min(steps, kMaxSteps);
    if (start_ == nullptr) GPK_CUDA_TRY(ctx, cudaEventCreate(&start_));
    try {
        steps_.reserve(want);
        timers_.reserve(2 * want);
    } catch (const std::bad_alloc &) {
        return fail(&ctx, GPK_ERROR_OUT_OF_MEMORY, "out of host memory for the staging pipeline's trace");
    }
    while (timers_.size() < 2 * want) {
        cudaEvent_t e = nullptr;
        GPK_CUDA_TRY(ctx, cudaEventCreate(&e));
        timers_.push_back(e);  // within the reserved capacity
    }
    reserved_ = want;
    return GPK_SUCCESS;
}

gpk_status Trace::begin(gpk_context &ctx, cudaStream_t main) {
    forget();
    GPK_CUDA_TRY(ctx, cudaEventRecord(start_, main));
    return GPK_SUCCESS;
}

void Trace::forget() {
    traced_ = false;
    steps_.clear();
}

void Trace::destroy() {
    if (start_ != nullptr) cudaEventDestroy(start_);
    for (cudaEvent_t e : timers_) cudaEventDestroy(e);
    start_ = nullptr;
    timers_.clear();
    steps_.clear();
    reserved_ = 0;
    traced_ = false;
}

gpk_status Trace::read(gpk_context &ctx, gpk_stage_event *events, int64_t capacity, int64_t *count) const {
    if (!traced_) {
        *count = 0;
        return GPK_SUCCESS;
    }
    const auto total = static_cast<int64_t>(steps_.size());
    const int64_t n = std::min(capacity, total);
    std::vector<gpk_stage_event> out;
    try {
        out.resize(static_cast<size_t>(n));
    } catch (const std::bad_alloc &) {
        return fail(&ctx, GPK_ERROR_OUT_OF_MEMORY, "out of host memory for the staging trace");
    }
    for (int64_t i = 0; i < n; ++i) {
        const Step &s = steps_[static_cast<size_t>(i)];
        float begin = 0, end = 0;
        GPK_CUDA_TRY(ctx, cudaEventElapsedTime(&begin, start_, timers_[2 * static_cast<size_t>(i)]));
        GPK_CUDA_TRY(ctx, cudaEventElapsedTime(&end, start_, timers_[2 * static_cast<size_t>(i) + 1]));
        out[static_cast<size_t>(i)] = gpk_stage_event{s.kind, s.lane, s.chunk, s.bytes, begin, end};
    }
    if (n > 0) std::memcpy(events, out.data(), out.size() * sizeof(gpk_stage_event));
    *count = total;
    return GPK_SUCCESS;
}

}  // namespace gpk::cuda
