// reduce: the SUM of n elements, with the result in the backend's memory so that
// the timed call stays asynchronous on the CUDA backend. With --memory pinned, x
// and the result are pinned host memory: the call stages x through the GPU and
// its throughput counts what crosses the link, x in and the result out.
#include "bench.hpp"

#include "../../libgpk/common/half.hpp"
#include "../common/cli.hpp"

#include <cmath>
#include <cstdio>
#include <string>
#include <type_traits>

namespace gpk_bench {
namespace {

// T: element type; R: the result type the API writes for it.
template <class T, class R>
class ReduceCase final : public Case {
public:
    ReduceCase(const Env &env, int dtype, int64_t n)
        : env_(env), dtype_(dtype), n_(n),
          what_("reduce " + std::string(gpk_app::dtype_name(dtype)) + " n=" + std::to_string(n)),
          count_(checked_elements({uint64_t(n)}, sizeof(T), what_)) {}

    int op() const override { return GPK_OP_REDUCE; }
    const char *op_name() const override { return "reduce"; }
    int dtype() const override { return dtype_; }
    std::vector<std::pair<const char *, uint64_t>> sizes() const override { return {{"n", n_}}; }
    std::string shape_note() const override {
        if (!env_.pinned) return "sum";
        return "sum; x and the result in pinned host memory, staged; GB/s = bytes over the link, x in + " +
               std::to_string(sizeof(R)) + " B out; ceiling: pinned h2d of x";
    }
    double work() const override { return double(n_) * sizeof(T) + (env_.pinned ? double(sizeof(R)) : 0.0); }
    double unit_scale() const override { return 1e9; }
    const char *unit() const override { return "GB/s"; }

    void prepare() override {
        // x on the host, again as the case's array unless that is device memory, and for
        // 16-bit elements the floats they are rounded from.
        const size_t bytes = count_ * sizeof(T);
        need_host_memory({bytes, env_.arrays() == Place::kDevice ? 0 : bytes, sizeof(T) == 2 ? 2 * bytes : 0}, what_);
        x_host_.resize(count_);
        // Positive floats keep the sum far from cancellation, so a relative error
        // measures the reduction and not the data.
        if constexpr (std::is_floating_point_v<T>) {
            fill_positive(x_host_.data(), x_host_.size(), 0x5EED);
        } else if constexpr (std::is_same_v<T, uint16_t>) {  // F16 or BF16 bits
            std::vector<float> f(x_host_.size());
            fill_positive(f.data(), f.size(), 0x5EED);
            for (size_t i = 0; i < f.size(); ++i)
                x_host_[i] = dtype_ == GPK_BF16 ? gpk::float_to_bf16(f[i]) : gpk::float_to_half(f[i]);
        } else {
            fill_int(x_host_.data(), x_host_.size(), 0x5EED);
        }
        x_ = std::make_unique<Buffer>(env_, x_host_.size() * sizeof(T));
        result_ = std::make_unique<Buffer>(env_, sizeof(R));
        x_->upload(x_host_.data());
    }

    void poison() override { result_->poison(); }

    gpk_status call(gpk_context *ctx) override {
        return gpk_reduce(ctx, dtype_, GPK_SUM, x_->data(), n_, result_->data());
    }

    void keep_reference() override {
        result_->download(&ref_);
        has_ref_ = true;
    }
    bool has_reference() const override { return has_ref_; }

    gpk_status host_reference(gpk_context *host) override {
        const gpk_status st = gpk_reduce(host, dtype_, GPK_SUM, x_host_.data(), n_, &ref_);
        has_ref_ = st == GPK_SUCCESS;
        return st;
    }

    Check check(bool) override {
        R out{};
        result_->download(&out);
        char text[128];
        if constexpr (std::is_floating_point_v<R>) {
            const double rel = std::fabs(double(out) - double(ref_)) / std::fabs(double(ref_));
            // A different but fixed reduction tree rounds differently: about
            // log2(n) ulps in the worst case, far under these bounds.
            const double tol = std::is_same_v<R, float> ? 1e-5 : 1e-12;
            std::snprintf(text, sizeof text, "rel err %.2g (tol %.2g)", rel, tol);
            return {rel <= tol, text};  // NaN fails
        } else {
            if (out == ref_) return {true, "exact"};
            std::snprintf(text, sizeof text, "%lld, expected %lld", static_cast<long long>(out),
                          static_cast<long long>(ref_));
            return {false, text};
        }
    }

    // Pinned only: x to the device and back into a sink of the ceilings' own (the
    // result is too small to receive it).
    std::vector<Ceiling> ceilings() override {
        if (!env_.pinned) return {};
        return link_ceilings(env_, count_ * sizeof(T), [this] {
            return LinkEnds{x_.get(), nullptr, x_host_.data()};
        });
    }

private:
    const Env &env_;
    int dtype_;
    int64_t n_;
    std::string what_;  // for messages: "reduce f32 n=4194304"
    size_t count_;      // n_ elements, whose bytes fit in the address space
    std::vector<T> x_host_;
    R ref_{};
    bool has_ref_ = false;
    std::unique_ptr<Buffer> x_, result_;
};

}  // namespace

std::unique_ptr<Case> make_reduce_case(const Env &env, int dtype, int64_t n) {
    switch (dtype) {
        case GPK_F32: return std::make_unique<ReduceCase<float, float>>(env, dtype, n);
        case GPK_F64: return std::make_unique<ReduceCase<double, double>>(env, dtype, n);
        case GPK_I32: return std::make_unique<ReduceCase<int32_t, int64_t>>(env, dtype, n);
        case GPK_I64: return std::make_unique<ReduceCase<int64_t, int64_t>>(env, dtype, n);
        case GPK_F16: case GPK_BF16: return std::make_unique<ReduceCase<uint16_t, float>>(env, dtype, n);
        default: throw Error("reduce: unknown dtype");
    }
}

}  // namespace gpk_bench
