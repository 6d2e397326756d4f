// The staging pipeline's trace (gpk_stage_trace) of one gpk_gemm call, and the
// figures gpk-gemm draws from it: how long each stage worked, and how much it moved.
//
// Two ways to add up a stage. The sum of its events' durations is the time the
// stage takes when nothing overlaps it: on one stream that is exactly the stage's
// share of the wall time, which is why the 1-stream run gives T and C. Its busy
// time -- the length of the union of its events' intervals, over all streams -- is
// how long the engine doing that stage was occupied in an overlapped run, where
// several kernels (or copies) may run at once and a sum would count them twice.
#pragma once

#include "gpk/gpk.h"

#include <cstdint>
#include <vector>

namespace gpk_gemm_app {

// The events of the context's last call on host arrays; empty when there was none
// or the backend records none (the host backend). A failure returns its status.
gpk_status fetch_trace(const gpk_context *ctx, std::vector<gpk_stage_event> *events);

// "copy_in", "compute", "copy_out" for GPK_STAGE_*; "unknown" otherwise.
const char *stage_name(int kind);
// The same for people: "copy-in (H2D)", "compute", "copy-out (D2H)".
const char *stage_label(int kind);
constexpr int kStageKinds = 3;

// The totals of one call's trace, in milliseconds and bytes.
struct StageTotals {
    double sum_ms[kStageKinds] = {};   // per stage: the sum of its events' durations
    double busy_ms[kStageKinds] = {};  // per stage: the union of its events' intervals
    uint64_t bytes[kStageKinds] = {};  // per stage: bytes moved (0 for compute)
    double span_ms = 0;                // first start to last end
    int64_t events = 0;
    int64_t chunks = 0;                // distinct chunk numbers
    int streams = 0;                   // distinct streams used

    double transfer_ms() const { return sum_ms[GPK_STAGE_COPY_IN] + sum_ms[GPK_STAGE_COPY_OUT]; }
    double compute_ms() const { return sum_ms[GPK_STAGE_COMPUTE]; }
    uint64_t bytes_copied() const { return bytes[GPK_STAGE_COPY_IN] + bytes[GPK_STAGE_COPY_OUT]; }

    // Adds another call's totals (for means over repeated calls), and scales all
    // figures (1 / calls).
    void add(const StageTotals &other);
    void scale(double factor);
};

StageTotals summarize(const std::vector<gpk_stage_event> &events);

}  // namespace gpk_gemm_app
