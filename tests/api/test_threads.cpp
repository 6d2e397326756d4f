// Concurrency: several threads, each with a context of its own (and on the CUDA
// backend a stream of its own), call every op at the same time and check every
// result; then, on the CUDA backend, one context is moved from stream to stream
// while its work is still in flight, which must not let two calls share the
// context's workspace at once.
//
// The data are small integers, so every result is exact whatever the summation
// order, the variant or the thread: each is compared with a reference computed
// here, element for element.
#include "../harness.hpp"

#include <algorithm>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

namespace {

using namespace gpkt;

constexpr int kThreads = 4;
constexpr int kRounds = 3;
constexpr int kDtypes[] = {GPK_F32, GPK_F64, GPK_I32, GPK_I64};

// Lets every thread start its calls at the same moment.
class StartLine {
public:
    explicit StartLine(int parties) : waiting_(parties) {}
    void arrive_and_wait() {
        std::unique_lock<std::mutex> lock(mutex_);
        if (--waiting_ == 0) {
            go_.notify_all();
            return;
        }
        go_.wait(lock, [this] { return waiting_ == 0; });
    }

private:
    std::mutex mutex_;
    std::condition_variable go_;
    int waiting_;
};

// An array in host memory, and optionally its copy in device memory, which is then
// what the library gets.
class Array {
public:
    Array(size_t bytes, bool device) : host_(bytes > 0 ? bytes : 1) {
        if (device) device_ = std::make_unique<DeviceArray>(host_.size());
    }
    unsigned char *host() { return host_.data(); }
    size_t bytes() const { return host_.size(); }
    bool upload() { return device_ == nullptr || device_->upload(host_.data()); }
    bool download() { return device_ == nullptr || device_->download(host_.data()); }
    void *arg() { return device_ != nullptr ? device_->get() : host_.data(); }
    const char *error() const { return device_ != nullptr ? device_->error() : ""; }

private:
    std::vector<unsigned char> host_;
    std::unique_ptr<DeviceArray> device_;
};

// A rows x cols matrix with `pad` elements between lines.
Shape padded(int64_t rows, int64_t cols, bool col_major, int64_t pad) {
    return Shape{rows, cols, (col_major ? rows : cols) + pad, col_major};
}

template <class T>
void put(unsigned char *base, size_t index, T value) {
    std::memcpy(base + index * sizeof(T), &value, sizeof(T));
}
template <class T>
T get(const unsigned char *base, size_t index) {
    T v;
    std::memcpy(&v, base + index * sizeof(T), sizeof(T));
    return v;
}

// One thread's calls and what went wrong in them; the thread owns its context.
class Worker {
public:
    Worker(int id, int backend, std::vector<std::string> *failures) : id_(id), backend_(backend), failures_(failures) {}

    void run(StartLine &start) {
        const gpk_status st = gpk_create(&ctx_, backend_, 0);
        if (st != GPK_SUCCESS) fail("gpk_create -> %s: %s", gpk_status_string(st), gpk_last_error(nullptr));
        if (ctx_ != nullptr && backend_ == GPK_BACKEND_CUDA) {
            const cudaError_t e = cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking);
            if (e != cudaSuccess)
                fail("cudaStreamCreateWithFlags: %s", cudaGetErrorString(e));
            else if (gpk_set_stream(ctx_, stream_) != GPK_SUCCESS)
                fail("gpk_set_stream: %s", gpk_last_error(ctx_));
        }
        start.arrive_and_wait();  // even when creation failed, so that nobody waits forever
        if (failures_->empty()) {
            for (int round = 0; round < kRounds; ++round) {
                for (bool device : placements()) {
                    for (int layout : {GPK_COL_MAJOR, GPK_ROW_MAJOR}) {
                        choose(GPK_OP_GEMM, round);
                        gemm<float>(GPK_F32, layout, device, round);
                        gemm<double>(GPK_F64, layout, device, round);
                    }
                    choose(GPK_OP_REDUCE, round);
                    for (int dtype : kDtypes)
                        for (int op : {GPK_SUM, GPK_MIN, GPK_MAX}) reduce(dtype, op, device, round);
                    choose(GPK_OP_TRANSPOSE, round);
                    const int layout = round % 2 ? GPK_ROW_MAJOR : GPK_COL_MAJOR;
                    for (int dtype : kDtypes) transpose(dtype, layout, device, round);
                    choose(GPK_OP_PI, round);
                    pi(device, round);
                }
            }
        }
        gpk_destroy(ctx_);
        if (stream_ != nullptr) cudaStreamDestroy(stream_);
    }

