// gpk_gemm_ex and gpk_gemm_blockscaled against a reference written here from the
// contract: FP8 decoded from the OCP definitions with ldexp (E4M3: bias 7, no
// infinities, S.1111.111 NaN; E5M2: bias 15, IEEE-like), F16/BF16 from theirs
// (harness.hpp), every product and sum in long double, alpha and beta as floats. Each
// element of C must lie within the contract's bound of the exact value:
//   2^-9 * sum_p |alpha s a b| + |beta c| 2^-24, plus one rounding to C's dtype,
// NaN exactly where the exact value is NaN, infinities where it is infinite; padding
// of C (ldc above the minimum) untouched.
// Cases: E4M3, E5M2 and their mixes with C F32/F16/BF16, F16 and BF16 with F32 C;
// sizes 1, 17, 1000 and 4097 in some dimension; both layouts, every transpose;
// leading dimensions above the minimum; beta == 0 with NaN in C; k == 0; values near
// +-448, subnormals, NaN and infinite inputs; block scales laid out so that swapping
// their indices changes the result; and every bad argument, named in gpk_last_error.
// On the CUDA backend every rung runs every case (those that refuse FP8 by name count
// as unsupported), with host, device and mixed arrays.
#include "../harness.hpp"

#include <cmath>
#include <string>
#include <vector>

using namespace gpkt;
using Real = long double;

