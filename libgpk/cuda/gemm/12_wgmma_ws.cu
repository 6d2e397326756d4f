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
//   any aligned F16/BF16 call runs in place; only unaligned ones, and F32 operands that
//   are not k-major (TF32 wgmma has no transpose), are packed.
// * Threads that both load and multiply serialise the two. Here warpgroup 0 only
//   produces (one thread issues every TMA copy; the warpgroup gives its registers back
//   with setmaxnreg) and warpgroups 1 and 2 only consume, each owning 64 x BQ
//   accumulators of a 128 x BQ tile (setmaxnreg raises their budget to 232). The grid
//   is persistent and walks the tiles in bands of 8 rows of tiles, so that the blocks
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
// Tiles are 128 x 256 (four stages); 128 x 128 (six stages) when 256-wide tiles
// would leave SMs without work; 128 x 128 ping-pong tiles (five stages) where they need
// fewer waves of the persistent grid than 256-wide ones (m or n just past a multiple of
// 256). F16 and BF16 use m64nBQk16; F32 calls take TF32
// products with m64nBQk8 over the same 128-byte rows (32 elements of k per stage).
// wgmma, setmaxnreg, clusters and this TMA use need sm_90a: the kernel body exists only
// in sm_90a code, and the launcher answers NOT_SUPPORTED on any other GPU or binary.
#include "tc_common.cuh"

#include <cuda.h>
#include <cudaTypedefs.h>

#include <atomic>

namespace gpk::cuda::tc {
namespace ws12 {

constexpr int BP = 128, THREADS = 384, GROUP = 8;
constexpr int ROW_BYTES = 128;  // one row of a k-tile: the width of the 128-byte swizzle
constexpr int X_BYTES = BP * ROW_BYTES;
// The epilogue stages each consumer's accumulators through shared memory, 32 columns
// of q at a time, as F32 rows padded by 16 bytes (so the fragment writes of one warp
// spread over the banks), then writes C in whole 4-element vectors along q.
constexpr int EPI_COLS = 32, EPI_ROW_BYTES = EPI_COLS * 4 + 16, EPI_BYTES = 64 * EPI_ROW_BYTES;
// Tiles are 128 x BQ: BQ = 256 for large products, 128 where 256-wide tiles would leave
// clusters idle (twice the tiles, and a deeper ring in the same shared memory).
__host__ __device__ constexpr int stage_bytes(int bq) { return X_BYTES + bq * ROW_BYTES; }
// The TMA-store epilogue (16-bit C, beta == 0) writes D through boxes of 64 x 64
// elements (one 128-byte swizzled row of q per row of p), staged in shared memory:
// a ping-pong warpgroup stages its whole 128 x 128 tile at once (four boxes) so that it
// returns to its next tile as soon as the copies are issued; a consumer of a shared
// tile stages two boxes at a time. The staging area also holds the other epilogue's
// F32 buffers.
constexpr int OUT_BOX = 64, OUT_BOX_BYTES = OUT_BOX * ROW_BYTES;
__host__ __device__ constexpr int out_boxes(bool pp) { return pp ? 4 : 2; }
// F32 C never takes the TMA store, and keeps the smaller staging area (the rest of the
// shared memory stays L1 cache).
__host__ __device__ constexpr int out_bytes(bool pp, int esize) {
    return esize == 2 && 2 * out_boxes(pp) * OUT_BOX_BYTES > 2 * EPI_BYTES ? 2 * out_boxes(pp) * OUT_BOX_BYTES
                                                                            : 2 * EPI_BYTES;
}
// As many ring stages as fit beside the staging area.
__host__ __device__ constexpr int stages(int bq, bool pp) { return bq == 256 ? 4 : pp ? 5 : 6; }
__host__ __device__ constexpr int smem_bytes(int bq, bool pp, int esize) {
    return stages(bq, pp) * stage_bytes(bq) + out_bytes(pp, esize) + 1024;  // + ring alignment
}
static_assert(smem_bytes(256, false, 2) <= 227 * 1024 && smem_bytes(128, true, 2) <= 227 * 1024 &&
                  smem_bytes(128, false, 2) <= 227 * 1024,
              "the ring and the staging area fit the 227 KB a block may use");
constexpr int CLUSTER = 2;                               // blocks sharing each Y tile
constexpr int CONSUMER_WARPS = 8;                        // consumer warps of one block
constexpr int MN_BOX_BYTES = 64 * ROW_BYTES;             // an MN-major box: 64 k-rows of 128 bytes

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define GPK_SM90A_CODE 1
#endif

#define GPK_WGMMA_D_REGS \
    "{" "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15" \
    ", " "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31" \
    ", " "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47" \
    ", " "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63" \
    ", " "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79" \
    ", " "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95" \
    ", " "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111" \
    ", " "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127" "}"

#define GPK_WGMMA_D_REGS_64 \
    "{" "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15" \
    ", " "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31" \
    ", " "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47" \
    ", " "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63" "}"

#define GPK_WGMMA_D_OUTS_64(d) \
    "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
    "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
    "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
    "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), \
    "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
    "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
    "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
    "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])

#define GPK_WGMMA_D_OUTS(d) \
    "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
    "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
    "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
    "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), \
    "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
    "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
    "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
    "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), \
    "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), \
    "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), \
    "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), \
    "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), \
    "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), \
    "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), \
    "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), \
    "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])

