// The library side of the tensor-core rungs (11 and up): their launchers turn a
// GemmArgs into the rungs' own call (common.cuh's GemmTc) with the context's
// stream and scratch, and their Result into a gpk_status.
#pragma once

#include "../../ladders.hpp"
#include "../../resources.hpp"
#include "../gemm_util.cuh"
#include "common.cuh"

namespace gpk::cuda {

// The dtype a tensor-core rung computes a call in: F16 and BF16 as they are; F32 only
// in GPK_MATH_TF32, as TF32 products. *why_not says why a call has none.
inline bool tc_dtype(const gpk_context &ctx, int dtype, tc::Dtype *out, const char **why_not) {
    *why_not = nullptr;
    switch (dtype) {
        case GPK_F16: *out = tc::Dtype::F16; return true;
        case GPK_BF16: *out = tc::Dtype::BF16; return true;
        case GPK_F32:
            if (ctx.math_mode == GPK_MATH_TF32) {
                *out = tc::Dtype::TF32;
                return true;
            }
            *why_not = "dtype GPK_F32 runs on the tensor cores only in math mode GPK_MATH_TF32, and the context's "
                       "math mode is GPK_MATH_DEFAULT (exact FP32)";
            return false;
        default: *why_not = "its tensor cores take F16, BF16 and, in GPK_MATH_TF32, F32"; return false;
    }
}

// The call in the rungs' form. GemmArgs is column-major already (row-major calls are
// swapped before they reach a launcher); alpha and beta are applied in F32, as the
// contract states for F16, BF16 and TF32.
inline tc::GemmTc tc_call(const gpk_context &ctx, const GemmArgs &a, tc::Dtype dtype) {
    return tc::GemmTc{dtype,  a.transa, a.transb, a.m,   a.n,           a.k,
                      static_cast<float>(a.alpha), static_cast<float>(a.beta), a.A, a.lda, a.B, a.ldb, a.C,
                      a.ldc,  stream(ctx), nullptr, 0};
}

// Runs a tensor-core rung on the call: workspace for the operands it packs from the
// context's scratch (the lane's own in the staging pipeline), and its Result as a
// status. A refusal names the rung (through refuse); a CUDA failure takes the CUDA
// error path with the rung's words for what failed.
inline gpk_status run_tc(gpk_context &ctx, const GemmArgs &a, const char *name, tc::Dtype dtype,
                         size_t (*workspace)(const tc::GemmTc &), tc::Result (*run)(const tc::GemmTc &)) {
    tc::GemmTc g = tc_call(ctx, a, dtype);
    g.workspace_bytes = workspace(g);
    if (g.workspace_bytes > 0) GPK_FORWARD_IF_ERROR(buffer(ctx, Slot::Scratch, g.workspace_bytes, &g.workspace));
    const tc::Result r = run(g);
    switch (r.status) {
        case tc::Status::Ok: return GPK_SUCCESS;
        case tc::Status::NotSupported: return refuse(ctx, "gemm", name, r.why);
        case tc::Status::CudaError: return check(ctx, r.cuda, r.why);
        default: return fail(&ctx, GPK_ERROR_INTERNAL, "gemm variant '%s': %s", name, r.why);
    }
}

}  // namespace gpk::cuda
