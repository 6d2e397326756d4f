// Rung 2, products staged through shared memory: in rung 1 each thread reads its own
// product, so a warp's load instruction touches 32 addresses a product apart and
// every byte comes in through a sector shared with other products' bytes, requested
// again and again; and a thread per product is too little parallelism once products
// grow past 8 x 8. Here a block of 256 threads takes a group of consecutive products:
//
// * Staging: the group's A and B matrices are copied into shared memory by all the
//   threads together, element e of the group's region by thread e mod 256, so
//   neighbouring threads read neighbouring bytes whatever the product size. When the
//   products are packed (ld equal to the stored rows, stride equal to the matrix, or
//   stride 0) and 16-byte aligned, the region is one contiguous run read with 16-byte
//   vector loads, several in flight per thread; otherwise (padded ld or strides) the
//   same coalesced walk goes element by element with the index arithmetic of the
//   general layout. A stride of 0 stages the shared matrix once per group.
// * Compute: each thread takes TM x TN tiles of the group's C matrices (a whole
//   product at 4 x 4), accumulating op(A) * op(B) from shared memory in registers;
//   the rows and columns past an edge read a clamped valid element whose result is
//   never stored, so the inner loop has no branch. Each product's copy in shared
//   memory is padded to an odd number of elements, so the 32 threads of a warp that
//   read 32 different products hit 32 different banks, and past 4 rows its leading
//   dimension is odd too, so threads reading columns 4 apart of one product do. The
//   group size is rounded to whole rounds of the 256 threads over the tiles.
// * Store: alpha * op(A) * op(B) goes back to shared memory and the group's C region
//   is written out in the same coalesced order as the staging (16-byte vectors when
//   packed), with beta * C read there only when beta != 0.
//
// Tiles are 4 x 4 (F64 products of at most 8 x 8: 2 x 2, which keep enough blocks
// per SM). Products per block are as many as fit the shared-memory budget (a few hundred at
// 4 x 4, one at 64 x 64); a grid-stride loop over the groups covers any batch count.
// Takes F32 and F64, any transposes, ld and stride, as long as one product's
// A, B and C fit in kMaxProductBytes of shared memory (F32 up to about 90 x 90 x 90,
// F64 about 64 x 64 x 64); larger products are answered with kNotSupported.
#include "batched_common.cuh"

#include <algorithm>

