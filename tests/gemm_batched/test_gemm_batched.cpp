// gpk_gemm_strided_batched conformance: every variant of the backend (and "auto")
// against a reference evaluated here in long double straight from the raw arguments
// (row- or column-major, strides as passed), over both layouts, all transposes,
// square and non-square sizes from 1 to 600, padded leading dimensions and padded
// strides, stride 0 for A or B, beta == 0 with NaN in C, alpha == 0 and k == 0,
// batch counts 0, 1 and more; F32, F64, F16, BF16 and F32 in GPK_MATH_TF32. Every
// element outside the C matrices (ld padding, stride padding, a guard past the end)
// must keep its bits, A and B must not be written, and a call that fails writes
// nothing.
//
// The bound on each element is test_gemm's: 4 u (k + 2) (|alpha| sum |a b| + |beta c|)
// with u the accumulation's unit roundoff, one rounding of the result on top for the
// 16-bit dtypes, and 2^-9 |alpha| sum |a b| more in TF32 mode.
//
// A rung may answer GPK_ERROR_NOT_SUPPORTED, naming itself, for a call outside its
// dtypes or one its takes function refuses (rungs.def's `checked`); what it must take
// (rule `must_take`) comes from the ladder's rungs.def, the list the library is built
// from, and, for the checked rungs whose files promise a least size, from kPromises.
#include "../harness.hpp"

#include "../../libgpk/cuda/ladders.hpp"

#include <algorithm>

