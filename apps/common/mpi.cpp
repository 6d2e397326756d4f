#include "mpi.hpp"

#include "cli.hpp"
#include "ladders.hpp"

#include <chrono>
#include <cstdio>
#include <thread>

namespace gpk_app::mpi {

Session::Session(int *argc, char ***argv) {
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &place_.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &place_.size);

    // The processes that share memory are those of one node: the local rank is what
    // maps a process to one of the node's GPUs.
    MPI_Comm local;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, place_.rank, MPI_INFO_NULL, &local);
    MPI_Comm_rank(local, &place_.local_rank);
    MPI_Comm_size(local, &place_.local_size);
    MPI_Comm_free(&local);
    const int leader = place_.local_rank == 0 ? 1 : 0;
    MPI_Allreduce(&leader, &place_.nodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);

    char name[MPI_MAX_PROCESSOR_NAME] = {};
    int len = 0;
    MPI_Get_processor_name(name, &len);
    place_.host.assign(name, static_cast<size_t>(len > 0 ? len : 0));
}

Session::~Session() { MPI_Finalize(); }

bool open_context(const char *prog, const Place &at, int backend, const std::vector<int> &devices, int op,
                  const std::string &variant, gpk_context **ctx, int *device, std::string *choice) {
    std::string error;
    const auto chosen = choose_device(devices, at.local_rank, &error);
    if (!chosen) {
        std::fprintf(stderr, "%s: rank %d on %s: %s\n", prog, at.rank, at.host.c_str(), error.c_str());
        return false;
    }
    *device = chosen->device;
    *choice = chosen->why;
    const gpk_status st = gpk_create(ctx, backend, chosen->device);
    if (st != GPK_SUCCESS) {
        std::string hint;
        if (st == GPK_ERROR_NO_DEVICE) {
            const int gpus = cuda_device_count();
            hint = " (" + at.host + " has " + std::to_string(gpus) + (gpus == 1 ? " GPU" : " GPUs") +
                   "; map ranks to GPUs with --devices LIST or GPK_DEVICE=LIST)";
        }
        std::fprintf(stderr, "%s: rank %d on %s: gpk_create(device %d, from %s) failed: %s: %s%s\n", prog, at.rank,
                     at.host.c_str(), chosen->device, chosen->why.c_str(), gpk_status_string(st),
                     gpk_last_error(nullptr), hint.c_str());
        return false;
    }
    if (!variant.empty()) {
        int resolved = backend;
        gpk_get_backend(*ctx, &resolved);
        if (const std::string problem = variant_problem(*ctx, resolved, op, variant); !problem.empty()) {
            std::fprintf(stderr, "%s: rank %d on %s: --variant %s\n", prog, at.rank, at.host.c_str(), problem.c_str());
            return false;
        }
        return succeeded(prog, at, gpk_set_variant(*ctx, op, variant.c_str()), "gpk_set_variant", *ctx);
    }
    return true;
}

bool succeeded(const char *prog, const Place &at, gpk_status st, const char *what, const gpk_context *ctx) {
    if (st == GPK_SUCCESS) return true;
    std::fprintf(stderr, "%s: rank %d on %s: %s failed: %s: %s\n", prog, at.rank, at.host.c_str(), what,
                 gpk_status_string(st), gpk_last_error(ctx));
    return false;
}

bool all_ok(bool ok) {
    int mine = ok ? 1 : 0, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return all != 0;
}

void wait_quietly() {
    MPI_Request request;
    MPI_Ibarrier(MPI_COMM_WORLD, &request);
    for (int done = 0;;) {
        MPI_Test(&request, &done, MPI_STATUS_IGNORE);
        if (done) return;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}

Share share(uint64_t total, int parts, int index) {
    const uint64_t p = static_cast<uint64_t>(parts), i = static_cast<uint64_t>(index);
    const uint64_t base = total / p, extra = total % p;
    return Share{i * base + (i < extra ? i : extra), base + (i < extra ? 1 : 0)};
}

std::vector<double> gather(double value) {
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    std::vector<double> all(rank == 0 ? static_cast<size_t>(size) : 0);
    MPI_Gather(&value, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return all;
}

std::vector<uint64_t> gather(uint64_t value) {
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    std::vector<uint64_t> all(rank == 0 ? static_cast<size_t>(size) : 0);
    MPI_Gather(&value, 1, MPI_UINT64_T, all.data(), 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    return all;
}

std::vector<std::string> gather(const std::string &value) {
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int len = static_cast<int>(value.size());
    std::vector<int> lens(rank == 0 ? static_cast<size_t>(size) : 0), offsets(lens.size());
    MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    std::string joined;
    for (size_t i = 0; i < lens.size(); ++i) {
        offsets[i] = static_cast<int>(joined.size());
        joined.append(static_cast<size_t>(lens[i]), '\0');
    }
    MPI_Gatherv(value.data(), len, MPI_CHAR, joined.empty() ? nullptr : &joined[0], lens.data(), offsets.data(),
                MPI_CHAR, 0, MPI_COMM_WORLD);
    std::vector<std::string> all;
    for (size_t i = 0; i < lens.size(); ++i) all.push_back(joined.substr(offsets[i], lens[i]));
    return all;
}

}  // namespace gpk_app::mpi
