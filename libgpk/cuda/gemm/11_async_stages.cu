// Rung 11, async stages: rung 10's register blocks fed by a ring of cp.async copies,
// each operand kept in shared memory in its own memory order.
//
// Rung 10 stages each k-tile through registers: its loads are in flight only while
// one k-tile is multiplied, and then every warp of the block stores its piece to
// shared memory and waits at the barrier together with the others (Nsight Compute:
// no warp eligible in 18 % of the cycles, with 2.7 warps per scheduler ready on
// average). Rung 8 used cp.async, but transposed the operand that is contiguous along
// k into a k-major tile with 4-byte copies, four times the copy instructions. Here:
//
// * Copies go global -> shared with cp.async, 16 bytes each, into a ring of kStages
//   k-tiles: kStages - 1 tiles are in flight while one is multiplied, nothing passes
//   through registers, and the one barrier per k-tile waits for data requested
//   kStages - 1 tiles earlier.
// * No operand is transposed on the way in. One contiguous along the tile's long side
//   (A, or B^T) is stored k-major, S[p][o], as in rung 10, and a thread reads its
//   elements of a step of k as runs of 4. One contiguous along k is stored outer-major,
//   S[o][p] with rows of BK + 4 floats, and a thread reads 4 steps of k of one of its
//   rows or columns with one 16-byte read. For those the thread's rows (columns) are
//   interleaved, o = t + kThreads_o * r, so that the 4 (8) different rows a warp reads
//   at once fall in different banks.
//
// The rung needs 16-byte aligned operands whose leading dimensions are multiples of 4
// (pieces that cross an edge of the matrix are copied element by element), and
// cp.async (sm_80 and newer); other calls run rung 10.
#include "gemm_util.cuh"

namespace gpk::cuda {
namespace {

using namespace gemm_util;

#ifndef GPK_ASYNC_TUNE_TM
#define GPK_ASYNC_TUNE_TM 16
#endif
#ifndef GPK_ASYNC_TUNE_TN
#define GPK_ASYNC_TUNE_TN 8
#endif
#ifndef GPK_ASYNC_TUNE_STAGES
#define GPK_ASYNC_TUNE_STAGES 4
#endif
#ifndef GPK_ASYNC_TUNE_MINBLOCKS
#define GPK_ASYNC_TUNE_MINBLOCKS 2
#endif
constexpr int kTileM = 128, kTileN = 128, kTileK = 8, kStages = GPK_ASYNC_TUNE_STAGES;
constexpr int kThreadM = GPK_ASYNC_TUNE_TM, kThreadN = GPK_ASYNC_TUNE_TN;  // a thread's block of C
constexpr int kMinBlocks = GPK_ASYNC_TUNE_MINBLOCKS;
constexpr int kThreadsM = kTileM / kThreadM, kThreadsN = kTileN / kThreadN;
constexpr int kThreads = kThreadsM * kThreadsN;
constexpr int kLanesM = 8, kLanesN = 4;  // a warp's lanes over the threads' grid
constexpr int kWarpsM = kThreadsM / kLanesM;
static_assert(kThreadsM % kLanesM == 0 && kThreadsN % kLanesN == 0, "whole warps of 8 x 4 lanes");
static_assert(kTileK % 4 == 0, "k-tiles of whole 4-element pieces");

// One operand's tile: kOuter x kTileK of op(X), X contiguous along outer (kContigO) or
// along k. Sizes in floats.
template <int kOuter, bool kContigO>
struct Tile {
    static constexpr int kRow = kContigO ? kOuter + 4 : kTileK + 4;  // padded rows
    static constexpr int kRows = kContigO ? kTileK : kOuter;
    static constexpr int kFloats = kRows * kRow;
    static constexpr int kPieces = kOuter * kTileK / 4;  // 16-byte pieces
    static_assert(kPieces % kThreads == 0, "the tile's pieces split evenly over the threads");
    static constexpr int kPerThread = kPieces / kThreads;

