// The staging pipeline (gpk_set_staging, gpk_stage_trace). On the CUDA backend: gemm,
// transpose, reduce and the batched gemm on host arrays -- pageable, pinned, and mixed with device
// arrays -- through every shape of pipeline: one stream (nothing overlaps), several,
// tiny chunks (many of them), and a device cap a quarter of the operands' size that
// sends gemm out of core; each result against a reference computed here, and each
// call's trace checked against what the call had to move. Then a gemm much larger
// than its cap, with the device memory it took measured; a cap below one chunk; the
// buffers reused from call to call; validation mode, whose calls go through the
// pipeline too (each chunk checked). On the host backend: the
// settings are kept and unused, and the trace stays empty. (The argument rules of
// both functions are in test_errors.)
#include "../harness.hpp"

#include <algorithm>
#include <array>
#include <climits>
#include <type_traits>

namespace {

using namespace gpkt;

// ---- arrays in one kind of memory ---------------------------------------------------

enum class Mem { Pageable, Pinned, Device };

const char *mem_label(Mem m) { return m == Mem::Pageable ? "pageable" : m == Mem::Pinned ? "pinned" : "device"; }

// The test's copy of an array (`data`) and the memory a call gets it in: `data`
// itself (pageable), a cudaHostAlloc copy (pinned) or a cudaMalloc copy (device).
template <class T>
class Placed {
public:
    Placed(std::vector<T> values, Mem mem) : data(std::move(values)), mem_(mem) {}
    ~Placed() {
        if (pinned_ != nullptr) cudaFreeHost(pinned_);
    }
    Placed(const Placed &) = delete;
    Placed &operator=(const Placed &) = delete;

    // Puts `data` where the call reads it.
    bool place() {
        const size_t bytes = data.size() * sizeof(T);
        if (mem_ == Mem::Pinned) {
            if (pinned_ == nullptr) {
                error_ = cudaHostAlloc(&pinned_, std::max<size_t>(bytes, 1), cudaHostAllocDefault);
                if (error_ != cudaSuccess) {
                    pinned_ = nullptr;
                    return false;
                }
            }
            std::memcpy(pinned_, data.data(), bytes);
        } else if (mem_ == Mem::Device) {
            if (!device_.allocate(bytes) || !device_.upload(data.data())) {
                error_ = cudaErrorUnknown;
                return false;
            }
        }
        return true;
    }
    void *arg() { return mem_ == Mem::Pageable ? data.data() : mem_ == Mem::Pinned ? pinned_ : device_.get(); }
    // Brings what the call left back into `data`.
    bool collect() {
        const size_t bytes = data.size() * sizeof(T);
        if (mem_ == Mem::Pinned) std::memcpy(data.data(), pinned_, bytes);
        if (mem_ == Mem::Device && !device_.download(data.data())) return false;
        return true;
    }
    bool host() const { return mem_ != Mem::Device; }
    const char *error() const { return mem_ == Mem::Device ? device_.error() : cudaGetErrorString(error_); }

