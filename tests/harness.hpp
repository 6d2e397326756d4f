// Shared scaffolding of the conformance programs: backend selection and the skip
// rule, reproducible random numbers, poison values, case accounting, variant walks
// and device arrays. References live in each test, never here: a reference shared
// with the library (or with another test) could hide the bug it is meant to catch.
#pragma once

#include "gpk/gpk.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace gpkt {

// Meson's exit code for a skipped test.
constexpr int kSkipExit = 77;

// ---- formatting -------------------------------------------------------------------

inline std::string vformat(const char *fmt, va_list args) {
    va_list copy;
    va_copy(copy, args);
    const int len = std::vsnprintf(nullptr, 0, fmt, copy);
    va_end(copy);
    std::string out(len > 0 ? static_cast<size_t>(len) : 0, '\0');
    if (len > 0) std::vsnprintf(&out[0], out.size() + 1, fmt, args);
    return out;
}

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
inline std::string format(const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    std::string out = vformat(fmt, args);
    va_end(args);
    return out;
}

inline const char *dtype_name(int dtype) {
    switch (dtype) {
        case GPK_F32: return "F32";
        case GPK_F64: return "F64";
        case GPK_I32: return "I32";
        case GPK_I64: return "I64";
        case GPK_F16: return "F16";
        case GPK_BF16: return "BF16";
        default: return "?";
    }
}

inline const char *layout_name(int layout) {
    return layout == GPK_ROW_MAJOR ? "row" : layout == GPK_COL_MAJOR ? "col" : "?";
}

inline const char *op_name(int op) {
    switch (op) {
        case GPK_OP_GEMM: return "gemm";
        case GPK_OP_REDUCE: return "reduce";
        case GPK_OP_TRANSPOSE: return "transpose";
        case GPK_OP_PI: return "pi";
        case GPK_OP_GEMM_BATCHED: return "gemm_batched";
        default: return "?";
    }
}

inline size_t dtype_size(int dtype) {
    if (dtype == GPK_F16 || dtype == GPK_BF16) return 2;
    return (dtype == GPK_F32 || dtype == GPK_I32) ? 4 : 8;
}

// ---- 16-bit values ----------------------------------------------------------------

// GPK_F16 and GPK_BF16 elements travel as their bits. The tests encode and decode them
// from the formats' definitions (ldexp and one rounding by nearbyint), independently
// of the library's conversions.
struct Format16 {
    int man, exp;  // mantissa and exponent bits
};
inline Format16 format16(int dtype) { return dtype == GPK_BF16 ? Format16{7, 8} : Format16{10, 5}; }

// The value of finite or infinite bits (NaN for NaN bits).
inline long double decode16(int dtype, uint16_t h) {
    const Format16 f = format16(dtype);
    const int bias = (1 << (f.exp - 1)) - 1;
    const int e = (h >> f.man) & ((1 << f.exp) - 1), m = h & ((1 << f.man) - 1);
    long double v;
    if (e == (1 << f.exp) - 1)
        v = m == 0 ? std::numeric_limits<long double>::infinity() : std::numeric_limits<long double>::quiet_NaN();
    else
        v = e == 0 ? std::ldexp(static_cast<long double>(m), 1 - bias - f.man)
                   : std::ldexp(static_cast<long double>((1 << f.man) + m), e - bias - f.man);
    return (h >> 15) ? -v : v;
}

// d rounded once to the nearest value of the dtype, ties to even (the default
// rounding mode of nearbyint); past the largest value, infinity.
inline uint16_t encode16(int dtype, long double d) {
    const Format16 f = format16(dtype);
    const int bias = (1 << (f.exp - 1)) - 1;
    const uint16_t sign = std::signbit(d) ? 0x8000 : 0;
    const uint16_t inf = static_cast<uint16_t>(((1 << f.exp) - 1) << f.man);
    if (std::isnan(d)) return static_cast<uint16_t>(sign | inf | (1 << (f.man - 1)));
    const long double a = std::fabs(d);
    if (a == 0) return sign;
    if (std::isinf(a)) return sign | inf;
    int e2 = 0;
    (void)std::frexp(a, &e2);
    int E = std::max(e2 - 1, 1 - bias);  // the binade, the subnormals' for small values
    long double q = std::nearbyint(std::ldexp(a, f.man - E));
    if (q == std::ldexp(1.0L, f.man + 1)) q /= 2, ++E;
    if (E > bias) return sign | inf;
    const auto qi = static_cast<uint32_t>(q);
    if (qi < (1u << f.man)) return static_cast<uint16_t>(sign | qi);  // subnormal (or zero)
    return static_cast<uint16_t>(sign | ((E + bias) << f.man) | (qi - (1u << f.man)));
}