#ifdef GPK_SM90A_CODE
// Shared-memory matrix descriptors, 128-byte swizzle (bits 0-13 address, 16-29 leading
// byte offset, 32-45 stride byte offset, 62-63 swizzle mode; offsets in 16 bytes).
// k-major: rows of 128 bytes of k, 8-row groups 1024 bytes apart (stride offset), the
// leading offset unused; k steps add 32 bytes inside the row.
__device__ __forceinline__ uint64_t desc_kmajor(uint32_t saddr) {
    return uint64_t((saddr & 0x3FFFF) >> 4) | (uint64_t(1) << 16) | (uint64_t(1024 >> 4) << 32) |
           (uint64_t(1) << 62);
}
// MN-major (16-bit only): each TMA box is 64 k-rows of 64 elements along m or n (128
// bytes); groups of 8 k-rows are 1024 bytes apart (stride offset), consecutive boxes of
// 64 along m or n are MN_BOX_BYTES apart (leading offset); k steps of 16 add 16 rows.
__device__ __forceinline__ uint64_t desc_mnmajor(uint32_t saddr) {
    return uint64_t((saddr & 0x3FFFF) >> 4) | (uint64_t(MN_BOX_BYTES >> 4) << 16) |
           (uint64_t(1024 >> 4) << 32) | (uint64_t(1) << 62);
}

// imm-trans-a/b = 1: that operand is MN-major in shared memory (16-bit types only).
template <class T, int TA, int TB>
__device__ __forceinline__ void wgmma_128(float (&d)[64], uint64_t da, uint64_t db) {
    if constexpr (sizeof(T) == 4) {
        static_assert(TA == 0 && TB == 0, "TF32 wgmma reads k-major operands only");
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 " GPK_WGMMA_D_REGS_64
                     ", %64, %65, p, 1, 1;\n}\n"
                     : GPK_WGMMA_D_OUTS_64(d)
                     : "l"(da), "l"(db), "r"(1));
    } else if constexpr (std::is_same_v<T, __half>) {
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 " GPK_WGMMA_D_REGS_64
                     ", %64, %65, p, 1, 1, %67, %68;\n}\n"
                     : GPK_WGMMA_D_OUTS_64(d)
                     : "l"(da), "l"(db), "r"(1), "n"(TA), "n"(TB));
    } else {
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 " GPK_WGMMA_D_REGS_64
                     ", %64, %65, p, 1, 1, %67, %68;\n}\n"
                     : GPK_WGMMA_D_OUTS_64(d)
                     : "l"(da), "l"(db), "r"(1), "n"(TA), "n"(TB));
    }
}

template <class T, int TA, int TB>
__device__ __forceinline__ void wgmma_256(float (&d)[128], uint64_t da, uint64_t db) {
    if constexpr (sizeof(T) == 4) {
        static_assert(TA == 0 && TB == 0, "TF32 wgmma reads k-major operands only");
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 " GPK_WGMMA_D_REGS
                     ", %128, %129, p, 1, 1;\n}\n"
                     : GPK_WGMMA_D_OUTS(d)
                     : "l"(da), "l"(db), "r"(1));
    } else if constexpr (std::is_same_v<T, __half>) {
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 " GPK_WGMMA_D_REGS
                     ", %128, %129, p, 1, 1, %131, %132;\n}\n"
                     : GPK_WGMMA_D_OUTS(d)
                     : "l"(da), "l"(db), "r"(1), "n"(TA), "n"(TB));
    } else {
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 " GPK_WGMMA_D_REGS
                     ", %128, %129, p, 1, 1, %131, %132;\n}\n"
                     : GPK_WGMMA_D_OUTS(d)
                     : "l"(da), "l"(db), "r"(1), "n"(TA), "n"(TB));
    }
}

__device__ __forceinline__ void mbar_init(uint32_t bar, int count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_expect_tx(uint32_t bar, uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// Arrives on the barrier at the same shared-memory offset in block `rank` of the cluster.
__device__ __forceinline__ void mbar_arrive_cluster(uint32_t bar, uint32_t rank) {
    asm volatile(
        "{\n.reg .b32 remote;\n"
        "mapa.shared::cluster.u32 remote, %0, %1;\n"
        "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(bar),
        "r"(rank)
        : "memory");
}
__device__ __forceinline__ void cluster_sync() {
    asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
// Returns once the phase of parity `parity` has completed.
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
    asm volatile(
        "{\n.reg .pred done;\n"
        "WAIT_%=:\n"
        "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
        "@!done bra WAIT_%=;\n}\n" ::"r"(bar),
        "r"(parity)
        : "memory");
}
// The same box into the same shared-memory offset of every block in `mask`, each
// block's barrier at `bar` receiving the bytes that land in it.
__device__ __forceinline__ void tma_load_2d_mc(uint32_t dst, const CUtensorMap *map, uint32_t bar, int c0, int c1,
                                               uint16_t mask) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster "
        "[%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(dst),
        "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(bar), "h"(mask)
        : "memory");
}
__device__ __forceinline__ void tma_load_2d(uint32_t dst, const CUtensorMap *map, uint32_t bar, int c0, int c1) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], "
        "[%4];\n" ::"r"(dst),
        "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(bar)
        : "memory");
}
// A box of shared memory into the tensor at (c0, c1), clipped to the tensor's bounds;
// completes in this thread's bulk group.
__device__ __forceinline__ void tma_store_2d(const CUtensorMap *map, uint32_t src, int c0, int c1) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];\n" ::"l"(
                     reinterpret_cast<uint64_t>(map)),
                 "r"(src), "r"(c0), "r"(c1)
                 : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
