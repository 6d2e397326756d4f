// Rung 11, mma.sync: the first rung on the tensor cores. Rung 10 keeps the FP32
// multiply-add units busy, but they are a tenth of the chip's arithmetic: 16-bit
// products are done by the tensor cores, and a warp reaches them through mma.sync,
// which multiplies a 16x16 fragment of X by a 16x8 fragment of Y in one instruction.
//
// * Fragments come out of shared memory through ldmatrix, which gives each lane the
//   pairs of elements mma.sync wants with one 16-byte read per lane and no reshuffle.
// * Tiles arrive with cp.async in a ring of stages, so the loads of k-tile t + 3 run
//   under the products of tile t, and the registers are kept for the accumulators.
// * Rows of a tile are 64 bytes; their four 16-byte chunks are XOR-permuted by row
//   pair, so the eight rows one ldmatrix phase reads fall on 32 distinct banks with no
//   padding (a plain layout would put every second row on the same banks).
// * Both operands are read k-major; one that is not (or is not aligned for 16-byte
//   copies, or whose k is not a multiple of 8) is packed into workspace first.
//
// Block tile 128 x 128 with k-tiles of 32, eight warps of 64 x 32. F16 and BF16 only:
// an F32 call is NOT_SUPPORTED here (its TF32 path is rung 12's wgmma).
#include "wgmma/common.cuh"
#include "wgmma/launch.cuh"

namespace gpk::cuda::tc {
namespace mma11 {

constexpr int BP = 128, BQ = 128, BK = 32, STAGES = 4, THREADS = 256;
constexpr int TILE_BYTES = BP * BK * 2;  // one operand's k-tile: 128 rows of 64 bytes (BP == BQ)
constexpr int STAGE_BYTES = 2 * TILE_BYTES;
constexpr int SMEM_BYTES = STAGES * STAGE_BYTES;

// Byte offset of 16-byte chunk `chunk` (0..3) of row `row` in a tile of 64-byte rows.
__device__ __forceinline__ uint32_t swz(int row, int chunk) {
    return uint32_t(row * 64 + ((chunk ^ ((row >> 1) & 3)) << 4));
}

__device__ __forceinline__ void cp16(uint32_t dst, const void *src, bool valid) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0)
                 : "memory");
#endif
}

__device__ __forceinline__ void ldsm_x4(uint32_t addr, uint32_t &r0, uint32_t &r1, uint32_t &r2, uint32_t &r3) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
                 : "r"(addr));
#endif
}

template <class T>
__device__ __forceinline__ void mma16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    if constexpr (std::is_same_v<T, __half>)
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
            "{%0, %1, %2, %3};\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    else
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
            "{%0, %1, %2, %3};\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#endif
}

