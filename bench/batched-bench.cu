// Check and benchmark of the strided batched gemm rungs (libgpk/cuda/gemm_batched/):
// each rung through gpk_gemm_strided_batched, chosen by gpk_set_variant. Built with the
// CUDA build (bench/meson.build); on a GPU machine:
//
//   build/bench/batched-bench [check|time|all] [quick]
//   build/bench/batched-bench time F32,64,128   (only the dtypes and sizes listed)
//
// check: every rung against a reference computed on the GPU in double from the raw
// (row- or column-major) arguments, on random data: square and non-square sizes from
// 1 to 600, both layouts, all transposes, padded ld and strides, stride 0 for A or B,
// beta == 0 with NaN in C, alpha == 0 and k == 0, batch counts 0, 1 and more. Every
// element of the C allocation outside the C matrices holds a guard value that must
// survive; a rung that declines a call must answer GPK_ERROR_NOT_SUPPORTED and write
// nothing.
// time: square n x n x n at n = 4 .. 512, F32 and F64, the batch filling about 1 GiB
// per operand, beta == 0 (C written once, not read): each rung, cuBLAS and a
// device-to-device copy, median of 10 timed with events; each rung's result is
// compared with cuBLAS's.
#include "bench-common.cuh"

#include <gpk/gpk.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

static gpk_context *g_ctx = nullptr;

// One strided batched call, CBLAS semantics, as this program makes it.
struct BatchCall {
    int dtype, layout, transa, transb;
    int64_t m, n, k;
    double alpha;
    const void *A;
    int64_t lda, stride_a;
    const void *B;
    int64_t ldb, stride_b;
    double beta;
    void *C;
    int64_t ldc, stride_c, batch_count;
};

// A rung by its gpk_set_variant name; the vendor's first, the others timed against it.
struct Rung {
    const char *name;
    gpk_status operator()(const BatchCall &p) const {
        // Chosen once for a run of calls, so that timed calls hold the call alone.
        static const char *chosen = nullptr;
        if (chosen != name) {
            const gpk_status s = gpk_set_variant(g_ctx, GPK_OP_GEMM_BATCHED, name);
            if (s != GPK_SUCCESS) return s;
            chosen = name;
        }
        return gpk_gemm_strided_batched(g_ctx, p.dtype, p.layout, p.transa, p.transb, p.m, p.n, p.k, p.alpha, p.A,
                                        p.lda, p.stride_a, p.B, p.ldb, p.stride_b, p.beta, p.C, p.ldc, p.stride_c,
                                        p.batch_count);
    }
};

// The batched ladder's rungs as the library lists them, in ladder order (the vendor's
// first): a new rung is checked and timed here without a change to this file.
static std::vector<Rung> rungs() {
    int count = 0;
    if (gpk_variant_count(g_ctx, GPK_OP_GEMM_BATCHED, &count) != GPK_SUCCESS) count = 0;
    std::vector<Rung> all;
    for (int i = 0; i < count; ++i) all.push_back({gpk_variant_name(g_ctx, GPK_OP_GEMM_BATCHED, i)});
    return all;
}

// ---- reference ---------------------------------------------------------------------

__device__ double at(const void *X, bool f64, int64_t off) {
    return f64 ? static_cast<const double *>(X)[off] : static_cast<const float *>(X)[off];
}

// X(r, c) of a matrix stored in `layout` with leading dimension ld.
__device__ int64_t offset(bool row_major, int64_t ld, int64_t r, int64_t c) { return row_major ? r * ld + c : r + c * ld; }

