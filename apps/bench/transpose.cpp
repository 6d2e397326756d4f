// transpose: B = A^T out of place, column-major, no padding. Elements are moved,
// never computed, so every variant must agree bit for bit. With --memory pinned, A
// and B are pinned host memory: the call stages A in and B out through the GPU,
// both at once, and its throughput counts both.
#include "bench.hpp"
#include "ceilings.hpp"

#include "../common/cli.hpp"

#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>

namespace gpk_bench {
namespace {

template <class T>
class TransposeCase final : public Case {
public:
    TransposeCase(const Env &env, int dtype, int64_t rows, int64_t cols)
        : env_(env), dtype_(dtype), rows_(rows), cols_(cols),
          what_("transpose " + std::string(gpk_app::dtype_name(dtype)) + " " + std::to_string(rows) + "x" +
                std::to_string(cols)),
          elements_(checked_elements({uint64_t(rows), uint64_t(cols)}, sizeof(T), what_)) {}

    int op() const override { return GPK_OP_TRANSPOSE; }
    const char *op_name() const override { return "transpose"; }
    int dtype() const override { return dtype_; }
    std::vector<std::pair<const char *, uint64_t>> sizes() const override {
        return {{"rows", rows_}, {"cols", cols_}};
    }
    std::string shape_note() const override {
        if (!env_.pinned) return "column-major, out of place";
        return "column-major, out of place; A and B in pinned host memory, staged; GB/s = bytes over the link, "
               "A in + B out, which cross at once: vs h2d is against one direction (2.00x = both at full speed), "
               "the summary also against h2d + d2h and against both copies run at once";
    }
    // Read + write; with --memory pinned, the same bytes in + out over the link.
    double work() const override { return 2.0 * double(rows_) * double(cols_) * sizeof(T); }
    bool link_duplex() const override { return true; }
    double unit_scale() const override { return 1e9; }
    const char *unit() const override { return "GB/s"; }

    void prepare() override {
        // A on the host, the reference and a copy of each output (a_host_, ref_, out_),
        // A and B as the case's arrays unless those are device memory, and for 16-bit
        // elements the 32-bit words they are drawn from.
        const size_t bytes = elements() * sizeof(T), arrays = env_.arrays() == Place::kDevice ? 0 : bytes;
        need_host_memory({bytes, bytes, bytes, arrays, arrays, sizeof(T) == 2 ? 2 * bytes : 0}, what_);
        a_host_.resize(elements());
        if constexpr (std::is_floating_point_v<T>) {
            fill_signed(a_host_.data(), a_host_.size(), 0x7A05);
        } else if constexpr (std::is_same_v<T, uint16_t>) {  // F16 or BF16: any bits move the same
            std::vector<int32_t> words(a_host_.size());
            fill_int(words.data(), words.size(), 0x7A05);
            for (size_t i = 0; i < words.size(); ++i) a_host_[i] = static_cast<uint16_t>(words[i] * 40503);
        } else {
            fill_int(a_host_.data(), a_host_.size(), 0x7A05);
        }
        a_ = std::make_unique<Buffer>(env_, elements() * sizeof(T));
        b_ = std::make_unique<Buffer>(env_, elements() * sizeof(T));
        a_->upload(a_host_.data());
        out_.resize(elements());
    }

    void poison() override { b_->poison(); }

    gpk_status call(gpk_context *ctx) override {
        return gpk_transpose(ctx, dtype_, GPK_COL_MAJOR, rows_, cols_, a_->data(), rows_, b_->data(), cols_);
    }

    void keep_reference() override {
        ref_.resize(elements());
        b_->download(ref_.data());
    }
    bool has_reference() const override { return !ref_.empty(); }

    gpk_status host_reference(gpk_context *host) override {
        ref_.resize(elements());
        const gpk_status st =
            gpk_transpose(host, dtype_, GPK_COL_MAJOR, rows_, cols_, a_host_.data(), rows_, ref_.data(), cols_);
        if (st != GPK_SUCCESS) ref_.clear();
        return st;
    }

    Check check(bool) override {
        b_->download(out_.data());
        if (std::memcmp(out_.data(), ref_.data(), elements() * sizeof(T)) == 0) return {true, "bitwise equal"};
        size_t differ = 0, first = 0;
        for (size_t i = 0; i < elements(); ++i) {
            if (std::memcmp(&out_[i], &ref_[i], sizeof(T)) != 0 && differ++ == 0) first = i;
        }
        // B is cols x rows, column-major with ldb = cols.
        char text[128];
        std::snprintf(text, sizeof text, "%zu elements differ, first B(%lld, %lld)", differ,
                      static_cast<long long>(first % size_t(cols_)), static_cast<long long>(first / size_t(cols_)));
        return {false, text};
    }

    // B = A as a plain copy and through shared-memory tiles: the same bytes read
    // and written as a transpose, with nothing rearranged.
    // With --memory pinned, the link's: A to the device, and back into B.
    std::vector<Ceiling> ceilings() override {
        if (!env_.cuda) return {};
        if (env_.pinned) {
            return link_ceilings(
                env_, elements() * sizeof(T), [this] { return LinkEnds{a_.get(), b_.get(), a_host_.data()}; },
                true);
        }
        return {
            {"copy (ceiling)",
             [this](cudaStream_t s) {
                 check_cuda(launch_copy(a_->data(), b_->data(), elements() * sizeof(T), s), "copy ceiling");
             },
             [this] { return check_copy(); }},
            {"copy_smem (ceiling)",
             [this](cudaStream_t s) {
                 check_cuda(launch_copy_smem(a_->data(), b_->data(), rows_, cols_, sizeof(T), s),
                            "copy_smem ceiling");
             },
             [this] { return check_copy(); }},
        };
    }

private:
    // A ceiling's output: B must hold A's bytes unchanged.
    Check check_copy() {
        b_->download(out_.data());
        if (std::memcmp(out_.data(), a_host_.data(), elements() * sizeof(T)) == 0) return {true, "bitwise equal to A"};
        return {false, "B differs from A"};
    }

    size_t elements() const { return elements_; }

    const Env &env_;
    int dtype_;
    int64_t rows_, cols_;
    std::string what_;  // for messages: "transpose f32 8192x8192"
    size_t elements_;   // rows_ x cols_, whose bytes fit in the address space
    std::vector<T> a_host_, ref_, out_;
    std::unique_ptr<Buffer> a_, b_;
};

}  // namespace

std::unique_ptr<Case> make_transpose_case(const Env &env, int dtype, int64_t rows, int64_t cols) {
    switch (dtype) {
        case GPK_F32: return std::make_unique<TransposeCase<float>>(env, dtype, rows, cols);
        case GPK_F64: return std::make_unique<TransposeCase<double>>(env, dtype, rows, cols);
        case GPK_I32: return std::make_unique<TransposeCase<int32_t>>(env, dtype, rows, cols);
        case GPK_I64: return std::make_unique<TransposeCase<int64_t>>(env, dtype, rows, cols);
        case GPK_F16: case GPK_BF16: return std::make_unique<TransposeCase<uint16_t>>(env, dtype, rows, cols);
        default: throw Error("transpose: unknown dtype");
    }
}

}  // namespace gpk_bench
