// Checks and times the tensor-core gemm rungs (libgpk/cuda/gemm/11_*, 12_*) against
// a reference and cublasGemmEx. Built with the CUDA build (bench/meson.build), against
// the library's objects; every rung call is gpk_gemm with the rung chosen by
// gpk_set_variant, as an application makes it. On a GPU machine:
//
//   build/bench/tc-bench [check|time|all|tiles|one ...|shape ...|auto ...|noise [reps [stream]]]
//
// check: every rung and dtype on random data over sizes 1, 17, 1000 and 4097 (ragged),
// both layouts, all four transposes, leading dimensions above the minimum, beta == 0
// with NaN in C, beta != 0, k == 0; every element of C (sampled rows and columns at
// 4097) within the bound of F32 accumulation plus one rounding of the result
// (TF32: plus the rounding of each input), and the padding between columns of C left
// untouched. time: median of 10 timed runs after warm-up (CUDA events), per shape,
// layout and dtype, each rung against cublasGemmEx on the same buffers, the two timed
// alternately, each timed call after an untimed one of the same kernel (tiles: every
// tile configuration of rung 12, not only its choice). noise: BF16 1024^3 NN, rung 12
// and cublasGemmEx alternately, each timed call started in each of several ways
// (start_call): the spread of each and which calls came out slow.
#include "bench-common.cuh"

#include <gpk/gpk.h>

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

// wgmma_ws's tile configuration (libgpk/cuda/gemm/12_wgmma_ws.cu): 0 its own choice;
// 1, 2, 3, 4 force 128x256, 128x128, 128x128 ping-pong and 128x64. The one setting
// of the library this program reaches past the API.
namespace gpk::cuda::tc::ws12 {
extern int tile_mode;
}
namespace ws12 = gpk::cuda::tc::ws12;

// The dtypes of the tensor-core rungs: F16, BF16, and F32 with TF32 products.
enum class Dtype : int { F16 = 0, BF16 = 1, TF32 = 2 };
static size_t elem_size(Dtype d) { return d == Dtype::TF32 ? 4 : 2; }

#define GK(x)                                                                                      \
    do {                                                                                           \
        gpk_status s_ = (x);                                                                       \
        if (s_ != GPK_SUCCESS) {                                                                   \
            std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, gpk_last_error(g_ctx)); \
            std::exit(2);                                                                          \
        }                                                                                          \
    } while (0)
#define CB(x)                                                                           \
    do {                                                                                \
        cublasStatus_t s_ = (x);                                                        \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                              \
            std::fprintf(stderr, "%s:%d %s: cublas %d\n", __FILE__, __LINE__, #x, int(s_)); \
            std::exit(2);                                                               \
        }                                                                               \
    } while (0)

static const char *dname(Dtype d) { return d == Dtype::F16 ? "F16" : d == Dtype::BF16 ? "BF16" : "TF32"; }

// ---- device helpers ------------------------------------------------------------------

__device__ float load_as_float(const void *p, int64_t i, int dt) {
    if (dt == 0) return __half2float(static_cast<const __half *>(p)[i]);
    if (dt == 1) return __bfloat162float(static_cast<const __nv_bfloat16 *>(p)[i]);
    return static_cast<const float *>(p)[i];
}

__device__ uint64_t mix(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

// Uniform in [-1, 1), never exactly zero in bulk.
__global__ void fill_random(void *p, int64_t n, int dt, uint64_t seed) {
    for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
        const float v = float(mix(seed * 0x9E3779B97F4A7C15ULL + uint64_t(i)) >> 40) / float(1 << 24) * 2.0f - 1.0f;
        if (dt == 0) static_cast<__half *>(p)[i] = __float2half_rn(v);
        else if (dt == 1) static_cast<__nv_bfloat16 *>(p)[i] = __float2bfloat16_rn(v);
        else static_cast<float *>(p)[i] = v;
    }
}

// Fills with a NaN pattern (0xFFFF halves: NaN in F16, BF16 and, pairwise, F32).
__global__ void fill_nan(void *p, int64_t bytes) {
    for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < bytes; i += int64_t(gridDim.x) * blockDim.x)
        static_cast<unsigned char *>(p)[i] = 0xFF;
}

struct RefCall {
    int dt;
    bool row_major, ta, tb;
    int64_t m, n, k;
    float alpha, beta;
    const void *A;
    int64_t lda;
    const void *B;
    int64_t ldb;
    const void *C0;  // C before the call
    int64_t ldc;
};

__device__ float elem(const void *X, int64_t ld, bool row_major, int64_t r, int64_t c, int dt) {
    return load_as_float(X, row_major ? r * ld + c : r + c * ld, dt);
}

