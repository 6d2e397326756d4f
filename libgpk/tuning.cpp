// Tuning tables: the parser, the calls' keys and the lookup (see tuning.hpp). Plain
// C++ with no CUDA and no context, so that the host tests compile it in.
#include "tuning.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <tuple>

namespace gpk::tuning {
namespace {

constexpr const char *kOpWords[] = {"gemm", "reduce", "transpose", "pi", "gemm_batched"};
constexpr int kOpWordCount = sizeof kOpWords / sizeof kOpWords[0];
constexpr const char *kLayoutWords[] = {"nn", "nt", "tn", "tt"};
// A line longer than this is not one the tuner writes: refused rather than read.
constexpr size_t kMaxLine = 4096;

bool is_gemm(int op) { return op == GPK_OP_GEMM || op == GPK_OP_GEMM_BATCHED; }

// Whether p and a leading dimension or stride of `ld` elements of `es` bytes keep
// whole 16-byte vectors.
bool vectors(const void *p, int64_t ld, size_t es) {
    // In unsigned arithmetic: a product past 2^64 wraps (its low bits, which decide,
    // stay right) where a signed one would be undefined.
    return reinterpret_cast<uintptr_t>(p) % 16 == 0 && (static_cast<uint64_t>(ld) * es) % 16 == 0;
}

// A dimension as the table measures it: a count from 1 (k == 0, a gemm that only scales
// C, is nearest the smallest k).
int64_t dim(int64_t v) { return v > 0 ? v : 1; }

int math_of(int op, int dtype, int math_mode) {
    return is_gemm(op) && dtype == GPK_F32 && math_mode == GPK_MATH_TF32 ? GPK_MATH_TF32 : GPK_MATH_DEFAULT;
}

// The ordering of rows: op and class first, then the shape.
auto order_key(const Key &k) {
    return std::make_tuple(k.op, k.dtype, k.math, k.layout, k.align, k.ndims, k.dims[0], k.dims[1], k.dims[2],
                           k.dims[3]);
}
bool row_less(const Row &a, const Row &b) { return order_key(a.key) < order_key(b.key); }
bool class_less(const Key &a, const Key &b) {
    return std::make_tuple(a.op, a.dtype, a.math, a.layout, a.align) <
           std::make_tuple(b.op, b.dtype, b.math, b.layout, b.align);
}

std::vector<std::string> split(const std::string &s, char sep) {
    std::vector<std::string> out;
    size_t start = 0;
    for (;;) {
        const size_t end = s.find(sep, start);
        out.push_back(s.substr(start, end == std::string::npos ? std::string::npos : end - start));
        if (end == std::string::npos) return out;
        start = end + 1;
    }
}

int word_index(const std::string &w, const char *const *words, int count) {
    for (int i = 0; i < count; ++i)
        if (w == words[i]) return i;
    return -1;
}

int dtype_of(const std::string &w) {
    for (int d : {int{GPK_F32}, int{GPK_F64}, int{GPK_I32}, int{GPK_I64}, int{GPK_F16}, int{GPK_BF16}, int{kGemmFp8},
                  int{kGemmFp8Blockscaled}, int{kGemmHalfF32}})
        if (w == dtype_word(d)) return d;
    return w == "-" ? -1 : -2;
}

// A positive count in decimal, no sign, no spaces.
bool parse_count(const std::string &s, int64_t *out) {
    if (s.empty() || s.size() > 18 || s.find_first_not_of("0123456789") != std::string::npos) return false;
    *out = std::strtoll(s.c_str(), nullptr, 10);
    return *out > 0;
}

bool parse_time(const std::string &s) {
    if (s.empty() || s.find_first_not_of("0123456789.eE+-") != std::string::npos) return false;
    char *end = nullptr;
    errno = 0;
    const double v = std::strtod(s.c_str(), &end);
    return errno == 0 && end == s.c_str() + s.size() && std::isfinite(v) && v > 0;
}

// The fields of a row, checked against what its op takes. Returns an empty string or
// what is wrong.
std::string parse_row(const std::vector<std::string> &f, RungIndex rung, void *user, Row *row) {
    if (f.size() != 7) return "a row has 7 fields (op, dtype, math, layout, align, shape, rungs), this line has " +
                              std::to_string(f.size());
    Key &k = row->key;
    k.op = word_index(f[0], kOpWords, kOpWordCount);
    if (k.op < 0) return "unknown op '" + f[0] + "' (gemm, gemm_batched, reduce, transpose or pi)";
    k.dtype = dtype_of(f[1]);
    const bool words = k.op == GPK_OP_REDUCE || k.op == GPK_OP_TRANSPOSE;
    const bool dtype_ok = k.op == GPK_OP_PI ? k.dtype == -1
                          : is_gemm(k.op)   ? (k.dtype == GPK_F32 || k.dtype == GPK_F64 || is_16bit(k.dtype) ||
                                             (k.op == GPK_OP_GEMM && is_gemm_ex_class(k.dtype)))
                                            : (words && k.dtype >= 0 && !is_gemm_ex_class(k.dtype));
    if (!dtype_ok) return "dtype '" + f[1] + "' is not one of " + f[0] + "'s";
    if (f[2] == math_word(GPK_MATH_TF32)) {
        if (!is_gemm(k.op) || k.dtype != GPK_F32) return "math 'tf32' is for f32 gemm and gemm_batched only";
        k.math = GPK_MATH_TF32;
    } else if (f[2] != math_word(GPK_MATH_DEFAULT)) {
        return "math '" + f[2] + "' is neither default nor tf32";
    }
    k.layout = word_index(f[3], kLayoutWords, 4);
    if (is_gemm(k.op) ? k.layout < 0 : f[3] != "-")
        return "layout '" + f[3] + "': " + f[0] + (is_gemm(k.op) ? " takes nn, nt, tn or tt" : " takes -");
    k.align = f[4] == "a16" ? kAligned : f[4] == "u" ? kUnaligned : f[4] == "-" ? kAlignNone : -1;
    if (k.op == GPK_OP_PI ? k.align != kAlignNone : (k.align != kAligned && k.align != kUnaligned))
        return "align '" + f[4] + "': " + f[0] + (k.op == GPK_OP_PI ? " takes -" : " takes a16 or u");
    const std::vector<std::string> dims = split(f[5], 'x');
    const int want = k.op == GPK_OP_GEMM ? 3 : k.op == GPK_OP_GEMM_BATCHED ? 4 : k.op == GPK_OP_TRANSPOSE ? 2 : 1;
    if (static_cast<int>(dims.size()) != want)
        return "shape '" + f[5] + "': " + f[0] + " has " + std::to_string(want) + " dimension(s), x-separated";
    k.ndims = want;
    for (int i = 0; i < want; ++i) {
        if (!parse_count(dims[i], &k.dims[i])) return "shape '" + f[5] + "': dimensions are counts from 1";
        row->log_dims[i] = std::log2(static_cast<double>(k.dims[i]));
    }
    if (f[6].empty()) return "no rungs listed";
    for (const std::string &entry : split(f[6], ',')) {
        const size_t colon = entry.find(':');
        const std::string name = entry.substr(0, colon);
        if (colon != std::string::npos && !parse_time(entry.substr(colon + 1)))
            return "rung '" + name + "': '" + entry.substr(colon + 1) + "' is not a time in microseconds";
        const int index = name.empty() ? -1 : rung(k.op, name.c_str(), user);
        if (index < 0) return "unknown rung '" + name + "' of " + f[0];
        if (std::find(row->rungs.begin(), row->rungs.end(), index) != row->rungs.end())
            return "rung '" + name + "' is listed twice";
        row->rungs.push_back(index);
    }
    return "";
}

// One header line "key<TAB>value". Returns an empty string or what is wrong.
std::string parse_header(const std::vector<std::string> &f, const DeviceKind *kind, Table *t, bool *seen) {
    if (f.size() == 7) return "unknown op '" + f[0] + "' (gemm, gemm_batched, reduce, transpose or pi)";
    if (f.size() != 2 || f[1].empty()) return "a header line is a key and a value, separated by a tab";
    static const char *const kKinds[] = {"device", "compute_capability", "sm_count"};
    static const char *const kInfo[] = {"driver", "runtime", "libgpk", "date", "timing", "grid"};
    const int which = word_index(f[0], kKinds, 3);
    if (which < 0) {
        if (word_index(f[0], kInfo, 6) < 0)
            return "unknown header key '" + f[0] +
                   "' (device, compute_capability, sm_count, driver, runtime, libgpk, date, timing, grid)";
        t->info.emplace_back(f[0], f[1]);
        return "";
    }
    if (seen[which]) return "'" + f[0] + "' given twice";
    seen[which] = true;
    std::string *field[] = {&t->device.name, &t->device.compute_capability, &t->device.sm_count};
    *field[which] = f[1];
    if (kind != nullptr) {
        const std::string *have[] = {&kind->name, &kind->compute_capability, &kind->sm_count};
        if (*have[which] != f[1])
            return "the table was measured on a GPU of " + f[0] + " '" + f[1] + "', and this context's is '" +
                   *have[which] + "': a table is for the device kind it was measured on";
    }
    return "";
}

}  // namespace

bool same_class(const Key &a, const Key &b) { return !class_less(a, b) && !class_less(b, a); }

const char *op_word(int op) { return op >= 0 && op < kOpWordCount ? kOpWords[op] : nullptr; }

const char *dtype_word(int dtype) {
    switch (dtype) {
        case GPK_F32: return "f32";
        case GPK_F64: return "f64";
        case GPK_I32: return "i32";
        case GPK_I64: return "i64";
        case GPK_F16: return "f16";
        case GPK_BF16: return "bf16";
        // gpk_gemm_ex's classes (ops.hpp): FP8 per-tensor, block-scaled, 16-bit to F32.
        case kGemmFp8: return "fp8";
        case kGemmFp8Blockscaled: return "fp8_block";
        case kGemmHalfF32: return "half_f32";
        default: return "-";
    }
}

const char *layout_word(int layout) { return layout >= 0 && layout < 4 ? kLayoutWords[layout] : "-"; }

const char *align_word(int align) { return align == kAligned ? "a16" : align == kUnaligned ? "u" : "-"; }

const char *math_word(int math) { return math == GPK_MATH_TF32 ? "tf32" : "default"; }

std::string class_text(const Key &key) {
    const char *op = op_word(key.op);
    return std::string(op != nullptr ? op : "-") + "\t" + dtype_word(key.dtype) + "\t" + math_word(key.math) + "\t" +
           layout_word(key.layout) + "\t" + align_word(key.align);
}

std::string shape_text(const Key &key) {
    std::string s;
    for (int i = 0; i < key.ndims; ++i) s += (i ? "x" : "") + std::to_string(key.dims[i]);
    return s;
}

Key key_of(const GemmArgs &a, int math_mode) {
    Key k;
    k.op = GPK_OP_GEMM;
    k.dtype = a.dtype;
    k.math = math_of(k.op, a.dtype, math_mode);
    k.layout = 2 * a.transa + a.transb;
    // Each operand in its own element size (gpk_gemm_ex's differ). With k == 0 A and B
    // are not read: C alone decides.
    const bool ab = a.k == 0 || (vectors(a.A, a.lda, a_size(a)) && vectors(a.B, a.ldb, b_size(a)));
    k.align = ab && vectors(a.C, a.ldc, c_size(a)) ? kAligned : kUnaligned;
    k.ndims = 3;
    k.dims[0] = dim(a.m), k.dims[1] = dim(a.n), k.dims[2] = dim(a.k);
    return k;
}

Key key_of(const GemmBatchedCall &c, int math_mode) {
    Key k;
    k.op = GPK_OP_GEMM_BATCHED;
    k.dtype = c.dtype;
    k.math = math_of(k.op, c.dtype, math_mode);
    // The column-major call, as gemm's key: a row-major one arrives as C^T = op(B)^T
    // op(A)^T (api.cpp), so it keys as the equivalent column-major call.
    const bool ta = c.transa == GPK_TRANS, tb = c.transb == GPK_TRANS;
    k.layout = 2 * ta + tb;
    const size_t es = dtype_size(c.dtype);
    const bool a = vectors(c.A, c.lda, es) && (c.batch_count == 1 || vectors(nullptr, c.stride_a, es));
    const bool b = vectors(c.B, c.ldb, es) && (c.batch_count == 1 || vectors(nullptr, c.stride_b, es));
    const bool cc = vectors(c.C, c.ldc, es) && (c.batch_count == 1 || vectors(nullptr, c.stride_c, es));
    k.align = (c.k == 0 || (a && b)) && cc ? kAligned : kUnaligned;
    k.ndims = 4;
    k.dims[0] = dim(c.m), k.dims[1] = dim(c.n), k.dims[2] = dim(c.k);
    k.dims[3] = dim(c.batch_count);
    return k;
}

Key key_of(const ReduceArgs &a) {
    Key k;
    k.op = GPK_OP_REDUCE;
    k.dtype = a.dtype;
    k.align = vectors(a.x, 0, 1) ? kAligned : kUnaligned;
    k.ndims = 1;
    k.dims[0] = dim(a.n);  // an empty SUM: the smallest shape
    return k;
}

Key key_of(const TransposeArgs &a) {
    Key k;
    k.op = GPK_OP_TRANSPOSE;
    k.dtype = a.dtype;
    k.align = vectors(a.A, a.lda, a.elem_size) && vectors(a.B, a.ldb, a.elem_size) ? kAligned : kUnaligned;
    k.ndims = 2;
    k.dims[0] = dim(a.rows), k.dims[1] = dim(a.cols);
    return k;
}

Key key_of(const PiArgs &a) {
    Key k;
    k.op = GPK_OP_PI;
    k.ndims = 1;
    k.dims[0] = a.count > 0 ? static_cast<int64_t>(std::min<uint64_t>(a.count, uint64_t{1} << 62)) : 1;
    return k;
}

bool parse(const std::string &text, const std::string &source, const DeviceKind *kind, RungIndex rung, void *user,
           Table *out, std::string *error) {
    Table t;
    bool seen[3] = {false, false, false};
    bool format = false;
    int number = 0, first_row = 0;
    const auto failed = [&](int line, const std::string &what) {
        *error = source + " line " + std::to_string(line) + ": " + what;
        return false;
    };
    size_t start = 0;
    while (start < text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        std::string line = text.substr(start, end - start);
        start = end + 1;
        ++number;
        if (line.size() > kMaxLine) return failed(number, "longer than " + std::to_string(kMaxLine) + " characters");
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty() || line[0] == '#') continue;
        if (line.find('\0') != std::string::npos) return failed(number, "a NUL byte: not a text file");
        const std::vector<std::string> f = split(line, '\t');
        if (!format) {
            if (f.size() != 2 || f[0] != "gpk-tuning")
                return failed(number, "not a libgpk tuning table (its first line is \"gpk-tuning<TAB>1\")");
            if (f[1] != "1") return failed(number, "format version '" + f[1] + "' (this libgpk reads 1)");
            format = true;
            continue;
        }
        if (word_index(f[0], kOpWords, kOpWordCount) < 0) {
            if (first_row > 0)
                return failed(number, f.size() == 7 ? "unknown op '" + f[0] + "'" : "a header line after the first row");
            const std::string what = parse_header(f, kind, &t, seen);
            if (!what.empty()) return failed(number, what);
            continue;
        }
        if (first_row == 0) {
            first_row = number;
            static const char *const kKinds[] = {"device", "compute_capability", "sm_count"};
            for (int i = 0; i < 3; ++i)
                if (!seen[i]) return failed(number, std::string("the header has no '") + kKinds[i] + "' line");
        }
        Row row;
        row.line = number;
        const std::string what = parse_row(f, rung, user, &row);
        if (!what.empty()) return failed(number, what);
        t.rows.push_back(std::move(row));
    }
    if (!format) return failed(number > 0 ? number : 1, "empty: not a libgpk tuning table");
    if (first_row == 0) {
        static const char *const kKinds[] = {"device", "compute_capability", "sm_count"};
        for (int i = 0; i < 3; ++i)
            if (!seen[i]) return failed(number, std::string("the header has no '") + kKinds[i] + "' line");
    }
    std::stable_sort(t.rows.begin(), t.rows.end(), row_less);
    for (size_t i = 1; i < t.rows.size(); ++i)
        if (!row_less(t.rows[i - 1], t.rows[i]))
            return failed(std::max(t.rows[i - 1].line, t.rows[i].line),
                          "the same point as line " + std::to_string(std::min(t.rows[i - 1].line, t.rows[i].line)));
    *out = std::move(t);
    return true;
}

