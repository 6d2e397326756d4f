// Rung 12, warp-specialised wgmma: the tensor cores of Hopper fed the way they are
// built to be fed. Rung 11 runs at a fraction of the H100's 16-bit rate, for reasons
// this rung removes one by one:
//
// * mma.sync is a warp-sized product whose operands pass through registers (ldmatrix)
//   on every step; wgmma multiplies a 64 x 256 x 16 block per instruction for a
//   warpgroup of four warps, reads both operands straight from shared memory through
//   descriptors, and runs asynchronously: a warpgroup issues a k-tile's four wgmma,
//   commits them as a group and keeps one group in flight while it waits for the next
//   tile, so the tensor cores never wait on the issuing warps.
// * cp.async makes every thread compute addresses and issue copies; the TMA engine
//   copies a whole 2-D box per instruction, writes it in the 128-byte swizzle the
//   wgmma descriptors read without bank conflicts, fills what lies outside the matrix
//   with zeros (so ragged m, n and k need no predicates in the main loop), and signals
//   an mbarrier with the bytes it landed. Stages form a ring: a "full" barrier per
//   stage that the copies complete, an "empty" barrier per stage that the consumers
//   release.
// * Rung 11 needs both operands k-major and packs the others. wgmma reads 16-bit
//   operands that are MN-major too (its transpose bits, boxes of 64 along m or n), so
//   any aligned F16/BF16 call runs in place; only unaligned ones are packed. TF32
//   wgmma has no transpose bit, but takes its first operand from registers: an
//   MN-major X is loaded from the stage into registers in place (the operands of an NN
//   call are swapped to make its MN-major A that X, and D is stored transposed), and
//   only an MN-major Y is packed.
// * Threads that both load and multiply serialise the two. Here warpgroup 0 only
//   produces (one thread issues every TMA copy; the warpgroup gives its registers back
//   with setmaxnreg) and warpgroups 1 and 2 only consume, each owning 64 x BQ
//   accumulators of a 128 x BQ tile (setmaxnreg raises their budget to 232). The grid
//   is persistent and walks the tiles in bands of rows of tiles, so that the blocks
//   running together share their X and Y tiles in L2; the producer runs ahead into the
//   next tile while the consumers store the last one.
// * Every block would read its Y tile from L2 on its own. Blocks run in clusters of
//   two on neighbouring tile rows: each loads half of the shared Y tile and the TMA
//   multicast writes it into both, so L2 serves a third less per tile; a stage is free
//   only once the consumers of both blocks have released it.
// * Storing accumulators straight from the fragments writes 16-byte pieces of 8
//   different rows per instruction. For 16-bit C with beta == 0 (the usual call) the
//   consumers round alpha * acc once into 64 x 64 boxes of shared memory, in the
//   128-byte swizzle, and one thread hands the boxes to TMA stores: the warpgroup goes
//   back to its next tile while the copy engine writes C, which matters most where k is
//   short and storing a tile costs as much as computing it. Otherwise (beta != 0, F32,
//   or C whose rows do not start and end on 16 bytes) the epilogue stages F32 through
//   shared memory and writes C in 4-element vectors along its contiguous dimension,
//   applying alpha and beta in F32 with one rounding, element by element only at the
//   edges of C or where C is not aligned for vectors.
//
// Tiles are 128 x 256 (four stages); 128 x 128 (six stages) or 128 x 64 (eight) when
// 256-wide tiles would leave SMs without work and the narrower ones, slower each, finish
// sooner all told (small products); 128 x 128 ping-pong tiles (five stages) where they
// need fewer waves of the persistent grid than 256-wide ones (m or n just past a
// multiple of 256). F16 and BF16 use m64nBQk16; F32 calls take TF32
// products with m64nBQk8 over the same 128-byte rows (32 elements of k per stage).
// gpk-arch: 90a, the target of wgmma, setmaxnreg, clusters and this TMA use: the kernel body
// exists only in sm_90a code, and the launcher answers NOT_SUPPORTED on any other GPU or binary.
#include "wgmma/common.cuh"
#include "wgmma/config.cuh"
#include "wgmma/launch.cuh"
#include "wgmma/maps.cuh"
#include "wgmma/plan.cuh"
#include "wgmma/ptx.cuh"

#include <cuda.h>

#include <atomic>
#include <cstdint>
#include <type_traits>

