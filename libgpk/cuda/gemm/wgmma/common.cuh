// What the tensor-core gemm rungs (11 and up) share: their raw-parameter call, the
// status they answer with, the normalisation of a CBLAS call into one product of two
// k-major operands, the packing of an operand into aligned, zero-padded workspace,
// and the alpha/beta epilogue.
//
// The rungs take A, B and C in F16 or BF16, or in F32 with the products rounded to
// TF32, and accumulate in F32. This header is self-contained (no registry types), so
// that a test or benchmark can include it directly and the library can wrap the rungs in
// its launchers (launch.cuh). It lives with the wgmma family, whose kernels build on its
// normal form and epilogue; rung 11 (mma.sync) includes it too.
//
// Normal form. Every call is first written column-major (a row-major C is the
// column-major C^T = op(B)^T op(A)^T). The kernels then compute D = C^T, of P = n rows
// and Q = m columns:
//
//     D[p][q] = sum_k X[p][k] * Y[q][k],   X = op(B)^T (n x k),  Y = op(A) (m x k),
//
// and store D[p][q] at C[q + p * ldc], so that consecutive columns of D are
// consecutive elements of C. X is k-major (k contiguous) in place when transb == N, Y
// when transa == T. ldmatrix (rung 11) and TF32 wgmma read k-major operands only;
// 16-bit wgmma also reads MN-major ones. An operand a rung cannot read in place (its
// major order, or a pointer or leading dimension not 16-byte aligned) is first packed,
// k-major and zero-padded to 128 bytes of k, into workspace (O(n^2) against the O(n^3)
// product).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace gpk::cuda::tc {

enum class Dtype : int { F16 = 0, BF16 = 1, TF32 = 2 /* F32 storage, TF32 products */ };

enum class Status : int {
    Ok = 0,
    NotSupported,       // the rung cannot take this call (why says which part)
    WorkspaceTooSmall,  // workspace_bytes < the rung's *_workspace() for this call
    CudaError,          // a CUDA call failed (cuda holds its code)
};

struct Result {
    Status status;
    const char *why;   // static string: the rung, and the parameter or limit at fault
    cudaError_t cuda;  // cudaSuccess unless status == CudaError
};

// One gemm call, CBLAS semantics: C = alpha * op(A) op(B) + beta * C, op(A) m x k,
// op(B) k x n, C m x n, every matrix column-major (the library swaps a row-major call
// and checks its arguments before it reaches a rung); beta == 0 means C is not read.
struct GemmTc {
    Dtype dtype;
    bool transa, transb;
    int64_t m, n, k;
    float alpha, beta;
    const void *A;
    int64_t lda;
    const void *B;
    int64_t ldb;
    void *C;
    int64_t ldc;
    cudaStream_t stream;
    void *workspace;  // device memory, 256-byte aligned, or null when workspace_bytes == 0
    size_t workspace_bytes;
};

inline constexpr Result ok() { return {Status::Ok, "", cudaSuccess}; }
inline constexpr Result not_supported(const char *why) { return {Status::NotSupported, why, cudaSuccess}; }
inline Result cuda_failed(cudaError_t e, const char *why) { return {Status::CudaError, why, e}; }

inline size_t elem_size(Dtype d) { return d == Dtype::TF32 ? 4 : 2; }

// ---- normal form -------------------------------------------------------------------

// An operand of the normal form: rows x k, element (r, c) at ptr[r * ld + c] when
// kmajor, else at ptr[c * ld + r].
struct Operand {
    const void *ptr;
    int64_t ld;
    bool kmajor;
    int64_t rows;
};

struct Normal {
    int64_t P, Q, K;  // D is P x Q
    Operand X, Y;     // X: P x K, Y: Q x K
};