// Unit roundoff of a 16-bit dtype: the relative error of one rounding (2^-11, 2^-8),
// and the largest absolute error near zero (half the smallest subnormal).
inline long double unit_roundoff16(int dtype) { return std::ldexp(1.0L, -(format16(dtype).man + 1)); }
inline long double underflow16(int dtype) {
    const Format16 f = format16(dtype);
    return std::ldexp(1.0L, 2 - (1 << (f.exp - 1)) - f.man - 1);
}

// ---- reproducible random numbers --------------------------------------------------

// splitmix64: tiny, fast, and good enough to make test data; every case derives its
// own seed from its parameters so that a failure reproduces on its own.
class Rng {
public:
    explicit Rng(uint64_t seed) : state_(seed) {}

    uint64_t next() {
        uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    // [0, 1) with 53 random bits.
    double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
    // [-1, 1], never 0: a zero would hide a missing term of a sum.
    double signed_unit() {
        const double u = 2.0 * uniform() - 1.0;
        return u == 0.0 ? 0.5 : u;
    }
    // [lo, hi], both inclusive.
    int64_t range(int64_t lo, int64_t hi) {
        const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) + 1u;
        const uint64_t r = span == 0 ? next() : next() % span;
        return static_cast<int64_t>(static_cast<uint64_t>(lo) + r);
    }

private:
    uint64_t state_;
};

inline uint64_t seed_of(std::initializer_list<int64_t> parts) {
    uint64_t h = 0xCBF29CE484222325ull;
    for (int64_t p : parts) {
        h ^= static_cast<uint64_t>(p);
        h *= 0x100000001B3ull;
        h ^= h >> 29;
    }
    return h;
}

// ---- poison -----------------------------------------------------------------------

// Bit patterns that no correct computation produces: quiet NaNs with a payload for
// floating-point elements, an unlikely constant for integers. Padding is filled with
// them and compared bit for bit afterwards.
template <class T>
T poison();
template <>
inline float poison<float>() {
    const uint32_t bits = 0x7FC0DEADu;
    float v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
}
template <>
inline double poison<double>() {
    const uint64_t bits = 0x7FF8DEADBEEFDEADull;
    double v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
}
template <>
inline int32_t poison<int32_t>() { return static_cast<int32_t>(0x5EADBEEF); }
// 2-byte elements (F16 and BF16 bits): a NaN of either format with a payload.
template <>
inline uint16_t poison<uint16_t>() { return 0x7FAD; }
template <>
inline int64_t poison<int64_t>() { return static_cast<int64_t>(0x5EADBEEFDEADBEEFull); }

template <class T>
bool same_bits(const T &a, const T &b) {
    return std::memcmp(&a, &b, sizeof(T)) == 0;
}

// ---- device arrays (CUDA backend only) -------------------------------------------

// A cudaMalloc'd copy of a host array. Failures are reported by ok(), never fatal,
// so that a case can fail with a message naming it.
class DeviceArray {
public:
    DeviceArray() = default;
    explicit DeviceArray(size_t bytes) { allocate(bytes); }
    ~DeviceArray() {
        if (ptr_ != nullptr) cudaFree(ptr_);
    }
    DeviceArray(const DeviceArray &) = delete;
    DeviceArray &operator=(const DeviceArray &) = delete;

    bool allocate(size_t bytes) {
        if (ptr_ != nullptr) cudaFree(ptr_);
        ptr_ = nullptr;
        bytes_ = bytes;
        error_ = cudaMalloc(&ptr_, bytes > 0 ? bytes : 1);
        if (error_ != cudaSuccess) ptr_ = nullptr;
        return ok();
    }
    // cudaMemcpy from pageable memory may return before its DMA has landed, and only
    // the default stream is ordered after it: calls on a stream of the caller's (a
    // non-blocking one, as the threads test sets) could read the old contents. So the
    // upload waits for its copy to land.
    bool upload(const void *src) { return upload(src, bytes_); }
    bool download(void *dst) {
        if (ok() && bytes_ > 0) error_ = cudaMemcpy(dst, ptr_, bytes_, cudaMemcpyDeviceToHost);
        return ok();
    }
    // The first `bytes` only (no more than the array holds): a host side smaller than
    // the device array must not be read or written past its end.
    bool upload(const void *src, size_t bytes) {
        if (bytes > bytes_) return false;
        if (ok() && bytes > 0) error_ = cudaMemcpy(ptr_, src, bytes, cudaMemcpyHostToDevice);
        if (ok() && bytes > 0) error_ = cudaStreamSynchronize(0);
        return ok();
    }
    bool download(void *dst, size_t bytes) {
        if (bytes > bytes_) return false;
        if (ok() && bytes > 0) error_ = cudaMemcpy(dst, ptr_, bytes, cudaMemcpyDeviceToHost);
        return ok();
    }
    bool ok() const { return ptr_ != nullptr && error_ == cudaSuccess; }
    const char *error() const { return cudaGetErrorString(error_); }
    void *get() const { return ptr_; }

private:
    void *ptr_ = nullptr;
    size_t bytes_ = 0;
    cudaError_t error_ = cudaSuccess;
};