    std::vector<T> data;

private:
    Mem mem_;
    void *pinned_ = nullptr;
    DeviceArray device_;
    cudaError_t error_ = cudaSuccess;
};

// ---- settings -----------------------------------------------------------------------

struct Settings {
    const char *name;
    int streams;
    size_t chunk_bytes;
    bool quarter_cap;  // device_bytes: a quarter of the call's operands (at least `floor`)
};

const Settings kSettings[] = {
    {"streams=1", 1, 0, false},
    {"streams=2 chunk=4KiB", 2, 4096, false},
    {"streams=4 chunk=1KiB", 4, 1024, false},
    {"streams=3 chunk=16KiB cap=1/4", 3, 16384, true},
};

bool apply(Case &c, gpk_context *ctx, const Settings &s, size_t operand_bytes, size_t floor, size_t *cap) {
    *cap = s.quarter_cap ? std::max(operand_bytes / 4, floor) : 0;
    return c.expect(gpk_set_staging(ctx, s.streams, s.chunk_bytes, *cap), GPK_SUCCESS, "gpk_set_staging");
}

// ---- the trace ----------------------------------------------------------------------

std::vector<gpk_stage_event> trace_of(Case &c, gpk_context *ctx) {
    int64_t count = -1;
    if (!c.expect(gpk_stage_trace(ctx, nullptr, 0, &count), GPK_SUCCESS, "gpk_stage_trace(NULL, 0)")) return {};
    if (count < 0) {
        c.fail("gpk_stage_trace wrote count %" PRId64, count);
        return {};
    }
    std::vector<gpk_stage_event> events(static_cast<size_t>(count));
    int64_t again = -1;
    if (count > 0 && !c.expect(gpk_stage_trace(ctx, events.data(), count, &again), GPK_SUCCESS, "gpk_stage_trace"))
        return {};
    if (count > 0 && again != count) c.fail("gpk_stage_trace counted %" PRId64 ", then %" PRId64, count, again);
    return events;
}

// What a call had to move: bytes copied in once, bytes copied in once per block of
// gemm's resident operand (A's panels; exactly once when `one_block`), bytes copied out.
struct Moved {
    uint64_t in_once = 0, in_per_block = 0, out = 0;
    bool one_block = true;
};

struct TraceFigures {
    int64_t chunks = 0, blocks = 0;
    double span_ms = 0, copy_ms = 0, kernel_ms = 0, overlap_ms = 0;  // overlap: copies during other streams' kernels
};

// Checks the trace of the call just made: kinds, streams, chunks, times and bytes.
TraceFigures check_trace(Case &c, gpk_context *ctx, int streams, const Moved &want) {
    TraceFigures f;
    const std::vector<gpk_stage_event> ev = trace_of(c, ctx);
    if (ev.empty()) {
        c.fail("a call on host arrays left no trace");
        return f;
    }
    constexpr double kSlack = 2e-3;  // ms: CUDA events resolve about half a microsecond
    uint64_t in = 0, out = 0;
    int64_t last_chunk = -1;
    for (const gpk_stage_event &e : ev) {
        if (e.kind != GPK_STAGE_COPY_IN && e.kind != GPK_STAGE_COMPUTE && e.kind != GPK_STAGE_COPY_OUT)
            return c.fail("event kind %d", e.kind), f;
        if (e.stream < 0 || e.stream >= streams) return c.fail("event on stream %d of %d", e.stream, streams), f;
        if (e.chunk < 0) return c.fail("event of chunk %" PRId64, e.chunk), f;
        if (!(e.start_ms >= -kSlack && e.end_ms >= e.start_ms - kSlack))
            return c.fail("event from %.6f to %.6f ms", e.start_ms, e.end_ms), f;
        if ((e.kind == GPK_STAGE_COMPUTE) != (e.bytes == 0))
            return c.fail("event of kind %d moved %" PRIu64 " bytes", e.kind, e.bytes), f;
        (e.kind == GPK_STAGE_COPY_IN ? in : out) += e.bytes;
        last_chunk = std::max(last_chunk, e.chunk);
        f.span_ms = std::max(f.span_ms, e.end_ms);
        (e.kind == GPK_STAGE_COMPUTE ? f.kernel_ms : f.copy_ms) += e.end_ms - e.start_ms;
    }
    f.chunks = last_chunk + 1;
    // Every chunk: one kernel; its copy out on the kernel's stream, its copies in too
    // (or on stream 0: gemm's resident block, which belongs to a block's first chunk).
    std::vector<int> kernel_stream(static_cast<size_t>(f.chunks), -1), copies_out(static_cast<size_t>(f.chunks), 0);
    for (const gpk_stage_event &e : ev)
        if (e.kind == GPK_STAGE_COMPUTE) {
            int &s = kernel_stream[static_cast<size_t>(e.chunk)];
            if (s != -1) return c.fail("chunk %" PRId64 " has two kernels", e.chunk), f;
            s = e.stream;
        }
    for (int64_t k = 0; k < f.chunks; ++k)
        if (kernel_stream[static_cast<size_t>(k)] < 0) return c.fail("chunk %" PRId64 " has no kernel", k), f;
    for (const gpk_stage_event &e : ev) {
        const int s = kernel_stream[static_cast<size_t>(e.chunk)];
        if (e.kind == GPK_STAGE_COPY_OUT && (e.stream != s || ++copies_out[static_cast<size_t>(e.chunk)] > 1))
            return c.fail("chunk %" PRId64 ": copy out on stream %d, kernel on %d, or twice", e.chunk, e.stream, s), f;
        if (e.kind == GPK_STAGE_COPY_IN && e.stream != s && e.stream != 0)
            return c.fail("chunk %" PRId64 ": copy in on stream %d, kernel on %d", e.chunk, e.stream, s), f;
    }
    // Work on one stream runs in issue order: its events do not overlap.
    for (int s = 0; s < streams; ++s) {
        double end = -1e300;
        for (const gpk_stage_event &e : ev) {
            if (e.stream != s) continue;
            if (e.start_ms < end - kSlack)
                return c.fail("stream %d: an event starts at %.6f ms before the previous ends (%.6f)", s, e.start_ms,
                              end), f;
            end = e.end_ms;
        }
    }
    if (out != want.out) c.fail("copies out moved %" PRIu64 " bytes, the call %" PRIu64, out, want.out);
    if (want.in_per_block == 0) {
        if (in != want.in_once) c.fail("copies in moved %" PRIu64 " bytes, the call %" PRIu64, in, want.in_once);
        f.blocks = 1;
    } else {
        const uint64_t rest = in - want.in_once;
        f.blocks = static_cast<int64_t>(rest / want.in_per_block);
        if (in < want.in_once + want.in_per_block || rest % want.in_per_block != 0 || (want.one_block && f.blocks != 1))
            c.fail("copies in moved %" PRIu64 " bytes: not %" PRIu64 " + %s%" PRIu64, in, want.in_once,
                   want.one_block ? "" : "a multiple of ", want.in_per_block);
    }
    if (ev.size() <= 4000) {
        for (const gpk_stage_event &a : ev) {
            if (a.kind == GPK_STAGE_COMPUTE) continue;
            for (const gpk_stage_event &k : ev)
                if (k.kind == GPK_STAGE_COMPUTE && k.stream != a.stream)
                    f.overlap_ms += std::max(0.0, std::min(a.end_ms, k.end_ms) - std::max(a.start_ms, k.start_ms));
        }
    }
    return f;
}

void print_figures(const char *what, const TraceFigures &f) {
    std::printf("%s: %" PRId64 " chunks, %" PRId64 " block(s), %.3f ms on the GPU, copies %.3f ms, kernels %.3f ms, "
                "copies during other streams' kernels %.3f ms\n",
                what, f.chunks, f.blocks, f.span_ms, f.copy_ms, f.kernel_ms, f.overlap_ms);
}

// ---- gemm -----------------------------------------------------------------------------

struct GemmCase {
    int dtype, layout, transa, transb;
    int64_t m, n, k, pad;
    double alpha, beta;
    Mem ma, mb, mc;
};

struct GemmShapes {
    Shape a, b, c;
};

GemmShapes gemm_shapes(const GemmCase &g) {
    const bool col = g.layout == GPK_COL_MAJOR, ta = g.transa == GPK_TRANS, tb = g.transb == GPK_TRANS;
    GemmShapes s;
    s.a = Shape{ta ? g.k : g.m, ta ? g.m : g.k, 0, col};
    s.b = Shape{tb ? g.n : g.k, tb ? g.k : g.n, 0, col};
    s.c = Shape{g.m, g.n, 0, col};
    s.a.ld = at_least_one(s.a.inner()) + g.pad;
    s.b.ld = at_least_one(s.b.inner()) + 2 * g.pad;
    s.c.ld = at_least_one(s.c.inner()) + g.pad;
    return s;
}

std::string gemm_name(const GemmCase &g, const Settings &st) {
    return format("gemm %s %s %c%c m=%" PRId64 " n=%" PRId64 " k=%" PRId64 " pad=%" PRId64 " beta=%g A=%s B=%s C=%s %s",
                  dtype_name(g.dtype), layout_name(g.layout), g.transa == GPK_TRANS ? 'T' : 'N',
                  g.transb == GPK_TRANS ? 'T' : 'N', g.m, g.n, g.k, g.pad, g.beta, mem_label(g.ma), mem_label(g.mb),
                  mem_label(g.mc), st.name);
}

template <class T>
std::vector<T> matrix(const Shape &s, uint64_t seed, bool nan_elements) {
    Rng rng(seed);
    const T nan = std::numeric_limits<T>::quiet_NaN();
    std::vector<T> v(std::max<size_t>(s.count(), 1), poison<T>());  // padding: a bit pattern to compare
    for (int64_t r = 0; r < s.rows; ++r)
        for (int64_t c = 0; c < s.cols; ++c) v[s.at(r, c)] = nan_elements ? nan : static_cast<T>(rng.signed_unit());
    return v;
}

// Checks C against the reference at the rows and columns given (all of them for small
// cases), and that every element is finite and the padding untouched.
template <class T>
void check_gemm(Case &c, const GemmCase &g, const GemmShapes &s, const std::vector<T> &a, const std::vector<T> &b,
                const std::vector<T> &c0, const std::vector<T> &got, bool sample) {
    const bool ta = g.transa == GPK_TRANS, tb = g.transb == GPK_TRANS;
    const long double alpha = static_cast<T>(g.alpha), beta = static_cast<T>(g.beta);
    const long double u = std::numeric_limits<T>::epsilon() / 2;
    auto picks = [sample](int64_t n) {
        std::vector<int64_t> v;
        const int64_t step = sample && n > 48 ? n / 37 : 1;
        for (int64_t i = 0; i < n; i += step) v.push_back(i);
        if (v.back() != n - 1) v.push_back(n - 1);
        return v;
    };
    int64_t bad = 0;
    for (int64_t j : picks(g.n))
        for (int64_t i : picks(g.m)) {
            long double sum = 0, abs_sum = 0;
            for (int64_t l = 0; l < g.k; ++l) {
                const long double p = static_cast<long double>(a[ta ? s.a.at(l, i) : s.a.at(i, l)]) *
                                      static_cast<long double>(b[tb ? s.b.at(j, l) : s.b.at(l, j)]);
                sum += p, abs_sum += std::fabs(p);
            }
            const long double cv = beta != 0 ? static_cast<long double>(c0[s.c.at(i, j)]) : 0.0L;
            const long double want = alpha * sum + beta * cv;
            const long double bound = 4 * u * (g.k + 2) * (std::fabs(alpha) * abs_sum + std::fabs(beta * cv)) +
                                      std::numeric_limits<T>::min();
            const T v = got[s.c.at(i, j)];
            if (std::isfinite(static_cast<double>(v)) && std::fabs(static_cast<long double>(v) - want) <= bound) continue;
            if (bad++ == 0)
                c.fail("C(%" PRId64 ", %" PRId64 ") = %.17g, expected %.17Lg (bound %.3Lg)", i, j, static_cast<double>(v),
                       want, bound);
        }
    if (bad > 1) c.fail("%" PRId64 " checked elements of C are wrong", bad);
    for (size_t idx = 0; idx < s.c.count(); ++idx) {
        if (s.c.is_padding(idx)) {
            if (!same_bits(got[idx], c0[idx])) return c.fail("C padding at offset %zu was written", idx);
        } else if (!std::isfinite(static_cast<double>(got[idx]))) {
            return c.fail("C at offset %zu is %g: an element left unwritten, or NaN leaked", idx,
                          static_cast<double>(got[idx]));
        }
    }
}

template <class T>
void gemm_case(Suite &suite, const GemmCase &g, const Settings &st, bool sample) {
    Case c(suite, gemm_name(g, st));
    gpk_context *ctx = suite.ctx();
    const GemmShapes s = gemm_shapes(g);
    const uint64_t seed = seed_of({g.dtype, g.layout, g.transa, g.transb, g.m, g.n, g.k, g.pad});
    Placed<T> a(matrix<T>(s.a, seed, false), g.ma), b(matrix<T>(s.b, seed + 1, false), g.mb),
        cm(matrix<T>(s.c, seed + 2, g.beta == 0.0), g.mc);  // beta == 0: C is NaN, which must not leak
    const std::vector<T> a0 = a.data, b0 = b.data, c0 = cm.data;
    const size_t es = sizeof(T);
    const uint64_t bytes_a = static_cast<uint64_t>(g.m * g.k) * es, bytes_b = static_cast<uint64_t>(g.k * g.n) * es,
                   bytes_c = static_cast<uint64_t>(g.m * g.n) * es;
    size_t cap = 0;
    if (!apply(c, ctx, st, bytes_a + bytes_b + bytes_c, size_t{128} << 10, &cap)) return;
    if (!a.place() || !b.place() || !cm.place()) return c.fail("placing the arrays: %s", a.error());
    const gpk_status status = gpk_gemm(ctx, g.dtype, g.layout, g.transa, g.transb, g.m, g.n, g.k, g.alpha, a.arg(),
                                       s.a.ld, b.arg(), s.b.ld, g.beta, cm.arg(), s.c.ld);
    if (!c.expect(status, GPK_SUCCESS, "gpk_gemm")) return;
    if (!suite.sync(c)) return;
    if (!cm.collect()) return c.fail("copying C back: %s", cm.error());
    if (std::memcmp(a.data.data(), a0.data(), a0.size() * sizeof(T)) != 0 ||
        std::memcmp(b.data.data(), b0.data(), b0.size() * sizeof(T)) != 0)
        c.fail("an input was modified");
    check_gemm(c, g, s, a0, b0, c0, cm.data, sample);

    // The caller's B is resident and A streams, once per block of B.
    Moved want;
    want.in_once = (b.host() ? bytes_b : 0) + (cm.host() && g.beta != 0.0 ? bytes_c : 0);
    want.in_per_block = a.host() ? bytes_a : 0;
    want.one_block = cap == 0;
    want.out = cm.host() ? bytes_c : 0;
    const TraceFigures f = check_trace(c, ctx, st.streams, want);
    const uint64_t streamed = (a.host() ? bytes_a : 0) + (cm.host() ? bytes_c : 0);
    if (st.chunk_bytes != 0 && st.chunk_bytes * 4 < streamed && f.chunks < 3)
        c.fail("chunk_bytes %zu made %" PRId64 " chunks of %" PRIu64 " bytes", st.chunk_bytes, f.chunks, streamed);
}

void gemm_suite(Suite &suite) {
    struct Size3 {
        int64_t m, n, k;
        bool sample;
    };
    const Size3 sizes[] = {{1, 1, 1, false},      {17, 1, 33, false},    {1, 17, 17, false},
                           {1000, 17, 65, false}, {17, 1000, 33, false}, {257, 300, 129, false},
                           {4097, 33, 65, true},  {65, 4097, 33, true},  {33, 65, 1025, false}};
    const std::array<Mem, 3> mems[] = {
        {Mem::Pageable, Mem::Pageable, Mem::Pageable}, {Mem::Pinned, Mem::Pinned, Mem::Pinned},
        {Mem::Pinned, Mem::Pageable, Mem::Pageable},   {Mem::Pageable, Mem::Pinned, Mem::Pinned},
        {Mem::Device, Mem::Pageable, Mem::Pinned},     {Mem::Pageable, Mem::Device, Mem::Pageable},
        {Mem::Pinned, Mem::Pageable, Mem::Device},     {Mem::Pageable, Mem::Pageable, Mem::Device},
        {Mem::Pageable, Mem::Pinned, Mem::Pageable}};
    uint64_t turn = 0;
    for (const Size3 &z : sizes)
        for (int layout : {GPK_COL_MAJOR, GPK_ROW_MAJOR})
            for (const Settings &st : kSettings) {
                const std::array<Mem, 3> &mem = mems[turn % std::size(mems)];
                // (turn + turn / 4) % 2: each setting meets both dtypes.
                GemmCase g{(turn + turn / 4) % 2 ? GPK_F64 : GPK_F32,
                           layout,
                           (turn / 2) % 2 ? GPK_TRANS : GPK_NO_TRANS,
                           (turn / 4) % 2 ? GPK_TRANS : GPK_NO_TRANS,
                           z.m,
                           z.n,
                           z.k,
                           (turn / 3) % 2 ? 3 : 0,
                           1.25,
                           turn % 3 == 0 ? 0.0 : -0.5,
                           mem[0],
                           mem[1],
                           mem[2]};
                if (g.dtype == GPK_F32)
                    gemm_case<float>(suite, g, st, z.sample);
                else
                    gemm_case<double>(suite, g, st, z.sample);
                ++turn;
            }
}

// ---- transpose --------------------------------------------------------------------------

template <class T>
void transpose_case(Suite &suite, int layout, int64_t rows, int64_t cols, int64_t pad, Mem ma, Mem mb,
                    const Settings &st) {
    Case c(suite, format("transpose %zu-byte %s rows=%" PRId64 " cols=%" PRId64 " pad=%" PRId64 " A=%s B=%s %s",
                         sizeof(T), layout_name(layout), rows, cols, pad, mem_label(ma), mem_label(mb), st.name));
    gpk_context *ctx = suite.ctx();
    const bool col = layout == GPK_COL_MAJOR;
    Shape sa{rows, cols, 0, col}, sb{cols, rows, 0, col};
    sa.ld = sa.inner() + pad;
    sb.ld = sb.inner() + 2 * pad;
    std::vector<T> av(sa.count(), poison<T>());
    Rng rng(seed_of({layout, rows, cols, pad, static_cast<int64_t>(sizeof(T))}));
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t q = 0; q < cols; ++q) {
            const uint64_t bits = rng.next();
            std::memcpy(&av[sa.at(r, q)], &bits, sizeof(T));  // any bits: NaN payloads must survive too
        }
    Placed<T> a(av, ma), b(std::vector<T>(sb.count(), poison<T>()), mb);
    const std::vector<T> b0 = b.data;
    const uint64_t bytes = static_cast<uint64_t>(rows * cols) * sizeof(T);
    size_t cap = 0;
    if (!apply(c, ctx, st, 2 * bytes, size_t{64} << 10, &cap)) return;
    if (!a.place() || !b.place()) return c.fail("placing the arrays: %s", a.error());
    const int dtype = sizeof(T) == 4 ? GPK_I32 : GPK_I64;
    if (!c.expect(gpk_transpose(ctx, dtype, layout, rows, cols, a.arg(), sa.ld, b.arg(), sb.ld), GPK_SUCCESS,
                  "gpk_transpose"))
        return;
    if (!suite.sync(c)) return;
    if (!b.collect()) return c.fail("copying B back: %s", b.error());
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t q = 0; q < cols; ++q)
            if (!same_bits(b.data[sb.at(q, r)], av[sa.at(r, q)]))
                return c.fail("B(%" PRId64 ", %" PRId64 ") is not A(%" PRId64 ", %" PRId64 ")", q, r, r, q);
    for (size_t i = 0; i < sb.count(); ++i)
        if (sb.is_padding(i) && !same_bits(b.data[i], b0[i])) return c.fail("B padding at offset %zu was written", i);
    Moved want;
    want.in_once = a.host() ? bytes : 0;
    want.out = b.host() ? bytes : 0;
    check_trace(c, ctx, st.streams, want);
}

