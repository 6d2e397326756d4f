// Rung 15, FP8 wgmma: gpk_gemm_ex and gpk_gemm_blockscaled with E4M3 / E5M2 operands
// (any mix) on Hopper's FP8 tensor cores, at twice their 16-bit rate. The machinery
// is rung 12's (12_wgmma_ws.cu; both build on the headers of wgmma/): a persistent,
// warp-specialised kernel whose producer warpgroup feeds a ring of shared-memory stages
// through TMA, in the 128-byte swizzle, to two consumer warpgroups that each own 64
// rows of a 128 x 128 tile; clusters of
// two blocks on neighbouring tile rows share each Y tile by multicast; 16-bit C with
// beta == 0 leaves through TMA stores, anything else through the vector epilogue
// (alpha and beta in F32, C never read when beta == 0). What FP8 changes:
//
// * Operands. FP8 wgmma reads both operands k-major from shared memory (no transpose
//   bits, unlike 16-bit wgmma). The TN form, after normalisation X = op(B)^T and
//   Y = op(A) both k-contiguous, with pointers and leading dimensions on 16 bytes, is
//   read in place; any other operand is packed once into k-major, zero-padded
//   workspace (wgmma/fp8_pack.cuh; O(n^2) bytes against O(n^3) products) and the
//   same kernel runs on the copy.
// * Promotion. The FP8 tensor cores keep their running sum at reduced precision (about
//   14 bits), so, as DeepGEMM does, a stage is one 128-k block: its four
//   m64n128k32 wgmma start a fresh partial sum (scale-d 0) in wgmma registers, which
//   are then added into the F32 accumulators in registers. No partial sum spans more
//   than 128 products, the contract's bound. Rather than stall on each block (wait,
//   add, issue the next), a warpgroup keeps two sets of partial sums: the next block
//   issues into one set while the other is promoted, so the tensor cores hold a
//   queued group through three promotions in four (64 + 2 x 64 accumulator registers
//   per thread, which is why tiles are 128 wide and not 256).
// * Block scales (DeepSeek-V3's 1 x 128 along k for op(A)'s rows, 128 x 128 for
//   op(B)): the promotion multiplies each block's partial sum by sa(row, q) *
//   sb(block, q). A 128-row tile covers one 128-block of the block-scaled side; the
//   per-row side runs along the tile's rows (p: two per thread at each promotion) or
//   its columns (q: 32 per thread), a constant of the kernel (ROWP). A column-major call
//   with 1 x 128 scales on op(A) would have them along q; where its C leaves through
//   TMA stores it runs turned, op(A) as X, and the stores write D column-major. A
//   second warp of the producer warpgroup copies each stage's scales into shared
//   memory beside it (cp.async) and, two stages later, multiplies them into the 128
//   products of the stage, laid out in the order the consumers read them (32 per
//   thread per column of D in four 16-byte loads, two per row), then completes the
//   stage's barrier with the TMA bytes.
//
// gpk-arch: 90a, the target of wgmma, setmaxnreg, clusters and TMA: the kernel body
// exists only in sm_90a code, and the launcher answers NOT_SUPPORTED on any other GPU or binary.
#include "wgmma/common.cuh"
#include "wgmma/config.cuh"
#include "wgmma/fp8_pack.cuh"
#include "wgmma/fp8_ptx.cuh"
#include "wgmma/launch.cuh"
#include "wgmma/maps.cuh"
#include "wgmma/plan.cuh"
#include "wgmma/ptx.cuh"

#include <cuda.h>

#include <atomic>
#include <cstdint>
#include <type_traits>

