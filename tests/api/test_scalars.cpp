// gpk_gemm's alpha and beta are converted to the dtype, and every zero test is on the
// converted value. In F32, 1e-300 and 1e-46 are 0: alpha = 1e-300 gives beta C even
// with NaN in A (A is not read), beta = 1e-300 never reads C (NaN in C does not leak).
// In F64 the same values are not 0, so the NaN must come through. Every variant, both
// layouts, host arrays (and device arrays on the CUDA backend). The same for
// gpk_gemm_strided_batched, whose products follow gpk_gemm's rules: two identical
// products in a batch, every variant of its ladder.
#include "../harness.hpp"

namespace {

using namespace gpkt;

constexpr int64_t kM = 37, kN = 23, kK = 19;

template <class T>
struct Problem {
    int layout;
    std::vector<T> A, B, C;
    int64_t lda, ldb, ldc;
    explicit Problem(int layout_) : layout(layout_) {
        const bool col = layout == GPK_COL_MAJOR;
        lda = col ? kM : kK, ldb = col ? kK : kN, ldc = col ? kM : kN;
        A.resize(static_cast<size_t>(kM * kK));
        B.resize(static_cast<size_t>(kK * kN));
        C.resize(static_cast<size_t>(kM * kN));
        Rng rng(seed_of({layout, static_cast<int64_t>(sizeof(T))}));
        for (T &v : A) v = static_cast<T>(static_cast<int>(rng.next() % 7) - 3);
        for (T &v : B) v = static_cast<T>(static_cast<int>(rng.next() % 7) - 3);
        for (T &v : C) v = static_cast<T>(static_cast<int>(rng.next() % 7) - 3);
    }
    size_t at_a(int64_t i, int64_t p) const { return static_cast<size_t>(layout == GPK_COL_MAJOR ? i + p * lda : i * lda + p); }
    size_t at_c(int64_t i, int64_t j) const { return static_cast<size_t>(layout == GPK_COL_MAJOR ? i + j * ldc : i * ldc + j); }
};

// Two copies of v, one after the other: a batch of two identical products.
template <class T>
std::vector<T> twice(const std::vector<T> &v) {
    std::vector<T> w(v);
    w.insert(w.end(), v.begin(), v.end());
    return w;
}

// Calls gemm (or, for GPK_OP_GEMM_BATCHED, the strided batched gemm with two
// identical products) with host or device arrays; returns the status and leaves C in
// `out` (the batch's first product, once the second was found equal to it).
template <class T>
gpk_status call(Suite &suite, Case &c, int op, const Problem<T> &p, bool device, double alpha, double beta,
                std::vector<T> *out) {
    const int dtype = sizeof(T) == 4 ? GPK_F32 : GPK_F64;
    const bool batched = op == GPK_OP_GEMM_BATCHED;
    const std::vector<T> A = batched ? twice(p.A) : p.A, B = batched ? twice(p.B) : p.B;
    std::vector<T> C = batched ? twice(p.C) : p.C;
    const auto sa = static_cast<int64_t>(p.A.size()), sb = static_cast<int64_t>(p.B.size());
    const auto sc = static_cast<int64_t>(p.C.size());
    auto run = [&](const void *a, const void *b, void *cc) {
        if (batched)
            return gpk_gemm_strided_batched(suite.ctx(), dtype, p.layout, GPK_NO_TRANS, GPK_NO_TRANS, kM, kN, kK, alpha,
                                            a, p.lda, sa, b, p.ldb, sb, beta, cc, p.ldc, sc, 2);
        return gpk_gemm(suite.ctx(), dtype, p.layout, GPK_NO_TRANS, GPK_NO_TRANS, kM, kN, kK, alpha, a, p.lda, b,
                        p.ldb, beta, cc, p.ldc);
    };
    gpk_status st = GPK_SUCCESS;
    if (!device) {
        st = run(A.data(), B.data(), C.data());
    } else {
        DeviceArray dA(A.size() * sizeof(T)), dB(B.size() * sizeof(T)), dC(C.size() * sizeof(T));
        if (!dA.upload(A.data()) || !dB.upload(B.data()) || !dC.upload(C.data())) {
            c.fail("device arrays: %s", dA.error());
            return GPK_ERROR_INTERNAL;
        }
        st = run(dA.get(), dB.get(), dC.get());
        if (st == GPK_SUCCESS && (gpk_synchronize(suite.ctx()) != GPK_SUCCESS || !dC.download(C.data())))
            c.fail("synchronize/download failed");
    }
    out->assign(C.begin(), C.begin() + sc);
    if (st == GPK_SUCCESS && batched)
        for (int64_t i = 0; i < sc; ++i) {
            const T x = C[static_cast<size_t>(i)], y = C[static_cast<size_t>(sc + i)];
            if (!(x == y || (std::isnan(x) && std::isnan(y)))) {
                c.fail("the two identical products differ at element %" PRId64 ": %g and %g", i,
                       static_cast<double>(x), static_cast<double>(y));
                break;
            }
        }
    return st;
}

template <class T>
void check(Suite &suite, int op, int layout, const std::string &variant, bool device) {
    const bool f32 = sizeof(T) == 4;
    const int dtype = f32 ? GPK_F32 : GPK_F64;
    const char *function = op == GPK_OP_GEMM ? "gpk_gemm" : "gpk_gemm_strided_batched";
    const std::string tag = format("%s %s %s %s %s", function, dtype_name(dtype), layout_name(layout),
                                   variant.c_str(), device ? "device" : "host");
    const T nan = std::numeric_limits<T>::quiet_NaN();
    const double tiny[] = {1e-300, f32 ? 1e-46 : 1e-320};  // 0 in F32; not 0 in F64 (1e-320 is subnormal)
    for (const double t : tiny) {
        {
            // alpha tiny, NaN in A: F32 gives beta C exactly; F64 gives NaN where A's
            // NaN row meets C.
            Case c(suite, format("%s: alpha = %g with NaN in A", tag.c_str(), t));
            if (!suite.select(c, op, variant)) continue;
            Problem<T> p(layout);
            p.A[p.at_a(3, 5)] = nan;
            std::vector<T> got;
            const gpk_status st = call(suite, c, op, p, device, t, 2.0, &got);
            if (!suite.accept(c, st, op, variant, dtype, function)) continue;
            for (int64_t i = 0; i < kM && !c.failed(); ++i)
                for (int64_t j = 0; j < kN; ++j) {
                    const T g = got[p.at_c(i, j)], old = p.C[p.at_c(i, j)];
                    if (f32 && g != static_cast<T>(2 * old)) {
                        c.fail("C(%" PRId64 ", %" PRId64 ") = %g, expected beta C = %g (alpha is 0 in F32)", i, j,
                               static_cast<double>(g), static_cast<double>(2 * old));
                        break;
                    }
                    if (!f32 && i == 3 && !std::isnan(g)) {
                        c.fail("C(3, %" PRId64 ") = %g: alpha = %g is not 0 in F64, the NaN of A must come through", j,
                               static_cast<double>(g), t);
                        break;
                    }
                }
        }
        {
            // beta tiny, NaN in C: F32 never reads C; F64 must read it.
            Case c(suite, format("%s: beta = %g with NaN in C", tag.c_str(), t));
            if (!suite.select(c, op, variant)) continue;
            Problem<T> p(layout);
            p.C[p.at_c(4, 6)] = nan;
            std::vector<T> got;
            const gpk_status st = call(suite, c, op, p, device, 1.0, t, &got);
            if (!suite.accept(c, st, op, variant, dtype, function)) continue;
            const T g = got[p.at_c(4, 6)];
            double want = 0;
            for (int64_t q = 0; q < kK; ++q)
                want += static_cast<double>(p.A[p.at_a(4, q)]) *
                        static_cast<double>(p.B[layout == GPK_COL_MAJOR ? q + 6 * p.ldb : q * p.ldb + 6]);
            if (f32 && g != static_cast<T>(want))
                c.fail("C(4, 6) = %g, expected A B = %g: beta = %g is 0 in F32, C must not be read",
                       static_cast<double>(g), want, t);
            if (!f32 && !std::isnan(g))
                c.fail("C(4, 6) = %g: beta = %g is not 0 in F64, the NaN of C must come through",
                       static_cast<double>(g), t);
        }
    }
}

}  // namespace

int main(int argc, char **argv) {
    Suite suite("test_scalars", argc, argv);
    for (const int op : {int{GPK_OP_GEMM}, int{GPK_OP_GEMM_BATCHED}})
        for (const std::string &variant : suite.variants(op))
            for (const int layout : {GPK_COL_MAJOR, GPK_ROW_MAJOR})
                for (const bool device : {false, true}) {
                    if (device && !suite.cuda()) continue;
                    check<float>(suite, op, layout, variant, device);
                    check<double>(suite, op, layout, variant, device);
                }
    return suite.finish();
}
