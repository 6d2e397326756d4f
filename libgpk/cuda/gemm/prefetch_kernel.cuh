// The F32 gemm kernel of gemm rung 10 (10_prefetch.cu says what each of its parts is
// for), with a batch index: blockIdx.z is a product of a strided batch, matrix z at
// A + z * sa (likewise B, C). Rung 10 runs it on one product (strides 0); batched rung 3
// (gemm_batched/03_prefetch.cu) on a whole batch in one launch per 65535 products,
// with tiles of its own for small products. Nothing of the library is included: the
// kernel is the rungs' alone. The order of a step's multiply-adds
// can be set at compile time with -DGPK_PREFETCH_TUNE_ORDER (scripts/tune-gemm).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#ifndef GPK_PREFETCH_TUNE_ORDER
#define GPK_PREFETCH_TUNE_ORDER 2
#endif

namespace gpk::cuda::prefetch {
namespace {

// Block tile BM x BN, k-tile BK, a thread's block of C TM x TN (runs of 4 rows and 4
// columns), blocks per SM the registers are capped for; Loop: a block of a batch runs
// several products in turn (see `kernel`).
template <int BM, int BN, int BK, int TM, int TN, int MinBlocks, bool Loop = false>
struct Config {
    static constexpr int kTileM = BM, kTileN = BN, kTileK = BK, kMinBlocks = MinBlocks;
    static constexpr bool kLoop = Loop;
    static constexpr int kThreadM = TM, kThreadN = TN;
    static constexpr int kThreadsM = BM / kThreadM, kThreadsN = BN / kThreadN;
    static constexpr int kThreads = kThreadsM * kThreadsN;
    static constexpr int kLanesM = 8, kLanesN = 4;  // a warp's lanes over the threads' grid
    static constexpr int kWarpsM = kThreadsM / kLanesM;
    // A thread's rows (columns) are runs of 4, kStrideM (kStrideN) apart: the threads
    // along m take the runs in between, so a warp's reads are consecutive vectors.
    static constexpr int kRunsM = TM / 4, kRunsN = TN / 4;
    static constexpr int kStrideM = BM / kRunsM, kStrideN = BN / kRunsN;
    static constexpr int kRowA = BM + 4, kRowB = BN + 4;  // padded k-major tile rows

    static_assert(TM % 4 == 0 && TN % 4 == 0, "a thread's rows and columns are runs of 4");
    static_assert(kThreadsM % kLanesM == 0 && kThreadsN % kLanesN == 0, "whole warps of 8 x 4 lanes");
    static_assert(kThreads % 32 == 0 && kThreads <= 1024, "whole warps, at most 1024 threads");
    static_assert(BK % 8 == 0, "k-tiles of whole 4-element pieces, an even number of steps");
    static_assert((BM * BK / 4) % kThreads == 0 || kThreads % (BM * BK / 4) == 0,
                  "the A tile's 4-element pieces split evenly over the threads, or the threads over them");
    static_assert((BN * BK / 4) % kThreads == 0 || kThreads % (BN * BK / 4) == 0,
                  "the B tile's 4-element pieces split evenly over the threads, or the threads over them");
};

// The pieces of one operand's k-tile that a thread loads: kPieces runs of 4
// consecutive elements of X, where op(X) is outer x k (A: outer = m; B^T: outer = n).
// kContigO: X is contiguous along outer (A not transposed, B transposed), else along
// k. The tile goes to shared memory k-major, S[p][o], rows kRow apart.
template <int kOuter, int BK, int kThreads, bool kContigO>
struct TileLoader {
    static constexpr int kTotal = kOuter * BK / 4;                      // pieces in the tile
    static constexpr int kPieces = (kTotal + kThreads - 1) / kThreads;  // per thread, at most
    float4 v[kPieces];
    const float *src[kPieces];  // this k-tile's piece in X
    int tid;