namespace gpk::cuda::tc {
namespace fp8 {

// The family's block (128-row tiles, three warpgroups, clusters of two), rows of 128
// bytes (128 FP8 elements of k, the swizzle's width), instructions and planning
// (wgmma/): this rung adds its tile, its ring, its scales and its kernel.
using namespace wgmma;

constexpr int BQ = 128;
constexpr int KE = 128;  // elements of k per stage: one promotion block
constexpr int STAGE_BYTES = X_BYTES + BQ * ROW_BYTES;
// The epilogues' staging (config.cuh): F32 rows of 32 columns padded by 16 bytes for the
// vector epilogue, or 64 x 64 boxes of 16-bit C for the TMA store. A consumer's 64 x 128
// part of a tile is two boxes: per-tensor, each through a slot of its own; block-scaled,
// one after the other through one slot, which leaves room for the same six stages beside
// the scales.
constexpr int OUT_BOXES = BQ / OUT_BOX;
__host__ __device__ constexpr int out_slots(bool scaled) { return scaled ? 1 : OUT_BOXES; }
__host__ __device__ constexpr int out_bytes(bool scaled) {
    return 2 * (out_slots(scaled) * OUT_BOX_BYTES > EPI_BYTES ? out_slots(scaled) * OUT_BOX_BYTES : EPI_BYTES);
}
// A stage's scales: the per-row side's 128 values and the block's one as they are copied
// (RAW_FLOATS), then the 128 products the consumers read (sa * sb, each the scale of one
// row or column of the tile's D). Per row of D (rows_on_p) a thread reads two products, in
// order; per column it reads 32, at columns 8j + 2(lane % 4) + e (j < 16, e < 2), so the
// products lie in four runs of 32, run l holding lane % 4 == l's in the order it reads
// them, four loads of 16 bytes each, the runs 36 floats apart so that the four runs'
// loads fall in different banks.
constexpr int RAW_FLOATS = 132, RUN_FLOATS = 36;
constexpr int SCALE_FLOATS = RAW_FLOATS + 4 * RUN_FLOATS;
constexpr int SCALE_BYTES = SCALE_FLOATS * 4;
__host__ __device__ constexpr int product_at(int i, bool rows_on_p) {
    return RAW_FLOATS + (rows_on_p ? i : (i / 2 % 4) * RUN_FLOATS + (i / 8) * 2 + i % 2);
}
constexpr int STAGES = 6;
// The scale warp multiplies a stage's scales this many stages after it issued their
// copies: the copies' latency is then spent on the stages between.
constexpr int SCALE_LAG = 2;
// While the scale warp waits for a stage to be released, it holds SCALE_LAG stages not yet
// full; a consumer releases a stage once it has issued the next one, so the stage the warp
// waits for is released only if the stage after it is full.
static_assert(SCALE_LAG + 2 <= STAGES, "the ring's stages released while the scale warp waits");
__host__ __device__ constexpr int smem_bytes(bool scaled) {
    return STAGES * STAGE_BYTES + out_bytes(scaled) + (scaled ? STAGES * SCALE_BYTES : 0) + 1024;
}
static_assert(smem_bytes(false) <= 227 * 1024 && smem_bytes(true) <= 227 * 1024, "the block's 227 KB");

// Block scales in the normal form: the side whose group is one row (`rows`, indexed by
// p when rows_on_p, else by q) and the side of 128-blocks (`blocks`, by the other).
struct Scales {
    const float *rows, *blocks;
    int64_t rows_ld, blocks_ld;  // floats between consecutive blocks of k
    int rows_on_p;
};

__device__ __forceinline__ void next_stage(int &stage, uint32_t &phase, int n) {
    if (++stage == n) {
        stage = 0;
        phase ^= 1;
    }
}

// D (P x Q) = X (P x K) Y^T (Q x K), both k-major FP8 through their tensor maps; the
// epilogue writes C (ctype 0 F32, 1 F16, 2 BF16) through the vector path (tma_store 0)
// or TMA stores through map_c, D row-major (1: q contiguous, the normal form's D = C^T)
// or column-major (2: p contiguous, the turned form's D = C). ROWP: the block scales'
// per-row side runs along p (a constant: both promotions in one kernel spill).
template <int XT, int YT, bool SCALED, bool ROWP = false>
__global__ void __launch_bounds__(THREADS, 1)
    kernel(const __grid_constant__ CUtensorMap map_x, const __grid_constant__ CUtensorMap map_y,
           const __grid_constant__ CUtensorMap map_c, int64_t P, int64_t Q, int64_t K, Epilogue ep, int ctype,
           int tma_store, Scales sc) {
#ifdef GPK_SM90A_CODE
    constexpr int OUT_BYTES = out_bytes(SCALED), SLOTS = out_slots(SCALED);
    // Each consumer warpgroup releases a stage once in each block of the cluster; with
    // block scales, each of its warps, whose ordinary loads of the stage's scales no other
    // warp's arrival covers (its wgmma reads, one warp's wait does).
    constexpr int ARRIVALS = (SCALED ? 4 : 1) * 2 * CLUSTER;
    extern __shared__ uint8_t smem_raw[];
    __shared__ __align__(8) uint64_t full[STAGES], empty[STAGES];
    const uint32_t raw = static_cast<uint32_t>(__cvta_generic_to_shared(smem_raw));
    const uint32_t ring = (raw + 1023) & ~1023u;
    const uint32_t full0 = static_cast<uint32_t>(__cvta_generic_to_shared(&full[0]));
    const uint32_t empty0 = static_cast<uint32_t>(__cvta_generic_to_shared(&empty[0]));
    uint8_t *const out_area = smem_raw + (ring - raw) + STAGES * STAGE_BYTES;
    float *const scales = reinterpret_cast<float *>(out_area + OUT_BYTES);

    if (threadIdx.x == 0) {
        asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&map_x)) : "memory");
        asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&map_y)) : "memory");
        if (tma_store) asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&map_c)) : "memory");
        for (int s = 0; s < STAGES; ++s) {
            // A stage is full once its bytes have landed and, block-scaled, the scale warp's
            // 32 lanes have written its products.
            mbar_init(full0 + 8 * s, SCALED ? 1 + 32 : 1);
            mbar_init(empty0 + 8 * s, ARRIVALS);
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    uint32_t rank;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
    const int cid = blockIdx.x / CLUSTER, nclusters = gridDim.x / CLUSTER;
    const int tiles_p = int((P + BP - 1) / BP), tiles_q = int((Q + BQ - 1) / BQ);
    const int pairs_p = (tiles_p + CLUSTER - 1) / CLUSTER, tiles = pairs_p * tiles_q;
    const int nk = int((K + KE - 1) / KE);
    const int wg = threadIdx.x / 128;
    // Both blocks' barriers exist before either multicasts into the other.
    cluster_sync_after_init();

    if (wg == 0) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
        const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
        if (threadIdx.x == 0) {
            int stage = 0;
            uint32_t phase = 0;
            for (int t = cid; t < tiles; t += nclusters) {
                int tp, tq;
                tile_of<band_rows(BQ)>(t, pairs_p, tiles_q, &tp, &tq);
                tp = tp * CLUSTER + int(rank);
                for (int kb = 0; kb < nk; ++kb) {
                    // A fresh barrier counts its previous phase (parity 1) as completed.
                    mbar_wait(empty0 + 8 * stage, phase ^ 1);
                    const uint32_t bar = full0 + 8 * stage, xs = ring + stage * STAGE_BYTES, ys = xs + X_BYTES;
                    mbar_expect_tx(bar, STAGE_BYTES);
                    tma_load_2d(xs, &map_x, bar, kb * KE, tp * BP);
                    // This block's half of the Y tile, into both blocks.
                    constexpr int half = BQ / CLUSTER;
                    tma_load_2d_mc(ys + int(rank) * half * ROW_BYTES, &map_y, bar, kb * KE, tq * BQ + int(rank) * half,
                                   uint16_t((1u << CLUSTER) - 1));
                    next_stage(stage, phase, STAGES);
                }
            }
            // Every stage released by the consumers of both blocks before the block leaves,
            // so that no arrive of the other block on this block's barriers is under way.
            for (int i = 0; i < STAGES; ++i) {
                mbar_wait(empty0 + 8 * stage, phase ^ 1);
                next_stage(stage, phase, STAGES);
            }
        } else if (SCALED && warp == 1) {
            // The scales of each stage: this tile's 128 values of the per-row side (0 past
            // the matrix) and its block's value, copied asynchronously (cp.async, zero-filled
            // where nothing is read) as the ring frees the stage, and SCALE_LAG stages later,
            // once they have landed, multiplied into the stage's 128 products (product_at).
            // The consumers then apply one product per row or column of D at each promotion
            // instead of two scales. What a lane reads is fixed per tile but for the block
            // of k, so a stage costs its five copies and little else: this warp has 40
            // registers, and when it recomputed its addresses per stage it issued too
            // slowly to keep the ring full (the consumers waited on full stages;
            // docs/PERFORMANCE.md, section "wgmma_fp8 (gemm rung 15)").
            int stage = 0, pending = 0;
            uint32_t phase = 0;
            const uint32_t sbase = static_cast<uint32_t>(__cvta_generic_to_shared(scales)) + 4 * lane;
            // Multiplies stage st's scales once the copies of the oldest pending stage (st)
            // have landed, at most `behind` groups issued after it still in flight.
            auto finish = [&](int st, auto behind) {
                asm volatile("cp.async.wait_group %0;\n" ::"n"(decltype(behind)::value) : "memory");
                // Lane 0's copy of the block's scale, seen by every lane.
                __syncwarp();
                float *sl = scales + st * SCALE_FLOATS;
                const float b = sl[128];
#pragma unroll
                for (int j = 0; j < 4; ++j) {
                    const int i = lane + 32 * j;
                    sl[product_at(i, ROWP)] = sl[i] * b;
                }
                // Each lane's arrive publishes its own products.
                mbar_arrive(full0 + 8 * st);
            };
            for (int t = cid; t < tiles; t += nclusters) {
                int tp, tq;
                tile_of<band_rows(BQ)>(t, pairs_p, tiles_q, &tp, &tq);
                tp = tp * CLUSTER + int(rank);
                const int base = ROWP ? tp * BP : tq * BQ;
                const int len = int(ROWP ? P : Q);
                // The block of the other side; a block past the last tile row has none. A
                // lane's rows past the matrix read row 0 with size 0 (zeros).
                const int blk = ROWP ? tq * BQ / 128 : tp * BP / 128;
                const bool blk_in = ROWP ? true : int64_t(tp) * BP < P;
                int off[4];
                bool in[4];
#pragma unroll
                for (int j = 0; j < 4; ++j) {
                    in[j] = base + lane + 32 * j < len;
                    off[j] = in[j] ? base + lane + 32 * j : 0;
                }
                for (int kb = 0; kb < nk; ++kb) {
                    mbar_wait(empty0 + 8 * stage, phase ^ 1);
                    const uint32_t s = sbase + stage * SCALE_BYTES;
                    const float *rows = sc.rows + int64_t(kb) * sc.rows_ld;
#pragma unroll
                    for (int j = 0; j < 4; ++j) copy4(s + 128 * j, rows + off[j], in[j]);
                    if (lane == 0)
                        copy4(s + 4 * 128, sc.blocks + int64_t(kb) * sc.blocks_ld + (blk_in ? blk : 0), blk_in);
                    asm volatile("cp.async.commit_group;\n" ::: "memory");
                    if (pending == SCALE_LAG) {
                        const int st = stage >= SCALE_LAG ? stage - SCALE_LAG : stage + STAGES - SCALE_LAG;
                        finish(st, std::integral_constant<int, SCALE_LAG>{});
                    } else {
                        ++pending;
                    }
                    next_stage(stage, phase, STAGES);
                }
            }
            // The stages still pending, oldest first.
            for (; pending > 0; --pending) {
                const int st = stage >= pending ? stage - pending : stage + STAGES - pending;
                finish(st, std::integral_constant<int, 0>{});
            }
        }
    } else {
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
        // Uniform across the warp (a shuffle tells the compiler so), which keeps the
        // descriptors built from it in uniform registers.
        const int c = __shfl_sync(0xffffffffu, wg - 1, 0), t = threadIdx.x - 128 * wg;
        const int lane = t % 32;
        // One thread per warpgroup releases a stage in each block (warp r signals block r);
        // with block scales, one per warp (lane r signals block r).
        const int signal = SCALED ? (lane < CLUSTER ? lane : -1) : (lane == 0 && t / 32 < CLUSTER ? t / 32 : -1);
        int stage = 0;
        uint32_t phase = 0;
        float f[64], acc[2][64];

        // The four wgmma of the next stage into partial-sum set S, as one group; held[S]
        // remembers the stage until the set is promoted.
        int held[2] = {0, 0};
        // 0 at run time (K is never negative), but not to the compiler: the first wgmma of a
        // block then seems to read its set's registers, which keeps each set in the same
        // registers from block to block. Seen as zero, the set's next value could take
        // fresh registers while the old one is still being added, and a third set of 64
        // spills.
        const int keep = K < 0;
        auto issue = [&](auto set) {
            constexpr int S = decltype(set)::value;
            mbar_wait(full0 + 8 * stage, phase);
            const uint32_t xs = ring + stage * STAGE_BYTES;
            const uint64_t da = desc_kmajor(xs + c * 64 * ROW_BYTES), db = desc_kmajor(xs + X_BYTES);
            fence_regs(acc[S]);
            asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
            for (int s = 0; s < 4; ++s)
                wgmma_f8<XT, YT>(acc[S], da + desc_step<true>(s), db + desc_step<true>(s), s > 0 ? 1 : keep);
            asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
            held[S] = stage;
            next_stage(stage, phase, STAGES);
        };
        // Adds partial-sum set S (complete) into the F32 accumulators, scaled by the block
        // scales of its stage, then releases that stage in both blocks.
        auto promote = [&](auto set) {
            constexpr int S = decltype(set)::value;
            const int st = held[S];
            fence_regs(acc[S]);
            if constexpr (SCALED) {
                const float *s = scales + st * SCALE_FLOATS;
                if constexpr (ROWP) {
                    // This thread's rows of the tile: fragment rows g and g + 8 of its warp.
                    const int r0 = c * 64 + (t / 32) * 16 + lane / 4;
                    const float s0 = s[product_at(r0, true)], s1 = s[product_at(r0 + 8, true)];
#pragma unroll
                    for (int j = 0; j < 16; ++j) {
                        f[4 * j] = fmaf(s0, acc[S][4 * j], f[4 * j]);
                        f[4 * j + 1] = fmaf(s0, acc[S][4 * j + 1], f[4 * j + 1]);
                        f[4 * j + 2] = fmaf(s1, acc[S][4 * j + 2], f[4 * j + 2]);
                        f[4 * j + 3] = fmaf(s1, acc[S][4 * j + 3], f[4 * j + 3]);
                    }
                } else {
                    // This thread's 32 columns' products, in the order it applies them:
                    // columns 8j + 2(lane % 4) and the one after, for j and j + 1.
                    const float4 *run = reinterpret_cast<const float4 *>(s + product_at(2 * (lane & 3), false));
#pragma unroll
                    for (int h = 0; h < 8; ++h) {
                        // One run's four products at a time: all 32 at once beside the 192
                        // accumulators would spill.
                        float4 v;
                        asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];\n"
                                     : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                                     : "r"(static_cast<uint32_t>(__cvta_generic_to_shared(run + h))));
                        float *fj = f + 8 * h;
                        const float *aj = acc[S] + 8 * h;
                        fj[0] = fmaf(v.x, aj[0], fj[0]);
                        fj[1] = fmaf(v.y, aj[1], fj[1]);
                        fj[2] = fmaf(v.x, aj[2], fj[2]);
                        fj[3] = fmaf(v.y, aj[3], fj[3]);
                        fj[4] = fmaf(v.z, aj[4], fj[4]);
                        fj[5] = fmaf(v.w, aj[5], fj[5]);
                        fj[6] = fmaf(v.z, aj[6], fj[6]);
                        fj[7] = fmaf(v.w, aj[7], fj[7]);
                    }
                }
            } else {
#pragma unroll
                for (int i = 0; i < 64; ++i) f[i] += acc[S][i];
            }
            // The scales are read: the stage may be refilled.
            mbar_arrive_cluster_if(empty0 + 8 * st, signal < 0 ? 0u : uint32_t(signal), signal >= 0);
        };
        for (int tile = cid; tile < tiles; tile += nclusters) {
            int tp, tq;
            tile_of<band_rows(BQ)>(tile, pairs_p, tiles_q, &tp, &tq);
            tp = tp * CLUSTER + int(rank);
#pragma unroll
            for (int i = 0; i < 64; ++i) f[i] = 0.0f;
            // Four blocks at a time: each block's group is issued before the one before it
            // is waited for and promoted, so the tensor cores have a queued group while the
            // warpgroup adds; the fourth is waited for with nothing behind it. Across the
            // loop's back edge no group is in flight: the compiler can then prove which set
            // each wait completes, where a group kept in flight across iterations makes it
            // serialise every wgmma of the kernel. The second warpgroup first takes two blocks
            // alone, so that the two drain at different blocks: while one drains, the other's
            // groups keep the tensor cores busy (the two read the same stages in step, and
            // drains at the same blocks would leave the tensor cores idle at each).
            constexpr auto S0 = std::integral_constant<int, 0>{};
            constexpr auto S1 = std::integral_constant<int, 1>{};
            int kb = 0;
            if (c == 1 && nk >= 6) {
                issue(S0);
                issue(S1);
                wgmma_wait<1>();
                promote(S0);
                wgmma_wait<0>();
                promote(S1);
                kb = 2;
            }
            for (; kb + 4 <= nk; kb += 4) {
                issue(S0);
                issue(S1);
                wgmma_wait<1>();
                promote(S0);
                issue(S0);
                wgmma_wait<1>();
                promote(S1);
                issue(S1);
                wgmma_wait<1>();
                promote(S0);
                wgmma_wait<0>();
                promote(S1);
            }
            for (; kb < nk; ++kb) {
                issue(S0);
                wgmma_wait<0>();
                promote(S0);
            }

            const int64_t p_base = int64_t(tp) * BP + c * 64, q_base = int64_t(tq) * BQ;
            if (tma_store) {
                // Two 64 x 64 boxes through this consumer's slots: the copy engine writes C while
                // the warpgroup goes on to its next tile.
                const uint32_t obuf = ring + STAGES * STAGE_BYTES + c * SLOTS * OUT_BOX_BYTES;
#pragma unroll
                for (int h = 0; h < OUT_BOXES; ++h) {
                    const uint32_t slot = obuf + (h % SLOTS) * OUT_BOX_BYTES;
                    // The slot is free once the store that last read it has.
                    if (t == 0) bulk_wait_read<SLOTS - 1>();
                    asm volatile("bar.sync %0, 128;\n" ::"r"(1 + c) : "memory");
                    if (ctype == 1) stage_box<__half, BQ>(f, slot, h, ep.alpha, t, tma_store == 2);
                    else stage_box<__nv_bfloat16, BQ>(f, slot, h, ep.alpha, t, tma_store == 2);
                    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
                    asm volatile("bar.sync %0, 128;\n" ::"r"(1 + c) : "memory");
                    if (t == 0) {
                        if (tma_store == 2) tma_store_2d(&map_c, slot, int(p_base), int(q_base) + h * OUT_BOX);
                        else tma_store_2d(&map_c, slot, int(q_base) + h * OUT_BOX, int(p_base));
                        bulk_commit();
                    }
                }
            } else {
                uint8_t *buf = out_area + c * (OUT_BYTES / 2);
                if (ctype == 0) store_tile<float, BQ>(f, buf, 1 + c, ep, P, Q, p_base, q_base, t);
                else if (ctype == 1) store_tile<__half, BQ>(f, buf, 1 + c, ep, P, Q, p_base, q_base, t);
                else store_tile<__nv_bfloat16, BQ>(f, buf, 1 + c, ep, P, Q, p_base, q_base, t);
            }
        }
        // Shared memory stays until the last stores have read it.
        if (t == 0) bulk_wait_read<0>();
    }
