#include "gpus.hpp"

#include "cli.hpp"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>

namespace gpk_app::gpus {

int handover(const char *prog, int argc, char **argv) {
    bool asked = false;
    for (int i = 1; i < argc; ++i)
        if (is_option(argv[i], "--gpus")) asked = true;
    if (!asked) return -1;
    // The folder of this executable: /proc/self/exe, which holds even when the app
    // was started through $PATH or a relative path.
    std::string self(4096, '\0');
    const ssize_t len = readlink("/proc/self/exe", &self[0], self.size() - 1);
    if (len <= 0) {
        std::fprintf(stderr, "%s: --gpus: cannot find this executable's folder: %s\n", prog, std::strerror(errno));
        return 1;
    }
    self.resize(static_cast<size_t>(len));
    const std::string twin = self.substr(0, self.rfind('/') + 1) + prog + "-gpus";
    argv[0] = const_cast<char *>(twin.c_str());
    execv(twin.c_str(), argv);
    std::fprintf(stderr, "%s: --gpus: cannot run %s: %s\n", prog, twin.c_str(), std::strerror(errno));
    return 1;
}

int take_gpus(const char *prog, int *argc, char **argv, bool speak) {
    int gpus = 0;
    for (int i = 1; i < *argc; ++i) {
        if (!is_option(argv[i], "--gpus")) continue;
        // "--gpus N" or "--gpus=N", read like every other option's count.
        int next = i;
        std::string value;
        bool missing = false;
        take_option(*argc, argv, &next, "--gpus", &value, &missing);
        const auto count = missing ? std::nullopt : parse_count(value, 64);
        if (!count || *count < 1) {
            if (speak)
                std::fprintf(stderr, "%s: --gpus needs a GPU count from 1 to 64%s\n", prog,
                             missing ? ": the value is missing" : (": '" + value + "'").c_str());
            return -1;
        }
        gpus = static_cast<int>(*count);
        const int taken = next - i + 1;
        for (int j = i; j + taken <= *argc; ++j) argv[j] = argv[j + taken];
        *argc -= taken;
        --i;
    }
    return gpus;
}

void Barrier::wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    const uint64_t generation = generation_;
    if (++waiting_ == count_) {
        waiting_ = 0;
        ++generation_;
        arrived_.notify_all();
        return;
    }
    arrived_.wait(lock, [&] { return generation_ != generation; });
}

double now() {
    using clock = std::chrono::steady_clock;
    return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}

}  // namespace gpk_app::gpus
