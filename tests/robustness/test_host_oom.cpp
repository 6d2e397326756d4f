// The host backend when memory is scarce. Each case runs in a child process under an
// address-space limit (setrlimit(RLIMIT_AS)), so that the limit touches no other test.
// A call may succeed or return GPK_ERROR_OUT_OF_MEMORY with its output untouched; it
// may never end the process (an exception escaping a thread calls std::terminate;
// OpenMP's runtime calls exit(1) when it cannot create a thread).
// Cases 0-5: the limit is what the child uses plus 300 MiB, after a warm-up call:
//  - gemm with k = 0 (C = beta C) needs no memory at all: it must succeed;
//  - gemm with m = 2^26 rows (a column accumulator would be 512 MiB): must succeed,
//    in F32 (cases 1, 2) and in F16 and BF16 (cases 4, 5: their accumulator, once
//    m * threads doubles on the heap, made the call fail for a size no call needs);
//  - reduce whose partial results cannot fit: GPK_ERROR_OUT_OF_MEMORY, result
//    untouched, and x (far too short for n) never read.
// Case 6: the limit set before the first libgpk call, a little above what the child
// uses and below one thread's stack, so that no thread can be created: every op, on
// sizes that use several threads where they can be had, must complete on the calling
// thread with the right result.
// Case 7, without a limit: every allocation a call makes, failed in turn. The program
// replaces the global operator new (the library's calls resolve to the program's
// definition; outside case 7 it is malloc and nothing more), and each call runs again
// and again with its 1st, 2nd, 3rd, ... allocation throwing std::bad_alloc, until a
// run makes fewer allocations than the one to fail. Each run must end with
// GPK_SUCCESS and the right result (an allocation the call can do without, as a
// helper thread's), or with GPK_ERROR_OUT_OF_MEMORY, a message and every output as
// it was -- a batched gemm must not fail after writing an earlier product -- and the
// context must serve the next run.
#include "gpk/gpk.h"

#include <pthread.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <new>
#include <string>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define GPK_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GPK_TEST_ASAN 1
#endif
#endif

namespace {

// The allocation to fail, counted from arming (0: not armed, nothing counted; -1:
// counted, none failing), and the count so far.
std::atomic<long> g_fail_at{0};
std::atomic<long> g_made{0};

void *allocate(std::size_t bytes, std::size_t align) {
    // -1: count without failing.
    const long at = g_fail_at.load(std::memory_order_relaxed);
    if (at != 0 && g_made.fetch_add(1, std::memory_order_relaxed) + 1 == at) throw std::bad_alloc();
    if (bytes == 0) bytes = 1;
    void *p = nullptr;
    if (align <= alignof(std::max_align_t))
        p = std::malloc(bytes);
    else if (posix_memalign(&p, align, bytes) != 0)
        p = nullptr;
    if (p == nullptr) throw std::bad_alloc();
    return p;
}

void *allocate_nothrow(std::size_t bytes, std::size_t align) noexcept {
    try {
        return allocate(bytes, align);
    } catch (...) {
        return nullptr;
    }
}

}  // namespace

void *operator new(std::size_t n) { return allocate(n, 0); }
void *operator new[](std::size_t n) { return allocate(n, 0); }
void *operator new(std::size_t n, std::align_val_t a) { return allocate(n, static_cast<std::size_t>(a)); }
void *operator new[](std::size_t n, std::align_val_t a) { return allocate(n, static_cast<std::size_t>(a)); }
void *operator new(std::size_t n, const std::nothrow_t &) noexcept { return allocate_nothrow(n, 0); }
void *operator new[](std::size_t n, const std::nothrow_t &) noexcept { return allocate_nothrow(n, 0); }
void *operator new(std::size_t n, std::align_val_t a, const std::nothrow_t &) noexcept {
    return allocate_nothrow(n, static_cast<std::size_t>(a));
}
void *operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t &) noexcept {
    return allocate_nothrow(n, static_cast<std::size_t>(a));
}
void operator delete(void *p) noexcept { std::free(p); }
void operator delete[](void *p) noexcept { std::free(p); }
void operator delete(void *p, std::size_t) noexcept { std::free(p); }
void operator delete[](void *p, std::size_t) noexcept { std::free(p); }
void operator delete(void *p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void *p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void *p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void *p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void *p, const std::nothrow_t &) noexcept { std::free(p); }
void operator delete[](void *p, const std::nothrow_t &) noexcept { std::free(p); }
void operator delete(void *p, std::align_val_t, const std::nothrow_t &) noexcept { std::free(p); }
void operator delete[](void *p, std::align_val_t, const std::nothrow_t &) noexcept { std::free(p); }