#endif
}

// ---- the call ----------------------------------------------------------------------

// One FP8 call in the rungs' raw form, column-major (the library swaps row-major calls
// before they arrive, scales and formats with them). g.dtype is not read.
struct GemmF8 {
    GemmTc g;
    bool a_e5m2, b_e5m2;  // op(A)'s and op(B)'s format: E5M2, else E4M3
    int c_type;           // C: 0 F32, 1 F16, 2 BF16
    // Block scales (both null: per-tensor, in alpha): sa(i, q) = scale_a[q * scale_a_ld
    // + i / scale_a_group], sb(j, q) = scale_b[q * scale_b_ld + j / scale_b_group].
    const float *scale_a, *scale_b;
    int64_t scale_a_group, scale_a_ld, scale_b_group, scale_b_ld;
};

inline size_t c_size(int c_type) { return c_type == 0 ? 4 : 2; }

// Workspace bytes for the operands that are packed: every one not k-major with a
// 16-byte aligned pointer and leading dimension.
inline size_t workspace_bytes(const GemmF8 &f) {
    const Normal nf = normal_form(f.g);
    if (nf.P == 0 || nf.Q == 0 || nf.K == 0) return 0;
    return pack_bytes(nf, 1, 1);
}

// Why this rung cannot take the call, or null: the parts of a call it does not take.
inline const char *refusal(const GemmF8 &f) {
    if (f.c_type < 0 || f.c_type > 2) return "C must be F32, F16 or BF16";
    if ((f.scale_a == nullptr) != (f.scale_b == nullptr)) return "block scales come as a pair (scale_a and scale_b)";
    if (f.scale_a != nullptr && !((f.scale_a_group == 1 && f.scale_b_group == 128) ||
                                  (f.scale_a_group == 128 && f.scale_b_group == 1)))
        return "block scales must be 1 x 128 on one operand and 128 x 128 on the other";
    if (f.g.m > 0x7fffffff || f.g.n > 0x7fffffff || f.g.k > 0x7fffffff) return "m, n and k must stay below 2^31";
    // The kernel counts its tiles (pairs of 128-row tiles along n by 128-wide ones along m,
    // or turned, along m by n) in an int.
    if (((f.g.n + 2 * BP - 1) / (2 * BP)) * ((f.g.m + BQ - 1) / BQ) > 0x7fffffff ||
        ((f.g.m + 2 * BP - 1) / (2 * BP)) * ((f.g.n + BQ - 1) / BQ) > 0x7fffffff)
        return "more than 2^31 tiles";
    return nullptr;
}

