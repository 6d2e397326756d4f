// gpk-bench: walks every variant of every op through the public API, checks each
// one against the vendor variant (index 0), then times it.
//
// The pieces: an Env (the context under test, its stream, the L2 flush buffer),
// Buffers that live where the cases' arrays go (the device, or pinned host memory
// with --memory pinned), one Case per (op, dtype, size) that knows how to fill,
// call and check its op, and the harness that runs a Case over the whole ladder.
// Nothing here knows how many rungs a ladder has.
#pragma once

#include "gpk/gpk.h"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace gpk_bench {

// A CUDA runtime or allocation failure inside the app (not inside libgpk).
struct Error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Throws Error naming the call when it did not succeed.
void check_cuda(cudaError_t err, const char *what);

// Where a Buffer's bytes are.
enum class Place {
    kDevice,  // device memory (cudaMalloc)
    kPinned,  // pinned host memory (cudaHostAlloc): the GPU copies it by DMA
    kHost,    // ordinary host memory (the host backend: no CUDA call)
};

// Where the benchmark runs. On the host backend no CUDA call is ever made.
struct Env {
    gpk_context *ctx = nullptr;       // the context under test
    bool cuda = false;
    int device = 0;
    // --memory pinned on the CUDA backend: the cases' arrays are pinned host
    // memory, so every call goes through the staging pipeline and is synchronous;
    // it is timed with a steady clock and without an L2 flush.
    bool pinned = false;
    cudaStream_t stream = nullptr;    // app-owned, set on ctx with gpk_set_stream
    void *l2_flush = nullptr;         // device buffer overwritten before each timed call
    size_t l2_flush_bytes = 0;        // 0: no flush (host backend, --memory pinned)
    gpk_context *host_ctx = nullptr;  // host backend, for references the vendor cannot give

    // Creates the context (and on CUDA the stream and, unless `pinned`, the flush
    // buffer). backend is GPK_BACKEND_*; AUTO takes the GPU when there is one.
    // `pinned` asks for --memory pinned, which only the CUDA backend honours.
    // Throws Error, or returns the failing status through *status with nothing
    // created.
    static std::unique_ptr<Env> create(int backend, int device, bool pinned, gpk_status *status);
    ~Env();

    // Where the cases' arrays live: the device, pinned host memory (--memory
    // pinned), or host memory on the host backend.
    Place arrays() const { return !cuda ? Place::kHost : pinned ? Place::kPinned : Place::kDevice; }
    // "device", "pinned" or "host", for the tables and the JSON.
    const char *memory_name() const;
    // Whether calls are timed with CUDA events (device arrays on CUDA) rather than
    // a steady clock around the synchronous call.
    bool event_timing() const { return cuda && !pinned; }

    // The host-backend context, created on first use; null if that failed.
    gpk_context *host_reference_ctx();
    // Waits for everything issued on the stream.
    void sync() const;
};

// Memory for a case's arrays: where env.arrays() says (device memory on CUDA,
// pinned host memory with --memory pinned, host memory on the host backend), or
// at an explicit Place (kDevice and kPinned on CUDA only).
class Buffer {
public:
    Buffer(const Env &env, size_t bytes) : Buffer(env, bytes, env.arrays()) {}
    Buffer(const Env &env, size_t bytes, Place place);
    ~Buffer();
    Buffer(const Buffer &) = delete;
    Buffer &operator=(const Buffer &) = delete;

    void *data() const { return ptr_; }
    size_t bytes() const { return bytes_; }
    Place place() const { return place_; }
    void upload(const void *src);              // bytes() from host memory
    void download(void *dst) const;            // bytes() into host memory (waits)
    void poison();                             // all bytes 0xFF: NaN for floats, -1 for integers

private:
    const Env &env_;
    Place place_;
    void *ptr_ = nullptr;
    size_t bytes_ = 0;
};