namespace {

using namespace gpkt;

// ---- the CUDA ladder, from its rungs.def -------------------------------------------

struct Rung {
    const char *name;
    unsigned dtypes;  // bits 1 << GPK_*
    bool checked;     // may refuse calls of its dtypes (its takes function says which)
};
#define GPK_TAKES_any false
#define GPK_TAKES_checked true
#define GPK_RUNG(nn, name, launcher, dtypes, takes) {#name, GPK_DTYPES_##dtypes, GPK_TAKES_##takes},
#define GPK_VENDOR(name)
#define GPK_REFERENCE(name)
#define GPK_AUTO(name)
#define GPK_AUTO_NEVER(name)
constexpr Rung kCudaRungs[] = {
#include "../../libgpk/cuda/gemm_batched/rungs.def"
};
#undef GPK_RUNG
#undef GPK_VENDOR
#define GPK_RUNG(nn, name, launcher, dtypes, takes)
#define GPK_VENDOR(name) #name
// The vendor's rung, the one validation checks by a rung of ours.
constexpr const char *kCudaVendor =
#include "../../libgpk/cuda/gemm_batched/rungs.def"
    ;
#undef GPK_RUNG
#undef GPK_VENDOR
#undef GPK_REFERENCE
#undef GPK_AUTO
#undef GPK_AUTO_NEVER
#undef GPK_TAKES_checked
#undef GPK_TAKES_any

// What checked rungs promise by their files' opening comments: every call of their
// dtypes whose m, n and k are at most `size` (they refuse larger ones by what their
// shared memory or registers hold). A checked rung not named here may refuse any call
// of its dtypes (dmma: F64 where the GPU has FP64 tensor cores and the shared memory).
struct Promise {
    const char *rung;
    int64_t size;
};
constexpr Promise kPromises[] = {{"thread_product", 8}, {"staged", 32}};

const Rung *cuda_rung(const std::string &name) {
    for (const Rung &r : kCudaRungs)
        if (name == r.name) return &r;
    return nullptr;
}

// Each promise names a checked rung of the list, so that the table cannot outlive a
// rung or promise for one that takes every call of its dtypes anyway.
void check_promises(Suite &suite) {
    for (const Promise &p : kPromises) {
        const Rung *r = cuda_rung(p.rung);
        if (r != nullptr && r->checked) continue;
        Case c(suite, format("gemm_batched promise of rung '%s'", p.rung));
        c.fail(r == nullptr ? "rungs.def lists no rung of that name" : "rungs.def marks the rung 'any'");
    }
}

struct Config {
    int dtype;
    bool tf32;
    int layout, transa, transb;
    int64_t m, n, k;
    int64_t ld_pad, stride_pad;
    int shared;  // 0: none, 1: stride_a = 0, 2: stride_b = 0
    int64_t batch;
    double alpha, beta;
};

template <class T>
struct Elem {
    int dtype;
    T from(long double v) const { return static_cast<T>(v); }
    long double value(T v) const { return v; }
    T nan() const { return std::numeric_limits<T>::quiet_NaN(); }
    long double scalar(double v) const { return static_cast<T>(v); }
    long double acc_eps() const { return std::numeric_limits<T>::epsilon() / 2; }
    long double out_eps() const { return 0; }
    long double tiny() const { return std::numeric_limits<T>::min(); }
};
template <>
struct Elem<uint16_t> {
    int dtype;
    uint16_t from(long double v) const { return encode16(dtype, v); }
    long double value(uint16_t v) const { return decode16(dtype, v); }
    uint16_t nan() const { return encode16(dtype, std::numeric_limits<long double>::quiet_NaN()); }
    long double scalar(double v) const { return static_cast<float>(v); }
    long double acc_eps() const { return 0x1p-24L; }
    long double out_eps() const { return unit_roundoff16(dtype); }
    long double tiny() const { return underflow16(dtype) + std::numeric_limits<float>::min(); }
};

// Offset of element (r, c) of a matrix stored in the layout.
int64_t off(bool rm, int64_t ld, int64_t r, int64_t c) { return rm ? r * ld + c : r + c * ld; }
int64_t footprint(bool rm, int64_t rows, int64_t cols, int64_t ld) {
    if (rows == 0 || cols == 0) return 0;
    return rm ? (rows - 1) * ld + cols : (cols - 1) * ld + rows;
}

struct Layout {
    bool rm;
    int64_t ar, ac, br, bc;  // stored rows and columns of A and B
    int64_t lda, ldb, ldc, sa, sb, sc;
    int64_t fa, fb, fc;      // one matrix's span
    size_t na, nb, nc;       // array lengths, a guard element past the end of each
};

Layout layout_of(const Config &g) {
    Layout l{};
    l.rm = g.layout == GPK_ROW_MAJOR;
    const bool ta = g.transa == GPK_TRANS, tb = g.transb == GPK_TRANS;
    l.ar = ta ? g.k : g.m, l.ac = ta ? g.m : g.k, l.br = tb ? g.n : g.k, l.bc = tb ? g.k : g.n;
    auto minld = [&](int64_t r, int64_t c) { return std::max<int64_t>(1, l.rm ? c : r); };
    // Unequal paddings catch a rung that mixes up lda, ldb and ldc.
    l.lda = minld(l.ar, l.ac) + g.ld_pad, l.ldb = minld(l.br, l.bc) + 2 * g.ld_pad, l.ldc = minld(g.m, g.n) + g.ld_pad / 2;
    l.fa = footprint(l.rm, l.ar, l.ac, l.lda), l.fb = footprint(l.rm, l.br, l.bc, l.ldb);
    l.fc = footprint(l.rm, g.m, g.n, l.ldc);
    l.sa = g.shared == 1 ? 0 : l.fa + g.stride_pad;
    l.sb = g.shared == 2 ? 0 : l.fb + 3 * g.stride_pad;
    l.sc = l.fc + g.stride_pad;
    const int64_t nb = std::max<int64_t>(g.batch, 1);
    l.na = static_cast<size_t>((nb - 1) * l.sa + l.fa + 1);
    l.nb = static_cast<size_t>((nb - 1) * l.sb + l.fb + 1);
    l.nc = static_cast<size_t>((nb - 1) * l.sc + l.fc + 1);
    return l;
}

std::string describe(const Config &g, const Layout &l) {
    return format("gemm_batched %s%s %s trans=%c%c m=%" PRId64 " n=%" PRId64 " k=%" PRId64 " ld=%" PRId64 "/%" PRId64
                  "/%" PRId64 " stride=%" PRId64 "/%" PRId64 "/%" PRId64 " batch=%" PRId64 " alpha=%g beta=%g",
                  dtype_name(g.dtype), g.tf32 ? " (TF32)" : "", layout_name(g.layout), g.transa == GPK_TRANS ? 'T' : 'N',
                  g.transb == GPK_TRANS ? 'T' : 'N', g.m, g.n, g.k, l.lda, l.ldb, l.ldc, l.sa, l.sb, l.sc, g.batch,
                  g.alpha, g.beta);
}

// Whether `variant` takes this call (and so may not refuse it): "auto" and the host
// reference every call; a CUDA rung every call of its dtypes when rungs.def marks it
// 'any', those within its promise when 'checked'. A variant the list does not know
// must take every call.
bool must_take(const std::string &variant, const Config &g, bool cuda) {
    if (!cuda || variant == "auto") return true;
    const Rung *r = cuda_rung(variant);
    if (r == nullptr) return true;
    if (!(r->dtypes & (1u << g.dtype))) return false;
    if (!r->checked) return true;
    const int64_t size = std::max(g.m, std::max(g.n, g.k));
    for (const Promise &p : kPromises)
        if (variant == p.rung) return size <= p.size;
    return false;
}

template <class T>
void run_config(Suite &suite, const Config &g, const std::vector<std::string> &variants, uint64_t rotation) {
    const Layout l = layout_of(g);
    const Elem<T> e{g.dtype};
    Rng rng(seed_of({g.dtype, g.tf32, g.layout, g.transa, g.transb, g.m, g.n, g.k, g.ld_pad, g.stride_pad, g.shared,
                     g.batch, static_cast<int64_t>(g.alpha * 1000), static_cast<int64_t>(g.beta * 1000)}));
    // Everything outside the matrices' elements is NaN in A and B (a rung that reads
    // it poisons its result) and a poison pattern in C (compared bit for bit).
    std::vector<T> A(l.na, e.nan()), B(l.nb, e.nan()), C0(l.nc, poison<T>());
    std::vector<char> inside(l.nc, 0);
    for (int64_t b = 0; b < std::max<int64_t>(g.batch, 1); ++b) {
        for (int64_t r = 0; r < l.ar; ++r)
            for (int64_t c = 0; c < l.ac; ++c) A[b * l.sa + off(l.rm, l.lda, r, c)] = e.from(rng.signed_unit());
        for (int64_t r = 0; r < l.br; ++r)
            for (int64_t c = 0; c < l.bc; ++c) B[b * l.sb + off(l.rm, l.ldb, r, c)] = e.from(rng.signed_unit());
    }
    for (int64_t b = 0; b < g.batch; ++b)
        for (int64_t i = 0; i < g.m; ++i)
            for (int64_t j = 0; j < g.n; ++j) {
                const int64_t at = b * l.sc + off(l.rm, l.ldc, i, j);
                C0[at] = g.beta == 0.0 ? e.nan() : e.from(rng.signed_unit());
                inside[at] = 1;
            }

    // The reference and a bound per element of every C matrix.
    const long double alpha = e.scalar(g.alpha), beta = e.scalar(g.beta);
    const bool ta = g.transa == GPK_TRANS, tb = g.transb == GPK_TRANS;
    const long double eps = e.acc_eps(), out_eps = e.out_eps(), tf32_eps = g.tf32 ? 0x1p-9L : 0.0L;
    std::vector<long double> ref(l.nc, 0), bound(l.nc, 0);
    for (int64_t b = 0; b < g.batch; ++b)
        for (int64_t i = 0; i < g.m; ++i)
            for (int64_t j = 0; j < g.n; ++j) {
                long double s = 0, abs_sum = 0;
                if (alpha != 0)
                    for (int64_t p = 0; p < g.k; ++p) {
                        const long double a = e.value(A[b * l.sa + (ta ? off(l.rm, l.lda, p, i) : off(l.rm, l.lda, i, p))]);
                        const long double x = e.value(B[b * l.sb + (tb ? off(l.rm, l.ldb, j, p) : off(l.rm, l.ldb, p, j))]);
                        s += a * x, abs_sum += std::fabs(a * x);
                    }
                const int64_t at = b * l.sc + off(l.rm, l.ldc, i, j);
                const long double c = beta != 0 ? e.value(C0[at]) : 0.0L;
                const long double r = alpha * s + beta * c;
                const long double acc = 4 * eps * (g.k + 2) * (std::fabs(alpha) * abs_sum + std::fabs(beta * c)) +
                                        tf32_eps * std::fabs(alpha) * abs_sum;
                ref[at] = r;
                bound[at] = acc * (1 + out_eps) + out_eps * std::fabs(r) + e.tiny();
            }

    const std::string base = describe(g, l);
    if (g.tf32) {
        Case c(suite, base + " set TF32");
        if (!c.expect(gpk_set_math_mode(suite.ctx(), GPK_MATH_TF32), GPK_SUCCESS, "gpk_set_math_mode(TF32)")) return;
    }
    struct Restore {
        gpk_context *ctx;
        bool on;
        ~Restore() {
            if (on) gpk_set_math_mode(ctx, GPK_MATH_DEFAULT);
        }
    } restore{suite.ctx(), g.tf32};

    const bool empty = g.batch == 0 || g.m == 0 || g.n == 0;
    for (const std::string &variant : variants) {
        for (unsigned mem : empty ? std::vector<unsigned>{kAllHost} : suite.placements(3, rotation)) {
            Case c(suite, format("%s variant=%s mem=%s", base.c_str(), variant.c_str(), mem_name(mem, 3).c_str()));
            if (!suite.select(c, GPK_OP_GEMM_BATCHED, variant)) continue;
            std::vector<T> a = A, b = B, cm = C0;
            DeviceArray da, db, dc;
            const void *pa = a.data(), *pb = b.data();
            void *pc = cm.data();
            if ((mem & 1u) && !(da.allocate(a.size() * sizeof(T)) && da.upload(a.data()))) {
                c.fail("device copy of A: %s", da.error());
                continue;
            }
            if ((mem & 2u) && !(db.allocate(b.size() * sizeof(T)) && db.upload(b.data()))) {
                c.fail("device copy of B: %s", db.error());
                continue;
            }
            if ((mem & 4u) && !(dc.allocate(cm.size() * sizeof(T)) && dc.upload(cm.data()))) {
                c.fail("device copy of C: %s", dc.error());
                continue;
            }
            if (mem & 1u) pa = da.get();
            if (mem & 2u) pb = db.get();
            if (mem & 4u) pc = dc.get();
            const gpk_status st =
                gpk_gemm_strided_batched(suite.ctx(), g.dtype, g.layout, g.transa, g.transb, g.m, g.n, g.k, g.alpha, pa,
                                         l.lda, l.sa, pb, l.ldb, l.sb, g.beta, pc, l.ldc, l.sc, g.batch);
            if (mem != kAllHost && !suite.sync(c)) continue;
            if ((mem & 4u) && !dc.download(cm.data())) {
                c.fail("copying C back: %s", dc.error());
                continue;
            }
            if (mem == kAllHost) {
                if (std::memcmp(a.data(), A.data(), a.size() * sizeof(T)) != 0) c.fail("A was written");
                if (std::memcmp(b.data(), B.data(), b.size() * sizeof(T)) != 0) c.fail("B was written");
            }
            if (st != GPK_SUCCESS) {
                const char *msg = gpk_last_error(suite.ctx());
                if (st == GPK_ERROR_NOT_SUPPORTED && variant != "auto" && !must_take(variant, g, suite.cuda()) &&
                    std::strstr(msg, variant.c_str()) != nullptr)
                    c.mark_unsupported();
                else
                    c.fail("gpk_gemm_strided_batched -> %s: %s", gpk_status_string(st), msg);
                if (std::memcmp(cm.data(), C0.data(), cm.size() * sizeof(T)) != 0) c.fail("a failed call wrote C");
                continue;
            }
            int64_t bad = 0;
            for (size_t at = 0; at < cm.size(); ++at) {
                if (!inside[at]) {
                    if (!same_bits(cm[at], C0[at]) && bad++ == 0)
                        c.fail("element %zu of C's array, outside every C matrix, was written", at);
                    continue;
                }
                const long double v = e.value(cm[at]), err = std::fabs(v - ref[at]);
                if (std::isfinite(v) && err <= bound[at]) continue;
                if (bad++ == 0)
                    c.fail("product %" PRId64 ", offset %" PRId64 " in it: %.17g, expected %.17Lg (error %.3Lg, bound %.3Lg)",
                           static_cast<int64_t>(at) / std::max<int64_t>(l.sc, 1), static_cast<int64_t>(at) % std::max<int64_t>(l.sc, 1),
                           static_cast<double>(v), ref[at], err, bound[at]);
            }
            if (bad > 1) c.fail("%" PRId64 " elements of C's array are wrong", bad);
        }
    }
}

void run(Suite &suite, const Config &g, const std::vector<std::string> &variants, uint64_t rotation) {
    if (!suite.dtype_chosen(g.dtype, g.tf32)) return;
    if (g.dtype == GPK_F32)
        run_config<float>(suite, g, variants, rotation);
    else if (g.dtype == GPK_F64)
        run_config<double>(suite, g, variants, rotation);
    else
        run_config<uint16_t>(suite, g, variants, rotation);
}

struct Kind {
    int dtype;
    bool tf32;
};
constexpr Kind kKinds[] = {{GPK_F32, false}, {GPK_F64, false}, {GPK_F16, false}, {GPK_BF16, false}, {GPK_F32, true}};
constexpr int kTrans[] = {GPK_NO_TRANS, GPK_TRANS};
constexpr int kLayouts[] = {GPK_COL_MAJOR, GPK_ROW_MAJOR};
struct AlphaBeta {
    double alpha, beta;
};
constexpr AlphaBeta kAlphaBeta[] = {{1.0, 0.0}, {-0.5, 2.0}, {0.0, 1.5}, {1.3, 0.0}};

struct Size3 {
    int64_t m, n, k, batch;
};

}  // namespace

