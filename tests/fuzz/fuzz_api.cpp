// A fuzz target over the public API on the host backend (libFuzzer's entry point;
// replay.cpp runs it without libFuzzer). The input is read as a sequence of calls,
// each a selector byte and then its arguments, on a context created for the input
// and destroyed after it, so that every input stands alone and leaks show.
//
// The harness holds the contract of include/gpk/gpk.h, not the library's code:
//  - from the scalar arguments it works out which rules a call breaks, and so which
//    statuses it may return (SUCCESS only when it breaks none);
//  - a call that must fail gets NULL or tiny poisoned buffers, so that any access
//    to them is caught by AddressSanitizer and any write by the byte comparison;
//  - a call that may succeed gets buffers of exactly the extent the contract lets
//    the library touch (heap allocations, so one element more is an overflow), or
//    NULL for an array too large to allocate here, which makes the call invalid;
//  - a failing call must leave every buffer as it was and leave a message; a
//    successful one must leave its inputs and the padding of its output alone,
//    and its result is checked exactly (the data are small integers, which every
//    summation order adds without rounding).
// A violation prints what was called and aborts, which libFuzzer reports as a crash.
// GPK_FUZZ_TRACE=1 in the environment prints every decoded call and its status.
#include "gpk/gpk.h"

#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <memory>
#include <string>
#include <vector>

// from_c.c: gpk_status_string() called from C, with any int.
extern "C" const char *fuzz_status_string(int value);

namespace {

constexpr int64_t kMaxElems = int64_t{1} << 16;  // largest array allocated
constexpr int64_t kMaxWork = int64_t{1} << 18;   // largest m * n * k computed
constexpr uint64_t kMaxSamples = 1u << 12;       // largest pi run
constexpr int kMaxCalls = 32;                    // calls decoded from one input
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();

bool g_trace = false;
std::string g_call;  // the call being checked, for the report

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
void describe(const char *fmt, ...) {
    char text[512];
    va_list args;
    va_start(args, fmt);
    std::vsnprintf(text, sizeof text, fmt, args);
    va_end(args);
    g_call = text;
}

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2), noreturn))
#endif
void violation(const char *fmt, ...) {
    char text[512];
    va_list args;
    va_start(args, fmt);
    std::vsnprintf(text, sizeof text, fmt, args);
    va_end(args);
    std::fprintf(stderr, "contract violation in %s: %s\n  last error: \"%s\"\n", g_call.c_str(), text,
                 gpk_last_error(nullptr));
    std::abort();
}

// ---- reading the input --------------------------------------------------------------

// Every read succeeds: an exhausted input reads as zeros, which decode to the most
// ordinary choices (small sizes, valid enums, real buffers).
class Input {
public:
    Input(const uint8_t *data, size_t size) : data_(data), size_(size) {}

    bool empty() const { return pos_ >= size_; }
    uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }
    uint64_t raw(int bytes) {
        uint64_t v = 0;
        for (int i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(byte()) << (8 * i);
        return v;
    }

    // One of `values` most of the time; otherwise a small or a raw 32-bit int,
    // which is usually no valid value at all.
    int choice(std::initializer_list<int> values) {
        const uint8_t b = byte();
        if (b < 0xE0) return values.begin()[b % values.size()];
        if (b < 0xF0) return static_cast<int>(b) - 0xE8;
        return static_cast<int>(static_cast<uint32_t>(raw(4)));
    }

    // Sizes: mostly 0..47, sometimes up to 65535 (several blocks of the host
    // reduce), sometimes an edge of the int64 range.
    int64_t size() {
        static const int64_t kSpecial[16] = {
            -1, -2, std::numeric_limits<int64_t>::min(), kI64Max, kI64Max / 2, int64_t{1} << 31,
            (int64_t{1} << 31) - 1, int64_t{1} << 32, int64_t{1} << 62, (int64_t{1} << 62) + 1, int64_t{1} << 40,
            3037000500, -(int64_t{1} << 31), kI64Max / 4 + 1, kI64Max / 8 + 1, 4097};
        const uint8_t b = byte();
        if (b < 0xC0) return b % 48;
        if (b < 0xE0) return static_cast<int64_t>(raw(2));
        if (b < 0xF0) return kSpecial[b - 0xE0];
        return static_cast<int64_t>(raw(8));
    }

    // A leading dimension: mostly the least the contract allows plus a little
    // padding, sometimes a small or extreme value that may be too small.
    int64_t ld(int64_t least) {
        const uint8_t b = byte();
        if (b < 0xC0) return least > kI64Max - 3 ? least : least + b % 4;
        if (b < 0xE0) return static_cast<int64_t>(b) - 0xD0;
        if (b < 0xF0) return least - 1 - (b - 0xE0);
        return static_cast<int64_t>(raw(8));
    }

    // A stride of a batch whose matrices span `span` elements: mostly that span plus
    // a little (packed or padded), sometimes 0 (one matrix shared), less than a span
    // (matrices overlapping one another), negative, or an extreme value.
    int64_t stride(int64_t span) {
        static const int64_t kSpecial[8] = {-1, std::numeric_limits<int64_t>::min(), kI64Max, kI64Max / 2,
                                            kI64Max / 4 + 1, int64_t{1} << 62, int64_t{1} << 40, -(int64_t{1} << 31)};
        const uint8_t b = byte();
        if (b < 0xA0) return span > kI64Max - 3 ? span : span + b % 4;
        if (b < 0xC0) return 0;
        if (b < 0xD0) return span > 0 ? (b - 0xC0) % span : 0;
        if (b < 0xE0) return -static_cast<int64_t>(b - 0xCF);
        if (b < 0xF0) return kSpecial[b % 8];
        return static_cast<int64_t>(raw(8));
    }

    // A batch count: mostly 0..4, sometimes up to 19, negative or extreme.
    int64_t batch() {
        static const int64_t kSpecial[8] = {-1, -2, std::numeric_limits<int64_t>::min(), kI64Max,
                                            int64_t{1} << 31, int64_t{1} << 62, 3037000500, 65536};
        const uint8_t b = byte();
        if (b < 0xC0) return b % 5;
        if (b < 0xE0) return 5 + b % 15;
        if (b < 0xF0) return kSpecial[b % 8];
        return static_cast<int64_t>(raw(8));
    }

    // Pi samples: mostly a few thousand at most, sometimes the edges of 1..2^63.
    uint64_t samples() {
        static const uint64_t kSpecial[8] = {0, 1, uint64_t{1} << 63, (uint64_t{1} << 63) + 1,
                                             std::numeric_limits<uint64_t>::max(), uint64_t{1} << 32, 2, 3};
        const uint8_t b = byte();
        if (b < 0xC0) return b * 16u + 1u - (b % 2);  // 1, 16, 33, 48, ...: odd and even, never 0
        if (b < 0xE0) return raw(2);
        if (b < 0xF0) return kSpecial[b % 8];
        return raw(8);
    }

    // Scalars that keep the data's arithmetic exact, or the awkward ones.
    double scalar(bool *exact) {
        static const double kNice[8] = {0.0, 1.0, -1.0, 2.0, 0.5, -2.0, 0.25, 3.0};
        static const double kAwkward[8] = {std::numeric_limits<double>::quiet_NaN(),
                                           std::numeric_limits<double>::infinity(),
                                           -std::numeric_limits<double>::infinity(),
                                           -0.0,
                                           std::numeric_limits<double>::max(),
                                           std::numeric_limits<double>::denorm_min(),
                                           1e300,
                                           -1e-300};
        const uint8_t b = byte();
        *exact = b < 0xC0;
        if (b < 0xC0) return kNice[b % 8];
        if (b < 0xF0) return kAwkward[b % 8];
        const uint64_t bits = raw(8);
        double v;
        std::memcpy(&v, &bits, sizeof v);
        return v;
    }

private:
    const uint8_t *data_;
    size_t size_;
    size_t pos_ = 0;
};

// ---- buffers ------------------------------------------------------------------------