    // Where piece r of thread tid lies in the tile. Recomputed where it is needed
    // rather than kept: registers are what this kernel runs short of.
    __device__ __forceinline__ int piece_o(int r) const {
        const int e = tid + r * kThreads;
        return kContigO ? e % (kOuter / 4) * 4 : e / (BK / 4);
    }
    __device__ __forceinline__ int piece_p(int r) const {
        const int e = tid + r * kThreads;
        return kContigO ? e / (kOuter / 4) : e % (BK / 4) * 4;
    }
    // Whether piece r exists: with fewer pieces than threads, the last ones have none.
    __device__ __forceinline__ bool has_piece(int r) const {
        return kTotal % kThreads == 0 || tid + r * kThreads < kTotal;
    }

    __device__ __forceinline__ TileLoader(const float *X, int64_t ld, int64_t o0, int thread) : tid(thread) {
#pragma unroll
        for (int r = 0; r < kPieces; ++r)
            src[r] = X + (kContigO ? (o0 + piece_o(r)) + piece_p(r) * ld : piece_p(r) + (o0 + piece_o(r)) * ld);
    }

    // Loads a k-tile whose first `outer_left` x `k_left` elements (capped at the tile)
    // lie inside the operand. `fast`: all of them do, and X allows 16-byte loads.
    __device__ __forceinline__ void load(bool fast, int outer_left, int k_left) {
#pragma unroll
        for (int r = 0; r < kPieces; ++r) {
            if (!has_piece(r)) continue;
            if (fast) {
                v[r] = *reinterpret_cast<const float4 *>(src[r]);
            } else {
                const int o = piece_o(r), p = piece_p(r);
#pragma unroll
                for (int q = 0; q < 4; ++q) {
                    const bool inside = kContigO ? o + q < outer_left && p < k_left : o < outer_left && p + q < k_left;
                    (&v[r].x)[q] = inside ? src[r][q] : 0.0f;
                }
            }
        }
    }

    // Moves the pointers on to the next k-tile.
    __device__ __forceinline__ void advance(int64_t ld) {
#pragma unroll
        for (int r = 0; r < kPieces; ++r) src[r] += kContigO ? BK * ld : BK;
    }