namespace gpk::cuda::batched {
namespace {

constexpr int kThreads = 256;
constexpr int kBudgetBytes = 52 * 1024;        // per block: four blocks (and their reserve) fit an H100 SM
constexpr int kMaxProductBytes = 100 * 1024;  // one product alone: two blocks per SM
constexpr int kMaxPerBlock = 2048;

// A matrix's copy in shared memory: its leading dimension odd once the threads of
// a warp read several columns of one product (past 4 rows), so that columns 4 apart
// fall in different banks; its stride odd, so that threads on consecutive products
// do too.
inline int64_t smem_ld(int64_t rows) { return rows > 4 ? rows | 1 : rows; }
inline int odd_stride(int64_t len) { return static_cast<int>(len | 1); }

// What the rung takes beyond its dtypes, the one statement of it: one product's A, B
// and C, as laid out in shared memory, within kMaxProductBytes. Sizes past the budget
// are refused first, so that the products below cannot overflow.
bool fits(const ColMajor &c, int64_t elem_bytes) {
    if (c.m > kMaxProductBytes || c.n > kMaxProductBytes || c.k > kMaxProductBytes) return false;
    const int64_t one_a = smem_ld(c.rows_a()) * c.cols_a(), one_b = smem_ld(c.rows_b()) * c.cols_b();
    return ((one_a | 1) + (one_b | 1) + ((c.m * c.n) | 1)) * elem_bytes <= kMaxProductBytes;  // odd_stride's, in 64 bits
}

template <class T>
struct StagedArgs {
    int m, n, k;
    int ra, rb;                  // rows of A and B as stored (column-major)
    int lds_a, lds_b;            // their leading dimensions in shared memory
    int len_a, len_b, len_c;     // elements of one A, B, C (packed)
    int ss_a, ss_b, ss_c;        // their strides in shared memory (odd), 0 when shared
    int one_a, one_b;            // elements of one A, B in shared memory
    int per_block, tiles_m, tiles;
    T alpha, beta;
    const T *A;
    int64_t lda, sa;
    const T *B;
    int64_t ldb, sb;
    T *C;
    int64_t ldc, sc;
    int64_t batch;
    bool vec_a, vec_b, vec_c;
};

// Copies `count` matrices (rows x len/rows, leading dimension ld, stride sx, the
// first at X + b0 * sx) to S, matrix q at S + q * ss with leading dimension lds.
template <class T>
__device__ __forceinline__ void stage(T *S, int ss, int lds, const T *__restrict__ X, int64_t ld, int64_t sx,
                                      int rows, int len, int count, bool vec, int64_t b0) {
    constexpr int L = Vec16<T>::kLanes, kUnroll = 4;
    if (vec) {
        // One contiguous run of count * len elements, len a multiple of L.
        const vec16_t<T> *src = reinterpret_cast<const vec16_t<T> *>(X + b0 * sx);
        const int nv = count * len / L;
        for (int v0 = threadIdx.x; v0 < nv; v0 += kUnroll * kThreads) {
            vec16_t<T> x[kUnroll];
#pragma unroll
            for (int u = 0; u < kUnroll; ++u)
                if (v0 + u * kThreads < nv) x[u] = src[v0 + u * kThreads];
#pragma unroll
            for (int u = 0; u < kUnroll; ++u) {
                const int v = v0 + u * kThreads;
                if (v >= nv) break;
                const int e = v * L, q = e / len, r = e - q * len;
                int col = r / rows, row = r - col * rows;
                T *d = S + q * ss;
                // A vector never crosses a product (len is a multiple of L) but may
                // cross a column.
#pragma unroll
                for (int l = 0; l < L; ++l) {
                    d[row + col * lds] = (&x[u].x)[l];
                    if (++row == rows) row = 0, ++col;
                }
            }
        }
    } else {
        const int total = count * len;
        for (int e0 = threadIdx.x; e0 < total; e0 += kUnroll * kThreads) {
            T x[kUnroll];
#pragma unroll
            for (int u = 0; u < kUnroll; ++u) {
                const int e = e0 + u * kThreads;
                if (e < total) {
                    const int q = e / len, r = e - q * len, col = r / rows, row = r - col * rows;
                    x[u] = X[(b0 + q) * sx + row + static_cast<int64_t>(col) * ld];
                }
            }
#pragma unroll
            for (int u = 0; u < kUnroll; ++u) {
                const int e = e0 + u * kThreads;
                if (e >= total) break;
                const int q = e / len, r = e - q * len, col = r / rows, row = r - col * rows;
                S[q * ss + row + col * lds] = x[u];
            }
        }
    }
}

// Blocks per SM the registers are capped for: F64 4 x 4 tiles need about 128
// registers (two blocks); the others fit four blocks in 64 registers, at the price
// of a few spilled bytes outside the inner loop. -DGPK_STAGED_TUNE_MINBLOCKS=3
// gives them more registers.
#ifndef GPK_STAGED_TUNE_MINBLOCKS
#define GPK_STAGED_TUNE_MINBLOCKS 4
#endif

template <class T, int TM, int TN, bool TA, bool TB>
__global__ void __launch_bounds__(kThreads, TM * TN * sizeof(T) > 64 ? 2 : GPK_STAGED_TUNE_MINBLOCKS)
    staged_kernel(const StagedArgs<T> g) {
    extern __shared__ __align__(16) unsigned char smem[];
    T *As = reinterpret_cast<T *>(smem);
    T *Bs = As + (g.ss_a == 0 ? g.one_a : g.per_block * g.ss_a);
    T *Cs = Bs + (g.ss_b == 0 ? g.one_b : g.per_block * g.ss_b);
    constexpr int L = Vec16<T>::kLanes;
    // op(A)(i, p) = As[i * ia + p * pa], op(B)(p, j) = Bs[p * pb + j * jb].
    const int ia = TA ? g.lds_a : 1, pa = TA ? 1 : g.lds_a;
    const int pb = TB ? g.lds_b : 1, jb = TB ? 1 : g.lds_b;

    for (int64_t b0 = static_cast<int64_t>(blockIdx.x) * g.per_block; b0 < g.batch;
         b0 += static_cast<int64_t>(gridDim.x) * g.per_block) {
        const int count = static_cast<int>(min(static_cast<int64_t>(g.per_block), g.batch - b0));
        stage(As, g.ss_a, g.lds_a, g.A, g.lda, g.sa, g.ra, g.len_a, g.sa == 0 ? 1 : count, g.vec_a, g.sa == 0 ? 0 : b0);
        stage(Bs, g.ss_b, g.lds_b, g.B, g.ldb, g.sb, g.rb, g.len_b, g.sb == 0 ? 1 : count, g.vec_b, g.sb == 0 ? 0 : b0);
        __syncthreads();

        const int items = count * g.tiles;
        for (int it = threadIdx.x; it < items; it += kThreads) {
            const int q = it / g.tiles, t = it - q * g.tiles;
            const int tj = t / g.tiles_m, ti = t - tj * g.tiles_m;
            const int i0 = ti * TM, j0 = tj * TN;
            const T *as = As + q * g.ss_a;
            const T *bs = Bs + q * g.ss_b;
            int oa[TM], ob[TN];
#pragma unroll
            for (int x = 0; x < TM; ++x) oa[x] = min(i0 + x, g.m - 1) * ia;
#pragma unroll
            for (int y = 0; y < TN; ++y) ob[y] = min(j0 + y, g.n - 1) * jb;
            T acc[TM][TN];
#pragma unroll
            for (int x = 0; x < TM; ++x)
#pragma unroll
                for (int y = 0; y < TN; ++y) acc[x][y] = T(0);
            for (int p = 0; p < g.k; ++p) {
                T av[TM], bv[TN];
#pragma unroll
                for (int x = 0; x < TM; ++x) av[x] = as[oa[x] + p * pa];
#pragma unroll
                for (int y = 0; y < TN; ++y) bv[y] = bs[p * pb + ob[y]];
#pragma unroll
                for (int y = 0; y < TN; ++y)
#pragma unroll
                    for (int x = 0; x < TM; ++x) acc[x][y] = fma(av[x], bv[y], acc[x][y]);
            }
            T *cs = Cs + q * g.ss_c;
#pragma unroll
            for (int y = 0; y < TN; ++y)
#pragma unroll
                for (int x = 0; x < TM; ++x)
                    if (i0 + x < g.m && j0 + y < g.n) cs[(i0 + x) + (j0 + y) * g.m] = g.alpha * acc[x][y];
        }
        __syncthreads();

        // C out in the order it lies in memory.
        if (g.vec_c) {
            vec16_t<T> *dst = reinterpret_cast<vec16_t<T> *>(g.C + b0 * g.sc);
            const int nv = count * g.len_c / L;
            for (int v = threadIdx.x; v < nv; v += kThreads) {
                const int e = v * L, q = e / g.len_c;
                const T *cs = Cs + q * g.ss_c + (e - q * g.len_c);
                vec16_t<T> out;
                if (g.beta == T(0)) {
#pragma unroll
                    for (int l = 0; l < L; ++l) (&out.x)[l] = cs[l];
                } else {
                    out = dst[v];
#pragma unroll
                    for (int l = 0; l < L; ++l) (&out.x)[l] = cs[l] + g.beta * (&out.x)[l];
                }
                dst[v] = out;
            }
        } else {
            const int total = count * g.len_c;
            for (int e = threadIdx.x; e < total; e += kThreads) {
                const int q = e / g.len_c, r = e - q * g.len_c, j = r / g.m, i = r - j * g.m;
                T *c = g.C + (b0 + q) * g.sc + i + static_cast<int64_t>(j) * g.ldc;
                const T v = Cs[q * g.ss_c + r];
                *c = g.beta == T(0) ? v : v + g.beta * *c;
            }
        }
        __syncthreads();  // the next group refills the shared memory
    }
}

template <class T, int TM, int TN, bool TA, bool TB>
BatchedResult launch(const StagedArgs<T> &g, size_t smem, cudaStream_t stream) {
    auto kernel = staged_kernel<T, TM, TN, TA, TB>;
    if (smem > 48 * 1024) {
        const cudaError_t e =
            cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
        if (e != cudaSuccess) return batched_cuda(e, "cudaFuncSetAttribute (gemm_batched staged_kernel)");
    }
    const int64_t groups = (g.batch + g.per_block - 1) / g.per_block;
    kernel<<<grid_blocks(groups, 1), kThreads, smem, stream>>>(g);
    return batched_launched("gemm_batched staged_kernel");
}

template <class T, int TM, int TN>
BatchedResult by_trans(const ColMajor &c, const StagedArgs<T> &g, size_t smem, cudaStream_t stream) {
    if (c.transa) return c.transb ? launch<T, TM, TN, true, true>(g, smem, stream)
                                  : launch<T, TM, TN, true, false>(g, smem, stream);
    return c.transb ? launch<T, TM, TN, false, true>(g, smem, stream)
                    : launch<T, TM, TN, false, false>(g, smem, stream);
}

template <class T, int TM, int TN>
BatchedResult run_tile(const BatchedParams &p) {
    const ColMajor c = col_major(p);
    const int64_t len_a = c.rows_a() * c.cols_a(), len_b = c.rows_b() * c.cols_b(), len_c = c.m * c.n;
    if (!fits(c, sizeof(T)))
        return batched_unsupported(
            "gemm_batched variant \"staged\" takes products whose A, B and C fit 100 KiB of shared memory only");
    if (product_vanishes<T>(c, p.alpha)) return scale_batched<T>(c, p.beta, p.stream);

    const int64_t one_a = smem_ld(c.rows_a()) * c.cols_a(), one_b = smem_ld(c.rows_b()) * c.cols_b();
    constexpr int L = Vec16<T>::kLanes;
    StagedArgs<T> g{};
    g.m = static_cast<int>(c.m), g.n = static_cast<int>(c.n), g.k = static_cast<int>(c.k);
    g.ra = static_cast<int>(c.rows_a()), g.rb = static_cast<int>(c.rows_b());
    g.len_a = static_cast<int>(len_a), g.len_b = static_cast<int>(len_b), g.len_c = static_cast<int>(len_c);
    g.lds_a = static_cast<int>(smem_ld(c.rows_a())), g.lds_b = static_cast<int>(smem_ld(c.rows_b()));
    g.one_a = static_cast<int>(one_a), g.one_b = static_cast<int>(one_b);
    g.ss_a = c.sa == 0 ? 0 : odd_stride(one_a);
    g.ss_b = c.sb == 0 ? 0 : odd_stride(one_b);
    g.ss_c = odd_stride(len_c);
    const int64_t per_product = (g.ss_a + g.ss_b + g.ss_c) * int64_t(sizeof(T));
    const int64_t fixed = ((c.sa == 0 ? one_a : 0) + (c.sb == 0 ? one_b : 0)) * int64_t(sizeof(T));
    g.tiles_m = static_cast<int>((c.m + TM - 1) / TM);
    g.tiles = g.tiles_m * static_cast<int>((c.n + TN - 1) / TN);
    int64_t per_block = (kBudgetBytes - fixed) / per_product;
    // Whole rounds of the block's threads over the tiles: a group of 18 products of
    // 16 tiles would leave 224 of 256 threads idle in its second round.
    const int64_t round = g.tiles < kThreads ? kThreads / g.tiles : 1;
    if (per_block >= round) per_block -= per_block % round;
    per_block = std::max<int64_t>(1, std::min<int64_t>({per_block, kMaxPerBlock, c.batch}));
    g.per_block = static_cast<int>(per_block);
    g.alpha = static_cast<T>(p.alpha), g.beta = static_cast<T>(p.beta);
    g.A = static_cast<const T *>(c.A), g.lda = c.lda, g.sa = c.sa;
    g.B = static_cast<const T *>(c.B), g.ldb = c.ldb, g.sb = c.sb;
    g.C = static_cast<T *>(c.C), g.ldc = c.ldc, g.sc = c.sc;
    g.batch = c.batch;
    // The contiguous fast path: packed matrices (or one shared), whole vectors, aligned.
    g.vec_a = aligned16(c.A) && c.lda == c.rows_a() && len_a % L == 0 && (c.sa == len_a || c.sa == 0);
    g.vec_b = aligned16(c.B) && c.ldb == c.rows_b() && len_b % L == 0 && (c.sb == len_b || c.sb == 0);
    g.vec_c = aligned16(c.C) && c.ldc == c.m && len_c % L == 0 && c.sc == len_c;
    const size_t smem = static_cast<size_t>(fixed + per_block * per_product);
    return by_trans<T, TM, TN>(c, g, smem, p.stream);
}

BatchedResult compute(const BatchedParams &params) {
    if (batched_empty(params)) return batched_ok();
    switch (params.dtype) {
        case GPK_F32: return run_tile<float, 4, 4>(params);
        case GPK_F64: {
            // F64 4 x 4 tiles take 128 registers a thread, two blocks per SM: too few
            // loads in flight for products of at most 8 x 8, which take 2 x 2 tiles.
            const ColMajor c = col_major(params);
            if (c.m <= 8 && c.n <= 8) return run_tile<double, 2, 2>(params);
            return run_tile<double, 4, 4>(params);
        }
        default: return batched_unsupported("gemm_batched variant \"staged\" supports F32 and F64 only");
    }
}

}  // namespace
}  // namespace gpk::cuda::batched

namespace gpk::cuda {

// Says before any launch what compute() refuses, by the same rule.
gpk_status gemm_batched_staged_takes(gpk_context &ctx, const GemmBatchedCall &args, const char **why_not) {
    const batched::ColMajor c = batched::col_major(batched::params_of(ctx, args));
    *why_not = batched::fits(c, static_cast<int64_t>(dtype_size(args.dtype)))
                   ? nullptr
                   : "its A, B and C must fit 100 KiB of shared memory";
    return GPK_SUCCESS;
}

gpk_status gemm_batched_staged(gpk_context &ctx, const GemmBatchedCall &args) {
    return batched::status_of(ctx, batched::compute(batched::params_of(ctx, args)));
}

}  // namespace gpk::cuda