// A heap array of exactly `bytes` bytes, so that AddressSanitizer catches an access
// one byte past it; with a snapshot to compare against after the call.
class Buffer {
public:
    Buffer() = default;
    explicit Buffer(size_t bytes) : bytes_(bytes), data_(new unsigned char[bytes > 0 ? bytes : 1]()) {}

    unsigned char *get() const { return data_.get(); }
    size_t bytes() const { return bytes_; }
    bool live() const { return data_ != nullptr; }
    // A Buffer that was never allocated (a NULL argument) holds no bytes; memset and
    // memcmp are not called with its null pointer.
    void fill(uint8_t value) {
        if (bytes_ > 0) std::memset(data_.get(), value, bytes_);
    }
    void snapshot() { before_.assign(data_.get(), data_.get() + bytes_); }
    bool unchanged() const { return bytes_ == 0 || std::memcmp(before_.data(), data_.get(), bytes_) == 0; }
    bool unchanged_at(size_t offset, size_t len) const {
        return std::memcmp(before_.data() + offset, data_.get() + offset, len) == 0;
    }
    const unsigned char *before() const { return before_.data(); }

private:
    size_t bytes_ = 0;
    std::unique_ptr<unsigned char[]> data_;
    std::vector<unsigned char> before_;
};

// How the harness passes an array. Top: an address so close to the end of the
// address space that the array would run past it -- no memory at all, which the
// library must refuse without touching it (only for arrays whose extent it checks).
enum class Mode { Normal, Null, Alias, Top };

Mode mode(Input &in, bool alias_allowed, bool top_allowed = false) {
    const uint8_t b = in.byte() % 8;
    if (b == 5) return Mode::Null;
    if (b >= 6 && alias_allowed) return Mode::Alias;
    if (b == 4 && top_allowed) return Mode::Top;
    return Mode::Normal;
}

// An array of `bytes` (>= 2) bytes whose last byte would lie one past the end of the
// address space.
void *past_the_top(int64_t bytes) { return reinterpret_cast<void *>(uintptr_t{0} - static_cast<uintptr_t>(bytes - 1)); }

// A value as the dtype holds it (the contract converts alpha and beta to the dtype
// and decides on the converted values).
// F16 and BF16 apply their scalars in F32, as F32 does.
double in_dtype(int dtype, double v) {
    const bool in_f32 = dtype == GPK_F32 || dtype == GPK_F16 || dtype == GPK_BF16;
    return in_f32 ? static_cast<double>(static_cast<float>(v)) : v;
}

// Elements a matrix of `outer` lines of `inner` elements, `ld` apart, spans; -1 when
// its byte count overflows int64 (the contract's "size overflowing int64 bytes").
int64_t span(int64_t inner, int64_t outer, int64_t ld, size_t elem) {
    if (inner <= 0 || outer <= 0) return 0;
    const __int128 elems = static_cast<__int128>(outer - 1) * ld + inner;  // < 2^126: no overflow
    if (elems > kI64Max / static_cast<int64_t>(elem)) return -1;
    return static_cast<int64_t>(elems);
}

int64_t least_ld(int64_t inner) { return inner > 1 ? inner : 1; }

// The statuses a call may return: those of the rules it breaks, or SUCCESS.
class Expect {
public:
    void broke(gpk_status st) { allowed_ |= 1u << bit(st); }
    bool valid() const { return allowed_ == 0; }
    bool allows(gpk_status st) const {
        if (valid()) return st == GPK_SUCCESS;
        return st != GPK_SUCCESS && ((allowed_ >> bit(st)) & 1u);
    }

private:
    static int bit(gpk_status st) { return st == GPK_ERROR_INTERNAL ? 31 : static_cast<int>(st) & 31; }
    uint32_t allowed_ = 0;
};

void check_status(const Expect &e, gpk_status st, gpk_context *ctx) {
    if (g_trace) std::fprintf(stderr, "  %s -> %s\n", g_call.c_str(), gpk_status_string(st));
    if (!e.allows(st))
        violation("returned %s (%d), which the contract does not allow here (%s expected)", gpk_status_string(st),
                  static_cast<int>(st), e.valid() ? "success" : "an error");
    if (st != GPK_SUCCESS) {
        const char *thread = gpk_last_error(nullptr);
        if (thread == nullptr || thread[0] == '\0') violation("failed without a message for the thread");
        if (ctx != nullptr) {
            const char *own = gpk_last_error(ctx);
            if (own == nullptr || own[0] == '\0') violation("failed without a message on the context");
        }
    }
}

