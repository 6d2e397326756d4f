// How a call of the wgmma family runs, decided from its normal form alone, on the host
// and without a GPU (tests/gemm/test_tc_plan.cu checks it so): for gemm rung 12
// (12_wgmma_ws.cu), which operand is X and the width of the tiles; for both rungs (15's
// tiles are 128 x 128), the persistent grid and its walk over the tiles.
#pragma once

#include "common.cuh"
#include "config.cuh"

#include <cstddef>
#include <cstdint>

namespace gpk::cuda::tc::wgmma {

// F32 (TF32 products): TF32 wgmma reads k-major operands from shared memory only, but
// X from registers in any layout. An MN-major X is read so, in place; an MN-major Y
// with a k-major X (NN, the usual call) is made X by swapping the operands, P with Q,
// and storing D transposed; only what then remains MN-major in Y is packed. 16-bit
// calls read either operand MN-major in place through the transpose bits.
inline void orient(const Normal &nf, Normal *out, bool *swapped, size_t esize) {
    *out = nf;
    *swapped = false;
    if (esize != 4 || !in_place(nf.Y, nf.K, esize, 1, true) || nf.Y.kmajor) return;
    if (!nf.X.kmajor && in_place(nf.X, nf.K, esize, 1, true)) return;
    *out = Normal{nf.Q, nf.P, nf.K, nf.Y, nf.X};
    *swapped = true;
}

// The persistent grid runs in waves of one tile per cluster: how many for `pairs`
// cluster tiles when `fit` clusters fit on the GPU at once (at least one).
inline int64_t waves(int64_t pairs, int64_t fit) {
    if (fit < 1) fit = 1;
    return (pairs + fit - 1) / fit;
}

// The cluster tiles of a call in tiles `bq` wide: pairs of 128-row tiles along p, by
// tiles along q.
inline int64_t cluster_tiles(const Normal &nf, int64_t bq) {
    return ((nf.P + BP * CLUSTER - 1) / (BP * CLUSTER)) * ((nf.Q + bq - 1) / bq);
}

// The width along q of the tiles of configuration `mode` (tile_config).
constexpr int tile_width(int mode) { return mode == 1 ? 256 : mode == 4 ? 64 : 128; }

// The tile configuration (1: 128 x 256, 2: 128 x 128, 3: 128 x 128 ping-pong, 4:
// 128 x 64) for a call on a GPU of `sms` SMs.
inline int tile_config(const Normal &nf, int sms) {
    const int64_t pairs256 = cluster_tiles(nf, 256), pairs128 = cluster_tiles(nf, 128),
                  pairs64 = cluster_tiles(nf, 64);
    const int64_t fit = sms / CLUSTER;
    if (pairs256 * CLUSTER >= sms) {
        // At least a wave of wide tiles: 128 x 256, unless 128 x 128 ping-pong tiles need
        // clearly fewer waves of their half-size work (shapes just past a multiple of 256,
        // where a last, nearly empty column of wide tiles costs a whole wave); at equal
        // waves the wide tiles read less per product.
        return 20 * waves(pairs128, fit) < 19 * 2 * waves(pairs256, fit) ? 3 : 1;
    }
    // Less than a wave of wide tiles: narrower ones put more SMs to work, each at a lower
    // rate. The cost of a wave of each width, relative to 256 for the widest, as measured
    // where all three give every SM the same work (docs/PERFORMANCE.md, section "Auto:
    // gemm"); the cheapest total wins.
    const int64_t c256 = 256 * waves(pairs256, fit), c128 = 132 * waves(pairs128, fit),
                  c64 = 94 * waves(pairs64, fit);
    return c64 < c128 && c64 < c256 ? 4 : c128 < c256 ? 2 : 1;
}

// The tile configuration that runs for configuration `mode` when X is k-major (`xk`) or
// not, in elements of `esize` bytes: an F32 call with X read into registers takes
// 128 x 256 tiles for ping-pong ones, whose four sets of X fragments per warpgroup (two
// m64 blocks, double-buffered) would not fit in its registers.
inline int tiles_taken(int mode, bool xk, size_t esize) { return mode == 3 && !xk && esize == 4 ? 1 : mode; }

// The clusters of the persistent grid for `pairs` cluster tiles when `fit` clusters fit
// on the GPU at once: the fewest that need as many waves as `fit` clusters would. A call
// lasts as long as its busiest cluster's ceil(pairs / fit) tiles either way. With `fit`
// clusters some sit idle through the last wave; with these, every cluster takes its
// share of the tiles (to within one) and the SMs left over stay idle throughout. The
// even share measured faster or level wherever the two differ (docs/PERFORMANCE.md,
// section "Auto: gemm").
inline int64_t grid_clusters(int64_t pairs, int64_t fit) {
    const int64_t w = waves(pairs, fit);
    return w > 1 ? (pairs + w - 1) / w : pairs;
}

// The persistent walk's bands, in rows of cluster tiles (pairs of tile rows). Wide tiles
// serve large products, whose operands outlast L2 over many waves of tiles: bands of 8
// keep what one wave reads small. 64-wide tiles are chosen only where a single wave
// holds every tile (tile_config), so the walk decides no more than which tiles the
// clusters started one after another take. In bands of 2, eight consecutive clusters
// cover 2 x 4 cluster tiles; in bands of 8 they would cover 4 x 2 (four rows of cluster
// tiles, as at 1024 x 1024) or 8 x 1, whose X and Y tiles are at least one and a half
// times as many bytes per k-tile, and L2 serves more sectors for the same product.
__host__ __device__ constexpr int band_rows(int bq) { return bq == 64 ? 2 : 8; }

// The tile `t` of the persistent walk: bands of GROUP rows of cluster tiles, column by
// column inside a band, so the blocks running at once read few distinct X and Y tiles.
template <int GROUP>
__host__ __device__ __forceinline__ void tile_of(int t, int tiles_p, int tiles_q, int *tp, int *tq) {
    const int per_band = GROUP * tiles_q;
    const int band = t / per_band, first = band * GROUP;
    const int rows = tiles_p - first < GROUP ? tiles_p - first : GROUP;
    const int r = t - band * per_band;
    *tp = first + r % rows;
    *tq = r / rows;
}

}  // namespace gpk::cuda::tc::wgmma
