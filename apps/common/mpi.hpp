// What the MPI builds of the apps (gpk-pi-mpi, gpk-gemm-mpi) share: the process's
// place in the job, agreement on failures, the split of a range over the ranks, and
// gathering each rank's figures on rank 0. libgpk itself knows nothing of MPI; only
// these apps link it.
#pragma once

#include "gpk/gpk.h"

// Only MPI's C API is used: leave out the deprecated C++ bindings that some
// implementations' mpi.h pulls into C++ code (and their warnings).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

namespace gpk_app::mpi {

// Where this process stands in MPI_COMM_WORLD.
struct Place {
    int rank = 0, size = 1;
    int local_rank = 0, local_size = 1;  // among the processes of this node
    int nodes = 1;
    std::string host;
};

// MPI_Init for the lifetime of the object, MPI_Finalize when it goes, so that every
// way out of main() finalizes.
class Session {
public:
    Session(int *argc, char ***argv);
    ~Session();
    Session(const Session &) = delete;
    Session &operator=(const Session &) = delete;

    const Place &place() const { return place_; }

private:
    Place place_;
};

// This rank's context, on the GPU that gpk_app::choose_device() gives its local rank,
// with `variant` of `op` set when not empty. False, after saying why on stderr, when
// it cannot be made; a GPU that does not exist is reported with the node's GPU count
// and how to map ranks to GPUs. *device and *choice say which GPU and why.
bool open_context(const char *prog, const Place &at, int backend, const std::vector<int> &devices, int op,
                  const std::string &variant, gpk_context **ctx, int *device, std::string *choice);

// Whether st is GPK_SUCCESS; otherwise says on stderr which call failed on which rank.
bool succeeded(const char *prog, const Place &at, gpk_status st, const char *what, const gpk_context *ctx);

// Whether `ok` holds on every rank. Each rank calls it at the same points, so that a
// rank that failed (and said why) makes the others stop too, instead of leaving them
// waiting forever in the next collective.
bool all_ok(bool ok);

// A barrier for ranks that may wait long, while rank 0 works alone: it polls with
// short sleeps instead of spinning, as MPI implementations do, so that the waiting
// ranks leave the CPU to the working one (which matters on the host backend, where
// they share cores).
void wait_quietly();

// Rank `index`'s share of [0, total) split over `parts` ranks: contiguous, in rank
// order, the first total % parts ranks one longer than the others.
struct Share {
    uint64_t first, count;
};
Share share(uint64_t total, int parts, int index);

// Every rank's value, in rank order, on rank 0 (empty on the others).
std::vector<double> gather(double value);
std::vector<uint64_t> gather(uint64_t value);
std::vector<std::string> gather(const std::string &value);

}  // namespace gpk_app::mpi
