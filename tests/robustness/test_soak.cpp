// Soak: several threads, each with its own contexts (a CUDA one and a host one, made
// anew every few dozen calls with random staging settings, some in validation mode),
// call every op and every variant with random shapes, dtypes, layouts, host, device
// and mixed arrays, for GPK_SOAK_SECONDS seconds (default 120) on GPK_SOAK_THREADS
// threads (default 4). Every result is checked against the host backend; no call may
// fail, except that a rung chosen by name may refuse a call it cannot take (the
// vector transposes, for alignment) with GPK_ERROR_NOT_SUPPORTED naming itself: such
// a refusal is counted, and the output must be untouched.
//
// Leaks. The run is two phases of the same work: the first, half the time, counts
// each thread's calls; the second replays exactly those calls (the same seeds, the
// same count). Memory is compared between the ends of the two phases, every context
// destroyed at both. What the first phase leaves behind legitimately stays the same
// in the second: kernels the CUDA runtime loads on first use, and the vendor
// libraries' process-wide caches keyed by shape (cuBLAS's heuristics cache), which
// grow with every new shape up to their capacity; with random shapes they kept
// growing across a whole run, which read as a leak whenever the measured window saw
// shapes the warm-up had not. A leak of the library's own (per call or per context)
// grows again in the replay.
// The CUDA backend only; skipped (77) without a usable GPU.
#include "../harness.hpp"

#include <malloc.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

namespace {

using namespace gpkt;
using Clock = std::chrono::steady_clock;

std::mutex g_print;
std::atomic<long> g_failures{0}, g_calls{0}, g_capped{0}, g_refused{0};

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
void report(const char *fmt, ...) {
    const long n = ++g_failures;
    if (n > 40) return;
    va_list args;
    va_start(args, fmt);
    const std::string msg = vformat(fmt, args);
    va_end(args);
    std::lock_guard<std::mutex> lock(g_print);
    std::printf("FAIL: %s\n", msg.c_str());
    std::fflush(stdout);
}

size_t heap_in_use() {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    const struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
#else
    return 0;
#endif
}

size_t resident_bytes() {
    FILE *f = std::fopen("/proc/self/statm", "r");
    unsigned long size = 0, resident = 0;
    if (f != nullptr) {
        if (std::fscanf(f, "%lu %lu", &size, &resident) != 2) resident = 0;
        std::fclose(f);
    }
    return resident * 4096ul;
}

size_t device_free() {
    size_t free_bytes = 0, total = 0;
    cudaMemGetInfo(&free_bytes, &total);
    return free_bytes;
}

// (op, variant index, dtype) -> whether the variant does that dtype (learned once).
struct Support {
    std::vector<std::string> names[4];
    std::vector<unsigned> dtypes[4];  // bit d: dtype d supported
};

// A buffer in host or device memory holding a copy of `host`.
struct Placed {
    std::unique_ptr<DeviceArray> dev;
    void *ptr = nullptr;
    bool ok = true;
    Placed(std::vector<unsigned char> &host, bool device) {
        if (!device) {
            ptr = host.data();
            return;
        }
        dev = std::make_unique<DeviceArray>(host.size());
        ok = dev->upload(host.data());
        ptr = dev->get();
    }
    bool back(std::vector<unsigned char> &host) { return dev == nullptr || dev->download(host.data()); }
};

template <class T>
std::vector<unsigned char> random_bytes(Rng &rng, size_t count, bool integers) {
    std::vector<unsigned char> v(count * sizeof(T));
    T *p = reinterpret_cast<T *>(v.data());
    for (size_t i = 0; i < count; ++i)
        p[i] = integers ? static_cast<T>(rng.range(-1000, 1000)) : static_cast<T>(rng.signed_unit());
    return v;
}

std::vector<unsigned char> random_data(Rng &rng, int dtype, size_t count) {
    switch (dtype) {
        case GPK_F32: return random_bytes<float>(rng, count, false);
        case GPK_F64: return random_bytes<double>(rng, count, false);
        case GPK_I32: return random_bytes<int32_t>(rng, count, true);
        default: return random_bytes<int64_t>(rng, count, true);
    }
}

double element(const std::vector<unsigned char> &v, int dtype, size_t i) {
    switch (dtype) {
        case GPK_F32: return reinterpret_cast<const float *>(v.data())[i];
        case GPK_F64: return reinterpret_cast<const double *>(v.data())[i];
        case GPK_I32: return reinterpret_cast<const int32_t *>(v.data())[i];
        default: return static_cast<double>(reinterpret_cast<const int64_t *>(v.data())[i]);
    }
}

class Worker {
public:
    // Until `until`, or, when `calls` >= 0, exactly `calls` calls (a replay).
    Worker(int id, const Support &support, Clock::time_point until, long calls)
        : id_(id), support_(support), until_(until), limit_(calls), rng_(seed_of({id, 2026})) {}

