// gpk_pi conformance: every variant (and "auto"): the result's fields agree with
// each other, the estimate is statistically sound, and hits depend only on
// (samples, seed) within the Philox family -- across variants and, on the CUDA
// backend, against a host-backend context. The Philox family's mapping (3 samples per
// Philox block, 21-bit cell midpoints) and the quasi-Monte Carlo variant "sobol" are
// each checked against a reference written here; "sobol" also for its error rate.
// gpk_pi_range: ranges that split [0, samples) add up to gpk_pi's hits in every
// variant, whatever residue mod 3 they start and end at, and a range anywhere in the
// 64-bit sequence counts what the definition puts there.
#include "../harness.hpp"

#include "../../libgpk/common/philox.hpp"

#include <algorithm>
#include <initializer_list>
#include <iterator>

namespace {

using namespace gpkt;

const double kPi = 3.14159265358979323846;

const uint64_t kSamples[] = {1, 2, 3, 1000, 1000000, 1000001, 10000000};
const uint64_t kSeeds[] = {0, 42, 0x9E3779B97F4A7C15ull};

// Runs one gpk_pi (range false: count samples from 0) or gpk_pi_range on `ctx`;
// `device_result` puts the result struct in device memory.
bool call_pi_or_range(Case &c, Suite &suite, gpk_context *ctx, const std::string &variant, bool range,
                      uint64_t first, uint64_t count, uint64_t seed, bool device_result, gpk_pi_result *out) {
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
    auto *result = static_cast<gpk_pi_result *>(dst);
    const gpk_status st = range ? gpk_pi_range(ctx, first, count, seed, result) : gpk_pi(ctx, count, seed, result);
    const char *call = range ? "gpk_pi_range" : "gpk_pi";
    if (device_result) {
        if (!suite.sync(c)) return false;
        if (!dr.download(&r)) {
            c.fail("copying the result back: %s", dr.error());
            return false;
        }
    }
    // Every dtype is valid for pi: the support map keys on -1.
    const bool ok = ctx == suite.ctx() ? suite.accept(c, st, GPK_OP_PI, variant, -1, call)
                                       : c.expect(st, GPK_SUCCESS, range ? "gpk_pi_range on the host backend"
                                                                         : "gpk_pi on the host backend");
    if (!ok) {
        if (std::memcmp(&r, &before, sizeof r) != 0) c.fail("result was written by a call that failed");
        return false;
    }
    *out = r;
    return true;
}

bool call_pi(Case &c, Suite &suite, gpk_context *ctx, const std::string &variant, uint64_t samples, uint64_t seed,
             bool device_result, gpk_pi_result *out) {
    return call_pi_or_range(c, suite, ctx, variant, false, 0, samples, seed, device_result, out);
}

bool call_range(Case &c, Suite &suite, const std::string &variant, uint64_t first, uint64_t count, uint64_t seed,
                bool device_result, gpk_pi_result *out) {
    return call_pi_or_range(c, suite, suite.ctx(), variant, true, first, count, seed, device_result, out);
}

// ---- a reference of the Philox family ---------------------------------------------
//
// Written from the definition in libgpk/common/philox.hpp, sharing no code with it:
// triple t = sample / 3 is Philox4x32-10 of counter (lo(t), hi(t), 0, 0) and key
// (lo(seed), hi(seed)); its words w0..w3 give the 21-bit coordinates (M = 2^21 - 1)
// c0 = w0 & M, c1 = w1 & M, c2 = w2 & M, c3 = w3 & M,
// c4 = ((w0 >> 21) | ((w1 >> 21) << 11)) & M, c5 = the same of w2 and w3;
// sample 3t is (c0, c1), 3t + 1 is (c2, c3), 3t + 2 is (c4, c5); a point is inside
// when its cell midpoint is: (2x + 1)^2 + (2y + 1)^2 < 2^44.

struct RefWords {
    uint32_t w[4];
};

// Philox4x32-10 as Salmon et al. define it: ten rounds of two 32x32->64-bit products
// and a key schedule bumped by the Weyl constants.
RefWords ref_philox(const uint32_t counter[4], const uint32_t key[2]) {
    uint32_t c[4] = {counter[0], counter[1], counter[2], counter[3]}, k0 = key[0], k1 = key[1];
    for (int round = 0; round < 10; ++round) {
        const uint64_t p0 = uint64_t(0xD2511F53u) * c[0], p1 = uint64_t(0xCD9E8D57u) * c[2];
        const uint32_t next[4] = {static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ k0, static_cast<uint32_t>(p1),
                                  static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ k1, static_cast<uint32_t>(p0)};
        std::memcpy(c, next, sizeof c);
        k0 += 0x9E3779B9u, k1 += 0xBB67AE85u;
    }
    return RefWords{{c[0], c[1], c[2], c[3]}};
}

bool ref_midpoint_inside(uint32_t x, uint32_t y) {
    const uint64_t a = 2 * uint64_t(x) + 1, b = 2 * uint64_t(y) + 1;
    return a * a + b * b < (uint64_t(1) << 44);
}

// The largest y (-1 if none) whose cell midpoint is inside for this x:
// (2x + 1)^2 + (2y + 1)^2 < 2^44.
int64_t last_inside_y(uint32_t x) {
    const uint64_t a = 2 * uint64_t(x) + 1, rest = (uint64_t(1) << 44) - a * a;  // (2y + 1)^2 < rest
    uint64_t b = static_cast<uint64_t>(std::sqrt(static_cast<double>(rest)));
    while (b > 0 && b * b >= rest) --b;
    while ((b + 1) * (b + 1) < rest) ++b;
    return (static_cast<int64_t>(b) - 1) / 2;  // the largest y with 2y + 1 <= b
}

// The walk of the cell tests over 21-bit coordinates: for `xs` values of x (0 up, the
// top down, then random), near(x, y) for each y within `band` cells of
// last_inside_y(x) and far(x, y) for one random y.
template <class Near, class Far>
void around_circle(uint32_t xs, uint64_t s, int band, Near near, Far far) {
    const uint32_t top = (uint32_t(1) << 21) - 1;
    for (uint32_t i = 0; i < xs; ++i) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        const uint32_t x = i < 1000 ? i : i < 2000 ? top - (i - 1000) : static_cast<uint32_t>(s) & top;
        const int64_t y = last_inside_y(x);
        for (int d = -band; d <= band; ++d)
            if (y + d >= 0 && y + d <= top) near(x, static_cast<uint32_t>(y + d));
        far(x, static_cast<uint32_t>(s >> 32) & top);
    }
}

