// gpk-gemm: C = A * B with gpk_gemm on host arrays, timed, with what the library's
// staging pipeline does with them: copies to the GPU, kernels and copies back, on
// one stream and then overlapped on several. --validate checks C against exact dot
// products.
//
// The arrays live in host memory -- pinned by default on the GPU, so that the copies
// run at the link's speed; --pageable for ordinary memory -- and each call includes
// what the library does to stage them through the GPU: the time is what a caller
// with host data waits for. Wall times are the host's clock around gpk_gemm: the
// mean of --repeats calls after one untimed call, so that setup on first use
// (vendor handles, staging buffers) is not in the figures.
//
// How the overlap is measured. On the GPU the problem runs twice: first on one
// stream, where each chunk is copied in, multiplied and copied out before the next
// begins, so the stage times of its trace (gpk_stage_trace) are what each stage
// costs alone: T, the copies, and C, the kernels. Then on --streams streams, where
// they overlap. The overlapped run cannot beat max(T, C), so
//   overlap efficiency = max(T, C) / overlapped wall,
//   predicted speedup  = sequential wall / max(T, C),
//   measured speedup   = sequential wall / overlapped wall.
// The host backend copies nothing: it reports the wall time alone.
//
// --mpi runs it as one rank of an MPI job. That is the separate executable
// gpk-gemm-mpi (apps/gemm/mpi.cpp), built when an MPI implementation is found, so
// that this one does not depend on MPI: gpk-gemm --mpi becomes gpk-gemm-mpi in place.
// --gpus N becomes gpk-gemm-gpus (apps/gemm/gpus.cpp) the same way: one process
// driving N GPUs of the node, one thread each, with no MPI launcher.
#include "gpk/gpk.h"

#include "gemm_app.hpp"
#include "stages.hpp"
#include "timeline.hpp"

#include "../common/cli.hpp"
#include "../common/gpus.hpp"
#include "../common/json.hpp"
#include "../common/ladders.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <new>
#include <optional>
#include <string>
#include <vector>

namespace {

using namespace gpk_gemm_app;

constexpr const char *kNoStagesHost =
    "the host backend computes in place and copies nothing: the breakdown into transfers and compute, the overlap "
    "efficiency and the timeline need the GPU (CUDA backend)";
constexpr const char *kNoStagesTrace =
    "the library recorded no stage trace for these calls: no breakdown into transfers and compute";

// One configuration of the pipeline, timed.
struct Run {
    int streams = 1;
    double seconds = 0;  // mean of the timed calls
    double best = 0;     // fastest timed call
    StageTotals stages;  // means over the timed calls; zero without a trace
    std::vector<gpk_stage_event> trace;  // of the last timed call
    std::optional<Check> check;

    bool traced() const { return !trace.empty(); }
    double transfer_s() const { return stages.transfer_ms() * 1e-3; }
    double compute_s() const { return stages.compute_ms() * 1e-3; }
};

struct Report {
    int backend = GPK_BACKEND_HOST;
    std::string device;
    std::string variant;
    Options opt;
    HostMemory memory = HostMemory::pageable;
    // On the GPU: the 1-stream run, and the overlapped one unless --no-overlap. On
    // the host backend, whose calls have no stages: the run alone, as `sequential`.
    Run sequential;
    std::optional<Run> overlapped;