// One warp per checked element (i, j): ref = alpha * sum op(A)(i,l) op(B)(l,j) + beta * C0
// in double, and absdot = the same sum over absolute values (the error scale).
__global__ void ref_kernel(RefCall rc, const int64_t *ij, int64_t count, double *ref, double *absdot) {
    const int64_t w = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    if (w >= count) return;
    const int64_t i = ij[2 * w], j = ij[2 * w + 1];
    double s = 0, a = 0;
    for (int64_t l = lane; l < rc.k; l += 32) {
        const float x = rc.ta ? elem(rc.A, rc.lda, rc.row_major, l, i, rc.dt) : elem(rc.A, rc.lda, rc.row_major, i, l, rc.dt);
        const float y = rc.tb ? elem(rc.B, rc.ldb, rc.row_major, j, l, rc.dt) : elem(rc.B, rc.ldb, rc.row_major, l, j, rc.dt);
        s += double(x) * double(y);
        a += fabs(double(x) * double(y));
    }
    for (int o = 16; o > 0; o >>= 1) {
        s += __shfl_xor_sync(0xffffffffu, s, o);
        a += __shfl_xor_sync(0xffffffffu, a, o);
    }
    if (lane == 0) {
        double r = double(rc.alpha) * s, ad = fabs(double(rc.alpha)) * a;
        if (rc.beta != 0.0f) {
            const double c = elem(rc.C0, rc.ldc, rc.row_major, i, j, rc.dt);
            r += double(rc.beta) * c;
            ad += fabs(double(rc.beta) * c);
        }
        ref[w] = r;
        absdot[w] = ad;
    }
}

// ---- host side ----------------------------------------------------------------------

static uint64_t g_seed = 12345;

static void randomize(void *p, int64_t n, Dtype d) {
    fill_random<<<1024, 256>>>(p, n, int(d), ++g_seed);
    CK(cudaGetLastError());
}

struct Rung {
    const char *name;
    const char *variant;  // gpk_set_variant's name
    bool takes_tf32;
    bool tiles;  // wgmma_ws: its tile configurations can be forced
};
static const Rung kRungs[] = {
    {"11_mma_sync", "mma_sync", false, false},
    {"12_wgmma_ws", "wgmma_ws", true, true},
};

// One gemm call, CBLAS semantics, as tc-bench makes it.
struct Call {
    Dtype d;
    bool row_major, ta, tb;
    int64_t m, n, k;
    float alpha, beta;
    const void *A;
    int64_t lda;
    const void *B;
    int64_t ldb;
    void *C;
    int64_t ldc;
};

// The context every rung call goes through (on g_stream's stream in the noise mode).
static gpk_context *g_ctx = nullptr;

// Chooses the rung, and the math mode of dtype d, for the calls that follow.
static void use(const Rung &r, Dtype d) {
    GK(gpk_set_variant(g_ctx, GPK_OP_GEMM, r.variant));
    GK(gpk_set_math_mode(g_ctx, d == Dtype::TF32 ? GPK_MATH_TF32 : GPK_MATH_DEFAULT));
}

static gpk_status gemm(const Call &c) {
    const int dtype = c.d == Dtype::F16 ? int(GPK_F16) : c.d == Dtype::BF16 ? int(GPK_BF16) : int(GPK_F32);
    return gpk_gemm(g_ctx, dtype, c.row_major ? GPK_ROW_MAJOR : GPK_COL_MAJOR, c.ta ? GPK_TRANS : GPK_NO_TRANS,
                    c.tb ? GPK_TRANS : GPK_NO_TRANS, c.m, c.n, c.k, c.alpha, c.A, c.lda, c.B, c.ldb, c.beta, c.C,
                    c.ldc);
}

static float host_half_to_float(uint16_t h, Dtype d) {
    if (d == Dtype::BF16) {
        uint32_t u = uint32_t(h) << 16;
        float f;
        std::memcpy(&f, &u, 4);
        return f;
    }
    __half_raw r;
    r.x = h;
    return __half2float(__half(r));
}

struct Case {
    int64_t m, n, k;
    bool row_major, ta, tb;
    int64_t pad;  // added to every leading dimension
    float alpha, beta;
    bool sample;  // check sampled rows and columns only
};

static int g_fail = 0, g_checked = 0;

