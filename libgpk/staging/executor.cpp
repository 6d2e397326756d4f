// Executing a staging plan on the pipeline's lanes (executor.hpp): classifying host
// memory, provisioning the buffers, events and handles a plan needs, and the
// lane/slot state machine of one call.
#include "executor.hpp"

#include "host/parallel.hpp"

#include <cuda.h>

#include <algorithm>
#include <cstring>
#include <new>


namespace gpk::cuda {

using plan::align_up;
using plan::ceil_div;
using plan::kAlignment;
using plan::kUncappedGranule;

namespace {

constexpr size_t kParallelCopyBytes = size_t{4} << 20;  // host copies this large use several threads
constexpr int kCopyThreads = 8;                         // about what saturates a socket's memory

// cuMemGetAddressRange from the driver the runtime uses (the library links the
// runtime only); null when it cannot be had.
using AddressRange = CUresult (*)(CUdeviceptr *base, size_t *size, CUdeviceptr ptr);
AddressRange address_range() {
    static const AddressRange fn = [] {
        void *f = nullptr;
        cudaDriverEntryPointQueryResult found{};
#if CUDART_VERSION >= 12050
        const cudaError_t e = cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &f, 12000, cudaEnableDefault,
                                                               &found);
#else
        const cudaError_t e = cudaGetDriverEntryPoint("cuMemGetAddressRange", &f, cudaEnableDefault, &found);
#endif
        if (e != cudaSuccess || found != cudaDriverEntryPointSuccess) {
            cudaGetLastError();
            return AddressRange{nullptr};
        }
        return reinterpret_cast<AddressRange>(f);
    }();
    return fn;
}

cudaError_t copy_2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                    cudaMemcpyKind kind, cudaStream_t s) {
    if (height == 1 || (dpitch == width && spitch == width))
        return cudaMemcpyAsync(dst, src, width * height, kind, s);
    return cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, height, kind, s);
}

// A 2-D memcpy on the host; large ones on several threads, since one core's memcpy
// is slower than the link. The threads are the host backend's own (host/parallel.hpp),
// not an OpenMP team: a thread that cannot be created leaves the copy to those that
// were, where libgomp would end the process.
void host_copy(const HostCopy &c) {
    size_t width = c.width, height = c.height;
    if (c.dpitch == c.width && c.spitch == c.width) width *= height, height = 1;
    const int threads = std::min(kCopyThreads, host::max_threads());
    if (threads > 1 && width * height >= kParallelCopyBytes) {
        // Each line cut into `parts` pieces, so that a few long lines spread too.
        const auto parts = static_cast<int64_t>(
            height >= static_cast<size_t>(2 * threads) ? 1 : ceil_div(2 * threads, static_cast<int64_t>(height)));
        const int64_t piece = ceil_div(static_cast<int64_t>(width), parts);
        const int64_t tasks = static_cast<int64_t>(height) * parts;
        // `threads` groups of tasks, so that no more than kCopyThreads threads start.
        const int64_t group = ceil_div(tasks, static_cast<int64_t>(threads));
        host::parallel_range(threads, static_cast<int64_t>(width * height), [&](int64_t lo, int64_t hi) {
            for (int64_t t = lo * group; t < std::min(tasks, hi * group); ++t) {
                const int64_t line = t / parts, from = (t % parts) * piece;
                const int64_t bytes = std::min<int64_t>(piece, static_cast<int64_t>(width) - from);
                if (bytes > 0)
                    std::memcpy(c.dst + line * c.dpitch + from, c.src + line * c.spitch + from,
                                static_cast<size_t>(bytes));
            }
        });
        return;
    }
    for (size_t line = 0; line < height; ++line) std::memcpy(c.dst + line * c.dpitch, c.src + line * c.spitch, width);
}

gpk_status new_event(gpk_context &ctx, unsigned flags, cudaEvent_t *event) {
    if (*event != nullptr) return GPK_SUCCESS;
    return check(ctx, cudaEventCreateWithFlags(event, flags), "cudaEventCreateWithFlags (staging pipeline)");
}

