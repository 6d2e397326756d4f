#include "gemm_app.hpp"

#include "../common/cli.hpp"

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <optional>

namespace gpk_gemm_app {
namespace {

void usage(std::FILE *to) {
    std::fprintf(to,
                 "usage: %s [M [N [K]] | MxNxK] [--dtype f32|f64] [--backend auto|cuda|host]\n"
                 "                [--device N | --devices LIST] [--variant NAME] [--repeats R] [--seed S]\n"
                 "                [--streams N | --no-overlap] [--chunk BYTES] [--device-memory BYTES]\n"
                 "                [--pageable] [--validate] [--json] [--timeline FILE.svg]\n"
                 "                [--mpi | --gpus N] [--no-baseline]\n"
                 "  M N K      C (M x N) = A (M x K) * B (K x N), row-major, host arrays; one number\n"
                 "             is a square problem (default 4096 on a GPU, 512 on the host backend)\n"
                 "  --dtype    f32 (default) or f64\n"
                 "  --backend  where to run (default auto: the GPU if there is one)\n"
                 "  --device   CUDA device index (default: GPK_DEVICE if set, else 0); with --mpi,\n"
                 "             every rank's\n"
                 "  --devices  with --mpi: the GPUs of a node's ranks, e.g. 0,1,2,3; local rank r\n"
                 "             takes entry r mod the list's length (default: GPK_DEVICE, same\n"
                 "             syntax, if set; else local rank r takes GPU r)\n"
                 "  --variant  a gemm variant by name (gpk-bench --op gemm lists them); default auto\n"
                 "  --repeats  timed calls after one untimed warm-up call (default %d); the mean is\n"
                 "             reported\n"
                 "  --seed     key of the matrices' entries, small integers (default %llu)\n"
                 "The staging pipeline (gpk_set_staging) that moves the host arrays through the GPU:\n"
                 "  --streams  streams of the overlapped run, 1 to %d (default %d; 1 is --no-overlap).\n"
                 "             On the GPU the app first runs the problem on 1 stream (copy in,\n"
                 "             compute, copy out, one chunk after the other), whose stage times T\n"
                 "             (transfers) and C (compute) give the overlap efficiency\n"
                 "             max(T, C) / wall of the overlapped run and the speedup it should give\n"
                 "  --no-overlap  the 1-stream run alone\n"
                 "  --chunk    bytes of the streamed operands per chunk, e.g. 64M, 1G (K, M, G, T\n"
                 "             are powers of 1024; default: the library's choice)\n"
                 "  --device-memory  cap on the device memory the pipeline holds, e.g. 2G (default:\n"
                 "             none but the GPU's); below the operands' size the product runs out of\n"
                 "             core, panel by panel\n"
                 "  --pageable host matrices in pageable memory (default on the GPU: pinned memory\n"
                 "             from cudaHostAlloc, which the GPU copies at the link's speed)\n"
                 "Output:\n"
                 "  --validate check C against exact integer dot products at up to 64 x 64 entries\n"
                 "  --json     print one JSON object instead of the report, the trace included\n"
                 "  --timeline write an SVG picture of the streams of the overlapped run (GPU only:\n"
                 "             the host backend has no stages, and then nothing is written)\n"
                 "  --mpi      run as one rank of an MPI job (mpirun -np P %s --mpi ...): rank 0\n"
                 "             scatters row panels of A, broadcasts B, each rank multiplies its panel\n"
                 "             with gpk_gemm on its own GPU, and rank 0 gathers C and checks it\n"
                 "             against the whole product computed by rank 0 alone first, which also\n"
                 "             gives the scaling efficiency (--no-baseline: skip that run); the\n"
                 "             pipeline options apply to every rank, --timeline does not; on one\n"
                 "             node with NCCL the ranks' GPUs copy their rows straight from rank 0's\n"
                 "             arrays in shared memory and exchange B over NVLink instead\n"
                 "  --gpus     one process drives N GPUs of this node, one thread\n"
                 "             each: each GPU copies its rows of A and C over its own link in\n"
                 "             chunks that overlap its products, B's slices go GPU to GPU with\n"
                 "             NCCL; reports the end-to-end speedup over one GPU from host arrays\n",
                 kProg, kDefaultRepeats, static_cast<unsigned long long>(kDefaultSeed), kMaxStreams, kDefaultStreams,
                 kProg);
}

bool take_dims(Options *opt, const std::vector<uint64_t> &dims) {
    uint64_t *slots[] = {&opt->m, &opt->n, &opt->k};
    size_t filled = opt->m ? (opt->n ? (opt->k ? 3 : 2) : 1) : 0;
    if (filled + dims.size() > 3) return false;
    for (uint64_t d : dims) {
        if (d == 0) return false;
        *slots[filled++] = d;
    }
    return true;
}

template <class T>
T *typed(void *p) {
    return static_cast<T *>(p);
}

}  // namespace

int parse(int argc, char **argv, Options *opt, bool speak) {
    bool no_overlap = false, streams_given = false;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        std::string value;
        bool missing = false;
        const auto bad = [&](const char *what) {
            if (speak) {
                if (missing)
                    std::fprintf(stderr, "%s: %s: the value is missing\n", kProg, what);
                else
                    std::fprintf(stderr, "%s: %s: '%s'\n", kProg, what, value.c_str());
            }
            return 2;
        };
        if (arg == "-h" || arg == "--help") {
            if (speak) usage(stdout);
            opt->help = true;
            return 0;
        } else if (arg == "--json") {
            opt->json = true;
        } else if (arg == "--validate") {
            opt->validate = true;
        } else if (arg == "--mpi") {
            // The MPI twin's mode: the app hands over to the twin before parsing.
        } else if (arg == "--no-baseline") {
            opt->baseline = false;
        } else if (gpk_app::take_option(argc, argv, &i, "--dtype", &value, &missing)) {
            opt->dtype = missing ? -1 : gpk_app::parse_dtype(value);
            if (opt->dtype != GPK_F32 && opt->dtype != GPK_F64) return bad("--dtype must be f32 or f64");
        } else if (std::string error; gpk_app::take_placement(argc, argv, &i, &opt->backend, &opt->devices, &error)) {
            if (!error.empty()) {
                if (speak) std::fprintf(stderr, "%s: %s\n", kProg, error.c_str());
                return 2;
            }
        } else if (gpk_app::take_option(argc, argv, &i, "--variant", &value, &missing)) {
            if (missing || value.empty()) return bad("--variant needs a name");
            opt->variant = value;
        } else if (gpk_app::take_option(argc, argv, &i, "--repeats", &value, &missing)) {
            const auto repeats = missing ? std::nullopt : gpk_app::parse_count(value, 1000);
            if (!repeats || *repeats < 1) return bad("--repeats needs a count, 1 to 1000");
            opt->repeats = static_cast<int>(*repeats);
        } else if (gpk_app::take_option(argc, argv, &i, "--seed", &value, &missing)) {
            const auto seed = missing ? std::nullopt : gpk_app::parse_seed(value);
            if (!seed) return bad("--seed needs an integer from 0 to 2^64 - 1");
            opt->seed = *seed;
        } else if (arg == "--no-overlap") {
            no_overlap = true;
        } else if (arg == "--pageable") {
            opt->pageable = true;
        } else if (gpk_app::take_option(argc, argv, &i, "--streams", &value, &missing)) {
            const auto streams = missing ? std::nullopt : gpk_app::parse_count(value);
            if (!streams || *streams < 1 || *streams > static_cast<uint64_t>(kMaxStreams))
                return bad("--streams needs a count, 1 to 16");
            opt->streams = static_cast<int>(*streams);
            streams_given = true;
        } else if (gpk_app::take_option(argc, argv, &i, "--chunk", &value, &missing)) {
            const auto bytes = missing ? std::nullopt : gpk_app::parse_bytes(value);
            if (!bytes || *bytes == 0) return bad("--chunk needs a size in bytes, e.g. 64M or 1G");
            opt->chunk_bytes = *bytes;
        } else if (gpk_app::take_option(argc, argv, &i, "--device-memory", &value, &missing)) {
            const auto bytes = missing ? std::nullopt : gpk_app::parse_bytes(value);
            if (!bytes || *bytes == 0) return bad("--device-memory needs a size in bytes, e.g. 512M or 2G");
            opt->device_bytes = *bytes;
        } else if (gpk_app::take_option(argc, argv, &i, "--timeline", &value, &missing)) {
            if (missing || value.empty()) return bad("--timeline needs a file name, e.g. timeline.svg");
            opt->timeline = value;
        } else if (!arg.empty() && arg[0] != '-') {
            value = arg;
            const auto dims = gpk_app::parse_dims(value, kMaxDim);
            if (!dims || !take_dims(opt, *dims))
                return bad("sizes are M [N [K]] or MxNxK, three at most, each from 1 to 2^31 - 1");
        } else {
            if (speak) {
                std::fprintf(stderr, "%s: unexpected argument '%s'\n", kProg, arg.c_str());
                usage(stderr);
            }
            return 2;
        }
    }
    if (no_overlap) {
        if (streams_given && opt->streams != 1) {
            if (speak)
                std::fprintf(stderr, "%s: --no-overlap runs on one stream: it contradicts --streams %d\n", kProg,
                             opt->streams);
            return 2;
        }
        opt->streams = 1;
    }
    // Sizes no process can hold are refused here, before anything is allocated (and
    // by every build of the app: this one, its MPI and its several-GPU twins).
    if (const std::string problem = matrices_problem(*opt, 1, 0, uint64_t(PTRDIFF_MAX)); !problem.empty()) {
        if (speak) std::fprintf(stderr, "%s: %s\n", kProg, problem.c_str());
        return 2;
    }
    return 0;
}

