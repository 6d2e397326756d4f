// The staging pipeline: how gpk_gemm, gpk_transpose and gpk_reduce move host arrays
// through the GPU.
//
// Chunks and lanes. A call is cut into chunks -- panels of C and of the streamed
// operand for gemm, tiles of A and B for transpose, pieces of x for reduce -- and
// chunk c goes to lane c mod S, one of the S streams of the context's pipeline
// (gpk_set_staging), as three steps on that stream: its copies in, the selected rung
// on device pointers into the lane's buffers, its copy out. A lane has one set of
// device buffers, which its chunks use one after the other in stream order; S lanes
// keep up to S chunks in flight, so that across lanes the copy engines and the SMs
// work at once. Device arrays among the operands are used in place.
//
// Host memory. Each host operand is classified once: pinned memory (cudaHostAlloc,
// cudaHostRegister) is copied by DMA straight from or to the caller's array; pageable
// memory passes through the lane's two pinned slots. The host fills a slot only after
// cudaEventSynchronize on the slot's last use by the GPU, and copies a result out of
// a slot only after its copy out has finished. Up to S results wait in their slots
// while the host goes on filling the next chunks, so the host thread keeps ahead of
// the GPU as far as the slots allow. With S == 1 nothing overlaps: every chunk is
// copied in, computed and copied out (to the caller's array) before the next begins.
//
// Order. The call records `start` on the context's stream and every lane waits for
// it, so chunks see what earlier calls wrote to device arrays; at the end the
// context's stream waits for every lane and the call synchronizes it (host arrays
// make a call synchronous). Nothing else is waited for, so the trace (two timing
// events around every step) costs only the event records.
//
// gemm's resident operand. The caller's B stays on the device while the row panels
// of the caller's A and C stream through (for a row-major call, whose operands
// dispatch swapped, that is the normalized A, and the panels are columns of the
// normalized C). It is copied on lane 0, and every kernel waits for that copy
// (resident_ready). When it does not fit beside one chunk per lane in the device
// budget, it is cut into blocks of columns of the caller's C, at most half the
// budget each, and the streamed operand is copied again for every block: out of
// core, for operands larger than the GPU. A block is copied only after every lane
// has finished with the one before (marks), since they share one buffer.
//
// Chunk sizes. About chunk_bytes of host data per chunk, or by default 32 MiB and at
// least two chunks per stream; panels are multiples of 64 rows or columns (kernel
// tiles) when longer. Reduce's pieces are reduced to partials in device memory, which
// the rung then reduces in piece order. A transpose's tile of h x w elements is w
// lines of h in A and h lines of w in B. DMA of lines far apart is slow unless they
// are long (on an H100, lines 64 KiB apart: 34 GB/s for 4 KiB lines, 49 for 8
// and 16 KiB, the link's 55 for 32 KiB; lines half their pitch apart run at the
// link's speed however short): the tile is as square as the matrix allows when both
// arrays are on the host (when one is, its lines as long as the matrix allows), and
// by default its lines on the host sides are kTransposeLine (32 KiB) long where two
// tiles per stream allow (16384^2 F32: 9 tiles of up to 5760^2, 22.5 KiB lines).
//
// Budget. gpk_set_staging's device_bytes, or else the GPU's free memory less a
// margin, plus what the pipeline already holds. The plan halves the panels (the
// longer side of transpose's tiles) until one chunk per lane (and gemm's resident
// block) fits. Every buffer the plan needs is allocated before the first copy, so
// running out of memory is reported before anything is written; buffers are kept for
// the next call and grow only, unless keeping them would pass the budget: then the
// call starts over with what it needs.
#include "pipeline.hpp"

#include "ladders.hpp"
#include "resources.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <new>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace gpk::cuda {
namespace {

constexpr size_t kDefaultChunkBytes = size_t{32} << 20;  // of streamed data, when chunk_bytes is 0
constexpr size_t kMaxTraceSteps = size_t{1} << 16;       // steps of one call kept in the trace
constexpr size_t kAlignment = 256;                       // of every buffer carved out of another
constexpr size_t kLinePadBytes = 16;                     // device copies: lines start 16-byte aligned
constexpr size_t kResidentPiece = size_t{8} << 20;       // pageable resident operand: slot-sized pieces
constexpr size_t kParallelCopyBytes = size_t{4} << 20;   // host copies this large use several threads
constexpr int kCopyThreads = 8;                          // about what saturates a socket's memory
constexpr size_t kUncappedGranule = size_t{1} << 20;     // growth step of buffers without a cap
constexpr size_t kTransposeLine = size_t{32} << 10;      // transpose: least line of a strided copy, by default

size_t align_up(size_t bytes, size_t to = kAlignment) { return (bytes + to - 1) / to * to; }
int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// ---- pieces of matrices ------------------------------------------------------------

// A piece of a matrix in the caller's memory: `outer` lines of `inner` elements, `ld`
// elements apart, from `ptr` (host or device memory).
struct Piece {
    char *ptr;
    int64_t inner, outer, ld;
};

// The leading dimension of a piece's device copy: lines padded to 16 bytes, so that
// the rungs' vector paths apply.
int64_t device_ld(int64_t inner, size_t es) {
    const auto per = static_cast<int64_t>(kLinePadBytes / es);
    return std::max<int64_t>(1, ceil_div(inner, per) * per);
}
size_t device_bytes(const Piece &p, size_t es) {
    return align_up(static_cast<size_t>(device_ld(p.inner, es) * p.outer) * es);
}
// In a pinned slot the lines are packed.
size_t packed_bytes(const Piece &p, size_t es) { return align_up(static_cast<size_t>(p.inner * p.outer) * es); }

enum class Memory { Device, Pinned, Pageable };

// Whether the GPU can reach [p, p + bytes) by DMA: pinned or registered host memory at
// both ends.
bool pinned_span(const void *p, size_t bytes) {
    auto is_pinned = [](const void *q) {
        cudaPointerAttributes attr{};
        if (cudaPointerGetAttributes(&attr, q) != cudaSuccess) {
            cudaGetLastError();
            return false;
        }
        return attr.type == cudaMemoryTypeHost;
    };
    return bytes > 0 && is_pinned(p) && is_pinned(static_cast<const char *>(p) + bytes - 1);
}

Memory memory_of(const Piece &p, size_t es, bool device) {
    if (device) return Memory::Device;
    if (p.inner <= 0 || p.outer <= 0) return Memory::Pageable;
    const size_t span = static_cast<size_t>((p.outer - 1) * p.ld + p.inner) * es;
    return pinned_span(p.ptr, span) ? Memory::Pinned : Memory::Pageable;
}

// One copy between the caller's memory and a device buffer, in bytes.
struct Transfer {
    char *host;  // the caller's array (written only by a copy out)
    size_t host_pitch;
    char *device;
    size_t device_pitch;
    size_t width, height;
    bool pinned;  // DMA from/to `host` itself; else through a slot
};

Transfer transfer(const Piece &p, char *device, int64_t device_ld_elems, size_t es, Memory m) {
    return Transfer{p.ptr,
                    static_cast<size_t>(p.ld) * es,
                    device,
                    static_cast<size_t>(device_ld_elems) * es,
                    static_cast<size_t>(p.inner) * es,
                    static_cast<size_t>(p.outer),
                    m == Memory::Pinned};
}

cudaError_t copy_2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                    cudaMemcpyKind kind, cudaStream_t s) {
    if (height == 1 || (dpitch == width && spitch == width))
        return cudaMemcpyAsync(dst, src, width * height, kind, s);
    return cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, height, kind, s);
}