    long calls() const { return done_; }

    void run() {
        while (more()) {
            open();
            for (int i = 0; i < 40 && more(); ++i, ++done_) {
                const int op = static_cast<int>(rng_.range(0, 3));
                switch (op) {
                    case GPK_OP_GEMM: gemm(); break;
                    case GPK_OP_REDUCE: reduce(); break;
                    case GPK_OP_TRANSPOSE: transpose(); break;
                    default: pi(); break;
                }
                ++g_calls;
            }
            close();
        }
    }

private:
    bool more() const { return limit_ >= 0 ? done_ < limit_ : Clock::now() < until_; }

    void open() {
        if (gpk_create(&cuda_, GPK_BACKEND_CUDA, 0) != GPK_SUCCESS || gpk_create(&host_, GPK_BACKEND_HOST, 0) != GPK_SUCCESS) {
            report("thread %d: gpk_create: %s", id_, gpk_last_error(nullptr));
            return;
        }
        const size_t chunks[] = {0, 4096, 65536, size_t(1) << 20, size_t(4) << 20};
        const size_t caps[] = {0, 0, size_t(256) << 20};
        streams_ = static_cast<int>(rng_.range(1, 8));
        cap_ = caps[rng_.range(0, 2)];
        if (gpk_set_staging(cuda_, streams_, chunks[rng_.range(0, 4)], cap_) != GPK_SUCCESS)
            report("thread %d: gpk_set_staging: %s", id_, gpk_last_error(cuda_));
        validation_ = rng_.range(0, 9) == 0;
        if (validation_ && gpk_set_validation(cuda_, 1) != GPK_SUCCESS)
            report("thread %d: gpk_set_validation: %s", id_, gpk_last_error(cuda_));
    }
    void close() {
        if (gpk_destroy(cuda_) != GPK_SUCCESS) report("thread %d: gpk_destroy(cuda): %s", id_, gpk_last_error(nullptr));
        if (gpk_destroy(host_) != GPK_SUCCESS) report("thread %d: gpk_destroy(host): %s", id_, gpk_last_error(nullptr));
        cuda_ = host_ = nullptr;
    }

    // A variant of op that does dtype; its name goes into the case's description.
    std::string pick(int op, int dtype) {
        std::vector<int> usable;
        for (size_t i = 0; i < support_.names[op].size(); ++i)
            if (support_.dtypes[op][i] & (1u << dtype)) usable.push_back(static_cast<int>(i));
        if (usable.empty() || rng_.range(0, 4) == 0) return "auto";
        return support_.names[op][static_cast<size_t>(usable[static_cast<size_t>(rng_.range(0, static_cast<int64_t>(usable.size()) - 1))])];
    }

