// pi: Monte Carlo pi. The library's Philox variants share one stream, so their hits
// must be identical; the vendor's cuRAND stream, the lecture's per-thread XORWOW
// states and the quasi-random Sobol points are families of their own and are only
// held to the statistics (which the Sobol points meet with room to spare: the
// binomial std_error overstates their error).
#include "bench.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>

namespace gpk_bench {
namespace {

constexpr double kPi = 3.14159265358979323846;
// A correct estimator lands beyond 6 standard errors about once in 5e8 runs.
constexpr double kMaxStdErrors = 6.0;

class PiCase final : public Case {
public:
    PiCase(uint64_t samples, uint64_t seed) : samples_(samples), seed_(seed) {}

    int op() const override { return GPK_OP_PI; }
    const char *op_name() const override { return "pi"; }
    std::vector<std::pair<const char *, uint64_t>> sizes() const override { return {{"samples", samples_}}; }
    std::string shape_note() const override { return "seed " + std::to_string(seed_); }
    double work() const override { return double(samples_); }
    double unit_scale() const override { return 1e9; }
    const char *unit() const override { return "Gsamples/s"; }

    void prepare() override {}
    void poison() override { std::memset(&result_, 0xFF, sizeof result_); }

    // gpk_pi is synchronous with its result in host memory: the time includes
    // bringing the hits back, which is what a caller waits for.
    gpk_status call(gpk_context *ctx) override { return gpk_pi(ctx, samples_, seed_, &result_); }

    void keep_reference() override {}
    bool has_reference() const override { return true; }
    gpk_status host_reference(gpk_context *) override { return GPK_SUCCESS; }

    void set_variant(const std::string &name) override {
        own_family_ = name == "curand_thrust" || name == "lecture" || name == "sobol";
    }

    Check check(bool vendor) override {
        char text[160];
        if (result_.samples != samples_) {
            std::snprintf(text, sizeof text, "drew %llu samples, asked for %llu",
                          static_cast<unsigned long long>(result_.samples),
                          static_cast<unsigned long long>(samples_));
            return {false, text};
        }
        const double z = result_.std_error > 0 ? std::fabs(result_.estimate - kPi) / result_.std_error : 0.0;
        const bool plausible = z <= kMaxStdErrors;  // NaN fails
        if (vendor || own_family_) {
            std::snprintf(text, sizeof text, "%.2f std errors from pi", z);
            return {plausible, text};
        }
        if (!family_hits_) {
            family_hits_ = true;
            philox_hits_ = result_.hits;
            std::snprintf(text, sizeof text, "hits %llu (Philox reference), %.2f std errors from pi",
                          static_cast<unsigned long long>(result_.hits), z);
            return {plausible, text};
        }
        if (result_.hits != philox_hits_) {
            std::snprintf(text, sizeof text, "hits %llu, Philox reference %llu",
                          static_cast<unsigned long long>(result_.hits),
                          static_cast<unsigned long long>(philox_hits_));
            return {false, text};
        }
        std::snprintf(text, sizeof text, "hits identical, %.2f std errors from pi", z);
        return {plausible, text};
    }

private:
    uint64_t samples_, seed_;
    gpk_pi_result result_{};
    bool family_hits_ = false;
    bool own_family_ = false;
    uint64_t philox_hits_ = 0;
};

}  // namespace

std::unique_ptr<Case> make_pi_case(const Env &, uint64_t samples, uint64_t seed) {
    return std::make_unique<PiCase>(samples, seed);
}

}  // namespace gpk_bench