// Streams and events of lanes [0, count), made once.
gpk_status make_lanes(gpk_context &ctx, Pipeline &p, int count) {
    GPK_FORWARD_IF_ERROR(new_event(ctx, cudaEventDisableTiming, &p.resident_ready));
    for (; p.made < count; ++p.made) {
        LaneState &L = p.lanes[p.made];
        GPK_FORWARD_IF_ERROR(make_lane(ctx, L.lane));
        GPK_FORWARD_IF_ERROR(new_event(ctx, cudaEventDisableTiming, &L.mark));
        GPK_FORWARD_IF_ERROR(new_event(ctx, cudaEventDisableTiming, &L.checked));
        for (HostSlot &s : L.slots) GPK_FORWARD_IF_ERROR(new_event(ctx, cudaEventDisableTiming, &s.done));
    }
    return GPK_SUCCESS;
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

gpk_status pinned_alloc(gpk_context &ctx, size_t bytes, char **ptr, size_t *capacity) {
    if (*ptr != nullptr) cudaFreeHost(*ptr);
    *ptr = nullptr;
    *capacity = 0;
    void *q = nullptr;
    const cudaError_t e = cudaHostAlloc(&q, bytes, cudaHostAllocDefault);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return fail(&ctx, GPK_ERROR_OUT_OF_MEMORY,
                    "cannot allocate %zu bytes of pinned host memory for the staging pipeline: %s", bytes,
                    cudaGetErrorString(e));
    }
    *ptr = static_cast<char *>(q);
    *capacity = bytes;
    return GPK_SUCCESS;
}

// What a rung would otherwise make on its first chunk on each lane, in the middle
// of the call: a cuBLAS handle for the vendor's rungs, the zero word for reduce's.
gpk_status prepare_lanes(gpk_context &ctx, Pipeline &p, int lanes, bool cublas_handle, bool zero) {
    for (int l = 0; l < lanes; ++l) {
        Lane &lane = p.lanes[l].lane;
        if (cublas_handle) {
            cublasHandle_t handle = nullptr;
            GPK_FORWARD_IF_ERROR(lane_failed(ctx, lane, cublas(lane.ctx, &handle)));
        }
        if (zero) {
            unsigned int *word = nullptr;
            GPK_FORWARD_IF_ERROR(lane_failed(ctx, lane, zero_word(lane.ctx, &word)));
        }
    }
    return GPK_SUCCESS;
}

}  // namespace

// ---- host memory ----------------------------------------------------------------------

// Allocation by allocation: the range is pinned when the allocations (cudaHostAlloc,
// cudaHostRegister) that hold its first byte, the byte after that allocation's end,
// and so on, are all pinned host memory up to its last byte. Two ends of one range
// in two different allocations say nothing about the bytes between them.
bool pinned_span(const void *p, size_t bytes) {
    if (bytes == 0) return false;
    const AddressRange range = address_range();
    if (range == nullptr) return false;  // unknown extent: staged through slots, correct if slower
    const auto *at = static_cast<const char *>(p);
    const char *const end = at + bytes;
    while (at < end) {
        cudaPointerAttributes attr{};
        if (cudaPointerGetAttributes(&attr, at) != cudaSuccess) {
            cudaGetLastError();
            return false;
        }
        if (attr.type != cudaMemoryTypeHost || attr.devicePointer == nullptr) return false;
        CUdeviceptr base = 0;
        size_t size = 0;
        const auto dev = reinterpret_cast<CUdeviceptr>(attr.devicePointer);
        if (range(&base, &size, dev) != CUDA_SUCCESS || dev < base || dev - base >= size) return false;
        // The allocation's end, as an address of the host pointer `at`.
        at += size - (dev - base);
    }
    return true;
}

Memory memory_of(const MatrixView &p, size_t es, bool device) {
    if (device) return Memory::Device;
    if (p.inner <= 0 || p.outer <= 0) return Memory::Pageable;
    return pinned_span(p.ptr, static_cast<size_t>(p.span()) * es) ? Memory::Pinned : Memory::Pageable;
}

