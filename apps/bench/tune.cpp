// gpk-bench --tune FILE: the tuning table of the GPU at hand (libgpk/tuning.hpp).
//
// The grid, per op; every point in each class the table distinguishes (dtype, math
// mode, layout, alignment: tight leading dimensions padded to whole 16-byte vectors,
// "a16", or made odd, "u"; for reduce, x one element off 16 bytes):
//   gemm          f32, tf32, f64, f16, bf16 x nn, nt, tn, tt x a16, u, at m x n x k =
//                 128^3, 512^3, 1024^3, 2048^3, 4096^3, 8192^3 (powers of two),
//                 1536^3, 3000^3, 4608^3, 5120^3, 5632^3, 6144^3, 7000^3 (not: where a
//                 tile's last wave fills otherwise, a tile's order changes between
//                 neighbours 10 % apart), 2560^2 x 640 and 8192^2 x 1024 (short k,
//                 partial waves), 12288 x 1024 x 1024 and 1024 x 12288 x 1024 (oblong),
//                 1024^2 x 8192 (long k), 16 x 8192 x 8192 and 8192 x 16 x 8192
//                 (skinny), 64 x 64 x 2^20 (a Gram product);
//                 gpk_gemm_ex's classes x nn, nt, tn, tt x a16, u, each at its own shapes:
//                 fp8 (E4M3 x E4M3 -> BF16, the scale in alpha) at 1024^3, 2048^3,
//                 4096^3, 8192^3, 3000^3, 8192^2 x 1024, 4096 x 24576 x 1536,
//                 4096 x 7168 x 16384 and 16 x 8192 x 8192 (the shapes of LLM layers
//                 FP8 serves); fp8_block (the same through gpk_gemm_blockscaled, scales
//                 1 x 128 of A's rows and 128 x 128 of B, all ones) at 2048^3, 4096^3,
//                 8192^3 and 4096 x 7168 x 16384; half_f32 (BF16 x BF16 -> F32; F16
//                 inputs are of the same class) at 1024^3, 4096^3 and 8192^3
//   gemm_batched  the same classes, n^3 products for n = 4, 8, .., 64 (every multiple
//                 of 4), 80, 96, 112, 128, 160, .., 448, 512 (four per doubling) and
//                 32^2 x 256, 256^2 x 32, as many as fill 2 MiB per operand and as many
//                 as fill 256 MiB
//   reduce        f32 f64 i32 i64 f16 bf16 x a16, u; 2^10 .. 2^28 (by 4x up to 2^18,
//                 then 2x) and 3,000,017 elements, up to 1 GiB
//   transpose     the same dtypes x a16, u; 256^2, 1024^2, 4096^2, 8192^2,
//                 16384 x 4096, 4096 x 16384, 3000 x 5000, 64 x 65536, 65536 x 64
//   pi            2^16, 2^20, 2^24, 2^28, 2^32, 2^34 samples
// With --quick (and on the host backend, whose ladders have one rung) a few small
// points per class. --dtype measures only the classes it names (tune_classes).
//
// Each point as gpk-bench times a case: every rung of the ladder selected by name, on
// device arrays filled with non-zero data (beta 0), each call timed with CUDA events
// after a 256 MiB L2 flush and a one-block kernel. A rung is warmed up by one call
// (one that refuses the call is left out of the row), then timed once; those over 4x
// the best of these probes, and 200 us or longer, are dropped at the point. The rest
// are timed in turns, each turn in a random order (at least 5 calls each, more where
// calls are short, up to 1 ms of them, at most 50), each timed call after an untimed
// one where calls are short; the row lists them by median, fastest first -- save that
// for gemm and gemm_batched the vendor's rung goes first where it is within 3 % of the
// fastest, and for transpose the ladder's default (the rung "auto" runs without a
// table; cublas_geam is never auto's): these hold their speed at the shapes between
// the grid's points, where a rung that led by less can fall behind by far (a last
// wave of tiles left nearly empty; docs/PERFORMANCE.md, section "Auto: transpose").
// A rung over 4x the best at a point where the best takes 200 us or more
// (past launch overheads) is not timed at the points of its class at least as large in
// every dimension: points are taken in order of size within a class.
// The tuner times; correctness is the conformance suite's (tests/).
#include "tune.hpp"
#include "timer.hpp"

#include "../common/cli.hpp"
#include "tuning.hpp"  // libgpk's: the table's words, so that the tuner writes what the library reads

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <unistd.h>

namespace gpk_bench {
namespace {

namespace tn = gpk::tuning;

constexpr size_t kMiB = size_t(1) << 20;
constexpr size_t kBufferBytes = (size_t(1) << 30) + 64 * 1024;  // each of A, B, C: 1 GiB and a little
const std::vector<size_t> kBatchedOperands = {2 * kMiB, 256 * kMiB};  // per operand, batched
constexpr double kHopeless = 4.0;                  // times the best: dropped
constexpr double kPastOverheadUs = 200;            // best this long: drop for larger points
constexpr double kLongCallUs = 1000;               // a hopeless rung's call this long: the same
constexpr double kPreferredWithin = 1.03;          // the vendor (gemm) or default (transpose) first within 3 %

// One point of the grid.
struct Point {
    int op = 0;
    int dtype = -1;
    int math = GPK_MATH_DEFAULT;
    bool ta = false, tb = false;
    bool aligned = true;
    int64_t d[4] = {1, 1, 1, 1};

