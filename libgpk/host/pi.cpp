// Host pi: the same Philox sequence as the GPU rungs (common/philox.hpp), so hits
// are identical on every backend. Whole triples are counted three samples per Philox
// evaluation; up to two samples at each end of a range that starts or ends inside a
// triple are counted one at a time (pi_split_range, as on the GPU).
#include "host.hpp"

#include "../common/philox.hpp"

namespace gpk::host {

gpk_status pi(gpk_context &, const PiArgs &args) {
    const PiTriples range = pi_split_range(args.first, args.count, args.seed);
    // At most (2^64 - 1) / 3 triples: the count fits the signed loop index OpenMP needs.
    const int64_t triples = static_cast<int64_t>(range.end_triple - range.first_triple);
    uint64_t triple_hits = 0;
#if defined(_OPENMP)
#pragma omp parallel for schedule(static) reduction(+ : triple_hits)
#endif
    for (int64_t t = 0; t < triples; ++t)
        triple_hits += pi_triple_hits(pi_triple(range.first_triple + static_cast<uint64_t>(t), args.seed));
    *args.hits = triple_hits + range.edge_hits;
    return GPK_SUCCESS;
}

}  // namespace gpk::host
