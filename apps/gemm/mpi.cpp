// gpk-gemm-mpi (what "gpk-gemm --mpi" runs): C = A * B over the ranks of an MPI job,
// one GPU each.
//
// Rank 0 makes A and B. A's rows are split in contiguous panels, one per rank in rank
// order (the first m % P ranks one row longer), and scattered; B is broadcast whole.
// Each rank multiplies its panel with gpk_gemm -- C's panel = A's panel * B -- and
// rank 0 gathers C's panels. Unless --no-baseline, rank 0 first multiplies the whole
// problem alone: the gathered C must equal that C bit for bit (the entries are small
// integers, so every correct kernel gives the exact result; gemm_app.hpp), and its
// time T1 gives the scaling efficiency T1 / (P * TP) of the compute phase.
//
// Every rank applies the staging options (--streams, --chunk, --device-memory) to
// its context and, on the GPU, holds its matrices in pinned memory unless
// --pageable, as gpk-gemm does in one process.
//
// Timings: the compute phase runs `repeats` times after a warm-up call, each time
// from a barrier to the slowest rank's end; scatter, broadcast and gather are timed
// apart, so that the report shows both what the GPUs do and what moving the data
// costs; their sum is the end-to-end time, against rank 0 alone.
//
// Here every byte goes through host memory and MPI, which any MPI and any node
// layout allow; on one node, gpk-gemm --gpus N (apps/gemm/gpus.cpp) moves the data
// the way the GPUs' links allow instead.
#include "gpk/gpk.h"

#include "gemm_app.hpp"
#include "panels.hpp"

#include "../common/cli.hpp"
#include "../common/json.hpp"
#include "../common/mpi.hpp"

#include <cuda_runtime.h>
#if defined(GPK_APP_NCCL)
#include <nccl.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

