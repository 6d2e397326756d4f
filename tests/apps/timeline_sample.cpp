// The timeline of gpk-gemm (apps/gemm/timeline.cpp) drawn from a made-up trace, so
// that the picture is checked on machines without a GPU (check_gemm.py svg).
//
// usage: timeline_sample OUT.svg  -- writes the picture, prints "EVENTS STREAMS".
//
// The trace is what a 3-stream pipeline of 8 chunks looks like: one engine each for
// copies in, kernels and copies out, each taking the chunks in order, a chunk's
// stages in sequence on its stream (chunk c on stream c mod 3).
#include "../../apps/gemm/timeline.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

int main(int argc, char **argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s OUT.svg\n", argv[0]);
        return 2;
    }
    constexpr int kStreams = 3, kChunks = 8;
    const double stage_ms[3] = {0.8, 1.9, 0.7};  // copy in, compute, copy out
    const uint64_t bytes[3] = {64u << 20, 0, 32u << 20};
    double engine_free[3] = {0, 0, 0}, stream_free[kStreams] = {};
    std::vector<gpk_stage_event> events;
    for (int c = 0; c < kChunks; ++c) {
        const int s = c % kStreams;
        double ready = stream_free[s];
        for (int kind = 0; kind < 3; ++kind) {
            const double start = std::max(ready, engine_free[kind]);
            const double end = start + stage_ms[kind];
            events.push_back({kind, s, c, bytes[kind], start, end});
            engine_free[kind] = ready = end;
        }
        stream_free[s] = ready;
    }
    const std::string svg = gpk_gemm_app::timeline_svg(
        events, "gpk-gemm 4096 x 4096 x 4096 f32: 3 streams (a made-up trace) & <escaped> \"text\"",
        "overlap efficiency 0.90 = max(T, C) / wall (illustrative figures)");
    std::string error;
    if (!gpk_gemm_app::write_text_file(argv[1], svg, &error)) {
        std::fprintf(stderr, "%s\n", error.c_str());
        return 1;
    }
    std::printf("%zu %d\n", events.size(), kStreams);
    return 0;
}
