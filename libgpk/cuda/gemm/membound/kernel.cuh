// The kernels of the memory-bound gemm rungs (13_skinny, 14_gram): split-k products
// out(p, q) = sum_k W(p, k) X(k, q) in the fixed order of order.hpp.
//
// * A block owns BP rows of W (p), BQ columns of X (q) and one split of k. It streams
//   its k-tiles of W and X through a kStages-deep ring of shared memory with 16-byte
//   cp.async copies, each operand kept in its own layout (k-contiguous or not), so
//   every copy is a straight run of global memory; an operand whose pointer or
//   leading dimension is not a whole number of 16-byte vectors, and the ragged edges,
//   are copied element by element; elements past k are zeros.
// * F32 and F64 (Simt): thread (pt, qt, g) holds RP rows of W by TQ columns of X and
//   the chunks of its k-group g; per chunk it reads RPx4 of W and 4xTQ of X from shared
//   memory as vectors and does 4 RP TQ fused multiply-adds in k order. The k-groups
//   (G > 1 where the output tile is too small to give every thread its own elements)
//   are joined by a tree in shared memory.
// * F16 and BF16 (Mma): each warp holds 16 rows of W (two n8 tiles of mma.m16n8k16,
//   W as the B operand) by all of the block's columns of X (MT m16 tiles, X^T as the A
//   operand), fragments read with ldmatrix (.trans for an operand stored the other
//   way), accumulating in F32. Warp groups split the k-steps as the Simt k-groups do.
// * With one split the block writes C (alpha, beta, one rounding); with several each
//   writes its F32/F64 partials to workspace, [split][q][p], and `combine_kernel`
//   joins them in the fixed order and writes C. No atomics anywhere: every bit is
//   fixed by the order. The block's results go out through shared memory (write_tile),
//   so that C and the partials are written along their contiguous side.
//
// Compile time: both rungs instantiate these kernels for every configuration they
// choose (the rung files' tables), and nvcc's time grows with the code each kernel
// holds. So a kernel holds one copy of each part: the ring's first loads are turns of
// its loop, not a prologue of their own (pipeline), the results' stores one loop
// (write_tile), and the tensor-core kernel takes the operands' layouts as arguments --
// its time goes to mma and to waiting for memory, and whether a fragment is read with
// ldmatrix or ldmatrix.trans is one uniform branch. The FMA kernel keeps the layouts as
// template parameters: its inner loop is the F32 roof at wide short sides, and its
// shared-memory reads differ in shape between the layouts.
//
// Shared-memory rows are padded by 16 bytes to an odd number of 16-byte units, so the
// 8 rows an ldmatrix or a quarter-warp's 16-byte loads touch fall in 8 different bank
// groups. Needs sm_80 (cp.async, bf16 mma); the launchers refuse older GPUs and the
// kernels compile to a trap there.
#pragma once

#include "../../cp_async.cuh"
#include "../../kernel_util.cuh"
#include "../../../common/half.hpp"
#include "order.hpp"

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

namespace gpk::cuda::membound {

using namespace ::gpk::membound;

constexpr int kStages = 4;

// One launch: out(p, q) for p in [p_begin, p_end) of W's rows, q in [0, s).
template <class T, class Acc>
struct Params {
    const T *W;
    int64_t ldw;  // W(p, k) = W[k + p ldw] when k-contiguous, else W[p + k ldw]
    const T *X;
    int64_t ldx;  // X(k, q) = X[k + q ldx] when k-contiguous, else X[q + k ldx]
    T *C;
    int64_t c_p, c_q;  // out(p, q) is C[p c_p + q c_q]
    int64_t L, s, k;
    int64_t p_begin, p_end;
    Splits splits;
    Acc alpha, beta;
    Acc *part;  // [split][q][p - p_begin] when splits.count > 1
    bool w_vec, x_vec;  // 16-byte copies allowed
    bool bf16;          // 16-bit dtypes: BF16 rather than F16
    bool wk, xk;        // W(p, k), X(k, q) contiguous along k (the tensor-core kernel reads them here)
};

// ---- launch overlap (programmatic dependent launch, sm_90) -------------------------

// A split product's kernel lets the launch of its combine_kernel begin once its blocks
// have read their operands; the combine waits, before it reads a partial, until the
// product's grid has finished and its writes are visible. The combine's launch then
// overlaps the product's last blocks instead of following them: at these calls' length
// (tens of microseconds) a launch gap is a part worth having back. Without the launch
// attribute (GPUs below sm_90) both instructions do nothing.
__device__ __forceinline__ void let_dependents_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}