    long checks() const { return checks_; }

private:
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    void fail(const char *fmt, ...) {
        va_list args;
        va_start(args, fmt);
        failures_->push_back(format("thread %d, %s: ", id_, what_.c_str()) + vformat(fmt, args));
        va_end(args);
    }

    std::vector<bool> placements() const {
        if (backend_ == GPK_BACKEND_CUDA) return {false, true};
        return {false};
    }

    // Threads walk the ladder, "auto" last, from different rungs, so that different
    // kernels run side by side; the host backend has one variant per op.
    void choose(int op, int round) {
        int count = 0;
        gpk_variant_count(ctx_, op, &count);
        const char *name = gpk_variant_name(ctx_, op, (id_ + round) % (count + 1));
        variant_ = name != nullptr ? name : "auto";
        if (gpk_set_variant(ctx_, op, variant_.c_str()) != GPK_SUCCESS) {
            what_ = format("gpk_set_variant(%s, %s)", op_name(op), variant_.c_str());
            fail("%s", gpk_last_error(ctx_));
        }
    }

    // True when the call's work succeeded and its results are to be checked; a
    // named variant without the dtype is no failure.
    bool finished(gpk_status st) {
        if (st == GPK_ERROR_NOT_SUPPORTED && variant_ != "auto") return false;
        if (st == GPK_SUCCESS) st = gpk_synchronize(ctx_);
        if (st != GPK_SUCCESS) {
            fail("-> %s: %s", gpk_status_string(st), gpk_last_error(ctx_));
            return false;
        }
        ++checks_;
        return true;
    }

    bool transfer(Array &a, bool up) {
        if (up ? a.upload() : a.download()) return true;
        fail("device copy: %s", a.error());
        return false;
    }