template <int XT, int YT, bool SCALED, bool ROWP>
Result launch(const GemmF8 &f, const Normal &nf, const CUtensorMap &mx, const CUtensorMap &my, const CUtensorMap &mc,
              int tma_store, const Scales &sc, int dev) {
    constexpr int SMEM = smem_bytes(SCALED);
    auto kern = kernel<XT, YT, SCALED, ROWP>;
    // Per device, once: the shared-memory opt-in and how many clusters fit at once.
    static std::atomic<int> fit_of[64];
    int fit = dev >= 0 && dev < 64 ? fit_of[dev].load() : 0;
    cudaLaunchAttribute attr{};
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = CLUSTER;
    attr.val.clusterDim.y = 1;
    attr.val.clusterDim.z = 1;
    cudaLaunchConfig_t cfg{};
    cfg.blockDim = dim3(THREADS);
    cfg.dynamicSmemBytes = SMEM;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    if (fit == 0) {
        int sms = 0;
        cudaError_t e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
        if (e != cudaSuccess) return cuda_failed(e, "gemm rung wgmma_fp8: querying the device");
        e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM);
        if (e != cudaSuccess) return cuda_failed(e, "gemm rung wgmma_fp8: shared memory");
        fit = sms / CLUSTER;
        cfg.gridDim = dim3(CLUSTER * fit);
        int n = 0;
        if (cudaOccupancyMaxActiveClusters(&n, kern, &cfg) == cudaSuccess && n > 0 && n < fit) fit = n;
        (void)cudaGetLastError();
        if (fit < 1) return not_supported("gemm rung wgmma_fp8: no cluster of two blocks fits on the GPU");
        if (dev >= 0 && dev < 64) fit_of[dev].store(fit);
    }
    cfg.gridDim = dim3(CLUSTER * int(grid_clusters(cluster_tiles(nf, BQ), fit)));
    cfg.stream = f.g.stream;
    const size_t cs = c_size(f.c_type);
    cudaError_t e = cudaLaunchKernelEx(&cfg, kern, mx, my, mc, nf.P, nf.Q, nf.K, make_epilogue(f.g, cs), f.c_type,
                                       tma_store, sc);
    if (e == cudaSuccess) e = cudaGetLastError();
    return e == cudaSuccess ? ok() : cuda_failed(e, "gemm rung wgmma_fp8: launch");
}

