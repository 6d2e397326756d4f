// Resource hygiene: contexts are created and destroyed thousands of times, each
// doing a little of every op and failing once (which stores a message), and the
// process must not grow. Host memory is measured as the resident set
// (/proc/self/statm), device memory with cudaMemGetInfo; both are taken after a
// warm-up, so that one-time costs (the OpenMP pool, the CUDA context, lazily loaded
// kernels) are not counted as growth.
#include "../harness.hpp"

#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define GPKT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GPKT_ASAN 1
#endif
#endif

namespace {

using namespace gpkt;

// AddressSanitizer keeps freed memory in quarantine, so the resident set grows
// there whatever the library does; LeakSanitizer checks at exit instead.
#if defined(GPKT_ASAN)
constexpr bool kMeasureHost = false;
#else
constexpr bool kMeasureHost = true;
#endif

int64_t resident_bytes() {
    long pages = 0, resident = 0;
    FILE *f = std::fopen("/proc/self/statm", "r");
    if (f == nullptr) return -1;
    const int got = std::fscanf(f, "%ld %ld", &pages, &resident);
    std::fclose(f);
    return got == 2 ? static_cast<int64_t>(resident) * sysconf(_SC_PAGESIZE) : -1;
}

int64_t device_used_bytes() {
    size_t free_bytes = 0, total = 0;
    if (cudaMemGetInfo(&free_bytes, &total) != cudaSuccess) return -1;
    return static_cast<int64_t>(total - free_bytes);
}

// Device copies of the arrays one cycle passes, made once: the library's own
// allocations are what is measured.
struct DeviceData {
    DeviceArray x, result;
    bool ok = false;
};

// One life of a context: create, a call of every op, a failure, destroy. Returns
// an empty string, or what went wrong.
std::string cycle(int backend, int i, DeviceData *dev) {
    gpk_context *ctx = nullptr;
    gpk_status st = gpk_create(&ctx, backend, 0);
    if (st != GPK_SUCCESS) return format("gpk_create -> %s: %s", gpk_status_string(st), gpk_last_error(nullptr));
    std::string problem;
    auto need = [&](gpk_status got, const char *call) {
        if (got != GPK_SUCCESS && problem.empty())
            problem = format("%s -> %s: %s", call, gpk_status_string(got), gpk_last_error(ctx));
    };

    double A[8 * 8], B[8 * 8], C[8 * 8];
    for (int k = 0; k < 64; ++k) A[k] = k % 5, B[k] = k % 3, C[k] = 1;
    need(gpk_gemm(ctx, GPK_F64, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_TRANS, 8, 8, 8, 1.0, A, 8, B, 8, 0.5, C, 8),
         "gpk_gemm");

    float x[1000];
    for (int k = 0; k < 1000; ++k) x[k] = static_cast<float>(k % 7);
    float sum = 0;
    need(gpk_reduce(ctx, GPK_F32, GPK_SUM, x, 1000, &sum), "gpk_reduce");
    if (problem.empty() && sum != 2997.0f) problem = format("reduce gave %g, expected 2997", sum);
    if (dev != nullptr && dev->ok)
        need(gpk_reduce(ctx, GPK_I32, GPK_MAX, dev->x.get(), 1 << 20, dev->result.get()), "gpk_reduce (device)");

    int32_t T[16 * 9], U[9 * 16];
    for (int k = 0; k < 16 * 9; ++k) T[k] = k;
    need(gpk_transpose(ctx, GPK_I32, GPK_ROW_MAJOR, 16, 9, T, 9, U, 16), "gpk_transpose");

    // The vendor's generator now and then: cuRAND's handle is the costliest to make.
    if (backend == GPK_BACKEND_CUDA && i % 10 == 0) {
        const char *vendor = gpk_variant_name(ctx, GPK_OP_PI, 0);
        need(gpk_set_variant(ctx, GPK_OP_PI, vendor), "gpk_set_variant(pi, vendor)");
    }
    gpk_pi_result pi{};
    need(gpk_pi(ctx, 4096, static_cast<uint64_t>(i), &pi), "gpk_pi");

    // A failure stores its message on the context.
    if (gpk_gemm(ctx, GPK_F64, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, 8, 8, 8, 1.0, A, 3, B, 8, 0.0, C, 8) !=
            GPK_ERROR_INVALID_ARGUMENT &&
        problem.empty())
        problem = "gpk_gemm with lda 3 < m did not fail";
    if (gpk_last_error(ctx)[0] == '\0' && problem.empty()) problem = "no message after a failure";

    need(gpk_synchronize(ctx), "gpk_synchronize");
    st = gpk_destroy(ctx);
    if (st != GPK_SUCCESS && problem.empty()) problem = format("gpk_destroy -> %s", gpk_status_string(st));
    return problem;
}

struct Plan {
    int warmup, cycles;
    int64_t host_slack, device_slack;  // growth allowed over all the cycles, in bytes
};

void run(Suite &suite, const Plan &plan) {
    Case c(suite, format("%d contexts created and destroyed on the %s backend", plan.cycles, suite.backend_name()));
    DeviceData dev;
    if (suite.cuda()) {
        std::vector<int32_t> x(1 << 20, 3);
        dev.ok = dev.x.allocate(x.size() * sizeof(int32_t)) && dev.x.upload(x.data()) && dev.result.allocate(8);
        if (!dev.ok) c.fail("device arrays: %s", dev.x.ok() ? dev.result.error() : dev.x.error());
    }
    for (int i = 0; i < plan.warmup; ++i) {
        const std::string problem = cycle(suite.backend(), i, &dev);
        if (!problem.empty()) return c.fail("warm-up cycle %d: %s", i, problem.c_str());
    }
    const int64_t host0 = resident_bytes(), device0 = suite.cuda() ? device_used_bytes() : 0;
    for (int i = 0; i < plan.cycles; ++i) {
        const std::string problem = cycle(suite.backend(), plan.warmup + i, &dev);
        if (!problem.empty()) return c.fail("cycle %d: %s", i, problem.c_str());
    }
    const int64_t host1 = resident_bytes(), device1 = suite.cuda() ? device_used_bytes() : 0;

    if (kMeasureHost) {
        if (host0 < 0 || host1 < 0) return c.fail("cannot read /proc/self/statm");
        std::printf("resident set: %.1f KiB before, %.1f KiB after %d cycles (%+.1f KiB)\n", host0 / 1024.0,
                    host1 / 1024.0, plan.cycles, (host1 - host0) / 1024.0);
        if (host1 - host0 > plan.host_slack)
            c.fail("the resident set grew by %.1f KiB over %d cycles (%.0f bytes a cycle); at most %.0f KiB allowed",
                   (host1 - host0) / 1024.0, plan.cycles, static_cast<double>(host1 - host0) / plan.cycles,
                   plan.host_slack / 1024.0);
    } else {
        std::printf("resident set not measured under AddressSanitizer (its quarantine holds freed memory); "
                    "LeakSanitizer checks at exit\n");
    }
    if (suite.cuda()) {
        if (device0 < 0 || device1 < 0) return c.fail("cudaMemGetInfo failed");
        std::printf("device memory in use: %.1f MiB before, %.1f MiB after %d cycles (%+.1f MiB)\n",
                    device0 / 1048576.0, device1 / 1048576.0, plan.cycles, (device1 - device0) / 1048576.0);
        if (device1 - device0 > plan.device_slack)
            c.fail("device memory in use grew by %.1f MiB over %d cycles; at most %.1f MiB allowed",
                   (device1 - device0) / 1048576.0, plan.cycles, plan.device_slack / 1048576.0);
    }
}

}  // namespace

int main(int argc, char **argv) {
    Suite suite("test_lifecycle", argc, argv);
    // A leak of 64 bytes a cycle shows on the host backend; on the CUDA backend every
    // cycle allocates device buffers of 2 MiB granules and vendor handles, so a leak
    // of any of them is far above the slack.
    // Under AddressSanitizer a cycle costs ten times as much and only LeakSanitizer
    // judges, so fewer do.
    const Plan host{200, kMeasureHost ? 5000 : 1000, 320 << 10, 0};
    const Plan cuda{20, 600, 8 << 20, 4 << 20};
    run(suite, suite.cuda() ? cuda : host);
    return suite.finish();
}