// ---- host copies --------------------------------------------------------------------

struct HostCopy {
    char *dst;
    size_t dpitch;
    const char *src;
    size_t spitch;
    size_t width, height;
};

// A 2-D memcpy on the host; large ones on several threads, since one core's memcpy
// is slower than the link.
void host_copy(const HostCopy &c) {
    size_t width = c.width, height = c.height;
    if (c.dpitch == c.width && c.spitch == c.width) width *= height, height = 1;
#ifdef _OPENMP
    const int threads = std::min(kCopyThreads, omp_get_max_threads());
    if (threads > 1 && width * height >= kParallelCopyBytes && !omp_in_parallel()) {
        // Each line cut into `parts` pieces, so that a few long lines spread too.
        const auto parts = static_cast<int64_t>(
            height >= static_cast<size_t>(2 * threads) ? 1 : ceil_div(2 * threads, static_cast<int64_t>(height)));
        const int64_t piece = ceil_div(static_cast<int64_t>(width), parts);
        const int64_t tasks = static_cast<int64_t>(height) * parts;
#pragma omp parallel for num_threads(threads) schedule(static)
        for (int64_t t = 0; t < tasks; ++t) {
            const int64_t line = t / parts, from = (t % parts) * piece;
            const int64_t bytes = std::min<int64_t>(piece, static_cast<int64_t>(width) - from);
            if (bytes > 0)
                std::memcpy(c.dst + line * c.dpitch + from, c.src + line * c.spitch + from, static_cast<size_t>(bytes));
        }
        return;
    }
#endif
    for (size_t line = 0; line < height; ++line) std::memcpy(c.dst + line * c.dpitch, c.src + line * c.spitch, width);
}

// ---- the pipeline's state -------------------------------------------------------------

// A pinned staging buffer of a lane.
struct HostSlot {
    char *ptr = nullptr;
    size_t capacity = 0;
    cudaEvent_t done = nullptr;  // recorded after the GPU's last use of the slot
    bool armed = false;          // `done` recorded and not yet waited for
    bool out_pending = false;    // a result sits in the slot for the caller's array
    HostCopy out{};
};

struct LaneState {
    Lane lane;  // stream, scratch, zero word, cuBLAS handle
    char *device = nullptr;
    size_t device_capacity = 0;
    HostSlot slots[2];
    int next_slot = 0;
    cudaEvent_t mark = nullptr;  // "everything issued so far": joins
};

struct Step {
    int32_t kind, lane;
    int64_t chunk;
    uint64_t bytes;
};

}  // namespace

class Pipeline {
public:
    LaneState lanes[StagingSettings::kMaxStreams];
    int made = 0;  // lanes[0 .. made) have their stream and events
    char *shared = nullptr;  // gemm's resident block, reduce's partials and result
    size_t shared_capacity = 0;
    cudaEvent_t start = nullptr;           // timing: the call's start, on the context's stream
    cudaEvent_t resident_ready = nullptr;  // after the last copy of the resident block
    std::vector<cudaEvent_t> timers;       // timing events; steps[i] between 2i and 2i + 1
    std::vector<Step> steps;
    bool traced = false;  // steps describe the last call that staged host arrays

    size_t device_held() const {
        size_t held = shared_capacity;
        for (int l = 0; l < made; ++l) held += lanes[l].device_capacity + lanes[l].lane.scratch_capacity;
        return held;
    }
};

void destroy_pipeline(Pipeline *p) {
    if (p == nullptr) return;
    // Every lane, made or half made (a failure in make_lanes leaves it so).
    for (LaneState &L : p->lanes) {
        release_lane(L.lane);  // waits for the stream first
        if (L.device != nullptr) cudaFree(L.device);
        for (HostSlot &s : L.slots) {
            if (s.ptr != nullptr) cudaFreeHost(s.ptr);
            if (s.done != nullptr) cudaEventDestroy(s.done);
        }
        if (L.mark != nullptr) cudaEventDestroy(L.mark);
    }
    if (p->shared != nullptr) cudaFree(p->shared);
    if (p->start != nullptr) cudaEventDestroy(p->start);
    if (p->resident_ready != nullptr) cudaEventDestroy(p->resident_ready);
    for (cudaEvent_t e : p->timers) cudaEventDestroy(e);
    cudaGetLastError();
    delete p;
}

namespace {

// The context's pipeline, for a new call: the trace is the old call's no more, even
// if this one fails before it issues anything.
gpk_status get_pipeline(gpk_context &ctx, Pipeline **out) {
    Pipeline *&p = pipeline_of(ctx);
    if (p == nullptr) {
        p = new (std::nothrow) Pipeline;
        GPK_RETURN_ERROR_IF(p == nullptr, &ctx, GPK_ERROR_OUT_OF_MEMORY, "out of host memory for the staging pipeline");
    }
    p->traced = false;
    p->steps.clear();
    *out = p;
    return GPK_SUCCESS;
}

gpk_status new_event(gpk_context &ctx, unsigned flags, cudaEvent_t *event) {
    if (*event != nullptr) return GPK_SUCCESS;
    return check(ctx, cudaEventCreateWithFlags(event, flags), "cudaEventCreateWithFlags (staging pipeline)");
}

// Streams and events of lanes [0, count), made once.
gpk_status make_lanes(gpk_context &ctx, Pipeline &p, int count) {
    GPK_FORWARD_IF_ERROR(new_event(ctx, cudaEventDefault, &p.start));
    GPK_FORWARD_IF_ERROR(new_event(ctx, cudaEventDisableTiming, &p.resident_ready));
    for (; p.made < count; ++p.made) {
        LaneState &L = p.lanes[p.made];
        if (L.lane.stream == nullptr)
            GPK_CUDA_TRY(ctx, cudaStreamCreateWithFlags(&L.lane.stream, cudaStreamNonBlocking));
        GPK_FORWARD_IF_ERROR(new_event(ctx, cudaEventDisableTiming, &L.mark));
        for (HostSlot &s : L.slots) GPK_FORWARD_IF_ERROR(new_event(ctx, cudaEventDisableTiming, &s.done));
    }
    return GPK_SUCCESS;
}

// What a call's plan needs.
struct Needs {
    int lanes;            // lanes it uses
    size_t lane_device;   // device bytes per lane
    size_t lane_scratch;  // device bytes per lane reserved for the rung's scratch (reduce)
    size_t shared;        // device bytes shared by the lanes
    size_t slot;          // pinned bytes per slot; 0 when no operand is pageable

