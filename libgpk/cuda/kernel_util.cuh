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

// ---- 16-byte vectors --------------------------------------------------------------

// The built-in vector type that holds 16 bytes of T: one 128-bit load or store
// instruction, kLanes elements.
template <class T>
struct Vec16Of;
template <>
struct Vec16Of<float> {
    using type = float4;
};
template <>
struct Vec16Of<double> {
    using type = double2;
};
template <>
struct Vec16Of<int32_t> {
    using type = int4;
};
template <>
struct Vec16Of<int64_t> {
    using type = longlong2;
};
template <>
struct Vec16Of<uint32_t> {
    using type = uint4;
};
template <>
struct Vec16Of<uint64_t> {
    using type = ulonglong2;
};
// Eight 2-byte elements: CUDA has no built-in vector of eight halves, so a 16-byte
// aligned array, which the compiler loads with one 128-bit instruction all the same.
template <class H>
struct alignas(16) Halves8 {
    H h[8];
};
template <>
struct Vec16Of<__half> {
    using type = Halves8<__half>;
};
template <>
struct Vec16Of<__nv_bfloat16> {
    using type = Halves8<__nv_bfloat16>;
};
template <class V>
constexpr bool kIsHalves8 = std::is_same_v<V, Halves8<__half>> || std::is_same_v<V, Halves8<__nv_bfloat16>>;
template <class T>
struct Vec16 {
    using type = typename Vec16Of<T>::type;
    static constexpr int kLanes = 16 / int(sizeof(T));
    static_assert(sizeof(type) == 16, "16 bytes");
};
template <class T>
using vec16_t = typename Vec16<T>::type;

// Element q of a vector (q a compile-time lane after unrolling).
template <class T>
__device__ __forceinline__ auto &lane(vec16_t<T> &v, int q) {
    return (&v.x)[q];
}
template <class T>
__device__ __forceinline__ const auto &lane(const vec16_t<T> &v, int q) {
    return (&v.x)[q];
}

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

// ---- block trees in registers -----------------------------------------------------

// Sum (or min, max) of a warp's 32 values, returned in lane 0: five exchanges of
// registers, no shared memory and no barrier. The whole warp must call it.
template <class Acc, class Op>
__device__ __forceinline__ Acc warp_reduce_shuffle(Acc v) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) v = Op()(v, __shfl_down_sync(0xffffffffu, v, offset));
    return v;
}

// The block's value in thread 0: each warp reduces its values with shuffles, one value
// per warp goes through shared memory, and warp 0 reduces those. Callers that use it
// twice in one kernel put a __syncthreads() between the two.
template <int kBlock, class Acc, class Op>
__device__ __forceinline__ Acc block_reduce_shuffle(Acc v) {
    static_assert(kBlock % 32 == 0 && kBlock <= 1024, "whole warps, at most 32 of them");
    constexpr int kWarps = kBlock / 32;
    __shared__ Acc warp_values[kWarps];
    const unsigned int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    v = warp_reduce_shuffle<Acc, Op>(v);
    if constexpr (kWarps == 1) return v;
    if (lane == 0) warp_values[warp] = v;
    __syncthreads();
    if (warp == 0) v = warp_reduce_shuffle<Acc, Op>(lane < kWarps ? warp_values[lane] : Op::template identity<Acc>());
    return v;
}

}  // namespace gpk::cuda