    template <int kRow>
    __device__ __forceinline__ void store(float (*S)[kRow]) const {
#pragma unroll
        for (int r = 0; r < kPieces; ++r) {
            if (!has_piece(r)) continue;
            if (kContigO) {
                *reinterpret_cast<float4 *>(&S[piece_p(r)][piece_o(r)]) = v[r];
            } else {
#pragma unroll
                for (int q = 0; q < 4; ++q) S[piece_p(r) + q][piece_o(r)] = (&v[r].x)[q];
            }
        }
    }
};

// A thread's elements of one step of k: kRuns 16-byte runs, kStride apart.
template <int kRuns, int kStride>
__device__ __forceinline__ void load_fragment(float (&f)[4 * kRuns], const float *row, int t) {
#pragma unroll
    for (int s = 0; s < kRuns; ++s) {
        const float4 v = *reinterpret_cast<const float4 *>(row + s * kStride + t * 4);
        f[4 * s] = v.x, f[4 * s + 1] = v.y, f[4 * s + 2] = v.z, f[4 * s + 3] = v.w;
    }
}

// One step's multiply-adds, in the order GPK_PREFETCH_TUNE_ORDER sets: 0, rows of the
// thread's block one after the other; 1, the same with every other row backwards, so
// that consecutive multiply-adds always share an operand; 2 (the default) and 3, the
// same by columns.
template <int TM, int TN>
__device__ __forceinline__ void step_fma(float (&acc)[TM][TN], const float (&a)[TM], const float (&b)[TN]) {
    constexpr int kOrder = GPK_PREFETCH_TUNE_ORDER;
    if (kOrder < 2) {
#pragma unroll
        for (int x = 0; x < TM; ++x)
#pragma unroll
            for (int i = 0; i < TN; ++i) {
                const int y = kOrder == 1 && x % 2 == 1 ? TN - 1 - i : i;
                acc[x][y] = fmaf(a[x], b[y], acc[x][y]);
            }
    } else {
#pragma unroll
        for (int y = 0; y < TN; ++y)
#pragma unroll
            for (int i = 0; i < TM; ++i) {
                const int x = kOrder == 3 && y % 2 == 1 ? TM - 1 - i : i;
                acc[x][y] = fmaf(a[x], b[y], acc[x][y]);
            }
    }
}

// C(i, j) = alpha * acc + beta * C(i, j); with beta == 0 C is only written.
__device__ __forceinline__ void store_scaled(float *c, float alpha, float acc, float beta) {
    *c = beta == 0.0f ? alpha * acc : alpha * acc + beta * *c;
}

// kBatch: blockIdx.z is a product of the batch, product `first + blockIdx.z` (the
// launcher covers batches past the grid's z limit with one launch per 65535 products);
// without it (one product: strides 0, which the single-gemm rung passes) the offsets
// fold away. A block runs one product's tiles: a loop over the batch cost the single
// product at 4096^3, and the batched rung at 256^3 and 512^3 (docs/PERFORMANCE.md,
// section "Shared kernels"). Only where a product is one small tile (Cfg::kLoop) does a
// block run products first + blockIdx.z, then every gridDim.z-th after it below `end`,
// so that a block's start is shared by several products.
template <class Cfg, bool kAContigM, bool kBContigN, bool kBatch = true>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks)
    kernel(int64_t m, int64_t n, int64_t k, float alpha, const float *__restrict__ A0,
                            int64_t lda, int64_t sa, const float *__restrict__ B0, int64_t ldb, int64_t sb, float beta,
                            float *__restrict__ C0, int64_t ldc, int64_t sc, int64_t first, int64_t end, bool vec_a,
                            bool vec_b, bool vec_c) {
    constexpr int BM = Cfg::kTileM, BN = Cfg::kTileN, BK = Cfg::kTileK, kThreads = Cfg::kThreads;
    constexpr int kRowA = Cfg::kRowA, kRowB = Cfg::kRowB;
    __shared__ __align__(16) float As[2][BK][kRowA];  // As[.][p][i] = op(A)(i0 + i, p0 + p)
    __shared__ __align__(16) float Bs[2][BK][kRowB];  // Bs[.][p][j] = op(B)(p0 + p, j0 + j)

    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int tm = warp % Cfg::kWarpsM * Cfg::kLanesM + lane % Cfg::kLanesM;
    const int tn = warp / Cfg::kWarpsM * Cfg::kLanesN + lane / Cfg::kLanesM;
    const int64_t tiles_m = (m + BM - 1) / BM, tiles_n = (n + BN - 1) / BN;
    const int64_t k_tiles = (k + BK - 1) / BK;

    for (int64_t bz = kBatch ? first + blockIdx.z : 0;; bz += gridDim.z) {  // bz: 0 for one product
        const float *__restrict__ A = A0 + bz * sa;
        const float *__restrict__ B = B0 + bz * sb;
        float *__restrict__ C = C0 + bz * sc;
        for (int64_t tj = blockIdx.y; tj < tiles_n; tj += gridDim.y) {
            for (int64_t ti = blockIdx.x; ti < tiles_m; ti += gridDim.x) {
                const int64_t i0 = ti * BM, j0 = tj * BN;
                // What of the tile lies inside C, capped at the tile (32 bits, to spare
                // registers), and whether whole 16-byte pieces of A (B) may be loaded.
                const int rows = static_cast<int>(min(m - i0, int64_t(BM)));
                const int cols = static_cast<int>(min(n - j0, int64_t(BN)));
                const bool fast_a = vec_a && rows == BM, fast_b = vec_b && cols == BN;
                TileLoader<BM, BK, kThreads, kAContigM> a_tile(A, lda, i0, tid);
                TileLoader<BN, BK, kThreads, kBContigN> b_tile(B, ldb, j0, tid);

                constexpr int TM = Cfg::kThreadM, TN = Cfg::kThreadN;
                float acc[TM][TN];
#pragma unroll
                for (int x = 0; x < TM; ++x)
#pragma unroll
                    for (int y = 0; y < TN; ++y) acc[x][y] = 0.0f;

                const int k_first = static_cast<int>(min(k, int64_t(BK)));
                a_tile.load(fast_a && k_first == BK, rows, k_first);
                b_tile.load(fast_b && k_first == BK, cols, k_first);
                a_tile.store(As[0]);
                b_tile.store(Bs[0]);
                __syncthreads();

                float a[2][TM], b[2][TN];
                load_fragment<Cfg::kRunsM, Cfg::kStrideM>(a[0], As[0][0], tm);
                load_fragment<Cfg::kRunsN, Cfg::kStrideN>(b[0], Bs[0][0], tn);

                for (int64_t t = 0; t < k_tiles; ++t) {
                    const int cur = static_cast<int>(t & 1);
                    const bool more = t + 1 < k_tiles;
                    if (more) {
                        const int k_left = static_cast<int>(min(k - (t + 1) * BK, int64_t(BK)));
                        a_tile.advance(lda);
                        b_tile.advance(ldb);
                        a_tile.load(fast_a && k_left == BK, rows, k_left);
                        b_tile.load(fast_b && k_left == BK, cols, k_left);
                    }
#pragma unroll
                    for (int p = 0; p < BK; ++p) {
                        if (p + 1 < BK) {
                            load_fragment<Cfg::kRunsM, Cfg::kStrideM>(a[(p + 1) % 2], As[cur][p + 1], tm);
                            load_fragment<Cfg::kRunsN, Cfg::kStrideN>(b[(p + 1) % 2], Bs[cur][p + 1], tn);
                        } else if (more) {
                            // Nobody reads the other buffer any more: its last reads came
                            // before the barrier that ended the previous k-tile.
                            a_tile.store(As[cur ^ 1]);
                            b_tile.store(Bs[cur ^ 1]);
                            __syncthreads();
                            load_fragment<Cfg::kRunsM, Cfg::kStrideM>(a[0], As[cur ^ 1][0], tm);
                            load_fragment<Cfg::kRunsN, Cfg::kStrideN>(b[0], Bs[cur ^ 1][0], tn);
                        }
                        step_fma<TM, TN>(acc, a[p % 2], b[p % 2]);
                    }
                }

                // acc[x][y] is C(i0 + x/4*kStrideM + tm*4 + x%4, j0 + y/4*kStrideN + tn*4 + y%4):
                // per column, runs of 4 consecutive rows.
#pragma unroll
                for (int y = 0; y < TN; ++y) {
                    const int64_t j = j0 + y / 4 * Cfg::kStrideN + tn * 4 + y % 4;
                    if (j >= n) continue;
#pragma unroll
                    for (int s = 0; s < Cfg::kRunsM; ++s) {
                        const int64_t i = i0 + s * Cfg::kStrideM + tm * 4;
                        float *c = C + (i + j * ldc);
                        if (vec_c && i + 4 <= m) {
                            float4 out;
                            if (beta == 0.0f) {
                                out = make_float4(alpha * acc[s * 4][y], alpha * acc[s * 4 + 1][y],
                                                  alpha * acc[s * 4 + 2][y], alpha * acc[s * 4 + 3][y]);
                            } else {
                                out = *reinterpret_cast<const float4 *>(c);
                                out.x = alpha * acc[s * 4][y] + beta * out.x;
                                out.y = alpha * acc[s * 4 + 1][y] + beta * out.y;
                                out.z = alpha * acc[s * 4 + 2][y] + beta * out.z;
                                out.w = alpha * acc[s * 4 + 3][y] + beta * out.w;
                            }
                            *reinterpret_cast<float4 *>(c) = out;
                        } else {
#pragma unroll
                            for (int q = 0; q < 4; ++q)
                                if (i + q < m) store_scaled(c + q, alpha, acc[s * 4 + q][y], beta);
                        }
                    }
                }
                // The next tile of this block refills As[0] and Bs[0], which the last k-tile
                // may have been read from.
                __syncthreads();
            }
        }
        if (!(kBatch && Cfg::kLoop) || bz + gridDim.z >= end) break;
    }
}

}  // namespace
}  // namespace gpk::cuda::prefetch