// This thread's bulk stores have read their shared memory (it may be written again).
__device__ __forceinline__ void bulk_wait_read() { asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory"); }
// ... and have written global memory.
__device__ __forceinline__ void bulk_wait() { asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); }
__device__ __forceinline__ void st_shared_u32(uint32_t a, uint32_t v) {
    asm volatile("st.shared.u32 [%0], %1;\n" ::"r"(a), "r"(v) : "memory");
}
template <class T>
__device__ __forceinline__ uint32_t pack2(float lo, float hi) {
    typename Pair<T>::type v;
    if constexpr (std::is_same_v<T, __half>) v = __floats2half2_rn(lo, hi);
    else v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<uint32_t *>(&v);
}
#endif

#ifdef GPK_SM90A_CODE
// Writes columns 64 h .. 64 h + 63 of a consumer's 64 x BQ accumulators, times alpha
// and rounded once, into the 64 x 64 box at `box` in the 128-byte swizzle the TMA store
// reads: 16-byte chunk j of row r lies at chunk j ^ (r % 8), so the eight rows one
// fragment store covers fall in eight different chunks (all 32 banks).
template <class T, int BQ>
__device__ __forceinline__ void stage_box(const float (&d)[BQ / 2], uint32_t box, int h, float alpha, int t) {
    const int warp = t / 32, lane = t % 32, r0 = warp * 16 + (lane >> 2);
#pragma unroll
    for (int jj = 0; jj < OUT_BOX / 8; ++jj) {
        const int j = h * (OUT_BOX / 8) + jj;
        const uint32_t a = box + r0 * ROW_BYTES + ((jj ^ (r0 & 7)) << 4) + 4 * (lane & 3);
        st_shared_u32(a, pack2<T>(alpha * d[4 * j], alpha * d[4 * j + 1]));
        st_shared_u32(a + 8 * ROW_BYTES, pack2<T>(alpha * d[4 * j + 2], alpha * d[4 * j + 3]));  // row r0 + 8
    }
}

// Stores a consumer's 64 x BQ accumulators (rows p_base.., columns q_base..) through
// its staging buffer: C = alpha * acc + beta * C, one rounding, only inside P x Q.
template <class T, int BQ>
__device__ __forceinline__ void store_tile(const float (&d)[BQ / 2], uint8_t *buf, int bar_id, const Epilogue &ep,
                                           int64_t P, int64_t Q, int64_t p_base, int64_t q_base, int t) {
    const int warp = t / 32, lane = t % 32, r0 = warp * 16 + (lane >> 2);
    const bool vec = ep.vec4;
#pragma unroll
    for (int pass = 0; pass < BQ / EPI_COLS; ++pass) {
#pragma unroll
        for (int jj = 0; jj < EPI_COLS / 8; ++jj) {
            const int j = pass * (EPI_COLS / 8) + jj, col = jj * 8 + 2 * (lane & 3);
            *reinterpret_cast<float2 *>(buf + r0 * EPI_ROW_BYTES + col * 4) = make_float2(d[4 * j], d[4 * j + 1]);
            *reinterpret_cast<float2 *>(buf + (r0 + 8) * EPI_ROW_BYTES + col * 4) =
                make_float2(d[4 * j + 2], d[4 * j + 3]);
        }
        asm volatile("bar.sync %0, 128;\n" ::"r"(bar_id) : "memory");
#pragma unroll
        for (int it = 0; it < 4; ++it) {
            const int row = it * 16 + t / 8, ch = t % 8;
            const float4 v = *reinterpret_cast<const float4 *>(buf + row * EPI_ROW_BYTES + ch * 16);
            const int64_t p = p_base + row, q = q_base + pass * EPI_COLS + ch * 4;
            if (p >= P || q >= Q) continue;
            T *c = static_cast<T *>(ep.C) + p * ep.ldc + q;
            float o[4] = {ep.alpha * v.x, ep.alpha * v.y, ep.alpha * v.z, ep.alpha * v.w};
            if (vec && q + 4 <= Q) {
                using V4 = std::conditional_t<sizeof(T) == 4, float4, uint2>;
                V4 w;
                if (ep.beta != 0.0f) {
                    const V4 old = *reinterpret_cast<const V4 *>(c);
#pragma unroll
                    for (int e = 0; e < 4; ++e) o[e] += ep.beta * to_f32<T>(reinterpret_cast<const T *>(&old)[e]);
                }
#pragma unroll
                for (int e = 0; e < 4; ++e) reinterpret_cast<T *>(&w)[e] = from_f32<T>(o[e]);
                *reinterpret_cast<V4 *>(c) = w;
            } else {
#pragma unroll
                for (int e = 0; e < 4; ++e)
                    if (q + e < Q) c[e] = from_f32<T>(ep.beta != 0.0f ? o[e] + ep.beta * to_f32<T>(c[e]) : o[e]);
            }
        }
        asm volatile("bar.sync %0, 128;\n" ::"r"(bar_id) : "memory");
    }
}
#endif