// The sizes of a case's arrays, taken with a check so that none wraps (--size can
// ask for 2^62 elements, or products whose bytes pass 2^64). `what` names the case,
// e.g. "reduce f32 n=4611686018427387904", for the messages; each throws Error, which
// the run reports as the case's error.
//
// The product of `extents`, the element count of an array of `elem`-byte elements;
// throws when its bytes would be more than a process can address.
size_t checked_elements(std::initializer_list<uint64_t> extents, size_t elem, const std::string &what);
// Throws when the case's arrays in host memory, `bytes` each, add up to more than the
// machine has (gpk_app::host_memory_bytes): they are filled at once, so an allocation
// that succeeded would get the process killed instead of failing.
void need_host_memory(std::initializer_list<size_t> bytes, const std::string &what);

// Deterministic non-zero test data, generated in parallel from (seed, index).
void fill_signed(float *x, size_t n, uint64_t seed);    // +-[0.25, 1)
void fill_signed(double *x, size_t n, uint64_t seed);
void fill_positive(float *x, size_t n, uint64_t seed);  // [0.5, 1.5)
void fill_positive(double *x, size_t n, uint64_t seed);
void fill_int(int32_t *x, size_t n, uint64_t seed);     // [1, 1000]
void fill_int(int64_t *x, size_t n, uint64_t seed);

// The verdict on one variant's output.
struct Check {
    bool ok = false;
    std::string detail;  // "max rel err 3.1e-07 (tol 6.4e-05)", "bitwise equal", ...
};

// A kernel or copy that bounds what an op can reach, or a reference kernel to
// measure it by, timed like a variant but outside the ladder (CUDA only): for
// transpose on device arrays, a plain copy of the same bytes; with --memory
// pinned, cudaMemcpy over the link each way; for pi, the simple fused kernel of
// the cuRAND device API.
struct Ceiling {
    std::string name;                          // "copy (ceiling)", "simple fused (reference)"
    std::function<void(cudaStream_t)> launch;  // one call on the stream; throws Error
    std::function<Check()> check;              // judges the output just computed
    // Optional, untimed: runs after the case's poison() and before the checked
    // call, to put the ceiling's source in place or poison an output of its own.
    std::function<void()> setup = nullptr;
    // What one call moves, in the units of the case's work(); 0: the case's work().
    double work = 0;
};

// What a case's first ceiling is called where every row is compared with it.
struct Yardstick {
    std::string label = "copy";              // the table's column, "vs copy"
    std::string noun = "copy";               // the summary's "0.93x the copy's ..."
    std::string json_key = "ratio_to_copy";  // the JSON's key for the ratio (with "_of": label)
};

// The link's ceilings for --memory pinned: `bytes` copied with cudaMemcpyAsync
// from a pinned host array to device memory ("h2d") and from device memory to a
// pinned host array ("d2h"), one direction at a time, each call waited for. The
// case's buffers do not exist before prepare(), so `ends` is asked for them when
// the ceilings run: `in`, the pinned input the h2d copy reads; `out`, a pinned
// output of at least `bytes` the d2h copy writes (null: a pinned sink of the
// ceilings' own); `expected`, a host copy of in's bytes, which both checks
// compare with. The device buffer the copies use is allocated on first use and
// lives as long as the ceilings. Each ceiling's work is `bytes`. With `duplex`, a
// third ceiling runs both copies at once on two streams (into a second device
// buffer), for a case whose bytes cross the link both ways at once; its work is
// 2 * `bytes`.
struct LinkEnds {
    const Buffer *in = nullptr;
    Buffer *out = nullptr;
    const void *expected = nullptr;
};
std::vector<Ceiling> link_ceilings(const Env &env, size_t bytes, std::function<LinkEnds()> ends,
                                   bool duplex = false);

// What a call must move and compute, for its roofline (roofline.cpp): every operand's
// bytes once, its flops, and the dtype (and TF32 mode) whose peak bounds them.
struct RooflineWork {
    double bytes = 0, flops = 0;
    int dtype = -1;
    bool tf32 = false;
};
// A call's roofline, measured in this run: the longer of bytes at the copy bandwidth
// and flops at the dtype's peak (the vendor's 8192^3 rate).
struct Roofline {
    double ms = 0;
    double copy_gbs = 0, peak_tflops = 0;
    bool compute_bound = false;
};