// X's and Y's formats (xt, yt: 1 E5M2, 0 E4M3) as kernel constants.
template <bool SCALED, bool ROWP = false>
Result by_formats(const GemmF8 &f, const Normal &nf, int xt, int yt, const CUtensorMap &mx, const CUtensorMap &my,
                  const CUtensorMap &mc, int ts, const Scales &sc, int dev) {
    if (xt == 0 && yt == 0) return launch<0, 0, SCALED, ROWP>(f, nf, mx, my, mc, ts, sc, dev);
    if (xt == 0) return launch<0, 1, SCALED, ROWP>(f, nf, mx, my, mc, ts, sc, dev);
    if (yt == 0) return launch<1, 0, SCALED, ROWP>(f, nf, mx, my, mc, ts, sc, dev);
    return launch<1, 1, SCALED, ROWP>(f, nf, mx, my, mc, ts, sc, dev);
}

// C = beta C where the call has no product (k == 0, alpha == 0).
inline Result no_product(const GemmF8 &f, const Normal &nf) {
    if (f.c_type == 0) return scale_c<float>(f.g, nf);
    if (f.c_type == 1) return scale_c<__half>(f.g, nf);
    return scale_c<__nv_bfloat16>(f.g, nf);
}

inline Result run(const GemmF8 &f) {
    const Normal nf = normal_form(f.g);
    if (const char *why = refusal(f)) return not_supported(why);
    if (nf.P == 0 || nf.Q == 0) return ok();
    if (nf.K == 0 || f.g.alpha == 0.0f) return no_product(f, nf);
    int dev = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e != cudaSuccess) return cuda_failed(e, "gemm rung wgmma_fp8: querying the device");
    bool have = false;
    Result r = sm90a_available(dev, &have);
    if (r.status == Status::CudaError) return cuda_failed(r.cuda, "gemm rung wgmma_fp8: probing for sm_90a code");
    if (r.status != Status::Ok || !have)
        return not_supported("gemm rung wgmma_fp8 needs an sm_90 GPU (H100/H200) and sm_90a code in the build");
    if (!encode_fn()) return not_supported("gemm rung wgmma_fp8: the driver lacks cuTensorMapEncodeTiled");

    // 16-bit C with beta == 0 on 16 bytes leaves through TMA stores.
    CUtensorMap mx, my, mc{};
    const bool ts = f.c_type == 1   ? make_map_c<__half>(&mc, f.g, nf)
                    : f.c_type == 2 ? make_map_c<__nv_bfloat16>(&mc, f.g, nf)
                                    : false;
    // In the normal form q runs along op(A)'s rows, so 1 x 128 scales on op(A) would be 32
    // per consumer thread at each promotion (2 along p). Such calls with TMA stores run
    // turned instead: X = op(A), Y = op(B)^T, D = C column-major (tma_store 2).
    const bool turned = f.scale_a != nullptr && f.scale_a_group == 1 && ts;
    Normal nk = nf;
    if (turned) {
        nk.P = nf.Q, nk.Q = nf.P;
        nk.X = nf.Y, nk.Y = nf.X;
    }
    // Both operands k-major on 16 bytes, in place or packed.
    Prepared pr{};
    r = prepare_f8(nk, f.g, &pr);
    if (r.status != Status::Ok) return r;
    if (!encode_2d(&mx, CU_TENSOR_MAP_DATA_TYPE_UINT8, pr.X, cuuint64_t(nk.K), cuuint64_t(nk.P), cuuint64_t(pr.ldx),
                   KE, BP, CU_TENSOR_MAP_L2_PROMOTION_L2_256B) ||
        !encode_2d(&my, CU_TENSOR_MAP_DATA_TYPE_UINT8, pr.Y, cuuint64_t(nk.K), cuuint64_t(nk.Q), cuuint64_t(pr.ldy),
                   KE, BQ / CLUSTER, CU_TENSOR_MAP_L2_PROMOTION_L2_256B))
        return not_supported("gemm rung wgmma_fp8: the operands do not fit a TMA tensor map");
    const int a_t = f.a_e5m2 ? 1 : 0, b_t = f.b_e5m2 ? 1 : 0;
    if (turned) {
        const Scales sc{f.scale_a, f.scale_b, f.scale_a_ld, f.scale_b_ld, 1};
        return by_formats<true, true>(f, nk, a_t, b_t, mx, my, mc, 2, sc, dev);
    }
    if (f.scale_a == nullptr) return by_formats<false>(f, nf, b_t, a_t, mx, my, mc, ts, Scales{}, dev);
    const bool rows_on_p = f.scale_b_group == 1;
    const Scales sc = rows_on_p ? Scales{f.scale_b, f.scale_a, f.scale_b_ld, f.scale_a_ld, 1}
                                : Scales{f.scale_a, f.scale_b, f.scale_a_ld, f.scale_b_ld, 0};
    return rows_on_p ? by_formats<true, true>(f, nf, b_t, a_t, mx, my, mc, ts, sc, dev)
                     : by_formats<true, false>(f, nf, b_t, a_t, mx, my, mc, ts, sc, dev);
}

}  // namespace fp8
}  // namespace gpk::cuda::tc

