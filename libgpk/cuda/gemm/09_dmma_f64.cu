// Rung 9, FP64 tensor cores: rung 8 does F64 on the FP64 FMA units, one
// multiply-add per instruction per thread. From sm_80 on, the tensor cores run FP64
// too: mma.sync.aligned.m8n8k4.row.col.f64 multiplies an 8x4 by a 4x8 tile into an 8x8
// accumulator across a warp, 256 multiply-adds per instruction, with each product
// rounded as an FMA does (full FP64 accuracy, no lower-precision inputs). On the H100
// that doubles the FP64 rate over the FMA units.
//
// A block of 8 warps computes a 128x64 tile of C, each warp a 32x32 sub-tile as 4x4
// mma tiles (32 accumulators a thread). k-tiles of 16 come in through a 3-stage
// cp.async ring as in rung 8, now all in 16-byte copies: each operand tile is kept in
// its operand's own layout -- k-major (S[p][o]) when the operand is contiguous along
// i or j, o-major (S[o][p]) when it is contiguous along k -- so no copy has to
// transpose, and the fragment loads read element (o, p) at o*so + p*sp for the tile's
// two strides. Rows are padded by 4 doubles, which puts the 16 (o, p) pairs a half-
// warp reads for one fragment (o: lane / 4, p: lane % 4) in 16 different bank pairs
// in either layout.
//
// F64 only. Below sm_80, or where the GPU cannot give a block the shared memory,
// rung 7 runs instead.
#include "gemm_util.cuh"

namespace gpk::cuda {
namespace {

using namespace gemm_util;

constexpr int kWarp = 32;
constexpr int kTileM = 128, kTileN = 64, kTileK = 16, kStages = 3;
constexpr int kWarpM = 32, kWarpN = 32;
constexpr int kWarpsM = kTileM / kWarpM;
constexpr int kThreads = kWarpsM * (kTileN / kWarpN) * kWarp;
constexpr int kMmaM = 8, kMmaN = 8, kMmaK = 4;              // m8n8k4
constexpr int kFragsM = kWarpM / kMmaM, kFragsN = kWarpN / kMmaN;  // mma tiles per warp
constexpr int kPad = 4;                                     // doubles per row, see the top
constexpr int kLanes = 2;                                   // doubles per 16-byte copy

// Elements of one operand's tile in either layout (k-major or o-major), padded.
constexpr int tile_elems(int outer) {
    const int k_major = kTileK * (outer + kPad), o_major = outer * (kTileK + kPad);
    return k_major > o_major ? k_major : o_major;
}
constexpr int kStageA = tile_elems(kTileM), kStage = kStageA + tile_elems(kTileN);
constexpr size_t kSmemBytes = size_t(kStages) * kStage * sizeof(double);

static_assert(kTileM % kWarpM == 0 && kTileN % kWarpN == 0, "warp tiles cover the block tile");
static_assert(kWarpM % kMmaM == 0 && kWarpN % kMmaN == 0 && kTileK % kMmaK == 0, "whole mma tiles");
static_assert(kStages >= 2, "a pipeline needs two buffers at least");
static_assert(kTileM * kTileK % (kLanes * kThreads) == 0 && kTileN * kTileK % (kLanes * kThreads) == 0,
              "the tiles split evenly over the threads, in 16-byte copies");
static_assert((kTileM + kPad) % kLanes == 0 && (kTileN + kPad) % kLanes == 0 && (kTileK + kPad) % kLanes == 0 &&
                  kStageA % kLanes == 0 && kStage % kLanes == 0,
              "every 16-byte copy lands on a 16-byte boundary");

// Strides of element (o, p) of a tile: k-major when the operand is contiguous along o.
struct TileStrides {
    int so, sp;
};
__host__ __device__ constexpr TileStrides tile_strides(int outer, bool contiguous_o) {
    return contiguous_o ? TileStrides{1, outer + kPad} : TileStrides{kTileK + kPad, 1};
}

// S(o, p) = op(X)(o0 + o, p0 + p) for the kOuter x kTileK tile at (o0, p0), zero
// outside the outer x k operand, as copies in flight. op(X)(o, p) is X[o + p*ld] when
// contiguous along o, else X[p + o*ld]; either way pairs of elements consecutive in
// memory are consecutive in S, one 16-byte copy when X allows it (`vec`) and both lie
// inside the operand.
template <int kOuter>
__device__ __forceinline__ void load_tile(double *S, const double *__restrict__ X, int64_t ld, bool contiguous_o,
                                          bool vec, int64_t o0, int64_t outer, int64_t p0, int64_t k, int tid) {
    const TileStrides st = tile_strides(kOuter, contiguous_o);
    // The run of the pair: along o (length kOuter) or along p (length kTileK).
    const int run = contiguous_o ? kOuter : kTileK;
#pragma unroll
    for (int r = 0; r < kOuter * kTileK / kLanes / kThreads; ++r) {
        const int e = tid + r * kThreads;
        const int along = e % (run / kLanes) * kLanes, across = e / (run / kLanes);
        const int o = contiguous_o ? along : across, p = contiguous_o ? across : along;
        const int64_t go = o0 + o, gp = p0 + p;
        const int64_t off = contiguous_o ? go + gp * ld : gp + go * ld;
        // Element q of the pair is at (o + q, p) or (o, p + q).
        const bool first = go < outer && gp < k;
        const bool second = contiguous_o ? go + 1 < outer && gp < k : go < outer && gp + 1 < k;
        double *dst = S + (o * st.so + p * st.sp);
        if (vec && first && second) {
            copy_async<16>(dst, X + off, true);
        } else {
            const int step = contiguous_o ? st.so : st.sp;  // == 1: the pair is adjacent in S too
            copy_async<8>(dst, first ? X + off : X, first);
            copy_async<8>(dst + step, second ? X + off + 1 : X, second);
        }
    }
}

__device__ __forceinline__ void dmma(double &d0, double &d1, double a, double b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};\n"
                 : "+d"(d0), "+d"(d1)
                 : "d"(a), "d"(b));
#else
    (void)d0, (void)d1, (void)a, (void)b;  // not compiled into any kernel below sm_80
#endif
}