// Where a call's arrays live. On the CUDA backend every case also runs with all
// arrays in device memory (the asynchronous path) and with a mix (the staging path
// for some arrays only); the host backend takes host memory only.
enum MemMask : unsigned { kAllHost = 0u };
inline std::string mem_name(unsigned mask, int arrays) {
    if (mask == 0) return "host";
    if (mask == (1u << arrays) - 1u) return "device";
    std::string s = "mixed:";
    for (int i = 0; i < arrays; ++i) s += (mask >> i) & 1u ? 'D' : 'H';
    return s;
}

// ---- the program, its context and its tally --------------------------------------

class Suite;

// One case: passes unless fail() is called or it is marked unsupported. Recorded in
// the suite when it goes out of scope.
class Case {
public:
    Case(Suite &suite, std::string name);
    ~Case();
    Case(const Case &) = delete;
    Case &operator=(const Case &) = delete;

#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    void fail(const char *fmt, ...);
    void mark_unsupported() { unsupported_ = true; }
    bool failed() const { return failed_; }
    const std::string &name() const { return name_; }

    // Checks a status; on a mismatch fails with the call, both statuses and the
    // library's message.
    bool expect(gpk_status got, gpk_status want, const char *call);

private:
    Suite &suite_;
    std::string name_;
    bool failed_ = false;
    bool unsupported_ = false;
};

class Suite {
public:
    // argv[1] is the backend ("host" or "cuda"); then, in any order, "quick", which
    // leaves out the largest cases (for runs under compute-sanitizer), and
    // "dtype=NAME[,NAME...]" (f32, f64, f16, bf16, and tf32 for F32 in GPK_MATH_TF32),
    // which keeps the cases of those dtypes alone, for programs that ask dtype_chosen:
    // tests/meson.build runs a long program as one test per dtype. Exits 77 when the
    // CUDA backend has no device, 1 when the context cannot be made for any other reason.
    Suite(const char *program, int argc, char **argv) : program_(program) {
        bool ok = argc >= 2 && (std::strcmp(argv[1], "host") == 0 || std::strcmp(argv[1], "cuda") == 0);
        for (int i = 2; ok && i < argc; ++i) {
            if (std::strcmp(argv[i], "quick") == 0)
                quick_ = true;
            else if (std::strncmp(argv[i], "dtype=", 6) == 0 && argv[i][6] != '\0')
                dtypes_ = std::string(",") + (argv[i] + 6) + ",";
            else
                ok = false;
        }
        if (!ok) {
            std::fprintf(stderr, "usage: %s host|cuda [quick] [dtype=f32,f64,f16,bf16,tf32]\n", program);
            std::exit(2);
        }
        backend_name_ = argv[1];
        backend_ = std::strcmp(argv[1], "cuda") == 0 ? GPK_BACKEND_CUDA : GPK_BACKEND_HOST;
        ctx_ = open(backend_);
    }
    ~Suite() { gpk_destroy(ctx_); }
    Suite(const Suite &) = delete;
    Suite &operator=(const Suite &) = delete;

    // A context on `backend`, with the skip rule applied for CUDA.
    gpk_context *open(int backend) {
        gpk_context *ctx = nullptr;
        const gpk_status st = gpk_create(&ctx, backend, 0);
        if (st == GPK_ERROR_NO_DEVICE && backend == GPK_BACKEND_CUDA) {
            std::printf("%s [%s]: skipped, no usable GPU: %s\n", program_, backend_name_, gpk_last_error(nullptr));
            std::exit(kSkipExit);
        }
        if (st != GPK_SUCCESS || ctx == nullptr) {
            std::fprintf(stderr, "%s [%s]: gpk_create(backend %d, device 0) failed: %s (%s)\n", program_,
                         backend_name_, backend, gpk_status_string(st), gpk_last_error(nullptr));
            std::exit(1);
        }
        return ctx;
    }

