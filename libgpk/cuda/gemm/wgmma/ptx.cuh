// The instructions of the wgmma family (gemm rungs 12_wgmma_ws and 15_wgmma_fp8) as
// inline PTX, with the device code built directly on them: shared-memory matrix
// descriptors, the 16-bit and TF32 wgmma of every tile width, X fragments read into
// registers, mbarriers, TMA loads (multicast too) and stores, and the two epilogues that
// write a consumer's accumulators (through TMA-store boxes or F32 vectors). One copy for
// both rungs, so that a fix to an instruction's operands reaches every kernel that issues
// it. Everything but the register-list macros exists in sm_90a code alone (config.cuh).
#pragma once

#include "common.cuh"
#include "config.cuh"

#include <cuda.h>

#include <cstdint>
#include <type_traits>

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

#define GPK_WGMMA_D_REGS_32 \
    "{" "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15" \
    ", " "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31" "}"

#define GPK_WGMMA_D_OUTS_32(d) \
    "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
    "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
    "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
    "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])

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

namespace gpk::cuda::tc::wgmma {

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
// What k step s adds to a descriptor of the stage's first step: its byte offset in the
// address field. Every shared address lies below 2^18 bytes, so the field never carries
// into the bits above it, and a warp builds each stage's descriptors once and steps
// them with one add (uniform-register work beside the wgmma it issues).
template <bool KMAJOR>
__device__ __forceinline__ constexpr uint64_t desc_step(int s) {
    return uint64_t(KMAJOR ? 32 * s : 16 * ROW_BYTES * s) >> 4;
}

// imm-trans-a/b = 1: that operand is MN-major in shared memory (16-bit types only).
template <class T, int TA, int TB>
__device__ __forceinline__ void wgmma_64(float (&d)[32], uint64_t da, uint64_t db) {
    if constexpr (sizeof(T) == 4) {
        static_assert(TA == 0 && TB == 0, "TF32 wgmma reads k-major operands only");
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 " GPK_WGMMA_D_REGS_32
                     ", %32, %33, p, 1, 1;\n}\n"
                     : GPK_WGMMA_D_OUTS_32(d)
                     : "l"(da), "l"(db), "r"(1));
    } else if constexpr (std::is_same_v<T, __half>) {
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 " GPK_WGMMA_D_REGS_32
                     ", %32, %33, p, 1, 1, %35, %36;\n}\n"
                     : GPK_WGMMA_D_OUTS_32(d)
                     : "l"(da), "l"(db), "r"(1), "n"(TA), "n"(TB));
    } else {
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 " GPK_WGMMA_D_REGS_32
                     ", %32, %33, p, 1, 1, %35, %36;\n}\n"
                     : GPK_WGMMA_D_OUTS_32(d)
                     : "l"(da), "l"(db), "r"(1), "n"(TA), "n"(TB));
    }
}

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

// TF32 with the 64 rows of X from registers (a: this thread's four elements of the
// 64 x 8 fragment, see load_frag) and Y through its k-major descriptor: TF32 wgmma
// cannot read an MN-major operand from shared memory, but reads any layout of its
// registers.
template <int BQ>
__device__ __forceinline__ void wgmma_rs(float (&d)[BQ / 2], const uint32_t (&a)[4], uint64_t db) {
    if constexpr (BQ == 256) {
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %133, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 " GPK_WGMMA_D_REGS
                     ", {%128, %129, %130, %131}, %132, p, 1, 1;\n}\n"
                     : GPK_WGMMA_D_OUTS(d)
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(1));
    } else if constexpr (BQ == 128) {
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 " GPK_WGMMA_D_REGS_64
                     ", {%64, %65, %66, %67}, %68, p, 1, 1;\n}\n"
                     : GPK_WGMMA_D_OUTS_64(d)
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(1));
    } else {
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 " GPK_WGMMA_D_REGS_32
                     ", {%32, %33, %34, %35}, %36, p, 1, 1;\n}\n"
                     : GPK_WGMMA_D_OUTS_32(d)
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(1));
    }
}

// Where X's rows lie when X is read into registers (xr_row), and which fragments a
// thread passes to wgmma_rs (load_frag).
//
// Fragment row g + 8 h of warp w of a consumer warpgroup (g = lane / 4, h = 0 for
// fragment elements a0 and a2, 1 for a1 and a3) is row xr_row(w, g, h) of the
// warpgroup's 64 rows of X, and of D: a permutation of the rows chosen so that the 32
// lanes of one fragment load hit 32 different banks. X lies MN-major in the stage as
// TMA wrote it, boxes of 32 rows (128 bytes) by the stage's 32 k-rows, 16-byte chunk j
// of k-row r at chunk j ^ (r % 8) (the 128-byte swizzle). A load reads 8 rows by the 4
// k-rows t = lane % 4 (or t + 4): rows 4 (2 h + w % 2) + (g % 4) + 16 (g / 4) of their
// box lie in chunks w % 2 and w % 2 + 4, which the four k-rows' swizzle spreads over all
// eight chunks, where 8 consecutive rows would take two chunks and conflict pairwise.
// The epilogue places each accumulator row at the same xr_row.
__host__ __device__ constexpr int xr_row(int w, int g, int h) {
    return 32 * (w / 2) + 4 * (2 * h + w % 2) + (g % 4) + 16 * (g / 4);
}