    // Whether st is a success; a cap that is too small for a call is the documented
    // GPK_ERROR_OUT_OF_MEMORY naming device_bytes, counted but not a failure.
    // A rung chosen by name (`variant`; none for the ops whose rungs take every call)
    // that cannot take the call says so, naming itself: refused_ is set, and the
    // caller checks that the output is untouched.
    bool succeeded(gpk_status st, const std::string &what, const std::string &variant = "") {
        refused_ = false;
        if (st == GPK_SUCCESS) return true;
        if (st == GPK_ERROR_NOT_SUPPORTED && !variant.empty() && variant != "auto") {
            const std::string why = gpk_last_error(cuda_);
            if (why.find("cannot take this call") != std::string::npos &&
                why.find("'" + variant + "'") != std::string::npos) {
                ++g_refused;
                refused_ = true;
                return false;
            }
        }
        if (st == GPK_ERROR_OUT_OF_MEMORY && cap_ != 0 && std::strstr(gpk_last_error(cuda_), "device_bytes") != nullptr) {
            ++g_capped;
            return false;
        }
        report("thread %d: %s (streams %d, cap %zu, validation %d) -> %s: %s", id_, what.c_str(), streams_, cap_,
               validation_, gpk_status_string(st), gpk_last_error(cuda_));
        return false;
    }

    void gemm() {
        const int dtype = rng_.range(0, 1) ? GPK_F64 : GPK_F32;
        const std::string variant = pick(GPK_OP_GEMM, dtype);
        gpk_set_variant(cuda_, GPK_OP_GEMM, variant.c_str());
        const bool big = rng_.range(0, 9) == 0;
        const int64_t m = rng_.range(1, big ? 700 : 160), n = rng_.range(1, big ? 700 : 160), k = rng_.range(0, big ? 400 : 160);
        const int layout = rng_.range(0, 1) ? GPK_ROW_MAJOR : GPK_COL_MAJOR;
        const int ta = rng_.range(0, 1) ? GPK_TRANS : GPK_NO_TRANS, tb = rng_.range(0, 1) ? GPK_TRANS : GPK_NO_TRANS;
        const bool col = layout == GPK_COL_MAJOR;
        const int64_t a_inner = (col != (ta == GPK_TRANS)) ? m : k, a_outer = (col != (ta == GPK_TRANS)) ? k : m;
        const int64_t b_inner = (col != (tb == GPK_TRANS)) ? k : n, b_outer = (col != (tb == GPK_TRANS)) ? n : k;
        const int64_t c_inner = col ? m : n, c_outer = col ? n : m;
        const int64_t lda = at_least_one(a_inner) + rng_.range(0, 3), ldb = at_least_one(b_inner) + rng_.range(0, 3),
                      ldc = at_least_one(c_inner) + rng_.range(0, 3);
        const double alphas[] = {1.0, -0.5, 0.0, 2.0}, betas[] = {0.0, 1.0, -1.5};
        const double alpha = alphas[rng_.range(0, 3)], beta = betas[rng_.range(0, 2)];
        auto A = random_data(rng_, dtype, static_cast<size_t>(lda * std::max<int64_t>(a_outer, 1)));
        auto B = random_data(rng_, dtype, static_cast<size_t>(ldb * std::max<int64_t>(b_outer, 1)));
        auto C = random_data(rng_, dtype, static_cast<size_t>(ldc * c_outer));
        auto want = C;
        const auto C0 = C;
        const unsigned mask = static_cast<unsigned>(rng_.range(0, 7));
        const std::string what = format("gemm %s %s %s%s m %" PRId64 " n %" PRId64 " k %" PRId64 " mask %u",
                                        variant.c_str(), dtype_name(dtype), ta == GPK_TRANS ? "T" : "N",
                                        tb == GPK_TRANS ? "T" : "N", m, n, k, mask);
        const gpk_status hs = gpk_gemm(host_, dtype, layout, ta, tb, m, n, k, alpha, A.data(), lda, B.data(), ldb, beta,
                                       want.data(), ldc);
        if (hs != GPK_SUCCESS) return report("thread %d: host %s -> %s", id_, what.c_str(), gpk_last_error(host_));
        Placed pa(A, mask & 1u), pb(B, mask & 2u), pc(C, mask & 4u);
        if (!pa.ok || !pb.ok || !pc.ok) return report("thread %d: the test's cudaMalloc failed", id_);
        const gpk_status st = gpk_gemm(cuda_, dtype, layout, ta, tb, m, n, k, alpha, pa.ptr, lda, pb.ptr, ldb, beta,
                                       pc.ptr, ldc);
        if (!succeeded(st, what, variant)) {
            if (refused_ && (!pc.back(C) || C != C0)) report("thread %d: %s: refused, but C was written", id_, what.c_str());
            return;
        }
        if (gpk_synchronize(cuda_) != GPK_SUCCESS || !pc.back(C))
            return report("thread %d: %s: synchronize/download: %s", id_, what.c_str(), gpk_last_error(cuda_));
        const double eps = dtype == GPK_F32 ? 1.2e-7 : 2.3e-16;
        const double tol = 16 * eps * static_cast<double>(k + 2) * (std::fabs(alpha) + std::fabs(beta) + 1);
        for (int64_t o = 0; o < c_outer; ++o)
            for (int64_t i = 0; i < ldc; ++i) {
                const size_t at = static_cast<size_t>(i + o * ldc);
                const double g = element(C, dtype, at), w = element(want, dtype, at);
                const bool pad = i >= c_inner;
                if (pad ? !(g == w || (std::isnan(g) && std::isnan(w))) : !(std::fabs(g - w) <= tol))
                    return report("thread %d: %s: C[%zu] = %.9g, host %.9g%s", id_, what.c_str(), at, g, w,
                                  pad ? " (padding written)" : "");
            }
    }

