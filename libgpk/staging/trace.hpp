// The staging pipeline's trace (gpk_stage_trace): two timing events around every
// step of a call -- a copy in, a rung's compute, a copy out -- on the step's lane.
// Everything a call records into is made while the call is provisioned, so that
// tracing never allocates once the call has started writing.
#pragma once

#include "../cuda/resources.hpp"

#include <cstdint>
#include <vector>

namespace gpk::cuda {

struct Step {
    int32_t kind, lane;
    int64_t chunk;
    uint64_t bytes;
};

class Trace {
public:
    static constexpr size_t kMaxSteps = size_t{1} << 16;  // steps of one call kept

    // Events and room for the first min(steps, kMaxSteps) steps of the coming call;
    // forgets the last call's steps.
    gpk_status reserve(gpk_context &ctx, size_t steps);
    // The call's start on `main`; the steps' times are measured from it.
    gpk_status begin(gpk_context &ctx, cudaStream_t main);
    cudaEvent_t start() const { return start_; }
    // A step's two events go around `op` on stream `s`; past the reserved room the
    // step runs untraced.
    template <class Op>
    gpk_status timed(gpk_context &ctx, cudaStream_t s, const Step &step, Op &&op) {
        const size_t i = steps_.size();
        if (i >= reserved_) return op();
        GPK_CUDA_TRY(ctx, cudaEventRecord(timers_[2 * i], s));
        GPK_FORWARD_IF_ERROR(op());
        GPK_CUDA_TRY(ctx, cudaEventRecord(timers_[2 * i + 1], s));
        steps_.push_back(step);  // within the reserved capacity: no allocation
        return GPK_SUCCESS;
    }
    void complete() { traced_ = true; }  // the call finished: its steps may be read
    void forget();
    // gpk_stage_trace's answer.
    gpk_status read(gpk_context &ctx, gpk_stage_event *events, int64_t capacity, int64_t *count) const;
    void destroy();  // frees the events; never fails

private:
    cudaEvent_t start_ = nullptr;
    std::vector<cudaEvent_t> timers_;  // steps_[i] between 2i and 2i + 1; grows only
    std::vector<Step> steps_;
    size_t reserved_ = 0;  // steps the current call may record
    bool traced_ = false;  // steps_ describe the last call that staged host arrays
};

}  // namespace gpk::cuda
