// Host pi: the same Philox sequence as the GPU rungs (common/philox.hpp), so hits
// are identical on every backend. Whole triples are counted three samples per Philox
// evaluation; up to two samples at each end of a range that starts or ends inside a
// triple are counted one at a time (pi_split_range, as on the GPU).
#include "host.hpp"

#include "parallel.hpp"

#include "../common/philox.hpp"

#include <atomic>

namespace gpk::host {

gpk_status pi(gpk_context &, const PiArgs &args) {
    const PiTriples range = pi_split_range(args.first, args.count, args.seed);
    // At most (2^64 - 1) / 3 triples: the count fits the signed index of the loop.
    const int64_t triples = static_cast<int64_t>(range.end_triple - range.first_triple);
    // Each range's hits summed on its thread, then added once: an integer sum, the
    // same in any order. A triple (one Philox evaluation) is worth about 16 moves.
    std::atomic<uint64_t> triple_hits{0};
    const int64_t work = triples > INT64_MAX / 16 ? INT64_MAX : triples * 16;
    parallel_range(triples, work, [&](int64_t lo, int64_t hi) {
        uint64_t hits = 0;
        for (int64_t t = lo; t < hi; ++t)
            hits += pi_triple_hits(pi_triple(range.first_triple + static_cast<uint64_t>(t), args.seed));
        triple_hits.fetch_add(hits, std::memory_order_relaxed);
    });
    *args.hits = triple_hits.load() + range.edge_hits;
    return GPK_SUCCESS;
}

}  // namespace gpk::host
