// Checks and times gemm rung 15 (libgpk/cuda/gemm/15_wgmma_fp8.cu), the FP8 wgmma
// rung, standalone, against a double-precision reference and cuBLASLt:
//
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a bench/fp8-bench.cu -lcublasLt -lcuda -o fp8-bench
//   ./fp8-bench [check|time|all]
//
// check: random FP8 operands (E4M3, E5M2 and their mix, values across the whole finite
// range including subnormals and the largest, 448) over sizes 1, 17, 1000 and 4097
// (sampled rows and columns), both layouts (a row-major call swapped into the
// column-major form as the library swaps it, scales and formats with it), all four
// transposes, leading dimensions above the minimum (odd ones too), beta == 0 with NaN
// in C, beta != 0, k == 0, alpha == 0, NaN inputs, C in F32, F16 and BF16, per-tensor
// and block-scaled; every checked element of C within the contract's bound
// 2^-9 sum|alpha s a b| + 2^-24 |beta c| plus one rounding to C's dtype, NaN where and
// only where the reference is NaN, and the padding between columns of C untouched.
// time: median of 9 timed runs after warm-up (CUDA events), the rung and cuBLASLt's FP8
// (E4M3 x E4M3 -> BF16, TN, per-tensor, no fast accumulation) alternately on the
// same buffers, at the shapes of the performance targets.
#define GPK_TC_STANDALONE
#include "../libgpk/common/fp8.hpp"
#include "../libgpk/cuda/gemm/15_wgmma_fp8.cu"

#include <cublasLt.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace gpk::cuda::tc;
using fp8::GemmF8;

#define CK(x)                                                                                         \
    do {                                                                                              \
        cudaError_t e_ = (x);                                                                         \
        if (e_ != cudaSuccess) {                                                                      \
            std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            std::exit(2);                                                                             \
        }                                                                                             \
    } while (0)
#define CL(x)                                                                               \
    do {                                                                                    \
        cublasStatus_t s_ = (x);                                                            \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                  \
            std::fprintf(stderr, "%s:%d %s: cublas %d\n", __FILE__, __LINE__, #x, int(s_)); \
            std::exit(2);                                                                   \
        }                                                                                   \
    } while (0)

__host__ __device__ uint64_t mix(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

// Random FP8 codes whose magnitude is at most `limit` (never NaN or infinite; zeros
// rare), or NaN at one element in `nan_every` (0: none).
__global__ void fill_fp8(uint8_t *p, int64_t n, bool e5m2, float limit, uint64_t seed, int64_t nan_every) {
    for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
        uint64_t h = mix(seed * 0x9E3779B97F4A7C15ULL + uint64_t(i));
        uint8_t b = 0;
        for (int t = 0; t < 8; ++t, h = mix(h)) {
            b = uint8_t(h);
            const float v = gpk::fp8_to_float(b, e5m2);
            if (v == v && fabsf(v) <= limit && v != 0.0f) break;
            b = 0x38;  // 1.0 in E4M3; for E5M2 0x38 is 0.5
        }
        if (nan_every > 0 && i % nan_every == nan_every / 2) b = e5m2 ? 0x7E : 0x7F;
        p[i] = b;
    }
}
__global__ void fill_f32(float *p, int64_t n, float lo, float hi, uint64_t seed) {
    for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
        p[i] = lo + (hi - lo) * float(mix(seed + uint64_t(i)) >> 40) / float(1 << 24);
}
// C's initial contents: random in [-1, 1), or NaN (beta == 0 must not read it).
__global__ void fill_c(void *p, int64_t n, int ctype, bool nan, uint64_t seed) {
    for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
        const float v = nan ? __int_as_float(0x7fc00000) : float(mix(seed + uint64_t(i)) >> 40) / float(1 << 24) * 2 - 1;
        if (ctype == 0) static_cast<float *>(p)[i] = v;
        else if (ctype == 1) static_cast<__half *>(p)[i] = __float2half_rn(v);
        else static_cast<__nv_bfloat16 *>(p)[i] = __float2bfloat16_rn(v);
    }
}
__device__ double c_at(const void *p, int64_t i, int ctype) {
    if (ctype == 0) return static_cast<const float *>(p)[i];
    if (ctype == 1) return __half2float(static_cast<const __half *>(p)[i]);
    return __bfloat162float(static_cast<const __nv_bfloat16 *>(p)[i]);
}