Transfer transfer(const MatrixView &p, char *device, int64_t device_ld_elems, size_t es, Memory m) {
    return Transfer{p.bytes(),
                    static_cast<size_t>(p.ld) * es,
                    device,
                    static_cast<size_t>(device_ld_elems) * es,
                    static_cast<size_t>(p.inner) * es,
                    static_cast<size_t>(p.outer),
                    m == Memory::Pinned};
}

// ---- the pipeline's state and provisioning ------------------------------------------

size_t Pipeline::device_held() const {
    size_t held = shared_capacity;
    for (int l = 0; l < made; ++l) held += lanes[l].device_capacity + lane_scratch_capacity(lanes[l].lane);
    return held;
}

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
        if (L.check != nullptr) cudaFreeHost(L.check);
        if (L.checked != nullptr) cudaEventDestroy(L.checked);
    }
    if (p->shared != nullptr) cudaFree(p->shared);
    if (p->resident_ready != nullptr) cudaEventDestroy(p->resident_ready);
    p->trace.destroy();
    cudaGetLastError();
    delete p;
}

gpk_status get_pipeline(gpk_context &ctx, Pipeline **out) {
    Pipeline *&p = pipeline_of(ctx);
    if (p == nullptr) {
        p = new (std::nothrow) Pipeline;
        GPK_RETURN_ERROR_IF(p == nullptr, &ctx, GPK_ERROR_OUT_OF_MEMORY, "out of host memory for the staging pipeline");
    }
    p->trace.forget();
    *out = p;
    return GPK_SUCCESS;
}

gpk_status device_budget(gpk_context &ctx, const Pipeline &p, size_t *budget) {
    size_t free_bytes = 0, total = 0;
    if (ctx.staging.device_bytes == 0) GPK_CUDA_TRY(ctx, cudaMemGetInfo(&free_bytes, &total));
    *budget = plan::device_budget(ctx.staging, free_bytes, p.device_held());
    return GPK_SUCCESS;
}

gpk_status too_small(gpk_context &ctx, const plan::Shortfall &s, size_t budget) {
    const char *plural = s.lanes == 1 ? "" : "s";
    if (ctx.staging.device_bytes != 0)
        return fail(&ctx, GPK_ERROR_OUT_OF_MEMORY,
                    "device_bytes (%zu, gpk_set_staging) is below the %zu bytes of device memory the staging "
                    "pipeline needs for the smallest chunk on each of its %d stream%s",
                    ctx.staging.device_bytes, s.need, s.lanes, plural);
    size_t free_bytes = 0, total = 0;
    if (cudaMemGetInfo(&free_bytes, &total) != cudaSuccess) cudaGetLastError();
    return fail(&ctx, GPK_ERROR_OUT_OF_MEMORY,
                "the staging pipeline needs %zu bytes of device memory for the smallest chunk on each of its %d "
                "stream%s, but can take only %zu on GPU %d (%zu bytes free, of which it leaves 1/16, at least 64 "
                "MiB, to others)",
                s.need, s.lanes, plural, budget, ctx.device, free_bytes);
}

// Nothing of the pipeline is in flight between calls (a call ends synchronized, or
// aborted after waiting for its lanes), so buffers may be freed here.
gpk_status provision(gpk_context &ctx, Pipeline &p, const Needs &n, size_t budget, bool cublas_handle, bool zero) {
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
            const size_t scratch = lane_scratch_capacity(L.lane);
            bytes += l < n.lanes ? grown(L.device_capacity, n.lane_device) + std::max(scratch, n.lane_scratch)
                                 : L.device_capacity + scratch;
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
                if (s.capacity < n.slot)
                    GPK_FORWARD_IF_ERROR(pinned_alloc(ctx, align_up(n.slot, kUncappedGranule), &s.ptr, &s.capacity));
        if (n.check > 0 && L.check_capacity < n.check)
            GPK_FORWARD_IF_ERROR(pinned_alloc(ctx, align_up(n.check, kUncappedGranule), &L.check, &L.check_capacity));
    }
    return prepare_lanes(ctx, p, n.lanes, cublas_handle, zero);
}