void transpose_suite(Suite &suite) {
    struct Size2 {
        int64_t rows, cols;
    };
    const Size2 sizes[] = {{1, 17}, {17, 1}, {1000, 17}, {33, 4097}, {4097, 33}, {300, 257}};
    const std::pair<Mem, Mem> mems[] = {{Mem::Pageable, Mem::Pageable}, {Mem::Pinned, Mem::Pinned},
                                        {Mem::Pageable, Mem::Pinned},   {Mem::Pinned, Mem::Pageable},
                                        {Mem::Device, Mem::Pageable},   {Mem::Pageable, Mem::Device}};
    uint64_t turn = 0;
    for (const Size2 &z : sizes)
        for (int layout : {GPK_COL_MAJOR, GPK_ROW_MAJOR})
            for (const Settings &st : kSettings) {
                const auto &mem = mems[turn % std::size(mems)];
                const int64_t pad = (turn / 2) % 2 ? 5 : 0;
                if ((turn + turn / 4) % 2)
                    transpose_case<int64_t>(suite, layout, z.rows, z.cols, pad, mem.first, mem.second, st);
                else
                    transpose_case<int32_t>(suite, layout, z.rows, z.cols, pad, mem.first, mem.second, st);
                ++turn;
            }
}

// ---- reduce ------------------------------------------------------------------------------