bool merge(Table *into, const Table &from, std::string *error) {
    std::vector<Row> rows = into->rows;
    rows.insert(rows.end(), from.rows.begin(), from.rows.end());
    std::stable_sort(rows.begin(), rows.end(), row_less);
    for (size_t i = 1; i < rows.size(); ++i)
        if (!row_less(rows[i - 1], rows[i])) {
            *error = "the point " + std::string(op_word(rows[i].key.op)) + " " + shape_text(rows[i].key) +
                     " is in two files of the table";
            return false;
        }
    into->rows.swap(rows);
    return true;
}

const Row *nearest(const Table &table, const Key &key) {
    // The rows of the key's class are contiguous (sorted by class first).
    const auto first = std::lower_bound(table.rows.begin(), table.rows.end(), key,
                                        [](const Row &r, const Key &k) { return class_less(r.key, k); });
    double logs[kMaxDims] = {};
    for (int i = 0; i < key.ndims && i < kMaxDims; ++i) logs[i] = std::log2(static_cast<double>(key.dims[i]));
    // A batch's count weighs a sixteenth of a product's dimension: a factor of 16 in
    // the count is as far as a factor of 2 in m, n or k. The products' shape decides
    // which rung leads (it turns from one multiple of 4 to the next); the count, how
    // full the GPU is, and past a few hundred MiB per operand it changes little. With
    // a quarter, F32 40^3 products filling 1 GiB took 32^3's rung at 256 MiB (prefetch,
    // 0.69 of the best) over 40^3's.
    double weight[kMaxDims] = {1, 1, 1, key.op == GPK_OP_GEMM_BATCHED ? 1.0 / 16 : 1};
    const Row *best = nullptr;
    double best_d = 0;
    for (auto r = first; r != table.rows.end() && same_class(r->key, key); ++r) {
        if (r->key.ndims != key.ndims) continue;
        double d = 0;
        for (int i = 0; i < key.ndims; ++i) d += weight[i] * (logs[i] - r->log_dims[i]) * (logs[i] - r->log_dims[i]);
        // Strictly nearer only: of equally near rows the first, the smallest shape.
        if (best == nullptr || d < best_d) best = &*r, best_d = d;
    }
    return best;
}

}  // namespace gpk::tuning
