// The copy ceilings of the transpose table (see ceilings.hpp), the pi table's
// reference kernel, and the link's ceilings of --memory pinned (link_ceilings,
// bench.hpp). They live in the app, not in libgpk: they are yardsticks for the
// ladder, not variants of an op.
#include "ceilings.hpp"

#include "bench.hpp"
#include "pi_reference.cuh"

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

namespace gpk_bench {
namespace {

constexpr int kCopyThreads = 256;
constexpr int kTile = 32;
constexpr int kBlockRows = 8;  // a 32x8 block moves a 32x32 tile, four rows per thread
constexpr unsigned kMaxGridY = 65535;

__global__ void __launch_bounds__(kCopyThreads)
    copy_kernel(const uint4 *__restrict__ src, uint4 *__restrict__ dst, size_t vectors,
                const unsigned char *__restrict__ src_tail, unsigned char *__restrict__ dst_tail, size_t tail) {
    const size_t first = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    const size_t stride = size_t(gridDim.x) * blockDim.x;
    for (size_t i = first; i < vectors; i += stride) dst[i] = src[i];
    // The last bytes % 16 bytes, if any.
    if (first < tail) dst_tail[first] = src_tail[first];
}

template <class T>
__global__ void __launch_bounds__(kTile * kBlockRows)
    copy_smem_kernel(const T *__restrict__ src, T *__restrict__ dst, int64_t rows, int64_t cols) {
    __shared__ T tile[kTile][kTile];
    const int64_t tiles_i = (rows + kTile - 1) / kTile, tiles_j = (cols + kTile - 1) / kTile;
    for (int64_t tj = blockIdx.y; tj < tiles_j; tj += gridDim.y) {
        for (int64_t ti = blockIdx.x; ti < tiles_i; ti += gridDim.x) {
            const int64_t i = ti * kTile + threadIdx.x;
#pragma unroll
            for (int r = 0; r < kTile; r += kBlockRows) {
                const int64_t j = tj * kTile + threadIdx.y + r;
                if (i < rows && j < cols) tile[threadIdx.y + r][threadIdx.x] = src[i + j * rows];
            }
            __syncthreads();
            // The same element goes back where it came from: no transposition.
#pragma unroll
            for (int r = 0; r < kTile; r += kBlockRows) {
                const int64_t j = tj * kTile + threadIdx.y + r;
                if (i < rows && j < cols) dst[i + j * rows] = tile[threadIdx.y + r][threadIdx.x];
            }
            __syncthreads();
        }
    }
}

template <class T>
cudaError_t launch_copy_smem_as(const void *src, void *dst, int64_t rows, int64_t cols, cudaStream_t stream) {
    const int64_t tiles_i = (rows + kTile - 1) / kTile, tiles_j = (cols + kTile - 1) / kTile;
    const dim3 grid(static_cast<unsigned>(std::min<int64_t>(tiles_i, INT32_MAX)),
                    static_cast<unsigned>(std::min<int64_t>(tiles_j, kMaxGridY)));
    copy_smem_kernel<T><<<grid, dim3(kTile, kBlockRows), 0, stream>>>(static_cast<const T *>(src),
                                                                       static_cast<T *>(dst), rows, cols);
    return cudaGetLastError();
}

__global__ void settle_kernel() {}

}  // namespace

cudaError_t launch_settle(cudaStream_t stream) {
    settle_kernel<<<1, 32, 0, stream>>>();
    return cudaGetLastError();
}

cudaError_t launch_copy(const void *src, void *dst, size_t bytes, cudaStream_t stream) {
    if ((reinterpret_cast<uintptr_t>(src) | reinterpret_cast<uintptr_t>(dst)) % 16 != 0) return cudaErrorInvalidValue;
    if (bytes == 0) return cudaSuccess;
    const size_t vectors = bytes / 16, tail = bytes % 16;
    // One vector per thread: on an H100 this matches cudaMemcpy device to device,
    // where a grid of one resident wave looping over the data is about 5% slower.
    // The loop only matters past 2^31 blocks.
    const size_t needed = std::max<size_t>((vectors + kCopyThreads - 1) / kCopyThreads, 1);
    const size_t blocks = std::min<size_t>(needed, INT32_MAX);
    const auto *s = static_cast<const unsigned char *>(src);
    auto *d = static_cast<unsigned char *>(dst);
    copy_kernel<<<static_cast<unsigned>(blocks), kCopyThreads, 0, stream>>>(
        reinterpret_cast<const uint4 *>(s), reinterpret_cast<uint4 *>(d), vectors, s + vectors * 16, d + vectors * 16,
        tail);
    return cudaGetLastError();
}

cudaError_t launch_copy_smem(const void *src, void *dst, int64_t rows, int64_t cols, size_t elem_bytes,
                             cudaStream_t stream) {
    if (rows <= 0 || cols <= 0) return rows < 0 || cols < 0 ? cudaErrorInvalidValue : cudaSuccess;
    switch (elem_bytes) {
        case 4: return launch_copy_smem_as<uint32_t>(src, dst, rows, cols, stream);
        case 8: return launch_copy_smem_as<uint64_t>(src, dst, rows, cols, stream);
        default: return cudaErrorInvalidValue;
    }
}

// ---------------------------------------------------------------- pi ----------

cudaError_t pi_reference_shape(int device, uint64_t samples, PiReferenceShape *shape) {
    if (samples == 0 || samples > (uint64_t(1) << 63)) return cudaErrorInvalidValue;
    int sms = 0, per_sm = 0;
    cudaError_t err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    if (err != cudaSuccess) return err;
    err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, pi_reference_kernel<false>, kPiReferenceBlock, 0);
    if (err != cudaSuccess) return err;
    if (sms <= 0 || per_sm <= 0) return cudaErrorInvalidConfiguration;
    shape->blocks = static_cast<unsigned>(sms) * static_cast<unsigned>(per_sm);
    shape->block_threads = kPiReferenceBlock;
    const uint64_t threads = uint64_t(shape->blocks) * kPiReferenceBlock;
    // Two points per call: samples <= 2^63 and a grid far below 2^31 threads keep
    // drawn, at most samples + 2 * threads - 1, within 64 bits.
    shape->pairs_per_thread = samples / (2 * threads) + (samples % (2 * threads) != 0);
    shape->drawn = 2 * shape->pairs_per_thread * threads;
    return cudaSuccess;
}

