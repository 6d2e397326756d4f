// Rung 8, warp tiling and a cp.async pipeline: rung 7 spreads a thread's 8x8 block
// of C over the whole block tile and loads each k-tile through registers with a
// __syncthreads() on either side, so the block stops while the next tiles come in
// from memory. Two changes:
//
// * Warp tiles (siboehm's kernel 10). Each warp owns a WM x WN sub-tile of the block
//   tile and its 32 lanes, 8 along m by 4 along n, split it into thread blocks of
//   (WM/8) x (WN/4). A warp's shared-memory reads for one step of k then touch only
//   WM + WN elements -- 8 consecutive 16-byte vectors of A, 4 of B, the rest
//   broadcasts -- and the tile shape is set per warp, which is how it maps onto the
//   SM's four schedulers.
// * A multi-stage pipeline (sm_80 and newer): k-tiles are copied global -> shared with
//   cp.async, which needs no registers and does not stall the issuing thread, into a
//   ring of kStages buffers. While the warps compute on tile t, tiles t+1 .. t+S-1 are
//   in flight. The operand contiguous along the tile's long side goes in 16-byte
//   copies (when aligned, as in rung 7); the one contiguous along k is scattered into
//   the k-major tile with element-sized copies, cp.async's only way to transpose.
//   Out-of-range elements are zero-filled by the copy itself (src-size 0).
//
// Tile sizes are tuned for sm_90 (scripts/tune-gemm); the F32 configuration can be
// overridden at compile time with -DGPK_GEMM_TUNE_{BM,BN,BK,WM,WN,STAGES}=... The
// stages need dynamic shared memory beyond 48 KiB. GPUs without cp.async (below
// sm_80), or that cannot give a block that much shared memory, are refused with
// GPK_ERROR_NOT_SUPPORTED; the kernel is not compiled for them.
#include "gemm_util.cuh"

#ifndef GPK_GEMM_TUNE_BM
#define GPK_GEMM_TUNE_BM 128
#endif
#ifndef GPK_GEMM_TUNE_BN
#define GPK_GEMM_TUNE_BN 128
#endif
#ifndef GPK_GEMM_TUNE_BK
#define GPK_GEMM_TUNE_BK 16
#endif
#ifndef GPK_GEMM_TUNE_WM
#define GPK_GEMM_TUNE_WM 64
#endif
#ifndef GPK_GEMM_TUNE_WN
#define GPK_GEMM_TUNE_WN 32
#endif
#ifndef GPK_GEMM_TUNE_STAGES
#define GPK_GEMM_TUNE_STAGES 3
#endif

namespace gpk::cuda {
namespace {

using namespace gemm_util;

constexpr int kWarp = 32;
constexpr int kLanesM = 8, kLanesN = 4;  // a warp's lanes over its sub-tile

// Block tile BM x BN, step BK of k, warp tile WM x WN, pipeline depth.
template <class T>
struct Tiles;
template <>
struct Tiles<float> {
    static constexpr int kTileM = GPK_GEMM_TUNE_BM, kTileN = GPK_GEMM_TUNE_BN, kTileK = GPK_GEMM_TUNE_BK;
    static constexpr int kWarpM = GPK_GEMM_TUNE_WM, kWarpN = GPK_GEMM_TUNE_WN, kStages = GPK_GEMM_TUNE_STAGES;
};
// Half the C block of F32 per thread (4x8): 32 accumulators of two registers each.
template <>
struct Tiles<double> {
    static constexpr int kTileM = 64, kTileN = 64, kTileK = 16;
    static constexpr int kWarpM = 32, kWarpN = 32, kStages = 3;
};

// What follows from the tile sizes.
template <class T>
struct Shape : Tiles<T> {
    using Tiles<T>::kTileM, Tiles<T>::kTileN, Tiles<T>::kTileK, Tiles<T>::kWarpM, Tiles<T>::kWarpN,
        Tiles<T>::kStages;
    static constexpr int L = Vec16<T>::kLanes;
    static constexpr int kWarpsM = kTileM / kWarpM;
    static constexpr int kThreads = kWarpsM * (kTileN / kWarpN) * kWarp;
    static constexpr int kThreadM = kWarpM / kLanesM, kThreadN = kWarpN / kLanesN;  // a thread's C block
    // A thread's rows come in runs of L, kStrideM apart (its lanes take the runs between).
    static constexpr int kStrideM = kLanesM * L, kStrideN = kLanesN * L;
    // k-major tiles, rows padded by one vector (as in rung 7).
    static constexpr int kRowA = kTileM + L, kRowB = kTileN + L;
    static constexpr int kStageA = kTileK * kRowA, kStage = kStageA + kTileK * kRowB;
    static constexpr size_t kSmemBytes = size_t(kStages) * kStage * sizeof(T);