// D (P x Q) = X (P x Kp) Y^T (Q x Kp), both k-major with 16-byte aligned rows and
// Kp a multiple of 8 (elements past k are zero or absent).
template <class T>
__global__ void __launch_bounds__(THREADS) kernel(const T *__restrict__ X, int64_t ldx, const T *__restrict__ Y,
                                                  int64_t ldy, int64_t P, int64_t Q, int64_t Kp, Epilogue ep) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    extern __shared__ __align__(128) uint8_t smem[];
    const uint32_t sbase = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wp = warp >> 2, wq = warp & 3;  // warp tile: 64 rows of P x 32 of Q
    const int64_t p0 = int64_t(blockIdx.y) * BP, q0 = int64_t(blockIdx.x) * BQ;
    const int64_t nk = (Kp + BK - 1) / BK;

    auto load = [&](int stage, int64_t kt) {
        const uint32_t xs = sbase + stage * STAGE_BYTES, ys = xs + TILE_BYTES;
#pragma unroll
        for (int i = 0; i < 2; ++i) {
            const int idx = tid + i * THREADS, row = idx >> 2, chunk = idx & 3;
            const int64_t gk = kt * BK + chunk * 8;
            const bool kin = gk < Kp;
            const bool vx = kin && p0 + row < P, vy = kin && q0 + row < Q;
            cp16(xs + swz(row, chunk), vx ? X + (p0 + row) * ldx + gk : X, vx);
            cp16(ys + swz(row, chunk), vy ? Y + (q0 + row) * ldy + gk : Y, vy);
        }
    };

    float acc[4][4][4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
            for (int r = 0; r < 4; ++r) acc[i][j][r] = 0.0f;

#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < nk) load(s, s);
        asm volatile("cp.async.commit_group;\n" ::: "memory");
    }

    for (int64_t kt = 0; kt < nk; ++kt) {
        asm volatile("cp.async.wait_group %0;\n" ::"n"(STAGES - 2) : "memory");
        __syncthreads();  // tile kt visible to all; the stage refilled below is free
        {
            const int64_t next = kt + STAGES - 1;
            if (next < nk) load(int(next % STAGES), next);
            asm volatile("cp.async.commit_group;\n" ::: "memory");
        }
        const uint32_t xs = sbase + int(kt % STAGES) * STAGE_BYTES, ys = xs + TILE_BYTES;
#pragma unroll
        for (int kk = 0; kk < BK / 16; ++kk) {
            uint32_t a[4][4], b[4][2];
#pragma unroll
            for (int mi = 0; mi < 4; ++mi)
                ldsm_x4(xs + swz(wp * 64 + mi * 16 + (lane & 15), kk * 2 + (lane >> 4)), a[mi][0], a[mi][1],
                        a[mi][2], a[mi][3]);
#pragma unroll
            for (int nj = 0; nj < 2; ++nj)
                ldsm_x4(ys + swz(wq * 32 + nj * 16 + (lane & 7) + ((lane >> 4) << 3), kk * 2 + ((lane >> 3) & 1)),
                        b[2 * nj][0], b[2 * nj][1], b[2 * nj + 1][0], b[2 * nj + 1][1]);
#pragma unroll
            for (int mi = 0; mi < 4; ++mi)
#pragma unroll
                for (int ni = 0; ni < 4; ++ni) mma16816<T>(acc[mi][ni], a[mi], b[ni][0], b[ni][1]);
        }
    }
    asm volatile("cp.async.wait_group 0;\n" ::: "memory");

#pragma unroll
    for (int mi = 0; mi < 4; ++mi)
#pragma unroll
        for (int ni = 0; ni < 4; ++ni) {
            const int64_t p = p0 + wp * 64 + mi * 16 + (lane >> 2);
            const int64_t q = q0 + wq * 32 + ni * 8 + 2 * (lane & 3);
            store_pair<T>(ep, P, Q, p, q, acc[mi][ni][0], acc[mi][ni][1]);
            store_pair<T>(ep, P, Q, p + 8, q, acc[mi][ni][2], acc[mi][ni][3]);
        }
#endif
}

template <class T>
Result run(const GemmTc &g, const Normal &nf) {
    int dev = 0, major = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
    if (e != cudaSuccess) return cuda_failed(e, "gemm rung mma_sync: querying the device");
    if (major < 8) return not_supported("gemm rung mma_sync needs compute capability 8.0 or newer");
    cudaFuncAttributes fa{};
    e = cudaFuncGetAttributes(&fa, kernel<T>);
    if (e != cudaSuccess) return cuda_failed(e, "gemm rung mma_sync: kernel attributes");
    if (fa.ptxVersion < 80) return not_supported("gemm rung mma_sync: this build has no sm_80+ code for the GPU");

    const int64_t tp = (nf.P + BP - 1) / BP, tq = (nf.Q + BQ - 1) / BQ;
    if (tp > 65535 || tq > 0x7fffffff) return not_supported("gemm rung mma_sync: n above 8388480");
    Prepared pr{};
    Result r = prepare<T>(nf, g, 8, &pr);
    if (r.status != Status::Ok) return r;
    e = cudaFuncSetAttribute(kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES);
    if (e != cudaSuccess) return cuda_failed(e, "gemm rung mma_sync: shared memory");
    // Columns past k are zeros in a packed operand and absent from one read in place
    // (whose k is then a multiple of 8): reading up to k rounded to 8 is exact for both.
    const int64_t Kp = (nf.K + 7) / 8 * 8;
    kernel<T><<<dim3(unsigned(tq), unsigned(tp)), THREADS, SMEM_BYTES, g.stream>>>(
        static_cast<const T *>(pr.X), pr.ldx, static_cast<const T *>(pr.Y), pr.ldy, nf.P, nf.Q, Kp,
        make_epilogue(g, sizeof(T)));
    e = cudaGetLastError();
    return e == cudaSuccess ? ok() : cuda_failed(e, "gemm rung mma_sync: launch");
}

}  // namespace mma11

