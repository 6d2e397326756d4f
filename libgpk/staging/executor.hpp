// Executing a staging plan (planner.hpp) on the pipeline's lanes: the pipeline's
// state, its provisioning before a call, and `Call`, the lane/slot state machine that
// moves chunks between the caller's arrays and the lanes' buffers (pipeline.cpp's
// opening comment says how and why).
#pragma once

#include "../cuda/resources.hpp"
#include "planner.hpp"
#include "trace.hpp"

#include <cstdint>

namespace gpk::cuda {

using plan::Memory;
using plan::Needs;

// Where a piece of a matrix in the caller's memory lives: Device when the caller said
// so, else Pinned when every byte of its span is pinned or registered host memory,
// else Pageable.
Memory memory_of(const MatrixView &p, size_t es, bool device);
// Whether the GPU can reach [p, p + bytes) by DMA: pinned or registered host memory
// throughout.
bool pinned_span(const void *p, size_t bytes);

// One copy between the caller's memory and a device buffer, in bytes.
struct Transfer {
    char *host;  // the caller's array (written only by a copy out)
    size_t host_pitch;
    char *device;
    size_t device_pitch;
    size_t width, height;
    bool pinned;  // DMA from/to `host` itself; else through a slot
};

Transfer transfer(const MatrixView &p, char *device, int64_t device_ld_elems, size_t es, Memory m);

// A 2-D copy on the host, from a slot to the caller's array.
struct HostCopy {
    char *dst;
    size_t dpitch;
    const char *src;
    size_t spitch;
    size_t width, height;
};

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
    Lane lane;  // stream, and the context its launchers run on
    char *device = nullptr;
    size_t device_capacity = 0;
    HostSlot slots[2];
    int next_slot = 0;
    cudaEvent_t mark = nullptr;  // "everything issued so far": joins
    // Validation mode: what the lane's last chunk left for the host to compare
    // (pinned), ready once `checked` has passed.
    char *check = nullptr;
    size_t check_capacity = 0;
    cudaEvent_t checked = nullptr;
    int64_t pending = -1;  // the chunk whose comparison waits, or -1
};

class Pipeline {
public:
    LaneState lanes[StagingSettings::kMaxStreams];
    int made = 0;  // lanes[0 .. made) have their stream and events
    char *shared = nullptr;  // gemm's resident block, reduce's partials and result
    size_t shared_capacity = 0;
    cudaEvent_t resident_ready = nullptr;  // after the last copy of the resident block
    Trace trace;

    size_t device_held() const;
};

// The context's pipeline, for a new call: the trace is the old call's no more, even
// if this one fails before it issues anything.
gpk_status get_pipeline(gpk_context &ctx, Pipeline **out);
// The device bytes this call may use (plan::device_budget on the GPU's free memory).
gpk_status device_budget(gpk_context &ctx, const Pipeline &p, size_t *budget);
// GPK_ERROR_OUT_OF_MEMORY for a plan that does not fit, with what it would need.
gpk_status too_small(gpk_context &ctx, const plan::Shortfall &s, size_t budget);
// Makes the buffers of `n` exist within `budget`, and the vendor handles
// (`cublas_handle`) and zero words (`zero`) of its lanes. With the trace's room
// reserved after it (Trace::reserve), a call allocates nothing once it has begun.
gpk_status provision(gpk_context &ctx, Pipeline &p, const Needs &n, size_t budget, bool cublas_handle, bool zero);
// Steps of upload_resident for `t` (one per slot-sized piece when it is pageable), on
// a provisioned pipeline.
int64_t resident_copies(const Pipeline &p, const Transfer &t);

// A rung's compute, given the context of the lane it runs on (Lane): a reference to
// the caller's callable, so that nothing is allocated.
class Compute {
public:
    template <class F>
    Compute(const F &f)
        : self_(&f), call_([](const void *self, gpk_context &on) { return (*static_cast<const F *>(self))(on); }) {}
    gpk_status operator()(gpk_context &on) const { return call_(self_, on); }

private:
    const void *self_;
    gpk_status (*call_)(const void *, gpk_context &);
};