// Data and tiny buffer sizes come from splitmix64 seeded by the input's length,
// so that a call's encoding has the same length whatever its buffers.
uint64_t g_rand = 0;
uint64_t next_rand() {
    uint64_t z = (g_rand += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// A buffer the call may not touch: 0 to 16 poisoned bytes, compared afterwards.
Buffer tiny() {
    Buffer b(next_rand() % 17);
    b.fill(0xA5);
    return b;
}

bool is_16bit(int dtype) { return dtype == GPK_F16 || dtype == GPK_BF16; }
size_t elem_size(int dtype) {
    if (is_16bit(dtype)) return 2;
    return dtype == GPK_F32 || dtype == GPK_I32 ? 4 : 8;
}

// A small integer (|v| <= 256) in F16 or BF16 bits, exactly.
uint16_t small_16bit(int v, int dtype) {
    if (dtype == GPK_BF16) {
        const float f = static_cast<float>(v);
        uint32_t u;
        std::memcpy(&u, &f, 4);
        return static_cast<uint16_t>(u >> 16);
    }
    if (v == 0) return 0;
    const uint16_t sign = v < 0 ? 0x8000 : 0;
    const unsigned a = static_cast<unsigned>(v < 0 ? -v : v);
    int e = 0;
    while ((a >> (e + 1)) != 0) ++e;
    return static_cast<uint16_t>(sign | ((e + 15) << 10) | ((a << (10 - e)) & 0x3FFu));
}

// F16 or BF16 bits as a double (NaN and infinities included).
double from_16bit(uint16_t h, int dtype) {
    if (dtype == GPK_BF16) {
        const uint32_t u = static_cast<uint32_t>(h) << 16;
        float f;
        std::memcpy(&f, &u, 4);
        return f;
    }
    const int e = (h >> 10) & 0x1F, m = h & 0x3FF;
    const double v = e == 0x1F ? (m ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity())
                     : e == 0  ? std::ldexp(m, -24)
                               : std::ldexp(1024 + m, e - 25);
    return (h & 0x8000) ? -v : v;
}

// Small integers in [-range, range] in the dtype: every sum of a few of their
// products is exact in any order.
void fill_small(Buffer &b, int dtype, int range) {
    const size_t elem = elem_size(dtype);
    for (size_t i = 0; i + elem <= b.bytes(); i += elem) {
        const int v = static_cast<int>(next_rand() % (2 * range + 1)) - range;
        unsigned char *p = b.get() + i;
        switch (dtype) {
            case GPK_F16: case GPK_BF16: { const uint16_t h = small_16bit(v, dtype); std::memcpy(p, &h, 2); break; }
            case GPK_F32: { const float f = static_cast<float>(v); std::memcpy(p, &f, 4); break; }
            case GPK_F64: { const double d = v; std::memcpy(p, &d, 8); break; }
            case GPK_I32: { const int32_t x = v; std::memcpy(p, &x, 4); break; }
            default: { const int64_t x = v; std::memcpy(p, &x, 8); break; }
        }
    }
}

// Arbitrary bit patterns (NaN payloads included) for the moves of a transpose.
void fill_bits(Buffer &b) {
    for (size_t i = 0; i < b.bytes(); ++i) b.get()[i] = static_cast<unsigned char>(next_rand());
}

double load(const unsigned char *p, int dtype) {
    if (is_16bit(dtype)) {
        uint16_t h;
        std::memcpy(&h, p, 2);
        return from_16bit(h, dtype);
    }
    if (dtype == GPK_F32) {
        float f;
        std::memcpy(&f, p, 4);
        return f;
    }
    double d;
    std::memcpy(&d, p, 8);
    return d;
}

// ---- the calls ----------------------------------------------------------------------

struct Session {
    gpk_context *live = nullptr;
    // A destroyed handle: made and destroyed at the start, and replaced by every
    // context the input makes and destroys. It must stay dead, and reach no live
    // context, whatever the allocator does with the memory it once had.
    gpk_context *dead = nullptr;

    // The context a call gets: the live one, or now and then NULL or a dead one.
    gpk_context *pick(Input &in, Expect &e) {
        const uint8_t b = in.byte() & 0x0F;
        if (b != 0x0F && b != 0x0E) return live;
        e.broke(GPK_ERROR_INVALID_HANDLE);
        return b == 0x0F ? nullptr : dead;
    }
    const char *name(const gpk_context *ctx) const { return ctx == live ? "ctx" : ctx == nullptr ? "NULL" : "dead"; }
};

void call_gemm(Session &s, Input &in) {
    Expect e;
    gpk_context *ctx = s.pick(in, e);
    const int dtype = in.choice({GPK_F32, GPK_F64, GPK_I32, GPK_I64, GPK_F16, GPK_BF16});
    const int layout = in.choice({GPK_COL_MAJOR, GPK_ROW_MAJOR});
    const int transa = in.choice({GPK_NO_TRANS, GPK_TRANS});
    const int transb = in.choice({GPK_NO_TRANS, GPK_TRANS});
    const int64_t m = in.size(), n = in.size(), k = in.size();
    // The CBLAS storage of A, B and C; with a bad layout or trans the leading
    // dimensions are drawn as if column-major and non-transposed.
    const bool col = layout != GPK_ROW_MAJOR, ta = transa == GPK_TRANS, tb = transb == GPK_TRANS;
    const bool a_inner_m = col != ta, b_inner_k = col != tb;
    const int64_t a_inner = a_inner_m ? m : k, a_outer = a_inner_m ? k : m;
    const int64_t b_inner = b_inner_k ? k : n, b_outer = b_inner_k ? n : k;
    const int64_t c_inner = col ? m : n, c_outer = col ? n : m;
    const int64_t lda = in.ld(least_ld(a_inner)), ldb = in.ld(least_ld(b_inner)), ldc = in.ld(least_ld(c_inner));
    bool alpha_exact = false, beta_exact = false;
    const double alpha = in.scalar(&alpha_exact), beta = in.scalar(&beta_exact);
    const Mode ma = mode(in, false, true), mb = mode(in, false, true), mc = mode(in, true, true);
    const bool c_aliases_b = in.byte() & 1;

    if (dtype < GPK_F32 || dtype > GPK_BF16) e.broke(GPK_ERROR_INVALID_ARGUMENT);
    if (dtype == GPK_I32 || dtype == GPK_I64) e.broke(GPK_ERROR_NOT_SUPPORTED);
    if (layout != GPK_COL_MAJOR && layout != GPK_ROW_MAJOR) e.broke(GPK_ERROR_INVALID_ARGUMENT);
    if (transa != GPK_NO_TRANS && transa != GPK_TRANS) e.broke(GPK_ERROR_INVALID_ARGUMENT);
    if (transb != GPK_NO_TRANS && transb != GPK_TRANS) e.broke(GPK_ERROR_INVALID_ARGUMENT);
    if (m < 0 || n < 0 || k < 0) e.broke(GPK_ERROR_INVALID_ARGUMENT);
    if (lda < least_ld(a_inner) || ldb < least_ld(b_inner) || ldc < least_ld(c_inner))
        e.broke(GPK_ERROR_INVALID_ARGUMENT);
    const size_t es = elem_size(dtype);
    const int64_t ea = span(a_inner, a_outer, lda, es), eb = span(b_inner, b_outer, ldb, es),
                  ec = span(c_inner, c_outer, ldc, es);
    if (ea < 0 || eb < 0 || ec < 0) e.broke(GPK_ERROR_INVALID_ARGUMENT);

    const bool c_used = m > 0 && n > 0, ab_used = c_used && k > 0;
    const bool scalars_ok = e.valid();
    Buffer A, B, C;
    void *pa = nullptr, *pb = nullptr, *pc = nullptr;
    if (!scalars_ok) {
        // The call must fail whatever the pointers: nothing may be touched.
        if (ma != Mode::Null) A = tiny(), pa = A.get();
        if (mb != Mode::Null) B = tiny(), pb = B.get();
        if (mc == Mode::Normal || mc == Mode::Top) C = tiny(), pc = C.get();
        if (mc == Mode::Alias) pc = c_aliases_b ? pb : pa;
    } else {
        const bool too_much = c_used && static_cast<__int128>(m) * n * (k > 0 ? k : 1) > kMaxWork;
        auto place = [&](Buffer &buf, void *&p, Mode md, bool used, int64_t extent) {
            if (md == Mode::Null) {
                if (used) e.broke(GPK_ERROR_INVALID_ARGUMENT);
                return;
            }
            if (md == Mode::Top && used && extent > 0) {
                p = past_the_top(extent * static_cast<int64_t>(es));
                e.broke(GPK_ERROR_INVALID_ARGUMENT);
            } else if (!used) {
                buf = tiny(), p = buf.get();  // may be anything: it is not read
            } else if (extent <= kMaxElems && !too_much) {
                buf = Buffer(static_cast<size_t>(extent) * es), p = buf.get();
            } else {
                e.broke(GPK_ERROR_INVALID_ARGUMENT);  // too large to allocate here: pass NULL
            }
        };
        place(A, pa, ma, ab_used, ea);
        place(B, pb, mb, ab_used, eb);
        if (mc == Mode::Alias && ab_used && (c_aliases_b ? pb : pa) != nullptr) {
            pc = c_aliases_b ? pb : pa;  // C over an input: an overlap the library must refuse
            e.broke(GPK_ERROR_INVALID_ARGUMENT);
        } else {
            place(C, pc, mc == Mode::Alias ? Mode::Normal : mc, c_used, ec);
        }
    }
    // The scalars as the dtype holds them: 1e-300 and denorm_min are 0 in F32.
    const double alpha_t = in_dtype(dtype, alpha), beta_t = in_dtype(dtype, beta);
    const bool no_product = k == 0 || alpha_t == 0.0, beta_zero = beta_t == 0.0;
    // The 16-bit results are rounded to 8 or 11 bits: their values are not checked exactly.
    const bool exact = e.valid() && (alpha_exact || no_product) && (beta_exact || beta_zero) &&
                       !is_16bit(dtype);
    if (e.valid()) {
        // alpha == 0 in the dtype: A and B are not read, so they are NaN that must not
        // leak; beta == 0 in the dtype: the same for C.
        if (A.live()) no_product ? A.fill(0xFF) : fill_small(A, dtype, 3);
        if (B.live()) no_product ? B.fill(0xFF) : fill_small(B, dtype, 3);
        if (C.live()) {
            if (beta_zero && c_used) C.fill(0xFF);
            else fill_small(C, dtype, 5);
        }
    }
    A.snapshot(), B.snapshot(), C.snapshot();
    describe("gpk_gemm(%s, dtype %d, layout %d, transa %d, transb %d, m %" PRId64 ", n %" PRId64 ", k %" PRId64
             ", alpha %g, A %s, lda %" PRId64 ", B %s, ldb %" PRId64 ", beta %g, C %s, ldc %" PRId64 ")",
             s.name(ctx), dtype, layout, transa, transb, m, n, k, alpha, pa ? "buf" : "NULL", lda,
             pb ? "buf" : "NULL", ldb, beta, pc == nullptr ? "NULL" : (pc == pa || pc == pb) ? "alias" : "buf", ldc);
    const gpk_status st = gpk_gemm(ctx, dtype, layout, transa, transb, m, n, k, alpha, pa, lda, pb, ldb, beta, pc, ldc);
    check_status(e, st, ctx);
    if (!A.unchanged()) violation("wrote to A");
    if (!B.unchanged()) violation("wrote to B");
    if (st != GPK_SUCCESS) {
        if (!C.unchanged()) violation("failed but wrote to C");
        return;
    }
    if (!c_used) {
        if (!C.unchanged()) violation("wrote to C although m or n is 0");
        return;
    }
    // C: the padding between lines untouched; the elements exact when the scalars
    // keep the arithmetic exact, and never the NaN they started as when beta == 0.
    auto at = [](bool colmajor, int64_t r, int64_t c, int64_t ld) { return colmajor ? r + c * ld : r * ld + c; };
    for (int64_t idx = 0; idx < ec; ++idx)
        if (idx % ldc >= c_inner && !C.unchanged_at(static_cast<size_t>(idx) * es, es))
            violation("wrote to the padding of C at element %" PRId64, idx);
    for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
            const size_t ci = static_cast<size_t>(at(col, i, j, ldc)) * es;
            const double got = load(C.get() + ci, dtype);
            // The data are finite, so with a finite alpha only C's NaN can make one.
            if (beta_zero && std::isfinite(alpha_t) && std::isnan(got))
                violation("C(%" PRId64 ", %" PRId64 ") is NaN with beta == 0 in the dtype: C was read", i, j);
            if (no_product && std::isfinite(beta_t) && !beta_zero && std::isnan(got) &&
                !std::isnan(load(C.before() + ci, dtype)))
                violation("C(%" PRId64 ", %" PRId64 ") is NaN with alpha == 0 in the dtype: A or B was read", i, j);
            if (!exact) continue;
            double sum = 0;
            for (int64_t p = 0; p < k; ++p) {
                const int64_t ai = ta ? at(col, p, i, lda) : at(col, i, p, lda);
                const int64_t bi = tb ? at(col, j, p, ldb) : at(col, p, j, ldb);
                sum += load(A.get() + ai * es, dtype) * load(B.get() + bi * es, dtype);
            }
            double want = no_product ? 0.0 : alpha_t * sum;
            if (!beta_zero) want += beta_t * load(C.before() + ci, dtype);
            if (got != want)
                violation("C(%" PRId64 ", %" PRId64 ") = %.17g, expected %.17g", i, j, got, want);
        }
}

// Elements from the first of matrix 0 to one past the last of matrix batch - 1, each
// matrix spanning `one` elements and starting `stride` after the previous; -1 when that,
// or where the last matrix starts, overflows int64 bytes (the contract's "batch_count
// times a stride overflowing int64 bytes", whatever the matrices hold). stride, batch
// and one are >= 0.
int64_t batch_extent(int64_t one, int64_t stride, int64_t batch, size_t elem) {
    const __int128 start = batch > 1 ? static_cast<__int128>(batch - 1) * stride : 0;  // < 2^126
    if (start > kI64Max / static_cast<int64_t>(elem)) return -1;
    if (one == 0 || batch == 0) return 0;
    const __int128 end = start + one;
    if (end > kI64Max / static_cast<int64_t>(elem)) return -1;
    return static_cast<int64_t>(end);
}

// gpk_gemm_strided_batched: gpk_gemm's rules for each product, and the batch's --
// strides and batch_count >= 0, C matrices that do not overlap one another nor any A
// or B matrix (the batches' whole spans), every operand's whole batch within int64
// bytes and within the address space, k == 0 included.
void call_gemm_batched(Session &s, Input &in) {
    Expect e;
    gpk_context *ctx = s.pick(in, e);
    const int dtype = in.choice({GPK_F32, GPK_F64, GPK_I32, GPK_I64, GPK_F16, GPK_BF16});
    const int layout = in.choice({GPK_COL_MAJOR, GPK_ROW_MAJOR});
    const int transa = in.choice({GPK_NO_TRANS, GPK_TRANS});
    const int transb = in.choice({GPK_NO_TRANS, GPK_TRANS});
    const int64_t m = in.size(), n = in.size(), k = in.size();
    const bool col = layout != GPK_ROW_MAJOR, ta = transa == GPK_TRANS, tb = transb == GPK_TRANS;
    const bool a_inner_m = col != ta, b_inner_k = col != tb;
    const int64_t a_inner = a_inner_m ? m : k, a_outer = a_inner_m ? k : m;
    const int64_t b_inner = b_inner_k ? k : n, b_outer = b_inner_k ? n : k;
    const int64_t c_inner = col ? m : n, c_outer = col ? n : m;
    const int64_t lda = in.ld(least_ld(a_inner)), ldb = in.ld(least_ld(b_inner)), ldc = in.ld(least_ld(c_inner));
    const size_t es = elem_size(dtype);
    // One matrix's span in elements (0 where the sizes or the dtype make it meaningless).
    auto one = [&](int64_t inner, int64_t outer, int64_t ld) {
        const int64_t v = inner >= 0 && outer >= 0 && ld >= least_ld(inner) ? span(inner, outer, ld, es) : 0;
        return v > 0 ? v : 0;
    };
    const int64_t sa = in.stride(one(a_inner, a_outer, lda)), sb = in.stride(one(b_inner, b_outer, ldb)),
                  sc = in.stride(one(c_inner, c_outer, ldc));
    const int64_t batch = in.batch();
    bool alpha_exact = false, beta_exact = false;
    const double alpha = in.scalar(&alpha_exact), beta = in.scalar(&beta_exact);
    const Mode ma = mode(in, false, true), mb = mode(in, false, true), mc = mode(in, true, true);
    const uint8_t flags = in.byte(), alias_at = in.byte();
    const bool c_aliases_b = flags & 1, top_first_fits = flags & 2;

    if (dtype < GPK_F32 || dtype > GPK_BF16) e.broke(GPK_ERROR_INVALID_ARGUMENT);
    if (dtype == GPK_I32 || dtype == GPK_I64) e.broke(GPK_ERROR_NOT_SUPPORTED);
    if (layout != GPK_COL_MAJOR && layout != GPK_ROW_MAJOR) e.broke(GPK_ERROR_INVALID_ARGUMENT);
    if (transa != GPK_NO_TRANS && transa != GPK_TRANS) e.broke(GPK_ERROR_INVALID_ARGUMENT);
    if (transb != GPK_NO_TRANS && transb != GPK_TRANS) e.broke(GPK_ERROR_INVALID_ARGUMENT);
    if (m < 0 || n < 0 || k < 0) e.broke(GPK_ERROR_INVALID_ARGUMENT);
    if (lda < least_ld(a_inner) || ldb < least_ld(b_inner) || ldc < least_ld(c_inner))
        e.broke(GPK_ERROR_INVALID_ARGUMENT);
    const int64_t ea = span(a_inner, a_outer, lda, es), eb = span(b_inner, b_outer, ldb, es),
                  ec = span(c_inner, c_outer, ldc, es);
    if (ea < 0 || eb < 0 || ec < 0) e.broke(GPK_ERROR_INVALID_ARGUMENT);
    if (sa < 0 || sb < 0 || sc < 0 || batch < 0) e.broke(GPK_ERROR_INVALID_ARGUMENT);
    int64_t wa = 0, wb = 0, wc = 0;  // the whole batches' extents, in elements
    if (e.valid()) {
        if (batch > 1 && ec > 0 && sc < ec) e.broke(GPK_ERROR_INVALID_ARGUMENT);  // C matrices overlapping
        wa = batch_extent(ea, sa, batch, es), wb = batch_extent(eb, sb, batch, es);
        wc = batch_extent(ec, sc, batch, es);
        if (wa < 0 || wb < 0 || wc < 0) e.broke(GPK_ERROR_INVALID_ARGUMENT);
    }

    const bool c_used = m > 0 && n > 0 && batch > 0, ab_used = c_used && k > 0;
    const bool scalars_ok = e.valid();
    Buffer A, B, C;
    void *pa = nullptr, *pb = nullptr, *pc = nullptr;
    if (!scalars_ok) {
        if (ma != Mode::Null) A = tiny(), pa = A.get();
        if (mb != Mode::Null) B = tiny(), pb = B.get();
        if (mc == Mode::Normal || mc == Mode::Top) C = tiny(), pc = C.get();
        if (mc == Mode::Alias) pc = c_aliases_b ? pb : pa;
    } else {
        const bool too_much = c_used && static_cast<__int128>(m) * n * (k > 0 ? k : 1) * batch > kMaxWork;
        auto place = [&](Buffer &buf, void *&p, Mode md, bool used, int64_t whole, int64_t first) {
            if (md == Mode::Null) {
                if (used) e.broke(GPK_ERROR_INVALID_ARGUMENT);
                return;
            }
            if (md == Mode::Top && used && whole > 0) {
                // Past the end by a byte, or with matrix 0 ending at the last byte of the
                // address space and a later matrix beyond it.
                const bool later = top_first_fits && whole > first;
                const auto bytes = static_cast<int64_t>(es);
                p = later ? past_the_top(first * bytes + 1) : past_the_top(whole * bytes);
                e.broke(GPK_ERROR_INVALID_ARGUMENT);
            } else if (!used) {
                buf = tiny(), p = buf.get();  // may be anything: it is not read
            } else if (whole <= kMaxElems && !too_much) {
                buf = Buffer(static_cast<size_t>(whole) * es), p = buf.get();
            } else {
                e.broke(GPK_ERROR_INVALID_ARGUMENT);  // too large to allocate here: pass NULL
            }
        };
        place(A, pa, ma, ab_used, wa, ea);
        place(B, pb, mb, ab_used, wb, eb);
        const Buffer &src = c_aliases_b ? B : A;
        if (mc == Mode::Alias && ab_used && src.live() && src.bytes() >= es) {
            // C starting inside the batch of A (or B) matrices, padding included: an
            // overlap of the whole spans, which the library must refuse.
            const size_t elems = src.bytes() / es;
            pc = src.get() + (alias_at % elems) * es;
            e.broke(GPK_ERROR_INVALID_ARGUMENT);
        } else {
            place(C, pc, mc == Mode::Alias ? Mode::Normal : mc, c_used, wc, ec);
        }
    }
    const double alpha_t = in_dtype(dtype, alpha), beta_t = in_dtype(dtype, beta);
    const bool no_product = k == 0 || alpha_t == 0.0, beta_zero = beta_t == 0.0;
    const bool exact = e.valid() && (alpha_exact || no_product) && (beta_exact || beta_zero) && !is_16bit(dtype);
    if (e.valid()) {
        if (A.live()) no_product ? A.fill(0xFF) : fill_small(A, dtype, 3);
        if (B.live()) no_product ? B.fill(0xFF) : fill_small(B, dtype, 3);
        if (C.live()) {
            if (beta_zero && c_used) C.fill(0xFF);
            else fill_small(C, dtype, 5);
        }
    }
    A.snapshot(), B.snapshot(), C.snapshot();
    auto inside = [](const void *p, const Buffer &b) {
        const auto *q = static_cast<const unsigned char *>(p);
        return b.live() && q >= b.get() && q < b.get() + b.bytes();
    };
    auto ptr_name = [&](const void *p, const Buffer &b) {
        if (p == nullptr) return "NULL";
        if (b.live() && p == b.get()) return "buf";
        return inside(p, A) ? "inside A" : inside(p, B) ? "inside B" : "past the top";
    };
    describe("gpk_gemm_strided_batched(%s, dtype %d, layout %d, transa %d, transb %d, m %" PRId64 ", n %" PRId64
             ", k %" PRId64 ", alpha %g, A %s, lda %" PRId64 ", stride_a %" PRId64 ", B %s, ldb %" PRId64
             ", stride_b %" PRId64 ", beta %g, C %s, ldc %" PRId64 ", stride_c %" PRId64 ", batch_count %" PRId64 ")",
             s.name(ctx), dtype, layout, transa, transb, m, n, k, alpha, ptr_name(pa, A), lda, sa, ptr_name(pb, B),
             ldb, sb, beta, ptr_name(pc, C), ldc, sc, batch);
    const gpk_status st = gpk_gemm_strided_batched(ctx, dtype, layout, transa, transb, m, n, k, alpha, pa, lda, sa,
                                                   pb, ldb, sb, beta, pc, ldc, sc, batch);
    check_status(e, st, ctx);
    if (!A.unchanged()) violation("wrote to A");
    if (!B.unchanged()) violation("wrote to B");
    if (st != GPK_SUCCESS || !c_used) {
        if (!C.unchanged())
            violation("wrote to C although %s", st != GPK_SUCCESS ? "it failed" : "m, n or batch_count is 0");
        return;
    }
    // Each product as gpk_gemm's, and nothing of C outside its matrices written: the
    // padding between lines and between matrices.
    auto at = [](bool colmajor, int64_t r, int64_t c, int64_t ld) { return colmajor ? r + c * ld : r * ld + c; };
    std::vector<bool> element(static_cast<size_t>(wc), false);
    for (int64_t q = 0; q < batch; ++q)
        for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) {
                const int64_t cidx = q * sc + at(col, i, j, ldc);
                element[static_cast<size_t>(cidx)] = true;
                const size_t ci = static_cast<size_t>(cidx) * es;
                const double got = load(C.get() + ci, dtype);
                if (beta_zero && std::isfinite(alpha_t) && std::isnan(got))
                    violation("product %" PRId64 ", C(%" PRId64 ", %" PRId64 ") is NaN with beta == 0: C was read", q,
                              i, j);
                if (no_product && std::isfinite(beta_t) && !beta_zero && std::isnan(got) &&
                    !std::isnan(load(C.before() + ci, dtype)))
                    violation("product %" PRId64 ", C(%" PRId64 ", %" PRId64
                              ") is NaN with alpha == 0: A or B was read",
                              q, i, j);
                if (!exact) continue;
                double sum = 0;
                for (int64_t p = 0; p < k; ++p) {
                    const int64_t ai = q * sa + (ta ? at(col, p, i, lda) : at(col, i, p, lda));
                    const int64_t bi = q * sb + (tb ? at(col, j, p, ldb) : at(col, p, j, ldb));
                    sum += load(A.get() + ai * es, dtype) * load(B.get() + bi * es, dtype);
                }
                double want = no_product ? 0.0 : alpha_t * sum;
                if (!beta_zero) want += beta_t * load(C.before() + ci, dtype);
                if (got != want)
                    violation("product %" PRId64 ", C(%" PRId64 ", %" PRId64 ") = %.17g, expected %.17g", q, i, j, got,
                              want);
            }
    for (int64_t idx = 0; idx < wc; ++idx)
        if (!element[static_cast<size_t>(idx)] && !C.unchanged_at(static_cast<size_t>(idx) * es, es))
            violation("wrote to C outside its matrices at element %" PRId64, idx);
}