// The normal form of a call: D = C^T is P x Q = n x m, X = op(B)^T and Y = op(A).
inline Normal normal_form(const GemmTc &g) {
    Normal out{};
    out.P = g.n;
    out.Q = g.m;
    out.K = g.k;
    // X[p][c] = op(B)(c, p): B[c + p*ldb] when !tb (k-major), B[p + c*ldb] when tb.
    out.X = Operand{g.B, g.ldb, !g.transb, g.n};
    // Y[q][c] = op(A)(q, c): A[c + q*lda] when ta (k-major), A[q + c*lda] when !ta.
    out.Y = Operand{g.A, g.lda, g.transa, g.m};
    return out;
}

// Whether an operand can be read in place by 16-byte loads (cp.async, TMA): k-major
// (or MN-major too where the rung reads both, `allow_mn`), pointer 16-byte aligned,
// rows a whole number of 16 bytes apart; `kmult` asks also for k a multiple of this
// many elements (rungs whose loads cannot stop mid-vector).
inline bool in_place(const Operand &o, int64_t K, size_t esize, int64_t kmult, bool allow_mn = false) {
    return (o.kmajor || allow_mn) && reinterpret_cast<uintptr_t>(o.ptr) % 16 == 0 &&
           (o.ld * int64_t(esize)) % 16 == 0 && K % kmult == 0;
}

// Leading dimension of a packed operand: k rounded up to 128 bytes, the pad zeros, so
// that every row starts on a cache line and a 128-byte TMA box row is one line, not two.
inline int64_t packed_ld(int64_t K, size_t esize) {
    const int64_t per128 = 128 / int64_t(esize);
    int64_t ld = (K + per128 - 1) / per128 * per128;
    return ld > 0 ? ld : per128;
}

inline size_t round_up_256(size_t b) { return (b + 255) / 256 * 256; }

// ---- packing -----------------------------------------------------------------------

