// The host backend's parallel loops (parallel.hpp), on a pool of helper threads that
// the library keeps between calls: started on the first loop that wants them, grown
// as later loops want more, and joined when the library is unloaded (dlclose) or the
// process exits.
//
// One pool for the process, one loop on it at a time. A loop that finds the pool busy
// with another caller's loop -- contexts are used from several threads at once --
// runs on its calling thread alone, never waiting for the pool: a caller cannot
// deadlock on it, whatever other callers do, and the threads running loops never
// outnumber max_threads() plus the callers, where a pool per calling thread would keep
// max_threads() idle threads alive for every thread that ever made a call.
//
// Every failure leaves the loop on fewer threads, never failed: a helper that cannot
// be created (std::system_error at an address-space or thread limit, std::bad_alloc)
// is not, and the loop runs on the helpers the pool has, down to the calling thread
// alone; the next loop tries again.
//
// fork(): the child has none of the parent's helpers, and the pool's mutex may have
// been held by one of them. A pthread_atfork handler leaves the child's copy of the
// pool behind (reachable, never used) and the child's first loop makes a new one.
//
// Unload and exit: a static object's destructor stops the helpers and joins them, so
// that no thread runs the library's code once it is unmapped. A helper waits only on
// the pool's condition variable and touches no thread_local with a destructor, so
// stopping it takes one wake-up and its exit needs no lock of the dynamic loader. A
// loop called after that destructor (from another static destructor) runs on its
// calling thread.
#include "parallel.hpp"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace gpk::host {
namespace {

// Loops with less work than this (about 100 us of it) run on the calling thread.
constexpr int64_t kMinWork = int64_t{1} << 17;
// Each thread takes ranges from a shared counter, several per thread, so that a
// helper that could not be had, or one the system runs late, leaves its share to the
// others in small pieces.
constexpr int64_t kRangesPerThread = 4;

// Set on every thread while it runs a loop's ranges: a loop started from inside one
// runs on that thread alone rather than multiplying the threads.
thread_local bool t_in_loop = false;

struct Loop {
    int64_t count, size, ranges;
    void (*body)(const void *, int64_t, int64_t);
    const void *state;
    std::atomic<int64_t> next{0};
    int wanted = 0;  // helpers that may join (under the pool's mutex, as the two below)
    int joined = 0;  // helpers that have joined
    int active = 0;  // helpers that joined and have not left

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

class Pool {
public:
    // Runs `loop` on the calling thread and up to `helpers` of the pool's threads;
    // false, having run nothing, when another loop holds the pool.
    bool run(Loop &loop, int helpers) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (current_ != nullptr || stopping_) return false;
            grow(helpers);
            loop.wanted = std::min(helpers, static_cast<int>(threads_.size()));
            if (loop.wanted > 0) current_ = &loop;
        }
        if (loop.wanted > 0) work_.notify_all();
        loop.run();
        if (loop.wanted > 0) {
            // No helper joins from here on; those that did are finishing their last
            // range (the counter is spent) and must leave before `loop` goes away.
            std::unique_lock<std::mutex> lock(mutex_);
            current_ = nullptr;
            done_.wait(lock, [&loop] { return loop.active == 0; });
        }
        return true;
    }

    // Stops and joins the helpers; no loop may be running.
    void stop() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            stopping_ = true;
        }
        work_.notify_all();
        for (std::thread &t : threads_) t.join();
        threads_.clear();
    }

private:
    // Up to `helpers` threads, under mutex_; stops at the first that cannot be made.
    void grow(int helpers) {
        if (static_cast<int>(threads_.size()) >= helpers) return;
        try {
            threads_.reserve(static_cast<size_t>(helpers));
            while (static_cast<int>(threads_.size()) < helpers) threads_.emplace_back(&Pool::serve, this);
        } catch (...) {
            // std::system_error (no thread to be had) or std::bad_alloc: the loop runs
            // on the threads there are; emplace_back added nothing.
        }
    }

    void serve() noexcept {
        std::unique_lock<std::mutex> lock(mutex_);
        for (;;) {
            work_.wait(lock, [this] { return stopping_ || (current_ != nullptr && current_->joined < current_->wanted); });
            if (stopping_) return;
            Loop &loop = *current_;
            ++loop.joined, ++loop.active;
            lock.unlock();
            loop.run();
            lock.lock();
            if (--loop.active == 0) done_.notify_all();
        }
    }

    std::mutex mutex_;
    std::condition_variable work_, done_;
    std::vector<std::thread> threads_;
    Loop *current_ = nullptr;
    bool stopping_ = false;
};

// The pool (null until the first loop that wants helpers), and whether the library
// is being unloaded. A pool lost to a race at creation is deleted; one left behind
// by fork() is kept in g_forsaken, reachable.
std::atomic<Pool *> g_pool{nullptr};
std::atomic<bool> g_closed{false};
Pool *g_forsaken = nullptr;

void forget_pool_in_child() {
    // The child of fork() has one thread: plain stores are safe here.
    Pool *p = g_pool.exchange(nullptr);
    if (p != nullptr) g_forsaken = p;
}

Pool *pool() {
    Pool *p = g_pool.load(std::memory_order_acquire);
    if (p != nullptr || g_closed.load(std::memory_order_acquire)) return p;
    static const bool atfork = pthread_atfork(nullptr, nullptr, forget_pool_in_child) == 0;
    if (!atfork) return nullptr;  // without it a child could wait for helpers it lacks
    Pool *made = new (std::nothrow) Pool;
    if (made == nullptr) return nullptr;
    if (!g_pool.compare_exchange_strong(p, made, std::memory_order_acq_rel)) {
        delete made;
        return p;
    }
    return made;
}

// Joins the helpers when the library is unloaded or the process exits.
struct PoolOwner {
    ~PoolOwner() {
        g_closed.store(true, std::memory_order_release);
        if (Pool *p = g_pool.exchange(nullptr)) {
            p->stop();
            delete p;
        }
    }
} g_pool_owner;

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
    Pool *p = threads > 1 ? pool() : nullptr;
    if (p == nullptr) {
        body(state, 0, count);
        return;
    }
    Loop loop{count, 0, std::min(count, threads * kRangesPerThread), body, state};
    loop.size = (count + loop.ranges - 1) / loop.ranges;
    loop.ranges = (count + loop.size - 1) / loop.size;
    if (!p->run(loop, threads - 1)) body(state, 0, count);
}

}  // namespace gpk::host
