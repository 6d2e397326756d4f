// The FP8 wgmma of gemm rung 15 (15_wgmma_fp8.cu): m64n128k32, F32 accumulators, both
// operands k-major in shared memory through descriptors (FP8 wgmma has no transpose
// bits: its operands are k-major or nothing); with the few instructions around it that
// the FP8 kernel's promotion of partial sums needs. Built on ptx.cuh (the accumulator
// register lists and the descriptors), apart from it because no 16-bit kernel uses it.
//
// XT and YT: the formats of the first operand (X, the 64 rows of D) and of the second
// (Y, its 128 columns), 0 for E4M3 and 1 for E5M2; any mix is one instruction.
// acc == 0: D = the product, the accumulators' old values not read (each 128-k block
// starts a fresh partial sum this way, with no instructions to zero it).
#pragma once

#include "config.cuh"
#include "ptx.cuh"

#include <cstdint>

namespace gpk::cuda::tc::wgmma {

#ifdef GPK_SM90A_CODE
#define GPK_F8_WGMMA_128(XS, YS)                                                                       \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"                                          \
                 "wgmma.mma_async.sync.aligned.m64n128k32.f32." XS "." YS " " GPK_WGMMA_D_REGS_64     \
                 ", %64, %65, p, 1, 1;\n}\n"                                                           \
                 : GPK_WGMMA_D_OUTS_64(d)                                                              \
                 : "l"(da), "l"(db), "r"(acc))

template <int XT, int YT>
__device__ __forceinline__ void wgmma_f8(float (&d)[64], uint64_t da, uint64_t db, int acc) {
    if constexpr (XT == 0 && YT == 0) GPK_F8_WGMMA_128("e4m3", "e4m3");
    else if constexpr (XT == 0) GPK_F8_WGMMA_128("e4m3", "e5m2");
    else if constexpr (YT == 0) GPK_F8_WGMMA_128("e5m2", "e4m3");
    else GPK_F8_WGMMA_128("e5m2", "e5m2");
}
#undef GPK_F8_WGMMA_128

// Ties the accumulators to this point of the program: the compiler may not move their
// reads above a wgmma wait (nothing else tells it that the wait is what makes them
// valid) nor their writes below the next wgmma.
template <int N>
__device__ __forceinline__ void fence_regs(float (&d)[N]) {
#pragma unroll
    for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// mbar_arrive_cluster (the shared header's) on a predicate, without a branch: a branch
// between the promotion's adds and the next block's wgmma splits the code the compiler
// schedules, and it then gives the next partial sums fresh registers while the adds
// still read the old ones (a third set of 64, which spills).
__device__ __forceinline__ void mbar_arrive_cluster_if(uint32_t bar, uint32_t rank, bool pred) {
    asm volatile(
        "{\n.reg .b32 remote;\n.reg .pred p;\nsetp.ne.b32 p, %2, 0;\n"
        "mapa.shared::cluster.u32 remote, %0, %1;\n"
        "@p mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(bar),
        "r"(rank), "r"(int(pred))
        : "memory");
}

// 4 bytes from global memory into shared memory, asynchronously (cp.async); zeros
// where `in` is false (nothing is read).
__device__ __forceinline__ void copy4(uint32_t dst, const float *src, bool in) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(in ? 4 : 0) : "memory");
}

template <int pending>
__device__ __forceinline__ void wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(pending) : "memory");
}
#endif

}  // namespace gpk::cuda::tc::wgmma
