// The host backend's parallel loops (parallel.hpp): helper threads started for each
// loop and joined at its end. A pool kept between calls would save their start (tens
// of microseconds, which kMinWork keeps small against the loop), but would have to
// survive fork(), concurrent callers and exit; threads of one loop have none of that
// to survive, and a creation that fails costs the loop a helper, never the process.
#include "parallel.hpp"

#include <algorithm>
#include <atomic>
#include <memory>
#include <new>
#include <thread>

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace gpk::host {
namespace {

// Loops with less work than this (about 100 us of it) run on the calling thread.
constexpr int64_t kMinWork = int64_t{1} << 17;
// Each thread takes ranges from a shared counter, several per thread, so that a
// helper that could not be started, or one the system runs late, leaves its share
// to the others in small pieces.
constexpr int64_t kRangesPerThread = 4;

// Set on every thread while it runs a loop's ranges: a loop started from inside one
// runs on that thread alone rather than multiplying the threads.
thread_local bool t_in_loop = false;

struct Loop {
    int64_t count, size, ranges;
    void (*body)(const void *, int64_t, int64_t);
    const void *state;
    std::atomic<int64_t> next{0};

    void run() noexcept {
        const bool outer = t_in_loop;
        t_in_loop = true;
        for (int64_t r = next.fetch_add(1, std::memory_order_relaxed); r < ranges;
             r = next.fetch_add(1, std::memory_order_relaxed)) {
            const int64_t lo = r * size;
            body(state, lo, std::min(count, lo + size));
        }
        t_in_loop = outer;
    }
};

}  // namespace

int max_threads() {
#if defined(_OPENMP)
    // The ICVs alone: neither call starts an OpenMP thread. Inside a caller's OpenMP
    // parallel region the loop stays on its thread, as a nested OpenMP region would.
    if (omp_in_parallel()) return 1;
    const int n = omp_get_max_threads();
    return n > 1 ? n : 1;
#else
    return 1;
#endif
}

void parallel_ranges(int64_t count, int64_t work, void (*body)(const void *, int64_t, int64_t), const void *state) {
    if (count <= 0) return;
    const int threads =
        t_in_loop || work < kMinWork ? 1 : static_cast<int>(std::min<int64_t>(max_threads(), count));
    if (threads <= 1) {
        body(state, 0, count);
        return;
    }
    Loop loop{count, 0, std::min(count, threads * kRangesPerThread), body, state};
    loop.size = (count + loop.ranges - 1) / loop.ranges;
    loop.ranges = (count + loop.size - 1) / loop.size;

    // Out of memory for the handles, or a thread that cannot be created (std::thread
    // throws std::system_error, or std::bad_alloc for its state): the loop goes on
    // with the helpers it has.
    std::unique_ptr<std::thread[]> helpers(new (std::nothrow) std::thread[static_cast<size_t>(threads - 1)]);
    int started = 0;
    if (helpers != nullptr) {
        for (; started < threads - 1; ++started) {
            try {
                helpers[started] = std::thread(&Loop::run, &loop);
            } catch (...) {
                break;
            }
        }
    }
    loop.run();
    for (int i = 0; i < started; ++i) helpers[i].join();
}

}  // namespace gpk::host
