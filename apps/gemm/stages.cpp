#include "stages.hpp"

#include <algorithm>
#include <set>
#include <utility>

namespace gpk_gemm_app {

gpk_status fetch_trace(const gpk_context *ctx, std::vector<gpk_stage_event> *events) {
    events->clear();
    int64_t count = 0;
    gpk_status st = gpk_stage_trace(ctx, nullptr, 0, &count);
    if (st != GPK_SUCCESS || count <= 0) return st;
    events->resize(static_cast<size_t>(count));
    st = gpk_stage_trace(ctx, events->data(), count, &count);
    if (st != GPK_SUCCESS) {
        events->clear();
        return st;
    }
    events->resize(static_cast<size_t>(std::min<int64_t>(count, static_cast<int64_t>(events->size()))));
    return GPK_SUCCESS;
}

const char *stage_name(int kind) {
    switch (kind) {
        case GPK_STAGE_COPY_IN: return "copy_in";
        case GPK_STAGE_COMPUTE: return "compute";
        case GPK_STAGE_COPY_OUT: return "copy_out";
        default: return "unknown";
    }
}

const char *stage_label(int kind) {
    switch (kind) {
        case GPK_STAGE_COPY_IN: return "copy-in (H2D)";
        case GPK_STAGE_COMPUTE: return "compute";
        case GPK_STAGE_COPY_OUT: return "copy-out (D2H)";
        default: return "unknown";
    }
}

void StageTotals::add(const StageTotals &o) {
    for (int s = 0; s < kStageKinds; ++s) {
        sum_ms[s] += o.sum_ms[s];
        busy_ms[s] += o.busy_ms[s];
        bytes[s] += o.bytes[s];
    }
    span_ms += o.span_ms;
    events += o.events;
    chunks += o.chunks;
    streams = std::max(streams, o.streams);
}

void StageTotals::scale(double factor) {
    for (int s = 0; s < kStageKinds; ++s) {
        sum_ms[s] *= factor;
        busy_ms[s] *= factor;
        bytes[s] = static_cast<uint64_t>(static_cast<double>(bytes[s]) * factor + 0.5);
    }
    span_ms *= factor;
    events = static_cast<int64_t>(static_cast<double>(events) * factor + 0.5);
    chunks = static_cast<int64_t>(static_cast<double>(chunks) * factor + 0.5);
}

StageTotals summarize(const std::vector<gpk_stage_event> &events) {
    StageTotals t;
    if (events.empty()) return t;
    std::vector<std::pair<double, double>> intervals[kStageKinds];
    std::set<int64_t> chunks;
    std::set<int32_t> streams;
    double first = events.front().start_ms, last = events.front().end_ms;
    for (const gpk_stage_event &e : events) {
        first = std::min(first, e.start_ms);
        last = std::max(last, e.end_ms);
        chunks.insert(e.chunk);
        streams.insert(e.stream);
        if (e.kind < 0 || e.kind >= kStageKinds) continue;
        t.sum_ms[e.kind] += std::max(0.0, e.end_ms - e.start_ms);
        t.bytes[e.kind] += e.bytes;
        intervals[e.kind].emplace_back(e.start_ms, e.end_ms);
    }
    for (int s = 0; s < kStageKinds; ++s) {
        auto &list = intervals[s];
        std::sort(list.begin(), list.end());
        double busy = 0, open_start = 0, open_end = 0;
        bool open = false;
        for (const auto &[start, end] : list) {
            if (open && start <= open_end) {
                open_end = std::max(open_end, end);
                continue;
            }
            if (open) busy += open_end - open_start;
            open = true, open_start = start, open_end = end;
        }
        if (open) busy += open_end - open_start;
        t.busy_ms[s] = busy;
    }
    t.span_ms = last - first;
    t.events = static_cast<int64_t>(events.size());
    t.chunks = static_cast<int64_t>(chunks.size());
    t.streams = static_cast<int>(streams.size());
    return t;
}

}  // namespace gpk_gemm_app
