// Launchers of the CUDA rungs, one per file under cuda/<op>/, numbered in ladder
// order; 00_ wraps the vendor library. Each launcher runs asynchronously on the
// context's stream (gpk_pi returns with the hits on the host), checks every CUDA
// call and the last error after every launch, and reports failures through
// gpk::fail with the CUDA/cuBLAS/cuRAND error text.
//
// Each op's ladder is one list, cuda/<op>/rungs.def, read by this header (the
// declarations), registry.cpp (the table) and libgpk/meson.build (the sources):
//
//   GPK_RUNG(NN, name, launcher, dtypes, takes)
//       The rung in file cuda/<op>/NN_<name>.cu, NN its place in the ladder (from
//       00, contiguous), `name` the one gpk_set_variant takes, `launcher` the
//       function the file defines. dtypes: float (F32, F64), floats (F32, F64, F16,
//       BF16), words (the 4- and 8-byte dtypes), all (words, F16, BF16), half (F16,
//       BF16), f32_half (F32, F16, BF16), f32 or f64; for gpk_gemm_ex's classes
//       (ops.hpp: kGemmFp8, kGemmFp8Blockscaled, kGemmHalfF32): fp8 (both FP8
//       classes), floats_ex (floats, kGemmFp8, kGemmHalfF32), float_ex (float and all
//       three classes). A rung whose column lists no class never receives such a call;
//       one that lists a class is handed the call as ops.hpp's GemmArgs describes
//       (per-operand dtypes, block scales) and refuses by name, through its takes
//       function, what it cannot compute. takes:
//       `any` when the rung runs every call of its dtypes, `checked` when it can
//       refuse one (alignment, the GPU): the file then also defines
//       `<launcher>_takes`, which says whether it takes a call and why not, and the
//       launcher returns GPK_ERROR_NOT_SUPPORTED for a call it does not take.
//   GPK_VENDOR(name)     the vendor library's rung, the one validation checks against.
//   GPK_REFERENCE(name)  the simplest rung of ours, which checks the vendor's.
//   GPK_AUTO(name)       the ladder's default: what "auto" runs where no tuning table
//                        decides (libgpk/tuning.hpp), the first of these lines whose
//                        rung takes the call. No shape rule: a table holds measurements.
//   GPK_AUTO_NEVER(name) a rung "auto" never runs, whatever a table measured (it
//                        changes bits the others keep, or draws another family).
//
// A new rung is its file and one GPK_RUNG line (tests/check_rungs.py checks that
// the files and the lists agree).
#pragma once

#include "../ops.hpp"
#include "../status.hpp"

// The dtype columns of rungs.def, as bit sets of GPK_* dtypes.
#define GPK_DTYPES_float ((1u << GPK_F32) | (1u << GPK_F64))
#define GPK_DTYPES_words ((1u << GPK_F32) | (1u << GPK_F64) | (1u << GPK_I32) | (1u << GPK_I64))
#define GPK_DTYPES_all (GPK_DTYPES_words | (1u << GPK_F16) | (1u << GPK_BF16))
#define GPK_DTYPES_floats (GPK_DTYPES_float | (1u << GPK_F16) | (1u << GPK_BF16))
#define GPK_DTYPES_f32 (1u << GPK_F32)
#define GPK_DTYPES_f64 (1u << GPK_F64)
#define GPK_DTYPES_half ((1u << GPK_F16) | (1u << GPK_BF16))
#define GPK_DTYPES_f32_half (GPK_DTYPES_f32 | GPK_DTYPES_half)
#define GPK_DTYPES_fp8 ((1u << gpk::kGemmFp8) | (1u << gpk::kGemmFp8Blockscaled))
#define GPK_DTYPES_floats_ex (GPK_DTYPES_floats | (1u << gpk::kGemmFp8) | (1u << gpk::kGemmHalfF32))
#define GPK_DTYPES_float_ex (GPK_DTYPES_float | GPK_DTYPES_fp8 | (1u << gpk::kGemmHalfF32))

namespace gpk::cuda {

#define GPK_VENDOR(name)
#define GPK_REFERENCE(name)
#define GPK_AUTO(name)
#define GPK_AUTO_NEVER(name)
#define GPK_TAKES_DECL_any(launcher, Args)
#define GPK_TAKES_DECL_checked(launcher, Args) \
    gpk_status launcher##_takes(gpk_context &ctx, const Args &args, const char **why_not);
#define GPK_DECLARE(launcher, Args, takes)                      \
    gpk_status launcher(gpk_context &ctx, const Args &args); \
    GPK_TAKES_DECL_##takes(launcher, Args)

#define GPK_RUNG(nn, name, launcher, dtypes, takes) GPK_DECLARE(launcher, GemmArgs, takes)
#include "gemm/rungs.def"
#undef GPK_RUNG
#define GPK_RUNG(nn, name, launcher, dtypes, takes) GPK_DECLARE(launcher, ReduceArgs, takes)
#include "reduce/rungs.def"
#undef GPK_RUNG
#define GPK_RUNG(nn, name, launcher, dtypes, takes) GPK_DECLARE(launcher, TransposeArgs, takes)
#include "transpose/rungs.def"
#undef GPK_RUNG
#define GPK_RUNG(nn, name, launcher, dtypes, takes) GPK_DECLARE(launcher, PiArgs, takes)
#include "pi/rungs.def"
#undef GPK_RUNG
#define GPK_RUNG(nn, name, launcher, dtypes, takes) GPK_DECLARE(launcher, GemmBatchedCall, takes)
#include "gemm_batched/rungs.def"
#undef GPK_RUNG

#undef GPK_DECLARE
#undef GPK_TAKES_DECL_checked
#undef GPK_TAKES_DECL_any
#undef GPK_AUTO_NEVER
#undef GPK_AUTO
#undef GPK_REFERENCE
#undef GPK_VENDOR

// pi_curand takes sample i from numbers 2i and 2i + 1 of cuRAND's sequence, whose
// offset is a 64-bit count of numbers: it reaches samples [0, 2^63) and no further.
constexpr uint64_t kCurandPiSamples = uint64_t(1) << 63;

// NOT_SUPPORTED for a call that rung `name` of `op` does not take, with the reason.
inline gpk_status refuse(gpk_context &ctx, const char *op, const char *name, const char *why_not) {
    return fail(&ctx, GPK_ERROR_NOT_SUPPORTED, "variant '%s' of %s cannot take this call: %s", name, op, why_not);
}


}  // namespace gpk::cuda
