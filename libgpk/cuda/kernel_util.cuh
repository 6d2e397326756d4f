// What several CUDA rungs share: grid sizing for grid-stride loops, the reduction
// operators (with their identities and accumulator types) and the (dtype, op) table
// that turns a reduce call into one template instantiation.
#pragma once

#include "../ops.hpp"
#include "../status.hpp"
#include "resources.hpp"

#include <cuda/std/limits>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

namespace gpk::cuda {

// ---- grids ------------------------------------------------------------------------

// Grid limits of every GPU libgpk builds for (compute capability >= 3.0).
constexpr int64_t kMaxGridX = 2147483647;  // 2^31 - 1
constexpr int64_t kMaxGridYZ = 65535;

// Blocks for `work` items at `per_block` items a block, capped at `limit`. Kernels
// launched with it loop grid-stride, so a capped grid still covers all the work.
inline unsigned int grid_size(int64_t work, int64_t per_block, int64_t limit = kMaxGridX) {
    const int64_t blocks = work / per_block + (work % per_block != 0 ? 1 : 0);
    return static_cast<unsigned int>(blocks < 1 ? 1 : (blocks > limit ? limit : blocks));
}

// A grid of `block` over an x_items by y_items index space.
inline dim3 grid_2d(int64_t x_items, int64_t y_items, dim3 block) {
    return dim3(grid_size(x_items, block.x), grid_size(y_items, block.y, kMaxGridYZ));
}

// ---- reduction operators ----------------------------------------------------------

// Floating-point values accumulate in their own type; integers in 64 bits, so that
// sums of I32 wrap modulo 2^64 exactly like sums of I64; the 16-bit types in F32 (the
// contract: F16 and BF16 are widened as they are loaded, and the result is a float).
template <class T>
struct Accumulator {
    using type = T;
};
template <>
struct Accumulator<int32_t> {
    using type = int64_t;
};
template <>
struct Accumulator<__half> {
    using type = float;
};
template <>
struct Accumulator<__nv_bfloat16> {
    using type = float;
};
template <class T>
using accumulator_t = typename Accumulator<T>::type;

template <class T>
__host__ __device__ __forceinline__ bool is_nan(T x) {
    if constexpr (std::is_floating_point_v<T>)
        return x != x;
    else
        return false;
}

struct SumOp {
    template <class T>
    __host__ __device__ __forceinline__ T operator()(T a, T b) const {
        // Signed overflow is undefined; unsigned arithmetic wraps as the API promises.
        if constexpr (std::is_integral_v<T>)
            return static_cast<T>(static_cast<std::make_unsigned_t<T>>(a) + static_cast<std::make_unsigned_t<T>>(b));
        else
            return a + b;
    }
    template <class T>
    __host__ __device__ static T identity() {
        return T(0);
    }
};

// min and max return the NaN when either side is one, so a NaN anywhere in the input
// reaches the result whatever the reduction tree (fminf/fmaxf would drop it).
struct MinOp {
    template <class T>
    __host__ __device__ __forceinline__ T operator()(T a, T b) const {
        if (is_nan(a)) return a;
        if (is_nan(b)) return b;
        return b < a ? b : a;
    }
    template <class T>
    __host__ __device__ static T identity() {
        using L = ::cuda::std::numeric_limits<T>;
        if constexpr (L::has_infinity)
            return L::infinity();
        else
            return L::max();
    }
};

struct MaxOp {
    template <class T>
    __host__ __device__ __forceinline__ T operator()(T a, T b) const {
        if (is_nan(a)) return a;
        if (is_nan(b)) return b;
        return a < b ? b : a;
    }
    template <class T>
    __host__ __device__ static T identity() {
        using L = ::cuda::std::numeric_limits<T>;
        if constexpr (L::has_infinity)
            return -L::infinity();
        else
            return L::lowest();
    }
};

// Runs Reduction<T, Op>::run for the call's element type and operator. The empty
// SUM is answered here, once for every rung: all-zero bytes are 0 in each result type.
// The 16-bit rows are instantiations like the others: the rungs load their elements
// with static_cast<Acc>, which widens __half and __nv_bfloat16 to float exactly.
template <template <class T, class Op> class Reduction>
gpk_status reduce_dispatch(gpk_context &ctx, const ReduceArgs &args) {
    // Rows in GPK_F32, GPK_F64, GPK_I32, GPK_I64, GPK_F16, GPK_BF16 order; columns
    // GPK_SUM, GPK_MIN, GPK_MAX.
    static constexpr Launcher<ReduceArgs> kTable[6][3] = {
        {Reduction<float, SumOp>::run, Reduction<float, MinOp>::run, Reduction<float, MaxOp>::run},
        {Reduction<double, SumOp>::run, Reduction<double, MinOp>::run, Reduction<double, MaxOp>::run},
        {Reduction<int32_t, SumOp>::run, Reduction<int32_t, MinOp>::run, Reduction<int32_t, MaxOp>::run},
        {Reduction<int64_t, SumOp>::run, Reduction<int64_t, MinOp>::run, Reduction<int64_t, MaxOp>::run},
        {Reduction<__half, SumOp>::run, Reduction<__half, MinOp>::run, Reduction<__half, MaxOp>::run},
        {Reduction<__nv_bfloat16, SumOp>::run, Reduction<__nv_bfloat16, MinOp>::run,
         Reduction<__nv_bfloat16, MaxOp>::run},
    };
    GPK_RETURN_ERROR_IF(args.dtype < 0 || args.dtype > 5 || args.op < 0 || args.op > 2, &ctx, GPK_ERROR_INTERNAL,
                        "reduce launcher reached with dtype %d, op %d", args.dtype, args.op);
    if (args.n == 0) {
        GPK_CUDA_TRY(ctx, cudaMemsetAsync(args.result, 0, reduce_result_size(args.dtype), stream(ctx)));
        return GPK_SUCCESS;
    }
    return kTable[args.dtype][args.op](ctx, args);
}

}  // namespace gpk::cuda