    // Where piece e goes: outer index o and k index p of its first element.
    __device__ static int piece_o(int e) { return kContigO ? e % (kOuter / 4) * 4 : e / (kTileK / 4); }
    __device__ static int piece_p(int e) { return kContigO ? e / (kOuter / 4) : e % (kTileK / 4) * 4; }

    // Starts the copies of the k-tile at p0 into S. Pieces outside the operand are
    // zero-filled (src-size 0); those that cross its edge go element by element.
    __device__ static void load(float *S, const float *__restrict__ X, int64_t ld, int outer_left, int64_t k_left,
                                int64_t o0, int64_t p0, int tid) {
#pragma unroll
        for (int r = 0; r < kPerThread; ++r) {
            const int e = tid + r * kThreads, o = piece_o(e), p = piece_p(e);
            float *dst = S + (kContigO ? p * kRow + o : o * kRow + p);
            const float *src = X + (kContigO ? (o0 + o) + (p0 + p) * ld : (p0 + p) + (o0 + o) * ld);
            // How many of the piece's 4 elements lie inside the operand.
            const int64_t along = kContigO ? outer_left - o : k_left - p;
            const bool row_inside = kContigO ? p < k_left : o < outer_left;
            if (row_inside && along >= 4) {
                copy_async<16>(dst, src, true);
            } else {
#pragma unroll
                for (int q = 0; q < 4; ++q) {
                    const bool valid = row_inside && q < along;
                    copy_async<4>(dst + q, valid ? src + q : X, valid);
                }
            }
        }
    }
};

// The outer index of a thread's r-th row (column) of C, for operand order kContigO:
// runs of 4, kOuter / (kThread / 4) apart, or interleaved.
template <int kOuter, int kThread, bool kContigO>
__device__ __forceinline__ int own(int t, int r) {
    constexpr int kThreadsO = kOuter / kThread;
    return kContigO ? r / 4 * (kOuter / (kThread / 4)) + t * 4 + r % 4 : t + kThreadsO * r;
}

// A thread's kThread elements of op(X) for step p of the stage, X contiguous along
// outer: runs of 4.
template <int kOuter, int kThread>
__device__ __forceinline__ void read_step(float (&f)[kThread], const float *S, int t, int p) {
    using T = Tile<kOuter, true>;
#pragma unroll
    for (int run = 0; run < kThread / 4; ++run) {
        const float4 v = *reinterpret_cast<const float4 *>(S + p * T::kRow + own<kOuter, kThread, true>(t, run * 4));
        f[run * 4] = v.x, f[run * 4 + 1] = v.y, f[run * 4 + 2] = v.z, f[run * 4 + 3] = v.w;
    }
}

// The same for steps p4 .. p4 + 3, X contiguous along k: f[s][r] = step p4 + s, the
// thread's r-th row (column), one 16-byte read per row.
template <int kOuter, int kThread>
__device__ __forceinline__ void read_steps(float (&f)[4][kThread], const float *S, int t, int p4) {
    using T = Tile<kOuter, false>;
#pragma unroll
    for (int r = 0; r < kThread; ++r) {
        const float4 v = *reinterpret_cast<const float4 *>(S + own<kOuter, kThread, false>(t, r) * T::kRow + p4);
        f[0][r] = v.x, f[1][r] = v.y, f[2][r] = v.z, f[3][r] = v.w;
    }
}

template <bool kAContigM, bool kBContigN>
struct Layout {
    using TA = Tile<kTileM, kAContigM>;
    using TB = Tile<kTileN, kBContigN>;
    static constexpr int kStage = TA::kFloats + TB::kFloats;
    static constexpr size_t kSmemBytes = size_t(kStages) * kStage * sizeof(float);
};

template <bool kAContigM, bool kBContigN>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    gemm_async_stages_kernel(int64_t m, int64_t n, int64_t k, float alpha, const float *__restrict__ A,
                             int64_t lda, const float *__restrict__ B, int64_t ldb, float beta,
                             float *__restrict__ C, int64_t ldc, bool vec_c) {
    if (!kSm80Code) {  // the launcher runs rung 10 below sm_80
        __trap();
        return;
    }
    using L = Layout<kAContigM, kBContigN>;
    extern __shared__ __align__(16) float smem[];

    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int tm = warp % kWarpsM * kLanesM + lane % kLanesM;
    const int tn = warp / kWarpsM * kLanesN + lane / kLanesM;
    const int64_t tiles_m = (m + kTileM - 1) / kTileM, tiles_n = (n + kTileN - 1) / kTileN;
    const int64_t k_tiles = (k + kTileK - 1) / kTileK;

    for (int64_t tj = blockIdx.y; tj < tiles_n; tj += gridDim.y) {
        for (int64_t ti = blockIdx.x; ti < tiles_m; ti += gridDim.x) {
            const int64_t i0 = ti * kTileM, j0 = tj * kTileN;
            const int rows = static_cast<int>(min(m - i0, int64_t(kTileM)));
            const int cols = static_cast<int>(min(n - j0, int64_t(kTileN)));
            auto load_stage = [&](int64_t t) {
                float *as = smem + static_cast<int>(t % kStages) * L::kStage;
                const int64_t p0 = t * kTileK;
                L::TA::load(as, A, lda, rows, k - p0, i0, p0, tid);
                L::TB::load(as + L::TA::kFloats, B, ldb, cols, k - p0, j0, p0, tid);
            };

            float acc[kThreadM][kThreadN];
#pragma unroll
            for (int x = 0; x < kThreadM; ++x)
#pragma unroll
                for (int y = 0; y < kThreadN; ++y) acc[x][y] = 0.0f;

            // Prologue: tiles 0 .. kStages-2 in flight, one commit group each (empty
            // groups past the last tile keep the count the wait below relies on).
#pragma unroll
            for (int s = 0; s < kStages - 1; ++s) {
                if (s < k_tiles) load_stage(s);
                copy_commit();
            }
            for (int64_t t = 0; t < k_tiles; ++t) {
                // Groups committed so far: (kStages - 1) + t; with kStages - 2 pending,
                // tile t's have landed. The barrier makes every thread's copies visible
                // and says every warp is done with tile t - 1, whose stage is refilled.
                copy_wait<kStages - 2>();
                __syncthreads();
                if (t + kStages - 1 < k_tiles) load_stage(t + kStages - 1);
                copy_commit();

                const float *as = smem + static_cast<int>(t % kStages) * L::kStage;
                const float *bs = as + L::TA::kFloats;
#pragma unroll
                for (int p4 = 0; p4 < kTileK; p4 += 4) {
                    // k-contiguous operands: 4 steps at once; the others a step at a time.
                    float a[kAContigM ? 1 : 4][kThreadM], b[kBContigN ? 1 : 4][kThreadN];
                    if constexpr (!kAContigM) read_steps<kTileM, kThreadM>(a, as, tm, p4);
                    if constexpr (!kBContigN) read_steps<kTileN, kThreadN>(b, bs, tn, p4);
#pragma unroll
                    for (int s = 0; s < 4; ++s) {
                        if constexpr (kAContigM) read_step<kTileM, kThreadM>(a[0], as, tm, p4 + s);
                        if constexpr (kBContigN) read_step<kTileN, kThreadN>(b[0], bs, tn, p4 + s);
                        const float(&ar)[kThreadM] = a[kAContigM ? 0 : s];
                        const float(&br)[kThreadN] = b[kBContigN ? 0 : s];
#pragma unroll
                        for (int x = 0; x < kThreadM; ++x)
#pragma unroll
                            for (int y = 0; y < kThreadN; ++y) acc[x][y] = fmaf(ar[x], br[y], acc[x][y]);
                    }
                }
            }

            // acc[x][y] is C(i0 + own_m(tm, x), j0 + own_n(tn, y)). With A contiguous
            // along m a thread's rows are runs of 4, written as 16-byte vectors.
#pragma unroll
            for (int y = 0; y < kThreadN; ++y) {
                const int64_t j = j0 + own<kTileN, kThreadN, kBContigN>(tn, y);
                if (j >= n) continue;
                if (kAContigM) {
#pragma unroll
                    for (int run = 0; run < kThreadM / 4; ++run) {
                        const int64_t i = i0 + own<kTileM, kThreadM, true>(tm, run * 4);
                        float *c = C + (i + j * ldc);
                        if (vec_c && i + 4 <= m) {
                            float4 out;
                            if (beta == 0.0f) {
                                out = make_float4(alpha * acc[run * 4][y], alpha * acc[run * 4 + 1][y],
                                                  alpha * acc[run * 4 + 2][y], alpha * acc[run * 4 + 3][y]);
                            } else {
                                out = *reinterpret_cast<const float4 *>(c);
                                out.x = alpha * acc[run * 4][y] + beta * out.x;
                                out.y = alpha * acc[run * 4 + 1][y] + beta * out.y;
                                out.z = alpha * acc[run * 4 + 2][y] + beta * out.z;
                                out.w = alpha * acc[run * 4 + 3][y] + beta * out.w;
                            }
                            *reinterpret_cast<float4 *>(c) = out;
                        } else {
#pragma unroll
                            for (int q = 0; q < 4; ++q)
                                if (i + q < m) store_c(c + q, alpha, acc[run * 4 + q][y], beta);
                        }
                    }
                } else {
#pragma unroll
                    for (int x = 0; x < kThreadM; ++x) {
                        const int64_t i = i0 + own<kTileM, kThreadM, false>(tm, x);
                        if (i < m) store_c(C + (i + j * ldc), alpha, acc[x][y], beta);
                    }
                }
            }
            // The next tile of this block refills the stages the last k-tiles used.
            __syncthreads();
        }
    }
}

template <bool kAContigM, bool kBContigN>
gpk_status launch(gpk_context &ctx, const GemmArgs &args) {
    using L = Layout<kAContigM, kBContigN>;
    const auto kernel = gemm_async_stages_kernel<kAContigM, kBContigN>;
    bool fits = false;
    GPK_FORWARD_IF_ERROR(allow_shared(ctx, kernel, L::kSmemBytes, &fits));
    if (!fits) return gemm_prefetch(ctx, args);
    float *C = static_cast<float *>(args.C);
    kernel<<<tile_grid(args.m, args.n, kTileM, kTileN), kThreads, L::kSmemBytes, stream(ctx)>>>(
        args.m, args.n, args.k, static_cast<float>(args.alpha), static_cast<const float *>(args.A), args.lda,
        static_cast<const float *>(args.B), args.ldb, static_cast<float>(args.beta), C, args.ldc,
        vec16_ok<float>(C, args.ldc));
    GPK_LAUNCH_CHECK(ctx, "gemm_async_stages_kernel");
    return GPK_SUCCESS;
}

}  // namespace

gpk_status gemm_async_stages(gpk_context &ctx, const GemmArgs &args) {
    if (args.dtype != GPK_F32)
        return fail(&ctx, GPK_ERROR_NOT_SUPPORTED, "gemm variant \"async_stages\" supports F32 only");
    int major = 0, sms = 0;
    GPK_FORWARD_IF_ERROR(device_attribute(ctx, cudaDevAttrComputeCapabilityMajor, &major));
    GPK_FORWARD_IF_ERROR(device_attribute(ctx, cudaDevAttrMultiProcessorCount, &sms));
    // 16-byte copies need aligned operands; a grid of fewer tiles than SMs is rung
    // 10's small tile's case.
    const int64_t tiles = ((args.m + kTileM - 1) / kTileM) * ((args.n + kTileN - 1) / kTileN);
    if (major < 8 || !vec16_ok<float>(args.A, args.lda) || !vec16_ok<float>(args.B, args.ldb) || tiles < sms)
        return gemm_prefetch(ctx, args);
    // [transa][transb]: A is contiguous along m unless transposed, B along n only when
    // transposed.
    static constexpr Launcher<GemmArgs> kByLayout[2][2] = {
        {launch<true, false>, launch<true, true>},
        {launch<false, false>, launch<false, true>},
    };
    return kByLayout[args.transa][args.transb](ctx, args);
}

}  // namespace gpk::cuda
