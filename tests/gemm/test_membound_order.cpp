// The summation order of the memory-bound gemm rungs (libgpk/cuda/gemm/membound/order.hpp),
// checked on the host without a GPU: the splits of k cover it exactly and depend on
// what the header says (rung skinny's on k alone), the host stand-in adds in the order
// the header describes (written out here by hand for small cases, where a different
// grouping gives different bits), and its sums stay within the bound of any order.
// tests/gemm/test_membound.cpp compares the kernels with this stand-in bit for bit on the GPU.
#include "../harness.hpp"

#include "cuda/gemm/membound/order.hpp"

#include <cmath>
#include <vector>

namespace {

using namespace gpkt;
namespace mb = gpk::membound;

void check_splits(Case &c, int64_t k, mb::Splits sp, const char *what) {
    if (sp.count < 1 || sp.count > mb::kMaxSplits) c.fail("%s k=%" PRId64 ": %" PRId64 " splits", what, k, sp.count);
    if (sp.len % mb::kLenQuantum != 0) c.fail("%s k=%" PRId64 ": split length %" PRId64 " not whole k-tiles", what, k, sp.len);
    if (k > 0 && !(sp.len * sp.count >= k && sp.len * (sp.count - 1) < k))
        c.fail("%s k=%" PRId64 ": %" PRId64 " splits of %" PRId64 " do not cover k exactly", what, k, sp.count, sp.len);
}

void splits(Suite &suite) {
    Case c(suite, "splits of k");
    const int64_t ks[] = {0,    1,       17,      512,          2047,        2048,    2049,    4097,
                          8192, 28672,   1 << 20, (1 << 22) + 3, int64_t(1) << 27, int64_t(1) << 33, int64_t(3) << 40};
    for (int64_t k : ks) {
        const mb::Splits s = mb::skinny_splits(k);
        check_splits(c, k, s, "skinny");
        // Pieces of 2048 up to 256 of them; longer pieces beyond, never more than 256.
        if (k <= mb::kSkinnyLen * mb::kSkinnySplits && s.len != mb::kSkinnyLen)
            c.fail("skinny k=%" PRId64 ": split length %" PRId64 ", expected 2048", k, s.len);
        if (s.count > mb::kSkinnySplits) c.fail("skinny k=%" PRId64 ": %" PRId64 " splits", k, s.count);
        for (int64_t tiles : {1, 3, 64, 1000, 5000}) {
            const mb::Splits g = mb::gram_splits(k, tiles);
            check_splits(c, k, g, "gram");
            // About kGramBlocks blocks when k is long enough for them.
            if (k >= mb::kGramBlocks * mb::kLenQuantum * 2 && g.count * tiles < mb::kGramBlocks / 2)
                c.fail("gram k=%" PRId64 " tiles %" PRId64 ": only %" PRId64 " blocks", k, tiles, g.count * tiles);
        }
    }
}

// The stand-in against the order written out, on values where another grouping
// gives other bits: x = 1, and w holds 1, -1 and 2^-24 (half an ulp of 1) at the
// places that decide. 1 + 2^-24 rounds back to 1 (a tie, to even).
void written_out(Suite &suite) {
    Case c(suite, "stand-in order written out");
    const float tiny = 0x1p-24f;
    std::vector<float> w(34 * 512, 0.0f), x(34 * 512, 1.0f);
    const auto W = [&](int64_t i) { return w[static_cast<size_t>(i)]; };
    const auto X = [&](int64_t i) { return x[static_cast<size_t>(i)]; };
    const auto expect = [&](const char *what, float got, float want) {
        if (!same_bits(got, want)) c.fail("%s: %.9g, expected %.9g", what, double(got), double(want));
    };
    // G = 2: chunks 0, 2, 4 to group 0, chunks 1, 3 to group 1, then group 0 + group 1:
    // (1 + tiny) + (tiny - 1) = 1 - (1 - tiny) = tiny; in sequence it would be 0, with
    // chunks 0-1 and 2-3 as the groups 2 tiny.
    w[0] = 1, w[4] = tiny, w[8] = tiny, w[12] = -1;
    expect("G=2, k=18", mb::ordered_sum<float>(18, mb::Splits{512, 1}, 2, W, X), tiny);
    expect("G=1, k=18", mb::ordered_sum<float>(18, mb::Splits{512, 1}, 1, W, X), 0.0f);
    // G = 4, the tree: (g0 + g2) + (g1 + g3) = (1 - 1) + (tiny + tiny) = 2 tiny, where
    // ((g0 + g1) + g2) + g3 gives tiny.
    w.assign(w.size(), 0.0f);
    w[0] = 1, w[4] = tiny, w[8] = -1, w[12] = tiny;
    expect("G=4 tree", mb::ordered_sum<float>(16, mb::Splits{512, 1}, 4, W, X), 2 * tiny);
    // Splits joined in 32 lanes, then the tree: three splits give (v0 + v2) + v1 =
    // (1 + tiny) - 1 = 0, where in sequence (1 - 1) + tiny = tiny.
    w.assign(w.size(), 0.0f);
    w[3] = 1, w[515] = -1, w[1099] = tiny;
    expect("three splits", mb::ordered_sum<float>(1100, mb::Splits{512, 3}, 1, W, X), 0.0f);
    // 34 splits: lane 0 adds v0 and v32 (1 + tiny = 1), lane 1 v1 and v33 (tiny - 1),
    // the tree gives tiny; in sequence 2 tiny.
    w.assign(w.size(), 0.0f);
    w[0] = 1, w[512] = -1, w[32 * 512] = tiny, w[33 * 512] = tiny;
    expect("34 splits", mb::ordered_sum<float>(34 * 512, mb::Splits{512, 34}, 1, W, X), tiny);
    // One split is its value, -0 too (no lane of +0 added): four products that round
    // to -0 (a zero product added to -0 would give +0).
    w.assign(w.size(), 0.0f);
    for (int i = 0; i < 4; ++i) w[size_t(i)] = -0x1p-100f, x[size_t(i)] = 0x1p-100f;
    expect("one split of -0", mb::ordered_sum<float>(4, mb::Splits{512, 1}, 1, W, X), -0.0f);
    for (int i = 0; i < 4; ++i) x[size_t(i)] = 1.0f;
    // One fused multiply-add per element, in k order: -1, then (1 + 2^-12)^2 - 1 rounded
    // once (the product alone would round to 1 + 2^-11).
    w.assign(w.size(), 0.0f);
    w[0] = -1.0f, w[1] = 1.0f + 0x1p-12f, x[1] = 1.0f + 0x1p-12f;
    expect("fused", mb::ordered_sum<float>(2, mb::Splits{512, 1}, 1, W, X), 0x1p-11f + 0x1p-24f);
}

// Sums within 2 u (k + 2) sum |w x| of the exact value, for both precisions and
// the rungs' group counts.
template <class T>
void bounded(Suite &suite, const char *name) {
    for (int64_t k : {1, 5, 511, 513, 4099, 70001}) {
        for (int groups : {1, 2, 8, 64}) {
            Case c(suite, format("stand-in %s k=%" PRId64 " G=%d within the bound", name, k, groups));
            Rng rng(seed_of({k, groups, sizeof(T)}));
            std::vector<T> w(static_cast<size_t>(k)), x(static_cast<size_t>(k));
            long double exact = 0, mag = 0;
            for (int64_t i = 0; i < k; ++i) {
                w[size_t(i)] = static_cast<T>(rng.signed_unit());
                x[size_t(i)] = static_cast<T>(rng.signed_unit());
                exact += static_cast<long double>(w[size_t(i)]) * x[size_t(i)];
                mag += std::fabs(static_cast<long double>(w[size_t(i)]) * x[size_t(i)]);
            }
            const auto W = [&](int64_t i) { return w[static_cast<size_t>(i)]; };
            const auto X = [&](int64_t i) { return x[static_cast<size_t>(i)]; };
            const long double u = std::numeric_limits<T>::epsilon() / 2;
            for (const mb::Splits sp : {mb::skinny_splits(k), mb::gram_splits(k, 1), mb::Splits{512, (k + 511) / 512}}) {
                const T got = mb::ordered_sum<T>(k, sp, groups, W, X);
                const long double err = std::fabs(static_cast<long double>(got) - exact);
                if (!(err <= 2 * u * (k + 2) * mag))
                    c.fail("splits of %" PRId64 ": %.17g, exact %.17Lg (error %.3Lg)", sp.len, static_cast<double>(got),
                           exact, err);
            }
        }
    }
}

void epilogue(Suite &suite) {
    Case c(suite, "epilogue: beta == 0 does not read C");
    const float nan = std::numeric_limits<float>::quiet_NaN();
    if (mb::epilogue<float>(2.0f, 3.0f, 0.0f, nan) != 6.0f) c.fail("beta 0 with NaN in C gave no 6");
    if (mb::epilogue<double>(-0.5, 4.0, 2.0, 1.5) != 1.0) c.fail("alpha -0.5, beta 2: not 1");
    // beta C + alpha total rounded once: a^2 = 1 + 2^-11 + 2^-24 would round to
    // 1 + 2^-11 on its own and leave 0; fused, -2^-24 remains.
    const float a = 1.0f + 0x1p-12f, t = 1.0f + 0x1p-11f;
    const float got = mb::epilogue<float>(1.0f, t, a, -a);
    if (got != -0x1p-24f) c.fail("beta C + alpha total rounded twice: %.9g, expected -2^-24", static_cast<double>(got));
}

// gram_shape: tiles that cover the long and short sides it is given, k-groups a power
// of two, blocks of 128 or 256 threads (the kernels' static checks depend on it).
void gram_shapes(Suite &suite) {
    Case c(suite, "gram tiles");
    for (int es : {2, 4, 8})
        for (int64_t L : {1, 8, 9, 16, 17, 32, 33, 64, 65, 128, 5000})
            for (int64_t s : {int64_t(1), std::min<int64_t>(L, 8), std::min<int64_t>(L, 65), std::min<int64_t>(L, 128)}) {
                const mb::GramShape g = mb::gram_shape(L, s, es);
                if (g.groups < 1 || (g.groups & (g.groups - 1)) != 0)
                    c.fail("es %d L %" PRId64 ": %d k-groups", es, L, g.groups);
                if (L <= 64 && (g.bp < L || g.bq < s))
                    c.fail("es %d L %" PRId64 " s %" PRId64 ": tile %dx%d", es, L, s, g.bp, g.bq);
            }
}

}  // namespace

int main(int argc, char **argv) {
    Suite suite("test_membound_order", argc, argv);
    splits(suite);
    written_out(suite);
    bounded<float>(suite, "F32");
    bounded<double>(suite, "F64");
    epilogue(suite);
    gram_shapes(suite);
    return suite.finish();
}