__global__ void __launch_bounds__(kThreads)
    gemm_dmma_f64_kernel(bool transa, bool transb, bool vec_a, bool vec_b, int64_t m, int64_t n, int64_t k,
                         double alpha, const double *__restrict__ A, int64_t lda, const double *__restrict__ B,
                         int64_t ldb, double beta, double *__restrict__ C, int64_t ldc) {
    if (!kSm80Code) {  // the launcher runs rung 7 below sm_80
        __trap();
        return;
    }
    extern __shared__ __align__(16) unsigned char smem_bytes[];
    double *smem = reinterpret_cast<double *>(smem_bytes);

    const int tid = threadIdx.x;
    const int warp = tid / kWarp, lane_id = tid % kWarp;
    const int wm = warp % kWarpsM * kWarpM, wn = warp / kWarpsM * kWarpN;
    // Fragment coordinates (PTX ISA, m8n8k4 .f64): A holds (row lane/4, k lane%4), B
    // (k lane%4, col lane/4), the accumulator (row lane/4, cols 2*(lane%4) + {0, 1}).
    const int group = lane_id / 4, quad = lane_id % 4;
    const bool a_k_major = !transa, b_k_major = transb;  // contiguous along i (j)
    const TileStrides sa = tile_strides(kTileM, a_k_major), sb = tile_strides(kTileN, b_k_major);
    const int64_t k_tiles = (k + kTileK - 1) / kTileK;
    const int64_t tiles_m = (m + kTileM - 1) / kTileM, tiles_n = (n + kTileN - 1) / kTileN;

    for (int64_t tj = blockIdx.y; tj < tiles_n; tj += gridDim.y) {
        for (int64_t ti = blockIdx.x; ti < tiles_m; ti += gridDim.x) {
            const int64_t i0 = ti * kTileM, j0 = tj * kTileN;
            double acc[kFragsM][kFragsN][2];
#pragma unroll
            for (int x = 0; x < kFragsM; ++x)
#pragma unroll
                for (int y = 0; y < kFragsN; ++y) acc[x][y][0] = acc[x][y][1] = 0.0;

            // The ring of rung 8: prologue of kStages - 1 groups, then one group per tile.
#pragma unroll
            for (int s = 0; s < kStages - 1; ++s) {
                if (s < k_tiles) {
                    load_tile<kTileM>(smem + s * kStage, A, lda, a_k_major, vec_a, i0, m, s * kTileK, k, tid);
                    load_tile<kTileN>(smem + s * kStage + kStageA, B, ldb, b_k_major, vec_b, j0, n, s * kTileK, k,
                                      tid);
                }
                copy_commit();
            }
            for (int64_t t = 0; t < k_tiles; ++t) {
                // Tile t has landed for this thread; the barrier makes it every thread's
                // and frees the stage of tile t - 1 for refilling.
                copy_wait<kStages - 2>();
                __syncthreads();
                const int64_t next = t + kStages - 1;
                if (next < k_tiles) {
                    double *stage = smem + static_cast<int>(next % kStages) * kStage;
                    load_tile<kTileM>(stage, A, lda, a_k_major, vec_a, i0, m, next * kTileK, k, tid);
                    load_tile<kTileN>(stage + kStageA, B, ldb, b_k_major, vec_b, j0, n, next * kTileK, k, tid);
                }
                copy_commit();

                const double *as = smem + static_cast<int>(t % kStages) * kStage;
                const double *bs = as + kStageA;
#pragma unroll
                for (int kk = 0; kk < kTileK; kk += kMmaK) {
                    double a[kFragsM], b[kFragsN];
#pragma unroll
                    for (int x = 0; x < kFragsM; ++x)
                        a[x] = as[(wm + x * kMmaM + group) * sa.so + (kk + quad) * sa.sp];
#pragma unroll
                    for (int y = 0; y < kFragsN; ++y)
                        b[y] = bs[(wn + y * kMmaN + group) * sb.so + (kk + quad) * sb.sp];
#pragma unroll
                    for (int x = 0; x < kFragsM; ++x)
#pragma unroll
                        for (int y = 0; y < kFragsN; ++y) dmma(acc[x][y][0], acc[x][y][1], a[x], b[y]);
                }
            }
            // Only empty groups can be pending; the barrier keeps the next tile's
            // prologue from refilling stages that slower warps are still reading.
            copy_wait<0>();
            __syncthreads();

#pragma unroll
            for (int x = 0; x < kFragsM; ++x) {
                const int64_t i = i0 + wm + x * kMmaM + group;
                if (i >= m) continue;
#pragma unroll
                for (int y = 0; y < kFragsN; ++y)
#pragma unroll
                    for (int h = 0; h < 2; ++h) {
                        const int64_t j = j0 + wn + y * kMmaN + 2 * quad + h;
                        if (j < n) store_c(C + (i + j * ldc), alpha, acc[x][y][h], beta);
                    }
            }
        }
    }
}

