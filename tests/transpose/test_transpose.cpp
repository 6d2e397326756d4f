// gpk_transpose conformance: every variant (and "auto") for every dtype, both
// layouts, tight and padded leading dimensions; elements compared bit for bit and
// B's padding checked untouched.
#include "../harness.hpp"

#include <algorithm>

namespace {

using namespace gpkt;

constexpr int kDtypes[] = {GPK_F32, GPK_F64, GPK_I32, GPK_I64, GPK_F16, GPK_BF16};
constexpr int kLayouts[] = {GPK_COL_MAJOR, GPK_ROW_MAJOR};

// What the elements of A are. Ordinary cases use random finite, normal bit
// patterns; "specials" adds NaNs with payloads (quiet and signaling), infinities,
// signed zeros and subnormals, which a copy must move unchanged but arithmetic
// (1 * x) would not.
enum class Fill { random, specials };

struct Config {
    int dtype, layout;
    int64_t rows, cols;
    int64_t pad_a, pad_b;
    Fill fill = Fill::random;
    bool null_arrays = false;  // A and B NULL (only when rows or cols is 0)
};

// Whether a 4- or 8-byte pattern is a floating-point NaN of that width.
template <class U>
bool is_nan_bits(U bits) {
    if (sizeof(U) == 4) return (bits & 0x7F800000u) == 0x7F800000u && (bits & 0x007FFFFFu) != 0;
    const uint64_t b = bits;
    return (b & 0x7FF0000000000000ull) == 0x7FF0000000000000ull && (b & 0x000FFFFFFFFFFFFFull) != 0;
}

template <class U>
U random_element(Rng &rng, int dtype) {
    U bits = static_cast<U>(rng.next());
    if (dtype == GPK_F32) {
        // Keep the exponent within 1..254: a normal, finite float.
        const uint32_t exp = static_cast<uint32_t>(rng.range(1, 254));
        bits = static_cast<U>((static_cast<uint32_t>(bits) & 0x807FFFFFu) | (exp << 23));
    } else if (dtype == GPK_F64) {
        const uint64_t exp = static_cast<uint64_t>(rng.range(1, 2046));
        bits = static_cast<U>((static_cast<uint64_t>(bits) & 0x800FFFFFFFFFFFFFull) | (exp << 52));
    } else if (dtype == GPK_F16) {
        const uint32_t exp = static_cast<uint32_t>(rng.range(1, 30));
        bits = static_cast<U>((static_cast<uint32_t>(bits) & 0x83FFu) | (exp << 10));
    } else if (dtype == GPK_BF16) {
        const uint32_t exp = static_cast<uint32_t>(rng.range(1, 254));
        bits = static_cast<U>((static_cast<uint32_t>(bits) & 0x807Fu) | (exp << 7));
    }
    return bits;
}

template <class U>
U special_element(Rng &rng, int dtype) {
    static const uint32_t f32[] = {0x7FC00001u, 0x7F800001u, 0xFFA5A5A5u, 0x7F800000u, 0xFF800000u,
                                   0x80000000u, 0x00000000u, 0x00000001u, 0x807FFFFFu, 0x7FFFFFFFu};
    static const uint64_t f64[] = {0x7FF8000000000001ull, 0x7FF0000000000001ull, 0xFFF4A5A5A5A5A5A5ull,
                                   0x7FF0000000000000ull, 0xFFF0000000000000ull, 0x8000000000000000ull,
                                   0x0000000000000000ull, 0x0000000000000001ull, 0x800FFFFFFFFFFFFFull,
                                   0x7FFFFFFFFFFFFFFFull};
    // F16, BF16: quiet and signalling NaNs with payloads, infinities, signed zeros,
    // subnormals.
    static const uint16_t f16[] = {0x7E01u, 0x7C01u, 0xFDA5u, 0x7C00u, 0xFC00u, 0x8000u, 0x0000u, 0x0001u, 0x83FFu, 0x7FFFu};
    static const uint16_t bf16[] = {0x7FC1u, 0x7F81u, 0xFFA5u, 0x7F80u, 0xFF80u, 0x8000u, 0x0000u, 0x0001u, 0x807Fu, 0x7FFFu};
    if (rng.range(0, 3) != 0) return random_element<U>(rng, dtype);
    if (dtype == GPK_F16) return static_cast<U>(f16[rng.range(0, 9)]);
    if (dtype == GPK_BF16) return static_cast<U>(bf16[rng.range(0, 9)]);
    if (dtype == GPK_F32) return static_cast<U>(f32[rng.range(0, 9)]);
    if (dtype == GPK_F64) return static_cast<U>(f64[rng.range(0, 9)]);
    return static_cast<U>(rng.next());
}

// Elements are handled as unsigned integers of their size: the comparison is
// bitwise whatever the dtype.
template <class U>
void run_typed(Suite &suite, const Config &g, const std::vector<std::string> &variants, uint64_t rotation) {
    const bool col = g.layout == GPK_COL_MAJOR;
    Shape sa{g.rows, g.cols, 0, col}, sb{g.cols, g.rows, 0, col};
    sa.ld = at_least_one(sa.inner()) + g.pad_a;
    sb.ld = at_least_one(sb.inner()) + g.pad_b;
    const std::string base = format("transpose %s %s rows=%" PRId64 " cols=%" PRId64 " lda=%" PRId64 " ldb=%" PRId64 "%s%s",
                                    dtype_name(g.dtype), layout_name(g.layout), g.rows, g.cols, sa.ld, sb.ld,
                                    g.fill == Fill::specials ? " specials" : "", g.null_arrays ? " A=B=NULL" : "");

    Rng rng(seed_of({g.dtype, g.layout, g.rows, g.cols, g.pad_a, g.pad_b, static_cast<int64_t>(g.fill)}));
    U poison_bits;
    if (sizeof(U) == 2) {
        poison_bits = static_cast<U>(poison<uint16_t>());
    } else if (sizeof(U) == 4) {
        const int32_t p = poison<int32_t>();
        std::memcpy(&poison_bits, &p, sizeof p);
    } else {
        const int64_t p = poison<int64_t>();
        std::memcpy(&poison_bits, &p, sizeof p);
    }
    std::vector<U> a(std::max<size_t>(sa.count(), 1), poison_bits), b0(std::max<size_t>(sb.count(), 1), poison_bits);
    for (int64_t r = 0; r < g.rows; ++r)
        for (int64_t c = 0; c < g.cols; ++c)
            a[sa.at(r, c)] = g.fill == Fill::specials ? special_element<U>(rng, g.dtype) : random_element<U>(rng, g.dtype);
    // A's padding is a pattern of its own, so that a kernel copying padding from A
    // to B is told apart from one that leaves B alone.
    for (size_t i = 0; i < sa.count(); ++i)
        if (sa.is_padding(i)) a[i] = static_cast<U>(~poison_bits);

    const bool quick = g.rows == 0 || g.cols == 0;
    for (const std::string &variant : variants) {
        // Placement masks: bit 0 A, bit 1 B.
        for (unsigned mem : quick ? std::vector<unsigned>{kAllHost} : suite.placements(2, rotation)) {
            Case c(suite, format("%s variant=%s mem=%s", base.c_str(), variant.c_str(), mem_name(mem, 2).c_str()));
            if (!suite.select(c, GPK_OP_TRANSPOSE, variant)) continue;
            std::vector<U> ha = a, hb = b0;
            DeviceArray da, db;
            const void *pa = g.null_arrays ? nullptr : ha.data();
            void *pb = g.null_arrays ? nullptr : hb.data();
            if (mem & 1u) {
                if (!(da.allocate(ha.size() * sizeof(U)) && da.upload(ha.data()))) {
                    c.fail("device copy of A: %s", da.error());
                    continue;
                }
                pa = da.get();
            }
            if (mem & 2u) {
                if (!(db.allocate(hb.size() * sizeof(U)) && db.upload(hb.data()))) {
                    c.fail("device copy of B: %s", db.error());
                    continue;
                }
                pb = db.get();
            }
            const gpk_status st = gpk_transpose(suite.ctx(), g.dtype, g.layout, g.rows, g.cols, pa, sa.ld, pb, sb.ld);
            if (mem != kAllHost && !suite.sync(c)) continue;
            if ((mem & 2u) && !db.download(hb.data())) {
                c.fail("copying B back: %s", db.error());
                continue;
            }
            const bool ok = suite.accept(c, st, GPK_OP_TRANSPOSE, variant, g.dtype, "gpk_transpose");
            if (mem == kAllHost && std::memcmp(ha.data(), a.data(), a.size() * sizeof(U)) != 0)
                c.fail("A was modified");
            if (!ok || quick) {
                if (std::memcmp(hb.data(), b0.data(), b0.size() * sizeof(U)) != 0)
                    c.fail("B was written by a call that %s", ok ? "had nothing to do" : "failed");
                continue;
            }
            int64_t bad = 0;
            for (int64_t r = 0; r < g.rows; ++r) {
                for (int64_t col_ = 0; col_ < g.cols; ++col_) {
                    const U want = a[sa.at(r, col_)], got = hb[sb.at(col_, r)];
                    if (got == want) continue;
                    // cuBLAS geam computes 1 * A + 0 * B: a NaN comes out a NaN, but
                    // quieted and with its payload rewritten. Only the vendor variant
                    // may do that ("auto" must move bits).
                    if (variant == "cublas_geam" && is_nan_bits(want) && is_nan_bits(got)) continue;
                    if (bad++ == 0)
                        c.fail("B(%" PRId64 ", %" PRId64 ") = 0x%0*" PRIx64 ", expected A(%" PRId64 ", %" PRId64
                               ") = 0x%0*" PRIx64,
                               col_, r, static_cast<int>(2 * sizeof(U)), static_cast<uint64_t>(got), r, col_,
                               static_cast<int>(2 * sizeof(U)), static_cast<uint64_t>(want));
                }
            }
            if (bad > 1) c.fail("%" PRId64 " of %" PRId64 " elements of B are wrong", bad, g.rows * g.cols);
            for (size_t i = 0; i < sb.count(); ++i) {
                if (sb.is_padding(i) && hb[i] != poison_bits) {
                    c.fail("B padding at offset %zu was written (ldb %" PRId64 ", inner %" PRId64 ")", i, sb.ld,
                           sb.inner());
                    break;
                }
            }
        }
    }
}

void run(Suite &suite, const Config &g, const std::vector<std::string> &variants, uint64_t rotation) {
    if (dtype_size(g.dtype) == 2)
        run_typed<uint16_t>(suite, g, variants, rotation);
    else if (dtype_size(g.dtype) == 4)
        run_typed<uint32_t>(suite, g, variants, rotation);
    else
        run_typed<uint64_t>(suite, g, variants, rotation);
}

}  // namespace

