// The float <-> F16/BF16 conversions of libgpk/common/half.hpp, which the host
// backend (the reference) and the 16-bit kernels rely on, against references written
// here from the formats' definitions:
//  - widening: all 65536 bit patterns of each type, compared bit for bit with the
//    value built from sign, exponent and mantissa with ldexp (NaNs: NaN, sign and
//    payload kept);
//  - narrowing: the float nearest each value chosen among the two neighbouring 16-bit
//    values of a table of all finite ones (ties to the even mantissa, infinity past
//    the largest value plus half an ulp), for every 16-bit value, every midpoint
//    between neighbours and the floats next to them, and 2^22 random floats;
//  - double_to_half / double_to_bf16: rounded once, where rounding through float
//    twice would miss.
#include "../../libgpk/common/half.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdarg>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <vector>

namespace {

long failures = 0, checks = 0;

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
void fail(const char *fmt, ...) {
    ++failures;
    if (failures > 40) return;
    va_list args;
    va_start(args, fmt);
    std::printf("FAIL: ");
    std::vprintf(fmt, args);
    std::printf("\n");
    va_end(args);
}

uint32_t bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}
float from_bits(uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

// A 16-bit format: `man` mantissa bits, `exp` exponent bits.
struct Format {
    const char *name;
    int man, exp;
    float (*widen)(uint16_t);
    uint16_t (*narrow)(float);
    uint16_t (*narrow_double)(double);
};

// The value of `h` from the definition (finite h only).
double value_of(const Format &f, uint16_t h) {
    const int bias = (1 << (f.exp - 1)) - 1;
    const int sign = h >> 15, e = (h >> f.man) & ((1 << f.exp) - 1), m = h & ((1 << f.man) - 1);
    const double v = e == 0 ? std::ldexp(m, 1 - bias - f.man) : std::ldexp((1 << f.man) + m, e - bias - f.man);
    return sign ? -v : v;
}
bool is_special(const Format &f, uint16_t h) { return ((h >> f.man) & ((1 << f.exp) - 1)) == (1 << f.exp) - 1; }

void check_widen(const Format &f) {
    for (uint32_t h = 0; h < 65536; ++h) {
        const auto x = static_cast<uint16_t>(h);
        const float got = f.widen(x);
        ++checks;
        if (!is_special(f, x)) {
            const double want = value_of(f, x);
            if (!(static_cast<double>(got) == want) || std::signbit(got) != (x >> 15 != 0))
                fail("%s widen 0x%04x: got %a, want %a", f.name, h, static_cast<double>(got), want);
            continue;
        }
        const uint32_t m = h & ((1u << f.man) - 1u);
        const uint32_t gb = bits(got);
        const bool sign_ok = (gb >> 31) == (h >> 15);
        if (m == 0) {
            if (!std::isinf(got) || !sign_ok) fail("%s widen 0x%04x: got %a, want infinity", f.name, h, static_cast<double>(got));
        } else if (!std::isnan(got) || !sign_ok || ((gb & 0x7fffffu) >> (23 - f.man)) != m) {
            fail("%s widen 0x%04x: got 0x%08x, want a NaN with payload 0x%x", f.name, h, gb, m);
        }
    }
}

// The reference narrowing of a finite or infinite float, from the sorted table of
// the format's non-negative finite values.
uint16_t reference_narrow(const Format &f, const std::vector<double> &table, float x) {
    const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
    const double a = std::fabs(static_cast<double>(x));
    const uint16_t inf = static_cast<uint16_t>(((1u << f.exp) - 1u) << f.man);
    const double top = table.back();
    const double half_ulp = (top - table[table.size() - 2]) / 2;
    if (std::isinf(a) || a >= top + half_ulp) return sign | inf;  // the tie at top + half_ulp goes to the even infinity
    // table[i] <= a < table[i + 1], or a == top.
    const size_t i = static_cast<size_t>(std::upper_bound(table.begin(), table.end(), a) - table.begin()) - 1;
    if (table[i] == a || i + 1 == table.size()) return sign | static_cast<uint16_t>(i);
    const double lo = a - table[i], hi = table[i + 1] - a;
    size_t pick = lo < hi ? i : hi < lo ? i + 1 : (i % 2 == 0 ? i : i + 1);  // index parity is mantissa parity
    return sign | static_cast<uint16_t>(pick);
}

void check_narrow_one(const Format &f, const std::vector<double> &table, float x) {
    ++checks;
    const uint16_t got = f.narrow(x);
    if (std::isnan(x)) {
        if (!is_special(f, got) || (got & ((1u << f.man) - 1u)) == 0 || (got >> 15) != (bits(x) >> 31))
            fail("%s narrow NaN 0x%08x: got 0x%04x, not a NaN of the same sign", f.name, bits(x), got);
        return;
    }
    const uint16_t want = reference_narrow(f, table, x);
    if (got != want) fail("%s narrow %a (0x%08x): got 0x%04x, want 0x%04x", f.name, static_cast<double>(x), bits(x), got, want);
}

void check_narrow(const Format &f) {
    // Non-negative finite values in order: the bit patterns 0 .. largest finite.
    std::vector<double> table;
    for (uint32_t h = 0; h < 0x8000u && !is_special(f, static_cast<uint16_t>(h)); ++h)
        table.push_back(value_of(f, static_cast<uint16_t>(h)));
    for (size_t i = 0; i < table.size(); ++i) {
        for (float s : {1.0f, -1.0f}) {
            const float v = s * static_cast<float>(table[i]);
            check_narrow_one(f, table, v);
            check_narrow_one(f, table, std::nextafter(v, 0.0f));
            check_narrow_one(f, table, std::nextafter(v, s * INFINITY));
            // The midpoint to the next value (to infinity's threshold after the last)
            // and the floats on either side of it.
            const double next = i + 1 < table.size() ? table[i + 1] : table[i] + (table[i] - table[i - 1]);
            const auto mid = static_cast<float>(s * (table[i] + next) / 2);  // exact: a float for both formats
            check_narrow_one(f, table, mid);
            check_narrow_one(f, table, std::nextafter(mid, 0.0f));
            check_narrow_one(f, table, std::nextafter(mid, s * INFINITY));
        }
    }
    for (float v : {INFINITY, -INFINITY, 0.0f, -0.0f, std::numeric_limits<float>::max(), -std::numeric_limits<float>::max(),
                    std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::min()})
        check_narrow_one(f, table, v);
    for (uint32_t nan : {0x7fc00000u, 0xffc00000u, 0x7f800001u, 0xff800001u, 0x7fbfffffu, 0x7fffffffu, 0x7f802000u})
        check_narrow_one(f, table, from_bits(nan));
    uint64_t state = 0x9E3779B97F4A7C15ull;
    for (int i = 0; i < (1 << 22); ++i) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        check_narrow_one(f, table, from_bits(static_cast<uint32_t>(state >> 32)));
    }
}

