// How gemm rung 12 (wgmma_ws) plans a call, without a GPU: the functions of
// libgpk/cuda/gemm/wgmma/plan.cuh. The tile configuration at the shapes the
// performance record measured it on (docs/PERFORMANCE.md, section "Auto: gemm"), and
// at the edges of the rule; which operand becomes X for each TF32 layout, and that a
// swap exchanges the normal form's sides whole. The persistent walk: every tile once, in
// blocks of the shape its bands give; the grid's clusters. The plan's header is all it
// includes: host code of its own, which needs neither the library nor the rung's kernels.
#include "../../libgpk/cuda/gemm/wgmma/plan.cuh"

#include <cstdint>
#include <cstdio>
#include <vector>

namespace {

using namespace gpk::cuda::tc;
int failures = 0, checks = 0;

void expect(bool ok, const char *what) {
    ++checks;
    if (!ok) {
        ++failures;
        std::printf("FAIL %s\n", what);
    }
}

// The normal form of a column-major call; the pointers are never dereferenced.
Normal normal(Dtype d, bool ta, bool tb, int64_t m, int64_t n, int64_t k, int64_t pad, uintptr_t a = 4096,
              uintptr_t b = 8192) {
    const int64_t lda = (ta ? k : m) + pad, ldb = (tb ? n : k) + pad, ldc = m;
    GemmTc g{d, ta, tb, m, n, k, 1.0f, 0.0f, reinterpret_cast<const void *>(a), lda,
             reinterpret_cast<const void *>(b), ldb, nullptr, ldc, nullptr, nullptr, 0};
    const Normal nf = normal_form(g);
    expect(nf.P == n && nf.Q == m && nf.K == k, "the normal form is n x m x k");
    return nf;
}

int tiles(int64_t m, int64_t n, int64_t k, int sms = 132) {
    return wgmma::tile_config(normal(Dtype::BF16, false, false, m, n, k, 0), sms);
}

void tile_rule() {
    // Less than a wave of 256-wide tiles: 64-wide ones where they finish first.
    expect(tiles(512, 512, 512) == 4, "512^3 takes 128 x 64 tiles");
    expect(tiles(1024, 1024, 1024) == 4, "1024^3 takes 128 x 64 tiles");
    // One wave of 256-wide tiles on 128 SMs costs less than two of 128-wide ones.
    expect(tiles(2048, 2048, 2048) == 1, "2048^3 takes 128 x 256 tiles");
    expect(tiles(1536, 1536, 1536) == 1, "1536^3 takes 128 x 256 tiles");
    // At least a wave: 256-wide, or ping-pong just past a multiple of 256.
    expect(tiles(4096, 4096, 4096) == 1, "4096^3 takes 128 x 256 tiles");
    expect(tiles(8192, 8192, 256) == 1, "8192 x 8192 x 256 takes 128 x 256 tiles");
    expect(tiles(4097, 4097, 4097) == 3, "4097^3 takes ping-pong tiles");
    // Any GPU size, down to one SM (and a count the device could not give).
    for (int sms : {0, 1, 2, 7, 132, 1000})
        for (int64_t s : {1, 17, 255, 1000, 4097, 100000}) {
            const int t = tiles(s, s + 3, 64, sms);
            expect(t >= 1 && t <= 4, "a configuration for every size and SM count");
        }
}

void orientation() {
    Normal nf{}, out{};
    bool swapped = false;
    // TF32 NN: A (Y) is MN-major, B^T (X) k-major: swapped, so that A becomes X.
    nf = normal(Dtype::TF32, false, false, 300, 200, 100, 0);
    wgmma::orient(nf, &out, &swapped, 4);
    expect(swapped, "TF32 NN swaps");
    expect(out.P == nf.Q && out.Q == nf.P && out.K == nf.K, "a swap exchanges P and Q");
    expect(out.X.ptr == nf.Y.ptr && out.X.ld == nf.Y.ld && !out.X.kmajor && out.X.rows == nf.Y.rows,
           "a swap makes Y the X");
    expect(out.Y.ptr == nf.X.ptr && out.Y.kmajor, "a swap makes X the Y");
    // TN: both k-major, read through descriptors as they are.
    nf = normal(Dtype::TF32, true, false, 300, 200, 100, 0);
    wgmma::orient(nf, &out, &swapped, 4);
    expect(!swapped && out.X.ptr == nf.X.ptr, "TF32 TN keeps its sides");
    // TT: X is MN-major and read into registers where it is; NT: the same, Y packed.
    nf = normal(Dtype::TF32, true, true, 300, 200, 100, 0);
    wgmma::orient(nf, &out, &swapped, 4);
    expect(!swapped && !out.X.kmajor, "TF32 TT keeps its sides");
    nf = normal(Dtype::TF32, false, true, 300, 200, 100, 0);
    wgmma::orient(nf, &out, &swapped, 4);
    expect(!swapped && !out.X.kmajor && !out.Y.kmajor, "TF32 NT keeps its sides");
    // An MN-major A that 16-byte loads cannot read in place is packed, not swapped.
    nf = normal(Dtype::TF32, false, false, 301, 200, 100, 1);
    wgmma::orient(nf, &out, &swapped, 4);
    expect(!swapped, "TF32 NN with an odd lda is not swapped");
    nf = normal(Dtype::TF32, false, false, 300, 200, 100, 0, 4100);
    wgmma::orient(nf, &out, &swapped, 4);
    expect(!swapped, "TF32 NN with A off 16 bytes is not swapped");
    // 16-bit calls read MN-major operands through the transpose bits: never swapped.
    nf = normal(Dtype::F16, false, false, 300, 200, 100, 0);
    wgmma::orient(nf, &out, &swapped, 2);
    expect(!swapped && out.X.ptr == nf.X.ptr, "F16 NN keeps its sides");
}

// The walk over `rows` x `cols` cluster tiles in bands of GROUP rows takes each tile
// once, and where the first band holds eight tiles, the first eight form a block of
// min(GROUP, rows) rows.
template <int GROUP>
void walk(int rows, int cols) {
    std::vector<int> seen(size_t(rows) * size_t(cols), 0);
    bool in_range = true;
    for (int t = 0; t < rows * cols; ++t) {
        int tp = -1, tq = -1;
        wgmma::tile_of<GROUP>(t, rows, cols, &tp, &tq);
        if (tp < 0 || tp >= rows || tq < 0 || tq >= cols) {
            in_range = false;
            continue;
        }
        ++seen[size_t(tp) * size_t(cols) + size_t(tq)];
    }
    bool once = true;
    for (int v : seen) once = once && v == 1;
    expect(in_range && once, "the walk takes every cluster tile once");
    const int band = GROUP < rows ? GROUP : rows;
    if (band * cols < 8) return;  // the first band holds fewer than eight tiles
    int max_p = 0, max_q = 0;
    for (int t = 0; t < 8; ++t) {
        int tp = 0, tq = 0;
        wgmma::tile_of<GROUP>(t, rows, cols, &tp, &tq);
        max_p = tp > max_p ? tp : max_p;
        max_q = tq > max_q ? tq : max_q;
    }
    expect(max_p + 1 == band && max_q + 1 == (8 + band - 1) / band, "eight consecutive tiles form a block of the band");
}

void walks() {
    // 64-wide tiles take bands of two rows, the others bands of eight.
    expect(wgmma::band_rows(64) == 2 && wgmma::band_rows(128) == 8 && wgmma::band_rows(256) == 8,
           "bands of 2 for 64-wide tiles, 8 for the others");
    // 1024 x 1024 in 128 x 64 tiles: four rows of cluster tiles by 16 columns, eight
    // consecutive clusters on a 2 x 4 block.
    walk<2>(4, 16);
    walk<8>(4, 16);
    // Ragged last bands and narrow grids.
    for (int rows : {1, 2, 3, 5, 9, 17})
        for (int cols : {1, 2, 7, 16, 33}) {
            walk<2>(rows, cols);
            walk<8>(rows, cols);
        }
}

// The persistent grid: no more clusters than fit, as many waves as `fit` clusters would
// need, and no fewer clusters that would.
void grid() {
    expect(wgmma::grid_clusters(256, 66) == 64, "4096^3 in 128 x 256 tiles: 64 clusters of four tiles each");
    expect(wgmma::grid_clusters(64, 66) == 64, "less than a wave: a cluster per cluster tile");
    expect(wgmma::grid_clusters(67, 66) == 34, "just past a wave: two tiles per cluster, 34 clusters");
    expect(wgmma::grid_clusters(5, 0) == 1, "a count of none that fit runs one cluster");
    bool ok = true;
    for (int64_t fit : {1, 2, 7, 30, 66})
        for (int64_t pairs = 1; pairs <= 2000; ++pairs) {
            const int64_t c = wgmma::grid_clusters(pairs, fit), waves = (pairs + fit - 1) / fit;
            ok = ok && c >= 1 && c <= fit && c <= pairs && (pairs + c - 1) / c == waves &&
                 (c == 1 || (pairs + c - 2) / (c - 1) > waves);
        }
    expect(ok, "the fewest clusters that need as many waves, never more than fit");
}

}  // namespace

int main() {
    tile_rule();
    orientation();
    walks();
    grid();
    std::printf("test_tc_plan: %d checks, %d failed\n", checks, failures);
    return failures == 0 ? 0 : 1;
}
