// Checks the host backend's gpk_gemm_strided_batched against a direct evaluation of
// the definition from the raw row- or column-major arguments: both layouts, all
// transposes, padded ld and strides, stride 0 for A or B, beta == 0 with NaN in C,
// alpha == 0 and k == 0, batch counts 0, 1 and more, and a guard value that must
// survive everywhere outside the C matrices. The call goes through the public API,
// so the row-major swap of operands, strides and transposes is checked with the
// reference.
#include "gpk/gpk.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

namespace {

std::mt19937_64 rng(7);
gpk_context *g_ctx = nullptr;
const double kGuard = 12345.5;

int64_t off(bool rm, int64_t ld, int64_t r, int64_t c) { return rm ? r * ld + c : r + c * ld; }
int64_t footprint(bool rm, int64_t rows, int64_t cols, int64_t ld) {
    if (rows == 0 || cols == 0) return 0;
    return rm ? (rows - 1) * ld + cols : (cols - 1) * ld + rows;
}

template <class T>
int check(int layout, bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, double beta, int64_t ldpad,
          int64_t spad, int shared, int64_t batch) {
    const bool rm = layout == GPK_ROW_MAJOR;
    const int64_t ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
    auto minld = [&](int64_t r, int64_t c) { return std::max<int64_t>(1, rm ? c : r); };
    const int64_t lda = minld(ar, ac) + ldpad, ldb = minld(br, bc) + ldpad, ldc = minld(m, n) + ldpad;
    const int64_t fa = footprint(rm, ar, ac, lda), fb = footprint(rm, br, bc, ldb), fc = footprint(rm, m, n, ldc);
    const int64_t sa = shared == 1 ? 0 : fa + spad, sb = shared == 2 ? 0 : fb + spad, sc = fc + spad;
    const int64_t nb = std::max<int64_t>(batch, 1);
    std::vector<T> A((nb - 1) * sa + fa + 1), B((nb - 1) * sb + fb + 1), C((nb - 1) * sc + fc + 1, T(kGuard));
    std::uniform_real_distribution<double> d(-1, 1);
    for (T &x : A) x = T(d(rng));
    for (T &x : B) x = T(d(rng));
    for (int64_t b = 0; b < batch; ++b)
        for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) C[b * sc + off(rm, ldc, i, j)] = beta == 0 ? T(NAN) : T(d(rng));
    const std::vector<T> C0 = C;

    const int dtype = sizeof(T) == 8 ? GPK_F64 : GPK_F32;
    if (gpk_gemm_strided_batched(g_ctx, dtype, layout, ta ? GPK_TRANS : GPK_NO_TRANS, tb ? GPK_TRANS : GPK_NO_TRANS,
                                 m, n, k, alpha, A.data(), lda, sa, B.data(), ldb, sb, beta, C.data(), ldc, sc,
                                 batch) != GPK_SUCCESS) {
        std::printf("gpk_gemm_strided_batched failed: %s\n", gpk_last_error(g_ctx));
        return 1;
    }

    const double eps = sizeof(T) == 8 ? 1.2e-16 : 6e-8;
    std::vector<char> inside(C.size(), 0);
    for (int64_t b = 0; b < batch; ++b)
        for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) {
                const int64_t e = b * sc + off(rm, ldc, i, j);
                inside[e] = 1;
                double s = 0, bound = 0;
                if (k > 0 && alpha != 0)
                    for (int64_t p = 0; p < k; ++p) {
                        const double a = A[b * sa + (ta ? off(rm, lda, p, i) : off(rm, lda, i, p))];
                        const double x = B[b * sb + (tb ? off(rm, ldb, j, p) : off(rm, ldb, p, j))];
                        s += a * x, bound += std::fabs(a * x);
                    }
                double ref = alpha * s;
                bound *= std::fabs(alpha);
                if (beta != 0) ref += beta * double(C0[e]), bound += std::fabs(beta * double(C0[e]));
                const double v = C[e];
                if (!(std::fabs(v - ref) <= 4 * eps * (bound + std::fabs(ref))) && v != ref) return 1;
            }
    for (size_t e = 0; e < C.size(); ++e)
        if (!inside[e] && std::memcmp(&C[e], &C0[e], sizeof(T)) != 0) return 1;
    return 0;
}

}  // namespace

int main() {
    if (gpk_create(&g_ctx, GPK_BACKEND_HOST, 0) != GPK_SUCCESS) {
        std::printf("gpk_create(host) failed: %s\n", gpk_last_error(nullptr));
        return 1;
    }
    const int64_t sizes[][3] = {{1, 1, 1}, {3, 3, 3}, {4, 4, 4}, {7, 5, 3}, {8, 8, 0}, {16, 9, 24}, {33, 17, 65},
                                {64, 64, 64}, {600, 17, 33}};
    int fails = 0, runs = 0, v = 0;
    for (int f64 = 0; f64 < 2; ++f64)
        for (const auto &s : sizes)
            for (int combo = 0; combo < 8; ++combo, ++v) {
                const int layout = combo & 1 ? GPK_ROW_MAJOR : GPK_COL_MAJOR;
                const bool ta = combo & 2, tb = combo & 4;
                const double alpha = v % 7 == 3 ? 0.0 : (v % 2 ? -1.5 : 1.0), beta = v % 3 == 0 ? 0.0 : 0.75;
                const int64_t ldpad = v % 4 == 1 ? 3 : 0, spad = v % 5 == 2 ? 5 : 0;
                const int shared = v % 6 == 1 ? 1 : (v % 6 == 4 ? 2 : 0);
                const int64_t batch = v % 11 == 5 ? 0 : (v % 11 == 7 ? 1 : (s[0] * s[1] > 5000 ? 3 : 23));
                const int r = f64 ? check<double>(layout, ta, tb, s[0], s[1], s[2], alpha, beta, ldpad, spad, shared, batch)
                                  : check<float>(layout, ta, tb, s[0], s[1], s[2], alpha, beta, ldpad, spad, shared, batch);
                ++runs;
                if (r) {
                    ++fails;
                    std::printf("FAIL %s layout %d ta %d tb %d %lldx%lldx%lld alpha %g beta %g ldpad %lld spad %lld "
                                "shared %d batch %lld\n",
                                f64 ? "F64" : "F32", layout, ta, tb, (long long)s[0], (long long)s[1], (long long)s[2],
                                alpha, beta, (long long)ldpad, (long long)spad, shared, (long long)batch);
                }
            }
    gpk_destroy(g_ctx);
    std::printf("host batched gemm: %d cases, %d failed\n", runs, fails);
    return fails ? 1 : 0;
}