bool ref_philox_inside(uint64_t sample, uint64_t seed) {
    const uint64_t t = sample / 3;
    const uint32_t counter[4] = {static_cast<uint32_t>(t), static_cast<uint32_t>(t >> 32), 0, 0};
    const uint32_t key[2] = {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)};
    const RefWords r = ref_philox(counter, key);
    const uint32_t m = (uint32_t(1) << 21) - 1;
    const uint32_t c[6] = {r.w[0] & m, r.w[1] & m, r.w[2] & m, r.w[3] & m,
                           ((r.w[0] >> 21) | ((r.w[1] >> 21) << 11)) & m,
                           ((r.w[2] >> 21) | ((r.w[3] >> 21) << 11)) & m};
    const unsigned k = static_cast<unsigned>(sample % 3);
    return ref_midpoint_inside(c[2 * k], c[2 * k + 1]);
}

// The hits of samples [first, first + count) of the Philox family, one sample at a
// time from the reference.
uint64_t ref_philox_hits(uint64_t first, uint64_t count, uint64_t seed) {
    uint64_t hits = 0;
    for (uint64_t i = 0; i < count; ++i) hits += ref_philox_inside(first + i, seed) ? 1 : 0;
    return hits;
}

// Where the mapping is checked sample by sample: seeds and first samples (near 2^63 and
// the last indices too, and across triple 2^32, where the counter's high word changes).
const uint64_t kRefSeeds[] = {0, 42, 0x9E3779B97F4A7C15ull, UINT64_MAX};
const uint64_t kTriple32 = uint64_t(3) << 32;  // sample 3 * 2^32 starts triple 2^32
const uint64_t kRefStarts[] = {0, 1000, kTriple32 - 151, (uint64_t(1) << 63) - 151, UINT64_MAX - 301};
const uint64_t kRefCount = 300;