    size_t device() const { return shared + static_cast<size_t>(lanes) * (lane_device + lane_scratch); }
};

// Scratch that a reduce rung asks for on `count` elements: two passes' partials at
// most, one 8-byte value per 256 elements or more, or CUB's temporary storage (a few
// KiB on any GPU), rounded as reserve_lane_scratch rounds.
size_t reduce_scratch(int64_t count) {
    const size_t bytes = static_cast<size_t>(count / 256 + count / 65536 + 4) * 8 + (size_t{128} << 10);
    return align_up(bytes, size_t{64} << 10);
}

gpk_status device_budget(gpk_context &ctx, const Pipeline &p, size_t *budget) {
    if (ctx.staging.device_bytes != 0) {
        *budget = ctx.staging.device_bytes;
        return GPK_SUCCESS;
    }
    size_t free_bytes = 0, total = 0;
    GPK_CUDA_TRY(ctx, cudaMemGetInfo(&free_bytes, &total));
    // Room left for what others allocate (vendor handles and their workspaces, the
    // context's workspace): 1/16 of what is free, within [64 MiB, 256 MiB]. A GPU with
    // less than 64 MiB free has nothing for the pipeline but what it holds already.
    const size_t margin = std::min(free_bytes, std::clamp(free_bytes / 16, size_t{64} << 20, size_t{256} << 20));
    *budget = p.device_held() + (free_bytes - margin);
    return GPK_SUCCESS;
}

gpk_status too_small(gpk_context &ctx, size_t need, int lanes, size_t budget) {
    const char *plural = lanes == 1 ? "" : "s";
    if (ctx.staging.device_bytes != 0)
        return fail(&ctx, GPK_ERROR_OUT_OF_MEMORY,
                    "device_bytes (%zu, gpk_set_staging) is below the %zu bytes of device memory the staging "
                    "pipeline needs for the smallest chunk on each of its %d stream%s",
                    ctx.staging.device_bytes, need, lanes, plural);
    size_t free_bytes = 0, total = 0;
    if (cudaMemGetInfo(&free_bytes, &total) != cudaSuccess) cudaGetLastError();
    return fail(&ctx, GPK_ERROR_OUT_OF_MEMORY,
                "the staging pipeline needs %zu bytes of device memory for the smallest chunk on each of its %d "
                "stream%s, but can take only %zu on GPU %d (%zu bytes free, of which it leaves 1/16, at least 64 "
                "MiB, to others)",
                need, lanes, plural, budget, ctx.device, free_bytes);
}

// `bytes` rounded up to `granule`, or exactly when that much is not to be had.
gpk_status device_alloc(gpk_context &ctx, size_t bytes, size_t granule, char **ptr, size_t *capacity) {
    if (*ptr != nullptr) cudaFree(*ptr);
    *ptr = nullptr;
    *capacity = 0;
    const size_t exact = align_up(bytes);
    size_t size = align_up(bytes, granule);
    void *q = nullptr;
    cudaError_t e = cudaMalloc(&q, size);
    if (e != cudaSuccess && size > exact) {
        cudaGetLastError();
        e = cudaMalloc(&q, size = exact);
    }
    if (e != cudaSuccess) {
        cudaGetLastError();
        return fail(&ctx, GPK_ERROR_OUT_OF_MEMORY,
                    "cannot allocate %zu bytes of device memory for the staging pipeline on GPU %d: %s", size,
                    ctx.device, cudaGetErrorString(e));
    }
    *ptr = static_cast<char *>(q);
    *capacity = size;
    return GPK_SUCCESS;
}

gpk_status pinned_alloc(gpk_context &ctx, size_t bytes, HostSlot *slot) {
    if (slot->ptr != nullptr) cudaFreeHost(slot->ptr);
    slot->ptr = nullptr;
    slot->capacity = 0;
    void *q = nullptr;
    const cudaError_t e = cudaHostAlloc(&q, bytes, cudaHostAllocDefault);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return fail(&ctx, GPK_ERROR_OUT_OF_MEMORY,
                    "cannot allocate %zu bytes of pinned host memory for the staging pipeline: %s", bytes,
                    cudaGetErrorString(e));
    }
    slot->ptr = static_cast<char *>(q);
    slot->capacity = bytes;
    return GPK_SUCCESS;
}

// Makes the buffers of `n` exist, within `budget` (device_budget's). Nothing of the
// pipeline is in flight between calls (a call ends synchronized, or aborted after
// waiting for its lanes), so buffers may be freed here.
gpk_status provision(gpk_context &ctx, Pipeline &p, const Needs &n, size_t budget) {
    GPK_FORWARD_IF_ERROR(make_lanes(ctx, p, n.lanes));
    // What the pipeline would hold if its buffers only grew, to sizes rounded up to
    // `granule`.
    auto kept = [&](size_t granule) {
        auto grown = [granule](size_t capacity, size_t need) {
            return capacity >= need ? capacity : align_up(need, granule);
        };
        size_t bytes = grown(p.shared_capacity, n.shared);
        for (int l = 0; l < p.made; ++l) {
            const LaneState &L = p.lanes[l];
            bytes += l < n.lanes ? grown(L.device_capacity, n.lane_device) +
                                       std::max(L.lane.scratch_capacity, n.lane_scratch)
                                 : L.device_capacity + L.lane.scratch_capacity;
        }
        return bytes;
    };
    // Without a cap, sizes are rounded up so that slowly growing calls seldom
    // reallocate, if the budget allows.
    const size_t granule =
        ctx.staging.device_bytes == 0 && kept(kUncappedGranule) <= budget ? kUncappedGranule : kAlignment;
    if (kept(granule) > budget) {
        // Past the budget: start over with what this call needs.
        cudaFree(p.shared);
        p.shared = nullptr, p.shared_capacity = 0;
        for (int l = 0; l < p.made; ++l) {
            LaneState &L = p.lanes[l];
            cudaFree(L.device);
            L.device = nullptr, L.device_capacity = 0;
            release_lane_scratch(L.lane);
        }
    }
    if (n.shared > 0 && p.shared_capacity < n.shared)
        GPK_FORWARD_IF_ERROR(device_alloc(ctx, n.shared, granule, &p.shared, &p.shared_capacity));
    for (int l = 0; l < n.lanes; ++l) {
        LaneState &L = p.lanes[l];
        if (n.lane_device > 0 && L.device_capacity < n.lane_device)
            GPK_FORWARD_IF_ERROR(device_alloc(ctx, n.lane_device, granule, &L.device, &L.device_capacity));
        if (n.lane_scratch > 0) GPK_FORWARD_IF_ERROR(reserve_lane_scratch(ctx, L.lane, n.lane_scratch));
        if (n.slot > 0)
            for (HostSlot &s : L.slots)
                if (s.capacity < n.slot) GPK_FORWARD_IF_ERROR(pinned_alloc(ctx, align_up(n.slot, kUncappedGranule), &s));
    }
    return GPK_SUCCESS;
}

