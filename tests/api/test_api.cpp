// The context and information functions: version, status strings, backends,
// variant lists, sticky settings, streams, validation mode and last_error.
#include "../harness.hpp"

#include <set>

namespace {

using namespace gpkt;

const gpk_status kStatuses[] = {GPK_SUCCESS,          GPK_ERROR_INVALID_ARGUMENT, GPK_ERROR_INVALID_HANDLE,
                                GPK_ERROR_NO_DEVICE,  GPK_ERROR_OUT_OF_MEMORY,    GPK_ERROR_NOT_SUPPORTED,
                                GPK_ERROR_CUDA,       GPK_ERROR_CUBLAS,           GPK_ERROR_CURAND,
                                GPK_ERROR_VALIDATION, GPK_ERROR_INTERNAL};
const int kOps[] = {GPK_OP_GEMM, GPK_OP_REDUCE, GPK_OP_TRANSPOSE, GPK_OP_PI, GPK_OP_GEMM_BATCHED};

void version(Suite &suite) {
    Case c(suite, "gpk_version");
    int major = -1, minor = -1, patch = -1;
    gpk_version(&major, &minor, &patch);
    if (major != GPK_VERSION_MAJOR || minor != GPK_VERSION_MINOR || patch != GPK_VERSION_PATCH)
        c.fail("runtime version %d.%d.%d, header %d.%d.%d", major, minor, patch, GPK_VERSION_MAJOR, GPK_VERSION_MINOR,
               GPK_VERSION_PATCH);
    if (GPK_VERSION_NUMBER != GPK_VERSION_MAJOR * 10000 + GPK_VERSION_MINOR * 100 + GPK_VERSION_PATCH)
        c.fail("GPK_VERSION_NUMBER disagrees with its parts");
    // Any pointer may be NULL.
    gpk_version(nullptr, nullptr, nullptr);
    int only_minor = -1;
    gpk_version(nullptr, &only_minor, nullptr);
    if (only_minor != GPK_VERSION_MINOR) c.fail("gpk_version(NULL, &minor, NULL) wrote %d", only_minor);
}

void status_strings(Suite &suite) {
    Case c(suite, "gpk_status_string");
    std::set<std::string> seen;
    for (gpk_status st : kStatuses) {
        const char *s = gpk_status_string(st);
        if (s == nullptr || s[0] == '\0') {
            c.fail("gpk_status_string(%d) is %s", static_cast<int>(st), s == nullptr ? "NULL" : "empty");
            continue;
        }
        if (!seen.insert(s).second) c.fail("gpk_status_string(%d) = \"%s\" is not distinct", static_cast<int>(st), s);
    }
    for (int unknown : {-1, 10, 42, 98, 100, 1000}) {
        const char *s = gpk_status_string(static_cast<gpk_status>(unknown));
        if (s == nullptr)
            c.fail("gpk_status_string(%d) is NULL", unknown);
        else if (seen.count(s) != 0)
            c.fail("gpk_status_string(%d) = \"%s\" is the name of a real status", unknown, s);
    }
}

void contexts(Suite &suite) {
    {
        Case c(suite, "gpk_destroy(NULL)");
        c.expect(gpk_destroy(nullptr), GPK_SUCCESS, "gpk_destroy(NULL)");
    }
    {
        Case c(suite, "gpk_create AUTO");
        gpk_context *ctx = nullptr;
        if (c.expect(gpk_create(&ctx, GPK_BACKEND_AUTO, 0), GPK_SUCCESS, "gpk_create(AUTO)")) {
            int backend = -1;
            c.expect(gpk_get_backend(ctx, &backend), GPK_SUCCESS, "gpk_get_backend");
            if (backend != GPK_BACKEND_CUDA && backend != GPK_BACKEND_HOST)
                c.fail("AUTO resolved to backend %d, expected CUDA (1) or HOST (2)", backend);
            // AUTO takes the GPU exactly when the CUDA backend is available.
            gpk_context *cuda = nullptr;
            const gpk_status st = gpk_create(&cuda, GPK_BACKEND_CUDA, 0);
            if (st == GPK_SUCCESS && backend != GPK_BACKEND_CUDA)
                c.fail("AUTO took the host backend although a CUDA context can be created");
            if (st == GPK_ERROR_NO_DEVICE && backend != GPK_BACKEND_HOST)
                c.fail("AUTO took backend %d although CUDA has no device", backend);
            gpk_destroy(cuda);
        }
        c.expect(gpk_destroy(ctx), GPK_SUCCESS, "gpk_destroy");
    }
    {
        Case c(suite, format("gpk_get_backend %s", suite.backend_name()));
        int backend = -1;
        c.expect(gpk_get_backend(suite.ctx(), &backend), GPK_SUCCESS, "gpk_get_backend");
        if (backend != suite.backend()) c.fail("backend %d, expected %d", backend, suite.backend());
    }
    {
        // Contexts are independent: many at once, each with its own settings.
        Case c(suite, "several contexts at once");
        gpk_context *ctxs[4] = {nullptr, nullptr, nullptr, nullptr};
        for (gpk_context *&ctx : ctxs) c.expect(gpk_create(&ctx, suite.backend(), 0), GPK_SUCCESS, "gpk_create");
        for (gpk_context *ctx : ctxs) c.expect(gpk_destroy(ctx), GPK_SUCCESS, "gpk_destroy");
    }
}

void variants(Suite &suite) {
    gpk_context *ctx = suite.ctx();
    for (int op : kOps) {
        Case c(suite, format("variants of %s", op_name(op)));
        int count = -1;
        if (!c.expect(gpk_variant_count(ctx, op, &count), GPK_SUCCESS, "gpk_variant_count")) continue;
        if (count < 1) c.fail("count %d: every op has at least one variant", count);
        // The CUDA backend lists the vendor library first, then at least one rung.
        if (suite.cuda() && count < 2) c.fail("count %d on the CUDA backend: vendor plus rungs expected", count);
        std::set<std::string> names;
        for (int i = 0; i < count; ++i) {
            const char *name = gpk_variant_name(ctx, op, i);
            if (name == nullptr || name[0] == '\0') {
                c.fail("variant %d has %s name", i, name == nullptr ? "a NULL" : "an empty");
                continue;
            }
            if (!names.insert(name).second) c.fail("variant name \"%s\" appears twice", name);
            if (std::strcmp(name, "auto") == 0) c.fail("\"auto\" is listed as a variant");
            if (!c.expect(gpk_set_variant(ctx, op, name), GPK_SUCCESS, "gpk_set_variant(listed name)"))
                c.fail("listed variant \"%s\" cannot be selected", name);
        }
        for (int index : {-1, count, count + 1, 1000})
            if (gpk_variant_name(ctx, op, index) != nullptr) c.fail("gpk_variant_name(index %d) is not NULL", index);
        if (gpk_variant_name(nullptr, op, 0) != nullptr) c.fail("gpk_variant_name(NULL ctx) is not NULL");
        c.expect(gpk_set_variant(ctx, op, nullptr), GPK_SUCCESS, "gpk_set_variant(NULL)");
        c.expect(gpk_set_variant(ctx, op, "auto"), GPK_SUCCESS, "gpk_set_variant(\"auto\")");
    }
    Case c(suite, "gpk_variant_name unknown op");
    for (int op : {-1, 5, 7})
        if (gpk_variant_name(ctx, op, 0) != nullptr) c.fail("gpk_variant_name(op %d) is not NULL", op);
}

template <class T>
void small_gemm(Case &c, gpk_context *ctx, int dtype) {
    T a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 0.5, 0.25, 2, 4, 8}, cm[4] = {0, 0, 0, 0};
    c.expect(gpk_gemm(ctx, dtype, GPK_ROW_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, 2, 2, 3, 1.0, a, 3, b, 2, 0.0, cm, 2),
             GPK_SUCCESS, "gpk_gemm");
    // [1 2 3; 4 5 6] * [1 0.5; 0.25 2; 4 8] = [13.5 28.5; 29.25 60]
    const T want[4] = {13.5, 28.5, 29.25, 60.0};
    for (int i = 0; i < 4; ++i)
        if (cm[i] != want[i]) c.fail("gemm element %d = %g, expected %g", i, double(cm[i]), double(want[i]));
}