    void reduce() {
        const int dtype = static_cast<int>(rng_.range(0, 3));
        const int op = static_cast<int>(rng_.range(0, 2));
        const std::string variant = pick(GPK_OP_REDUCE, dtype);
        gpk_set_variant(cuda_, GPK_OP_REDUCE, variant.c_str());
        const int64_t n = rng_.range(1, rng_.range(0, 9) == 0 ? int64_t{3} << 20 : 50000);
        auto x = random_data(rng_, dtype, static_cast<size_t>(n));
        const bool dev_x = rng_.range(0, 1), dev_r = rng_.range(0, 1);
        const std::string what = format("reduce %s %s op %d n %" PRId64 " x %s result %s", variant.c_str(),
                                        dtype_name(dtype), op, n, dev_x ? "device" : "host", dev_r ? "device" : "host");
        unsigned char want[8] = {}, got[8] = {};
        if (gpk_reduce(host_, dtype, op, x.data(), n, want) != GPK_SUCCESS)
            return report("thread %d: host %s: %s", id_, what.c_str(), gpk_last_error(host_));
        std::vector<unsigned char> r(8, 0);
        Placed px(x, dev_x), pr(r, dev_r);
        if (!px.ok || !pr.ok) return report("thread %d: the test's cudaMalloc failed", id_);
        if (!succeeded(gpk_reduce(cuda_, dtype, op, px.ptr, n, pr.ptr), what)) return;
        if (gpk_synchronize(cuda_) != GPK_SUCCESS || !pr.back(r))
            return report("thread %d: %s: synchronize/download: %s", id_, what.c_str(), gpk_last_error(cuda_));
        std::memcpy(got, r.data(), 8);
        if (dtype == GPK_I32 || dtype == GPK_I64 || op != GPK_SUM) {
            if (std::memcmp(got, want, dtype == GPK_F32 ? 4 : 8) != 0) report("thread %d: %s: not the host's result", id_, what.c_str());
            return;
        }
        double g, w, abs_sum = 0;
        if (dtype == GPK_F32) {
            float gf, wf;
            std::memcpy(&gf, got, 4), std::memcpy(&wf, want, 4);
            g = gf, w = wf;
        } else {
            std::memcpy(&g, got, 8), std::memcpy(&w, want, 8);
        }
        for (int64_t i = 0; i < n; ++i) abs_sum += std::fabs(element(x, dtype, static_cast<size_t>(i)));
        const double eps = dtype == GPK_F32 ? 1.2e-7 : 2.3e-16;
        if (!(std::fabs(g - w) <= 4 * eps * (std::log2(static_cast<double>(n)) + 4) * abs_sum + eps * abs_sum))
            report("thread %d: %s: sum %.17g, host %.17g", id_, what.c_str(), g, w);
    }