// The tile `t` of the persistent walk: bands of GROUP tile rows of D, column by column
// inside a band, so the blocks running at once read few distinct X and Y tiles.
__device__ __forceinline__ void tile_of(int t, int tiles_p, int tiles_q, int *tp, int *tq) {
    const int per_band = GROUP * tiles_q;
    const int band = t / per_band, first = band * GROUP;
    const int rows = tiles_p - first < GROUP ? tiles_p - first : GROUP;
    const int r = t - band * per_band;
    *tp = first + r % rows;
    *tq = r / rows;
}

// D (P x Q) = X (P x K) Y^T (Q x K) through the two tensor maps, stored by the
// epilogue. XK / YK: the operand is k-major (k the inner dimension of its map) or, for
// 16-bit types, MN-major (p or q inner), read by wgmma with its transpose bit.
// PP ("ping-pong", 128 x 128 tiles): each consumer warpgroup owns whole tiles, the two
// taking alternate tiles of the block's walk, so one stores its tile while the other
// multiplies; otherwise both share each tile, 64 rows each.
template <class T, bool XK, bool YK, int BQ, bool PP>
__global__ void __launch_bounds__(THREADS, 1)
    kernel(const __grid_constant__ CUtensorMap map_x, const __grid_constant__ CUtensorMap map_y,
           const __grid_constant__ CUtensorMap map_c, int64_t P, int64_t Q, int64_t K, Epilogue ep, int tma_store) {
#ifdef GPK_SM90A_CODE
    constexpr int KE = ROW_BYTES / int(sizeof(T));  // elements of k per stage
    constexpr int STAGES = stages(BQ, PP), STAGE_BYTES = stage_bytes(BQ);
    static_assert(!PP || BQ == 128, "ping-pong tiles are 128 x 128");
    // Warps that release a stage: every consumer warp, or those of the warpgroup that
    // owns the stage's tile, in both blocks.
    constexpr int ARRIVALS = (PP ? CONSUMER_WARPS / 2 : CONSUMER_WARPS) * CLUSTER;
    extern __shared__ uint8_t smem_raw[];
    __shared__ __align__(8) uint64_t full[STAGES], empty[STAGES];
    const uint32_t raw = static_cast<uint32_t>(__cvta_generic_to_shared(smem_raw));
    const uint32_t ring = (raw + 1023) & ~1023u;
    const uint32_t full0 = static_cast<uint32_t>(__cvta_generic_to_shared(&full[0]));
    const uint32_t empty0 = static_cast<uint32_t>(__cvta_generic_to_shared(&empty[0]));

    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(full0 + 8 * s, 1);
            mbar_init(empty0 + 8 * s, ARRIVALS);
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    // Both blocks' barriers exist before either multicasts into the other.
    cluster_sync();

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

    if (wg == 0) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
        if (threadIdx.x == 0) {
            int stage = 0;
            uint32_t phase = 0;
            for (int t = cid; t < tiles; t += nclusters) {
                int tp, tq;
                tile_of(t, pairs_p, tiles_q, &tp, &tq);
                tp = tp * CLUSTER + rank;
                for (int kb = 0; kb < nk; ++kb) {
                    // A fresh barrier counts its previous phase (parity 1) as completed,
                    // so the first pass over the ring does not wait.
                    mbar_wait(empty0 + 8 * stage, phase ^ 1);
                    const uint32_t bar = full0 + 8 * stage;
                    mbar_expect_tx(bar, STAGE_BYTES);
                    const uint32_t xs = ring + stage * STAGE_BYTES, ys = xs + X_BYTES;
                    if constexpr (XK) {
                        tma_load_2d(xs, &map_x, bar, int(kb * KE), int(tp * BP));
                    } else {
#pragma unroll
                        for (int b = 0; b < BP / 64; ++b)
                            tma_load_2d(xs + b * MN_BOX_BYTES, &map_x, bar, int(tp * BP + 64 * b), int(kb * KE));
                    }
                    constexpr uint16_t all = (1u << CLUSTER) - 1;
                    if constexpr (YK) {
                        constexpr int rows = BQ / CLUSTER;
                        tma_load_2d_mc(ys + rank * rows * ROW_BYTES, &map_y, bar, int(kb * KE),
                                       int(tq * BQ + rank * rows), all);
                    } else {
#pragma unroll
                        for (int b = 0; b < BQ / 64 / CLUSTER; ++b) {
                            const int box = int(rank) * (BQ / 64 / CLUSTER) + b;
                            tma_load_2d_mc(ys + box * MN_BOX_BYTES, &map_y, bar, int(tq * BQ + 64 * box),
                                           int(kb * KE), all);
                        }
                    }
                    if (++stage == STAGES) {
                        stage = 0;
                        phase ^= 1;
                    }
                }
            }
        }
    } else {
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
        const int c = wg - 1, t = threadIdx.x - 128 * wg, lane = t % 32;
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
            tile_of(tile, pairs_p, tiles_q, &tp, &tq);
            tp = tp * CLUSTER + rank;
#pragma unroll
            for (int m = 0; m < NM; ++m)
#pragma unroll
                for (int i = 0; i < BQ / 2; ++i) d[m][i] = 0.0f;
            int prev = -1;
            for (int kb = 0; kb < nk; ++kb) {
                mbar_wait(full0 + 8 * stage, phase);
                const uint32_t ys = ring + stage * STAGE_BYTES + X_BYTES;
                asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
                for (int s = 0; s < 4; ++s) {
                    // A k step is 32 bytes along a k-major row, or 16 k-rows of an MN-major box.
                    const uint64_t db = YK ? desc_kmajor(ys + 32 * s) : desc_mnmajor(ys + 16 * ROW_BYTES * s);
#pragma unroll
                    for (int m = 0; m < NM; ++m) {
                        // This warpgroup's 64 rows of X: its own half, or (ping-pong) both.
                        const uint32_t xs = ring + stage * STAGE_BYTES + (PP ? m : c) * 64 * ROW_BYTES;
                        const uint64_t da = XK ? desc_kmajor(xs + 32 * s) : desc_mnmajor(xs + 16 * ROW_BYTES * s);
                        if constexpr (BQ == 256)
                            wgmma_256<T, XK ? 0 : 1, YK ? 0 : 1>(d[m], da, db);
                        else
                            wgmma_128<T, XK ? 0 : 1, YK ? 0 : 1>(d[m], da, db);
                    }
                }
                asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
                // The group before this one has finished reading its stage: release it in
                // both blocks (their producers write into this block's copy of it).
                asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
                if (prev >= 0 && lane < CLUSTER) mbar_arrive_cluster(empty0 + 8 * prev, lane);
                prev = stage;
                if (++stage == STAGES) {
                    stage = 0;
                    phase ^= 1;
                }
            }
            // Hand the turn over if the other warpgroup has a next tile.
            if (PP && tile + nclusters < tiles)
                asm volatile("bar.arrive %0, 256;\n" ::"r"(c == 0 ? 3 : 4) : "memory");
            asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
            if (prev >= 0 && lane < CLUSTER) mbar_arrive_cluster(empty0 + 8 * prev, lane);

            if constexpr (sizeof(T) == 2) {
                if (tma_store) {
                    // Boxes of 64 x 64 staged NB at a time; one thread issues their stores
                    // and the warpgroup goes back to multiplying while the copies run.
                    constexpr int NB = out_boxes(PP), HB = BQ / OUT_BOX;
                    static_assert((NM * HB) % NB == 0, "whole batches of boxes");
                    const uint32_t obuf = ring + STAGES * STAGE_BYTES + c * NB * OUT_BOX_BYTES;
#pragma unroll
                    for (int b0 = 0; b0 < NM * HB; b0 += NB) {
                        // The staging boxes are free once the previous stores have read them.
                        if (t == 0) bulk_wait_read();
                        asm volatile("bar.sync %0, 128;\n" ::"r"(1 + c) : "memory");
#pragma unroll
                        for (int b = 0; b < NB; ++b)
                            stage_box<T, BQ>(d[(b0 + b) / HB], obuf + b * OUT_BOX_BYTES, (b0 + b) % HB, ep.alpha, t);
                        // The copy engine reads what these generic stores wrote.
                        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
                        asm volatile("bar.sync %0, 128;\n" ::"r"(1 + c) : "memory");
                        if (t == 0) {
#pragma unroll
                            for (int b = 0; b < NB; ++b) {
                                const int m = (b0 + b) / HB, h = (b0 + b) % HB;
                                tma_store_2d(&map_c, obuf + b * OUT_BOX_BYTES, tq * BQ + h * OUT_BOX,
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
            for (int m = 0; m < NM; ++m)
                store_tile<T, BQ>(d[m], buf, 1 + c, ep, P, Q, int64_t(tp) * BP + (PP ? m : c) * 64, int64_t(tq) * BQ,
                                  t);
            if (PP) skip();
        }
        // Shared memory stays until the last stores have read it.
        if (t == 0) bulk_wait();
    }
    // Neither block leaves while the other may still write into its shared memory or
    // arrive on its barriers.
    cluster_sync();
#endif
}

// Writes 1 where the GPU runs this file's sm_90a code, 0 elsewhere.
__global__ void probe_kernel(int *out) {
#ifdef GPK_SM90A_CODE
    *out = 1;
#else
    *out = 0;
#endif
}

// Whether device `dev` runs the sm_90a kernels of this binary; asked once per device.
inline Result sm90a_available(int dev, bool *yes) {
    static std::atomic<int> known[64];  // 0: not asked, 1: yes, 2: no
    if (dev < 0 || dev >= 64) return not_supported("gemm rung wgmma_ws: device index above 63");
    int k = known[dev].load();
    if (k == 0) {
        int major = 0, minor = 0;
        cudaError_t e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
        if (e == cudaSuccess) e = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
        if (e != cudaSuccess) return cuda_failed(e, "gemm rung wgmma_ws: querying the device");
        k = 2;
        if (major == 9 && minor == 0) {
            int *flag = nullptr, host = 0;
            e = cudaMalloc(&flag, sizeof(int));
            if (e != cudaSuccess) return cuda_failed(e, "gemm rung wgmma_ws: probing for sm_90a code");
            probe_kernel<<<1, 1>>>(flag);
            e = cudaGetLastError();
            if (e == cudaSuccess) e = cudaMemcpy(&host, flag, sizeof(int), cudaMemcpyDeviceToHost);
            cudaFree(flag);
            if (e != cudaSuccess) return cuda_failed(e, "gemm rung wgmma_ws: probing for sm_90a code");
            k = host == 1 ? 1 : 2;
        }
        known[dev].store(k);
    }
    *yes = k == 1;
    return ok();
}

inline PFN_cuTensorMapEncodeTiled_v12000 encode_fn() {
    static PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
        void *p = nullptr;
        cudaDriverEntryPointQueryResult q{};
        if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q) !=
                cudaSuccess ||
            q != cudaDriverEntryPointSuccess)
            p = nullptr;
        return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
    }();
    return fn;
}

// cuTensorMapEncodeTiled costs the host about as long as a small product runs on the
// GPU, and a call encodes three maps. A map is a pure function of its arguments, so
// each thread keeps its last few and encodes only what it has not seen.
inline bool encode_2d(CUtensorMap *map, CUtensorMapDataType dt, const void *ptr, cuuint64_t d0, cuuint64_t d1,
                      cuuint64_t stride, cuuint32_t b0, cuuint32_t b1, CUtensorMapL2promotion promo) {
    struct Key {
        const void *ptr;
        cuuint64_t d0, d1, stride;
        cuuint32_t b0, b1;
        int dt, promo;
        bool operator==(const Key &o) const {
            return ptr == o.ptr && d0 == o.d0 && d1 == o.d1 && stride == o.stride && b0 == o.b0 && b1 == o.b1 &&
                   dt == o.dt && promo == o.promo;
        }
    };
    constexpr int N = 8;
    struct Entry {
        Key key;
        CUtensorMap map;
        bool used;
    };
    thread_local Entry cache[N] = {};
    thread_local int next = 0;
    const Key key{ptr, d0, d1, stride, b0, b1, int(dt), int(promo)};
    for (int i = 0; i < N; ++i)
        if (cache[i].used && cache[i].key == key) {
            *map = cache[i].map;
            return true;
        }
    auto fn = encode_fn();
    if (!fn) return false;
    cuuint64_t dims[2] = {d0, d1};
    cuuint64_t strides[1] = {stride};
    cuuint32_t box[2] = {b0, b1};
    cuuint32_t estr[2] = {1, 1};
    if (fn(map, dt, 2, const_cast<void *>(ptr), dims, strides, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
           CU_TENSOR_MAP_SWIZZLE_128B, promo, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS)
        return false;
    cache[next] = Entry{key, *map, true};
    next = (next + 1) % N;
    return true;
}

// A tensor map over an operand of `rows` x K, zeros outside, 128-byte swizzle. k-major
// (k inner, rows `ld` elements apart): boxes of one 128-byte row of k by box_rows rows.
// MN-major (rows inner, k-rows `ld` apart): boxes of 64 along the rows by one stage of k.
template <class T>
inline bool make_map(CUtensorMap *map, const void *ptr, int64_t rows, int64_t K, int64_t ld, int box_rows,
                     bool kmajor) {
    const CUtensorMapDataType dt = sizeof(T) == 4                   ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32
                                   : std::is_same_v<T, __half> ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                                                                    : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    const cuuint32_t ke = cuuint32_t(ROW_BYTES / sizeof(T));
    return encode_2d(map, dt, ptr, cuuint64_t(kmajor ? K : rows), cuuint64_t(kmajor ? rows : K),
                     cuuint64_t(ld) * sizeof(T), kmajor ? ke : 64u, kmajor ? cuuint32_t(box_rows) : ke,
                     CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
}

// A tensor map over D (P x Q, q contiguous, rows ldc apart) in boxes of 64 x 64 with
// the 128-byte swizzle, for the TMA-store epilogue. It takes 16-bit C with beta == 0
// (nothing to read) whose pointer and rows are 16-byte aligned, and whose rows end on
// 16 bytes too: the copy engine clips a box at the tensor's edge only to whole 16-byte
// pieces, and would write the elements between the end of a row and the next 16 bytes
// (the caller's padding). False otherwise.
template <class T>
inline bool make_map_c(CUtensorMap *map, const GemmTc &g, const Normal &nf) {
    if (sizeof(T) != 2 || g.beta != 0.0f || reinterpret_cast<uintptr_t>(g.C) % 16 != 0 ||
        (g.ldc * int64_t(sizeof(T))) % 16 != 0 || (nf.Q * int64_t(sizeof(T))) % 16 != 0)
        return false;
    const CUtensorMapDataType dt =
        std::is_same_v<T, __half> ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    return encode_2d(map, dt, g.C, cuuint64_t(nf.Q), cuuint64_t(nf.P), cuuint64_t(g.ldc) * sizeof(T),
                     cuuint32_t(OUT_BOX), cuuint32_t(OUT_BOX), CU_TENSOR_MAP_L2_PROMOTION_NONE);
}

template <class T, bool XK, bool YK, int BQ, bool PP>
Result launch(const GemmTc &g, const Normal &nf, const CUtensorMap &mx, const CUtensorMap &my,
              const CUtensorMap &mc, bool tma_store, int dev);

// Tile configuration: 0 chooses by shape; 1, 2, 3 force 128x256, 128x128 and 128x128
// ping-pong (for measuring them against one another).
inline int tile_mode = 0;

template <class T, int BQ, bool PP>
Result run_tiles(const GemmTc &g, const Normal &nf, const Prepared &pr, int dev) {
    CUtensorMap mx, my;
    if (!make_map<T>(&mx, pr.X, nf.P, nf.K, pr.ldx, BP, pr.xk) ||
        !make_map<T>(&my, pr.Y, nf.Q, nf.K, pr.ldy, BQ / CLUSTER, pr.yk))
        return not_supported("gemm rung wgmma_ws: the operands do not fit a TMA tensor map");
    // Where C cannot take the TMA store, the kernel stores through its vector epilogue.
    CUtensorMap mc{};
    const bool ts = make_map_c<T>(&mc, g, nf);
    if constexpr (sizeof(T) == 4) {
        return launch<T, true, true, BQ, PP>(g, nf, mx, my, mc, ts, dev);
    } else {
        if (pr.xk && pr.yk) return launch<T, true, true, BQ, PP>(g, nf, mx, my, mc, ts, dev);
        if (pr.xk) return launch<T, true, false, BQ, PP>(g, nf, mx, my, mc, ts, dev);
        if (pr.yk) return launch<T, false, true, BQ, PP>(g, nf, mx, my, mc, ts, dev);
        return launch<T, false, false, BQ, PP>(g, nf, mx, my, mc, ts, dev);
    }
}

template <class T>
Result run(const GemmTc &g, const Normal &nf) {
    int dev = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e != cudaSuccess) return cuda_failed(e, "gemm rung wgmma_ws: querying the device");
    bool have = false;
    Result r = sm90a_available(dev, &have);
    if (r.status != Status::Ok) return r;
    if (!have) return not_supported("gemm rung wgmma_ws needs an sm_90 GPU (H100/H200) and sm_90a code in the build");
    if (nf.K > 0x7fffffff || nf.P > 0x7fffffff || nf.Q > 0x7fffffff)
        return not_supported("gemm rung wgmma_ws: m, n and k must stay below 2^31");
    if (((nf.P + BP * CLUSTER - 1) / (BP * CLUSTER)) * ((nf.Q + 127) / 128) > 0x7fffffff)
        return not_supported("gemm rung wgmma_ws: more than 2^31 tiles");
    if (!encode_fn()) return not_supported("gemm rung wgmma_ws: the driver lacks cuTensorMapEncodeTiled");

    Prepared pr{};
    r = prepare<T>(nf, g, 1, &pr, sizeof(T) == 2);
    if (r.status != Status::Ok) return r;
    // 256-wide tiles when they give every SM of the GPU a cluster's half to work on.
    int sms = 0;
    e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    if (e != cudaSuccess) return cuda_failed(e, "gemm rung wgmma_ws: querying the device");
    const int64_t pairs_p = (nf.P + BP * CLUSTER - 1) / (BP * CLUSTER);
    const int64_t pairs256 = pairs_p * ((nf.Q + 255) / 256), pairs128 = pairs_p * ((nf.Q + 127) / 128);
    // Otherwise the persistent grid runs in waves of one tile per cluster: 128 x 256
    // tiles, unless 128 x 128 ping-pong tiles need clearly fewer waves of their half-size
    // work (shapes just past a multiple of 256, where a last, nearly empty column of
    // wide tiles costs a whole wave); at equal waves the wide tiles read less per product.
    const int64_t fit = sms / CLUSTER > 0 ? sms / CLUSTER : 1;
    const int64_t cost256 = 2 * ((pairs256 + fit - 1) / fit), cost128 = (pairs128 + fit - 1) / fit;
    int mode = tile_mode;
    if (mode == 0) mode = pairs256 * CLUSTER < sms ? 2 : 20 * cost128 < 19 * cost256 ? 3 : 1;
    if (mode == 1) return run_tiles<T, 256, false>(g, nf, pr, dev);
    if (mode == 2) return run_tiles<T, 128, false>(g, nf, pr, dev);
    return run_tiles<T, 128, true>(g, nf, pr, dev);
}

template <class T, bool XK, bool YK, int BQ, bool PP>
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
        e = cudaFuncSetAttribute(kernel<T, XK, YK, BQ, PP>, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES);
        if (e != cudaSuccess) return cuda_failed(e, "gemm rung wgmma_ws: shared memory");
        fit = sms / CLUSTER;
        cudaLaunchAttribute attr{};
        attr.id = cudaLaunchAttributeClusterDimension;
        attr.val.clusterDim.x = CLUSTER;
        attr.val.clusterDim.y = 1;
        attr.val.clusterDim.z = 1;
        cudaLaunchConfig_t cfg{};
        cfg.gridDim = dim3(CLUSTER * fit);
        cfg.blockDim = dim3(THREADS);
        cfg.dynamicSmemBytes = SMEM_BYTES;
        cfg.attrs = &attr;
        cfg.numAttrs = 1;
        int n = 0;
        if (cudaOccupancyMaxActiveClusters(&n, kernel<T, XK, YK, BQ, PP>, &cfg) == cudaSuccess && n > 0 && n < fit) fit = n;
        (void)cudaGetLastError();
        if (fit < 1) return not_supported("gemm rung wgmma_ws: no cluster of two blocks fits on the GPU");
        if (dev >= 0 && dev < 64) fit_of[dev].store(fit);
    }
    // One cluster per pair of tile rows, at most as many as fit on the GPU at once.
    const int64_t pairs = ((nf.P + BP * CLUSTER - 1) / (BP * CLUSTER)) * ((nf.Q + BQ - 1) / BQ);
    const int grid = CLUSTER * int(pairs < fit ? pairs : fit);
    // Clusters of two, set at launch (a compile-time cluster size would not build for
    // the GPUs before sm_90 in a multi-architecture build).
    cudaLaunchAttribute attr{};
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = CLUSTER;
    attr.val.clusterDim.y = 1;
    attr.val.clusterDim.z = 1;
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = dim3(grid);
    cfg.blockDim = dim3(THREADS);
    cfg.dynamicSmemBytes = SMEM_BYTES;
    cfg.stream = g.stream;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    cudaError_t e = cudaLaunchKernelEx(&cfg, kernel<T, XK, YK, BQ, PP>, mx, my, mc, nf.P, nf.Q, nf.K,
                                       make_epilogue(g, sizeof(T)), int(tma_store));
    if (e == cudaSuccess) e = cudaGetLastError();
    return e == cudaSuccess ? ok() : cuda_failed(e, "gemm rung wgmma_ws: launch");
}

}  // namespace ws12

