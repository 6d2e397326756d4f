// Host pi: the same Philox sequence as the GPU rungs (common/philox.hpp), so hits
// are identical on every backend. Whole pairs are counted two samples at a time;
// a range that starts or ends inside a pair takes that sample alone.
#include "host.hpp"

#include "../common/philox.hpp"

namespace gpk::host {

gpk_status pi(gpk_context &, const PiArgs &args) {
    uint64_t first = args.first, count = args.count, hits = 0;
    if (count > 0 && (first & 1u)) {
        hits += pi_sample_inside(first, args.seed);
        ++first, --count;
    }
    const uint64_t pairs = count / 2, p0 = first / 2;
    uint64_t pair_hits = 0;
#if defined(_OPENMP)
#pragma omp parallel for schedule(static) reduction(+ : pair_hits)
#endif
    for (int64_t p = 0; p < static_cast<int64_t>(pairs); ++p)
        pair_hits += pi_pair_hits(pi_pair(p0 + static_cast<uint64_t>(p), args.seed));
    hits += pair_hits;
    if (count & 1u) hits += pi_sample_inside(first + 2 * pairs, args.seed);
    *args.hits = hits;
    return GPK_SUCCESS;
}

}  // namespace gpk::host