void call_reduce(Session &s, Input &in) {
    Expect e;
    gpk_context *ctx = s.pick(in, e);
    const int dtype = in.choice({GPK_F32, GPK_F64, GPK_I32, GPK_I64, GPK_F16, GPK_BF16});
    const int op = in.choice({GPK_SUM, GPK_MIN, GPK_MAX});
    const int64_t n = in.size();
    const Mode mx = mode(in, false, true), mr = mode(in, false);
    const uint8_t nan_at = in.byte();  // < 32: a NaN at that index of a float x

    const bool dtype_ok = dtype >= GPK_F32 && dtype <= GPK_BF16, op_ok = op >= GPK_SUM && op <= GPK_MAX;
    if (!dtype_ok || !op_ok || n < 0) e.broke(GPK_ERROR_INVALID_ARGUMENT);
    if (op_ok && n == 0 && op != GPK_SUM) e.broke(GPK_ERROR_INVALID_ARGUMENT);
    // F16 and BF16 sums are F32 sums: the result is a float.
    const size_t es = elem_size(dtype), rs = dtype == GPK_F32 || is_16bit(dtype) ? 4 : 8;
    if (span(n, 1, n, es) < 0) e.broke(GPK_ERROR_INVALID_ARGUMENT);

    Buffer X, R;
    void *px = nullptr, *pr = nullptr;
    if (!e.valid()) {
        if (mx != Mode::Null) X = tiny(), px = X.get();
        if (mr != Mode::Null) R = tiny(), pr = R.get();
    } else {
        if (mx == Mode::Null) {
            if (n > 0) e.broke(GPK_ERROR_INVALID_ARGUMENT);
        } else if (mx == Mode::Top && n > 0) {
            px = past_the_top(n * static_cast<int64_t>(es));
            e.broke(GPK_ERROR_INVALID_ARGUMENT);
        } else if (n == 0) {
            X = tiny(), px = X.get();
        } else if (n <= kMaxElems) {
            X = Buffer(static_cast<size_t>(n) * es), px = X.get();
        } else {
            e.broke(GPK_ERROR_INVALID_ARGUMENT);
        }
        if (mr == Mode::Null) e.broke(GPK_ERROR_INVALID_ARGUMENT);
        else R = Buffer(rs), pr = R.get(), R.fill(0xA5);
    }
    const bool with_nan = e.valid() && X.live() && n > 0 && nan_at < 32 &&
                          (dtype == GPK_F32 || dtype == GPK_F64 || is_16bit(dtype));
    if (e.valid() && X.live() && n > 0) {
        fill_small(X, dtype, 50);
        if (with_nan) {
            const int64_t i = nan_at % n;
            if (is_16bit(dtype)) {
                const uint16_t v = dtype == GPK_F16 ? 0x7E00 : 0x7FC0;
                std::memcpy(X.get() + i * 2, &v, 2);
            } else if (dtype == GPK_F32) {
                const float v = std::numeric_limits<float>::quiet_NaN();
                std::memcpy(X.get() + i * 4, &v, 4);
            } else {
                const double v = std::numeric_limits<double>::quiet_NaN();
                std::memcpy(X.get() + i * 8, &v, 8);
            }
        }
    }
    X.snapshot(), R.snapshot();
    describe("gpk_reduce(%s, dtype %d, op %d, x %s, n %" PRId64 ", result %s)%s", s.name(ctx), dtype, op,
             px ? "buf" : "NULL", n, pr ? "buf" : "NULL", with_nan ? " with a NaN in x" : "");
    const gpk_status st = gpk_reduce(ctx, dtype, op, px, n, pr);
    check_status(e, st, ctx);
    if (!X.unchanged()) violation("wrote to x");
    if (st != GPK_SUCCESS) {
        if (!R.unchanged()) violation("failed but wrote to result");
        return;
    }
    if (dtype == GPK_I32 || dtype == GPK_I64) {
        int64_t want = op == GPK_MIN ? std::numeric_limits<int64_t>::max()
                       : op == GPK_MAX ? std::numeric_limits<int64_t>::min() : 0;
        for (int64_t i = 0; i < n; ++i) {
            int64_t v;
            if (dtype == GPK_I32) {
                int32_t w;
                std::memcpy(&w, X.get() + i * 4, 4);
                v = w;
            } else {
                std::memcpy(&v, X.get() + i * 8, 8);
            }
            want = op == GPK_SUM ? want + v : op == GPK_MIN ? (v < want ? v : want) : (v > want ? v : want);
        }
        int64_t got;
        std::memcpy(&got, R.get(), 8);
        if (got != want) violation("result %" PRId64 ", expected %" PRId64, got, want);
        return;
    }
    double want = op == GPK_SUM ? 0.0 : load(X.get(), dtype);
    for (int64_t i = 0; i < n; ++i) {
        const double v = load(X.get() + i * es, dtype);
        want = op == GPK_SUM ? want + v : op == GPK_MIN ? (v < want ? v : want) : (v > want ? v : want);
    }
    if (with_nan) want = std::numeric_limits<double>::quiet_NaN();
    const double got = load(R.get(), is_16bit(dtype) ? GPK_F32 : dtype);
    if (!(got == want || (std::isnan(got) && std::isnan(want))))
        violation("result %.17g, expected %.17g", got, want);
}