// Workspace bytes gemm_tc_wgmma_ws needs for this call: a packed copy of each operand
// that is not k-major with a 16-byte aligned pointer and leading dimension.
inline size_t gemm_tc_wgmma_ws_workspace(const GemmTc &g) {
    Normal nf{};
    if (normalise(g, &nf).status != Status::Ok) return 0;
    if (nf.P == 0 || nf.Q == 0 || nf.K == 0) return 0;
    return pack_bytes(nf, elem_size(g.dtype), 1, g.dtype != Dtype::TF32);
}

inline Result gemm_tc_wgmma_ws(const GemmTc &g) {
    Normal nf{};
    Result r = normalise(g, &nf);
    if (r.status != Status::Ok) return r;
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
// (scripts/tc-bench.cu includes this file for the kernel alone, without the library.)
#ifndef GPK_TC_STANDALONE
#include "tc_launch.cuh"

namespace gpk::cuda {

gpk_status gemm_wgmma_ws_takes(gpk_context &ctx, const GemmArgs &args, const char **why_not) {
    tc::Dtype dtype{};
    if (!tc_dtype(ctx, args.dtype, &dtype, why_not)) return GPK_SUCCESS;
    bool have = false;
    const tc::Result r = tc::ws12::sm90a_available(ctx.device, &have);
    if (r.status == tc::Status::CudaError) return check(ctx, r.cuda, r.why);
    constexpr int64_t kMax = 0x7fffffff;
    *why_not = r.status != tc::Status::Ok ? r.why
               : !have ? "wgmma, TMA and clusters need an sm_90 GPU (H100, H200) and sm_90a code in the build"
               : args.m > kMax || args.n > kMax || args.k > kMax ? "m, n and k must stay below 2^31"
               : tc::ws12::encode_fn() == nullptr ? "the driver lacks cuTensorMapEncodeTiled"
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

// "auto" (rungs.def): where this rung leads cuBLAS, per docs/PERFORMANCE.md, section
// "Auto: gemm". Every 16-bit call it takes: it led cublasGemmEx at every shape measured,
// large, small, short k, and most where the leading dimensions are odd (cuBLAS loses
// its fast paths there, packing costs O(n^2)). TF32 calls only where it need not pack
// an operand that cuBLAS reads fast: TF32 wgmma reads k-major operands only, so it led
// in TN (both in place) and trailed in NN (one packed); where a pointer or leading
// dimension is not 16-byte aligned both sides leave their fast paths, and it packs.
gpk_status gemm_wgmma_ws_leads(gpk_context &ctx, const GemmArgs &args, const char **why_not) {
    *why_not = nullptr;
    (void)ctx;
    const auto es = static_cast<int64_t>(dtype_size(args.dtype));
    auto aligned = [es](const void *p, int64_t ld) {
        return reinterpret_cast<uintptr_t>(p) % 16 == 0 && (ld * es) % 16 == 0;
    };
    const bool unaligned = !aligned(args.A, args.lda) || !aligned(args.B, args.ldb);
    // 16-bit: cuBLAS leaves its fast kernels when a leading dimension is not a whole
    // number of 16-byte vectors, where this rung packs in O(n^2) and keeps its speed;
    // with aligned operands the two are level within the spread, and at small sizes
    // this rung's per-call cost shows ("Auto: gemm").
    if (is_16bit(args.dtype)) {
        if (!unaligned) *why_not = "with 16-byte aligned 16-bit operands, cuBLAS measured level or ahead";
        return GPK_SUCCESS;
    }
    // The normal form reads op(B)^T k-major in place when B is not transposed, op(A)
    // when A is.
    const bool in_place = args.transa && !args.transb;
    if (!(in_place || unaligned))
        *why_not = "in TF32, with aligned operands that it would pack (NN, NT, TT), cuBLAS measured ahead";
    return GPK_SUCCESS;
}

}  // namespace gpk::cuda
#endif  // GPK_TC_STANDALONE