namespace gpk::cuda::tc {
namespace ws12 {

// The family's block, rows, swizzle, epilogue staging, instructions and planning
// (wgmma/): this rung adds its tile widths, its rings and its kernel.
using namespace wgmma;

// Tiles are 128 x BQ: BQ = 256 for large products, 128 or 64 where 256-wide tiles would
// leave SMs idle (more tiles, and a deeper ring in the same shared memory).
__host__ __device__ constexpr int stage_bytes(int bq) { return X_BYTES + bq * ROW_BYTES; }
// The TMA-store epilogue (16-bit C, beta == 0) writes D through boxes of 64 x 64
// elements (config.cuh), staged in shared memory: a ping-pong warpgroup stages its
// whole 128 x 128 tile at once (four boxes) so that it returns to its next tile as soon
// as the copies are issued; a consumer of a shared tile stages one box at a time through
// two slots, each box staged while the copy engine still reads the one before it (its
// whole 64 x 256 part would leave room for three ring stages only, and the loads need
// all four in flight). The staging area also holds the other epilogue's F32 buffers.
__host__ __device__ constexpr int out_boxes(bool pp) { return pp ? 4 : 2; }
// Boxes staged together, each batch in a bulk group of its own.
__host__ __device__ constexpr int out_batch(bool pp) { return pp ? out_boxes(pp) : 1; }
// F32 C never takes the TMA store, and keeps the smaller staging area (the rest of the
// shared memory stays L1 cache).
__host__ __device__ constexpr int out_bytes(bool pp, int esize) {
    return esize == 2 && 2 * out_boxes(pp) * OUT_BOX_BYTES > 2 * EPI_BYTES ? 2 * out_boxes(pp) * OUT_BOX_BYTES
                                                                            : 2 * EPI_BYTES;
}
// As many ring stages as fit beside the staging area.
__host__ __device__ constexpr int stages(int bq, bool pp) { return bq == 256 ? 4 : bq == 64 ? 8 : pp ? 5 : 6; }
__host__ __device__ constexpr int smem_bytes(int bq, bool pp, int esize) {
    return stages(bq, pp) * stage_bytes(bq) + out_bytes(pp, esize) + 1024;  // + ring alignment
}
static_assert(smem_bytes(256, false, 2) <= 227 * 1024 && smem_bytes(128, true, 2) <= 227 * 1024 &&
                  smem_bytes(128, false, 2) <= 227 * 1024 && smem_bytes(64, false, 2) <= 227 * 1024 &&
                  smem_bytes(64, false, 4) <= 227 * 1024,
              "the ring and the staging area fit the 227 KB a block may use");

#ifdef GPK_SM90A_CODE
// Read by the sm_90a kernel body alone: elsewhere it would be unused (a warning).
constexpr int CONSUMER_WARPS = 8;  // consumer warps of one block
#endif

// Moves to the ring's next stage; past the last, back to the first, in the other phase.
template <int STAGES>
__device__ __forceinline__ void next_stage(int &stage, uint32_t &phase) {
    if (++stage == STAGES) {
        stage = 0;
        phase ^= 1;
    }
}

// D (P x Q) = X (P x K) Y^T (Q x K) through the two tensor maps, stored by the
// epilogue. XK / YK: the operand is k-major (k the inner dimension of its map) or, for
// 16-bit types, MN-major (p or q inner), read by wgmma with its transpose bit.
// PP ("ping-pong", 128 x 128 tiles): each consumer warpgroup owns whole tiles, the two
// taking alternate tiles of the block's walk, so one stores its tile while the other
// multiplies; otherwise both share each tile, 64 rows each.
// XR (F32 with X MN-major): X is read into registers (TF32 wgmma has no transpose
// bit), Y through its descriptor; TD: D is stored transposed (the operands of an NN
// call were swapped so that the MN-major one is X).
template <class T, bool XK, bool YK, int BQ, bool PP, bool TD>
__global__ void __launch_bounds__(THREADS, 1)
    kernel(const __grid_constant__ CUtensorMap map_x, const __grid_constant__ CUtensorMap map_y,
           const __grid_constant__ CUtensorMap map_c, int64_t P, int64_t Q, int64_t K, Epilogue ep, int tma_store) {
#ifdef GPK_SM90A_CODE
    constexpr int KE = ROW_BYTES / int(sizeof(T));  // elements of k per stage
    constexpr bool XR = sizeof(T) == 4 && !XK;
    static_assert(!TD || XR, "transposed stores come with X from registers");
    constexpr int STAGES = stages(BQ, PP), STAGE_BYTES = stage_bytes(BQ);
    static_assert(!PP || BQ == 128, "ping-pong tiles are 128 x 128");
    // Each consumer warpgroup that reads a stage (both, or the one that owns the stage's
    // tile) releases it once in each block of the cluster.
    constexpr int ARRIVALS = (PP ? 1 : CONSUMER_WARPS / 4) * CLUSTER;
    extern __shared__ uint8_t smem_raw[];
    __shared__ __align__(8) uint64_t full[STAGES], empty[STAGES];
    const uint32_t raw = static_cast<uint32_t>(__cvta_generic_to_shared(smem_raw));
    const uint32_t ring = (raw + 1023) & ~1023u;
    const uint32_t full0 = static_cast<uint32_t>(__cvta_generic_to_shared(&full[0]));
    const uint32_t empty0 = static_cast<uint32_t>(__cvta_generic_to_shared(&empty[0]));

    if (threadIdx.x == 0) {
        // The producer's first copies need the operands' tensor maps: fetch them while
        // the barriers are set up.
        asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&map_x)) : "memory");
        asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&map_y)) : "memory");
        // The TMA store's map too: where a block has a single tile, its store ends the call.
        if (tma_store) asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&map_c)) : "memory");
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(full0 + 8 * s, 1);
            mbar_init(empty0 + 8 * s, ARRIVALS);
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    // The two blocks of a cluster take tiles (2 tp2, tq) and (2 tp2 + 1, tq): they share
    // the Y tile, each loading half of it into both. A block past the last tile row
    // still loads and synchronises, and its stores fall outside D.
    uint32_t rank;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
    const int cid = blockIdx.x / CLUSTER, nclusters = gridDim.x / CLUSTER;
    const int tiles_p = int((P + BP - 1) / BP), tiles_q = int((Q + BQ - 1) / BQ);
    const int pairs_p = (tiles_p + CLUSTER - 1) / CLUSTER, tiles = pairs_p * tiles_q;
    const int nk = int((K + KE - 1) / KE);
    const int wg = threadIdx.x / 128;

    // The X tile of a k-tile, into this block's stage alone (X is not shared).
    auto load_x = [&](int stage, int kb, int tp) {
        const uint32_t bar = full0 + 8 * stage, xs = ring + stage * STAGE_BYTES;
        if constexpr (XK) {
            tma_load_2d(xs, &map_x, bar, int(kb * KE), int(tp * BP));
        } else {
            // Boxes of one 128-byte row along p by the stage's KE k-rows.
#pragma unroll
            for (int b = 0; b < BP / KE; ++b)
                tma_load_2d(xs + b * KE * ROW_BYTES, &map_x, bar, int(tp * BP + KE * b), int(kb * KE));
        }
    };
    // The Y tile of a k-tile: half of it loaded by each block of the cluster and
    // multicast into both, or (own) all of it by this block into its stage alone.
    auto load_y = [&](int stage, int kb, int tq, bool own) {
        const uint32_t bar = full0 + 8 * stage, ys = ring + stage * STAGE_BYTES + X_BYTES;
        auto copy = [&](uint32_t dst, int c0, int c1) {
            constexpr uint16_t all = (1u << CLUSTER) - 1;
            if (own) tma_load_2d(dst, &map_y, bar, c0, c1);
            else tma_load_2d_mc(dst, &map_y, bar, c0, c1, all);
        };
#pragma unroll
        for (int r = 0; r < CLUSTER; ++r) {
            if (!own && r != int(rank)) continue;
            if constexpr (YK) {
                constexpr int rows = BQ / CLUSTER;
                copy(ys + r * rows * ROW_BYTES, int(kb * KE), int(tq * BQ + r * rows));
            } else if constexpr (BQ == 64) {
                // One MN-major box of 64 along q, in halves of its k-rows.
                copy(ys + r * (KE / 2) * ROW_BYTES, int(tq * BQ), int(kb * KE + r * (KE / 2)));
            } else {
#pragma unroll
                for (int b = 0; b < BQ / 64 / CLUSTER; ++b) {
                    const int box = r * (BQ / 64 / CLUSTER) + b;
                    copy(ys + box * MN_BOX_BYTES, int(tq * BQ + 64 * box), int(kb * KE));
                }
            }
        }
    };
    // The first pass over the ring needs only this block's barriers, which this thread
    // has just set up: its X copies leave before the cluster barrier, so that their trip
    // from memory overlaps the wait for the other block. The first half of these stages
    // get their Y tiles whole from this block too, since the other block's barriers may
    // not exist yet to multicast into: the consumers start on them while the barrier
    // completes. The other half wait for it and share Y as every later stage does, each
    // block's half landing on barriers that already expect the whole stage. Loading
    // every stage of the pass whole has L2 serve the other block's half of Y again for
    // half of them, and measured slower; so did loading fewer than half whole
    // (docs/PERFORMANCE.md, section "The first pass over the ring").
    constexpr int EARLY_Y = STAGES / 2;
    const int early = cid < tiles ? (nk < STAGES ? nk : STAGES) : 0;
    if (threadIdx.x == 0 && early > 0) {
        int tp, tq;
        tile_of<band_rows(BQ)>(cid, pairs_p, tiles_q, &tp, &tq);
        for (int kb = 0; kb < early; ++kb) {
            mbar_expect_tx(full0 + 8 * kb, STAGE_BYTES);
            load_x(kb, kb, tp * CLUSTER + int(rank));
            if (kb < EARLY_Y) load_y(kb, kb, tq, true);
        }
    }
    // Both blocks' barriers exist before either multicasts into the other.
    cluster_sync_after_init();

    if (wg == 0) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
        if (threadIdx.x == 0) {
            int stage = 0;
            uint32_t phase = 0;
            for (int t = cid; t < tiles; t += nclusters) {
                int tp, tq;
                tile_of<band_rows(BQ)>(t, pairs_p, tiles_q, &tp, &tq);
                tp = tp * CLUSTER + rank;
                for (int kb = 0; kb < nk; ++kb) {
                    if (t == cid && kb < early) {
                        // Issued before the cluster barrier, all but the shared Y of the
                        // second half (the stage is kb here).
                        if (kb >= EARLY_Y) load_y(stage, kb, tq, false);
                    } else {
                        // A fresh barrier counts its previous phase (parity 1) as completed,
                        // so the first pass over the ring does not wait.
                        mbar_wait(empty0 + 8 * stage, phase ^ 1);
                        mbar_expect_tx(full0 + 8 * stage, STAGE_BYTES);
                        load_x(stage, kb, tp);
                        load_y(stage, kb, tq, false);
                    }
                    next_stage<STAGES>(stage, phase);
                }
            }
            // Before the block leaves: every stage released by the consumers of both
            // blocks, so that no arrive of the other block on this block's barriers is
            // still under way (the copies the other block multicast into this one, its
            // own consumers have waited for). No cluster barrier is needed at the end.
            for (int i = 0; i < STAGES; ++i) {
                mbar_wait(empty0 + 8 * stage, phase ^ 1);
                next_stage<STAGES>(stage, phase);
            }
        }
    } else {
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
        // The warpgroup index through a shuffle: the compiler then knows it is uniform
        // across the warp, and keeps the wgmma descriptors built from it in uniform
        // registers instead of converting them from per-thread ones before every wgmma.
        const int c = __shfl_sync(0xffffffffu, wg - 1, 0), t = threadIdx.x - 128 * wg;
        // A warpgroup's wgmma start and complete as one, reading what all four warps put
        // in place: once one warp has seen a group complete, the warpgroup is done with
        // that group's stage. So one thread per warpgroup releases a stage in each block,
        // warp r signalling block r: a producer waits for a quarter of the arrivals that
        // one per warp would make, and no warp sends more than one.
        const int signal = t % 32 == 0 && t / 32 < CLUSTER ? t / 32 : -1;
        int stage = 0;
        uint32_t phase = 0;
        // Ping-pong: step over the other warpgroup's tile, nk stages of the ring.
        const int skip_stages = nk % STAGES;
        const uint32_t skip_flip = uint32_t(nk / STAGES) & 1u;
        auto skip = [&] {
            stage += skip_stages;
            phase ^= skip_flip;
            if (stage >= STAGES) {
                stage -= STAGES;
                phase ^= 1;
            }
        };
        constexpr int NM = PP ? 2 : 1;  // m64 blocks per warpgroup
        float d[NM][BQ / 2];
        if (PP && c == 1) skip();
        // Ping-pong turns: a warpgroup starts waiting on its tile's stages only once the
        // other has waited on all of its previous tile's (named barrier 3 hands the turn
        // to warpgroup 1, barrier 4 back to warpgroup 0). A parity wait cannot tell a
        // phase from the one two rounds later, so no waiter may run a round ahead of
        // the stages before it.
        bool first = true;
        for (int tile = cid + (PP ? c : 0) * nclusters; tile < tiles; tile += (PP ? 2 : 1) * nclusters) {
            if (PP && !(c == 0 && first)) asm volatile("bar.sync %0, 256;\n" ::"r"(c == 0 ? 4 : 3) : "memory");
            first = false;
            int tp, tq;
            tile_of<band_rows(BQ)>(tile, pairs_p, tiles_q, &tp, &tq);
            tp = tp * CLUSTER + rank;
#pragma unroll
            for (int m = 0; m < NM; ++m)
#pragma unroll
                for (int i = 0; i < BQ / 2; ++i) d[m][i] = 0.0f;
            int prev = -1;
            if constexpr (XR) {
                // X from registers: each stage's fragments are loaded into one of two
                // register sets while the group issued from the other is in flight, so
                // one group stays in flight as in the shared-memory path. ptxas
                // serialises wgmma whose input registers other instructions may write
                // while a group is in flight: the sets are distinct variables (the loop
                // is unrolled by two), and each stays allocated to its fragments until
                // the group that reads it has completed (the empty asm that reads and
                // writes them).
                uint32_t a[2][NM][4][4];
                auto step = [&](auto set) {
                    constexpr int S = decltype(set)::value;
                    mbar_wait(full0 + 8 * stage, phase);
                    const uint32_t xs = ring + stage * STAGE_BYTES, ys = xs + X_BYTES;
#pragma unroll
                    for (int m = 0; m < NM; ++m)
#pragma unroll
                        for (int s = 0; s < 4; ++s) load_frag(a[S][m][s], xs, (PP ? m : c) * 64, s, t);
                    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
                    for (int s = 0; s < 4; ++s)
#pragma unroll
                        for (int m = 0; m < NM; ++m) wgmma_rs<BQ>(d[m], a[S][m][s], desc_kmajor(ys) + desc_step<true>(s));
                    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
                    asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
                    // The other set's group has completed: its registers and its stage are free.
#pragma unroll
                    for (int m = 0; m < NM; ++m)
#pragma unroll
                        for (int s = 0; s < 4; ++s)
                            asm volatile("" : "+r"(a[S ^ 1][m][s][0]), "+r"(a[S ^ 1][m][s][1]),
                                         "+r"(a[S ^ 1][m][s][2]), "+r"(a[S ^ 1][m][s][3]));
                    if (prev >= 0 && signal >= 0) mbar_arrive_cluster(empty0 + 8 * prev, signal);
                    prev = stage;
                    next_stage<STAGES>(stage, phase);
                };
                for (int kb = 0; kb + 1 < nk; kb += 2) {
                    step(std::integral_constant<int, 0>{});
                    step(std::integral_constant<int, 1>{});
                }
                if (nk & 1) step(std::integral_constant<int, 0>{});
            } else {
                for (int kb = 0; kb < nk; ++kb) {
                    mbar_wait(full0 + 8 * stage, phase);
                    const uint32_t xs0 = ring + stage * STAGE_BYTES, ys = xs0 + X_BYTES;
                    // A k step is 32 bytes along a k-major row, or 16 k-rows of an MN-major box.
                    const uint64_t db0 = YK ? desc_kmajor(ys) : desc_mnmajor(ys);
                    uint64_t da0[NM];
#pragma unroll
                    for (int m = 0; m < NM; ++m) {
                        // This warpgroup's 64 rows of X: its own half, or (ping-pong) both.
                        const uint32_t xs = xs0 + (PP ? m : c) * 64 * ROW_BYTES;
                        da0[m] = XK ? desc_kmajor(xs) : desc_mnmajor(xs);
                    }
                    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
                    for (int s = 0; s < 4; ++s) {
                        const uint64_t db = db0 + desc_step<YK>(s);
#pragma unroll
                        for (int m = 0; m < NM; ++m) {
                            const uint64_t da = da0[m] + desc_step<XK>(s);
                            if constexpr (BQ == 256)
                                wgmma_256<T, XK ? 0 : 1, YK ? 0 : 1>(d[m], da, db);
                            else if constexpr (BQ == 128)
                                wgmma_128<T, XK ? 0 : 1, YK ? 0 : 1>(d[m], da, db);
                            else
                                wgmma_64<T, XK ? 0 : 1, YK ? 0 : 1>(d[m], da, db);
                        }
                    }
                    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
                    // The group before this one has finished reading its stage: release it in
                    // both blocks (their producers write into this block's copy of it).
                    asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
                    if (prev >= 0 && signal >= 0) mbar_arrive_cluster(empty0 + 8 * prev, signal);
                    prev = stage;
                    next_stage<STAGES>(stage, phase);
                }
            }
            // Hand the turn over if the other warpgroup has a next tile.
            if (PP && tile + nclusters < tiles)
                asm volatile("bar.arrive %0, 256;\n" ::"r"(c == 0 ? 3 : 4) : "memory");
            asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
            if (prev >= 0 && signal >= 0) mbar_arrive_cluster(empty0 + 8 * prev, signal);

            if constexpr (sizeof(T) == 2) {
                if (tma_store) {
                    // Boxes of 64 x 64 staged NB at a time; one thread issues their stores
                    // and the warpgroup goes back to multiplying while the copies run.
                    // A tile's batches go through the slots in turn, every tile starting at
                    // slot 0, so a slot is a constant of the unrolled loop; a 64-wide tile,
                    // one batch, uses one slot.
                    constexpr int NB = out_batch(PP), HB = BQ / OUT_BOX, PER_TILE = NM * HB / NB;
                    constexpr int SLOTS = PER_TILE < out_boxes(PP) / NB ? PER_TILE : out_boxes(PP) / NB;
                    static_assert((NM * HB) % NB == 0 && PER_TILE % SLOTS == 0, "whole batches, whole turns");
                    const uint32_t obuf = ring + STAGES * STAGE_BYTES + c * out_boxes(PP) * OUT_BOX_BYTES;
#pragma unroll
                    for (int b0 = 0; b0 < NM * HB; b0 += NB) {
                        const uint32_t slot = obuf + (b0 / NB % SLOTS) * NB * OUT_BOX_BYTES;
                        // The slot is free once the stores that last read it, SLOTS batches
                        // ago, have; the batches after them may still be reading.
                        if (t == 0) bulk_wait_read<SLOTS - 1>();
                        asm volatile("bar.sync %0, 128;\n" ::"r"(1 + c) : "memory");
#pragma unroll
                        for (int b = 0; b < NB; ++b)
                            stage_box<T, BQ>(d[(b0 + b) / HB], slot + b * OUT_BOX_BYTES, (b0 + b) % HB, ep.alpha, t);
                        // The copy engine reads what these generic stores wrote.
                        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
                        asm volatile("bar.sync %0, 128;\n" ::"r"(1 + c) : "memory");
                        if (t == 0) {
#pragma unroll
                            for (int b = 0; b < NB; ++b) {
                                const int m = (b0 + b) / HB, h = (b0 + b) % HB;
                                tma_store_2d(&map_c, slot + b * OUT_BOX_BYTES, tq * BQ + h * OUT_BOX,
                                             tp * BP + (PP ? m : c) * 64);
                            }
                            bulk_commit();
                        }
                    }
                    if (PP) skip();
                    continue;
                }
            }
            uint8_t *buf = smem_raw + (ring - raw) + STAGES * STAGE_BYTES + c * EPI_BYTES;
#pragma unroll
            for (int m = 0; m < NM; ++m) {
                if constexpr (TD)
                    store_tile_t<T, BQ>(d[m], buf, 1 + c, ep, P, Q, int64_t(tp) * BP + (PP ? m : c) * 64,
                                        int64_t(tq) * BQ, t);
                else
                    store_tile<T, BQ, XR>(d[m], buf, 1 + c, ep, P, Q, int64_t(tp) * BP + (PP ? m : c) * 64,
                                      int64_t(tq) * BQ, t);
            }
            if (PP) skip();
        }
        // Shared memory stays until the last stores have read it (their writes complete
        // with the grid).
        if (t == 0) bulk_wait_read<0>();
    }
