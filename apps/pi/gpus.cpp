// gpk-pi-gpus (what "gpk-pi --gpus N ..." runs): one estimate of pi shared by N GPUs
// of this node, one process, one thread and one context per GPU -- the same split
// as gpk-pi --mpi (apps/pi/mpi.cpp) where no MPI launcher is at hand.
//
// Part r draws its share of [0, samples) -- contiguous, in part order -- with
// gpk_pi_range on its own GPU, and the hits are summed: sample i is the same point
// whichever part draws it, so the sum is exactly the hits of gpk_pi(samples, seed)
// in one process. Unless --no-baseline, part 0 first draws every sample alone with
// gpk_pi: that run proves the equality on the spot and gives T1, against which the
// scaling efficiency T1 / (P * TP) is reported. TP runs from a barrier of all parts
// to the last part's end.
#include "gpk/gpk.h"

#include "pi_app.hpp"

#include "../common/cli.hpp"
#include "../common/gpus.hpp"
#include "../common/json.hpp"
#include "../common/ladders.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace gpk_pi_app;
namespace gpus = gpk_app::gpus;

constexpr const char *kTwin = "gpk-pi-gpus";

struct Part {
    int index = 0, device = 0, backend = GPK_BACKEND_HOST;
    std::string choice, error;
    gpk_context *ctx = nullptr;
    uint64_t first = 0, count = 0;
    gpk_pi_result result{};
    double start = 0, end = 0;
};

double rate(uint64_t samples, double seconds) { return seconds > 0 ? static_cast<double>(samples) / seconds : 0.0; }

bool check(Part *p, gpk_status st, const char *what) {
    if (st == GPK_SUCCESS) return true;
    if (p->error.empty())
        p->error = std::string(what) + ": " + gpk_status_string(st) + ": " + gpk_last_error(p->ctx);
    return false;
}