// A rung that cannot take a call returns NOT_SUPPORTED naming itself and writes
// nothing; "auto" takes the same call with a rung that can. tile64_vec2's pair
// accesses need even leading dimensions (CUDA backend only).
void refusal(Suite &suite) {
    if (!suite.cuda() || !Suite::chosen("tile64_vec2")) return;
    Case c(suite, "transpose tile64_vec2 refuses odd leading dimensions; auto takes the call");
    gpk_context *ctx = suite.ctx();
    const int64_t rows = 33, cols = 17, lda = 35, ldb = 19;
    std::vector<float> A(static_cast<size_t>(lda * cols)), B(static_cast<size_t>(ldb * rows), -1.0f);
    for (size_t i = 0; i < A.size(); ++i) A[i] = static_cast<float>(i);
    const std::vector<float> B0 = B;
    if (!suite.select(c, GPK_OP_TRANSPOSE, "tile64_vec2")) return;
    gpk_status st = gpk_transpose(ctx, GPK_F32, GPK_COL_MAJOR, rows, cols, A.data(), lda, B.data(), ldb);
    const std::string why = gpk_last_error(ctx);
    if (st != GPK_ERROR_NOT_SUPPORTED)
        c.fail("tile64_vec2 with lda %" PRId64 ", ldb %" PRId64 " -> %s, want NOT_SUPPORTED", lda, ldb,
               gpk_status_string(st));
    else if (why.find("'tile64_vec2'") == std::string::npos)
        c.fail("the refusal does not name the rung: %s", why.c_str());
    if (B != B0) c.fail("the refused call wrote B");
    if (!suite.select(c, GPK_OP_TRANSPOSE, "auto")) return;
    st = gpk_transpose(ctx, GPK_F32, GPK_COL_MAJOR, rows, cols, A.data(), lda, B.data(), ldb);
    if (!c.expect(st, GPK_SUCCESS, "gpk_transpose (auto)")) return;
    for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j)
            if (B[j + i * ldb] != A[i + j * lda])
                return c.fail("auto: B(%" PRId64 ", %" PRId64 ") is not A(%" PRId64 ", %" PRId64 ")", j, i, i, j);
}

