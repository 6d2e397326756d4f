// gpk_reduce conformance: every variant (and "auto") for every dtype and op against
// references computed here (long double sums, exact integer sums modulo 2^64),
// plus NaN propagation, n == 0, run-to-run determinism and the result's width.
// F16 and BF16 inputs are the test's own roundings of random doubles; their sums
// accumulate in F32 (unit roundoff 2^-24) and come back as a float.
#include "../harness.hpp"

#include <algorithm>
#include <type_traits>

namespace {

using namespace gpkt;

constexpr int kDtypes[] = {GPK_F32, GPK_F64, GPK_I32, GPK_I64, GPK_F16, GPK_BF16};
constexpr int kOps[] = {GPK_SUM, GPK_MIN, GPK_MAX};
// The result buffer is wider than any result: bytes past the result's size are a
// guard that must stay as they were (an F32, F16 or BF16 result is 4 bytes, all
// others 8).
constexpr size_t kResultBuffer = 16;
constexpr unsigned char kGuard = 0xA5;

const char *reduce_op_name(int op) { return op == GPK_SUM ? "SUM" : op == GPK_MIN ? "MIN" : "MAX"; }
bool float_result(int dtype) { return dtype == GPK_F32 || dtype == GPK_F16 || dtype == GPK_BF16; }
size_t result_size(int dtype) { return float_result(dtype) ? 4 : 8; }

// An input array and what each op must give for it.
struct Input {
    int dtype;
    int64_t n;
    std::string label;
    std::vector<unsigned char> bytes;
    // Floating point: value (NaN when any element is NaN) and, for SUM, the bound
    // on the rounding error. Integers: the exact 64-bit value.
    long double expect_float[3] = {0, 0, 0};
    long double sum_bound = 0;
    int64_t expect_int[3] = {0, 0, 0};
};

// u: the unit roundoff of the accumulation.
template <class T>
void expect_float(Input &in, const std::vector<T> &x, long double u) {
    long double sum = 0, abs_sum = 0;
    long double lo = std::numeric_limits<long double>::infinity(), hi = -lo;
    bool nan = false;
    for (T v : x) {
        if (std::isnan(v)) {
            nan = true;
            continue;
        }
        sum += v;
        abs_sum += std::fabs(static_cast<long double>(v));
        lo = std::min<long double>(lo, v);
        hi = std::max<long double>(hi, v);
    }
    const long double qnan = std::numeric_limits<long double>::quiet_NaN();
    in.expect_float[GPK_SUM] = nan ? qnan : sum;
    in.expect_float[GPK_MIN] = nan ? qnan : lo;
    in.expect_float[GPK_MAX] = nan ? qnan : hi;
    // A summation tree of depth log2(n) loses at most about u per level on each
    // term; the small constant covers the final rounding and the leaves.
    in.sum_bound = 4 * u * (std::log2(static_cast<long double>(in.n) + 1) + 2) * abs_sum;
}

template <class T>
void expect_int(Input &in, const std::vector<T> &x) {
    uint64_t sum = 0;  // integer sums wrap modulo 2^64
    int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
    for (T v : x) {
        sum += static_cast<uint64_t>(static_cast<int64_t>(v));
        lo = std::min<int64_t>(lo, v);
        hi = std::max<int64_t>(hi, v);
    }
    in.expect_int[GPK_SUM] = static_cast<int64_t>(sum);
    in.expect_int[GPK_MIN] = lo;
    in.expect_int[GPK_MAX] = hi;
}

template <class T>
Input finish(int dtype, std::string label, const std::vector<T> &x) {
    Input in;
    in.dtype = dtype;
    in.n = static_cast<int64_t>(x.size());
    in.label = std::move(label);
    in.bytes.resize(std::max<size_t>(x.size() * sizeof(T), 1));
    if (!x.empty()) std::memcpy(in.bytes.data(), x.data(), x.size() * sizeof(T));
    if (std::is_floating_point<T>::value)
        expect_float(in, x, std::numeric_limits<T>::epsilon() / 2);
    else
        expect_int(in, x);
    return in;
}

// Data kinds: "mixed" signs over a wide range, all "negative" or all "positive"
// (which catch a MIN/MAX started from 0 instead of the first element), "large"
// int32 values whose sum overflows 32 bits, NaN at a given position.
enum class Kind { mixed, negative, positive, large, nan_first, nan_middle, nan_last };
const char *kind_name(Kind k) {
    switch (k) {
        case Kind::mixed: return "mixed";
        case Kind::negative: return "negative";
        case Kind::positive: return "positive";
        case Kind::large: return "large";
        case Kind::nan_first: return "NaN first";
        case Kind::nan_middle: return "NaN middle";
        case Kind::nan_last: return "NaN last";
    }
    return "?";
}

template <class T>
std::vector<T> generate(int dtype, int64_t n, Kind kind) {
    Rng rng(seed_of({dtype, n, static_cast<int64_t>(kind)}));
    std::vector<T> x(static_cast<size_t>(n));
    for (T &v : x) {
        if (std::is_floating_point<T>::value) {
            // Magnitudes over 2^-10 .. 2^10, so that rounding bites.
            double d = std::ldexp(rng.signed_unit(), static_cast<int>(rng.range(-10, 10)));
            if (kind == Kind::negative) d = -std::fabs(d);
            if (kind == Kind::positive) d = std::fabs(d);
            v = static_cast<T>(d);
        } else if (kind == Kind::large) {
            v = static_cast<T>(rng.range(std::numeric_limits<int32_t>::max() - 1000, std::numeric_limits<int32_t>::max()));
        } else {
            // I32: the full range. I64: +-2^62, so that long sums wrap around 2^64.
            const int64_t lim = sizeof(T) == 4 ? std::numeric_limits<int32_t>::max() : (int64_t{1} << 62);
            int64_t r = rng.range(-lim, lim);
            if (kind == Kind::negative) r = r > 0 ? -r : (r == 0 ? -1 : r);
            // Positive values above 2^32 catch a result truncated to 32 bits.
            if (kind == Kind::positive) r = (r < 0 ? -r : r) + (sizeof(T) == 8 ? (int64_t{1} << 33) : 0);
            if (kind == Kind::positive && r == 0) r = 1;
            v = static_cast<T>(r);
        }
    }
    if (std::is_floating_point<T>::value && n > 0) {
        const T nan = std::numeric_limits<T>::quiet_NaN();
        if (kind == Kind::nan_first) x[0] = nan;
        if (kind == Kind::nan_middle) x[static_cast<size_t>(n / 2)] = nan;
        if (kind == Kind::nan_last) x[static_cast<size_t>(n - 1)] = nan;
    }
    return x;
}

// F16 and BF16: the doubles rounded to the dtype; the expectations from the values
// stored.
Input finish16(int dtype, std::string label, const std::vector<double> &xd) {
    std::vector<uint16_t> bits(xd.size());
    std::vector<long double> values(xd.size());
    for (size_t i = 0; i < xd.size(); ++i) {
        bits[i] = encode16(dtype, xd[i]);
        values[i] = decode16(dtype, bits[i]);
    }
    Input in;
    in.dtype = dtype;
    in.n = static_cast<int64_t>(xd.size());
    in.label = std::move(label);
    in.bytes.resize(std::max<size_t>(bits.size() * 2, 1));
    if (!bits.empty()) std::memcpy(in.bytes.data(), bits.data(), bits.size() * 2);
    expect_float(in, values, 0x1p-24L);  // F32 accumulation
    return in;
}

Input make_input(int dtype, int64_t n, Kind kind) {
    const std::string label = kind_name(kind);
    switch (dtype) {
        case GPK_F16: case GPK_BF16: return finish16(dtype, label, generate<double>(dtype, n, kind));
        case GPK_F32: return finish(dtype, label, generate<float>(dtype, n, kind));
        case GPK_F64: return finish(dtype, label, generate<double>(dtype, n, kind));
        case GPK_I32: return finish(dtype, label, generate<int32_t>(dtype, n, kind));
        default: return finish(dtype, label, generate<int64_t>(dtype, n, kind));
    }
}

// Checks the bytes the call left in the result buffer.
void check_result(Case &c, const Input &in, int op, const unsigned char *out) {
    const size_t size = result_size(in.dtype);
    for (size_t i = size; i < kResultBuffer; ++i) {
        if (out[i] != kGuard) {
            c.fail("byte %zu past the start of result was written: the result of %s is %zu bytes", i,
                   dtype_name(in.dtype), size);
            break;
        }
    }
    if (in.dtype == GPK_I32 || in.dtype == GPK_I64) {
        int64_t got;
        std::memcpy(&got, out, sizeof got);
        if (got != in.expect_int[op])
            c.fail("result %" PRId64 " (0x%016" PRIx64 "), expected %" PRId64 " (0x%016" PRIx64 ")", got,
                   static_cast<uint64_t>(got), in.expect_int[op], static_cast<uint64_t>(in.expect_int[op]));
        return;
    }
    long double got;
    if (float_result(in.dtype)) {
        float f;
        std::memcpy(&f, out, sizeof f);
        got = f;
    } else {
        double d;
        std::memcpy(&d, out, sizeof d);
        got = d;
    }
    const long double want = in.expect_float[op];
    if (std::isnan(want)) {
        if (!std::isnan(got)) c.fail("result %.17Lg, expected NaN (NaN in the input must propagate)", got);
        return;
    }
    if (op != GPK_SUM || in.n == 0) {
        // MIN and MAX pick an element; the sum of nothing is exactly 0.
        if (!(got == want)) c.fail("result %.17Lg, expected exactly %.17Lg", got, want);
        return;
    }
    const long double bound = in.sum_bound + std::numeric_limits<float>::min();
    const long double err = std::fabs(got - want);
    if (!(err <= bound)) c.fail("result %.17Lg, expected %.17Lg (error %.3Lg, bound %.3Lg)", got, want, err, bound);
}

// One input and op under every variant and placement; each call runs twice and the
// two results must be identical bit for bit.
void run_input(Suite &suite, const Input &in, int op, const std::vector<std::string> &variants, uint64_t rotation,
               bool null_x = false, bool device_only = false) {
    if (in.n == 0 && op != GPK_SUM) return;  // an argument error, tested in test_errors
    for (const std::string &variant : variants) {
        // Placement masks: bit 0 x, bit 1 result.
        const std::vector<unsigned> mems = device_only ? std::vector<unsigned>{3u} : suite.placements(2, rotation);
        for (unsigned mem : mems) {
            Case c(suite, format("reduce %s %s n=%" PRId64 " %s%s variant=%s mem=%s", dtype_name(in.dtype),
                                 reduce_op_name(op), in.n, in.label.c_str(), null_x ? " x=NULL" : "",
                                 variant.c_str(), mem_name(mem, 2).c_str()));
            if (!suite.select(c, GPK_OP_REDUCE, variant)) continue;
            DeviceArray dx, dr;
            const void *x = null_x ? nullptr : in.bytes.data();
            if ((mem & 1u) && !null_x) {
                if (!(dx.allocate(in.bytes.size()) && dx.upload(in.bytes.data()))) {
                    c.fail("device copy of x: %s", dx.error());
                    continue;
                }
                x = dx.get();
            }
            unsigned char out[2][kResultBuffer];
            bool ok = true;
            for (int rep = 0; rep < 2 && ok; ++rep) {
                std::memset(out[rep], kGuard, kResultBuffer);
                void *result = out[rep];
                if (mem & 2u) {
                    if (!(dr.allocate(kResultBuffer) && dr.upload(out[rep]))) {
                        c.fail("device result buffer: %s", dr.error());
                        ok = false;
                        break;
                    }
                    result = dr.get();
                }
                const gpk_status st = gpk_reduce(suite.ctx(), in.dtype, op, x, in.n, result);
                if (mem != kAllHost && !suite.sync(c)) {
                    ok = false;
                    break;
                }
                if ((mem & 2u) && !dr.download(out[rep])) {
                    c.fail("copying the result back: %s", dr.error());
                    ok = false;
                    break;
                }
                ok = suite.accept(c, st, GPK_OP_REDUCE, variant, in.dtype, "gpk_reduce");
                if (!ok) {
                    for (size_t i = 0; i < kResultBuffer; ++i)
                        if (out[rep][i] != kGuard) {
                            c.fail("result was written by a call that failed");
                            break;
                        }
                }
            }
            if (!ok) continue;
            check_result(c, in, op, out[0]);
            if (std::memcmp(out[0], out[1], kResultBuffer) != 0)
                c.fail("two identical calls gave different results (the reduction must be deterministic)");
        }
    }
}

}  // namespace

