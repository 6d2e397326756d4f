#include "cli.hpp"

#include <cuda_runtime.h>

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <thread>

namespace gpk_app {
namespace {

bool all_digits(const std::string &s) {
    if (s.empty()) return false;
    for (char c : s)
        if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    return true;
}

// Digits only, at most `max`; accumulated with a check rather than through stoull,
// so that every value up to 2^64 - 1 is read exactly and none beyond it wraps.
std::optional<uint64_t> parse_plain(const std::string &s, uint64_t max) {
    if (!all_digits(s)) return std::nullopt;
    uint64_t v = 0;
    for (char c : s) {
        const auto digit = static_cast<uint64_t>(c - '0');
        if (digit > max || v > (max - digit) / 10) return std::nullopt;
        v = v * 10 + digit;
    }
    return v;
}

bool mul_checked(uint64_t a, uint64_t b, uint64_t max, uint64_t *out) {
    if (a != 0 && b > max / a) return false;
    *out = a * b;
    return true;
}

// "1e8", "2.5e6": decimal mantissa times a power of ten, exact integers only.
std::optional<uint64_t> parse_scientific(const std::string &s, size_t e, uint64_t max) {
    std::string mant = s.substr(0, e);
    const auto exponent = parse_plain(s.substr(e + 1), 19);
    if (!exponent) return std::nullopt;
    int shift = static_cast<int>(*exponent);
    const size_t dot = mant.find('.');
    if (dot != std::string::npos) {
        // Digits on both sides of the point: "1.e8" and ".5e8" are typos.
        if (dot == 0 || dot + 1 == mant.size()) return std::nullopt;
        std::string frac = mant.substr(dot + 1);
        while (!frac.empty() && frac.back() == '0') frac.pop_back();
        if (static_cast<int>(frac.size()) > shift) return std::nullopt;  // not an integer
        shift -= static_cast<int>(frac.size());
        mant = mant.substr(0, dot) + frac;
    }
    auto value = parse_plain(mant, max);
    if (!value) return std::nullopt;
    uint64_t v = *value;
    for (int i = 0; i < shift; ++i)
        if (!mul_checked(v, 10, max, &v)) return std::nullopt;
    return v;
}

}  // namespace

std::optional<uint64_t> parse_count(const std::string &text, uint64_t max) {
    const size_t caret = text.find('^');
    if (caret != std::string::npos) {
        const auto base = parse_plain(text.substr(0, caret), max);
        const auto exponent = parse_plain(text.substr(caret + 1), 64);
        if (!base || !exponent) return std::nullopt;
        uint64_t v = 1;
        for (uint64_t i = 0; i < *exponent; ++i)
            if (!mul_checked(v, *base, max, &v)) return std::nullopt;
        return v;
    }
    const size_t e = text.find_first_of("eE");
    if (e != std::string::npos) return parse_scientific(text, e, max);
    return parse_plain(text, max);
}

std::optional<uint64_t> parse_seed(const std::string &text) { return parse_count(text, UINT64_MAX); }

std::optional<uint64_t> parse_bytes(const std::string &text) {
    static const char kSuffixes[] = "KMGT";
    size_t end = text.size();
    // "MiB" and "MB" both mean 2^20 bytes here: sizes of buffers, not of disks.
    if (end >= 2 && text.compare(end - 2, 2, "iB") == 0) {
        end -= 2;
    } else if (end >= 2 && text[end - 1] == 'B') {
        end -= 1;
    }
    const char *suffix = end > 0 ? std::strchr(kSuffixes, std::toupper(static_cast<unsigned char>(text[end - 1])))
                                 : nullptr;
    if (suffix == nullptr || *suffix == '\0') {
        // No multiple: a plain count ("B" alone is allowed: "4096B").
        return parse_count(text.substr(0, end));
    }
    const std::string number = text.substr(0, end - 1);
    const int shift = 10 * static_cast<int>(suffix - kSuffixes + 1);
    // Digits, with at most one point and digits on both sides of it (".5G" and "1.G"
    // are typos, as in parse_count): the mantissa times 2^shift must be whole.
    const size_t dot = number.find('.');
    const std::string whole = number.substr(0, dot);
    std::string frac = dot == std::string::npos ? "" : number.substr(dot + 1);
    if (!all_digits(whole) || (dot != std::string::npos && !all_digits(frac)) || whole.size() > 19 ||
        frac.size() > 18)
        return std::nullopt;
    const uint64_t w = std::stoull(whole);
    if (w > (kMaxCount >> shift)) return std::nullopt;
    uint64_t v = w << shift;
    if (!frac.empty()) {
        // frac / 10^digits * 2^shift must be an integer; frac < 10^18 times 2^40
        // needs 100 bits (GCC and Clang both have them).
        uint64_t denom = 1;
        for (size_t i = 0; i < frac.size(); ++i) denom *= 10;
        const unsigned __int128 part = static_cast<unsigned __int128>(std::stoull(frac)) << shift;
        if (part % denom != 0) return std::nullopt;
        const auto add = static_cast<uint64_t>(part / denom);
        if (add > kMaxCount - v) return std::nullopt;
        v += add;
    }
    return v;
}

std::string format_bytes(uint64_t bytes) {
    static const char *const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int unit = 0;
    double value = static_cast<double>(bytes);
    while (value >= 1024 && unit < 4) value /= 1024, ++unit;
    char buf[32];
    if (unit == 0)
        std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
    else if (value == std::floor(value))
        std::snprintf(buf, sizeof buf, "%.0f %s", value, kUnits[unit]);
    else
        std::snprintf(buf, sizeof buf, "%.3g %s", value, kUnits[unit]);
    return buf;
}

std::optional<std::vector<std::string>> parse_list(const std::string &text, char sep) {
    std::vector<std::string> parts;
    size_t start = 0;
    for (;;) {
        const size_t end = std::min(text.find(sep, start), text.size());
        if (end == start) return std::nullopt;  // "", "a,,b", ",a", "a,"
        parts.push_back(text.substr(start, end - start));
        if (end == text.size()) return parts;
        start = end + 1;
    }
}

std::optional<std::vector<uint64_t>> parse_dims(const std::string &text, uint64_t max) {
    const auto parts = parse_list(text, 'x');
    if (!parts) return std::nullopt;
    std::vector<uint64_t> dims;
    for (const std::string &part : *parts) {
        const auto v = parse_count(part, max);
        if (!v) return std::nullopt;
        dims.push_back(*v);
    }
    return dims;
}

std::optional<uint64_t> checked_product(std::initializer_list<uint64_t> factors, uint64_t max) {
    uint64_t product = 1;
    for (uint64_t f : factors)
        if (!mul_checked(product, f, max, &product)) return std::nullopt;
    return product;
}

uint64_t host_memory_bytes() {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    uint64_t bytes = pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) : UINT64_MAX;
    // A container's limit (cgroup v2, then v1): "max" or a huge figure where none is set.
    for (const char *path : {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
        std::ifstream in(path);
        std::string text;
        if (!(in >> text)) continue;
        if (const auto limit = parse_plain(text, UINT64_MAX); limit && *limit > 0) bytes = std::min(bytes, *limit);
    }
    // And the process's own address-space limit (ulimit -v), where one is set.
    rlimit as{};
    if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) bytes = std::min<uint64_t>(bytes, as.rlim_cur);
    return bytes;
}

