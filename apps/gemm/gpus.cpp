// gpk-gemm-gpus (what "gpk-gemm --gpus N ..." runs): C = A * B from host arrays to a
// host array, spread over N GPUs of this node by one process, one thread per GPU.
//
// Why one process. The product starts and ends in host memory, and what limits a
// distributed product there is how the data moves: each GPU has its own PCIe link to
// the host (about 50 GB/s each way on Gen5), and the GPUs of a node are joined by
// NVLink, several times faster. In one process the pinned host arrays are every
// GPU's host arrays, so each GPU copies its own rows of A and C straight over its
// own link, with no copy through another process or another host buffer.
//
// How the data move -- each GPU its rows of A and C over its own link, in chunks
// that overlap the products, and B's slices exchanged over NVLink with NCCL -- is
// apps/gemm/panels.hpp, which gpk-gemm --mpi shares on one node.
//
// What it reports, on the GPU:
//   end-to-end  wall time from host A and B to host C, all parts (mean of
//               --repeats after a warm-up), against one GPU doing the same product
//               from the same host arrays with gpk_gemm and its staging pipeline
//               (the library's best on one GPU from host data): `speedup`.
//   compute     the time each GPU spends in its gpk_gemm kernels (CUDA events);
//               efficiency T1 / (P * TP), T1 being part 0's GPU running the same
//               pipeline alone over all rows, TP the slowest part's.
// The whole-product C from the one-GPU run must equal the distributed C bit for bit
// (the entries are small integers; gemm_app.hpp), and --validate checks C against
// exact dot products.
//
// On the host backend each thread multiplies its rows in place; the report and the
// checks are the same, so the split is tested where there is no GPU.
#include "gpk/gpk.h"

#include "gemm_app.hpp"

#include "panels.hpp"

#include "../common/cli.hpp"
#include "../common/gpus.hpp"
#include "../common/json.hpp"
#include "../common/ladders.hpp"

#include <cuda_runtime.h>
#if defined(GPK_APP_NCCL)
#include <nccl.h>
#endif

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace gpk_gemm_app;
using namespace gpk_gemm_app::panels;
namespace gpus = gpk_app::gpus;

constexpr const char *kTwin = "gpk-gemm-gpus";
// ---------------------------------------------------------------- the report ----

struct Comparison {
    uint64_t entries = 0, differing = 0;
    double max_diff = 0;
};

struct Figures {
    double wall = 0, compute = 0;  // means over the timed passes (slowest part)
};

struct Report {
    int gpus = 1, backend = GPK_BACKEND_HOST;
    std::string variant;
    Options opt;
    uint64_t chunk_rows = 0;
    bool b_from_root = false;
    Figures all;              // every part together
    bool baseline = false;
    double staged_s = 0;      // one GPU, gpk_gemm from host arrays (staging pipeline)
    Figures alone;            // part 0's GPU, this pipeline over all rows
    std::optional<Comparison> single;
    std::optional<Check> check;
    std::vector<Part> *parts = nullptr;
};

double ratio(double a, double b) { return b > 0 ? a / b : 0.0; }
double compute_efficiency(const Report &r) { return ratio(r.alone.compute, r.gpus * r.all.compute); }
double end_to_end_speedup(const Report &r) { return ratio(r.staged_s, r.all.wall); }