// One call as the caller states it (either layout), and the buffers it runs on.
struct Call {
    bool row, ta, tb;
    int64_t m, n, k;
    float alpha, beta;
    bool ae5, be5;
    int ctype;  // 0 F32, 1 F16, 2 BF16
    const uint8_t *A;
    int64_t lda;
    const uint8_t *B;
    int64_t ldb;
    void *C;
    int64_t ldc;
    const float *sa, *sb;  // the contract's block scales (null: per-tensor)
};

// Element (r, c) of a matrix stored in the call's layout.
__host__ __device__ inline int64_t at(bool row, int64_t r, int64_t c, int64_t ld) { return row ? r * ld + c : r + c * ld; }

// Checks C(i, j) for i in rows, j in cols against the reference from the initial C0:
// counts failures, records the first.
__global__ void check_kernel(Call c, const void *C0, const int64_t *rows, int nr, const int64_t *cols, int nc,
                             unsigned long long *fails, double *first) {
    const int64_t kb = (c.k + 127) / 128, nb = (c.n + 127) / 128;
    for (int64_t idx = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; idx < int64_t(nr) * nc;
         idx += int64_t(gridDim.x) * blockDim.x) {
        const int64_t i = rows[idx / nc], j = cols[idx % nc];
        double sum = 0, mag = 0;
        for (int64_t q = 0; q < kb; ++q) {
            double part = 0, pmag = 0;
            for (int64_t p = 128 * q; p < c.k && p < 128 * q + 128; ++p) {
                const double a = gpk::fp8_to_float(c.A[c.ta ? at(c.row, p, i, c.lda) : at(c.row, i, p, c.lda)], c.ae5);
                const double b = gpk::fp8_to_float(c.B[c.tb ? at(c.row, j, p, c.ldb) : at(c.row, p, j, c.ldb)], c.be5);
                part += a * b;
                pmag += fabs(a * b);
            }
            const double s = c.sa ? double(c.sa[q * c.m + i]) * double(c.sb[q * nb + j / 128]) : 1.0;
            sum += s * part;
            mag += fabs(s) * pmag;
        }
        const int64_t ci = at(c.row, i, j, c.ldc);
        const double c0 = c.beta != 0.0f ? c_at(C0, ci, c.ctype) : 0.0;
        const double ref = double(c.alpha) * sum + double(c.beta) * c0;
        const double got = c_at(c.C, ci, c.ctype);
        const double ulp = c.ctype == 0 ? 0x1p-24 : c.ctype == 1 ? 0x1p-11 : 0x1p-8;
        const double tiny = c.ctype == 1 ? 0x1p-25 : 1e-38;
        const double bound = 0x1p-9 * fabs(double(c.alpha)) * mag + 0x1p-24 * fabs(double(c.beta) * c0) +
                             ulp * (fabs(ref) + 0x1p-9 * fabs(double(c.alpha)) * mag) + tiny;
        const bool ok = ref != ref ? got != got : got == got && fabs(got - ref) <= bound;
        if (!ok && atomicAdd(fails, 1ull) == 0) {
            first[0] = double(i);
            first[1] = double(j);
            first[2] = ref;
            first[3] = got;
            first[4] = bound;
        }
    }
}

