// The FP64 tensor-core gemm kernel of gemm rung 9 (09_dmma_f64.cu says what each of its
// parts is for), with a batch index: blockIdx.z is a product of a strided batch, matrix
// z at A + z * sa (likewise B, C). Rung 9 runs it on one product (strides 0); batched
// rung 4 (gemm_batched/04_dmma.cu) on a whole batch in one launch per 65535 products.
// Nothing of the library is included: the kernel is the rungs' alone.
//
// Tile sizes can be set at compile time with
// -DGPK_DMMA_TUNE_{BM,BN,BK,WM,WN,STAGES,MINBLOCKS} (scripts/tune-gemm --rung dmma_f64).
// The default, a 128x128 block tile of 8 warps of 32x64, k-tiles of 16 in 3 stages,
// is the fastest of the tuner's candidates on the H100 at 4096^3 (the figures:
// docs/PERFORMANCE.md, "DMMA tuning").
#pragma once

#include "../cp_async.cuh"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#ifndef GPK_DMMA_TUNE_BM
#define GPK_DMMA_TUNE_BM 128
#endif
#ifndef GPK_DMMA_TUNE_BN
#define GPK_DMMA_TUNE_BN 128
#endif
#ifndef GPK_DMMA_TUNE_BK
#define GPK_DMMA_TUNE_BK 16
#endif
#ifndef GPK_DMMA_TUNE_WM
#define GPK_DMMA_TUNE_WM 32
#endif
#ifndef GPK_DMMA_TUNE_WN
#define GPK_DMMA_TUNE_WN 64
#endif
#ifndef GPK_DMMA_TUNE_STAGES
#define GPK_DMMA_TUNE_STAGES 3
#endif
#ifndef GPK_DMMA_TUNE_MINBLOCKS
#define GPK_DMMA_TUNE_MINBLOCKS 1
#endif

