// gpk-bench's timing of one call (harness.cpp times the cases' calls with it, tune.cpp
// the tuner's): CUDA events around the call on the context's stream, after an L2
// flush and a one-block kernel, or a steady clock where calls are synchronous.
#pragma once

#include "bench.hpp"
#include "ceilings.hpp"

#include <algorithm>
#include <chrono>
#include <vector>

namespace gpk_bench {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

// Times single calls: CUDA events around the call on the context's stream, or a
// steady clock where calls are synchronous (the host backend; host arrays staged
// on CUDA, --memory pinned).
class Timer {
public:
    explicit Timer(Env &env) : env_(env) {
        if (!env.event_timing()) return;
        check_cuda(cudaEventCreate(&start_), "cudaEventCreate");
        check_cuda(cudaEventCreate(&stop_), "cudaEventCreate");
    }
    ~Timer() {
        if (start_) cudaEventDestroy(start_);
        if (stop_) cudaEventDestroy(stop_);
    }
    Timer(const Timer &) = delete;
    Timer &operator=(const Timer &) = delete;

    gpk_status time(Case &c, double *ms) {
        return time([&] { return c.call(env_.ctx); }, ms);
    }

    // `call` issues one call on the stream and returns its gpk_status.
    template <class Call>
    gpk_status time(Call &&call, double *ms) {
        if (!env_.event_timing()) {
            const auto t0 = Clock::now();
            const gpk_status st = call();
            // A staged call has waited for its work already; a ceiling's copy has not.
            env_.sync();
            *ms = seconds_since(t0) * 1e3;
            return st;
        }
        // Queued ahead of the start event, so the flush is not part of the time. Then a
        // kernel of one empty block: calls that start right after the flush, a
        // whole-GPU operation, meet a delay in some calls and not in others, how often
        // depending on the kernel launched (docs/PERFORMANCE.md, section "gpk-bench:
        // after the flush"); after a small kernel, nearly never.
        check_cuda(cudaMemsetAsync(env_.l2_flush, 0, env_.l2_flush_bytes, env_.stream), "cudaMemsetAsync (L2 flush)");
        check_cuda(launch_settle(env_.stream), "the kernel after the L2 flush");
        check_cuda(cudaEventRecord(start_, env_.stream), "cudaEventRecord");
        const gpk_status st = call();
        check_cuda(cudaEventRecord(stop_, env_.stream), "cudaEventRecord");
        check_cuda(cudaEventSynchronize(stop_), "cudaEventSynchronize");
        if (st != GPK_SUCCESS) return st;
        float elapsed = 0;
        check_cuda(cudaEventElapsedTime(&elapsed, start_, stop_), "cudaEventElapsedTime");
        *ms = elapsed;
        return GPK_SUCCESS;
    }

private:
    Env &env_;
    cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

inline double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t h = v.size() / 2;
    return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

}  // namespace gpk_bench
