// gpk_pi conformance: every variant (and "auto"): the result's fields agree with
// each other, the estimate is statistically sound, and hits depend only on
// (samples, seed) within the Philox family -- across variants and, on the CUDA
// backend, against a host-backend context.
#include "harness.hpp"

#include <algorithm>
#include <iterator>

namespace {

using namespace gpkt;

const double kPi = 3.14159265358979323846;

const uint64_t kSamples[] = {1, 2, 3, 1000, 1000000, 1000001, 10000000};
const uint64_t kSeeds[] = {0, 42, 0x9E3779B97F4A7C15ull};

// Runs one gpk_pi on `ctx`; `device_result` puts the result struct in device memory.
bool call_pi(Case &c, Suite &suite, gpk_context *ctx, const std::string &variant, uint64_t samples, uint64_t seed,
             bool device_result, gpk_pi_result *out) {
    gpk_pi_result r;
    std::memset(&r, 0xA5, sizeof r);
    const gpk_pi_result before = r;
    DeviceArray dr;
    void *dst = &r;
    if (device_result) {
        if (!(dr.allocate(sizeof r) && dr.upload(&r))) {
            c.fail("device result: %s", dr.error());
            return false;
        }
        dst = dr.get();
    }
    const gpk_status st = gpk_pi(ctx, samples, seed, static_cast<gpk_pi_result *>(dst));
    if (device_result) {
        if (!suite.sync(c)) return false;
        if (!dr.download(&r)) {
            c.fail("copying the result back: %s", dr.error());
            return false;
        }
    }
    // Every dtype is valid for pi: the support map keys on -1.
    const bool ok = ctx == suite.ctx() ? suite.accept(c, st, GPK_OP_PI, variant, -1, "gpk_pi")
                                       : c.expect(st, GPK_SUCCESS, "gpk_pi on the host backend");
    if (!ok) {
        if (std::memcmp(&r, &before, sizeof r) != 0) c.fail("result was written by a call that failed");
        return false;
    }
    *out = r;
    return true;
}

// The fields of one result: consistent with each other and, for many samples,
// with pi.
void check_fields(Case &c, const gpk_pi_result &r, uint64_t samples) {
    if (r.samples != samples) c.fail("result.samples = %" PRIu64 ", expected %" PRIu64, r.samples, samples);
    if (r.hits > samples) c.fail("result.hits = %" PRIu64 " exceeds samples %" PRIu64, r.hits, samples);
    const double p = static_cast<double>(r.hits) / static_cast<double>(samples);
    const double estimate = 4.0 * p;
    const double std_error = 4.0 * std::sqrt(p * (1.0 - p) / static_cast<double>(samples));
    if (!(std::fabs(r.estimate - estimate) <= 1e-15 * 4.0))
        c.fail("result.estimate = %.17g, expected 4 * hits / samples = %.17g", r.estimate, estimate);
    if (!(std::fabs(r.std_error - std_error) <= 1e-12 * std_error + 1e-300))
        c.fail("result.std_error = %.17g, expected 4 * sqrt(p(1-p)/samples) = %.17g", r.std_error, std_error);
    if (samples >= 1000000 && !(std::fabs(r.estimate - kPi) <= 5.0 * std_error))
        c.fail("estimate %.9f is %.2f standard errors from pi (hits %" PRIu64 ")", r.estimate,
               std::fabs(r.estimate - kPi) / std_error, r.hits);
}

}  // namespace

