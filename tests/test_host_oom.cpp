// The host backend when memory is scarce. Each case runs in a child process under an
// address-space limit (setrlimit(RLIMIT_AS)) of what the child already uses plus
// 300 MiB, so that the limit touches no other test. A call may succeed or return
// GPK_ERROR_OUT_OF_MEMORY with its output untouched; it may never end the process
// (an exception escaping an OpenMP region calls std::terminate).
//  - gemm with k = 0 (C = beta C) needs no memory at all: it must succeed;
//  - gemm with m = 2^26 rows (a column accumulator would be 512 MiB): must succeed;
//  - reduce whose partial results cannot fit: GPK_ERROR_OUT_OF_MEMORY, result
//    untouched, and x (far too short for n) never read.
#include "gpk/gpk.h"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define GPK_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GPK_TEST_ASAN 1
#endif
#endif

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

bool limit_address_space() {
    const size_t used = address_space_in_use();
    if (used == 0) return false;
    rlimit lim{};
    lim.rlim_cur = lim.rlim_max = used + kHeadroom;
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
    // Start OpenMP's threads and the library's one-time set-up before the limit: the
    // limit is about what a call allocates.
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
        default: break;
    }
    gpk_destroy(ctx);
    return failures == 0 ? 0 : 1;
}

}  // namespace

int main() {
    const char *names[] = {"gemm k = 0 (the reproducer)", "gemm m = 2^26, k = 1", "gemm m = 2^26, k = 1, A^T",
                           "reduce out of memory"};
    int failed = 0;
    for (int which = 0; which < 4; ++which) {
        std::fflush(stdout);
        const pid_t pid = fork();
        if (pid < 0) {
            std::perror("fork");
            return 1;
        }
        if (pid == 0) {
            const int rc = run_case(which);
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
    std::printf("test_host_oom: %d of 4 cases failed\n", failed);
    return failed == 0 ? 0 : 1;
}
