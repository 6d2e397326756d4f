// Every argument rule of the API: the exact status, a message that names the
// parameter (on the context and on the thread), and outputs left as they were.
#include "../harness.hpp"

#include <dlfcn.h>

#include <climits>
#include <cstdint>
#include <functional>

namespace {

using namespace gpkt;

// Whether `word` occurs in `text` as a whole word: "m" must not match inside
// "must", nor "A" inside "GPK_F32", or any message would pass.
bool contains_word(const std::string &text, const std::string &word) {
    auto is_word_char = [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; };
    for (size_t pos = text.find(word); pos != std::string::npos; pos = text.find(word, pos + 1)) {
        const bool left = pos == 0 || !is_word_char(text[pos - 1]);
        const bool right = pos + word.size() == text.size() || !is_word_char(text[pos + word.size()]);
        if (left && right) return true;
    }
    return false;
}

struct Region {
    const void *ptr;
    size_t bytes;
};

class Checker {
public:
    explicit Checker(Suite &suite) : suite_(suite) {}

    // Runs `call`, which must fail with `want`. `ctx` is the context whose last
    // error must carry the message (NULL: only the thread's message is checked);
    // one of `words` must appear in the messages; `outputs` must be unchanged.
    void expect(const std::string &name, gpk_context *ctx, gpk_status want, std::vector<std::string> words,
                std::vector<Region> outputs, const std::function<gpk_status()> &call) {
        Case c(suite_, name);
        std::vector<std::vector<unsigned char>> before;
        for (const Region &r : outputs) {
            const auto *p = static_cast<const unsigned char *>(r.ptr);
            before.emplace_back(p, p + r.bytes);
        }
        // Both messages are first set to another failure's, so that a call which
        // fails without recording its own message is caught. Two different resets:
        // the call under test may legitimately produce the first one's message.
        gpk_status st = GPK_SUCCESS;
        std::string stale_thread, stale_ctx;
        for (int reset = 0; reset < 2; ++reset) {
            if (reset == 0)
                gpk_variant_count(suite_.ctx(), GPK_OP_GEMM, nullptr);
            else
                gpk_set_variant(suite_.ctx(), GPK_OP_GEMM, "reset-marker-9f3");
            if (ctx != nullptr && ctx != suite_.ctx()) gpk_variant_count(ctx, GPK_OP_GEMM, nullptr);
            stale_thread = gpk_last_error(nullptr);
            stale_ctx = ctx != nullptr ? gpk_last_error(ctx) : "";
            st = call();
            const bool thread_same = stale_thread == gpk_last_error(nullptr);
            const bool ctx_same = ctx != nullptr && stale_ctx == gpk_last_error(ctx);
            if (!thread_same && !ctx_same) break;
        }
        if (st != want)
            c.fail("status %s (%d), expected %s (%d); message: \"%s\"", gpk_status_string(st), static_cast<int>(st),
                   gpk_status_string(want), static_cast<int>(want), gpk_last_error(nullptr));
        check_message(c, "gpk_last_error(NULL)", gpk_last_error(nullptr), stale_thread, words);
        if (ctx != nullptr) check_message(c, "gpk_last_error(ctx)", gpk_last_error(ctx), stale_ctx, words);
        for (size_t i = 0; i < outputs.size(); ++i)
            if (std::memcmp(outputs[i].ptr, before[i].data(), before[i].size()) != 0)
                c.fail("output %zu was written by a call that failed", i);
    }

    // Runs `call`, which must succeed: the boundary on the valid side of a rule.
    void expect_ok(const std::string &name, gpk_context *ctx, const std::function<gpk_status()> &call) {
        Case c(suite_, name);
        const gpk_status st = call();
        if (st != GPK_SUCCESS)
            c.fail("status %s (%d), expected success; message: \"%s\"", gpk_status_string(st), static_cast<int>(st),
                   ctx != nullptr ? gpk_last_error(ctx) : gpk_last_error(nullptr));
    }

private:
    static void check_message(Case &c, const char *which, const char *msg, const std::string &stale,
                              const std::vector<std::string> &words) {
        if (msg == nullptr) {
            c.fail("%s is NULL", which);
            return;
        }
        const std::string text = msg;
        if (text.empty()) {
            c.fail("%s is empty", which);
            return;
        }
        if (text == stale) {
            c.fail("%s still holds the previous failure's message (\"%s\")", which, msg);
            return;
        }
        for (const std::string &w : words)
            if (contains_word(text, w)) return;
        std::string list;
        for (const std::string &w : words) list += (list.empty() ? "\"" : ", \"") + w + "\"";
        c.fail("%s = \"%s\" names none of %s", which, msg, list.c_str());
    }