int run(const Options &opt, int count) {
    std::vector<Part> parts(static_cast<size_t>(count));
    const auto destroy = [&] {
        for (Part &p : parts) gpk_destroy(p.ctx), p.ctx = nullptr;
    };
    const auto fail = [&] {
        for (const Part &p : parts)
            if (!p.error.empty()) std::fprintf(stderr, "%s: part %d: %s\n", kTwin, p.index, p.error.c_str());
        destroy();
        return 1;
    };
    for (int i = 0; i < count; ++i) {
        Part &p = parts[static_cast<size_t>(i)];
        p.index = i;
        std::string error;
        const auto chosen = gpk_app::choose_device(opt.devices, i, &error);
        if (!chosen) {
            std::fprintf(stderr, "%s: part %d: %s\n", kTwin, i, error.c_str());
            destroy();
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
            destroy();
            return 1;
        }
        gpk_get_backend(p.ctx, &p.backend);
        if (const std::string problem =
                opt.variant.empty() ? "" : gpk_app::variant_problem(p.ctx, p.backend, GPK_OP_PI, opt.variant);
            !problem.empty()) {
            std::fprintf(stderr, "%s: --variant %s\n", kTwin, problem.c_str());
            destroy();
            return 2;
        }
        if (!opt.variant.empty() && !check(&p, gpk_set_variant(p.ctx, GPK_OP_PI, opt.variant.c_str()), "gpk_set_variant"))
            return fail();
    }
    const int backend = parts[0].backend;
    for (const Part &p : parts) {
        if (p.backend != backend) {
            std::fprintf(stderr, "%s: part %d runs on the %s backend, part 0 on the %s one\n", kTwin, p.index,
                         gpk_app::backend_name(p.backend), gpk_app::backend_name(backend));
            destroy();
            return 1;
        }
        for (const Part &q : parts)
            if (backend == GPK_BACKEND_CUDA && q.index < p.index && q.device == p.device) {
                std::fprintf(stderr, "%s: parts %d and %d would share GPU %d: each part needs a GPU of its own "
                             "(--devices LIST, or fewer --gpus; this node has %d)\n",
                             kTwin, q.index, p.index, p.device, gpk_app::cuda_device_count());
                destroy();
                return 2;
            }
    }
    const uint64_t samples = opt.samples ? opt.samples : default_samples(backend);

    gpus::Barrier barrier(count);
    std::atomic<bool> failed{false};
    gpk_pi_result single{};
    double single_s = 0;
    const auto body = [&](int i) {
        Part &p = parts[static_cast<size_t>(i)];
        // Module loading and scratch buffers are set up on a context's first calls:
        // a small range first keeps them out of the timings.
        gpk_pi_result warm{};
        if (!check(&p, gpk_pi_range(p.ctx, 0, std::min<uint64_t>(samples, 1 << 20), opt.seed, &warm),
                   "gpk_pi_range (warm-up)"))
            failed = true;
        barrier.wait();
        if (failed) return;
        if (opt.baseline && i == 0) {
            const double t0 = gpus::now();
            if (!check(&p, gpk_pi(p.ctx, samples, opt.seed, &single), "gpk_pi (part 0 alone)")) failed = true;
            single_s = gpus::now() - t0;
        }
        barrier.wait();
        if (failed) return;
        const uint64_t base = samples / static_cast<uint64_t>(count), extra = samples % static_cast<uint64_t>(count);
        const uint64_t idx = static_cast<uint64_t>(i);
        p.first = idx * base + std::min(idx, extra);
        p.count = base + (idx < extra ? 1 : 0);
        p.start = gpus::now();
        if (!check(&p, gpk_pi_range(p.ctx, p.first, p.count, opt.seed, &p.result), "gpk_pi_range")) failed = true;
        p.end = gpus::now();
    };
    std::vector<std::thread> threads;
    for (int i = 0; i < count; ++i) threads.emplace_back(body, i);
    for (std::thread &t : threads) t.join();
    if (failed) return fail();

    uint64_t hits = 0;
    double start = parts[0].start, end = parts[0].end;
    for (const Part &p : parts) {
        hits += p.result.hits;
        start = std::min(start, p.start);
        end = std::max(end, p.end);
    }
    const double seconds = end - start;
    const gpk_pi_result result = pi_result(samples, hits);
    const bool same = single.hits == result.hits && single.estimate == result.estimate;
    const double efficiency = opt.baseline && seconds > 0 ? single_s / (count * seconds) : 0.0;
    const bool gpu = backend == GPK_BACKEND_CUDA;

    if (opt.json) {
        gpk_app::JsonWriter json;
        json.begin_object()
            .field("mode", "gpus")
            .field("gpus", count)
            .field("ranks", count)
            .field("backend", gpk_app::backend_name(backend))
            .field("variant", opt.variant.empty() ? "auto" : opt.variant);
        estimate_fields(json, result, opt.seed);
        json.field("elapsed_s", seconds).field("samples_per_s", rate(samples, seconds));
        if (opt.baseline) {
            json.begin_object("single")
                .field("hits", single.hits)
                .field("estimate", single.estimate)
                .field("identical", same)
                .field("elapsed_s", single_s)
                .field("samples_per_s", rate(samples, single_s))
                .end_object();
            json.field("hits_identical", same).field("scaling_efficiency", efficiency);
        } else {
            json.null_field("single").null_field("hits_identical").null_field("scaling_efficiency");
        }
        json.begin_array("per_rank");
        for (const Part &p : parts)
            json.begin_object()
                .field("rank", static_cast<int64_t>(p.index))
                .field("backend", gpk_app::backend_name(p.backend))
                .field("device", gpk_app::device_description(p.backend, p.device))
                .field("device_choice", p.choice)
                .field("first_sample", p.first)
                .field("samples", p.count)
                .field("hits", p.result.hits)
                .field("elapsed_s", p.end - p.start)
                .field("samples_per_s", rate(p.count, p.end - p.start))
                .end_object();
        json.end_array().field("libgpk", gpk_app::library_version()).end_object();
        std::fputs(json.str().c_str(), stdout);
    } else {
        std::printf("backend     %s, %d %s in one process (one thread each)\n", gpk_app::backend_name(backend), count,
                    gpu ? (count == 1 ? "GPU" : "GPUs") : (count == 1 ? "thread" : "threads"));
        std::printf("variant     %s\n", opt.variant.empty() ? "auto" : opt.variant.c_str());
        print_estimate(result, opt.seed);
        std::printf("elapsed     %.6f s (%.4g samples/s, all %s)\n", seconds, rate(samples, seconds),
                    gpu ? "GPUs" : "threads");
        if (opt.baseline) {
            std::printf("one %s     %.6f s (%.4g samples/s, part 0 alone with gpk_pi): hits %llu, %s\n",
                        gpu ? "GPU" : "part", single_s, rate(samples, single_s),
                        static_cast<unsigned long long>(single.hits),
                        same ? "identical to the parts' sum" : "DIFFERENT from the parts' sum");
            std::printf("scaling     efficiency %.3f = T1 / (P * TP) = %.6f / (%d * %.6f); speedup %.2fx\n", efficiency,
                        single_s, count, seconds, seconds > 0 ? single_s / seconds : 0.0);
        }
        std::printf("\n%4s  %-40s  %20s  %20s  %20s  %10s  %10s\n", "part", "device", "first sample", "samples", "hits",
                    "seconds", "samples/s");
        for (const Part &p : parts)
            std::printf("%4d  %-40s  %20llu  %20llu  %20llu  %10.6f  %10.4g\n", p.index,
                        gpk_app::device_description(p.backend, p.device).c_str(),
                        static_cast<unsigned long long>(p.first), static_cast<unsigned long long>(p.count),
                        static_cast<unsigned long long>(p.result.hits), p.end - p.start,
                        rate(p.count, p.end - p.start));
    }
    destroy();
    if (opt.baseline && !same) {
        std::fprintf(stderr, "%s: the parts' hits add up to %llu, part 0 alone counted %llu\n", kTwin,
                     static_cast<unsigned long long>(hits), static_cast<unsigned long long>(single.hits));
        return 1;
    }
    return 0;
}

}  // namespace

int main(int argc, char **argv) {
    const int count = gpus::take_gpus(kTwin, &argc, argv, true);
    if (count < 0) return 2;
    Options opt;
    if (const int rc = parse(argc, argv, &opt, true)) return rc;
    if (opt.help) return 0;
    if (opt.replicates > 1) {
        std::fprintf(stderr, "%s: --replicates is for one GPU; leave it out with --gpus\n", kTwin);
        return 2;
    }
    return run(opt, count > 0 ? count : std::max(1, gpk_app::cuda_device_count()));
}