    // C = 2 * op(A) * op(B) - C, all small integers.
    template <class T>
    void gemm(int dtype, int layout, bool device, int round) {
        const int64_t m = 37 + id_, n = 29 + round, k = 64;
        const bool ta = (id_ + round) % 2 != 0, tb = round % 2 != 0, col = layout == GPK_COL_MAJOR;
        what_ = format("gemm %s %s %s%s variant %s %s", dtype_name(dtype), layout_name(layout), ta ? "T" : "N",
                       tb ? "T" : "N", variant_.c_str(), device ? "device" : "host");
        const Shape a = padded(ta ? k : m, ta ? m : k, col, 1), b = padded(tb ? n : k, tb ? k : n, col, 2),
                    c = padded(m, n, col, 3);
        Array A(a.count() * sizeof(T), device), B(b.count() * sizeof(T), device), C(c.count() * sizeof(T), device);
        Rng rng(seed_of({id_, round, dtype, layout, device}));
        for (size_t i = 0; i < a.count(); ++i) put<T>(A.host(), i, static_cast<T>(rng.range(-3, 3)));
        for (size_t i = 0; i < b.count(); ++i) put<T>(B.host(), i, static_cast<T>(rng.range(-3, 3)));
        for (size_t i = 0; i < c.count(); ++i) put<T>(C.host(), i, static_cast<T>(rng.range(-9, 9)));
        const std::vector<unsigned char> c0(C.host(), C.host() + C.bytes());
        if (!transfer(A, true) || !transfer(B, true) || !transfer(C, true)) return;
        const gpk_status st = gpk_gemm(ctx_, dtype, layout, ta ? GPK_TRANS : GPK_NO_TRANS,
                                       tb ? GPK_TRANS : GPK_NO_TRANS, m, n, k, 2.0, A.arg(), a.ld, B.arg(), b.ld,
                                       -1.0, C.arg(), c.ld);
        if (!finished(st) || !transfer(C, false)) return;
        for (size_t idx = 0; idx < c.count(); ++idx)
            if (c.is_padding(idx) && get<T>(C.host(), idx) != get<T>(c0.data(), idx))
                return fail("C's padding at %zu was written", idx);
        for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) {
                double sum = 0;
                for (int64_t p = 0; p < k; ++p)
                    sum += static_cast<double>(get<T>(A.host(), ta ? a.at(p, i) : a.at(i, p))) *
                           get<T>(B.host(), tb ? b.at(j, p) : b.at(p, j));
                const double want = 2 * sum - get<T>(c0.data(), c.at(i, j));
                const double got = get<T>(C.host(), c.at(i, j));
                if (got != want) return fail("C(%" PRId64 ", %" PRId64 ") = %g, expected %g", i, j, got, want);
            }
    }

    void reduce(int dtype, int op, bool device, int round) {
        static const char *const kOps[] = {"SUM", "MIN", "MAX"};
        const int64_t n = 100003 + 1000 * id_ + round;
        what_ = format("reduce %s %s n %" PRId64 " variant %s %s", dtype_name(dtype), kOps[op], n, variant_.c_str(),
                       device ? "device" : "host");
        const size_t es = dtype_size(dtype);
        Array X(static_cast<size_t>(n) * es, device), R(8, device);
        Rng rng(seed_of({id_, round, dtype, op, device}));
        int64_t sum = 0, lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
        for (int64_t i = 0; i < n; ++i) {
            const int64_t v = rng.range(-40, 40);
            sum += v, lo = std::min(lo, v), hi = std::max(hi, v);
            switch (dtype) {
                case GPK_F32: put<float>(X.host(), i, static_cast<float>(v)); break;
                case GPK_F64: put<double>(X.host(), i, static_cast<double>(v)); break;
                case GPK_I32: put<int32_t>(X.host(), i, static_cast<int32_t>(v)); break;
                default: put<int64_t>(X.host(), i, v); break;
            }
        }
        std::memset(R.host(), 0xA5, 8);
        if (!transfer(X, true) || !transfer(R, true)) return;
        if (!finished(gpk_reduce(ctx_, dtype, op, X.arg(), n, R.arg())) || !transfer(R, false)) return;
        const int64_t want = op == GPK_SUM ? sum : op == GPK_MIN ? lo : hi;
        double got = 0;
        if (dtype == GPK_F32) got = get<float>(R.host(), 0);
        if (dtype == GPK_F64) got = get<double>(R.host(), 0);
        if (dtype == GPK_I32 || dtype == GPK_I64) got = static_cast<double>(get<int64_t>(R.host(), 0));
        if (got != static_cast<double>(want)) fail("result %.17g, expected %" PRId64, got, want);
    }

    void transpose(int dtype, int layout, bool device, int round) {
        const int64_t rows = 301 + 7 * id_, cols = 157 + round;
        const bool col = layout == GPK_COL_MAJOR;
        what_ = format("transpose %s %s %" PRId64 "x%" PRId64 " variant %s %s", dtype_name(dtype), layout_name(layout),
                       rows, cols, variant_.c_str(), device ? "device" : "host");
        const size_t es = dtype_size(dtype);
        const Shape a = padded(rows, cols, col, 5), b = padded(cols, rows, col, 3);
        Array A(a.count() * es, device), B(b.count() * es, device);
        Rng rng(seed_of({id_, round, dtype, layout, device, 7}));
        // Integers get random bits. Floating-point elements get finite values: the
        // vendor rung (cuBLAS geam, B = 1 * A^T) computes, so a signalling NaN's bits
        // come back quieted, while every value moves exactly.
        for (size_t i = 0; i < A.bytes() / es; ++i) {
            const uint64_t bits = rng.next();
            const double v = static_cast<double>(static_cast<int64_t>(bits % 2000001) - 1000000) / 1024.0;
            switch (dtype) {
                case GPK_F32: put<float>(A.host(), i, static_cast<float>(v)); break;
                case GPK_F64: put<double>(A.host(), i, v); break;
                default: std::memcpy(A.host() + i * es, &bits, es); break;
            }
        }
        std::memset(B.host(), 0xA5, B.bytes());
        if (!transfer(A, true) || !transfer(B, true)) return;
        if (!finished(gpk_transpose(ctx_, dtype, layout, rows, cols, A.arg(), a.ld, B.arg(), b.ld)) ||
            !transfer(B, false))
            return;
        for (int64_t i = 0; i < rows; ++i)
            for (int64_t j = 0; j < cols; ++j)
                if (std::memcmp(B.host() + b.at(j, i) * es, A.host() + a.at(i, j) * es, es) != 0)
                    return fail("B(%" PRId64 ", %" PRId64 ") is not A(%" PRId64 ", %" PRId64 ")", j, i, i, j);
        for (size_t idx = 0; idx < b.count(); ++idx)
            for (size_t byte = 0; b.is_padding(idx) && byte < es; ++byte)
                if (B.host()[idx * es + byte] != 0xA5) return fail("B's padding at %zu was written", idx);
    }

    // Hits depend on (samples, seed) and the variant alone: the same call twice,
    // here and on a context of its own made now, must agree, and the figures must
    // be those of the hits.
    void pi(bool device, int round) {
        const uint64_t samples = 200000 + 1000 * static_cast<uint64_t>(id_), seed = 1000u + id_ + round;
        what_ = format("pi samples %" PRIu64 " seed %" PRIu64 " variant %s %s", samples, seed, variant_.c_str(),
                       device ? "device" : "host");
        Array R(sizeof(gpk_pi_result), device);
        if (!finished(gpk_pi(ctx_, samples, seed, static_cast<gpk_pi_result *>(R.arg()))) || !transfer(R, false))
            return;
        gpk_pi_result got;
        std::memcpy(&got, R.host(), sizeof got);
        gpk_pi_result again{};
        if (!finished(gpk_pi(ctx_, samples, seed, &again))) return;
        if (got.samples != samples || got.hits > samples || again.hits != got.hits)
            return fail("samples %" PRIu64 ", hits %" PRIu64 " then %" PRIu64, got.samples, got.hits, again.hits);
        const double p = static_cast<double>(got.hits) / static_cast<double>(samples);
        if (std::fabs(got.estimate - 4 * p) > 1e-15) fail("estimate %.17g, hits say %.17g", got.estimate, 4 * p);
    }

    int id_, backend_;
    std::vector<std::string> *failures_;
    gpk_context *ctx_ = nullptr;
    cudaStream_t stream_ = nullptr;
    std::string what_ = "setup", variant_ = "auto";
    long checks_ = 0;
};