// dst[r * ldd + c] = element (r, c) of the operand for c < cols, 0 for cols <= c < ldd.
// 64 x 64 tiles through shared memory, so that an operand stored along r (not k-major)
// is read and written in coalesced rows; 16 loads per thread are in flight before the
// first store, since packing is bound by memory latency, not by instructions.
constexpr int kPackTile = 64;
template <class T>
__global__ void __launch_bounds__(256) pack_kernel(const T *__restrict__ src, int64_t lds, bool kmajor, int64_t rows,
                                                   int64_t cols, T *__restrict__ dst, int64_t ldd) {
    __shared__ T tile[kPackTile][kPackTile + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;  // 32 x 8
    const int64_t c0 = int64_t(blockIdx.x) * kPackTile;
    for (int64_t r0 = int64_t(blockIdx.y) * kPackTile; r0 < rows; r0 += int64_t(gridDim.y) * kPackTile) {
        T v[16];
#pragma unroll
        for (int i = 0; i < 16; ++i) {
            // k-major: lanes run along c; otherwise along r (both contiguous in memory).
            const int a = ty + 8 * (i >> 1), b = tx + 32 * (i & 1);
            const int rr = kmajor ? a : b, cc = kmajor ? b : a;
            const int64_t r = r0 + rr, c = c0 + cc;
            v[i] = T(0.0f);
            if (r < rows && c < cols) v[i] = kmajor ? src[r * lds + c] : src[c * lds + r];
        }
#pragma unroll
        for (int i = 0; i < 16; ++i) {
            const int a = ty + 8 * (i >> 1), b = tx + 32 * (i & 1);
            if (kmajor) tile[a][b] = v[i];
            else tile[b][a] = v[i];
        }
        __syncthreads();
#pragma unroll
        for (int i = 0; i < 16; ++i) {
            const int a = ty + 8 * (i >> 1), b = tx + 32 * (i & 1);
            const int64_t r = r0 + a, c = c0 + b;
            if (r < rows && c < ldd) dst[r * ldd + c] = tile[a][b];
        }
        __syncthreads();
    }
}

template <class T>
inline cudaError_t launch_pack(const Operand &o, int64_t K, T *dst, int64_t ldd, cudaStream_t s) {
    const int64_t ctiles = (ldd + kPackTile - 1) / kPackTile;
    const int64_t rtiles = (o.rows + kPackTile - 1) / kPackTile;
    if (ctiles > 0x7fffffff) return cudaErrorInvalidValue;
    dim3 grid(unsigned(ctiles), unsigned(rtiles < 65535 ? rtiles : 65535));
    pack_kernel<T><<<grid, dim3(32, 8), 0, s>>>(static_cast<const T *>(o.ptr), o.ld, o.kmajor, o.rows, K, dst, ldd);
    return cudaGetLastError();
}

// The operands a kernel reads: each either the caller's, or a packed (k-major) copy in
// workspace.
struct Prepared {
    const void *X;
    int64_t ldx;
    const void *Y;
    int64_t ldy;
    bool packed_x, packed_y;
    bool xk, yk;  // operand read k-major (else MN-major, in place)
};

// Bytes of workspace a call needs: one packed copy per operand not usable in place
// (MN-major operands are, where the kernel reads them so: allow_mn_x, allow_mn_y).
inline size_t pack_bytes(const Normal &nf, size_t esize, int64_t kmult, bool allow_mn_x = false,
                         bool allow_mn_y = false) {
    const int64_t ld = packed_ld(nf.K, esize);
    size_t b = 0;
    if (!in_place(nf.X, nf.K, esize, kmult, allow_mn_x)) b += round_up_256(size_t(nf.P) * size_t(ld) * esize);
    if (!in_place(nf.Y, nf.K, esize, kmult, allow_mn_y)) b += round_up_256(size_t(nf.Q) * size_t(ld) * esize);
    return b;
}

template <class T>
inline Result prepare(const Normal &nf, const GemmTc &g, int64_t kmult, Prepared *pr, bool allow_mn_x = false,
                      bool allow_mn_y = false) {
    const size_t esize = sizeof(T);
    if (pack_bytes(nf, esize, kmult, allow_mn_x, allow_mn_y) > g.workspace_bytes)
        return {Status::WorkspaceTooSmall, "workspace", cudaSuccess};
    const int64_t ld = packed_ld(nf.K, esize);
    char *ws = static_cast<char *>(g.workspace);
    pr->packed_x = !in_place(nf.X, nf.K, esize, kmult, allow_mn_x);
    pr->packed_y = !in_place(nf.Y, nf.K, esize, kmult, allow_mn_y);
    pr->xk = pr->packed_x || nf.X.kmajor;
    pr->yk = pr->packed_y || nf.Y.kmajor;
    if (pr->packed_x) {
        T *dst = reinterpret_cast<T *>(ws);
        cudaError_t e = launch_pack<T>(nf.X, nf.K, dst, ld, g.stream);
        if (e != cudaSuccess) return cuda_failed(e, "packing an operand");
        pr->X = dst;
        pr->ldx = ld;
        ws += round_up_256(size_t(nf.P) * size_t(ld) * esize);
    } else {
        pr->X = nf.X.ptr;
        pr->ldx = nf.X.ld;
    }
    if (pr->packed_y) {
        T *dst = reinterpret_cast<T *>(ws);
        cudaError_t e = launch_pack<T>(nf.Y, nf.K, dst, ld, g.stream);
        if (e != cudaSuccess) return cuda_failed(e, "packing an operand");
        pr->Y = dst;
        pr->ldy = ld;
    } else {
        pr->Y = nf.Y.ptr;
        pr->ldy = nf.Y.ld;
    }
    return ok();
}

// ---- epilogue ----------------------------------------------------------------------

template <class T>
__device__ __forceinline__ float to_f32(T v) {
    if constexpr (sizeof(T) == 4) return v;
    else if constexpr (std::is_same_v<T, __half>) return __half2float(v);
    else return __bfloat162float(v);
}
template <class T>
__device__ __forceinline__ T from_f32(float v) {
    if constexpr (sizeof(T) == 4) return v;
    else if constexpr (std::is_same_v<T, __half>) return __float2half_rn(v);
    else return __float2bfloat16_rn(v);
}

// Where and how D is stored.
struct Epilogue {
    void *C;
    int64_t ldc;
    float alpha, beta;
    bool pairs;  // C and ldc aligned so that (q, q + 1), q even, is one aligned store
    bool vec4;   // likewise for (q .. q + 3), q a multiple of 4
};

template <class T>
struct Pair;
template <>
struct Pair<__nv_bfloat16> {
    using type = __nv_bfloat162;
};
template <>
struct Pair<__half> {
    using type = __half2;
};
template <>
struct Pair<float> {
    using type = float2;
};

// D[p][q] = v0 and D[p][q + 1] = v1 (q even), each through alpha/beta, each only
// inside P x Q. beta == 0: C is not read.
template <class T>
__device__ __forceinline__ void store_pair(const Epilogue &ep, int64_t P, int64_t Q, int64_t p, int64_t q, float v0,
                                           float v1) {
    if (p >= P || q >= Q) return;
    T *c = static_cast<T *>(ep.C) + p * ep.ldc + q;
    v0 *= ep.alpha;
    v1 *= ep.alpha;
    if (ep.pairs && q + 1 < Q) {
        using P2 = typename Pair<T>::type;
        P2 *c2 = reinterpret_cast<P2 *>(c);
        if (ep.beta != 0.0f) {
            const P2 old = *c2;
            v0 += ep.beta * to_f32<T>(reinterpret_cast<const T *>(&old)[0]);
            v1 += ep.beta * to_f32<T>(reinterpret_cast<const T *>(&old)[1]);
        }
        P2 w;
        reinterpret_cast<T *>(&w)[0] = from_f32<T>(v0);
        reinterpret_cast<T *>(&w)[1] = from_f32<T>(v1);
        *c2 = w;
        return;
    }
    if (ep.beta != 0.0f) v0 += ep.beta * to_f32<T>(c[0]);
    c[0] = from_f32<T>(v0);
    if (q + 1 < Q) {
        if (ep.beta != 0.0f) v1 += ep.beta * to_f32<T>(c[1]);
        c[1] = from_f32<T>(v1);
    }
}

inline Epilogue make_epilogue(const GemmTc &g, size_t esize) {
    const bool pairs = reinterpret_cast<uintptr_t>(g.C) % (2 * esize) == 0 && g.ldc % 2 == 0;
    const bool vec4 = reinterpret_cast<uintptr_t>(g.C) % (4 * esize) == 0 && g.ldc % 4 == 0;
    return Epilogue{g.C, g.ldc, g.alpha, g.beta, pairs, vec4};
}

// C = beta * C over m x n (k == 0 or alpha == 0 leaves no product); beta == 0 writes
// zeros without reading C.
template <class T>
__global__ void scale_c_kernel(Epilogue ep, int64_t P, int64_t Q) {
    for (int64_t p = blockIdx.y; p < P; p += gridDim.y)
        for (int64_t q = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; q < Q; q += int64_t(gridDim.x) * blockDim.x) {
            T *c = static_cast<T *>(ep.C) + p * ep.ldc + q;
            *c = from_f32<T>(ep.beta == 0.0f ? 0.0f : ep.beta * to_f32<T>(*c));
        }
}

template <class T>
inline Result scale_c(const GemmTc &g, const Normal &nf) {
    Epilogue ep = make_epilogue(g, sizeof(T));
    const int64_t bx = (nf.Q + 255) / 256;
    dim3 grid(unsigned(bx < 1024 ? bx : 1024), unsigned(nf.P < 65535 ? nf.P : 65535));
    scale_c_kernel<T><<<grid, 256, 0, g.stream>>>(ep, nf.P, nf.Q);
    cudaError_t e = cudaGetLastError();
    return e == cudaSuccess ? ok() : cuda_failed(e, "scaling C");
}

}  // namespace gpk::cuda::tc