    gpk_context *ctx() const { return ctx_; }
    int backend() const { return backend_; }
    bool cuda() const { return backend_ == GPK_BACKEND_CUDA; }
    bool quick() const { return quick_; }
    // Whether the cases of `dtype` (F32 in GPK_MATH_TF32 when `tf32`) are to run.
    bool dtype_chosen(int dtype, bool tf32 = false) const {
        if (dtypes_.empty()) return true;
        const char *name = tf32 ? "tf32" : dtype == GPK_F32 ? "f32" : dtype == GPK_F64 ? "f64" : dtype == GPK_F16 ? "f16"
                                      : dtype == GPK_BF16 ? "bf16" : "other";
        return dtypes_.find(std::string(",") + name + ",") != std::string::npos;
    }
    const char *backend_name() const { return backend_name_; }

    // Whether the environment's GPKT_VARIANTS (a comma-separated list of names, for
    // runs under compute-sanitizer that cannot afford every variant) admits name;
    // unset or empty admits all.
    static bool chosen(const std::string &name) {
        const char *list = std::getenv("GPKT_VARIANTS");
        if (list == nullptr || list[0] == '\0') return true;
        const std::string all = std::string(",") + list + ",";
        return all.find("," + name + ",") != std::string::npos;
    }

    // The op's variants in ladder order, then "auto" (those GPKT_VARIANTS admits).
    std::vector<std::string> variants(int op) {
        std::vector<std::string> names;
        int count = 0;
        const gpk_status st = gpk_variant_count(ctx_, op, &count);
        if (st != GPK_SUCCESS || count < 1) {
            Case c(*this, format("%s variant list", op_name(op)));
            c.fail("gpk_variant_count -> %s, count %d", gpk_status_string(st), count);
            return {"auto"};
        }
        for (int i = 0; i < count; ++i) {
            const char *name = gpk_variant_name(ctx_, op, i);
            if (name == nullptr) {
                Case c(*this, format("%s variant %d", op_name(op), i));
                c.fail("gpk_variant_name returned NULL for an index below the count (%d)", count);
                continue;
            }
            if (chosen(name)) names.emplace_back(name);
        }
        if (chosen("auto")) names.emplace_back("auto");
        return names;
    }

    // Selects a variant for the following calls; a failure fails `c`.
    bool select(Case &c, int op, const std::string &variant) {
        const gpk_status st = gpk_set_variant(ctx_, op, variant.c_str());
        if (st != GPK_SUCCESS) {
            c.fail("gpk_set_variant(%s, \"%s\") -> %s: %s", op_name(op), variant.c_str(), gpk_status_string(st),
                   gpk_last_error(ctx_));
            return false;
        }
        return true;
    }

    // The memory placements a case with `arrays` arrays runs under; `rotation`
    // picks which mixed placement this case gets, so that all of them are covered
    // across cases without multiplying the count.
    std::vector<unsigned> placements(int arrays, uint64_t rotation) const {
        if (!cuda()) return {kAllHost};
        const unsigned all = (1u << arrays) - 1u;
        std::vector<unsigned> out = {kAllHost, all};
        if (arrays > 1) out.push_back(1u + static_cast<unsigned>(rotation % (all - 1u)));
        return out;
    }

    // Accepts a status of a call that might be NOT_SUPPORTED for this variant and
    // dtype. Returns true when the call succeeded and its results must be checked.
    // NOT_SUPPORTED is allowed only from a named variant ("auto" chooses among the
    // rungs that take the call) and counts the case as unsupported. A refusal of the
    // dtype ("does not support dtype") must be consistent: a variant that did a
    // dtype once must do it every time. A refusal of the call ("cannot take this
    // call": alignment, the GPU) must name the variant.
    bool accept(Case &c, gpk_status st, int op, const std::string &variant, int dtype, const char *call) {
        if (st == GPK_SUCCESS) {
            return note_support(c, op, variant, dtype, true);
        }
        if (st == GPK_ERROR_NOT_SUPPORTED && variant != "auto") {
            const std::string why = gpk_last_error(ctx_);
            if (why.empty()) c.fail("%s -> NOT_SUPPORTED with an empty gpk_last_error", call);
            if (why.find("cannot take this call") != std::string::npos) {
                if (why.find("'" + variant + "'") == std::string::npos)
                    c.fail("%s -> NOT_SUPPORTED without naming variant '%s': %s", call, variant.c_str(), why.c_str());
                c.mark_unsupported();
            } else if (note_support(c, op, variant, dtype, false)) {
                c.mark_unsupported();
            }
            return false;
        }
        c.fail("%s -> %s (%d): %s", call, gpk_status_string(st), static_cast<int>(st), gpk_last_error(ctx_));
        return false;
    }