void print_text(const Report &r) {
    const Options &o = r.opt;
    const bool gpu = r.backend == GPK_BACKEND_CUDA;
    std::printf("backend     %s, %d %s in one process (one thread each)\n", gpk_app::backend_name(r.backend), r.gpus,
                gpu ? (r.gpus == 1 ? "GPU" : "GPUs") : (r.gpus == 1 ? "thread" : "threads"));
    std::printf("variant     %s\n", r.variant.c_str());
    std::printf("problem     C (%llu x %llu) = A (%llu x %llu) * B (%llu x %llu), %s, row-major; rows of A and C "
                "split over the %s%s\n",
                static_cast<unsigned long long>(o.m), static_cast<unsigned long long>(o.n),
                static_cast<unsigned long long>(o.m), static_cast<unsigned long long>(o.k),
                static_cast<unsigned long long>(o.k), static_cast<unsigned long long>(o.n),
                gpk_app::dtype_name(o.dtype), gpu ? "GPUs" : "threads",
                gpu ? (", chunks of " + std::to_string(r.chunk_rows) + " rows, " +
                       (r.b_from_root ? "B from the host to GPU 0, broadcast with NCCL"
                                      : "B's slices from the host to each GPU, exchanged with NCCL"))
                          .c_str()
                    : "");
    std::printf("end-to-end  %.6f s from host A, B to host C, all %s (mean of %d after a warm-up) = %.2f GFLOP/s\n",
                r.all.wall, gpu ? "GPUs" : "threads", o.repeats, gflops(o.m, o.n, o.k, r.all.wall));
    if (r.baseline) {
        std::printf("%-11s %.6f s, gpk_gemm from the same host arrays%s: speedup %.2fx\n",
                    gpu ? "one GPU" : "one thread", r.staged_s, gpu ? " (its staging pipeline)" : "",
                    end_to_end_speedup(r));
        std::printf("compute     %.6f s in gpk_gemm (slowest %s) against %.6f s for all rows on one: efficiency "
                    "%.3f = T1 / (P * TP)\n",
                    r.all.compute, gpu ? "GPU" : "thread", r.alone.compute, compute_efficiency(r));
        if (gpu)
            std::printf("one GPU     %.6f s end to end through this pipeline alone (part 0's GPU, all rows)\n",
                        r.alone.wall);
    }
    if (r.single) {
        if (r.single->differing == 0)
            std::printf("result      C identical to the one-GPU C (%llu entries)\n",
                        static_cast<unsigned long long>(r.single->entries));
        else
            std::printf("result      C DIFFERS from the one-GPU C at %llu of %llu entries (max |diff| %.3g)\n",
                        static_cast<unsigned long long>(r.single->differing),
                        static_cast<unsigned long long>(r.single->entries), r.single->max_diff);
    }
    if (r.check)
        std::printf("validation  %llu entries against exact dot products: %s (max error %.3g)\n",
                    static_cast<unsigned long long>(r.check->checked),
                    r.check->wrong == 0 ? "all correct" : (std::to_string(r.check->wrong) + " WRONG").c_str(),
                    r.check->max_error);
    std::printf("\n%4s  %-40s  %10s  %10s  %7s  %10s  %10s  %10s\n", "part", "device", "first row", "rows", "chunks",
                "wall s", "compute s", "GFLOP/s");
    const std::vector<Part> &parts = *r.parts;
    for (const Part &p : parts)
        std::printf("%4d  %-40s  %10llu  %10llu  %7llu  %10.6f  %10.6f  %10.2f\n", p.index,
                    gpk_app::device_description(p.backend, p.device).c_str(),
                    static_cast<unsigned long long>(p.rows.first), static_cast<unsigned long long>(p.rows.count),
                    static_cast<unsigned long long>(p.chunks), p.mean_wall, p.mean_compute,
                    gflops(p.rows.count, o.n, o.k, p.mean_compute));
}