// Validation mode's comparison of a chunk, on the host: `data` is what the chunk's
// compute copied into its lane's check buffer (LaneState::check).
class Compare {
public:
    template <class F>
    Compare(const F &f)
        : self_(&f), call_([](const void *self, int64_t chunk, const char *data) {
              (*static_cast<const F *>(self))(chunk, data);
          }) {}
    void operator()(int64_t chunk, const char *data) const { call_(self_, chunk, data); }

private:
    const void *self_;
    void (*call_)(const void *, int64_t, const char *);
};

// Copies `outer` lines of `inner` elements (`ld` apart) of device memory to `host`,
// packed, on the stream of `on` (a lane's context, in a chunk's compute).
gpk_status fetch(gpk_context &on, char *host, const void *device, int64_t ld, int64_t inner, int64_t outer, size_t es);

// One call on lanes [0, lanes) of a provisioned pipeline.
class Call {
public:
    Call(gpk_context &ctx, Pipeline &p, int lanes);
    ~Call();
    Call(const Call &) = delete;
    Call &operator=(const Call &) = delete;

    int lane_of(int64_t chunk) const { return plan::lane_of(chunk, lanes_); }
    // The device buffer of a chunk's lane.
    char *device_of(int64_t chunk) const { return p_.lanes[lane_of(chunk)].device; }
    // Validation mode: the check buffer of a chunk's lane, which its compute fills
    // for `compare` (given before the first chunk), called once the lane got there.
    char *check_of(int64_t chunk) const { return p_.lanes[lane_of(chunk)].check; }
    void compare_with(const Compare *compare) { compare_ = compare; }

    // begin(), body, and on any failure cancel(): the body ends with finish() and wait().
    template <class Body>
    gpk_status run(Body &&body) {
        gpk_status st = begin();
        if (st == GPK_SUCCESS) st = body();
        if (st != GPK_SUCCESS) cancel();
        completed_ = true;
        return st;
    }

    // One chunk on its lane: `in` copied to the device, `compute` run on the lane's
    // context (after the resident block is there, if wait_resident), `out` copied back.
    // In validation mode (compare_with) the lane's previous comparison is done first,
    // and this chunk's is left pending until the lane's next chunk or finish().
    gpk_status chunk(int64_t index, const Transfer *in, int n_in, const Transfer *out, bool wait_resident,
                     Compute compute);
    // Copies gemm's resident block on lane 0, once every lane is done with the block
    // before (`reuse`); the kernels wait for resident_ready. Traced as copies in of
    // `chunk`, the first chunk that uses the block.
    gpk_status upload_resident(int64_t chunk, const Transfer &t, bool reuse);
    // Every result to the caller's arrays, every comparison done, and the context's
    // stream after every lane.
    gpk_status finish();
    // The call's end: everything it issued has finished, and the trace is complete.
    gpk_status wait();

private:
    gpk_status begin();
    void cancel();
    gpk_status acquire(HostSlot &slot);
    gpk_status release(HostSlot &slot, cudaStream_t s);
    gpk_status drain(HostSlot &slot);
    gpk_status drain_oldest();
    gpk_status settle(LaneState &L);
    gpk_status copy(int kind, int lane, int64_t chunk, void *dst, size_t dpitch, const void *src, size_t spitch,
                    size_t width, size_t height, cudaMemcpyKind direction);

    gpk_context &ctx_;
    Pipeline &p_;
    const int lanes_;
    const bool strict_;  // one stream: nothing overlaps, not even the host's copies
    const int lag_;      // results that may wait in slots while the host goes on
    // Slots whose result waits for the caller's array, oldest first: at most every
    // slot of every lane, so a fixed array (nothing allocated during a call).
    HostSlot *waiting_[2 * StagingSettings::kMaxStreams] = {};
    int waiting_count_ = 0;
    const Compare *compare_ = nullptr;
    bool completed_ = false;
};

}  // namespace gpk::cuda
