// Host reduce. The tree is fixed by n alone: blocks of kBlock elements reduce in
// order, then the block partials combine pairwise. The threads split the blocks
// (parallel.hpp), never the tree, so the result is the same with any number of threads, run after run.
// F32 sums accumulate in double; F64 sums rely on the pairwise combine (error grows
// with log n, like a GPU tree). Integers sum modulo 2^64 in unsigned arithmetic.
#include "host.hpp"

#include "parallel.hpp"

#include "../status.hpp"

#include <cmath>
#include <cstring>
#include <new>
#include <type_traits>
#include <vector>

namespace gpk::host {
namespace {

constexpr int64_t kBlock = 4096;

template <class T>
struct Acc {
    using type = std::conditional_t<std::is_floating_point_v<T>, double, uint64_t>;
};

template <class V>
V combine(int op, V a, V b) {
    if constexpr (std::is_floating_point_v<V>) {
        if (op == GPK_SUM) return a + b;
        if (std::isnan(a)) return a;
        if (std::isnan(b)) return b;
        return op == GPK_MIN ? (b < a ? b : a) : (b > a ? b : a);
    } else {
        return a + b;  // unsigned: wraps
    }
}

template <class T>
typename Acc<T>::type load(const T *x, int64_t i) {
    if constexpr (std::is_floating_point_v<T>)
        return static_cast<double>(x[i]);
    else
        return static_cast<uint64_t>(static_cast<int64_t>(x[i]));
}

// Integer MIN/MAX work on the signed values.
template <class T>
int64_t minmax_int(const T *x, int64_t lo, int64_t hi, int op) {
    int64_t r = x[lo];
    for (int64_t i = lo + 1; i < hi; ++i) {
        const int64_t v = x[i];
        r = op == GPK_MIN ? (v < r ? v : r) : (v > r ? v : r);
    }
    return r;
}

template <class T>
void reduce_typed(const ReduceArgs &a) {
    const T *x = static_cast<const T *>(a.x);
    const int64_t n = a.n;
    const int64_t blocks = (n + kBlock - 1) / kBlock;
    constexpr bool is_float = std::is_floating_point_v<T>;

    if (!is_float && a.op != GPK_SUM) {
        std::vector<int64_t> part(static_cast<size_t>(blocks));
        parallel_for(blocks, n, [&](int64_t b) {
            part[b] = minmax_int(x, b * kBlock, b * kBlock + kBlock < n ? b * kBlock + kBlock : n, a.op);
        });
        int64_t r = part[0];
        for (int64_t b = 1; b < blocks; ++b) r = a.op == GPK_MIN ? (part[b] < r ? part[b] : r) : (part[b] > r ? part[b] : r);
        std::memcpy(a.result, &r, 8);
        return;
    }

    using V = typename Acc<T>::type;
    std::vector<V> part(static_cast<size_t>(blocks > 0 ? blocks : 1), V(0));
    parallel_for(blocks, n, [&](int64_t b) {
        const int64_t lo = b * kBlock, hi = lo + kBlock < n ? lo + kBlock : n;
        V r = a.op == GPK_SUM ? V(0) : load(x, lo);
        for (int64_t i = a.op == GPK_SUM ? lo : lo + 1; i < hi; ++i) r = combine(a.op, r, load(x, i));
        part[b] = r;
    });
    // Pairwise combine of the partials: a fixed tree over the block index.
    for (int64_t width = 1; width < blocks; width *= 2)
        for (int64_t b = 0; b + width < blocks; b += 2 * width) part[b] = combine(a.op, part[b], part[b + width]);

    if constexpr (std::is_same_v<T, float>) {
        const float r = static_cast<float>(part[0]);
        std::memcpy(a.result, &r, 4);
    } else if constexpr (std::is_same_v<T, double>) {
        std::memcpy(a.result, &part[0], 8);
    } else {
        const int64_t r = static_cast<int64_t>(part[0]);
        std::memcpy(a.result, &r, 8);
    }
}

}  // namespace

gpk_status reduce(gpk_context &ctx, const ReduceArgs &args) {
    if (is_16bit(args.dtype)) return reduce_16bit(ctx, args);
    try {
        switch (args.dtype) {
            case GPK_F32: reduce_typed<float>(args); break;
            case GPK_F64: reduce_typed<double>(args); break;
            case GPK_I32: reduce_typed<int32_t>(args); break;
            default: reduce_typed<int64_t>(args); break;
        }
    } catch (const std::bad_alloc &) {
        return fail(&ctx, GPK_ERROR_OUT_OF_MEMORY, "out of host memory for the partial results of n = %lld elements",
                    static_cast<long long>(args.n));
    }
    return GPK_SUCCESS;
}

}  // namespace gpk::host
