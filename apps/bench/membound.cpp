// --shapes membound: gemm where the roofline is the memory's, or nearly -- skinny
// products (M rows against a large matrix W, as a decode step makes) and Gram
// products X^T Y of two tall, thin matrices -- in F64, F32, TF32, F16 and BF16, each
// under the vendor (variant 0), the memory-bound rungs (skinny, gram) and "auto", or
// the rungs --variant names, with each row's roofline fraction (roofline.cpp).
//
// The sweep (column-major calls):
//  - skinny: C (M x N) = X W with M in {1, 8, 16, 32, 64, 128} and W of N x K in
//    {8192 x 8192, 28672 x 8192, 12288 x 5120}, W in both orientations: stored
//    k-contiguous ("W k-major": C = X^T-stored-as-K x M times W stored K x N, TN) and
//    N-contiguous ("W n-major": X stored M x K, W stored N x K, NT);
//  - Gram: C (m x m) = X^T Y, X and Y stored K x m (TN), m in {8, 16, 32, 64, 128},
//    K in {2^20, 2^21, 2^22, 2^23}.
// --quick keeps one W (8192 x 8192), M in {1, 16}, and Gram m in {8, 64} at K = 2^20.
// The operands are filled on the device: 16 MiB of +-[0.25, 1) made on the host and
// copied over the rest, so that GB of operands cost milliseconds (their contents
// repeat every 16 MiB, which no cache sees: the L2 is flushed before every call).
// A summary follows: per case the roofline fraction of "auto", of the best
// memory-bound rung and of the vendor, and their geometric means.
#include "bench.hpp"

#include "../../libgpk/common/half.hpp"
#include "../common/cli.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace gpk_bench {
namespace {

// Fills `bytes` of device memory with elements of `dtype` (+-[0.25, 1)).
void fill_device(void *dst, size_t bytes, int dtype, uint64_t seed) {
    const size_t period = std::min(bytes, size_t(16) << 20);
    std::vector<unsigned char> host(period);
    if (dtype == GPK_F64) {
        fill_signed(reinterpret_cast<double *>(host.data()), period / 8, seed);
    } else if (dtype == GPK_F32) {
        fill_signed(reinterpret_cast<float *>(host.data()), period / 4, seed);
    } else {
        std::vector<float> f(period / 2);
        fill_signed(f.data(), f.size(), seed);
        uint16_t *h = reinterpret_cast<uint16_t *>(host.data());
        for (size_t i = 0; i < f.size(); ++i) h[i] = dtype == GPK_BF16 ? gpk::float_to_bf16(f[i]) : gpk::float_to_half(f[i]);
    }
    char *d = static_cast<char *>(dst);
    check_cuda(cudaMemcpy(d, host.data(), period, cudaMemcpyHostToDevice), "cudaMemcpy (operand fill)");
    for (size_t done = period; done < bytes; done *= 2)
        check_cuda(cudaMemcpy(d + done, d, std::min(done, bytes - done), cudaMemcpyDeviceToDevice),
                   "cudaMemcpy (operand fill)");
    // Device-to-device cudaMemcpy returns before the copy ends, and the bench's stream
    // does not wait for the legacy stream: the first call would read a half-filled B.
    check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize (operand fill)");
}

double as_double(const unsigned char *p, int dtype) {
    if (dtype == GPK_F64) {
        double v;
        std::memcpy(&v, p, 8);
        return v;
    }
    if (dtype == GPK_F32) {
        float v;
        std::memcpy(&v, p, 4);
        return v;
    }
    uint16_t h;
    std::memcpy(&h, p, 2);
    return dtype == GPK_BF16 ? gpk::bf16_to_float(h) : gpk::half_to_float(h);
}

class MemboundCase final : public Case {
public:
    MemboundCase(Env &env, int dtype, bool tf32, bool ta, bool tb, int64_t m, int64_t n, int64_t k, std::string note)
        : env_(env), dtype_(dtype), tf32_(tf32), ta_(ta), tb_(tb), m_(m), n_(n), k_(k), note_(std::move(note)),
          es_(dtype == GPK_F64 ? 8 : dtype == GPK_F32 ? 4 : 2) {}