// ---- the library's launcher ---------------------------------------------------------

namespace gpk::cuda {
namespace {

// The call in the rung's form; false (with *why_not) for what it does not compute.
bool fp8_call(gpk_context &ctx, const GemmArgs &a, tc::fp8::GemmF8 *out, const char **why_not) {
    *why_not = nullptr;
    if (a.dtype != kGemmFp8 && a.dtype != kGemmFp8Blockscaled) {
        *why_not = "it computes FP8 products only (FP8 A and B through gpk_gemm_ex or gpk_gemm_blockscaled)";
        return false;
    }
    const int c = c_dtype_of(a);
    tc::fp8::GemmF8 f{};
    f.g = tc::GemmTc{tc::Dtype::F16, a.transa, a.transb, a.m, a.n, a.k, static_cast<float>(a.alpha),
                     static_cast<float>(a.beta), a.A, a.lda, a.B, a.ldb, a.C, a.ldc, stream(ctx), nullptr, 0};
    f.a_e5m2 = a_dtype_of(a) == GPK_F8E5M2;
    f.b_e5m2 = b_dtype_of(a) == GPK_F8E5M2;
    f.c_type = c == GPK_F32 ? 0 : c == GPK_F16 ? 1 : c == GPK_BF16 ? 2 : -1;
    if (a.dtype == kGemmFp8Blockscaled) {
        f.scale_a = a.scale_a;
        f.scale_b = a.scale_b;
        f.scale_a_group = a.scale_a_group;
        f.scale_a_ld = a.scale_a_ld;
        f.scale_b_group = a.scale_b_group;
        f.scale_b_ld = a.scale_b_ld;
    }
    *why_not = tc::fp8::refusal(f);
    if (*why_not != nullptr) return false;
    bool have = false;
    const tc::Result r = tc::wgmma::sm90a_available(ctx.device, &have);
    *why_not = r.status != tc::Status::Ok ? "the GPU could not be probed for sm_90a code"
               : !have ? "FP8 wgmma, TMA and clusters need an sm_90 GPU (H100, H200) and sm_90a code in the build"
               : tc::wgmma::encode_fn() == nullptr ? "the driver lacks cuTensorMapEncodeTiled"
                                                   : nullptr;
    *out = f;
    return *why_not == nullptr;
}

}  // namespace

gpk_status gemm_wgmma_fp8_takes(gpk_context &ctx, const GemmArgs &args, const char **why_not) {
    tc::fp8::GemmF8 f{};
    fp8_call(ctx, args, &f, why_not);
    return GPK_SUCCESS;
}

gpk_status gemm_wgmma_fp8(gpk_context &ctx, const GemmArgs &args) {
    tc::fp8::GemmF8 f{};
    const char *why_not = nullptr;
    if (!fp8_call(ctx, args, &f, &why_not)) return refuse(ctx, "gemm", "wgmma_fp8", why_not);
    f.g.workspace_bytes = tc::fp8::workspace_bytes(f);
    if (f.g.workspace_bytes > 0)
        GPK_FORWARD_IF_ERROR(buffer(ctx, Slot::Scratch, f.g.workspace_bytes, &f.g.workspace));
    const tc::Result r = tc::fp8::run(f);
    switch (r.status) {
        case tc::Status::Ok: return GPK_SUCCESS;
        case tc::Status::NotSupported: return refuse(ctx, "gemm", "wgmma_fp8", r.why);
        case tc::Status::CudaError: return check(ctx, r.cuda, r.why);
        default: return fail(&ctx, GPK_ERROR_INTERNAL, "gemm variant 'wgmma_fp8': %s", r.why);
    }
}

}  // namespace gpk::cuda