void call_transpose(Session &s, Input &in) {
    Expect e;
    gpk_context *ctx = s.pick(in, e);
    const int dtype = in.choice({GPK_F32, GPK_F64, GPK_I32, GPK_I64, GPK_F16, GPK_BF16});
    const int layout = in.choice({GPK_COL_MAJOR, GPK_ROW_MAJOR});
    const int64_t rows = in.size(), cols = in.size();
    const bool col = layout != GPK_ROW_MAJOR;
    const int64_t a_inner = col ? rows : cols, a_outer = col ? cols : rows;
    const int64_t b_inner = col ? cols : rows, b_outer = col ? rows : cols;
    const int64_t lda = in.ld(least_ld(a_inner)), ldb = in.ld(least_ld(b_inner));
    const Mode ma = mode(in, false, true), mb = mode(in, true, true);

    if (dtype < GPK_F32 || dtype > GPK_BF16) e.broke(GPK_ERROR_INVALID_ARGUMENT);
    if (layout != GPK_COL_MAJOR && layout != GPK_ROW_MAJOR) e.broke(GPK_ERROR_INVALID_ARGUMENT);
    if (rows < 0 || cols < 0 || lda < least_ld(a_inner) || ldb < least_ld(b_inner))
        e.broke(GPK_ERROR_INVALID_ARGUMENT);
    const size_t es = elem_size(dtype);
    const int64_t ea = span(a_inner, a_outer, lda, es), eb = span(b_inner, b_outer, ldb, es);
    if (ea < 0 || eb < 0) e.broke(GPK_ERROR_INVALID_ARGUMENT);

    const bool used = rows > 0 && cols > 0;
    Buffer A, B;
    void *pa = nullptr, *pb = nullptr;
    if (!e.valid()) {
        if (ma != Mode::Null) A = tiny(), pa = A.get();
        if (mb == Mode::Normal || mb == Mode::Top) B = tiny(), pb = B.get();
        if (mb == Mode::Alias) pb = pa;
    } else {
        auto place = [&](Buffer &buf, void *&p, Mode md, int64_t extent) {
            if (md == Mode::Null) {
                if (used) e.broke(GPK_ERROR_INVALID_ARGUMENT);
            } else if (md == Mode::Top && used && extent > 0) {
                p = past_the_top(extent * static_cast<int64_t>(es));
                e.broke(GPK_ERROR_INVALID_ARGUMENT);
            } else if (!used) {
                buf = tiny(), p = buf.get();
            } else if (extent <= kMaxElems) {
                buf = Buffer(static_cast<size_t>(extent) * es), p = buf.get();
            } else {
                e.broke(GPK_ERROR_INVALID_ARGUMENT);
            }
        };
        place(A, pa, ma, ea);
        if (mb == Mode::Alias && used && pa != nullptr) {
            pb = pa;  // in place: the library must refuse it
            e.broke(GPK_ERROR_INVALID_ARGUMENT);
        } else {
            place(B, pb, mb == Mode::Alias ? Mode::Normal : mb, eb);
        }
    }
    if (e.valid() && A.live()) fill_bits(A);
    if (e.valid() && B.live()) B.fill(0xA5);
    A.snapshot(), B.snapshot();
    describe("gpk_transpose(%s, dtype %d, layout %d, rows %" PRId64 ", cols %" PRId64 ", A %s, lda %" PRId64
             ", B %s, ldb %" PRId64 ")",
             s.name(ctx), dtype, layout, rows, cols, pa ? "buf" : "NULL", lda,
             pb == nullptr ? "NULL" : pb == pa ? "alias" : "buf", ldb);
    const gpk_status st = gpk_transpose(ctx, dtype, layout, rows, cols, pa, lda, pb, ldb);
    check_status(e, st, ctx);
    if (!A.unchanged()) violation("wrote to A");
    if (st != GPK_SUCCESS || !used) {
        if (!B.unchanged()) violation("wrote to B although %s", st != GPK_SUCCESS ? "it failed" : "rows or cols is 0");
        return;
    }
    // Every element moved bit for bit, the padding between lines left alone.
    std::vector<bool> written(static_cast<size_t>(eb), false);
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) {
            const int64_t ai = col ? r + c * lda : r * lda + c;
            const int64_t bi = col ? c + r * ldb : c * ldb + r;  // B(c, r), cols x rows
            written[static_cast<size_t>(bi)] = true;
            if (std::memcmp(A.get() + ai * es, B.get() + bi * es, es) != 0)
                violation("B(%" PRId64 ", %" PRId64 ") is not A(%" PRId64 ", %" PRId64 ")", c, r, r, c);
        }
    for (int64_t idx = 0; idx < eb; ++idx)
        if (!written[static_cast<size_t>(idx)] && !B.unchanged_at(static_cast<size_t>(idx) * es, es))
            violation("wrote to the padding of B at element %" PRId64, idx);
}

