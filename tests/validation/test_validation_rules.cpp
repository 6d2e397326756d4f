// Validation mode's comparisons (libgpk/validation.hpp), which need no GPU: the
// staging pipeline feeds them a call's results tile by tile, in the order its lanes
// finish, and the verdict must be the whole call's -- the same pass or fail, the same
// element named, the same tolerance -- however the call was cut. Each rule is checked
// on whole arrays and on the same arrays cut into tiles given in a shuffled order.
#include "../harness.hpp"

#include "context.hpp"
#include "validation.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace {

using namespace gpkt;
namespace val = gpk::validation;

struct Tile {
    int64_t r0, rows, c0, cols;
};

// Tiles of an m x n matrix, `h` rows by `w` columns (the last ones shorter), shuffled.
std::vector<Tile> tiles(int64_t m, int64_t n, int64_t h, int64_t w, Rng &rng) {
    std::vector<Tile> t;
    for (int64_t c0 = 0; c0 < n; c0 += w)
        for (int64_t r0 = 0; r0 < m; r0 += h) t.push_back(Tile{r0, std::min(h, m - r0), c0, std::min(w, n - c0)});
    for (size_t i = t.size(); i > 1; --i)
        std::swap(t[i - 1], t[static_cast<size_t>(rng.range(0, static_cast<int64_t>(i) - 1))]);
    return t;
}

// The verdict on got and want (m x n, column-major): whole, and tile by tile.
template <class T>
std::pair<gpk_status, std::string> gemm_verdict(const std::vector<T> &got, const std::vector<T> &want, int64_t m,
                                                int64_t n, int64_t k, const Tile *cut, Rng &rng) {
    gpk::GemmArgs a{};
    a.dtype = sizeof(T) == 4 ? GPK_F32 : GPK_F64, a.m = m, a.n = n, a.k = k;
    gpk_context ctx;  // F32 in the default math mode
    val::GemmCheck check(ctx, a);
    if (cut == nullptr) {
        check.add(got.data(), m, want.data(), m, m, n, 0, 0);
    } else {
        for (const Tile &t : tiles(m, n, cut->rows, cut->cols, rng)) {
            // As the pipeline hands them over: packed copies of the tile.
            std::vector<T> g, w;
            for (int64_t j = 0; j < t.cols; ++j)
                for (int64_t i = 0; i < t.rows; ++i)
                    g.push_back(got[(t.r0 + i) + (t.c0 + j) * m]), w.push_back(want[(t.r0 + i) + (t.c0 + j) * m]);
            check.add(g.data(), t.rows, w.data(), t.rows, t.rows, t.cols, t.r0, t.c0);
        }
    }
    const gpk_status st = check.verdict(ctx, "v", "c");
    return {st, ctx.last_error};
}

void gemm_rules(Suite &suite) {
    Rng rng(seed_of({19, 4, 1}));
    constexpr int64_t m = 37, n = 23, k = 100;
    std::vector<double> want(m * n);
    for (double &v : want) v = rng.signed_unit();
    const Tile cuts[] = {{0, 8, 0, 23}, {0, 37, 0, 5}, {0, 7, 0, 3}, {0, 1, 0, 1}};
    struct Scenario {
        const char *name;
        gpk_status status;
        std::vector<std::pair<int64_t, double>> changes;  // element, value added (NaN: made NaN)
        const char *names;  // what the message must name, or null
    };
    const double tol_unit = 8 * 0x1p-53 * (k + 2);  // gemm_tolerance's for F64, per unit of max |C|
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const Scenario scenarios[] = {
        {"equal", GPK_SUCCESS, {}, nullptr},
        {"within the tolerance", GPK_SUCCESS, {{5, 0.1 * tol_unit}, {400, -0.1 * tol_unit}}, nullptr},
        {"one element off", GPK_ERROR_VALIDATION, {{3 + 11 * m, 0.5}}, "C(3, 11)"},
        {"two equal worst: the first in column-major order", GPK_ERROR_VALIDATION,
         {{30 + 20 * m, 1.0}, {2 + 20 * m, 1.0}, {36 + 4 * m, 0.25}}, "C(2, 20)"},
        {"NaN on one side", GPK_ERROR_VALIDATION, {{17 + 9 * m, nan}, {1, 1.0}}, "C(17, 9)"},
    };
    for (const Scenario &s : scenarios) {
        Case c(suite, format("gemm rule: %s, whole and in tiles", s.name));
        std::vector<double> got = want;
        for (const auto &[at, add] : s.changes) {
            double &v = got[static_cast<size_t>(at)];
            v = std::isnan(add) ? add : v + add;
        }
        const auto whole = gemm_verdict(got, want, m, n, k, nullptr, rng);
        if (whole.first != s.status)
            c.fail("whole: %s, expected %s", gpk_status_string(whole.first), gpk_status_string(s.status));
        if (s.names != nullptr && whole.second.find(s.names) == std::string::npos)
            c.fail("whole: \"%s\" does not name %s", whole.second.c_str(), s.names);
        for (const Tile &cut : cuts) {
            const auto tiled = gemm_verdict(got, want, m, n, k, &cut, rng);
            if (tiled != whole)
                c.fail("tiles of %lldx%lld: %s \"%s\", whole: %s \"%s\"", static_cast<long long>(cut.rows),
                       static_cast<long long>(cut.cols), gpk_status_string(tiled.first), tiled.second.c_str(),
                       gpk_status_string(whole.first), whole.second.c_str());
        }
    }
    {
        // Both NaN agree; the tolerance scales with the largest |C| of the checker's.
        Case c(suite, "gemm rule: NaN on both sides agrees, F32 tolerance");
        std::vector<float> w(12, 1.0f), g = w;
        w[4] = g[4] = std::numeric_limits<float>::quiet_NaN();
        w[7] = 1000.0f, g[7] = 1000.0f + 0.03f;  // tolerance 8 * 2^-24 * (k + 2) * 1000 = 0.0486 for k = 100
        if (gemm_verdict(g, w, 3, 4, 100, nullptr, rng).first != GPK_SUCCESS) c.fail("0.03 off rejected");
        g[0] = 1.04f;
        if (gemm_verdict(g, w, 3, 4, 100, nullptr, rng).first != GPK_SUCCESS) c.fail("0.04 off rejected");
        g[0] = 1.2f;
        if (gemm_verdict(g, w, 3, 4, 100, nullptr, rng).first != GPK_ERROR_VALIDATION) c.fail("0.2 off accepted");
    }
}