__device__ __forceinline__ void wait_for_prerequisite() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

// ---- C ----------------------------------------------------------------------------

template <class T, class Acc>
__device__ __forceinline__ void store_out(T *c, Acc total, Acc alpha, Acc beta, bool bf16) {
    if constexpr (std::is_same_v<T, uint16_t>) {
        const float old = beta == 0.0f ? 0.0f : half_bits_to_float(*c, bf16);
        const float v = epilogue<float>(alpha, total, beta, old);
        *c = bf16 ? float_to_bf16(v) : float_to_half(v);
    } else {
        *c = epilogue<T>(alpha, total, beta, beta == T(0) ? T(0) : *c);
    }
}

// Element (p, q) of a block's result: into C, or into the workspace of its split.
template <class T, class Acc>
__device__ __forceinline__ void deliver(const Params<T, Acc> &pr, int64_t p, int64_t q, Acc v) {
    if (p >= pr.p_end || q >= pr.s) return;
    if (pr.splits.count == 1)
        store_out<T, Acc>(pr.C + p * pr.c_p + q * pr.c_q, v, pr.alpha, pr.beta, pr.bf16);
    else
        pr.part[(static_cast<int64_t>(blockIdx.y) * pr.s + q) * (pr.p_end - pr.p_begin) + (p - pr.p_begin)] = v;
}

// The pairwise tree of join_splits over a thread's 32 lanes: a[l] += a[l + H] for l < H,
// H = 16, 8, ..., 1. Written as a recursion so that every index is a constant: as a loop
// over H the compiler kept the array in local memory, and the combine took several
// times the product's tail.
template <int H, class Acc>
__device__ __forceinline__ void pair_tree(Acc (&a)[32]) {
#pragma unroll
    for (int l = 0; l < H; ++l) a[l] = a[l] + a[l + H];
    if constexpr (H > 1) pair_tree<H / 2>(a);
}

// The splits' partials joined (order.hpp, join_splits), then C: by one thread
// per element where there are few splits, by a warp per element where there are many
// (the lanes' loads in flight at once); the same order, the same bits.
template <class T, class Acc, bool kWarp>
__global__ void combine_kernel(Params<T, Acc> pr) {
    wait_for_prerequisite();
    const int64_t rows = pr.p_end - pr.p_begin, total = rows * pr.s, S = pr.splits.count;
    const int64_t per_block = kWarp ? blockDim.x / 32 : blockDim.x;
    const int64_t first = static_cast<int64_t>(blockIdx.x) * per_block + (kWarp ? threadIdx.x / 32 : threadIdx.x);
    const int lane = threadIdx.x % 32;
    for (int64_t i = first; i < total; i += static_cast<int64_t>(gridDim.x) * per_block) {
        Acc v = 0;
        if constexpr (kWarp) {
            // Eight loads in flight at once, then their additions in order.
            for (int64_t j0 = lane; j0 < S; j0 += 8 * 32) {
                Acc x[8];
#pragma unroll
                for (int u = 0; u < 8; ++u) x[u] = j0 + 32 * u < S ? pr.part[(j0 + 32 * u) * total + i] : Acc(0);
#pragma unroll
                for (int u = 0; u < 8; ++u)
                    if (j0 + 32 * u < S) v = j0 + 32 * u < 32 ? x[u] : v + x[u];
            }
#pragma unroll
            for (int h = 16; h >= 1; h /= 2) {
                const Acc other = __shfl_down_sync(0xffffffffu, v, h);
                if (lane < h) v = v + other;
            }
            if (lane != 0) continue;
        } else {
            Acc a[32];
#pragma unroll
            for (int l = 0; l < 32; ++l) a[l] = 0;
            for (int64_t r = 0; r * 32 < S; ++r)
#pragma unroll
                for (int l = 0; l < 32; ++l)
                    if (r * 32 + l < S) {
                        const Acc x = pr.part[(r * 32 + l) * total + i];
                        a[l] = r == 0 ? x : a[l] + x;
                    }
            pair_tree<16>(a);
            v = a[0];
        }
        const int64_t q = i / rows, p = i % rows;
        store_out<T, Acc>(pr.C + (pr.p_begin + p) * pr.c_p + q * pr.c_q, v, pr.alpha, pr.beta, pr.bf16);
    }
}

