// One static ladder per (op, backend): its variants in ladder order, each with the
// dtypes it supports, and the rule "auto" uses to pick one for a call.
#pragma once

#include "ops.hpp"

namespace gpk {

// Bit sets of supported dtypes.
constexpr unsigned dtype_bit(int dtype) { return 1u << dtype; }
constexpr unsigned kFloatTypes = dtype_bit(GPK_F32) | dtype_bit(GPK_F64);
constexpr unsigned k16BitTypes = dtype_bit(GPK_F16) | dtype_bit(GPK_BF16);
constexpr unsigned kWordTypes = kFloatTypes | dtype_bit(GPK_I32) | dtype_bit(GPK_I64);  // 4- and 8-byte
constexpr unsigned kAllTypes = kWordTypes | k16BitTypes;

template <class Args>
struct Variant {
    const char *name;
    unsigned dtypes;
    Launcher<Args> run;
};

template <class Args>
struct Ladder {
    const Variant<Args> *rungs;
    int count;
    int vendor;                       // index of the vendor-library variant, -1 if none
    int (*pick)(const Args &args);    // "auto": index of the best rung for this call
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