// Lines per piece: what both of lane 0's slots hold (the plan makes that a line or more).
int64_t resident_copies(const Pipeline &p, const Transfer &t) {
    if (t.pinned) return 1;
    const LaneState &L0 = p.lanes[0];
    const size_t room = std::min(L0.slots[0].capacity, L0.slots[1].capacity);
    const size_t lines = std::max<size_t>(1, room / t.width);
    return static_cast<int64_t>((t.height + lines - 1) / lines);
}

gpk_status fetch(gpk_context &on, char *host, const void *device, int64_t ld, int64_t inner, int64_t outer, size_t es) {
    const size_t width = static_cast<size_t>(inner) * es;
    return check(on,
                 copy_2d(host, width, device, static_cast<size_t>(ld) * es, width, static_cast<size_t>(outer),
                         cudaMemcpyDeviceToHost, stream(on)),
                 "cudaMemcpy2DAsync (validation, to the host)");
}

// ---- one call ---------------------------------------------------------------------------

Call::Call(gpk_context &ctx, Pipeline &p, int lanes)
    : ctx_(ctx), p_(p), lanes_(lanes), strict_(ctx.staging.streams == 1), lag_(strict_ ? 0 : lanes) {}

Call::~Call() {
    if (!completed_) cancel();  // an exception on the way out
}

gpk_status Call::chunk(int64_t index, const Transfer *in, int n_in, const Transfer *out, bool wait_resident,
                       Compute compute) {
    const int l = lane_of(index);
    LaneState &L = p_.lanes[l];
    const cudaStream_t s = L.lane.stream;
    if (compare_ != nullptr) GPK_FORWARD_IF_ERROR(settle(L));  // its check buffer is refilled below
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
    // The rung runs on the lane's context: its stream, scratch and handles, and the
    // caller's math mode as it is for this call (TF32 rungs refuse F32 without it).
    L.lane.ctx.math_mode = ctx_.math_mode;
    GPK_FORWARD_IF_ERROR(p_.trace.timed(ctx_, s, Step{GPK_STAGE_COMPUTE, l, index, 0}, [&]() -> gpk_status {
        return lane_failed(ctx_, L.lane, compute(L.lane.ctx));
    }));
    if (compare_ != nullptr) {
        GPK_CUDA_TRY(ctx_, cudaEventRecord(L.checked, s));
        L.pending = index;
    }
    if (out != nullptr) {
        const Transfer &t = *out;
        // The result overwrites the slot's copies in: stream order places it after them.
        char *dst = t.pinned ? t.host : slot->ptr;
        const size_t pitch = t.pinned ? t.host_pitch : t.width;
        GPK_FORWARD_IF_ERROR(copy(GPK_STAGE_COPY_OUT, l, index, dst, pitch, t.device, t.device_pitch, t.width,
                                  t.height, cudaMemcpyDeviceToHost));
        if (!t.pinned) {
            GPK_FORWARD_IF_ERROR(release(*slot, s));
            slot->out = HostCopy{t.host, t.host_pitch, slot->ptr, t.width, t.width, t.height};
            slot->out_pending = true;
            waiting_[waiting_count_++] = slot;  // a slot waits once: at most every slot
        }
    }
    if (strict_) GPK_CUDA_TRY(ctx_, cudaStreamSynchronize(s));
    while (waiting_count_ > lag_) GPK_FORWARD_IF_ERROR(drain_oldest());
    return GPK_SUCCESS;
}