    // Synchronizes after an asynchronous call; fails `c` if the work failed.
    bool sync(Case &c) {
        const gpk_status st = gpk_synchronize(ctx_);
        if (st != GPK_SUCCESS) {
            c.fail("gpk_synchronize -> %s: %s", gpk_status_string(st), gpk_last_error(ctx_));
            return false;
        }
        return true;
    }

    void record(const Case &c, bool failed, bool unsupported) {
        ++run_;
        if (failed)
            ++failed_;
        else if (unsupported)
            ++unsupported_;
        else
            ++passed_;
        (void)c;
    }

    // Failure messages are capped so that one broken variant does not bury the rest.
    bool may_print() { return printed_++ < kMaxPrinted; }

    // Prints the summary line and returns the exit code.
    int finish() {
        if (printed_ > kMaxPrinted)
            std::printf("(%ld more failure messages not shown)\n", printed_ - kMaxPrinted);
        std::printf("%s [%s]: %ld cases run, %ld passed, %ld unsupported, %ld failed\n", program_, backend_name_,
                    run_, passed_, unsupported_, failed_);
        std::fflush(stdout);
        if (run_ == 0) {
            std::printf("%s [%s]: no case ran\n", program_, backend_name_);
            return 1;
        }
        return failed_ == 0 ? 0 : 1;
    }

private:
    bool note_support(Case &c, int op, const std::string &variant, int dtype, bool supported) {
        const auto key = std::make_tuple(op, variant, dtype);
        const auto it = support_.find(key);
        if (it == support_.end()) {
            support_.emplace(key, supported);
            return true;
        }
        if (it->second != supported) {
            c.fail("variant \"%s\" of %s %s %s for %s, although it %s it in an earlier case", variant.c_str(),
                   op_name(op), supported ? "succeeded" : "returned NOT_SUPPORTED", dtype_name(dtype),
                   dtype_name(dtype), it->second ? "supported" : "did not support");
            return false;
        }
        return true;
    }

    static constexpr long kMaxPrinted = 60;

    const char *program_;
    const char *backend_name_ = "";
    int backend_ = GPK_BACKEND_HOST;
    bool quick_ = false;
    std::string dtypes_;  // ",f16,bf16," from dtype=f16,bf16; empty: every dtype
    gpk_context *ctx_ = nullptr;
    long run_ = 0, passed_ = 0, unsupported_ = 0, failed_ = 0, printed_ = 0;
    std::map<std::tuple<int, std::string, int>, bool> support_;
};

inline Case::Case(Suite &suite, std::string name) : suite_(suite), name_(std::move(name)) {}

inline Case::~Case() { suite_.record(*this, failed_, unsupported_ && !failed_); }

inline void Case::fail(const char *fmt, ...) {
    failed_ = true;
    if (!suite_.may_print()) return;
    va_list args;
    va_start(args, fmt);
    const std::string msg = vformat(fmt, args);
    va_end(args);
    std::printf("FAIL [%s]: %s\n", name_.c_str(), msg.c_str());
    std::fflush(stdout);
}

inline bool Case::expect(gpk_status got, gpk_status want, const char *call) {
    if (got == want) return true;
    fail("%s -> %s (%d), expected %s (%d); last error: \"%s\"", call, gpk_status_string(got), static_cast<int>(got),
         gpk_status_string(want), static_cast<int>(want), gpk_last_error(nullptr));
    return false;
}

// ---- matrices in memory ------------------------------------------------------------

// A rows x cols matrix stored in `layout` with leading dimension ld: `outer` lines
// of `inner` elements, ld apart. The buffer holds every line in full, padding
// included, so that padding after the last line is checked too.
struct Shape {
    int64_t rows, cols, ld;
    bool col_major;

    int64_t inner() const { return col_major ? rows : cols; }
    int64_t outer() const { return col_major ? cols : rows; }
    size_t count() const { return static_cast<size_t>(outer() * ld); }
    size_t at(int64_t r, int64_t c) const { return static_cast<size_t>(col_major ? r + c * ld : r * ld + c); }
    bool is_padding(size_t index) const { return static_cast<int64_t>(index % static_cast<size_t>(ld)) >= inner(); }
};

inline int64_t at_least_one(int64_t v) { return v > 1 ? v : 1; }

}  // namespace gpkt