// One (op, dtype, size): owns its inputs and output and knows its op's rules.
class Case {
public:
    virtual ~Case() = default;

    virtual int op() const = 0;                 // GPK_OP_*
    virtual const char *op_name() const = 0;    // "gemm"
    virtual int dtype() const { return -1; }    // GPK_F32...; -1 for none (pi)
    // The dtype in the tables and the JSON: its name ("f32"), or for gemm_ex the
    // operands' and C's ("e4m3xe4m3->bf16"); "-" for none.
    virtual std::string dtype_label() const;
    virtual std::vector<std::pair<const char *, uint64_t>> sizes() const = 0;  // {"m", 4096}, ...
    virtual std::string shape_note() const { return ""; }  // "column-major, C = A B"
    virtual double work() const = 0;            // per call, counted in unit_scale()s
    virtual double unit_scale() const = 0;      // 1e12 for TFLOP/s
    virtual const char *unit() const = 0;

    // Allocates and fills the inputs; may throw Error.
    virtual void prepare() = 0;
    // Makes the output unmistakably unwritten.
    virtual void poison() = 0;
    // The single call that is checked and timed.
    virtual gpk_status call(gpk_context *ctx) = 0;
    // The output just computed becomes the reference (called for variant 0).
    virtual void keep_reference() = 0;
    virtual bool has_reference() const = 0;
    // Computes the reference on the host backend, for when variant 0 could not.
    virtual gpk_status host_reference(gpk_context *host) = 0;
    // Compares the output just computed with the reference. `vendor` says the
    // output came from the vendor library (some ops check it differently).
    virtual Check check(bool vendor) = 0;
    // Tells the case which variant the next check() judges (before the first call).
    virtual void set_variant(const std::string &) {}
    // The op's ceilings, none by default. The first is the one every row is
    // compared with: the plain copy ("vs copy"; with --memory pinned, the h2d copy
    // of link_ceilings: "vs h2d"), or what yardstick() names. They use the case's
    // buffers, so they run after prepare(), and poison() clears their output as it
    // does a variant's. Errors while running them come as Error; ceilings() itself
    // must not throw.
    virtual std::vector<Ceiling> ceilings() { return {}; }
    // What the first ceiling is called in the tables and the JSON (--memory pinned
    // makes it "h2d" whatever this says).
    virtual Yardstick yardstick() const { return {}; }
    // With --memory pinned: whether the call moves about as many bytes to the
    // device as back (transpose), which the pipeline overlaps, so that the link's
    // ceiling is both directions at once, h2d + d2h, and not h2d alone.
    virtual bool link_duplex() const { return false; }
    // What bounds the call from below, for the roofline column (gemm); none by default.
    virtual std::optional<RooflineWork> roofline_work() const { return std::nullopt; }
};

// gemm's settings beyond the shape: the context's math mode (GPK_MATH_*, already set
// on env.ctx; it widens the check's tolerance) and leading dimensions made odd (the
// smallest odd value at or above each minimum), the unaligned case vendor libraries
// leave their fast paths for.
struct GemmSettings {
    int math = GPK_MATH_DEFAULT;
    bool odd_ld = false;
};
std::unique_ptr<Case> make_gemm_case(const Env &env, int dtype, int64_t m, int64_t n, int64_t k,
                                     const GemmSettings &settings = {});