int main(int argc, char **argv) {
    Suite suite("test_transpose", argc, argv);
    const std::vector<std::string> variants = suite.variants(GPK_OP_TRANSPOSE);
    uint64_t rotation = 0;

    struct Size2 {
        int64_t rows, cols;
    };
    struct Pads {
        int64_t a, b;
    };
    const Size2 shapes[] = {{1, 1},       {1, 1000},  {1000, 1},  {17, 1000},  {255, 17},
                            {1000, 1000}, {4097, 33}, {33, 4097}, {4097, 4095}};
    // Tight, both padded (by different amounts, so that lda and ldb are not
    // interchangeable), and one padded.
    const Pads pads[] = {{0, 0}, {3, 5}, {0, 7}, {1, 0}};
    for (int dtype : kDtypes)
        for (const Size2 &sz : shapes)
            for (int layout : kLayouts)
                for (const Pads &p : pads) {
                    // The large matrices take their time: 1000 x 1000 tight and one padded, 4097 x
                    // 4095 tight and both padded, for one dtype of each element size and F32.
                    if (sz.rows == 1000 && sz.cols == 1000 && (p.a == 3 || p.a == 1)) continue;
                    if (sz.rows == 4097 && sz.cols == 4095 &&
                        (suite.quick() || dtype == GPK_I32 || dtype == GPK_I64 || dtype == GPK_BF16 ||
                         (p.a == 0 ? p.b != 0 : p.a != 3)))
                        continue;
                    run(suite, Config{dtype, layout, sz.rows, sz.cols, p.a, p.b}, variants, rotation++);
                }

    for (int dtype : kDtypes)
        for (int layout : kLayouts)
            for (const Size2 &sz : {Size2{17, 33}, Size2{64, 64}, Size2{1, 255}}) {
                Config g{dtype, layout, sz.rows, sz.cols, 2, 1};
                g.fill = Fill::specials;
                run(suite, g, variants, rotation++);
            }

    // rows or cols == 0: nothing to do, B untouched, NULL arrays allowed.
    for (int dtype : kDtypes)
        for (int layout : kLayouts)
            for (const Size2 &sz : {Size2{0, 17}, Size2{17, 0}, Size2{0, 0}})
                for (bool nulls : {false, true}) {
                    Config g{dtype, layout, sz.rows, sz.cols, 0, 3};
                    g.null_arrays = nulls;
                    run(suite, g, variants, rotation++);
                }

    refusal(suite);
    return suite.finish();
}