// One small call of each op, which must succeed; used after changing settings.
// The gemm call is F32 unless gemm_f64 (for a variant that supports only F64).
// Validation mode (the context has it on) over F16 and BF16 on every variant of
// gemm, reduce and transpose, and over F32 gemm in GPK_MATH_TF32: the comparison must
// accept each variant that takes the call, within the 16-bit or TF32 tolerance; a
// variant without the dtype says NOT_SUPPORTED.
void validation_16bit_and_tf32(Suite &suite, gpk_context *ctx) {
    constexpr int64_t kN = 48;
    Rng rng(16);
    std::vector<float> af(kN * kN), bf(kN * kN);
    for (float &v : af) v = static_cast<float>(rng.signed_unit());
    for (float &v : bf) v = static_cast<float>(rng.signed_unit());
    for (int dtype : std::initializer_list<int>{GPK_F16, GPK_BF16}) {
        std::vector<uint16_t> a(kN * kN), b(kN * kN), c(kN * kN);
        for (size_t i = 0; i < a.size(); ++i) a[i] = encode16(dtype, af[i]), b[i] = encode16(dtype, bf[i]);
        float result = 0;
        for (int op : {GPK_OP_GEMM, GPK_OP_REDUCE, GPK_OP_TRANSPOSE}) {
            for (const std::string &variant : suite.variants(op)) {
                Case v(suite, format("validation mode %s %s variant=%s", op_name(op), dtype_name(dtype), variant.c_str()));
                if (!suite.select(v, op, variant)) continue;
                gpk_status st;
                if (op == GPK_OP_GEMM)
                    st = gpk_gemm(ctx, dtype, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_TRANS, kN, kN, kN, 1.5, a.data(), kN,
                                  b.data(), kN, 0.0, c.data(), kN);
                else if (op == GPK_OP_REDUCE)
                    st = gpk_reduce(ctx, dtype, GPK_SUM, a.data(), kN * kN, &result);
                else
                    st = gpk_transpose(ctx, dtype, GPK_ROW_MAJOR, kN, kN - 1, a.data(), kN - 1, c.data(), kN);
                if (st == GPK_ERROR_NOT_SUPPORTED && variant != "auto") v.mark_unsupported();
                else v.expect(st, GPK_SUCCESS, "the call");
                gpk_set_variant(ctx, op, nullptr);
            }
        }
    }
    Case m(suite, "validation mode: gpk_set_math_mode(TF32)");
    if (!m.expect(gpk_set_math_mode(ctx, GPK_MATH_TF32), GPK_SUCCESS, "gpk_set_math_mode(TF32)")) return;
    std::vector<float> c(kN * kN);
    for (const std::string &variant : suite.variants(GPK_OP_GEMM)) {
        Case v(suite, format("validation mode gemm F32 TF32 variant=%s", variant.c_str()));
        if (!suite.select(v, GPK_OP_GEMM, variant)) continue;
        const gpk_status st = gpk_gemm(ctx, GPK_F32, GPK_ROW_MAJOR, GPK_TRANS, GPK_NO_TRANS, kN, kN, kN, 1.0,
                                       af.data(), kN, bf.data(), kN, 0.0, c.data(), kN);
        if (st == GPK_ERROR_NOT_SUPPORTED && variant != "auto") v.mark_unsupported();
        else v.expect(st, GPK_SUCCESS, "gpk_gemm F32 in TF32 mode");
        gpk_set_variant(ctx, GPK_OP_GEMM, nullptr);
    }
    m.expect(gpk_set_math_mode(ctx, GPK_MATH_DEFAULT), GPK_SUCCESS, "gpk_set_math_mode(DEFAULT)");
}