template <class T>
void reduce_case(Suite &suite, int dtype, int op, int64_t n, bool with_nan, Mem mx, bool device_result,
                 const Settings &st) {
    static const char *const ops[] = {"SUM", "MIN", "MAX"};
    Case c(suite, format("reduce %s %s n=%" PRId64 "%s x=%s result=%s %s", dtype_name(dtype), ops[op], n,
                         with_nan ? " NaN" : "", mem_label(mx), device_result ? "device" : "host", st.name));
    gpk_context *ctx = suite.ctx();
    Rng rng(seed_of({dtype, op, n}));
    std::vector<T> xv(static_cast<size_t>(n));
    for (T &v : xv) {
        if constexpr (std::is_floating_point_v<T>)
            v = static_cast<T>(rng.signed_unit() * 100);
        else
            v = static_cast<T>(rng.next());  // sums wrap modulo 2^64
    }
    if (with_nan) {
        if constexpr (std::is_floating_point_v<T>) xv[static_cast<size_t>(n / 2)] = std::numeric_limits<T>::quiet_NaN();
    }
    Placed<T> x(xv, mx);
    size_t cap = 0;
    if (!apply(c, ctx, st, static_cast<size_t>(n) * sizeof(T), size_t{2} << 20, &cap)) return;
    if (!x.place()) return c.fail("placing x: %s", x.error());
    using R = std::conditional_t<std::is_floating_point_v<T>, T, int64_t>;
    DeviceArray dr(sizeof(R));
    R got[2] = {};
    for (R &result : got) {
        void *out = device_result ? dr.get() : &result;
        if (device_result && !dr.ok()) return c.fail("cudaMalloc of the result");
        if (!c.expect(gpk_reduce(ctx, dtype, op, x.arg(), n, out), GPK_SUCCESS, "gpk_reduce")) return;
        if (device_result && !(suite.sync(c) && dr.download(&result))) return c.fail("copying the result back");
    }
    if (!same_bits(got[0], got[1])) c.fail("two runs differ: %.17g and %.17g", double(got[0]), double(got[1]));
    if constexpr (std::is_floating_point_v<T>) {
        long double want = op == GPK_SUM ? 0 : xv[0], abs_sum = 0;
        bool nan = false;
        for (T v : xv) {
            nan = nan || std::isnan(v);
            if (op == GPK_SUM) want += v, abs_sum += std::fabs(static_cast<long double>(v));
            if (op == GPK_MIN && v < want) want = v;
            if (op == GPK_MAX && v > want) want = v;
        }
        if (nan) {
            if (!std::isnan(got[0])) c.fail("result %.17g, expected NaN", double(got[0]));
        } else if (op == GPK_SUM) {
            // Trees over the pieces and over the partials: a level or two deeper than one tree.
            const long double u = std::numeric_limits<T>::epsilon() / 2;
            const long double bound = 4 * u * (std::log2(static_cast<long double>(n) + 1) + 4) * abs_sum;
            if (!(std::fabs(got[0] - want) <= bound))
                c.fail("sum %.17g, expected %.17Lg (bound %.3Lg)", double(got[0]), want, bound);
        } else if (static_cast<long double>(got[0]) != want) {
            c.fail("result %.17g, expected %.17Lg", double(got[0]), want);
        }
    } else {
        uint64_t sum = 0;
        int64_t lo = xv[0], hi = xv[0];
        for (T v : xv) sum += static_cast<uint64_t>(static_cast<int64_t>(v)), lo = std::min<int64_t>(lo, v),
                       hi = std::max<int64_t>(hi, v);
        const int64_t want = op == GPK_SUM ? static_cast<int64_t>(sum) : op == GPK_MIN ? lo : hi;
        if (got[0] != want) c.fail("result %" PRId64 ", expected %" PRId64, int64_t(got[0]), want);
    }
    Moved m;
    m.in_once = static_cast<uint64_t>(n) * sizeof(T);
    check_trace(c, ctx, st.streams, m);
}

