// gpk-pi-mpi (what "gpk-pi --mpi" runs): one estimate of pi shared by the ranks of
// an MPI job, one GPU each.
//
// Rank r draws its share of [0, samples) -- contiguous, in rank order -- with
// gpk_pi_range, and MPI_Reduce sums the hits on rank 0. Sample i is the same point
// whichever rank draws it, so the sum is exactly the hits of gpk_pi(samples, seed) in
// one process, and rank 0 prints the same estimate. Unless --no-baseline, rank 0
// first draws every sample alone with gpk_pi: that run proves the equality on the
// spot and gives the time one rank takes, against which the scaling efficiency
// T1 / (P * TP) is reported.
//
// Each rank takes the GPU of its local rank (its rank among the processes of its
// node), or the entry of --devices or GPK_DEVICE for it; a GPU that does not exist
// stops the job with the rank, the node and the node's GPU count.
#include "gpk/gpk.h"

#include "pi_app.hpp"

#include "../common/cli.hpp"
#include "../common/json.hpp"
#include "../common/mpi.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace {

using namespace gpk_pi_app;
namespace mpi = gpk_app::mpi;

// Every rank's part, on rank 0.
struct Ranks {
    std::vector<std::string> host, device, choice;
    std::vector<uint64_t> backend, first, count, hits;
    std::vector<double> seconds;
};

struct Report {
    int ranks, nodes;
    int backend;  // rank 0's
    std::string variant;
    uint64_t seed;
    gpk_pi_result result;  // of the sum of the ranks' hits
    double seconds;        // from the common start to the sum on rank 0
    bool baseline;
    gpk_pi_result single;  // rank 0 alone, gpk_pi
    double single_seconds;
    Ranks per_rank;
};

double rate(uint64_t samples, double seconds) { return seconds > 0 ? static_cast<double>(samples) / seconds : 0.0; }

double efficiency(const Report &r) {
    return r.baseline && r.seconds > 0 ? r.single_seconds / (r.ranks * r.seconds) : 0.0;
}

// The distinct GPUs the ranks ran on (node and device), 0 on the host backend.
int64_t gpus(const Report &r) {
    const Ranks &p = r.per_rank;
    std::vector<std::string> seen;
    for (size_t i = 0; i < p.host.size(); ++i)
        if (p.backend[i] == GPK_BACKEND_CUDA) seen.push_back(p.host[i] + "/" + p.device[i]);
    std::sort(seen.begin(), seen.end());
    return static_cast<int64_t>(std::unique(seen.begin(), seen.end()) - seen.begin());
}

void print_text(const Report &r) {
    const int64_t g = gpus(r);
    std::printf("backend     %s (rank 0; every rank below), %d rank%s on %d node%s, %lld GPU%s\n",
                gpk_app::backend_name(r.backend), r.ranks, r.ranks == 1 ? "" : "s", r.nodes, r.nodes == 1 ? "" : "s",
                static_cast<long long>(g), g == 1 ? "" : "s");
    std::printf("variant     %s\n", r.variant.c_str());
    print_estimate(r.result, r.seed);
    std::printf("elapsed     %.6f s (%.4g samples/s, all ranks)\n", r.seconds, rate(r.result.samples, r.seconds));
    if (r.baseline) {
        const bool same = r.single.hits == r.result.hits && r.single.estimate == r.result.estimate;
        std::printf("one rank    %.6f s (%.4g samples/s, rank 0 alone with gpk_pi): hits %llu, %s\n",
                    r.single_seconds, rate(r.single.samples, r.single_seconds),
                    static_cast<unsigned long long>(r.single.hits),
                    same ? "identical to the ranks' sum" : "DIFFERENT from the ranks' sum");
        std::printf("scaling     efficiency %.3f = T1 / (P * TP) = %.6f / (%d * %.6f); speedup %.2fx\n", efficiency(r),
                    r.single_seconds, r.ranks, r.seconds, r.seconds > 0 ? r.single_seconds / r.seconds : 0.0);
    }
    const Ranks &p = r.per_rank;
    std::printf("\n%4s  %-16s  %-40s  %20s  %20s  %20s  %10s  %10s\n", "rank", "node", "device", "first sample",
                "samples", "hits", "seconds", "samples/s");
    for (size_t i = 0; i < p.host.size(); ++i)
        std::printf("%4zu  %-16s  %-40s  %20llu  %20llu  %20llu  %10.6f  %10.4g\n", i, p.host[i].c_str(),
                    p.device[i].c_str(), static_cast<unsigned long long>(p.first[i]),
                    static_cast<unsigned long long>(p.count[i]), static_cast<unsigned long long>(p.hits[i]),
                    p.seconds[i], rate(p.count[i], p.seconds[i]));
}