#endif
}

template <class T, bool XK, bool YK, int BQ, bool PP, bool TD = false>
Result launch(const GemmTc &g, const Normal &nf, const CUtensorMap &mx, const CUtensorMap &my,
              const CUtensorMap &mc, bool tma_store, int dev);

// Tile configuration: 0 chooses by shape; 1, 2, 3, 4 force 128x256, 128x128, 128x128
// ping-pong and 128x64 (bench/tc-bench.cu sets it, to measure them against one another).
int tile_mode = 0;

template <class T, int BQ, bool PP>
Result run_tiles(const GemmTc &g, const Normal &nf, const Prepared &pr, bool td, int dev) {
    CUtensorMap mx, my;
    if (!make_map<T>(&mx, pr.X, nf.P, nf.K, pr.ldx, BP, pr.xk) ||
        !make_map<T>(&my, pr.Y, nf.Q, nf.K, pr.ldy, BQ / CLUSTER, pr.yk, BQ == 64 ? CLUSTER : 1))
        return not_supported("gemm rung wgmma_ws: the operands do not fit a TMA tensor map");
    // Where C cannot take the TMA store, the kernel stores through its vector epilogue.
    CUtensorMap mc{};
    const bool ts = make_map_c<T>(&mc, g, nf);
    if constexpr (sizeof(T) == 4) {
        if (pr.xk) return launch<T, true, true, BQ, PP>(g, nf, mx, my, mc, ts, dev);
        // run() gives F32 calls with X in registers 128 x 256 tiles instead of ping-pong
        // ones, whose two sets of fragments per m64 block would not fit in registers.
        if constexpr (PP)
            return not_supported("gemm rung wgmma_ws: ping-pong tiles take F32 only with k-major X");
        else
            return td ? launch<T, false, true, BQ, PP, true>(g, nf, mx, my, mc, ts, dev)
                      : launch<T, false, true, BQ, PP>(g, nf, mx, my, mc, ts, dev);
    } else {
        if (pr.xk && pr.yk) return launch<T, true, true, BQ, PP>(g, nf, mx, my, mc, ts, dev);
        if (pr.xk) return launch<T, true, false, BQ, PP>(g, nf, mx, my, mc, ts, dev);
        if (pr.yk) return launch<T, false, true, BQ, PP>(g, nf, mx, my, mc, ts, dev);
        return launch<T, false, false, BQ, PP>(g, nf, mx, my, mc, ts, dev);
    }
}

