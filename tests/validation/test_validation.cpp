// What GPK_ERROR_VALIDATION leaves behind: the outputs hold the variant's result (what
// was checked), in host and in device memory alike -- the header's one exception to
// "a failed call writes nothing".
//
// A validation failure is provoked where it can be made to happen on purpose: gpk_pi's
// check is statistical (the variant's and the vendor's estimates must agree within 6
// combined standard errors), and over a range of 2 samples the two families disagree
// completely (2 hits against 0) for about one seed in 18. The default variant's hits
// are the host backend's exactly, so the result a failed call leaves can be checked
// to the bit. On the host backend validation does not exist (NOT_SUPPORTED), and that
// is what its run checks.
//
// The staged ops are deterministic, so for them a wrong result is made on purpose:
// this program defines cublasSgemm_v2_64, which libgpk's vendor rung calls. The
// executable comes first in the dynamic linker's lookup, so libgpk's calls reach the
// definition here, which calls cuBLAS's own (dlsym RTLD_NEXT) and then, while
// `g_corrupt` is set, overwrites element (0, 0) of the C it computed. Validation of
// host arrays, chunk by chunk through the staging pipeline, must catch that whether
// cuBLAS is the variant or the checker, and leave the variant's result in C.
#include "../harness.hpp"

#include <dlfcn.h>

namespace {
bool g_corrupt = false;
int g_vendor_calls = 0;      // cuBLAS gemm calls while corrupting
constexpr float kWrong = 1e6f;  // far from every right element (small integers)
}  // namespace