std::string matrices_problem(const Options &opt, int copies, int extra_c, uint64_t limit) {
    if (opt.m == 0) return "";
    const uint64_t m = opt.m, n = opt.n ? opt.n : m, k = opt.k ? opt.k : n;
    const uint64_t e = gpk_app::dtype_bytes(opt.dtype);
    const std::string dims = "M x N x K = " + std::to_string(m) + " x " + std::to_string(n) + " x " +
                             std::to_string(k) + ", " + gpk_app::dtype_name(opt.dtype);
    const struct {
        const char *name, *sizes;
        std::optional<uint64_t> bytes;
    } parts[] = {{"A (M x K)", "M or K", gpk_app::checked_product({m, k, e})},
                 {"B (K x N)", "K or N", gpk_app::checked_product({k, n, e})},
                 {"C (M x N)", "M or N", gpk_app::checked_product({m, n, e})}};
    for (const auto &part : parts)
        if (!part.bytes)
            return std::string(part.name) + " alone would be more bytes than a process can address (" + dims +
                   "): choose a smaller " + part.sizes;
    // Each part is below 2^63 bytes: their sum, in 128 bits, cannot wrap.
    using Wide = unsigned __int128;
    const Wide total = (Wide(*parts[0].bytes) + *parts[1].bytes) * unsigned(copies) +
                       Wide(*parts[2].bytes) * unsigned(copies + extra_c);
    if (total <= limit) return "";
    std::string need = "A, B and C (" + dims + ")";
    if (copies > 1 || extra_c > 0) need += " with the copies this run holds besides";
    if (total > uint64_t(PTRDIFF_MAX))
        return need + " would be more bytes than a process can address: choose smaller sizes";
    return need + " need " + gpk_app::format_bytes(static_cast<uint64_t>(total)) +
           " of host memory, more than this machine's " + gpk_app::format_bytes(limit) + ": choose smaller sizes";
}