// A named transpose rung with vector accesses (tile64_vec2, tile64_vec16) may refuse
// the 2 x 3 call: its leading dimensions (and, where host arrays are staged whole
// with packed leading dimensions, the staged ones) are odd. The refusal must name the
// variant, say it cannot take the call and write nothing; the rung must then take a
// call whose leading dimensions suit every vector width, and get it right.
void small_transpose(Case &c, gpk_context *ctx, const std::string &variant) {
    double t[6] = {0, 0, 0, 0, 0, 0};
    const double s[6] = {1, 2, 3, 4, 5, 6};
    const gpk_status st = gpk_transpose(ctx, GPK_F64, GPK_COL_MAJOR, 2, 3, s, 2, t, 3);
    if (st == GPK_ERROR_NOT_SUPPORTED && variant != "auto") {
        const std::string why = gpk_last_error(ctx);
        if (why.find("cannot take this call") == std::string::npos || why.find("'" + variant + "'") == std::string::npos)
            c.fail("gpk_transpose -> NOT_SUPPORTED without saying variant '%s' cannot take this call: %s",
                   variant.c_str(), why.c_str());
        for (int i = 0; i < 6; ++i)
            if (t[i] != 0) c.fail("transpose element %d = %g written by a refused call", i, t[i]);
        // 4 x 8: leading dimensions 4 and 8, multiples of every vector's element count.
        std::vector<double> a(32), b(32, 0.0);
        for (int i = 0; i < 32; ++i) a[i] = i + 1;
        c.expect(gpk_transpose(ctx, GPK_F64, GPK_COL_MAJOR, 4, 8, a.data(), 4, b.data(), 8), GPK_SUCCESS,
                 "gpk_transpose 4 x 8");
        for (int i = 0; i < 4; ++i)
            for (int j = 0; j < 8; ++j)
                if (b[j + i * 8] != a[i + j * 4])
                    c.fail("4 x 8 transpose: B(%d, %d) = %g, expected %g", j, i, b[j + i * 8], a[i + j * 4]);
        return;
    }
    c.expect(st, GPK_SUCCESS, "gpk_transpose");
    const double tw[6] = {1, 3, 5, 2, 4, 6};
    for (int i = 0; i < 6; ++i)
        if (t[i] != tw[i]) c.fail("transpose element %d = %g, expected %g", i, t[i], tw[i]);
}