void many_threads(Suite &suite) {
    std::vector<std::vector<std::string>> failures(kThreads);
    std::vector<std::unique_ptr<Worker>> workers;
    StartLine start(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) workers.push_back(std::make_unique<Worker>(t, suite.backend(), &failures[t]));
    for (int t = 0; t < kThreads; ++t) threads.emplace_back([&, t] { workers[t]->run(start); });
    for (std::thread &th : threads) th.join();
    for (int t = 0; t < kThreads; ++t) {
        Case c(suite, format("thread %d of %d, every op, own context%s", t, kThreads,
                             suite.cuda() ? " and stream" : ""));
        for (const std::string &f : failures[t]) c.fail("%s", f.c_str());
        if (failures[t].empty() && workers[t]->checks() == 0) c.fail("no call was checked");
    }
}

// ---- one context, two streams ---------------------------------------------------------

// A sum over n int32 values base + i % 7, in device memory: its result is known, and
// it is long enough for the kernels of two calls to overlap if nothing orders them.
struct Job {
    DeviceArray x, result;
    int64_t n = 0, want = 0;
};

bool prepare(Case &c, Job &job, int64_t n, int32_t base) {
    std::vector<int32_t> x(static_cast<size_t>(n));
    job.n = n, job.want = 0;
    for (int64_t i = 0; i < n; ++i) {
        x[static_cast<size_t>(i)] = base + static_cast<int32_t>(i % 7);
        job.want += x[static_cast<size_t>(i)];
    }
    if (!job.x.allocate(x.size() * sizeof(int32_t)) || !job.x.upload(x.data()) || !job.result.allocate(8)) {
        c.fail("device arrays: %s", job.x.ok() ? job.result.error() : job.x.error());
        return false;
    }
    return true;
}