namespace {

using namespace gpk_gemm_app;
namespace mpi = gpk_app::mpi;

// Every rank's part, on rank 0.
struct Ranks {
    std::vector<std::string> host, device, choice;
    std::vector<uint64_t> backend, first_row, rows;
    std::vector<double> seconds;
};

// The gathered C against the single-process C.
struct Comparison {
    uint64_t entries = 0, differing = 0;
    double max_diff = 0;
};

struct Report {
    int ranks, nodes, backend;
    std::string variant;
    Options opt;
    double seconds;         // compute phase: mean over repeats of the slowest rank
    double scatter_s, bcast_s, gather_s;
    double single_seconds;  // rank 0 alone, mean over repeats
    // The direct path (one node, NCCL; apps/gemm/panels.hpp): no scatter, broadcast
    // or gather; `seconds` is then the slowest rank's time in gpk_gemm's kernels.
    bool direct = false;
    uint64_t chunk_rows = 0;
    double end_to_end_s = 0;                  // host A, B to host C, all ranks
    double alone_compute = 0, alone_wall = 0;  // rank 0's GPU, the same pipeline, all rows
    std::optional<Comparison> single;
    std::optional<Check> check;
    Ranks per_rank;
};

double efficiency(const Report &r) {
    const double t1 = r.direct ? r.alone_compute : r.single_seconds;
    return r.single && r.seconds > 0 ? t1 / (r.ranks * r.seconds) : 0.0;
}

// From host A and B on rank 0 to host C on rank 0: the moves through MPI and the
// slowest rank's product, one after the other as this app runs them.
double end_to_end(const Report &r) {
    return r.direct ? r.end_to_end_s : r.scatter_s + r.bcast_s + r.seconds + r.gather_s;
}
double end_to_end_speedup(const Report &r) {
    return r.single && end_to_end(r) > 0 ? r.single_seconds / end_to_end(r) : 0.0;
}

void print_text(const Report &r) {
    const Options &o = r.opt;
    std::printf("backend     %s (rank 0; every rank below), %d rank%s on %d node%s\n",
                gpk_app::backend_name(r.backend), r.ranks, r.ranks == 1 ? "" : "s", r.nodes, r.nodes == 1 ? "" : "s");
    std::printf("variant     %s\n", r.variant.c_str());
    std::printf("problem     C (%llu x %llu) = A (%llu x %llu) * B (%llu x %llu), %s, row-major; row panels of A "
                "and C over the ranks, %s\n",
                static_cast<unsigned long long>(o.m), static_cast<unsigned long long>(o.n),
                static_cast<unsigned long long>(o.m), static_cast<unsigned long long>(o.k),
                static_cast<unsigned long long>(o.k), static_cast<unsigned long long>(o.n),
                gpk_app::dtype_name(o.dtype),
                r.direct ? "each GPU copying its own from rank 0's host arrays (shared memory), B's slices exchanged "
                           "with NCCL"
                         : "B broadcast, all through host memory and MPI");
    if (r.direct) {
        std::printf("end-to-end  %.6f s from host A, B to host C on rank 0, all ranks (mean of %d after a warm-up) = "
                    "%.2f GFLOP/s\n",
                    r.end_to_end_s, o.repeats, gflops(o.m, o.n, o.k, r.end_to_end_s));
        if (r.single) {
            std::printf("one rank    %.6f s, gpk_gemm from the same host arrays on rank 0 alone (its staging "
                        "pipeline): speedup %.2fx\n",
                        r.single_seconds, end_to_end_speedup(r));
            std::printf("compute     %.6f s in gpk_gemm (slowest rank) against %.6f s for all rows on rank 0's GPU: "
                        "efficiency %.3f = T1 / (P * TP)\n",
                        r.seconds, r.alone_compute, efficiency(r));
            std::printf("one rank    %.6f s end to end through this pipeline alone (rank 0's GPU, all rows)\n",
                        r.alone_wall);
        }
    } else {
        std::printf("compute     %.6f s per call (slowest rank, mean of %d after a warm-up call) = %.2f GFLOP/s, all "
                    "ranks\n",
                    r.seconds, o.repeats, gflops(o.m, o.n, o.k, r.seconds));
        if (r.single) {
            std::printf("one rank    %.6f s per call (rank 0 alone, the whole product) = %.2f GFLOP/s\n",
                        r.single_seconds, gflops(o.m, o.n, o.k, r.single_seconds));
            std::printf("scaling     efficiency %.3f = T1 / (P * TP) = %.6f / (%d * %.6f); speedup %.2fx\n",
                        efficiency(r), r.single_seconds, r.ranks, r.seconds,
                        r.seconds > 0 ? r.single_seconds / r.seconds : 0.0);
        }
        std::printf("transfers   scatter A %.6f s, broadcast B %.6f s, gather C %.6f s\n", r.scatter_s, r.bcast_s,
                    r.gather_s);
        std::printf("end-to-end  %.6f s from host A, B to host C on rank 0 (transfers + compute)", end_to_end(r));
        if (r.single)
            std::printf(" against %.6f s for rank 0 alone: speedup %.2fx", r.single_seconds, end_to_end_speedup(r));
        std::printf("\n");
    }
    if (r.single) {
        if (r.single->differing == 0)
            std::printf("result      gathered C identical to rank 0's single-process C (%llu entries)\n",
                        static_cast<unsigned long long>(r.single->entries));
        else
            std::printf("result      gathered C DIFFERS from rank 0's single-process C at %llu of %llu entries "
                        "(max |diff| %.3g)\n",
                        static_cast<unsigned long long>(r.single->differing),
                        static_cast<unsigned long long>(r.single->entries), r.single->max_diff);
    }
    if (r.check)
        std::printf("validation  %llu entries against exact dot products: %s (max error %.3g)\n",
                    static_cast<unsigned long long>(r.check->checked),
                    r.check->wrong == 0 ? "all correct" : (std::to_string(r.check->wrong) + " WRONG").c_str(),
                    r.check->max_error);
    const Ranks &p = r.per_rank;
    std::printf("\n%4s  %-16s  %-40s  %10s  %10s  %10s  %10s\n", "rank", "node", "device", "first row", "rows",
                "seconds", "GFLOP/s");
    for (size_t i = 0; i < p.host.size(); ++i)
        std::printf("%4zu  %-16s  %-40s  %10llu  %10llu  %10.6f  %10.2f\n", i, p.host[i].c_str(), p.device[i].c_str(),
                    static_cast<unsigned long long>(p.first_row[i]), static_cast<unsigned long long>(p.rows[i]),
                    p.seconds[i], gflops(p.rows[i], o.n, o.k, p.seconds[i]));
}

void print_json(const Report &r) {
    const Options &o = r.opt;
    gpk_app::JsonWriter json;
    json.begin_object()
        .field("mode", "mpi")
        .field("ranks", r.ranks)
        .field("nodes", r.nodes)
        .field("backend", gpk_app::backend_name(r.backend))
        .field("variant", r.variant)
        .field("dtype", gpk_app::dtype_name(o.dtype))
        .field("m", o.m)
        .field("n", o.n)
        .field("k", o.k)
        .field("repeats", static_cast<int64_t>(o.repeats))
        .field("elapsed_s", r.seconds)
        .field("gflops", gflops(o.m, o.n, o.k, r.seconds))
        .field("data_path", r.direct ? "direct-nccl" : "host-mpi")
        .field("chunk_rows", r.chunk_rows)
        .field("end_to_end_s", end_to_end(r));
    if (r.direct)
        json.null_field("scatter_s").null_field("bcast_s").null_field("gather_s");
    else
        json.field("scatter_s", r.scatter_s).field("bcast_s", r.bcast_s).field("gather_s", r.gather_s);
    if (r.direct && r.single)
        json.field("compute_s", r.seconds)
            .field("one_gpu_staged_s", r.single_seconds)
            .field("one_gpu_compute_s", r.alone_compute)
            .field("one_gpu_pipeline_s", r.alone_wall);
    if (r.single) {
        json.begin_object("single")
            .field("elapsed_s", r.single_seconds)
            .field("gflops", gflops(o.m, o.n, o.k, r.single_seconds))
            .field("entries", r.single->entries)
            .field("differing", r.single->differing)
            .field("max_diff", r.single->max_diff)
            .field("identical", r.single->differing == 0)
            .end_object();
        json.field("scaling_efficiency", efficiency(r)).field("end_to_end_speedup", end_to_end_speedup(r));
    } else {
        json.null_field("single").null_field("scaling_efficiency").null_field("end_to_end_speedup");
    }
    if (r.check)
        json.begin_object("validation")
            .field("checked", r.check->checked)
            .field("wrong", r.check->wrong)
            .field("max_error", r.check->max_error)
            .field("exact", exact_sums(o.dtype, o.k))
            .end_object();
    else
        json.null_field("validation");
    json.begin_array("per_rank");
    const Ranks &p = r.per_rank;
    for (size_t i = 0; i < p.host.size(); ++i)
        json.begin_object()
            .field("rank", static_cast<int64_t>(i))
            .field("node", p.host[i])
            .field("backend", gpk_app::backend_name(static_cast<int>(p.backend[i])))
            .field("device", p.device[i])
            .field("device_choice", p.choice[i])
            .field("first_row", p.first_row[i])
            .field("rows", p.rows[i])
            .field("elapsed_s", p.seconds[i])
            .field("gflops", gflops(p.rows[i], o.n, o.k, p.seconds[i]))
            .end_object();
    json.end_array().field("libgpk", gpk_app::library_version()).end_object();
    std::fputs(json.str().c_str(), stdout);
}

Comparison compare(const Matrix &got, const Matrix &want) {
    Comparison c;
    for (uint64_t i = 0; i < got.rows(); ++i)
        for (uint64_t j = 0; j < got.cols(); ++j) {
            ++c.entries;
            if (got.same_bits(i, j, want)) continue;
            ++c.differing;
            const double d = std::fabs(got.at(i, j) - want.at(i, j));
            if (!(d <= c.max_diff)) c.max_diff = d;
        }
    return c;
}

// A row of `len` elements of dtype as one MPI datatype, so that counts are in rows
// and stay ints for matrices of more than 2^31 elements.
MPI_Datatype row_type(int dtype, uint64_t len) {
    MPI_Datatype row;
    MPI_Type_contiguous(static_cast<int>(len), dtype == GPK_F32 ? MPI_FLOAT : MPI_DOUBLE, &row);
    MPI_Type_commit(&row);
    return row;
}

// Whether `copies` copies of A, B and C, and the baseline's C, fit in this rank's host
// memory; says why not when they do not.
bool host_fits(const mpi::Place &at, const Options &opt, int copies) {
    const std::string problem = matrices_problem(opt, copies, opt.baseline ? 1 : 0, gpk_app::host_memory_bytes());
    if (problem.empty()) return true;
    std::fprintf(stderr, "%s: rank %d on %s: %s\n", kProg, at.rank, at.host.c_str(), problem.c_str());
    return false;
}

#if defined(GPK_APP_NCCL)
// Rank 0's host arrays A, B and C in POSIX shared memory, mapped by every rank of
// the node and registered with CUDA (cudaHostRegister), so that each rank's GPU
// copies its rows of A and C, and its slice of B, straight from and to them by DMA
// over its own link: one copy of the data in host memory, no copies through MPI.
class SharedArrays {
public:
    // Collective over the node's ranks; false (after saying why) on any rank when
    // one failed.
    bool open(const mpi::Place &at, size_t bytes) {
        bytes_ = bytes;
        char name[64] = {};
        bool ok = true;
        if (at.rank == 0) {
            std::snprintf(name, sizeof name, "/gpk-gemm-%ld", static_cast<long>(getpid()));
            const int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
            // posix_fallocate, not ftruncate alone: a /dev/shm too small for the
            // arrays is an error here, not a SIGBUS at the first touch of a page.
            ok = fd >= 0 && posix_fallocate(fd, 0, static_cast<off_t>(bytes)) == 0 && map(fd);
            if (!ok) say(at, "shared memory for the arrays (/dev/shm)");
            if (fd >= 0) close(fd);
        }
        MPI_Bcast(name, sizeof name, MPI_CHAR, 0, MPI_COMM_WORLD);
        if (!mpi::all_ok(ok)) return cleanup(at, name);
        if (at.rank != 0) {
            const int fd = shm_open(name, O_RDWR, 0600);
            ok = fd >= 0 && map(fd);
            if (!ok) say(at, "mapping rank 0's shared memory");
            if (fd >= 0) close(fd);
        }
        const bool mapped = mpi::all_ok(ok);
        if (at.rank == 0) shm_unlink(name);  // every rank has it mapped, or gives up
        if (!mapped) return false;
        const cudaError_t err = cudaHostRegister(base_, bytes_, cudaHostRegisterPortable);
        registered_ = err == cudaSuccess;
        if (!registered_) {
            (void)cudaGetLastError();
            std::fprintf(stderr, "%s: rank %d on %s: cudaHostRegister of the shared arrays: %s\n", kProg, at.rank,
                         at.host.c_str(), cudaGetErrorString(err));
        }
        return mpi::all_ok(registered_);
    }
    ~SharedArrays() {
        if (registered_) cudaHostUnregister(base_);
        if (base_) munmap(base_, bytes_);
    }
    unsigned char *base() const { return static_cast<unsigned char *>(base_); }

private:
    bool map(int fd) {
        void *p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED) return false;
        base_ = p;
        return true;
    }
    void say(const mpi::Place &at, const char *what) {
        std::fprintf(stderr, "%s: rank %d on %s: %s, %s: %s\n", kProg, at.rank, at.host.c_str(), what,
                     gpk_app::format_bytes(bytes_).c_str(), std::strerror(errno));
    }
    bool cleanup(const mpi::Place &at, const char *name) {
        if (at.rank == 0 && name[0]) shm_unlink(name);
        return false;
    }
    void *base_ = nullptr;
    size_t bytes_ = 0;
    bool registered_ = false;
};

