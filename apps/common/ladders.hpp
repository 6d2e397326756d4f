// The ops and their ladders as the apps name them: the op names of the command lines,
// the rungs each backend of this build holds, and the one check of a --variant name,
// so that every app refuses a name that is no variant in the same words, with the
// choices.
#pragma once

#include "gpk/gpk.h"

#include <string>
#include <vector>

namespace gpk_app {

// GPK_OP_GEMM ... GPK_OP_GEMM_BATCHED, in that order.
constexpr int kOpCount = 5;

// "gemm", "reduce", "transpose", "pi", "gemm_batched"; "an unknown op" otherwise.
const char *op_name(int op);
// GPK_OP_* for a name above; -1 otherwise.
int parse_op(const std::string &name);
// The ops' names for a message: "gemm, reduce, transpose, pi or gemm_batched".
std::string op_choices();

// Whether this build has the CUDA backend (it may still find no GPU to run it on).
bool build_has_cuda();

// The CUDA rungs of `op` this build holds, in ladder order, read without a GPU or a
// context: the names of the lists the library's CUDA ladders are built from
// (libgpk/cuda/<op>/rungs.def). Empty in a build without CUDA.
const std::vector<std::string> &built_cuda_rungs(int op);

// The rungs of `op` on the context's backend, in ladder order (gpk_variant_count,
// gpk_variant_name). Empty when the context cannot say.
std::vector<std::string> context_rungs(const gpk_context *ctx, int op);

// "a, b or c".
std::string join_choices(const std::vector<std::string> &names, const char *last = " or ");

// What is wrong with `name` as a variant of `op` on `ctx` (whose backend is `backend`,
// GPK_BACKEND_CUDA or GPK_BACKEND_HOST): empty when it is one of the context's rungs or
// "auto"; otherwise a message that names it and the choices, and says so when it is a
// rung of the other backend of this build (a CUDA rung asked of the host backend).
std::string variant_problem(const gpk_context *ctx, int backend, int op, const std::string &name);

}  // namespace gpk_app
