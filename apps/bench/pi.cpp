// pi: Monte Carlo pi. The library's Philox variants share one stream, so their hits
// must be identical; the vendor's cuRAND stream, the lecture's per-thread XORWOW
// states and the quasi-random Sobol points are families of their own and are only
// held to the statistics (which the Sobol points meet with room to spare: the
// binomial std_error overstates their error). On CUDA every row is also measured
// against a reference row timed in the same run, the simple fused kernel of the
// cuRAND device API (ceilings.cu): "vs simple fused".
#include "bench.hpp"
#include "ceilings.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

namespace gpk_bench {
namespace {

constexpr double kPi = 3.14159265358979323846;
// A correct estimator lands beyond 6 standard errors about once in 5e8 runs.
constexpr double kMaxStdErrors = 6.0;

class PiCase final : public Case {
public:
    PiCase(const Env &env, uint64_t samples, uint64_t seed) : env_(env), samples_(samples), seed_(seed) {}

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

    // "simple fused (reference)": the yardstick of the pi ladder, the simple fused
    // kernel of the cuRAND device API (Philox, curand_uniform4, a block reduction,
    // one atomic per block; about 550 G samples/s on an H100), not a library variant. Its hits are its own
    // stream, held to the statistics only. It draws samples rounded up to whole
    // calls per thread, and its G samples/s count what it drew (Ceiling::work).
    // Each call sets the device counter to 0 first, which is timed with it.
    std::vector<Ceiling> ceilings() override {
        if (!env_.cuda) return {};
        PiReferenceShape shape;
        // An error here is reported by setup(), inside the harness's try.
        const cudaError_t shaped = pi_reference_shape(env_.device, samples_, &shape);
        Ceiling reference{
            "simple fused (reference)",
            [this, shape](cudaStream_t s) {
                check_cuda(launch_pi_reference(shape, seed_, static_cast<unsigned long long *>(ref_hits_->data()), s),
                           "simple fused reference");
            },
            [this, shape] { return check_reference(shape.drawn); },
        };
        // The counter, allocated once and poisoned (all ones: more hits than
        // points), so that a launch that did not run cannot pass.
        reference.setup = [this, shaped] {
            check_cuda(shaped, "simple fused reference: launch shape");
            if (!ref_hits_) ref_hits_ = std::make_unique<Buffer>(env_, sizeof(unsigned long long), Place::kDevice);
            ref_hits_->poison();
        };
        reference.work = double(shape.drawn);
        return {reference};
    }
    Yardstick yardstick() const override {
        return {"simple fused", "simple fused reference", "ratio_to_simple_fused"};
    }

private:
    // The reference's hits, of `drawn` points, within kMaxStdErrors of pi.
    Check check_reference(uint64_t drawn) {
        unsigned long long hits = 0;
        ref_hits_->download(&hits);
        char text[160];
        if (drawn == 0 || hits > drawn) {
            std::snprintf(text, sizeof text, "hits %llu of %llu points drawn", hits,
                          static_cast<unsigned long long>(drawn));
            return {false, text};
        }
        const double n = double(drawn), p = double(hits) / n;
        const double std_error = 4.0 * std::sqrt(p * (1.0 - p) / n);
        // Every thread draws points: no hits, or all, is no estimate of pi.
        const double z = std_error > 0 ? std::fabs(4.0 * p - kPi) / std_error : std::numeric_limits<double>::infinity();
        std::snprintf(text, sizeof text, "hits %llu of %llu drawn (own stream), %.2f std errors from pi", hits,
                      static_cast<unsigned long long>(drawn), z);
        return {z <= kMaxStdErrors, text};
    }

    const Env &env_;
    uint64_t samples_, seed_;
    std::unique_ptr<Buffer> ref_hits_;  // the reference's counter, device memory
    gpk_pi_result result_{};
    bool family_hits_ = false;
    bool own_family_ = false;
    uint64_t philox_hits_ = 0;
};

}  // namespace

std::unique_ptr<Case> make_pi_case(const Env &env, uint64_t samples, uint64_t seed) {
    return std::make_unique<PiCase>(env, samples, seed);
}

}  // namespace gpk_bench
