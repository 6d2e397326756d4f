// The staging pipeline: gpk_gemm, gpk_transpose, gpk_reduce and the batched gemm on
// host arrays, cut into chunks that flow through the context's pinned buffers on
// several streams, so that copies to the GPU, kernels and copies back overlap (see
// pipeline.cpp). Host
// code over the CUDA runtime: the kernels are the ladders' rungs, called on device
// pointers into the pipeline's buffers. This header is the staging folder's one face:
// the rest of the library includes it alone; pipeline.cpp builds on executor.hpp
// (with trace.hpp and planner.hpp beneath it), which builds on cuda/resources.hpp.
#pragma once

#include "../matrix_view.hpp"
#include "../ops.hpp"

namespace gpk::cuda {

// The rung a staged call runs on every piece, chosen once for the whole call by
// dispatch: its name, launcher and takes function (null for a rung that takes every
// call). A piece can start at an element that a rung's vector accesses cannot, so the
// pipeline asks the rung about every piece before its first write and refuses the
// call by the rung's name if one fails; nothing has been written then.
template <class Args>
struct Rung {
    const char *name;
    Launcher<Args> run;
    gpk_status (*takes)(gpk_context &ctx, const Args &args, const char **why_not) = nullptr;
};

// Validation mode (gpk_set_validation) in the pipeline: `run` is the checker rung,
// run on every chunk beside the variant on the same lane (null for transpose, whose
// check needs none), and the verdict's message names `variant` and `checker`. The
// chunks' comparisons (validation.hpp) go on while later chunks run; the verdict
// comes once every result is in its place, so GPK_ERROR_VALIDATION leaves the
// variant's result in the outputs. What validation needs is provisioned with the rest,
// before the first copy.
template <class Args>
struct Checker {
    Launcher<Args> run;
    const char *variant, *checker;
};

// C = alpha op(A) op(B) + beta C (column-major, as dispatch normalized it) with at
// least one of A, B, C in host memory; dev_* say which are device memory (used in
// place). `rung` runs on every chunk; a.k == 0 means C = beta C (A and B not read),
// which the rung must do with k == 0. resident_a: the normalized A is the resident
// operand and the panels are columns of C (a row-major call, whose B became the
// normalized A); otherwise B is resident and the panels are rows of C.
// `check`: validation mode's checker, or null. *refused (every staged call): set when
// the rung refuses some piece, which the pipeline asks before its first write.
gpk_status staged_gemm(gpk_context &ctx, const GemmArgs &a, const Rung<GemmArgs> &rung, bool resident_a, bool dev_a,
                       bool dev_b, bool dev_c, const Checker<GemmArgs> *check, bool *refused);

// B = A^T with A or B (or both) in host memory.
gpk_status staged_transpose(gpk_context &ctx, const TransposeArgs &a, const Rung<TransposeArgs> &rung, bool dev_a,
                            bool dev_b, const Checker<TransposeArgs> *check, bool *refused);
// *result = op over x[0..n), x in host memory, n > 0: each piece of x reduced by the rung
// to a partial in device memory, the partials reduced by the rung in piece order.
gpk_status staged_reduce(gpk_context &ctx, const ReduceArgs &a, const Rung<ReduceArgs> &rung, bool dev_result,
                         const Checker<ReduceArgs> *check, bool *refused);

// gpk_gemm_strided_batched with at least one of A, B, C in host memory (dev_* say which
// are device memory, used in place; a, b and cc: one product's A, B and C of the
// column-major call as stored, geometry only, the pointers being c's): chunks of whole
// products on the lanes, A and B as their spans, C as whole lines; a shared operand
// (stride 0) copied once. `run` is the rung for every chunk, chosen by its takes for
// the whole call (a chunk holds whole products of the call's shape). `check`:
// validation mode's checker, or null; each product is compared by gemm's rule, as a
// gemm of its own.
gpk_status staged_gemm_batched(gpk_context &ctx, const GemmBatchedCall &c, Launcher<GemmBatchedCall> run,
                               const MatrixView &a, const MatrixView &b, const MatrixView &cc, bool dev_a,
                               bool dev_b, bool dev_c, const Checker<GemmBatchedCall> *check);

// gpk_stage_trace on the CUDA backend; the arguments are checked, the device is current.
gpk_status stage_trace(gpk_context &ctx, gpk_stage_event *events, int64_t capacity, int64_t *count);

}  // namespace gpk::cuda