cudaError_t launch_pi_reference(const PiReferenceShape &shape, uint64_t seed, unsigned long long *hits,
                                cudaStream_t stream) {
    if (shape.blocks == 0 || shape.block_threads != kPiReferenceBlock) return cudaErrorInvalidValue;
    cudaError_t err = cudaMemsetAsync(hits, 0, sizeof *hits, stream);
    if (err != cudaSuccess) return err;
    // Past kPiReferenceMaxPairs calls per thread (2^32 samples per warp), the next
    // launch goes on where the last stopped in every thread's subsequence.
    for (uint64_t first = 0; first < shape.pairs_per_thread; first += kPiReferenceMaxPairs) {
        const uint64_t pairs = std::min(kPiReferenceMaxPairs, shape.pairs_per_thread - first);
        if (first == 0)
            pi_reference_kernel<false><<<shape.blocks, kPiReferenceBlock, 0, stream>>>(pairs, 0, seed, hits);
        else
            pi_reference_kernel<true><<<shape.blocks, kPiReferenceBlock, 0, stream>>>(pairs, 4 * first, seed, hits);
        if ((err = cudaGetLastError()) != cudaSuccess) return err;
    }
    return cudaSuccess;
}

// ---------------------------------------------------------------- the link ----

namespace {

// What the link ceilings share: the case's ends, the device buffer both copies
// use, and the pinned sink of a case without an output of the input's size.
struct Link {
    const Env &env;
    size_t bytes;
    std::function<LinkEnds()> ends;
    std::unique_ptr<Buffer> device, source, sink;
    cudaStream_t side = nullptr;  // the second direction of the "both at once" ceiling
    cudaEvent_t fork = nullptr, join = nullptr;

    Link(const Env &e, size_t b, std::function<LinkEnds()> f) : env(e), bytes(b), ends(std::move(f)) {}
    ~Link() {
        if (side) cudaStreamDestroy(side);
        if (fork) cudaEventDestroy(fork);
        if (join) cudaEventDestroy(join);
    }
    Link(const Link &) = delete;
    Link &operator=(const Link &) = delete;

    Buffer &device_buffer() {
        if (!device) device = std::make_unique<Buffer>(env, bytes, Place::kDevice);
        return *device;
    }
    // The d2h copy's source when both directions run at once (the h2d copy writes
    // device_buffer()).
    Buffer &source_buffer() {
        if (!source) source = std::make_unique<Buffer>(env, bytes, Place::kDevice);
        return *source;
    }
    // h2d on `s` and d2h on a second stream forked from it and joined back, so the
    // caller's events on `s` time both.
    void both(cudaStream_t s) {
        if (!side) {
            check_cuda(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking), "cudaStreamCreate (link ceiling)");
            check_cuda(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming), "cudaEventCreate (link ceiling)");
            check_cuda(cudaEventCreateWithFlags(&join, cudaEventDisableTiming), "cudaEventCreate (link ceiling)");
        }
        check_cuda(cudaEventRecord(fork, s), "cudaEventRecord (link ceiling)");
        check_cuda(cudaStreamWaitEvent(side, fork, 0), "cudaStreamWaitEvent (link ceiling)");
        check_cuda(cudaMemcpyAsync(out(), source_buffer().data(), bytes, cudaMemcpyDeviceToHost, side),
                   "both-directions ceiling, d2h");
        check_cuda(cudaMemcpyAsync(device_buffer().data(), in(), bytes, cudaMemcpyHostToDevice, s),
                   "both-directions ceiling, h2d");
        check_cuda(cudaEventRecord(join, side), "cudaEventRecord (link ceiling)");
        check_cuda(cudaStreamWaitEvent(s, join, 0), "cudaStreamWaitEvent (link ceiling)");
    }
    // Where the d2h copy writes: the case's output, or the sink.
    void *out() {
        const LinkEnds e = ends();
        if (e.out) {
            if (e.out->bytes() < bytes) throw Error("d2h ceiling: output smaller than the input");
            return e.out->data();
        }
        if (!sink) sink = std::make_unique<Buffer>(env, bytes, Place::kPinned);
        return sink->data();
    }
    const void *in() {
        const LinkEnds e = ends();
        if (!e.in || e.in->bytes() < bytes) throw Error("h2d ceiling: no input of the case's size");
        return e.in->data();
    }
    const unsigned char *expected() { return static_cast<const unsigned char *>(ends().expected); }
};