int main(int argc, char **argv) {
    Suite suite("test_reduce", argc, argv);
    const std::vector<std::string> variants = suite.variants(GPK_OP_REDUCE);
    uint64_t rotation = 0;
    const int64_t sizes[] = {1, 2, 17, 255, 1000, 4097, int64_t{1} << 20, (int64_t{1} << 20) + 3};

    for (int dtype : kDtypes) {
        for (int64_t n : sizes) {
            const Input in = make_input(dtype, n, Kind::mixed);
            for (int op : kOps) run_input(suite, in, op, variants, rotation++);
        }
        // One-signed data around a tree's block boundaries.
        for (Kind kind : {Kind::negative, Kind::positive})
            for (int64_t n : {int64_t{1}, int64_t{17}, int64_t{4097}}) {
                const Input in = make_input(dtype, n, kind);
                for (int op : kOps) run_input(suite, in, op, variants, rotation++);
            }
        // The sum of no elements is 0, whatever was in the result before.
        const Input empty = make_input(dtype, 0, Kind::mixed);
        run_input(suite, empty, GPK_SUM, variants, rotation++, false);
        run_input(suite, empty, GPK_SUM, variants, rotation++, true);
    }
    // Large int32 values: the sum needs the 64-bit accumulator.
    for (int64_t n : {int64_t{1000}, (int64_t{1} << 20) + 3}) {
        const Input in = make_input(GPK_I32, n, Kind::large);
        for (int op : kOps) run_input(suite, in, op, variants, rotation++);
    }
    // NaN anywhere makes MIN, MAX and SUM NaN.
    for (int dtype : std::initializer_list<int>{GPK_F32, GPK_F64, GPK_F16, GPK_BF16})
        for (int64_t n : {int64_t{17}, int64_t{4097}, (int64_t{1} << 20) + 3})
            for (Kind kind : {Kind::nan_first, Kind::nan_middle, Kind::nan_last}) {
                const Input in = make_input(dtype, n, kind);
                for (int op : kOps) run_input(suite, in, op, variants, rotation++);
            }

    // On the GPU, n past 2^31: 64-bit indexing, and grids that cover more elements
    // than one launch's blocks times threads.
    if (suite.cuda() && !suite.quick()) {
        const int64_t n = (int64_t{1} << 31) + 17;
        const Input in = make_input(GPK_I32, n, Kind::mixed);
        for (int op : kOps) run_input(suite, in, op, variants, rotation++, false, true);
    }

    return suite.finish();
}
