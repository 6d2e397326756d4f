// gpk-pi: estimates pi with gpk_pi and says how far the estimate may be trusted.
//
// Runs wherever libgpk does: on a machine without a GPU, "auto" falls back to the
// host backend (with fewer default samples, so that it stays quick), and the
// output always names the backend that did the work.
//
// --replicates R repeats the call with seeds seed, seed + 1, ..., seed + R - 1 and
// estimates the error from the spread of the R estimates. For pseudo-random variants
// that agrees with the binomial std_error; for the quasi-Monte Carlo variant
// ("sobol"), whose points are not independent, the binomial figure overstates the
// error by orders of magnitude, and the replicates (independent random digital
// shifts of the sequence) are the honest figure.
//
// --mpi runs it as one rank of an MPI job. That is the separate executable
// gpk-pi-mpi (apps/pi/mpi.cpp), built when an MPI implementation is found, so that
// this one does not depend on MPI: gpk-pi --mpi becomes gpk-pi-mpi in place.
// --gpus N becomes gpk-pi-gpus (apps/pi/gpus.cpp) the same way: one process
// driving N GPUs of the node, one thread each, with no MPI launcher.
#include "gpk/gpk.h"

#include "pi_app.hpp"

#include "../common/cli.hpp"
#include "../common/gpus.hpp"
#include "../common/json.hpp"
#include "../common/ladders.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

using namespace gpk_pi_app;

struct Report {
    int backend;
    std::string device;  // GPU name, or the CPU for the host backend
    std::string variant;
    uint64_t seed;
    gpk_pi_result result;  // of the first call, seed `seed`
    double seconds;        // all calls together
    uint64_t replicates;   // calls made when > 1; 0 when replicates are off
    double replicate_mean;       // mean of the calls' estimates
    double replicate_std_error;  // sample stddev of the estimates / sqrt(replicates)
};

uint64_t samples_drawn(const Report &r) { return r.result.samples * std::max<uint64_t>(r.replicates, 1); }

void print_text(const Report &r) {
    std::printf("backend     %s (%s)\n", gpk_app::backend_name(r.backend), r.device.c_str());
    std::printf("variant     %s\n", r.variant.c_str());
    print_estimate(r.result, r.seed);
    if (r.replicates > 1) {
        const double rse = r.replicate_std_error;
        const double rdev = std::fabs(r.replicate_mean - kPi);
        std::printf("replicates  %llu (seeds %llu..%llu; the lines above are the first)\n",
                    static_cast<unsigned long long>(r.replicates), static_cast<unsigned long long>(r.seed),
                    static_cast<unsigned long long>(r.seed + (r.replicates - 1)));
        std::printf("estimate (%llu replicates) %.10f +/- %.3g (from the spread of %llu independent replicates)\n",
                    static_cast<unsigned long long>(r.replicates), r.replicate_mean, rse,
                    static_cast<unsigned long long>(r.replicates));
        if (rse > 0)
            std::printf("|mean - pi| %.3g = %.2f replicate standard errors\n", rdev, rdev / rse);
        else
            std::printf("|mean - pi| %.3g (the replicates agree exactly)\n", rdev);
    }
    std::printf("elapsed     %.6f s (%.4g samples/s)\n", r.seconds,
                r.seconds > 0 ? static_cast<double>(samples_drawn(r)) / r.seconds : 0.0);
}

void print_json(const Report &r) {
    gpk_app::JsonWriter json;
    json.begin_object()
        .field("backend", gpk_app::backend_name(r.backend))
        .field("device", r.device)
        .field("variant", r.variant);
    estimate_fields(json, r.result, r.seed);
    json.field("replicates", r.replicates)
        .field("replicate_mean", r.replicates > 1 ? r.replicate_mean : NAN)
        .field("replicate_std_error", r.replicates > 1 ? r.replicate_std_error : NAN)
        .field("elapsed_s", r.seconds)
        .field("samples_per_s", r.seconds > 0 ? static_cast<double>(samples_drawn(r)) / r.seconds : NAN)
        .field("libgpk", gpk_app::library_version())
        .end_object();
    std::fputs(json.str().c_str(), stdout);
}

}  // namespace

