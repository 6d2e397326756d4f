// The staging pipeline: gpk_gemm, gpk_transpose and gpk_reduce on host arrays, cut
// into chunks that flow through the context's pinned buffers on several streams, so
// that copies to the GPU, kernels and copies back overlap (see pipeline.cpp). Host
// code over the CUDA runtime: the kernels are the ladders' rungs, called on device
// pointers into the pipeline's buffers.
#pragma once

#include "../ops.hpp"

namespace gpk::cuda {

class Pipeline;

// C = alpha op(A) op(B) + beta C (column-major, as dispatch normalized it) with at
// least one of A, B, C in host memory; dev_* say which are device memory (used in
// place). `run` is the rung to run on each chunk; a.k == 0 means C = beta C (A and B
// not read), which `run` must do with k == 0. resident_a: the normalized A is the
// resident operand and the panels are columns of C (a row-major call, whose B became
// the normalized A); otherwise B is resident and the panels are rows of C.
gpk_status staged_gemm(gpk_context &ctx, const GemmArgs &a, Launcher<GemmArgs> run, bool resident_a, bool dev_a,
                       bool dev_b, bool dev_c);
// A rung chosen by name whose takes function can refuse a call: the staging pipeline
// asks it about every piece before the first write. takes is null for "auto" (which
// chooses piece by piece) and for rungs that take every call.
template <class Args>
struct RungCheck {
    const char *name = nullptr;
    gpk_status (*takes)(gpk_context &ctx, const Args &args, const char **why_not) = nullptr;
};

// B = A^T with A or B (or both) in host memory.
gpk_status staged_transpose(gpk_context &ctx, const TransposeArgs &a, Launcher<TransposeArgs> run,
                            const RungCheck<TransposeArgs> &check, bool dev_a, bool dev_b);
// *result = op over x[0..n), x in host memory, n > 0: each piece of x reduced by `run`
// to a partial in device memory, the partials reduced by `run` in piece order.
gpk_status staged_reduce(gpk_context &ctx, const ReduceArgs &a, Launcher<ReduceArgs> run, bool dev_result);

// gpk_stage_trace on the CUDA backend; the arguments are checked, the device is current.
// A call that staged host arrays without the pipeline (validation mode) forgets the
// trace, so that it never describes an older call.
gpk_status stage_trace(gpk_context &ctx, gpk_stage_event *events, int64_t capacity, int64_t *count);
void forget_trace(gpk_context &ctx);

// Frees the pipeline and everything it holds (streams, buffers, events); waits for its
// streams first. Null is a no-op. Never fails.
void destroy_pipeline(Pipeline *pipeline);

}  // namespace gpk::cuda