    Suite &suite_;
};

// ---- context-free functions ---------------------------------------------------

void context_rules(Suite &suite, Checker &check) {
    gpk_context *garbage = reinterpret_cast<gpk_context *>(uintptr_t{0x1000});
    auto create_fails = [&](const std::string &name, int backend, int device, gpk_status want,
                            std::vector<std::string> words) {
        gpk_context *out = garbage;
        check.expect(name, nullptr, want, words, {}, [&] { return gpk_create(&out, backend, device); });
        Case c(suite, name + ": *ctx after the failure");
        if (out != nullptr) {
            c.fail("*ctx = %p after a failed gpk_create, expected NULL", static_cast<void *>(out));
            if (out != garbage) gpk_destroy(out);
        }
    };
    check.expect("gpk_create(NULL, HOST, 0)", nullptr, GPK_ERROR_INVALID_ARGUMENT, {"ctx"}, {},
                 [] { return gpk_create(nullptr, GPK_BACKEND_HOST, 0); });
    for (int backend : {7, -1, 3, 100}) create_fails(format("gpk_create backend=%d", backend), backend, 0, GPK_ERROR_INVALID_ARGUMENT, {"backend"});
    for (int backend : {GPK_BACKEND_HOST, GPK_BACKEND_CUDA, GPK_BACKEND_AUTO})
        for (int device : {-1, -100})
            create_fails(format("gpk_create backend=%d device=%d", backend, device), backend, device,
                         GPK_ERROR_INVALID_ARGUMENT, {"device"});
    // A device index beyond any machine's GPUs: no such device, with or without GPUs.
    create_fails("gpk_create CUDA device=1000", GPK_BACKEND_CUDA, 1000, GPK_ERROR_NO_DEVICE, {"device"});

    // NULL context everywhere.
    const std::vector<std::string> ctx_word = {"ctx"};
    gpk_pi_result pr;
    double buf[4] = {1, 2, 3, 4};
    double out[4] = {0, 0, 0, 0};
    int value = 12345;
    check.expect("gpk_get_backend(NULL)", nullptr, GPK_ERROR_INVALID_HANDLE, ctx_word, {{&value, sizeof value}},
                 [&] { return gpk_get_backend(nullptr, &value); });
    check.expect("gpk_set_stream(NULL)", nullptr, GPK_ERROR_INVALID_HANDLE, ctx_word, {},
                 [] { return gpk_set_stream(nullptr, nullptr); });
    check.expect("gpk_synchronize(NULL)", nullptr, GPK_ERROR_INVALID_HANDLE, ctx_word, {},
                 [] { return gpk_synchronize(nullptr); });
    check.expect("gpk_variant_count(NULL)", nullptr, GPK_ERROR_INVALID_HANDLE, ctx_word, {{&value, sizeof value}},
                 [&] { return gpk_variant_count(nullptr, GPK_OP_GEMM, &value); });
    check.expect("gpk_set_variant(NULL)", nullptr, GPK_ERROR_INVALID_HANDLE, ctx_word, {},
                 [] { return gpk_set_variant(nullptr, GPK_OP_GEMM, "auto"); });
    check.expect("gpk_set_validation(NULL)", nullptr, GPK_ERROR_INVALID_HANDLE, ctx_word, {},
                 [] { return gpk_set_validation(nullptr, 0); });
    check.expect("gpk_gemm(NULL)", nullptr, GPK_ERROR_INVALID_HANDLE, ctx_word, {{out, sizeof out}}, [&] {
        return gpk_gemm(nullptr, GPK_F64, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, 2, 2, 1, 1.0, buf, 2, buf, 1, 0.0,
                        out, 2);
    });
    check.expect("gpk_reduce(NULL)", nullptr, GPK_ERROR_INVALID_HANDLE, ctx_word, {{out, sizeof out}},
                 [&] { return gpk_reduce(nullptr, GPK_F64, GPK_SUM, buf, 4, out); });
    check.expect("gpk_transpose(NULL)", nullptr, GPK_ERROR_INVALID_HANDLE, ctx_word, {{out, sizeof out}},
                 [&] { return gpk_transpose(nullptr, GPK_F64, GPK_COL_MAJOR, 2, 2, buf, 2, out, 2); });
    std::memset(&pr, 0x5A, sizeof pr);
    check.expect("gpk_pi(NULL)", nullptr, GPK_ERROR_INVALID_HANDLE, ctx_word, {{&pr, sizeof pr}},
                 [&] { return gpk_pi(nullptr, 1000, 1, &pr); });
    check.expect("gpk_pi_range(NULL)", nullptr, GPK_ERROR_INVALID_HANDLE, ctx_word, {{&pr, sizeof pr}},
                 [&] { return gpk_pi_range(nullptr, 0, 1000, 1, &pr); });
}

// Whether `text` holds every one of `phrases`, and none of `banned`; the first
// phrase missing (or banned one present) otherwise, for the failure's message.
std::string missing_phrase(const std::string &text, std::initializer_list<const char *> phrases,
                           std::initializer_list<const char *> banned = {}) {
    for (const char *p : phrases)
        if (text.find(p) == std::string::npos) return std::string("no \"") + p + "\"";
    for (const char *p : banned)
        if (text.find(p) != std::string::npos) return std::string("\"") + p + "\"";
    return "";
}

// A CUDA context asked for on a machine without a GPU says why in words: "no NVIDIA
// driver or GPU found" where the driver library is missing (the CUDA runtime's own
// text, "driver version is insufficient", reads as if an update would help), and
// "built without CUDA" from a library built without it. Where a CUDA context can be
// made there is nothing to check.
void no_device_message(Suite &suite) {
    Case c(suite, "gpk_create CUDA without a GPU: the message says why in words");
    gpk_context *cuda = nullptr;
    const gpk_status st = gpk_create(&cuda, GPK_BACKEND_CUDA, 0);
    if (st == GPK_SUCCESS) {
        gpk_destroy(cuda);
        c.mark_unsupported();
        return;
    }
    const std::string msg = gpk_last_error(nullptr);
    if (st != GPK_ERROR_NO_DEVICE)
        return c.fail("%s, expected GPK_ERROR_NO_DEVICE: \"%s\"", gpk_status_string(st), msg.c_str());
#if defined(CUDART_VERSION)
    void *driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (driver != nullptr) {
        dlclose(driver);
        // A driver that sees no GPU is told in the same words; an older driver than
        // the runtime, or a broken device, in others.
        return;
    }
    const std::string wrong = missing_phrase(msg, {"device (0)", "no NVIDIA driver or GPU found"}, {"insufficient"});
#else
    const std::string wrong = missing_phrase(msg, {"device (0)", "built without CUDA"});
#endif
    if (!wrong.empty()) c.fail("%s in \"%s\"", wrong.c_str(), msg.c_str());
}

// gpk_set_variant's refusals name the op in words, say when the name is a variant of
// the other backend, and list the context's choices.
void variant_words(Suite &suite, gpk_context *ctx, bool host) {
    struct Want {
        int op;
        const char *name;
        std::initializer_list<const char *> phrases;
    };
    const std::initializer_list<Want> host_cases = {
        {GPK_OP_GEMM, "naive",
         {"'naive'", "is a CUDA rung of gemm", "on the host backend, where this context runs", "host"}},
        {GPK_OP_PI, "persistent",
         {"'persistent'", "is a CUDA rung of pi", "on the host backend, where this context runs", "host"}},
        {GPK_OP_TRANSPOSE, "tile64", {"is a CUDA rung of transpose", "host backend"}},
        {GPK_OP_GEMM_BATCHED, "staged", {"is a CUDA rung of gemm_batched", "host backend"}},
        {GPK_OP_REDUCE, "no-such-rung", {"'no-such-rung'", "not a variant of reduce on the host backend", "host"}},
    };
    const std::initializer_list<Want> cuda_cases = {
        {GPK_OP_GEMM, "host",
         {"'host'", "host backend's variant of gemm", "on the CUDA backend, where this context runs", "cublas"}},
        {GPK_OP_PI, "no-such-rung", {"not a variant of pi on the CUDA backend", "persistent"}},
    };
    for (const Want &w : host ? host_cases : cuda_cases) {
        Case c(suite, format("%s gpk_set_variant(%s, \"%s\"): the message in words", suite.backend_name(),
                             op_name(w.op), w.name));
        if (!c.expect(gpk_set_variant(ctx, w.op, w.name), GPK_ERROR_INVALID_ARGUMENT, "gpk_set_variant")) continue;
        const std::string msg = gpk_last_error(ctx);
        const std::string wrong = missing_phrase(msg, w.phrases, {"op 0", "op 1", "op 2", "op 3", "op 4"});
        if (!wrong.empty()) c.fail("%s in \"%s\"", wrong.c_str(), msg.c_str());
    }
}

// ---- per-context rules ----------------------------------------------------------

void variant_rules(Checker &check, gpk_context *ctx, const std::string &tag) {
    int value = 12345;
    for (int op : {7, -1, 5, 100}) {
        check.expect(format("%s gpk_variant_count op=%d", tag.c_str(), op), ctx, GPK_ERROR_INVALID_ARGUMENT, {"op"},
                     {{&value, sizeof value}}, [&] { return gpk_variant_count(ctx, op, &value); });
        check.expect(format("%s gpk_set_variant op=%d", tag.c_str(), op), ctx, GPK_ERROR_INVALID_ARGUMENT, {"op"}, {},
                     [&] { return gpk_set_variant(ctx, op, "auto"); });
    }
    check.expect(tag + " gpk_variant_count count=NULL", ctx, GPK_ERROR_INVALID_ARGUMENT, {"count"}, {},
                 [&] { return gpk_variant_count(ctx, GPK_OP_REDUCE, nullptr); });
    for (int op : std::initializer_list<int>{GPK_OP_GEMM, GPK_OP_REDUCE, GPK_OP_TRANSPOSE, GPK_OP_PI, GPK_OP_GEMM_BATCHED})
        for (const char *name : {"no-such-variant", "", "AUTO", "auto "})
            check.expect(format("%s gpk_set_variant op=%d name=\"%s\"", tag.c_str(), op, name), ctx,
                         GPK_ERROR_INVALID_ARGUMENT, {"name", "variant", name}, {},
                         [&] { return gpk_set_variant(ctx, op, name); });
    check.expect(tag + " gpk_get_backend backend=NULL", ctx, GPK_ERROR_INVALID_ARGUMENT, {"backend"}, {},
                 [&] { return gpk_get_backend(ctx, nullptr); });
}

// The F64 rules, and the same for F16 and BF16: everything the floating-point gemm
// rejects is rejected the same way for every dtype it takes.
void gemm_rules(Checker &check, gpk_context *ctx, const std::string &tag_, void *device_buffer, int dtype_) {
    const std::string tag = dtype_ == GPK_F64 ? tag_ : tag_ + " " + dtype_name(dtype_);
    // Distinct sizes, so that each leading-dimension minimum is a different number.
    const int64_t m = 4, n = 5, k = 3;
    std::vector<double> a(256, 0.5), b(256, 0.25), c(256, 7.0);
    auto outputs = [&] { return std::vector<Region>{{c.data(), c.size() * sizeof(double)}}; };
    // A valid call with one thing changed.
    struct Call {
        int dtype = GPK_F64, layout = GPK_COL_MAJOR, transa = GPK_NO_TRANS, transb = GPK_NO_TRANS;
        int64_t m, n, k, lda, ldb, ldc;
        const void *A, *B;
        void *C;
    };
    const Call base{dtype_, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, m, n, k, m, k, m, a.data(), b.data(), c.data()};
    auto run = [ctx](const Call &q) {
        return [ctx, q] {
            return gpk_gemm(ctx, q.dtype, q.layout, q.transa, q.transb, q.m, q.n, q.k, 1.0, q.A, q.lda, q.B, q.ldb, 0.5,
                            q.C, q.ldc);
        };
    };
    auto bad = [&](const std::string &what, const Call &q, std::vector<std::string> words,
                   gpk_status want = GPK_ERROR_INVALID_ARGUMENT) {
        check.expect(tag + " gpk_gemm " + what, ctx, want, std::move(words), outputs(), run(q));
    };

    for (int dtype : {7, -1, 6, 100}) {
        Call q = base;
        q.dtype = dtype;
        bad(format("dtype=%d", dtype), q, {"dtype"});
    }
    for (int dtype : {GPK_I32, GPK_I64}) {
        Call q = base;
        q.dtype = dtype;
        bad(format("dtype=%s", dtype_name(dtype)), q, {"dtype"}, GPK_ERROR_NOT_SUPPORTED);
    }
    for (int layout : {0, 7, 100, 103, int{GPK_NO_TRANS}}) {
        Call q = base;
        q.layout = layout;
        bad(format("layout=%d", layout), q, {"layout"});
    }
    for (int trans : {0, 7, 113, int{GPK_ROW_MAJOR}}) {
        Call q = base;
        q.transa = trans;
        bad(format("transa=%d", trans), q, {"transa"});
        q = base;
        q.transb = trans;
        bad(format("transb=%d", trans), q, {"transb"});
    }
    {
        Call q = base;
        q.m = -1;
        bad("m=-1", q, {"m"});
        q = base;
        q.n = -1;
        bad("n=-1", q, {"n"});
        q = base;
        q.k = -1;
        bad("k=-1", q, {"k"});
        q = base;
        q.m = std::numeric_limits<int64_t>::min();
        bad("m=INT64_MIN", q, {"m"});
    }
    // Each leading dimension one below its CBLAS minimum, for every layout and
    // transposition; and exactly at it, which must pass.
    for (int layout : {GPK_COL_MAJOR, GPK_ROW_MAJOR})
        for (int ta : {GPK_NO_TRANS, GPK_TRANS})
            for (int tb : {GPK_NO_TRANS, GPK_TRANS}) {
                const bool col = layout == GPK_COL_MAJOR, t_a = ta == GPK_TRANS, t_b = tb == GPK_TRANS;
                const int64_t min_a = col ? (t_a ? k : m) : (t_a ? m : k);
                const int64_t min_b = col ? (t_b ? n : k) : (t_b ? k : n);
                const int64_t min_c = col ? m : n;
                Call q = base;
                q.layout = layout;
                q.transa = ta;
                q.transb = tb;
                q.lda = min_a;
                q.ldb = min_b;
                q.ldc = min_c;
                const std::string combo = format("%s trans=%c%c", layout_name(layout), t_a ? 'T' : 'N', t_b ? 'T' : 'N');
                check.expect_ok(tag + " gpk_gemm " + combo + " minimal ld", ctx, run(q));
                Call r = q;
                r.lda = min_a - 1;
                bad(format("%s lda=%" PRId64 " < %" PRId64, combo.c_str(), r.lda, min_a), r, {"lda"});
                r = q;
                r.ldb = min_b - 1;
                bad(format("%s ldb=%" PRId64 " < %" PRId64, combo.c_str(), r.ldb, min_b), r, {"ldb"});
                r = q;
                r.ldc = min_c - 1;
                bad(format("%s ldc=%" PRId64 " < %" PRId64, combo.c_str(), r.ldc, min_c), r, {"ldc"});
                // With empty matrices the minimum is still 1.
                r = q;
                r.m = r.n = r.k = 0;
                r.lda = 0;
                bad(combo + " m=n=k=0 lda=0", r, {"lda"});
                r = q;
                r.m = r.n = r.k = 0;
                r.ldc = 0;
                bad(combo + " m=n=k=0 ldc=0", r, {"ldc"});
            }
    {
        Call q = base;
        q.A = nullptr;
        bad("A=NULL", q, {"A"});
        q = base;
        q.B = nullptr;
        bad("B=NULL", q, {"B"});
        q = base;
        q.C = nullptr;
        bad("C=NULL", q, {"C"});
        q = base;
        q.C = nullptr;
        q.k = 0;
        bad("C=NULL k=0 (C is still scaled by beta)", q, {"C"});
    }
    // Byte counts beyond int64: elements fit in neither int64 nor, in bytes, in int64.
    {
        const int64_t big = int64_t{1} << 40;
        Call q = base;
        q.m = q.n = big;
        q.k = 1;
        q.lda = big;
        q.ldb = 1;
        q.ldc = big;
        bad("m=n=2^40 ld=2^40", q, {"C", "m", "n", "ldc"});
        const int64_t mid = int64_t{1} << 31;  // 2^62 elements, 2^65 bytes of F64
        q = base;
        q.m = q.n = mid;
        q.k = 1;
        q.lda = mid;
        q.ldb = 1;
        q.ldc = mid;
        bad("m=n=2^31 (2^62 elements: 2^63 bytes or more)", q, {"C", "m", "n", "ldc"});
        q = base;
        q.layout = GPK_ROW_MAJOR;
        q.m = q.k = big;
        q.n = 1;
        q.lda = big;
        q.ldb = 1;
        q.ldc = 1;
        bad("row m=k=2^40", q, {"A", "m", "k", "lda"});
    }
    // C aliasing an input.
    {
        Call q = base;
        q.C = a.data();
        check.expect(tag + " gpk_gemm C == A", ctx, GPK_ERROR_INVALID_ARGUMENT, {"A", "C"},
                     {{a.data(), a.size() * sizeof(double)}}, run(q));
        q = base;
        q.C = b.data() + 2;
        check.expect(tag + " gpk_gemm C overlaps B", ctx, GPK_ERROR_INVALID_ARGUMENT, {"B", "C"},
                     {{b.data(), b.size() * sizeof(double)}}, run(q));
    }
    // Device memory on the host backend.
    if (device_buffer != nullptr) {
        Call q = base;
        q.A = device_buffer;
        bad("A in device memory on the host backend", q, {"A"});
        q = base;
        q.C = device_buffer;
        bad("C in device memory on the host backend", q, {"C"});
    }
}

void reduce_rules(Checker &check, gpk_context *ctx, const std::string &tag, void *device_buffer) {
    std::vector<double> x(64, 1.5);
    unsigned char result[16];
    std::memset(result, 0xA5, sizeof result);
    const std::vector<Region> out = {{result, sizeof result}};
    auto call = [ctx](int dtype, int op, const void *xp, int64_t n, void *res) {
        return [=] { return gpk_reduce(ctx, dtype, op, xp, n, res); };
    };
    for (int dtype : {7, -1, 6, 100})
        check.expect(format("%s gpk_reduce dtype=%d", tag.c_str(), dtype), ctx, GPK_ERROR_INVALID_ARGUMENT, {"dtype"},
                     out, call(dtype, GPK_SUM, x.data(), 8, result));
    for (int op : {3, -1, 7, 100})
        check.expect(format("%s gpk_reduce op=%d", tag.c_str(), op), ctx, GPK_ERROR_INVALID_ARGUMENT, {"op"}, out,
                     call(GPK_F64, op, x.data(), 8, result));
    for (int dtype : std::initializer_list<int>{GPK_F32, GPK_F64, GPK_I32, GPK_I64, GPK_F16, GPK_BF16}) {
        for (int op : {GPK_SUM, GPK_MIN, GPK_MAX})
            check.expect(format("%s gpk_reduce %s op=%d n=-1", tag.c_str(), dtype_name(dtype), op), ctx,
                         GPK_ERROR_INVALID_ARGUMENT, {"n"}, out, call(dtype, op, x.data(), -1, result));
        for (int op : {GPK_MIN, GPK_MAX})
            check.expect(format("%s gpk_reduce %s op=%d n=0", tag.c_str(), dtype_name(dtype), op), ctx,
                         GPK_ERROR_INVALID_ARGUMENT, {"n"}, out, call(dtype, op, x.data(), 0, result));
        check.expect(format("%s gpk_reduce %s x=NULL n=8", tag.c_str(), dtype_name(dtype)), ctx,
                     GPK_ERROR_INVALID_ARGUMENT, {"x"}, out, call(dtype, GPK_SUM, nullptr, 8, result));
        check.expect(format("%s gpk_reduce %s result=NULL", tag.c_str(), dtype_name(dtype)), ctx,
                     GPK_ERROR_INVALID_ARGUMENT, {"result"}, {}, call(dtype, GPK_MAX, x.data(), 8, nullptr));
        check.expect(format("%s gpk_reduce %s SUM n=0 result=NULL", tag.c_str(), dtype_name(dtype)), ctx,
                     GPK_ERROR_INVALID_ARGUMENT, {"result"}, {}, call(dtype, GPK_SUM, nullptr, 0, nullptr));
    }
    // n * 8 bytes overflows int64.
    check.expect(tag + " gpk_reduce F64 n=2^61", ctx, GPK_ERROR_INVALID_ARGUMENT, {"x", "n"}, out,
                 call(GPK_F64, GPK_SUM, x.data(), int64_t{1} << 61, result));
    check.expect(tag + " gpk_reduce I64 n=INT64_MAX", ctx, GPK_ERROR_INVALID_ARGUMENT, {"x", "n"}, out,
                 call(GPK_I64, GPK_MIN, x.data(), std::numeric_limits<int64_t>::max(), result));
    if (device_buffer != nullptr) {
        check.expect(tag + " gpk_reduce x in device memory on the host backend", ctx, GPK_ERROR_INVALID_ARGUMENT,
                     {"x"}, out, call(GPK_F64, GPK_SUM, device_buffer, 8, result));
        check.expect(tag + " gpk_reduce result in device memory on the host backend", ctx, GPK_ERROR_INVALID_ARGUMENT,
                     {"result"}, {}, call(GPK_F64, GPK_SUM, x.data(), 8, device_buffer));
    }
}

void transpose_rules(Checker &check, gpk_context *ctx, const std::string &tag, void *device_buffer) {
    const int64_t rows = 4, cols = 6;
    std::vector<double> a(256, 0.5), b(256, 7.0);
    auto outputs = [&] { return std::vector<Region>{{b.data(), b.size() * sizeof(double)}}; };
    struct Call {
        int dtype, layout;
        int64_t rows, cols;
        const void *A;
        int64_t lda;
        void *B;
        int64_t ldb;
    };
    const Call base{GPK_F64, GPK_COL_MAJOR, rows, cols, a.data(), rows, b.data(), cols};
    auto run = [ctx](const Call &q) {
        return [ctx, q] { return gpk_transpose(ctx, q.dtype, q.layout, q.rows, q.cols, q.A, q.lda, q.B, q.ldb); };
    };
    auto bad = [&](const std::string &what, const Call &q, std::vector<std::string> words) {
        check.expect(tag + " gpk_transpose " + what, ctx, GPK_ERROR_INVALID_ARGUMENT, std::move(words), outputs(), run(q));
    };
    for (int dtype : {7, -1, 6, 100}) {
        Call q = base;
        q.dtype = dtype;
        bad(format("dtype=%d", dtype), q, {"dtype"});
    }
    for (int layout : {0, 7, 100, int{GPK_TRANS}}) {
        Call q = base;
        q.layout = layout;
        bad(format("layout=%d", layout), q, {"layout"});
    }
    {
        Call q = base;
        q.rows = -1;
        bad("rows=-1", q, {"rows"});
        q = base;
        q.cols = -1;
        bad("cols=-1", q, {"cols"});
    }
    for (int dtype : std::initializer_list<int>{GPK_F32, GPK_F64, GPK_I32, GPK_I64, GPK_F16, GPK_BF16})
        for (int layout : {GPK_COL_MAJOR, GPK_ROW_MAJOR}) {
            const bool col = layout == GPK_COL_MAJOR;
            Call q = base;
            q.dtype = dtype;
            q.layout = layout;
            q.lda = col ? rows : cols;
            q.ldb = col ? cols : rows;
            const std::string combo = format("%s %s", dtype_name(dtype), layout_name(layout));
            check.expect_ok(tag + " gpk_transpose " + combo + " minimal ld", ctx, run(q));
            Call r = q;
            --r.lda;
            bad(format("%s lda=%" PRId64, combo.c_str(), r.lda), r, {"lda"});
            r = q;
            --r.ldb;
            bad(format("%s ldb=%" PRId64, combo.c_str(), r.ldb), r, {"ldb"});
            r = q;
            r.rows = r.cols = 0;
            r.lda = 0;
            bad(combo + " rows=cols=0 lda=0", r, {"lda"});
            r = q;
            r.rows = r.cols = 0;
            r.ldb = 0;
            bad(combo + " rows=cols=0 ldb=0", r, {"ldb"});
        }
    {
        Call q = base;
        q.A = nullptr;
        bad("A=NULL", q, {"A"});
        q = base;
        q.B = nullptr;
        bad("B=NULL", q, {"B"});
    }
    {
        const int64_t big = int64_t{1} << 40;
        Call q = base;
        q.rows = q.cols = big;
        q.lda = q.ldb = big;
        bad("rows=cols=2^40", q, {"A", "B", "rows", "cols", "lda", "ldb"});
    }
    // Overlap: the same buffer, B starting on A's last element, and B starting
    // right after A's last element (adjacent, valid).
    {
        std::vector<double> buf(128, 3.0);
        const std::vector<Region> whole = {{buf.data(), buf.size() * sizeof(double)}};
        Call q = base;
        q.A = buf.data();
        q.B = buf.data();
        check.expect(tag + " gpk_transpose A == B", ctx, GPK_ERROR_INVALID_ARGUMENT, {"A", "B"}, whole, run(q));
        const int64_t span = rows * cols;  // column-major, lda == rows
        q.B = buf.data() + span - 1;
        check.expect(tag + " gpk_transpose B starts on A's last element", ctx, GPK_ERROR_INVALID_ARGUMENT, {"A", "B"},
                     whole, run(q));
        q.A = buf.data() + span - 1;
        q.B = buf.data();
        check.expect(tag + " gpk_transpose A starts on B's last element", ctx, GPK_ERROR_INVALID_ARGUMENT, {"A", "B"},
                     whole, run(q));
        q.A = buf.data();
        q.B = buf.data() + span;
        check.expect_ok(tag + " gpk_transpose B adjacent to A", ctx, run(q));
    }
    if (device_buffer != nullptr) {
        Call q = base;
        q.A = device_buffer;
        bad("A in device memory on the host backend", q, {"A"});
    }
}

void pi_rules(Checker &check, gpk_context *ctx, const std::string &tag) {
    gpk_pi_result r;
    std::memset(&r, 0x5A, sizeof r);
    const std::vector<Region> out = {{&r, sizeof r}};
    for (uint64_t samples : {uint64_t{0}, (uint64_t{1} << 63) + 1, std::numeric_limits<uint64_t>::max()})
        check.expect(format("%s gpk_pi samples=%" PRIu64, tag.c_str(), samples), ctx, GPK_ERROR_INVALID_ARGUMENT,
                     {"samples"}, out, [&] { return gpk_pi(ctx, samples, 1, &r); });
    check.expect(tag + " gpk_pi result=NULL", ctx, GPK_ERROR_INVALID_ARGUMENT, {"result"}, {},
                 [&] { return gpk_pi(ctx, 1000, 1, nullptr); });
    // A range must end within 64-bit sample indices: first_sample + count <= 2^64 - 1.
    const uint64_t top = std::numeric_limits<uint64_t>::max();
    for (const auto &range : {std::make_pair(top - 1, uint64_t{2}), std::make_pair(top, uint64_t{1}),
                              std::make_pair(uint64_t{1}, top)})
        check.expect(format("%s gpk_pi_range first_sample=%" PRIu64 " count=%" PRIu64, tag.c_str(), range.first,
                            range.second),
                     ctx, GPK_ERROR_INVALID_ARGUMENT, {"count", "first_sample"}, out,
                     [&] { return gpk_pi_range(ctx, range.first, range.second, 1, &r); });
    check.expect(tag + " gpk_pi_range result=NULL", ctx, GPK_ERROR_INVALID_ARGUMENT, {"result"}, {},
                 [&] { return gpk_pi_range(ctx, 0, 1000, 1, nullptr); });
    check.expect_ok(tag + " gpk_pi_range first_sample=2^64-1 count=0", ctx,
                    [&] { return gpk_pi_range(ctx, top, 0, 1, &r); });
}

// gpk_set_math_mode / gpk_get_math_mode: only the two modes, a rejected mode leaves the
// context's as it was, and the mode is the context's own.
void math_mode_rules(Suite &suite, Checker &check, gpk_context *ctx, const std::string &tag) {
    int mode = 12345;
    check.expect_ok(tag + " gpk_get_math_mode at creation", ctx, [&] { return gpk_get_math_mode(ctx, &mode); });
    {
        Case c(suite, tag + " math mode at creation is GPK_MATH_DEFAULT");
        if (mode != GPK_MATH_DEFAULT) c.fail("gpk_get_math_mode gave %d", mode);
    }
    check.expect_ok(tag + " gpk_set_math_mode(TF32)", ctx, [&] { return gpk_set_math_mode(ctx, GPK_MATH_TF32); });
    for (int bad : {2, -1, 100, INT_MIN, INT_MAX})
        check.expect(format("%s gpk_set_math_mode mode=%d", tag.c_str(), bad), ctx, GPK_ERROR_INVALID_ARGUMENT,
                     {"mode"}, {}, [&] { return gpk_set_math_mode(ctx, bad); });
    mode = 12345;
    gpk_get_math_mode(ctx, &mode);
    {
        Case c(suite, tag + " a rejected math mode keeps the previous one (sticky)");
        if (mode != GPK_MATH_TF32) c.fail("gpk_get_math_mode gave %d after a rejected mode, expected 1", mode);
    }
    check.expect_ok(tag + " gpk_set_math_mode(DEFAULT)", ctx, [&] { return gpk_set_math_mode(ctx, GPK_MATH_DEFAULT); });
    check.expect(tag + " gpk_get_math_mode mode=NULL", ctx, GPK_ERROR_INVALID_ARGUMENT, {"mode"}, {},
                 [&] { return gpk_get_math_mode(ctx, nullptr); });
    check.expect(tag + " gpk_set_math_mode(NULL)", nullptr, GPK_ERROR_INVALID_HANDLE, {"ctx"}, {},
                 [&] { return gpk_set_math_mode(nullptr, GPK_MATH_TF32); });
    mode = 12345;
    check.expect("gpk_get_math_mode(NULL)", nullptr, GPK_ERROR_INVALID_HANDLE, {"ctx"}, {{&mode, sizeof mode}},
                 [&] { return gpk_get_math_mode(nullptr, &mode); });
}

// A 16-bit dtype on a variant without it: NOT_SUPPORTED naming the variant and the
// dtype, outputs untouched; every other variant computes it. On the CUDA backend
// gemm's "naive" and transpose's "cublas_geam" are known not to take them.
void dtype16_support_rules(Suite &suite, Checker &check, gpk_context *ctx, const std::string &tag) {
    std::vector<uint16_t> a(64, 0x3C00), b(64, 0x3C00), c(64, 0x4000);  // F16 1, 1, 2 (BF16: 1.875, 1.875, 2)
    float result = -1.0f;
    for (int op : {GPK_OP_GEMM, GPK_OP_REDUCE, GPK_OP_TRANSPOSE}) {
        for (const std::string &variant : suite.variants(op)) {
            if (variant == "auto" || gpk_set_variant(ctx, op, variant.c_str()) != GPK_SUCCESS) continue;
            for (int dtype : {GPK_F16, GPK_BF16}) {
                auto call = [&]() -> gpk_status {
                    if (op == GPK_OP_GEMM)
                        return gpk_gemm(ctx, dtype, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, 4, 4, 4, 1.0, a.data(), 4,
                                        b.data(), 4, 0.0, c.data(), 4);
                    if (op == GPK_OP_REDUCE) return gpk_reduce(ctx, dtype, GPK_SUM, a.data(), 16, &result);
                    return gpk_transpose(ctx, dtype, GPK_COL_MAJOR, 4, 4, a.data(), 4, c.data(), 4);
                };
                const std::string what = format("%s %s variant=%s %s", tag.c_str(), op_name(op), variant.c_str(),
                                                dtype_name(dtype));
                const bool known_unsupported = suite.cuda() && ((op == GPK_OP_GEMM && variant == "naive") ||
                                                                (op == GPK_OP_TRANSPOSE && variant == "cublas_geam"));
                const std::vector<Region> outputs = {{c.data(), c.size() * 2}, {&result, sizeof result}};
                std::vector<uint16_t> c_before = c;
                const gpk_status st = call();
                if (st == GPK_ERROR_NOT_SUPPORTED || known_unsupported) {
                    c = c_before;
                    const std::string dname = dtype == GPK_F16 ? "GPK_F16" : "GPK_BF16";
                    check.expect(what + " names the variant", ctx, GPK_ERROR_NOT_SUPPORTED, {variant}, outputs, call);
                    check.expect(what + " names the dtype", ctx, GPK_ERROR_NOT_SUPPORTED, {dname}, outputs, call);
                } else {
                    Case k(suite, what + " computes");
                    if (st != GPK_SUCCESS) k.fail("status %s: %s", gpk_status_string(st), gpk_last_error(ctx));
                    if (st == GPK_SUCCESS && gpk_synchronize(ctx) != GPK_SUCCESS) k.fail("gpk_synchronize failed");
                }
            }
        }
        gpk_set_variant(ctx, op, nullptr);
    }
}

void stream_rules(Checker &check, gpk_context *ctx, const std::string &tag, bool host) {
    if (!host) return;
    int fake_stream = 0;
    check.expect(tag + " gpk_set_stream non-NULL on the host backend", ctx, GPK_ERROR_NOT_SUPPORTED,
                 {"cuda_stream", "stream"}, {}, [&] { return gpk_set_stream(ctx, &fake_stream); });
    check.expect(tag + " gpk_set_validation(1) on the host backend", ctx, GPK_ERROR_NOT_SUPPORTED,
                 {"validation", "enabled"}, {}, [&] { return gpk_set_validation(ctx, 1); });
}

// gpk_set_staging and gpk_stage_trace: the same rules on both backends.
void staging_rules(Checker &check, gpk_context *ctx, const std::string &tag) {
    for (int streams : {0, -1, 17, 1000, INT_MIN, INT_MAX})
        check.expect(tag + format(" gpk_set_staging streams=%d", streams), ctx, GPK_ERROR_INVALID_ARGUMENT,
                     {"streams"}, {}, [&] { return gpk_set_staging(ctx, streams, 0, 0); });
    check.expect(tag + " gpk_set_staging(NULL)", nullptr, GPK_ERROR_INVALID_HANDLE, {"ctx"}, {},
                 [&] { return gpk_set_staging(nullptr, 4, 0, 0); });
    for (int streams : {1, 16})
        check.expect_ok(tag + format(" gpk_set_staging streams=%d", streams), ctx,
                        [&] { return gpk_set_staging(ctx, streams, SIZE_MAX, SIZE_MAX); });
    check.expect_ok(tag + " gpk_set_staging defaults", ctx, [&] { return gpk_set_staging(ctx, 4, 0, 0); });

    gpk_stage_event events[2];
    std::memset(events, 0xA5, sizeof events);
    int64_t count = -7;
    const std::vector<Region> outputs = {{events, sizeof events}, {&count, sizeof count}};
    check.expect(tag + " gpk_stage_trace count=NULL", ctx, GPK_ERROR_INVALID_ARGUMENT, {"count"},
                 {{events, sizeof events}}, [&] { return gpk_stage_trace(ctx, events, 2, nullptr); });
    for (int64_t capacity : {int64_t{-1}, INT64_MIN})
        check.expect(tag + format(" gpk_stage_trace capacity=%" PRId64, capacity), ctx, GPK_ERROR_INVALID_ARGUMENT,
                     {"capacity"}, outputs, [&] { return gpk_stage_trace(ctx, events, capacity, &count); });
    check.expect(tag + " gpk_stage_trace events=NULL capacity=1", ctx, GPK_ERROR_INVALID_ARGUMENT, {"events"},
                 outputs, [&] { return gpk_stage_trace(ctx, nullptr, 1, &count); });
    check.expect(tag + " gpk_stage_trace(NULL)", nullptr, GPK_ERROR_INVALID_HANDLE, {"ctx"}, outputs,
                 [&] { return gpk_stage_trace(nullptr, events, 2, &count); });
    check.expect_ok(tag + " gpk_stage_trace(events NULL, capacity 0)", ctx,
                    [&] { return gpk_stage_trace(ctx, nullptr, 0, &count); });
}

}  // namespace