// Both calls of a pair are asynchronous, and the second is issued on the other
// stream while the first may still run, reusing the context's workspace.
void reduce_pairs(Suite &suite, cudaStream_t s[2], Job jobs[2]) {
    gpk_context *ctx = suite.ctx();
    for (const std::string &variant : suite.variants(GPK_OP_REDUCE)) {
        Case c(suite, format("two streams in sequence: reduce variant %s", variant.c_str()));
        if (!suite.select(c, GPK_OP_REDUCE, variant)) continue;
        for (int rep = 0; rep < 4 && !c.failed(); ++rep) {
            int issued = 0;
            for (int j = 0; j < 2; ++j) {
                if (!c.expect(gpk_set_stream(ctx, s[j]), GPK_SUCCESS, "gpk_set_stream")) break;
                const gpk_status st =
                    gpk_reduce(ctx, GPK_I32, GPK_SUM, jobs[j].x.get(), jobs[j].n, jobs[j].result.get());
                if (!suite.accept(c, st, GPK_OP_REDUCE, variant, GPK_I32, "gpk_reduce")) break;
                ++issued;
            }
            cudaStreamSynchronize(s[0]);
            c.expect(gpk_synchronize(ctx), GPK_SUCCESS, "gpk_synchronize");
            if (issued < 2) break;
            for (int j = 0; j < 2 && !c.failed(); ++j) {
                int64_t got = 0;
                if (!jobs[j].result.download(&got)) c.fail("download: %s", jobs[j].result.error());
                if (got != jobs[j].want)
                    c.fail("the call on stream %d gave %" PRId64 ", expected %" PRId64 " (repeat %d)", j, got,
                           jobs[j].want, rep);
            }
        }
    }
    gpk_set_variant(ctx, GPK_OP_REDUCE, nullptr);
}

void two_streams(Suite &suite) {
    if (!suite.cuda()) return;  // the host backend takes only the NULL stream
    cudaStream_t s[2] = {nullptr, nullptr};
    Job jobs[2];
    bool ready = true;
    {
        Case c(suite, "two streams: streams and device arrays");
        for (cudaStream_t &st : s) {
            const cudaError_t e = cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking);
            if (e != cudaSuccess) c.fail("cudaStreamCreateWithFlags: %s", cudaGetErrorString(e)), ready = false;
        }
        ready = ready && prepare(c, jobs[0], int64_t{1} << 24, 1) &&
                prepare(c, jobs[1], (int64_t{1} << 24) + 12345, -3);
    }
    if (ready) reduce_pairs(suite, s, jobs);
    {
        // Back on the default stream with host arrays: the context is still whole.
        Case c(suite, "two streams: back on the default stream");
        gpk_context *ctx = suite.ctx();
        c.expect(gpk_set_stream(ctx, nullptr), GPK_SUCCESS, "gpk_set_stream(NULL)");
        const std::vector<int64_t> x = {5, -2, 9};
        int64_t got = 0;
        if (c.expect(gpk_reduce(ctx, GPK_I64, GPK_SUM, x.data(), 3, &got), GPK_SUCCESS, "gpk_reduce") && got != 12)
            c.fail("sum %" PRId64 ", expected 12", got);
    }
    for (cudaStream_t st : s)
        if (st != nullptr) cudaStreamDestroy(st);
}

}  // namespace

int main(int argc, char **argv) {
    Suite suite("test_threads", argc, argv);
    many_threads(suite);
    two_streams(suite);
    return suite.finish();
}