void small_calls(Case &c, gpk_context *ctx, bool gemm_f64 = false, const std::string &transpose_variant = "auto") {
    if (gemm_f64)
        small_gemm<double>(c, ctx, GPK_F64);
    else
        small_gemm<float>(c, ctx, GPK_F32);
    int64_t sum = 0;
    const int32_t x[5] = {1, -2, 3, -4, 2000000000};
    c.expect(gpk_reduce(ctx, GPK_I32, GPK_SUM, x, 5, &sum), GPK_SUCCESS, "gpk_reduce");
    if (sum != 1999999998) c.fail("reduce sum %" PRId64 ", expected 1999999998", sum);
    small_transpose(c, ctx, transpose_variant);
    gpk_pi_result r;
    c.expect(gpk_pi(ctx, 100000, 7, &r), GPK_SUCCESS, "gpk_pi");
    if (r.samples != 100000) c.fail("pi samples %" PRIu64, r.samples);
}

// Three 2 x 2 products of host arrays, F32 and F64, under the variant selected; a
// rung that does not take a dtype says so naming itself. Validation mode compares
// each product with its checker.
void small_batched(Case &c, gpk_context *ctx, const std::string &variant) {
    for (int dtype : {GPK_F32, GPK_F64}) {
        double a[12], b[12], cm[12], want[12];
        float af[12], bf[12], cf[12];
        for (int i = 0; i < 12; ++i) a[i] = af[i] = static_cast<float>(i + 1), b[i] = bf[i] = static_cast<float>(12 - i) / 4;
        for (int p = 0; p < 3; ++p)
            for (int j = 0; j < 2; ++j)
                for (int i = 0; i < 2; ++i)
                    want[4 * p + i + 2 * j] = a[4 * p + i] * b[4 * p + 2 * j] + a[4 * p + i + 2] * b[4 * p + 2 * j + 1];
        const gpk_status st =
            dtype == GPK_F64
                ? gpk_gemm_strided_batched(ctx, dtype, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, 2, 2, 2, 1.0, a, 2, 4,
                                           b, 2, 4, 0.0, cm, 2, 4, 3)
                : gpk_gemm_strided_batched(ctx, dtype, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, 2, 2, 2, 1.0, af, 2, 4,
                                           bf, 2, 4, 0.0, cf, 2, 4, 3);
        if (st == GPK_ERROR_NOT_SUPPORTED && variant != "auto" && std::strstr(gpk_last_error(ctx), variant.c_str()))
            continue;
        if (!c.expect(st, GPK_SUCCESS, "gpk_gemm_strided_batched")) continue;
        for (int i = 0; i < 12; ++i) {
            const double got = dtype == GPK_F64 ? cm[i] : cf[i];
            if (got != want[i]) c.fail("%s batched C element %d = %g, expected %g", dtype == GPK_F64 ? "F64" : "F32", i, got, want[i]);
        }
    }
}