template <class T>
Result run(const GemmTc &g, const Normal &nf0) {
    Normal nf{};
    bool td = false;
    orient(nf0, &nf, &td, sizeof(T));
    int dev = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e != cudaSuccess) return cuda_failed(e, "gemm rung wgmma_ws: querying the device");
    bool have = false;
    Result r = sm90a_available(dev, &have);
    if (r.status != Status::Ok) return r;
    if (!have) return not_supported("gemm rung wgmma_ws needs an sm_90 GPU (H100/H200) and sm_90a code in the build");
    if (nf.K > 0x7fffffff || nf.P > 0x7fffffff || nf.Q > 0x7fffffff)
        return not_supported("gemm rung wgmma_ws: m, n and k must stay below 2^31");
    if (cluster_tiles(nf, 64) > 0x7fffffff)
        return not_supported("gemm rung wgmma_ws: more than 2^31 tiles");
    if (!encode_fn()) return not_supported("gemm rung wgmma_ws: the driver lacks cuTensorMapEncodeTiled");

    Prepared pr{};
    r = prepare<T>(nf, g, 1, &pr, true, sizeof(T) == 2);
    if (r.status != Status::Ok) return r;
    int sms = 0;
    e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    if (e != cudaSuccess) return cuda_failed(e, "gemm rung wgmma_ws: querying the device");
    const int mode = tiles_taken(tile_mode != 0 ? tile_mode : tile_config(nf, sms), pr.xk, sizeof(T));
    if (mode == 1) return run_tiles<T, 256, false>(g, nf, pr, td, dev);
    if (mode == 2) return run_tiles<T, 128, false>(g, nf, pr, td, dev);
    if (mode == 4) return run_tiles<T, 64, false>(g, nf, pr, td, dev);
    return run_tiles<T, 128, true>(g, nf, pr, td, dev);
}