namespace gpk::cuda::dmma {
namespace {

constexpr int kWarp = 32;
constexpr int kTileM = GPK_DMMA_TUNE_BM, kTileN = GPK_DMMA_TUNE_BN, kTileK = GPK_DMMA_TUNE_BK;
constexpr int kWarpM = GPK_DMMA_TUNE_WM, kWarpN = GPK_DMMA_TUNE_WN, kStages = GPK_DMMA_TUNE_STAGES;
// Blocks an SM must hold at once (__launch_bounds__): 2 caps a 256-thread block at 128
// registers a thread, which may cost spills.
constexpr int kMinBlocks = GPK_DMMA_TUNE_MINBLOCKS;
constexpr int kWarpsM = kTileM / kWarpM;
constexpr int kThreads = kWarpsM * (kTileN / kWarpN) * kWarp;
constexpr int kMmaM = 16, kMmaN = 8, kMmaK = 4;                    // the 16x8x4 unit
constexpr int kFragsM = kWarpM / kMmaM, kFragsN = kWarpN / kMmaN;  // mma tiles per warp
constexpr int kSteps = kTileK / kMmaK;                             // mma steps per k-tile
constexpr int kPad = 4;                                            // doubles per row (09_dmma_f64.cu: bank conflicts)
constexpr int kLanes = 2;                                          // doubles per 16-byte copy
constexpr size_t kOptinLimit = 227 * 1024;                         // sm_90's largest block

// Elements of one operand's tile in either layout (k-major or o-major), padded.
constexpr int tile_elems(int outer) {
    const int k_major = kTileK * (outer + kPad), o_major = outer * (kTileK + kPad);
    return k_major > o_major ? k_major : o_major;
}
constexpr int kStageA = tile_elems(kTileM), kStage = kStageA + tile_elems(kTileN);
constexpr size_t kSmemBytes = size_t(kStages) * kStage * sizeof(double);

static_assert(kTileM % kWarpM == 0 && kTileN % kWarpN == 0, "warp tiles cover the block tile");
static_assert(kWarpM % kMmaM == 0 && kWarpN % kMmaN == 0, "warp tiles are whole 16x8 mma tiles");
static_assert(kThreads <= 1024, "at most 1024 threads per block");
static_assert(kFragsM * kFragsN * 4 <= 64,
              "at most 64 accumulators a thread: 128 of the 255 registers, the rest for fragments and addresses");
static_assert(kStages >= 2, "a pipeline needs two buffers at least");
static_assert(kMinBlocks >= 1 && kMinBlocks * (kSmemBytes + 1024) <= 228 * 1024,
              "the blocks asked to share an SM fit its 228 KiB of shared memory (1 KiB a block reserved)");
static_assert(kTileK % 8 == 0, "BK a multiple of 8: whole mma steps, an even count of them (the fragment double "
                               "buffer), and a padded o-major row of 4 mod 8 doubles");
static_assert((kTileM + kPad) % 8 == 4 && (kTileN + kPad) % 8 == 4 && (kTileK + kPad) % 8 == 4,
              "padded rows of 4 mod 8 doubles keep the fragment loads free of bank conflicts (09_dmma_f64.cu)");
static_assert(kTileM * kTileK % (kLanes * kThreads) == 0 && kTileN * kTileK % (kLanes * kThreads) == 0,
              "the tiles split evenly over the threads, in 16-byte copies");
static_assert(kStageA % kLanes == 0 && kStage % kLanes == 0, "every stage starts on a 16-byte boundary");
static_assert(kSmemBytes <= kOptinLimit, "the stages fit the 227 KiB of shared memory an sm_90 block can have");

// Where element (o, p) of a kOuter x kTileK operand tile lives: k-major when the
// operand is contiguous along o.
template <int kOuter, bool kKMajor>
struct TileLayout {
    static constexpr int so = kKMajor ? 1 : kTileK + kPad;
    static constexpr int sp = kKMajor ? kOuter + kPad : 1;
};

// S(o, p) = op(X)(o0 + o, p0 + p) for the kOuter x kTileK tile at (o0, p0), zero
// outside the outer x k operand, as copies in flight. op(X)(o, p) is X[o + p*ld] when
// contiguous along o (kKMajor), else X[p + o*ld]. The tile is cut into runs along the
// contiguous direction (kOuter or kTileK long, ld apart in X) and the runs into pairs
// of elements; thread `tid` copies the pair at `along` in run `across` and every
// kRunsPerCopy-th run after it. A pair is consecutive in S too, one 16-byte copy when X
// allows it (`vec`) and both lie inside the operand. `full`: all of the tile lies
// inside and vec holds -- the common case, 16-byte copies without a check.
template <int kOuter, bool kKMajor>
__device__ __forceinline__ void load_tile(double *S, const double *__restrict__ X, int64_t ld, bool vec, bool full,
                                          int64_t o0, int64_t outer, int64_t p0, int64_t k, int tid) {
    using L = TileLayout<kOuter, kKMajor>;
    constexpr int kPairsPerRun = (kKMajor ? kOuter : kTileK) / kLanes;
    constexpr int kCopies = kOuter * kTileK / (kLanes * kThreads);
    constexpr int kRunsPerCopy = kThreads / kPairsPerRun;
    static_assert(kThreads % kPairsPerRun == 0, "a thread's pairs lie at one offset along their runs");
    constexpr int kDstStep = kRunsPerCopy * (kKMajor ? L::sp : L::so);
    const int along = tid % kPairsPerRun * kLanes, across = tid / kPairsPerRun;
    const int o = kKMajor ? along : across, p = kKMajor ? across : along;
    const int64_t go = o0 + o, gp = p0 + p;
    const double *src = X + (kKMajor ? go + gp * ld : gp + go * ld);
    const int64_t src_step = kRunsPerCopy * ld;
    double *dst = S + (o * L::so + p * L::sp);
    if (full) {
#pragma unroll
        for (int r = 0; r < kCopies; ++r) copy_async<16>(dst + r * kDstStep, src + r * src_step, true);
        return;
    }
#pragma unroll
    for (int r = 0; r < kCopies; ++r) {
        // Element q of the pair is at (o + q, p) or (o, p + q).
        const int64_t go_r = kKMajor ? go : go + r * kRunsPerCopy, gp_r = kKMajor ? gp + r * kRunsPerCopy : gp;
        const bool first = go_r < outer && gp_r < k;
        const bool second = kKMajor ? go_r + 1 < outer && gp_r < k : go_r < outer && gp_r + 1 < k;
        const double *s = src + r * src_step;
        double *d = dst + r * kDstStep;
        if (vec && first && second) {
            copy_async<16>(d, s, true);
        } else {
            copy_async<8>(d, first ? s : X, first);
            copy_async<8>(d + 1, second ? s + 1 : X, second);
        }
    }
}

// d(16x8) += a(16x4) b(4x8) across the warp. Lane l = 4g + q holds a = {A(g, q),
// A(g + 8, q)}, b = B(q, g) and d = {D(g, 2q), D(g, 2q + 1), D(g + 8, 2q), D(g + 8, 2q + 1)}
// (PTX ISA, mma .f64 fragments).
__device__ __forceinline__ void mma_16x8x4(double (&d)[4], const double (&a)[2], double b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};\n"
        : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
        : "d"(a[0]), "d"(a[1]), "d"(b));
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};\n"
        : "+d"(d[0]), "+d"(d[1])
        : "d"(a[0]), "d"(b));
    asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};\n"
        : "+d"(d[2]), "+d"(d[3])
        : "d"(a[1]), "d"(b));
