// gpk-bench --tune FILE: measures libgpk's tuning table on the GPU at hand
// (libgpk/tuning.hpp says what a table holds and how "auto" reads it; tune.cpp the
// grid and how each point is timed).
#pragma once

#include "bench.hpp"

#include <string>
#include <vector>

namespace gpk_bench {

struct TuneOptions {
    std::string path;      // the table to write
    std::vector<int> ops;  // GPK_OP_*; empty: every op
    bool quick = false;    // a small grid, for a smoke test (the host backend always)
};

// Times every rung of the chosen ops at every point of the grid on env.ctx and
// writes the table. Returns the exit status: 0, or 1 when the table could not be
// written (failures of single rungs are reported and leave them out of their rows).
int run_tune(Env &env, const TuneOptions &opt);

}  // namespace gpk_bench