int main(int argc, char **argv) {
    Suite suite("test_gemm_batched", argc, argv);
    const std::vector<std::string> variants = suite.variants(GPK_OP_GEMM_BATCHED);
    check_promises(suite);
    uint64_t rotation = 0;

    // Small products, the full grid of layout x transposes for each; the rest of the
    // parameters (padding, shared operand, alpha/beta) rotate with the case number.
    const Size3 small[] = {{1, 1, 1, 37},  {2, 3, 4, 29},  {4, 4, 4, 300}, {5, 7, 3, 41},  {8, 8, 8, 257},
                           {8, 8, 0, 9},   {9, 9, 9, 33},  {16, 16, 16, 70}, {16, 9, 24, 21}, {17, 17, 17, 13},
                           {32, 32, 32, 9}, {33, 17, 65, 5}, {3, 33, 2, 17}};
    for (const Size3 &sz : small) {
        int turn = 0;
        for (const Kind &kind : kKinds)
            for (int layout : kLayouts)
                for (int ta : kTrans)
                    for (int tb : kTrans) {
                        const AlphaBeta ab = kAlphaBeta[turn % 4];
                        const int64_t ld_pad = turn % 3 == 1 ? 3 : 0, stride_pad = turn % 5 == 2 ? 7 : 0;
                        const int shared = turn % 6 == 1 ? 1 : turn % 6 == 4 ? 2 : 0;
                        run(suite, Config{kind.dtype, kind.tf32, layout, ta, tb, sz.m, sz.n, sz.k, ld_pad, stride_pad,
                                          shared, sz.batch, ab.alpha, ab.beta},
                            variants, rotation++);
                        ++turn;
                    }
    }
    // Batch counts 0 and 1 and empty products.
    for (const Kind &kind : kKinds)
        for (int64_t batch : {0, 1})
            for (int layout : kLayouts)
                run(suite, Config{kind.dtype, kind.tf32, layout, GPK_NO_TRANS, GPK_TRANS, 7, 5, 3, 1, 2, 0, batch, 1.3, 0.0},
                    variants, rotation++);
    for (const Kind &kind : kKinds)
        run(suite, Config{kind.dtype, kind.tf32, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, 0, 5, 3, 0, 0, 0, 4, 1.0, 0.0},
            variants, rotation++);

    // More products than a grid has blocks along z (65535): launched in parts, or (the
    // smallest products, m and n at most 32) run by blocks that loop over products.
    for (const Kind &kind : kKinds)
        for (int64_t m : {3, 33})
            run(suite, Config{kind.dtype, kind.tf32, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_TRANS, m, 2, 5, 1, 3, 0,
                              65535 * 2 + 7, 0.5, 1.0},
                variants, rotation++);

    // Larger products: fewer combinations each, up to 600.
    const Size3 large[] = {{64, 64, 64, 6}, {100, 100, 100, 3}, {128, 128, 128, 3}, {129, 65, 33, 3},
                           {256, 256, 256, 2}, {600, 17, 33, 2}, {1, 600, 2, 3}, {33, 1, 600, 2}};
    const Size3 largest = {600, 600, 600, 2};
    for (const Size3 &sz : large) {
        int turn = 0;
        for (const Kind &kind : kKinds)
            for (int layout : kLayouts) {
                const int trans = turn % 2 ? GPK_TRANS : GPK_NO_TRANS;
                const AlphaBeta ab = kAlphaBeta[turn % 4];
                run(suite, Config{kind.dtype, kind.tf32, layout, trans, turn % 3 ? GPK_TRANS : GPK_NO_TRANS, sz.m, sz.n,
                                  sz.k, turn % 2 ? 3 : 0, turn % 3 ? 5 : 0, turn % 4 == 3 ? 2 : turn % 4 == 1 ? 1 : 0,
                                  sz.batch, ab.alpha, ab.beta},
                    variants, rotation++);
                ++turn;
            }
    }
    // Validation mode checks the vendor's result by the first rung of ours whose takes
    // function accepts the call (its size, dtype and the GPU decide), on device arrays
    // and through the staging pipeline: the sizes span the rungs that take F32 and F64.
    if (suite.cuda() && std::find(variants.begin(), variants.end(), kCudaVendor) != variants.end()) {
        bool on = false;
        {
            Case c(suite, "gemm_batched validation on");
            on = c.expect(gpk_set_validation(suite.ctx(), 1), GPK_SUCCESS, "gpk_set_validation(1)");
        }
        if (on)
            for (const Kind &kind : {kKinds[0], kKinds[1]})
                for (int64_t size : {6, 40, 100})
                    run(suite, Config{kind.dtype, false, GPK_ROW_MAJOR, GPK_TRANS, GPK_NO_TRANS, size, size + 1,
                                      size - 1, 1, 2, 0, 5, 1.3, -0.5},
                        {kCudaVendor}, rotation++);
        Case c(suite, "gemm_batched validation off");
        c.expect(gpk_set_validation(suite.ctx(), 0), GPK_SUCCESS, "gpk_set_validation(0)");
    }
    if (!suite.quick())
        for (int layout : kLayouts)
            run(suite, Config{layout == GPK_COL_MAJOR ? GPK_F32 : GPK_F64, false, layout, GPK_TRANS, GPK_NO_TRANS,
                              largest.m, largest.n, largest.k, 1, 3, 0, largest.batch, 1.0, 0.0},
                variants, rotation++);
    return suite.finish();
}