#else
    (void)d, (void)a, (void)b;  // not compiled into any kernel below sm_80
#endif
}

// A warp's fragments for one mma step.
struct Frags {
    double a[kFragsM][2];
    double b[kFragsN];
};

// Loads the fragments of step `step` of the k-tile whose A part starts at `as`;
// `a_lane`, `b_lane` are the lane's offsets (warp tile, g, q) into the A and B parts.
template <bool kAKMajor, bool kBKMajor>
__device__ __forceinline__ void load_frags(Frags &f, const double *as, int a_lane, int b_lane, int step) {
    using LA = TileLayout<kTileM, kAKMajor>;
    using LB = TileLayout<kTileN, kBKMajor>;
    const double *a = as + a_lane + step * kMmaK * LA::sp;
    const double *b = as + kStageA + b_lane + step * kMmaK * LB::sp;
#pragma unroll
    for (int x = 0; x < kFragsM; ++x)
#pragma unroll
        for (int h = 0; h < 2; ++h) f.a[x][h] = a[(x * kMmaM + h * 8) * LA::so];
#pragma unroll
    for (int y = 0; y < kFragsN; ++y) f.b[y] = b[y * kMmaN * LB::so];
}

// C(i, j) = alpha * acc + beta * C(i, j); with beta == 0 C is only written.
__device__ __forceinline__ void store_scaled(double *c, double alpha, double acc, double beta) {
    *c = beta == 0.0 ? alpha * acc : alpha * acc + beta * *c;
}

