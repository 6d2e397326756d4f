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
    // --dtype's words: the dtype classes to measure (empty: every class, and pi). The
    // table's words (f32, f64, i32, i64, f16, bf16, fp8_block, half_f32; f32 is both of
    // its math modes), and fp8: both FP8 classes, or with --scaling tensor or block the
    // per-tensor (table word fp8) or the block-scaled one alone.
    std::vector<std::string> dtypes;
    bool scale_tensor = false, scale_block = false;  // --scaling
};

// The table's dtype classes (GPK_* and gpk::kGemm*, libgpk/ops.hpp) that opt.dtypes
// names; false with *error when a word names none.
bool tune_classes(const TuneOptions &opt, std::vector<int> *classes, std::string *error);

// Times every rung of the chosen ops at every point of the grid on env.ctx and
// writes the table. Returns the exit status: 0, or 1 when the table could not be
// written (failures of single rungs are reported and leave them out of their rows).
int run_tune(Env &env, const TuneOptions &opt);

}  // namespace gpk_bench
