// Rung 6: rung 5 with two-element vector accesses to global memory.
//
// Rung 5 issues one 4- or 8-byte load or store per element, so moving a tile costs
// as many memory instructions as elements. Here each thread moves two neighbouring
// 4-byte elements with one 8-byte access on both sides, halving the memory
// instructions and the address arithmetic; 8-byte elements move one per 8-byte
// access, which measured as fast as 16-byte pairs. Vector accesses need both
// matrices aligned to the vector and even leading dimensions: the rung refuses calls
// that are not (GPK_ERROR_NOT_SUPPORTED; "auto" then takes rung 5), and ragged tile
// edges are moved element by element. The shared tile keeps 65 columns: element
// pairs cost a two-way bank conflict there, which is cheap next to the global
// traffic saved (removing it by staggering the pairs' components measured no
// faster).
//
// The kernel (tile_tuned.cuh) replaces the first version of this rung
// (bench/transpose-tile64-vec2.cuh), which checked bounds on every access of every
// tile with 64-bit arithmetic: here a block takes one tile of a 1-D grid, interior
// tiles take an unchecked path (a uniform branch) with their addresses computed
// once, and only edge tiles check each vector. What each version measured is in
// docs/PERFORMANCE.md, section "Auto: transpose".
#include "../kernel_util.cuh"
#include "../ladders.hpp"
#include "tile_tuned.cuh"

#include <type_traits>

namespace gpk::cuda {
namespace {

// scripts/tune-transpose's pick on the H100: 64x64 tile, 256 threads
// (32 across a 64-element line, 8 lines per pass), 8-byte loads and stores, rung 6's
// tile order (down A's columns), one tile per block, unstaggered shared accesses.
// 8-byte elements take the tiles across A's columns: down them, rectangular F64
// transposes ran a few percent behind cublasDgeam, across them level or ahead
// (docs/PERFORMANCE.md, section "Auto: transpose").
using Pick = tile_tuned::Config<64, 64, 256, 8, 8>;
using Pick8 = tile_tuned::Config<64, 64, 256, 8, 8, true>;
template <class T>
using PickOf = std::conditional_t<sizeof(T) == 8, Pick8, Pick>;

constexpr const char *kUnaligned =
    "the pair accesses need A and B aligned to a pair of elements and even leading dimensions";

template <class T>
bool takes(const TransposeArgs &a) {
    return tile_tuned::aligned<T, PickOf<T>>(a.A, a.lda, a.B, a.ldb);
}

template <class T>
gpk_status launch(gpk_context &ctx, const TransposeArgs &a) {
    if (!takes<T>(a)) return refuse(ctx, "transpose", "tile64_vec2", kUnaligned);
    GPK_FORWARD_IF_ERROR(check(ctx, tile_tuned::launch<T, PickOf<T>>(a.A, a.lda, a.B, a.ldb, a.rows, a.cols, stream(ctx)),
                               "launch of transpose_tile64_vec2 kernel"));
    return GPK_SUCCESS;
}

}  // namespace

gpk_status transpose_tile64_vec2_takes(gpk_context &, const TransposeArgs &args, const char **why_not) {
    const bool ok = args.elem_size == 2   ? takes<uint16_t>(args)
                    : args.elem_size == 4 ? takes<uint32_t>(args)
                                          : takes<uint64_t>(args);
    *why_not = ok ? nullptr : kUnaligned;
    return GPK_SUCCESS;
}

gpk_status transpose_tile64_vec2(gpk_context &ctx, const TransposeArgs &args) {
    switch (args.elem_size) {
        case 2: return launch<uint16_t>(ctx, args);
        case 4: return launch<uint32_t>(ctx, args);
        default: return launch<uint64_t>(ctx, args);
    }
}

}  // namespace gpk::cuda
