// Host gemm of gpk_gemm_ex's and gpk_gemm_blockscaled's classes (ops.hpp): the
// reference the GPU rungs are compared with. Each element is decoded exactly
// (common/fp8.hpp, common/half.hpp); products, exact in F32 already, are summed in
// double, in p order from 0, so the reference is more accurate than the contract asks
// of any kernel (F32 accumulation, reduced-precision partial sums of at most 128
// products) and a comparison's tolerance is the kernel's error alone. Block-scaled
// calls sum each block of 128 along k in double and add it times its two scales (as
// doubles, exactly). alpha and beta are the F32 values the contract applies, and each
// element of C is rounded once, from the double, to its dtype.
//
// As in half_ops.cpp nothing is allocated: the accumulators are a fixed block of rows
// on each thread's stack, so no size can make the call fail after a partial write.
#include "host.hpp"

#include "parallel.hpp"

#include "../common/fp8.hpp"
#include "../common/half.hpp"
#include "../scalars.hpp"

#include <array>

namespace gpk::host {
namespace {

// FP8 decoding by table: 256 floats per format, made once from the bit decoders.
template <bool kE5M2>
std::array<float, 256> fp8_table() {
    std::array<float, 256> t{};
    for (int b = 0; b < 256; ++b) t[b] = fp8_to_float(static_cast<uint8_t>(b), kE5M2);
    return t;
}
const std::array<float, 256> kE4M3 = fp8_table<false>();
const std::array<float, 256> kE5M2 = fp8_table<true>();

// Operand readers: the element type as stored and its exact value.
struct E4M3 {
    using T = uint8_t;
    static double get(T v) { return kE4M3[v]; }
};
struct E5M2 {
    using T = uint8_t;
    static double get(T v) { return kE5M2[v]; }
};
struct F16 {
    using T = uint16_t;
    static double get(T v) { return half_to_float(v); }
};
struct BF16 {
    using T = uint16_t;
    static double get(T v) { return bf16_to_float(v); }
};

constexpr int64_t kRowBlock = 512;  // rows of a column of C at once (half_ops.cpp's block)
constexpr int64_t kScaleBlock = 128;

// Element i of C's column `c` (dtype c_dtype) from the double v: one rounding.
inline void store_c(void *c, int c_dtype, int64_t i, double v) {
    if (c_dtype == GPK_F32)
        static_cast<float *>(c)[i] = static_cast<float>(v);
    else
        static_cast<uint16_t *>(c)[i] = double_to_half_bits(v, c_dtype == GPK_BF16);
}

inline double load_c(const void *c, int c_dtype, int64_t i) {
    if (c_dtype == GPK_F32) return static_cast<const float *>(c)[i];
    return half_bits_to_float(static_cast<const uint16_t *>(c)[i], c_dtype == GPK_BF16);
}

struct Plan {
    double alpha, beta;
    bool product, read_c, scaled;
    int c_dtype;
};

// The scale of rows i of op(A) and columns j of op(B) over block q of k (ops.hpp).
inline double scale_of(const GemmArgs &a, int64_t i, int64_t j, int64_t q) {
    return static_cast<double>(a.scale_a[q * a.scale_a_ld + i / a.scale_a_group]) *
           static_cast<double>(a.scale_b[q * a.scale_b_ld + j / a.scale_b_group]);
}

// Column j of C = alpha * op(A) * op(B) + beta * C.
template <class LA, class LB>
void column_ex(const GemmArgs &a, const Plan &pl, int64_t j) {
    const auto *A = static_cast<const typename LA::T *>(a.A);
    const auto *B = static_cast<const typename LB::T *>(a.B);
    void *c = static_cast<char *>(a.C) + j * a.ldc * static_cast<int64_t>(dtype_size(pl.c_dtype));
    const int64_t m = a.m, k = a.k;
    // beta == 0: C is written, never read, so NaN in C does not leak.
    auto store = [&](int64_t i, double ab) {
        store_c(c, pl.c_dtype, i, pl.read_c ? ab + pl.beta * load_c(c, pl.c_dtype, i) : ab);
    };
    if (!pl.product) {
        for (int64_t i = 0; i < m; ++i) store(i, 0.0);
        return;
    }
    // Per-tensor calls are one block of all of k.
    const int64_t block = pl.scaled ? kScaleBlock : k;
    auto b_at = [&](int64_t p) { return LB::get(a.transb ? B[j + p * a.ldb] : B[p + j * a.ldb]); };
    if (a.transa) {
        // op(A)(i, :) is column i of A: dot products of unit stride.
        for (int64_t i = 0; i < m; ++i) {
            const typename LA::T *row = A + i * a.lda;
            double s = 0.0;
            for (int64_t p0 = 0; p0 < k; p0 += block) {
                const int64_t p1 = p0 + block < k ? p0 + block : k;
                double part = 0.0;
                for (int64_t p = p0; p < p1; ++p) part += LA::get(row[p]) * b_at(p);
                s += pl.scaled ? part * scale_of(a, i, j, p0 / kScaleBlock) : part;
            }
            store(i, pl.alpha * s);
        }
        return;
    }
    for (int64_t i0 = 0; i0 < m; i0 += kRowBlock) {
        const int64_t rows = m - i0 < kRowBlock ? m - i0 : kRowBlock;
        double acc[kRowBlock], part[kRowBlock];
        for (int64_t i = 0; i < rows; ++i) acc[i] = 0.0;
        for (int64_t p0 = 0; p0 < k; p0 += block) {
            const int64_t p1 = p0 + block < k ? p0 + block : k;
            for (int64_t i = 0; i < rows; ++i) part[i] = 0.0;
            for (int64_t p = p0; p < p1; ++p) {
                const double b = b_at(p);
                const typename LA::T *col = A + i0 + p * a.lda;
                for (int64_t i = 0; i < rows; ++i) part[i] += LA::get(col[i]) * b;
            }
            for (int64_t i = 0; i < rows; ++i)
                acc[i] += pl.scaled ? part[i] * scale_of(a, i0 + i, j, p0 / kScaleBlock) : part[i];
        }
        for (int64_t i = 0; i < rows; ++i) store(i0 + i, pl.alpha * acc[i]);
    }
}

template <class LA, class LB>
void columns_ex(const GemmArgs &a, const Plan &pl, bool parallel) {
    auto one = [&](int64_t j) { column_ex<LA, LB>(a, pl, j); };
    if (parallel)
        parallel_for(a.n, gemm_work(a), one);
    else
        for (int64_t j = 0; j < a.n; ++j) one(j);
}

template <class LA>
void by_b(const GemmArgs &a, const Plan &pl, bool parallel) {
    if (b_dtype_of(a) == GPK_F8E5M2)
        columns_ex<LA, E5M2>(a, pl, parallel);
    else
        columns_ex<LA, E4M3>(a, pl, parallel);
}

}  // namespace

void gemm_ex(const GemmArgs &a, bool parallel) {
    // alpha and beta in F32 (scalars.hpp), and the decisions taken on those values.
    const Plan pl{in_dtype(a.dtype, a.alpha), in_dtype(a.dtype, a.beta), gemm_forms_product(a), gemm_reads_c(a),
                  a.dtype == kGemmFp8Blockscaled, c_dtype_of(a)};
    switch (a_dtype_of(a)) {
        case GPK_F8E4M3: return by_b<E4M3>(a, pl, parallel);
        case GPK_F8E5M2: return by_b<E5M2>(a, pl, parallel);
        case GPK_BF16: return columns_ex<BF16, BF16>(a, pl, parallel);
        default: return columns_ex<F16, F16>(a, pl, parallel);
    }
}

}  // namespace gpk::host