namespace {

// ---- FP8 from its definition -------------------------------------------------------

Real fp8_value(int dtype, uint8_t b) {
    const bool e5 = dtype == GPK_F8E5M2;
    const int man = e5 ? 2 : 3, bias = e5 ? 15 : 7;
    const int e = (b >> man) & (e5 ? 0x1F : 0xF), m = b & ((1 << man) - 1);
    Real v;
    if (e5 && e == 31)
        v = m == 0 ? std::numeric_limits<Real>::infinity() : std::numeric_limits<Real>::quiet_NaN();
    else if (!e5 && e == 15 && m == 7)
        v = std::numeric_limits<Real>::quiet_NaN();
    else if (e == 0)
        v = std::ldexp(static_cast<Real>(m), 1 - bias - man);
    else
        v = std::ldexp(static_cast<Real>((1 << man) + m), e - bias - man);
    return (b & 0x80) ? -v : v;
}

bool is_fp8(int d) { return d == GPK_F8E4M3 || d == GPK_F8E5M2; }
size_t esize(int d) { return is_fp8(d) ? 1 : d == GPK_F32 ? 4 : 2; }
const char *dname(int d) {
    return d == GPK_F8E4M3 ? "E4M3" : d == GPK_F8E5M2 ? "E5M2" : dtype_name(d);
}

// A random element of `dtype` of moderate size (|v| in about [2^-4, 2^4]) or, one in
// eight, a subnormal or zero, as bits in the element's bytes.
void random_element(Rng &rng, int dtype, unsigned char *out) {
    const bool tiny = rng.range(0, 7) == 0;
    if (is_fp8(dtype)) {
        const bool e5 = dtype == GPK_F8E5M2;
        const int man = e5 ? 2 : 3, bias = e5 ? 15 : 7;
        const int e = tiny ? 0 : static_cast<int>(rng.range(bias - 4, bias + 3));
        const int m = static_cast<int>(rng.range(0, (1 << man) - 1));
        *out = static_cast<uint8_t>((rng.range(0, 1) << 7) | (e << man) | m);
        return;
    }
    const Real v = tiny ? 0 : static_cast<Real>(rng.signed_unit()) * 8;
    const uint16_t h = encode16(dtype, v);
    std::memcpy(out, &h, 2);
}

Real value_of(int dtype, const unsigned char *p) {
    if (is_fp8(dtype)) return fp8_value(dtype, *p);
    if (dtype == GPK_F32) {
        float f;
        std::memcpy(&f, p, 4);
        return f;
    }
    uint16_t h;
    std::memcpy(&h, p, 2);
    return decode16(dtype, h);
}

// ---- matrices ---------------------------------------------------------------------

// A matrix's bytes as the caller stores it.
struct Mat {
    int dtype;
    Shape shape;
    std::vector<unsigned char> bytes;
    Mat(int d, Shape s) : dtype(d), shape(s), bytes(s.count() * esize(d)) {}
    unsigned char *at(int64_t r, int64_t c) { return bytes.data() + shape.at(r, c) * esize(dtype); }
    Real get(int64_t r, int64_t c) { return value_of(dtype, at(r, c)); }
};

struct Dims {
    int64_t m, n, k;
};

// One call's description.
struct Call {
    int layout, transa, transb;
    Dims d;
    int a_dtype, b_dtype, c_dtype;
    int64_t pad_a, pad_b, pad_c;  // leading dimensions above the minimum
    double alpha, beta;
    bool nan_c;                   // C filled with NaN (beta == 0)
    bool blockscaled;
    int special;                  // 0 random; 1 near +-448 / largest, subnormals; 2 a NaN (and an infinity)
    bool validate = false;        // in validation mode (the CUDA backend)
};

std::string describe(const Call &c) {
    return format("%s %c%c m=%lld n=%lld k=%lld %s x %s -> %s alpha=%g beta=%g%s%s%s%s",
                  layout_name(c.layout), c.transa == GPK_TRANS ? 'T' : 'N', c.transb == GPK_TRANS ? 'T' : 'N',
                  static_cast<long long>(c.d.m), static_cast<long long>(c.d.n), static_cast<long long>(c.d.k),
                  dname(c.a_dtype), dname(c.b_dtype), dname(c.c_dtype), c.alpha, c.beta,
                  c.nan_c ? " NaN-in-C" : "", c.blockscaled ? " blockscaled" : "",
                  c.special == 1 ? " extremes" : "", c.special == 2 ? " NaN-inputs" : "") +
           (c.validate ? " validated" : "");
}

// The storage of op(A) (m x k), op(B) (k x n) and C (m x n) in the caller's layout.
Shape shape_of(int layout, bool trans, int64_t rows, int64_t cols, int64_t pad) {
    const bool col = layout == GPK_COL_MAJOR;
    // op(X) rows x cols; X stored transposed when trans.
    const int64_t sr = trans ? cols : rows, sc = trans ? rows : cols;
    return Shape{sr, sc, at_least_one(col ? sr : sc) + pad, col};
}

// Where an array goes on the CUDA backend: a device copy, or the host one.
struct Placed {
    DeviceArray dev;
    void *ptr = nullptr;
    bool place(Case &c, bool device, void *host, size_t bytes) {
        ptr = host;
        if (!device) return true;
        if (!dev.allocate(bytes) || !dev.upload(host, bytes)) {
            c.fail("device array of %zu bytes: %s", bytes, dev.error());
            return false;
        }
        ptr = dev.get();
        return true;
    }
    bool back(Case &c, bool device, void *host, size_t bytes) {
        if (device && !dev.download(host, bytes)) {
            c.fail("download: %s", dev.error());
            return false;
        }
        return true;
    }
};

// Rounding of a value to C's dtype: relative unit and absolute floor.
Real unit_of(int c_dtype) { return c_dtype == GPK_F32 ? std::ldexp(1.0L, -24) : unit_roundoff16(c_dtype); }
Real floor_of(int c_dtype) { return c_dtype == GPK_F32 ? std::ldexp(1.0L, -150) : underflow16(c_dtype); }

void run_case(Suite &suite, const Call &call, uint64_t seed) {
    const Dims d = call.d;
    const bool ta = call.transa == GPK_TRANS, tb = call.transb == GPK_TRANS;
    Mat A(call.a_dtype, shape_of(call.layout, ta, d.m, d.k, call.pad_a));
    Mat B(call.b_dtype, shape_of(call.layout, tb, d.k, d.n, call.pad_b));
    Mat C(call.c_dtype, shape_of(call.layout, false, d.m, d.n, call.pad_c));
    Rng rng(seed);
    // op(A)(i, p) lives at A.at(i, p) or, transposed, at A.at(p, i).
    auto a_at = [&](int64_t i, int64_t p) { return ta ? A.at(p, i) : A.at(i, p); };
    auto b_at = [&](int64_t p, int64_t j) { return tb ? B.at(j, p) : B.at(p, j); };
    for (size_t i = 0; i < A.bytes.size(); i += esize(A.dtype)) random_element(rng, A.dtype, &A.bytes[i]);
    for (size_t i = 0; i < B.bytes.size(); i += esize(B.dtype)) random_element(rng, B.dtype, &B.bytes[i]);
    // C: random values, or NaN (beta == 0 must not read it); padding poisoned.
    const size_t ec = esize(call.c_dtype);
    for (size_t i = 0; i < C.shape.count(); ++i) {
        unsigned char *p = &C.bytes[i * ec];
        if (C.shape.is_padding(i)) {
            if (ec == 4) { const float v = poison<float>(); std::memcpy(p, &v, 4); }
            else { const uint16_t v = poison<uint16_t>(); std::memcpy(p, &v, 2); }
        } else if (call.nan_c) {
            if (ec == 4) { const float v = std::nanf(""); std::memcpy(p, &v, 4); }
            else { const uint16_t v = 0x7E00; std::memcpy(p, &v, 2); }
        } else if (ec == 4) {
            const float v = static_cast<float>(rng.signed_unit());
            std::memcpy(p, &v, 4);
        } else {
            const uint16_t v = encode16(call.c_dtype, static_cast<Real>(rng.signed_unit()));
            std::memcpy(p, &v, 2);
        }
    }
    // Special values at chosen places of op(A) and op(B).
    if (call.special != 0 && d.k > 0) {
        for (int64_t i = 0; i < d.m; ++i)
            for (int64_t p = 0; p < d.k; p += 3) {
                if (!is_fp8(A.dtype)) break;
                const bool e5 = A.dtype == GPK_F8E5M2;
                const uint8_t big = e5 ? 0x7B : 0x7E, sub = e5 ? 0x01 : 0x01;  // 57344 / 448; smallest subnormal
                *a_at(i, p) = static_cast<uint8_t>(((i + p) % 2 ? 0x80 : 0) | ((i + p) % 3 ? big : sub));
            }
        if (call.special == 2) {
            // A NaN in row 0 of op(A) and, for E5M2 B, an infinity in column n-1 of op(B).
            if (is_fp8(A.dtype)) *a_at(0, d.k - 1) = A.dtype == GPK_F8E5M2 ? 0x7E : 0x7F;
            if (B.dtype == GPK_F8E5M2) *b_at(0, d.n - 1) = 0xFC;
        }
    }
    // Block scales: scale_a m x kb (q * m + i), scale_b nb x kb (q * nb + j): distinct
    // values, so that reading either at swapped indices changes C.
    const int64_t kb = (d.k + 127) / 128, nb = (d.n + 127) / 128;
    std::vector<float> sa(static_cast<size_t>(std::max<int64_t>(d.m * kb, 1)));
    std::vector<float> sb(static_cast<size_t>(std::max<int64_t>(nb * kb, 1)));
    for (size_t i = 0; i < sa.size(); ++i) sa[i] = std::ldexp(static_cast<float>(1 + i % 7) / 4, static_cast<int>(i % 5) - 2);
    for (size_t i = 0; i < sb.size(); ++i) sb[i] = std::ldexp(static_cast<float>(3 + i % 5) / 4, static_cast<int>(i % 3) - 1);

    // The exact result and its bound, before the call.
    const Real alpha = static_cast<float>(call.alpha), beta = static_cast<float>(call.beta);
    std::vector<Real> want(static_cast<size_t>(d.m * d.n)), bound(want.size());
    const bool product = d.k > 0 && alpha != 0;
    for (int64_t j = 0; j < d.n; ++j)
        for (int64_t i = 0; i < d.m; ++i) {
            Real s = 0, abs_s = 0;
            if (product)
                for (int64_t q = 0; q * 128 < d.k; ++q) {
                    Real part = 0, abs_part = 0;
                    for (int64_t p = q * 128; p < std::min(d.k, q * 128 + 128); ++p) {
                        const Real ab = value_of(A.dtype, a_at(i, p)) * value_of(B.dtype, b_at(p, j));
                        part += ab;
                        abs_part += std::fabs(ab);
                    }
                    const Real scale = call.blockscaled ? static_cast<Real>(sa[q * d.m + i]) * sb[q * nb + j / 128] : 1;
                    s += part * scale;
                    abs_part *= std::fabs(scale);
                    abs_s += abs_part;
                }
            const Real c_old = beta != 0 ? C.get(i, j) : 0;
            const Real w = (product ? alpha * s : 0) + beta * c_old;
            const Real e = std::ldexp(1.0L, -9) * std::fabs(alpha) * abs_s + std::fabs(beta * c_old) * std::ldexp(1.0L, -24);
            want[i + j * d.m] = w;
            bound[i + j * d.m] = e + unit_of(call.c_dtype) * (std::fabs(w) + e) + floor_of(call.c_dtype);
        }

    if (call.validate) gpk_set_validation(suite.ctx(), 1);
    for (const std::string &variant : suite.variants(GPK_OP_GEMM)) {
        for (unsigned mask : suite.placements(3, seed)) {
            Case c(suite, format("%s [%s, %s]", describe(call).c_str(), variant.c_str(), mem_name(mask, 3).c_str()));
            if (!suite.select(c, GPK_OP_GEMM, variant)) continue;
            Mat got = C;
            Placed pa, pb, pc, psa, psb;
            const bool da = mask & 1u, db = mask & 2u, dc = mask & 4u;
            if (!pa.place(c, da, A.bytes.data(), A.bytes.size()) || !pb.place(c, db, B.bytes.data(), B.bytes.size()) ||
                !pc.place(c, dc, got.bytes.data(), got.bytes.size()) ||
                !psa.place(c, da, sa.data(), sa.size() * 4) || !psb.place(c, db, sb.data(), sb.size() * 4))
                continue;
            const int64_t lda = A.shape.ld, ldb = B.shape.ld, ldc = C.shape.ld;
            const gpk_status st =
                call.blockscaled
                    ? gpk_gemm_blockscaled(suite.ctx(), call.layout, call.transa, call.transb, d.m, d.n, d.k, call.alpha,
                                           call.a_dtype, pa.ptr, lda, static_cast<const float *>(psa.ptr), call.b_dtype,
                                           pb.ptr, ldb, static_cast<const float *>(psb.ptr), call.beta, call.c_dtype,
                                           pc.ptr, ldc)
                    : gpk_gemm_ex(suite.ctx(), call.layout, call.transa, call.transb, d.m, d.n, d.k, call.alpha,
                                  call.a_dtype, pa.ptr, lda, call.b_dtype, pb.ptr, ldb, call.beta, call.c_dtype, pc.ptr,
                                  ldc);
            const int key = 100 + 10 * call.a_dtype + call.b_dtype + (call.blockscaled ? 1000 : 0) + 10000 * call.c_dtype;
            if (!suite.accept(c, st, GPK_OP_GEMM, variant, key, "gpk_gemm_ex")) continue;
            if (!suite.sync(c) || !pc.back(c, dc, got.bytes.data(), got.bytes.size())) continue;
            // The rung named, except where the product vanishes (k == 0): C = beta C is
            // the reference rung's on every path, and gpk_last_variant names what ran.
            const char *ran = gpk_last_variant(suite.ctx(), GPK_OP_GEMM);
            if (ran == nullptr || (variant != "auto" && product && variant != ran))
                c.fail("gpk_last_variant says '%s' after a call of variant '%s'", ran ? ran : "(null)", variant.c_str());
            int reported = 0;
            for (int64_t j = 0; j < d.n && reported < 3; ++j)
                for (int64_t i = 0; i < d.m && reported < 3; ++i) {
                    const Real g = got.get(i, j), w = want[i + j * d.m];
                    const bool ok = std::isnan(w) ? std::isnan(g)
                                    : std::isinf(w) ? g == w
                                                    : std::isfinite(g) && std::fabs(g - w) <= bound[i + j * d.m];
                    if (!ok) {
                        c.fail("C(%lld, %lld) = %.9Lg, exact %.9Lg, bound %.3Lg", static_cast<long long>(i),
                               static_cast<long long>(j), g, w, bound[i + j * d.m]);
                        ++reported;
                    }
                }
            for (size_t i = 0; i < C.shape.count(); ++i)
                if (C.shape.is_padding(i) && std::memcmp(&got.bytes[i * ec], &C.bytes[i * ec], ec) != 0) {
                    c.fail("padding of C at element %zu was written", i);
                    break;
                }
        }
    }
    gpk_set_variant(suite.ctx(), GPK_OP_GEMM, "auto");
    if (call.validate) gpk_set_validation(suite.ctx(), 0);
}

// ---- the grid ----------------------------------------------------------------------

struct Types {
    int a, b, c;
};

void conformance(Suite &suite) {
    std::vector<Types> types;
    for (int a : {int{GPK_F8E4M3}, int{GPK_F8E5M2}})
        for (int b : {int{GPK_F8E4M3}, int{GPK_F8E5M2}})
            for (int c : {int{GPK_F32}, int{GPK_F16}, int{GPK_BF16}}) types.push_back({a, b, c});
    types.push_back({GPK_F16, GPK_F16, GPK_F32});
    types.push_back({GPK_BF16, GPK_BF16, GPK_F32});
    const int ntypes = static_cast<int>(types.size());
    // Sizes 1, 17, 1000 and 4097 each in some dimension; k over several blocks of 128
    // with a partial last one where the scales are tested.
    const std::vector<Dims> dims = suite.quick()
                                       ? std::vector<Dims>{{1, 1, 1}, {17, 17, 17}, {33, 130, 300}}
                                       : std::vector<Dims>{{1, 1, 1},      {17, 17, 17},  {1000, 9, 40}, {7, 1000, 33},
                                                           {9, 5, 1000},   {4097, 3, 20}, {3, 4097, 20}, {5, 6, 4097},
                                                           {33, 130, 300}};
    // Each (sizes, layout, transposes) takes a rotating share of the dtype combinations
    // (all of them on the host backend, where a case is cheap).
    const int share = suite.cuda() ? 3 : ntypes;
    int64_t serial = 0;
    for (const Dims &d : dims)
        for (int layout : {int{GPK_COL_MAJOR}, int{GPK_ROW_MAJOR}})
            for (int ta : {int{GPK_NO_TRANS}, int{GPK_TRANS}})
                for (int tb : {int{GPK_NO_TRANS}, int{GPK_TRANS}})
                    for (int t = 0; t < share; ++t) {
                        const Types ty = types[static_cast<size_t>((serial + t) % ntypes)];
                        const bool fp8 = is_fp8(ty.a);
                        Call call{layout, ta, tb, d, ty.a, ty.b, ty.c, serial % 3, (serial + 1) % 3, (serial + 2) % 4,
                                  0.75, serial % 2 ? 0.5 : 0.0, false, false, 0};
                        run_case(suite, call, seed_of({serial, 1}));
                        if (fp8 && t == 0) {
                            // Block-scaled, and the same with NaN in C under beta == 0.
                            Call bs = call;
                            bs.blockscaled = true;
                            bs.beta = 0, bs.nan_c = true;
                            run_case(suite, bs, seed_of({serial, 2}));
                        }
                        ++serial;
                    }
    // Block-scaled column-major calls whose 16-bit C leaves through TMA stores (m and
    // ldc whole 16 bytes, beta == 0): the FP8 rung runs them turned, storing D column-major
    // (15_wgmma_fp8.cu), here with partial tiles along m and n and ldc above the minimum.
    for (int ta : {int{GPK_NO_TRANS}, int{GPK_TRANS}})
        for (int tb : {int{GPK_NO_TRANS}, int{GPK_TRANS}})
            for (int c : {int{GPK_BF16}, int{GPK_F16}}) {
                Call call{GPK_COL_MAJOR, ta, tb, Dims{264, 136, 300}, GPK_F8E4M3, c == GPK_F16 ? GPK_F8E5M2 : GPK_F8E4M3,
                          c, 0, 0, c == GPK_F16 ? 8 : 0, 0.75, 0.0, true, true, 0};
                run_case(suite, call, seed_of({serial++, 8}));
            }
    // k == 0 (C = beta C, A and B not read), and beta == 0 over NaN in C; near the
    // largest values, subnormals, NaN and infinite inputs.
    for (const Types &ty : types) {
        const Dims d{17, 9, 0};
        run_case(suite, Call{GPK_COL_MAJOR, GPK_NO_TRANS, GPK_TRANS, d, ty.a, ty.b, ty.c, 1, 2, 3, 2.0, 0.5, false,
                             false, 0},
                 seed_of({serial++, 3}));
        run_case(suite, Call{GPK_ROW_MAJOR, GPK_TRANS, GPK_NO_TRANS, Dims{19, 23, 45}, ty.a, ty.b, ty.c, 0, 1, 0, 1.0,
                             0.0, true, false, 0},
                 seed_of({serial++, 4}));
        if (!is_fp8(ty.a)) continue;
        // F16 C keeps |C| below its largest value with a small alpha.
        const double alpha = ty.c == GPK_F16 ? 1.0 / 1024 : 1.0;
        for (int special : {1, 2})
            for (bool scaled : {false, true})
                run_case(suite, Call{special == 1 ? GPK_COL_MAJOR : GPK_ROW_MAJOR, GPK_TRANS, GPK_NO_TRANS,
                                     Dims{13, 11, 260}, ty.a, ty.b, ty.c, 2, 0, 1, alpha, 0.25, false, scaled, special},
                         seed_of({serial++, 5}));
    }
    // Validation mode: each rung checked by another (the vendor's, the reference, or
    // the host backend), within the contract's bound, in both layouts, aligned TN calls
    // (which cuBLASLt takes) and others.
    if (suite.cuda())
        for (const Types &ty : types)
            for (int layout : {int{GPK_COL_MAJOR}, int{GPK_ROW_MAJOR}}) {
                Call v{layout, GPK_TRANS, GPK_NO_TRANS, Dims{64, 48, 256}, ty.a, ty.b, ty.c, 0, 0, 0, 1.0, 0.5,
                       false, false, 0};
                v.validate = true;
                if (layout == GPK_ROW_MAJOR) v.transa = GPK_NO_TRANS, v.transb = GPK_TRANS;  // TN after the swap
                run_case(suite, v, seed_of({serial++, 6}));
                if (is_fp8(ty.a)) {
                    v.blockscaled = true, v.pad_a = 1;
                    run_case(suite, v, seed_of({serial++, 7}));
                }
            }
}

// ---- bad arguments ------------------------------------------------------------------

// A bad call: the status, the words its message must hold, and C left as it was.
void expect_bad(Suite &suite, const char *what, gpk_status st, gpk_status want, const char *word,
                const std::vector<float> &c_before, const std::vector<float> &c_after) {
    Case c(suite, format("bad arguments: %s", what));
    if (!c.expect(st, want, what)) return;
    const char *msg = gpk_last_error(suite.ctx());
    if (msg == nullptr || std::strstr(msg, word) == nullptr)
        c.fail("message \"%s\" does not name %s", msg ? msg : "(null)", word);
    if (c_before != c_after) c.fail("a failed call wrote C");
}

void bad_arguments(Suite &suite) {
    gpk_context *ctx = suite.ctx();
    const int64_t m = 8, n = 8, k = 8;
    std::vector<uint8_t> A(64, 0x38), B(64, 0x38);
    std::vector<float> C(64, 3.0f), keep = C, sa(64, 1.0f), sb(64, 1.0f);
    const int col = GPK_COL_MAJOR, N = GPK_NO_TRANS, E4 = GPK_F8E4M3, E5 = GPK_F8E5M2;
    auto ex = [&](int layout, int ta, int tb, int64_t mm, int64_t lda, int ad, const void *a, int bd, const void *b,
                  int cd, void *cp, int64_t ldc) {
        return gpk_gemm_ex(ctx, layout, ta, tb, mm, n, k, 1.0, ad, a, lda, bd, b, 8, 0.0, cd, cp, ldc);
    };
    const gpk_status bad = GPK_ERROR_INVALID_ARGUMENT;
    expect_bad(suite, "a_dtype 99", ex(col, N, N, m, 8, 99, A.data(), E4, B.data(), GPK_F32, C.data(), 8), bad,
               "a_dtype", keep, C);
    expect_bad(suite, "b_dtype 42", ex(col, N, N, m, 8, E4, A.data(), 42, B.data(), GPK_F32, C.data(), 8), bad,
               "b_dtype", keep, C);
    expect_bad(suite, "c_dtype 77", ex(col, N, N, m, 8, E4, A.data(), E5, B.data(), 77, C.data(), 8), bad, "c_dtype",
               keep, C);
    expect_bad(suite, "FP8 A with F16 B", ex(col, N, N, m, 8, E4, A.data(), GPK_F16, B.data(), GPK_F32, C.data(), 8),
               bad, "b_dtype", keep, C);
    expect_bad(suite, "F16 A with FP8 B", ex(col, N, N, m, 8, GPK_F16, A.data(), E5, B.data(), GPK_F32, C.data(), 8),
               bad, "a_dtype", keep, C);
    expect_bad(suite, "FP8 C", ex(col, N, N, m, 8, E4, A.data(), E4, B.data(), E4, C.data(), 8), bad, "c_dtype", keep,
               C);
    expect_bad(suite, "FP8 with F64 C", ex(col, N, N, m, 8, E4, A.data(), E5, B.data(), GPK_F64, C.data(), 8), bad,
               "c_dtype", keep, C);
    expect_bad(suite, "F16 x BF16", ex(col, N, N, m, 8, GPK_F16, A.data(), GPK_BF16, B.data(), GPK_F32, C.data(), 8),
               bad, "b_dtype", keep, C);
    expect_bad(suite, "F16 with BF16 C", ex(col, N, N, m, 8, GPK_F16, A.data(), GPK_F16, B.data(), GPK_BF16, C.data(), 8),
               bad, "c_dtype", keep, C);
    expect_bad(suite, "F32 with F16 C", ex(col, N, N, m, 8, GPK_F32, A.data(), GPK_F32, B.data(), GPK_F16, C.data(), 8),
               bad, "c_dtype", keep, C);
    expect_bad(suite, "F64 with F32 C", ex(col, N, N, m, 8, GPK_F64, A.data(), GPK_F64, B.data(), GPK_F32, C.data(), 8),
               bad, "c_dtype", keep, C);
    expect_bad(suite, "layout 7", ex(7, N, N, m, 8, E4, A.data(), E4, B.data(), GPK_F32, C.data(), 8), bad, "layout",
               keep, C);
    expect_bad(suite, "transa 5", ex(col, 5, N, m, 8, E4, A.data(), E4, B.data(), GPK_F32, C.data(), 8), bad, "transa",
               keep, C);
    expect_bad(suite, "transb 5", ex(col, N, 5, m, 8, E4, A.data(), E4, B.data(), GPK_F32, C.data(), 8), bad, "transb",
               keep, C);
    expect_bad(suite, "m -1", ex(col, N, N, -1, 8, E4, A.data(), E4, B.data(), GPK_F32, C.data(), 8), bad, "m (-1)",
               keep, C);
    expect_bad(suite, "lda 7", ex(col, N, N, m, 7, E4, A.data(), E4, B.data(), GPK_F32, C.data(), 8), bad, "lda", keep,
               C);
    expect_bad(suite, "ldb 3",
               gpk_gemm_ex(ctx, col, N, N, m, n, k, 1.0, E4, A.data(), 8, E4, B.data(), 3, 0.0, GPK_F32, C.data(), 8),
               bad, "ldb", keep, C);
    expect_bad(suite, "ldc 4", ex(col, N, N, m, 8, E4, A.data(), E4, B.data(), GPK_F32, C.data(), 4), bad, "ldc", keep,
               C);
    expect_bad(suite, "A NULL", ex(col, N, N, m, 8, E4, nullptr, E4, B.data(), GPK_F32, C.data(), 8), bad, "A", keep,
               C);
    expect_bad(suite, "B NULL", ex(col, N, N, m, 8, E4, A.data(), E4, nullptr, GPK_F32, C.data(), 8), bad, "B", keep,
               C);
    expect_bad(suite, "C NULL", ex(col, N, N, m, 8, E4, A.data(), E4, B.data(), GPK_F32, nullptr, 8), bad, "C", keep, C);
    // C over A's bytes: A is 64 bytes of FP8, C 256 bytes of F32 starting inside it.
    {
        std::vector<unsigned char> both(512, 0x38);
        Case probe(suite, "bad arguments: C overlaps A (FP8 A, F32 C)");
        const gpk_status st = gpk_gemm_ex(ctx, col, N, N, m, n, k, 1.0, E4, both.data(), 8, E4, B.data(), 8, 0.0,
                                          GPK_F32, both.data() + 60, 8);
        if (probe.expect(st, bad, "C overlapping A") && std::strstr(gpk_last_error(ctx), "overlaps A") == nullptr)
            probe.fail("message \"%s\" does not say C overlaps A", gpk_last_error(ctx));
    }
    // All three equal is gpk_gemm's call, answered as gpk_gemm answers it.
    {
        Case same(suite, "bad arguments: all three F32 with a bad lda, as gpk_gemm");
        const gpk_status st = ex(col, N, N, m, 3, GPK_F32, C.data(), GPK_F32, C.data(), GPK_F32, sa.data(), 8);
        const std::string msg = gpk_last_error(ctx);
        const gpk_status ref = gpk_gemm(ctx, GPK_F32, col, N, N, m, n, k, 1.0, C.data(), 3, C.data(), 8, 0.0,
                                        sa.data(), 8);
        if (st != ref || msg != gpk_last_error(ctx))
            same.fail("gpk_gemm_ex -> %s \"%s\", gpk_gemm -> %s \"%s\"", gpk_status_string(st), msg.c_str(),
                      gpk_status_string(ref), gpk_last_error(ctx));
        const gpk_status i32 = ex(col, N, N, m, 8, GPK_I32, A.data(), GPK_I32, B.data(), GPK_I32, sb.data(), 8);
        if (i32 != GPK_ERROR_NOT_SUPPORTED) same.fail("all three I32 -> %s, gpk_gemm's NOT_SUPPORTED expected",
                                                      gpk_status_string(i32));
    }
    // gpk_gemm itself refuses FP8.
    expect_bad(suite, "gpk_gemm with GPK_F8E4M3",
               gpk_gemm(ctx, E4, col, N, N, m, n, k, 1.0, A.data(), 8, B.data(), 8, 0.0, C.data(), 8), bad, "dtype",
               keep, C);
    // gpk_gemm_blockscaled.
    auto bs = [&](int ad, int bd, int cd, const float *s_a, const float *s_b, int64_t kk) {
        return gpk_gemm_blockscaled(ctx, col, N, N, m, n, kk, 1.0, ad, A.data(), 8, s_a, bd, B.data(), 8, s_b, 0.0, cd,
                                    C.data(), 8);
    };
    expect_bad(suite, "blockscaled F16 A", bs(GPK_F16, E4, GPK_F32, sa.data(), sb.data(), k), bad, "a_dtype", keep, C);
    expect_bad(suite, "blockscaled F16 B", bs(E4, GPK_F16, GPK_F32, sa.data(), sb.data(), k), bad, "b_dtype", keep, C);
    expect_bad(suite, "blockscaled F16 x F16 -> F16", bs(GPK_F16, GPK_F16, GPK_F16, sa.data(), sb.data(), k), bad,
               "a_dtype", keep, C);
    expect_bad(suite, "blockscaled FP8 C", bs(E4, E5, E5, sa.data(), sb.data(), k), bad, "c_dtype", keep, C);
    expect_bad(suite, "scale_a NULL", bs(E4, E5, GPK_F32, nullptr, sb.data(), k), bad, "scale_a", keep, C);
    expect_bad(suite, "scale_b NULL", bs(E4, E5, GPK_F32, sa.data(), nullptr, k), bad, "scale_b", keep, C);
    expect_bad(suite, "C overlaps scale_a", bs(E4, E5, GPK_F32, C.data() + 4, sb.data(), k), bad, "scale_a", keep, C);
    {
        Case h(suite, "bad arguments: NULL handle");
        h.expect(gpk_gemm_ex(nullptr, col, N, N, m, n, k, 1.0, E4, A.data(), 8, E4, B.data(), 8, 0.0, GPK_F32,
                             C.data(), 8),
                 GPK_ERROR_INVALID_HANDLE, "gpk_gemm_ex(NULL)");
        h.expect(gpk_gemm_blockscaled(nullptr, col, N, N, m, n, k, 1.0, E4, A.data(), 8, sa.data(), E4, B.data(), 8,
                                      sb.data(), 0.0, GPK_F32, C.data(), 8),
                 GPK_ERROR_INVALID_HANDLE, "gpk_gemm_blockscaled(NULL)");
    }
    {
        // k == 0 reads neither A nor B: NULL is fine there, but a NULL scale pointer is
        // invalid whatever the sizes (the contract); m == 0 is a quick return.
        Case z(suite, "k == 0 and m == 0 with NULL operands");
        const std::vector<float> kept(C.begin(), C.end());
        z.expect(gpk_gemm_blockscaled(ctx, col, N, N, m, n, 0, 1.0, E4, nullptr, 8, nullptr, E4, nullptr, 8, sb.data(),
                                      2.0, GPK_F32, C.data(), 8),
                 GPK_ERROR_INVALID_ARGUMENT, "blockscaled k == 0, scale_a NULL");
        if (std::vector<float>(C.begin(), C.end()) != kept) z.fail("a refused call wrote C");
        z.expect(gpk_gemm_blockscaled(ctx, col, N, N, 0, n, k, 1.0, E4, nullptr, 1, sa.data(), E4, nullptr, 8,
                                      nullptr, 0.0, GPK_F32, nullptr, 1),
                 GPK_ERROR_INVALID_ARGUMENT, "blockscaled m == 0, scale_b NULL");
        z.expect(gpk_gemm_blockscaled(ctx, col, N, N, m, n, 0, 1.0, E4, nullptr, 8, sa.data(), E4, nullptr, 8,
                                      sb.data(), 2.0, GPK_F32, C.data(), 8),
                 GPK_SUCCESS, "blockscaled k == 0");
        for (float v : C)
            if (v != 6.0f) {
                z.fail("k == 0, beta 2: C holds %g, 6 expected", v);
                break;
            }
        z.expect(gpk_gemm_ex(ctx, col, N, N, 0, n, k, 1.0, E4, nullptr, 1, E5, nullptr, 8, 0.0, GPK_F16, nullptr, 1),
                 GPK_SUCCESS, "gemm_ex m == 0");
    }
}

// Every bit pattern of each FP8 format, decoded exactly: C = op(A) * 1 with one
// product per element, which no accumulation rounds, so C holds the value itself
// (NaN for NaN patterns, E5M2's infinities as infinities), bit for bit in F32.
void every_pattern(Suite &suite) {
    for (int dtype : {int{GPK_F8E4M3}, int{GPK_F8E5M2}})
        for (bool as_b : {false, true})
            for (const std::string &variant : suite.variants(GPK_OP_GEMM)) {
                Case c(suite, format("every %s pattern as %s [%s]", dname(dtype), as_b ? "B" : "A", variant.c_str()));
                if (!suite.select(c, GPK_OP_GEMM, variant)) continue;
                std::vector<uint8_t> x(256), one(1, 0x38);  // 0x38: 1.0 in E4M3
                for (int i = 0; i < 256; ++i) x[static_cast<size_t>(i)] = static_cast<uint8_t>(i);
                std::vector<float> C(256, 7.0f);
                Placed px, po, pc;
                const bool dev = suite.cuda() && variant != "auto";
                if (!px.place(c, dev, x.data(), 256) || !po.place(c, dev, one.data(), 1) ||
                    !pc.place(c, dev, C.data(), 1024))
                    continue;
                // A 256 x 1 times B 1 x 1, or A 1 x 1 times B 1 x 256 (C row-major 1 x 256).
                const gpk_status st =
                    as_b ? gpk_gemm_ex(suite.ctx(), GPK_ROW_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, 1, 256, 1, 1.0,
                                       GPK_F8E4M3, po.ptr, 1, dtype, px.ptr, 256, 0.0, GPK_F32, pc.ptr, 256)
                         : gpk_gemm_ex(suite.ctx(), GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, 256, 1, 1, 1.0, dtype,
                                       px.ptr, 256, GPK_F8E4M3, po.ptr, 1, 0.0, GPK_F32, pc.ptr, 256);
                if (!suite.accept(c, st, GPK_OP_GEMM, variant, 100 + 10 * dtype + GPK_F8E4M3 + 10000 * GPK_F32,
                                  "gpk_gemm_ex"))
                    continue;
                if (!suite.sync(c) || !pc.back(c, dev, C.data(), 1024)) continue;
                for (int i = 0; i < 256; ++i) {
                    const Real want = fp8_value(dtype, static_cast<uint8_t>(i)), got = C[static_cast<size_t>(i)];
                    if (std::isnan(want) ? !std::isnan(got) : got != want) {
                        c.fail("pattern 0x%02X: %.9Lg, %.9Lg expected", i, got, want);
                        break;
                    }
                }
            }
    gpk_set_variant(suite.ctx(), GPK_OP_GEMM, "auto");
}

// On a GPU with FP8 tensor cores (compute capability 8.9 and up) the vendor's rung takes
// an aligned TN FP8 call (cuBLASLt's form), and "auto" chooses it; the values of such
// calls are checked by the conformance cases in validation mode.
void vendor_takes_tn(Suite &suite) {
    if (!suite.cuda()) return;
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess || prop.major * 10 + prop.minor < 89) return;
    const int64_t m = 128, n = 64, k = 256;
    DeviceArray A(static_cast<size_t>(m * k)), B(static_cast<size_t>(k * n)), C(static_cast<size_t>(m * n) * 2);
    for (const char *variant : {"cublas", "auto"}) {
        Case c(suite, format("aligned TN E4M3 x E4M3 -> BF16 on device arrays [%s]", variant));
        const std::vector<uint8_t> ones(static_cast<size_t>(m * k), 0x38);  // 1.0 in E4M3
        if (!A.ok() || !B.ok() || !C.ok() || !A.upload(ones.data()) || !B.upload(ones.data())) {
            c.fail("device arrays: %s", A.error());
            continue;
        }
        if (!suite.select(c, GPK_OP_GEMM, variant)) continue;
        const gpk_status st = gpk_gemm_ex(suite.ctx(), GPK_COL_MAJOR, GPK_TRANS, GPK_NO_TRANS, m, n, k, 1.0,
                                          GPK_F8E4M3, A.get(), k, GPK_F8E4M3, B.get(), k, 0.0, GPK_BF16, C.get(), m);
        if (!c.expect(st, GPK_SUCCESS, "gpk_gemm_ex") || !suite.sync(c)) continue;
        const char *ran = gpk_last_variant(suite.ctx(), GPK_OP_GEMM);
        if (ran == nullptr || std::strcmp(ran, "cublas") != 0)
            c.fail("gpk_last_variant says '%s', cublas expected", ran ? ran : "(null)");
        std::vector<uint16_t> got(static_cast<size_t>(m * n));
        if (cudaMemcpy(got.data(), C.get(), got.size() * 2, cudaMemcpyDeviceToHost) != cudaSuccess) continue;
        for (uint16_t h : got)
            if (decode16(GPK_BF16, h) != k) {  // 256 products of 1 x 1, exact
                c.fail("C holds %Lg, %lld expected", decode16(GPK_BF16, h), static_cast<long long>(k));
                break;
            }
    }
    gpk_set_variant(suite.ctx(), GPK_OP_GEMM, "auto");
}

}  // namespace

int main(int argc, char **argv) {
    Suite suite("test_gemm_ex", argc, argv);
    bad_arguments(suite);
    every_pattern(suite);
    vendor_takes_tn(suite);
    conformance(suite);
    return suite.finish();
}