extern "C" __attribute__((visibility("default"))) int cublasSgemm_v2_64(
    void *handle, int transa, int transb, int64_t m, int64_t n, int64_t k, const float *alpha, const float *A,
    int64_t lda, const float *B, int64_t ldb, const float *beta, float *C, int64_t ldc) {
    using Gemm = int (*)(void *, int, int, int64_t, int64_t, int64_t, const float *, const float *, int64_t,
                         const float *, int64_t, const float *, float *, int64_t);
    static const Gemm real = reinterpret_cast<Gemm>(dlsym(RTLD_NEXT, "cublasSgemm_v2_64"));
    if (real == nullptr) return 13;  // CUBLAS_STATUS_EXECUTION_FAILED: no cuBLAS behind this one
    const int status = real(handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    if (status != 0 || !g_corrupt) return status;
    ++g_vendor_calls;
    using GetStream = int (*)(void *, cudaStream_t *);
    static const GetStream get_stream = reinterpret_cast<GetStream>(dlsym(RTLD_DEFAULT, "cublasGetStream_v2"));
    cudaStream_t stream = nullptr;
    if (get_stream == nullptr || get_stream(handle, &stream) != 0) return 13;
    static const float wrong = kWrong;
    return cudaMemcpyAsync(C, &wrong, sizeof wrong, cudaMemcpyHostToDevice, stream) == cudaSuccess ? 0 : 13;
}

namespace {

using namespace gpkt;

void host_backend(Suite &suite) {
    Case c(suite, "validation on the host backend");
    c.expect(gpk_set_validation(suite.ctx(), 1), GPK_ERROR_NOT_SUPPORTED, "gpk_set_validation(host, 1)");
    // The refusal leaves the context as it was: calls still compute and write.
    gpk_pi_result r{-1, -1, 0, 0};
    if (c.expect(gpk_pi_range(suite.ctx(), 0, 1000, 5, &r), GPK_SUCCESS, "gpk_pi_range") && r.samples != 1000)
        c.fail("samples %" PRIu64 ", expected 1000", r.samples);
}

void pi_failure_writes(Suite &suite, bool device_result) {
    Case c(suite, format("pi: GPK_ERROR_VALIDATION leaves the variant's result (%s result)",
                         device_result ? "device" : "host"));
    gpk_context *ctx = suite.ctx(), *host = suite.open(GPK_BACKEND_HOST);
    if (!c.expect(gpk_set_validation(ctx, 1), GPK_SUCCESS, "gpk_set_validation") ||
        !c.expect(gpk_set_variant(ctx, GPK_OP_PI, "auto"), GPK_SUCCESS, "gpk_set_variant(auto)")) {
        gpk_destroy(host);
        return;
    }
    DeviceArray dr(sizeof(gpk_pi_result));
    const gpk_pi_result poisoned{-1, -1, 77, 77};
    int failures = 0;
    for (uint64_t seed = 1; seed <= 2000 && failures < 3 && !c.failed(); ++seed) {
        gpk_pi_result r = poisoned;
        if (device_result && !dr.upload(&r)) {
            c.fail("cudaMemcpy: %s", dr.error());
            break;
        }
        const gpk_status st = gpk_pi_range(ctx, 0, 2, seed, device_result ? static_cast<gpk_pi_result *>(dr.get()) : &r);
        if (st == GPK_SUCCESS) continue;
        if (st != GPK_ERROR_VALIDATION) {
            c.fail("seed %" PRIu64 ": gpk_pi_range -> %s: %s", seed, gpk_status_string(st), gpk_last_error(ctx));
            break;
        }
        ++failures;
        if (device_result && !dr.download(&r)) {
            c.fail("cudaMemcpy: %s", dr.error());
            break;
        }
        gpk_pi_result want{};
        if (!c.expect(gpk_pi_range(host, 0, 2, seed, &want), GPK_SUCCESS, "gpk_pi_range(host)")) break;
        if (r.samples == poisoned.samples && r.hits == poisoned.hits)
            c.fail("seed %" PRIu64 ": GPK_ERROR_VALIDATION left the result unwritten", seed);
        else if (r.samples != 2 || r.hits != want.hits || r.estimate != want.estimate)
            c.fail("seed %" PRIu64 ": result samples %" PRIu64 " hits %" PRIu64 " estimate %g, the variant's is %" PRIu64
                   " hits, estimate %g",
                   seed, r.samples, r.hits, r.estimate, want.hits, want.estimate);
        if (std::strstr(gpk_last_error(ctx), "standard errors") == nullptr)
            c.fail("the message does not explain the failure: \"%s\"", gpk_last_error(ctx));
    }
    if (failures == 0 && !c.failed()) c.fail("no seed in 1..2000 made validation fail: the case proves nothing");
    gpk_set_validation(ctx, 0);
    gpk_destroy(host);
}

// gemm through the staging pipeline (several chunks) with cuBLAS made wrong. `vendor`:
// cuBLAS is the variant (its tiles are wrong, the reference rung checks them), else the
// reference rung is, checked by a wrong cuBLAS. `device`: the arrays in device memory
// (no pipeline) instead, whole.
void gemm_caught(Suite &suite, bool vendor, const char *memory) {
    const bool device = std::strcmp(memory, "device") == 0, pinned = std::strcmp(memory, "pinned") == 0;
    Case c(suite, format("gemm, %s arrays: a wrong %s is caught, C holds the variant's result", memory,
                         vendor ? "variant (cuBLAS)" : "checker (cuBLAS)"));
    gpk_context *ctx = suite.ctx();
    constexpr int64_t m = 300, n = 200, k = 50;
    // Small integers: every product and sum exact, in any order.
    std::vector<float> a(m * k), b(k * n), want(m * n, 0.0f);
    Rng rng(seed_of({19, 4, m, n}));
    for (float &v : a) v = static_cast<float>(static_cast<int>(rng.next() % 7) - 3);
    for (float &v : b) v = static_cast<float>(static_cast<int>(rng.next() % 7) - 3);
    for (int64_t j = 0; j < n; ++j)
        for (int64_t l = 0; l < k; ++l)
            for (int64_t i = 0; i < m; ++i) want[i + j * m] += a[i + l * m] * b[l + j * k];
    const size_t bytes_a = a.size() * 4, bytes_b = b.size() * 4, bytes_c = want.size() * 4;
    DeviceArray da(bytes_a), db(bytes_b), dc(bytes_c);
    float *pa = nullptr, *pb = nullptr, *pc = nullptr;
    std::vector<float> cm(m * n, -7.0f);
    if (pinned && (cudaHostAlloc(&pa, bytes_a, 0) != cudaSuccess || cudaHostAlloc(&pb, bytes_b, 0) != cudaSuccess ||
                   cudaHostAlloc(&pc, bytes_c, 0) != cudaSuccess))
        return c.fail("cudaHostAlloc");
    if (pinned) std::memcpy(pa, a.data(), bytes_a), std::memcpy(pb, b.data(), bytes_b), std::memcpy(pc, cm.data(), bytes_c);
    if (device && !(da.ok() && db.ok() && dc.ok() && da.upload(a.data()) && db.upload(b.data()) && dc.upload(cm.data())))
        return c.fail("device arrays: %s", da.error());
    const void *A = device ? da.get() : pinned ? static_cast<void *>(pa) : a.data();
    const void *B = device ? db.get() : pinned ? static_cast<void *>(pb) : b.data();
    void *C = device ? dc.get() : pinned ? static_cast<void *>(pc) : cm.data();

    if (!c.expect(gpk_set_variant(ctx, GPK_OP_GEMM, vendor ? "cublas" : "naive"), GPK_SUCCESS, "gpk_set_variant") ||
        !c.expect(gpk_set_staging(ctx, 2, 16 << 10, 0), GPK_SUCCESS, "gpk_set_staging") ||
        !c.expect(gpk_set_validation(ctx, 1), GPK_SUCCESS, "gpk_set_validation"))
        return;
    g_corrupt = true, g_vendor_calls = 0;
    const gpk_status st = gpk_gemm(ctx, GPK_F32, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, m, n, k, 1.0, A, m, B, k,
                                   0.0, C, m);
    const int calls = g_vendor_calls;
    g_corrupt = false;
    gpk_set_validation(ctx, 0);
    gpk_set_variant(ctx, GPK_OP_GEMM, nullptr);
    gpk_set_staging(ctx, 4, 0, 0);
    if (calls == 0) return c.fail("libgpk's cuBLAS calls did not reach this program's cublasSgemm_v2_64");
    if (!device && calls < 3) c.fail("%d cuBLAS calls: the pipeline made fewer than 3 chunks", calls);
    if (!c.expect(st, GPK_ERROR_VALIDATION, "gpk_gemm with a wrong cuBLAS")) return;
    const std::string msg = gpk_last_error(ctx), checker = vendor ? "'naive'" : "'cublas'";
    if (msg.find("differs from " + checker) == std::string::npos || msg.find("exceeds tolerance") == std::string::npos)
        c.fail("the message does not explain the failure: \"%s\"", msg.c_str());
    if (device && !dc.download(cm.data())) return c.fail("copying C back: %s", dc.error());
    if (pinned) std::memcpy(cm.data(), pc, bytes_c);
    // The variant's result: right everywhere, except, when cuBLAS is the variant, at the
    // first element of each tile it computed (one per call).
    int wrong = 0;
    for (size_t i = 0; i < cm.size(); ++i) {
        if (cm[i] == want[i]) continue;
        if (vendor && cm[i] == kWrong) {
            ++wrong;
            continue;
        }
        c.fail("C(%zu, %zu) = %g, the variant's result is %g", i % m, i / m, double(cm[i]), double(want[i]));
        break;
    }
    if (vendor && wrong != calls) c.fail("%d elements of C hold cuBLAS's wrong value, from %d calls", wrong, calls);
    if (!vendor && wrong != 0) c.fail("C holds cuBLAS's wrong value, but cuBLAS was the checker");
    int64_t count = -1;
    if (gpk_stage_trace(ctx, nullptr, 0, &count) != GPK_SUCCESS || count != 0)
        c.fail("a call that failed validation left a trace of %" PRId64 " events", count);
    if (pinned) cudaFreeHost(pa), cudaFreeHost(pb), cudaFreeHost(pc);
}

}  // namespace

int main(int argc, char **argv) {
    Suite suite("test_validation", argc, argv);
    if (!suite.cuda()) {
        host_backend(suite);
    } else {
        pi_failure_writes(suite, false);
        pi_failure_writes(suite, true);
        for (const char *memory : {"pageable", "pinned", "device"})
            for (bool vendor : {true, false}) gemm_caught(suite, vendor, memory);
    }
    return suite.finish();
}
