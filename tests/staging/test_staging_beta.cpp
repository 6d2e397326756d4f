// gemm through the staging pipeline with a beta that is zero only in the dtype: F32
// with beta = 1e-300 (0 as a float) must not read C (gpk.h: alpha and beta are
// converted to the dtype; beta == 0 never reads C), so NaN in the caller's C does not
// leak into the result. Every variant, host arrays (the pipeline), one and several
// streams, C pageable and device. CUDA backend only (skipped without a GPU).
#include "../harness.hpp"

#include <vector>

namespace {

using namespace gpkt;

void beta_zero_in_dtype(Suite &suite) {
    const int64_t m = 131, n = 67, k = 45;
    Rng rng(seed_of({20, 4, m, n, k}));
    std::vector<float> A(static_cast<size_t>(m * k)), B(static_cast<size_t>(k * n));
    for (float &v : A) v = static_cast<float>(rng.signed_unit());
    for (float &v : B) v = static_cast<float>(rng.signed_unit());
    // The reference, column-major, in double: C = A B (alpha 1, beta 0 in F32).
    std::vector<double> want(static_cast<size_t>(m * n), 0.0);
    for (int64_t j = 0; j < n; ++j)
        for (int64_t p = 0; p < k; ++p)
            for (int64_t i = 0; i < m; ++i)
                want[static_cast<size_t>(i + j * m)] +=
                    static_cast<double>(A[static_cast<size_t>(i + p * m)]) * B[static_cast<size_t>(p + j * k)];
    const int stream_counts[] = {1, 3};
    for (const std::string &variant : suite.variants(GPK_OP_GEMM))
        for (int streams : stream_counts)
            for (bool c_on_device : {false, true}) {
                if (c_on_device && !suite.cuda()) continue;
                Case c(suite, format("gemm F32 beta 1e-300, NaN in C, variant %s, %d stream%s, C %s", variant.c_str(),
                                     streams, streams == 1 ? "" : "s", c_on_device ? "device" : "pageable"));
                if (!suite.select(c, GPK_OP_GEMM, variant)) continue;
                if (!c.expect(gpk_set_staging(suite.ctx(), streams, 0, 0), GPK_SUCCESS, "gpk_set_staging")) continue;
                std::vector<float> C(static_cast<size_t>(m * n), std::numeric_limits<float>::quiet_NaN());
                DeviceArray dc;
                if (c_on_device && (!dc.allocate(C.size() * sizeof(float)) || !dc.upload(C.data()))) {
                    c.fail("device C: %s", dc.error());
                    continue;
                }
                void *cptr = c_on_device ? dc.get() : C.data();
                const gpk_status st = gpk_gemm(suite.ctx(), GPK_F32, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, m, n, k, 1.0, A.data(), m,
                                               B.data(), k, 1e-300, cptr, m);
                if (!suite.accept(c, st, GPK_OP_GEMM, variant, GPK_F32, "gpk_gemm")) continue;
                if (!suite.sync(c)) continue;
                if (c_on_device && !dc.download(C.data())) {
                    c.fail("download of C: %s", dc.error());
                    continue;
                }
                for (size_t e = 0; e < C.size(); ++e) {
                    const double tol = 1e-5 * static_cast<double>(k);
                    if (!(std::fabs(C[e] - want[e]) <= tol)) {
                        c.fail("C(%zu, %zu) = %g, want %g (NaN of C leaked or a wrong product)", e % m, e / m,
                               static_cast<double>(C[e]), want[e]);
                        break;
                    }
                }
            }
    Case reset(suite, "staging settings restored");
    reset.expect(gpk_set_staging(suite.ctx(), 4, 0, 0), GPK_SUCCESS, "gpk_set_staging(4, 0, 0)");
}

}  // namespace

int main(int argc, char **argv) {
    Suite suite("test_staging_beta", argc, argv);
    beta_zero_in_dtype(suite);
    return suite.finish();
}
