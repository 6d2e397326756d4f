// gemm: C = A B, column-major, no transposes, alpha = 1, beta = 0 -- the shape
// every rung supports and the one the vendor figures in PERF.md were taken with.
// F16 and BF16 hold their elements as bits (uint16_t), filled with the F32 data
// rounded to the dtype; --math tf32 and --ld odd reach here as GemmSettings.
// With --memory pinned, A, B and C are pinned host memory and the call is staged;
// it is still counted in TFLOP/s, with no link ceiling (gpk-gemm times the stages).
#include "bench.hpp"

#include "../../libgpk/common/half.hpp"
#include "../common/cli.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <type_traits>

namespace gpk_bench {
namespace {

// An element as a double: 16-bit dtypes are stored as their bits.
double as_double(float v, int) { return v; }
double as_double(double v, int) { return v; }
double as_double(uint16_t v, int dtype) {
    return dtype == GPK_BF16 ? gpk::bf16_to_float(v) : gpk::half_to_float(v);
}

// The smallest odd value >= x (with odd leading dimensions), else x.
int64_t leading(int64_t x, bool odd) { return odd ? (x | 1) : x; }

template <class T>
void fill_matrix(std::vector<T> *x, int dtype, uint64_t seed) {
    if constexpr (std::is_same_v<T, uint16_t>) {
        std::vector<float> f(x->size());
        fill_signed(f.data(), f.size(), seed);
        for (size_t i = 0; i < f.size(); ++i)
            (*x)[i] = dtype == GPK_BF16 ? gpk::float_to_bf16(f[i]) : gpk::float_to_half(f[i]);
    } else {
        fill_signed(x->data(), x->size(), seed);
    }
}

template <class T>
class GemmCase final : public Case {
public:
    GemmCase(const Env &env, int dtype, int64_t m, int64_t n, int64_t k, const GemmSettings &settings)
        : env_(env), dtype_(dtype), m_(m), n_(n), k_(k), settings_(settings),
          lda_(leading(m, settings.odd_ld)), ldb_(leading(k, settings.odd_ld)), ldc_(leading(m, settings.odd_ld)),
          what_("gemm " + std::string(gpk_app::dtype_name(dtype)) + " " + std::to_string(m) + "x" +
                std::to_string(n) + "x" + std::to_string(k)),
          a_count_(checked_elements({uint64_t(lda_), uint64_t(k)}, sizeof(T), what_)),
          b_count_(checked_elements({uint64_t(ldb_), uint64_t(n)}, sizeof(T), what_)),
          c_count_(checked_elements({uint64_t(ldc_), uint64_t(n)}, sizeof(T), what_)) {}

    int op() const override { return GPK_OP_GEMM; }
    const char *op_name() const override { return "gemm"; }
    int dtype() const override { return dtype_; }
    std::vector<std::pair<const char *, uint64_t>> sizes() const override {
        return {{"m", m_}, {"n", n_}, {"k", k_}};
    }
    std::string shape_note() const override {
        std::string note = env_.pinned ? "column-major, C = A B; A, B and C in pinned host memory, staged"
                                       : "column-major, C = A B";
        if (settings_.odd_ld)
            note += "; lda " + std::to_string(lda_) + ", ldb " + std::to_string(ldb_) + ", ldc " + std::to_string(ldc_);
        if (settings_.math == GPK_MATH_TF32 && dtype_ == GPK_F32) note += "; GPK_MATH_TF32";
        return note;
    }
    double work() const override { return 2.0 * double(m_) * double(n_) * double(k_); }
    double unit_scale() const override { return 1e12; }
    const char *unit() const override { return "TFLOP/s"; }
    // A, B and C once (beta is 0: C is only written), and 2 m n k flops.
    std::optional<RooflineWork> roofline_work() const override {
        const double es = sizeof(T), m = double(m_), n = double(n_), k = double(k_);
        return RooflineWork{es * (m * k + k * n + m * n), 2.0 * m * n * k, dtype_,
                            dtype_ == GPK_F32 && settings_.math == GPK_MATH_TF32};
    }