// The sequence every Philox-family variant shares, pinned independently of the
// library's calls: Philox4x32-10 against the known-answer vectors of Random123 (the
// generator's reference implementation), the library's mapping of samples to points
// against the reference above, and the inside tests against their plain definitions,
// on points at the circle's edge and on random ones.
void definition(Suite &suite) {
    {
        Case c(suite, "Philox4x32-10 known-answer vectors");
        const struct {
            uint32_t counter[4], key[2], want[4];
        } kat[] = {
            {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}},
            {{~0u, ~0u, ~0u, ~0u}, {~0u, ~0u}, {0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}},
            {{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u},
             {0xa4093822u, 0x299f31d0u},
             {0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}},
        };
        for (const auto &t : kat) {
            const gpk::Philox4 r = gpk::philox4x32_10(
                gpk::Philox4{{t.counter[0], t.counter[1], t.counter[2], t.counter[3]}}, t.key[0], t.key[1]);
            const RefWords ref = ref_philox(t.counter, t.key);
            for (int i = 0; i < 4; ++i) {
                if (r.v[i] != t.want[i])
                    c.fail("counter %08x...: word %d is %08x, expected %08x", t.counter[0], i, r.v[i], t.want[i]);
                if (ref.w[i] != t.want[i])
                    c.fail("the test's reference, counter %08x...: word %d is %08x, expected %08x", t.counter[0], i,
                           ref.w[i], t.want[i]);
            }
        }
    }
    {
        // Sample by sample, and triple by triple as the kernels count them.
        Case c(suite, "Philox mapping: 3 samples per Philox block, 21-bit cell midpoints, against the reference");
        uint64_t wrong = 0;
        for (uint64_t seed : kRefSeeds)
            for (uint64_t first : kRefStarts)
                for (uint64_t s = first; s < first + kRefCount; ++s) {
                    const uint32_t got = gpk::pi_sample_inside(s, seed), want = ref_philox_inside(s, seed);
                    if (got != want && ++wrong <= 5)
                        c.fail("seed %" PRIu64 " sample %" PRIu64 ": inside %u, the reference says %u", seed, s, got,
                               want);
                    if (s % 3 != 0 || s > UINT64_MAX - 3) continue;
                    const uint32_t triple = gpk::pi_triple_hits(gpk::pi_triple(s / 3, seed));
                    const uint64_t triple_want = ref_philox_hits(s, 3, seed);
                    if (triple != triple_want && ++wrong <= 5)
                        c.fail("seed %" PRIu64 " triple %" PRIu64 ": %u hits, the reference says %" PRIu64, seed,
                               s / 3, triple, triple_want);
                }
        // The reference itself, against counts made once by a separate Python
        // implementation of the same definition.
        const struct {
            uint64_t first, count, seed, hits;
        } fixed[] = {{0, 10000, 42, 7795}, {(uint64_t(1) << 63) - 151, 300, UINT64_MAX, 229}};
        for (const auto &f : fixed)
            if (ref_philox_hits(f.first, f.count, f.seed) != f.hits)
                c.fail("the test's reference counts %" PRIu64 " hits in [%" PRIu64 ", +%" PRIu64 ") for seed %" PRIu64
                       ", not %" PRIu64,
                       ref_philox_hits(f.first, f.count, f.seed), f.first, f.count, f.seed, f.hits);
    }
    {
        // The library's split of a range into edge samples and whole triples, for
        // every start and end residue, ranges inside one triple and the last indices.
        Case c(suite, "Philox range split: edges and whole triples cover the range exactly");
        const uint64_t seed = 42;
        for (uint64_t base : {uint64_t(0), uint64_t(999), kTriple32 - 6, UINT64_MAX - 12}) {
            for (uint64_t a = 0; a <= 6; ++a) {
                for (uint64_t n = 0; a + n <= 12; ++n) {
                    const uint64_t first = base + a;
                    const gpk::PiTriples r = gpk::pi_split_range(first, n, seed);
                    // Whole triples lie inside the range, and leave at most 2 + 2 edge samples.
                    const uint64_t whole = r.end_triple >= r.first_triple ? r.end_triple - r.first_triple : 0;
                    const bool inside = whole == 0 || (r.first_triple * 3 >= first && r.end_triple * 3 <= first + n);
                    const bool shape = r.end_triple >= r.first_triple && inside && n - 3 * whole <= 4;
                    const uint64_t hits =
                        r.edge_hits + (inside ? ref_philox_hits(3 * r.first_triple, 3 * whole, seed) : 0);
                    if (!shape || hits != ref_philox_hits(first, n, seed))
                        c.fail("range [%" PRIu64 ", +%" PRIu64 "): triples [%" PRIu64 ", %" PRIu64 "), %u edge hits, "
                               "%" PRIu64 " in all, the reference counts %" PRIu64,
                               first, n, r.first_triple, r.end_triple, r.edge_hits, hits,
                               ref_philox_hits(first, n, seed));
                }
            }
        }
    }
    {
        Case c(suite, "pi_cell_inside is (2x+1)^2 + (2y+1)^2 < 2^44");
        const uint32_t top = (uint32_t(1) << 21) - 1;
        uint64_t wrong = 0, boundary = 0;
        auto check = [&](uint32_t x, uint32_t y) {
            const uint32_t want = ref_midpoint_inside(x, y) ? 1u : 0u;
            if (gpk::pi_cell_inside(x, y) != want && ++wrong <= 5)
                c.fail("pi_cell_inside(%u, %u) = %u, expected %u", x, y, gpk::pi_cell_inside(x, y), want);
        };
        // The largest y whose midpoint is inside for each x, and its neighbours.
        around_circle(
            200000, 0x2545F4914F6CDD1Dull, 2,
            [&](uint32_t x, uint32_t y) {
                ++boundary;
                check(x, y);
            },
            check);
        check(0, 0), check(top, top), check(0, top), check(top, 0);
        if (boundary < 500000) c.fail("only %" PRIu64 " points next to the circle were checked", boundary);
    }
    {
        // pi_cell_f32's promise: where it does not leave a point undecided, its answer is
        // the exact one; it leaves undecided every point within 2^21 of the circle (in
        // units of D = (x + 1/2)^2 + (y + 1/2)^2 - 2^42) that rounding could flip, and no
        // point 2^22 or more away (the rounding is at most 2^19). Checked on the points
        // next to the circle, bands of 64 cells across it, and random points.
        Case c(suite, "pi_cell_f32 decides exactly where it claims to");
        const uint32_t top = (uint32_t(1) << 21) - 1;
        uint64_t wrong = 0, undecided = 0, near_points = 0, random_undecided = 0;
        auto check = [&](uint32_t x, uint32_t y) -> bool {
            const float d = gpk::pi_cell_f32(x, y);
            // 2D = 2x(x + 1) + 2y(y + 1) + 1 - 2^43, exact in 64 bits.
            const int64_t twice_d = 2 * (int64_t(x) * (x + 1) + int64_t(y) * (y + 1)) + 1 - (int64_t(1) << 43);
            const bool open = gpk::pi_f32_undecided(d);
            if (open) {
                ++undecided;
                if ((twice_d >= 0 ? twice_d : -twice_d) >= (int64_t(1) << 23) && ++wrong <= 5)
                    c.fail("pi_cell_f32(%u, %u) = %.9g leaves undecided a point with D = %.1f", x, y, double(d),
                           double(twice_d) / 2);
            } else if (gpk::pi_f32_hit(d) != (ref_midpoint_inside(x, y) ? 1u : 0u) && ++wrong <= 5) {
                c.fail("pi_cell_f32(%u, %u) = %.9g decides %s, but the point is %s", x, y, double(d),
                       gpk::pi_f32_hit(d) ? "inside" : "outside", ref_midpoint_inside(x, y) ? "inside" : "outside");
            }
            return open;
        };
        around_circle(
            100000, 0x9E3779B97F4A7C15ull, 32,
            [&](uint32_t x, uint32_t y) {
                ++near_points;
                check(x, y);
            },
            [&](uint32_t x, uint32_t y) { random_undecided += check(x, y); });
        check(0, 0), check(top, top), check(0, top), check(top, 0);
        // Near the circle some points must be left to the exact test (or the check above
        // proves nothing about them); among random points, about 7.5e-7 are.
        if (undecided < 1000)
            c.fail("only %" PRIu64 " of %" PRIu64 " points next to the circle were left undecided", undecided,
                   near_points);
        if (random_undecided > 5) c.fail("%" PRIu64 " of 100000 random points were left undecided", random_undecided);
    }
    {
        Case c(suite, "pi_inside is x^2 + y^2 < 2^64");
        auto plain = [](uint32_t x, uint32_t y) {
            const unsigned __int128 s = static_cast<unsigned __int128>(uint64_t(x) * x) + uint64_t(y) * y;
            return s < (static_cast<unsigned __int128>(1) << 64) ? 1u : 0u;
        };
        uint64_t checked = 0, edge = 0, wrong = 0;
        auto check = [&](uint32_t x, uint32_t y) {
            ++checked;
            if (gpk::pi_inside(x, y) != plain(x, y) && ++wrong <= 5)
                c.fail("pi_inside(%u, %u) = %u, expected %u", x, y, gpk::pi_inside(x, y), plain(x, y));
        };
        uint64_t s = 0x9E3779B97F4A7C15ull;
        for (int i = 0; i < 200000; ++i) {
            s ^= s << 13, s ^= s >> 7, s ^= s << 17;
            const uint32_t x = i < 1000 ? uint32_t(i) : i < 2000 ? ~uint32_t(i - 1000) : uint32_t(s);
            // The largest y inside for this x, by integer square root, and its neighbours.
            const uint64_t rest = ~(uint64_t(x) * x);  // 2^64 - 1 - x^2
            uint64_t y = static_cast<uint64_t>(std::sqrt(static_cast<double>(rest)));
            while (y > 0 && static_cast<unsigned __int128>(y) * y > rest) --y;
            while (static_cast<unsigned __int128>(y + 1) * (y + 1) <= rest) ++y;
            for (int d = -2; d <= 2; ++d) {
                const int64_t yy = static_cast<int64_t>(y) + d;
                if (yy < 0 || yy > 0xFFFFFFFFll) continue;
                if (gpk::mulhi32(x, x) + gpk::mulhi32(uint32_t(yy), uint32_t(yy)) == 0xFFFFFFFFu) ++edge;
                check(x, static_cast<uint32_t>(yy));
            }
            check(x, static_cast<uint32_t>(s >> 32));
        }
        // The hardest points must be among them: those whose squares' high words sum
        // to 2^32 - 1, where only the carry out of the low words decides.
        if (edge < 1000) c.fail("only %" PRIu64 " of %" PRIu64 " points had the decisive carry", edge, checked);
    }
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