// What a rung would otherwise make on its first chunk on each lane, in the middle
// of the call: a cuBLAS handle for the vendor's rungs, the zero word for reduce's.
gpk_status prepare_lanes(gpk_context &ctx, Pipeline &p, int lanes, bool cublas_handle, bool zero) {
    for (int l = 0; l < lanes; ++l) {
        LaneScope scope(ctx, p.lanes[l].lane);
        if (cublas_handle) {
            cublasHandle_t handle = nullptr;
            GPK_FORWARD_IF_ERROR(cublas(ctx, &handle));
        }
        if (zero) {
            unsigned int *word = nullptr;
            GPK_FORWARD_IF_ERROR(zero_word(ctx, &word));
        }
    }
    return GPK_SUCCESS;
}

// Elements of a panel: about `target` bytes of streamed data at `per_unit` bytes per
// element of the panel's length, within [1, total]. With the library's choice of
// chunk (chunk_bytes 0) there are at least 2 chunks per stream when `total` allows,
// so that the streams overlap, and no fewer than `least` elements per chunk; the
// length is a multiple of `granule` where it exceeds it (tile-friendly for kernels).
int64_t panel_length(int64_t total, size_t per_unit, const StagingSettings &st, int64_t granule,
                     int64_t least = 0) {
    const size_t target = st.chunk_bytes != 0 ? st.chunk_bytes : kDefaultChunkBytes;
    int64_t n = per_unit == 0 ? total
                              : static_cast<int64_t>(std::min<size_t>(static_cast<size_t>(total),
                                                                      std::max<size_t>(1, target / per_unit)));
    if (st.chunk_bytes == 0) {
        n = std::min(n, ceil_div(total, 2 * static_cast<int64_t>(st.streams)));
        n = std::max(n, std::min(total, std::max(granule, least)));
    }
    if (n > granule) n -= n % granule;
    return std::max<int64_t>(n, 1);
}

// ---- one call ---------------------------------------------------------------------------

class Call {
public:
    Call(gpk_context &ctx, Pipeline &p, int lanes)
        : ctx_(ctx), p_(p), lanes_(lanes), strict_(ctx.staging.streams == 1), lag_(strict_ ? 0 : lanes) {}
    ~Call() {
        if (!completed_) cancel();  // an exception on the way out
    }
    Call(const Call &) = delete;
    Call &operator=(const Call &) = delete;

    int lane_of(int64_t chunk) const { return static_cast<int>(chunk % lanes_); }

    // begin(), body, and on any failure cancel(): the body ends with finish() and wait().
    template <class Body>
    gpk_status run(Body &&body) {
        gpk_status st = begin();
        if (st == GPK_SUCCESS) st = body();
        if (st != GPK_SUCCESS) cancel();
        completed_ = true;
        return st;
    }

    // One chunk on its lane: `in` copied to the device, `compute` run on the lane
    // (after the resident block is there, if wait_resident), `out` copied back.
    template <class Compute>
    gpk_status chunk(int64_t index, const Transfer *in, int n_in, const Transfer *out, bool wait_resident,
                     Compute &&compute) {
        const int l = lane_of(index);
        LaneState &L = p_.lanes[l];
        const cudaStream_t s = L.lane.stream;
        bool staged = out != nullptr && !out->pinned;
        for (int i = 0; i < n_in; ++i) staged = staged || !in[i].pinned;
        HostSlot *slot = nullptr;
        if (staged) {
            slot = &L.slots[L.next_slot];
            L.next_slot ^= 1;
            GPK_FORWARD_IF_ERROR(acquire(*slot));
        }
        size_t offset = 0;
        for (int i = 0; i < n_in; ++i) {
            const Transfer &t = in[i];
            const char *src = t.host;
            size_t pitch = t.host_pitch;
            if (!t.pinned) {
                char *packed = slot->ptr + offset;
                host_copy(HostCopy{packed, t.width, t.host, t.host_pitch, t.width, t.height});
                src = packed, pitch = t.width;
                offset += align_up(t.width * t.height);
            }
            GPK_FORWARD_IF_ERROR(copy(GPK_STAGE_COPY_IN, l, index, t.device, t.device_pitch, src, pitch, t.width,
                                      t.height, cudaMemcpyHostToDevice));
        }
        // A slot that only fed copies in is free again once they are done.
        if (staged && (out == nullptr || out->pinned)) GPK_FORWARD_IF_ERROR(release(*slot, s));
        if (wait_resident) GPK_CUDA_TRY(ctx_, cudaStreamWaitEvent(s, p_.resident_ready, 0));
        GPK_FORWARD_IF_ERROR(timed(GPK_STAGE_COMPUTE, l, index, 0, [&]() -> gpk_status {
            LaneScope scope(ctx_, L.lane);
            return compute();
        }));
        if (out != nullptr) {
            const Transfer &t = *out;
            // The result overwrites the slot's copies in: stream order puts it after them.
            char *dst = t.pinned ? t.host : slot->ptr;
            const size_t pitch = t.pinned ? t.host_pitch : t.width;
            GPK_FORWARD_IF_ERROR(copy(GPK_STAGE_COPY_OUT, l, index, dst, pitch, t.device, t.device_pitch, t.width,
                                      t.height, cudaMemcpyDeviceToHost));
            if (!t.pinned) {
                GPK_FORWARD_IF_ERROR(release(*slot, s));
                slot->out = HostCopy{t.host, t.host_pitch, slot->ptr, t.width, t.width, t.height};
                slot->out_pending = true;
                waiting_.push_back(slot);
            }
        }
        if (strict_) GPK_CUDA_TRY(ctx_, cudaStreamSynchronize(s));
        while (waiting_.size() > lag_) {
            HostSlot *w = waiting_.front();
            waiting_.pop_front();
            GPK_FORWARD_IF_ERROR(drain(*w));
        }
        return GPK_SUCCESS;
    }

