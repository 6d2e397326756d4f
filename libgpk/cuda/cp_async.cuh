// cp.async from global to shared memory, with the ordinary load and store it stands for
// below sm_80: shared by the gemm rungs (gemm_util.cuh) and the batched FP64 rung, which
// includes nothing of the library beside it.
#pragma once

#include <cstdint>
#include <type_traits>

namespace gpk::cuda {

// Whether the device code being compiled is for sm_80 or newer (cp.async, FP64 mma).
// Kernels that need it start with `if (!kSm80Code) { __trap(); return; }`: their
// launchers never run them on older GPUs, and the compiler drops the rest of the body
// there.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
constexpr bool kSm80Code = false;
#else
constexpr bool kSm80Code = true;
#endif

// Copies Bytes (4, 8 or 16; 16 needs both addresses 16-byte aligned) from global to
// shared memory with cp.async, or writes zeros there when !valid (src-size 0: nothing
// is read, `gmem` must still be a valid address). Below sm_80, where no kernel of ours
// runs it, it is an ordinary load and store.
template <int Bytes>
__device__ __forceinline__ void copy_async(void *smem, const void *gmem, bool valid) {
    static_assert(Bytes == 4 || Bytes == 8 || Bytes == 16, "cp.async copies 4, 8 or 16 bytes");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const unsigned int dst = static_cast<unsigned int>(__cvta_generic_to_shared(smem));
    const int src_size = valid ? Bytes : 0;
    if constexpr (Bytes == 16)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(gmem), "r"(src_size)
                     : "memory");
    else
        asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(dst), "l"(gmem), "n"(Bytes),
                     "r"(src_size)
                     : "memory");
#else
    using Word = std::conditional_t<Bytes == 4, unsigned int, std::conditional_t<Bytes == 8, uint2, uint4>>;
    *static_cast<Word *>(smem) = valid ? *static_cast<const Word *>(gmem) : Word{};
#endif
}

// Closes the group of copies issued since the last commit.
__device__ __forceinline__ void copy_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

// Waits until at most `Pending` of this thread's committed groups are still in flight.
// Other threads' copies become visible only after a __syncthreads() that follows.
template <int Pending>
__device__ __forceinline__ void copy_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending) : "memory");
#endif
}

}  // namespace gpk::cuda