// ---- a reference of the "sobol" variant ------------------------------------------
//
// Written from the definition in libgpk/cuda/pi/06_sobol.cu, sharing no code with it:
// sample s is point s of the 2-D Sobol sequence in 32-bit fixed point, x = the 32
// leading bits of the base-2 radical inverse of s, y = the XOR of the direction
// numbers v_k (v_0 = 2^31, v_k = v_{k-1} ^ (v_{k-1} >> 1), v_k = 0 for k >= 32) over
// the set bits k of s; both XORed with the words of splitmix64(seed) (low word for
// x, high word for y); inside when x^2 + y^2 < 2^64.

struct SobolPoint {
    uint32_t x, y;
};

uint64_t ref_splitmix64(uint64_t seed) {
    uint64_t z = seed + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

SobolPoint ref_sobol_point(uint64_t s, uint64_t seed) {
    uint64_t reversed = 0;
    for (int k = 0; k < 64; ++k)
        if ((s >> k) & 1u) reversed |= uint64_t(1) << (63 - k);
    uint32_t y = 0, v = 0x80000000u;
    for (int k = 0; k < 32; ++k, v ^= v >> 1)
        if ((s >> k) & 1u) y ^= v;
    const uint64_t shift = ref_splitmix64(seed);
    return {static_cast<uint32_t>(reversed >> 32) ^ static_cast<uint32_t>(shift),
            y ^ static_cast<uint32_t>(shift >> 32)};
}

bool ref_inside(const SobolPoint &p) {
    const uint64_t xx = uint64_t(p.x) * p.x, yy = uint64_t(p.y) * p.y;
    return xx <= UINT64_MAX - yy;  // xx + yy <= 2^64 - 1
}

uint64_t ref_sobol_hits(uint64_t samples, uint64_t seed) {
    uint64_t hits = 0;
    for (uint64_t s = 0; s < samples; ++s) hits += ref_inside(ref_sobol_point(s, seed)) ? 1 : 0;
    return hits;
}

// ---- gpk_pi_range -----------------------------------------------------------------
//
// Any split of [0, samples) into ranges, uneven and with empty ranges, must give
// exactly gpk_pi's hits, in every variant (each within its own family); and a range
// anywhere in the 64-bit sequence must count the samples the definition puts there.

const uint64_t kTriple31 = uint64_t(3) << 31;  // sample 3 * 2^31 starts triple 2^31
const uint64_t kPow63 = uint64_t(1) << 63;

uint64_t ref_sobol_range_hits(uint64_t first, uint64_t count, uint64_t seed) {
    uint64_t hits = 0;
    for (uint64_t i = 0; i < count; ++i) hits += ref_inside(ref_sobol_point(first + i, seed)) ? 1 : 0;
    return hits;
}

// The figures of one range's result.
void check_range_fields(Case &c, const gpk_pi_result &r, uint64_t count) {
    if (count > 0) {
        check_fields(c, r, count);
        return;
    }
    if (r.samples != 0 || r.hits != 0)
        c.fail("empty range: samples %" PRIu64 ", hits %" PRIu64 ", expected 0 and 0", r.samples, r.hits);
    if (!std::isnan(r.estimate) || !std::isnan(r.std_error))
        c.fail("empty range: estimate %g, std_error %g, expected NaN and NaN", r.estimate, r.std_error);
}

// The ranks' split of an MPI code: `parts` ranges, the first samples % parts of them
// one sample longer.
std::vector<uint64_t> even_split(uint64_t samples, uint64_t parts) {
    std::vector<uint64_t> bounds = {0};
    for (uint64_t i = 0; i < parts; ++i) bounds.push_back(bounds.back() + samples / parts + (i < samples % parts));
    return bounds;
}

// Sums the hits of the ranges [bounds[i], bounds[i + 1]); false when a call failed.
bool split_hits(Case &c, Suite &suite, const std::string &variant, const std::vector<uint64_t> &bounds,
                uint64_t seed, bool device_result, uint64_t *hits) {
    uint64_t sum = 0, samples = 0;
    for (size_t i = 0; i + 1 < bounds.size(); ++i) {
        const uint64_t count = bounds[i + 1] - bounds[i];
        gpk_pi_result r;
        if (!call_range(c, suite, variant, bounds[i], count, seed, device_result, &r)) return false;
        check_range_fields(c, r, count);
        sum += r.hits, samples += r.samples;
    }
    if (samples != bounds.back() - bounds.front())
        c.fail("the ranges' samples add up to %" PRIu64 ", not %" PRIu64, samples, bounds.back() - bounds.front());
    *hits = sum;
    return true;
}

// Bounds from `first` to `end` whose first ranges start at every residue mod 3 with
// every length from 0 to 7: empty ranges, ranges inside one triple, ranges with one or
// two samples before and after whole triples (single samples step between residues);
// the last range takes the rest. Needs end - first >= 108.
std::vector<uint64_t> residue_split(uint64_t first, uint64_t end) {
    std::vector<uint64_t> bounds = {first};
    for (uint64_t length = 0; length <= 7; ++length) {
        for (uint64_t residue = 0; residue < 3; ++residue) {
            while (bounds.back() % 3 != residue) bounds.push_back(bounds.back() + 1);
            bounds.push_back(bounds.back() + length);
        }
    }
    bounds.push_back(end);
    return bounds;
}

std::string describe(const std::vector<uint64_t> &bounds) {
    std::string text;
    for (uint64_t b : bounds) text += (text.empty() ? "" : ",") + std::to_string(b);
    return "{" + text + "}";
}

void range_splits(Suite &suite, const std::vector<std::string> &variants) {
    // Uneven splits of a few sizes: single samples, starts and ends at every residue
    // mod 3 (a Philox block gives 3 samples), empty ranges (at the start, the middle
    // and the end), the ranks' split for 2, 3, 4 and 7 processes, and a random one.
    struct Split {
        uint64_t samples;
        std::vector<std::vector<uint64_t>> splits;
    };
    std::vector<Split> cases = {
        {1, {{0, 0, 1}, {0, 1, 1}}},
        {3, {{0, 1, 2, 3}, {0, 1, 1, 3}, {0, 0, 3, 3}, {0, 2, 3}}},
        {7, {{0, 1, 6, 7}, {0, 2, 5, 7}, {0, 4, 7}, {0, 1, 3, 4, 5, 7}}},
        {1000001,
         {{0, 1000001},
          {0, 1, 2, 7, 7, 333334, 500001, 500001, 999998, 1000001},
          residue_split(0, 1000001),
          {0, 0, 499999, 1000000, 1000001, 1000001},
          even_split(1000001, 2),
          even_split(1000001, 3),
          even_split(1000001, 4),
          even_split(1000001, 7)}},
    };
    {
        Rng rng(seed_of({1000001, 16}));
        std::vector<uint64_t> cuts = {0, 1000001};
        for (int i = 0; i < 15; ++i) cuts.push_back(static_cast<uint64_t>(rng.range(0, 1000001)));
        std::sort(cuts.begin(), cuts.end());
        cases.back().splits.push_back(cuts);
    }
    int rotation = 0;
    for (const std::string &variant : variants) {
        for (uint64_t seed : {uint64_t(42), uint64_t(0x9E3779B97F4A7C15ull)}) {
            for (const Split &split : cases) {
                gpk_pi_result whole;
                {
                    Case c(suite, format("pi_range whole samples=%" PRIu64 " seed=%" PRIu64 " variant=%s",
                                         split.samples, seed, variant.c_str()));
                    if (!suite.select(c, GPK_OP_PI, variant) ||
                        !call_pi(c, suite, suite.ctx(), variant, split.samples, seed, false, &whole))
                        continue;
                }
                for (const std::vector<uint64_t> &bounds : split.splits) {
                    // On the GPU every third split takes its results in device memory.
                    const bool device_result = suite.cuda() && ++rotation % 3 == 0;
                    Case c(suite, format("pi_range split %s seed=%" PRIu64 " variant=%s result=%s",
                                         describe(bounds).c_str(), seed, variant.c_str(),
                                         device_result ? "device" : "host"));
                    if (!suite.select(c, GPK_OP_PI, variant)) continue;
                    uint64_t hits = 0;
                    if (split_hits(c, suite, variant, bounds, seed, device_result, &hits) && hits != whole.hits)
                        c.fail("the ranges' hits add up to %" PRIu64 ", gpk_pi(%" PRIu64 ") gave %" PRIu64, hits,
                               split.samples, whole.hits);
                }
            }
        }
    }
}

// Ranges far into the sequence, counted by the reference: across the triple 2^31 and
// 2^32 boundaries (samples 3 * 2^31 and 3 * 2^32; at the second the counter's high
// word changes), past sample 2^63, and up to the last sample a range may hold
// (2^64 - 2); starting at each residue mod 3.
void range_anywhere(Suite &suite, const std::vector<std::string> &variants) {
    const uint64_t kCount = 2001;
    const uint64_t starts[] = {kTriple31 - 1000, kTriple32 - 1001, kTriple32 + 1, kPow63 - 999,
                               UINT64_MAX - kCount};
    const uint64_t seed = 0x5EED;
    for (const std::string &variant : variants) {
        for (uint64_t first : starts) {
            Case c(suite, format("pi_range first=%" PRIu64 " count=%" PRIu64 " variant=%s", first, kCount,
                                 variant.c_str()));
            if (!suite.select(c, GPK_OP_PI, variant)) continue;
            // The vendor variant reaches samples [0, 2^63) only (test below).
            if (variant == "curand_thrust" && first + kCount > kPow63) continue;
            gpk_pi_result r;
            if (!call_range(c, suite, variant, first, kCount, seed, false, &r)) continue;
            check_range_fields(c, r, kCount);
            if (variant == "sobol") {
                const uint64_t want = ref_sobol_range_hits(first, kCount, seed);
                if (r.hits != want) c.fail("hits %" PRIu64 ", the Sobol reference counts %" PRIu64, r.hits, want);
            } else if (variant != "curand_thrust" && variant != "lecture") {
                const uint64_t want = ref_philox_hits(first, kCount, seed);
                if (r.hits != want) c.fail("hits %" PRIu64 ", the reference counts %" PRIu64, r.hits, want);
            }
            // The same range in pieces starting and ending at every residue mod 3, the
            // piece [first + 999, first + 1002) crossing the boundary when the range
            // straddles one; then in short pieces of every length and start residue.
            const std::vector<std::vector<uint64_t>> splits = {
                {first, first + 1, first + 2, first + 999, first + 1002, first + 1002, first + 1333, first + kCount},
                residue_split(first, first + kCount)};
            for (const std::vector<uint64_t> &bounds : splits) {
                uint64_t hits = 0;
                if (split_hits(c, suite, variant, bounds, seed, false, &hits) && hits != r.hits)
                    c.fail("pieces %s add up to %" PRIu64 " hits, the whole range has %" PRIu64,
                           describe(bounds).c_str(), hits, r.hits);
            }
        }
        // Empty ranges anywhere, even at the last index: no work, 0 hits, NaN figures.
        for (uint64_t first : {uint64_t(0), uint64_t(1), uint64_t(2), kTriple32 + 1, kPow63 + 5, UINT64_MAX}) {
            Case c(suite, format("pi_range first=%" PRIu64 " count=0 variant=%s", first, variant.c_str()));
            gpk_pi_result r;
            if (suite.select(c, GPK_OP_PI, variant) && call_range(c, suite, variant, first, 0, seed, false, &r))
                check_range_fields(c, r, 0);
        }
    }
}

// Every Philox-family variant (the host backend's too) against the reference, through
// the API: kRefCount samples from each of kRefStarts for each of kRefSeeds, and the
// first whole triples of each range one at a time (on the GPU, each a launch of its
// own), so that no variant can change the mapping without failing here.
void range_reference(Suite &suite, const std::vector<std::string> &variants) {
    for (const std::string &variant : variants) {
        if (variant == "curand_thrust" || variant == "lecture" || variant == "sobol") continue;
        for (uint64_t seed : kRefSeeds) {
            for (uint64_t first : kRefStarts) {
                Case c(suite, format("pi_range first=%" PRIu64 " count=%" PRIu64 " seed=%" PRIu64
                                     " variant=%s against the reference",
                                     first, kRefCount, seed, variant.c_str()));
                if (!suite.select(c, GPK_OP_PI, variant)) continue;
                gpk_pi_result r;
                if (!call_range(c, suite, variant, first, kRefCount, seed, false, &r)) continue;
                check_range_fields(c, r, kRefCount);
                const uint64_t want = ref_philox_hits(first, kRefCount, seed);
                if (r.hits != want) c.fail("hits %" PRIu64 ", the reference counts %" PRIu64, r.hits, want);
                int wrong = 0;
                for (uint64_t t = first / 3 + 1; t < first / 3 + 17; ++t) {
                    if (!call_range(c, suite, variant, 3 * t, 3, seed, false, &r)) break;
                    const uint64_t triple = ref_philox_hits(3 * t, 3, seed);
                    if (r.hits != triple && ++wrong <= 3)
                        c.fail("triple %" PRIu64 " (samples from %" PRIu64 "): hits %" PRIu64
                               ", the reference counts %" PRIu64,
                               t, 3 * t, r.hits, triple);
                }
            }
        }
    }
}

// Argument rules: a range that ends past 2^64 - 1, a NULL result, a NULL context.
// The call fails, names the parameter, and writes nothing.
void range_errors(Suite &suite) {
    gpk_context *ctx = suite.ctx();
    gpk_set_variant(ctx, GPK_OP_PI, nullptr);
    const struct {
        uint64_t first, count;
    } past_end[] = {{UINT64_MAX - 1, 2}, {UINT64_MAX, 1}, {1, UINT64_MAX}, {kPow63, kPow63}};
    for (const auto &bad : past_end) {
        Case c(suite, format("pi_range first=%" PRIu64 " count=%" PRIu64 " ends past 2^64 - 1", bad.first, bad.count));
        gpk_pi_result r;
        std::memset(&r, 0x5A, sizeof r);
        const gpk_pi_result before = r;
        if (!c.expect(gpk_pi_range(ctx, bad.first, bad.count, 1, &r), GPK_ERROR_INVALID_ARGUMENT, "gpk_pi_range"))
            continue;
        const std::string msg = gpk_last_error(ctx);
        if (msg.find("count") == std::string::npos || msg.find("first_sample") == std::string::npos)
            c.fail("the message \"%s\" does not name both count and first_sample", msg.c_str());
        if (std::memcmp(&r, &before, sizeof r) != 0) c.fail("result was written by a call that failed");
    }
    {
        Case c(suite, "pi_range result=NULL");
        if (c.expect(gpk_pi_range(ctx, 0, 1000, 1, nullptr), GPK_ERROR_INVALID_ARGUMENT, "gpk_pi_range") &&
            std::string(gpk_last_error(ctx)).find("result") == std::string::npos)
            c.fail("the message \"%s\" does not name result", gpk_last_error(ctx));
    }
    {
        Case c(suite, "pi_range ctx=NULL");
        gpk_pi_result r;
        c.expect(gpk_pi_range(nullptr, 0, 1000, 1, &r), GPK_ERROR_INVALID_HANDLE, "gpk_pi_range(NULL)");
    }
    {
        // The last sample a range may hold, and an empty range ending there.
        Case c(suite, "pi_range first=2^64-2 count=1 and first=2^64-1 count=0 are valid");
        gpk_pi_result r;
        if (c.expect(gpk_pi_range(ctx, UINT64_MAX - 1, 1, 1, &r), GPK_SUCCESS, "gpk_pi_range(2^64 - 2, 1)") &&
            r.hits != ref_philox_hits(UINT64_MAX - 1, 1, 1))
            c.fail("hits %" PRIu64 " for the last sample, the definition says %" PRIu64, r.hits,
                   ref_philox_hits(UINT64_MAX - 1, 1, 1));
        c.expect(gpk_pi_range(ctx, UINT64_MAX, 0, 1, &r), GPK_SUCCESS, "gpk_pi_range(2^64 - 1, 0)");
    }
}

// CUDA only: the vendor variant's reach, and validation of ranges.
void range_cuda(Suite &suite, const std::vector<std::string> &variants) {
    gpk_context *ctx = suite.ctx();
    if (std::find(variants.begin(), variants.end(), "curand_thrust") != variants.end()) {
        Case c(suite, "pi_range variant=curand_thrust reaches sample 2^63 - 1 and no further");
        if (suite.select(c, GPK_OP_PI, "curand_thrust")) {
            gpk_pi_result r;
            c.expect(gpk_pi_range(ctx, kPow63 - 1001, 1001, 3, &r), GPK_SUCCESS, "gpk_pi_range(2^63 - 1001, 1001)");
            for (const uint64_t first : {kPow63 - 1000, kPow63, UINT64_MAX - 1001}) {
                std::memset(&r, 0x5A, sizeof r);
                const gpk_pi_result before = r;
                if (c.expect(gpk_pi_range(ctx, first, 1001, 3, &r), GPK_ERROR_NOT_SUPPORTED,
                             "gpk_pi_range past 2^63 with curand_thrust") &&
                    std::string(gpk_last_error(ctx)).find("curand_thrust") == std::string::npos)
                    c.fail("the message \"%s\" does not name the variant", gpk_last_error(ctx));
                if (std::memcmp(&r, &before, sizeof r) != 0) c.fail("result was written by a call that failed");
            }
        }
    }
    // Validation compares a range with another variant's count of the same range;
    // past 2^63, where the vendor variant cannot go, with another rung of ours.
    for (const char *variant : {"auto", "curand_thrust", "persistent"}) {
        if (std::find(variants.begin(), variants.end(), variant) == variants.end()) continue;
        for (const uint64_t first : {uint64_t(12345), kPow63 + 12345}) {
            if (std::string(variant) == "curand_thrust" && first > kPow63) continue;
            Case c(suite, format("pi_range validation first=%" PRIu64 " count=10^6 variant=%s", first, variant));
            gpk_pi_result r;
            if (!suite.select(c, GPK_OP_PI, variant) ||
                !c.expect(gpk_set_validation(ctx, 1), GPK_SUCCESS, "gpk_set_validation(1)"))
                continue;
            if (c.expect(gpk_pi_range(ctx, first, 1000000, 9, &r), GPK_SUCCESS, "gpk_pi_range with validation"))
                check_range_fields(c, r, 1000000);
            gpk_set_validation(ctx, 0);
        }
    }
    gpk_set_variant(ctx, GPK_OP_PI, nullptr);
}

}  // namespace

