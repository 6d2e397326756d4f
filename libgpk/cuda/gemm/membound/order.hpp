// The summation order of the memory-bound gemm rungs (13_skinny, 14_gram), written once
// for the kernels (kernel.cuh) and for the host, where a stand-in of it is
// tested without a GPU (tests/gemm/test_membound_order.cpp) and where the GPU tests compare
// the kernels' F32 and F64 results with it bit for bit (tests/gemm/test_membound.cpp).
//
// Both rungs see a call as out(p, q) = sum over k of W(p, k) X(k, q): W the operand
// with the long side (p < L), X the one with the short side (q < s). Every element is
// summed in an order fixed by k and the rung's constants alone, never by atomics or by
// which blocks finish first:
//
// * k is cut into splits of `len` consecutive elements (the last one shorter), each
//   summed by one block. Rung skinny's len depends on k only (skinny_splits), so row q
//   of the result is summed the same way whatever s is and whatever other rows the call
//   has: it is batch-invariant. Rung gram's len also depends on the number of output
//   tiles (gram_splits), to spread k over the whole GPU: deterministic, not
//   batch-invariant.
// * Inside a split, F32 and F64 (the SIMT kernel) go in chunks of kChunk elements;
//   chunk c goes to k-group c mod G (G a power of two, a kernel constant; 1 for
//   skinny), which adds its chunks in increasing order, element by element, with one
//   fused multiply-add each (acc = fma(w, x, acc)). Elements past k are zeros in both
//   operands and are added too (fma(0, 0, acc)). The groups are then joined by a
//   pairwise tree: for h = G/2, G/4, ..., 1, group g < h adds group g + h.
// * F16 and BF16 (the tensor-core kernel) go in steps of 16 elements, one mma each,
//   step i to group i mod G, the groups joined by the same tree. How the tensor core
//   adds the 16 products of a step is the hardware's, the same every time, but not
//   reproduced here.
// * The splits' values v_0 .. v_{S-1} are joined in 32 lanes (join_splits): lane l adds
//   v_l, v_{l+32}, v_{l+64}, ... in order (+0 where l >= S), then the lanes are joined
//   by the same pairwise tree (h = 16, 8, ..., 1); one split is its own value. In F32
//   for F32 and the 16-bit dtypes,
//   F64 for F64. A few splits are summed by one thread, many by a warp, the lanes
//   loading in parallel: the same bits either way.
// * C = alpha * total (beta == 0: C is not read), else fma(beta, C, alpha * total),
//   alpha and beta as floats for F32 and the 16-bit dtypes; a 16-bit C is rounded once.
#pragma once

#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define GPK_MB_FN __host__ __device__ inline
#else
#define GPK_MB_FN inline
#endif