// gpk_gemm_strided_batched: gemm's rules for one product, then the batch's (strides,
// batch_count, C matrices overlapping one another or an input, spans past 2^63 bytes),
// each naming the parameter; nothing written on any of them.
void gemm_batched_rules(Checker &check, gpk_context *ctx, const std::string &tag, void *device_buffer) {
    // Column-major 4 x 5 C from 4 x 3 A and 3 x 5 B, three products packed.
    const int64_t m = 4, n = 5, k = 3, batch = 3;
    std::vector<double> a(512, 0.5), b(512, 0.25), c(512, 7.0);
    struct Call {
        int dtype = GPK_F64, layout = GPK_COL_MAJOR, transa = GPK_NO_TRANS, transb = GPK_NO_TRANS;
        int64_t m, n, k, lda, sa, ldb, sb, ldc, sc, batch;
        const void *A, *B;
        void *C;
    };
    const Call base{GPK_F64, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, m, n, k, m, m * k, k, k * n, m, m * n, batch,
                    a.data(), b.data(), c.data()};
    auto run = [&](const Call &q) {
        return [&, q] {
            return gpk_gemm_strided_batched(ctx, q.dtype, q.layout, q.transa, q.transb, q.m, q.n, q.k, 1.0, q.A, q.lda,
                                            q.sa, q.B, q.ldb, q.sb, 0.0, q.C, q.ldc, q.sc, q.batch);
        };
    };
    auto outputs = [&] { return std::vector<Region>{{c.data(), c.size() * sizeof(double)}, {a.data(), a.size() * sizeof(double)},
                                                    {b.data(), b.size() * sizeof(double)}}; };
    auto bad = [&](const char *what, const Call &q, std::vector<std::string> words,
                   gpk_status want = GPK_ERROR_INVALID_ARGUMENT) {
        check.expect(tag + " gpk_gemm_strided_batched " + what, ctx, want, std::move(words), outputs(), run(q));
    };
    // The valid call and its boundaries: stride 0 for A or B, stride_c exactly one C,
    // batch_count 0 (quick return, NULL arrays allowed), 1 with any stride_c.
    check.expect_ok(tag + " gpk_gemm_strided_batched valid", ctx, run(base));
    {
        Call q = base;
        q.sa = 0;
        check.expect_ok(tag + " gpk_gemm_strided_batched stride_a=0", ctx, run(q));
        q = base;
        q.sb = 0;
        check.expect_ok(tag + " gpk_gemm_strided_batched stride_b=0", ctx, run(q));
        q = base;
        q.batch = 0;
        q.A = q.B = nullptr;
        q.C = nullptr;
        q.sc = 0;
        check.expect_ok(tag + " gpk_gemm_strided_batched batch_count=0 NULL arrays", ctx, run(q));
        q = base;
        q.batch = 1;
        q.sc = 0;
        check.expect_ok(tag + " gpk_gemm_strided_batched batch_count=1 stride_c=0", ctx, run(q));
    }
    // gemm's own rules.
    {
        Call q = base;
        q.dtype = 9;
        bad("dtype=9", q, {"dtype"});
        q = base;
        q.dtype = GPK_I32;
        bad("dtype=I32", q, {"dtype"}, GPK_ERROR_NOT_SUPPORTED);
        q = base;
        q.layout = 7;
        bad("layout=7", q, {"layout"});
        q = base;
        q.transb = 0;
        bad("transb=0", q, {"transb"});
        q = base;
        q.m = -1;
        bad("m=-1", q, {"m"});
        q = base;
        q.lda = m - 1;
        bad("lda < m", q, {"lda"});
        q = base;
        q.ldc = m - 1;
        bad("ldc < m", q, {"ldc"});
        q = base;
        q.A = nullptr;
        bad("A=NULL", q, {"A"});
        q = base;
        q.C = nullptr;
        bad("C=NULL", q, {"C"});
    }
    // The batch's rules.
    {
        Call q = base;
        q.sa = -1;
        bad("stride_a=-1", q, {"stride_a"});
        q = base;
        q.sb = -12;
        bad("stride_b=-12", q, {"stride_b"});
        q = base;
        q.sc = -20;
        bad("stride_c=-20", q, {"stride_c"});
        q = base;
        q.batch = -1;
        bad("batch_count=-1", q, {"batch_count"});
        q = base;
        q.sc = m * n - 1;
        bad("stride_c one short of a C matrix", q, {"stride_c"});
        q = base;
        q.sc = 0;
        bad("stride_c=0 with batch_count 3", q, {"stride_c"});
        q = base;
        q.ldc = m + 2;
        q.sc = (n - 1) * (m + 2) + m - 1;  // one element short of the span with padded ldc
        bad("stride_c one short of a padded C matrix", q, {"stride_c"});
        // C of the last product reaching into A's last matrix.
        q = base;
        q.C = c.data();
        q.A = c.data() + 2 * q.sc + 3;
        bad("A overlapping the last C matrix", q, {"A", "C"});
        q = base;
        q.B = c.data() + q.sc + 1;
        q.sb = 0;
        bad("shared B inside the second C matrix", q, {"B", "C"});
        q = base;
        q.C = b.data() + 2 * q.sb + 2;  // past B's first matrix but inside the batch of Bs
        bad("C overlapping the batch of B matrices", q, {"B", "C"});
        // Spans past 2^63 bytes: a stride times batch_count that overflows.
        q = base;
        q.sa = INT64_MAX / 2;
        bad("stride_a * batch_count overflowing", q, {"stride_a"});
        q = base;
        q.sb = INT64_MAX / 3;
        bad("stride_b * batch_count overflowing", q, {"stride_b"});
        q = base;
        q.sc = INT64_MAX / 4;
        bad("stride_c * batch_count past 2^63 bytes", q, {"stride_c"});
        q = base;
        q.batch = INT64_MAX;
        bad("batch_count=2^63-1", q, {"stride_a", "stride_b", "stride_c", "batch_count"});
        // Whatever the matrices hold: with k == 0 (A and B not read, possibly NULL) or
        // m or n == 0 (nothing written), a stride times batch_count overflowing int64
        // bytes is refused all the same.
        q = base;
        q.k = 0;
        q.sa = INT64_MAX / 2;
        bad("k=0, stride_a * batch_count overflowing", q, {"stride_a"});
        q.A = q.B = nullptr;
        bad("k=0, A and B NULL, stride_a * batch_count overflowing", q, {"stride_a"});
        q = base;
        q.k = 0;
        q.A = q.B = nullptr;
        q.sb = INT64_MAX / 3;
        bad("k=0, stride_b * batch_count overflowing", q, {"stride_b"});
        q = base;
        q.m = 0;
        q.sc = INT64_MAX / 4;
        bad("m=0, stride_c * batch_count overflowing", q, {"stride_c"});
        // The boundary, with n == 0: the last C matrix starting at 2^63 bytes, one past
        // the int64 range, and 16 bytes before it.
        q = base;
        q.n = 0;
        q.sc = int64_t{1} << 59;
        bad("n=0, the last C matrix at 2^63 bytes", q, {"stride_c"});
        q.sc = (int64_t{1} << 59) - 1;
        check.expect_ok(tag + " gpk_gemm_strided_batched n=0, the last C matrix at 2^63 - 16 bytes", ctx, run(q));
        // The valid side: k == 0, A and B NULL, strides whose offsets fit in int64
        // bytes (nothing is read at them: C = beta C).
        q = base;
        q.k = 0;
        q.A = q.B = nullptr;
        q.sa = q.sb = INT64_MAX / 16 / (batch - 1);
        check.expect_ok(tag + " gpk_gemm_strided_batched k=0, A and B NULL, strides that fit", ctx, run(q));
    }
    if (device_buffer != nullptr) {
        Call q = base;
        q.batch = 1;
        q.C = device_buffer;
        bad("C in device memory on the host backend", q, {"C"});
    }
}