    double size() const { return double(d[0]) * double(d[1]) * double(d[2]) * double(d[3]); }
    // The point as the table keys it (libgpk/tuning.hpp).
    tn::Key key() const {
        tn::Key k;
        k.op = op, k.dtype = dtype, k.math = math;
        const bool gemm = op == GPK_OP_GEMM || op == GPK_OP_GEMM_BATCHED;
        k.layout = gemm ? 2 * ta + tb : tn::kNoLayout;
        k.align = op == GPK_OP_PI ? tn::kAlignNone : aligned ? tn::kAligned : tn::kUnaligned;
        k.ndims = op == GPK_OP_GEMM ? 3 : op == GPK_OP_GEMM_BATCHED ? 4 : op == GPK_OP_TRANSPOSE ? 2 : 1;
        for (int i = 0; i < k.ndims; ++i) k.dims[i] = d[i];
        return k;
    }
    // The row's class columns, and its shape.
    std::string klass() const { return tn::class_text(key()); }
    std::string shape() const { return tn::shape_text(key()); }
};

size_t elem(int dtype) {
    if (dtype == GPK_F8E4M3 || dtype == GPK_F8E5M2) return 1;
    return dtype == GPK_F16 || dtype == GPK_BF16 ? 2 : dtype == GPK_F64 || dtype == GPK_I64 ? 8 : 4;
}

// The dtypes of A and B, and of C, in a point's calls: for gpk_gemm_ex's classes the
// operands the grid times them with (FP8 E4M3 into BF16 C, the layers FP8 serves; BF16
// into F32 C), else the point's dtype.
bool fp8_class(int dtype) { return dtype == gpk::kGemmFp8 || dtype == gpk::kGemmFp8Blockscaled; }
int ab_dtype(int dtype) { return fp8_class(dtype) ? GPK_F8E4M3 : dtype == gpk::kGemmHalfF32 ? GPK_BF16 : dtype; }
int c_dtype(int dtype) { return fp8_class(dtype) ? GPK_BF16 : dtype == gpk::kGemmHalfF32 ? GPK_F32 : dtype; }

// A leading dimension for `rows` rows: whole 16-byte vectors, or odd.
int64_t ld_for(int64_t rows, size_t es, bool aligned) {
    if (!aligned) return rows % 2 ? rows : rows + 1;
    const int64_t v = static_cast<int64_t>(16 / es);
    return (rows + v - 1) / v * v;
}

struct GemmLayout {
    int64_t lda, ldb, ldc, a_cols, b_cols;  // column-major storage: ld x cols
};
GemmLayout gemm_layout(const Point &p) {
    const size_t es = elem(ab_dtype(p.dtype));
    const int64_t m = p.d[0], n = p.d[1], k = p.d[2];
    GemmLayout g{};
    g.lda = ld_for(p.ta ? k : m, es, p.aligned), g.a_cols = p.ta ? m : k;
    g.ldb = ld_for(p.tb ? n : k, es, p.aligned), g.b_cols = p.tb ? k : n;
    g.ldc = ld_for(m, elem(c_dtype(p.dtype)), p.aligned);
    return g;
}

// Floats of each block-scale array of a gpk_gemm_blockscaled point (0 for the others):
// m x ceil(k / 128) for A's, ceil(n / 128) x ceil(k / 128) for B's, the larger.
size_t scale_count(const Point &p) {
    if (p.op != GPK_OP_GEMM || p.dtype != gpk::kGemmFp8Blockscaled) return 0;
    const int64_t kb = (p.d[2] + 127) / 128, nb = (p.d[1] + 127) / 128;
    return static_cast<size_t>(std::max(p.d[0], nb) * kb);
}

// Bytes of A, B and C the point needs (per operand, every matrix of a batch).
void bytes_of(const Point &p, size_t *a, size_t *b, size_t *c) {
    const size_t es = elem(p.dtype);
    *a = *b = *c = 64;
    if (p.op == GPK_OP_GEMM || p.op == GPK_OP_GEMM_BATCHED) {
        const GemmLayout g = gemm_layout(p);
        const size_t batch = static_cast<size_t>(p.d[3]), ab = elem(ab_dtype(p.dtype));
        *a = static_cast<size_t>(g.lda * g.a_cols) * ab * batch;
        *b = static_cast<size_t>(g.ldb * g.b_cols) * ab * batch;
        *c = static_cast<size_t>(g.ldc * p.d[1]) * elem(c_dtype(p.dtype)) * batch;
    } else if (p.op == GPK_OP_REDUCE) {
        *a = static_cast<size_t>(p.d[0] + 1) * es;
    } else if (p.op == GPK_OP_TRANSPOSE) {
        *a = static_cast<size_t>(ld_for(p.d[0], es, p.aligned) * p.d[1]) * es;
        *b = static_cast<size_t>(ld_for(p.d[1], es, p.aligned) * p.d[0]) * es;
    }
}

// ---- the grid ---------------------------------------------------------------------

using Shapes = std::vector<std::vector<int64_t>>;

// Whether the grid measures dtype class `dtype` (empty `dtypes`: every class).
bool wanted(const std::vector<int> &dtypes, int dtype) {
    return dtypes.empty() || std::find(dtypes.begin(), dtypes.end(), dtype) != dtypes.end();
}

// The points of one gemm or gemm_batched class (dtype, math) in every layout and
// alignment at `shapes`.
void add_gemm_class(std::vector<Point> &grid, int op, int dtype, int math, const Shapes &shapes, bool quick) {
    for (int layout = 0; layout < 4; ++layout)
        for (bool aligned : {true, false})
            for (const auto &s : shapes) {
                Point p;
                p.op = op, p.dtype = dtype, p.math = math, p.ta = layout & 2, p.tb = layout & 1;
                p.aligned = aligned;
                p.d[0] = s[0], p.d[1] = s[1], p.d[2] = s[2];
                if (op == GPK_OP_GEMM_BATCHED) {
                    const int64_t biggest = std::max({s[0] * s[2], s[2] * s[1], s[0] * s[1]});
                    // Few products and many: the rungs' order depends on how full the GPU is.
                    for (size_t bytes : quick ? std::vector<size_t>{4096} : kBatchedOperands) {
                        p.d[3] = std::max<int64_t>(1, static_cast<int64_t>(bytes / elem(p.dtype)) / biggest);
                        grid.push_back(p);
                    }
                    continue;
                }
                grid.push_back(p);
            }
}

void add_gemm_like(std::vector<Point> &grid, int op, bool quick, const std::vector<int> &dtypes) {
    Shapes shapes;
    if (op == GPK_OP_GEMM) {
        shapes = quick ? Shapes{{16, 16, 16}, {64, 48, 80}, {8, 96, 200}}
                       : Shapes{{128, 128, 128},    {512, 512, 512},     {1024, 1024, 1024}, {2048, 2048, 2048},
                                {4096, 4096, 4096}, {8192, 8192, 8192},  {1536, 1536, 1536}, {3000, 3000, 3000},
                                {4608, 4608, 4608}, {5120, 5120, 5120},  {5632, 5632, 5632}, {6144, 6144, 6144},
                                {7000, 7000, 7000},
                                {2560, 2560, 640},  {8192, 8192, 1024},  {12288, 1024, 1024}, {1024, 12288, 1024},
                                {1024, 1024, 8192}, {16, 8192, 8192},    {8192, 16, 8192},   {64, 64, 1 << 20}};
    } else {
        if (quick) shapes = {{4, 4, 4}, {16, 8, 12}};
        else {
            // Every multiple of 4 up to 64, then four sizes per doubling: the rungs' order
            // turns from one size to the next (a tile, a warp or a bank pattern filled
            // or not: F32 40^3 runs staged 1.45x faster than at 32^3 or 48^3).
            for (int64_t n = 4; n <= 512; n += n < 64 ? 4 : n < 128 ? 16 : n < 256 ? 32 : 64)
                shapes.push_back({n, n, n});
            shapes.push_back({32, 32, 256});
            shapes.push_back({256, 256, 32});
        }
    }
    const int kinds[][2] = {{GPK_F32, GPK_MATH_DEFAULT}, {GPK_F32, GPK_MATH_TF32}, {GPK_F64, GPK_MATH_DEFAULT},
                            {GPK_F16, GPK_MATH_DEFAULT}, {GPK_BF16, GPK_MATH_DEFAULT}};
    for (const auto &kind : kinds)
        if (wanted(dtypes, kind[0])) add_gemm_class(grid, op, kind[0], kind[1], shapes, quick);
    if (op != GPK_OP_GEMM) return;
    // gpk_gemm_ex's classes: shapes of the work FP8 serves (square, an LLM layer's
    // projections, short and long k, a decode step's 16 rows), fewer where one rung
    // is all there is to choose (block scales: the vendor's refuses them; F32 C).
    const Shapes fp8 = quick ? shapes
                             : Shapes{{1024, 1024, 1024}, {2048, 2048, 2048},   {4096, 4096, 4096},
                                      {8192, 8192, 8192}, {3000, 3000, 3000},   {8192, 8192, 1024},
                                      {4096, 24576, 1536}, {4096, 7168, 16384}, {16, 8192, 8192}};
    const Shapes block = quick ? Shapes{shapes[0], shapes[1]}
                               : Shapes{{2048, 2048, 2048}, {4096, 4096, 4096}, {8192, 8192, 8192}, {4096, 7168, 16384}};
    const Shapes half_f32 = quick ? Shapes{shapes[0], shapes[1]}
                                  : Shapes{{1024, 1024, 1024}, {4096, 4096, 4096}, {8192, 8192, 8192}};
    if (wanted(dtypes, gpk::kGemmFp8)) add_gemm_class(grid, op, gpk::kGemmFp8, GPK_MATH_DEFAULT, fp8, quick);
    if (wanted(dtypes, gpk::kGemmFp8Blockscaled))
        add_gemm_class(grid, op, gpk::kGemmFp8Blockscaled, GPK_MATH_DEFAULT, block, quick);
    if (wanted(dtypes, gpk::kGemmHalfF32)) add_gemm_class(grid, op, gpk::kGemmHalfF32, GPK_MATH_DEFAULT, half_f32, quick);
}

std::vector<Point> make_grid(const std::vector<int> &ops, bool quick, const std::vector<int> &classes) {
    std::vector<Point> grid;
    const int dtypes[] = {GPK_F32, GPK_F64, GPK_I32, GPK_I64, GPK_F16, GPK_BF16};
    for (int op : ops) {
        if (op == GPK_OP_GEMM || op == GPK_OP_GEMM_BATCHED) {
            add_gemm_like(grid, op, quick, classes);
        } else if (op == GPK_OP_REDUCE) {
            std::vector<int64_t> sizes = quick ? std::vector<int64_t>{1000, 100000}
                                               : std::vector<int64_t>{1 << 10, 1 << 12, 1 << 14, 1 << 16, 1 << 18,
                                                                      1 << 20, 1 << 22, 1 << 24, 1 << 26, 1 << 27,
                                                                      1 << 28, 3000017};
            for (int dtype : dtypes)
                for (bool aligned : {true, false})
                    for (int64_t n : sizes) {
                        if (!wanted(classes, dtype)) continue;
                        Point p;
                        p.op = op, p.dtype = dtype, p.aligned = aligned, p.d[0] = n;
                        if (static_cast<size_t>(n + 1) * elem(dtype) <= kBufferBytes) grid.push_back(p);
                    }
        } else if (op == GPK_OP_TRANSPOSE) {
            const std::vector<std::pair<int64_t, int64_t>> sizes =
                quick ? std::vector<std::pair<int64_t, int64_t>>{{30, 40}, {200, 100}}
                      : std::vector<std::pair<int64_t, int64_t>>{{256, 256},    {1024, 1024}, {4096, 4096},
                                                                 {8192, 8192},  {16384, 4096}, {4096, 16384},
                                                                 {3000, 5000},  {64, 65536},   {65536, 64}};
            for (int dtype : dtypes)
                for (bool aligned : {true, false})
                    for (const auto &[rows, cols] : sizes) {
                        if (!wanted(classes, dtype)) continue;
                        Point p;
                        p.op = op, p.dtype = dtype, p.aligned = aligned, p.d[0] = rows, p.d[1] = cols;
                        grid.push_back(p);
                    }
        } else if (op == GPK_OP_PI && classes.empty()) {  // no dtype: not among those --dtype names
            for (int e : quick ? std::vector<int>{10, 14} : std::vector<int>{16, 20, 24, 28, 32, 34}) {
                Point p;
                p.op = op, p.d[0] = int64_t(1) << e;
                grid.push_back(p);
            }
        }
    }
    // Within a class, smaller points first: a rung dropped as hopeless at one is
    // dropped for the larger ones.
    std::stable_sort(grid.begin(), grid.end(), [](const Point &a, const Point &b) {
        const std::string ka = a.klass(), kb = b.klass();
        return ka != kb ? ka < kb : a.size() < b.size();
    });
    return grid;
}

// Whether q is at least as large as p in every dimension.
bool covers(const Point &q, const Point &p) {
    for (int i = 0; i < 4; ++i)
        if (q.d[i] < p.d[i]) return false;
    return true;
}

// ---- arrays and calls -------------------------------------------------------------

// A, B and C: device memory on the CUDA backend (host memory on the host backend),
// filled for one dtype at a time with non-zero values of moderate size.
class Arrays {
public:
    Arrays(const Env &env, size_t bytes) : env_(env), bytes_(bytes) {
        for (void *&p : ptr_) {
            if (env.cuda) check_cuda(cudaMalloc(&p, bytes), "cudaMalloc (tuning arrays)");
            else if ((p = std::malloc(bytes)) == nullptr) throw Error("out of host memory for the tuning arrays");
        }
    }
    ~Arrays() {
        for (void *p : ptr_) env_.cuda ? (void)cudaFree(p) : std::free(p);
        if (scale_ptr_ != nullptr) env_.cuda ? (void)cudaFree(scale_ptr_) : std::free(scale_ptr_);
    }
    Arrays(const Arrays &) = delete;
    Arrays &operator=(const Arrays &) = delete;