namespace gpk::membound {

constexpr int64_t kChunk = 4;            // elements of k a SIMT thread takes at once
constexpr int64_t kStep16 = 16;          // elements of k one 16-bit mma takes
constexpr int64_t kSkinnyLen = 2048;     // rung skinny's split length, up to kSkinnySplits splits
constexpr int64_t kSkinnySplits = 256;   // beyond, skinny's splits grow (its workspace stays bounded)
constexpr int64_t kLenQuantum = 512;     // every split length is a multiple of this (of any k-tile)
constexpr int64_t kMaxSplits = 65535;    // splits are the grid's y dimension
constexpr int64_t kGramBlocks = 1024;    // rung gram aims at this many blocks (tiles x splits)

GPK_MB_FN int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// a b + c rounded once, in the precision of T (float stays float on the device too).
template <class T>
GPK_MB_FN T fused(T a, T b, T c) {
#if defined(__CUDA_ARCH__)
    if constexpr (sizeof(T) == 4)
        return fmaf(a, b, c);
    else
        return ::fma(a, b, c);
#else
    return std::fma(a, b, c);
#endif
}
GPK_MB_FN int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

// k in `count` splits of `len` elements (the last one shorter); count >= 1, also for k == 0.
struct Splits {
    int64_t len;
    int64_t count;
};

GPK_MB_FN Splits splits_of_len(int64_t k, int64_t len) {
    if (len < kLenQuantum) len = kLenQuantum;
    if (ceil_div(k, len) > kMaxSplits) len = round_up(ceil_div(k, kMaxSplits), kLenQuantum);
    const int64_t count = k > 0 ? ceil_div(k, len) : 1;
    return Splits{len, count};
}

// Rung skinny: a function of k alone (batch invariance).
GPK_MB_FN Splits skinny_splits(int64_t k) {
    const int64_t longer = round_up(ceil_div(k, kSkinnySplits), kLenQuantum);
    return splits_of_len(k, longer > kSkinnyLen ? longer : kSkinnyLen);
}

// Rung gram: about kGramBlocks blocks over `tiles` output tiles, each split at least
// kLenQuantum long.
GPK_MB_FN Splits gram_splits(int64_t k, int64_t tiles) {
    const int64_t want = tiles >= kGramBlocks ? 1 : ceil_div(kGramBlocks, tiles);
    return splits_of_len(k, round_up(ceil_div(k > 0 ? k : 1, want), kLenQuantum));
}

// Rung gram's output tile (bp rows of W by bq columns of X) and k-groups, by the long
// side L, the short side s and the element size (2: F16, BF16 on tensor cores; 4, 8:
// F32, F64). 14_gram.cu instantiates its kernels from it, and the tests sum as it says.
struct GramShape {
    int bp, bq, groups;
};

GPK_MB_FN constexpr GramShape gram_shape(int64_t L, int64_t s, int es) {
    if (es == 8)
        return L <= 8 ? GramShape{8, 8, 32} : L <= 16 ? GramShape{16, 16, 16} : L <= 32 ? GramShape{32, 32, 4}
                                                                                           : GramShape{64, 64, 1};
    if (L <= 8 && es == 4) return GramShape{8, 8, 64};
    if (L <= 16) return es == 4 ? GramShape{16, 16, 32} : GramShape{16, 16, 8};
    if (L <= 32) return es == 4 ? GramShape{32, 32, 8} : GramShape{32, 32, 4};
    if (L <= 64) return GramShape{64, 64, 2};
    return s <= 64 ? GramShape{128, 64, 1} : GramShape{128, 128, 1};
}

// ---- the host stand-in ----------------------------------------------------------------

constexpr int kJoinLanes = 32;

// The splits' values v(0) .. v(count - 1) joined as the kernels join them.
template <class Acc, class Value>
Acc join_splits(int64_t count, const Value &v) {
    if (count == 1) return static_cast<Acc>(v(0));  // the block wrote C itself
    Acc lane[kJoinLanes];
    for (int l = 0; l < kJoinLanes; ++l) lane[l] = 0;
    for (int64_t j = 0; j < count; ++j) {
        Acc &a = lane[j % kJoinLanes];
        a = j < kJoinLanes ? static_cast<Acc>(v(j)) : a + static_cast<Acc>(v(j));
    }
    for (int h = kJoinLanes / 2; h >= 1; h /= 2)
        for (int g = 0; g < h; ++g) lane[g] = lane[g] + lane[g + h];
    return lane[0];
}

// The SIMT kernel's sum of one element: w(i) and x(i) give W(p, i) and X(i, q) for
// i < k. G is the kernel's k-group count (a power of two, at most kMaxGroups).
constexpr int kMaxGroups = 256;

template <class Acc, class WAt, class XAt>
Acc ordered_sum(int64_t k, Splits sp, int groups, const WAt &w, const XAt &x) {
    const auto split = [&](int64_t j) {
        const int64_t begin = j * sp.len;
        const int64_t end = begin + sp.len < k ? begin + sp.len : k;
        Acc acc[kMaxGroups];
        for (int g = 0; g < groups; ++g) acc[g] = 0;
        // Chunk c of the split, elements [begin + 4c, begin + 4c + 4), zeros past k.
        for (int64_t c = 0; begin + c * kChunk < end; ++c) {
            Acc &a = acc[c % groups];
            for (int64_t e = 0; e < kChunk; ++e) {
                const int64_t i = begin + c * kChunk + e;
                const Acc wi = i < k ? static_cast<Acc>(w(i)) : Acc(0);
                const Acc xi = i < k ? static_cast<Acc>(x(i)) : Acc(0);
                a = fused(wi, xi, a);
            }
        }
        for (int h = groups / 2; h >= 1; h /= 2)
            for (int g = 0; g < h; ++g) acc[g] = acc[g] + acc[g + h];
        return acc[0];
    };
    return join_splits<Acc>(sp.count, split);
}

// C's new value from the total, C's old value `c` (not read when beta == 0).
template <class Acc>
GPK_MB_FN Acc epilogue(Acc alpha, Acc total, Acc beta, Acc c) {
    const Acc t = alpha * total;
    return beta == Acc(0) ? t : fused(beta, c, t);
}

}  // namespace gpk::membound