// Workspace bytes gemm_tc_mma_sync needs for this call (0 when both operands are
// k-major, 16-byte aligned and k is a multiple of 8).
inline size_t gemm_tc_mma_sync_workspace(const GemmTc &g) {
    if (g.dtype == Dtype::TF32) return 0;
    const Normal nf = normal_form(g);
    if (nf.P == 0 || nf.Q == 0 || nf.K == 0) return 0;
    return pack_bytes(nf, 2, 8);
}

inline Result gemm_tc_mma_sync(const GemmTc &g) {
    if (g.dtype == Dtype::TF32) return not_supported("gemm rung mma_sync takes F16 and BF16 only");
    const Normal nf = normal_form(g);
    if (nf.P == 0 || nf.Q == 0) return ok();
    if (nf.K == 0 || g.alpha == 0.0f)
        return g.dtype == Dtype::F16 ? scale_c<__half>(g, nf) : scale_c<__nv_bfloat16>(g, nf);
    return g.dtype == Dtype::F16 ? mma11::run<__half>(g, nf) : mma11::run<__nv_bfloat16>(g, nf);
}

}  // namespace gpk::cuda::tc

// ---- the library's launcher ---------------------------------------------------------

namespace gpk::cuda {

gpk_status gemm_mma_sync_takes(gpk_context &ctx, const GemmArgs &args, const char **why_not) {
    *why_not = nullptr;
    if (!is_16bit(args.dtype)) {
        *why_not = "it takes F16 and BF16 only (F32 in GPK_MATH_TF32 runs on rung wgmma_ws)";
        return GPK_SUCCESS;
    }
    int major = 0;
    GPK_FORWARD_IF_ERROR(gemm_util::device_attribute(ctx, cudaDevAttrComputeCapabilityMajor, &major));
    cudaFuncAttributes fa{};
    GPK_CUDA_TRY(ctx, cudaFuncGetAttributes(&fa, tc::mma11::kernel<__half>));
    // The normal form's P (tile rows of the grid's y) is n for a column-major call.
    const int64_t tiles_p = (args.n + tc::mma11::BP - 1) / tc::mma11::BP;
    *why_not = major < 8             ? "mma.sync with ldmatrix and cp.async needs a GPU of compute capability 8.0 or newer"
               : fa.ptxVersion < 80  ? "this build has no sm_80 or newer code for the GPU"
               : tiles_p > 65535     ? "n above 8388480 (65535 tile rows of the grid)"
                                     : nullptr;
    return GPK_SUCCESS;
}

gpk_status gemm_mma_sync(gpk_context &ctx, const GemmArgs &args) {
    const char *why_not = nullptr;
    GPK_FORWARD_IF_ERROR(gemm_mma_sync_takes(ctx, args, &why_not));
    if (why_not != nullptr) return refuse(ctx, "gemm", "mma_sync", why_not);
    const tc::Dtype dtype = args.dtype == GPK_F16 ? tc::Dtype::F16 : tc::Dtype::BF16;
    return run_tc(ctx, args, "mma_sync", dtype, tc::gemm_tc_mma_sync_workspace, tc::gemm_tc_mma_sync);
}

}  // namespace gpk::cuda