// ref[b, i, j] = alpha op(A_b) op(B_b) + beta C0_b (double), bound = the same with
// absolute values (the error scale).
__global__ void reference_kernel(BatchCall p, const void *C0, double *ref, double *bound) {
    const bool f64 = p.dtype == GPK_F64, rm = p.layout == GPK_ROW_MAJOR;
    const bool ta = p.transa == GPK_TRANS, tb = p.transb == GPK_TRANS;
    const int64_t total = p.batch_count * p.m * p.n;
    for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < total; e += int64_t(gridDim.x) * blockDim.x) {
        const int64_t b = e / (p.m * p.n), r = e % (p.m * p.n), i = r / p.n, j = r % p.n;
        double s = 0, sa = 0;
        if (p.k > 0 && p.alpha != 0)
            for (int64_t q = 0; q < p.k; ++q) {
                const double a = at(p.A, f64, b * p.stride_a + (ta ? offset(rm, p.lda, q, i) : offset(rm, p.lda, i, q)));
                const double x = at(p.B, f64, b * p.stride_b + (tb ? offset(rm, p.ldb, j, q) : offset(rm, p.ldb, q, j)));
                s += a * x;
                sa += fabs(a * x);
            }
        double v = p.alpha * s, bd = fabs(p.alpha) * sa;
        if (p.beta != 0) {
            const double c = at(C0, f64, b * p.stride_c + offset(rm, p.ldc, i, j));
            v += p.beta * c;
            bd += fabs(p.beta * c);
        }
        ref[e] = v;
        bound[e] = bd;
    }
}

// ---- check -------------------------------------------------------------------------

static std::mt19937_64 rng(12345);

// Elements a matrix of rows x cols in `layout` with leading dimension ld spans.
static int64_t footprint(bool rm, int64_t rows, int64_t cols, int64_t ld) {
    if (rows == 0 || cols == 0) return 0;
    return rm ? (rows - 1) * ld + cols : (cols - 1) * ld + rows;
}
static int64_t min_ld(bool rm, int64_t rows, int64_t cols) { return std::max<int64_t>(1, rm ? cols : rows); }

struct Case {
    int dtype, layout, transa, transb;
    int64_t m, n, k;
    double alpha, beta;
    int64_t ld_pad, stride_pad;
    int shared;  // 0 none, 1 stride_a = 0, 2 stride_b = 0
    int64_t batch;
};

static void fill(std::vector<unsigned char> &buf, bool f64, double lo, double hi) {
    std::uniform_real_distribution<double> d(lo, hi);
    const size_t es = f64 ? 8 : 4, cnt = buf.size() / es;
    for (size_t i = 0; i < cnt; ++i) {
        const double v = d(rng);
        if (f64)
            std::memcpy(&buf[i * 8], &v, 8);
        else {
            const float f = static_cast<float>(v);
            std::memcpy(&buf[i * 4], &f, 4);
        }
    }
}

static const double kGuard = 12345.5;

static std::string describe(const Case &c) {
    char s[256];
    std::snprintf(s, sizeof s, "%s %s %c%c m=%lld n=%lld k=%lld alpha=%g beta=%g ldpad=%lld spad=%lld shared=%d batch=%lld",
                  c.dtype == GPK_F64 ? "F64" : "F32", c.layout == GPK_ROW_MAJOR ? "row" : "col",
                  c.transa == GPK_TRANS ? 'T' : 'N', c.transb == GPK_TRANS ? 'T' : 'N', (long long)c.m, (long long)c.n,
                  (long long)c.k, c.alpha, c.beta, (long long)c.ld_pad, (long long)c.stride_pad, c.shared,
                  (long long)c.batch);
    return s;
}