// gpk_pi_range on the sequence a successful gpk_pi call just counted: a split of
// [0, samples) at a point the input picks sums to its hits; a range that ends past
// 2^64 - 1, or a NULL result, fails without writing.
void pi_ranges(gpk_context *ctx, Input &in, uint64_t samples, uint64_t seed, uint64_t hits) {
    const uint8_t how = in.byte();
    if (how % 4 == 3) {
        const uint64_t first = std::numeric_limits<uint64_t>::max() - in.raw(how % 3);
        const uint64_t count = std::numeric_limits<uint64_t>::max() - first + 1 + in.raw(1);
        const bool null_result = how & 0x10;
        Buffer R = tiny();
        R.snapshot();
        describe("gpk_pi_range(ctx, first %" PRIu64 ", count %" PRIu64 ", seed %" PRIu64 ", result %s)", first,
                 count, seed, null_result ? "NULL" : "buf");
        const gpk_status st = gpk_pi_range(ctx, first, count, seed,
                                           null_result ? nullptr : reinterpret_cast<gpk_pi_result *>(R.get()));
        Expect e;
        e.broke(GPK_ERROR_INVALID_ARGUMENT);
        check_status(e, st, ctx);
        if (!R.unchanged()) violation("failed but wrote to result");
        return;
    }
    const uint64_t cut = in.raw(2) % (samples + 1);
    gpk_pi_result lo{}, hi{};
    describe("gpk_pi_range(ctx, 0, %" PRIu64 ") + gpk_pi_range(ctx, %" PRIu64 ", %" PRIu64 "), seed %" PRIu64, cut,
             cut, samples - cut, seed);
    if (gpk_pi_range(ctx, 0, cut, seed, &lo) != GPK_SUCCESS ||
        gpk_pi_range(ctx, cut, samples - cut, seed, &hi) != GPK_SUCCESS)
        violation("a range of a sequence gpk_pi counted failed: %s", gpk_last_error(ctx));
    if (lo.samples != cut || hi.samples != samples - cut || lo.hits + hi.hits != hits)
        violation("ranges of %" PRIu64 " and %" PRIu64 " samples gave %" PRIu64 " + %" PRIu64
                  " hits, gpk_pi %" PRIu64,
                  lo.samples, hi.samples, lo.hits, hi.hits, hits);
    if ((cut == 0) != std::isnan(lo.estimate)) violation("estimate %.17g for %" PRIu64 " samples", lo.estimate, cut);
}