// A launch of `grid` blocks in clusters of two, set at launch (a compile-time cluster
// size would not build for the GPUs before sm_90 in a multi-architecture build).
struct ClusterLaunch {
    cudaLaunchAttribute attr{};
    cudaLaunchConfig_t cfg{};
    ClusterLaunch(int grid, int smem, cudaStream_t stream) {
        attr.id = cudaLaunchAttributeClusterDimension;
        attr.val.clusterDim.x = CLUSTER;
        attr.val.clusterDim.y = attr.val.clusterDim.z = 1;
        cfg = cudaLaunchConfig_t{dim3(grid), dim3(THREADS), size_t(smem), stream, &attr, 1};
    }
    ClusterLaunch(const ClusterLaunch &) = delete;  // cfg points at attr
};

template <class T, bool XK, bool YK, int BQ, bool PP, bool TD>
Result launch(const GemmTc &g, const Normal &nf, const CUtensorMap &mx, const CUtensorMap &my,
              const CUtensorMap &mc, bool tma_store, int dev) {
    constexpr int SMEM_BYTES = smem_bytes(BQ, PP, int(sizeof(T)));
    // Per device, once: the shared-memory opt-in and how many clusters fit at once
    // (kept off the per-call path, which small products feel).
    static std::atomic<int> fit_of[64];
    int fit = dev >= 0 && dev < 64 ? fit_of[dev].load() : 0;
    if (fit == 0) {
        int sms = 0;
        cudaError_t e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
        if (e != cudaSuccess) return cuda_failed(e, "gemm rung wgmma_ws: querying the device");
        e = cudaFuncSetAttribute(kernel<T, XK, YK, BQ, PP, TD>, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES);
        if (e != cudaSuccess) return cuda_failed(e, "gemm rung wgmma_ws: shared memory");
        fit = sms / CLUSTER;
        const ClusterLaunch all(CLUSTER * fit, SMEM_BYTES, nullptr);
        int n = 0;
        if (cudaOccupancyMaxActiveClusters(&n, kernel<T, XK, YK, BQ, PP, TD>, &all.cfg) == cudaSuccess && n > 0 && n < fit) fit = n;
        (void)cudaGetLastError();
        if (fit < 1) return not_supported("gemm rung wgmma_ws: no cluster of two blocks fits on the GPU");
        if (dev >= 0 && dev < 64) fit_of[dev].store(fit);
    }
    // Clusters for the pairs of tile rows, at most as many as fit on the GPU at once.
    const int64_t pairs = cluster_tiles(nf, BQ);
    const ClusterLaunch cl(CLUSTER * int(grid_clusters(pairs, fit)), SMEM_BYTES, g.stream);
    cudaError_t e = cudaLaunchKernelEx(&cl.cfg, kernel<T, XK, YK, BQ, PP, TD>, mx, my, mc, nf.P, nf.Q, nf.K,
                                       make_epilogue(g, sizeof(T)), int(tma_store));
    if (e == cudaSuccess) e = cudaGetLastError();
    return e == cudaSuccess ? ok() : cuda_failed(e, "gemm rung wgmma_ws: launch");
}

}  // namespace ws12