// kAKMajor: A is contiguous along i (not transposed); kBKMajor: B contiguous along j.
// kBatch: blockIdx.z is a product of the batch, product `first + blockIdx.z` (the
// launcher covers batches past the grid's z limit with one launch per 65535 products);
// without it (one product: strides 0, which the single-gemm rung passes) the offsets
// fold away. No loop over products: a loop over the batch took rung 9's kernel from 222
// to 238 registers (docs/PERFORMANCE.md, section "Shared kernels").
template <bool kAKMajor, bool kBKMajor, bool kBatch = true>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    kernel(bool vec_a, bool vec_b, int64_t m, int64_t n, int64_t k, double alpha,
                        const double *__restrict__ A0, int64_t lda, int64_t sa, const double *__restrict__ B0,
                        int64_t ldb, int64_t sb, double beta, double *__restrict__ C0, int64_t ldc, int64_t sc,
                        int64_t first) {
    if (!kSm80Code) {  // the launchers refuse GPUs below sm_80
        __trap();
        return;
    }
    using LA = TileLayout<kTileM, kAKMajor>;
    using LB = TileLayout<kTileN, kBKMajor>;
    extern __shared__ __align__(16) unsigned char smem_bytes[];
    double *smem = reinterpret_cast<double *>(smem_bytes);

    const int tid = threadIdx.x;
    const int warp = tid / kWarp, lane_id = tid % kWarp;
    const int wm = warp % kWarpsM * kWarpM, wn = warp / kWarpsM * kWarpN;
    const int group = lane_id / 4, quad = lane_id % 4;  // g and q of mma_16x8x4
    // The lane's element (o, p) = (warp offset + g, q) of its first A and B fragments.
    const int a_lane = (wm + group) * LA::so + quad * LA::sp;
    const int b_lane = (wn + group) * LB::so + quad * LB::sp;
    const int64_t k_tiles = (k + kTileK - 1) / kTileK;
    const int64_t tiles_m = (m + kTileM - 1) / kTileM, tiles_n = (n + kTileN - 1) / kTileN;

    const int64_t bz = kBatch ? first + blockIdx.z : 0;  // a constant 0 for one product
    const double *__restrict__ A = A0 + bz * sa;
    const double *__restrict__ B = B0 + bz * sb;
    double *__restrict__ C = C0 + bz * sc;
    for (int64_t tj = blockIdx.y; tj < tiles_n; tj += gridDim.y) {
        for (int64_t ti = blockIdx.x; ti < tiles_m; ti += gridDim.x) {
            const int64_t i0 = ti * kTileM, j0 = tj * kTileN;
            const bool inside_m = i0 + kTileM <= m, inside_n = j0 + kTileN <= n;
            const auto load_stage = [&](int stage, int64_t t) {
                double *s = smem + stage * kStage;
                const int64_t p0 = t * kTileK;
                const bool inside_k = p0 + kTileK <= k;
                load_tile<kTileM, kAKMajor>(s, A, lda, vec_a, vec_a && inside_m && inside_k, i0, m, p0, k, tid);
                load_tile<kTileN, kBKMajor>(s + kStageA, B, ldb, vec_b, vec_b && inside_n && inside_k, j0, n, p0, k,
                                            tid);
            };
            double acc[kFragsM][kFragsN][4];
#pragma unroll
            for (int x = 0; x < kFragsM; ++x)
#pragma unroll
                for (int y = 0; y < kFragsN; ++y)
#pragma unroll
                    for (int c = 0; c < 4; ++c) acc[x][y][c] = 0.0;

            // Prologue: tiles 0 .. S-2 in flight, one commit group each (empty groups
            // past the last tile keep the count the waits rely on); then tile 0 landed
            // and visible, and the fragments of its first step loaded.
#pragma unroll
            for (int s = 0; s < kStages - 1; ++s) {
                if (s < k_tiles) load_stage(s, s);
                copy_commit();
            }
            copy_wait<kStages - 2>();
            __syncthreads();
            Frags frags[2];
            if (k_tiles > 0) load_frags<kAKMajor, kBKMajor>(frags[0], smem, a_lane, b_lane, 0);

            int read_stage = 0, write_stage = kStages - 1;
            for (int64_t t = 0; t < k_tiles; ++t) {
                // Every warp has loaded its last fragments of tile t - 1 (the barrier
                // below, one step before the end of that tile), so its stage is free:
                // refill it with tile t + S - 1.
                if (t + kStages - 1 < k_tiles) load_stage(write_stage, t + kStages - 1);
                copy_commit();
                write_stage = write_stage + 1 == kStages ? 0 : write_stage + 1;

                const double *as = smem + read_stage * kStage;
                read_stage = read_stage + 1 == kStages ? 0 : read_stage + 1;
#pragma unroll
                for (int s = 0; s < kSteps; ++s) {
                    if (s + 1 < kSteps) {
                        load_frags<kAKMajor, kBKMajor>(frags[(s + 1) % 2], as, a_lane, b_lane, s + 1);
                    } else {
                        // Last step, its fragments already in registers. Groups committed:
                        // (S - 1) + (t + 1); with S - 2 still pending, tiles 0 .. t + 1 have
                        // landed for this thread. The barrier makes tile t + 1 every
                        // thread's and says every warp is done reading tile t, whose stage
                        // the next iteration refills. Then tile t + 1's first fragments load
                        // while this step's mma run (kSteps is even: they go to frags[0]).
                        copy_wait<kStages - 2>();
                        __syncthreads();
                        if (t + 1 < k_tiles)
                            load_frags<kAKMajor, kBKMajor>(frags[0], smem + read_stage * kStage, a_lane, b_lane, 0);
                    }
                    const Frags &f = frags[s % 2];
#pragma unroll
                    for (int x = 0; x < kFragsM; ++x)
#pragma unroll
                        for (int y = 0; y < kFragsN; ++y) mma_16x8x4(acc[x][y], f.a[x], f.b[y]);
                }
            }
            // Only empty groups can be pending, and the last barrier above came after
            // every warp's last shared-memory read, so the next tile's prologue may
            // refill the stages at once.
            copy_wait<0>();

#pragma unroll
            for (int x = 0; x < kFragsM; ++x)
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    const int64_t i = i0 + wm + x * kMmaM + h * 8 + group;
                    if (i >= m) continue;
#pragma unroll
                    for (int y = 0; y < kFragsN; ++y)
#pragma unroll
                        for (int c = 0; c < 2; ++c) {
                            const int64_t j = j0 + wn + y * kMmaN + 2 * quad + c;
                            if (j < n) store_scaled(C + (i + j * ldc), alpha, acc[x][y][2 * h + c], beta);
                        }
                }
        }
    }
}

using Kernel = void (*)(bool, bool, int64_t, int64_t, int64_t, double, const double *, int64_t, int64_t,
                        const double *, int64_t, int64_t, double, double *, int64_t, int64_t, int64_t);
// The kernel for a call, by [transa][transb] of the column-major call (A is k-major
// unless transposed, B k-major when transposed), with or without the batch index.
template <bool kBatch>
const Kernel kKernels[2][2] = {
    {kernel<true, false, kBatch>, kernel<true, true, kBatch>},
    {kernel<false, false, kBatch>, kernel<false, true, kBatch>},
};

}  // namespace
}  // namespace gpk::cuda::dmma