// ---- copies into shared memory ----------------------------------------------------

// Rows [r0, r0 + R) by columns [c0, c0 + Cols) of a matrix whose row r starts at
// M + r ld (columns contiguous) into shared rows `pitch` elements apart; zeros where
// r >= r_lim or c >= c_lim. Cols is a multiple of the 16-byte vector.
template <class T, int R, int Cols, int kThreads>
__device__ __forceinline__ void load_tile(T *dst, int pitch, const T *M, int64_t ld, int64_t r0, int64_t r_lim,
                                          int64_t c0, int64_t c_lim, bool vec) {
    constexpr int V = 16 / int(sizeof(T)), kPerRow = Cols / V, kVecs = R * kPerRow;
    static_assert(Cols % V == 0, "whole vectors");
    if constexpr (kThreads % kPerRow == 0) {
        // A tile inside the matrix with 16-byte copies, nearly every tile of a long
        // operand: each thread keeps its column and walks down the rows, so a copy
        // costs a pointer step and no bounds or 64-bit index arithmetic. The general
        // loop below spent several times the copy's own instructions on them, and these
        // kernels issue little else.
        if (vec && r0 + R <= r_lim && c0 + Cols <= c_lim) {
            constexpr int kRowStep = kThreads / kPerRow, kTurns = (kVecs + kThreads - 1) / kThreads;
            const int r = threadIdx.x / kPerRow, cv = threadIdx.x % kPerRow;
            const T *src = M + (r0 + r) * ld + c0 + cv * V;
            T *d = dst + r * pitch + cv * V;
#pragma unroll
            for (int j = 0; j < kTurns; ++j)
                if (kVecs % kThreads == 0 || r + j * kRowStep < R)
                    copy_async<16>(d + j * kRowStep * pitch, src + j * kRowStep * ld, true);
            return;
        }
    }
#pragma unroll 4
    for (int i = threadIdx.x; i < R * kPerRow; i += kThreads) {
        const int r = i / kPerRow, cv = i % kPerRow;
        T *d = dst + r * pitch + cv * V;
        const int64_t gr = r0 + r, gc = c0 + int64_t(cv) * V;
        if (gr >= r_lim || gc >= c_lim) {
            *reinterpret_cast<uint4 *>(d) = make_uint4(0, 0, 0, 0);
        } else if (vec && gc + V <= c_lim) {
            copy_async<16>(d, M + gr * ld + gc, true);
        } else {
#pragma unroll
            for (int e = 0; e < V; ++e) d[e] = gc + e < c_lim ? M[gr * ld + gc + e] : T(0);
        }
    }
}

