// The distributed product's pipeline on one GPU, shared by gpk-gemm-gpus (one
// process, a thread per GPU) and gpk-gemm-mpi (a process per GPU): what a part does
// to make its rows of C from the host A and B and put them into the host C. Where the
// parts live and how they meet is the caller's; the host arrays must be visible to
// every part's GPU (pinned, or registered with cudaHostRegister).
//
// How the data move (part r of P, on its own GPU, its own three streams):
//   B   every part copies 1/P of B's rows from the host over its own link, and the
//       parts exchange the slices over NVLink with NCCL (one ncclBroadcast per
//       slice, from the part that loaded it, in one group): B crosses each PCIe
//       link only 1/P of the way, where one GPU loading all of B and broadcasting
//       it would wait for its own link to carry all of it (GPK_GEMM_B_FROM=root
//       does that instead, to compare).
//   A   part r's rows of A (contiguous, in part order, the first m % P parts one
//       row longer) go in chunks of rows over its link into a ring of device
//       buffers, while
//   C   each chunk is multiplied by gpk_gemm on device pointers, on the part's
//       compute stream (gpk_set_stream), and its rows of C go back over the link
//       into the host C, on a third stream: copies in, kernels and copies out
//       overlap, as in the library's own staging pipeline, with events between
//       the stages and the ring's slots.
// On the host backend there are no copies and no NCCL: a part multiplies its rows of
// A into its rows of C with gpk_gemm on the host arrays.
#pragma once

#include "gpk/gpk.h"

#include "gemm_app.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace gpk_gemm_app::panels {

// Ring slots per GPU: one chunk coming in, one being multiplied, one going out.
constexpr int kSlots = 3;
// About how much of A or C one chunk moves when --chunk is not given: large enough
// that each chunk's product runs the GPU at full rate (at 16384 columns, 1024 rows),
// small enough that the first copy in and the last copy out, which nothing overlaps,
// take a millisecond or so.
constexpr uint64_t kDefaultChunkBytes = uint64_t(64) << 20;

struct Span {
    uint64_t first = 0, count = 0;
};

// Part `index`'s share of [0, total) over `parts`: contiguous, in part order, the
// first total % parts parts one longer.
Span share(uint64_t total, int parts, int index);

inline size_t elem_size(int dtype) { return dtype == GPK_F32 ? 4 : 8; }

// One GPU's (or, on the host backend, one thread's) part of the job.
struct Part {
    int index = 0;
    int device = 0;
    std::string choice;  // why this device
    gpk_context *ctx = nullptr;
    int backend = GPK_BACKEND_HOST;
    std::string error;  // the first failure, said in full
    // CUDA backend: streams, the resident B, the ring of chunk buffers and events.
    cudaStream_t h2d = nullptr, compute = nullptr, d2h = nullptr;
    void *dB = nullptr;
    void *dA[kSlots] = {}, *dC[kSlots] = {};
    cudaEvent_t loaded[kSlots] = {}, computed[kSlots] = {}, stored[kSlots] = {};
    std::vector<cudaEvent_t> kernel_start, kernel_end;  // per chunk
    void *comm = nullptr;  // the part's ncclComm_t, where there are several parts
    // Figures of the last pass.
    Span rows;
    double start = 0, end = 0;  // steady clock
    double compute_s = 0;       // in gpk_gemm's kernels
    uint64_t chunks = 0;
    // Means over the timed passes.
    double mean_wall = 0, mean_compute = 0;
};

// Failures of a part's calls: each sets p->error (the first one only) and returns
// false. nccl_ok takes an ncclResult_t.
bool cuda_ok(Part *p, cudaError_t err, const char *what);
bool gpk_ok(Part *p, gpk_status st, const char *what);
bool nccl_ok(Part *p, int result, const char *what);

// The problem and the plan every part follows.
struct Plan {
    Options opt;
    int parts = 1;
    uint64_t chunk_rows = 0;
    const void *A = nullptr, *B = nullptr;
    void *C = nullptr;
    // Part 0 copies all of B from the host and broadcasts it, instead of each part
    // copying its slice: the environment's GPK_GEMM_B_FROM=root, to compare.
    bool b_from_root = false;
};

// The rows of B that part `index` copies from the host (and broadcasts).
Span b_rows(const Plan &plan, int parts, int index);

// Rows per chunk: about --chunk bytes of A or C (default kDefaultChunkBytes).
uint64_t chunk_rows_for(const Options &o);

// Streams, device buffers and events of a part on the GPU (p->device, p->ctx set),
// before any timing; tear_down_gpu frees them (and is harmless on the host backend).
bool set_up_gpu(Part *p, const Plan &plan);
void tear_down_gpu(Part *p);

// One pass over `parts` parts as part `index` (parts 1: all rows, no exchange of B):
// returns when the part's rows of C are in the host C, with p->rows, p->chunks,
// p->start, p->end (steady clock) and p->compute_s (time in gpk_gemm's kernels) set.
// Every part of a pass must call it: the exchange of B is collective.
bool pass(Part *p, const Plan &plan, int parts, int index);

// fill(), in ranges on several threads: the matrices of a large problem are
// gigabytes, and one thread would take longer to make them than the GPUs to multiply.
void fill_parallel(Matrix *x, uint64_t seed, int stream);

}  // namespace gpk_gemm_app::panels