// Returns 0 pass, 1 fail, 2 not supported (and untouched).
static int check_case(const Rung &rung, const Case &c, std::string *why) {
    const bool f64 = c.dtype == GPK_F64, rm = c.layout == GPK_ROW_MAJOR;
    const size_t es = f64 ? 8 : 4;
    const bool ta = c.transa == GPK_TRANS, tb = c.transb == GPK_TRANS;
    const int64_t ar = ta ? c.k : c.m, ac = ta ? c.m : c.k, br = tb ? c.n : c.k, bc = tb ? c.k : c.n;
    const int64_t lda = min_ld(rm, ar, ac) + c.ld_pad, ldb = min_ld(rm, br, bc) + c.ld_pad,
                  ldc = min_ld(rm, c.m, c.n) + c.ld_pad;
    const int64_t fa = footprint(rm, ar, ac, lda), fb = footprint(rm, br, bc, ldb), fc = footprint(rm, c.m, c.n, ldc);
    const int64_t sa = c.shared == 1 ? 0 : fa + c.stride_pad, sb = c.shared == 2 ? 0 : fb + c.stride_pad,
                  sc = fc + c.stride_pad;
    const int64_t nb = std::max<int64_t>(c.batch, 1);
    const int64_t na = (nb - 1) * sa + fa + 1, nbb = (nb - 1) * sb + fb + 1, nc = (nb - 1) * sc + fc + 1;
    std::vector<unsigned char> hA(na * es), hB(nbb * es), hC(nc * es);
    fill(hA, f64, -1, 1);
    fill(hB, f64, -1, 1);
    // C: guard everywhere, then the matrices random (or NaN for beta == 0).
    for (int64_t i = 0; i < nc; ++i) {
        if (f64)
            std::memcpy(&hC[i * 8], &kGuard, 8);
        else {
            const float g = static_cast<float>(kGuard);
            std::memcpy(&hC[i * 4], &g, 4);
        }
    }
    std::uniform_real_distribution<double> d(-1, 1);
    auto in_c = [&](int64_t e, int64_t *b, int64_t *i, int64_t *j) {
        if (c.batch == 0 || c.m == 0 || c.n == 0) return false;
        const int64_t bb = e / sc, r = e % sc;
        if (bb >= c.batch) return false;
        const int64_t outer = r / ldc, inner = r % ldc;
        const int64_t ii = rm ? outer : inner, jj = rm ? inner : outer;
        if (ii >= c.m || jj >= c.n) return false;
        *b = bb, *i = ii, *j = jj;
        return true;
    };
    for (int64_t e = 0; e < nc; ++e) {
        int64_t b, i, j;
        if (!in_c(e, &b, &i, &j)) continue;
        const double v = c.beta == 0 ? NAN : d(rng);
        if (f64)
            std::memcpy(&hC[e * 8], &v, 8);
        else {
            const float f = static_cast<float>(v);
            std::memcpy(&hC[e * 4], &f, 4);
        }
    }
    void *dA, *dB, *dC, *dC0;
    double *dref, *dbound;
    const int64_t nref = std::max<int64_t>(1, c.batch * c.m * c.n);
    CK(cudaMalloc(&dA, hA.size()));
    CK(cudaMalloc(&dB, hB.size()));
    CK(cudaMalloc(&dC, hC.size()));
    CK(cudaMalloc(&dC0, hC.size()));
    CK(cudaMalloc(&dref, nref * 8));
    CK(cudaMalloc(&dbound, nref * 8));
    CK(cudaMemcpy(dA, hA.data(), hA.size(), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dB, hB.data(), hB.size(), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dC, hC.data(), hC.size(), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dC0, hC.data(), hC.size(), cudaMemcpyHostToDevice));
    const BatchCall p{c.dtype, c.layout, c.transa, c.transb, c.m, c.n, c.k, c.alpha, dA, lda, sa, dB, ldb, sb,
                      c.beta, dC, ldc, sc, c.batch};
    if (c.batch * c.m * c.n > 0) {
        reference_kernel<<<1024, 256>>>(p, dC0, dref, dbound);
        CK(cudaGetLastError());
    }
    const gpk_status r = rung(p);
    CK(cudaDeviceSynchronize());
    std::vector<unsigned char> out(hC.size());
    CK(cudaMemcpy(out.data(), dC, out.size(), cudaMemcpyDeviceToHost));
    std::vector<double> ref(nref), bound(nref);
    CK(cudaMemcpy(ref.data(), dref, nref * 8, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(bound.data(), dbound, nref * 8, cudaMemcpyDeviceToHost));
    cudaFree(dA), cudaFree(dB), cudaFree(dC), cudaFree(dC0), cudaFree(dref), cudaFree(dbound);
    if (r == GPK_ERROR_NOT_SUPPORTED) {
        if (out != hC) {
            *why = "declined but wrote C";
            return 1;
        }
        return 2;
    }
    if (r != GPK_SUCCESS) {
        *why = std::string("error: ") + gpk_last_error(g_ctx);
        return 1;
    }
    const double eps = f64 ? 1.1102230246251565e-16 : 5.9604644775390625e-08;
    const double tol = 2.0 * (c.k + 4) * eps;
    int bad = 0;
    for (int64_t e = 0; e < nc; ++e) {
        double v;
        if (f64)
            std::memcpy(&v, &out[e * 8], 8);
        else {
            float f;
            std::memcpy(&f, &out[e * 4], 4);
            v = f;
        }
        int64_t b, i, j;
        if (!in_c(e, &b, &i, &j)) {
            if (std::memcmp(&out[e * es], &hC[e * es], es) != 0) {
                if (bad++ == 0) {
                    char s[128];
                    std::snprintf(s, sizeof s, "guard at element %lld overwritten (%g)", (long long)e, v);
                    *why = s;
                }
            }
            continue;
        }
        const int64_t idx = (b * c.m + i) * c.n + j;
        const double err = std::fabs(v - ref[idx]);
        if (!(err <= tol * bound[idx] + 1e-300) && !(v == ref[idx])) {
            if (bad++ == 0) {
                char s[160];
                std::snprintf(s, sizeof s, "C[%lld](%lld,%lld) = %.9g, reference %.9g (bound %.3g)", (long long)b,
                              (long long)i, (long long)j, v, ref[idx], tol * bound[idx]);
                *why = s;
            }
        }
    }
    return bad ? 1 : 0;
}

static int run_checks(bool quick) {
    struct Size {
        int64_t m, n, k;
    };
    std::vector<Size> sizes = {{1, 1, 1},    {3, 3, 3},    {4, 4, 4},    {7, 7, 7},     {8, 8, 8},   {2, 8, 5},
                               {8, 3, 1},    {5, 4, 0},    {16, 16, 16}, {17, 17, 17},  {16, 9, 24}, {31, 31, 31},
                               {32, 32, 32}, {33, 65, 17}, {64, 64, 64}, {100, 100, 100}, {128, 128, 128},
                               {600, 17, 33}, {17, 600, 33}, {256, 256, 256}, {90, 90, 90}};
    if (quick) sizes = {{4, 4, 4}, {7, 7, 7}, {17, 17, 17}, {64, 64, 64}, {600, 17, 33}};
    int fails = 0, passes = 0, declined = 0, counter = 0;
    for (const Rung &rung : rungs()) {
        int rp = 0, rf = 0, rd = 0;
        for (int dtype : {GPK_F32, GPK_F64})
            for (const Size &s : sizes)
                for (int combo = 0; combo < 8; ++combo) {
                    Case c{};
                    c.dtype = dtype;
                    c.layout = combo & 1 ? GPK_ROW_MAJOR : GPK_COL_MAJOR;
                    c.transa = combo & 2 ? GPK_TRANS : GPK_NO_TRANS;
                    c.transb = combo & 4 ? GPK_TRANS : GPK_NO_TRANS;
                    c.m = s.m, c.n = s.n, c.k = s.k;
                    const int v = counter++;
                    c.alpha = v % 7 == 3 ? 0.0 : (v % 2 ? -1.5 : 1.0);
                    c.beta = v % 3 == 0 ? 0.0 : 0.75;
                    c.ld_pad = v % 4 == 1 ? 3 : (v % 4 == 2 ? 4 : 0);
                    c.stride_pad = v % 5 == 2 ? 5 : (v % 5 == 4 ? 8 : 0);
                    c.shared = v % 6 == 1 ? 1 : (v % 6 == 4 ? 2 : 0);
                    const int64_t big = s.m * s.n * std::max<int64_t>(s.k, 1) > 200000 ? 3 : 41;
                    c.batch = v % 11 == 5 ? 0 : (v % 11 == 7 ? 1 : big);
                    std::string why;
                    const int r = check_case(rung, c, &why);
                    if (r == 0) ++rp;
                    if (r == 2) ++rd;
                    if (r == 1) {
                        ++rf;
                        if (rf <= 8) std::printf("FAIL %-15s %s: %s\n", rung.name, describe(c).c_str(), why.c_str());
                    }
                }
        std::printf("check %-15s pass %4d  declined %4d  fail %4d\n", rung.name, rp, rd, rf);
        passes += rp, fails += rf, declined += rd;
    }
    // A batch past the grid's reach: 4 x 4 over 3 million products, every rung that takes it.
    for (int dtype : {GPK_F32, GPK_F64})
        for (const Rung &rung : rungs()) {
            Case c{dtype, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, 4, 4, 4, 1.0, 0.0, 0, 0, 0, quick ? 100000 : 3000000};
            std::string why;
            const int r = check_case(rung, c, &why);
            std::printf("check %-15s big batch %s %s %s\n", rung.name, dtype == GPK_F64 ? "F64" : "F32",
                        r == 0 ? "pass" : r == 2 ? "declined" : "FAIL", why.c_str());
            if (r == 1) ++fails;
        }
    std::printf("checks: %d passed, %d declined (GPK_ERROR_NOT_SUPPORTED, C untouched), %d failed\n", passes, declined,
                fails);
    return fails;
}

// ---- timing ------------------------------------------------------------------------

__global__ void init_kernel(void *X, bool f64, int64_t n, uint64_t seed) {
    for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
        uint64_t z = (i + seed) * 0x9E3779B97F4A7C15ull;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z ^= z >> 31;
        const double v = 1.0 + (z >> 11) * (1.0 / 9007199254740992.0);  // [1, 2)
        if (f64)
            static_cast<double *>(X)[i] = v;
        else
            static_cast<float *>(X)[i] = static_cast<float>(v);
    }
}

