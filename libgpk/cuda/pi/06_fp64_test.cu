// Rung 6, FP64 test: rung 5's persistent grid, with the inside test moved off the
// integer multiplier.
//
// A triple costs the 18 wide integer multiplies of its Philox rounds (what depends on
// the high counter word and the key alone is hoisted) plus 6 for its three exact
// inside tests, x(x + 1) + y(y + 1) < 2^42 in 64-bit products. On this GPU those
// 32x32->64-bit multiplies share one pipe, which sets the pace of rungs 3 to 5, while
// the FP64 units sit idle. Here each point is tested in double precision
// (common/philox.hpp, pi_cell_inside_double): the coordinates convert exactly and the
// sum stays below 2^53, so no rounding happens and the answer is the integer test's;
// hits stay identical to the host backend and the other Philox rungs.
#include "persistent.cuh"

#include "../ladders.hpp"

namespace gpk::cuda {

gpk_status pi_fp64_test(gpk_context &ctx, const PiArgs &args) {
    return pi::count_hits_persistent<pi::triple_hits_double>(ctx, args, "pi_fp64_test_kernel");
}

}  // namespace gpk::cuda