// The padding between columns (col-major) or rows (row-major) of C: must still hold C0.
__global__ void pad_kernel(Call c, const void *C0, unsigned long long *fails) {
    const int64_t outer = c.row ? c.m : c.n, inner = c.row ? c.n : c.m;
    const size_t es = c.ctype == 0 ? 4 : 2;
    for (int64_t o = blockIdx.x; o < outer; o += gridDim.x)
        for (int64_t x = inner + threadIdx.x; x < c.ldc; x += blockDim.x) {
            const int64_t e = o * c.ldc + x;
            const unsigned char *x1 = static_cast<const unsigned char *>(c.C) + e * es,
                                *x0 = static_cast<const unsigned char *>(C0) + e * es;
            bool same = true;
            for (size_t b = 0; b < es; ++b) same = same && x1[b] == x0[b];
            if (!same) atomicAdd(fails, 1ull);
        }
}

// The call in the rung's column-major form, swapped as the library swaps a row-major
// call (C^T = op(B)^T op(A)^T: A and B, their formats and their scales trade places).
GemmF8 to_rung(const Call &c, void *ws, size_t wsb) {
    GemmF8 f{};
    const int64_t nb = (c.n + 127) / 128;
    if (!c.row) {
        f.g = GemmTc{Dtype::F16, false, c.ta, c.tb, c.m, c.n, c.k, c.alpha, c.beta, c.A, c.lda, c.B, c.ldb,
                     c.C, c.ldc, nullptr, ws, wsb};
        f.a_e5m2 = c.ae5;
        f.b_e5m2 = c.be5;
        f.scale_a = c.sa;
        f.scale_b = c.sb;
        f.scale_a_group = 1;
        f.scale_a_ld = c.m;
        f.scale_b_group = 128;
        f.scale_b_ld = nb;
    } else {
        f.g = GemmTc{Dtype::F16, false, c.tb, c.ta, c.n, c.m, c.k, c.alpha, c.beta, c.B, c.ldb, c.A, c.lda,
                     c.C, c.ldc, nullptr, ws, wsb};
        f.a_e5m2 = c.be5;
        f.b_e5m2 = c.ae5;
        f.scale_a = c.sb;
        f.scale_b = c.sa;
        f.scale_a_group = 128;
        f.scale_a_ld = nb;
        f.scale_b_group = 1;
        f.scale_b_ld = c.m;
    }
    f.c_type = c.ctype;
    f.scale_a = c.sa ? f.scale_a : nullptr;
    f.scale_b = c.sb ? f.scale_b : nullptr;
    return f;
}

static void *g_ws = nullptr;
static size_t g_wsb = 0;
static Result run_rung(const Call &c, cudaStream_t s = nullptr) {
    GemmF8 f = to_rung(c, nullptr, 0);
    const size_t need = fp8::workspace_bytes(f);
    if (need > g_wsb) {
        if (g_ws) CK(cudaFree(g_ws));
        CK(cudaMalloc(&g_ws, need));
        g_wsb = need;
    }
    f.g.workspace = g_ws;
    f.g.workspace_bytes = g_wsb;
    f.g.stream = s;
    return fp8::run(f);
}

static int g_cases = 0, g_failed = 0;