// Workspace bytes gemm_tc_wgmma_ws needs for this call: a packed copy of each operand
// that is not k-major with a 16-byte aligned pointer and leading dimension.
inline size_t gemm_tc_wgmma_ws_workspace(const GemmTc &g) {
    const Normal nf = normal_form(g);
    if (nf.P == 0 || nf.Q == 0 || nf.K == 0) return 0;
    return pack_bytes(nf, elem_size(g.dtype), 1, g.dtype != Dtype::TF32, g.dtype != Dtype::TF32);
}

inline Result gemm_tc_wgmma_ws(const GemmTc &g) {
    const Normal nf = normal_form(g);
    if (nf.P == 0 || nf.Q == 0) return ok();
    const bool no_product = nf.K == 0 || g.alpha == 0.0f;
    switch (g.dtype) {
        case Dtype::F16: return no_product ? scale_c<__half>(g, nf) : ws12::run<__half>(g, nf);
        case Dtype::BF16: return no_product ? scale_c<__nv_bfloat16>(g, nf) : ws12::run<__nv_bfloat16>(g, nf);
        case Dtype::TF32: return no_product ? scale_c<float>(g, nf) : ws12::run<float>(g, nf);
    }
    return not_supported("gemm rung wgmma_ws: unknown dtype");
}

}  // namespace gpk::cuda::tc