bool take_option(int argc, char **argv, int *i, const char *name, std::string *value, bool *missing) {
    const std::string arg = argv[*i];
    const std::string flag = name;
    if (arg == flag) {
        // The next argument is another option, not this one's value: "--seed --json"
        // lacks a seed. (No value of any app's options begins with "--"; one that did
        // could still be given as --name=value.)
        if (*i + 1 >= argc || std::strncmp(argv[*i + 1], "--", 2) == 0) {
            *missing = true;
            return true;
        }
        *value = argv[++*i];
        return true;
    }
    if (arg.rfind(flag + "=", 0) == 0) {
        *value = arg.substr(flag.size() + 1);
        return true;
    }
    return false;
}

bool is_option(const char *arg, const char *name) {
    const size_t n = std::strlen(name);
    return std::strncmp(arg, name, n) == 0 && (arg[n] == '\0' || arg[n] == '=');
}

int parse_backend(const std::string &text) {
    if (text == "auto") return GPK_BACKEND_AUTO;
    if (text == "cuda") return GPK_BACKEND_CUDA;
    if (text == "host") return GPK_BACKEND_HOST;
    return -1;
}

const char *backend_name(int backend) {
    switch (backend) {
        case GPK_BACKEND_AUTO: return "auto";
        case GPK_BACKEND_CUDA: return "cuda";
        case GPK_BACKEND_HOST: return "host";
        default: return "unknown";
    }
}