int main(int argc, char **argv) {
    Suite suite("test_errors", argc, argv);
    Checker check(suite);
    gpk_context *ctx = suite.ctx();
    const std::string tag = suite.backend_name();
    const bool host = !suite.cuda();

    // Device memory passed to the host backend must be refused; that needs a GPU,
    // and is skipped (not counted) without one.
    DeviceArray device;
    void *device_buffer = nullptr;
    if (host) {
        int count = 0;
        if (cudaGetDeviceCount(&count) == cudaSuccess && count > 0 && device.allocate(4096)) device_buffer = device.get();
        cudaGetLastError();  // a failed probe must not linger in the CUDA runtime's state
    }

    if (host) context_rules(suite, check);
    if (host) no_device_message(suite);
    variant_words(suite, ctx, host);
    variant_rules(check, ctx, tag);
    for (int dtype : std::initializer_list<int>{GPK_F64, GPK_F16, GPK_BF16}) gemm_rules(check, ctx, tag, device_buffer, dtype);
    gemm_batched_rules(check, ctx, tag, device_buffer);
    math_mode_rules(suite, check, ctx, tag);
    dtype16_support_rules(suite, check, ctx, tag);
    reduce_rules(check, ctx, tag, device_buffer);
    transpose_rules(check, ctx, tag, device_buffer);
    pi_rules(check, ctx, tag);
    stream_rules(check, ctx, tag, host);
    staging_rules(check, ctx, tag);

    // Every variant must apply the same rules: repeat a few with each selected.
    for (int op : std::initializer_list<int>{GPK_OP_GEMM, GPK_OP_REDUCE, GPK_OP_TRANSPOSE, GPK_OP_GEMM_BATCHED}) {
        for (const std::string &variant : suite.variants(op)) {
            if (gpk_set_variant(ctx, op, variant.c_str()) != GPK_SUCCESS) continue;  // test_api's concern
            const std::string vtag = tag + " variant=" + variant;
            std::vector<double> a(64, 1.0), c(64, 2.0);
            unsigned char result[16];
            std::memset(result, 0xA5, sizeof result);
            if (op == GPK_OP_GEMM)
                check.expect(vtag + " gpk_gemm lda=1 < 4", ctx, GPK_ERROR_INVALID_ARGUMENT, {"lda"},
                             {{c.data(), c.size() * sizeof(double)}}, [&] {
                                 return gpk_gemm(ctx, GPK_F64, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, 4, 4, 4, 1.0,
                                                 a.data(), 1, a.data(), 4, 0.0, c.data(), 4);
                             });
            if (op == GPK_OP_GEMM_BATCHED)
                check.expect(vtag + " gpk_gemm_strided_batched stride_c=8 < 16", ctx, GPK_ERROR_INVALID_ARGUMENT,
                             {"stride_c"}, {{c.data(), c.size() * sizeof(double)}}, [&] {
                                 return gpk_gemm_strided_batched(ctx, GPK_F64, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS,
                                                                 4, 4, 4, 1.0, a.data(), 4, 0, a.data(), 4, 16, 0.0,
                                                                 c.data(), 4, 8, 2);
                             });
            if (op == GPK_OP_REDUCE)
                check.expect(vtag + " gpk_reduce MAX n=0", ctx, GPK_ERROR_INVALID_ARGUMENT, {"n"},
                             {{result, sizeof result}},
                             [&] { return gpk_reduce(ctx, GPK_F32, GPK_MAX, a.data(), 0, result); });
            if (op == GPK_OP_TRANSPOSE)
                check.expect(vtag + " gpk_transpose A == B", ctx, GPK_ERROR_INVALID_ARGUMENT, {"A", "B"},
                             {{c.data(), c.size() * sizeof(double)}},
                             [&] { return gpk_transpose(ctx, GPK_I64, GPK_ROW_MAJOR, 4, 4, c.data(), 4, c.data(), 4); });
        }
        gpk_set_variant(ctx, op, nullptr);
    }

    return suite.finish();
}
