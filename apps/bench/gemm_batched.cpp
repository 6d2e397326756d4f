// gemm_batched: batch_count square products C_i = A_i B_i, column-major, packed
// (stride one matrix), alpha = 1, beta = 0, the batch filling about `operand_bytes`
// per operand. Small products are bound by memory, so the table counts GB/s -- A
// and B read once, C written once -- and is compared with a device copy of the same
// bytes (the ceiling: one read and one write of A's bytes, so its GB/s count the same
// way) as well as with cuBLAS (the vendor, variant 0). The note gives the factor to
// TFLOP/s.
#include "bench.hpp"
#include "ceilings.hpp"

#include "../common/cli.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace gpk_bench {
namespace {

template <class T>
class GemmBatchedCase final : public Case {
public:
    // The batch fills operand_bytes per operand with n x n products, or is one product
    // where one is larger; a product too large for the address space throws (Error).
    GemmBatchedCase(const Env &env, int dtype, int64_t n, size_t operand_bytes)
        : env_(env), dtype_(dtype), n_(n),
          what_("gemm_batched " + std::string(gpk_app::dtype_name(dtype)) + " n=" + std::to_string(n)),
          product_(checked_elements({uint64_t(n), uint64_t(n)}, sizeof(T), what_)),
          batch_(std::max<int64_t>(1, static_cast<int64_t>(operand_bytes / (product_ * sizeof(T))))),
          elements_(checked_elements({product_, uint64_t(batch_)}, sizeof(T), what_)) {}

    int op() const override { return GPK_OP_GEMM_BATCHED; }
    const char *op_name() const override { return "gemm_batched"; }
    int dtype() const override { return dtype_; }
    std::vector<std::pair<const char *, uint64_t>> sizes() const override {
        return {{"n", uint64_t(n_)}, {"batch", uint64_t(batch_)}};
    }
    std::string shape_note() const override {
        char text[200];
        // 2 n^3 flops per product over 3 n^2 elements moved: TFLOP/s = GB/s * 2n / (3 * size * 1000).
        std::snprintf(text, sizeof text,
                      "column-major, packed, C_i = A_i B_i, beta 0; GB/s = A + B read + C written; "
                      "TFLOP/s = GB/s x %.4g",
                      2.0 * double(n_) / (3.0 * sizeof(T) * 1000.0));
        return text;
    }
    double work() const override { return 3.0 * double(elements()) * sizeof(T); }
    double unit_scale() const override { return 1e9; }
    const char *unit() const override { return "GB/s"; }

    void prepare() override {
        // A and B on the host, the reference and a copy of the output (ref_, out_), and A,
        // B and C as the case's arrays unless those are device memory.
        const size_t bytes = elements() * sizeof(T), arrays = env_.arrays() == Place::kDevice ? 0 : bytes;
        need_host_memory({bytes, bytes, bytes, bytes, arrays, arrays, arrays}, what_);
        a_host_.resize(elements());
        b_host_.resize(elements());
        fill_signed(a_host_.data(), a_host_.size(), 0xBA7C4A);
        fill_signed(b_host_.data(), b_host_.size(), 0xBA7C4B);
        a_ = std::make_unique<Buffer>(env_, elements() * sizeof(T));
        b_ = std::make_unique<Buffer>(env_, elements() * sizeof(T));
        c_ = std::make_unique<Buffer>(env_, elements() * sizeof(T));
        a_->upload(a_host_.data());
        b_->upload(b_host_.data());
        out_.resize(elements());
    }

    void poison() override { c_->poison(); }

    gpk_status call(gpk_context *ctx) override { return run(ctx, a_->data(), b_->data(), c_->data()); }

    void keep_reference() override {
        ref_.resize(elements());
        c_->download(ref_.data());
    }
    bool has_reference() const override { return !ref_.empty(); }

    gpk_status host_reference(gpk_context *host) override {
        ref_.resize(elements());
        const gpk_status st = run(host, a_host_.data(), b_host_.data(), ref_.data());
        if (st != GPK_SUCCESS) ref_.clear();
        return st;
    }

    // Every product against the reference, relative to max|C| (see gemm.cpp's
    // tolerance: an indexing bug errs by order 1).
    Check check(bool) override {
        c_->download(out_.data());
        double max_ref = 0, max_diff = 0;
        size_t bad = 0;
        for (size_t i = 0; i < out_.size(); ++i) {
            const double got = out_[i], want = ref_[i];
            const double diff = std::fabs(got - want);
            if (!(diff <= max_diff)) {
                if (std::isnan(diff)) ++bad;
                else max_diff = diff;
            }
            max_ref = std::max(max_ref, std::fabs(want));
        }
        char text[128];
        if (bad) {
            std::snprintf(text, sizeof text, "%zu elements NaN or unwritten", bad);
            return {false, text};
        }
        const double root_n = std::sqrt(double(n_));
        const double tol = dtype_ == GPK_F64 ? std::max(1e-13, 1e-14 * root_n) : std::max(1e-5, 1e-6 * root_n);
        const double rel = max_ref > 0 ? max_diff / max_ref : max_diff;
        std::snprintf(text, sizeof text, "max rel err %.2g (tol %.2g)", rel, tol);
        return {rel <= tol, text};
    }

    // A's bytes copied into C: one read and one write of a batch's operand, counted
    // as the GB/s of the bytes moved (work 2x one operand).
    std::vector<Ceiling> ceilings() override {
        if (!env_.cuda || env_.pinned) return {};
        Ceiling copy{"copy (ceiling)",
                     [this](cudaStream_t s) {
                         check_cuda(launch_copy(a_->data(), c_->data(), elements() * sizeof(T), s), "copy ceiling");
                     },
                     [this] {
                         c_->download(out_.data());
                         const bool same = std::equal(out_.begin(), out_.end(), a_host_.begin(),
                                                      [](T x, T y) { return x == y; });
                         return Check{same, same ? "equal to A" : "C differs from A"};
                     }};
        copy.work = 2.0 * double(elements()) * sizeof(T);
        return {copy};
    }

private:
    gpk_status run(gpk_context *ctx, const void *A, const void *B, void *C) const {
        const auto s = static_cast<int64_t>(product_);
        return gpk_gemm_strided_batched(ctx, dtype_, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, n_, n_, n_, 1.0, A, n_,
                                        s, B, n_, s, 0.0, C, n_, s, batch_);
    }
    size_t elements() const { return elements_; }

    const Env &env_;
    int dtype_;
    int64_t n_;
    std::string what_;  // for messages: "gemm_batched f32 n=64"
    size_t product_;    // n_ x n_: one product's elements
    int64_t batch_;
    size_t elements_;   // product_ x batch_
    std::vector<T> a_host_, b_host_, ref_, out_;
    std::unique_ptr<Buffer> a_, b_, c_;
};

}  // namespace

std::unique_ptr<Case> make_gemm_batched_case(const Env &env, int dtype, int64_t n, size_t operand_bytes) {
    if (dtype == GPK_F32) return std::make_unique<GemmBatchedCase<float>>(env, dtype, n, operand_bytes);
    if (dtype == GPK_F64) return std::make_unique<GemmBatchedCase<double>>(env, dtype, n, operand_bytes);
    throw Error(std::string("gemm_batched in gpk-bench takes f32 and f64, not ") + gpk_app::dtype_name(dtype));
}

}  // namespace gpk_bench