    // Copies gemm's resident block on lane 0, once every lane is done with the block
    // before (`reuse`); the kernels wait for resident_ready. Traced as copies in of
    // `chunk`, the first chunk that uses the block.
    gpk_status upload_resident(int64_t chunk, const Transfer &t, bool reuse) {
        LaneState &L0 = p_.lanes[0];
        const cudaStream_t s0 = L0.lane.stream;
        if (reuse) {
            for (int l = 1; l < lanes_; ++l) {
                GPK_CUDA_TRY(ctx_, cudaEventRecord(p_.lanes[l].mark, p_.lanes[l].lane.stream));
                GPK_CUDA_TRY(ctx_, cudaStreamWaitEvent(s0, p_.lanes[l].mark, 0));
            }
        }
        if (t.pinned) {
            GPK_FORWARD_IF_ERROR(copy(GPK_STAGE_COPY_IN, 0, chunk, t.device, t.device_pitch, t.host, t.host_pitch,
                                      t.width, t.height, cudaMemcpyHostToDevice));
        } else {
            const size_t room = std::min(L0.slots[0].capacity, L0.slots[1].capacity);
            const size_t lines = std::max<size_t>(1, room / t.width);  // the plan makes room >= t.width
            for (size_t first = 0; first < t.height; first += lines) {
                const size_t count = std::min(lines, t.height - first);
                HostSlot &slot = L0.slots[L0.next_slot];
                L0.next_slot ^= 1;
                GPK_FORWARD_IF_ERROR(acquire(slot));
                host_copy(HostCopy{slot.ptr, t.width, t.host + first * t.host_pitch, t.host_pitch, t.width, count});
                GPK_FORWARD_IF_ERROR(copy(GPK_STAGE_COPY_IN, 0, chunk, t.device + first * t.device_pitch,
                                          t.device_pitch, slot.ptr, t.width, t.width, count, cudaMemcpyHostToDevice));
                GPK_FORWARD_IF_ERROR(release(slot, s0));
            }
        }
        GPK_CUDA_TRY(ctx_, cudaEventRecord(p_.resident_ready, s0));
        if (strict_) GPK_CUDA_TRY(ctx_, cudaStreamSynchronize(s0));
        return GPK_SUCCESS;
    }

    // Every result to the caller's arrays, and the context's stream after every lane.
    gpk_status finish() {
        while (!waiting_.empty()) {
            HostSlot *w = waiting_.front();
            waiting_.pop_front();
            GPK_FORWARD_IF_ERROR(drain(*w));
        }
        const cudaStream_t main = stream(ctx_);
        for (int l = 0; l < lanes_; ++l) {
            GPK_CUDA_TRY(ctx_, cudaEventRecord(p_.lanes[l].mark, p_.lanes[l].lane.stream));
            GPK_CUDA_TRY(ctx_, cudaStreamWaitEvent(main, p_.lanes[l].mark, 0));
        }
        return GPK_SUCCESS;
    }

    // The call's end: everything it issued has finished, and the trace is complete.
    gpk_status wait() {
        GPK_CUDA_TRY(ctx_, cudaStreamSynchronize(stream(ctx_)));
        p_.traced = true;
        return GPK_SUCCESS;
    }

private:
    gpk_status begin() {
        p_.traced = false;
        p_.steps.clear();
        const cudaStream_t main = stream(ctx_);
        GPK_CUDA_TRY(ctx_, cudaEventRecord(p_.start, main));
        for (int l = 0; l < lanes_; ++l) GPK_CUDA_TRY(ctx_, cudaStreamWaitEvent(p_.lanes[l].lane.stream, p_.start, 0));
        return GPK_SUCCESS;
    }

    // After a failure: wait for whatever the lanes still have, so that no copy touches
    // the caller's arrays or a slot after the call returns, and leave the slots empty
    // and the CUDA runtime without a pending error, ready for the next call.
    void cancel() {
        for (int l = 0; l < lanes_; ++l) {
            LaneState &L = p_.lanes[l];
            cudaStreamSynchronize(L.lane.stream);
            for (HostSlot &s : L.slots) s.armed = false, s.out_pending = false;
        }
        waiting_.clear();
        p_.steps.clear();
        p_.traced = false;
        cudaGetLastError();
    }

    // A slot the host may write: its result, if any, moved to the caller's array, and
    // the GPU done with it.
    gpk_status acquire(HostSlot &slot) {
        if (slot.out_pending) {
            waiting_.erase(std::find(waiting_.begin(), waiting_.end(), &slot));
            return drain(slot);
        }
        if (slot.armed) {
            GPK_CUDA_TRY(ctx_, cudaEventSynchronize(slot.done));
            slot.armed = false;
        }
        return GPK_SUCCESS;
    }

    gpk_status release(HostSlot &slot, cudaStream_t s) {
        GPK_CUDA_TRY(ctx_, cudaEventRecord(slot.done, s));
        slot.armed = true;
        return GPK_SUCCESS;
    }

    gpk_status drain(HostSlot &slot) {
        GPK_CUDA_TRY(ctx_, cudaEventSynchronize(slot.done));
        host_copy(slot.out);
        slot.out_pending = false;
        slot.armed = false;
        return GPK_SUCCESS;
    }

    gpk_status copy(int kind, int lane, int64_t chunk, void *dst, size_t dpitch, const void *src, size_t spitch,
                    size_t width, size_t height, cudaMemcpyKind direction) {
        const cudaStream_t s = p_.lanes[lane].lane.stream;
        return timed(kind, lane, chunk, static_cast<uint64_t>(width * height), [&] {
            return check(ctx_, copy_2d(dst, dpitch, src, spitch, width, height, direction, s),
                         direction == cudaMemcpyHostToDevice ? "cudaMemcpy2DAsync (staging pipeline, to the GPU)"
                                                             : "cudaMemcpy2DAsync (staging pipeline, to the host)");
        });
    }

    // `op` between two timing events on the lane's stream, recorded as a step of the
    // trace (the first kMaxTraceSteps steps of a call).
    template <class Op>
    gpk_status timed(int kind, int lane, int64_t chunk, uint64_t bytes, Op &&op) {
        const size_t i = p_.steps.size();
        if (i >= kMaxTraceSteps) return op();
        while (p_.timers.size() < 2 * i + 2) {
            cudaEvent_t e = nullptr;
            GPK_CUDA_TRY(ctx_, cudaEventCreate(&e));
            try {
                p_.timers.push_back(e);
            } catch (...) {
                cudaEventDestroy(e);
                throw;
            }
        }
        const cudaStream_t s = p_.lanes[lane].lane.stream;
        GPK_CUDA_TRY(ctx_, cudaEventRecord(p_.timers[2 * i], s));
        GPK_FORWARD_IF_ERROR(op());
        GPK_CUDA_TRY(ctx_, cudaEventRecord(p_.timers[2 * i + 1], s));
        p_.steps.push_back(Step{kind, lane, chunk, bytes});
        return GPK_SUCCESS;
    }

    gpk_context &ctx_;
    Pipeline &p_;
    const int lanes_;
    const bool strict_;  // one stream: nothing overlaps, not even the host's copies
    const size_t lag_;   // results that may wait in slots while the host goes on
    std::deque<HostSlot *> waiting_;
    bool completed_ = false;
};

// ---- gemm geometry ----------------------------------------------------------------------

// Rows [i0, i0 + count) of op(A) as stored: a column-major m x k A keeps them as the
// inner part of its k columns; a transposed one (stored k x m) as `count` whole columns.
Piece rows_of_op_a(const GemmArgs &a, size_t es, int64_t i0, int64_t count) {
    char *A = static_cast<char *>(const_cast<void *>(a.A));
    if (!a.transa) return Piece{A + i0 * es, count, a.k, a.lda};
    return Piece{A + i0 * a.lda * es, a.k, count, a.lda};
}