int main(int argc, char **argv) {
    Suite suite("test_pi", argc, argv);
    definition(suite);
    const std::vector<std::string> variants = suite.variants(GPK_OP_PI);
    // The vendor variant (cuRAND's own sequence), the lecture's (per-thread XORWOW
    // states) and the quasi-random "sobol" are families of their own, each consistent
    // with itself; every other variant, and the host backend, must agree on hits.
    // "sobol" draws quasi-random points, a family of its own too.
    auto own_family = [](const std::string &v) { return v == "curand_thrust" || v == "lecture" || v == "sobol"; };
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

    // On the GPU: a request past 3 * 2^32 samples (several launches, and triple
    // counters that cross a 2^32 boundary) gives the same hits in every Philox-family
    // variant.
    if (suite.cuda() && !suite.quick()) {
        const uint64_t samples = kTriple32 + 12345, seed = 7;
        uint64_t first_hits = 0;
        std::string first;
        for (const std::string &variant : variants) {
            if (own_family(variant) || variant == "auto") continue;
            Case c(suite, format("pi samples=3*2^32+12345 seed=7 variant=%s", variant.c_str()));
            if (!suite.select(c, GPK_OP_PI, variant)) continue;
            gpk_pi_result r;
            if (!call_pi(c, suite, suite.ctx(), variant, samples, seed, false, &r)) continue;
            check_fields(c, r, samples);
            if (first.empty())
                first = variant, first_hits = r.hits;
            else if (r.hits != first_hits)
                c.fail("hits %" PRIu64 ", but %s gave %" PRIu64, r.hits, first.c_str(), first_hits);
            // The same samples in uneven ranges with ends at every residue mod 3, one of
            // them empty and one crossing sample 3 * 2^32 (triple 2^32, where the
            // counter's high word changes) with two samples on each side.
            const std::vector<uint64_t> bounds = {
                0, (uint64_t(1) << 32) + 1, uint64_t(1) << 33, kTriple32 - 2, kTriple32 - 2, kTriple32 + 2, samples};
            uint64_t hits = 0;
            if (split_hits(c, suite, variant, bounds, seed, false, &hits) && hits != r.hits)
                c.fail("ranges %s add up to %" PRIu64 " hits, gpk_pi gave %" PRIu64, describe(bounds).c_str(), hits,
                       r.hits);
        }
    }

    // The Sobol reference itself, on every backend: the first 2^m points of a
    // digitally shifted (0, 2)-sequence form a (0, m, 2)-net, one point in each box
    // [i / 2^a, (i + 1) / 2^a) x [j / 2^(m-a), (j + 1) / 2^(m-a)).
    for (uint64_t seed : kSeeds) {
        Case c(suite, format("pi sobol reference seed=%" PRIu64 " is a (0,10,2)-net", seed));
        constexpr int m = 10;
        for (int a = 0; a <= m; ++a) {
            std::vector<int> boxes(size_t(1) << m, 0);
            for (uint64_t s = 0; s < (uint64_t(1) << m); ++s) {
                const SobolPoint p = ref_sobol_point(s, seed);
                const uint32_t i = a == 0 ? 0 : p.x >> (32 - a), j = a == m ? 0 : p.y >> (32 - (m - a));
                ++boxes[(size_t(i) << (m - a)) | j];
            }
            if (std::any_of(boxes.begin(), boxes.end(), [](int n) { return n != 1; }))
                c.fail("boxes of 2^-%d x 2^-%d do not hold one point each", a, m - a);
        }
    }

    const bool has_sobol = std::find(variants.begin(), variants.end(), "sobol") != variants.end();
    if (has_sobol) {
        // Hits equal to the reference's, point for point.
        for (uint64_t seed : kSeeds) {
            for (uint64_t samples : {uint64_t(1), uint64_t(17), uint64_t(1000), uint64_t(65536 + 3)}) {
                Case c(suite, format("pi sobol samples=%" PRIu64 " seed=%" PRIu64 " against the reference", samples,
                                     seed));
                if (!suite.select(c, GPK_OP_PI, "sobol")) continue;
                gpk_pi_result r;
                if (!call_pi(c, suite, suite.ctx(), "sobol", samples, seed, false, &r)) continue;
                check_fields(c, r, samples);
                const uint64_t want = ref_sobol_hits(samples, seed);
                if (r.hits != want) c.fail("hits %" PRIu64 ", the reference counts %" PRIu64, r.hits, want);
            }
        }
        // The error falls faster than Monte Carlo's: at 2^20 samples, the RMS error
        // over 16 digital shifts is far below the binomial standard error (about 1/30
        // of it for a correct sequence; a pseudo-random one sits near 1).
        {
            Case c(suite, "pi sobol samples=2^20 RMS error over 16 seeds < binomial std error / 3");
            const uint64_t samples = uint64_t(1) << 20;
            double sum_sq = 0;
            int runs = 0;
            if (suite.select(c, GPK_OP_PI, "sobol")) {
                for (uint64_t seed = 1; seed <= 16; ++seed) {
                    gpk_pi_result r;
                    if (!call_pi(c, suite, suite.ctx(), "sobol", samples, seed, false, &r)) break;
                    sum_sq += (r.estimate - kPi) * (r.estimate - kPi);
                    ++runs;
                }
            }
            if (runs == 16) {
                const double p = kPi / 4, binomial = 4 * std::sqrt(p * (1 - p) / static_cast<double>(samples));
                const double rms = std::sqrt(sum_sq / runs);
                if (!(rms < binomial / 3))
                    c.fail("RMS error %.3g over 16 seeds, binomial std error %.3g: not a low-discrepancy rate", rms,
                           binomial);
            }
        }
        // Past 2^32 samples (three launches, the last wrapping to index 0 mod 2^32) the
        // sequence repeats: sample s + 2^32 is sample s.
        if (!suite.quick()) {
            Case c(suite, "pi sobol samples=2^32+1000 seed=7 repeats with period 2^32");
            const uint64_t period = uint64_t(1) << 32, seed = 7;
            gpk_pi_result whole, more;
            if (suite.select(c, GPK_OP_PI, "sobol") &&
                call_pi(c, suite, suite.ctx(), "sobol", period, seed, false, &whole) &&
                call_pi(c, suite, suite.ctx(), "sobol", period + 1000, seed, false, &more)) {
                check_fields(c, whole, period);
                check_fields(c, more, period + 1000);
                const uint64_t tail = ref_sobol_hits(1000, seed);
                if (more.hits != whole.hits + tail)
                    c.fail("hits %" PRIu64 " for 2^32 + 1000 samples, but %" PRIu64 " for 2^32 and %" PRIu64
                           " for the first 1000",
                           more.hits, whole.hits, tail);
            }
        }
    }

    range_splits(suite, variants);
    range_anywhere(suite, variants);
    range_reference(suite, variants);
    range_errors(suite);
    if (suite.cuda()) range_cuda(suite, variants);

    gpk_destroy(host);
    return suite.finish();
}