void settings(Suite &suite) {
    gpk_context *ctx = suite.ctx();
    {
        Case c(suite, "gpk_set_stream(NULL) and gpk_synchronize");
        c.expect(gpk_set_stream(ctx, nullptr), GPK_SUCCESS, "gpk_set_stream(NULL)");
        c.expect(gpk_synchronize(ctx), GPK_SUCCESS, "gpk_synchronize");
        small_calls(c, ctx);
        c.expect(gpk_synchronize(ctx), GPK_SUCCESS, "gpk_synchronize after calls");
    }
    if (!suite.cuda()) {
        Case c(suite, "gpk_set_validation on the host backend");
        c.expect(gpk_set_validation(ctx, 1), GPK_ERROR_NOT_SUPPORTED, "gpk_set_validation(1)");
        if (gpk_last_error(ctx)[0] == '\0') c.fail("NOT_SUPPORTED without a message");
        // Only enabling it is unsupported; off is the state the context is in.
        c.expect(gpk_set_validation(ctx, 0), GPK_SUCCESS, "gpk_set_validation(0)");
        small_calls(c, ctx);
        return;
    }
    {
        // Validation recomputes each call with the vendor library; every variant's
        // result must pass that check.
        Case c(suite, "validation mode");
        c.expect(gpk_set_validation(ctx, 1), GPK_SUCCESS, "gpk_set_validation(1)");
        for (int op : kOps) {
            for (const std::string &variant : suite.variants(op)) {
                Case v(suite, format("validation mode %s variant=%s", op_name(op), variant.c_str()));
                if (!suite.select(v, op, variant)) continue;
                // A gemm variant that refuses F32 (the F64 tensor-core rung by its
                // dtypes, wgmma_ws outside the TF32 math mode) is checked with the F64
                // call instead; one that refuses both (the 16-bit tensor-core rungs) is
                // checked by validation_16bit_and_tf32.
                const auto refuses = [&](int dtype) {
                    float a1[1] = {1}, b1[1] = {1}, c1[1] = {0};
                    double a2[1] = {1}, b2[1] = {1}, c2[1] = {0};
                    const bool f32 = dtype == GPK_F32;
                    return gpk_gemm(ctx, dtype, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, 1, 1, 1, 1.0,
                                    f32 ? static_cast<void *>(a1) : a2, 1, f32 ? static_cast<void *>(b1) : b2, 1, 0.0,
                                    f32 ? static_cast<void *>(c1) : c2, 1) == GPK_ERROR_NOT_SUPPORTED;
                };
                const bool f64_only = op == GPK_OP_GEMM && variant != "auto" && refuses(GPK_F32);
                if (f64_only && refuses(GPK_F64)) {
                    v.mark_unsupported();
                    gpk_set_variant(ctx, op, nullptr);
                    continue;
                }
                small_calls(v, ctx, f64_only, op == GPK_OP_TRANSPOSE ? variant : "auto");
                if (op == GPK_OP_GEMM_BATCHED) small_batched(v, ctx, variant);
                gpk_set_variant(ctx, op, nullptr);
            }
        }
        validation_16bit_and_tf32(suite, ctx);
        c.expect(gpk_set_validation(ctx, 0), GPK_SUCCESS, "gpk_set_validation(0)");
    }
    {
        // A stream of the caller's: device-pointer calls run on it.
        Case c(suite, "user stream");
        cudaStream_t stream = nullptr;
        if (cudaStreamCreate(&stream) != cudaSuccess) {
            c.fail("cudaStreamCreate failed");
            return;
        }
        c.expect(gpk_set_stream(ctx, stream), GPK_SUCCESS, "gpk_set_stream(stream)");
        const int n = 1 << 16;
        std::vector<double> x(n, 0.5);
        DeviceArray dx(n * sizeof(double)), dr(sizeof(double));
        double sum = 0;
        if (dx.upload(x.data()) && dr.ok()) {
            c.expect(gpk_reduce(ctx, GPK_F64, GPK_SUM, dx.get(), n, dr.get()), GPK_SUCCESS, "gpk_reduce on a stream");
            if (cudaStreamSynchronize(stream) != cudaSuccess) c.fail("cudaStreamSynchronize failed");
            dr.download(&sum);
            if (sum != n * 0.5) c.fail("sum %g, expected %g", sum, n * 0.5);
        } else {
            c.fail("device arrays: %s", dx.error());
        }
        small_calls(c, ctx);
        c.expect(gpk_synchronize(ctx), GPK_SUCCESS, "gpk_synchronize");
        c.expect(gpk_set_stream(ctx, nullptr), GPK_SUCCESS, "gpk_set_stream(NULL)");
        cudaStreamDestroy(stream);
    }
}

