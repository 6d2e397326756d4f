// Rung 7, 2D register blocking: rung 6 blocks C in registers along one dimension
// only, so every multiply-add still needs a fresh element of op(B) from shared memory
// (or of op(A) from global memory). Here each of 256 threads owns an 8x8 block of a
// 128x128 tile of C: per step of k it reads 8 elements of the A tile and 8 of the B
// tile from shared memory into registers and does 64 multiply-adds with them, 1/4 of
// a shared-memory word per multiply-add, read in 16-byte pieces.
//
// Both tiles are stored k-major (As[p][i], Bs[p][j]), so a thread's 8 rows (columns)
// are two runs of 4 floats (four runs of 2 doubles) that it reads as 16-byte vectors.
// The runs of a thread sit 64 (32) elements apart and the threads of a warp take
// consecutive runs, so those reads are free of bank conflicts. In column-major terms
// the operand whose tile is stored transposed is the one contiguous along k: B in the
// plain case (A in siboehm's row-major original), A when A is transposed.
//
// Tiles are filled with 16-byte global loads along each operand's contiguous
// dimension when the matrix is 16-byte aligned and its leading dimension a multiple
// of the vector width; runs that cross an edge of the matrix, or calls without that
// alignment, go element by element, zero-filling outside the matrix. The fill of a
// k-contiguous operand scatters each vector over 4 (2) rows of its tile; the tiles'
// rows are padded by one vector so those writes are free of bank conflicts. C is
// written (and read, when beta != 0) in 16-byte vectors under the same conditions.
#include "gemm_util.cuh"

