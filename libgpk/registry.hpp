// One static ladder per (op, backend): its variants in ladder order, each with the
// dtypes it supports, and its roles: the vendor's rung, the reference rung and the
// rungs "auto" prefers, best first. The CUDA ladders are read from cuda/<op>/rungs.def.
#pragma once

#include "ops.hpp"

namespace gpk {

// Bit sets of supported dtypes.
constexpr unsigned dtype_bit(int dtype) { return 1u << dtype; }
constexpr unsigned kFloatTypes = dtype_bit(GPK_F32) | dtype_bit(GPK_F64);
constexpr unsigned k16BitTypes = dtype_bit(GPK_F16) | dtype_bit(GPK_BF16);
constexpr unsigned kWordTypes = kFloatTypes | dtype_bit(GPK_I32) | dtype_bit(GPK_I64);  // 4- and 8-byte
constexpr unsigned kAllTypes = kWordTypes | k16BitTypes;

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

template <class Args>
struct Ladder {
    const Variant<Args> *rungs;
    int count;
    int vendor;            // the vendor library's rung, -1 if none
    int reference;         // the simplest rung of ours, which checks the vendor's
    int autos[kMaxAuto];   // "auto": the first of these that takes the call
    // and, where the entry has one, for which `where` says the rung leads (a
    // Takes-shaped predicate: *why_not null where it leads); null: wherever it takes it
    Takes<Args> where[kMaxAuto];
    int auto_count;
};

const Ladder<GemmArgs> &gemm_ladder(int backend);
const Ladder<ReduceArgs> &reduce_ladder(int backend);
const Ladder<TransposeArgs> &transpose_ladder(int backend);
const Ladder<PiArgs> &pi_ladder(int backend);
const Ladder<GemmBatchedCall> &gemm_batched_ladder(int backend);
// "auto" of the CUDA batched ladder: its rung for the call's shape and dtype (index).
int pick_gemm_batched(const GemmBatchedCall &call);
const Ladder<GemmBatchedCall> &gemm_batched_ladder(int backend);

// Op-generic views used by the variant functions of the API. op must be valid.
int variant_count(int op, int backend);
const char *variant_name(int op, int backend, int index);  // null when out of range
int variant_index(int op, int backend, const char *name);  // -1 when unknown

}  // namespace gpk