void reduce_suite(Suite &suite) {
    uint64_t turn = 0;
    for (int64_t n : {int64_t{1}, int64_t{17}, int64_t{1000}, int64_t{4097}, (int64_t{1} << 20) + 3})
        for (const Settings &st : kSettings)
            for (int op : {GPK_SUM, GPK_MIN, GPK_MAX}) {
                const Mem mx = turn % 2 ? Mem::Pinned : Mem::Pageable;
                const bool device_result = turn % 5 == 0;
                reduce_case<float>(suite, GPK_F32, op, n, false, mx, device_result, st);
                reduce_case<double>(suite, GPK_F64, op, n, false, mx, !device_result, st);
                reduce_case<int32_t>(suite, GPK_I32, op, n, false, mx, device_result, st);
                reduce_case<int64_t>(suite, GPK_I64, op, n, false, mx, !device_result, st);
                if (n == 4097) {
                    reduce_case<float>(suite, GPK_F32, op, n, true, mx, false, st);
                    reduce_case<double>(suite, GPK_F64, op, n, true, mx, true, st);
                }
                ++turn;
            }
}

// ---- validation mode --------------------------------------------------------------------

// Validation mode takes host arrays through the pipeline like any other call: each
// chunk is also computed by the checker and compared. The cases above, on a validating
// context: each must pass the check, leave the variant's (right) result, and leave a
// trace of its chunks (one kernel step each, copies adding up to the host data moved).
const Settings kValidated[] = {
    {"validated streams=1", 1, 0, false},
    {"validated streams=2 chunk=4KiB", 2, 4096, false},
    {"validated streams=4 chunk=1KiB", 4, 1024, false},
    {"validated streams=3 chunk=16KiB cap=1/4", 3, 16384, true},
};

void validation_suite(Suite &suite) {
    gpk_context *ctx = suite.ctx();
    auto choose = [&](const char *name) {
        Case c(suite, format("validation: gemm variant %s", name));
        return suite.select(c, GPK_OP_GEMM, name);
    };
    {
        Case c(suite, "validation mode for the pipeline's cases");
        if (!c.expect(gpk_set_validation(ctx, 1), GPK_SUCCESS, "gpk_set_validation(1)")) return;
    }
    // "auto" (the vendor's rung, checked by the reference rung) and the reference rung
    // (checked by the vendor's): both roles of the checker.
    for (const char *gemm_variant : {"auto", "naive"}) {
        if (!choose(gemm_variant)) continue;
        for (const Settings &st : kValidated) {
            gemm_case<float>(suite, GemmCase{GPK_F32, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, 257, 300, 129, 0, 1.25,
                                             -0.5, Mem::Pageable, Mem::Pageable, Mem::Pageable},
                             st, false);
            gemm_case<double>(suite, GemmCase{GPK_F64, GPK_ROW_MAJOR, GPK_TRANS, GPK_NO_TRANS, 1000, 17, 65, 3, 1.25,
                                              0.0, Mem::Pinned, Mem::Pinned, Mem::Pinned},
                              st, false);
            gemm_case<float>(suite, GemmCase{GPK_F32, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_TRANS, 65, 1000, 33, 0, 1.25, 0.0,
                                             Mem::Device, Mem::Pageable, Mem::Pinned},
                             st, false);
            gemm_case<double>(suite, GemmCase{GPK_F64, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, 300, 200, 100, 0, 1.0,
                                              0.5, Mem::Pageable, Mem::Pinned, Mem::Device},
                              st, false);
        }
    }
    choose("auto");
    for (const Settings &st : kValidated) {
        transpose_case<int32_t>(suite, GPK_COL_MAJOR, 300, 257, 5, Mem::Pageable, Mem::Pageable, st);
        transpose_case<int64_t>(suite, GPK_ROW_MAJOR, 33, 4097, 0, Mem::Pinned, Mem::Device, st);
        transpose_case<int32_t>(suite, GPK_COL_MAJOR, 1000, 17, 0, Mem::Device, Mem::Pinned, st);
        for (int op : {GPK_SUM, GPK_MIN, GPK_MAX}) {
            reduce_case<float>(suite, GPK_F32, op, 4097, false, Mem::Pageable, false, st);
            reduce_case<double>(suite, GPK_F64, op, (int64_t{1} << 20) + 3, false, Mem::Pinned, true, st);
            reduce_case<int32_t>(suite, GPK_I32, op, 1000, false, Mem::Pinned, false, st);
        }
        reduce_case<float>(suite, GPK_F32, GPK_SUM, 4097, true, Mem::Pageable, false, st);
    }
    {
        // The checker's tiles fit beside the chunks: validation cuts the call as it
        // would be cut without it.
        Case c(suite, "validation keeps the chunks of the call without it");
        constexpr int64_t m = 500, n = 300, k = 70;
        std::vector<float> a(m * k, 0.5f), b(k * n, 0.25f), cm(m * n, 0.0f);
        int64_t chunks[2] = {-1, -1};
        if (!c.expect(gpk_set_staging(ctx, 3, 16 << 10, 0), GPK_SUCCESS, "gpk_set_staging")) return;
        for (int validate = 0; validate < 2; ++validate) {
            if (!c.expect(gpk_set_validation(ctx, validate), GPK_SUCCESS, "gpk_set_validation") ||
                !c.expect(gpk_gemm(ctx, GPK_F32, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, m, n, k, 1.0, a.data(), m,
                                   b.data(), k, 0.0, cm.data(), m),
                          GPK_SUCCESS, "gpk_gemm"))
                break;
            for (float v : cm)
                if (v != k * 0.125f) {
                    c.fail("C element %g, expected %g", v, k * 0.125);
                    break;
                }
            Moved want;
            want.in_once = static_cast<uint64_t>(k * n) * 4;
            want.in_per_block = static_cast<uint64_t>(m * k) * 4;
            want.out = static_cast<uint64_t>(m * n) * 4;
            chunks[validate] = check_trace(c, ctx, 3, want).chunks;
        }
        if (chunks[0] < 3 || chunks[1] != chunks[0])
            c.fail("%" PRId64 " chunks without validation, %" PRId64 " with it", chunks[0], chunks[1]);
    }
    gpk_set_validation(ctx, 0);
    gpk_set_staging(ctx, 4, 0, 0);
}

