// gpk_gemm conformance: every variant of the backend (and "auto") against a
// reference computed here in long double, over both layouts, all transpositions,
// tight and padded leading dimensions and the alpha/beta special cases; for F32, F64,
// F16, BF16, and F32 in GPK_MATH_TF32.
//
// The bound on each element of C is the F32/F64 one -- 4 u (k + 2) (|alpha| sum |a b|
// + |beta c|), u the unit roundoff of the accumulation -- and
//  - for F16 and BF16 (F32 accumulation, u = 2^-24), one rounding of the result on
//    top: u16 |C| with u16 = 2^-11 (F16) or 2^-8 (BF16), plus half the smallest
//    subnormal for results near zero;
//  - in TF32 mode, A and B rounded to a 10-bit mantissa first: each product off by
//    at most (1 + 2^-10)^2 - 1 = 2^-9 + 2^-20 of |a b| (2^-10 per operand allows
//    hardware that truncates rather than rounds), so (2^-9 + 2^-19) |alpha| sum |a b|
//    more.
#include "../harness.hpp"

#include <algorithm>

namespace {

using namespace gpkt;

struct Config {
    int dtype;
    bool tf32;  // F32 in GPK_MATH_TF32
    int layout, transa, transb;
    int64_t m, n, k;
    int64_t pad_a, pad_b, pad_c;  // added to the CBLAS minimum of each leading dimension
    double alpha, beta;
    bool nan_in_a = false;  // A's elements are NaN: legal to pass only when A is not read
    bool null_ab = false;   // A and B are NULL (only when m, n or k is 0)
    bool null_c = false;    // C is NULL (only when m or n is 0)
    int64_t offset = 0;     // A, B and C start this many elements into their arrays
                            // (1: pointers off 16-byte alignment, as from a slice)
};

struct AlphaBeta {
    double alpha, beta;
};
constexpr AlphaBeta kAlphaBeta[] = {{1.0, 0.0}, {-0.5, 2.0}, {0.0, 1.5}, {1.3, 0.0}};
constexpr int kTrans[] = {GPK_NO_TRANS, GPK_TRANS};
constexpr int kLayouts[] = {GPK_COL_MAJOR, GPK_ROW_MAJOR};
// The dtypes, and F32 once more in TF32 mode.
struct Kind {
    int dtype;
    bool tf32;
};
constexpr Kind kKinds[] = {{GPK_F32, false}, {GPK_F64, false}, {GPK_F16, false}, {GPK_BF16, false}, {GPK_F32, true}};

// The stored shapes of A, B and C for a config (the CBLAS rules).
struct Shapes {
    Shape a, b, c;
};

Shapes shapes_of(const Config &g) {
    const bool col = g.layout == GPK_COL_MAJOR;
    const bool ta = g.transa == GPK_TRANS, tb = g.transb == GPK_TRANS;
    // A is stored as op(A) (m x k) or its transpose (k x m); likewise B.
    const int64_t a_rows = ta ? g.k : g.m, a_cols = ta ? g.m : g.k;
    const int64_t b_rows = tb ? g.n : g.k, b_cols = tb ? g.k : g.n;
    Shapes s;
    s.a = Shape{a_rows, a_cols, 0, col};
    s.b = Shape{b_rows, b_cols, 0, col};
    s.c = Shape{g.m, g.n, 0, col};
    s.a.ld = at_least_one(s.a.inner()) + g.pad_a;
    s.b.ld = at_least_one(s.b.inner()) + g.pad_b;
    s.c.ld = at_least_one(s.c.inner()) + g.pad_c;
    return s;
}

std::string describe(const Config &g, const Shapes &s) {
    return format("gemm %s%s %s trans=%c%c m=%" PRId64 " n=%" PRId64 " k=%" PRId64 " lda=%" PRId64 " ldb=%" PRId64
                  " ldc=%" PRId64 " alpha=%g beta=%g%s%s%s%s",
                  dtype_name(g.dtype), g.tf32 ? " (TF32)" : "", layout_name(g.layout), g.transa == GPK_TRANS ? 'T' : 'N',
                  g.transb == GPK_TRANS ? 'T' : 'N', g.m, g.n, g.k, s.a.ld, s.b.ld, s.c.ld, g.alpha, g.beta,
                  g.nan_in_a ? " A=NaN" : "", g.null_ab ? " A=B=NULL" : "", g.null_c ? " C=NULL" : "",
                  g.offset != 0 ? format(" offset=%" PRId64, g.offset).c_str() : "");
}

// How the test stores, reads and bounds the elements of a dtype: T is float or double,
// or uint16_t holding F16 or BF16 bits.
template <class T>
struct Elem {
    int dtype;
    T from(long double v) const { return static_cast<T>(v); }
    long double value(T v) const { return v; }
    T nan() const { return std::numeric_limits<T>::quiet_NaN(); }
    long double scalar(double v) const { return static_cast<T>(v); }  // alpha, beta as applied
    long double acc_eps() const { return std::numeric_limits<T>::epsilon() / 2; }  // 2^-24, 2^-53
    long double out_eps() const { return 0; }  // the result's rounding is in the F32/F64 bound
    long double tiny() const { return std::numeric_limits<T>::min(); }
};
template <>
struct Elem<uint16_t> {
    int dtype;
    uint16_t from(long double v) const { return encode16(dtype, v); }
    long double value(uint16_t v) const { return decode16(dtype, v); }
    uint16_t nan() const { return encode16(dtype, std::numeric_limits<long double>::quiet_NaN()); }
    long double scalar(double v) const { return static_cast<float>(v); }  // applied in F32
    long double acc_eps() const { return 0x1p-24L; }                      // F32 accumulation
    long double out_eps() const { return unit_roundoff16(dtype); }
    long double tiny() const { return underflow16(dtype) + std::numeric_limits<float>::min(); }
};

template <class T>
struct Data {
    std::vector<T> a, b, c0;  // c0: C before the call
    std::vector<long double> ref, bound;  // per element of the m x n block, column-major
};

template <class T>
Data<T> make_data(const Config &g, const Shapes &s) {
    Rng rng(seed_of({g.dtype, g.layout, g.transa, g.transb, g.m, g.n, g.k, g.pad_a, g.pad_b, g.pad_c,
                     static_cast<int64_t>(g.alpha * 1000), static_cast<int64_t>(g.beta * 1000), g.nan_in_a, g.tf32}));
    const Elem<T> e{g.dtype};
    const T nan = e.nan();
    Data<T> d;
    // Padding of A and B is NaN: a kernel that reads it poisons its result.
    d.a.assign(std::max<size_t>(s.a.count(), 1), nan);
    d.b.assign(std::max<size_t>(s.b.count(), 1), nan);
    d.c0.assign(std::max<size_t>(s.c.count(), 1), poison<T>());
    for (int64_t r = 0; r < s.a.rows; ++r)
        for (int64_t c = 0; c < s.a.cols; ++c) d.a[s.a.at(r, c)] = g.nan_in_a ? nan : e.from(rng.signed_unit());
    for (int64_t r = 0; r < s.b.rows; ++r)
        for (int64_t c = 0; c < s.b.cols; ++c) d.b[s.b.at(r, c)] = e.from(rng.signed_unit());
    // beta == 0: C is NaN, which must not leak into the result.
    for (int64_t i = 0; i < g.m; ++i)
        for (int64_t j = 0; j < g.n; ++j) d.c0[s.c.at(i, j)] = g.beta == 0.0 ? nan : e.from(rng.signed_unit());

    // The reference, with alpha and beta converted as the library does, and a
    // per-element bound on the rounding error of any summation order.
    const long double alpha = e.scalar(g.alpha), beta = e.scalar(g.beta);
    const bool ta = g.transa == GPK_TRANS, tb = g.transb == GPK_TRANS;
    std::vector<long double> opa(static_cast<size_t>(g.m * g.k)), opbt(static_cast<size_t>(g.n * g.k));
    for (int64_t i = 0; i < g.m; ++i)
        for (int64_t l = 0; l < g.k; ++l) opa[i * g.k + l] = e.value(d.a[ta ? s.a.at(l, i) : s.a.at(i, l)]);
    for (int64_t j = 0; j < g.n; ++j)
        for (int64_t l = 0; l < g.k; ++l) opbt[j * g.k + l] = e.value(d.b[tb ? s.b.at(j, l) : s.b.at(l, j)]);
    const long double eps = e.acc_eps(), out_eps = e.out_eps();
    const long double tf32_eps = g.tf32 ? 0x1p-9L + 0x1p-19L : 0.0L;
    d.ref.resize(static_cast<size_t>(g.m * g.n));
    d.bound.resize(d.ref.size());
    for (int64_t j = 0; j < g.n; ++j) {
        for (int64_t i = 0; i < g.m; ++i) {
            long double sum = 0, abs_sum = 0;
            if (alpha != 0) {
                // data() + offset, not &v[offset]: with k == 0 the vectors are empty.
                const long double *ar = opa.data() + i * g.k, *bc = opbt.data() + j * g.k;
                for (int64_t l = 0; l < g.k; ++l) {
                    const long double p = ar[l] * bc[l];
                    sum += p;
                    abs_sum += std::fabs(p);
                }
            }
            const long double c = beta != 0 ? e.value(d.c0[s.c.at(i, j)]) : 0.0L;
            const long double ref = alpha * sum + beta * c;
            const long double acc = 4 * eps * (g.k + 2) * (std::fabs(alpha) * abs_sum + std::fabs(beta * c)) +
                                    tf32_eps * std::fabs(alpha) * abs_sum;
            d.ref[j * g.m + i] = ref;
            d.bound[j * g.m + i] = acc * (1 + out_eps) + out_eps * std::fabs(ref) + e.tiny();
        }
    }
    return d;
}

// Checks C after a successful call: the block against the reference (finite
// everywhere, so that an unwritten NaN element is caught), the padding untouched.
template <class T>
void check_c(Case &c, const Config &g, const Shapes &s, const Data<T> &d, const std::vector<T> &got) {
    const Elem<T> e{g.dtype};
    int64_t bad = 0;
    for (int64_t j = 0; j < g.n; ++j) {
        for (int64_t i = 0; i < g.m; ++i) {
            const long double v = e.value(got[s.c.at(i, j)]);
            const long double ref = d.ref[j * g.m + i], bound = d.bound[j * g.m + i];
            const long double err = std::fabs(v - ref);
            if (std::isfinite(v) && err <= bound) continue;
            if (bad++ == 0)
                c.fail("C(%" PRId64 ", %" PRId64 ") = %.17g, expected %.17Lg (error %.3Lg, bound %.3Lg)", i, j,
                       static_cast<double>(v), ref, err, bound);
        }
    }
    if (bad > 1) c.fail("%" PRId64 " of %" PRId64 " elements of C are wrong", bad, g.m * g.n);
    for (size_t idx = 0; idx < s.c.count(); ++idx) {
        if (s.c.is_padding(idx) && !same_bits(got[idx], d.c0[idx])) {
            c.fail("C padding at offset %zu was written (ldc %" PRId64 ", inner %" PRId64 ")", idx, s.c.ld,
                   s.c.inner());
            break;
        }
    }
}

template <class T>
void check_unchanged(Case &c, const char *what, const std::vector<T> &before, const std::vector<T> &after) {
    if (std::memcmp(before.data(), after.data(), before.size() * sizeof(T)) != 0)
        c.fail("%s was modified although it must not be written", what);
}

// One config under every variant and memory placement.
template <class T>
void run_config(Suite &suite, const Config &g, const std::vector<std::string> &variants, uint64_t rotation) {
    const Shapes s = shapes_of(g);
    const Data<T> d = make_data<T>(g, s);
    const std::string base = describe(g, s);
    const bool quick = g.m == 0 || g.n == 0;
    if (g.tf32) {
        Case c(suite, base + " set TF32");
        if (!c.expect(gpk_set_math_mode(suite.ctx(), GPK_MATH_TF32), GPK_SUCCESS, "gpk_set_math_mode(TF32)")) return;
    }
    // Back to the default however the cases end.
    struct Restore {
        gpk_context *ctx;
        bool on;
        ~Restore() {
            if (on) gpk_set_math_mode(ctx, GPK_MATH_DEFAULT);
        }
    } restore{suite.ctx(), g.tf32};

    for (const std::string &variant : variants) {
        // Placement masks: bit 0 A, bit 1 B, bit 2 C. NULL arrays stay host-side.
        for (unsigned mem : quick ? std::vector<unsigned>{kAllHost} : suite.placements(3, rotation)) {
            Case c(suite, format("%s variant=%s mem=%s", base.c_str(), variant.c_str(), mem_name(mem, 3).c_str()));
            if (!suite.select(c, GPK_OP_GEMM, variant)) continue;
            // The arrays with `offset` poisoned elements in front (the call sees them
            // from there on).
            const size_t off = static_cast<size_t>(g.offset);
            auto prefixed = [&](const std::vector<T> &v) {
                std::vector<T> p(off, poison<T>());
                p.insert(p.end(), v.begin(), v.end());
                return p;
            };
            const std::vector<T> a0 = prefixed(d.a), b0 = prefixed(d.b), c0 = prefixed(d.c0);
            std::vector<T> a = a0, b = b0, cm = c0;
            DeviceArray da, db, dc;
            const void *pa = g.null_ab ? nullptr : a.data() + off;
            const void *pb = g.null_ab ? nullptr : b.data() + off;
            void *pc = g.null_c ? nullptr : cm.data() + off;
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
            if ((mem & 1u) && pa != nullptr) pa = static_cast<const T *>(da.get()) + off;
            if ((mem & 2u) && pb != nullptr) pb = static_cast<const T *>(db.get()) + off;
            if ((mem & 4u) && pc != nullptr) pc = static_cast<T *>(dc.get()) + off;

            const gpk_status st = gpk_gemm(suite.ctx(), g.dtype, g.layout, g.transa, g.transb, g.m, g.n, g.k,
                                           g.alpha, pa, s.a.ld, pb, s.b.ld, g.beta, pc, s.c.ld);
            if (mem != kAllHost && !suite.sync(c)) continue;
            if ((mem & 4u) && !dc.download(cm.data())) {
                c.fail("copying C back: %s", dc.error());
                continue;
            }
            const bool ok = suite.accept(c, st, GPK_OP_GEMM, variant, g.dtype, "gpk_gemm");
            if (mem == kAllHost) {
                check_unchanged(c, "A", a0, a);
                check_unchanged(c, "B", b0, b);
            }
            if (!ok || quick) {
                // A failed call and a quick return both leave C as it was.
                check_unchanged(c, "C", c0, cm);
                continue;
            }
            if (off > 0) {
                check_unchanged(c, "the elements of C's array before C",
                                std::vector<T>(c0.begin(), c0.begin() + static_cast<std::ptrdiff_t>(off)),
                                std::vector<T>(cm.begin(), cm.begin() + static_cast<std::ptrdiff_t>(off)));
                cm.erase(cm.begin(), cm.begin() + static_cast<std::ptrdiff_t>(off));
            }
            check_c(c, g, s, d, cm);
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

struct Size3 {
    int64_t m, n, k;
};

// Whether `text` holds every one of `words` (up to the first null).
bool mentions(const std::string &text, const char *const (&words)[4]) {
    for (const char *w : words)
        if (w != nullptr && text.find(w) == std::string::npos) return false;
    return true;
}

// The tensor-core rungs refuse what they cannot compute with NOT_SUPPORTED, naming
// themselves, the dtype and, for F32, the math mode; never with another kernel's
// result: F32 in the default mode (exact FP32) and F64 on both, F32 in any mode on
// mma_sync. The other cases of the suite count such refusals as unsupported; these
// check the words.
void tensor_core_refusals(Suite &suite, const std::vector<std::string> &variants) {
    struct Refusal {
        const char *variant;
        int dtype;
        int mode;
        const char *words[4];
    };
    const Refusal refusals[] = {
        {"wgmma_ws", GPK_F32, GPK_MATH_DEFAULT, {"'wgmma_ws'", "GPK_F32", "GPK_MATH_DEFAULT", "GPK_MATH_TF32"}},
        {"wgmma_ws", GPK_F64, GPK_MATH_DEFAULT, {"'wgmma_ws'", "GPK_F64"}},
        {"wgmma_ws", GPK_F64, GPK_MATH_TF32, {"'wgmma_ws'", "GPK_F64"}},
        {"mma_sync", GPK_F32, GPK_MATH_DEFAULT, {"'mma_sync'", "GPK_F32"}},
        {"mma_sync", GPK_F32, GPK_MATH_TF32, {"'mma_sync'", "GPK_F32"}},
        {"mma_sync", GPK_F64, GPK_MATH_DEFAULT, {"'mma_sync'", "GPK_F64"}},
    };
    for (const Refusal &r : refusals) {
        if (std::find(variants.begin(), variants.end(), r.variant) == variants.end()) continue;
        Case c(suite, format("gemm %s %s in %s refused", r.variant, dtype_name(r.dtype),
                             r.mode == GPK_MATH_TF32 ? "GPK_MATH_TF32" : "GPK_MATH_DEFAULT"));
        if (!suite.select(c, GPK_OP_GEMM, r.variant)) continue;
        if (!c.expect(gpk_set_math_mode(suite.ctx(), r.mode), GPK_SUCCESS, "gpk_set_math_mode")) continue;
        const int64_t n = 17;
        std::vector<double> a(n * n, 1.0), b(n * n, 1.0), cm(n * n, 2.0);
        const std::vector<double> c0 = cm;
        const gpk_status st = gpk_gemm(suite.ctx(), r.dtype, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, n, n, n, 1.0,
                                       a.data(), n, b.data(), n, 0.0, cm.data(), n);
        const std::string why = gpk_last_error(suite.ctx());
        gpk_set_math_mode(suite.ctx(), GPK_MATH_DEFAULT);
        if (c.expect(st, GPK_ERROR_NOT_SUPPORTED, "gpk_gemm") && !mentions(why, r.words))
            c.fail("the refusal does not name the rung, the dtype and the mode: %s", why.c_str());
        if (cm != c0) c.fail("a refused call wrote C");
    }
}

// The memory-bound rungs take calls with m or n at most 128 and refuse the rest with
// NOT_SUPPORTED, naming themselves and why, writing nothing.
void membound_refusals(Suite &suite, const std::vector<std::string> &variants) {
    for (const char *variant : {"skinny", "gram"}) {
        if (std::find(variants.begin(), variants.end(), variant) == variants.end()) continue;
        Case c(suite, format("gemm %s refuses m = n = 129", variant));
        if (!suite.select(c, GPK_OP_GEMM, variant)) continue;
        const int64_t n = 129;
        std::vector<float> a(n * 5, 1.0f), b(n * 5, 1.0f), cm(n * n, 2.0f);
        const std::vector<float> c0 = cm;
        const gpk_status st = gpk_gemm(suite.ctx(), GPK_F32, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_TRANS, n, n, 5, 1.0,
                                       a.data(), n, b.data(), n, 0.0, cm.data(), n);
        const std::string why = gpk_last_error(suite.ctx());
        const char *const words[4] = {variant, "m nor n", "128", nullptr};
        if (c.expect(st, GPK_ERROR_NOT_SUPPORTED, "gpk_gemm") && !mentions(why, words))
            c.fail("the refusal does not name the rung and the limit: %s", why.c_str());
        if (cm != c0) c.fail("a refused call wrote C");
    }
}

}  // namespace

int main(int argc, char **argv) {
    Suite suite("test_gemm", argc, argv);
    const std::vector<std::string> variants = suite.variants(GPK_OP_GEMM);
    uint64_t rotation = 0;

    // Small shapes: the full grid of layout x trans x leading dimension x alpha/beta.
    for (int64_t m : {1, 17})
        for (int64_t n : {1, 17})
            for (int64_t k : {1, 17})
                for (const Kind &kind : kKinds)
                    for (int layout : kLayouts)
                        for (int ta : kTrans)
                            for (int tb : kTrans)
                                for (int64_t pad : {0, 3})
                                    for (const AlphaBeta &ab : kAlphaBeta)
                                        run(suite, Config{kind.dtype, kind.tf32, layout, ta, tb, m, n, k, pad, pad, pad, ab.alpha, ab.beta},
                                            variants, rotation++);

    // Shapes with 255: every layout and transposition; alpha/beta and padding rotate
    // so that each shape still meets every alpha/beta pair and both paddings.
    const Size3 medium[] = {{255, 17, 17}, {17, 255, 17}, {17, 17, 255}, {255, 255, 17},
                            {17, 255, 255}, {255, 17, 255}, {255, 1, 255}, {1, 255, 17}};
    for (const Size3 &sz : medium) {
        int turn = 0;
        for (const Kind &kind : kKinds)
            for (int layout : kLayouts)
                for (int ta : kTrans)
                    for (int tb : kTrans) {
                        const AlphaBeta ab = kAlphaBeta[turn % 4];
                        const int64_t pad = (turn / 4) % 2 ? 3 : 0;
                        // Unequal paddings catch a kernel that mixes up lda, ldb and ldc.
                        run(suite, Config{kind.dtype, kind.tf32, layout, ta, tb, sz.m, sz.n, sz.k, pad, pad + 2 * (turn % 2), pad + 1, ab.alpha, ab.beta},
                            variants, rotation++);
                        ++turn;
                    }
    }
    // The cube and the large shapes: fewer combinations each.
    {
        int turn = 0;
        for (const Kind &kind : kKinds)
            for (int layout : kLayouts)
                for (int trans : kTrans) {
                    const AlphaBeta ab = kAlphaBeta[turn % 4];
                    run(suite, Config{kind.dtype, kind.tf32, layout, trans, trans == GPK_TRANS ? GPK_NO_TRANS : GPK_TRANS, 255, 255, 255,
                                      turn % 2 ? 3 : 0, 0, turn % 2 ? 0 : 3, ab.alpha, ab.beta},
                        variants, rotation++);
                    ++turn;
                }
    }
    const Size3 large[] = {{1000, 17, 255}, {255, 1000, 17},  {17, 1000, 255},
                           {1000, 1000, 1}, {4097, 33, 65},   {65, 4097, 33},
                           {33, 65, 4097}};
    for (const Size3 &sz : large) {
        int turn = 0;
        for (const Kind &kind : kKinds)
            for (int layout : kLayouts) {
                const int ta = kTrans[turn % 2], tb = kTrans[(turn / 2) % 2];
                const AlphaBeta ab = kAlphaBeta[(turn + 1) % 4];
                run(suite, Config{kind.dtype, kind.tf32, layout, ta, tb, sz.m, sz.n, sz.k, 3 * (turn % 2), 0, 3 * (turn % 2), ab.alpha, ab.beta},
                    variants, rotation++);
                ++turn;
            }
    }

    // The memory-bound rungs (skinny, gram): a short side of 1, 17 or 128 against a long
    // one of 1000 or 4097, in either place; k short, and long enough for several splits;
    // Gram-like products (both sides short, k long); every kind, layout and
    // transposition, each leading dimension above its minimum, NaN in C with beta == 0
    // (kAlphaBeta's first and last pairs). Both sides long: the rungs refuse it.
    {
        const Size3 membound[] = {{1, 4097, 17},   {17, 300, 2100}, {4097, 17, 64}, {1000, 1, 2100},
                                  {128, 300, 300}, {17, 17, 4097}, {8, 128, 9000}, {300, 1000, 1}};
        for (const Size3 &sz : membound) {
            if (suite.quick() && sz.m * sz.n * sz.k > 10000000) continue;
            int turn = 0;
            for (const Kind &kind : kKinds)
                for (int layout : kLayouts)
                    for (int ta : kTrans)
                        for (int tb : kTrans) {
                            const AlphaBeta ab = kAlphaBeta[turn % 4];
                            const int64_t pad = 1 + turn % 3;
                            run(suite, Config{kind.dtype, kind.tf32, layout, ta, tb, sz.m, sz.n, sz.k, pad, pad + 1, pad, ab.alpha, ab.beta},
                                variants, rotation++);
                            ++turn;
                        }
        }
    }
    // The tensor-core paths (rungs mma_sync and wgmma_ws, and "auto", which takes
    // wgmma_ws on sm_90): 16-bit and TF32 calls whose tiles are ragged in every
    // dimension, every layout and transposition; C once where the TMA-store epilogue
    // takes it (rows on 16 bytes, beta == 0, NaN in C) and once where it does not
    // (A, B and C one element off 16 bytes, as slices are; every leading dimension
    // above its minimum and odd; beta != 0). F32 operands not k-major or not aligned
    // are packed by wgmma_ws, 16-bit ones only when not aligned.
    {
        const Kind tc_kinds[] = {{GPK_F16, false}, {GPK_BF16, false}, {GPK_F32, true}};
        for (const Kind &kind : tc_kinds)
            for (int layout : kLayouts)
                for (int ta : kTrans)
                    for (int tb : kTrans)
                        for (int odd : {0, 1}) {
                            if (suite.quick() && ta != tb) continue;  // the sanitizer's run: NN and TT
                            Config g{kind.dtype, kind.tf32, layout,        ta,           tb,          520, 1000, 129,
                                     3 * odd,    odd,       5 * odd,       odd ? -0.5 : 1.3, odd ? 2.0 : 0.0};
                            g.offset = odd;
                            run(suite, g, variants, rotation++);
                        }
    }
    // Aligned 16-bit calls whose tiles fill wgmma_ws's waves, where its tuning table can
    // give them to wgmma_ws under "auto" too. NaN in C with beta == 0 (the TMA-store
    // epilogue), and C with a leading dimension above its minimum and beta != 0 (the
    // vector epilogue).
    for (int dtype : {GPK_F16, GPK_BF16})
        for (int tb : kTrans) {
            Config g{dtype, false, GPK_COL_MAJOR, GPK_NO_TRANS, tb, 1024, 1024, 256, 0, 0, tb == GPK_TRANS ? 8 : 0,
                     1.0, tb == GPK_TRANS ? 0.5 : 0.0};
            run(suite, g, variants, rotation++);
        }
    if (suite.dtype_chosen(GPK_F32)) tensor_core_refusals(suite, variants);  // once, with the F32 cases
    if (suite.dtype_chosen(GPK_F32)) membound_refusals(suite, variants);

    // k == 0: C = beta * C (beta == 0 gives exact zeros over a NaN C), with A and B
    // either NULL or valid and unread.
    for (const Kind &kind : kKinds)
        for (int layout : kLayouts)
            for (int ta : kTrans)
                for (double beta : {0.0, 1.5, 1.0})
                    for (bool null_ab : {false, true}) {
                        Config g{kind.dtype, kind.tf32, layout, ta, GPK_NO_TRANS, 17, 255, 0, 0, 0, 1, 2.0, beta};
                        g.null_ab = null_ab;
                        run(suite, g, variants, rotation++);
                    }
    // alpha == 0: A and B are not read either, so NaN in A must not leak.
    for (const Kind &kind : kKinds)
        for (int layout : kLayouts)
            for (double beta : {0.0, 1.5}) {
                Config g{kind.dtype, kind.tf32, layout, GPK_NO_TRANS, GPK_TRANS, 17, 17, 17, 0, 3, 0, 0.0, beta};
                g.nan_in_a = true;
                run(suite, g, variants, rotation++);
            }
    // m == 0 or n == 0: quick return, C untouched, NULL arrays allowed.
    const Size3 empty[] = {{0, 17, 17}, {17, 0, 17}, {0, 0, 0}, {0, 17, 0}};
    for (const Size3 &sz : empty)
        for (const Kind &kind : kKinds)
            for (int layout : kLayouts)
                for (int nulls = 0; nulls < 3; ++nulls) {
                    Config g{kind.dtype, kind.tf32, layout, GPK_TRANS, GPK_NO_TRANS, sz.m, sz.n, sz.k, 0, 0, 2, 1.0, 0.5};
                    g.null_ab = nulls >= 1;
                    g.null_c = nulls == 2;
                    run(suite, g, variants, rotation++);
                }

    return suite.finish();
}
