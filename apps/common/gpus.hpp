// What the one-process, several-GPU builds of the apps (gpk-pi-gpus, gpk-gemm-gpus)
// share: handing "<prog> --gpus N ..." over to them, taking --gpus off the command
// line, and a barrier for the threads that drive one GPU each. Like the MPI twins
// they are separate executables, so that the apps themselves stay as they are; unlike
// them they need no MPI launcher: one process drives every GPU of the node, one
// thread each, and its host arrays are every GPU's host arrays.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace gpk_app::gpus {

// When --gpus (or --gpus=N) is among the arguments, becomes <prog>-gpus next to this
// executable, with the same arguments, in the same process; returns the exit status
// to use when that fails (after saying why). Returns -1 without --gpus.
int handover(const char *prog, int argc, char **argv);

// Takes "--gpus N" or "--gpus=N" (1 <= N <= 64) out of argv, shifting the rest
// down, so that the app's own parser sees what it knows. Returns N, 0 when absent, -1 (after saying
// why when `speak`) when its value is missing or bad.
int take_gpus(const char *prog, int *argc, char **argv, bool speak);

// All `count` threads wait in wait() until the last one arrives; reusable.
class Barrier {
public:
    explicit Barrier(int count) : count_(count) {}
    void wait();

private:
    std::mutex mutex_;
    std::condition_variable arrived_;
    int count_, waiting_ = 0;
    uint64_t generation_ = 0;
};

// Wall-clock seconds on a steady clock, from an arbitrary origin shared by the
// process's threads.
double now();

}  // namespace gpk_app::gpus