    void transpose() {
        const int dtype = static_cast<int>(rng_.range(0, 3));
        const std::string variant = pick(GPK_OP_TRANSPOSE, dtype);
        gpk_set_variant(cuda_, GPK_OP_TRANSPOSE, variant.c_str());
        const bool big = rng_.range(0, 9) == 0;
        const int64_t rows = rng_.range(1, big ? 1500 : 300), cols = rng_.range(1, big ? 1500 : 300);
        const int layout = rng_.range(0, 1) ? GPK_ROW_MAJOR : GPK_COL_MAJOR;
        const bool col = layout == GPK_COL_MAJOR;
        const int64_t a_inner = col ? rows : cols, a_outer = col ? cols : rows, b_inner = col ? cols : rows,
                      b_outer = col ? rows : cols;
        const int64_t lda = a_inner + rng_.range(0, 2), ldb = b_inner + rng_.range(0, 2);
        auto A = random_data(rng_, dtype, static_cast<size_t>(lda * a_outer));
        auto B = random_data(rng_, dtype, static_cast<size_t>(ldb * b_outer));
        auto want = B;
        const auto B0 = B;
        const unsigned mask = static_cast<unsigned>(rng_.range(0, 3));
        const std::string what = format("transpose %s %s %" PRId64 " x %" PRId64 " mask %u", variant.c_str(),
                                        dtype_name(dtype), rows, cols, mask);
        if (gpk_transpose(host_, dtype, layout, rows, cols, A.data(), lda, want.data(), ldb) != GPK_SUCCESS)
            return report("thread %d: host %s: %s", id_, what.c_str(), gpk_last_error(host_));
        Placed pa(A, mask & 1u), pb(B, mask & 2u);
        if (!pa.ok || !pb.ok) return report("thread %d: the test's cudaMalloc failed", id_);
        if (!succeeded(gpk_transpose(cuda_, dtype, layout, rows, cols, pa.ptr, lda, pb.ptr, ldb), what, variant)) {
            if (refused_ && (gpk_synchronize(cuda_) != GPK_SUCCESS || !pb.back(B) || B != B0))
                report("thread %d: %s: refused, but B was written", id_, what.c_str());
            return;
        }
        if (gpk_synchronize(cuda_) != GPK_SUCCESS || !pb.back(B))
            return report("thread %d: %s: synchronize/download: %s", id_, what.c_str(), gpk_last_error(cuda_));
        if (B != want) report("thread %d: %s: B differs from the host's", id_, what.c_str());
    }