// The fragment of k step s (8 elements of k) of a stage, for thread t of a warpgroup
// whose rows of X start at row `row0` of the tile: a0 (g, t), a1 (g + 8, t),
// a2 (g, t + 4), a3 (g + 8, t + 4) in the fragment's rows and columns.
__device__ __forceinline__ void load_frag(uint32_t (&a)[4], uint32_t xs, int row0, int s, int t) {
    const int w = t / 32, lane = t % 32;
#pragma unroll
    for (int v = 0; v < 4; ++v) {
        const int row = row0 + xr_row(w, lane >> 2, v & 1), k = 8 * s + (lane & 3) + 4 * (v >> 1);
        const int in = row % 32;
        const uint32_t addr = xs + (row / 32) * (32 * ROW_BYTES) + k * ROW_BYTES + (((in >> 2) ^ (k & 7)) << 4) +
                              4 * (in & 3);
        asm volatile("ld.shared.u32 %0, [%1];\n" : "=r"(a[v]) : "r"(addr) : "memory");
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
// The cluster's barrier where the only accesses to order are mbarrier initialisations
// that fence.mbarrier_init has already released to the cluster: a release arrive would
// wait for every earlier access of each thread to reach the whole GPU first.
__device__ __forceinline__ void cluster_sync_after_init() {
    asm volatile("barrier.cluster.arrive.relaxed.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
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
// completes in this thread's bulk group. The lines written are the first L2 evicts: D
// is written once and not read again by the product, while the X and Y tiles that the
// blocks running together share stay useful in L2 for the rest of the call; where D
// is large against the operands (k small) its lines would otherwise push them out.
__device__ __forceinline__ void tma_store_2d(const CUtensorMap *map, uint32_t src, int c0, int c1) {
    asm volatile(
        "{\n.reg .b64 policy;\n"
        "createpolicy.fractional.L2::evict_first.b64 policy, 1.0;\n"
        "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group.L2::cache_hint [%0, {%2, %3}], [%1], policy;\n}\n" ::"l"(
            reinterpret_cast<uint64_t>(map)),
        "r"(src), "r"(c0), "r"(c1)
        : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
// This thread's bulk stores, all but the newest `pending` groups, have read their
// shared memory (it may be written again).
template <int pending = 0>
__device__ __forceinline__ void bulk_wait_read() {
    asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(pending) : "memory");
}
// Four 8 x 8 matrices of 16-bit elements from the fragment layout; turned (.trans), row i
// of each memory matrix takes column i of the fragment's.
__device__ __forceinline__ void stmatrix_x4(uint32_t a, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3,
                                            bool turned = false) {
    if (turned)
        asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(a), "r"(r0),
                     "r"(r1), "r"(r2), "r"(r3)
                     : "memory");
    else
        asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(a), "r"(r0), "r"(r1),
                     "r"(r2), "r"(r3)
                     : "memory");
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
__device__ __forceinline__ void stage_box(const float (&d)[BQ / 2], uint32_t box, int h, float alpha, int t,
                                          bool turned = false) {
    // stmatrix writes four 8 x 8 matrices of the fragment layout per instruction, one
    // 16-byte row of each from the address of lane 8 m + i: matrices 0 and 1 are rows
    // 0-7 and 8-15 of the warp's 16 rows in column block jj, 2 and 3 those of jj + 1.
    // Turned (D stored column-major, the box 64 rows wide and 64 columns high), box row
    // c holds column c's 64 rows, and each matrix row (8 rows of one column) is a chunk.
    const int warp = t / 32, lane = t % 32, m = lane >> 3;
    const int row = warp * 16 + (m & 1) * 8 + (lane & 7);
#pragma unroll
    for (int jj = 0; jj < OUT_BOX / 8; jj += 2) {
        const int j = h * (OUT_BOX / 8) + jj;
        const int r = turned ? (jj + (m >> 1)) * 8 + (lane & 7) : row;
        const int chunk = turned ? warp * 2 + (m & 1) : jj + (m >> 1);
        const uint32_t a = box + r * ROW_BYTES + ((chunk ^ (r & 7)) << 4);
        stmatrix_x4(a, pack2<T>(alpha * d[4 * j], alpha * d[4 * j + 1]),
                    pack2<T>(alpha * d[4 * j + 2], alpha * d[4 * j + 3]),
                    pack2<T>(alpha * d[4 * j + 4], alpha * d[4 * j + 5]),
                    pack2<T>(alpha * d[4 * j + 6], alpha * d[4 * j + 7]), turned);
    }
}

// Stores a consumer's 64 x BQ accumulators (rows p_base.., columns q_base..) through
// its staging buffer: C = alpha * acc + beta * C, one rounding, only inside P x Q.
// XR: the accumulators' rows are X's permuted rows (xr_row).
template <class T, int BQ, bool XR = false>
__device__ __forceinline__ void store_tile(const float (&d)[BQ / 2], uint8_t *buf, int bar_id, const Epilogue &ep,
                                           int64_t P, int64_t Q, int64_t p_base, int64_t q_base, int t) {
    const int warp = t / 32, lane = t % 32;
    const int r0 = XR ? xr_row(warp, lane >> 2, 0) : warp * 16 + (lane >> 2);
    const int r1 = XR ? xr_row(warp, lane >> 2, 1) : r0 + 8;
    const bool vec = ep.vec4;
#pragma unroll
    for (int pass = 0; pass < BQ / EPI_COLS; ++pass) {
#pragma unroll
        for (int jj = 0; jj < EPI_COLS / 8; ++jj) {
            const int j = pass * (EPI_COLS / 8) + jj, col = jj * 8 + 2 * (lane & 3);
            *reinterpret_cast<float2 *>(buf + r0 * EPI_ROW_BYTES + col * 4) = make_float2(d[4 * j], d[4 * j + 1]);
            *reinterpret_cast<float2 *>(buf + r1 * EPI_ROW_BYTES + col * 4) = make_float2(d[4 * j + 2], d[4 * j + 3]);
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

#ifdef GPK_SM90A_CODE
// As store_tile for X from registers, with D stored transposed (element (p, q) at
// C + q * ldc + p: the normal form of an F32 call whose operands were swapped so that
// its MN-major operand is X): a
// pass stages 32 columns of q as rows of 64 p (padded by 16 bytes, so that one fragment
// store of a warp spreads over all banks), then writes C in 4-element vectors along p.
template <class T, int BQ>
__device__ __forceinline__ void store_tile_t(const float (&d)[BQ / 2], uint8_t *buf, int bar_id, const Epilogue &ep,
                                             int64_t P, int64_t Q, int64_t p_base, int64_t q_base, int t) {
    static_assert(sizeof(T) == 4, "transposed stores are for F32 C");
    constexpr int ROW = 64 + 4;  // floats per staged column of q
    static_assert(EPI_COLS * ROW * 4 <= EPI_BYTES, "a pass fits the staging buffer");
    float *f = reinterpret_cast<float *>(buf);
    // The accumulators' rows are X's permuted rows (xr_row).
    const int warp = t / 32, lane = t % 32, r0 = xr_row(warp, lane >> 2, 0), r1 = xr_row(warp, lane >> 2, 1);
    const bool vec = ep.vec4;
#pragma unroll
    for (int pass = 0; pass < BQ / EPI_COLS; ++pass) {
#pragma unroll
        for (int jj = 0; jj < EPI_COLS / 8; ++jj) {
            const int j = pass * (EPI_COLS / 8) + jj, col = jj * 8 + 2 * (lane & 3);
            f[col * ROW + r0] = d[4 * j];
            f[(col + 1) * ROW + r0] = d[4 * j + 1];
            f[col * ROW + r1] = d[4 * j + 2];
            f[(col + 1) * ROW + r1] = d[4 * j + 3];
        }
        asm volatile("bar.sync %0, 128;\n" ::"r"(bar_id) : "memory");
#pragma unroll
        for (int it = 0; it < 4; ++it) {
            const int idx = it * 128 + t, col = idx / 16, pc = 4 * (idx % 16);
            const float4 v = *reinterpret_cast<const float4 *>(f + col * ROW + pc);
            const int64_t p = p_base + pc, q = q_base + pass * EPI_COLS + col;
            if (p >= P || q >= Q) continue;
            float *c = static_cast<float *>(ep.C) + q * ep.ldc + p;
            float o[4] = {ep.alpha * v.x, ep.alpha * v.y, ep.alpha * v.z, ep.alpha * v.w};
            if (vec && p + 4 <= P) {
                if (ep.beta != 0.0f) {
                    const float4 old = *reinterpret_cast<const float4 *>(c);
                    o[0] += ep.beta * old.x;
                    o[1] += ep.beta * old.y;
                    o[2] += ep.beta * old.z;
                    o[3] += ep.beta * old.w;
                }
                *reinterpret_cast<float4 *>(c) = make_float4(o[0], o[1], o[2], o[3]);
            } else {
#pragma unroll
                for (int e = 0; e < 4; ++e)
                    if (p + e < P) c[e] = ep.beta != 0.0f ? o[e] + ep.beta * c[e] : o[e];
            }
        }
        asm volatile("bar.sync %0, 128;\n" ::"r"(bar_id) : "memory");
    }
}
#endif

}  // namespace gpk::cuda::tc::wgmma