void print_json(const Report &r) {
    gpk_app::JsonWriter json;
    json.begin_object()
        .field("mode", "mpi")
        .field("ranks", r.ranks)
        .field("gpus", gpus(r))
        .field("nodes", r.nodes)
        .field("backend", gpk_app::backend_name(r.backend))
        .field("variant", r.variant);
    estimate_fields(json, r.result, r.seed);
    json.field("elapsed_s", r.seconds).field("samples_per_s", rate(r.result.samples, r.seconds));
    if (r.baseline) {
        json.begin_object("single")
            .field("hits", r.single.hits)
            .field("estimate", r.single.estimate)
            .field("identical", r.single.hits == r.result.hits && r.single.estimate == r.result.estimate)
            .field("elapsed_s", r.single_seconds)
            .field("samples_per_s", rate(r.single.samples, r.single_seconds))
            .end_object();
        json.field("hits_identical", r.single.hits == r.result.hits && r.single.estimate == r.result.estimate)
            .field("scaling_efficiency", efficiency(r));
    } else {
        json.null_field("single").null_field("hits_identical").null_field("scaling_efficiency");
    }
    json.begin_array("per_rank");
    const Ranks &p = r.per_rank;
    for (size_t i = 0; i < p.host.size(); ++i)
        json.begin_object()
            .field("rank", static_cast<int64_t>(i))
            .field("node", p.host[i])
            .field("backend", gpk_app::backend_name(static_cast<int>(p.backend[i])))
            .field("device", p.device[i])
            .field("device_choice", p.choice[i])
            .field("first_sample", p.first[i])
            .field("samples", p.count[i])
            .field("hits", p.hits[i])
            .field("elapsed_s", p.seconds[i])
            .field("samples_per_s", rate(p.count[i], p.seconds[i]))
            .end_object();
    json.end_array().field("libgpk", gpk_app::library_version()).end_object();
    std::fputs(json.str().c_str(), stdout);
}

bool check(gpk_status st, const char *what, const mpi::Place &at, const gpk_context *ctx) {
    return mpi::succeeded(kProg, at, st, what, ctx);
}

int run(const Options &opt, const mpi::Place &at) {
    const bool root = at.rank == 0;
    gpk_context *ctx = nullptr;
    int device = 0;
    std::string choice;
    if (!mpi::all_ok(mpi::open_context(kProg, at, opt.backend, opt.devices, GPK_OP_PI, opt.variant, &ctx, &device,
                                       &choice))) {
        gpk_destroy(ctx);
        return 1;
    }
    int backend = GPK_BACKEND_HOST;
    gpk_get_backend(ctx, &backend);

    // Rank 0's backend sets the default size, as in one process.
    uint64_t samples = opt.samples ? opt.samples : default_samples(backend);
    MPI_Bcast(&samples, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);

    // Module loading, vendor handles and scratch buffers are set up on a context's
    // first calls: a small range first on every rank keeps them out of the timings.
    gpk_pi_result r{};
    if (!mpi::all_ok(check(gpk_pi_range(ctx, 0, std::min<uint64_t>(samples, 1 << 20), opt.seed, &r),
                           "gpk_pi_range (warm-up)", at, ctx))) {
        gpk_destroy(ctx);
        return 1;
    }

    Report report{};
    report.ranks = at.size;
    report.nodes = at.nodes;
    report.backend = backend;
    report.variant = opt.variant.empty() ? "auto" : opt.variant;
    report.seed = opt.seed;
    report.baseline = opt.baseline;
    bool ok = true;
    if (opt.baseline) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (root) {
            const double t0 = MPI_Wtime();
            ok = check(gpk_pi(ctx, samples, opt.seed, &report.single), "gpk_pi (rank 0 alone)", at, ctx);
            report.single_seconds = MPI_Wtime() - t0;
        }
        mpi::wait_quietly();
        if (!mpi::all_ok(ok)) {
            gpk_destroy(ctx);
            return 1;
        }
    }

    const mpi::Share mine = mpi::share(samples, at.size, at.rank);
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    ok = check(gpk_pi_range(ctx, mine.first, mine.count, opt.seed, &r), "gpk_pi_range", at, ctx);
    const double mine_seconds = MPI_Wtime() - start;
    if (!mpi::all_ok(ok)) {
        gpk_destroy(ctx);
        return 1;
    }
    uint64_t hits = 0;
    MPI_Reduce(&r.hits, &hits, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    // The sum reaches rank 0 only once every rank has counted: this spans the slowest.
    report.seconds = MPI_Wtime() - start;

    Ranks &p = report.per_rank;
    p.host = mpi::gather(at.host);
    p.device = mpi::gather(gpk_app::device_description(backend, device));
    p.choice = mpi::gather(choice);
    p.backend = mpi::gather(static_cast<uint64_t>(backend));
    p.first = mpi::gather(mine.first);
    p.count = mpi::gather(mine.count);
    p.hits = mpi::gather(r.hits);
    p.seconds = mpi::gather(mine_seconds);
    gpk_destroy(ctx);
    if (!root) return 0;

    report.result = pi_result(samples, hits);
    if (opt.json)
        print_json(report);
    else
        print_text(report);
    if (opt.baseline && report.single.hits != hits) {
        std::fprintf(stderr, "%s: the ranks' hits add up to %llu, rank 0 alone counted %llu\n", kProg,
                     static_cast<unsigned long long>(hits), static_cast<unsigned long long>(report.single.hits));
        return 1;
    }
    return 0;
}

}  // namespace

int main(int argc, char **argv) {
    mpi::Session session(&argc, &argv);
    const mpi::Place &at = session.place();
    Options opt;
    // Every rank reads the same arguments and comes to the same verdict; rank 0 says it.
    if (const int rc = parse(argc, argv, &opt, at.rank == 0)) return rc;
    if (opt.help) return 0;
    if (opt.replicates > 1) {
        if (at.rank == 0) std::fprintf(stderr, "%s: --replicates is for one process; leave it out with --mpi\n", kProg);
        return 2;
    }
    return run(opt, at);
}