gpk_status set_staging(gpk_context *ctx, const Options &opt, int streams) {
    return gpk_set_staging(ctx, streams, static_cast<size_t>(opt.chunk_bytes), static_cast<size_t>(opt.device_bytes));
}

HostMemory host_memory(const Options &opt, int backend) {
    return backend == GPK_BACKEND_CUDA && !opt.pageable ? HostMemory::pinned : HostMemory::pageable;
}

const char *host_memory_name(HostMemory memory) { return memory == HostMemory::pinned ? "pinned" : "pageable"; }

void default_size(Options *opt, int backend) {
    if (opt->m == 0) opt->m = backend == GPK_BACKEND_CUDA ? kDefaultSizeGpu : kDefaultSizeHost;
    // One number is a square problem; two are M x N with K = N.
    if (opt->n == 0) opt->n = opt->m;
    if (opt->k == 0) opt->k = opt->n;
}

void HostFree::operator()(unsigned char *p) const {
    if (pinned)
        cudaFreeHost(p);
    else
        delete[] p;
}

Matrix::Matrix(int dtype, uint64_t rows, uint64_t cols, HostMemory memory)
    : dtype_(dtype), rows_(rows), cols_(cols), elem_(gpk_app::dtype_bytes(dtype)) {
    // The callers check the sizes first (matrices_problem); this keeps a product that
    // would wrap from ever becoming a small allocation.
    const auto checked = gpk_app::checked_product({rows, cols, elem_});
    if (!checked) throw std::bad_alloc();
    const uint64_t size = *checked;
    if (memory == HostMemory::pageable) {
        bytes_ = std::unique_ptr<unsigned char[], HostFree>(new unsigned char[size](), HostFree{false});
        return;
    }
    void *p = nullptr;
    const cudaError_t err = cudaHostAlloc(&p, size, cudaHostAllocDefault);
    if (err != cudaSuccess) {
        (void)cudaGetLastError();
        throw PinnedAllocError("cudaHostAlloc of " + gpk_app::format_bytes(size) + ": " + cudaGetErrorString(err));
    }
    bytes_ = std::unique_ptr<unsigned char[], HostFree>(static_cast<unsigned char *>(p), HostFree{true});
    std::memset(p, 0, size);
}