    bool cuda() const { return backend == GPK_BACKEND_CUDA; }
    const Run &last() const { return overlapped ? *overlapped : sequential; }
    // T, C and the figures drawn from them exist when the 1-stream run was traced.
    bool staged() const { return cuda() && sequential.traced(); }
    double bound_s() const { return std::max(sequential.transfer_s(), sequential.compute_s()); }
    std::optional<double> efficiency() const {
        if (!staged() || !overlapped || !(overlapped->seconds > 0)) return std::nullopt;
        return bound_s() / overlapped->seconds;
    }
    std::optional<double> predicted_speedup() const {
        if (!staged() || !(bound_s() > 0)) return std::nullopt;
        return sequential.seconds / bound_s();
    }
    // The pipeline's ideal, (T + C) / max(T, C): what overlap saves of the stages
    // alone, without the sequential run's time outside them.
    std::optional<double> ideal_speedup() const {
        if (!staged() || !(bound_s() > 0)) return std::nullopt;
        return (sequential.transfer_s() + sequential.compute_s()) / bound_s();
    }
    // The strict form: the busiest engine alone. Copies to and from the GPU use
    // separate copy engines and can run at once, so T (their sum) may overstate what
    // the transfers need; max(copy-in, copy-out, C) cannot.
    double engine_bound_s() const {
        const StageTotals &s = sequential.stages;
        return std::max({s.sum_ms[GPK_STAGE_COPY_IN] * 1e-3, s.sum_ms[GPK_STAGE_COPY_OUT] * 1e-3, sequential.compute_s()});
    }
    std::optional<double> engine_efficiency() const {
        if (!staged() || !overlapped || !(overlapped->seconds > 0)) return std::nullopt;
        return engine_bound_s() / overlapped->seconds;
    }
    std::optional<double> measured_speedup() const {
        if (!overlapped || !(overlapped->seconds > 0)) return std::nullopt;
        return sequential.seconds / overlapped->seconds;
    }
};

double flops(const Options &o) {
    return 2.0 * static_cast<double>(o.m) * static_cast<double>(o.n) * static_cast<double>(o.k);
}
double tflops(const Options &o, double seconds) { return seconds > 0 ? flops(o) / seconds * 1e-12 : 0.0; }
// Bytes over seconds in GB/s (10^9 bytes, as link speeds are quoted).
double gbps(double bytes, double seconds) { return seconds > 0 ? bytes / seconds * 1e-9 : 0.0; }

std::string dims(const Options &o) {
    return std::to_string(o.m) + " x " + std::to_string(o.n) + " x " + std::to_string(o.k);
}

std::string pipeline_text(const Options &o) {
    std::string text = "chunk size " + (o.chunk_bytes ? gpk_app::format_bytes(o.chunk_bytes) : "the library's choice");
    text += ", device memory ";
    text += o.device_bytes ? "capped at " + gpk_app::format_bytes(o.device_bytes) : "not capped";
    return text;
}

std::string check_text(const Check &c) {
    return std::to_string(c.checked) + " entries against exact dot products: " +
           (c.wrong == 0 ? std::string("all correct") : std::to_string(c.wrong) + " WRONG") + " (max error " +
           [&] {
               char buf[32];
               std::snprintf(buf, sizeof buf, "%.3g", c.max_error);
               return std::string(buf);
           }() +
           ")";
}

// Both runs' checks as one: what a script asks first.
std::optional<Check> combined_check(const Report &r) {
    std::optional<Check> all;
    for (const Run *run : {&r.sequential, r.overlapped ? &*r.overlapped : nullptr}) {
        if (!run || !run->check) continue;
        if (!all) all = Check{};
        all->checked += run->check->checked;
        all->wrong += run->check->wrong;
        if (!(run->check->max_error <= all->max_error))
            all->max_error = run->check->max_error, all->worst_row = run->check->worst_row,
            all->worst_col = run->check->worst_col;
    }
    return all;
}

// ---------------------------------------------------------------- text ---------

void print_run_text(const Report &r, const Run &run, bool sequential) {
    const Options &o = r.opt;
    const double bytes = static_cast<double>(run.stages.bytes_copied());
    if (sequential)
        std::printf("sequential  1 stream: each chunk copied in, multiplied and copied out before the next\n");
    else
        std::printf("overlapped  %d streams: copies and kernels of different chunks at once\n", run.streams);
    std::printf("  wall      %.6f s [best %.6f s]  %.2f TFLOP/s", run.seconds, run.best, tflops(o, run.seconds));
    if (run.traced()) std::printf("  link %.2f GB/s", gbps(bytes, run.seconds));
    std::printf("\n");
    if (!run.traced()) return;
    const StageTotals &s = run.stages;
    if (sequential) {
        std::printf("  transfer  T = %.6f s (copy-in %.6f s, copy-out %.6f s); %s moved, %.2f GB/s while copying\n",
                    run.transfer_s(), s.sum_ms[GPK_STAGE_COPY_IN] * 1e-3, s.sum_ms[GPK_STAGE_COPY_OUT] * 1e-3,
                    gpk_app::format_bytes(s.bytes_copied()).c_str(), gbps(bytes, run.transfer_s()));
        std::printf("  compute   C = %.6f s (%.2f TFLOP/s while computing); %lld chunks\n", run.compute_s(),
                    tflops(o, run.compute_s()), static_cast<long long>(s.chunks));
        const double other = run.seconds - run.transfer_s() - run.compute_s();
        std::printf("  other     %.6f s of the wall time in neither (launches, host work, gaps)\n", other);
    } else {
        std::printf("  busy      copy-in %.6f s, compute %.6f s, copy-out %.6f s (each stage's time over all "
                    "streams)\n",
                    s.busy_ms[GPK_STAGE_COPY_IN] * 1e-3, s.busy_ms[GPK_STAGE_COMPUTE] * 1e-3,
                    s.busy_ms[GPK_STAGE_COPY_OUT] * 1e-3);
    }
}

void print_text(const Report &r) {
    const Options &o = r.opt;
    std::printf("backend     %s (%s)\n", gpk_app::backend_name(r.backend), r.device.c_str());
    std::printf("variant     %s\n", r.variant.c_str());
    std::printf("problem     C (%llu x %llu) = A (%llu x %llu) * B (%llu x %llu), %s, row-major, host arrays\n",
                static_cast<unsigned long long>(o.m), static_cast<unsigned long long>(o.n),
                static_cast<unsigned long long>(o.m), static_cast<unsigned long long>(o.k),
                static_cast<unsigned long long>(o.k), static_cast<unsigned long long>(o.n),
                gpk_app::dtype_name(o.dtype));
    if (!r.cuda()) {
        const Run &run = r.sequential;
        std::printf("time        %.6f s per call (mean of %d after a warm-up call; best %.6f s)\n", run.seconds,
                    o.repeats, run.best);
        std::printf("throughput  %.2f GFLOP/s\n", gflops(o.m, o.n, o.k, run.seconds));
        std::printf("stages      none: %s\n", kNoStagesHost);
        if (run.check) std::printf("validation  %s\n", check_text(*run.check).c_str());
        return;
    }
    const uint64_t elem = gpk_app::dtype_bytes(o.dtype);
    std::printf("host memory %s%s; A %s, B %s, C %s\n", host_memory_name(r.memory),
                r.memory == HostMemory::pinned ? " (cudaHostAlloc)" : " (--pageable)",
                gpk_app::format_bytes(o.m * o.k * elem).c_str(), gpk_app::format_bytes(o.k * o.n * elem).c_str(),
                gpk_app::format_bytes(o.m * o.n * elem).c_str());
    std::printf("pipeline    %s\n", pipeline_text(o).c_str());
    std::printf("timing      host wall clock around gpk_gemm, mean of %d calls after a warm-up call; stage times from "
                "the library's trace (GPU events), means over the same calls\n\n",
                o.repeats);
    print_run_text(r, r.sequential, true);
    if (r.overlapped) print_run_text(r, *r.overlapped, false);
    std::printf("\n");
    if (!r.staged()) {
        std::printf("stages      %s\n", kNoStagesTrace);
        if (const auto m = r.measured_speedup())
            std::printf("speedup     measured %.2fx = sequential wall / overlapped wall\n", *m);
    } else if (r.overlapped) {
        std::printf("overlap     efficiency %.3f = max(T, C) / overlapped wall = %.6f / %.6f\n", r.efficiency().value_or(0),
                    r.bound_s(), r.overlapped->seconds);
        std::printf("            busiest engine %.3f = max(copy-in, copy-out, C) / overlapped wall = %.6f / %.6f\n",
                    r.engine_efficiency().value_or(0), r.engine_bound_s(), r.overlapped->seconds);
        std::printf("speedup     measured %.2fx = sequential wall / overlapped wall; predicted %.2fx = sequential "
                    "wall / max(T, C) (stages alone: (T + C) / max(T, C) = %.2fx)\n",
                    r.measured_speedup().value_or(0), r.predicted_speedup().value_or(0),
                    r.ideal_speedup().value_or(0));
    } else {
        std::printf("overlap     not run (--no-overlap); it could reach %.2fx = sequential wall / max(T, C)\n",
                    r.predicted_speedup().value_or(0.0));
    }
    if (r.sequential.check) std::printf("validation  sequential: %s\n", check_text(*r.sequential.check).c_str());
    if (r.overlapped && r.overlapped->check)
        std::printf("validation  overlapped: %s\n", check_text(*r.overlapped->check).c_str());
}

// ---------------------------------------------------------------- JSON ---------

void check_json(gpk_app::JsonWriter &json, const char *key, const std::optional<Check> &check, const Options &o) {
    if (!check) {
        json.null_field(key);
        return;
    }
    json.begin_object(key)
        .field("checked", check->checked)
        .field("wrong", check->wrong)
        .field("max_error", check->max_error)
        .field("exact", exact_sums(o.dtype, o.k))
        .end_object();
}

void run_json(gpk_app::JsonWriter &json, const char *key, const Report &r, const Run *run) {
    if (!run || !r.cuda()) {
        json.null_field(key);
        return;
    }
    const Options &o = r.opt;
    const StageTotals &s = run->stages;
    const double bytes = static_cast<double>(s.bytes_copied());
    json.begin_object(key)
        .field("streams", run->streams)
        .field("elapsed_s", run->seconds)
        .field("best_s", run->best)
        .field("tflops", tflops(o, run->seconds));
    if (run->traced()) {
        json.field("transfer_s", run->transfer_s())
            .field("compute_s", run->compute_s())
            .field("bytes_copied", s.bytes_copied())
            .field("link_gbps", gbps(bytes, run->seconds))
            .field("copy_gbps", gbps(bytes, run->transfer_s()))
            .field("chunks", s.chunks)
            .field("events", s.events);
        json.begin_object("stages");
        for (int k = 0; k < kStageKinds; ++k)
            json.begin_object(stage_name(k))
                .field("sum_s", s.sum_ms[k] * 1e-3)
                .field("busy_s", s.busy_ms[k] * 1e-3)
                .field("bytes", s.bytes[k])
                .end_object();
        json.end_object();
    } else {
        json.null_field("transfer_s").null_field("compute_s").null_field("stages");
    }
    check_json(json, "validation", run->check, o);
    json.end_object();
}

void print_json(const Report &r) {
    const Options &o = r.opt;
    const Run &last = r.last();
    gpk_app::JsonWriter json;
    json.begin_object()
        .field("tool", "gpk-gemm")
        .field("backend", gpk_app::backend_name(r.backend))
        .field("device", r.device)
        .field("variant", r.variant)
        .field("dtype", gpk_app::dtype_name(o.dtype))
        .field("m", o.m)
        .field("n", o.n)
        .field("k", o.k)
        .field("flops", flops(o))
        .field("host_memory", host_memory_name(r.memory))
        .field("streams", o.streams)
        .field("overlap", o.overlap())
        .field("chunk_bytes", o.chunk_bytes ? std::optional<double>(static_cast<double>(o.chunk_bytes)) : std::nullopt)
        .field("device_bytes",
               o.device_bytes ? std::optional<double>(static_cast<double>(o.device_bytes)) : std::nullopt)
        .field("repeats", static_cast<int64_t>(o.repeats))
        .field("timing", "host wall clock around gpk_gemm, mean of the repeats after a warm-up call")
        // The last run's figures, under the names every gpk-gemm report has.
        .field("elapsed_s", last.seconds)
        .field("best_s", last.best)
        .field("gflops", gflops(o.m, o.n, o.k, last.seconds))
        .field("tflops", tflops(o, last.seconds))
        .field("stage_breakdown", r.staged());
    if (!r.staged())
        json.field("note", r.cuda() ? kNoStagesTrace : kNoStagesHost);
    run_json(json, "sequential", r, &r.sequential);
    run_json(json, "overlapped", r, r.overlapped ? &*r.overlapped : nullptr);
    const auto seconds = [&](double s) { return r.staged() ? std::optional<double>(s) : std::nullopt; };
    json.field("transfer_s", seconds(r.sequential.transfer_s()))
        .field("compute_s", seconds(r.sequential.compute_s()))
        .field("overlap_efficiency", r.efficiency())
        .field("engine_efficiency", r.engine_efficiency())
        .field("predicted_speedup", r.predicted_speedup())
        .field("ideal_speedup", r.ideal_speedup())
        .field("measured_speedup", r.measured_speedup());
    check_json(json, "validation", combined_check(r), o);
    if (r.cuda() && last.traced()) {
        json.begin_object("trace")
            .field("run", r.overlapped ? "overlapped" : "sequential")
            .field("streams", last.streams)
            .field("call", "the last timed call")
            .begin_array("events");
        for (const gpk_stage_event &e : last.trace)
            json.begin_object()
                .field("kind", stage_name(e.kind))
                .field("stream", static_cast<int64_t>(e.stream))
                .field("chunk", e.chunk)
                .field("bytes", e.bytes)
                .field("start_ms", e.start_ms)
                .field("end_ms", e.end_ms)
                .end_object();
        json.end_array().end_object();
    } else {
        json.null_field("trace");
    }
    json.field("libgpk", gpk_app::library_version()).end_object();
    std::fputs(json.str().c_str(), stdout);
}

// ---------------------------------------------------------------- timeline -----

std::string timeline_title(const Report &r) {
    const Options &o = r.opt;
    const Run &run = r.last();
    std::string title = "gpk-gemm " + dims(o) + " " + gpk_app::dtype_name(o.dtype) + ": " +
                        std::to_string(run.streams) + (run.streams == 1 ? " stream, " : " streams, ") +
                        pipeline_text(o) + ", " + host_memory_name(r.memory) + " host memory";
    return title;
}

std::string timeline_subtitle(const Report &r) {
    char buf[400];
    const Run &run = r.last();
    if (const auto eff = r.efficiency())
        std::snprintf(buf, sizeof buf,
                      "overlap efficiency %.2f = max(T %.1f ms, C %.1f ms) / wall %.1f ms; speedup over 1 stream "
                      "%.2fx measured, %.2fx predicted. %s",
                      *eff, r.sequential.transfer_s() * 1e3, r.sequential.compute_s() * 1e3,
                      r.overlapped->seconds * 1e3, r.measured_speedup().value_or(0), r.predicted_speedup().value_or(0),
                      r.device.c_str());
    else
        std::snprintf(buf, sizeof buf,
                      "1 stream, no overlap: T %.1f ms, C %.1f ms, wall %.1f ms; overlap could give %.2fx. %s",
                      run.transfer_s() * 1e3, run.compute_s() * 1e3, run.seconds * 1e3,
                      r.predicted_speedup().value_or(0), r.device.c_str());
    return buf;
}

// Writes the timeline of the last run; false when writing failed. No trace (the
// host backend) writes nothing and says so: an empty picture would read as a
// pipeline that did nothing.
bool write_timeline(const Report &r) {
    const std::string &path = r.opt.timeline;
    if (!r.cuda() || !r.last().traced()) {
        std::fprintf(stderr, "%s: --timeline: %s; %s not written\n", kProg,
                     r.cuda() ? "the library recorded no stage trace" : "the host backend has no stages to draw",
                     path.c_str());
        return true;
    }
    std::string error;
    if (!write_text_file(path, timeline_svg(r.last().trace, timeline_title(r), timeline_subtitle(r)), &error)) {
        std::fprintf(stderr, "%s: --timeline: %s\n", kProg, error.c_str());
        return false;
    }
    if (!r.opt.json) std::printf("timeline    %s\n", path.c_str());
    return true;
}

// ---------------------------------------------------------------- runs ---------

// The warm-up call and the timed ones on `streams` streams. On failure returns the
// status and names the call that failed in *what.
gpk_status time_run(gpk_context *ctx, const Options &opt, int streams, bool traced, const Matrix &A,
                    const Matrix &B, Matrix *C, Run *run, const char **what) {
    run->streams = streams;
    *what = "gpk_set_staging";
    gpk_status st = set_staging(ctx, opt, streams);
    if (st != GPK_SUCCESS) return st;
    double total = 0;
    std::vector<gpk_stage_event> events;
    for (int call = 0; call <= opt.repeats; ++call) {
        // An entry no call writes must fail validation, not pass on an earlier result.
        if (call == 0 || opt.validate) C->poison();
        const auto start = std::chrono::steady_clock::now();
        st = multiply(ctx, opt.dtype, opt.m, opt.n, opt.k, A.data(), B.data(), C->data());
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        *what = "gpk_gemm";
        if (st != GPK_SUCCESS) return st;
        if (call == 0) continue;
        total += seconds;
        run->best = call == 1 ? seconds : std::min(run->best, seconds);
        if (!traced) continue;
        *what = "gpk_stage_trace";
        if ((st = fetch_trace(ctx, &events)) != GPK_SUCCESS) return st;
        run->stages.add(summarize(events));
        if (call == opt.repeats) run->trace = std::move(events);
    }
    run->seconds = total / opt.repeats;
    run->stages.scale(1.0 / opt.repeats);
    if (opt.validate) run->check = validate(A, B, *C, spread(opt.m, 64), spread(opt.n, 64));
    return GPK_SUCCESS;
}

int run(Options opt) {
    std::string error;
    const auto device = gpk_app::choose_device(opt.devices, 0, &error);
    if (!device) {
        std::fprintf(stderr, "%s: %s\n", kProg, error.c_str());
        return 2;
    }
    gpk_context *ctx = nullptr;
    gpk_status st = gpk_create(&ctx, opt.backend, device->device);
    if (st != GPK_SUCCESS) {
        gpk_app::report_failure(kProg, "gpk_create", st, nullptr);
        return 1;
    }
    Report report{};
    report.variant = opt.variant.empty() ? "auto" : opt.variant;
    int exit_code = 1;
    do {
        if ((st = gpk_get_backend(ctx, &report.backend)) != GPK_SUCCESS) {
            gpk_app::report_failure(kProg, "gpk_get_backend", st, ctx);
            break;
        }
        report.device = gpk_app::device_description(report.backend, device->device);
        if (const std::string problem =
                opt.variant.empty() ? "" : gpk_app::variant_problem(ctx, report.backend, GPK_OP_GEMM, opt.variant);
            !problem.empty()) {
            std::fprintf(stderr, "%s: --variant %s\n", kProg, problem.c_str());
            exit_code = 2;
            break;
        }
        if (!opt.variant.empty() && (st = gpk_set_variant(ctx, GPK_OP_GEMM, opt.variant.c_str())) != GPK_SUCCESS) {
            gpk_app::report_failure(kProg, "gpk_set_variant", st, ctx);
            break;
        }
        default_size(&opt, report.backend);
        report.opt = opt;
        report.memory = host_memory(opt, report.backend);

        // The matrices are filled as soon as they are allocated: more than the machine
        // holds would not fail here but get the process killed while filling them.
        if (const std::string problem = matrices_problem(opt, 1, 0, gpk_app::host_memory_bytes());
            !problem.empty()) {
            std::fprintf(stderr, "%s: %s\n", kProg, problem.c_str());
            exit_code = 2;
            break;
        }
        Matrix A, B, C;
        try {
            A = Matrix(opt.dtype, opt.m, opt.k, report.memory);
            B = Matrix(opt.dtype, opt.k, opt.n, report.memory);
            C = Matrix(opt.dtype, opt.m, opt.n, report.memory);
        } catch (const std::bad_alloc &) {
            std::fprintf(stderr, "%s: out of host memory for the matrices (%s): choose smaller sizes\n", kProg,
                         dims(opt).c_str());
            break;
        } catch (const PinnedAllocError &e) {
            std::fprintf(stderr, "%s: pinned host memory for the matrices: %s (--pageable uses ordinary memory)\n",
                         kProg, e.what());
            break;
        }
        fill(&A, opt.seed, 0);
        fill(&B, opt.seed, 1);

        // The host backend has no stages: one run, with the settings asked for (which
        // it accepts and has no use for). On the GPU, the 1-stream run gives T and C.
        const bool cuda = report.cuda();
        const char *what = "";
        st = time_run(ctx, opt, cuda ? 1 : opt.streams, cuda, A, B, &C, &report.sequential, &what);
        if (st == GPK_SUCCESS && cuda && opt.overlap()) {
            report.overlapped.emplace();
            st = time_run(ctx, opt, opt.streams, cuda, A, B, &C, &*report.overlapped, &what);
        }
        if (st != GPK_SUCCESS) {
            gpk_app::report_failure(kProg, what, st, ctx);
            break;
        }

        if (opt.json)
            print_json(report);
        else
            print_text(report);
        const auto check = combined_check(report);
        exit_code = check && check->wrong > 0 ? 1 : 0;
        if (!opt.timeline.empty() && !write_timeline(report)) exit_code = 1;
    } while (false);
    gpk_destroy(ctx);
    return exit_code;
}

}  // namespace

int main(int argc, char **argv) {
#if defined(GPK_APP_MPI_TWIN)
    constexpr bool kMpiTwin = true;
#else
    constexpr bool kMpiTwin = false;
#endif
    if (const int rc = gpk_app::mpi_handover(kProg, argc, argv, kMpiTwin); rc >= 0) return rc;
    if (const int rc = gpk_app::gpus::handover(kProg, argc, argv); rc >= 0) return rc;
    Options opt;
    if (const int rc = parse(argc, argv, &opt, true)) return rc;
    if (opt.help) return 0;
    return run(opt);
}
