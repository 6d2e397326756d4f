// gemm: C = A B, column-major, no transposes, alpha = 1, beta = 0 -- the shape
// every rung supports and the one the vendor figures in PERF.md were taken with.
// With --memory pinned, A, B and C are pinned host memory and the call is staged;
// it is still counted in TFLOP/s, with no link ceiling (gpk-gemm times the stages).
#include "bench.hpp"

#include "../common/cli.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace gpk_bench {
namespace {

template <class T>
class GemmCase final : public Case {
public:
    GemmCase(const Env &env, int dtype, int64_t m, int64_t n, int64_t k)
        : env_(env), dtype_(dtype), m_(m), n_(n), k_(k) {}

    int op() const override { return GPK_OP_GEMM; }
    const char *op_name() const override { return "gemm"; }
    int dtype() const override { return dtype_; }
    std::vector<std::pair<const char *, uint64_t>> sizes() const override {
        return {{"m", m_}, {"n", n_}, {"k", k_}};
    }
    std::string shape_note() const override {
        return env_.pinned ? "column-major, C = A B; A, B and C in pinned host memory, staged" : "column-major, C = A B";
    }
    double work() const override { return 2.0 * double(m_) * double(n_) * double(k_); }
    double unit_scale() const override { return 1e12; }
    const char *unit() const override { return "TFLOP/s"; }

    void prepare() override {
        a_host_.resize(size_t(m_ * k_));
        b_host_.resize(size_t(k_ * n_));
        fill_signed(a_host_.data(), a_host_.size(), 0xA11CE);
        fill_signed(b_host_.data(), b_host_.size(), 0xB0B);
        a_ = std::make_unique<Buffer>(env_, a_host_.size() * sizeof(T));
        b_ = std::make_unique<Buffer>(env_, b_host_.size() * sizeof(T));
        c_ = std::make_unique<Buffer>(env_, size_t(m_ * n_) * sizeof(T));
        a_->upload(a_host_.data());
        b_->upload(b_host_.data());
        out_.resize(size_t(m_ * n_));
    }

    void poison() override { c_->poison(); }

    gpk_status call(gpk_context *ctx) override {
        return gpk_gemm(ctx, dtype_, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, m_, n_, k_, 1.0, a_->data(), m_,
                        b_->data(), k_, 0.0, c_->data(), m_);
    }

    void keep_reference() override {
        ref_.resize(size_t(m_ * n_));
        c_->download(ref_.data());
    }
    bool has_reference() const override { return !ref_.empty(); }

    gpk_status host_reference(gpk_context *host) override {
        ref_.resize(size_t(m_ * n_));
        const gpk_status st = gpk_gemm(host, dtype_, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, m_, n_, k_, 1.0,
                                       a_host_.data(), m_, b_host_.data(), k_, 0.0, ref_.data(), m_);
        if (st != GPK_SUCCESS) ref_.clear();
        return st;
    }

    Check check(bool) override {
        c_->download(out_.data());
        double max_ref = 0, max_diff = 0;
        size_t bad = 0;  // NaN or unwritten (poisoned) elements
        for (size_t i = 0; i < out_.size(); ++i) {
            const double diff = std::fabs(double(out_[i]) - double(ref_[i]));
            if (!(diff <= max_diff)) {
                if (std::isnan(diff)) ++bad;
                else max_diff = diff;
            }
            max_ref = std::max(max_ref, std::fabs(double(ref_[i])));
        }
        const double rel = max_ref > 0 ? max_diff / max_ref : max_diff;
        const double tol = tolerance();
        char text[128];
        if (bad) {
            std::snprintf(text, sizeof text, "%zu elements NaN or unwritten", bad);
            return {false, text};
        }
        std::snprintf(text, sizeof text, "max rel err %.2g (tol %.2g)", rel, tol);
        return {rel <= tol, text};
    }

private:
    // Two correct dot products of length k differ by rounding that grows like
    // sqrt(k) for random data; relative to max|C| (itself ~sqrt(k)) that stays
    // far below these bounds, while an indexing bug gives errors of order 1.
    double tolerance() const {
        const double root_k = std::sqrt(double(std::max<int64_t>(k_, 1)));
        return dtype_ == GPK_F32 ? std::max(1e-5, 1e-6 * root_k) : std::max(1e-13, 1e-14 * root_k);
    }

    const Env &env_;
    int dtype_;
    int64_t m_, n_, k_;
    std::vector<T> a_host_, b_host_, ref_, out_;
    std::unique_ptr<Buffer> a_, b_, c_;
};

}  // namespace

std::unique_ptr<Case> make_gemm_case(const Env &env, int dtype, int64_t m, int64_t n, int64_t k) {
    if (dtype == GPK_F64) return std::make_unique<GemmCase<double>>(env, dtype, m, n, k);
    if (dtype == GPK_F32) return std::make_unique<GemmCase<float>>(env, dtype, m, n, k);
    throw Error(std::string("gemm has no ") + gpk_app::dtype_name(dtype) + " variant (floating point only)");
}

}  // namespace gpk_bench
