// gemm_ex and gemm_blockscaled: FP8 A and B (E4M3, E5M2 or one of each) into F32, F16
// or BF16 C, per tensor (gpk_gemm_ex) or with DeepSeek-V3's 1x128 / 128x128 scales
// (gpk_gemm_blockscaled), and F16 or BF16 A and B into F32 C -- in any layout and
// transposition (TN by default: both operands k-contiguous, the only layout cuBLASLt's
// FP8 takes), leading dimensions odd where asked.
//
// The check does not lean on the vendor: cuBLASLt refuses most of what is timed here
// (NN, NT, TT, odd leading dimensions, block scales), and a host gemm of these sizes
// would take minutes. Instead prepare() computes, in double, a sample of C's elements
// exactly from the inputs as they are (FP8 decoded bit for bit) together with
// sum |a b| along k, and every row is held to the contract's own bound on those:
//   |C - exact| <= 2^-9 sum_k |alpha a b| (scales included), plus one rounding of C.
// Every other element must merely have been written (the output is poisoned with NaN
// before each checked call, and the inputs are finite).
//
// On the GPU each case has a yardstick timed beside the ladder: the 16-bit gemm of the
// same values in the same layout (BF16 for FP8 inputs, which BF16 holds exactly; the
// inputs' own dtype for the 16-bit ones), or for a block-scaled case the per-tensor
// FP8 gemm_ex of the same operands; each through "auto", as a user calls them.
#include "bench.hpp"

#include "../../libgpk/common/half.hpp"
#include "../common/cli.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>