    void pi() {
        const std::string variant = pick(GPK_OP_PI, GPK_F32);
        gpk_set_variant(cuda_, GPK_OP_PI, variant.c_str());
        const uint64_t count = static_cast<uint64_t>(rng_.range(10000, int64_t{1} << 22));
        const uint64_t first = rng_.range(0, 1) ? 0 : static_cast<uint64_t>(rng_.range(0, int64_t{1} << 40));
        const uint64_t seed = rng_.next();
        const bool dev_r = rng_.range(0, 1);
        const std::string what = format("pi %s first %" PRIu64 " count %" PRIu64 " result %s", variant.c_str(), first,
                                        count, dev_r ? "device" : "host");
        gpk_pi_result want{};
        if (gpk_pi_range(host_, first, count, seed, &want) != GPK_SUCCESS)
            return report("thread %d: host %s: %s", id_, what.c_str(), gpk_last_error(host_));
        std::vector<unsigned char> r(sizeof(gpk_pi_result), 0);
        Placed pr(r, dev_r);
        if (!pr.ok) return report("thread %d: the test's cudaMalloc failed", id_);
        if (!succeeded(gpk_pi_range(cuda_, first, count, seed, static_cast<gpk_pi_result *>(pr.ptr)), what)) return;
        if (!pr.back(r)) return report("thread %d: %s: download failed", id_, what.c_str());
        gpk_pi_result got;
        std::memcpy(&got, r.data(), sizeof got);
        const bool own_family = variant == "curand_thrust" || variant == "lecture" || variant == "sobol";
        if (got.samples != count) return report("thread %d: %s: samples %" PRIu64, id_, what.c_str(), got.samples);
        if (!own_family && got.hits != want.hits)
            return report("thread %d: %s: hits %" PRIu64 ", host %" PRIu64, id_, what.c_str(), got.hits, want.hits);
        if (own_family && !(std::fabs(got.estimate - M_PI) < 6 * got.std_error + 1e-9))
            report("thread %d: %s: estimate %.9f more than 6 standard errors from pi", id_, what.c_str(), got.estimate);
    }

    int id_;
    const Support &support_;
    Clock::time_point until_;
    long limit_ = -1, done_ = 0;
    Rng rng_;
    bool refused_ = false;
    gpk_context *cuda_ = nullptr, *host_ = nullptr;
    int streams_ = 4;
    size_t cap_ = 0;
    bool validation_ = false;
};

// Which variant does which dtype; every variant runs once with host and device
// arrays, which also loads every kernel before the baseline is taken.
Support learn(Suite &suite) {
    Support s;
    gpk_context *ctx = suite.open(GPK_BACKEND_CUDA);
    for (int op = 0; op < 4; ++op) {
        int count = 0;
        gpk_variant_count(ctx, op, &count);
        for (int i = 0; i < count; ++i) {
            const char *name = gpk_variant_name(ctx, op, i);
            gpk_set_variant(ctx, op, name);
            unsigned dtypes = 0;
            for (int dtype = 0; dtype < 4; ++dtype) {
                if (op == GPK_OP_GEMM && dtype > GPK_F64) continue;
                std::vector<unsigned char> a(8 * 64 * 64, 0), b(8 * 64 * 64, 0), c(8 * 64 * 64, 0);
                DeviceArray da(a.size()), db(b.size()), dc(c.size());
                gpk_status st = GPK_SUCCESS;
                for (const bool device : {false, true}) {
                    void *pa = device ? da.get() : a.data(), *pb = device ? db.get() : b.data();
                    switch (op) {
                        case GPK_OP_GEMM:
                            st = gpk_gemm(ctx, dtype, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, 64, 64, 64, 1.0, pa, 64,
                                          pb, 64, 0.0, device ? dc.get() : c.data(), 64);
                            break;
                        case GPK_OP_REDUCE: st = gpk_reduce(ctx, dtype, GPK_SUM, pa, 4096, pb); break;
                        case GPK_OP_TRANSPOSE: st = gpk_transpose(ctx, dtype, GPK_COL_MAJOR, 64, 64, pa, 64, pb, 64); break;
                        default: {
                            gpk_pi_result r;
                            st = gpk_pi(ctx, 100000, 1, &r);
                        }
                    }
                    gpk_synchronize(ctx);
                    if (st != GPK_SUCCESS) break;
                }
                if (st == GPK_SUCCESS) dtypes |= 1u << dtype;
                else if (st != GPK_ERROR_NOT_SUPPORTED) {
                    Case c(suite, format("first pass: %s %s %s", op_name(op), name, dtype_name(dtype)));
                    c.fail("-> %s: %s", gpk_status_string(st), gpk_last_error(ctx));
                }
            }
            s.names[op].emplace_back(name);
            s.dtypes[op].push_back(dtypes);
        }
    }
    gpk_destroy(ctx);
    cudaDeviceSynchronize();
    return s;
}

}  // namespace

