// gpk-gemm: C = A * B with gpk_gemm on host arrays, timed, and with --validate
// checked against exact dot products.
//
// The arrays live in host memory, so each call includes what the library does to
// stage them through the GPU: the time is what a caller with host data waits for.
// One untimed call comes first, so that setup on first use (vendor handles, staging
// buffers) is not in the figures.
//
// --mpi runs it as one rank of an MPI job. That is the separate executable
// gpk-gemm-mpi (apps/gemm/mpi.cpp), built when an MPI implementation is found, so
// that this one does not depend on MPI: gpk-gemm --mpi becomes gpk-gemm-mpi in place.
#include "gpk/gpk.h"

#include "gemm_app.hpp"

#include "../common/cli.hpp"
#include "../common/json.hpp"

#include <chrono>
#include <cstdio>
#include <new>
#include <optional>
#include <string>

namespace {

using namespace gpk_gemm_app;

struct Report {
    int backend;
    std::string device;
    std::string variant;
    Options opt;
    double seconds;  // mean of the timed calls
    std::optional<Check> check;
};

void print_text(const Report &r) {
    const Options &o = r.opt;
    std::printf("backend     %s (%s)\n", gpk_app::backend_name(r.backend), r.device.c_str());
    std::printf("variant     %s\n", r.variant.c_str());
    std::printf("problem     C (%llu x %llu) = A (%llu x %llu) * B (%llu x %llu), %s, row-major, host arrays\n",
                static_cast<unsigned long long>(o.m), static_cast<unsigned long long>(o.n),
                static_cast<unsigned long long>(o.m), static_cast<unsigned long long>(o.k),
                static_cast<unsigned long long>(o.k), static_cast<unsigned long long>(o.n),
                gpk_app::dtype_name(o.dtype));
    std::printf("time        %.6f s per call (mean of %d after a warm-up call)\n", r.seconds, o.repeats);
    std::printf("throughput  %.2f GFLOP/s\n", gflops(o.m, o.n, o.k, r.seconds));
    if (r.check)
        std::printf("validation  %llu entries against exact dot products: %s (max error %.3g)\n",
                    static_cast<unsigned long long>(r.check->checked),
                    r.check->wrong == 0 ? "all correct" : (std::to_string(r.check->wrong) + " WRONG").c_str(),
                    r.check->max_error);
}

void print_json(const Report &r) {
    const Options &o = r.opt;
    gpk_app::JsonWriter json;
    json.begin_object()
        .field("backend", gpk_app::backend_name(r.backend))
        .field("device", r.device)
        .field("variant", r.variant)
        .field("dtype", gpk_app::dtype_name(o.dtype))
        .field("m", o.m)
        .field("n", o.n)
        .field("k", o.k)
        .field("repeats", static_cast<int64_t>(o.repeats))
        .field("elapsed_s", r.seconds)
        .field("gflops", gflops(o.m, o.n, o.k, r.seconds));
    if (r.check)
        json.begin_object("validation")
            .field("checked", r.check->checked)
            .field("wrong", r.check->wrong)
            .field("max_error", r.check->max_error)
            .field("exact", exact_sums(o.dtype, o.k))
            .end_object();
    else
        json.null_field("validation");
    json.field("libgpk", gpk_app::library_version()).end_object();
    std::fputs(json.str().c_str(), stdout);
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
        if (!opt.variant.empty() && (st = gpk_set_variant(ctx, GPK_OP_GEMM, opt.variant.c_str())) != GPK_SUCCESS) {
            gpk_app::report_failure(kProg, "gpk_set_variant", st, ctx);
            break;
        }
        default_size(&opt, report.backend);
        report.opt = opt;

        Matrix A, B, C;
        try {
            A = Matrix(opt.dtype, opt.m, opt.k);
            B = Matrix(opt.dtype, opt.k, opt.n);
            C = Matrix(opt.dtype, opt.m, opt.n);
        } catch (const std::bad_alloc &) {
            std::fprintf(stderr, "%s: out of host memory for the matrices\n", kProg);
            break;
        }
        fill(&A, opt.seed, 0);
        fill(&B, opt.seed, 1);

        double total = 0;
        for (int call = 0; call <= opt.repeats && st == GPK_SUCCESS; ++call) {
            const auto start = std::chrono::steady_clock::now();
            st = multiply(ctx, opt.dtype, opt.m, opt.n, opt.k, A.data(), B.data(), C.data());
            if (call > 0) total += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        }
        if (st != GPK_SUCCESS) {
            gpk_app::report_failure(kProg, "gpk_gemm", st, ctx);
            break;
        }
        report.seconds = total / opt.repeats;
        if (opt.validate) report.check = validate(A, B, C, spread(opt.m, 64), spread(opt.n, 64));

        if (opt.json)
            print_json(report);
        else
            print_text(report);
        exit_code = report.check && report.check->wrong > 0 ? 1 : 0;
    } while (false);
    gpk_destroy(ctx);
    return exit_code;
}

}  // namespace

int main(int argc, char **argv) {
    // Under --mpi every rank starts here: the twin reads the arguments, and only its
    // rank 0 reports what is wrong with them.
    if (gpk_app::has_flag(argc, argv, "--mpi")) {
#if defined(GPK_APP_MPI_TWIN)
        return gpk_app::exec_mpi_twin(kProg, argv);
#else
        std::fprintf(stderr,
                     "%s: --mpi: this build has no MPI support: no MPI implementation was found when it was "
                     "configured (install one, e.g. OpenMPI, and set up the build again)\n",
                     kProg);
        return 2;
#endif
    }
    Options opt;
    if (const int rc = parse(argc, argv, &opt, true)) return rc;
    if (opt.help) return 0;
    return run(opt);
}
