// How gemm rung 12 (wgmma_ws) plans a call, without a GPU: the functions of
// libgpk/cuda/gemm/wgmma_ws_plan.cuh. The tile configuration at the shapes the
// performance record measured it on (docs/PERFORMANCE.md, section "Auto: gemm"), and
// at the edges of the rule; which operand becomes X for each TF32 layout, and that a
// swap exchanges the normal form's sides whole. The persistent walk: every tile once, in
// blocks of the shape its bands give; the grid's clusters.
#define GPK_TC_STANDALONE
#include "../libgpk/cuda/gemm/12_wgmma_ws.cu"

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
    GemmTc g{d, false, ta, tb, m, n, k, 1.0f, 0.0f, reinterpret_cast<const void *>(a), lda,
             reinterpret_cast<const void *>(b), ldb, nullptr, ldc, nullptr, nullptr, 0};
    Normal nf{};
    expect(normalise(g, &nf).status == Status::Ok, "normalise");
    return nf;
}

int tiles(int64_t m, int64_t n, int64_t k, int sms = 132) {
    return ws12::tile_config(normal(Dtype::BF16, false, false, m, n, k, 0), sms);
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
    ws12::orient(nf, &out, &swapped, 4);
    expect(swapped, "TF32 NN swaps");
    expect(out.P == nf.Q && out.Q == nf.P && out.K == nf.K, "a swap exchanges P and Q");
    expect(out.X.ptr == nf.Y.ptr && out.X.ld == nf.Y.ld && !out.X.kmajor && out.X.rows == nf.Y.rows,
           "a swap makes Y the X");
    expect(out.Y.ptr == nf.X.ptr && out.Y.kmajor, "a swap makes X the Y");
    // TN: both k-major, read through descriptors as they are.
    nf = normal(Dtype::TF32, true, false, 300, 200, 100, 0);
    ws12::orient(nf, &out, &swapped, 4);
    expect(!swapped && out.X.ptr == nf.X.ptr, "TF32 TN keeps its sides");
    // TT: X is MN-major and read into registers where it is; NT: the same, Y packed.
    nf = normal(Dtype::TF32, true, true, 300, 200, 100, 0);
    ws12::orient(nf, &out, &swapped, 4);
    expect(!swapped && !out.X.kmajor, "TF32 TT keeps its sides");
    nf = normal(Dtype::TF32, false, true, 300, 200, 100, 0);
    ws12::orient(nf, &out, &swapped, 4);
    expect(!swapped && !out.X.kmajor && !out.Y.kmajor, "TF32 NT keeps its sides");
    // An MN-major A that 16-byte loads cannot read in place is packed, not swapped.
    nf = normal(Dtype::TF32, false, false, 301, 200, 100, 1);
    ws12::orient(nf, &out, &swapped, 4);
    expect(!swapped, "TF32 NN with an odd lda is not swapped");
    nf = normal(Dtype::TF32, false, false, 300, 200, 100, 0, 4100);
    ws12::orient(nf, &out, &swapped, 4);
    expect(!swapped, "TF32 NN with A off 16 bytes is not swapped");
    // 16-bit calls read MN-major operands through the transpose bits: never swapped.
    nf = normal(Dtype::F16, false, false, 300, 200, 100, 0);
    ws12::orient(nf, &out, &swapped, 2);
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
        ws12::tile_of<GROUP>(t, rows, cols, &tp, &tq);
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
        ws12::tile_of<GROUP>(t, rows, cols, &tp, &tq);
        max_p = tp > max_p ? tp : max_p;
        max_q = tq > max_q ? tq : max_q;
    }
    expect(max_p + 1 == band && max_q + 1 == (8 + band - 1) / band, "eight consecutive tiles form a block of the band");
}

