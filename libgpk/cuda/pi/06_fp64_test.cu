// Rung 6, float filter: rung 5's persistent grid, with the inside test moved off the
// integer multiplier.
//
// A triple costs the 18 wide integer multiplies of its Philox rounds (what depends on
// the high counter word and the key alone is hoisted) plus 6 for its three exact
// inside tests, x(x + 1) + y(y + 1) < 2^42 in 64-bit products. On this GPU those
// 32x32->64-bit multiplies go through the integer multiplier at a fraction of the
// rate of single-precision arithmetic, and they set the pace of rungs 3 to 5. Here
// each point is first tested in single precision (pi_common.cuh: the coordinates
// convert exactly, and the rounding error of the sum is bounded well inside a margin
// of 2^21), which decides every point but the few within half a cell of the arc;
// those take the exact integer test. The answer is the exact test's, so hits stay
// identical to the host backend and the other Philox rungs.
#include "persistent.cuh"

#include "../ladders.hpp"

namespace gpk::cuda {

gpk_status pi_float_filter(gpk_context &ctx, const PiArgs &args) {
    return pi::count_hits_persistent<pi::triple_hits_float>(ctx, args, "pi_float_filter_kernel");
}

}  // namespace gpk::cuda