// ---- the library's launcher ---------------------------------------------------------

namespace gpk::cuda {

gpk_status gemm_wgmma_ws_takes(gpk_context &ctx, const GemmArgs &args, const char **why_not) {
    tc::Dtype dtype{};
    if (!tc_dtype(ctx, args.dtype, &dtype, why_not)) return GPK_SUCCESS;
    bool have = false;
    const tc::Result r = tc::wgmma::sm90a_available(ctx.device, &have);
    if (r.status == tc::Status::CudaError) return check(ctx, r.cuda, r.why);
    constexpr int64_t kMax = 0x7fffffff;
    *why_not = r.status != tc::Status::Ok ? r.why
               : !have ? "wgmma, TMA and clusters need an sm_90 GPU (H100, H200) and sm_90a code in the build"
               : args.m > kMax || args.n > kMax || args.k > kMax ? "m, n and k must stay below 2^31"
               : tc::wgmma::encode_fn() == nullptr ? "the driver lacks cuTensorMapEncodeTiled"
                                                   : nullptr;
    return GPK_SUCCESS;
}

gpk_status gemm_wgmma_ws(gpk_context &ctx, const GemmArgs &args) {
    const char *why_not = nullptr;
    GPK_FORWARD_IF_ERROR(gemm_wgmma_ws_takes(ctx, args, &why_not));
    if (why_not != nullptr) return refuse(ctx, "gemm", "wgmma_ws", why_not);
    tc::Dtype dtype{};
    tc_dtype(ctx, args.dtype, &dtype, &why_not);
    return run_tc(ctx, args, "wgmma_ws", dtype, tc::gemm_tc_wgmma_ws_workspace, tc::gemm_tc_wgmma_ws);
}

}  // namespace gpk::cuda