namespace gpk_bench {
namespace {

constexpr int kSamples = 1024;  // sampled elements of C, besides its four corners

bool is_fp8(int dtype) { return dtype == GPK_F8E4M3 || dtype == GPK_F8E5M2; }
size_t elem_bytes(int dtype) { return is_fp8(dtype) ? 1 : gpk_app::dtype_bytes(dtype); }

// The exact value of an OCP FP8 element: E4M3 (bias 7, no infinities, NaN S.1111.111)
// or E5M2 (bias 15, infinities and NaNs as IEEE).
double fp8_value(uint8_t bits, int dtype) {
    const double sign = bits & 0x80 ? -1.0 : 1.0;
    if (dtype == GPK_F8E4M3) {
        const int e = (bits >> 3) & 15, m = bits & 7;
        if (e == 15 && m == 7) return std::numeric_limits<double>::quiet_NaN();
        return sign * (e == 0 ? std::ldexp(m, -9) : std::ldexp(8 + m, e - 10));
    }
    const int e = (bits >> 2) & 31, m = bits & 3;
    if (e == 31) return m ? std::numeric_limits<double>::quiet_NaN() : sign * HUGE_VAL;
    return sign * (e == 0 ? std::ldexp(m, -16) : std::ldexp(4 + m, e - 17));
}

uint64_t mix(uint64_t x) {  // splitmix64's finaliser
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

// A random FP8 element of magnitude in [0.25, 2), either sign: every mantissa and
// three exponents, so that sums cancel as real data's do and no product is subnormal.
uint8_t random_fp8(int dtype, uint64_t seed, size_t i) {
    const uint64_t r = mix(seed ^ mix(i));
    const unsigned sign = unsigned(r & 1) << 7;
    if (dtype == GPK_F8E4M3) return uint8_t(sign | ((5 + (r >> 1) % 3) << 3) | ((r >> 8) & 7));
    return uint8_t(sign | ((13 + (r >> 1) % 3) << 2) | ((r >> 8) & 3));
}

// A power-of-two scale in [1/4, 4]: the block scales' products stay exact.
float random_scale(uint64_t seed, size_t i) { return std::ldexp(1.0f, int(mix(seed ^ mix(i)) % 5) - 2); }

// One element of a 16-bit or F32 array, as a double.
double element(const uint8_t *bytes, size_t index, int dtype) {
    if (dtype == GPK_F32) {
        float v;
        std::memcpy(&v, bytes + 4 * index, 4);
        return v;
    }
    uint16_t v;
    std::memcpy(&v, bytes + 2 * index, 2);
    return dtype == GPK_BF16 ? gpk::bf16_to_float(v) : gpk::half_to_float(v);
}

// C's rounding: half an ulp relative, and half the smallest subnormal near zero.
double unit_of(int dtype) { return dtype == GPK_F32 ? 0x1p-24 : dtype == GPK_F16 ? 0x1p-11 : 0x1p-8; }
double tiny_of(int dtype) { return dtype == GPK_F32 ? 0x1p-150 : dtype == GPK_F16 ? 0x1p-25 : 0x1p-134; }

const char *trans_letter(int t) { return t == GPK_TRANS ? "T" : "N"; }

// A stored matrix: `rows` x `cols` as the call sees it in memory (A is k x m under
// transa), ld elements between columns (column-major) or rows (row-major).
struct Stored {
    int64_t rows = 0, cols = 0, ld = 0;
    size_t count = 0;  // elements, with the leading dimension
    size_t at(int64_t r, int64_t c, int layout) const {
        return layout == GPK_COL_MAJOR ? size_t(r) + size_t(c) * size_t(ld) : size_t(r) * size_t(ld) + size_t(c);
    }
};

Stored stored(int64_t rows, int64_t cols, int layout, bool odd, size_t elem, const std::string &what) {
    Stored s;
    s.rows = rows;
    s.cols = cols;
    const int64_t least = std::max<int64_t>(1, layout == GPK_COL_MAJOR ? rows : cols);
    s.ld = odd ? (least | 1) : least;
    s.count = checked_elements({uint64_t(s.ld), uint64_t(layout == GPK_COL_MAJOR ? cols : rows)}, elem, what);
    return s;
}

class GemmExCase final : public Case {
public:
    GemmExCase(const Env &env, int64_t m, int64_t n, int64_t k, const GemmExSettings &s)
        : env_(env), s_(s), m_(m), n_(n), k_(k), label_(gemm_ex_label(s)),
          what_("gemm " + label_ + " " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k)),
          a_(stored(s.transa == GPK_TRANS ? k : m, s.transa == GPK_TRANS ? m : k, s.layout, s.odd_ld,
                    elem_bytes(s.a_dtype), what_)),
          b_(stored(s.transb == GPK_TRANS ? n : k, s.transb == GPK_TRANS ? k : n, s.layout, s.odd_ld,
                    elem_bytes(s.b_dtype), what_)),
          c_(stored(m, n, s.layout, s.odd_ld, elem_bytes(s.c_dtype), what_)),
          kb_((k + 127) / 128), nb_((n + 127) / 128) {
        if (s.block_scaled && !(is_fp8(s.a_dtype) && is_fp8(s.b_dtype)))
            throw Error(what_ + ": block scaling takes FP8 operands (--dtype fp8, fp8-e5m2 or fp8-mixed)");
    }

    int op() const override { return GPK_OP_GEMM; }
    const char *op_name() const override { return "gemm"; }
    int dtype() const override { return s_.a_dtype; }
    std::string dtype_label() const override { return label_; }
    std::vector<std::pair<const char *, uint64_t>> sizes() const override {
        return {{"m", m_}, {"n", n_}, {"k", k_}};
    }
    std::string shape_note() const override {
        std::string note = std::string(s_.layout == GPK_COL_MAJOR ? "column-major" : "row-major") + ", " +
                           trans_letter(s_.transa) + trans_letter(s_.transb) + " (C = " +
                           (s_.transa == GPK_TRANS ? "A^T" : "A") + " " + (s_.transb == GPK_TRANS ? "B^T" : "B") +
                           ")";
        note += s_.block_scaled ? "; gpk_gemm_blockscaled, scales 1x128 (A) and 128x128 (B)" : "; gpk_gemm_ex";
        if (s_.odd_ld)
            note += "; lda " + std::to_string(a_.ld) + ", ldb " + std::to_string(b_.ld) + ", ldc " +
                    std::to_string(c_.ld);
        if (env_.pinned) note += "; A, B and C in pinned host memory, staged";
        return note;
    }
    double work() const override { return 2.0 * double(m_) * double(n_) * double(k_); }
    double unit_scale() const override { return 1e12; }
    const char *unit() const override { return "TFLOP/s"; }

    void prepare() override {
        const size_t ea = elem_bytes(s_.a_dtype), eb = elem_bytes(s_.b_dtype), ec = elem_bytes(s_.c_dtype);
        const size_t a = a_.count * ea, b = b_.count * eb, c = c_.count * ec;
        // The inputs on the host, a copy of each output, and on the GPU the yardstick's
        // 16-bit copies of FP8 inputs.
        const bool yard = env_.cuda && is_fp8(s_.a_dtype);
        need_host_memory({a, b, c, yard ? 2 * a_.count : 0, yard ? 2 * b_.count : 0}, what_);
        a_host_.resize(a);
        b_host_.resize(b);
        fill(&a_host_, s_.a_dtype, a_.count, 0xA11CE);
        fill(&b_host_, s_.b_dtype, b_.count, 0xB0B);
        a_buf_ = std::make_unique<Buffer>(env_, a);
        b_buf_ = std::make_unique<Buffer>(env_, b);
        c_buf_ = std::make_unique<Buffer>(env_, c);
        a_buf_->upload(a_host_.data());
        b_buf_->upload(b_host_.data());
        if (s_.block_scaled) {
            scale_a_.resize(size_t(m_ * kb_));
            scale_b_.resize(size_t(nb_ * kb_));
            for (size_t i = 0; i < scale_a_.size(); ++i) scale_a_[i] = random_scale(0x5CA1E, i);
            for (size_t i = 0; i < scale_b_.size(); ++i) scale_b_[i] = random_scale(0x5CA1F, i);
            sa_buf_ = std::make_unique<Buffer>(env_, std::max<size_t>(1, scale_a_.size()) * sizeof(float));
            sb_buf_ = std::make_unique<Buffer>(env_, std::max<size_t>(1, scale_b_.size()) * sizeof(float));
            if (!scale_a_.empty()) sa_buf_->upload(scale_a_.data());
            if (!scale_b_.empty()) sb_buf_->upload(scale_b_.data());
        }
        out_.resize(c);
        sample();
    }

    void poison() override {
        c_buf_->poison();
        if (yard_c_) yard_c_->poison();
    }

    gpk_status call(gpk_context *ctx) override {
        if (s_.block_scaled)
            return gpk_gemm_blockscaled(ctx, s_.layout, s_.transa, s_.transb, m_, n_, k_, 1.0, s_.a_dtype,
                                        a_buf_->data(), a_.ld, static_cast<const float *>(sa_buf_->data()),
                                        s_.b_dtype, b_buf_->data(), b_.ld, static_cast<const float *>(sb_buf_->data()),
                                        0.0, s_.c_dtype, c_buf_->data(), c_.ld);
        return gpk_gemm_ex(ctx, s_.layout, s_.transa, s_.transb, m_, n_, k_, 1.0, s_.a_dtype, a_buf_->data(), a_.ld,
                           s_.b_dtype, b_buf_->data(), b_.ld, 0.0, s_.c_dtype, c_buf_->data(), c_.ld);
    }

    // The reference is the sample prepare() computed, whatever variant 0 does.
    void keep_reference() override {}
    bool has_reference() const override { return !samples_.empty() || m_ * n_ == 0; }
    gpk_status host_reference(gpk_context *) override { return GPK_SUCCESS; }

    Check check(bool) override { return judge(*c_buf_, s_.c_dtype, s_.block_scaled); }

    std::vector<Ceiling> ceilings() override {
        // With --memory pinned the calls are staged: no device yardstick to compare with.
        if (env_.pinned) return {};
        Ceiling yard;
        if (s_.block_scaled) {
            // The same operands per tensor: what block scaling costs.
            yard.name = "fp8 per-tensor (auto)";
            yard.setup = [this] {
                ensure_yard_c(s_.c_dtype);
                auto_variant();
            };
            yard.launch = [this](cudaStream_t) {
                check_status(gpk_gemm_ex(env_.ctx, s_.layout, s_.transa, s_.transb, m_, n_, k_, 1.0, s_.a_dtype,
                                         a_buf_->data(), a_.ld, s_.b_dtype, b_buf_->data(), b_.ld, 0.0, s_.c_dtype,
                                         yard_c_->data(), c_.ld),
                             "gpk_gemm_ex (per tensor)");
            };
            yard.check = [this] { return judge(*yard_c_, s_.c_dtype, false); };
            return {yard};
        }
        // The 16-bit gemm of the same values and layout: BF16 for FP8 inputs (which it
        // holds exactly), else the inputs' own dtype.
        const int dtype = is_fp8(s_.a_dtype) ? GPK_BF16 : s_.a_dtype;
        yard.name = std::string(gpk_app::dtype_name(dtype)) + " gemm (auto)";
        yard.setup = [this, dtype] {
            ensure_yard_c(dtype);
            auto_variant();
            if (is_fp8(s_.a_dtype) && !yard_a_) {
                yard_a_ = widened(a_host_, s_.a_dtype, a_.count);
                yard_b_ = widened(b_host_, s_.b_dtype, b_.count);
            }
        };
        yard.launch = [this, dtype](cudaStream_t) {
            const void *a = yard_a_ ? yard_a_->data() : a_buf_->data();
            const void *b = yard_b_ ? yard_b_->data() : b_buf_->data();
            check_status(gpk_gemm(env_.ctx, dtype, s_.layout, s_.transa, s_.transb, m_, n_, k_, 1.0, a, a_.ld, b, b_.ld,
                                  0.0, yard_c_->data(), c_.ld),
                         "gpk_gemm (16-bit)");
        };
        yard.check = [this, dtype] { return judge(*yard_c_, dtype, false); };
        return {yard};
    }
    Yardstick yardstick() const override {
        if (s_.block_scaled) return {"fp8 tensor", "per-tensor FP8 gemm", "ratio_to_fp8_per_tensor"};
        const std::string name = gpk_app::dtype_name(is_fp8(s_.a_dtype) ? GPK_BF16 : s_.a_dtype);
        return {name, name + " gemm", "ratio_to_16bit_gemm"};
    }

private:
    struct Sample {
        int64_t i, j;
        double exact, abs;              // as called (block scales included)
        double plain, plain_abs;        // without scales: the per-tensor yardstick's
    };

    void fill(std::vector<uint8_t> *x, int dtype, size_t count, uint64_t seed) {
        if (is_fp8(dtype)) {
            for (size_t i = 0; i < count; ++i) (*x)[i] = random_fp8(dtype, seed, i);
            return;
        }
        std::vector<float> f(count);
        fill_signed(f.data(), count, seed);
        for (size_t i = 0; i < count; ++i) {
            const uint16_t v = dtype == GPK_BF16 ? gpk::float_to_bf16(f[i]) : gpk::float_to_half(f[i]);
            std::memcpy(x->data() + 2 * i, &v, 2);
        }
    }

    double input(const std::vector<uint8_t> &x, size_t index, int dtype) const {
        return is_fp8(dtype) ? fp8_value(x[index], dtype) : element(x.data(), index, dtype);
    }
    double a_at(int64_t i, int64_t p) const {  // op(A)(i, p)
        return input(a_host_, s_.transa == GPK_TRANS ? a_.at(p, i, s_.layout) : a_.at(i, p, s_.layout), s_.a_dtype);
    }
    double b_at(int64_t p, int64_t j) const {  // op(B)(p, j)
        return input(b_host_, s_.transb == GPK_TRANS ? b_.at(j, p, s_.layout) : b_.at(p, j, s_.layout), s_.b_dtype);
    }

    // The sampled elements of C, exactly, with sum |a b| (and the same without scales).
    void sample() {
        samples_.clear();
        if (m_ == 0 || n_ == 0) return;
        std::vector<std::pair<int64_t, int64_t>> at = {{0, 0}, {m_ - 1, n_ - 1}, {0, n_ - 1}, {m_ - 1, 0}};
        for (int s = 0; s < kSamples; ++s) {
            const uint64_t r = mix(0x5A3B1E + uint64_t(s));
            at.push_back({int64_t(r % uint64_t(m_)), int64_t((r >> 32) % uint64_t(n_))});
        }
        for (const auto &[i, j] : at) {
            Sample smp{i, j, 0, 0, 0, 0};
            for (int64_t q = 0; q * 128 < k_ || (q == 0 && k_ == 0); ++q) {
                double dot = 0, dot_abs = 0;
                for (int64_t p = q * 128; p < std::min(k_, q * 128 + 128); ++p) {
                    const double prod = a_at(i, p) * b_at(p, j);
                    dot += prod;
                    dot_abs += std::fabs(prod);
                }
                const double scale = s_.block_scaled && k_ > 0
                                         ? double(scale_a_[size_t(q * m_ + i)]) * scale_b_[size_t(q * nb_ + j / 128)]
                                         : 1.0;
                smp.exact += scale * dot;
                smp.abs += std::fabs(scale) * dot_abs;
                smp.plain += dot;
                smp.plain_abs += dot_abs;
                if (k_ == 0) break;
            }
            samples_.push_back(smp);
        }
    }

    // Whether `out` (C's shape and leading dimension, elements of `dtype`) was written
    // everywhere and meets the bound at the samples: scaled, or per tensor (a yardstick).
    Check judge(const Buffer &out, int dtype, bool scaled) {
        out_.resize(c_.count * elem_bytes(dtype));
        out.download(out_.data());
        const Stored &c = c_;
        size_t unwritten = 0;
        for (int64_t j = 0; j < n_; ++j)
            for (int64_t i = 0; i < m_; ++i)
                if (std::isnan(element(out_.data(), c.at(i, j, s_.layout), dtype))) ++unwritten;
        char text[160];
        if (unwritten) {
            std::snprintf(text, sizeof text, "%zu elements NaN or unwritten (finite inputs)", unwritten);
            return {false, text};
        }
        const double unit = unit_of(dtype), tiny = tiny_of(dtype);
        double worst = 0;
        size_t over = 0;
        for (const Sample &smp : samples_) {
            const double exact = scaled ? smp.exact : smp.plain, abs = scaled ? smp.abs : smp.plain_abs;
            const double got = element(out_.data(), c.at(smp.i, smp.j, s_.layout), dtype);
            const double bound = 0x1p-9 * abs * (1 + unit) + unit * std::fabs(exact) + tiny;
            const double ratio = std::fabs(got - exact) / bound;
            worst = std::max(worst, ratio);
            over += !(ratio <= 1);
        }
        std::snprintf(text, sizeof text, "%zu sampled elements: worst error %.2g of the contract's bound%s",
                      samples_.size(), worst, over ? " (over it)" : "");
        return {over == 0, text};
    }

    void ensure_yard_c(int dtype) {
        if (!yard_c_) yard_c_ = std::make_unique<Buffer>(env_, c_.count * elem_bytes(dtype));
        yard_c_->poison();
    }

    // FP8 inputs as BF16, which holds every FP8 value exactly.
    std::unique_ptr<Buffer> widened(const std::vector<uint8_t> &x, int dtype, size_t count) {
        std::vector<uint16_t> wide(count);
        for (size_t i = 0; i < count; ++i) wide[i] = gpk::float_to_bf16(float(fp8_value(x[i], dtype)));
        auto buffer = std::make_unique<Buffer>(env_, count * 2);
        buffer->upload(wide.data());
        return buffer;
    }

    // The yardsticks run through "auto", as a user's call would: set before their
    // checked call (they are timed before the ladder's rows choose rungs), not inside
    // the timed call.
    void auto_variant() { check_status(gpk_set_variant(env_.ctx, GPK_OP_GEMM, nullptr), "gpk_set_variant"); }
    void check_status(gpk_status st, const char *what) {
        if (st != GPK_SUCCESS)
            throw Error(std::string(what) + ": " + gpk_status_string(st) + ": " + gpk_last_error(env_.ctx));
    }

    const Env &env_;
    GemmExSettings s_;
    int64_t m_, n_, k_;
    std::string label_, what_;
    Stored a_, b_, c_;
    int64_t kb_, nb_;
    std::vector<uint8_t> a_host_, b_host_, out_;
    std::vector<float> scale_a_, scale_b_;
    std::vector<Sample> samples_;
    std::unique_ptr<Buffer> a_buf_, b_buf_, c_buf_, sa_buf_, sb_buf_;
    std::unique_ptr<Buffer> yard_a_, yard_b_, yard_c_;  // the yardstick's (CUDA only)
};

const char *operand_name(int dtype) {
    if (dtype == GPK_F8E4M3) return "e4m3";
    if (dtype == GPK_F8E5M2) return "e5m2";
    return gpk_app::dtype_name(dtype);
}

}  // namespace

std::string gemm_ex_label(const GemmExSettings &s) {
    std::string label = std::string(operand_name(s.a_dtype)) + "x" + operand_name(s.b_dtype) + "->" +
                        gpk_app::dtype_name(s.c_dtype);
    return s.block_scaled ? label + " block" : label;
}

std::unique_ptr<Case> make_gemm_ex_case(const Env &env, int64_t m, int64_t n, int64_t k, const GemmExSettings &s) {
    return std::make_unique<GemmExCase>(env, m, n, k, s);
}

namespace {

// What print_fp8_summary needs of a gemm_ex case, read back from its result: the
// label and note are this file's own (gemm_ex_label, GemmExCase::shape_note).
struct Seen {
    const CaseResult *r = nullptr;
    std::string shape, layout;  // "8192x8192x8192", "column-major, TN"
    bool block = false, odd = false, fp8 = false;
    const Row *best = nullptr, *vendor = nullptr, *pick = nullptr, *yard = nullptr;
    const Row *vendor_row = nullptr;  // timed or not: refused, failed
};

Seen seen(const CaseResult &r) {
    Seen s;
    s.r = &r;
    for (const auto &[name, value] : r.sizes) s.shape += (s.shape.empty() ? "" : "x") + std::to_string(value);
    s.layout = r.note.substr(0, r.note.find(" ("));
    s.block = r.dtype.find(" block") != std::string::npos;
    s.odd = r.note.find("; lda ") != std::string::npos;
    s.fp8 = r.dtype.find("e4m3") != std::string::npos || r.dtype.find("e5m2") != std::string::npos;
    for (const Row &row : r.rows) {
        if (row.index == 0 && !row.ceiling && !row.auto_pick) s.vendor_row = &row;
        if (!row.timed() || row.failed()) continue;
        if (row.ceiling) {
            if (!s.yard) s.yard = &row;
        } else if (row.auto_pick) {
            s.pick = &row;
        } else if (row.index == 0) {
            s.vendor = &row;
        } else if (!s.best || row.throughput > s.best->throughput) {
            s.best = &row;
        }
    }
    // A ladder of one (the host backend's): its only rung is the best there is.
    if (!s.best) s.best = s.vendor;
    return s;
}

std::string ratio_text(double num, double den) {
    char text[32];
    std::snprintf(text, sizeof text, "%.2fx", num / den);
    return text;
}

}  // namespace

void print_fp8_summary(const std::vector<CaseResult> &results) {
    std::vector<Seen> cases;
    for (const CaseResult &r : results)
        if (r.op == "gemm" && r.dtype.find("->") != std::string::npos && r.error.empty()) cases.push_back(seen(r));
    if (cases.empty()) return;
    // Our TN rates, per tensor with tight leading dimensions, that the other layouts
    // and the odd leading dimensions are held to.
    const auto tn_best = [&](const std::string &shape, const std::string &dtype) -> const Row * {
        for (const Seen &s : cases)
            if (s.shape == shape && s.r->dtype == dtype && s.layout == "column-major, TN" && !s.odd && !s.block)
                return s.best;
        return nullptr;
    };
    std::printf("\nFP8 and mixed-precision summary: each case's fastest own rung (TFLOP/s), its ratio to the\n"
                "vendor's, auto's to it, and the comparison the case is there for, all timed in this run\n");
    std::printf("  %-22s  %-20s  %-24s  %-16s  %9s  %9s  %10s  %s\n", "dtypes", "m x n x k", "layout", "best rung",
                "TFLOP/s", "vs vendor", "auto/best", "against");
    for (const Seen &s : cases) {
        std::string against = "-";
        const std::string dtype_plain = s.block ? s.r->dtype.substr(0, s.r->dtype.size() - 6) : s.r->dtype;
        if (s.best) {
            if (s.block && s.yard) {
                against = ratio_text(s.best->throughput, s.yard->throughput) + " per-tensor FP8 (auto)";
            } else if (!s.fp8 && s.yard) {
                against = ratio_text(s.best->throughput, s.yard->throughput) + " " + s.yard->variant;
            } else if (s.odd) {
                // 4097^3 against 4096^3 (one less in every dimension, tight).
                std::string even;
                for (const auto &[name, value] : s.r->sizes)
                    even += (even.empty() ? "" : "x") + std::to_string(value - 1);
                if (const Row *tn = tn_best(even, dtype_plain))
                    against = ratio_text(s.best->throughput, tn->throughput) + " our " + even + " TN";
            } else if (s.layout != "column-major, TN") {
                if (const Row *tn = tn_best(s.shape, dtype_plain))
                    against = ratio_text(s.best->throughput, tn->throughput) + " our TN";
            } else if (s.yard) {
                against = ratio_text(s.best->throughput, s.yard->throughput) + " " + s.yard->variant;
            }
        }
        char rate[32] = "-";
        if (s.best) std::snprintf(rate, sizeof rate, "%.4g", s.best->throughput);
        std::string vendor = "-";
        if (s.best && s.vendor)
            vendor = ratio_text(s.best->throughput, s.vendor->throughput);
        else if (s.vendor_row && s.vendor_row->status == Row::Status::kUnsupported)
            vendor = "refused";
        else if (s.vendor_row && s.vendor_row->failed())
            vendor = "failed";
        const std::string pick = s.best && s.pick ? ratio_text(s.pick->throughput, s.best->throughput) +
                                                        (s.pick->ran.empty() ? "" : " " + s.pick->ran)
                                                  : "-";
        std::printf("  %-22s  %-20s  %-24s  %-16s  %9s  %9s  %10s  %s\n", s.r->dtype.c_str(), s.shape.c_str(),
                    (s.layout + (s.odd ? ", odd ld" : "")).c_str(), s.best ? s.best->variant.c_str() : "none ran",
                    rate, vendor.c_str(), pick.c_str(), against.c_str());
    }
    std::fflush(stdout);
}

}  // namespace gpk_bench