    void prepare() override {
        // A and B on the host, the reference and a copy of each output (ref_, out_), A, B
        // and C as the case's arrays unless those are device memory, and for 16-bit
        // elements the floats they are rounded from.
        const size_t a = a_count_ * sizeof(T), b = b_count_ * sizeof(T), c = c_count_ * sizeof(T);
        const bool device = env_.arrays() == Place::kDevice;
        need_host_memory({a, b, c, c, device ? 0 : a, device ? 0 : b, device ? 0 : c,
                          sizeof(T) == 2 ? 2 * std::max(a, b) : 0},
                         what_);
        a_host_.resize(a_count_);
        b_host_.resize(b_count_);
        fill_matrix(&a_host_, dtype_, 0xA11CE);
        fill_matrix(&b_host_, dtype_, 0xB0B);
        a_ = std::make_unique<Buffer>(env_, a_host_.size() * sizeof(T));
        b_ = std::make_unique<Buffer>(env_, b_host_.size() * sizeof(T));
        c_ = std::make_unique<Buffer>(env_, c_count_ * sizeof(T));
        a_->upload(a_host_.data());
        b_->upload(b_host_.data());
        out_.resize(c_count_);
    }

    void poison() override { c_->poison(); }

    gpk_status call(gpk_context *ctx) override {
        return gpk_gemm(ctx, dtype_, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, m_, n_, k_, 1.0, a_->data(), lda_,
                        b_->data(), ldb_, 0.0, c_->data(), ldc_);
    }

    void keep_reference() override {
        ref_.resize(c_count_);
        c_->download(ref_.data());
    }
    bool has_reference() const override { return !ref_.empty(); }

    gpk_status host_reference(gpk_context *host) override {
        ref_.resize(c_count_);
        const gpk_status st = gpk_gemm(host, dtype_, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, m_, n_, k_, 1.0,
                                       a_host_.data(), lda_, b_host_.data(), ldb_, 0.0, ref_.data(), ldc_);
        if (st != GPK_SUCCESS) ref_.clear();
        return st;
    }

    Check check(bool) override {
        c_->download(out_.data());
        double max_ref = 0, max_diff = 0;
        size_t bad = 0;  // NaN or unwritten (poisoned) elements
        for (size_t i = 0; i < out_.size(); ++i) {
            if (int64_t(i % size_t(ldc_)) >= m_) continue;  // the ldc padding is not C's
            const double got = as_double(out_[i], dtype_), want = as_double(ref_[i], dtype_);
            const double diff = std::fabs(got - want);
            if (!(diff <= max_diff)) {
                if (std::isnan(diff)) ++bad;
                else max_diff = diff;
            }
            max_ref = std::max(max_ref, std::fabs(want));
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
    // 16-bit results may differ by a rounding of the result each (an ulp of max|C| at
    // most: 2^-10 for F16, 2^-7 for BF16); TF32 rounds A and B to 10 bits, which
    // moves a product by up to 2^-10 of itself, and a dot product by about that of
    // max|C| for random data.
    double tolerance() const {
        const double root_k = std::sqrt(double(std::max<int64_t>(k_, 1)));
        const double f32 = std::max(1e-5, 1e-6 * root_k);
        switch (dtype_) {
            case GPK_F64: return std::max(1e-13, 1e-14 * root_k);
            case GPK_F16: return f32 + 0x1p-9;
            case GPK_BF16: return f32 + 0x1p-6;
            default: return settings_.math == GPK_MATH_TF32 ? f32 + 0x1p-8 : f32;
        }
    }

    const Env &env_;
    int dtype_;
    int64_t m_, n_, k_;
    GemmSettings settings_;
    int64_t lda_, ldb_, ldc_;
    std::string what_;                    // for messages: "gemm f32 4096x4096x4096"
    size_t a_count_, b_count_, c_count_;  // elements, with the leading dimensions
    std::vector<T> a_host_, b_host_, ref_, out_;
    std::unique_ptr<Buffer> a_, b_, c_;
};

}  // namespace

std::unique_ptr<Case> make_gemm_case(const Env &env, int dtype, int64_t m, int64_t n, int64_t k,
                                     const GemmSettings &settings) {
    if (dtype == GPK_F64) return std::make_unique<GemmCase<double>>(env, dtype, m, n, k, settings);
    if (dtype == GPK_F32) return std::make_unique<GemmCase<float>>(env, dtype, m, n, k, settings);
    if (dtype == GPK_F16 || dtype == GPK_BF16) return std::make_unique<GemmCase<uint16_t>>(env, dtype, m, n, k, settings);
    throw Error(std::string("gemm has no ") + gpk_app::dtype_name(dtype) + " variant (floating point only)");
}

}  // namespace gpk_bench