// ---- beyond the cap, and the pipeline's own memory --------------------------------------

size_t free_device_memory() {
    size_t free_bytes = 0, total = 0;
    cudaMemGetInfo(&free_bytes, &total);
    return free_bytes;
}

// A gemm whose B is twice the cap: B in blocks, A once per block. On a context of its
// own with the first rung (which allocates nothing), so that what the GPU lost over
// the call is the pipeline's buffers; they stay for the next call.
void out_of_core(Suite &suite) {
    constexpr int64_t m = 2048, n = 16384, k = 256;
    const size_t bytes_b = size_t{k} * n * sizeof(float), cap = bytes_b / 2;
    const GemmCase g{GPK_F32, GPK_ROW_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, m, n, k, 0, 1.0, 0.0,
                     Mem::Pinned, Mem::Pageable, Mem::Pageable};
    const GemmShapes s = gemm_shapes(g);
    Placed<float> a(matrix<float>(s.a, 11, false), g.ma), b(matrix<float>(s.b, 12, false), g.mb),
        cm(matrix<float>(s.c, 13, true), g.mc);
    const std::vector<float> c0 = cm.data;
    for (const char *variant : {"first rung", "auto"}) {
        Case c(suite, format("gemm out of core: F32 row-major %" PRId64 "x%" PRId64 "x%" PRId64
                             ", device_bytes %zu = B/2, variant %s",
                             m, n, k, cap, variant));
        gpk_context *ctx = suite.open(GPK_BACKEND_CUDA);
        const bool first = std::strcmp(variant, "auto") != 0;
        const char *name = first ? gpk_variant_name(ctx, GPK_OP_GEMM, 1) : "auto";
        cm.data = c0;
        if (!c.expect(gpk_set_variant(ctx, GPK_OP_GEMM, name), GPK_SUCCESS, "gpk_set_variant") ||
            !c.expect(gpk_set_staging(ctx, 4, 0, cap), GPK_SUCCESS, "gpk_set_staging") ||
            !a.place() || !b.place() || !cm.place()) {
            c.fail("setting up: %s", gpk_last_error(ctx));
            gpk_destroy(ctx);
            continue;
        }
        const size_t before = free_device_memory();
        const gpk_status st = gpk_gemm(ctx, g.dtype, g.layout, g.transa, g.transb, m, n, k, g.alpha, a.arg(), s.a.ld,
                                       b.arg(), s.b.ld, g.beta, cm.arg(), s.c.ld);
        const size_t after = free_device_memory();
        if (c.expect(st, GPK_SUCCESS, "gpk_gemm") && cm.collect()) {
            check_gemm(c, g, s, a.data, b.data, c0, cm.data, true);
            Moved want;
            want.in_once = bytes_b;
            want.in_per_block = size_t{m} * k * sizeof(float);
            want.one_block = false;
            want.out = size_t{m} * n * sizeof(float);
            const TraceFigures f = check_trace(c, ctx, 4, want);
            print_figures(c.name().c_str(), f);
            if (f.blocks < 2) c.fail("B was not cut into blocks: A was copied %" PRId64 " time(s)", f.blocks);
            if (f.chunks <= 4) c.fail("%" PRId64 " chunks for 4 streams", f.chunks);
            if (first) {
                // cudaMalloc hands out device memory in pages of up to 2 MiB: one page of
                // slack for each of the pipeline's buffers (one per stream, one shared).
                const size_t used = before > after ? before - after : 0, slack = size_t{5} * (2 << 20);
                std::printf("device memory taken by the call: %.2f MiB (cap %.2f MiB; B alone is %.2f MiB, all "
                            "operands %.2f MiB)\n",
                            used / 1048576.0, cap / 1048576.0, bytes_b / 1048576.0,
                            (bytes_b + (size_t{m} * k + size_t{m} * n) * sizeof(float)) / 1048576.0);
                if (used > cap + slack) c.fail("the call took %zu bytes of device memory, the cap is %zu", used, cap);
            }
        }
        gpk_destroy(ctx);
    }
}

