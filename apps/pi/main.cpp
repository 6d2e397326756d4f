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
#include "gpk/gpk.h"

#include "../common/cli.hpp"
#include "../common/json.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

constexpr const char *kProg = "gpk-pi";
constexpr double kPi = 3.14159265358979323846;
// Two-sided 99.9% quantile of the normal distribution: the estimate is a mean
// of ~10^8 Bernoulli draws, so its error is normal to far better than needed.
constexpr double kZ999 = 3.2905;
constexpr uint64_t kDefaultSamplesGpu = 100000000;  // 10^8
constexpr uint64_t kDefaultSamplesHost = 10000000;  // 10^7
constexpr uint64_t kDefaultSeed = 2026;
constexpr uint64_t kMaxReplicates = 1000000;

struct Options {
    uint64_t samples = 0;  // 0: the backend's default
    uint64_t seed = kDefaultSeed;
    int backend = GPK_BACKEND_AUTO;
    int device = 0;
    std::string variant;  // empty: auto
    bool json = false;
    uint64_t replicates = 0;  // 0 or 1: off
};

void usage(std::FILE *to) {
    std::fprintf(to,
                 "usage: %s [samples] [--seed S] [--backend auto|cuda|host] [--device N]\n"
                 "              [--variant NAME] [--replicates R] [--json]\n"
                 "  samples    points to draw, e.g. 100000000, 1e8 or 2^27\n"
                 "             (default 1e8 on a GPU, 1e7 on the host backend)\n"
                 "  --seed     generator key (default %llu); the same seed gives the same hits\n"
                 "  --backend  where to run (default auto: the GPU if there is one)\n"
                 "  --device   CUDA device index (default 0)\n"
                 "  --variant  a pi variant by name (gpk-bench --op pi lists them); default auto\n"
                 "  --replicates R\n"
                 "             R >= 2: also run with seeds S+1 .. S+R-1 and report the mean of the\n"
                 "             R estimates with the standard error from their spread (sample\n"
                 "             stddev / sqrt(R)); default 0, off. This is the honest error figure\n"
                 "             for quasi-Monte Carlo (--variant sobol: each seed is an independent\n"
                 "             random shift), whose binomial std_error overstates the error\n"
                 "  --json     print one JSON object instead of the report\n",
                 kProg, static_cast<unsigned long long>(kDefaultSeed));
}

// Returns 0 when the options are good, else the exit status to use.
int parse(int argc, char **argv, Options *opt) {
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        std::string value;
        bool missing = false;
        const auto bad = [&](const char *what) {
            std::fprintf(stderr, "%s: %s: '%s'\n", kProg, what, missing ? arg.c_str() : value.c_str());
            return 2;
        };
        if (arg == "-h" || arg == "--help") {
            usage(stdout);
            std::exit(0);
        } else if (arg == "--json") {
            opt->json = true;
        } else if (gpk_app::take_option(argc, argv, &i, "--seed", &value, &missing)) {
            const auto seed = gpk_app::parse_count(value);
            if (missing || !seed) return bad("--seed needs a non-negative integer");
            opt->seed = *seed;
        } else if (gpk_app::take_option(argc, argv, &i, "--backend", &value, &missing)) {
            opt->backend = missing ? -1 : gpk_app::parse_backend(value);
            if (opt->backend < 0) return bad("--backend must be auto, cuda or host");
        } else if (gpk_app::take_option(argc, argv, &i, "--device", &value, &missing)) {
            const auto device = gpk_app::parse_count(value);
            if (missing || !device || *device > 1024) return bad("--device needs a device index");
            opt->device = static_cast<int>(*device);
        } else if (gpk_app::take_option(argc, argv, &i, "--variant", &value, &missing)) {
            if (missing || value.empty()) return bad("--variant needs a name");
            opt->variant = value;
        } else if (gpk_app::take_option(argc, argv, &i, "--replicates", &value, &missing)) {
            const auto replicates = gpk_app::parse_count(value);
            if (missing || !replicates || *replicates > kMaxReplicates)
                return bad("--replicates needs a count up to 1000000");
            opt->replicates = *replicates;
        } else if (!arg.empty() && arg[0] != '-' && opt->samples == 0) {
            value = arg;
            const auto samples = gpk_app::parse_count(value);
            if (!samples || *samples == 0) return bad("samples must be a positive integer");
            opt->samples = *samples;
        } else {
            std::fprintf(stderr, "%s: unexpected argument '%s'\n", kProg, arg.c_str());
            usage(stderr);
            return 2;
        }
    }
    return 0;
}

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
    const double se = r.result.std_error;
    const double half = kZ999 * se;
    const double deviation = std::fabs(r.result.estimate - kPi);
    std::printf("backend     %s (%s)\n", gpk_app::backend_name(r.backend), r.device.c_str());
    std::printf("variant     %s\n", r.variant.c_str());
    std::printf("samples     %llu (seed %llu)\n", static_cast<unsigned long long>(r.result.samples),
                static_cast<unsigned long long>(r.seed));
    std::printf("hits        %llu\n", static_cast<unsigned long long>(r.result.hits));
    std::printf("estimate    %.10f +/- %.3g (one standard error)\n", r.result.estimate, se);
    std::printf("99.9%% CI    [%.10f, %.10f]\n", r.result.estimate - half, r.result.estimate + half);
    if (se > 0)
        std::printf("|est - pi|  %.3g = %.2f standard errors%s\n", deviation, deviation / se,
                    deviation > half ? "  (outside the 99.9% interval)" : "");
    else
        std::printf("|est - pi|  %.3g (no standard error: too few samples)\n", deviation);
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
    const double se = r.result.std_error;
    const double deviation = std::fabs(r.result.estimate - kPi);
    gpk_app::JsonWriter json;
    json.begin_object()
        .field("backend", gpk_app::backend_name(r.backend))
        .field("device", r.device)
        .field("variant", r.variant)
        .field("samples", r.result.samples)
        .field("seed", r.seed)
        .field("hits", r.result.hits)
        .field("estimate", r.result.estimate)
        .field("std_error", se)
        .field("ci999_low", r.result.estimate - kZ999 * se)
        .field("ci999_high", r.result.estimate + kZ999 * se)
        .field("abs_error", deviation)
        .field("error_in_std_errors", se > 0 ? deviation / se : NAN)
        .field("replicates", r.replicates)
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
    Options opt;
    if (const int rc = parse(argc, argv, &opt)) return rc;

    gpk_context *ctx = nullptr;
    gpk_status st = gpk_create(&ctx, opt.backend, opt.device);
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
        report.device = cuda ? gpk_app::cuda_device_name(opt.device) + ", device " + std::to_string(opt.device)
                             : gpk_app::host_cpu_description();
        if (!opt.variant.empty() && (st = gpk_set_variant(ctx, GPK_OP_PI, opt.variant.c_str())) != GPK_SUCCESS) {
            gpk_app::report_failure(kProg, "gpk_set_variant", st, ctx);
            break;
        }
        const uint64_t samples = opt.samples ? opt.samples : cuda ? kDefaultSamplesGpu : kDefaultSamplesHost;

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
