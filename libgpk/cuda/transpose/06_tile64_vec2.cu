// Rung 6: rung 5 with two-element vector accesses to global memory.
//
// Rung 5 issues one 4- or 8-byte load or store per element, so moving a tile costs
// as many memory instructions as elements. Here each thread moves two neighbouring
// elements with one 8-byte (4-byte elements) or 16-byte (8-byte elements) access on
// both sides, halving the memory instructions and the address arithmetic. Vector
// accesses need both matrices aligned to the vector and even leading dimensions;
// calls that are not fall back to rung 5, and ragged tile edges are moved element by
// element. The shared tile keeps 65 columns: element pairs cost a two-way bank
// conflict there, which is cheap next to the global traffic saved.
#include "../kernel_util.cuh"
#include "../ladders.hpp"
#include "tile64_vec2.cuh"

namespace gpk::cuda {
namespace {

template <class T>
gpk_status launch(gpk_context &ctx, const TransposeArgs &a) {
    if (!tile64_vec2::aligned<T>(a.A, a.lda, a.B, a.ldb)) return transpose_tile64(ctx, a);
    GPK_FORWARD_IF_ERROR(check(ctx, tile64_vec2::launch<T, false>(a.A, a.lda, a.B, a.ldb, a.rows, a.cols, stream(ctx)),
                               "launch of transpose_tile64_vec2 kernel"));
    return GPK_SUCCESS;
}

}  // namespace

gpk_status transpose_tile64_vec2(gpk_context &ctx, const TransposeArgs &args) {
    return args.elem_size == 4 ? launch<uint32_t>(ctx, args) : launch<uint64_t>(ctx, args);
}

}  // namespace gpk::cuda