size_t aligned(size_t bytes) { return (bytes + 4095) & ~size_t(4095); }

// The direct path: every rank of one node runs the pipeline of panels.hpp on its
// GPU from and to rank 0's host arrays, B's slices exchanged with NCCL. Rank 0 first
// multiplies the whole product alone with gpk_gemm from the same host arrays (the
// baseline of the end-to-end speedup) and runs the pipeline alone over all rows (T1
// of the compute efficiency).
int run_direct(const Options &opt, const mpi::Place &at, gpk_context *ctx, int device, const std::string &choice) {
    namespace pn = gpk_gemm_app::panels;
    const bool root = at.rank == 0;
    const size_t e = pn::elem_size(opt.dtype);
    const size_t a_bytes = aligned(opt.m * opt.k * e), b_bytes = aligned(opt.k * opt.n * e),
                 c_bytes = aligned(opt.m * opt.n * e);
    int rc = 1;
    pn::Part part;
    part.index = at.rank;
    part.device = device;
    part.choice = choice;
    part.ctx = ctx;
    part.backend = GPK_BACKEND_CUDA;
    pn::Plan plan;
    plan.opt = opt;
    plan.parts = at.size;
    plan.chunk_rows = pn::chunk_rows_for(opt);
    const char *b_from = std::getenv("GPK_GEMM_B_FROM");
    plan.b_from_root = b_from && std::strcmp(b_from, "root") == 0;
    Report report{};
    report.ranks = at.size;
    report.nodes = at.nodes;
    report.backend = GPK_BACKEND_CUDA;
    report.variant = opt.variant.empty() ? "auto" : opt.variant;
    report.opt = opt;
    report.direct = true;
    report.chunk_rows = plan.chunk_rows;
    Matrix A, B, C, single;
    ncclComm_t comm = nullptr;
    bool ok = true;
    double mine_wall = 0;
    std::vector<uint64_t> firsts, counts;
    // Rank 0 holds the shared arrays and its own A, B and C besides.
    if (!mpi::all_ok(!root || host_fits(at, opt, 2))) {
        gpk_destroy(ctx);
        return 2;
    }
    {
        SharedArrays shared;
        if (!shared.open(at, a_bytes + b_bytes + c_bytes)) {
            gpk_destroy(ctx);
            return 1;
        }
        plan.A = shared.base();
        plan.B = shared.base() + a_bytes;
        plan.C = shared.base() + a_bytes + b_bytes;
        // Rank 0 makes A and B (as Matrix objects, which the checks read too) and
        // puts them into the shared arrays.
        if (root) {
            try {
                A = Matrix(opt.dtype, opt.m, opt.k);
                B = Matrix(opt.dtype, opt.k, opt.n);
                C = Matrix(opt.dtype, opt.m, opt.n);
                if (opt.baseline) single = Matrix(opt.dtype, opt.m, opt.n, HostMemory::pinned);
            } catch (const std::exception &ex) {
                std::fprintf(stderr, "%s: rank 0: host memory for the matrices: %s\n", kProg, ex.what());
                ok = false;
            }
            if (ok) {
                pn::fill_parallel(&A, opt.seed, 0);
                pn::fill_parallel(&B, opt.seed, 1);
                std::memcpy(const_cast<void *>(plan.A), A.data(), A.bytes());
                std::memcpy(const_cast<void *>(plan.B), B.data(), B.bytes());
            }
        }
        if (!mpi::all_ok(ok)) goto done;

        // The baseline, before the pipeline takes the context's stream.
        if (opt.baseline) {
            if (root) {
                double total = 0;
                for (int call = 0; call <= opt.repeats && ok; ++call) {
                    const double t0 = MPI_Wtime();
                    ok = mpi::succeeded(kProg, at,
                                        multiply(ctx, opt.dtype, opt.m, opt.n, opt.k, plan.A, plan.B, single.data()),
                                        "gpk_gemm (rank 0 alone, from host arrays)", ctx);
                    if (call > 0) total += MPI_Wtime() - t0;
                }
                report.single_seconds = total / opt.repeats;
            }
            mpi::wait_quietly();
            if (!mpi::all_ok(ok)) goto done;
        }

        {
            ncclUniqueId id{};
            if (root) ok = pn::nccl_ok(&part, ncclGetUniqueId(&id), "ncclGetUniqueId");
            MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
            ok = mpi::all_ok(ok) && pn::cuda_ok(&part, cudaSetDevice(device), "cudaSetDevice") &&
                 pn::nccl_ok(&part, ncclCommInitRank(&comm, at.size, id, at.rank), "ncclCommInitRank");
            part.comm = comm;
            ok = ok && pn::set_up_gpu(&part, plan);
            if (!ok) std::fprintf(stderr, "%s: rank %d on %s: %s\n", kProg, at.rank, at.host.c_str(), part.error.c_str());
            if (!mpi::all_ok(ok)) goto done;
        }

        if (opt.baseline) {
            if (root) {
                for (int call = 0; call <= opt.repeats && ok; ++call) {
                    ok = pn::pass(&part, plan, 1, 0);
                    if (call > 0)
                        report.alone_wall += part.end - part.start, report.alone_compute += part.compute_s;
                }
                report.alone_wall /= opt.repeats;
                report.alone_compute /= opt.repeats;
                if (!ok) std::fprintf(stderr, "%s: rank 0 alone: %s\n", kProg, part.error.c_str());
                // NaN everywhere before the ranks run: a row they leave unwritten
                // fails the comparison instead of showing this pass's result.
                std::memset(plan.C, 0xFF, opt.m * opt.n * e);
            }
            mpi::wait_quietly();
            if (!mpi::all_ok(ok)) goto done;
        }

        for (int call = 0; call <= opt.repeats; ++call) {
            MPI_Barrier(MPI_COMM_WORLD);
            const double t0 = MPI_Wtime();
            ok = pn::pass(&part, plan, at.size, at.rank);
            const double wall = MPI_Wtime() - t0;
            if (!ok) std::fprintf(stderr, "%s: rank %d on %s: %s\n", kProg, at.rank, at.host.c_str(), part.error.c_str());
            if (!mpi::all_ok(ok)) goto done;
            double slowest[2] = {0, 0};
            const double mine[2] = {wall, part.compute_s};
            MPI_Reduce(mine, slowest, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
            if (call > 0) {
                report.end_to_end_s += slowest[0] / opt.repeats;
                report.seconds += slowest[1] / opt.repeats;
                mine_wall += wall / opt.repeats;
            }
        }
        if (root) std::memcpy(C.data(), plan.C, C.bytes());
        rc = 0;
    done:
        pn::tear_down_gpu(&part);
        if (comm) ncclCommDestroy(comm);
    }
    gpk_destroy(ctx);
    if (rc != 0) return rc;

    Ranks &p = report.per_rank;
    p.host = mpi::gather(at.host);
    p.device = mpi::gather(gpk_app::device_description(GPK_BACKEND_CUDA, device));
    p.choice = mpi::gather(choice);
    p.backend = mpi::gather(static_cast<uint64_t>(GPK_BACKEND_CUDA));
    p.first_row = firsts = mpi::gather(part.rows.first);
    p.rows = counts = mpi::gather(part.rows.count);
    p.seconds = mpi::gather(mine_wall);
    if (!root) return 0;
    if (opt.baseline) report.single = compare(C, single);
    if (opt.validate) {
        std::vector<uint64_t> rows = spread(opt.m, 64);
        for (size_t r = 0; r < firsts.size(); ++r)
            if (counts[r] > 0) rows.push_back(firsts[r]), rows.push_back(firsts[r] + counts[r] - 1);
        std::sort(rows.begin(), rows.end());
        rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
        report.check = validate(A, B, C, rows, spread(opt.n, 64));
    }
    if (opt.json)
        print_json(report);
    else
        print_text(report);
    const bool differs = report.single && report.single->differing > 0 && exact_sums(opt.dtype, opt.k);
    return differs || (report.check && report.check->wrong > 0) ? 1 : 0;
}
#endif

int run(Options opt, const mpi::Place &at) {
    const bool root = at.rank == 0;
    gpk_context *ctx = nullptr;
    int device = 0;
    std::string choice;
    if (!mpi::all_ok(mpi::open_context(kProg, at, opt.backend, opt.devices, GPK_OP_GEMM, opt.variant, &ctx, &device,
                                       &choice))) {
        gpk_destroy(ctx);
        return 1;
    }
    int backend = GPK_BACKEND_HOST;
    gpk_get_backend(ctx, &backend);
    // Every rank's pipeline as asked (--streams, --chunk, --device-memory), and its
    // host matrices pinned on the GPU unless --pageable, as in one process.
    if (!mpi::all_ok(mpi::succeeded(kProg, at, set_staging(ctx, opt, opt.streams), "gpk_set_staging", ctx))) {
        gpk_destroy(ctx);
        return 1;
    }
    const HostMemory memory = host_memory(opt, backend);
    // Rank 0's backend sets the default size, as in one process.
    default_size(&opt, backend);
    uint64_t dims[3] = {opt.m, opt.n, opt.k};
    MPI_Bcast(dims, 3, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    opt.m = dims[0], opt.n = dims[1], opt.k = dims[2];
    // Rank 0 holds A, B and C whole (and C again for the baseline): refused before
    // anything is allocated when they cannot fit in its memory.
    if (!mpi::all_ok(!root || host_fits(at, opt, 1))) {
        gpk_destroy(ctx);
        return 2;
    }
#if defined(GPK_APP_NCCL)
    // All ranks on one node's GPUs, and NCCL at hand: the data move the way the
    // GPUs' links allow (run_direct). Across nodes, or on the host backend, through
    // host memory and MPI as below. GPK_GEMM_MPI_PATH=host asks for that anywhere,
    // to compare.
    const char *path = std::getenv("GPK_GEMM_MPI_PATH");
    const bool host_path = path && std::strcmp(path, "host") == 0;
    if (mpi::all_ok(backend == GPK_BACKEND_CUDA && memory == HostMemory::pinned && !host_path) && at.nodes == 1 &&
        at.size > 1)
        return run_direct(opt, at, ctx, device, choice);
#endif

    // Rank 0 holds A, B and C whole and works on their first rows in place; the
    // others hold their panels of A and C, and B.
    const mpi::Share mine = mpi::share(opt.m, at.size, at.rank);
    Matrix A, B, C, single, panel_a, panel_c;
    bool ok = true;
    try {
        B = Matrix(opt.dtype, opt.k, opt.n, memory);
        if (root) {
            A = Matrix(opt.dtype, opt.m, opt.k, memory);
            C = Matrix(opt.dtype, opt.m, opt.n, memory);
            if (opt.baseline) single = Matrix(opt.dtype, opt.m, opt.n, memory);
        } else {
            panel_a = Matrix(opt.dtype, mine.count, opt.k, memory);
            panel_c = Matrix(opt.dtype, mine.count, opt.n, memory);
        }
    } catch (const std::bad_alloc &) {
        std::fprintf(stderr, "%s: rank %d on %s: out of host memory for the matrices\n", kProg, at.rank,
                     at.host.c_str());
        ok = false;
    } catch (const PinnedAllocError &e) {
        std::fprintf(stderr, "%s: rank %d on %s: pinned host memory for the matrices: %s (--pageable uses ordinary "
                     "memory)\n",
                     kProg, at.rank, at.host.c_str(), e.what());
        ok = false;
    }
    if (!mpi::all_ok(ok)) {
        gpk_destroy(ctx);
        return 1;
    }
    if (root) {
        fill(&A, opt.seed, 0);
        fill(&B, opt.seed, 1);
    }
    const void *a = root ? A.data() : panel_a.data();
    void *c = root ? C.data() : panel_c.data();

    Report report{};
    report.ranks = at.size;
    report.nodes = at.nodes;
    report.backend = backend;
    report.variant = opt.variant.empty() ? "auto" : opt.variant;
    report.opt = opt;

    // The whole product on rank 0 alone: the reference result and T1.
    if (opt.baseline) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (root) {
            double total = 0;
            for (int call = 0; call <= opt.repeats && ok; ++call) {
                const double t0 = MPI_Wtime();
                ok = mpi::succeeded(kProg, at,
                                    multiply(ctx, opt.dtype, opt.m, opt.n, opt.k, A.data(), B.data(), single.data()),
                                    "gpk_gemm (rank 0 alone)", ctx);
                if (call > 0) total += MPI_Wtime() - t0;
            }
            report.single_seconds = total / opt.repeats;
        }
        mpi::wait_quietly();
        if (!mpi::all_ok(ok)) {
            gpk_destroy(ctx);
            return 1;
        }
    }

    // Scatter A's panels, broadcast B.
    const std::vector<uint64_t> firsts = mpi::gather(mine.first), counts64 = mpi::gather(mine.count);
    std::vector<int> counts(firsts.size()), displs(firsts.size());
    for (size_t r = 0; r < firsts.size(); ++r)
        counts[r] = static_cast<int>(counts64[r]), displs[r] = static_cast<int>(firsts[r]);
    MPI_Datatype a_row = row_type(opt.dtype, opt.k), bc_row = row_type(opt.dtype, opt.n);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    if (root)
        MPI_Scatterv(A.data(), counts.data(), displs.data(), a_row, MPI_IN_PLACE, 0, a_row, 0, MPI_COMM_WORLD);
    else
        MPI_Scatterv(nullptr, nullptr, nullptr, a_row, panel_a.data(), static_cast<int>(mine.count), a_row, 0,
                     MPI_COMM_WORLD);
    report.scatter_s = MPI_Wtime() - t0;
    t0 = MPI_Wtime();
    MPI_Bcast(B.data(), static_cast<int>(opt.k), bc_row, 0, MPI_COMM_WORLD);
    report.bcast_s = MPI_Wtime() - t0;

    // Each rank's panel: a warm-up call, then the timed ones, each from a barrier.
    double mine_total = 0;
    for (int call = 0; call <= opt.repeats; ++call) {
        MPI_Barrier(MPI_COMM_WORLD);
        const double start = MPI_Wtime();
        ok = mpi::succeeded(kProg, at, multiply(ctx, opt.dtype, mine.count, opt.n, opt.k, a, B.data(), c), "gpk_gemm",
                            ctx);
        double seconds = MPI_Wtime() - start, slowest = 0;
        if (!mpi::all_ok(ok)) {
            MPI_Type_free(&a_row);
            MPI_Type_free(&bc_row);
            gpk_destroy(ctx);
            return 1;
        }
        MPI_Reduce(&seconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (call > 0) mine_total += seconds, report.seconds += slowest;
    }
    report.seconds /= opt.repeats;
    gpk_destroy(ctx);

    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    if (root)
        MPI_Gatherv(MPI_IN_PLACE, 0, bc_row, C.data(), counts.data(), displs.data(), bc_row, 0, MPI_COMM_WORLD);
    else
        MPI_Gatherv(panel_c.data(), static_cast<int>(mine.count), bc_row, nullptr, nullptr, nullptr, bc_row, 0,
                    MPI_COMM_WORLD);
    report.gather_s = MPI_Wtime() - t0;
    MPI_Type_free(&a_row);
    MPI_Type_free(&bc_row);

    Ranks &p = report.per_rank;
    p.host = mpi::gather(at.host);
    p.device = mpi::gather(gpk_app::device_description(backend, device));
    p.choice = mpi::gather(choice);
    p.backend = mpi::gather(static_cast<uint64_t>(backend));
    p.first_row = firsts;
    p.rows = counts64;
    p.seconds = mpi::gather(mine_total / opt.repeats);
    if (!root) return 0;

    if (opt.baseline) report.single = compare(C, single);
    if (opt.validate) {
        // Every rank's first and last rows, and rows spread over the whole matrix.
        std::vector<uint64_t> rows = spread(opt.m, 64);
        for (size_t r = 0; r < firsts.size(); ++r)
            if (counts64[r] > 0) rows.push_back(firsts[r]), rows.push_back(firsts[r] + counts64[r] - 1);
        std::sort(rows.begin(), rows.end());
        rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
        report.check = validate(A, B, C, rows, spread(opt.n, 64));
    }
    if (opt.json)
        print_json(report);
    else
        print_text(report);
    // With exact sums any difference is an error; beyond them only validation decides.
    const bool differs = report.single && report.single->differing > 0 && exact_sums(opt.dtype, opt.k);
    return differs || (report.check && report.check->wrong > 0) ? 1 : 0;
}

}  // namespace

int main(int argc, char **argv) {
    mpi::Session session(&argc, &argv);
    const mpi::Place &at = session.place();
    Options opt;
    // Every rank reads the same arguments and comes to the same verdict; rank 0 says it.
    if (const int rc = parse(argc, argv, &opt, at.rank == 0)) return rc;
    if (opt.help) return 0;
    if (!opt.timeline.empty()) {
        if (at.rank == 0)
            std::fprintf(stderr, "%s: --timeline draws one process's pipeline: run it without --mpi\n", kProg);
        return 2;
    }
    return run(opt, at);
}