int main(int argc, char **argv) {
    Suite suite("test_pi", argc, argv);
    const std::vector<std::string> variants = suite.variants(GPK_OP_PI);
    // The vendor variant (cuRAND's own sequence) and the lecture's (per-thread
    // XORWOW states) are families of their own, each consistent with itself; every
    // other variant, and the host backend, must agree on hits.
    auto own_family = [](const std::string &v) { return v == "curand_thrust" || v == "lecture"; };
    gpk_context *host = suite.cuda() ? suite.open(GPK_BACKEND_HOST) : nullptr;

    // hits of the Philox family per (samples, seed), from the first variant that
    // computed them (on CUDA: the host context).
    std::map<std::pair<uint64_t, uint64_t>, std::pair<uint64_t, std::string>> family;
    std::map<std::tuple<std::string, uint64_t, uint64_t>, uint64_t> own_hits;

    for (uint64_t seed : kSeeds) {
        for (uint64_t samples : kSamples) {
            const auto key = std::make_pair(samples, seed);
            if (host != nullptr) {
                Case c(suite, format("pi samples=%" PRIu64 " seed=%" PRIu64 " host-backend reference", samples, seed));
                gpk_pi_result r;
                if (call_pi(c, suite, host, "host", samples, seed, false, &r)) {
                    check_fields(c, r, samples);
                    family[key] = {r.hits, "the host backend"};
                }
            }
            for (const std::string &variant : variants) {
                for (bool device_result : suite.cuda() ? std::vector<bool>{false, true} : std::vector<bool>{false}) {
                    Case c(suite, format("pi samples=%" PRIu64 " seed=%" PRIu64 " variant=%s result=%s", samples, seed,
                                         variant.c_str(), device_result ? "device" : "host"));
                    if (!suite.select(c, GPK_OP_PI, variant)) continue;
                    gpk_pi_result r;
                    if (!call_pi(c, suite, suite.ctx(), variant, samples, seed, device_result, &r)) continue;
                    check_fields(c, r, samples);
                    // Same call, same answer.
                    gpk_pi_result again;
                    if (call_pi(c, suite, suite.ctx(), variant, samples, seed, device_result, &again) &&
                        std::memcmp(&r, &again, sizeof r) != 0)
                        c.fail("a second identical call gave hits %" PRIu64 " instead of %" PRIu64, again.hits, r.hits);
                    if (own_family(variant)) {
                        const auto own_key = std::make_tuple(variant, samples, seed);
                        const auto it = own_hits.find(own_key);
                        if (it == own_hits.end())
                            own_hits[own_key] = r.hits;
                        else if (it->second != r.hits)
                            c.fail("hits %" PRIu64 ", but %" PRIu64 " with the result in %s memory", r.hits,
                                   it->second, device_result ? "host" : "device");
                        continue;
                    }
                    const auto it = family.find(key);
                    if (it == family.end())
                        family[key] = {r.hits, "variant " + variant};
                    else if (it->second.first != r.hits)
                        c.fail("hits %" PRIu64 ", but %s gave %" PRIu64 " for the same samples and seed", r.hits,
                               it->second.second.c_str(), it->second.first);
                }
            }
        }
    }

    // Sample i comes from a fixed counter, so one more sample adds 0 or 1 hit.
    for (uint64_t seed : kSeeds) {
        const std::pair<uint64_t, uint64_t> steps[] = {{1, 2}, {2, 3}, {1000000, 1000001}};
        for (const auto &step : steps) {
            Case c(suite, format("pi prefix samples=%" PRIu64 "->%" PRIu64 " seed=%" PRIu64, step.first, step.second, seed));
            const auto lo = family.find({step.first, seed}), hi = family.find({step.second, seed});
            if (lo == family.end() || hi == family.end()) {
                c.fail("no Philox-family result to compare (an earlier case failed)");
                continue;
            }
            if (hi->second.first < lo->second.first || hi->second.first > lo->second.first + 1)
                c.fail("hits went from %" PRIu64 " to %" PRIu64 " by adding one sample", lo->second.first,
                       hi->second.first);
        }
    }
    // Different seeds draw different points.
    {
        Case c(suite, "pi samples=1000000 distinct seeds");
        std::vector<uint64_t> hits;
        for (uint64_t seed : kSeeds) {
            const auto it = family.find({1000000, seed});
            if (it != family.end()) hits.push_back(it->second.first);
        }
        std::sort(hits.begin(), hits.end());
        if (hits.size() != std::size(kSeeds))
            c.fail("missing results (an earlier case failed)");
        else if (std::adjacent_find(hits.begin(), hits.end()) != hits.end())
            c.fail("two of the seeds 0, 42, 0x9E3779B97F4A7C15 gave the same hits for 10^6 samples");
    }
    for (const std::string &variant : variants) {
        if (!own_family(variant)) continue;
        Case c(suite, format("pi samples=1000000 distinct seeds variant=%s", variant.c_str()));
        std::vector<uint64_t> hits;
        for (uint64_t seed : kSeeds) {
            const auto it = own_hits.find(std::make_tuple(variant, uint64_t(1000000), seed));
            if (it != own_hits.end()) hits.push_back(it->second);
        }
        std::sort(hits.begin(), hits.end());
        if (hits.size() == std::size(kSeeds) && std::adjacent_find(hits.begin(), hits.end()) != hits.end())
            c.fail("two seeds gave the same hits for 10^6 samples");
    }

    // On the GPU: a request past 2^33 samples (several launches, and pair counters
    // that cross a 2^32 boundary) gives the same hits in every Philox-family variant.
    if (suite.cuda() && !suite.quick()) {
        const uint64_t samples = (uint64_t(1) << 33) + 12345, seed = 7;
        uint64_t first_hits = 0;
        std::string first;
        for (const std::string &variant : variants) {
            if (own_family(variant) || variant == "auto") continue;
            Case c(suite, format("pi samples=2^33+12345 seed=7 variant=%s", variant.c_str()));
            if (!suite.select(c, GPK_OP_PI, variant)) continue;
            gpk_pi_result r;
            if (!call_pi(c, suite, suite.ctx(), variant, samples, seed, false, &r)) continue;
            check_fields(c, r, samples);
            if (first.empty())
                first = variant, first_hits = r.hits;
            else if (r.hits != first_hits)
                c.fail("hits %" PRIu64 ", but %s gave %" PRIu64, r.hits, first.c_str(), first_hits);
        }
    }

    gpk_destroy(host);
    return suite.finish();
}
