// gpk-bench --kernels: which kernels one call of a variant launches, and what the
// lectures ask a learner to look at for each -- registers per thread, shared memory
// per block, theoretical occupancy -- so that a row's speed can be read off its
// kernels rather than guessed. Beside the roofline line of the case (which roof
// binds), it says why each rung is as fast as it is.
//
// The launches are seen through CUPTI's callback API (kernels.cpp), so that the
// vendor's kernels (cuBLAS and cuBLASLt launch through the driver) are seen as ours
// are, without the library telling. CUPTI is optional: without it (GPK_BENCH_HAS_CUPTI
// undefined) --kernels is refused, and a CUPTI held by a profiler (ncu, nsys) only
// costs the kernel lines.
#pragma once

#include "bench.hpp"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace gpk_bench {

// Whether this build has CUPTI, and so --kernels.
bool kernels_built();

class KernelRecorder {
public:
    // Subscribes to CUPTI's launch callbacks (left off until record()) on env's
    // device; null, with why in *why, when CUPTI cannot be had (a profiler holds it).
    static std::unique_ptr<KernelRecorder> open(const Env &env, std::string *why);
    virtual ~KernelRecorder() = default;

    // Runs `call` (which waits for its work) with the launch callbacks on, so that
    // timed calls never pay for them, and returns the kernels it launched: one per
    // distinct (kernel, grid, block, dynamic shared memory), in the order first seen.
    virtual std::vector<KernelInfo> record(const std::function<gpk_status()> &call, gpk_status *status) = 0;
};

}  // namespace gpk_bench