// One checked case: fresh operands and C, the rung, the reference over all of C (or
// 61 + 3 sampled rows and columns past 1500), the padding.
static void check_case(bool row, bool ta, bool tb, int64_t m, int64_t n, int64_t k, int64_t pad, bool ae5, bool be5,
                       int ctype, float alpha, float beta, bool nan_c, bool scaled, int64_t nan_every, uint64_t seed) {
    const int64_t ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
    const int64_t lda = std::max<int64_t>(1, (row ? ac : ar)) + pad, ldb = std::max<int64_t>(1, (row ? bc : br)) + pad,
                  ldc = std::max<int64_t>(1, (row ? n : m)) + pad;
    const int64_t asz = std::max<int64_t>(1, (row ? ar : ac) * lda), bsz = std::max<int64_t>(1, (row ? br : bc) * ldb),
                  csz = std::max<int64_t>(1, (row ? m : n) * ldc);
    const size_t es = ctype == 0 ? 4 : 2;
    uint8_t *A, *B;
    void *C, *C0;
    float *sa = nullptr, *sb = nullptr;
    CK(cudaMalloc(&A, asz));
    CK(cudaMalloc(&B, bsz));
    CK(cudaMalloc(&C, csz * es));
    CK(cudaMalloc(&C0, csz * es));
    // Products stay inside F16's range for 16-bit C.
    const float limit = ctype == 0 ? 448.0f : 2.0f;
    fill_fp8<<<256, 256>>>(A, asz, ae5, limit, seed, nan_every);
    fill_fp8<<<256, 256>>>(B, bsz, be5, limit, seed + 7, 0);
    fill_c<<<256, 256>>>(C0, csz, ctype, nan_c, seed + 11);
    const int64_t kb = std::max<int64_t>(1, (k + 127) / 128), nb = (n + 127) / 128;
    if (scaled) {
        CK(cudaMalloc(&sa, m * kb * 4));
        CK(cudaMalloc(&sb, nb * kb * 4));
        fill_f32<<<64, 256>>>(sa, m * kb, 0.25f, 4.0f, seed + 13);
        fill_f32<<<64, 256>>>(sb, nb * kb, 0.0625f, 2.0f, seed + 17);
    }
    CK(cudaMemcpy(C, C0, csz * es, cudaMemcpyDeviceToDevice));
    Call c{row, ta, tb, m, n, k, alpha, beta, ae5, be5, ctype, A, lda, B, ldb, C, ldc, sa, sb};
    const Result r = run_rung(c);
    CK(cudaDeviceSynchronize());
    char desc[256];
    std::snprintf(desc, sizeof desc, "%s %c%c %lldx%lldx%lld pad %lld %s x %s -> %s alpha %g beta %g%s%s%s",
                  row ? "row" : "col", ta ? 'T' : 'N', tb ? 'T' : 'N', (long long)m, (long long)n, (long long)k,
                  (long long)pad, ae5 ? "E5M2" : "E4M3", be5 ? "E5M2" : "E4M3",
                  ctype == 0 ? "F32" : ctype == 1 ? "F16" : "BF16", alpha, beta, nan_c ? " (NaN C)" : "",
                  scaled ? " block-scaled" : "", nan_every ? " NaN in A" : "");
    ++g_cases;
    if (r.status != Status::Ok) {
        std::printf("FAIL %s: the rung answered %d: %s\n", desc, int(r.status), r.why);
        ++g_failed;
    } else {
        std::vector<int64_t> rows, cols;
        auto pick = [&](int64_t len, std::vector<int64_t> &v, uint64_t s) {
            if (len <= 1500) {
                for (int64_t x = 0; x < len; ++x) v.push_back(x);
            } else {
                for (int x = 0; x < 61; ++x) v.push_back(int64_t(mix(s + x) % uint64_t(len)));
                v.push_back(0);
                v.push_back(len - 1);
                v.push_back(len / 2);
            }
        };
        pick(m, rows, seed + 19);
        pick(n, cols, seed + 23);
        int64_t *dr, *dc;
        unsigned long long *fails;
        double *first;
        CK(cudaMalloc(&dr, rows.size() * 8));
        CK(cudaMalloc(&dc, cols.size() * 8));
        CK(cudaMalloc(&fails, 16));
        CK(cudaMalloc(&first, 5 * 8));
        CK(cudaMemcpy(dr, rows.data(), rows.size() * 8, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(dc, cols.data(), cols.size() * 8, cudaMemcpyHostToDevice));
        CK(cudaMemset(fails, 0, 16));
        check_kernel<<<1024, 128>>>(c, C0, dr, int(rows.size()), dc, int(cols.size()), fails, first);
        pad_kernel<<<1024, 128>>>(c, C0, fails + 1);
        CK(cudaGetLastError());
        unsigned long long nf[2];
        double fi[5];
        CK(cudaMemcpy(nf, fails, 16, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(fi, first, 40, cudaMemcpyDeviceToHost));
        if (nf[0] || nf[1]) {
            ++g_failed;
            std::printf("FAIL %s: %llu of %zu elements off", desc, nf[0], rows.size() * cols.size());
            if (nf[0]) std::printf(" (first C(%g, %g) = %.9g, reference %.9g, bound %.3g)", fi[0], fi[1], fi[3], fi[2], fi[4]);
            std::printf(", %llu padding elements changed\n", nf[1]);
        }
        CK(cudaFree(dr));
        CK(cudaFree(dc));
        CK(cudaFree(fails));
        CK(cudaFree(first));
    }
    CK(cudaFree(A));
    CK(cudaFree(B));
    CK(cudaFree(C));
    CK(cudaFree(C0));
    if (sa) CK(cudaFree(sa));
    if (sb) CK(cudaFree(sb));
}

static void check_all() {
    uint64_t seed = 1;
    int v = 0;
    const int64_t sizes[][3] = {{1, 1, 1}, {17, 17, 17}, {1000, 1000, 1000}, {300, 200, 130}, {4097, 4097, 4097}};
    for (auto &s : sizes)
        for (int row = 0; row < 2; ++row)
            for (int t = 0; t < 4; ++t, ++v) {
                const bool ta = t & 1, tb = t & 2;
                // Rotate formats, C's dtype, beta, padding and scaling across the cases.
                const bool ae5 = v % 4 == 1 || v % 4 == 3, be5 = v % 4 >= 2;
                const int ctype = v % 3;
                const float beta = v % 2 ? 0.5f : 0.0f;
                const int64_t pad = v % 5 == 0 ? 0 : v % 5 == 1 ? 3 : v % 5 == 2 ? 16 : v % 5 == 3 ? 1 : 33;
                const bool scaled = v % 3 == 1 || (s[0] == 4097 && v % 2 == 0);
                check_case(row, ta, tb, s[0], s[1], s[2], pad, ae5, be5, ctype, 1.5f, beta, beta == 0.0f, scaled, 0,
                           seed++);
            }
    // Every C dtype with both scalings on the TN form; k = 0; alpha = 0; NaN inputs.
    for (int ct = 0; ct < 3; ++ct)
        for (int sc = 0; sc < 2; ++sc)
            check_case(false, true, false, 777, 555, 1333, 0, false, false, ct, 0.75f, 0.0f, true, sc, 0, seed++);
    check_case(false, true, false, 100, 70, 0, 2, false, true, 0, 1.0f, 0.5f, false, false, 0, seed++);
    check_case(true, false, false, 100, 70, 64, 2, true, false, 1, 0.0f, 0.25f, false, false, 0, seed++);
    check_case(false, true, false, 257, 129, 300, 0, false, false, 0, 1.0f, 0.0f, true, false, 97, seed++);
    check_case(false, false, true, 257, 129, 300, 5, true, true, 2, 1.0f, 1.0f, false, true, 89, seed++);
    std::printf("check: %d cases, %d failed\n", g_cases, g_failed);
}

// ---- timing -----------------------------------------------------------------------

struct Lt {
    cublasLtHandle_t h = nullptr;
    void *work = nullptr;
    size_t wb = size_t(32) << 20;
};

// cuBLASLt FP8 E4M3 x E4M3 -> BF16, TN, per-tensor (alpha), default (no fast) accumulation.
static float time_lt(Lt &lt, int64_t m, int64_t n, int64_t k, const void *A, const void *B, void *C, int reps) {
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t la, lb, lc;
    CL(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    const cublasOperation_t T = CUBLAS_OP_T, N = CUBLAS_OP_N;
    CL(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &T, sizeof T));
    CL(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &N, sizeof N));
    CL(cublasLtMatrixLayoutCreate(&la, CUDA_R_8F_E4M3, k, m, k));
    CL(cublasLtMatrixLayoutCreate(&lb, CUDA_R_8F_E4M3, k, n, k));
    CL(cublasLtMatrixLayoutCreate(&lc, CUDA_R_16BF, m, n, m));
    cublasLtMatmulPreference_t pref;
    CL(cublasLtMatmulPreferenceCreate(&pref));
    CL(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &lt.wb, sizeof lt.wb));
    cublasLtMatmulHeuristicResult_t res{};
    int cnt = 0;
    CL(cublasLtMatmulAlgoGetHeuristic(lt.h, op, la, lb, lc, lc, pref, 1, &res, &cnt));
    if (cnt < 1) return -1;
    const float alpha = 1.0f, beta = 0.0f;
    auto call = [&] {
        CL(cublasLtMatmul(lt.h, op, &alpha, A, la, B, lb, &beta, C, lc, C, lc, &res.algo, lt.work, lt.wb, nullptr));
    };
    for (int i = 0; i < 3; ++i) call();
    std::vector<float> t;
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (int i = 0; i < reps; ++i) {
        CK(cudaEventRecord(e0));
        call();
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    cublasLtMatmulPreferenceDestroy(pref);
    cublasLtMatrixLayoutDestroy(la);
    cublasLtMatrixLayoutDestroy(lb);
    cublasLtMatrixLayoutDestroy(lc);
    cublasLtMatmulDescDestroy(op);
    return t[t.size() / 2];
}

static float time_rung(const Call &c, int reps) {
    for (int i = 0; i < 3; ++i) {
        const Result r = run_rung(c);
        if (r.status != Status::Ok) {
            std::printf("rung refused: %s\n", r.why);
            return -1;
        }
    }
    std::vector<float> t;
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (int i = 0; i < reps; ++i) {
        CK(cudaEventRecord(e0));
        run_rung(c);
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        t.push_back(ms);
    }
    CK(cudaGetLastError());
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

// 4097^3 with every leading dimension odd against our 4096^3 TN, and where its time goes.
static double tn4096 = 0;
static void time_odd() {
    const int reps = 9;
    auto tf = [](int64_t m, int64_t n, int64_t k, float ms) { return ms > 0 ? 2.0 * m * n * k / (ms * 1e-3) / 1e12 : 0.0; };
    uint8_t *A, *B;
    void *C;
    CK(cudaMalloc(&A, 4224LL * 4224 + 64));
    CK(cudaMalloc(&B, 4224LL * 4224 + 64));
    CK(cudaMalloc(&C, 4224LL * 4224 * 2));
    fill_fp8<<<1024, 256>>>(A, 4224LL * 4224 + 64, false, 448.0f, 3, 0);
    fill_fp8<<<1024, 256>>>(B, 4224LL * 4224 + 64, false, 448.0f, 5, 0);
    if (tn4096 == 0) {
        Call t{false, true, false, 4096, 4096, 4096, 1.0f, 0.0f, false, false, 2, A, 4096, B, 4096, C, 4096, nullptr, nullptr};
        tn4096 = tf(4096, 4096, 4096, time_rung(t, reps));
    }
    const int64_t o = 4097;
    Call c{false, true, false, o, o, o, 1.0f, 0.0f, false, false, 2, A + 1, o, B + 3, o, C, o, nullptr, nullptr};
    const float rms = time_rung(c, reps);
    std::printf("4097^3 TN, every ld odd          %10.1f %10s %7.3f (to our 4096^3 TN)\n", tf(o, o, o, rms), "-",
                tf(o, o, o, rms) / tn4096);
    // Where its time goes: the same product on aligned operands and C, and one packing.
    Call a{false, true, false, o, o, o, 1.0f, 0.0f, false, false, 2, A, 4224, B, 4224, C, 4104, nullptr, nullptr};
    const float ams = time_rung(a, reps);
    Call d = a;
    d.ldc = o;
    const float dms = time_rung(d, reps);
    std::printf("4097^3 TN aligned: %.1f us; with ldc odd: %.1f us; every ld odd: %.1f us\n", ams * 1e3, dms * 1e3,
                rms * 1e3);
    CK(cudaFree(A));
    CK(cudaFree(B));
    CK(cudaFree(C));
}

static void time_all() {
    Lt lt;
    CL(cublasLtCreate(&lt.h));
    CK(cudaMalloc(&lt.work, lt.wb));
    const int64_t big = 8192LL * 16384 + 4096;  // bytes of the largest operand (+ odd-ld slack)
    uint8_t *A, *B;
    void *C;
    float *sa, *sb;
    CK(cudaMalloc(&A, big + 8192LL * 8192));
    CK(cudaMalloc(&B, 24576LL * 16384));
    CK(cudaMalloc(&C, 4096LL * 24576 * 4 + 8192LL * 8192 * 4));
    CK(cudaMalloc(&sa, 8192LL * 128 * 4));
    CK(cudaMalloc(&sb, 192LL * 128 * 4));
    fill_fp8<<<1024, 256>>>(A, big + 8192LL * 8192, false, 448.0f, 3, 0);
    fill_fp8<<<1024, 256>>>(B, 24576LL * 16384, false, 448.0f, 5, 0);
    fill_f32<<<256, 256>>>(sa, 8192LL * 128, 0.5f, 2.0f, 7);
    fill_f32<<<256, 256>>>(sb, 192LL * 128, 0.5f, 2.0f, 9);
    CK(cudaDeviceSynchronize());
    const int reps = 9;
    auto tf = [](int64_t m, int64_t n, int64_t k, float ms) { return ms > 0 ? 2.0 * m * n * k / (ms * 1e-3) / 1e12 : 0.0; };
    std::printf("%-34s %10s %10s %7s\n", "shape (m x n x k), form", "rung TF/s", "LtFP8 TF/s", "ratio");
    const int64_t shapes[][3] = {{4096, 4096, 4096}, {8192, 8192, 8192}, {4096, 7168, 16384}, {4096, 24576, 1536},
                                 {8192, 8192, 1024}};
    double tn8192 = 0;
    tn4096 = 0;
    for (auto &s : shapes) {
        const int64_t m = s[0], n = s[1], k = s[2];
        Call c{false, true, false, m, n, k, 1.0f, 0.0f, false, false, 2, A, k, B, k, C, m, nullptr, nullptr};
        for (int pass = 0; pass < 2; ++pass) {
            const float lms = time_lt(lt, m, n, k, A, B, C, reps);
            const float rms = time_rung(c, reps);
            std::printf("%5lldx%5lldx%5lld TN bf16 (pass %d)   %10.1f %10.1f %7.3f\n", (long long)m, (long long)n,
                        (long long)k, pass, tf(m, n, k, rms), tf(m, n, k, lms), lms / rms);
            // The layouts and odd leading dimensions are measured against our best TN pass.
            if (m == 8192 && k == 8192) tn8192 = std::max(tn8192, tf(m, n, k, rms));
            if (m == 4096 && n == 4096) tn4096 = std::max(tn4096, tf(m, n, k, rms));
        }
        if ((m == 4096 && n == 7168) || (m == 8192 && k == 8192)) {
            Call b = c;
            b.sa = sa;
            b.sb = sb;
            const float rms = time_rung(b, reps), pms = time_rung(c, reps);
            std::printf("%5lldx%5lldx%5lld TN block-scaled    %10.1f %10.1f %7.3f (to per-tensor)\n", (long long)m,
                        (long long)n, (long long)k, tf(m, n, k, rms), tf(m, n, k, pms), pms / rms);
        }
    }
    {
        // Block-scaled after a row-major call's swap (the per-row scales along D's rows).
        const int64_t s = 8192;
        Call b{true, false, true, s, s, s, 1.0f, 0.0f, false, false, 2, A, s, B, s, C, s, sa, sb};
        Call p = b;
        p.sa = p.sb = nullptr;
        const float rms = time_rung(b, reps), pms = time_rung(p, reps);
        std::printf("8192^3 row NT block-scaled        %10.1f %10.1f %7.3f (to per-tensor)\n", tf(s, s, s, rms),
                    tf(s, s, s, pms), pms / rms);
        // The packing of one 8192 x 8192 MN-major operand alone.
        Normal nf{s, s, s, Operand{B, s, true, s}, Operand{A, s, false, s}};
        GemmTc g{};
        const size_t need = pack_bytes(nf, 1, 1);
        if (need > g_wsb) {
            if (g_ws) CK(cudaFree(g_ws));
            CK(cudaMalloc(&g_ws, need));
            g_wsb = need;
        }
        g.workspace = g_ws;
        g.workspace_bytes = g_wsb;
        Prepared pr{};
        cudaEvent_t e0, e1;
        CK(cudaEventCreate(&e0));
        CK(cudaEventCreate(&e1));
        std::vector<float> t;
        for (int i = 0; i < 12; ++i) {
            CK(cudaEventRecord(e0));
            fp8::prepare_f8(nf, g, &pr);
            CK(cudaEventRecord(e1));
            CK(cudaEventSynchronize(e1));
            float ms;
            CK(cudaEventElapsedTime(&ms, e0, e1));
            t.push_back(ms);
        }
        std::sort(t.begin(), t.end());
        std::printf("pack 8192 x 8192 MN-major: %.1f us, %.0f GB/s (read + write)\n", t[6] * 1e3,
                    2.0 * s * s / (t[6] * 1e-3) / 1e9);
    }
    const int64_t s = 8192;
    const char *names[] = {"col NN", "col NT", "col TT", "row NN", "row TN"};
    const bool rowf[] = {false, false, false, true, true}, taf[] = {false, false, true, false, true},
               tbf[] = {false, true, true, false, false};
    for (int i = 0; i < 5; ++i) {
        Call c{rowf[i], taf[i], tbf[i], s, s, s, 1.0f, 0.0f, false, false, 2, A, s, B, s, C, s, nullptr, nullptr};
        const float rms = time_rung(c, reps);
        std::printf("8192^3 %-27s %10.1f %10s %7.3f (to our TN)\n", names[i], tf(s, s, s, rms), "-", tf(s, s, s, rms) / tn8192);
    }
    time_odd();
}

// The block-scaled rung against the per-tensor one at 8192^3, both layouts.
static void time_scaled() {
    const int64_t s = 8192;
    uint8_t *A, *B;
    void *C;
    float *sa, *sb;
    CK(cudaMalloc(&A, s * s));
    CK(cudaMalloc(&B, s * s));
    CK(cudaMalloc(&C, s * s * 2));
    CK(cudaMalloc(&sa, s * 64 * 4));
    CK(cudaMalloc(&sb, 64 * 64 * 4));
    fill_fp8<<<1024, 256>>>(A, s * s, false, 448.0f, 3, 0);
    fill_fp8<<<1024, 256>>>(B, s * s, false, 448.0f, 5, 0);
    fill_f32<<<256, 256>>>(sa, s * 64, 0.5f, 2.0f, 7);
    fill_f32<<<256, 256>>>(sb, 64 * 64, 0.5f, 2.0f, 9);
    for (int row = 0; row < 2; ++row) {
        Call b{bool(row), !row, bool(row), s, s, s, 1.0f, 0.0f, false, false, 2, A, s, B, s, C, s, sa, sb};
        Call p = b;
        p.sa = p.sb = nullptr;
        const float rms = time_rung(b, 9), pms = time_rung(p, 9);
        std::printf("8192^3 %s block-scaled %.1f, per-tensor %.1f TF/s: %.3f\n", row ? "row NT" : "col TN",
                    2.0 * s * s * s / (rms * 1e-3) / 1e12, 2.0 * s * s * s / (pms * 1e-3) / 1e12, pms / rms);
    }
}

int main(int argc, char **argv) {
    const std::string mode = argc > 1 ? argv[1] : "all";
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    std::printf("device: %s, %d SMs\n", prop.name, prop.multiProcessorCount);
    if (mode == "check" || mode == "all") check_all();
    if (mode == "time" || mode == "all") time_all();
    if (mode == "scaled") time_scaled();
    if (mode == "odd") time_odd();
    return g_failed ? 1 : 0;
}