gpk_status gemm(gpk_context &ctx, const GemmArgs &args) {
    int major = 0;
    GPK_FORWARD_IF_ERROR(device_attribute(ctx, cudaDevAttrComputeCapabilityMajor, &major));
    if (major < 8) return gemm_register_2d(ctx, args);
    bool fits = false;
    GPK_FORWARD_IF_ERROR(allow_shared(ctx, gemm_dmma_f64_kernel, kSmemBytes, &fits));
    if (!fits) return gemm_register_2d(ctx, args);
    const double *A = static_cast<const double *>(args.A);
    const double *B = static_cast<const double *>(args.B);
    gemm_dmma_f64_kernel<<<tile_grid(args.m, args.n, kTileM, kTileN), kThreads, kSmemBytes, stream(ctx)>>>(
        args.transa, args.transb, vec16_ok<double>(A, args.lda), vec16_ok<double>(B, args.ldb), args.m, args.n,
        args.k, args.alpha, A, args.lda, B, args.ldb, args.beta, static_cast<double *>(args.C), args.ldc);
    GPK_LAUNCH_CHECK(ctx, "gemm_dmma_f64_kernel");
    return GPK_SUCCESS;
}

}  // namespace

gpk_status gemm_dmma_f64(gpk_context &ctx, const GemmArgs &args) {
    GPK_RETURN_ERROR_IF(args.dtype != GPK_F64, &ctx, GPK_ERROR_NOT_SUPPORTED,
                        "gemm variant \"dmma_f64\" supports F64 only");
    return gemm(ctx, args);
}

}  // namespace gpk::cuda