namespace gpk::cuda {
namespace {

using namespace gemm_util;

constexpr int kThreads = 256;
constexpr int kTileM = 128, kTileN = 128, kTileK = 8;
constexpr int kThreadM = 8, kThreadN = 8;      // the C block of one thread
constexpr int kThreadsM = kTileM / kThreadM;   // threads along m
static_assert(kThreadsM * (kTileN / kThreadN) == kThreads, "the threads cover the C tile exactly");

// S[p][o] = op(X)(o0 + o, p0 + p) for the kOuter x kTileK tile at (o0, p0), zero
// outside the outer x k operand. op(X)(o, p) is X[o + p*ld] when the operand is
// contiguous along o (A, or B^T), else X[p + o*ld] (A^T, or B). Rows of S are padded
// by one vector: kOuter + kLanes elements.
template <class T, int kOuter>
__device__ __forceinline__ void load_tile(T (*S)[kOuter + Vec16<T>::kLanes], const T *__restrict__ X, int64_t ld,
                                          bool contiguous_o, bool vec, int64_t o0, int64_t outer, int64_t p0,
                                          int64_t k, int tid) {
    using V = vec16_t<T>;
    constexpr int L = Vec16<T>::kLanes;
    constexpr int kVectors = kOuter * kTileK / L;
    static_assert(kVectors % kThreads == 0, "the tile splits evenly over the threads");
#pragma unroll
    for (int r = 0; r < kVectors / kThreads; ++r) {
        const int e = tid + r * kThreads;
        V v;
        if (contiguous_o) {
            // kOuter / L vectors along each row p of the tile: stored as they are.
            const int p = e / (kOuter / L), o = e % (kOuter / L) * L;
            const int64_t go = o0 + o, gp = p0 + p;
            const T *src = X + (go + gp * ld);
            if (vec && gp < k && go + L <= outer) {
                v = *reinterpret_cast<const V *>(src);
            } else {
#pragma unroll
                for (int q = 0; q < L; ++q) lane<T>(v, q) = gp < k && go + q < outer ? src[q] : T(0);
            }
            *reinterpret_cast<V *>(&S[p][o]) = v;
        } else {
            // kTileK / L vectors along k for each o: scattered down a column of S.
            const int o = e / (kTileK / L), p = e % (kTileK / L) * L;
            const int64_t go = o0 + o, gp = p0 + p;
            const T *src = X + (gp + go * ld);
            if (vec && go < outer && gp + L <= k) {
                v = *reinterpret_cast<const V *>(src);
            } else {
#pragma unroll
                for (int q = 0; q < L; ++q) lane<T>(v, q) = go < outer && gp + q < k ? src[q] : T(0);
            }
#pragma unroll
            for (int q = 0; q < L; ++q) S[p + q][o] = lane<T>(v, q);
        }
    }
}

template <class T>
__global__ void __launch_bounds__(kThreads)
    gemm_register_2d_kernel(bool transa, bool transb, bool vec_a, bool vec_b, bool vec_c, int64_t m, int64_t n,
                            int64_t k, T alpha, const T *__restrict__ A, int64_t lda, const T *__restrict__ B,
                            int64_t ldb, T beta, T *__restrict__ C, int64_t ldc) {
    using V = vec16_t<T>;
    constexpr int L = Vec16<T>::kLanes;
    static_assert(kThreadM % L == 0 && kThreadN % L == 0, "a thread's rows and columns are whole vectors");
    constexpr int kStrideM = kTileM / (kThreadM / L);  // between a thread's runs of L rows
    constexpr int kStrideN = kTileN / (kThreadN / L);
    __shared__ __align__(16) T As[kTileK][kTileM + L];  // As[p][i] = op(A)(i0 + i, p0 + p)
    __shared__ __align__(16) T Bs[kTileK][kTileN + L];  // Bs[p][j] = op(B)(p0 + p, j0 + j)

    const int tid = threadIdx.x;
    const int tm = tid % kThreadsM, tn = tid / kThreadsM;
    const int64_t tiles_m = (m + kTileM - 1) / kTileM, tiles_n = (n + kTileN - 1) / kTileN;
    for (int64_t tj = blockIdx.y; tj < tiles_n; tj += gridDim.y) {
        for (int64_t ti = blockIdx.x; ti < tiles_m; ti += gridDim.x) {
            const int64_t i0 = ti * kTileM, j0 = tj * kTileN;
            // acc[x][y]: C(i0 + x/L*kStrideM + tm*L + x%L, j0 + y/L*kStrideN + tn*L + y%L)
            T acc[kThreadM][kThreadN];
#pragma unroll
            for (int x = 0; x < kThreadM; ++x)
#pragma unroll
                for (int y = 0; y < kThreadN; ++y) acc[x][y] = T(0);

            for (int64_t p0 = 0; p0 < k; p0 += kTileK) {
                load_tile<T, kTileM>(As, A, lda, !transa, vec_a, i0, m, p0, k, tid);
                load_tile<T, kTileN>(Bs, B, ldb, transb, vec_b, j0, n, p0, k, tid);
                __syncthreads();  // the tiles are complete
#pragma unroll
                for (int p = 0; p < kTileK; ++p) {
                    T a[kThreadM], b[kThreadN];
#pragma unroll
                    for (int s = 0; s < kThreadM / L; ++s) {
                        V v = *reinterpret_cast<const V *>(&As[p][s * kStrideM + tm * L]);
#pragma unroll
                        for (int q = 0; q < L; ++q) a[s * L + q] = lane<T>(v, q);
                    }
#pragma unroll
                    for (int s = 0; s < kThreadN / L; ++s) {
                        V v = *reinterpret_cast<const V *>(&Bs[p][s * kStrideN + tn * L]);
#pragma unroll
                        for (int q = 0; q < L; ++q) b[s * L + q] = lane<T>(v, q);
                    }
#pragma unroll
                    for (int x = 0; x < kThreadM; ++x)
#pragma unroll
                        for (int y = 0; y < kThreadN; ++y) acc[x][y] += a[x] * b[y];
                }
                __syncthreads();  // everyone is done with them before they are refilled
            }

            // Each column j of the thread's block holds kThreadM / L runs of L rows.
#pragma unroll
            for (int y = 0; y < kThreadN; ++y) {
                const int64_t j = j0 + y / L * kStrideN + tn * L + y % L;
                if (j >= n) continue;
#pragma unroll
                for (int s = 0; s < kThreadM / L; ++s) {
                    const int64_t i = i0 + s * kStrideM + tm * L;
                    T *c = C + (i + j * ldc);
                    if (vec_c && i + L <= m) {
                        V out;
                        if (beta == T(0)) {
#pragma unroll
                            for (int q = 0; q < L; ++q) lane<T>(out, q) = alpha * acc[s * L + q][y];
                        } else {
                            out = *reinterpret_cast<const V *>(c);
#pragma unroll
                            for (int q = 0; q < L; ++q)
                                lane<T>(out, q) = alpha * acc[s * L + q][y] + beta * lane<T>(out, q);
                        }
                        *reinterpret_cast<V *>(c) = out;
                    } else {
#pragma unroll
                        for (int q = 0; q < L; ++q)
                            if (i + q < m) store_c(c + q, alpha, acc[s * L + q][y], beta);
                    }
                }
            }
        }
    }
}

template <class T>
gpk_status gemm(gpk_context &ctx, const GemmArgs &args) {
    const T *A = static_cast<const T *>(args.A);
    const T *B = static_cast<const T *>(args.B);
    T *C = static_cast<T *>(args.C);
    gemm_register_2d_kernel<T><<<tile_grid(args.m, args.n, kTileM, kTileN), kThreads, 0, stream(ctx)>>>(
        args.transa, args.transb, vec16_ok<T>(A, args.lda), vec16_ok<T>(B, args.ldb), vec16_ok<T>(C, args.ldc),
        args.m, args.n, args.k, static_cast<T>(args.alpha), A, args.lda, B, args.ldb, static_cast<T>(args.beta), C,
        args.ldc);
    GPK_LAUNCH_CHECK(ctx, "gemm_register_2d_kernel");
    return GPK_SUCCESS;
}

}  // namespace

gpk_status gemm_register_2d(gpk_context &ctx, const GemmArgs &args) {
    return gemm_util::by_dtype(ctx, args, "register_2d", gemm<float>, gemm<double>);
}

}  // namespace gpk::cuda