static bool check_case(const Rung &rung, Dtype d, const Case &cs) {
    const size_t es = elem_size(d);
    const int64_t ar = cs.row_major ? (cs.ta ? cs.k : cs.m) : (cs.ta ? cs.k : cs.m);  // rows of stored A (as op^-1)
    (void)ar;
    // Stored shapes: A is (ta ? k x m : m x k), B is (tb ? n x k : k x n), C is m x n, in the layout.
    const int64_t a_r = cs.ta ? cs.k : cs.m, a_c = cs.ta ? cs.m : cs.k;
    const int64_t b_r = cs.tb ? cs.n : cs.k, b_c = cs.tb ? cs.k : cs.n;
    auto ld_of = [&](int64_t r, int64_t c) { return std::max<int64_t>(1, cs.row_major ? c : r) + cs.pad; };
    auto outer = [&](int64_t r, int64_t c) { return std::max<int64_t>(1, cs.row_major ? r : c); };
    const int64_t lda = ld_of(a_r, a_c), ldb = ld_of(b_r, b_c), ldc = ld_of(cs.m, cs.n);
    const int64_t na = lda * outer(a_r, a_c), nb = ldb * outer(b_r, b_c), nc = ldc * outer(cs.m, cs.n);
    void *A, *B, *C, *C0;
    CK(cudaMalloc(&A, na * es + 16));
    CK(cudaMalloc(&B, nb * es + 16));
    CK(cudaMalloc(&C, nc * es + 16));
    CK(cudaMalloc(&C0, nc * es + 16));
    randomize(A, na, d);
    randomize(B, nb, d);
    if (cs.beta == 0.0f) {
        fill_nan<<<1024, 256>>>(C, nc * es);
    } else {
        randomize(C, nc, d);
    }
    CK(cudaGetLastError());
    CK(cudaMemcpy(C0, C, nc * es, cudaMemcpyDeviceToDevice));

    use(rung, d);
    const gpk_status r = gemm({d, cs.row_major, cs.ta, cs.tb, cs.m, cs.n, cs.k, cs.alpha, cs.beta, A, lda, B, ldb, C, ldc});
    CK(cudaDeviceSynchronize());
    ++g_checked;
    if (r != GPK_SUCCESS) {
        std::printf("FAIL %s %s m=%lld n=%lld k=%lld: %s (%s)\n", rung.name, dname(d), (long long)cs.m,
                    (long long)cs.n, (long long)cs.k, gpk_status_string(r), gpk_last_error(g_ctx));
        ++g_fail;
        cudaFree(A); cudaFree(B); cudaFree(C); cudaFree(C0);
        return false;
    }

    // Elements to check.
    std::vector<int64_t> ij;
    if (!cs.sample) {
        for (int64_t i = 0; i < cs.m; ++i)
            for (int64_t j = 0; j < cs.n; ++j) {
                ij.push_back(i);
                ij.push_back(j);
            }
    } else {
        uint64_t s = g_seed * 7 + 1;
        for (int t = 0; t < 20000; ++t) {
            s = s * 6364136223846793005ULL + 1442695040888963407ULL;
            ij.push_back(int64_t((s >> 33) % uint64_t(cs.m)));
            s = s * 6364136223846793005ULL + 1442695040888963407ULL;
            ij.push_back(int64_t((s >> 33) % uint64_t(cs.n)));
        }
        for (int64_t i = 0; i < cs.m; i += 1) {  // last column, every row
            ij.push_back(i);
            ij.push_back(cs.n - 1);
        }
        for (int64_t j = 0; j < cs.n; j += 1) {  // last row, every column
            ij.push_back(cs.m - 1);
            ij.push_back(j);
        }
    }
    const int64_t cnt = int64_t(ij.size() / 2);
    int64_t *dij;
    double *dref, *dabs;
    CK(cudaMalloc(&dij, ij.size() * 8));
    CK(cudaMalloc(&dref, cnt * 8));
    CK(cudaMalloc(&dabs, cnt * 8));
    CK(cudaMemcpy(dij, ij.data(), ij.size() * 8, cudaMemcpyHostToDevice));
    RefCall rc{int(d), cs.row_major, cs.ta, cs.tb, cs.m, cs.n, cs.k, cs.alpha, cs.beta, A, lda, B, ldb, C0, ldc};
    ref_kernel<<<unsigned((cnt * 32 + 255) / 256), 256>>>(rc, dij, cnt, dref, dabs);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::vector<double> ref(cnt), ab(cnt);
    CK(cudaMemcpy(ref.data(), dref, cnt * 8, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(ab.data(), dabs, cnt * 8, cudaMemcpyDeviceToHost));
    std::vector<unsigned char> hc(nc * es), hc0(nc * es);
    CK(cudaMemcpy(hc.data(), C, nc * es, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hc0.data(), C0, nc * es, cudaMemcpyDeviceToHost));
    auto get = [&](const std::vector<unsigned char> &h, int64_t idx) -> float {
        if (es == 4) {
            float f;
            std::memcpy(&f, &h[idx * 4], 4);
            return f;
        }
        uint16_t v;
        std::memcpy(&v, &h[idx * 2], 2);
        return host_half_to_float(v, d);
    };
    // Bound: one rounding of the output, F32 accumulation over k, and for TF32 the
    // truncation of both inputs to 10 mantissa bits.
    const double u_out = d == Dtype::F16 ? std::ldexp(1.0, -11) : d == Dtype::BF16 ? std::ldexp(1.0, -8) : std::ldexp(1.0, -24);
    const double u_acc = (d == Dtype::TF32 ? std::ldexp(1.0, -9) : 0.0) + 1e-5;
    double worst = 0;
    int64_t bad = 0;
    for (int64_t w = 0; w < cnt; ++w) {
        const int64_t i = ij[2 * w], j = ij[2 * w + 1];
        const int64_t idx = cs.row_major ? i * ldc + j : i + j * ldc;
        const double got = get(hc, idx);
        const double bound = u_out * std::fabs(ref[w]) * 1.001 + u_acc * ab[w] + 1e-30;
        const double err = std::fabs(got - ref[w]);
        if (!(err <= bound)) {
            if (bad < 3)
                std::printf("  bad C(%lld,%lld) = %.8g, ref %.8g, bound %.3g\n", (long long)i, (long long)j, got,
                            ref[w], bound);
            ++bad;
        }
        if (bound > 0) worst = std::max(worst, err / bound);
    }
    // Padding between the rows/columns of C: untouched.
    int64_t pad_bad = 0;
    if (cs.pad > 0) {
        const int64_t inner = cs.row_major ? cs.n : cs.m, outern = cs.row_major ? cs.m : cs.n;
        for (int64_t o = 0; o < outern; ++o)
            for (int64_t x = inner; x < ldc; ++x) {
                const int64_t idx = o * ldc + x;
                if (std::memcmp(&hc[idx * es], &hc0[idx * es], es) != 0) ++pad_bad;
            }
    }
    const bool good = bad == 0 && pad_bad == 0;
    if (!good) {
        ++g_fail;
        std::printf("FAIL %s %s %s%s%s m=%lld n=%lld k=%lld pad=%lld alpha=%g beta=%g: %lld of %lld elements out of bound, %lld padding "
                    "elements changed, worst err/bound %.3g\n",
                    rung.name, dname(d), cs.row_major ? "row " : "col ", cs.ta ? "T" : "N", cs.tb ? "T" : "N",
                    (long long)cs.m, (long long)cs.n, (long long)cs.k, (long long)cs.pad, cs.alpha, cs.beta,
                    (long long)bad, (long long)cnt, (long long)pad_bad, worst);
    }
    cudaFree(dij); cudaFree(dref); cudaFree(dabs);
    cudaFree(A); cudaFree(B); cudaFree(C); cudaFree(C0);
    return good;
}

static void run_checks() {
    std::vector<Case> cases;
    const int64_t shapes[][3] = {{1, 1, 1}, {17, 17, 17}, {17, 33, 5}, {200, 300, 70}, {1000, 1000, 1000}};
    int v = 0;
    for (auto &s : shapes)
        for (int lay = 0; lay < 2; ++lay)
            for (int t = 0; t < 4; ++t) {
                ++v;
                const int64_t pad = (v % 3 == 0) ? 0 : (v % 3 == 1 ? 3 : 8);
                const float beta = (v % 2) ? 0.0f : 0.5f;
                const float alpha = (v % 4 < 2) ? 1.0f : -1.5f;
                cases.push_back({s[0], s[1], s[2], lay == 1, bool(t & 1), bool(t & 2), pad, alpha, beta, false});
            }
    // k == 0: C = beta * C, and with beta == 0 zeros over NaN.
    cases.push_back({40, 24, 0, false, false, false, 2, 1.0f, 0.0f, false});
    cases.push_back({40, 24, 0, true, true, false, 0, 1.0f, 0.5f, false});
    // 4097 ragged, every ld odd, and aligned 4096 in the native layout (no packing).
    for (int t = 0; t < 4; ++t) cases.push_back({4097, 4097, 4097, t == 3, bool(t & 1), bool(t & 2), 2, 1.0f, 0.0f, true});
    cases.push_back({4096, 4096, 4096, false, true, false, 0, 1.0f, 0.25f, true});
    cases.push_back({4096, 1024, 256, false, false, false, 0, 1.0f, 0.0f, true});
    // Ragged tiles whose C rows are 16-byte aligned (rung 12 stores them by TMA, clipped).
    cases.push_back({4104, 4095, 1000, false, false, true, 8, -1.5f, 0.0f, true});
    // ... and rows of C that end inside a 16-byte piece (the TMA store would overwrite padding).
    cases.push_back({4097, 4095, 1000, false, false, false, 7, -1.5f, 0.0f, true});

    for (const Rung &r : kRungs)
        for (int mode = 0; mode < (r.tiles ? 5 : 1); ++mode)
        for (Dtype d : {Dtype::BF16, Dtype::F16, Dtype::TF32}) {
            ws12::tile_mode = mode;
            if (d == Dtype::TF32 && !r.takes_tf32) {
                void *X;  // A, B and C of 8 x 8 x 8, which a refusal leaves unread and unwritten
                CK(cudaMalloc(&X, 3 * 256));
                char *x = static_cast<char *>(X);
                use(r, d);
                const gpk_status res = gemm({d, false, false, false, 8, 8, 8, 1, 0, x, 8, x + 256, 8, x + 512, 8});
                ++g_checked;
                if (res != GPK_ERROR_NOT_SUPPORTED) {
                    std::printf("FAIL %s TF32: expected NOT_SUPPORTED, got %s\n", r.name, gpk_status_string(res));
                    ++g_fail;
                } else {
                    std::printf("ok   %s TF32 -> NOT_SUPPORTED (%s)\n", r.name, gpk_last_error(g_ctx));
                }
                CK(cudaFree(X));
                continue;
            }
            int f0 = g_fail;
            for (const Case &c : cases) check_case(r, d, c);
            std::printf("%s %s[tiles %d] %s: %zu cases\n", g_fail == f0 ? "ok  " : "FAIL", r.name, mode, dname(d),
                        cases.size());
            std::fflush(stdout);
        }
}

// ---- timing --------------------------------------------------------------------------

static cublasHandle_t g_cublas;
static bool g_all_tiles = false;  // time every tile configuration of rung 12, not only its choice

using bench::median;

// How a timed call starts: the flush and what follows it, one way for the timings below
// and several for the noise mode.
static void *g_flush = nullptr;
constexpr size_t kFlushBytes = size_t(256) << 20;
__global__ void empty_kernel() {}
__global__ void flush_write(uint4 *p, size_t n) {
    for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
        p[i] = make_uint4(1, 2, 3, 4);
}
// A flush that reads instead of writing: L2 is left holding clean lines.
__global__ void flush_read(const uint4 *p, size_t n, unsigned *out) {
    unsigned s = 0;
    for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
        const uint4 v = p[i];
        s ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (s == 0x12345678u) *out = s;
}
static cudaStream_t g_stream = nullptr;
constexpr int kFlushThenKernel = 3;  // the start every timed call of this program makes
// What runs between the untimed and the timed call: the flush as memset (gpk-bench's),
// as a kernel that writes, as one that reads, the memset and an empty one-block kernel,
// the memset and a 4-byte memset.
static void start_call(int how) {
    if (!g_flush) CK(cudaMalloc(&g_flush, kFlushBytes + 256));
    auto *u = static_cast<uint4 *>(g_flush);
    const size_t n = kFlushBytes / sizeof(uint4);
    switch (how) {
        case 0: CK(cudaMemsetAsync(g_flush, 0, kFlushBytes, g_stream)); break;
        case 1: flush_write<<<132 * 8, 512, 0, g_stream>>>(u, n); break;
        case 2: flush_read<<<132 * 8, 512, 0, g_stream>>>(u, n, reinterpret_cast<unsigned *>(static_cast<char *>(g_flush) + kFlushBytes)); break;
        case kFlushThenKernel:
            CK(cudaMemsetAsync(g_flush, 0, kFlushBytes, g_stream));
            empty_kernel<<<1, 32, 0, g_stream>>>();
            break;
        case 4:
            CK(cudaMemsetAsync(g_flush, 0, kFlushBytes, g_stream));
            CK(cudaMemsetAsync(static_cast<char *>(g_flush) + kFlushBytes, 0, 4, g_stream));
            break;
    }
}

// Median times of f and g, measured alternately (f, g, f, g, ...) so that both see the
// same clocks and temperature.
// Every timed call starts with L2 holding none of its operands, as in gpk-bench: a
// write over a buffer larger than L2 is queued ahead of the start event, then a kernel
// of one empty block (right after the flush some calls meet a delay that others do
// not, as the noise mode shows).
static void flush_l2() { start_call(kFlushThenKernel); }

template <class F, class G>
static void time_pair(F &&f, G &&g, float *tf, float *tg, int reps = 15) {
    if (const char *r = std::getenv("GPK_TC_REPS")) reps = std::atoi(r);
    bench::Events events;
    for (int i = 0; i < 3; ++i) {
        f();
        g();
    }
    CK(cudaDeviceSynchronize());
    std::vector<float> t1, t2;
    for (int i = 0; i < reps; ++i)
        for (int w = 0; w < 2; ++w) {
            // An untimed call of the same kernel first, as in gpk-bench: the timed call
            // finds its own code in the caches, not the other kernel's.
            if (w == 0) f();
            else g();
            flush_l2();
            const float ms = events.time([&] {
                if (w == 0) f();
                else g();
            });
            (w == 0 ? t1 : t2).push_back(ms);
        }
    *tf = median(t1);
    *tg = median(t2);
}

template <class F>
static float time_ms(F &&f, int reps = 10) {
    if (const char *r = std::getenv("GPK_TC_REPS")) reps = std::atoi(r);
    bench::Events events;
    for (int i = 0; i < 3; ++i) f();
    CK(cudaDeviceSynchronize());
    std::vector<float> t;
    for (int i = 0; i < reps; ++i) {
        f();
        flush_l2();
        t.push_back(events.time(f));
    }
    return median(t);
}

static void time_shape(Dtype d, int64_t m, int64_t n, int64_t k, bool ta, bool tb, int64_t pad, bool with_mma) {
    const size_t es = elem_size(d);
    const int64_t lda = (ta ? k : m) + pad, ldb = (tb ? n : k) + pad, ldc = m + pad;
    void *A, *B, *C;
    CK(cudaMalloc(&A, lda * (ta ? m : k) * es));
    CK(cudaMalloc(&B, ldb * (tb ? k : n) * es));
    CK(cudaMalloc(&C, ldc * n * es));
    randomize(A, lda * (ta ? m : k), d);
    randomize(B, ldb * (tb ? k : n), d);
    randomize(C, ldc * n, d);
    const float alpha = 1.0f, beta = 0.0f;
    const cudaDataType_t ct = d == Dtype::F16 ? CUDA_R_16F : d == Dtype::BF16 ? CUDA_R_16BF : CUDA_R_32F;
    const cublasComputeType_t comp = d == Dtype::TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    auto cub = [&] {
        CB(cublasGemmEx(g_cublas, ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb ? CUBLAS_OP_T : CUBLAS_OP_N, int(m), int(n),
                        int(k), &alpha, A, ct, int(lda), B, ct, int(ldb), &beta, C, ct, int(ldc), comp,
                        CUBLAS_GEMM_DEFAULT));
    };
    const double flop = 2.0 * double(m) * double(n) * double(k);
    const float t_cub = time_ms(cub);
    char shape[96];
    std::snprintf(shape, sizeof shape, "%lldx%lldx%lld %s%s%s", (long long)m, (long long)n, (long long)k,
                  ta ? "T" : "N", tb ? "T" : "N", pad ? " ld-odd" : "");
    std::printf("%-5s %-30s %-20s %8.1f TFLOP/s  1.000x\n", dname(d), shape, "cublasGemmEx", flop / t_cub / 1e9);
    for (const Rung &r : kRungs)
    for (int mode = 0; mode < (r.tiles && g_all_tiles ? 5 : 1); ++mode) {
        if (d == Dtype::TF32 && !r.takes_tf32) continue;
        if (!with_mma && !r.tiles) continue;
        ws12::tile_mode = mode;
        char name[64];
        std::snprintf(name, sizeof name, r.tiles ? "%s/%s" : "%s", r.name,
                      mode == 0   ? "auto"
                      : mode == 1 ? "128x256"
                      : mode == 2 ? "128x128"
                      : mode == 3 ? "pingpong"
                                  : "128x64");
        const Call c{d, false, ta, tb, m, n, k, alpha, beta, A, lda, B, ldb, C, ldc};
        use(r, d);
        const gpk_status res = gemm(c);
        CK(cudaDeviceSynchronize());
        if (res != GPK_SUCCESS) {
            std::printf("%-5s %-30s %-20s %s (%s)\n", dname(d), shape, name, gpk_status_string(res), gpk_last_error(g_ctx));
            continue;
        }
        float t, t_c;
        time_pair([&] { GK(gemm(c)); }, cub, &t, &t_c);
        std::printf("%-5s %-30s %-20s %8.1f TFLOP/s  %.3fx   (cuBLAS alongside %.1f)\n", dname(d), shape, name,
                    flop / t / 1e9, t_c / t, flop / t_c / 1e9);
    }
    ws12::tile_mode = 0;
    std::fflush(stdout);
    cudaFree(A);
    cudaFree(B);
    cudaFree(C);
}

// ---- noise: how the way L2 is flushed shapes single-call timings at one shape --------
// For each way of starting a timed call, the rung's own choice and cublasGemmEx timed
// alternately, and the spread of each: where calls fall into two groups a fixed time
// apart, the median of each row lands in either group, and a ratio of medians moves
// (the ways: start_call, above).

// The launch attributes of cuBLAS's kernel at BF16 1024^3 NN, read from a graph that
// captured the call: what it asks of the launch that a plain launch does not.
static void print_launch_attrs() {
    cudaGraph_t graph;
    const float alpha = 1.0f, beta = 0.0f;
    void *A, *B, *C;
    CK(cudaMalloc(&A, 1 << 22));
    CK(cudaMalloc(&B, 1 << 22));
    CK(cudaMalloc(&C, 1 << 22));
    auto call = [&] {
        CB(cublasGemmEx(g_cublas, CUBLAS_OP_N, CUBLAS_OP_N, 1024, 1024, 1024, &alpha, A, CUDA_R_16BF, 1024, B,
                        CUDA_R_16BF, 1024, &beta, C, CUDA_R_16BF, 1024, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    };
    call();  // cuBLAS's set-up (kernel choice, loading) outside the capture
    CK(cudaDeviceSynchronize());
    CK(cudaStreamBeginCapture(g_stream, cudaStreamCaptureModeGlobal));
    call();
    CK(cudaStreamEndCapture(g_stream, &graph));
    size_t nn = 0;
    CK(cudaGraphGetNodes(graph, nullptr, &nn));
    std::vector<cudaGraphNode_t> nodes(nn);
    CK(cudaGraphGetNodes(graph, nodes.data(), &nn));
    for (auto nd : nodes) {
        cudaGraphNodeType ty;
        CK(cudaGraphNodeGetType(nd, &ty));
        std::printf("attrs node type %d\n", int(ty));
        if (ty != cudaGraphNodeTypeKernel) continue;
        for (int id = 1; id <= 16; ++id) {
            cudaLaunchAttributeValue v{};
            std::memset(&v, 0, sizeof v);
            const cudaError_t e = cudaGraphKernelNodeGetAttribute(nd, cudaLaunchAttributeID(id), &v);
            const unsigned *w = reinterpret_cast<const unsigned *>(&v);
            std::printf("attrs id %d: %s %u %u %u %u\n", id, e == cudaSuccess ? "ok" : cudaGetErrorString(e), w[0], w[1], w[2], w[3]);
            (void)cudaGetLastError();
        }
    }
    size_t ne = 0;
    (void)cudaGraphGetEdges(graph, nullptr, nullptr, nullptr, &ne);
    std::printf("attrs edges %zu\n", ne);
    cudaGraphDestroy(graph);
    cudaFree(A);
    cudaFree(B);
    cudaFree(C);
}

// use_stream: 0 the legacy default stream, 1 a non-blocking stream (gpk-bench's kind), 2
// print_launch_attrs only.
static void run_noise(int reps, int use_stream) {
    if (use_stream) CK(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking));
    CB(cublasCreate(&g_cublas));
    CB(cublasSetStream(g_cublas, g_stream));
    if (use_stream == 2) {
        print_launch_attrs();
        return;
    }
    const Dtype d = Dtype::BF16;
    const int64_t m = 1024, n = 1024, k = 1024;
    void *A, *B, *C;
    CK(cudaMalloc(&A, m * k * 2));
    CK(cudaMalloc(&B, k * n * 2));
    CK(cudaMalloc(&C, m * n * 2));
    randomize(A, m * k, d);
    randomize(B, k * n, d);
    const float alpha = 1.0f, beta = 0.0f;
    auto cub = [&] {
        CB(cublasGemmEx(g_cublas, CUBLAS_OP_N, CUBLAS_OP_N, int(m), int(n), int(k), &alpha, A, CUDA_R_16BF, int(m), B,
                        CUDA_R_16BF, int(k), &beta, C, CUDA_R_16BF, int(m), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    };
    GK(gpk_set_stream(g_ctx, g_stream));
    use(kRungs[1], d);
    const Call c{d, false, false, false, m, n, k, alpha, beta, A, m, B, k, C, m};
    auto ours = [&] { GK(gemm(c)); };
    bench::Events events;
    static const char *names[] = {"memset", "write kernel", "read kernel", "memset+empty", "memset+memset4"};
    for (int how = 0; how < 5; ++how) {
        std::vector<float> t[2];
        for (int i = 0; i < reps; ++i)
            for (int w = 0; w < 2; ++w) {
                const int v = (i & 1) ? 1 - w : w;  // alternate which goes first
                v == 0 ? ours() : cub();
                start_call(how);
                const float ms = events.time([&] { v == 0 ? ours() : cub(); }, g_stream);
                t[v].push_back(ms * 1e3f);
            }
        float med[2], mean[2], lo10[2];
        for (int v = 0; v < 2; ++v) {
            std::vector<float> s = t[v];
            std::sort(s.begin(), s.end());
            double sum = 0;
            for (float x : s) sum += x;
            med[v] = median(s);
            mean[v] = float(sum / s.size());
            const float lo = lo10[v] = s[s.size() / 10];
            size_t slow = 0;
            for (float x : s) slow += x > lo + 0.5f;
            std::printf("noise %-13s %-7s median %6.3f mean %6.3f p10 %6.3f p25 %6.3f p75 %6.3f p90 %6.3f  slow %3zu%%\n",
                        names[how], v == 0 ? "ours" : "cublas", med[v], mean[v], lo, s[s.size() / 4],
                        s[s.size() * 3 / 4], s[s.size() * 9 / 10], 100 * slow / s.size());
        }
        std::printf("noise %-13s ratio of medians %.3f, of means %.3f\n", names[how], med[1] / med[0], mean[1] / mean[0]);
        for (int v = 0; v < 2; ++v) {  // which calls were slow, in order
            std::printf("noise seq %-13s %-7s ", names[how], v == 0 ? "ours" : "cublas");
            for (size_t i = 0; i < t[v].size() && i < 100; ++i) std::printf("%c", t[v][i] > lo10[v] + 0.5f ? 'S' : '.');
            std::printf("\n");
        }
        if (how == 0) {  // the distribution, 0.1 us bins
            for (int v = 0; v < 2; ++v) {
                std::printf("noise hist %s:", v == 0 ? "ours" : "cublas");
                std::vector<int> bins(40, 0);
                const float base = std::floor(*std::min_element(t[v].begin(), t[v].end()) * 10) / 10;
                for (float x : t[v]) bins[std::min(39, int((x - base) * 10))]++;
                std::printf(" from %.1f:", base);
                for (int c : bins) std::printf(" %d", c);
                std::printf("\n");
            }
        }
        std::fflush(stdout);
    }
    cudaFree(A);
    cudaFree(B);
    cudaFree(C);
    CB(cublasDestroy(g_cublas));
}

static void run_timing() {
    CB(cublasCreate(&g_cublas));
    for (Dtype d : {Dtype::BF16, Dtype::F16}) {
        for (int lay = 0; lay < 2; ++lay) {  // TN: both operands k-major (no packing); NN: A packed
            const bool ta = lay == 0;
            time_shape(d, 4096, 4096, 4096, ta, false, 0, true);
            time_shape(d, 8192, 8192, 8192, ta, false, 0, false);
            if (d == Dtype::BF16) {
                time_shape(d, 1024, 1024, 1024, ta, false, 0, false);
                time_shape(d, 8192, 8192, 256, ta, false, 0, false);
            }
        }
        time_shape(d, 4097, 4097, 4097, false, false, 2, false);  // lda = ldb = ldc = 4099
    }
    for (int lay = 0; lay < 2; ++lay) {
        time_shape(Dtype::TF32, 4096, 4096, 4096, lay == 0, false, 0, false);
        time_shape(Dtype::TF32, 8192, 8192, 8192, lay == 0, false, 0, false);
    }
    CB(cublasDestroy(g_cublas));
}

int main(int argc, char **argv) {
    const bench::Args args{argc, argv};
    const std::string what = args.mode();
    g_ctx = bench::open_gpu();
    // one <tiles mode> <m> <n> <k> <row_major> <ta> <tb> <dtype 0 F16, 1 BF16, 2 TF32> [beta [pad]]
    // (beta 0 with an even pad takes rung 12's TMA-store epilogue)
    if (what == "one" && args.has(9)) {
        ws12::tile_mode = int(args.integer(2));
        const float beta = float(args.real(10, 0.5));
        const int64_t pad = args.integer(11, 3);
        const Dtype d = Dtype(args.integer(9));
        Case c{args.integer(3), args.integer(4), args.integer(5), args.integer(6) != 0,
               args.integer(7) != 0, args.integer(8) != 0, pad, 1.0f, beta, false};
        for (const Rung &r : kRungs)
            if (r.takes_tf32 || d != Dtype::TF32) check_case(r, d, c);
        std::printf("one: %d failed\n", g_fail);
        return g_fail ? 1 : 0;
    }
    // shape <dtype 0 F16, 1 BF16, 2 TF32> <m> <n> <k> <ta> <tb> <pad>: every tile
    // configuration of rung 12 at one column-major shape
    // auto <dtype> <m> <n> <k> <ta> <tb> <pad>: the same with rung 12's own tile choice only
    if ((what == "shape" || what == "auto") && args.has(8)) {
        CB(cublasCreate(&g_cublas));
        g_all_tiles = what == "shape";
        time_shape(Dtype(args.integer(2)), args.integer(3), args.integer(4), args.integer(5), args.integer(6) != 0,
                   args.integer(7) != 0, args.integer(8), false);
        CB(cublasDestroy(g_cublas));
        return 0;
    }
    if (what == "noise") {
        run_noise(int(args.integer(2, 300)), int(args.integer(3, 0)));
        return 0;
    }
    if (what == "check" || what == "all") {
        run_checks();
        std::printf("checks: %d run, %d failed\n", g_checked, g_fail);
    }
    if (what == "tiles") g_all_tiles = true;
    if (what == "time" || what == "all" || what == "tiles") run_timing();
    GK(gpk_destroy(g_ctx));
    return g_fail ? 1 : 0;
}