// The dtypes' names on the command line, indexed by their GPK_* values.
constexpr const char *kDtypeNames[] = {"f32", "f64", "i32", "i64", "f16", "bf16"};
static_assert(GPK_F32 == 0 && GPK_F64 == 1 && GPK_I32 == 2 && GPK_I64 == 3 && GPK_F16 == 4 && GPK_BF16 == 5,
              "kDtypeNames is indexed by dtype");

const char *dtype_choices() { return "f32, f64, i32, i64, f16 or bf16"; }

int parse_dtype(const std::string &text) {
    for (int d = 0; d < 6; ++d)
        if (text == kDtypeNames[d]) return d;
    return -1;
}

const char *dtype_name(int dtype) { return dtype >= 0 && dtype < 6 ? kDtypeNames[dtype] : "-"; }

size_t dtype_bytes(int dtype) {
    if (dtype == GPK_F16 || dtype == GPK_BF16) return 2;
    return (dtype == GPK_F64 || dtype == GPK_I64) ? 8 : 4;
}

std::optional<std::vector<int>> parse_devices(const std::string &text) {
    const auto parts = parse_list(text);
    if (!parts) return std::nullopt;
    std::vector<int> devices;
    for (const std::string &part : *parts) {
        const auto v = parse_count(part, 1023);
        if (!v) return std::nullopt;
        devices.push_back(static_cast<int>(*v));
    }
    return devices;
}

std::optional<DeviceChoice> choose_device(const std::vector<int> &option, int local_rank, std::string *error) {
    auto entry = [&](const std::vector<int> &list, const std::string &source) {
        const size_t i = static_cast<size_t>(local_rank) % list.size();
        std::string why = source;
        if (list.size() > 1) why += ", entry " + std::to_string(i) + " for local rank " + std::to_string(local_rank);
        return DeviceChoice{list[i], why};
    };
    if (!option.empty()) {
        std::string text;
        for (int d : option) text += (text.empty() ? "" : ",") + std::to_string(d);
        return entry(option, "--devices " + text);
    }
    const char *env = std::getenv("GPK_DEVICE");
    if (env != nullptr && env[0] != '\0') {
        const auto list = parse_devices(env);
        if (!list) {
            *error = std::string("GPK_DEVICE='") + env + "' is not a device index or a list of them, e.g. 0 or 0,1,2,3";
            return std::nullopt;
        }
        return entry(*list, std::string("GPK_DEVICE=") + env);
    }
    return DeviceChoice{local_rank, "local rank " + std::to_string(local_rank)};
}

int cuda_device_count() {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        (void)cudaGetLastError();  // no GPU is not an error to carry around
        return 0;
    }
    return count;
}

