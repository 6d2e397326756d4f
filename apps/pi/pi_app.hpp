// What gpk-pi and its MPI build, gpk-pi-mpi, share: the options and the lines that
// report an estimate, so that both print the same figures the same way.
#pragma once

#include "gpk/gpk.h"

#include "../common/json.hpp"

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace gpk_pi_app {

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
    // --device N or --devices LIST; empty: GPK_DEVICE, else the local rank (0 alone).
    std::vector<int> devices;
    std::string variant;  // empty: auto
    bool json = false;
    uint64_t replicates = 0;  // 0 or 1: off
    bool baseline = true;  // --mpi: also time rank 0 alone (--no-baseline: skip)
    bool help = false;     // usage printed; exit 0
};

// Reads the command line. Returns 0 when the options are good, else the exit status
// to use; messages (and the usage, for --help) go out only when `speak` is set.
int parse(int argc, char **argv, Options *opt, bool speak);

// The default sample count for a backend.
inline uint64_t default_samples(int backend) {
    return backend == GPK_BACKEND_CUDA ? kDefaultSamplesGpu : kDefaultSamplesHost;
}

// gpk_pi_result's figures for `hits` among `samples` points, by the formulas of the
// header, in the same operations as the library: the same doubles it would return.
gpk_pi_result pi_result(uint64_t samples, uint64_t hits);

// The estimate's lines of the text report: samples, hits, estimate, 99.9% interval,
// distance to pi.
void print_estimate(const gpk_pi_result &r, uint64_t seed);

// The same figures as JSON fields.
void estimate_fields(gpk_app::JsonWriter &json, const gpk_pi_result &r, uint64_t seed);

}  // namespace gpk_pi_app