// Columns [j0, j0 + count) of op(B) as stored.
Piece cols_of_op_b(const GemmArgs &a, size_t es, int64_t j0, int64_t count) {
    char *B = static_cast<char *>(const_cast<void *>(a.B));
    if (!a.transb) return Piece{B + j0 * a.ldb * es, a.k, count, a.ldb};
    return Piece{B + j0 * es, count, a.k, a.ldb};
}

Piece c_tile(const GemmArgs &a, size_t es, int64_t i0, int64_t rows, int64_t j0, int64_t cols) {
    return Piece{static_cast<char *>(a.C) + (i0 + j0 * a.ldc) * es, rows, cols, a.ldc};
}

}  // namespace

// ---- gemm -------------------------------------------------------------------------------

gpk_status staged_gemm(gpk_context &ctx, const GemmArgs &a, Launcher<GemmArgs> run, bool resident_a, bool dev_a,
                       bool dev_b, bool dev_c) {
    Pipeline *pp = nullptr;
    GPK_FORWARD_IF_ERROR(get_pipeline(ctx, &pp));
    Pipeline &p = *pp;
    const StagingSettings &st = ctx.staging;
    const size_t es = dtype_size(a.dtype);
    const bool product = a.k > 0;  // else C = beta C: A and B are not read
    const bool read_c = a.beta != 0.0;

    // X is the streamed operand, Y the resident one. Panels run along P (rows of C when
    // B is resident, columns when A is), the resident blocks along Q.
    const int64_t P = resident_a ? a.n : a.m, Q = resident_a ? a.m : a.n;
    auto streamed = [&](int64_t p0, int64_t count) {
        return resident_a ? cols_of_op_b(a, es, p0, count) : rows_of_op_a(a, es, p0, count);
    };
    auto resident = [&](int64_t q0, int64_t count) {
        return resident_a ? rows_of_op_a(a, es, q0, count) : cols_of_op_b(a, es, q0, count);
    };
    auto tile = [&](int64_t p0, int64_t pc, int64_t q0, int64_t qc) {
        return resident_a ? c_tile(a, es, q0, qc, p0, pc) : c_tile(a, es, p0, pc, q0, qc);
    };
    const Memory mx = product ? memory_of(streamed(0, P), es, resident_a ? dev_b : dev_a) : Memory::Device;
    const Memory my = product ? memory_of(resident(0, Q), es, resident_a ? dev_a : dev_b) : Memory::Device;
    const Memory mc = memory_of(tile(0, P, 0, Q), es, dev_c);
    const bool x_host = mx != Memory::Device, y_host = my != Memory::Device, c_host = mc != Memory::Device;

    // ---- the plan: panel length pn, block width q
    auto lane_bytes = [&](int64_t pc, int64_t qc) {
        return (x_host ? device_bytes(streamed(0, pc), es) : 0) + (c_host ? device_bytes(tile(0, pc, 0, qc), es) : 0);
    };
    auto resident_bytes = [&](int64_t qc) { return y_host ? device_bytes(resident(0, qc), es) : 0; };
    auto per_unit = [&](int64_t qc) {  // streamed bytes per element of a panel's length
        return (x_host ? static_cast<size_t>(a.k) * es : 0) +
               (c_host ? static_cast<size_t>(qc) * es * (read_c ? 2 : 1) : 0);
    };
    auto lanes_for = [&](int64_t pc, int64_t qc) {
        return static_cast<int>(std::min<int64_t>(st.streams, ceil_div(P, pc) * ceil_div(Q, qc)));
    };
    auto need = [&](int64_t pc, int64_t qc) {
        return resident_bytes(qc) + static_cast<size_t>(lanes_for(pc, qc)) * lane_bytes(pc, qc);
    };
    size_t budget = 0;
    GPK_FORWARD_IF_ERROR(device_budget(ctx, p, &budget));
    auto fit_panel = [&](int64_t qc) {
        int64_t pc = panel_length(P, per_unit(qc), st, 64);
        while (pc > 1 && need(pc, qc) > budget) pc /= 2;
        return pc;
    };
    // A plan that fits with panels of at least 64 (or the planned length, if shorter):
    // rather than panels of a few rows beside a whole resident operand, blocks of it.
    auto acceptable = [&](int64_t pc, int64_t qc) {
        return need(pc, qc) <= budget && pc >= std::min<int64_t>(panel_length(P, per_unit(qc), st, 64), 64);
    };
    int64_t q = Q, pn = fit_panel(Q);
    if (!acceptable(pn, q)) {
        const int64_t whole_pn = pn;
        const bool whole_fits = need(pn, Q) <= budget;
        // Out of core: blocks of the resident operand of at most half the budget, as
        // few as that allows, of equal width; narrower if a panel does not fit beside.
        int64_t widest = 1;
        if (resident_bytes(1) <= budget / 2) {
            int64_t lo = 1, hi = Q;
            while (lo < hi) {
                const int64_t mid = lo + (hi - lo + 1) / 2;
                if (resident_bytes(mid) <= budget / 2) lo = mid;
                else hi = mid - 1;
            }
            widest = lo;
        }
        q = ceil_div(Q, ceil_div(Q, widest));
        for (;;) {
            pn = fit_panel(q);
            if (acceptable(pn, q) || q == 1) break;
            q = ceil_div(q, 2);
        }
        // Blocks do not help when even a block of one column leaves short panels.
        if (!acceptable(pn, q) && whole_fits) q = Q, pn = whole_pn;
        if (need(pn, q) > budget) return too_small(ctx, need(1, 1), lanes_for(1, 1), budget);
    }

    Needs needs{lanes_for(pn, q), lane_bytes(pn, q), 0, resident_bytes(q), 0};
    {
        const size_t in = (mx == Memory::Pageable ? packed_bytes(streamed(0, pn), es) : 0) +
                          (mc == Memory::Pageable && read_c ? packed_bytes(tile(0, pn, 0, q), es) : 0);
        const size_t out = mc == Memory::Pageable ? packed_bytes(tile(0, pn, 0, q), es) : 0;
        needs.slot = std::max(in, out);
        if (my == Memory::Pageable) {
            // The resident block goes through lane 0's slots, at least a line at a time.
            const Piece y = resident(0, q);
            const size_t line = align_up(static_cast<size_t>(y.inner) * es);
            needs.slot = std::max(needs.slot, std::min(packed_bytes(y, es), std::max(line, kResidentPiece)));
        }
    }
    GPK_FORWARD_IF_ERROR(provision(ctx, p, needs, budget));
    GPK_FORWARD_IF_ERROR(prepare_lanes(ctx, p, needs.lanes, run == gemm_cublas, false));

    Call call(ctx, p, needs.lanes);
    return call.run([&]() -> gpk_status {
        int64_t index = 0;
        for (int64_t q0 = 0; q0 < Q; q0 += q) {
            const int64_t qc = std::min(q, Q - q0);
            const void *y_ptr = nullptr;
            int64_t y_ld = 1;
            if (product) {
                const Piece y = resident(q0, qc);
                y_ptr = y.ptr, y_ld = y.ld;
                if (y_host) {
                    y_ptr = p.shared, y_ld = device_ld(y.inner, es);
                    GPK_FORWARD_IF_ERROR(call.upload_resident(index, transfer(y, p.shared, y_ld, es, my), q0 > 0));
                }
            }
            for (int64_t p0 = 0; p0 < P; p0 += pn, ++index) {
                const int64_t pc = std::min(pn, P - p0);
                char *dev = p.lanes[call.lane_of(index)].device;
                Transfer in[2];
                int n_in = 0;
                GemmArgs g = a;
                if (product) {
                    const Piece x = streamed(p0, pc);
                    const void *x_ptr = x.ptr;
                    int64_t x_ld = x.ld;
                    if (x_host) {
                        x_ptr = dev, x_ld = device_ld(x.inner, es);
                        in[n_in++] = transfer(x, dev, x_ld, es, mx);
                        dev += device_bytes(x, es);
                    }
                    if (resident_a) g.A = y_ptr, g.lda = y_ld, g.B = x_ptr, g.ldb = x_ld;
                    else g.A = x_ptr, g.lda = x_ld, g.B = y_ptr, g.ldb = y_ld;
                }
                g.m = resident_a ? qc : pc;
                g.n = resident_a ? pc : qc;
                const Piece c = tile(p0, pc, q0, qc);
                Transfer out{};
                g.C = c.ptr, g.ldc = c.ld;
                if (c_host) {
                    g.C = dev, g.ldc = device_ld(c.inner, es);
                    out = transfer(c, dev, g.ldc, es, mc);
                    if (read_c) in[n_in++] = out;  // beta == 0: C is not read, NaN in it cannot leak
                }
                GPK_FORWARD_IF_ERROR(call.chunk(index, in, n_in, c_host ? &out : nullptr, product && y_host,
                                                [&] { return run(ctx, g); }));
            }
        }
        GPK_FORWARD_IF_ERROR(call.finish());
        return call.wait();
    });
}

