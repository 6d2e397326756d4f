#include "pi_app.hpp"

#include "../common/cli.hpp"

#include <cmath>

namespace gpk_pi_app {
namespace {

void usage(std::FILE *to) {
    std::fprintf(to,
                 "usage: %s [samples] [--seed S] [--backend auto|cuda|host] [--device N | --devices LIST]\n"
                 "              [--variant NAME] [--replicates R] [--json] [--mpi | --gpus N] [--no-baseline]\n"
                 "  samples    points to draw, e.g. 100000000, 1e8 or 2^27\n"
                 "             (default 1e8 on a GPU, 1e7 on the host backend)\n"
                 "  --seed     generator key, 0 to 2^64 - 1 (default %llu); the same seed gives the same\n"
                 "             hits\n"
                 "  --backend  where to run (default auto: the GPU if there is one)\n"
                 "  --device   CUDA device index (default: GPK_DEVICE if set, else 0); with --mpi,\n"
                 "             every rank's\n"
                 "  --devices  with --mpi: the GPUs of a node's ranks, e.g. 0,1,2,3; local rank r\n"
                 "             takes entry r mod the list's length (default: GPK_DEVICE, same\n"
                 "             syntax, if set; else local rank r takes GPU r)\n"
                 "  --variant  a pi variant by name (gpk-bench --op pi lists them); default auto\n"
                 "  --replicates R\n"
                 "             R >= 2: also run with seeds S+1 .. S+R-1 and report the mean of the\n"
                 "             R estimates with the standard error from their spread (sample\n"
                 "             stddev / sqrt(R)); default 0, off. This is the honest error figure\n"
                 "             for quasi-Monte Carlo (--variant sobol: each seed is an independent\n"
                 "             random shift), whose binomial std_error overstates the error\n"
                 "  --json     print one JSON object instead of the report\n"
                 "  --mpi      run as one rank of an MPI job (mpirun -np P %s --mpi ...): each rank\n"
                 "             draws its share of the samples with gpk_pi_range on its own GPU, and\n"
                 "             rank 0 reports the sum -- the same hits and estimate as one process --\n"
                 "             with each rank's throughput and the scaling efficiency against rank 0\n"
                 "             drawing every sample alone first (--no-baseline: skip that run)\n"
                 "  --gpus     the same split over N GPUs of this node in one process, one thread\n"
                 "             each, with no MPI launcher (--devices maps them)\n",
                 kProg, static_cast<unsigned long long>(kDefaultSeed), kProg);
}

}  // namespace

int parse(int argc, char **argv, Options *opt, bool speak) {
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        std::string value;
        bool missing = false;
        const auto bad = [&](const char *what) {
            if (speak) {
                if (missing)
                    std::fprintf(stderr, "%s: %s: the value is missing\n", kProg, what);
                else
                    std::fprintf(stderr, "%s: %s: '%s'\n", kProg, what, value.c_str());
            }
            return 2;
        };
        if (arg == "-h" || arg == "--help") {
            if (speak) usage(stdout);
            opt->help = true;
            return 0;
        } else if (arg == "--json") {
            opt->json = true;
        } else if (arg == "--mpi") {
            // The MPI twin's mode: the app hands over to the twin before parsing.
        } else if (arg == "--no-baseline") {
            opt->baseline = false;
        } else if (gpk_app::take_option(argc, argv, &i, "--seed", &value, &missing)) {
            // Any 64-bit seed, as gpk_pi takes it.
            const auto seed = missing ? std::nullopt : gpk_app::parse_seed(value);
            if (!seed) return bad("--seed needs an integer from 0 to 2^64 - 1");
            opt->seed = *seed;
        } else if (std::string error; gpk_app::take_placement(argc, argv, &i, &opt->backend, &opt->devices, &error)) {
            if (!error.empty()) {
                if (speak) std::fprintf(stderr, "%s: %s\n", kProg, error.c_str());
                return 2;
            }
        } else if (gpk_app::take_option(argc, argv, &i, "--variant", &value, &missing)) {
            if (missing || value.empty()) return bad("--variant needs a name");
            opt->variant = value;
        } else if (gpk_app::take_option(argc, argv, &i, "--replicates", &value, &missing)) {
            const auto replicates = missing ? std::nullopt : gpk_app::parse_count(value, kMaxReplicates);
            if (!replicates)
                return bad("--replicates needs a count up to 1000000");
            opt->replicates = *replicates;
        } else if (!arg.empty() && arg[0] != '-' && opt->samples == 0) {
            value = arg;
            const auto samples = gpk_app::parse_count(value);
            if (!samples || *samples == 0) return bad("samples must be a positive integer");
            opt->samples = *samples;
        } else {
            if (speak) {
                std::fprintf(stderr, "%s: unexpected argument '%s'\n", kProg, arg.c_str());
                usage(stderr);
            }
            return 2;
        }
    }
    return 0;
}

gpk_pi_result pi_result(uint64_t samples, uint64_t hits) {
    const double n = static_cast<double>(samples), p = static_cast<double>(hits) / n;
    return gpk_pi_result{4 * p, 4 * std::sqrt(p * (1 - p) / n), samples, hits};
}

void print_estimate(const gpk_pi_result &r, uint64_t seed) {
    const double se = r.std_error;
    const double half = kZ999 * se;
    const double deviation = std::fabs(r.estimate - kPi);
    std::printf("samples     %llu (seed %llu)\n", static_cast<unsigned long long>(r.samples),
                static_cast<unsigned long long>(seed));
    std::printf("hits        %llu\n", static_cast<unsigned long long>(r.hits));
    std::printf("estimate    %.10f +/- %.3g (one standard error)\n", r.estimate, se);
    std::printf("99.9%% CI    [%.10f, %.10f]\n", r.estimate - half, r.estimate + half);
    if (se > 0)
        std::printf("|est - pi|  %.3g = %.2f standard errors%s\n", deviation, deviation / se,
                    deviation > half ? "  (outside the 99.9% interval)" : "");
    else
        std::printf("|est - pi|  %.3g (no standard error: too few samples)\n", deviation);
}

void estimate_fields(gpk_app::JsonWriter &json, const gpk_pi_result &r, uint64_t seed) {
    const double se = r.std_error;
    const double deviation = std::fabs(r.estimate - kPi);
    json.field("samples", r.samples)
        .field("seed", seed)
        .field("hits", r.hits)
        .field("estimate", r.estimate)
        .field("std_error", se)
        .field("ci999_low", r.estimate - kZ999 * se)
        .field("ci999_high", r.estimate + kZ999 * se)
        .field("abs_error", deviation)
        .field("error_in_std_errors", se > 0 ? deviation / se : NAN);
}

}  // namespace gpk_pi_app