// The ring: tile t of the split (BK elements of k from split_begin + t BK) loaded by
// load(t, stage) and consumed by compute(stage), kStages - 1 tiles ahead. By default
// the first kStages - 1 turns of the loop only load: one copy of the load's code in the
// kernel. kPrologue: those loads before the loop, as a prologue of their own (more code
// to compile), for the kernels whose loop is the F32 roof.
template <bool kPrologue = false, class Load, class Compute>
__device__ __forceinline__ void pipeline(int tiles, Load &&load, Compute &&compute) {
    if constexpr (kPrologue) {
#pragma unroll
        for (int t = 0; t < kStages - 1; ++t) {
            if (t < tiles) load(t, t);
            copy_commit();
        }
        for (int t = 0; t < tiles; ++t) {
            copy_wait<kStages - 2>();
            __syncthreads();
            const int next = t + kStages - 1;
            if (next < tiles) load(next, next % kStages);
            copy_commit();
            compute(t % kStages);
        }
    } else {
#pragma unroll 1
        for (int t = 1 - kStages; t < tiles; ++t) {
            if (t >= 0) {
                copy_wait<kStages - 2>();
                __syncthreads();
            }
            const int next = t + kStages - 1;
            if (next < tiles) load(next, next % kStages);
            copy_commit();
            if (t >= 0) compute(t % kStages);
        }
    }
    copy_wait<0>();
    __syncthreads();
}

constexpr size_t smaller(size_t a, size_t b) { return a < b ? a : b; }

// The widest pass (a power of two of columns, at most BQ) whose rows of `row_bytes`
// fit in `bytes` of shared memory.
constexpr int pass_cols(int bq, size_t row_bytes, size_t bytes) {
    int c = 1;
    while (c * 2 <= bq && size_t(c * 2) * row_bytes <= bytes) c *= 2;
    return c;
}

// The block's results, BP rows of W by BQ columns of X, written through shared
// memory (the ring's, free by now; kBytes of it): put(lo, hi, tile, pitch) stores the
// thread's values of columns [lo, hi) at tile[(q - lo) pitch + p], then the block
// delivers the pass in one loop, along p into the workspace and along C's contiguous
// side into C. In passes of columns where the whole tile would not fit.
template <class T, class Acc, int BP, int BQ, int kThreads, size_t kBytes, class Put>
__device__ __forceinline__ void write_tile(const Params<T, Acc> &pr, unsigned char *smem_raw, int64_t p0, int64_t q0,
                                           Put &&put) {
    constexpr int kPitch = BP + 1;  // odd: a column of the tile spreads over the banks
    constexpr int kCols = pass_cols(BQ, kPitch * sizeof(Acc), kBytes);
    static_assert(size_t(kCols) * kPitch * sizeof(Acc) <= kBytes, "a pass fits");
    Acc *tile = reinterpret_cast<Acc *>(smem_raw);
    const bool p_fast = pr.splits.count > 1 || pr.c_p == 1;
#pragma unroll 1
    for (int lo = 0; lo < BQ; lo += kCols) {
        put(lo, lo + kCols, tile, kPitch);
        __syncthreads();
#pragma unroll 1
        for (int i = threadIdx.x; i < BP * kCols; i += kThreads) {
            const int p = p_fast ? i % BP : i / kCols, q = p_fast ? i / BP : i % kCols;
            deliver<T, Acc>(pr, p0 + p, q0 + lo + q, tile[q * kPitch + p]);
        }
        __syncthreads();
    }
}

// N (1, 2 or 4) consecutive elements from shared memory, aligned to N elements (16
// bytes at most): vector loads.
template <int N, class T>
__device__ __forceinline__ void loadv(const T *s, T (&r)[N]) {
    if constexpr (N == 1) {
        r[0] = s[0];
    } else if constexpr (N == 2 && std::is_same_v<T, float>) {
        const float2 v = *reinterpret_cast<const float2 *>(s);
        r[0] = v.x, r[1] = v.y;
    } else if constexpr (std::is_same_v<T, float>) {
        const float4 v = *reinterpret_cast<const float4 *>(s);
        r[0] = v.x, r[1] = v.y, r[2] = v.z, r[3] = v.w;
    } else {
#pragma unroll
        for (int i = 0; i < N; i += 2) {
            const double2 v = *reinterpret_cast<const double2 *>(s + i);
            r[i] = v.x, r[i + 1] = v.y;
        }
    }
}

// ---- F32, F64: FMA units ------------------------------------------------------------

