// gpk-gemm --timeline: a picture of one call's staging pipeline as a plain SVG
// document, written without any library.
//
// The top three lanes are the engines -- every copy to the GPU, every kernel, every
// copy back, whichever stream issued it -- so that idle gaps of the link or of the
// SMs show at a glance; below them one lane per pipeline stream shows how the
// chunks flow through it. Each box has a tooltip (chunk, stream, times, bytes).
#pragma once

#include "gpk/gpk.h"

#include <string>
#include <vector>

namespace gpk_gemm_app {

// The SVG document for `events` (gpk_stage_trace's order, times in ms from the
// start of the call), headed by `title` and, in smaller type, `subtitle`.
std::string timeline_svg(const std::vector<gpk_stage_event> &events, const std::string &title,
                         const std::string &subtitle);

// Writes `text` to `path`; false with *error set when that failed.
bool write_text_file(const std::string &path, const std::string &text, std::string *error);

}  // namespace gpk_gemm_app