    int op() const override { return GPK_OP_GEMM; }
    const char *op_name() const override { return "gemm"; }
    int dtype() const override { return dtype_; }
    std::vector<std::pair<const char *, uint64_t>> sizes() const override {
        return {{"m", uint64_t(m_)}, {"n", uint64_t(n_)}, {"k", uint64_t(k_)}};
    }
    std::string shape_note() const override {
        return note_ + std::string("; column-major, trans ") + (ta_ ? "T" : "N") + (tb_ ? "T" : "N") +
               (tf32_ ? "; GPK_MATH_TF32" : "");
    }
    double work() const override { return 2.0 * double(m_) * double(n_) * double(k_); }
    double unit_scale() const override { return 1e12; }
    const char *unit() const override { return "TFLOP/s"; }
    std::optional<RooflineWork> roofline_work() const override {
        const double m = double(m_), n = double(n_), k = double(k_);
        return RooflineWork{double(es_) * (m * k + k * n + m * n), 2.0 * m * n * k, dtype_, tf32_};
    }

    void prepare() override {
        a_ = std::make_unique<Buffer>(env_, size_t(m_ * k_) * es_, Place::kDevice);
        b_ = std::make_unique<Buffer>(env_, size_t(k_ * n_) * es_, Place::kDevice);
        c_ = std::make_unique<Buffer>(env_, size_t(m_ * n_) * es_, Place::kDevice);
        fill_device(a_->data(), a_->bytes(), dtype_, 0xA11CE);
        fill_device(b_->data(), b_->bytes(), dtype_, 0xB0B);
        out_.resize(c_->bytes());
        // The math mode stays for the case's calls (the sweep sets it back after).
        gpk_set_math_mode(env_.ctx, tf32_ ? GPK_MATH_TF32 : GPK_MATH_DEFAULT);
    }
    void poison() override { c_->poison(); }
    gpk_status call(gpk_context *ctx) override {
        return gpk_gemm(ctx, dtype_, GPK_COL_MAJOR, ta_ ? GPK_TRANS : GPK_NO_TRANS, tb_ ? GPK_TRANS : GPK_NO_TRANS, m_,
                        n_, k_, 1.0, a_->data(), ta_ ? k_ : m_, b_->data(), tb_ ? n_ : k_, 0.0, c_->data(), m_);
    }
    void keep_reference() override {
        ref_.resize(c_->bytes());
        c_->download(ref_.data());
    }
    bool has_reference() const override { return !ref_.empty(); }
    // The host backend would take minutes over these sizes: no reference but the vendor's.
    gpk_status host_reference(gpk_context *) override { return GPK_ERROR_NOT_SUPPORTED; }

    // Relative to max |C|, as gemm.cpp's check: rounding grows like sqrt(k) for random
    // data, a wrong index gives errors of order 1.
    Check check(bool) override {
        c_->download(out_.data());
        double max_ref = 0, max_diff = 0;
        size_t bad = 0;
        for (size_t i = 0; i < out_.size() / es_; ++i) {
            const double got = as_double(&out_[i * es_], dtype_), want = as_double(&ref_[i * es_], dtype_);
            const double diff = std::fabs(got - want);
            if (std::isnan(diff)) ++bad;
            else max_diff = std::max(max_diff, diff);
            max_ref = std::max(max_ref, std::fabs(want));
        }
        char text[128];
        if (bad) {
            std::snprintf(text, sizeof text, "%zu elements NaN or unwritten", bad);
            return {false, text};
        }
        const double rel = max_ref > 0 ? max_diff / max_ref : max_diff;
        const double root_k = std::sqrt(double(k_)), f32 = std::max(1e-5, 1e-6 * root_k);
        const double tol = dtype_ == GPK_F64   ? std::max(1e-13, 1e-14 * root_k)
                           : dtype_ == GPK_F16  ? f32 + 0x1p-9
                           : dtype_ == GPK_BF16 ? f32 + 0x1p-6
                           : tf32_              ? f32 + 0x1p-8
                                                : f32;
        std::snprintf(text, sizeof text, "max rel err %.2g (tol %.2g)", rel, tol);
        return {rel <= tol, text};
    }

private:
    Env &env_;
    int dtype_;
    bool tf32_, ta_, tb_;
    int64_t m_, n_, k_;
    std::string note_;
    size_t es_;
    std::vector<unsigned char> ref_, out_;
    std::unique_ptr<Buffer> a_, b_, c_;
};

struct Kind {
    int dtype;
    bool tf32;
    const char *name;
};

struct Sweep {
    int dtype;
    bool tf32, ta, tb;
    int64_t m, n, k;
    std::string note;
};

std::vector<Sweep> sweep(bool quick) {
    const Kind kinds[] = {{GPK_F64, false, "f64"}, {GPK_F32, false, "f32"}, {GPK_F32, true, "tf32"},
                          {GPK_F16, false, "f16"}, {GPK_BF16, false, "bf16"}};
    struct W {
        int64_t n, k;
    };
    const std::vector<W> ws = quick ? std::vector<W>{{8192, 8192}} : std::vector<W>{{8192, 8192}, {28672, 8192}, {12288, 5120}};
    const std::vector<int64_t> rows = quick ? std::vector<int64_t>{1, 16} : std::vector<int64_t>{1, 8, 16, 32, 64, 128};
    const std::vector<int64_t> grams = quick ? std::vector<int64_t>{8, 64} : std::vector<int64_t>{8, 16, 32, 64, 128};
    const std::vector<int> logk = quick ? std::vector<int>{20} : std::vector<int>{20, 21, 22, 23};
    std::vector<Sweep> out;
    for (const Kind &kind : kinds) {
        for (const W &w : ws)
            for (bool k_major : {true, false})
                for (int64_t m : rows) {
                    const std::string note = "skinny, W " + std::to_string(w.n) + "x" + std::to_string(w.k) +
                                             (k_major ? " k-major" : " n-major");
                    out.push_back(Sweep{kind.dtype, kind.tf32, k_major, !k_major, m, w.n, w.k, note});
                }
        for (int64_t g : grams)
            for (int lk : logk)
                out.push_back(Sweep{kind.dtype, kind.tf32, true, false, g, g, int64_t(1) << lk, "Gram X^T Y"});
    }
    return out;
}

double geomean(const std::vector<double> &v) {
    if (v.empty()) return 0;
    double s = 0;
    for (double x : v) s += std::log(x);
    return std::exp(s / double(v.size()));
}

}  // namespace

