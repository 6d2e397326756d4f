// What gpk-gemm and its MPI build, gpk-gemm-mpi, share: the options, the matrices,
// the multiply call, and the check of C against exact dot products.
//
// The entries of A and B are small integers (-4 .. 4) stored as F32 or F64. Every
// product and every partial sum of a dot product is then an integer below 16 k in
// magnitude, exact in F32 for k <= 2^20 (in F64 for any k that fits in memory): any
// correct kernel -- whatever its summation order, tiling, split over k or use of
// FMA -- gives C bit for bit. So a distributed C must equal the single-process C
// exactly, and --validate compares with exact integer dot products, with no
// tolerance to argue about. Beyond that k (F32 only) the comparisons allow the
// rounding error bound 2 k eps sum |a| |b| instead.
#pragma once

#include "gpk/gpk.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpk_gemm_app {

constexpr const char *kProg = "gpk-gemm";
constexpr uint64_t kDefaultSizeGpu = 4096;
constexpr uint64_t kDefaultSizeHost = 512;
constexpr uint64_t kDefaultSeed = 2026;
constexpr int kDefaultRepeats = 3;
constexpr uint64_t kMaxDim = (uint64_t(1) << 31) - 1;  // MPI counts rows in an int
// Three stages (copy in, compute, copy out) keep a copy engine each way and the SMs
// busy when at least three chunks are in flight; one more absorbs uneven stages.
constexpr int kDefaultStreams = 4;
constexpr int kMaxStreams = 16;  // gpk_set_staging's limit

struct Options {
    uint64_t m = 0, n = 0, k = 0;  // 0: the backend's default, square
    int dtype = GPK_F32;
    int backend = GPK_BACKEND_AUTO;
    // --device N or --devices LIST; empty: GPK_DEVICE, else the local rank (0 alone).
    std::vector<int> devices;
    std::string variant;  // empty: auto
    int repeats = kDefaultRepeats;
    uint64_t seed = kDefaultSeed;
    bool validate = false;
    bool json = false;
    bool baseline = true;  // --mpi: also run the whole product on rank 0 alone
    bool help = false;     // usage printed; exit 0
    // The staging pipeline (gpk_set_staging): the overlapped run's streams (1 with
    // --no-overlap), the chunk size and the device-memory cap (0: the library's
    // choice, no cap).
    int streams = kDefaultStreams;
    uint64_t chunk_bytes = 0;
    uint64_t device_bytes = 0;
    bool pageable = false;   // host matrices in pageable memory even on the GPU
    std::string timeline;    // --timeline FILE.svg; empty: none
    bool overlap() const { return streams > 1; }
};

// Reads the command line. Returns 0 when the options are good, else the exit status
// to use; messages (and the usage, for --help) go out only when `speak` is set.
int parse(int argc, char **argv, Options *opt, bool speak);

// Fills in the default size for a backend when none was given.
void default_size(Options *opt, int backend);

// What keeps `copies` copies of the matrices A (M x K), B (K x N) and C (M x N), and
// `extra_c` more of C's shape, from fitting in `limit` bytes of host memory: empty
// when they fit (or no size was given: the defaults always do), else a message that
// names the sizes to make smaller. Every size product is taken with a check, so that
// none wraps: a C of 2^64 + 537552 bytes is too large, not 537552 bytes.
std::string matrices_problem(const Options &opt, int copies, int extra_c, uint64_t limit);

// Shapes the context's staging pipeline for `streams` streams and the options'
// chunk size and device-memory cap.
gpk_status set_staging(gpk_context *ctx, const Options &opt, int streams);

// Where a Matrix lives on the host. Pinned (page-locked, cudaHostAlloc) memory is
// copied to and from the GPU by DMA at the link's speed; pageable memory goes
// through the library's pinned staging buffers, one more copy on the CPU.
enum class HostMemory { pageable, pinned };

// Pinned memory by default on the CUDA backend, unless --pageable; plain memory on
// the host backend, which never copies.
HostMemory host_memory(const Options &opt, int backend);
const char *host_memory_name(HostMemory memory);

// cudaHostAlloc failed: the message says why.
struct PinnedAllocError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Frees a Matrix's memory the way it was allocated.
struct HostFree {
    bool pinned = false;
    void operator()(unsigned char *p) const;
};

// A row-major matrix of `rows` x `cols` elements of a dtype, in host memory, zeroed.
class Matrix {
public:
    Matrix() = default;
    // Throws std::bad_alloc (also when rows x cols elements would be more bytes than a
    // process can address), or PinnedAllocError for pinned memory.
    Matrix(int dtype, uint64_t rows, uint64_t cols, HostMemory memory = HostMemory::pageable);
    int dtype() const { return dtype_; }
    uint64_t rows() const { return rows_; }
    uint64_t cols() const { return cols_; }
    uint64_t bytes() const { return rows_ * cols_ * elem_; }
    void *data() { return bytes_.get(); }
    const void *data() const { return bytes_.get(); }
    // The first element of row i.
    void *row(uint64_t i) { return bytes_.get() + i * cols_ * elem_; }
    double at(uint64_t i, uint64_t j) const;
    bool same_bits(uint64_t i, uint64_t j, const Matrix &other) const;
    // Every byte 0xFF: NaN in F32 and F64, so an entry left unwritten fails validation.
    void poison();

private:
    int dtype_ = GPK_F32;
    uint64_t rows_ = 0, cols_ = 0;
    size_t elem_ = 4;
    std::unique_ptr<unsigned char[], HostFree> bytes_;
};

// The integer entries of the problem: A is stream 0, B stream 1; entry e of a
// stream depends only on (seed, stream, e).
int entry(uint64_t seed, int stream, uint64_t index);
void fill(Matrix *x, uint64_t seed, int stream);

// C = A * B, all row-major, through gpk_gemm (alpha 1, beta 0).
gpk_status multiply(gpk_context *ctx, int dtype, uint64_t m, uint64_t n, uint64_t k, const void *A, const void *B,
                    void *C);

// Whether every partial sum is exact in dtype (see the top of this file).
bool exact_sums(int dtype, uint64_t k);

// C against exact dot products of A's and B's entries at rows x columns.
struct Check {
    uint64_t checked = 0, wrong = 0;
    double max_error = 0;  // largest |C - exact| seen
    uint64_t worst_row = 0, worst_col = 0;
};
Check validate(const Matrix &A, const Matrix &B, const Matrix &C, const std::vector<uint64_t> &rows,
               const std::vector<uint64_t> &cols);

// Up to `count` indices of [0, size), spread evenly, first and last included.
std::vector<uint64_t> spread(uint64_t size, uint64_t count);

// 2 m n k floating-point operations per `seconds`, in GFLOP/s.
double gflops(uint64_t m, uint64_t n, uint64_t k, double seconds);

}  // namespace gpk_gemm_app
