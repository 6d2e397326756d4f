// One description of a strided matrix, shared by the argument checks, the dispatch
// and the staging pipeline and its planner, so that "which size is contiguous and how
// far apart the lines are" is worked out once per operand and passed on as is.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gpk {

// A matrix as it lies in memory: `outer` lines of `inner` contiguous elements, `ld`
// elements apart (a column-major m x n matrix is inner = m, outer = n), from `ptr`.
// The geometry comes first so that where only it matters (the checks, the planner)
// the view is written {inner, outer, ld} and `ptr` stays null.
struct MatrixView {
    int64_t inner = 0, outer = 0, ld = 0;
    const void *ptr = nullptr;

    // The same extent with no gap between lines (a packed copy in a slot or buffer).
    static MatrixView packed(int64_t inner, int64_t outer) { return MatrixView{inner, outer, inner}; }
    // op(X) of a column-major gemm, `rows` x `cols`, as X lies in memory: X itself, or
    // for a transposed operand X = op(X)^T, stored `cols` x `rows`.
    static MatrixView of_op(bool trans, int64_t rows, int64_t cols, int64_t ld, const void *ptr = nullptr) {
        return trans ? MatrixView{cols, rows, ld, ptr} : MatrixView{rows, cols, ld, ptr};
    }

    // Elements from the first to one past the last that belong to the matrix.
    int64_t span() const { return inner == 0 || outer == 0 ? 0 : (outer - 1) * ld + inner; }
    // The first byte, writable: the staging pipeline copies results into the caller's
    // output arrays through the views it was given.
    char *bytes() const { return static_cast<char *>(const_cast<void *>(ptr)); }
    // `inner` x `outer` elements of this matrix from element `i` of line `j`, for
    // elements of `es` bytes (its lines keep their ld).
    MatrixView block(int64_t i, int64_t j, int64_t inner_count, int64_t outer_count, size_t es) const {
        return MatrixView{inner_count, outer_count, ld, bytes() + (i + j * ld) * es};
    }
};

}  // namespace gpk