int run_membound_sweep(Env &env, const RunOptions &opt, bool quick, std::vector<CaseResult> *results) {
    if (!env.event_timing()) {
        std::printf("gpk-bench: --shapes membound needs the CUDA backend with device arrays; nothing to run\n");
        return 0;
    }
    RunOptions run = opt;
    if (run.variants.empty()) run.variants = {"skinny", "gram", "auto"};
    // 280 cases: at most 10 timed calls a row, short calls up to 1 ms of them.
    run.repeat = std::min(run.repeat, 10);
    run.min_timed_ms = std::min(run.min_timed_ms, 1.0);
    int failed = 0;
    struct Line {
        std::string what;
        double vendor = 0, best = 0, pick = 0;
        std::string best_name, roof;
    };
    std::vector<Line> lines;
    for (const Sweep &s : sweep(quick)) {
        MemboundCase c(env, s.dtype, s.tf32, s.ta, s.tb, s.m, s.n, s.k, s.note);
        results->push_back(run_case(env, c, run));
        gpk_set_math_mode(env.ctx, GPK_MATH_DEFAULT);
        const CaseResult &r = results->back();
        failed += !r.error.empty();
        Line line;
        line.what = std::string(s.tf32 ? "tf32" : gpk_app::dtype_name(s.dtype)) + " " + std::to_string(s.m) + "x" +
                    std::to_string(s.n) + "x" + std::to_string(s.k) + " " + s.note;
        if (r.roofline) line.roof = r.roofline->compute_bound ? "compute" : "memory";
        for (const Row &row : r.rows) {
            failed += row.failed();
            const double f = row.roofline_fraction.value_or(0);
            if (row.auto_pick) line.pick = f;
            else if (row.index == 0) line.vendor = f;
            else if (f > line.best) line.best = f, line.best_name = row.variant;
        }
        lines.push_back(line);
    }

    std::printf("\nmembound sweep: roofline fractions (the roofline's time over the call's median time)\n");
    std::printf("  %-58s %8s %7s %7s %-8s %6s\n", "case", "bound", "auto", "vendor", "best", "");
    std::vector<double> picks, vendors, bests;
    double worst = 1e30;
    for (const Line &l : lines) {
        std::printf("  %-58s %8s %7.2f %7.2f %-8s %6.2f\n", l.what.c_str(), l.roof.c_str(), l.pick, l.vendor,
                    l.best_name.c_str(), l.best);
        if (l.pick > 0) picks.push_back(l.pick), worst = std::min(worst, l.pick);
        if (l.vendor > 0) vendors.push_back(l.vendor);
        if (l.best > 0) bests.push_back(l.best);
    }
    const double gp = geomean(picks), gv = geomean(vendors);
    std::printf("  geomean: auto %.3f (worst %.3f, %zu cases), vendor %.3f, best memory-bound rung %.3f; auto / vendor "
                "%.2fx\n",
                gp, picks.empty() ? 0.0 : worst, picks.size(), gv, geomean(bests), gv > 0 ? gp / gv : 0.0);
    return failed;
}

}  // namespace gpk_bench