void walks() {
    // 64-wide tiles take bands of two rows, the others bands of eight.
    expect(ws12::band_rows(64) == 2 && ws12::band_rows(128) == 8 && ws12::band_rows(256) == 8,
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
    expect(ws12::grid_clusters(256, 66) == 64, "4096^3 in 128 x 256 tiles: 64 clusters of four tiles each");
    expect(ws12::grid_clusters(64, 66) == 64, "less than a wave: a cluster per cluster tile");
    expect(ws12::grid_clusters(67, 66) == 34, "just past a wave: two tiles per cluster, 34 clusters");
    expect(ws12::grid_clusters(5, 0) == 1, "a count of none that fit runs one cluster");
    bool ok = true;
    for (int64_t fit : {1, 2, 7, 30, 66})
        for (int64_t pairs = 1; pairs <= 2000; ++pairs) {
            const int64_t c = ws12::grid_clusters(pairs, fit), waves = (pairs + fit - 1) / fit;
            ok = ok && c >= 1 && c <= fit && c <= pairs && (pairs + c - 1) / c == waves &&
                 (c == 1 || (pairs + c - 2) / (c - 1) > waves);
        }
    expect(ok, "the fewest clusters that need as many waves, never more than fit");
}

// "auto" and aligned 16-bit calls on 132 SMs: wgmma_ws where its tiles fill the waves
// (the shapes runs 182 and 183 measured it level or ahead at), cuBLAS where a last
// partial wave leaves clusters idle (measured behind), and outside the measured sizes.
bool leads(int64_t m, int64_t n, int64_t k, bool ta = false, bool tb = false, Dtype d = Dtype::BF16, int sms = 132) {
    return ws12::leads_aligned_16bit(normal(d, ta, tb, m, n, k, 0), sms);
}

void auto_rule() {
    expect(leads(1024, 1024, 768), "1024^2 x 768: 64 cluster tiles of 128 x 64 on 66 clusters");
    expect(leads(1024, 1024, 256) && leads(1024, 1024, 512, true), "1024^2 with k from 256 to 768: 128 x 64 tiles");
    expect(!leads(1024, 1024, 1024) && !leads(1024, 1024, 1024, true, false, Dtype::F16) && !leads(1024, 1024, 1536) &&
               !leads(1024, 1024, 2048) && !leads(1024, 1024, 4096, true) && !leads(1024, 1024, 8192),
           "1024^2 with k from 1024: 128 x 64 tiles, level with cuBLAS or behind");
    expect(leads(2048, 1024, 4096) && leads(1024, 2048, 1024), "128 x 128 tiles, long k included");
    expect(leads(2048, 2048, 2048) && leads(4096, 4096, 4096) && leads(6144, 6144, 6144) && leads(8192, 8192, 8192),
           "2048^3, 4096^3, 6144^3, 8192^3: whole waves of 128 x 256 tiles, nearly");
    expect(leads(8192, 8192, 256) && leads(8192, 8192, 1024) && leads(16384, 16384, 512),
           "large m and n with k from 256");
    expect(leads(4096, 1024, 4096) && leads(1024, 4096, 4096) && leads(2048, 8192, 2048) && leads(2048, 2048, 8192),
           "the oblong shapes measured");
    expect(leads(4096, 4096, 4096, true, true, Dtype::F16) && leads(4096, 4096, 4096, false, true, Dtype::F16),
           "every transposition: the plan does not depend on it for 16-bit types");
    expect(!leads(1536, 1536, 1536), "1536^3: 36 cluster tiles on 66 clusters");
    expect(!leads(2560, 2560, 2560), "2560^3: 100 cluster tiles in two waves of 66");
    expect(!leads(3072, 3072, 3072) && !leads(5120, 5120, 5120), "3072^3 and 5120^3: ping-pong tiles, a partial wave");
    expect(!leads(8192, 8192, 128), "k below 256");
    expect(!leads(512, 512, 512) && !leads(1000, 4096, 4096) && !leads(4096, 1000, 4096), "m or n below 1024");
    // Other GPUs: a single cluster slot (or a count the device could not give) runs
    // every wave full; on 1000 SMs the 64 cluster tiles of 1024^2 x 512 fill an eighth of one.
    expect(leads(3072, 3072, 3072, false, false, Dtype::BF16, 2) && leads(3072, 3072, 3072, false, false, Dtype::BF16, 0),
           "one cluster at a time: every wave full");
    expect(!leads(1024, 1024, 512, false, false, Dtype::BF16, 1000), "1024^2 x 512 on 1000 SMs: one wave, mostly idle");
}

// "auto" and aligned TF32 calls on 132 SMs (column-major: ta, tb as the call's ops).
bool leads_tf32(int64_t m, int64_t n, int64_t k, bool ta, bool tb, int sms = 132) {
    return ws12::leads_aligned_tf32(normal(Dtype::TF32, ta, tb, m, n, k, 0), sms);
}

void tf32_rule() {
    // NT (both operands MN-major): m and n from 2048, k from 512, whatever the waves.
    expect(leads_tf32(2048, 2048, 2048, false, true) && leads_tf32(8192, 8192, 8192, false, true) &&
               leads_tf32(3072, 3072, 3072, false, true) && leads_tf32(5120, 5120, 5120, false, true),
           "NT cubes from 2048 up, partial waves included");
    expect(leads_tf32(4096, 4096, 1024, false, true) && leads_tf32(3072, 3072, 1024, false, true) &&
               leads_tf32(8192, 8192, 512, false, true) && leads_tf32(2048, 8192, 1024, false, true),
           "NT with short k");
    expect(!leads_tf32(1024, 1024, 1024, false, true) && !leads_tf32(4096, 1024, 4096, false, true) &&
               !leads_tf32(1024, 4096, 4096, false, true) && !leads_tf32(4096, 4096, 256, false, true),
           "NT below 2048 in m or n, or below 512 in k");
    // NN: k from 1024 to three quarters of the smaller of m and n, where the tiles fill
    // the waves.
    expect(leads_tf32(2048, 2048, 1024, false, false) && leads_tf32(4096, 4096, 2048, false, false) &&
               leads_tf32(8192, 8192, 4096, false, false) && leads_tf32(16384, 16384, 2048, false, false) &&
               leads_tf32(6144, 6144, 3072, false, false) && leads_tf32(12288, 12288, 4096, false, false),
           "NN with k up to half of m and n: measured ahead");
    expect(leads_tf32(4096, 4096, 3072, false, false) && leads_tf32(6144, 6144, 4096, false, false) &&
               leads_tf32(8192, 8192, 4608, false, false) && leads_tf32(8192, 8192, 6144, false, false) &&
               leads_tf32(2048, 2048, 1536, false, false),
           "NN with k up to three quarters of m and n: measured ahead or level");
    expect(leads_tf32(2048, 16384, 1024, false, false) && leads_tf32(16384, 2048, 1024, false, false) &&
               leads_tf32(4096, 8192, 2048, false, false) && leads_tf32(8192, 4096, 2048, false, false),
           "NN oblong shapes measured ahead");
    expect(!leads_tf32(4096, 4096, 4096, false, false) && !leads_tf32(8192, 8192, 8192, false, false) &&
               !leads_tf32(2048, 2048, 2048, false, false) && !leads_tf32(6144, 6144, 5120, false, false) &&
               !leads_tf32(4096, 4096, 3584, false, false),
           "NN with k above three quarters of m or n");
    expect(!leads_tf32(8192, 8192, 512, false, false) && !leads_tf32(8192, 8192, 256, false, false) &&
               !leads_tf32(1024, 1024, 512, false, false),
           "NN below 1024 in k or 2048 in m and n");
    expect(!leads_tf32(3072, 3072, 1024, false, false) && !leads_tf32(5120, 5120, 2048, false, false) &&
               !leads_tf32(2560, 2560, 1024, false, false),
           "NN where a last, partial wave leaves clusters idle (3072^2 x 1024 measured behind)");
    // TN and TT: cuBLAS keeps them.
    expect(!leads_tf32(8192, 8192, 2048, true, false) && !leads_tf32(4096, 4096, 2048, true, false) &&
               !leads_tf32(8192, 8192, 2048, true, true) && !leads_tf32(4096, 4096, 1024, true, true),
           "TN and TT stay with cuBLAS");
}

}  // namespace

int main() {
    tile_rule();
    orientation();
    walks();
    grid();
    auto_rule();
    tf32_rule();
    std::printf("test_tc_plan: %d checks, %d failed\n", checks, failures);
    return failures == 0 ? 0 : 1;
}