int mpi_handover(const char *prog, int argc, char **argv, bool twin_built) {
    if (!has_flag(argc, argv, "--mpi")) return -1;
    // Under --mpi every rank starts here: the twin reads the arguments, and only its
    // rank 0 reports what is wrong with them.
    if (twin_built) return exec_mpi_twin(prog, argv);
    std::fprintf(stderr,
                 "%s: --mpi: this build has no MPI support: no MPI implementation was found when it was "
                 "configured (install one, e.g. OpenMPI, and set up the build again)\n",
                 prog);
    return 2;
}

bool take_placement(int argc, char **argv, int *i, int *backend, std::vector<int> *devices, std::string *error) {
    std::string value;
    bool missing = false;
    const auto bad = [&](const char *what) {
        *error = std::string(what) + (missing ? ": the value is missing" : ": '" + value + "'");
        return true;
    };
    error->clear();
    if (take_option(argc, argv, i, "--backend", &value, &missing)) {
        *backend = missing ? -1 : parse_backend(value);
        if (*backend < 0) return bad("--backend must be auto, cuda or host");
        return true;
    }
    if (take_option(argc, argv, i, "--device", &value, &missing)) {
        const auto device = missing ? std::nullopt : parse_count(value, 1023);
        if (!device) return bad("--device needs a device index, 0 to 1023");
        *devices = {static_cast<int>(*device)};
        return true;
    }
    if (take_option(argc, argv, i, "--devices", &value, &missing)) {
        const auto list = missing ? std::nullopt : parse_devices(value);
        if (!list) return bad("--devices needs a list of device indices, e.g. 0,1,2,3");
        *devices = *list;
        return true;
    }
    return false;
}

int exec_mpi_twin(const char *prog, char **argv) {
    // The folder of this executable: /proc/self/exe, which holds even when the app
    // was started through $PATH or a relative path.
    std::string self(4096, '\0');
    const ssize_t len = readlink("/proc/self/exe", &self[0], self.size() - 1);
    if (len <= 0) {
        std::fprintf(stderr, "%s: --mpi: cannot find this executable's folder: %s\n", prog, std::strerror(errno));
        return 1;
    }
    self.resize(static_cast<size_t>(len));
    const std::string twin = self.substr(0, self.rfind('/') + 1) + prog + "-mpi";
    argv[0] = const_cast<char *>(twin.c_str());
    execv(twin.c_str(), argv);
    std::fprintf(stderr, "%s: --mpi: cannot run %s: %s\n", prog, twin.c_str(), std::strerror(errno));
    return 1;
}

bool has_flag(int argc, char **argv, const char *flag) {
    for (int i = 1; i < argc; ++i)
        if (std::strcmp(argv[i], flag) == 0) return true;
    return false;
}

void report_failure(const char *prog, const char *what, gpk_status status, const gpk_context *ctx) {
    std::fprintf(stderr, "%s: %s failed: %s: %s\n", prog, what, gpk_status_string(status),
                 gpk_last_error(ctx));
}

std::string cuda_device_name(int device) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) return "unknown GPU";
    return prop.name;
}

std::string device_description(int backend, int device) {
    if (backend != GPK_BACKEND_CUDA) return host_cpu_description();
    return cuda_device_name(device) + ", device " + std::to_string(device);
}

std::string utc_timestamp() {
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

std::string library_version() {
    int major = 0, minor = 0, patch = 0;
    gpk_version(&major, &minor, &patch);
    return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

std::string host_cpu_description() {
    std::string model = "unknown CPU";
    std::ifstream cpuinfo("/proc/cpuinfo");
    for (std::string line; std::getline(cpuinfo, line);) {
        if (line.rfind("model name", 0) == 0) {
            const size_t colon = line.find(':');
            if (colon != std::string::npos && colon + 2 <= line.size()) model = line.substr(colon + 2);
            break;
        }
    }
    return model + ", " + std::to_string(std::thread::hardware_concurrency()) + " threads";
}

}  // namespace gpk_app