gpk_status Call::upload_resident(int64_t chunk, const Transfer &t, bool reuse) {
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

gpk_status Call::finish() {
    while (waiting_count_ > 0) GPK_FORWARD_IF_ERROR(drain_oldest());
    for (int l = 0; l < lanes_; ++l) GPK_FORWARD_IF_ERROR(settle(p_.lanes[l]));
    const cudaStream_t main = stream(ctx_);
    for (int l = 0; l < lanes_; ++l) {
        GPK_CUDA_TRY(ctx_, cudaEventRecord(p_.lanes[l].mark, p_.lanes[l].lane.stream));
        GPK_CUDA_TRY(ctx_, cudaStreamWaitEvent(main, p_.lanes[l].mark, 0));
    }
    return GPK_SUCCESS;
}

gpk_status Call::wait() {
    GPK_CUDA_TRY(ctx_, cudaStreamSynchronize(stream(ctx_)));
    p_.trace.complete();
    return GPK_SUCCESS;
}

gpk_status Call::begin() {
    const cudaStream_t main = stream(ctx_);
    GPK_FORWARD_IF_ERROR(p_.trace.begin(ctx_, main));
    for (int l = 0; l < lanes_; ++l)
        GPK_CUDA_TRY(ctx_, cudaStreamWaitEvent(p_.lanes[l].lane.stream, p_.trace.start(), 0));
    return GPK_SUCCESS;
}

// After a failure: wait for whatever the lanes still have, so that no copy touches
// the caller's arrays or a slot after the call returns, and leave the slots empty
// and the CUDA runtime without a pending error, ready for the next call.
void Call::cancel() {
    for (int l = 0; l < lanes_; ++l) {
        LaneState &L = p_.lanes[l];
        cudaStreamSynchronize(L.lane.stream);
        for (HostSlot &s : L.slots) s.armed = false, s.out_pending = false;
        L.pending = -1;
    }
    waiting_count_ = 0;
    p_.trace.forget();
    cudaGetLastError();
}

// A slot the host may write: its result, if any, moved to the caller's array, and
// the GPU done with it.
gpk_status Call::acquire(HostSlot &slot) {
    if (slot.out_pending) {
        HostSlot **const last = waiting_ + waiting_count_;
        HostSlot **const at = std::find(waiting_, last, &slot);
        std::copy(at + 1, last, at);
        --waiting_count_;
        return drain(slot);
    }
    if (slot.armed) {
        GPK_CUDA_TRY(ctx_, cudaEventSynchronize(slot.done));
        slot.armed = false;
    }
    return GPK_SUCCESS;
}

gpk_status Call::release(HostSlot &slot, cudaStream_t s) {
    GPK_CUDA_TRY(ctx_, cudaEventRecord(slot.done, s));
    slot.armed = true;
    return GPK_SUCCESS;
}

gpk_status Call::drain(HostSlot &slot) {
    GPK_CUDA_TRY(ctx_, cudaEventSynchronize(slot.done));
    host_copy(slot.out);
    slot.out_pending = false;
    slot.armed = false;
    return GPK_SUCCESS;
}

// The lane's pending comparison, once the copies it reads have arrived.
gpk_status Call::settle(LaneState &L) {
    if (L.pending < 0) return GPK_SUCCESS;
    GPK_CUDA_TRY(ctx_, cudaEventSynchronize(L.checked));
    const int64_t chunk = L.pending;
    L.pending = -1;
    (*compare_)(chunk, L.check);
    return GPK_SUCCESS;
}

gpk_status Call::drain_oldest() {
    HostSlot *w = waiting_[0];
    std::copy(waiting_ + 1, waiting_ + waiting_count_, waiting_);
    --waiting_count_;
    return drain(*w);
}

gpk_status Call::copy(int kind, int lane, int64_t chunk, void *dst, size_t dpitch, const void *src, size_t spitch,
                      size_t width, size_t height, cudaMemcpyKind direction) {
    const cudaStream_t s = p_.lanes[lane].lane.stream;
    return p_.trace.timed(ctx_, s, Step{kind, lane, chunk, static_cast<uint64_t>(width * height)}, [&] {
        return check(ctx_, copy_2d(dst, dpitch, src, spitch, width, height, direction, s),
                     direction == cudaMemcpyHostToDevice ? "cudaMemcpy2DAsync (staging pipeline, to the GPU)"
                                                         : "cudaMemcpy2DAsync (staging pipeline, to the host)");
    });
}

}  // namespace gpk::cuda
