// Rung 6: rung 5 with two-element vector accesses to global memory.
//
// Rung 5 issues one 4- or 8-byte load or store per element, so moving a tile costs
// as many memory instructions as elements. Here each thread moves two neighbouring
// elements with one 8-byte (4-byte elements) or 16-byte (8-byte elements) access on
// both sides, halving the memory instructions and the address arithmetic. Vector
// accesses need both matrices aligned to the vector and even leading dimensions;
// calls that are not fall back to rung 5, and ragged tile edges are moved element by
// element. The shared tile keeps 65 columns: element pairs cost a two-way bank
// conflict there, which is cheap next to the global traffic saved (removing it by
// staggering the pairs' components measured no faster).
//
// The kernel (tile_tuned.cuh) replaces the first version of this rung
// (scripts/transpose-tile64-vec2.cuh, 0.98x geam for F32), which checked bounds on every access of
// every tile with 64-bit arithmetic: here a block takes one tile of a 1-D grid,
// interior tiles take an unchecked path (a uniform branch) with their addresses
// computed once, and only edge tiles check each vector. The pair accesses apply to
// 4-byte elements; 8-byte elements now move one per 8-byte access (measured as fast
// as the 16-byte pairs). On the H100 (scripts/tune-transpose and gpk-bench, L2
// flushed, 2026-11-24) this reached 1.01x geam at 8192^2 and 16384^2 F32 and 1.02x
// at 8192^2 F64, 0.96x the copy; which of the changes bought it was not isolated.
#include "../kernel_util.cuh"
#include "../ladders.hpp"
#include "tile_tuned.cuh"

namespace gpk::cuda {
namespace {

// scripts/tune-transpose's pick on the H100 (2026-11-24): 64x64 tile, 256 threads
// (32 across a 64-element line, 8 lines per pass), 8-byte loads and stores, rung 6's
// tile order (down A's columns), one tile per block, unstaggered shared accesses.
using Pick = tile_tuned::Config<64, 64, 256, 8, 8, 0, false, false, false>;

template <class T>
gpk_status launch(gpk_context &ctx, const TransposeArgs &a) {
    if (!tile_tuned::aligned<T, Pick>(a.A, a.lda, a.B, a.ldb)) return transpose_tile64(ctx, a);
    GPK_FORWARD_IF_ERROR(check(ctx, tile_tuned::launch<T, Pick>(a.A, a.lda, a.B, a.ldb, a.rows, a.cols, stream(ctx)),
                               "launch of transpose_tile64_vec2 kernel"));
    return GPK_SUCCESS;
}

}  // namespace

gpk_status transpose_tile64_vec2(gpk_context &ctx, const TransposeArgs &args) {
    switch (args.elem_size) {
        case 2: return launch<uint16_t>(ctx, args);
        case 4: return launch<uint32_t>(ctx, args);
        default: return launch<uint64_t>(ctx, args);
    }
}

}  // namespace gpk::cuda
