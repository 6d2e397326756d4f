// The host side of the wgmma family (gemm rungs 12_wgmma_ws and 15_wgmma_fp8) that is
// not a launch itself: whether the GPU runs a rung's sm_90a code, and the TMA tensor
// maps of the operands and of C, encoded through the driver's entry point (the library
// does not link the driver) and kept per thread.
#pragma once

#include "common.cuh"
#include "config.cuh"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>
#include <type_traits>

namespace gpk::cuda::tc::wgmma {

// The probe and its answer belong to the file that includes them (an unnamed namespace):
// each rung asks whether its own sm_90a code runs, and a kernel that is no template would
// otherwise be defined under one name in every file that includes this header.
namespace {

// Writes 1 where the GPU runs this file's sm_90a code, 0 elsewhere.
__global__ void probe_kernel(int *out) {
#ifdef GPK_SM90A_CODE
    *out = 1;
#else
    *out = 0;
#endif
}

// Whether device `dev` runs the sm_90a kernels of the including file; asked once per device.
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

}  // namespace

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
// MN-major (rows inner, k-rows `ld` apart): boxes of one 128-byte row along the rows
// (64 16-bit elements, 32 F32) by one stage of k,
// or by a k_parts'th of it (the blocks of a cluster sharing a 64-wide tile split its k).
template <class T>
inline bool make_map(CUtensorMap *map, const void *ptr, int64_t rows, int64_t K, int64_t ld, int box_rows,
                     bool kmajor, int k_parts = 1) {
    const CUtensorMapDataType dt = sizeof(T) == 4                   ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32
                                   : std::is_same_v<T, __half> ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                                                                    : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    const cuuint32_t ke = cuuint32_t(ROW_BYTES / sizeof(T));
    return encode_2d(map, dt, ptr, cuuint64_t(kmajor ? K : rows), cuuint64_t(kmajor ? rows : K),
                     cuuint64_t(ld) * sizeof(T), ke, kmajor ? cuuint32_t(box_rows) : ke / k_parts,
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

}  // namespace gpk::cuda::tc::wgmma