template <class T, int RP, int PT, int TQ, int QT, int G, int BK, bool Wk, bool Xk>
struct Simt {
    static_assert((G & (G - 1)) == 0 && BK % (4 * G) == 0, "G a power of two, every group a chunk per tile");
    static constexpr int V = 16 / int(sizeof(T));
    static_assert(BK % (2 * V) == 0 && (RP * PT) % (2 * V) == 0, "odd row pitches in 16-byte units");
    static_assert(RP == 1 || RP == 2 || RP == 4, "vector loads of W's rows");
    static constexpr int kThreads = PT * QT * G, BP = RP * PT, BQ = TQ * QT;
    static constexpr int kXCols = (BQ + V - 1) / V * V;
    static constexpr int kWRows = Wk ? BP : BK, kWPitch = (Wk ? BK : BP) + V;
    static constexpr int kXRows = Xk ? BQ : BK, kXPitch = (Xk ? BK : kXCols) + V;
    static constexpr int kWElems = kWRows * kWPitch, kStage = kWElems + kXRows * kXPitch;
    static constexpr size_t kRing = size_t(kStages) * kStage * sizeof(T);
    static constexpr size_t kTree = size_t(G / 2) * kThreads / G * RP * TQ * sizeof(T);
    static constexpr size_t kSmem = kRing > kTree ? kRing : kTree;
};

