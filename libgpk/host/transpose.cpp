// Host transpose: B(j, i) = A(i, j), column-major, in 32 x 32 blocks so that both
// the reads and the writes stay in cache. Elements are moved as raw 2-, 4- or 8-byte
// words: any dtype, bit-exact (NaN payloads included).
#include "host.hpp"

#include "parallel.hpp"

#include <cstdint>

namespace gpk::host {
namespace {

constexpr int64_t kTile = 32;

template <class W>
void transpose_words(const TransposeArgs &a) {
    const W *A = static_cast<const W *>(a.A);
    W *B = static_cast<W *>(a.B);
    const int64_t tiles_j = (a.cols + kTile - 1) / kTile;
    // rows * cols elements moved (both at least 1 here, their product checked).
    parallel_for(tiles_j, a.rows * a.cols, [&](int64_t tj) {
        const int64_t j0 = tj * kTile, j1 = j0 + kTile < a.cols ? j0 + kTile : a.cols;
        for (int64_t i0 = 0; i0 < a.rows; i0 += kTile) {
            const int64_t i1 = i0 + kTile < a.rows ? i0 + kTile : a.rows;
            for (int64_t j = j0; j < j1; ++j)
                for (int64_t i = i0; i < i1; ++i) B[j + i * a.ldb] = A[i + j * a.lda];
        }
    });
}

}  // namespace

gpk_status transpose(gpk_context &, const TransposeArgs &args) {
    if (args.elem_size == 2)
        transpose_words<uint16_t>(args);
    else if (args.elem_size == 4)
        transpose_words<uint32_t>(args);
    else
        transpose_words<uint64_t>(args);
    return GPK_SUCCESS;
}

}  // namespace gpk::host