// A transfer-heavy gemm on pinned arrays with 4 streams: how much of the copying
// overlapped the kernels is printed, not asserted (it depends on timing).
void overlap_figure(Suite &suite) {
    constexpr int64_t m = 4096, n = 4096, k = 256;
    const GemmCase g{GPK_F32, GPK_ROW_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, m, n, k, 0, 1.0, 0.0,
                     Mem::Pinned, Mem::Pinned, Mem::Pinned};
    const GemmShapes s = gemm_shapes(g);
    Case c(suite, "gemm overlap: F32 row-major 4096x4096x256, pinned, 4 streams");
    gpk_context *ctx = suite.ctx();
    Placed<float> a(matrix<float>(s.a, 21, false), g.ma), b(matrix<float>(s.b, 22, false), g.mb),
        cm(matrix<float>(s.c, 23, true), g.mc);
    const std::vector<float> c0 = cm.data;
    if (!c.expect(gpk_set_staging(ctx, 4, 0, 0), GPK_SUCCESS, "gpk_set_staging") || !a.place() || !b.place() ||
        !cm.place())
        return;
    for (int run = 0; run < 2; ++run)  // the first makes the buffers
        if (!c.expect(gpk_gemm(ctx, g.dtype, g.layout, g.transa, g.transb, m, n, k, g.alpha, a.arg(), s.a.ld, b.arg(),
                               s.b.ld, g.beta, cm.arg(), s.c.ld),
                      GPK_SUCCESS, "gpk_gemm"))
            return;
    if (!cm.collect()) return;
    check_gemm(c, g, s, a.data, b.data, c0, cm.data, true);
    Moved want;
    want.in_once = size_t{k} * n * sizeof(float);
    want.in_per_block = size_t{m} * k * sizeof(float);
    want.out = size_t{m} * n * sizeof(float);
    const TraceFigures f = check_trace(c, ctx, 4, want);
    print_figures(c.name().c_str(), f);
    std::printf("overlap: %.0f%% of the copy time ran during kernels of other streams\n",
                f.copy_ms > 0 ? 100 * f.overlap_ms / f.copy_ms : 0.0);
}

// The batched gemm on host arrays: chunks of whole products on the lanes, each
// product's result against a reference computed here, and the trace against what the
// call had to move (A and B in, C out; with beta != 0 C in too; a shared B once).
void batched_case(Suite &suite, Mem mem, bool shared_b, double beta, const Settings &st) {
    constexpr int64_t m = 24, n = 20, k = 16, batch = 3000;
    const int64_t sa = m * k, sb = shared_b ? 0 : k * n, sc = m * n;
    Case c(suite, format("gemm_batched F32 col-major %" PRId64 " x %" PRId64 "x%" PRId64 "x%" PRId64
                         " %s%s beta=%g %s",
                         batch, m, n, k, mem_label(mem), shared_b ? " shared B" : "", beta, st.name));
    gpk_context *ctx = suite.ctx();
    size_t cap = 0;
    if (!apply(c, ctx, st, sizeof(float) * static_cast<size_t>(batch * (sa + sb + sc)), size_t{64} << 10, &cap)) return;
    Rng rng(seed_of({m, n, k, shared_b ? 1 : 0}));
    auto values = [&](int64_t count) {
        std::vector<float> v(static_cast<size_t>(count));
        for (float &x : v) x = static_cast<float>(static_cast<int>(rng.next() % 9) - 4);
        return v;
    };
    Placed<float> a(values(batch * sa), mem), b(values(shared_b ? k * n : batch * sb), mem), cm(values(batch * sc), mem);
    const std::vector<float> c0 = cm.data;
    if (!a.place() || !b.place() || !cm.place()) return c.fail("placing the arrays: %s", a.error());
    if (!c.expect(gpk_gemm_strided_batched(ctx, GPK_F32, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, m, n, k, 1.0,
                                           a.arg(), m, sa, b.arg(), k, sb, beta, cm.arg(), m, sc, batch),
                  GPK_SUCCESS, "gpk_gemm_strided_batched") ||
        !cm.collect())
        return;
    // Small integers: every sum is exact in F32.
    for (int64_t p = 0; p < batch && !c.failed(); ++p)
        for (int64_t j = 0; j < n; ++j)
            for (int64_t i = 0; i < m; ++i) {
                double want = beta * c0[static_cast<size_t>(p * sc + i + j * m)];
                for (int64_t q = 0; q < k; ++q)
                    want += static_cast<double>(a.data[static_cast<size_t>(p * sa + i + q * m)]) *
                            b.data[static_cast<size_t>(p * sb + q + j * k)];
                const float got = cm.data[static_cast<size_t>(p * sc + i + j * m)];
                if (got != static_cast<float>(want)) {
                    c.fail("product %" PRId64 " C(%" PRId64 ", %" PRId64 ") = %g, expected %g", p, i, j,
                           static_cast<double>(got), want);
                    j = n;
                    break;
                }
            }
    Moved want;
    const uint64_t es = sizeof(float);
    want.in_once = es * static_cast<uint64_t>(batch * sa + (shared_b ? k * n : batch * sb) + (beta != 0 ? batch * sc : 0));
    want.out = es * static_cast<uint64_t>(batch * sc);
    const TraceFigures f = check_trace(c, ctx, st.streams, want);
    if (st.streams > 1 && st.chunk_bytes != 0 && f.chunks < 2) c.fail("%" PRId64 " chunk(s): nothing to overlap", f.chunks);
}

void batched_suite(Suite &suite) {
    for (const Settings &st : kSettings)
        for (const Mem mem : {Mem::Pageable, Mem::Pinned}) {
            batched_case(suite, mem, false, 0.0, st);
            batched_case(suite, mem, true, 2.0, st);
        }
    // Validation mode: the same calls, each chunk checked on its lane as it goes.
    gpk_set_validation(suite.ctx(), 1);
    for (const Settings &st : {kSettings[1], kSettings[2]}) {
        batched_case(suite, Mem::Pageable, false, 0.0, st);
        batched_case(suite, Mem::Pinned, true, 2.0, st);
    }
    gpk_set_validation(suite.ctx(), 0);
    gpk_set_staging(suite.ctx(), 4, 0, 0);  // the defaults
}

