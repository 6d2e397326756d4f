#include "ladders.hpp"

#include "gpk_app_ladders.h"

#include <algorithm>

namespace gpk_app {
namespace {

constexpr const char *kOpNames[kOpCount] = {"gemm", "reduce", "transpose", "pi", "gemm_batched"};
static_assert(GPK_OP_GEMM == 0 && GPK_OP_REDUCE == 1 && GPK_OP_TRANSPOSE == 2 && GPK_OP_PI == 3 &&
                  GPK_OP_GEMM_BATCHED == 4,
              "kOpNames is indexed by op");

// The CUDA ladders' names, read at configure time from the very lists the library's
// ladders are compiled from (libgpk/cuda/<op>/rungs.def; see apps/meson.build), so
// that they cannot drift apart. The library answers gpk_variant_name only for a
// context, and a CUDA context needs a GPU: these lists are what lets a machine
// without one say what the build holds.
const std::vector<std::string> kCudaRungs[kOpCount] = {
    {GPK_APP_CUDA_RUNGS_GEMM}, {GPK_APP_CUDA_RUNGS_REDUCE}, {GPK_APP_CUDA_RUNGS_TRANSPOSE}, {GPK_APP_CUDA_RUNGS_PI},
    {GPK_APP_CUDA_RUNGS_GEMM_BATCHED},
};
constexpr bool kBuildHasCuda = GPK_APP_BUILD_HAS_CUDA;

bool contains(const std::vector<std::string> &names, const std::string &name) {
    return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

const char *op_name(int op) { return op >= 0 && op < kOpCount ? kOpNames[op] : "an unknown op"; }

int parse_op(const std::string &name) {
    for (int op = 0; op < kOpCount; ++op)
        if (name == kOpNames[op]) return op;
    return -1;
}

std::string op_choices() { return join_choices(std::vector<std::string>(kOpNames, kOpNames + kOpCount)); }

bool build_has_cuda() { return kBuildHasCuda; }

const std::vector<std::string> &built_cuda_rungs(int op) {
    static const std::vector<std::string> none;
    return op >= 0 && op < kOpCount ? kCudaRungs[op] : none;
}

std::vector<std::string> context_rungs(const gpk_context *ctx, int op) {
    std::vector<std::string> names;
    int count = 0;
    if (gpk_variant_count(ctx, op, &count) != GPK_SUCCESS) return names;
    for (int i = 0; i < count; ++i) {
        const char *name = gpk_variant_name(ctx, op, i);
        names.push_back(name ? name : "");
    }
    return names;
}

std::string join_choices(const std::vector<std::string> &names, const char *last) {
    std::string text;
    for (size_t i = 0; i < names.size(); ++i) {
        if (i > 0) text += i + 1 == names.size() ? last : ", ";
        text += names[i];
    }
    return text;
}

std::string variant_problem(const gpk_context *ctx, int backend, int op, const std::string &name) {
    std::vector<std::string> choices = context_rungs(ctx, op);
    if (name == "auto" || contains(choices, name)) return "";
    const bool cuda = backend == GPK_BACKEND_CUDA;
    choices.push_back("auto");
    std::string text = "'" + name + "' is ";
    if (!cuda && contains(built_cuda_rungs(op), name))
        text += "a CUDA rung of " + std::string(op_name(op)) + ", and this run is on the host backend";
    else
        text += "not a variant of " + std::string(op_name(op)) + " on the " + (cuda ? "CUDA" : "host") + " backend";
    text += "; the choices are " + join_choices(choices);
    if (!cuda && kBuildHasCuda)
        text += " (the CUDA backend, with a usable GPU: " + join_choices(built_cuda_rungs(op)) + ")";
    return text;
}

}  // namespace gpk_app