// ---- transpose ----------------------------------------------------------------------------

gpk_status staged_transpose(gpk_context &ctx, const TransposeArgs &a, Launcher<TransposeArgs> run, bool dev_a,
                            bool dev_b) {
    Pipeline *pp = nullptr;
    GPK_FORWARD_IF_ERROR(get_pipeline(ctx, &pp));
    Pipeline &p = *pp;
    const StagingSettings &st = ctx.staging;
    const size_t es = a.elem_size;
    char *A = static_cast<char *>(const_cast<void *>(a.A));
    char *B = static_cast<char *>(a.B);

    // Chunks are tiles of A, h rows by w columns, whose transposes are tiles of B: in
    // the caller's arrays, w lines of h elements in A and h lines of w elements in B.
    auto a_tile = [&](int64_t i0, int64_t hc, int64_t j0, int64_t wc) {
        return Piece{A + (i0 + j0 * a.lda) * es, hc, wc, a.lda};
    };
    auto b_tile = [&](int64_t i0, int64_t hc, int64_t j0, int64_t wc) {
        return Piece{B + (j0 + i0 * a.ldb) * es, wc, hc, a.ldb};
    };
    const Memory ma = memory_of(a_tile(0, a.rows, 0, a.cols), es, dev_a);
    const Memory mb = memory_of(b_tile(0, a.rows, 0, a.cols), es, dev_b);
    const bool a_host = ma != Memory::Device, b_host = mb != Memory::Device;

    auto lane_bytes = [&](int64_t hc, int64_t wc) {
        return (a_host ? device_bytes(a_tile(0, hc, 0, wc), es) : 0) +
               (b_host ? device_bytes(b_tile(0, hc, 0, wc), es) : 0);
    };
    auto chunks_for = [&](int64_t hc, int64_t wc) { return ceil_div(a.rows, hc) * ceil_div(a.cols, wc); };
    auto lanes_for = [&](int64_t hc, int64_t wc) {
        return static_cast<int>(std::min<int64_t>(st.streams, chunks_for(hc, wc)));
    };
    auto need = [&](int64_t hc, int64_t wc) { return static_cast<size_t>(lanes_for(hc, wc)) * lane_bytes(hc, wc); };
    size_t budget = 0;
    GPK_FORWARD_IF_ERROR(device_budget(ctx, p, &budget));

    // ---- the plan: tiles of h x w
    // Elements per tile: about chunk_bytes of host data. By default 32 MiB, or more where
    // that gives lines shorter than kTransposeLine on a host side (one DMA line per line
    // of the tile), but at least two tiles per stream.
    const int64_t total = a.rows * a.cols, host_sides = (a_host ? 1 : 0) + (b_host ? 1 : 0);
    const int64_t granule = 64, line = std::max<int64_t>(1, static_cast<int64_t>(kTransposeLine / es));
    const size_t target = st.chunk_bytes != 0 ? st.chunk_bytes : kDefaultChunkBytes;
    int64_t area = std::max<int64_t>(
        1, static_cast<int64_t>(std::min<size_t>(static_cast<size_t>(total), target / (es * host_sides))));
    if (st.chunk_bytes == 0) {
        // Lines of `line` elements on both host sides take a tile of line x line.
        area = std::max(area, host_sides == 2 ? line * line : line);
        area = std::max<int64_t>(1, std::min(area, ceil_div(total, 2 * static_cast<int64_t>(st.streams))));
    }
    // A host side's lines as long as possible: both sides' the same (a square tile)
    // when both are on the host, unless a side of the matrix is shorter; one host
    // side's lines as long as the matrix allows.
    int64_t h = 0, w = 0;
    if (host_sides == 2) {
        const auto side = static_cast<int64_t>(std::sqrt(static_cast<double>(area)));
        if (side >= a.rows) h = a.rows, w = std::clamp<int64_t>(area / a.rows, 1, a.cols);
        else if (side >= a.cols) w = a.cols, h = std::clamp<int64_t>(area / a.cols, 1, a.rows);
        else h = w = std::max<int64_t>(side, 1);
    } else if (a_host) {
        h = std::min(a.rows, area), w = std::clamp<int64_t>(area / h, 1, a.cols);
    } else {
        w = std::min(a.cols, area), h = std::clamp<int64_t>(area / w, 1, a.rows);
    }
    // Multiples of the kernels' tiles where longer.
    if (h > granule && h < a.rows) h -= h % granule;
    if (w > granule && w < a.cols) w -= w % granule;
    // Within the budget: the longer side halved, until one tile per lane fits.
    while ((h > 1 || w > 1) && need(h, w) > budget) {
        if (h >= w) h = std::max<int64_t>(1, h / 2);
        else w = std::max<int64_t>(1, w / 2);
    }
    if (need(h, w) > budget) return too_small(ctx, need(1, 1), lanes_for(1, 1), budget);

    Needs needs{lanes_for(h, w), lane_bytes(h, w), 0, 0, 0};
    // The result overwrites the copy in within the slot: stream order puts it after.
    needs.slot = std::max(ma == Memory::Pageable ? packed_bytes(a_tile(0, h, 0, w), es) : 0,
                          mb == Memory::Pageable ? packed_bytes(b_tile(0, h, 0, w), es) : 0);
    GPK_FORWARD_IF_ERROR(provision(ctx, p, needs, budget));
    GPK_FORWARD_IF_ERROR(prepare_lanes(ctx, p, needs.lanes, run == transpose_geam, false));

    Call call(ctx, p, needs.lanes);
    return call.run([&]() -> gpk_status {
        int64_t index = 0;
        for (int64_t j0 = 0; j0 < a.cols; j0 += w)
            for (int64_t i0 = 0; i0 < a.rows; i0 += h, ++index) {
                const int64_t hc = std::min(h, a.rows - i0), wc = std::min(w, a.cols - j0);
                char *dev = p.lanes[call.lane_of(index)].device;
                TransposeArgs t = a;
                t.rows = hc, t.cols = wc;
                const Piece ap = a_tile(i0, hc, j0, wc), bp = b_tile(i0, hc, j0, wc);
                Transfer in{}, out{};
                t.A = ap.ptr, t.lda = ap.ld;
                if (a_host) {
                    t.A = dev, t.lda = device_ld(ap.inner, es);
                    in = transfer(ap, dev, t.lda, es, ma);
                    dev += device_bytes(ap, es);
                }
                t.B = bp.ptr, t.ldb = bp.ld;
                if (b_host) {
                    t.B = dev, t.ldb = device_ld(bp.inner, es);
                    out = transfer(bp, dev, t.ldb, es, mb);
                }
                GPK_FORWARD_IF_ERROR(call.chunk(index, &in, a_host ? 1 : 0, b_host ? &out : nullptr, false,
                                                [&] { return run(ctx, t); }));
            }
        GPK_FORWARD_IF_ERROR(call.finish());
        return call.wait();
    });
}