    static_assert(kTileM % kWarpM == 0 && kTileN % kWarpN == 0, "warp tiles cover the block tile");
    static_assert(kWarpM % kStrideM == 0 && kWarpN % kStrideN == 0, "a thread's rows and columns are whole vectors");
    static_assert(kThreads <= 1024, "at most 1024 threads per block");
    static_assert(kStages >= 2, "a pipeline needs two buffers at least");
    static_assert(kTileM * kTileK % (L * kThreads) == 0 && kTileN * kTileK % (L * kThreads) == 0,
                  "the tiles split evenly over the threads, in vectors and in elements");
};

// S[p*kRow + o] = op(X)(o0 + o, p0 + p) for the kOuter x kTileK tile at (o0, p0), zero
// outside the outer x k operand, as copies in flight (see rung 7's load_tile for the
// two layouts of X). `vec`: X allows 16-byte copies.
template <class T, int kOuter, int kTileK, int kThreads>
__device__ __forceinline__ void load_tile_async(T *S, const T *__restrict__ X, int64_t ld, bool contiguous_o, bool vec,
                                                int64_t o0, int64_t outer, int64_t p0, int64_t k, int tid) {
    constexpr int L = Vec16<T>::kLanes;
    constexpr int kRow = kOuter + L;
    if (contiguous_o) {
        // 16-byte copies of kOuter / L vectors along each row p, stored as they are.
#pragma unroll
        for (int r = 0; r < kOuter * kTileK / L / kThreads; ++r) {
            const int e = tid + r * kThreads;
            const int p = e / (kOuter / L), o = e % (kOuter / L) * L;
            const int64_t go = o0 + o, gp = p0 + p;
            T *dst = S + (p * kRow + o);
            const T *src = X + (go + gp * ld);
            if (vec && gp < k && go + L <= outer) {
                copy_async<16>(dst, src, true);
            } else {
#pragma unroll
                for (int q = 0; q < L; ++q) {
                    const bool valid = gp < k && go + q < outer;
                    copy_async<sizeof(T)>(dst + q, valid ? src + q : X, valid);
                }
            }
        }
    } else {
        // Element copies walking k (contiguous in memory) and landing down a column of S.
#pragma unroll
        for (int r = 0; r < kOuter * kTileK / kThreads; ++r) {
            const int e = tid + r * kThreads;
            const int o = e / kTileK, p = e % kTileK;
            const int64_t go = o0 + o, gp = p0 + p;
            const bool valid = go < outer && gp < k;
            copy_async<sizeof(T)>(S + (p * kRow + o), valid ? X + (gp + go * ld) : X, valid);
        }
    }
}

// Starts the copies of k-tile t into stage `stage` of the ring.
template <class T>
__device__ __forceinline__ void load_stage(T *smem, int stage, int64_t t, bool transa, bool transb, bool vec_a,
                                           bool vec_b, const T *__restrict__ A, int64_t lda, const T *__restrict__ B,
                                           int64_t ldb, int64_t i0, int64_t j0, int64_t m, int64_t n, int64_t k,
                                           int tid) {
    using S = Shape<T>;
    T *as = smem + stage * S::kStage;
    T *bs = as + S::kStageA;
    const int64_t p0 = t * S::kTileK;
    load_tile_async<T, S::kTileM, S::kTileK, S::kThreads>(as, A, lda, !transa, vec_a, i0, m, p0, k, tid);
    load_tile_async<T, S::kTileN, S::kTileK, S::kThreads>(bs, B, ldb, transb, vec_b, j0, n, p0, k, tid);
}

template <class T>
__global__ void __launch_bounds__(Shape<T>::kThreads)
    gemm_warptile_async_kernel(bool transa, bool transb, bool vec_a, bool vec_b, bool vec_c, int64_t m, int64_t n,
                               int64_t k, T alpha, const T *__restrict__ A, int64_t lda, const T *__restrict__ B,
                               int64_t ldb, T beta, T *__restrict__ C, int64_t ldc) {
    if (!kSm80Code) {  // the launcher refuses GPUs below sm_80
        __trap();
        return;
    }
    using S = Shape<T>;
    using V = vec16_t<T>;
    constexpr int L = S::L;
    extern __shared__ __align__(16) unsigned char smem_bytes[];
    T *smem = reinterpret_cast<T *>(smem_bytes);

    const int tid = threadIdx.x;
    const int warp = tid / kWarp, lane_id = tid % kWarp;
    // Offsets of the thread's first row and column inside the block tile.
    const int row0 = warp % S::kWarpsM * S::kWarpM + lane_id % kLanesM * L;
    const int col0 = warp / S::kWarpsM * S::kWarpN + lane_id / kLanesM * L;
    const int64_t k_tiles = (k + S::kTileK - 1) / S::kTileK;
    const int64_t tiles_m = (m + S::kTileM - 1) / S::kTileM, tiles_n = (n + S::kTileN - 1) / S::kTileN;

    for (int64_t tj = blockIdx.y; tj < tiles_n; tj += gridDim.y) {
        for (int64_t ti = blockIdx.x; ti < tiles_m; ti += gridDim.x) {
            const int64_t i0 = ti * S::kTileM, j0 = tj * S::kTileN;
            // acc[x][y]: C(i0 + row0 + x/L*kStrideM + x%L, j0 + col0 + y/L*kStrideN + y%L)
            T acc[S::kThreadM][S::kThreadN];
#pragma unroll
            for (int x = 0; x < S::kThreadM; ++x)
#pragma unroll
                for (int y = 0; y < S::kThreadN; ++y) acc[x][y] = T(0);

            // Prologue: tiles 0 .. kStages-2 in flight, one commit group each (empty
            // groups past the last tile keep the count the wait below relies on).
#pragma unroll
            for (int s = 0; s < S::kStages - 1; ++s) {
                if (s < k_tiles) load_stage(smem, s, s, transa, transb, vec_a, vec_b, A, lda, B, ldb, i0, j0, m, n, k, tid);
                copy_commit();
            }
            for (int64_t t = 0; t < k_tiles; ++t) {
                // Groups committed so far: (kStages - 1) + t. Allowing kStages - 2 to be
                // pending means groups 0 .. t are done: this thread's copies of tile t
                // have landed. The barrier then makes every thread's copies visible, and
                // also says that every warp is done with tile t - 1, whose stage is the
                // one refilled next.
                copy_wait<S::kStages - 2>();
                __syncthreads();
                const int64_t next = t + S::kStages - 1;
                if (next < k_tiles)
                    load_stage(smem, static_cast<int>(next % S::kStages), next, transa, transb, vec_a, vec_b, A, lda,
                               B, ldb, i0, j0, m, n, k, tid);
                copy_commit();

                const T *as = smem + static_cast<int>(t % S::kStages) * S::kStage;
                const T *bs = as + S::kStageA;
#pragma unroll
                for (int p = 0; p < S::kTileK; ++p) {
                    T a[S::kThreadM], b[S::kThreadN];
#pragma unroll
                    for (int s = 0; s < S::kThreadM / L; ++s) {
                        V v = *reinterpret_cast<const V *>(as + (p * S::kRowA + row0 + s * S::kStrideM));
#pragma unroll
                        for (int q = 0; q < L; ++q) a[s * L + q] = lane<T>(v, q);
                    }
#pragma unroll
                    for (int s = 0; s < S::kThreadN / L; ++s) {
                        V v = *reinterpret_cast<const V *>(bs + (p * S::kRowB + col0 + s * S::kStrideN));
#pragma unroll
                        for (int q = 0; q < L; ++q) b[s * L + q] = lane<T>(v, q);
                    }
#pragma unroll
                    for (int x = 0; x < S::kThreadM; ++x)
#pragma unroll
                        for (int y = 0; y < S::kThreadN; ++y) acc[x][y] += a[x] * b[y];
                }
            }
            // Only empty groups can be pending here; the barrier keeps the next tile's
            // prologue from refilling stages that slower warps are still reading.
            copy_wait<0>();
            __syncthreads();

#pragma unroll
            for (int y = 0; y < S::kThreadN; ++y) {
                const int64_t j = j0 + col0 + y / L * S::kStrideN + y % L;
                if (j >= n) continue;
#pragma unroll
                for (int s = 0; s < S::kThreadM / L; ++s) {
                    const int64_t i = i0 + row0 + s * S::kStrideM;
                    T *c = C + (i + j * ldc);
                    if (vec_c && i + L <= m) {
                        V out;
                        if (beta == T(0)) {
#pragma unroll
                            for (int q = 0; q < L; ++q) lane<T>(out, q) = alpha * acc[s * L + q][y];
                        } else {
                            out = *reinterpret_cast<const V *>(c);
#pragma unroll
                            for (int q = 0; q < L; ++q)
                                lane<T>(out, q) = alpha * acc[s * L + q][y] + beta * lane<T>(out, q);
                        }
                        *reinterpret_cast<V *>(c) = out;
                    } else {
#pragma unroll
                        for (int q = 0; q < L; ++q)
                            if (i + q < m) store_c(c + q, alpha, acc[s * L + q][y], beta);
                    }
                }
            }
        }
    }
}

template <class T>
gpk_status gemm(gpk_context &ctx, const GemmArgs &args) {
    using S = Shape<T>;
    const auto kernel = gemm_warptile_async_kernel<T>;
    const char *why_not = nullptr;
    GPK_FORWARD_IF_ERROR(takes_sm80(ctx, S::kSmemBytes, &why_not));
    if (why_not != nullptr) return refuse(ctx, "gemm", "warptile_async", why_not);
    bool fits = false;
    GPK_FORWARD_IF_ERROR(allow_shared(ctx, kernel, S::kSmemBytes, &fits));
    const T *A = static_cast<const T *>(args.A);
    const T *B = static_cast<const T *>(args.B);
    T *C = static_cast<T *>(args.C);
    kernel<<<tile_grid(args.m, args.n, S::kTileM, S::kTileN), S::kThreads, S::kSmemBytes, stream(ctx)>>>(
        args.transa, args.transb, vec16_ok<T>(A, args.lda), vec16_ok<T>(B, args.ldb), vec16_ok<T>(C, args.ldc),
        args.m, args.n, args.k, static_cast<T>(args.alpha), A, args.lda, B, args.ldb, static_cast<T>(args.beta), C,
        args.ldc);
    GPK_LAUNCH_CHECK(ctx, "gemm_warptile_async_kernel");
    return GPK_SUCCESS;
}

}  // namespace

gpk_status gemm_warptile_async_takes(gpk_context &ctx, const GemmArgs &args, const char **why_not) {
    return takes_sm80(ctx, args.dtype == GPK_F64 ? Shape<double>::kSmemBytes : Shape<float>::kSmemBytes, why_not);
}

gpk_status gemm_warptile_async(gpk_context &ctx, const GemmArgs &args) {
    return gemm_util::by_dtype(ctx, args, "warptile_async", gemm<float>, gemm<double>);
}

}  // namespace gpk::cuda