namespace {

constexpr int64_t kRows = int64_t{1} << 26;  // the reproducer: m = 2^26, n = 1
constexpr size_t kHeadroom = size_t{300} << 20;

size_t address_space_in_use() {
    FILE *f = std::fopen("/proc/self/statm", "r");
    if (f == nullptr) return 0;
    unsigned long pages = 0;
    const int got = std::fscanf(f, "%lu", &pages);
    std::fclose(f);
    return got == 1 ? pages * static_cast<size_t>(sysconf(_SC_PAGESIZE)) : 0;
}

bool limit_address_space(size_t headroom = kHeadroom) {
    const size_t used = address_space_in_use();
    if (used == 0) return false;
    rlimit lim{};
    lim.rlim_cur = lim.rlim_max = used + headroom;
    return setrlimit(RLIMIT_AS, &lim) == 0;
}

int failures = 0;

void fail(const char *what) {
    std::printf("FAIL: %s\n", what);
    std::fflush(stdout);
    ++failures;
}

// The child's work for one case; returns its exit code.
int run_case(int which) {
    gpk_context *ctx = nullptr;
    if (gpk_create(&ctx, GPK_BACKEND_HOST, 0) != GPK_SUCCESS) {
        std::printf("gpk_create: %s\n", gpk_last_error(nullptr));
        return 1;
    }
    // The library's one-time set-up before the limit: the limit is about what a call
    // allocates.
    {
        float a[4] = {1, 2, 3, 4}, b[4] = {1, 0, 0, 1}, c[4] = {0, 0, 0, 0}, r = 0;
        gpk_gemm(ctx, GPK_F32, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, 2, 2, 2, 1.0, a, 2, b, 2, 0.0, c, 2);
        gpk_reduce(ctx, GPK_F32, GPK_SUM, a, 4, &r);
        std::printf("case %d: warmed up\n", which);
        std::fflush(stdout);
    }
    std::vector<float> C, A;
    if (which == 0 || which == 1 || which == 2) {
        C.assign(static_cast<size_t>(kRows), 1.0f);
        if (which != 0) A.assign(static_cast<size_t>(kRows), 3.0f);
    }
    // Cases 4 and 5: 1, 2, 3 and 6 in F16 or BF16 bits, all exact.
    const bool bf16 = which == 5;
    const uint16_t h1 = bf16 ? 0x3F80 : 0x3C00, h2 = 0x4000, h3 = bf16 ? 0x4040 : 0x4200,
                   h6 = bf16 ? 0x40C0 : 0x4600;
    std::vector<uint16_t> C16, A16;
    if (which == 4 || which == 5) {
        C16.assign(static_cast<size_t>(kRows), h1);
        A16.assign(static_cast<size_t>(kRows), h3);
    }
    if (!limit_address_space()) {
        std::printf("case %d: cannot limit the address space\n", which);
        return 1;
    }
    float B = 2.0f;
    switch (which) {
        case 0: {
            // The reproducer: F32, column-major, m = 2^26, n = 1, k = 0, beta = 2.
            const gpk_status st = gpk_gemm(ctx, GPK_F32, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, kRows, 1, 0, 1.0,
                                           nullptr, kRows, nullptr, 1, 2.0, C.data(), kRows);
            if (st != GPK_SUCCESS) {
                std::printf("gemm k = 0 -> %s: %s\n", gpk_status_string(st), gpk_last_error(ctx));
                fail("gemm with k = 0 allocates: C = beta C needs no memory");
            } else {
                for (int64_t i = 0; i < kRows; ++i)
                    if (C[static_cast<size_t>(i)] != 2.0f) {
                        fail("gemm with k = 0: C is not 2 C");
                        break;
                    }
            }
            break;
        }
        case 1:
        case 2: {
            // k = 1: C = 3 * 2 = 6 in every row, through the non-transposed (case 1)
            // and the transposed (case 2, A is 1 x m with lda 1) loops.
            const bool ta = which == 2;
            const gpk_status st = gpk_gemm(ctx, GPK_F32, GPK_COL_MAJOR, ta ? GPK_TRANS : GPK_NO_TRANS, GPK_NO_TRANS,
                                           kRows, 1, 1, 1.0, A.data(), ta ? 1 : kRows, &B, 1, 0.0, C.data(), kRows);
            if (st == GPK_ERROR_OUT_OF_MEMORY) {
                for (int64_t i = 0; i < kRows; ++i)
                    if (C[static_cast<size_t>(i)] != 1.0f) {
                        fail("gemm returned GPK_ERROR_OUT_OF_MEMORY after writing C");
                        break;
                    }
            } else if (st != GPK_SUCCESS) {
                std::printf("gemm k = 1 -> %s: %s\n", gpk_status_string(st), gpk_last_error(ctx));
                fail("gemm with m = 2^26 failed");
            } else {
                for (int64_t i = 0; i < kRows; ++i)
                    if (C[static_cast<size_t>(i)] != 6.0f) {
                        fail("gemm with m = 2^26: C is not A B");
                        break;
                    }
            }
            break;
        }
        case 3: {
#if defined(GPK_TEST_ASAN)
            // AddressSanitizer's allocator ends the process on a failed operator new
            // instead of throwing std::bad_alloc: nothing to learn here under it.
            std::printf("case 3: skipped under AddressSanitizer\n");
#else
            // n = 2^40 elements: 2 GiB of partial results cannot be had under the
            // limit, so the call must fail before it reads x -- which holds 4
            // elements, and whose reading would be out of bounds.
            float x[4] = {1, 2, 3, 4}, r = -1.0f;
            const gpk_status st = gpk_reduce(ctx, GPK_F32, GPK_SUM, x, int64_t{1} << 40, &r);
            if (st != GPK_ERROR_OUT_OF_MEMORY) {
                std::printf("reduce -> %s\n", gpk_status_string(st));
                fail("reduce whose partials cannot fit did not return GPK_ERROR_OUT_OF_MEMORY");
            }
            if (r != -1.0f) fail("a failed reduce wrote its result");
            if (gpk_last_error(ctx)[0] == '\0') fail("no message after GPK_ERROR_OUT_OF_MEMORY");
#endif
            break;
        }
        case 4:
        case 5: {
            // C = A B with m = 2^26, n = k = 1: 3 * 2 = 6 in every row.
            const uint16_t b16 = h2;
            const gpk_status st = gpk_gemm(ctx, bf16 ? GPK_BF16 : GPK_F16, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS,
                                           kRows, 1, 1, 1.0, A16.data(), kRows, &b16, 1, 0.0, C16.data(), kRows);
            if (st != GPK_SUCCESS) {
                std::printf("%s gemm m = 2^26 -> %s: %s\n", bf16 ? "BF16" : "F16", gpk_status_string(st),
                            gpk_last_error(ctx));
                fail("a 16-bit gemm with m = 2^26 failed: it needs no memory");
                for (int64_t i = 0; i < kRows; ++i)
                    if (C16[static_cast<size_t>(i)] != h1) {
                        fail("the failed 16-bit gemm wrote C");
                        break;
                    }
            } else {
                for (int64_t i = 0; i < kRows; ++i)
                    if (C16[static_cast<size_t>(i)] != h6) {
                        fail("16-bit gemm with m = 2^26: C is not A B");
                        break;
                    }
            }
            break;
        }
        default: break;
    }
    gpk_destroy(ctx);
    return failures == 0 ? 0 : 1;
}

// Small integers (|v| <= 3) from a fixed sequence: every sum below is exact.
float small(size_t i) { return static_cast<float>(static_cast<int>(((i * 2654435761u) >> 7) % 7) - 3); }

// F16 bits of a small integer (|v| <= 3).
uint16_t to_f16(float v) {
    static const uint16_t bits[7] = {0xC200, 0xC000, 0xBC00, 0x0000, 0x3C00, 0x4000, 0x4200};
    return bits[static_cast<int>(v) + 3];
}
float from_f16(uint16_t h) {
    if ((h & 0x7FFF) == 0) return 0.0f;
    const int e = (h >> 10) & 0x1F, m = h & 0x3FF;
    const float v = std::ldexp(static_cast<float>(1024 + m), e - 25);
    return (h & 0x8000) ? -v : v;
}

void *no_work(void *) { return nullptr; }

// Case 6. Nothing of libgpk has run in this process when the limit is set.
int run_threads_case() {
    // Every array the calls use, made first: the limit is about the library.
    constexpr int64_t n = 256, h = 64, bm = 32, batch = 16, tn = 512;
    constexpr int64_t count = int64_t{1} << 20;
    constexpr uint64_t samples = uint64_t{1} << 22;
    std::vector<float> A(n * n), B(n * n), C(n * n, -1.0f), X(count), T(tn * tn), TT(tn * tn, -1.0f);
    std::vector<float> BA(bm * bm * batch), BB(bm * bm * batch), BC(bm * bm * batch, -1.0f);
    std::vector<uint16_t> HA(h * h), HB(h * h), HC(h * h, 0x7E00);
    for (size_t i = 0; i < A.size(); ++i) A[i] = small(i), B[i] = small(i + 7);
    for (size_t i = 0; i < X.size(); ++i) X[i] = small(i + 3);
    for (size_t i = 0; i < T.size(); ++i) T[i] = small(i + 5);
    for (size_t i = 0; i < BA.size(); ++i) BA[i] = small(i + 11), BB[i] = small(i + 13);
    for (size_t i = 0; i < HA.size(); ++i) HA[i] = to_f16(small(i + 17)), HB[i] = to_f16(small(i + 19));

    // Below one thread's stack (glibc gives a thread RLIMIT_STACK's 8 MiB, or 2 MiB
    // and more where it is unlimited) but enough for what the calls allocate.
    if (!limit_address_space(size_t{1} << 20)) {
        std::printf("case 6: cannot limit the address space\n");
        return 1;
    }
    gpk_context *ctx = nullptr;
    if (gpk_create(&ctx, GPK_BACKEND_HOST, 0) != GPK_SUCCESS) {
        std::printf("gpk_create under the limit: %s\n", gpk_last_error(nullptr));
        return 1;
    }
    auto expect_ok = [&](gpk_status st, const char *call) {
        if (st == GPK_SUCCESS) return true;
        std::printf("%s -> %s: %s\n", call, gpk_status_string(st), gpk_last_error(ctx));
        fail(call);
        return false;
    };
    // gemm, F32 and F16, column-major: C(i, j) = sum_p A(i, p) B(p, j).
    if (expect_ok(gpk_gemm(ctx, GPK_F32, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, n, n, n, 1.0, A.data(), n,
                           B.data(), n, 0.0, C.data(), n),
                  "F32 gemm 256^3"))
        for (int64_t j = 0; j < n; ++j)
            for (int64_t i = 0; i < n; ++i) {
                float want = 0;
                for (int64_t p = 0; p < n; ++p) want += A[i + p * n] * B[p + j * n];
                if (C[i + j * n] != want) {
                    fail("F32 gemm: wrong C");
                    i = j = n;
                }
            }
    if (expect_ok(gpk_gemm(ctx, GPK_F16, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, h, h, h, 1.0, HA.data(), h,
                           HB.data(), h, 0.0, HC.data(), h),
                  "F16 gemm 64^3"))
        for (int64_t j = 0; j < h; ++j)
            for (int64_t i = 0; i < h; ++i) {
                float want = 0;
                for (int64_t p = 0; p < h; ++p) want += from_f16(HA[i + p * h]) * from_f16(HB[p + j * h]);
                if (from_f16(HC[i + j * h]) != want) {
                    fail("F16 gemm: wrong C");
                    i = j = h;
                }
            }
    // batched: 16 products of 32^3, at least as many as threads (one product each).
    const int64_t s = bm * bm;
    if (expect_ok(gpk_gemm_strided_batched(ctx, GPK_F32, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, bm, bm, bm, 1.0,
                                           BA.data(), bm, s, BB.data(), bm, s, 0.0, BC.data(), bm, s, batch),
                  "F32 batched gemm 16 x 32^3"))
        for (int64_t q = 0; q < batch; ++q)
            for (int64_t j = 0; j < bm; ++j)
                for (int64_t i = 0; i < bm; ++i) {
                    float want = 0;
                    for (int64_t p = 0; p < bm; ++p) want += BA[q * s + i + p * bm] * BB[q * s + p + j * bm];
                    if (BC[q * s + i + j * bm] != want) {
                        fail("F32 batched gemm: wrong C");
                        q = batch, i = j = bm;
                    }
                }
    float sum = -1.0f;
    if (expect_ok(gpk_reduce(ctx, GPK_F32, GPK_SUM, X.data(), count, &sum), "F32 sum of 2^20")) {
        double want = 0;
        for (float v : X) want += v;
        if (sum != static_cast<float>(want)) fail("F32 sum: wrong result");
    }
    if (expect_ok(gpk_transpose(ctx, GPK_F32, GPK_COL_MAJOR, tn, tn, T.data(), tn, TT.data(), tn),
                  "F32 transpose 512^2"))
        for (int64_t j = 0; j < tn; ++j)
            for (int64_t i = 0; i < tn; ++i)
                if (TT[j + i * tn] != T[i + j * tn]) {
                    fail("transpose: wrong B");
                    i = j = tn;
                }
    // pi over 2^22 samples: the same hits as two ranges that split them, and an
    // estimate within 6 standard errors of pi.
    gpk_pi_result whole{}, lo{}, hi{};
    if (expect_ok(gpk_pi(ctx, samples, 7, &whole), "pi 2^22") &&
        expect_ok(gpk_pi_range(ctx, 0, samples / 3, 7, &lo), "pi_range first third") &&
        expect_ok(gpk_pi_range(ctx, samples / 3, samples - samples / 3, 7, &hi), "pi_range the rest")) {
        if (lo.hits + hi.hits != whole.hits) fail("pi: the ranges' hits do not add up to the whole's");
        if (!(std::fabs(whole.estimate - M_PI) < 6 * whole.std_error)) fail("pi: estimate far from pi");
    }
    gpk_destroy(ctx);

    // The case means something only if no thread could be created under the limit.
    pthread_t probe;
    if (pthread_create(&probe, nullptr, no_work, nullptr) == 0) {
        pthread_join(probe, nullptr);
        fail("a thread could still be created under the limit: the case did not test thread creation failing");
    }
    return failures == 0 ? 0 : 1;
}

int small_int(size_t i) { return static_cast<int>(small(i)); }

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
void fail_run(const std::string &what, const char *fmt, ...) {
    char text[512];
    va_list args;
    va_start(args, fmt);
    std::vsnprintf(text, sizeof text, fmt, args);
    va_end(args);
    std::printf("FAIL: %s: %s\n", what.c_str(), text);
    std::fflush(stdout);
    ++failures;
}


uint16_t to_16bit(int v, bool bf16) {
    static const uint16_t f16[7] = {0xC200, 0xC000, 0xBC00, 0x0000, 0x3C00, 0x4000, 0x4200};
    static const uint16_t b16[7] = {0xC040, 0xC000, 0xBF80, 0x0000, 0x3F80, 0x4000, 0x4040};
    return (bf16 ? b16 : f16)[v + 3];
}

// An integer-valued F16 or BF16 (|v| < 2^8 for BF16, 2^11 for F16) back to an int.
bool from_16bit(uint16_t h, bool bf16, long *v) {
    if ((h & 0x7FFF) == 0) return *v = 0, true;
    const int mant_bits = bf16 ? 7 : 10, bias = bf16 ? 127 : 15, exp_mask = bf16 ? 0xFF : 0x1F;
    const int e = (h >> mant_bits) & exp_mask, m = h & ((1 << mant_bits) - 1);
    if (e == 0 || e == exp_mask) return false;
    const int shift = e - bias - mant_bits;
    long mag = (long{1} << mant_bits) + m;
    if (shift >= 0)
        mag <<= shift;
    else if (mag % (long{1} << -shift) != 0)
        return false;
    else
        mag >>= -shift;
    *v = (h & 0x8000) ? -mag : mag;
    return true;
}

// One call under test: `prepare` resets its outputs to their poison, `call` makes it,
// `check` says what is wrong with the outputs of a successful call ("" when right).
struct Call {
    std::string name;
    std::function<void()> prepare;
    std::function<gpk_status(gpk_context *)> call;
    std::function<std::string()> check;
    std::vector<std::pair<const void *, size_t>> outputs;
};

void sweep(gpk_context *ctx, const Call &c) {
    // A run without a failure first: the call must be right, and this counts what it
    // allocates.
    c.prepare();
    g_made = 0;
    g_fail_at = -1;  // count, fail nothing
    gpk_status st = c.call(ctx);
    long total = g_made.exchange(0);
    g_fail_at = 0;
    if (st != GPK_SUCCESS)
        return fail_run(c.name, "without a failed allocation: %s: %s", gpk_status_string(st), gpk_last_error(ctx));
    std::string wrong = c.check();
    if (!wrong.empty()) return fail_run(c.name, "without a failed allocation: %s", wrong.c_str());

    const int failures_before = failures;
    for (long at = 1; at <= total + 1; ++at) {
        c.prepare();
        std::vector<std::vector<unsigned char>> before;
        for (const auto &o : c.outputs) {
            const auto *p = static_cast<const unsigned char *>(o.first);
            before.emplace_back(p, p + o.second);
        }
        g_made = 0;
        g_fail_at = at;
        st = c.call(ctx);
        const long made = g_made.exchange(0);
        g_fail_at = 0;
        const std::string run =
            c.name + ", allocation " + std::to_string(at) + " of " + std::to_string(made) + " failing";
        if (st == GPK_SUCCESS) {
            wrong = c.check();
            if (!wrong.empty()) fail_run(run, "succeeded with a wrong result: %s", wrong.c_str());
        } else if (st != GPK_ERROR_OUT_OF_MEMORY) {
            fail_run(run, "%s (%d), expected success or GPK_ERROR_OUT_OF_MEMORY: %s", gpk_status_string(st),
                 static_cast<int>(st), gpk_last_error(nullptr));
        } else {
            if (gpk_last_error(nullptr)[0] == '\0') fail_run(run, "GPK_ERROR_OUT_OF_MEMORY without a message");
            for (size_t i = 0; i < c.outputs.size(); ++i)
                if (std::memcmp(c.outputs[i].first, before[i].data(), before[i].size()) != 0) {
                    fail_run(run, "GPK_ERROR_OUT_OF_MEMORY, but output %zu was written", i);
                    break;
                }
        }
        if (made < at) break;  // every allocation of the call has been failed once
    }
    if (failures == failures_before)
        std::printf("ok: %s (%ld allocations, each failed in turn)\n", c.name.c_str(), total);
}

// C(i, j) of column-major m x n = A (m x k) B (k x n), lda = m, ldb = k: the exact sum.
long product(const std::vector<int> &a, const std::vector<int> &b, int64_t m, int64_t k, int64_t i, int64_t j,
             size_t a0 = 0, size_t b0 = 0) {
    long s = 0;
    for (int64_t p = 0; p < k; ++p) s += long{a[a0 + i + p * m]} * b[b0 + p + j * k];
    return s;
}

// Case 7, on one context.
int run_alloc_case() {
    gpk_context *ctx = nullptr;
    // gpk_create itself: out of memory leaves *ctx NULL. Its allocations show that the
    // replaced operator new reaches the library (a sweep over nothing proves nothing).
    {
        const int failures_before = failures;
        long total = 0;
        for (long at = 1;; ++at) {
            gpk_context *made = reinterpret_cast<gpk_context *>(&made);
            g_made = 0;
            g_fail_at = at;
            const gpk_status st = gpk_create(&made, GPK_BACKEND_HOST, 0);
            const long count = g_made.exchange(0);
            g_fail_at = 0;
            total = count;
            if (st == GPK_SUCCESS) {
                gpk_destroy(made);
            } else if (st != GPK_ERROR_OUT_OF_MEMORY || made != nullptr) {
                fail_run("gpk_create", "allocation %ld failing: %s, *ctx %p", at, gpk_status_string(st),
                         static_cast<void *>(made));
            }
            if (count < at) break;
        }
        if (total == 0)
            fail_run("gpk_create", "made no allocation through operator new: the test cannot reach the library");
        else if (failures == failures_before)
            std::printf("ok: gpk_create (%ld allocations, each failed in turn)\n", total);
    }
    if (gpk_create(&ctx, GPK_BACKEND_HOST, 0) != GPK_SUCCESS) {
        std::printf("gpk_create: %s\n", gpk_last_error(nullptr));
        return 1;
    }

    std::vector<Call> calls;
    // gemm, F32: 256 x 256 x 64, enough work to start helper threads.
    constexpr int64_t m = 256, n = 256, k = 64;
    std::vector<int> ia(m * k), ib(k * n);
    for (size_t i = 0; i < ia.size(); ++i) ia[i] = small_int(i);
    for (size_t i = 0; i < ib.size(); ++i) ib[i] = small_int(i + 5);
    std::vector<float> fa(ia.begin(), ia.end()), fb(ib.begin(), ib.end()), fc(m * n);
    calls.push_back({"F32 gemm 256 x 256 x 64", [&] { std::fill(fc.begin(), fc.end(), -7.0f); },
                     [&](gpk_context *c) {
                         return gpk_gemm(c, GPK_F32, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, m, n, k, 1.0, fa.data(),
                                         m, fb.data(), k, 0.0, fc.data(), m);
                     },
                     [&]() -> std::string {
                         for (int64_t j = 0; j < n; ++j)
                             for (int64_t i = 0; i < m; ++i)
                                 if (fc[i + j * m] != static_cast<float>(product(ia, ib, m, k, i, j)))
                                     return "C(" + std::to_string(i) + ", " + std::to_string(j) + ") is wrong";
                         return "";
                     },
                     {{fc.data(), fc.size() * sizeof(float)}}});

    // F16 and BF16: gemm, and batched gemm of 4 products of 64^3 (the products one
    // after another on this machine's threads or spread over them).
    constexpr int64_t h = 64, batch = 4;
    std::vector<int> ha(h * h * batch), hb(h * h * batch);
    for (size_t i = 0; i < ha.size(); ++i) ha[i] = small_int(i + 1), hb[i] = small_int(i + 9);
    std::vector<uint16_t> a16[2], b16[2], c16[2];
    for (int bf = 0; bf < 2; ++bf) {
        for (int v : ha) a16[bf].push_back(to_16bit(v, bf));
        for (int v : hb) b16[bf].push_back(to_16bit(v, bf));
        c16[bf].resize(h * h * batch);
    }
    for (int bf = 0; bf < 2; ++bf) {
        const int dtype = bf ? GPK_BF16 : GPK_F16;
        const char *dname = bf ? "BF16" : "F16";
        // |C| <= 64 * 9: exact in BF16 only when a multiple of the spacing, so C's
        // values are compared after rounding the exact sum to the dtype in the test.
        auto check = [&, bf](int64_t products) -> std::string {
            for (int64_t q = 0; q < products; ++q)
                for (int64_t j = 0; j < h; ++j)
                    for (int64_t i = 0; i < h; ++i) {
                        const size_t off = static_cast<size_t>(q * h * h);
                        const long want = product(ha, hb, h, h, i, j, off, off);
                        long got = 0;
                        const bool exact = from_16bit(c16[bf][off + i + j * h], bf, &got);
                        // BF16 keeps 8 significant bits: want rounded to them.
                        long rounded = want;
                        if (bf) {
                            long mag = want < 0 ? -want : want, unit = 1;
                            while ((mag >> 8) >= unit) unit <<= 1;
                            const long lo = mag / unit * unit, rem = mag - lo;
                            mag = rem * 2 > unit || (rem * 2 == unit && (lo / unit) % 2 == 1) ? lo + unit : lo;
                            rounded = want < 0 ? -mag : mag;
                        }
                        if (!exact || got != rounded)
                            return "product " + std::to_string(q) + ", C(" + std::to_string(i) + ", " +
                                   std::to_string(j) + ") = " + std::to_string(got) + ", expected " +
                                   std::to_string(rounded);
                    }
            return "";
        };
        auto poison = [&, bf] { std::fill(c16[bf].begin(), c16[bf].end(), uint16_t{0x7E00}); };
        calls.push_back({std::string(dname) + " gemm 64^3", poison,
                         [&, bf, dtype](gpk_context *c) {
                             return gpk_gemm(c, dtype, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, h, h, h, 1.0,
                                             a16[bf].data(), h, b16[bf].data(), h, 0.0, c16[bf].data(), h);
                         },
                         [check] { return check(1); }, {{c16[bf].data(), c16[bf].size() * 2}}});
        calls.push_back({std::string(dname) + " batched gemm 4 x 64^3", poison,
                         [&, bf, dtype](gpk_context *c) {
                             return gpk_gemm_strided_batched(c, dtype, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, h, h,
                                                             h, 1.0, a16[bf].data(), h, h * h, b16[bf].data(), h,
                                                             h * h, 0.0, c16[bf].data(), h, h * h, batch);
                         },
                         [check] { return check(batch); }, {{c16[bf].data(), c16[bf].size() * 2}}});
    }

    // F32 batched gemm: 16 products of 32^3, spread over the threads.
    constexpr int64_t bm = 32, bb = 16;
    std::vector<int> ba(bm * bm * bb), bbv(bm * bm * bb);
    for (size_t i = 0; i < ba.size(); ++i) ba[i] = small_int(i + 2), bbv[i] = small_int(i + 4);
    std::vector<float> fba(ba.begin(), ba.end()), fbb(bbv.begin(), bbv.end()), fbc(bm * bm * bb);
    calls.push_back({"F32 batched gemm 16 x 32^3", [&] { std::fill(fbc.begin(), fbc.end(), -7.0f); },
                     [&](gpk_context *c) {
                         return gpk_gemm_strided_batched(c, GPK_F32, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, bm, bm,
                                                         bm, 1.0, fba.data(), bm, bm * bm, fbb.data(), bm, bm * bm, 0.0,
                                                         fbc.data(), bm, bm * bm, bb);
                     },
                     [&]() -> std::string {
                         for (int64_t q = 0; q < bb; ++q)
                             for (int64_t j = 0; j < bm; ++j)
                                 for (int64_t i = 0; i < bm; ++i) {
                                     const size_t off = static_cast<size_t>(q * bm * bm);
                                     const long want = product(ba, bbv, bm, bm, i, j, off, off);
                                     if (fbc[off + i + j * bm] != static_cast<float>(want))
                                         return "product " + std::to_string(q) + " is wrong";
                                 }
                         return "";
                     },
                     {{fbc.data(), fbc.size() * sizeof(float)}}});

    // reduce: F32 and F16 sums and an I32 minimum over 2^20 elements (partial results
    // on the heap); transpose 512^2; pi over 2^22 samples.
    constexpr int64_t count = int64_t{1} << 20;
    std::vector<int> ix(count);
    for (size_t i = 0; i < ix.size(); ++i) ix[i] = small_int(i + 3);
    std::vector<float> fx(ix.begin(), ix.end());
    std::vector<int32_t> i32x(ix.begin(), ix.end());
    std::vector<uint16_t> hx;
    for (int v : ix) hx.push_back(to_16bit(v, false));
    long isum = 0;
    int imin = 3;
    for (int v : ix) isum += v, imin = v < imin ? v : imin;
    float rf = 0;
    int64_t ri = 0;
    calls.push_back({"F32 sum of 2^20", [&] { rf = -0.5f; },
                     [&](gpk_context *c) { return gpk_reduce(c, GPK_F32, GPK_SUM, fx.data(), count, &rf); },
                     [&]() -> std::string { return rf == static_cast<float>(isum) ? "" : "wrong sum"; },
                     {{&rf, sizeof rf}}});
    calls.push_back({"F16 sum of 2^20", [&] { rf = -0.5f; },
                     [&](gpk_context *c) { return gpk_reduce(c, GPK_F16, GPK_SUM, hx.data(), count, &rf); },
                     [&]() -> std::string { return rf == static_cast<float>(isum) ? "" : "wrong sum"; },
                     {{&rf, sizeof rf}}});
    calls.push_back({"I32 minimum of 2^20", [&] { ri = 99; },
                     [&](gpk_context *c) { return gpk_reduce(c, GPK_I32, GPK_MIN, i32x.data(), count, &ri); },
                     [&]() -> std::string { return ri == imin ? "" : "wrong minimum"; }, {{&ri, sizeof ri}}});
    constexpr int64_t tn = 512;
    std::vector<float> ta(tn * tn), tb(tn * tn);
    for (size_t i = 0; i < ta.size(); ++i) ta[i] = static_cast<float>(i);
    calls.push_back({"F32 transpose 512^2", [&] { std::fill(tb.begin(), tb.end(), -1.0f); },
                     [&](gpk_context *c) {
                         return gpk_transpose(c, GPK_F32, GPK_COL_MAJOR, tn, tn, ta.data(), tn, tb.data(), tn);
                     },
                     [&]() -> std::string {
                         for (int64_t j = 0; j < tn; ++j)
                             for (int64_t i = 0; i < tn; ++i)
                                 if (tb[j + i * tn] != ta[i + j * tn]) return "B is not A^T";
                         return "";
                     },
                     {{tb.data(), tb.size() * sizeof(float)}}});
    // pi: the hits of a run with no failure, which depend on (samples, seed) alone.
    gpk_pi_result pr{}, first{};
    if (gpk_pi(ctx, uint64_t{1} << 22, 5, &first) != GPK_SUCCESS) fail_run("gpk_pi", "%s", gpk_last_error(ctx));
    calls.push_back({"pi over 2^22 samples", [&] { pr = gpk_pi_result{-1, -1, 0, 0}; },
                     [&](gpk_context *c) { return gpk_pi(c, uint64_t{1} << 22, 5, &pr); },
                     [&]() -> std::string {
                         return pr.hits == first.hits && pr.samples == first.samples ? "" : "other hits";
                     },
                     {{&pr, sizeof pr}}});

    for (const Call &c : calls) sweep(ctx, c);
    gpk_destroy(ctx);
    return failures == 0 ? 0 : 1;
}

}  // namespace