template <class T, int RP, int PT, int TQ, int QT, int G, int BK, bool Wk, bool Xk>
__global__ void __launch_bounds__(PT *QT *G) simt_kernel(Params<T, T> pr) {
    using S = Simt<T, RP, PT, TQ, QT, G, BK, Wk, Xk>;
    if (!kSm80Code) {  // the launchers refuse GPUs below sm_80
        __trap();
        return;
    }
    {
        extern __shared__ __align__(16) unsigned char smem_raw[];
        T *smem = reinterpret_cast<T *>(smem_raw);
        const int tid = threadIdx.x, pt = tid % PT, qt = (tid / PT) % QT, g = tid / (PT * QT);
        const int64_t p0 = pr.p_begin + static_cast<int64_t>(blockIdx.x) * S::BP;
        const int64_t q0 = static_cast<int64_t>(blockIdx.z) * S::BQ;
        const int64_t kb = static_cast<int64_t>(blockIdx.y) * pr.splits.len;
        const int64_t ke = kb + pr.splits.len < pr.k ? kb + pr.splits.len : pr.k;
        const int tiles = ke > kb ? static_cast<int>(ceil_div(ke - kb, BK)) : 0;

        T acc[RP][TQ];
#pragma unroll
        for (int i = 0; i < RP; ++i)
#pragma unroll
            for (int j = 0; j < TQ; ++j) acc[i][j] = T(0);

        const auto load = [&](int t, int stage) {
            T *ws = smem + stage * S::kStage, *xs = ws + S::kWElems;
            const int64_t kt = kb + int64_t(t) * BK;
            if constexpr (Wk)
                load_tile<T, S::BP, BK, S::kThreads>(ws, S::kWPitch, pr.W, pr.ldw, p0, pr.L, kt, pr.k, pr.w_vec);
            else
                load_tile<T, BK, S::BP, S::kThreads>(ws, S::kWPitch, pr.W, pr.ldw, kt, pr.k, p0, pr.L, pr.w_vec);
            if constexpr (Xk)
                load_tile<T, S::BQ, BK, S::kThreads>(xs, S::kXPitch, pr.X, pr.ldx, q0, pr.s, kt, pr.k, pr.x_vec);
            else
                load_tile<T, BK, S::kXCols, S::kThreads>(xs, S::kXPitch, pr.X, pr.ldx, kt, pr.k, q0, pr.s, pr.x_vec);
        };
        const auto compute = [&](int stage) {
            const T *ws = smem + stage * S::kStage, *xs = ws + S::kWElems;
#pragma unroll
            for (int cc = 0; cc < BK / 4 / G; ++cc) {
                const int c = g + cc * G;
                T w[RP][4], x[TQ][4];
                if constexpr (Wk) {
#pragma unroll
                    for (int i = 0; i < RP; ++i) loadv<4>(ws + (pt + PT * i) * S::kWPitch + 4 * c, w[i]);
                } else {
#pragma unroll
                    for (int e = 0; e < 4; ++e) {
                        T r[RP];
                        loadv<RP>(ws + (4 * c + e) * S::kWPitch + RP * pt, r);
#pragma unroll
                        for (int i = 0; i < RP; ++i) w[i][e] = r[i];
                    }
                }
                if constexpr (Xk) {
#pragma unroll
                    for (int j = 0; j < TQ; ++j) loadv<4>(xs + (qt * TQ + j) * S::kXPitch + 4 * c, x[j]);
                } else {
#pragma unroll
                    for (int e = 0; e < 4; ++e) {
                        const T *row = xs + (4 * c + e) * S::kXPitch + qt * TQ;
                        if constexpr (TQ % 4 == 0) {
#pragma unroll
                            for (int j = 0; j < TQ; j += 4) {
                                T r[4];
                                loadv<4>(row + j, r);
#pragma unroll
                                for (int u = 0; u < 4; ++u) x[j + u][e] = r[u];
                            }
                        } else {
#pragma unroll
                            for (int j = 0; j < TQ; ++j) x[j][e] = row[j];
                        }
                    }
                }
#pragma unroll
                for (int e = 0; e < 4; ++e)
#pragma unroll
                    for (int i = 0; i < RP; ++i)
#pragma unroll
                        for (int j = 0; j < TQ; ++j) acc[i][j] = fused(w[i][e], x[j][e], acc[i][j]);
            }
        };
        // The widest thread tiles run at the F32 roof: the loop as run M1 had it.
        pipeline<RP * TQ >= 32>(tiles, load, compute);
        let_dependents_launch();

        if constexpr (G > 1) {
            // The tree of order.hpp: group g < h adds group g + h.
            T *red = smem;
            constexpr int kSpan = PT * QT * RP * TQ;  // one group's values
            const int slot = (pt + PT * qt) * RP * TQ;
#pragma unroll
            for (int h = G / 2; h >= 1; h /= 2) {
                if (g >= h && g < 2 * h)
#pragma unroll
                    for (int i = 0; i < RP; ++i)
#pragma unroll
                        for (int j = 0; j < TQ; ++j) red[(g - h) * kSpan + slot + i * TQ + j] = acc[i][j];
                __syncthreads();
                if (g < h)
#pragma unroll
                    for (int i = 0; i < RP; ++i)
#pragma unroll
                        for (int j = 0; j < TQ; ++j) acc[i][j] = acc[i][j] + red[g * kSpan + slot + i * TQ + j];
                __syncthreads();
            }
        }
        write_tile<T, T, S::BP, S::BQ, S::kThreads, S::kRing>(
            pr, smem_raw, p0, q0, [&](int lo, int hi, T *tile, int pitch) {
                if (g != 0) return;
#pragma unroll
                for (int i = 0; i < RP; ++i)
#pragma unroll
                    for (int j = 0; j < TQ; ++j) {
                        const int q = qt * TQ + j;
                        if (q >= lo && q < hi) tile[(q - lo) * pitch + (Wk ? pt + PT * i : RP * pt + i)] = acc[i][j];
                    }
            });
    }
}

// ---- F16, BF16: tensor cores --------------------------------------------------------

__device__ __forceinline__ void ldsm_x4(uint32_t (&r)[4], const uint16_t *p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(p));
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(a));
#endif
}

__device__ __forceinline__ void ldsm_x4_trans(uint32_t (&r)[4], const uint16_t *p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(p));
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(a));
#endif
}

// d += a b for one m16n8k16 tile, F32 accumulation.
template <bool kBf16>
__device__ __forceinline__ void mma16(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    if constexpr (kBf16)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                     "{%8, %9}, {%0, %1, %2, %3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    else
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                     "{%8, %9}, {%0, %1, %2, %3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#endif
}

