// The benchmark's environment: the context under test on an app-owned stream,
// memory where the cases' arrays go, and the test data.
#include "bench.hpp"
#include "ceilings.hpp"

#include "../common/cli.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <thread>

namespace gpk_bench {

// Larger than any current GPU's L2 (50 MB on an H100), so overwriting it evicts
// the previous call's data and every timed call starts cold.
constexpr size_t kL2FlushBytes = size_t(256) << 20;

void check_cuda(cudaError_t err, const char *what) {
    if (err != cudaSuccess)
        throw Error(std::string(what) + ": " + cudaGetErrorName(err) + ": " + cudaGetErrorString(err));
}

std::unique_ptr<Env> Env::create(int backend, int device, bool pinned, gpk_status *status) {
    gpk_context *ctx = nullptr;
    *status = gpk_create(&ctx, backend, device);
    if (*status != GPK_SUCCESS) return nullptr;

    auto env = std::make_unique<Env>();
    env->ctx = ctx;
    env->device = device;
    int resolved = GPK_BACKEND_HOST;
    if ((*status = gpk_get_backend(ctx, &resolved)) != GPK_SUCCESS) return nullptr;
    env->cuda = resolved == GPK_BACKEND_CUDA;
    if (!env->cuda) return env;
    env->pinned = pinned;

    check_cuda(cudaSetDevice(device), "cudaSetDevice");
    check_cuda(cudaStreamCreateWithFlags(&env->stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    if ((*status = gpk_set_stream(ctx, env->stream)) != GPK_SUCCESS) return nullptr;
    // Staged calls copy every byte over the link: no L2 to flush worth the name.
    if (pinned) return env;
    check_cuda(cudaMalloc(&env->l2_flush, kL2FlushBytes), "cudaMalloc (L2 flush buffer)");
    env->l2_flush_bytes = kL2FlushBytes;
    // The kernel queued after each flush (harness.cpp), loaded now: its module loads on
    // first launch, and a first timed call that waited for that would start late.
    check_cuda(launch_settle(env->stream), "the kernel after the L2 flush");
    check_cuda(cudaStreamSynchronize(env->stream), "cudaStreamSynchronize");
    return env;
}

Env::~Env() {
    // The context first: it waits for its work on the stream before that goes.
    gpk_destroy(ctx);
    gpk_destroy(host_ctx);
    if (l2_flush) cudaFree(l2_flush);
    if (stream) cudaStreamDestroy(stream);
}

gpk_context *Env::host_reference_ctx() {
    if (!host_ctx && gpk_create(&host_ctx, GPK_BACKEND_HOST, 0) != GPK_SUCCESS) host_ctx = nullptr;
    return host_ctx;
}

void Env::sync() const {
    if (cuda) check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
}

const char *Env::memory_name() const {
    switch (arrays()) {
        case Place::kDevice: return "device";
        case Place::kPinned: return "pinned";
        case Place::kHost: return "host";
    }
    return "?";
}

// ---------------------------------------------------------------- buffers -------

namespace {
constexpr std::align_val_t kHostAlign{64};
}

Buffer::Buffer(const Env &env, size_t bytes, Place place) : env_(env), place_(place), bytes_(bytes) {
    const size_t alloc = std::max<size_t>(bytes, 1);
    switch (place) {
        case Place::kDevice:
            if (!env.cuda) throw Error("device buffer without the CUDA backend");
            check_cuda(cudaMalloc(&ptr_, alloc), "cudaMalloc");
            break;
        case Place::kPinned:
            if (!env.cuda) throw Error("pinned buffer without the CUDA backend");
            check_cuda(cudaHostAlloc(&ptr_, alloc, cudaHostAllocDefault), "cudaHostAlloc");
            break;
        case Place::kHost:
            ptr_ = ::operator new(alloc, kHostAlign, std::nothrow);
            if (!ptr_) throw Error("out of host memory allocating " + std::to_string(bytes) + " bytes");
            break;
    }
}

Buffer::~Buffer() {
    switch (place_) {
        case Place::kDevice: cudaFree(ptr_); break;
        case Place::kPinned: cudaFreeHost(ptr_); break;
        case Place::kHost: ::operator delete(ptr_, kHostAlign); break;
    }
}

// Host memory, pinned or not, is written by the CPU: nothing is in flight on it
// between calls (a staged call returns with its result in place).
void Buffer::upload(const void *src) {
    if (place_ == Place::kDevice) {
        check_cuda(cudaMemcpyAsync(ptr_, src, bytes_, cudaMemcpyHostToDevice, env_.stream), "cudaMemcpyAsync (upload)");
        env_.sync();
    } else {
        std::memcpy(ptr_, src, bytes_);
    }
}

void Buffer::download(void *dst) const {
    if (place_ == Place::kDevice) {
        check_cuda(cudaMemcpyAsync(dst, ptr_, bytes_, cudaMemcpyDeviceToHost, env_.stream),
                   "cudaMemcpyAsync (download)");
        env_.sync();
    } else {
        std::memcpy(dst, ptr_, bytes_);
    }
}

void Buffer::poison() {
    if (place_ == Place::kDevice) {
        check_cuda(cudaMemsetAsync(ptr_, 0xFF, bytes_, env_.stream), "cudaMemsetAsync (poison)");
        env_.sync();
    } else {
        std::memset(ptr_, 0xFF, bytes_);
    }
}

// ---------------------------------------------------------------- sizes ---------

size_t checked_elements(std::initializer_list<uint64_t> extents, size_t elem, const std::string &what) {
    const auto count = gpk_app::checked_product(extents);
    if (!count || !gpk_app::checked_product({*count, elem}))
        throw Error("--size: " + what + ": its arrays would be more bytes than a process can address");
    return static_cast<size_t>(*count);
}

void need_host_memory(std::initializer_list<size_t> bytes, const std::string &what) {
    // Each is below 2^63 (checked_elements): the sum, in 128 bits, cannot wrap.
    unsigned __int128 total = 0;
    for (size_t b : bytes) total += b;
    const uint64_t have = gpk_app::host_memory_bytes();
    if (total <= have) return;
    throw Error("--size: " + what + ": its arrays need " +
                (total > UINT64_MAX ? std::string("more than 2^64 bytes")
                                    : gpk_app::format_bytes(static_cast<uint64_t>(total))) +
                " of host memory, more than this machine's " + gpk_app::format_bytes(have));
}

// ---------------------------------------------------------------- test data -----

namespace {

// splitmix64 of (seed, index): every element independent of how the work is split.
inline uint64_t mix(uint64_t seed, uint64_t i) {
    uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

inline double unit(uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }  // [0, 1)

template <class T, class Gen>
void fill_parallel(T *x, size_t n, uint64_t seed, Gen gen) {
    const size_t threads = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 32);
    const size_t chunk = std::max<size_t>((n + threads - 1) / threads, size_t(1) << 20);
    std::vector<std::thread> pool;
    for (size_t begin = 0; begin < n; begin += chunk) {
        const size_t end = std::min(n, begin + chunk);
        pool.emplace_back([=] {
            for (size_t i = begin; i < end; ++i) x[i] = gen(mix(seed, i));
        });
    }
    for (auto &t : pool) t.join();
}

template <class T>
void signed_values(T *x, size_t n, uint64_t seed) {
    fill_parallel(x, n, seed, [](uint64_t r) {
        const T magnitude = static_cast<T>(0.25 + 0.75 * unit(r));
        return (r & 1) ? -magnitude : magnitude;
    });
}

template <class T>
void positive_values(T *x, size_t n, uint64_t seed) {
    fill_parallel(x, n, seed, [](uint64_t r) { return static_cast<T>(0.5 + unit(r)); });
}

template <class T>
void int_values(T *x, size_t n, uint64_t seed) {
    fill_parallel(x, n, seed, [](uint64_t r) { return static_cast<T>(1 + (r >> 33) % 1000); });
}

}  // namespace

void fill_signed(float *x, size_t n, uint64_t seed) { signed_values(x, n, seed); }
void fill_signed(double *x, size_t n, uint64_t seed) { signed_values(x, n, seed); }
void fill_positive(float *x, size_t n, uint64_t seed) { positive_values(x, n, seed); }
void fill_positive(double *x, size_t n, uint64_t seed) { positive_values(x, n, seed); }
void fill_int(int32_t *x, size_t n, uint64_t seed) { int_values(x, n, seed); }
void fill_int(int64_t *x, size_t n, uint64_t seed) { int_values(x, n, seed); }

}  // namespace gpk_bench
