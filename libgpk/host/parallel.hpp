// The host backend's parallel loops, on threads of the library's own making.
//
// OpenMP's runtime cannot be used for them: when libgomp fails to create a thread
// (an address-space or thread limit reached) it prints "Thread creation failed" and
// calls exit(1) from inside the parallel region, and the library must never end the
// process. Here the helpers are std::threads of a pool the library keeps between
// loops (parallel.cpp), where a failed creation is an exception: the loop then runs
// on the threads there are, the calling thread included, so that it always completes
// -- on one thread if need be.
//
// The number of threads is OpenMP's (omp_get_max_threads(): OMP_NUM_THREADS and the
// CPU affinity are honoured as before), asked without starting an OpenMP team; one
// in a build without OpenMP (meson option openmp). A loop too small to pay for
// starting threads runs on the calling thread alone.
#pragma once

#include <cstdint>

namespace gpk::host {

// The threads a parallel loop may use, the caller's included: at least 1.
int max_threads();

// Calls body(lo, hi) on disjoint ranges covering [0, count), on up to max_threads()
// threads when `work` (about the multiply-adds or element moves of the whole loop)
// is large enough to pay for them; which thread runs which range is not fixed, so
// the body's result must not depend on it. The body must not throw (an exception
// leaving a thread ends the process): the loops it runs allocate nothing.
void parallel_ranges(int64_t count, int64_t work, void (*body)(const void *state, int64_t lo, int64_t hi),
                     const void *state);

// body(lo, hi) for each range, as above.
template <class F>
void parallel_range(int64_t count, int64_t work, const F &body) {
    parallel_ranges(
        count, work, [](const void *state, int64_t lo, int64_t hi) { (*static_cast<const F *>(state))(lo, hi); },
        &body);
}

// body(i) for each i in [0, count).
template <class F>
void parallel_for(int64_t count, int64_t work, const F &body) {
    parallel_range(count, work, [&body](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) body(i);
    });
}

}  // namespace gpk::host