// ---- reduce -------------------------------------------------------------------------------

gpk_status staged_reduce(gpk_context &ctx, const ReduceArgs &a, Launcher<ReduceArgs> run, bool dev_result) {
    Pipeline *pp = nullptr;
    GPK_FORWARD_IF_ERROR(get_pipeline(ctx, &pp));
    Pipeline &p = *pp;
    const StagingSettings &st = ctx.staging;
    const size_t es = dtype_size(a.dtype), rs = reduce_result_size(a.dtype);
    const int64_t n = a.n;
    char *x = static_cast<char *>(const_cast<void *>(a.x));
    const bool pinned = pinned_span(x, static_cast<size_t>(n) * es);
    // Partials have the result's type: integers are already 64-bit sums, and F16 and
    // BF16 partials are F32 sums.
    const int partial_dtype = a.dtype == GPK_F32 || is_16bit(a.dtype) ? GPK_F32 : a.dtype == GPK_F64 ? GPK_F64 : GPK_I64;

    auto pieces_of = [&](int64_t pc) { return ceil_div(n, pc); };
    auto lanes_for = [&](int64_t pc) { return static_cast<int>(std::min<int64_t>(st.streams, pieces_of(pc))); };
    auto shared_bytes = [&](int64_t pc) {
        return align_up(static_cast<size_t>(pieces_of(pc)) * rs) + (dev_result ? 0 : align_up(rs));
    };
    auto need = [&](int64_t pc) {
        return shared_bytes(pc) +
               static_cast<size_t>(lanes_for(pc)) * (align_up(static_cast<size_t>(pc) * es) + reduce_scratch(pc));
    };
    size_t budget = 0;
    GPK_FORWARD_IF_ERROR(device_budget(ctx, p, &budget));
    int64_t pn = panel_length(n, es, st, 4096);
    while (pn > 1 && need(pn) > budget) pn /= 2;
    if (need(pn) > budget) return too_small(ctx, need(pn), lanes_for(pn), budget);

    const int64_t pieces = pieces_of(pn);
    const Needs needs{lanes_for(pn), align_up(static_cast<size_t>(pn) * es), reduce_scratch(pn), shared_bytes(pn),
                      pinned ? 0 : align_up(static_cast<size_t>(pn) * es)};
    GPK_FORWARD_IF_ERROR(provision(ctx, p, needs, budget));
    GPK_FORWARD_IF_ERROR(prepare_lanes(ctx, p, needs.lanes, false, true));
    char *partials = p.shared;
    void *result = dev_result ? a.result : p.shared + align_up(static_cast<size_t>(pieces) * rs);

    Call call(ctx, p, needs.lanes);
    return call.run([&]() -> gpk_status {
        for (int64_t index = 0; index < pieces; ++index) {
            const int64_t first = index * pn, count = std::min(pn, n - first);
            char *dev = p.lanes[call.lane_of(index)].device;
            const size_t bytes = static_cast<size_t>(count) * es;
            const Transfer in{x + first * es, bytes, dev, bytes, bytes, 1, pinned};
            const ReduceArgs r{a.dtype, a.op, dev, count, partials + index * rs};
            GPK_FORWARD_IF_ERROR(call.chunk(index, &in, 1, nullptr, false, [&] { return run(ctx, r); }));
        }
        GPK_FORWARD_IF_ERROR(call.finish());
        // The partials in piece order, on the context's stream: the same tree every run.
        GPK_FORWARD_IF_ERROR(run(ctx, ReduceArgs{partial_dtype, a.op, partials, pieces, result}));
        if (!dev_result)
            GPK_CUDA_TRY(ctx, cudaMemcpyAsync(a.result, result, rs, cudaMemcpyDeviceToHost, stream(ctx)));
        return call.wait();
    });
}

// ---- the trace ----------------------------------------------------------------------------

void forget_trace(gpk_context &ctx) {
    if (Pipeline *p = pipeline_of(ctx)) {
        p->traced = false;
        p->steps.clear();
    }
}

gpk_status stage_trace(gpk_context &ctx, gpk_stage_event *events, int64_t capacity, int64_t *count) {
    const Pipeline *p = pipeline_of(ctx);
    if (p == nullptr || !p->traced) {
        *count = 0;
        return GPK_SUCCESS;
    }
    const auto total = static_cast<int64_t>(p->steps.size());
    const int64_t n = std::min(capacity, total);
    std::vector<gpk_stage_event> out(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
        const Step &s = p->steps[static_cast<size_t>(i)];
        float begin = 0, end = 0;
        GPK_CUDA_TRY(ctx, cudaEventElapsedTime(&begin, p->start, p->timers[2 * static_cast<size_t>(i)]));
        GPK_CUDA_TRY(ctx, cudaEventElapsedTime(&end, p->start, p->timers[2 * static_cast<size_t>(i) + 1]));
        out[static_cast<size_t>(i)] = gpk_stage_event{s.kind, s.lane, s.chunk, s.bytes, begin, end};
    }
    if (n > 0) std::memcpy(events, out.data(), out.size() * sizeof(gpk_stage_event));
    *count = total;
    return GPK_SUCCESS;
}

}  // namespace gpk::cuda
