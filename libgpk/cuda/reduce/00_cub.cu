// Vendor rung: cub::DeviceReduce, the yardstick of the reduce ladder. CUB's reduction
// streams the input near copy bandwidth, and its reduction tree depends only on the
// input size and the GPU, so its results are the same from run to run -- the
// determinism libgpk promises. It gets the operators every rung uses (NaN-propagating
// min/max, wrapping integer sums), and I32 inputs are widened to int64 as they are
// loaded, so integers accumulate in 64 bits like everywhere else in libgpk.
#include "../kernel_util.cuh"
#include "../ladders.hpp"
#include "../resources.hpp"

#include <cub/device/device_reduce.cuh>

#include <type_traits>

namespace gpk::cuda {
namespace {

template <class To>
struct Widen {
    template <class From>
    __host__ __device__ __forceinline__ To operator()(From x) const {
        return static_cast<To>(x);
    }
};

// Both CUB calls of a reduction: the first (temp == nullptr) asks for the temporary
// storage size, the second runs. num_items is int64_t, so CUB indexes with 64 bits.
template <class T, class Op>
cudaError_t cub_reduce(void *temp, size_t &temp_bytes, const T *x, accumulator_t<T> *out, int64_t n,
                       cudaStream_t s) {
    using Acc = accumulator_t<T>;
    if constexpr (std::is_same_v<T, Acc>)
        return cub::DeviceReduce::Reduce(temp, temp_bytes, x, out, n, Op(), Op::template identity<Acc>(), s);
    else
        return cub::DeviceReduce::TransformReduce(temp, temp_bytes, x, out, n, Op(), Widen<Acc>(),
                                                  Op::template identity<Acc>(), s);
}

template <class T, class Op>
struct CubReduction {
    static gpk_status run(gpk_context &ctx, const ReduceArgs &args) {
        const T *x = static_cast<const T *>(args.x);
        auto *out = static_cast<accumulator_t<T> *>(args.result);
        size_t temp_bytes = 0;
        GPK_CUDA_TRY(ctx, (cub_reduce<T, Op>(nullptr, temp_bytes, x, out, args.n, stream(ctx))));
        // At least one byte: a null temp pointer would make the second call a size query again.
        void *temp = nullptr;
        GPK_FORWARD_IF_ERROR(buffer(ctx, Slot::Scratch, temp_bytes > 0 ? temp_bytes : 1, &temp));
        GPK_CUDA_TRY(ctx, (cub_reduce<T, Op>(temp, temp_bytes, x, out, args.n, stream(ctx))));
        return GPK_SUCCESS;
    }
};

}  // namespace

gpk_status reduce_cub(gpk_context &ctx, const ReduceArgs &args) { return reduce_dispatch<CubReduction>(ctx, args); }

}  // namespace gpk::cuda