// gemm_ex and gemm_blockscaled (gemm_ex.cpp): a dtype per operand -- FP8 A and B
// (GPK_F8E4M3 / GPK_F8E5M2) into F32, F16 or BF16 C, or F16 / BF16 into F32 -- per tensor
// or with block scales, in any layout and transposition; TN (cuBLASLt's only FP8
// layout) by default, leading dimensions odd where asked.
struct GemmExSettings {
    int a_dtype = GPK_F8E4M3, b_dtype = GPK_F8E4M3, c_dtype = GPK_BF16;
    bool block_scaled = false;
    int layout = GPK_COL_MAJOR;
    int transa = GPK_TRANS, transb = GPK_NO_TRANS;
    bool odd_ld = false;
};
std::unique_ptr<Case> make_gemm_ex_case(const Env &env, int64_t m, int64_t n, int64_t k, const GemmExSettings &s);
// The settings' dtypes as the tables name them: "e4m3xe5m2->bf16", "... block", "bf16xbf16->f32".
std::string gemm_ex_label(const GemmExSettings &s);
// Square n x n x n products, as many as fill about operand_bytes per operand.
std::unique_ptr<Case> make_gemm_batched_case(const Env &env, int dtype, int64_t n, size_t operand_bytes);
std::unique_ptr<Case> make_reduce_case(const Env &env, int dtype, int64_t n);
std::unique_ptr<Case> make_transpose_case(const Env &env, int dtype, int64_t rows, int64_t cols);
std::unique_ptr<Case> make_pi_case(const Env &env, uint64_t samples, uint64_t seed);

// A kernel that one call of a row's variant launched (gpk-bench --kernels,
// kernels.cpp): one per distinct (kernel, grid, block, dynamic shared memory).
// -1 where the driver would not say.
struct KernelInfo {
    std::string name;                      // demangled, without template arguments
    unsigned grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
    int regs = -1;                         // registers per thread
    int64_t static_smem = -1;              // bytes per block, declared in the kernel
    size_t dynamic_smem = 0;               // bytes per block, asked for at launch
    int blocks_per_sm = -1;                // theoretical occupancy: resident blocks per SM...
    double warps_percent = -1;             // ...and their warps, in % of the SM's most
    int launches = 0;                      // in the one call
};

// One variant's line in the results.
struct Row {
    enum class Status { kOk, kFailed, kUnsupported, kUnchecked };

    std::string variant;
    int index = 0;                       // in the ladder; meaningless for a ceiling or "auto"
    bool ceiling = false;                // a ceiling kernel, not a variant of the op
    bool auto_pick = false;              // "auto": the library's own choice, not a fixed rung
    std::string ran;                     // "auto": the rung it ran (gpk_last_variant)
    Status status = Status::kOk;
    std::string detail;                  // check verdict or error text
    int repeats = 0;                     // timed calls (0: not timed)
    bool time_boxed = false;             // slow first call: fewer repeats
    double median_ms = 0, min_ms = 0;
    double throughput = 0;               // in the case's unit
    std::optional<double> ratio_to_vendor;      // throughput / variant 0's; >1 is faster
    std::optional<double> speedup_over_first;   // throughput / the first own rung's that ran (cumulative)
    std::optional<double> step_speedup;         // throughput / the rung below's
    std::optional<double> ratio_to_ceiling;     // throughput / the first ceiling's, where the case has one
    std::optional<double> roofline_fraction;    // the case's roofline time / this row's median time
    // --kernels: what one untimed call of the variant launched (none where not recorded).
    std::optional<std::vector<KernelInfo>> kernels;

    bool timed() const { return repeats > 0; }
    bool failed() const { return status == Status::kFailed; }
};

const char *status_name(Row::Status status);

// What one case produced, kept after the case (and its memory) is gone.
struct CaseResult {
    std::string op;
    std::string dtype;  // "-" for none
    std::vector<std::pair<const char *, uint64_t>> sizes;
    std::string unit;
    std::vector<Row> rows;
    std::string error;  // set when the case could not run at all
    std::string memory;  // where the arrays were: "device", "pinned" or "host"
    bool has_ceilings = false;  // ceiling rows follow the variants; rows carry ratio_to_ceiling
    // What ratio_to_ceiling compares with: the case's Yardstick ("copy", "simple
    // fused"), or the h2d copy with --memory pinned (label "h2d", key "ratio_to_copy").
    Yardstick yardstick;
    bool link_duplex = false;   // --memory pinned, both directions used at once (Case::link_duplex)
    int name_width = 7;  // for the table: the longest variant name
    std::optional<Roofline> roofline;  // CUDA with device arrays, for cases that have one (gemm)
    std::string note;                  // the case's shape_note(), for the JSON
};