int main(int argc, char **argv) {
    Suite suite("test_soak", argc, argv);
    if (!suite.cuda()) {
        std::printf("test_soak [%s]: the soak is the GPU's; run it with 'cuda'\n", suite.backend_name());
        return kSkipExit;
    }
    const char *env_seconds = std::getenv("GPK_SOAK_SECONDS"), *env_threads = std::getenv("GPK_SOAK_THREADS");
    const double seconds = env_seconds != nullptr ? std::atof(env_seconds) : 120.0;
    const int threads = env_threads != nullptr ? std::max(1, std::atoi(env_threads)) : 4;

    const Support support = learn(suite);
    // One phase: `threads` workers until `span` has passed, or, given the counts of an
    // earlier phase, exactly the same calls again; returns each worker's count.
    auto phase = [&](double span, const std::vector<long> &replay) {
        const auto until = Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(span * 1000));
        std::vector<std::thread> pool;
        std::vector<std::unique_ptr<Worker>> workers;
        for (int t = 0; t < threads; ++t)
            workers.push_back(std::make_unique<Worker>(t, support, until, replay.empty() ? -1 : replay[size_t(t)]));
        for (auto &w : workers) pool.emplace_back([&w] { w->run(); });
        for (auto &th : pool) th.join();
        cudaDeviceSynchronize();
        std::vector<long> counts;
        for (auto &w : workers) counts.push_back(w->calls());
        return counts;
    };
    // The first half is the baseline's warm-up (see the top of the file); the second
    // replays it. The suite's own context stays alive throughout.
    const std::vector<long> counts = phase(seconds / 2, {});
    const size_t dev0 = device_free(), heap0 = heap_in_use(), rss0 = resident_bytes();
    phase(0, counts);
    const size_t dev1 = device_free(), heap1 = heap_in_use(), rss1 = resident_bytes();

    std::printf("soak: %d threads, %.0f s, %ld calls (the second half a replay of the first), %ld refused by a "
                "device_bytes cap, %ld refused by a rung that cannot take them, %ld failures\n",
                threads, seconds, g_calls.load(), g_capped.load(), g_refused.load(), g_failures.load());
    std::printf("soak: device free %.1f -> %.1f MiB; heap in use %.1f -> %.1f MiB; resident %.1f -> %.1f MiB\n",
                dev0 / 1048576.0, dev1 / 1048576.0, heap0 / 1048576.0, heap1 / 1048576.0, rss0 / 1048576.0,
                rss1 / 1048576.0);
    {
        Case c(suite, "soak: every call succeeded with the host backend's result");
        if (g_failures != 0) c.fail("%ld failures (the first are printed above)", g_failures.load());
        if (g_calls < threads) c.fail("only %ld calls ran", g_calls.load());
    }
    {
        // Slack for the CUDA runtime's and the driver's own bookkeeping, far below what
        // hundreds of leaked contexts (each with buffers of megabytes) would add up to.
        Case c(suite, "soak: device and host memory back at their baseline");
        constexpr size_t kDeviceSlack = size_t(32) << 20, kHeapSlack = size_t(8) << 20;
        if (dev1 + kDeviceSlack < dev0)
            c.fail("device memory: %.1f MiB less free than at the start", (dev0 - dev1) / 1048576.0);
        if (heap1 > heap0 + kHeapSlack) c.fail("host heap: %.1f MiB more in use than at the start", (heap1 - heap0) / 1048576.0);
    }
    return suite.finish();
}