// Compares device memory with host bytes, a piece at a time (the whole would be a
// second host copy of the input).
bool device_equals(const Env &env, const void *dev, const unsigned char *host, size_t bytes) {
    constexpr size_t kPiece = size_t(64) << 20;
    std::vector<unsigned char> piece(std::min(bytes, kPiece));
    for (size_t at = 0; at < bytes; at += kPiece) {
        const size_t n = std::min(kPiece, bytes - at);
        check_cuda(cudaMemcpyAsync(piece.data(), static_cast<const unsigned char *>(dev) + at, n,
                                   cudaMemcpyDeviceToHost, env.stream),
                   "cudaMemcpyAsync (h2d ceiling check)");
        env.sync();
        if (std::memcmp(piece.data(), host + at, n) != 0) return false;
    }
    return true;
}

}  // namespace

std::vector<Ceiling> link_ceilings(const Env &env, size_t bytes, std::function<LinkEnds()> ends, bool duplex) {
    if (!env.cuda) return {};
    auto link = std::make_shared<Link>(env, bytes, std::move(ends));
    Ceiling h2d{
        "h2d pinned (ceiling)",
        [link](cudaStream_t s) {
            check_cuda(cudaMemcpyAsync(link->device_buffer().data(), link->in(), link->bytes, cudaMemcpyHostToDevice, s),
                       "h2d ceiling");
        },
        [link]() -> Check {
            if (!device_equals(link->env, link->device_buffer().data(), link->expected(), link->bytes))
                return {false, "device copy differs from the input"};
            return {true, "device copy equal to the input"};
        },
    };
    // The device buffer poisoned, so that the check sees this copy's bytes.
    h2d.setup = [link] { link->device_buffer().poison(); };
    h2d.work = double(bytes);

    Ceiling d2h{
        "d2h pinned (ceiling)",
        [link](cudaStream_t s) {
            check_cuda(cudaMemcpyAsync(link->out(), link->device_buffer().data(), link->bytes, cudaMemcpyDeviceToHost, s),
                       "d2h ceiling");
        },
        [link]() -> Check {
            if (std::memcmp(link->out(), link->expected(), link->bytes) != 0)
                return {false, "host copy differs from the input"};
            return {true, "host copy equal to the input"};
        },
    };
    // The input's bytes on the device (untimed), and the sink poisoned; the case's
    // poison() has poisoned its own output.
    d2h.setup = [link] {
        check_cuda(cudaMemcpyAsync(link->device_buffer().data(), link->in(), link->bytes, cudaMemcpyHostToDevice,
                                   link->env.stream),
                   "cudaMemcpyAsync (d2h ceiling source)");
        link->env.sync();
        if (!link->ends().out) {
            link->out();
            link->sink->poison();
        }
    };
    d2h.work = double(bytes);
    if (!duplex) return {h2d, d2h};

    Ceiling both{
        "h2d + d2h at once (ceiling)",
        [link](cudaStream_t s) { link->both(s); },
        [link]() -> Check {
            if (!device_equals(link->env, link->device_buffer().data(), link->expected(), link->bytes))
                return {false, "device copy differs from the input"};
            if (std::memcmp(link->out(), link->expected(), link->bytes) != 0)
                return {false, "host copy differs from the input"};
            return {true, "both copies equal to the input"};
        },
    };
    both.setup = [link] {
        check_cuda(cudaMemcpyAsync(link->source_buffer().data(), link->in(), link->bytes, cudaMemcpyHostToDevice,
                                   link->env.stream),
                   "cudaMemcpyAsync (both-directions ceiling source)");
        link->env.sync();
        link->device_buffer().poison();
        if (!link->ends().out) {
            link->out();
            link->sink->poison();
        }
    };
    both.work = 2.0 * double(bytes);
    return {h2d, d2h, both};
}

}  // namespace gpk_bench