// A fragment of 8x8 tiles from shared memory, transposed (ldmatrix.trans) for an
// operand stored the other way round: a uniform branch, the same way every time.
__device__ __forceinline__ void ldsm(uint32_t (&r)[4], const uint16_t *p, bool trans) {
    if (trans)
        ldsm_x4_trans(r, p);
    else
        ldsm_x4(r, p);
}

template <int WP, int MT, int G, int BK>
struct Mma {
    static_assert((G & (G - 1)) == 0 && BK % (16 * G) == 0, "G a power of two, every group a step per tile");
    static constexpr int kThreads = 32 * WP * G, BP = 16 * WP, BQ = 16 * MT;
    // Shared memory of a stage by the operands' layouts, k-contiguous (wk, xk) or not:
    // rows padded by 16 bytes.
    static constexpr int w_pitch(bool wk) { return (wk ? BK : BP) + 8; }
    static constexpr int w_elems(bool wk) { return (wk ? BP : BK) * w_pitch(wk); }
    static constexpr int x_pitch(bool xk) { return (xk ? BK : BQ) + 8; }
    static constexpr int stage(bool wk, bool xk) { return w_elems(wk) + (xk ? BQ : BK) * x_pitch(xk); }
    static constexpr size_t ring(bool wk, bool xk) { return size_t(kStages) * stage(wk, xk) * sizeof(uint16_t); }
    static constexpr size_t kTree = size_t(G / 2) * WP * 32 * MT * 8 * sizeof(float);
    static constexpr size_t smem(bool wk, bool xk) { return ring(wk, xk) > kTree ? ring(wk, xk) : kTree; }
    // The least ring of the four layouts: what write_tile may use whatever the layout.
    static constexpr size_t kMinRing = smaller(smaller(ring(true, true), ring(true, false)),
                                               smaller(ring(false, true), ring(false, false)));
};