// max |X - Y| / max |Y| over n elements.
__global__ void diff_kernel(const void *X, const void *Y, bool f64, int64_t n, unsigned long long *maxdiff,
                            unsigned long long *maxref) {
    double md = 0, mr = 0;
    for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
        const double x = f64 ? static_cast<const double *>(X)[i] : static_cast<const float *>(X)[i];
        const double y = f64 ? static_cast<const double *>(Y)[i] : static_cast<const float *>(Y)[i];
        const double dd = x == x ? fabs(x - y) : 1e300;
        md = fmax(md, dd), mr = fmax(mr, fabs(y));
    }
    atomicMax(maxdiff, __double_as_longlong(md));
    atomicMax(maxref, __double_as_longlong(mr));
}

template <class F>
static float median_ms(F f, int reps) {
    bench::Events events;
    f(), f();
    CK(cudaDeviceSynchronize());
    std::vector<float> t;
    for (int r = 0; r < reps; ++r) t.push_back(events.time(f));
    return bench::median(t);
}

// sizes: ",n,n,...," to time only those n ("" for all).
static void run_timing(bool quick, const std::string &sizes) {
    const int64_t operand = int64_t(1) << 30;
    void *A, *B, *C, *Cref;
    CK(cudaMalloc(&A, operand));
    CK(cudaMalloc(&B, operand));
    CK(cudaMalloc(&C, operand));
    CK(cudaMalloc(&Cref, operand));
    unsigned long long *dd;
    CK(cudaMalloc(&dd, 16));
    std::printf("\n%-4s %4s %9s %-15s %9s %9s %9s %8s %8s\n", "dt", "n", "batch", "rung", "ms", "GB/s", "TFLOP/s",
                "x cublas", "of copy");
    std::vector<std::string> best;
    for (int dtype : {GPK_F32, GPK_F64}) {
        const bool f64 = dtype == GPK_F64;
        if (!sizes.empty() && sizes.find(f64 ? "F64" : "F32") == std::string::npos) continue;
        const int64_t es = f64 ? 8 : 4;
        init_kernel<<<4096, 256>>>(A, f64, operand / es, 1);
        init_kernel<<<4096, 256>>>(B, f64, operand / es, 2);
        CK(cudaDeviceSynchronize());
        for (int64_t n : {4, 8, 16, 32, 64, 128, 256, 512}) {
            if (quick && n != 4 && n != 32 && n != 256) continue;
            if (!sizes.empty() && sizes.find("," + std::to_string(n) + ",") == std::string::npos) continue;
            const int64_t batch = operand / (n * n * es);
            const double bytes = 3.0 * batch * n * n * es, flops = 2.0 * batch * n * n * n;
            // The copy: one operand's bytes read and written.
            const float copy_ms =
                median_ms([&] { CK(cudaMemcpyAsync(C, A, batch * n * n * es, cudaMemcpyDeviceToDevice)); }, 10);
            const double copy_gbs = 2.0 * batch * n * n * es / copy_ms / 1e6;
            std::printf("%-4s %4lld %9lld %-15s %9.3f %9.1f %9s %8s %8s\n", f64 ? "F64" : "F32", (long long)n,
                        (long long)batch, "copy", copy_ms, copy_gbs, "", "", "1.00");
            const BatchCall p{dtype, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, n, n, n, 1.0, A, n, n * n, B, n, n * n,
                              0.0, C, n, n * n, batch};
            double cublas_ms = 0, best_gbs = 0;
            std::string best_name;
            for (const Rung &rung : rungs()) {
                CK(cudaMemset(C, 0xff, operand));  // NaN everywhere: beta == 0 must not read it
                const gpk_status probe = rung(p);
                if (probe == GPK_ERROR_NOT_SUPPORTED) continue;
                if (probe != GPK_SUCCESS) {
                    std::printf("%s: %s (%s)\n", rung.name, gpk_status_string(probe), gpk_last_error(g_ctx));
                    continue;
                }
                CK(cudaDeviceSynchronize());
                std::string note;
                if (std::string(rung.name) == "cublas") {
                    CK(cudaMemcpy(Cref, C, batch * n * n * es, cudaMemcpyDeviceToDevice));
                } else {
                    CK(cudaMemset(dd, 0, 16));
                    diff_kernel<<<2048, 256>>>(C, Cref, f64, batch * n * n, dd, dd + 1);
                    unsigned long long h[2];
                    CK(cudaMemcpy(h, dd, 16, cudaMemcpyDeviceToHost));
                    double md, mr;
                    std::memcpy(&md, &h[0], 8), std::memcpy(&mr, &h[1], 8);
                    const double rel = md / mr;
                    if (!(rel < (f64 ? 1e-13 : 1e-5))) {
                        char s[96];
                        std::snprintf(s, sizeof s, "  MISMATCH vs cublas: %.3g", rel);
                        note = s;
                    }
                }
                const float ms = median_ms([&] { rung(p); }, 10);
                CK(cudaGetLastError());
                const double gbs = bytes / ms / 1e6, tf = flops / ms / 1e9;
                if (std::string(rung.name) == "cublas") cublas_ms = ms;
                char xc[16] = "";
                if (cublas_ms > 0) std::snprintf(xc, sizeof xc, "%.2f", cublas_ms / ms);
                std::printf("%-4s %4lld %9lld %-15s %9.3f %9.1f %9.2f %8s %8.2f%s\n", f64 ? "F64" : "F32",
                            (long long)n, (long long)batch, rung.name, ms, gbs, tf, xc, gbs / copy_gbs, note.c_str());
                if (gbs > best_gbs && note.empty()) best_gbs = gbs, best_name = rung.name;
            }
            char s[160];
            std::snprintf(s, sizeof s, "best %s n=%lld: %s (%.2fx cublas, %.2f of copy)", f64 ? "F64" : "F32",
                          (long long)n, best_name.c_str(), best_gbs / (bytes / cublas_ms / 1e6), best_gbs / copy_gbs);
            best.push_back(s);
        }
    }
    std::printf("\n");
    for (const std::string &s : best) std::printf("%s\n", s.c_str());
    cudaFree(A), cudaFree(B), cudaFree(C), cudaFree(Cref), cudaFree(dd);
}

int main(int argc, char **argv) {
    const bench::Args args{argc, argv};
    const std::string mode = args.mode();
    const bool quick = args.word(2) == "quick";
    // time F32,F64,64,128: only those dtypes and sizes.
    const std::string sizes = args.has(2) && !quick ? "," + args.word(2) + "," : "";
    g_ctx = bench::open_gpu();
    int fails = 0;
    if (mode == "check" || mode == "all") fails = run_checks(quick);
    if (mode == "time" || mode == "all") run_timing(quick, sizes);
    gpk_destroy(g_ctx);
    return fails ? 1 : 0;
}
