// The promises of the memory-bound gemm rungs (skinny, gram) on the GPU; the CUDA
// backend only (exits 77 without a usable GPU, and on the host backend, which has no
// such rungs). Device arrays, and host arrays through the staging pipeline:
//  - F32 (also in GPK_MATH_TF32, computed exactly) and F64: every element bit for
//    bit the host stand-in of the summation order (membound/order.hpp), which
//    tests/gemm/test_membound_order.cpp checks in CI;
//  - every dtype: the same bits on every run;
//  - skinny: row i of C the same bits whether the call has 1, 64 or 128 rows, both
//    layouts and both orientations of the large operand, and with host arrays.
#include "../harness.hpp"

#include "cuda/gemm/membound/order.hpp"

#include <vector>

namespace {

using namespace gpkt;
namespace mb = gpk::membound;

// One call's operands on the host, as bytes of the dtype, with values spread over
// 2^-20 .. 2^20 (F32, F64) so that a different order shows in the bits.
struct Call {
    explicit Call(int d) : dtype(d) {}
    int dtype;
    bool tf32 = false;
    int layout = GPK_COL_MAJOR, ta = GPK_NO_TRANS, tb = GPK_NO_TRANS;
    int64_t m = 0, n = 0, k = 0;
    int64_t pad = 0;  // added to every leading dimension
    double alpha = 1.0, beta = 0.0;
    Shape sa{}, sb{}, sc{};
    std::vector<long double> a, b, c0;  // values as stored (already rounded to the dtype)
    std::vector<unsigned char> a_bytes, b_bytes, c_bytes;  // the same as the dtype's bytes, made once a call