int main(int argc, char **argv) {
#if defined(GPK_APP_MPI_TWIN)
    constexpr bool kMpiTwin = true;
#else
    constexpr bool kMpiTwin = false;
#endif
    if (const int rc = gpk_app::mpi_handover(kProg, argc, argv, kMpiTwin); rc >= 0) return rc;
    if (const int rc = gpk_app::gpus::handover(kProg, argc, argv); rc >= 0) return rc;
    Options opt;
    if (const int rc = parse(argc, argv, &opt, true)) return rc;
    if (opt.help) return 0;

    std::string error;
    const auto device = gpk_app::choose_device(opt.devices, 0, &error);
    if (!device) {
        std::fprintf(stderr, "%s: %s\n", kProg, error.c_str());
        return 2;
    }
    gpk_context *ctx = nullptr;
    gpk_status st = gpk_create(&ctx, opt.backend, device->device);
    if (st != GPK_SUCCESS) {
        gpk_app::report_failure(kProg, "gpk_create", st, nullptr);
        return 1;
    }

    Report report{};
    report.seed = opt.seed;
    report.variant = opt.variant.empty() ? "auto" : opt.variant;
    int exit_code = 1;
    do {
        if ((st = gpk_get_backend(ctx, &report.backend)) != GPK_SUCCESS) {
            gpk_app::report_failure(kProg, "gpk_get_backend", st, ctx);
            break;
        }
        const bool cuda = report.backend == GPK_BACKEND_CUDA;
        report.device = cuda ? gpk_app::cuda_device_name(device->device) + ", device " +
                                   std::to_string(device->device)
                             : gpk_app::host_cpu_description();
        if (const std::string problem =
                opt.variant.empty() ? "" : gpk_app::variant_problem(ctx, report.backend, GPK_OP_PI, opt.variant);
            !problem.empty()) {
            std::fprintf(stderr, "%s: --variant %s\n", kProg, problem.c_str());
            exit_code = 2;
            break;
        }
        if (!opt.variant.empty() && (st = gpk_set_variant(ctx, GPK_OP_PI, opt.variant.c_str())) != GPK_SUCCESS) {
            gpk_app::report_failure(kProg, "gpk_set_variant", st, ctx);
            break;
        }
        const uint64_t samples = opt.samples ? opt.samples : default_samples(report.backend);

        // Replicate i uses seed + i (wrapping past 2^64 - 1): an independent stream for
        // the pseudo-random variants, an independent digital shift for "sobol". The
        // mean and variance are accumulated with Welford's update.
        const uint64_t calls = opt.replicates > 1 ? opt.replicates : 1;
        double mean = 0, m2 = 0;
        const auto start = std::chrono::steady_clock::now();
        for (uint64_t i = 0; i < calls && st == GPK_SUCCESS; ++i) {
            gpk_pi_result r{};
            st = gpk_pi(ctx, samples, opt.seed + i, &r);
            if (st != GPK_SUCCESS) break;
            if (i == 0) report.result = r;
            const double delta = r.estimate - mean;
            mean += delta / static_cast<double>(i + 1);
            m2 += delta * (r.estimate - mean);
        }
        report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (st != GPK_SUCCESS) {
            gpk_app::report_failure(kProg, "gpk_pi", st, ctx);
            break;
        }
        if (calls > 1) {
            const double r = static_cast<double>(calls);
            report.replicates = calls;
            report.replicate_mean = mean;
            report.replicate_std_error = std::sqrt(m2 / (r - 1) / r);
        }
        if (opt.json)
            print_json(report);
        else
            print_text(report);
        exit_code = 0;
    } while (false);

    gpk_destroy(ctx);
    return exit_code;
}