void Matrix::poison() {
    if (bytes_) std::memset(bytes_.get(), 0xFF, bytes());
}

double Matrix::at(uint64_t i, uint64_t j) const {
    const uint64_t e = i * cols_ + j;
    if (dtype_ == GPK_F32) return reinterpret_cast<const float *>(bytes_.get())[e];
    return reinterpret_cast<const double *>(bytes_.get())[e];
}

bool Matrix::same_bits(uint64_t i, uint64_t j, const Matrix &other) const {
    const uint64_t e = (i * cols_ + j) * elem_;
    return std::memcmp(bytes_.get() + e, other.bytes_.get() + e, elem_) == 0;
}

int entry(uint64_t seed, int stream, uint64_t index) {
    // splitmix64 of (seed, stream, index): any entry on its own, in any order.
    uint64_t z = seed * 0x9E3779B97F4A7C15ull + (static_cast<uint64_t>(stream) << 62) + index;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return static_cast<int>(z % 9) - 4;
}

void fill(Matrix *x, uint64_t seed, int stream) {
    const uint64_t count = x->rows() * x->cols();
    if (x->dtype() == GPK_F32) {
        float *p = typed<float>(x->data());
        for (uint64_t e = 0; e < count; ++e) p[e] = static_cast<float>(entry(seed, stream, e));
    } else {
        double *p = typed<double>(x->data());
        for (uint64_t e = 0; e < count; ++e) p[e] = entry(seed, stream, e);
    }
}

gpk_status multiply(gpk_context *ctx, int dtype, uint64_t m, uint64_t n, uint64_t k, const void *A, const void *B,
                    void *C) {
    const auto M = static_cast<int64_t>(m), N = static_cast<int64_t>(n), K = static_cast<int64_t>(k);
    return gpk_gemm(ctx, dtype, GPK_ROW_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, M, N, K, 1.0, A, K, B, N, 0.0, C, N);
}

bool exact_sums(int dtype, uint64_t k) {
    // |partial sum| <= 16 k must be an integer the dtype holds exactly.
    return dtype == GPK_F64 ? k <= (uint64_t(1) << 49) : k <= (uint64_t(1) << 20);
}

Check validate(const Matrix &A, const Matrix &B, const Matrix &C, const std::vector<uint64_t> &rows,
               const std::vector<uint64_t> &cols) {
    Check check;
    const uint64_t k = A.cols();
    const bool exact = exact_sums(C.dtype(), k);
    const double eps = C.dtype() == GPK_F32 ? 0x1p-24 : 0x1p-53;
    std::vector<int64_t> column(k);
    for (uint64_t j : cols) {
        // B's column once, contiguous, rather than a stride of n elements per term.
        for (uint64_t l = 0; l < k; ++l) column[l] = static_cast<int64_t>(B.at(l, j));
        for (uint64_t i : rows) {
            int64_t want = 0, magnitude = 0;
            for (uint64_t l = 0; l < k; ++l) {
                const auto a = static_cast<int64_t>(A.at(i, l)), b = column[l];
                want += a * b;
                magnitude += std::llabs(a * b);
            }
            const double error = std::fabs(C.at(i, j) - static_cast<double>(want));
            const double allowed = exact ? 0.0 : 2.0 * static_cast<double>(k) * eps * static_cast<double>(magnitude);
            ++check.checked;
            if (!(error <= allowed)) ++check.wrong;
            if (!(error <= check.max_error)) check.max_error = error, check.worst_row = i, check.worst_col = j;
        }
    }
    return check;
}

std::vector<uint64_t> spread(uint64_t size, uint64_t count) {
    std::vector<uint64_t> out;
    if (size == 0) return out;
    if (size <= count) {
        for (uint64_t i = 0; i < size; ++i) out.push_back(i);
        return out;
    }
    for (uint64_t i = 0; i < count; ++i) out.push_back(i * (size - 1) / (count - 1));
    return out;
}

double gflops(uint64_t m, uint64_t n, uint64_t k, double seconds) {
    return seconds > 0 ? 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) / seconds * 1e-9
                       : 0.0;
}

}  // namespace gpk_gemm_app
