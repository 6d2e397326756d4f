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
#include "harness.hpp"

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

}  // namespace

int main(int argc, char **argv) {
    Suite suite("test_validation", argc, argv);
    if (!suite.cuda()) {
        host_backend(suite);
    } else {
        pi_failure_writes(suite, false);
        pi_failure_writes(suite, true);
    }
    return suite.finish();
}