    char *a() const { return static_cast<char *>(ptr_[0]); }
    char *b() const { return static_cast<char *>(ptr_[1]); }
    char *c() const { return static_cast<char *>(ptr_[2]); }
    const float *scales() const { return scales_; }

    // Block scales for gpk_gemm_blockscaled's points, `count` floats, all ones (the
    // rungs' time does not depend on their values); A's and B's share them.
    void make_scales(size_t count) {
        if (count == 0) return;
        const std::vector<float> ones(count, 1.0f);
        const size_t bytes = count * sizeof(float);
        if (env_.cuda) {
            check_cuda(cudaMalloc(&scale_ptr_, bytes), "cudaMalloc (tuning scales)");
            check_cuda(cudaMemcpy(scale_ptr_, ones.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy (tuning scales)");
        } else {
            if ((scale_ptr_ = std::malloc(bytes)) == nullptr) throw Error("out of host memory for the tuning scales");
            std::memcpy(scale_ptr_, ones.data(), bytes);
        }
        scales_ = static_cast<const float *>(scale_ptr_);
    }

    void fill(int dtype) {
        if (dtype == filled_) return;
        // A pattern of 16 MiB, repeated: values in +-[0.5, 2) for the floating-point
        // dtypes (built bit by bit for the 16-bit ones), +-[0.25, 2) for FP8 (no
        // product subnormal), 1 .. 1000 for the integers.
        const size_t pattern = std::min(bytes_, 16 * kMiB);
        std::vector<unsigned char> host(pattern);
        std::mt19937_64 draw(20261201u + static_cast<unsigned>(dtype));
        const size_t es = elem(dtype);
        for (size_t i = 0; i + es <= pattern; i += es) {
            const uint64_t r = draw();
            const bool neg = r & 1;
            switch (dtype) {
                case GPK_F32: { const float v = (neg ? -1.f : 1.f) * (0.5f + 1.5f * float(r >> 40) / float(1 << 24)); std::memcpy(&host[i], &v, 4); break; }
                case GPK_F64: { const double v = (neg ? -1.0 : 1.0) * (0.5 + 1.5 * double(r >> 11) / 9007199254740992.0); std::memcpy(&host[i], &v, 8); break; }
                case GPK_I32: { const int32_t v = int32_t(1 + (r >> 8) % 1000); std::memcpy(&host[i], &v, 4); break; }
                case GPK_I64: { const int64_t v = int64_t(1 + (r >> 8) % 1000); std::memcpy(&host[i], &v, 8); break; }
                case GPK_F8E4M3:  // sign, exponent 5 .. 7 (0.25 .. 2), 3 random mantissa bits
                    host[i] = static_cast<unsigned char>((neg ? 0x80 : 0) | ((5 + (r >> 1) % 3) << 3) | (r >> 8 & 7));
                    break;
                case GPK_F16: {  // sign, exponent 14 or 15 (0.5 .. 2), 10 random mantissa bits
                    const uint16_t v = uint16_t((neg ? 0x8000 : 0) | ((14 + (r >> 1 & 1)) << 10) | (r >> 2 & 0x3ff));
                    std::memcpy(&host[i], &v, 2);
                    break;
                }
                default: {  // BF16: sign, exponent 126 or 127, 7 random mantissa bits
                    const uint16_t v = uint16_t((neg ? 0x8000 : 0) | ((126 + (r >> 1 & 1)) << 7) | (r >> 2 & 0x7f));
                    std::memcpy(&host[i], &v, 2);
                }
            }
        }
        for (void *p : ptr_) {
            char *dst = static_cast<char *>(p);
            if (!env_.cuda) {
                for (size_t off = 0; off < bytes_; off += pattern) std::memcpy(dst + off, host.data(), std::min(pattern, bytes_ - off));
                continue;
            }
            check_cuda(cudaMemcpy(dst, host.data(), pattern, cudaMemcpyHostToDevice), "cudaMemcpy (tuning data)");
            for (size_t have = pattern; have < bytes_; have *= 2)
                check_cuda(cudaMemcpy(dst + have, dst, std::min(have, bytes_ - have), cudaMemcpyDeviceToDevice),
                           "cudaMemcpy (tuning data)");
        }
        filled_ = dtype;
    }

private:
    const Env &env_;
    size_t bytes_;
    void *ptr_[3] = {nullptr, nullptr, nullptr};
    void *scale_ptr_ = nullptr;
    const float *scales_ = nullptr;
    int filled_ = -100;
};

gpk_status call(gpk_context *ctx, const Arrays &m, const Point &p) {
    const int64_t *d = p.d;
    const size_t es = elem(p.dtype);
    const int ta = p.ta ? GPK_TRANS : GPK_NO_TRANS, tb = p.tb ? GPK_TRANS : GPK_NO_TRANS;
    switch (p.op) {
        case GPK_OP_GEMM: {
            const GemmLayout g = gemm_layout(p);
            const int ab = ab_dtype(p.dtype), c = c_dtype(p.dtype);
            // gpk_gemm_ex's classes as their users call them: the per-tensor scale is alpha.
            if (p.dtype == gpk::kGemmFp8Blockscaled)
                return gpk_gemm_blockscaled(ctx, GPK_COL_MAJOR, ta, tb, d[0], d[1], d[2], 1.0, ab, m.a(), g.lda,
                                            m.scales(), ab, m.b(), g.ldb, m.scales(), 0.0, c, m.c(), g.ldc);
            if (gpk::is_gemm_ex_class(p.dtype))
                return gpk_gemm_ex(ctx, GPK_COL_MAJOR, ta, tb, d[0], d[1], d[2], 1.0, ab, m.a(), g.lda, ab, m.b(), g.ldb,
                                   0.0, c, m.c(), g.ldc);
            return gpk_gemm(ctx, p.dtype, GPK_COL_MAJOR, ta, tb, d[0], d[1], d[2], 1.0, m.a(), g.lda, m.b(), g.ldb, 0.0,
                            m.c(), g.ldc);
        }
        case GPK_OP_GEMM_BATCHED: {
            const GemmLayout g = gemm_layout(p);
            return gpk_gemm_strided_batched(ctx, p.dtype, GPK_COL_MAJOR, ta, tb, d[0], d[1], d[2], 1.0, m.a(), g.lda,
                                            g.lda * g.a_cols, m.b(), g.ldb, g.ldb * g.b_cols, 0.0, m.c(), g.ldc,
                                            g.ldc * d[1], d[3]);
        }
        case GPK_OP_REDUCE:
            return gpk_reduce(ctx, p.dtype, GPK_SUM, m.a() + (p.aligned ? 0 : es), d[0], m.c());
        case GPK_OP_TRANSPOSE:
            return gpk_transpose(ctx, p.dtype, GPK_COL_MAJOR, d[0], d[1], m.a(), ld_for(d[0], es, p.aligned), m.b(),
                                 ld_for(d[1], es, p.aligned));
        default:
            return gpk_pi(ctx, static_cast<uint64_t>(d[0]), 2026, reinterpret_cast<gpk_pi_result *>(m.c()));
    }
}

// ---- timing -----------------------------------------------------------------------

// One call at p, timed as gpk-bench times a case's (timer.hpp); microseconds.
gpk_status time_us(Timer &timer, Env &env, const Arrays &m, const Point &p, double *us) {
    double ms = 0;
    const gpk_status st = timer.time([&] { return call(env.ctx, m, p); }, &ms);
    *us = 1e3 * ms;
    return st;
}

struct Timed {
    int rung;
    double us;
};

// The rungs of `names` (ladder indices) at point p but those in `skip`, fastest first
// (rung `preferred` first within kPreferredWithin, where it is not -1); those hopeless
// past launch overheads go to *hopeless.
std::vector<Timed> measure(Env &env, Timer &timer, const Arrays &m, const Point &p,
                           const std::vector<std::string> &names, const std::set<int> &skip, int preferred,
                           std::set<int> *hopeless, std::mt19937 &draw, std::vector<std::string> *problems) {
    gpk_context *ctx = env.ctx;
    std::vector<Timed> probes;
    for (int r = 0; r < static_cast<int>(names.size()); ++r) {
        if (skip.count(r)) continue;
        gpk_status st = gpk_set_variant(ctx, p.op, names[r].c_str());
        if (st == GPK_SUCCESS) st = call(ctx, m, p);  // warm-up: modules, handles, workspace
        if (st == GPK_SUCCESS) st = gpk_synchronize(ctx);
        double us = 0;
        if (st == GPK_SUCCESS) st = time_us(timer, env, m, p, &us);
        if (st == GPK_ERROR_NOT_SUPPORTED) continue;
        if (st != GPK_SUCCESS) {
            problems->push_back(p.klass() + " " + p.shape() + " " + names[r] + ": " + gpk_status_string(st) + ": " +
                                gpk_last_error(ctx));
            continue;
        }
        probes.push_back({r, us});
    }
    if (probes.empty()) return {};
    const double best_probe = std::min_element(probes.begin(), probes.end(), [](const Timed &a, const Timed &b) {
                                  return a.us < b.us;
                              })->us;
    // One probe decides only for slow calls, which the turns would spend most on: a
    // short call's single time can be an outlier, and timing it costs little.
    std::vector<Timed> alive;
    for (const Timed &t : probes) {
        if (t.us <= kHopeless * best_probe || t.us < kPastOverheadUs) alive.push_back(t);
        else if (best_probe >= kPastOverheadUs || t.us >= kLongCallUs) hopeless->insert(t.rung);
    }
    // Turns: at least 5 calls each; short calls up to 1 ms of them, at most 50.
    const int turns = std::clamp(static_cast<int>(std::ceil(1000.0 / std::max(best_probe, 1.0))), 5, 50);
    std::vector<std::vector<double>> us(alive.size());
    std::vector<size_t> order(alive.size());
    std::iota(order.begin(), order.end(), size_t{0});
    for (int turn = 0; turn < turns; ++turn) {
        std::shuffle(order.begin(), order.end(), draw);
        for (size_t i : order) {
            gpk_status st = gpk_set_variant(ctx, p.op, names[alive[i].rung].c_str());
            // An untimed call first where calls are short (harness.cpp says why).
            if (st == GPK_SUCCESS && alive[i].us < 1000) st = call(ctx, m, p);
            double t = 0;
            if (st == GPK_SUCCESS) st = time_us(timer, env, m, p, &t);
            if (st == GPK_SUCCESS) us[i].push_back(t);
        }
    }
    std::vector<Timed> rows;
    for (size_t i = 0; i < alive.size(); ++i)
        if (!us[i].empty()) rows.push_back({alive[i].rung, median(us[i])});
    std::stable_sort(rows.begin(), rows.end(), [](const Timed &a, const Timed &b) { return a.us < b.us; });
    if (!rows.empty())
        for (const Timed &t : rows)
            if (t.us > kHopeless * rows.front().us && (rows.front().us >= kPastOverheadUs || t.us >= kLongCallUs))
                hopeless->insert(t.rung);
    const auto pref = std::find_if(rows.begin(), rows.end(), [&](const Timed &t) { return t.rung == preferred; });
    if (pref != rows.end() && pref->us <= kPreferredWithin * rows.front().us) std::rotate(rows.begin(), pref, pref + 1);
    return rows;
}

// The rung "auto" runs at p without a table (the ladder's default that takes the call),
// or -1: the context loads `bare`, a table of its kind with no row, then the built-in one.
int default_rung(Env &env, const Arrays &m, const Point &p, const std::vector<std::string> &names,
                 const std::string &bare) {
    gpk_context *ctx = env.ctx;
    int found = -1;
    if (gpk_load_tuning(ctx, bare.c_str()) == GPK_SUCCESS && gpk_set_variant(ctx, p.op, nullptr) == GPK_SUCCESS &&
        call(ctx, m, p) == GPK_SUCCESS && gpk_synchronize(ctx) == GPK_SUCCESS) {
        const char *ran = gpk_last_variant(ctx, p.op);
        for (size_t i = 0; ran != nullptr && i < names.size(); ++i)
            if (names[i] == ran) found = static_cast<int>(i);
    }
    gpk_load_tuning(ctx, nullptr);
    return found;
}

std::string seconds_text(double s) {
    char buf[32];
    if (s < 60) std::snprintf(buf, sizeof buf, "%.0f s", s);
    else std::snprintf(buf, sizeof buf, "%dm%02ds", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
    return buf;
}

}  // namespace

bool tune_classes(const TuneOptions &opt, std::vector<int> *classes, std::string *error) {
    classes->clear();
    const auto add = [&](int d) {
        if (std::find(classes->begin(), classes->end(), d) == classes->end()) classes->push_back(d);
    };
    for (const std::string &w : opt.dtypes) {
        if (w == "fp8" || w == "fp8-e4m3") {
            // Both FP8 classes, unless --scaling names one.
            if (opt.scale_tensor || !opt.scale_block) add(gpk::kGemmFp8);
            if (opt.scale_block || !opt.scale_tensor) add(gpk::kGemmFp8Blockscaled);
            continue;
        }
        if (w == "fp8-e5m2" || w == "fp8-mixed") {
            *error = "--tune: the table's FP8 classes are measured E4M3 x E4M3 (--dtype fp8), which stand for '" + w +
                     "' too";
            return false;
        }
        int d = -1;
        for (int c : {int{GPK_F32}, int{GPK_F64}, int{GPK_I32}, int{GPK_I64}, int{GPK_F16}, int{GPK_BF16},
                      int{gpk::kGemmFp8Blockscaled}, int{gpk::kGemmHalfF32}})
            if (w == tn::dtype_word(c)) d = c;
        if (d < 0) {
            *error = "--tune: unknown dtype '" + w +
                     "'; the choices are f32, f64, i32, i64, f16, bf16, fp8 (fp8 and fp8_block), fp8_block and "
                     "half_f32";
            return false;
        }
        add(d);
    }
    return true;
}

int run_tune(Env &env, const TuneOptions &opt) {
    const auto t0 = Clock::now();
    std::vector<int> ops = opt.ops;
    if (ops.empty()) ops = {GPK_OP_GEMM, GPK_OP_GEMM_BATCHED, GPK_OP_REDUCE, GPK_OP_TRANSPOSE, GPK_OP_PI};
    const bool quick = opt.quick || !env.cuda;
    std::vector<int> classes;
    std::string problem;
    if (!tune_classes(opt, &classes, &problem)) {
        std::fprintf(stderr, "gpk-bench: %s\n", problem.c_str());
        return 2;
    }
    const std::vector<Point> grid = make_grid(ops, quick, classes);
    if (grid.empty()) {
        std::fprintf(stderr, "gpk-bench: --tune: no point of the grid is of the ops and dtypes asked for\n");
        return 2;
    }

    size_t need = 0, scales = 0;
    for (const Point &p : grid) {
        size_t a = 0, b = 0, c = 0;
        bytes_of(p, &a, &b, &c);
        need = std::max({need, a, b, c});
        scales = std::max(scales, scale_count(p));
    }
    Arrays arrays(env, std::min(need, kBufferBytes));
    arrays.make_scales(scales);
    Timer timer(env);
    std::mt19937 draw(20261201u);

    const RunInfo info = describe_run(env, quick, RunOptions{});
    std::printf("gpk-bench --tune: %zu points on %s, ops:", grid.size(), info.device.c_str());
    for (int op : ops) std::printf(" %s", tn::op_word(op));
    if (!classes.empty()) {
        std::printf(", dtypes:");
        for (int d : classes) std::printf(" %s", tn::dtype_word(d));
    }
    std::printf("\n");
    std::fflush(stdout);

    // The header first, then each row as it is measured: a run cut short leaves the
    // rows it measured in a table that loads.
    std::ofstream out(opt.path, std::ios::binary | std::ios::trunc);
    out << "gpk-tuning\t1\n";
    out << "device\t" << (env.cuda ? info.device : "host") << "\n";
    out << "compute_capability\t" << (env.cuda ? info.compute_capability : "-") << "\n";
    out << "sm_count\t" << (env.cuda ? std::to_string(info.sm_count) : "-") << "\n";
    if (env.cuda) out << "driver\t" << info.cuda_driver << "\nruntime\t" << info.cuda_runtime << "\n";
    out << "libgpk\t" << gpk_app::library_version() << "\n";
    out << "date\t" << info.date << "\n";
    out << "timing\t" << (env.cuda ? "cuda events after a 256 MiB L2 flush" : "steady clock")
        << "; rungs in turns, a random order each; median of 5 to 50 calls; over 4x the best dropped; "
           "gemm: the vendor first within 3% of the fastest; transpose: the ladder's default\n";
    // A table of this device's kind with no row, for default_rung.
    std::string bare = (std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") + std::string("/gpk-tune-XXXXXX");
    if (env.cuda) {
        const int fd = mkstemp(bare.data());
        const std::string head = "gpk-tuning\t1\ndevice\t" + info.device + "\ncompute_capability\t" +
                                 info.compute_capability + "\nsm_count\t" + std::to_string(info.sm_count) + "\n";
        if (fd < 0 || write(fd, head.data(), head.size()) != static_cast<ssize_t>(head.size())) bare.clear();
        if (fd >= 0) close(fd);
    }
    out << "grid\tgpk-bench --tune" << (quick ? " (quick)" : "") << ", apps/bench/tune.cpp\n";
    out << "# op\tdtype\tmath\tlayout\talign\tshape\trungs, fastest first, with their median microseconds\n";
    if (!out) {
        std::fprintf(stderr, "gpk-bench: cannot write %s\n", opt.path.c_str());
        return 1;
    }
    std::vector<std::string> lines, problems;
    // By class: the points where rungs were hopeless past launch overheads, and those rungs.
    std::map<std::string, std::vector<std::pair<Point, std::set<int>>>> hopeless_at;
    std::map<int, double> op_seconds;
    std::map<int, std::vector<std::string>> names;
    std::map<std::string, int> default_of;  // by class: default_rung's answer
    const bool tty = isatty(STDOUT_FILENO);
    size_t done = 0, next_report = 0;
    for (const Point &p : grid) {
        const auto p0 = Clock::now();
        if (!names.count(p.op)) {
            int count = 0;
            gpk_variant_count(env.ctx, p.op, &count);
            for (int i = 0; i < count; ++i) names[p.op].emplace_back(gpk_variant_name(env.ctx, p.op, i));
        }
        arrays.fill(p.dtype < 0 ? GPK_F32 : ab_dtype(p.dtype));
        gpk_set_math_mode(env.ctx, p.math);
        std::set<int> skip, hopeless;
        for (const auto &[at, rungs] : hopeless_at[p.klass()])
            if (covers(p, at)) skip.insert(rungs.begin(), rungs.end());
        // Index 0 is the vendor's rung on the CUDA backend. The default depends on the
        // class (dtype, alignment), not the shape: asked once per class.
        int preferred = p.op == GPK_OP_GEMM || p.op == GPK_OP_GEMM_BATCHED ? 0 : -1;
        if (p.op == GPK_OP_TRANSPOSE && env.cuda && !bare.empty()) {
            const auto known = default_of.find(p.klass());
            preferred = known != default_of.end() ? known->second
                                                  : default_of[p.klass()] = default_rung(env, arrays, p, names[p.op], bare);
        }
        const std::vector<Timed> rows =
            measure(env, timer, arrays, p, names[p.op], skip, preferred, &hopeless, draw, &problems);
        if (!hopeless.empty()) hopeless_at[p.klass()].emplace_back(p, hopeless);
        std::string line = p.klass() + "\t" + p.shape() + "\t";
        for (size_t i = 0; i < rows.size(); ++i) {
            char t[32];
            std::snprintf(t, sizeof t, ":%.4g", rows[i].us);
            line += (i ? "," : "") + names[p.op][static_cast<size_t>(rows[i].rung)] + t;
        }
        if (!rows.empty()) {
            lines.push_back(line);
            out << line << "\n" << std::flush;
        }
        op_seconds[p.op] += seconds_since(p0);
        ++done;
        const double elapsed = seconds_since(t0);
        const std::string best = rows.empty() ? std::string("no rung took it") : names[p.op][size_t(rows[0].rung)];
        if (tty || done >= next_report || done == grid.size()) {
            std::string shown = p.klass() + " " + p.shape();
            std::replace(shown.begin(), shown.end(), '\t', ' ');
            std::printf("%s[%zu/%zu %s] %s: %s%s", tty ? "\r\033[K" : "", done, grid.size(),
                        seconds_text(elapsed).c_str(), shown.c_str(), best.c_str(), tty ? "" : "\n");
            std::fflush(stdout);
            next_report = done + std::max<size_t>(1, grid.size() / 40);
        }
    }
    gpk_set_math_mode(env.ctx, GPK_MATH_DEFAULT);
    for (int op = 0; op < 5; ++op) gpk_set_variant(env.ctx, op, nullptr);
    if (tty) std::printf("\n");

    out.close();
    if (env.cuda && !bare.empty()) std::remove(bare.c_str());
    const double total = seconds_since(t0);
    std::printf("gpk-bench --tune: %zu rows in %s (", lines.size(), seconds_text(total).c_str());
    bool first = true;
    for (const auto &[op, s] : op_seconds) {
        std::printf("%s%s %s", first ? "" : ", ", tn::op_word(op), seconds_text(s).c_str());
        first = false;
    }
    std::printf(")\n");
    for (const std::string &problem : problems) std::printf("  failed: %s\n", problem.c_str());
    if (!out) {
        std::fprintf(stderr, "gpk-bench: cannot write %s\n", opt.path.c_str());
        return 1;
    }
    std::printf("wrote %s\n", opt.path.c_str());
    return problems.empty() ? 0 : 1;
}

}  // namespace gpk_bench