void transpose_rules(Suite &suite) {
    Rng rng(seed_of({19, 4, 2}));
    constexpr int64_t rows = 29, cols = 41;
    std::vector<uint32_t> A(rows * cols), B(rows * cols);
    for (uint32_t &v : A) v = static_cast<uint32_t>(rng.next());
    for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j) B[j + i * cols] = A[i + j * rows];
    auto verdict = [&](const std::vector<uint32_t> &b, const Tile *cut) {
        gpk::TransposeArgs a{};
        a.elem_size = 4, a.rows = rows, a.cols = cols;
        val::TransposeCheck check(a);
        if (cut == nullptr) {
            check.add(A.data(), rows, b.data(), cols, rows, cols, 0, 0);
        } else {
            for (const Tile &t : tiles(rows, cols, cut->rows, cut->cols, rng))
                check.add(A.data() + t.r0 + t.c0 * rows, rows, b.data() + t.c0 + t.r0 * cols, cols, t.rows, t.cols,
                          t.r0, t.c0);
        }
        gpk_context ctx;
        const gpk_status st = check.verdict(ctx, "v");
        return std::make_pair(st, ctx.last_error);
    };
    const Tile cuts[] = {{0, 5, 0, 41}, {0, 29, 0, 6}, {0, 4, 0, 9}};
    {
        Case c(suite, "transpose rule: exact copy passes, whole and in tiles");
        if (verdict(B, nullptr).first != GPK_SUCCESS) c.fail("whole: rejected");
        for (const Tile &cut : cuts)
            if (verdict(B, &cut).first != GPK_SUCCESS) c.fail("tiles: rejected");
    }
    {
        // Differences at A(20, 3) and A(7, 30): the first in row-major order of A is
        // A(7, 30), reported as B(30, 7).
        Case c(suite, "transpose rule: the first difference in row order of A, whole and in tiles");
        std::vector<uint32_t> b = B;
        b[3 + 20 * cols] ^= 1u;
        b[30 + 7 * cols] ^= 0x80000000u;
        const auto whole = verdict(b, nullptr);
        if (whole.first != GPK_ERROR_VALIDATION || whole.second.find("B(30, 7) is not A(7, 30)") == std::string::npos)
            c.fail("whole: %s \"%s\"", gpk_status_string(whole.first), whole.second.c_str());
        for (const Tile &cut : cuts)
            if (verdict(b, &cut) != whole) c.fail("tiles: \"%s\"", verdict(b, &cut).second.c_str());
    }
}

void reduce_rules(Suite &suite) {
    auto run = [](int dtype, int op, const void *got, const void *want, const std::vector<double> &x) {
        gpk::ReduceArgs a{dtype, op, x.data(), static_cast<int64_t>(x.size()), nullptr};
        const double abs_sum = val::reduce_needs_abs_sum(a, got, want) ? val::reduce_abs_sum(a, x.data()) : 0;
        gpk_context ctx;
        return val::compare_reduce(ctx, a, got, want, abs_sum, "v", "c");
    };
    const std::vector<double> x(1000, 1.0);  // sum |x| = 1000
    {
        Case c(suite, "reduce rule: F64 SUM within the bound of two trees");
        // The bound: 4 * 2^-53 * (log2(1001) + 2) * 1000 = 5.3e-12.
        const double want = 1000, near = 1000 + 2e-12, far = 1000 + 1e-10;
        if (run(GPK_F64, GPK_SUM, &near, &want, x) != GPK_SUCCESS) c.fail("2e-12 off rejected");
        if (run(GPK_F64, GPK_SUM, &far, &want, x) != GPK_ERROR_VALIDATION) c.fail("1e-10 off accepted");
        if (run(GPK_F64, GPK_MIN, &near, &want, x) != GPK_ERROR_VALIDATION) c.fail("MIN not exact");
        const double n1 = std::numeric_limits<double>::quiet_NaN(), n2 = -n1;
        if (run(GPK_F64, GPK_SUM, &n1, &n2, x) != GPK_SUCCESS) c.fail("two NaNs disagree");
        if (run(GPK_F64, GPK_SUM, &n1, &want, x) != GPK_ERROR_VALIDATION) c.fail("NaN against a number accepted");
    }
    {
        Case c(suite, "reduce rule: integers exactly");
        const int64_t a = 5, b = 6;
        if (run(GPK_I32, GPK_SUM, &a, &a, x) != GPK_SUCCESS) c.fail("equal rejected");
        if (run(GPK_I64, GPK_SUM, &a, &b, x) != GPK_ERROR_VALIDATION) c.fail("5 against 6 accepted");
    }
}

}  // namespace

int main(int argc, char **argv) {
    Suite suite("test_validation_rules", argc, argv);
    gemm_rules(suite);
    transpose_rules(suite);
    reduce_rules(suite);
    return suite.finish();
}