void call_pi(Session &s, Input &in) {
    Expect e;
    gpk_context *ctx = s.pick(in, e);
    const uint64_t samples = in.samples(), seed = in.raw(in.byte() % 9);
    const Mode mr = mode(in, false);
    if (samples == 0 || samples > (uint64_t{1} << 63)) e.broke(GPK_ERROR_INVALID_ARGUMENT);
    Buffer R;
    if (mr != Mode::Null) {
        if (!e.valid()) {
            R = tiny();
        } else if (samples <= kMaxSamples) {
            R = Buffer(sizeof(gpk_pi_result)), R.fill(0xA5);
        }
    }
    if (!R.live()) e.broke(GPK_ERROR_INVALID_ARGUMENT);  // NULL, or a run too long for here
    R.snapshot();
    auto *pr = reinterpret_cast<gpk_pi_result *>(R.get());
    describe("gpk_pi(%s, samples %" PRIu64 ", seed %" PRIu64 ", result %s)", s.name(ctx), samples, seed,
             pr ? "buf" : "NULL");
    const gpk_status st = gpk_pi(ctx, samples, seed, pr);
    check_status(e, st, ctx);
    if (st != GPK_SUCCESS) {
        if (!R.unchanged()) violation("failed but wrote to result");
        return;
    }
    gpk_pi_result r;
    std::memcpy(&r, pr, sizeof r);
    if (r.samples != samples || r.hits > samples)
        violation("samples %" PRIu64 ", hits %" PRIu64 " for %" PRIu64 " samples", r.samples, r.hits, samples);
    const double p = static_cast<double>(r.hits) / static_cast<double>(samples);
    if (r.estimate != 4 * p) violation("estimate %.17g is not 4 * hits / samples = %.17g", r.estimate, 4 * p);
    const double se = 4 * std::sqrt(p * (1 - p) / static_cast<double>(samples));
    if (!(std::fabs(r.std_error - se) <= 1e-12 * (se + 1e-300)))
        violation("std_error %.17g, expected %.17g", r.std_error, se);
    // hits depend on (samples, seed) alone.
    gpk_pi_result again{};
    if (gpk_pi(ctx, samples, seed, &again) != GPK_SUCCESS || again.hits != r.hits)
        violation("a second run gave %" PRIu64 " hits, the first %" PRIu64, again.hits, r.hits);
    pi_ranges(ctx, in, samples, seed, r.hits);
}

// A variant name: one of the interesting ones, or bytes of the input.
std::unique_ptr<char[]> variant_name_of(Input &in, bool *is_null) {
    static const char *const kNames[] = {"host", "auto", "cublas", "", "Host", "host ", "naive", "single_pass"};
    const uint8_t b = in.byte();
    *is_null = b % 16 == 15;
    size_t len = 0;
    const char *src = nullptr;
    std::string bytes;
    if (b % 16 < 8) {
        src = kNames[b % 8];
        len = std::strlen(src);
    } else if (b % 16 < 15) {
        len = in.byte() % 100;
        for (size_t i = 0; i < len; ++i) {
            const char ch = static_cast<char>(in.byte());
            bytes += ch != '\0' ? ch : '?';  // no NUL inside
        }
        src = bytes.c_str();
    }
    std::unique_ptr<char[]> name(new char[len + 1]);  // exact size: an overread is caught
    if (src != nullptr) std::memcpy(name.get(), src, len);
    name[len] = '\0';
    return name;
}

void call_variants(Session &s, Input &in) {
    Expect e;
    gpk_context *ctx = s.pick(in, e);
    const int op = in.choice({GPK_OP_GEMM, GPK_OP_REDUCE, GPK_OP_TRANSPOSE, GPK_OP_PI, GPK_OP_GEMM_BATCHED});
    const bool op_ok = op >= GPK_OP_GEMM && op <= GPK_OP_GEMM_BATCHED;
    switch (in.byte() % 3) {
        case 0: {
            bool is_null = false;
            const std::unique_ptr<char[]> name = variant_name_of(in, &is_null);
            const char *arg = is_null ? nullptr : name.get();
            if (!op_ok) e.broke(GPK_ERROR_INVALID_ARGUMENT);
            if (arg != nullptr && std::strcmp(arg, "auto") != 0 && std::strcmp(arg, "host") != 0)
                e.broke(GPK_ERROR_INVALID_ARGUMENT);
            describe("gpk_set_variant(%s, op %d, \"%.40s\")", s.name(ctx), op, arg ? arg : "(NULL)");
            check_status(e, gpk_set_variant(ctx, op, arg), ctx);
            break;
        }
        case 1: {
            Buffer count(sizeof(int));
            count.fill(0xA5);
            const bool null_count = in.byte() % 8 == 7;
            if (!op_ok || null_count) e.broke(GPK_ERROR_INVALID_ARGUMENT);
            count.snapshot();
            int *pc = null_count ? nullptr : reinterpret_cast<int *>(count.get());
            describe("gpk_variant_count(%s, op %d, %s)", s.name(ctx), op, pc ? "count" : "NULL");
            const gpk_status st = gpk_variant_count(ctx, op, pc);
            check_status(e, st, ctx);
            int got;
            std::memcpy(&got, count.get(), sizeof got);
            if (st != GPK_SUCCESS && !count.unchanged()) violation("failed but wrote to count");
            if (st == GPK_SUCCESS && got != 1) violation("count %d, but the host backend has one variant per op", got);
            break;
        }
        default: {
            const uint8_t b = in.byte();
            const int index = b < 0xF0 ? static_cast<int>(b % 4) - 1 : static_cast<int>(in.raw(4));
            describe("gpk_variant_name(%s, op %d, index %d)", s.name(ctx), op, index);
            const char *name = gpk_variant_name(ctx, op, index);
            if (g_trace) std::fprintf(stderr, "  %s -> %s\n", g_call.c_str(), name ? name : "NULL");
            const bool exists = ctx == s.live && op_ok && index == 0;
            if (exists && (name == nullptr || std::strcmp(name, "host") != 0))
                violation("returned \"%s\" for the host variant", name ? name : "(NULL)");
            if (!exists && name != nullptr) violation("returned \"%s\" for no variant", name);
            break;
        }
    }
}

