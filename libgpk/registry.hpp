// One static ladder per (op, backend): its variants in ladder order, each with the
// dtypes it supports, and its roles: the vendor's rung, the reference rung, the ladder's
// default for "auto" and the rungs "auto" never runs. The CUDA ladders are read from
// cuda/<op>/rungs.def; which rung "auto" runs for a call is the tuning table's
// (tuning.hpp).
#pragma once

#include "ops.hpp"

namespace gpk {

// Bit sets of supported dtypes.
constexpr unsigned dtype_bit(int dtype) { return 1u << dtype; }
constexpr unsigned kFloatTypes = dtype_bit(GPK_F32) | dtype_bit(GPK_F64);
constexpr unsigned k16BitTypes = dtype_bit(GPK_F16) | dtype_bit(GPK_BF16);
constexpr unsigned kWordTypes = kFloatTypes | dtype_bit(GPK_I32) | dtype_bit(GPK_I64);  // 4- and 8-byte
constexpr unsigned kAllTypes = kWordTypes | k16BitTypes;
// gpk_gemm_ex's classes (ops.hpp), for gemm's ladders.
constexpr unsigned kGemmExClasses = dtype_bit(kGemmFp8) | dtype_bit(kGemmFp8Blockscaled) | dtype_bit(kGemmHalfF32);

// Whether a rung takes a call beyond its dtypes (alignment, the GPU): *why_not is
// null when it does, else the reason. Null for rungs that take every call.
template <class Args>
using Takes = gpk_status (*)(gpk_context &ctx, const Args &args, const char **why_not);

template <class Args>
struct Variant {
    const char *name;
    unsigned dtypes;
    Launcher<Args> run;
    Takes<Args> takes = nullptr;
};

constexpr int kMaxAuto = 4;
constexpr int kMaxRungs = 64;  // rungs of one ladder: the bits of Ladder::never

template <class Args>
struct Ladder {
    const Variant<Args> *rungs;
    int count;
    int vendor;            // the vendor library's rung, -1 if none
    int reference;         // the simplest rung of ours, which checks the vendor's
    // "auto" where no tuning table decides (tuning.hpp): the first of these that takes
    // the call.
    int autos[kMaxAuto];
    int auto_count;
    uint64_t never;        // bit i: "auto" never runs rung i, whatever a table says
};

const Ladder<GemmArgs> &gemm_ladder(int backend);
const Ladder<ReduceArgs> &reduce_ladder(int backend);
const Ladder<TransposeArgs> &transpose_ladder(int backend);
const Ladder<PiArgs> &pi_ladder(int backend);
const Ladder<GemmBatchedCall> &gemm_batched_ladder(int backend);

// Op-generic views used by the variant functions of the API. op must be valid.
int variant_count(int op, int backend);
const char *variant_name(int op, int backend, int index);  // null when out of range
int variant_index(int op, int backend, const char *name);  // -1 when unknown

}  // namespace gpk