// Rounding through float first would see an exact tie and round to even; the double
// lies just above it, so the correct result is the odd neighbour above.
void check_double(const Format &f) {
    const double one_ulp = std::ldexp(1.0, -f.man);
    const struct {
        double d;
        uint16_t want;
    } cases[] = {
        {1.0 + one_ulp / 2 + std::ldexp(1.0, -40), static_cast<uint16_t>(f.narrow(1.0f) + 1)},
        {1.0 + one_ulp / 2 - std::ldexp(1.0, -40), f.narrow(1.0f)},
        {1.0 + one_ulp / 2, f.narrow(1.0f)},                                        // a true tie: even
        {1.0 + 1.5 * one_ulp, static_cast<uint16_t>(f.narrow(1.0f) + 2)},           // a true tie: even, above
        {-(1.0 + one_ulp / 2 + std::ldexp(1.0, -40)), static_cast<uint16_t>(f.narrow(-1.0f) + 1)},
        {1e300, f.narrow(INFINITY)},
        {-1e-300, f.narrow(-0.0f)},
    };
    for (const auto &c : cases) {
        ++checks;
        const uint16_t got = f.narrow_double(c.d);
        if (got != c.want) fail("%s narrow double %a: got 0x%04x, want 0x%04x", f.name, c.d, got, c.want);
    }
}

}  // namespace

int main() {
    const Format formats[] = {
        {"F16", 10, 5, gpk::half_to_float, gpk::float_to_half, gpk::double_to_half},
        {"BF16", 7, 8, gpk::bf16_to_float, gpk::float_to_bf16, gpk::double_to_bf16},
    };
    for (const Format &f : formats) {
        check_widen(f);
        check_narrow(f);
        check_double(f);
    }
    std::printf("test_half: %ld checks, %ld failed\n", checks, failures);
    return failures == 0 && checks > 0 ? 0 : 1;
}