int main() {
    const char *names[] = {"gemm k = 0 (the reproducer)",
                           "gemm m = 2^26, k = 1",
                           "gemm m = 2^26, k = 1, A^T",
                           "reduce out of memory",
                           "F16 gemm m = 2^26, k = 1",
                           "BF16 gemm m = 2^26, k = 1",
                           "every op with no thread to be had, the limit set before the first call",
                           "every allocation of a call failed in turn"};
    constexpr int kCases = 8;
    int failed = 0;
    for (int which = 0; which < kCases; ++which) {
        std::fflush(stdout);
        const pid_t pid = fork();
        if (pid < 0) {
            std::perror("fork");
            return 1;
        }
        if (pid == 0) {
            const int rc = which == 6 ? run_threads_case() : which == 7 ? run_alloc_case() : run_case(which);
            std::fflush(stdout);
            std::_Exit(rc);
        }
        int status = 0;
        waitpid(pid, &status, 0);
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
            std::printf("ok: %s\n", names[which]);
        } else if (WIFSIGNALED(status)) {
            std::printf("FAIL: %s: the process died of signal %d (%s)\n", names[which], WTERMSIG(status),
                        strsignal(WTERMSIG(status)));
            ++failed;
        } else {
            std::printf("FAIL: %s: exit status %d\n", names[which], WEXITSTATUS(status));
            ++failed;
        }
    }
    std::printf("test_host_oom: %d of %d cases failed\n", failed, kCases);
    return failed == 0 ? 0 : 1;
}