template <bool kBf16, int WP, int MT, int G, int BK>
__global__ void __launch_bounds__(32 * WP *G) mma_kernel(Params<uint16_t, float> pr) {
    using S = Mma<WP, MT, G, BK>;
    if (!kSm80Code) {  // the launchers refuse GPUs below sm_80
        __trap();
        return;
    }
    {
        extern __shared__ __align__(16) unsigned char smem_raw[];
        uint16_t *smem = reinterpret_cast<uint16_t *>(smem_raw);
        const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, wp = warp % WP, g = warp / WP;
        const int mi = lane / 8, r = lane % 8;
        const int64_t p0 = pr.p_begin + static_cast<int64_t>(blockIdx.x) * S::BP;
        const int64_t q0 = static_cast<int64_t>(blockIdx.z) * S::BQ;
        const int64_t kb = static_cast<int64_t>(blockIdx.y) * pr.splits.len;
        const int64_t ke = kb + pr.splits.len < pr.k ? kb + pr.splits.len : pr.k;
        const int tiles = ke > kb ? static_cast<int>(ceil_div(ke - kb, BK)) : 0;
        const bool wk = pr.wk, xk = pr.xk;
        const int w_pitch = S::w_pitch(wk), x_pitch = S::x_pitch(xk);
        const int w_elems = S::w_elems(wk), stage_elems = S::stage(wk, xk);

        // The lane's ldmatrix rows: an 8x8 tile's row r of matrix mi, at k-step kk
        // (and m-tile mt for X) off these by kk w_k (kk x_k + mt x_m).
        // b: (n-tile 0, k 0-7), (n-tile 0, k 8-15), (n-tile 1, k 0-7), (n-tile 1, k 8-15).
        const int w_off = wk ? (wp * 16 + (mi / 2) * 8 + r) * w_pitch + (mi % 2) * 8
                             : ((mi % 2) * 8 + r) * w_pitch + wp * 16 + (mi / 2) * 8;
        const int w_k = wk ? 1 : w_pitch;
        // a: (q 0-7, k 0-7), (q 8-15, k 0-7), (q 0-7, k 8-15), (q 8-15, k 8-15).
        const int x_off = xk ? ((mi % 2) * 8 + r) * x_pitch + (mi / 2) * 8 : ((mi / 2) * 8 + r) * x_pitch + (mi % 2) * 8;
        const int x_k = xk ? 1 : x_pitch, x_m = xk ? 16 * x_pitch : 16;

        float acc[MT][2][4];
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
            for (int nt = 0; nt < 2; ++nt)
#pragma unroll
                for (int e = 0; e < 4; ++e) acc[mt][nt][e] = 0.0f;

        const auto load = [&](int t, int stage) {
            uint16_t *ws = smem + stage * stage_elems, *xs = ws + w_elems;
            const int64_t kt = kb + int64_t(t) * BK;
            if (wk)
                load_tile<uint16_t, S::BP, BK, S::kThreads>(ws, w_pitch, pr.W, pr.ldw, p0, pr.L, kt, pr.k, pr.w_vec);
            else
                load_tile<uint16_t, BK, S::BP, S::kThreads>(ws, w_pitch, pr.W, pr.ldw, kt, pr.k, p0, pr.L, pr.w_vec);
            if (xk)
                load_tile<uint16_t, S::BQ, BK, S::kThreads>(xs, x_pitch, pr.X, pr.ldx, q0, pr.s, kt, pr.k, pr.x_vec);
            else
                load_tile<uint16_t, BK, S::BQ, S::kThreads>(xs, x_pitch, pr.X, pr.ldx, kt, pr.k, q0, pr.s, pr.x_vec);
        };
        const auto compute = [&](int stage) {
            const uint16_t *ws = smem + stage * stage_elems + w_off;
            const uint16_t *xs = smem + stage * stage_elems + w_elems + x_off;
#pragma unroll
            for (int ss = 0; ss < BK / 16 / G; ++ss) {
                const int kk = 16 * (g + ss * G);
                uint32_t b[4];
                ldsm(b, ws + kk * w_k, !wk);
#pragma unroll
                for (int mt = 0; mt < MT; ++mt) {
                    uint32_t a[4];
                    ldsm(a, xs + kk * x_k + mt * x_m, !xk);
                    mma16<kBf16>(acc[mt][0], a, b[0], b[1]);
                    mma16<kBf16>(acc[mt][1], a, b[2], b[3]);
                }
            }
        };
        pipeline(tiles, load, compute);
        let_dependents_launch();

        if constexpr (G > 1) {
            float *red = reinterpret_cast<float *>(smem_raw);
            const int slot = (wp * 32 + lane) * MT * 8;
#pragma unroll
            for (int h = G / 2; h >= 1; h /= 2) {
                if (g >= h && g < 2 * h)
#pragma unroll
                    for (int e = 0; e < MT * 8; ++e) red[(g - h) * (WP * 32 * MT * 8) + slot + e] = (&acc[0][0][0])[e];
                __syncthreads();
                if (g < h)
#pragma unroll
                    for (int e = 0; e < MT * 8; ++e)
                        (&acc[0][0][0])[e] = (&acc[0][0][0])[e] + red[g * (WP * 32 * MT * 8) + slot + e];
                __syncthreads();
            }
        }
        const int gq = lane / 4, tp = lane % 4;
        write_tile<uint16_t, float, S::BP, S::BQ, S::kThreads, S::kMinRing>(
            pr, smem_raw, p0, q0, [&](int lo, int hi, float *tile, int pitch) {
                if (g != 0) return;
#pragma unroll
                for (int mt = 0; mt < MT; ++mt)
#pragma unroll
                    for (int nt = 0; nt < 2; ++nt)
#pragma unroll
                        for (int e = 0; e < 4; ++e) {
                            const int q = mt * 16 + gq + (e / 2) * 8;
                            if (q >= lo && q < hi) tile[(q - lo) * pitch + wp * 16 + nt * 8 + 2 * tp + (e % 2)] = acc[mt][nt][e];
                        }
            });
    }
}

}  // namespace gpk::cuda::membound