class KernelRecorder;  // kernels.hpp

struct RunOptions {
    int repeat = 20;
    double time_box_s = 2.0;  // a first call slower than this gets...
    int time_boxed_repeat = 3;  // ...this many timed repeats
    // When above 0, a row whose timed call takes less than min_timed_ms / repeat gets
    // more repeats, enough for min_timed_ms of timed calls, at most short_repeat: the
    // median of 20 calls of a few microseconds moves by several percent between runs.
    double min_timed_ms = 0;
    int short_repeat = 0;
    // When not empty, only these variants run (and the vendor's, variant 0, for the
    // ratios); step and cumulative speedups then compare the rows shown. "all"
    // stands for every rung; "auto" adds a row for the library's own choice
    // (gpk_set_variant "auto") after the ladder, with ratios to the vendor and the
    // copy but no step speedups.
    std::vector<std::string> variants;
    // --kernels: records each row's kernels (kernels.hpp) after its timed calls.
    KernelRecorder *kernels = nullptr;
};

// Checks and times every variant of the case's op on env.ctx, printing the table
// as it goes.
CaseResult run_case(Env &env, Case &c, const RunOptions &opt);

// The roofline of `w` on env's GPU (roofline.cpp): the copy bandwidth and the peak are
// measured once per run; none on the host backend or with --memory pinned. Throws Error.
std::optional<Roofline> roofline_of(Env &env, const RooflineWork &w);
// --shapes membound (membound.cpp): skinny and Gram products in every dtype, each
// under the vendor, the memory-bound rungs and "auto", with their roofline fractions
// and a summary. Appends the cases' results; returns how many failed.
int run_membound_sweep(Env &env, const RunOptions &run, bool quick, std::vector<CaseResult> *results);

// After a run with gemm_ex cases (gemm_ex.cpp; --shapes fp8 has them all): each case's
// best rung against the vendor, "auto" against the best, the layouts cuBLASLt refuses
// and 4097^3 against our TN rates, block scaling against per tensor, 16-bit gemm_ex
// against gemm -- the targets, side by side. Prints nothing without such cases.
void print_fp8_summary(const std::vector<CaseResult> &results);

// The table's title line for a case: "gemm f32  m=4096 n=4096 k=4096".
std::string case_title(const CaseResult &r);
void print_table_header(const Env &env, const CaseResult &r, const std::string &note);
void print_row(const CaseResult &r, const Row &row);
// --kernels: a row's kernels, one line each, under its line in the table.
void print_kernels(const Row &row);
// "best rung X: ... = 0.93x the copy's ...", for a case with ceilings ("auto"
// instead of the best rung when it ran; the first ceiling named by the case's
// Yardstick; with --memory pinned, against the h2d copy, and for a duplex case
// against h2d + d2h as well).
void print_ceiling_summary(const CaseResult &r);
void print_case_error(const CaseResult &r);

// Writes the header and every row as JSON; returns false when the file cannot be written.
struct RunInfo {
    std::string backend, device, cuda_driver, cuda_runtime, compute_capability, date;
    std::string memory;  // Env::memory_name()
    int device_index = 0;
    int sm_count = 0;
    bool quick = false;
    int repeat = 0;
    double min_timed_ms = 0;  // RunOptions: short calls timed up to this many ms...
    int short_repeat = 0;     // ...in at most this many calls (0: every row `repeat`)
    size_t l2_flush_bytes = 0;
};
RunInfo describe_run(const Env &env, bool quick, const RunOptions &run);
bool write_json(const std::string &path, const RunInfo &info, const std::vector<CaseResult> &results);

}  // namespace gpk_bench