void last_error(Suite &suite) {
    Case c(suite, "gpk_last_error");
    gpk_context *fresh = suite.open(suite.backend());
    const char *msg = gpk_last_error(fresh);
    if (msg == nullptr || msg[0] != '\0') c.fail("a fresh context's last error is \"%s\", expected \"\"", msg ? msg : "(NULL)");
    // A failure sets it; a later success does not clear it.
    gpk_reduce(fresh, GPK_F64, GPK_MIN, nullptr, 0, nullptr);
    const std::string after_failure = gpk_last_error(fresh);
    if (after_failure.empty()) c.fail("no message after a failed call");
    if (after_failure != gpk_last_error(nullptr))
        c.fail("context message \"%s\" differs from the thread's \"%s\"", after_failure.c_str(), gpk_last_error(nullptr));
    int backend = 0;
    gpk_get_backend(fresh, &backend);
    if (after_failure != gpk_last_error(fresh)) c.fail("a successful call changed the last error");
    // Contexts keep their own message.
    gpk_context *other = suite.open(suite.backend());
    gpk_variant_count(other, 99, nullptr);
    if (after_failure != gpk_last_error(fresh)) c.fail("a failure on another context changed this one's message");
    if (gpk_last_error(other)[0] == '\0') c.fail("the other context has no message after its failure");
    gpk_destroy(other);
    gpk_destroy(fresh);
}

}  // namespace

int main(int argc, char **argv) {
    Suite suite("test_api", argc, argv);
    version(suite);
    status_strings(suite);
    contexts(suite);
    variants(suite);
    settings(suite);
    last_error(suite);
    return suite.finish();
}
