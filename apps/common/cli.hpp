// Command-line helpers shared by the apps: counts written the way people think of
// them ("1e8", "2^32", "4096x4096x4096"), and the one way every app reports a
// libgpk failure.
#pragma once

#include "gpk/gpk.h"

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

namespace gpk_app {

// ---- numbers, sizes and lists ---------------------------------------------------------
//
// The one grammar of every app's command line: each number, size and list an app reads
// goes through these, so that all apps take and refuse the same texts. A text is taken
// whole or refused (nullopt), never read in part: "5xx6", "x5", "0,,1", "1e", "2^" and
// "" are refused, not read as 5x6, 5, 0,1, 1, 2 or 0.

// The largest count parse_count takes unless told otherwise.
constexpr uint64_t kMaxCount = uint64_t(1) << 63;
// The largest extent of an array: the library's sizes are int64_t.
constexpr uint64_t kMaxExtent = uint64_t(INT64_MAX);

// A non-negative integer: "100000", "1e8", "2.5e6", "2^32". nullopt when the text is
// not an exact integer in [0, max].
std::optional<uint64_t> parse_count(const std::string &text, uint64_t max = kMaxCount);

// A seed: any 64-bit unsigned integer (the API's seeds are uint64_t), written as
// parse_count takes it: "18446744073709551615", "2^63", "7".
std::optional<uint64_t> parse_seed(const std::string &text);

// A size in bytes: a count as in parse_count ("67108864", "2^26"), or a number
// with a binary suffix K, M, G or T, optionally followed by "iB" or "B" ("64M",
// "1.5G", "512KiB" = 512 * 1024). nullopt when it is not a whole number of bytes
// in [0, 2^63].
std::optional<uint64_t> parse_bytes(const std::string &text);

// Bytes the way people read them: "64 MiB", "1.5 GiB", "300 B".
std::string format_bytes(uint64_t bytes);

// "a,b,c" -> {"a", "b", "c"}. nullopt when the text or any part of it is empty
// ("", "a,,b", ",a", "a,"): a list with an empty part is a typo, not a shorter list.
std::optional<std::vector<std::string>> parse_list(const std::string &text, char sep = ',');

// "4096" -> {4096}; "8192x4096" -> {8192, 4096}: a parse_list on 'x' of counts in
// [0, max] (callers refuse 0 where it means nothing).
std::optional<std::vector<uint64_t>> parse_dims(const std::string &text, uint64_t max = kMaxExtent);

// The product of `factors`, or nullopt when it exceeds `max` (by default the largest
// object a process can hold, PTRDIFF_MAX bytes): the size of every array an app
// allocates is computed here, so that none wraps.
std::optional<uint64_t> checked_product(std::initializer_list<uint64_t> factors, uint64_t max = uint64_t(PTRDIFF_MAX));

// The memory this process can fill, in bytes: the machine's physical memory, or its
// control group's limit or its own address-space limit (ulimit -v) where lower. Arrays an app fills must fit in it:
// beyond it an allocation may still succeed (memory is promised lazily) and the
// process is killed while filling it.
uint64_t host_memory_bytes();

// Option values, as "--name value" or "--name=value". When argv[*i] is option
// `name`, stores its value, advances *i past it and returns true; a missing value
// sets *missing. In the "--name value" form the next argument is the value unless it
// is itself an option ("--seed --json": the seed is missing, not "--json"). Otherwise
// returns false and leaves *i alone.
bool take_option(int argc, char **argv, int *i, const char *name, std::string *value, bool *missing);

// Whether argv[i] is option `name`, in either form ("--gpus", "--gpus=2").
bool is_option(const char *arg, const char *name);

// GPK_BACKEND_* for "auto", "cuda", "host"; -1 otherwise.
int parse_backend(const std::string &text);
const char *backend_name(int backend);

// GPK_F32 ... for "f32", "f64", "i32", "i64", "f16", "bf16"; -1 otherwise.
int parse_dtype(const std::string &text);
// The dtypes' names for a message: "f32, f64, i32, i64, f16 or bf16".
const char *dtype_choices();
const char *dtype_name(int dtype);
size_t dtype_bytes(int dtype);

// ---- GPUs of processes ------------------------------------------------------------

// Device lists, "2" or "0,1,2,3": indices below 1024, at least one. nullopt otherwise.
std::optional<std::vector<int>> parse_devices(const std::string &text);

// The GPU a process takes, and why. A list (from the --devices option, else from the
// environment variable GPK_DEVICE, same syntax) gives local rank r its entry
// r mod the list's length; with neither, the process takes GPU `local_rank` (its
// rank among the processes of its node under MPI; 0 alone). nullopt, with *error
// set, when GPK_DEVICE is not a device list.
struct DeviceChoice {
    int device;
    std::string why;  // e.g. "GPK_DEVICE=0,1, entry 1 for local rank 3"
};
std::optional<DeviceChoice> choose_device(const std::vector<int> &option, int local_rank, std::string *error);

// How many GPUs the CUDA runtime sees (0 when it sees none or fails).
int cuda_device_count();

// ---- the MPI twin of an app ---------------------------------------------------------

// An app's MPI build is a separate executable, <prog>-mpi, next to it, so that the
// app itself does not depend on MPI. "<prog> --mpi ..." becomes that executable with
// the same arguments, in the same process (its pid, environment and MPI launcher
// stay the same). Returns only on failure, with the exit status to use, after
// saying why.
int exec_mpi_twin(const char *prog, char **argv);

// Whether `flag` is one of the arguments.
bool has_flag(int argc, char **argv, const char *flag);

// What an app's main does first: when --mpi is among the arguments, becomes the MPI
// twin (exec_mpi_twin) if this build has one (`twin_built`), or says that it has
// none; returns the exit status to use then. Returns -1 without --mpi.
int mpi_handover(const char *prog, int argc, char **argv, bool twin_built);

// ---- where an app runs --------------------------------------------------------------

// --backend auto|cuda|host, --device N and --devices LIST, which the apps share.
// When argv[*i] is one of them, takes it (advancing *i past its value) and returns
// true; a bad or missing value sets *error to the message to print after the program
// name. Otherwise returns false and leaves *i alone.
bool take_placement(int argc, char **argv, int *i, int *backend, std::vector<int> *devices, std::string *error);

// Prints "<prog>: <what>: <status name>: <last error>" to stderr. ctx may be null
// (then the thread's last error is used, which is how gpk_create failures read).
void report_failure(const char *prog, const char *what, gpk_status status, const gpk_context *ctx);

// The GPU the context runs on, e.g. "NVIDIA H100 80GB HBM3"; only call it for a
// CUDA context.
std::string cuda_device_name(int device);

// What a context runs on: "<GPU name>, device N" for the CUDA backend, the CPU for
// the host backend.
std::string device_description(int backend, int device);

// UTC now, ISO 8601.
std::string utc_timestamp();

// The library's runtime version, "major.minor.patch".
std::string library_version();

// The CPU model from /proc/cpuinfo plus the thread count, for host-backend reports.
std::string host_cpu_description();

}  // namespace gpk_app