void call_context(Session &s, Input &in) {
    Expect e;
    gpk_context *ctx = s.pick(in, e);
    switch (in.byte() % 6) {
        case 0: {
            Buffer out(sizeof(int));
            out.fill(0xA5);
            const bool null_out = in.byte() % 8 == 7;
            if (null_out) e.broke(GPK_ERROR_INVALID_ARGUMENT);
            out.snapshot();
            int *po = null_out ? nullptr : reinterpret_cast<int *>(out.get());
            describe("gpk_get_backend(%s, %s)", s.name(ctx), po ? "backend" : "NULL");
            const gpk_status st = gpk_get_backend(ctx, po);
            check_status(e, st, ctx);
            int got;
            std::memcpy(&got, out.get(), sizeof got);
            if (st != GPK_SUCCESS && !out.unchanged()) violation("failed but wrote to backend");
            if (st == GPK_SUCCESS && got != GPK_BACKEND_HOST) violation("backend %d on a host context", got);
            break;
        }
        case 1: {
            // Any non-NULL value: the host backend must refuse it without looking at it.
            void *stream = in.byte() % 2 ? reinterpret_cast<void *>(static_cast<uintptr_t>(in.raw(8) | 1)) : nullptr;
            if (stream != nullptr) e.broke(GPK_ERROR_NOT_SUPPORTED);
            describe("gpk_set_stream(%s, %p)", s.name(ctx), stream);
            check_status(e, gpk_set_stream(ctx, stream), ctx);
            break;
        }
        case 2: {
            const int enabled = in.byte() % 2 ? static_cast<int>(in.raw(4)) : 0;
            if (enabled != 0) e.broke(GPK_ERROR_NOT_SUPPORTED);
            describe("gpk_set_validation(%s, %d)", s.name(ctx), enabled);
            check_status(e, gpk_set_validation(ctx, enabled), ctx);
            break;
        }
        case 3:
            describe("gpk_synchronize(%s)", s.name(ctx));
            check_status(e, gpk_synchronize(ctx), ctx);
            break;
        case 4: {
            // A second context, made and freed; AUTO and CUDA are left out so that the
            // target behaves the same on a machine with a GPU.
            Expect ce;
            const int backend = in.choice({GPK_BACKEND_HOST, -1, 3});
            const uint8_t b = in.byte();
            const int device = b < 0xF0 ? static_cast<int>(b) - 2 : static_cast<int>(in.raw(4));
            const bool null_out = in.byte() % 8 == 7;
            const int used = backend == GPK_BACKEND_AUTO || backend == GPK_BACKEND_CUDA ? GPK_BACKEND_HOST : backend;
            if (null_out || used != GPK_BACKEND_HOST || device < 0) ce.broke(GPK_ERROR_INVALID_ARGUMENT);
            gpk_context *made = reinterpret_cast<gpk_context *>(&made);  // must become NULL on failure
            describe("gpk_create(%s, backend %d, device %d)", null_out ? "NULL" : "&ctx", used, device);
            const gpk_status st = gpk_create(null_out ? nullptr : &made, used, device);
            check_status(ce, st, nullptr);
            if (!null_out && st != GPK_SUCCESS && made != nullptr) violation("failed but left *ctx non-NULL");
            if (st == GPK_SUCCESS) {
                if (made == nullptr) violation("succeeded with *ctx NULL");
                if (made == s.live || made == s.dead) violation("gpk_create handed out a handle it had handed out before");
                if (gpk_destroy(made) != GPK_SUCCESS) violation("gpk_destroy of a new context failed");
                // Destroyed twice: refused, and the session's context is untouched.
                describe("gpk_destroy of a context destroyed already");
                if (gpk_destroy(made) != GPK_ERROR_INVALID_HANDLE) violation("a second gpk_destroy was not refused");
                int backend = -1;
                if (gpk_get_backend(s.live, &backend) != GPK_SUCCESS || backend != GPK_BACKEND_HOST)
                    violation("the live context was harmed by a stale handle");
                s.dead = made;
            }
            break;
        }
        default: {
            int parts[3] = {-1, -1, -1};
            const uint8_t mask = in.byte(), b = in.byte();
            const int status = b < 0xF0 ? static_cast<int>(b) - 2 : static_cast<int>(in.raw(4));
            describe("gpk_version, gpk_status_string(%d), gpk_last_error(%s)", status, s.name(ctx));
            if (g_trace) std::fprintf(stderr, "  %s\n", g_call.c_str());
            gpk_version(mask & 1 ? &parts[0] : nullptr, mask & 2 ? &parts[1] : nullptr, mask & 4 ? &parts[2] : nullptr);
            const int want[3] = {GPK_VERSION_MAJOR, GPK_VERSION_MINOR, GPK_VERSION_PATCH};
            for (int i = 0; i < 3; ++i)
                if (parts[i] != ((mask >> i) & 1 ? want[i] : -1)) violation("gpk_version wrote part %d wrongly", i);
            const char *text = fuzz_status_string(status);
            if (text == nullptr || std::strlen(text) == 0) violation("gpk_status_string(%d) is empty", status);
            const char *last = gpk_last_error(ctx);
            if (last == nullptr) violation("gpk_last_error returned NULL");
            (void)std::strlen(last);
            if (gpk_destroy(nullptr) != GPK_SUCCESS) violation("gpk_destroy(NULL) failed");
            break;
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const bool trace = [] {
        const char *v = std::getenv("GPK_FUZZ_TRACE");
        return v != nullptr && v[0] != '\0' && v[0] != '0';
    }();
    g_trace = trace;
    g_rand = size;  // the fill depends on the input alone

    Session s;
    describe("gpk_create(&dead, GPK_BACKEND_HOST, 0), gpk_destroy(dead)");
    if (gpk_create(&s.dead, GPK_BACKEND_HOST, 0) != GPK_SUCCESS || gpk_destroy(s.dead) != GPK_SUCCESS)
        violation("cannot create and destroy a host context");
    describe("gpk_create(&ctx, GPK_BACKEND_HOST, 0)");
    if (gpk_create(&s.live, GPK_BACKEND_HOST, 0) != GPK_SUCCESS || s.live == nullptr)
        violation("cannot create a host context");
    // The allocator is free to put the live context where the dead one was; the
    // handles must differ all the same.
    if (s.live == s.dead) violation("the new context got the destroyed one's handle");
    Input in(data, size);
    for (int calls = 0; calls < kMaxCalls && !in.empty(); ++calls) {
        switch (in.byte() % 7) {
            case 0: call_gemm(s, in); break;
            case 1: call_reduce(s, in); break;
            case 2: call_transpose(s, in); break;
            case 3: call_pi(s, in); break;
            case 4: call_variants(s, in); break;
            case 5: call_context(s, in); break;
            default: call_gemm_batched(s, in); break;
        }
    }
    describe("gpk_destroy(ctx)");
    if (gpk_destroy(s.live) != GPK_SUCCESS) violation("gpk_destroy failed");
    return 0;
}