    size_t es() const { return dtype_size(dtype); }
};

long double round_to(int dtype, long double v) {
    if (dtype == GPK_F32) return static_cast<float>(v);
    if (dtype == GPK_F64) return static_cast<double>(v);
    return decode16(dtype, encode16(dtype, v));
}

// The stored shapes of A, B and C (CBLAS), each leading dimension `pad` above its minimum.
void shape(Call &g) {
    const bool col = g.layout == GPK_COL_MAJOR;
    const bool ta = g.ta == GPK_TRANS, tb = g.tb == GPK_TRANS;
    g.sa = Shape{ta ? g.k : g.m, ta ? g.m : g.k, 0, col};
    g.sb = Shape{tb ? g.n : g.k, tb ? g.k : g.n, 0, col};
    g.sc = Shape{g.m, g.n, 0, col};
    g.sa.ld = g.sa.inner() + g.pad, g.sb.ld = g.sb.inner() + g.pad, g.sc.ld = g.sc.inner() + g.pad;
}

std::vector<unsigned char> bytes_of(int dtype, const std::vector<long double> &v) {
    const size_t es = dtype_size(dtype);
    std::vector<unsigned char> out(v.size() * es);
    for (size_t i = 0; i < v.size(); ++i) {
        if (dtype == GPK_F32) {
            const float f = static_cast<float>(v[i]);
            std::memcpy(&out[i * es], &f, es);
        } else if (dtype == GPK_F64) {
            const double d = static_cast<double>(v[i]);
            std::memcpy(&out[i * es], &d, es);
        } else {
            const uint16_t h = encode16(dtype, v[i]);
            std::memcpy(&out[i * es], &h, es);
        }
    }
    return out;
}

// The operands' bytes, from their values; B's may come from another call that shares it
// (encoding millions of 16-bit values a call would be most of the test's time).
void encode(Call &g, const Call *same_b = nullptr) {
    g.a_bytes = bytes_of(g.dtype, g.a);
    g.b_bytes = same_b != nullptr ? same_b->b_bytes : bytes_of(g.dtype, g.b);
    g.c_bytes = bytes_of(g.dtype, g.c0);
}

void make(Call &g, uint64_t seed) {
    shape(g);
    Rng rng(seed);
    const int spread = g.dtype == GPK_F32 || g.dtype == GPK_F64 ? 20 : 3;
    const auto fill = [&](std::vector<long double> &v, size_t count) {
        v.resize(count);
        for (long double &x : v)
            x = round_to(g.dtype, std::ldexp(static_cast<long double>(rng.signed_unit()), int(rng.range(-spread, spread))));
    };
    fill(g.a, g.sa.count());
    fill(g.b, g.sb.count());
    fill(g.c0, g.sc.count());
    encode(g);
}

// C after the call under `variant` (device arrays unless `host`), or empty on failure.
std::vector<unsigned char> run(Suite &suite, Case &c, const Call &g, const char *variant, bool host = false) {
    if (!suite.select(c, GPK_OP_GEMM, variant)) return {};
    gpk_set_math_mode(suite.ctx(), g.tf32 ? GPK_MATH_TF32 : GPK_MATH_DEFAULT);
    const std::vector<unsigned char> &a = g.a_bytes, &b = g.b_bytes;
    std::vector<unsigned char> cm = g.c_bytes;
    DeviceArray da, db, dc;
    const void *pa = a.data(), *pb = b.data();
    void *pc = cm.data();
    if (!host) {
        if (!(da.allocate(a.size()) && da.upload(a.data()) && db.allocate(b.size()) && db.upload(b.data()) &&
              dc.allocate(cm.size()) && dc.upload(cm.data()))) {
            c.fail("device arrays: %s", da.error());
            return {};
        }
        pa = da.get(), pb = db.get(), pc = dc.get();
    }
    const gpk_status st = gpk_gemm(suite.ctx(), g.dtype, g.layout, g.ta, g.tb, g.m, g.n, g.k, g.alpha, pa, g.sa.ld,
                                   pb, g.sb.ld, g.beta, pc, g.sc.ld);
    gpk_set_math_mode(suite.ctx(), GPK_MATH_DEFAULT);
    if (!c.expect(st, GPK_SUCCESS, "gpk_gemm") || !suite.sync(c)) return {};
    if (!host && !dc.download(cm.data())) {
        c.fail("copying C back: %s", dc.error());
        return {};
    }
    return cm;
}

template <class T>
T element(const std::vector<unsigned char> &v, size_t i) {
    T x;
    std::memcpy(&x, &v[i * sizeof(T)], sizeof(T));
    return x;
}

// Every element of C against the stand-in's sum in the rung's order.
template <class T>
void against_stand_in(Case &c, const Call &g, const std::vector<unsigned char> &got, bool gram) {
    const int64_t L = std::max(g.m, g.n), s = std::min(g.m, g.n);
    mb::Splits sp = mb::skinny_splits(g.k);
    int groups = 1;
    if (gram) {
        const mb::GramShape shape = mb::gram_shape(L, s, int(sizeof(T)));
        groups = shape.groups;
        sp = mb::gram_splits(g.k, mb::ceil_div(L, shape.bp) * mb::ceil_div(s, shape.bq));
    }
    int64_t bad = 0;
    for (int64_t i = 0; i < g.m; ++i)
        for (int64_t j = 0; j < g.n; ++j) {
            const auto w = [&](int64_t l) {
                return static_cast<T>(g.a[g.ta == GPK_TRANS ? g.sa.at(l, i) : g.sa.at(i, l)]);
            };
            const auto x = [&](int64_t l) {
                return static_cast<T>(g.b[g.tb == GPK_TRANS ? g.sb.at(j, l) : g.sb.at(l, j)]);
            };
            const T total = mb::ordered_sum<T>(g.k, sp, groups, w, x);
            const T want = mb::epilogue<T>(static_cast<T>(g.alpha), total, static_cast<T>(g.beta),
                                           static_cast<T>(g.c0[g.sc.at(i, j)]));
            const T v = element<T>(got, g.sc.at(i, j));
            if (!same_bits(v, want) && bad++ == 0)
                c.fail("C(%" PRId64 ", %" PRId64 ") = %.17g, the stand-in's order gives %.17g", i, j, double(v),
                       double(want));
        }
    if (bad > 1) c.fail("%" PRId64 " elements differ from the stand-in", bad);
}

std::string describe(const Call &g, const char *variant) {
    return format("%s %s%s %s %c%c m=%" PRId64 " n=%" PRId64 " k=%" PRId64 " pad=%" PRId64, variant,
                  dtype_name(g.dtype), g.tf32 ? " (TF32)" : "", layout_name(g.layout), g.ta == GPK_TRANS ? 'T' : 'N',
                  g.tb == GPK_TRANS ? 'T' : 'N', g.m, g.n, g.k, g.pad);
}

void stand_in(Suite &suite) {
    struct Shape3 {
        const char *variant;
        int64_t m, n, k;
    };
    // Several splits, k not a multiple of the chunk, both sides short and long; for
    // gram every tile class (8, 16, 32, 64 and skinny's beyond).
    const Shape3 shapes[] = {{"skinny", 1000, 3, 5001}, {"skinny", 7, 1029, 4099}, {"skinny", 300, 128, 2049},
                             {"skinny", 1, 1, 70001},   {"gram", 8, 8, 200003},    {"gram", 13, 5, 70001},
                             {"gram", 30, 32, 40001},   {"gram", 64, 50, 20001},   {"gram", 100, 128, 9001}};
    int turn = 0;
    for (const Shape3 &sh : shapes)
        for (int dtype : {GPK_F32, GPK_F64}) {
            Call g{dtype};
            g.tf32 = dtype == GPK_F32 && turn % 3 == 2;
            g.layout = turn % 2 ? GPK_ROW_MAJOR : GPK_COL_MAJOR;
            g.ta = (turn / 2) % 2 ? GPK_TRANS : GPK_NO_TRANS;
            g.tb = (turn / 4) % 2 ? GPK_TRANS : GPK_NO_TRANS;
            g.m = sh.m, g.n = sh.n, g.k = sh.k, g.pad = turn % 3;
            g.alpha = turn % 2 ? -1.5 : 1.0, g.beta = turn % 4 == 1 ? 0.5 : 0.0;
            ++turn;
            make(g, seed_of({g.m, g.n, g.k, dtype, turn}));
            if (!suite.dtype_chosen(dtype, g.tf32)) continue;
            Case c(suite, describe(g, sh.variant) + ": the stand-in's bits");
            const std::vector<unsigned char> got = run(suite, c, g, sh.variant);
            if (got.empty()) continue;
            const bool gram = std::strcmp(sh.variant, "gram") == 0;
            if (dtype == GPK_F32)
                against_stand_in<float>(c, g, got, gram);
            else
                against_stand_in<double>(c, g, got, gram);
        }
}

void determinism(Suite &suite) {
    for (const char *variant : {"skinny", "gram"})
        for (int dtype : {int(GPK_F32), int(GPK_F64), int(GPK_F16), int(GPK_BF16)}) {
            Call g{dtype};
            g.m = 40, g.n = 24, g.k = 100003, g.tb = GPK_TRANS;
            make(g, seed_of({dtype, 11}));
            if (!suite.dtype_chosen(dtype)) continue;
            Case c(suite, describe(g, variant) + ": the same bits on every run");
            const std::vector<unsigned char> first = run(suite, c, g, variant);
            for (int again = 0; again < 3 && !first.empty(); ++again)
                if (run(suite, c, g, variant) != first) {
                    c.fail("run %d gave other bits than the first", again + 2);
                    break;
                }
        }
}

// Row i of C = X W (or X W^T): X with `rows` rows, W of N x K.
Call rows_call(int dtype, bool row_major, bool w_trans, int64_t rows, int64_t N, int64_t K, const Call *from,
               int64_t first_row) {
    Call g{dtype};
    g.layout = row_major ? GPK_ROW_MAJOR : GPK_COL_MAJOR;
    g.tb = w_trans ? GPK_TRANS : GPK_NO_TRANS;
    g.m = rows, g.n = N, g.k = K;
    if (from == nullptr) {
        make(g, seed_of({dtype, row_major, w_trans, N, K}));
        return g;
    }
    // The same B (its bytes: the stand-in never checks these calls), and the chosen rows
    // of the big call's A (beta is 0: C is not read).
    shape(g);
    g.a.assign(g.sa.count(), 0.0L);
    g.c0.assign(g.sc.count(), 0.0L);
    for (int64_t i = 0; i < rows; ++i)
        for (int64_t l = 0; l < K; ++l) g.a[g.sa.at(i, l)] = from->a[from->sa.at(first_row + i, l)];
    encode(g, from);
    return g;
}

void batch_invariance(Suite &suite) {
    const int64_t N = 1000, K = 5003;
    for (int dtype : {int(GPK_F32), int(GPK_F64), int(GPK_F16), int(GPK_BF16)})
        for (bool row_major : {true, false})
            for (bool w_trans : {true, false})
                for (int64_t rows : {64, 128}) {
                    if (!suite.dtype_chosen(dtype)) continue;
                    const Call big = rows_call(dtype, row_major, w_trans, rows, N, K, nullptr, 0);
                    Case c(suite, describe(big, "skinny") + ": row i alone has the same bits");
                    const std::vector<unsigned char> all = run(suite, c, big, "skinny");
                    if (all.empty()) continue;
                    const size_t es = dtype_size(dtype);
                    for (int64_t i : {int64_t(0), int64_t(17), rows - 1}) {
                        for (int64_t count : {int64_t(1), int64_t(3)}) {
                            if (i + count > rows) continue;
                            const Call part = rows_call(dtype, row_major, w_trans, count, N, K, &big, i);
                            // The last case goes through host arrays (the staging pipeline).
                            const bool host = i == rows - 1;
                            const std::vector<unsigned char> got = run(suite, c, part, "skinny", host);
                            if (got.empty()) break;
                            for (int64_t r = 0; r < count; ++r)
                                for (int64_t j = 0; j < N; ++j)
                                    if (std::memcmp(&got[part.sc.at(r, j) * es], &all[big.sc.at(i + r, j) * es], es) != 0) {
                                        c.fail("row %" PRId64 " of %" PRId64 " rows %s differs from the %" PRId64
                                               "-row call's at column %" PRId64,
                                               r, count, host ? "(host arrays)" : "", rows, j);
                                        r = count, j = N;
                                    }
                        }
                    }
                }
}

}  // namespace

int main(int argc, char **argv) {
    Suite suite("test_membound", argc, argv);
    if (!suite.cuda()) {
        std::printf("test_membound [host]: skipped, the memory-bound rungs are CUDA rungs\n");
        return kSkipExit;
    }
    stand_in(suite);
    determinism(suite);
    batch_invariance(suite);
    return suite.finish();
}