void print_json(const Report &r) {
    const Options &o = r.opt;
    gpk_app::JsonWriter json;
    json.begin_object()
        .field("mode", "gpus")
        .field("gpus", r.gpus)
        .field("ranks", r.gpus)
        .field("backend", gpk_app::backend_name(r.backend))
        .field("variant", r.variant)
        .field("dtype", gpk_app::dtype_name(o.dtype))
        .field("m", o.m)
        .field("n", o.n)
        .field("k", o.k)
        .field("repeats", static_cast<int64_t>(o.repeats))
        .field("chunk_rows", r.chunk_rows)
        .field("b_exchange", r.b_from_root ? "root" : "slices")
        .field("end_to_end_s", r.all.wall)
        .field("elapsed_s", r.all.wall)
        .field("gflops", gflops(o.m, o.n, o.k, r.all.wall))
        .field("compute_s", r.all.compute);
    if (r.baseline) {
        json.field("one_gpu_staged_s", r.staged_s)
            .field("end_to_end_speedup", end_to_end_speedup(r))
            .field("one_gpu_compute_s", r.alone.compute)
            .field("one_gpu_pipeline_s", r.alone.wall)
            .field("scaling_efficiency", compute_efficiency(r));
    } else {
        json.null_field("one_gpu_staged_s")
            .null_field("end_to_end_speedup")
            .null_field("one_gpu_compute_s")
            .null_field("one_gpu_pipeline_s")
            .null_field("scaling_efficiency");
    }
    if (r.single)
        json.begin_object("single")
            .field("entries", r.single->entries)
            .field("differing", r.single->differing)
            .field("max_diff", r.single->max_diff)
            .field("identical", r.single->differing == 0)
            .end_object();
    else
        json.null_field("single");
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
    for (const Part &p : *r.parts)
        json.begin_object()
            .field("rank", static_cast<int64_t>(p.index))
            .field("backend", gpk_app::backend_name(p.backend))
            .field("device", gpk_app::device_description(p.backend, p.device))
            .field("device_choice", p.choice)
            .field("first_row", p.rows.first)
            .field("rows", p.rows.count)
            .field("chunks", p.chunks)
            .field("elapsed_s", p.mean_wall)
            .field("compute_s", p.mean_compute)
            .field("gflops", gflops(p.rows.count, o.n, o.k, p.mean_compute))
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

int fail(const std::vector<Part> &parts) {
    for (const Part &p : parts)
        if (!p.error.empty()) std::fprintf(stderr, "%s: part %d: %s\n", kTwin, p.index, p.error.c_str());
    return 1;
}

void destroy(std::vector<Part> *parts) {
    for (Part &p : *parts) {
        tear_down_gpu(&p);
#if defined(GPK_APP_NCCL)
        if (p.comm) ncclCommDestroy(static_cast<ncclComm_t>(p.comm));
#endif
        gpk_destroy(p.ctx);
        p.ctx = nullptr;
    }
}

int run(Options opt, int count) {
    std::vector<Part> parts(static_cast<size_t>(count));
    int backend = GPK_BACKEND_HOST;
    for (int i = 0; i < count; ++i) {
        Part &p = parts[static_cast<size_t>(i)];
        p.index = i;
        std::string error;
        const auto chosen = gpk_app::choose_device(opt.devices, i, &error);
        if (!chosen) {
            std::fprintf(stderr, "%s: part %d: %s\n", kTwin, i, error.c_str());
            destroy(&parts);
            return 2;
        }
        p.device = chosen->device;
        p.choice = chosen->why;
        const gpk_status st = gpk_create(&p.ctx, opt.backend, p.device);
        if (st != GPK_SUCCESS) {
            const int have = gpk_app::cuda_device_count();
            std::fprintf(stderr, "%s: part %d: gpk_create(device %d, from %s) failed: %s: %s (this node has %d GPU%s)\n",
                         kTwin, i, p.device, p.choice.c_str(), gpk_status_string(st), gpk_last_error(nullptr), have,
                         have == 1 ? "" : "s");
            destroy(&parts);
            return 1;
        }
        gpk_get_backend(p.ctx, &p.backend);
        if (i == 0) backend = p.backend;
        if (p.backend != backend) {
            std::fprintf(stderr, "%s: part %d runs on the %s backend, part 0 on the %s one: give every part the same\n",
                         kTwin, i, gpk_app::backend_name(p.backend), gpk_app::backend_name(backend));
            destroy(&parts);
            return 1;
        }
        if (const std::string problem =
                opt.variant.empty() ? "" : gpk_app::variant_problem(p.ctx, p.backend, GPK_OP_GEMM, opt.variant);
            !problem.empty()) {
            std::fprintf(stderr, "%s: --variant %s\n", kTwin, problem.c_str());
            destroy(&parts);
            return 2;
        }
        if (!opt.variant.empty() && !gpk_ok(&p, gpk_set_variant(p.ctx, GPK_OP_GEMM, opt.variant.c_str()),
                                            "gpk_set_variant")) {
            const int rc = fail(parts);
            destroy(&parts);
            return rc;
        }
    }
    if (backend == GPK_BACKEND_CUDA) {
        for (int i = 0; i < count; ++i)
            for (int j = 0; j < i; ++j)
                if (parts[i].device == parts[j].device) {
                    std::fprintf(stderr, "%s: parts %d and %d would share GPU %d: each part needs a GPU of its own "
                                 "(--devices LIST, or fewer --gpus; this node has %d)\n",
                                 kTwin, j, i, parts[i].device, gpk_app::cuda_device_count());
                    destroy(&parts);
                    return 2;
                }
#if !defined(GPK_APP_NCCL)
        if (count > 1) {
            std::fprintf(stderr, "%s: this build has no NCCL, which moves B between the GPUs: install NCCL and set "
                         "up the build again (the host backend, --backend host, needs none)\n",
                         kTwin);
            destroy(&parts);
            return 2;
        }
#endif
    }
    default_size(&opt, backend);

    Plan plan;
    plan.opt = opt;
    plan.parts = count;
    plan.chunk_rows = chunk_rows_for(opt);
    const char *b_from = std::getenv("GPK_GEMM_B_FROM");
    plan.b_from_root = b_from && std::strcmp(b_from, "root") == 0;
    const HostMemory memory = host_memory(opt, backend);
    if (const std::string problem = matrices_problem(opt, 1, opt.baseline ? 1 : 0, gpk_app::host_memory_bytes());
        !problem.empty()) {
        std::fprintf(stderr, "%s: %s\n", kTwin, problem.c_str());
        destroy(&parts);
        return 2;
    }
    Matrix A, B, C, single;
    try {
        A = Matrix(opt.dtype, opt.m, opt.k, memory);
        B = Matrix(opt.dtype, opt.k, opt.n, memory);
        C = Matrix(opt.dtype, opt.m, opt.n, memory);
        if (opt.baseline) single = Matrix(opt.dtype, opt.m, opt.n, memory);
    } catch (const std::bad_alloc &) {
        std::fprintf(stderr, "%s: out of host memory for the matrices\n", kTwin);
        destroy(&parts);
        return 1;
    } catch (const PinnedAllocError &e) {
        std::fprintf(stderr, "%s: pinned host memory for the matrices: %s (--pageable uses ordinary memory)\n", kTwin,
                     e.what());
        destroy(&parts);
        return 1;
    }
    fill_parallel(&A, opt.seed, 0);
    fill_parallel(&B, opt.seed, 1);
    plan.A = A.data();
    plan.B = B.data();
    plan.C = C.data();

    Report report;
    report.gpus = count;
    report.backend = backend;
    report.variant = opt.variant.empty() ? "auto" : opt.variant;
    report.opt = opt;
    report.chunk_rows = backend == GPK_BACKEND_CUDA ? plan.chunk_rows : 0;
    report.b_from_root = plan.b_from_root;
    report.parts = &parts;
    report.baseline = opt.baseline;

    // The baseline: one GPU, gpk_gemm from the host arrays through its staging
    // pipeline, as gpk-gemm runs it (--streams, --chunk, --device-memory), on a
    // context of its own that goes before the parts take their device memory.
    if (opt.baseline) {
        gpk_context *ctx = nullptr;
        Part &p0 = parts[0];
        bool ok = gpk_ok(&p0, gpk_create(&ctx, backend, p0.device), "gpk_create (one GPU)") &&
                  (opt.variant.empty() ||
                   gpk_ok(&p0, gpk_set_variant(ctx, GPK_OP_GEMM, opt.variant.c_str()), "gpk_set_variant")) &&
                  gpk_ok(&p0, set_staging(ctx, opt, opt.streams), "gpk_set_staging");
        double total = 0;
        for (int call = 0; call <= opt.repeats && ok; ++call) {
            const double t0 = gpus::now();
            ok = gpk_ok(&p0, multiply(ctx, opt.dtype, opt.m, opt.n, opt.k, A.data(), B.data(), single.data()),
                        "gpk_gemm (one GPU, from host arrays)");
            if (call > 0) total += gpus::now() - t0;
        }
        gpk_destroy(ctx);
        if (!ok) {
            const int rc = fail(parts);
            destroy(&parts);
            return rc;
        }
        report.staged_s = total / opt.repeats;
    }

#if defined(GPK_APP_NCCL)
    // One communicator per GPU, all made here, before the threads start.
    if (backend == GPK_BACKEND_CUDA && count > 1) {
        std::vector<ncclComm_t> comms(static_cast<size_t>(count));
        std::vector<int> devices;
        for (const Part &p : parts) devices.push_back(p.device);
        if (!nccl_ok(&parts[0], ncclCommInitAll(comms.data(), count, devices.data()), "ncclCommInitAll")) {
            const int rc = fail(parts);
            destroy(&parts);
            return rc;
        }
        for (int i = 0; i < count; ++i) parts[static_cast<size_t>(i)].comm = comms[static_cast<size_t>(i)];
    }
#endif

    // The parts' threads: set up, then (part 0 alone, the others waiting) the same
    // pipeline over all rows on one GPU, then warm-up and timed passes of all parts,
    // each from a barrier. A failure anywhere stops every part at the next barrier.
    gpus::Barrier barrier(count);
    std::atomic<bool> failed{false};
    std::vector<double> starts(static_cast<size_t>(count)), ends(static_cast<size_t>(count));
    Figures alone, all;
    const auto body = [&](int i) {
        Part &p = parts[static_cast<size_t>(i)];
        bool ok = p.backend != GPK_BACKEND_CUDA || set_up_gpu(&p, plan);
        if (!ok) failed = true;
        barrier.wait();
        if (failed) return;
        if (opt.baseline && i == 0) {
            for (int call = 0; call <= opt.repeats && ok; ++call) {
                ok = pass(&p, plan, 1, 0);
                if (call > 0) alone.wall += p.end - p.start, alone.compute += p.compute_s;
            }
            alone.wall /= opt.repeats;
            alone.compute /= opt.repeats;
            if (!ok) failed = true;
            // NaN everywhere before the parts run: a row they leave unwritten fails
            // the comparison instead of showing this pass's result.
            C.poison();
        }
        barrier.wait();
        if (failed) return;
        for (int call = 0; call <= opt.repeats; ++call) {
            barrier.wait();
            if (failed) return;
            ok = pass(&p, plan, count, i);
            if (!ok) failed = true;
            starts[static_cast<size_t>(i)] = p.start;
            ends[static_cast<size_t>(i)] = p.end;
            barrier.wait();
            if (failed) return;
            if (call > 0) {
                p.mean_wall += (p.end - p.start) / opt.repeats;
                p.mean_compute += p.compute_s / opt.repeats;
                if (i == 0) {
                    all.wall += (*std::max_element(ends.begin(), ends.end()) -
                                 *std::min_element(starts.begin(), starts.end())) /
                                opt.repeats;
                    double slowest = 0;
                    for (const Part &q : parts) slowest = std::max(slowest, q.compute_s);
                    all.compute += slowest / opt.repeats;
                }
            }
        }
    };
    std::vector<std::thread> threads;
    for (int i = 0; i < count; ++i) threads.emplace_back(body, i);
    for (std::thread &t : threads) t.join();
    if (failed) {
        const int rc = fail(parts);
        destroy(&parts);
        return rc;
    }
    report.all = all;
    report.alone = alone;
    destroy(&parts);

    if (opt.baseline) report.single = compare(C, single);
    if (opt.validate) {
        // Every part's first and last rows, and rows spread over the whole matrix.
        std::vector<uint64_t> rows = spread(opt.m, 64);
        for (const Part &p : parts)
            if (p.rows.count > 0) rows.push_back(p.rows.first), rows.push_back(p.rows.first + p.rows.count - 1);
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
    const int count = gpus::take_gpus(kTwin, &argc, argv, true);
    if (count < 0) return 2;
    Options opt;
    if (const int rc = parse(argc, argv, &opt, true)) return rc;
    if (opt.help) return 0;
    if (!opt.timeline.empty()) {
        std::fprintf(stderr, "%s: --timeline draws one process's pipeline on one GPU: leave out --gpus\n", kTwin);
        return 2;
    }
    // Without a count: every GPU of the node (one thread on the host backend).
    int parts = count;
    if (parts == 0) parts = std::max(1, gpk_app::cuda_device_count());
    return run(opt, parts);
}