// A cap below the smallest chunk: OUT_OF_MEMORY naming device_bytes, nothing written,
// no CUDA error left behind, no trace; the next call works.
void cap_too_small(Suite &suite) {
    gpk_context *ctx = suite.ctx();
    constexpr int64_t n = 64;
    std::vector<float> a(n * n, 1.0f), c0(n * n, std::numeric_limits<float>::quiet_NaN()), t(n * n);
    {
        Case c(suite, "device_bytes below one chunk: OUT_OF_MEMORY");
        std::vector<float> cm = c0, tm = c0;
        float sum = -1;
        if (!c.expect(gpk_set_staging(ctx, 4, 0, 1024), GPK_SUCCESS, "gpk_set_staging")) return;
        const gpk_status st[] = {
            gpk_gemm(ctx, GPK_F32, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, n, n, n, 1.0, a.data(), n, a.data(), n,
                     0.0, cm.data(), n),
            gpk_transpose(ctx, GPK_F32, GPK_COL_MAJOR, n, n, a.data(), n, tm.data(), n),
            gpk_reduce(ctx, GPK_F32, GPK_SUM, a.data(), n * n, &sum)};
        for (gpk_status s : st)
            if (s != GPK_ERROR_OUT_OF_MEMORY)
                c.fail("status %s, expected OUT_OF_MEMORY: %s", gpk_status_string(s), gpk_last_error(ctx));
        const std::string msg = gpk_last_error(ctx);
        if (msg.find("device_bytes") == std::string::npos) c.fail("message \"%s\" does not name device_bytes", msg.c_str());
        if (!std::isnan(cm[0]) || !std::isnan(tm[0]) || sum != -1) c.fail("a failed call wrote to its output");
        const cudaError_t pending = cudaGetLastError();
        if (pending != cudaSuccess) c.fail("a CUDA error was left pending: %s", cudaGetErrorString(pending));
        int64_t count = -1;
        if (gpk_stage_trace(ctx, nullptr, 0, &count) != GPK_SUCCESS || count != 0)
            c.fail("a failed call left a trace of %" PRId64 " events", count);
    }
    {
        Case c(suite, "after OUT_OF_MEMORY: the same context, cap lifted");
        std::vector<float> cm = c0;
        if (c.expect(gpk_set_staging(ctx, 4, 0, 0), GPK_SUCCESS, "gpk_set_staging") &&
            c.expect(gpk_gemm(ctx, GPK_F32, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, n, n, n, 1.0, a.data(), n,
                              a.data(), n, 0.0, cm.data(), n),
                     GPK_SUCCESS, "gpk_gemm")) {
            for (float v : cm)
                if (v != static_cast<float>(n)) return c.fail("C element %g, expected %g", v, static_cast<double>(n));
            int64_t count = 0;
            if (gpk_stage_trace(ctx, nullptr, 0, &count) != GPK_SUCCESS || count <= 0) c.fail("no trace");
        }
    }
}

// Calls that need no more than an earlier one allocate nothing: the buffers are reused.
// Validation mode goes through the pipeline too, and leaves its trace.
void reuse_and_validation(Suite &suite) {
    gpk_context *ctx = suite.ctx();
    constexpr int64_t m = 700, n = 300, k = 200;
    std::vector<double> a(m * k, 0.5), b(k * n, 0.25), cm(m * n);
    auto call = [&] {
        return gpk_gemm(ctx, GPK_F64, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, m, n, k, 1.0, a.data(), m, b.data(),
                        k, 0.0, cm.data(), m);
    };
    {
        Case c(suite, "buffers reused from call to call");
        if (!c.expect(gpk_set_staging(ctx, 3, 64 << 10, 0), GPK_SUCCESS, "gpk_set_staging") ||
            !c.expect(call(), GPK_SUCCESS, "gpk_gemm"))
            return;
        const size_t before = free_device_memory();
        for (int i = 0; i < 3; ++i)
            if (!c.expect(call(), GPK_SUCCESS, "gpk_gemm")) return;
        const size_t after = free_device_memory();
        if (after < before) c.fail("three more calls took %zu bytes of device memory", before - after);
        for (double v : cm)
            if (v != k * 0.125) return c.fail("C element %g, expected %g", v, k * 0.125);
    }
    {
        Case c(suite, "validation mode on host arrays");
        std::fill(cm.begin(), cm.end(), 0.0);
        if (c.expect(gpk_set_validation(ctx, 1), GPK_SUCCESS, "gpk_set_validation(1)")) {
            c.expect(call(), GPK_SUCCESS, "gpk_gemm");
            for (double v : cm)
                if (v != k * 0.125) {
                    c.fail("C element %g, expected %g", v, k * 0.125);
                    break;
                }
            int64_t count = -1;
            if (gpk_stage_trace(ctx, nullptr, 0, &count) != GPK_SUCCESS || count <= 0)
                c.fail("validation mode left a trace of %" PRId64 " events", count);
        }
        c.expect(gpk_set_validation(ctx, 0), GPK_SUCCESS, "gpk_set_validation(0)");
    }
}

// ---- the host backend ---------------------------------------------------------------------

void host_backend(Suite &suite) {
    gpk_context *ctx = suite.ctx();
    for (const Settings &st : kSettings) {
        Case c(suite, format("host backend: %s (kept, unused)", st.name));
        if (!c.expect(gpk_set_staging(ctx, st.streams, st.chunk_bytes, st.quarter_cap ? 1 : 0), GPK_SUCCESS,
                      "gpk_set_staging"))
            continue;
        float a[6] = {1, 2, 3, 4, 5, 6}, t[6] = {}, cm[4] = {};
        double sum = 0;
        c.expect(gpk_gemm(ctx, GPK_F32, GPK_ROW_MAJOR, GPK_NO_TRANS, GPK_TRANS, 2, 2, 3, 1.0, a, 3, a, 3, 0.0, cm, 2),
                 GPK_SUCCESS, "gpk_gemm");
        c.expect(gpk_transpose(ctx, GPK_F32, GPK_ROW_MAJOR, 2, 3, a, 3, t, 2), GPK_SUCCESS, "gpk_transpose");
        const double x[3] = {1, 2, 4};
        c.expect(gpk_reduce(ctx, GPK_F64, GPK_SUM, x, 3, &sum), GPK_SUCCESS, "gpk_reduce");
        if (cm[0] != 14 || cm[1] != 32 || cm[3] != 77 || t[1] != 4 || sum != 7) c.fail("wrong results");
        gpk_stage_event ev[2];
        std::memset(ev, 0xA5, sizeof ev);
        int64_t count = -1;
        c.expect(gpk_stage_trace(ctx, ev, 2, &count), GPK_SUCCESS, "gpk_stage_trace");
        if (count != 0) c.fail("the host backend reports %" PRId64 " trace events", count);
        const unsigned char *bytes = reinterpret_cast<const unsigned char *>(ev);
        for (size_t i = 0; i < sizeof ev; ++i)
            if (bytes[i] != 0xA5) {
                c.fail("gpk_stage_trace wrote events on the host backend");
                break;
            }
    }
    gpk_set_staging(ctx, 4, 0, 0);  // the defaults
}

}  // namespace

int main(int argc, char **argv) {
    Suite suite("test_staging", argc, argv);
    if (!suite.cuda()) {
        host_backend(suite);
        return suite.finish();
    }
    {
        Case c(suite, "no trace before any call on host arrays");
        int64_t count = -1;
        if (c.expect(gpk_stage_trace(suite.ctx(), nullptr, 0, &count), GPK_SUCCESS, "gpk_stage_trace") && count != 0)
            c.fail("count %" PRId64 " before any call", count);
    }
    gemm_suite(suite);
    transpose_suite(suite);
    reduce_suite(suite);
    batched_suite(suite);
    cap_too_small(suite);
    reuse_and_validation(suite);
    validation_suite(suite);
    out_of_core(suite);
    overlap_figure(suite);
    return suite.finish();
}
