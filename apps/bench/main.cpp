// gpk-bench: checks and times every variant of every op, and says what each rung
// of a ladder buys over the one below and how it stands against the vendor.
//
// Without a usable GPU it benchmarks the host backend at small sizes instead,
// making no CUDA call, so that a machine without a GPU can still smoke-test it.
//
// --memory pinned puts the arrays in pinned host memory instead of device memory,
// so that every call goes through the library's staging pipeline: what host-array
// callers get, measured against the link (pinned copies each way).
#include "bench.hpp"
#include "kernels.hpp"
#include "tune.hpp"

#include "../common/cli.hpp"
#include "../common/ladders.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <string>
#include <tuple>
#include <vector>

namespace {

using namespace gpk_bench;

constexpr const char *kProg = "gpk-bench";
constexpr uint64_t kPiSeed = 2026;
constexpr int kDefaultRepeat = 20;
constexpr int kQuickRepeat = 5;
// Without --repeat, on the GPU: rows of short calls time enough of them to add up to
// kMinTimedMs, at most kShortRepeat.
constexpr double kMinTimedMs = 2.0;
constexpr int kShortRepeat = 200;

// One table: an op at one dtype and one size ("4096", "8192x4096", "2^28").
struct Spec {
    int op;
    int dtype;  // -1 for pi
    std::vector<uint64_t> dims;
    bool ex = false;     // gemm through gpk_gemm_ex / gpk_gemm_blockscaled, as `ex` says
    GemmExSettings ex_settings{};
};

// --dtype's FP8 names, gemm only (gpk_gemm_ex): kept apart from the GPK_* values,
// which name one dtype where these name A's and B's.
constexpr int kFp8 = 100;        // fp8: E4M3 x E4M3
constexpr int kFp8E5M2 = 101;    // fp8-e5m2: E5M2 x E5M2
constexpr int kFp8Mixed = 102;   // fp8-mixed: E4M3 x E5M2
int parse_fp8(const std::string &name) {
    if (name == "fp8" || name == "fp8-e4m3") return kFp8;
    if (name == "fp8-e5m2") return kFp8E5M2;
    if (name == "fp8-mixed") return kFp8Mixed;
    return -1;
}
bool is_fp8_choice(int dtype) { return dtype >= kFp8 && dtype <= kFp8Mixed; }
const char *fp8_choice_name(int dtype) {
    return dtype == kFp8 ? "fp8" : dtype == kFp8E5M2 ? "fp8-e5m2" : "fp8-mixed";
}

using gpk_app::kOpCount;
// gemm_batched's batch fills about this much per operand (A, B and C each), small
// runs a sixty-fourth of it.
constexpr size_t kBatchedOperandBytes = size_t(1) << 30;

// The headline set of PERF.md: sizes that fill the chip, plus the small ones
// where launch overhead shows. With --memory pinned, one size per op, of a GiB
// where the op moves bytes: a staged call's time is the link's, whatever the size
// past the pipeline's ramp.
std::vector<Spec> default_specs(int op, bool quick, bool pinned) {
    const uint64_t p20 = uint64_t(1) << 20, p22 = uint64_t(1) << 22, p28 = uint64_t(1) << 28;
    if (pinned) {
        switch (op) {
            case GPK_OP_GEMM: return {{op, GPK_F32, {quick ? 256u : 4096u}}};
            case GPK_OP_REDUCE: return {{op, GPK_F32, {quick ? p20 : p28}}};
            case GPK_OP_TRANSPOSE: return {{op, GPK_F32, {quick ? 1024u : 16384u}}};
            case GPK_OP_GEMM_BATCHED: return {{op, GPK_F32, {quick ? 8u : 16u}}};
            default: return {};  // pi has no arrays
        }
    }
    switch (op) {
        case GPK_OP_GEMM:
            if (quick) return {{op, GPK_F32, {256}}, {op, GPK_F64, {256}}};
            return {{op, GPK_F32, {1024}}, {op, GPK_F32, {4096}}, {op, GPK_F64, {1024}}, {op, GPK_F64, {4096}}};
        case GPK_OP_REDUCE:
            if (quick) return {{op, GPK_F32, {p20}}, {op, GPK_I32, {p20}}};
            return {{op, GPK_F32, {p22}}, {op, GPK_F32, {p28}}, {op, GPK_I32, {p22}}, {op, GPK_I32, {p28}}};
        case GPK_OP_TRANSPOSE:
            if (quick) return {{op, GPK_F32, {1024}}, {op, GPK_F64, {1024}}};
            return {{op, GPK_F32, {8192}}, {op, GPK_F32, {16384}}, {op, GPK_F64, {8192}}};
        case GPK_OP_GEMM_BATCHED: {
            // Square products from 4 to 512: memory-bound up to a few dozen, then
            // compute-bound; the ladder's rungs each own part of the range.
            if (quick) return {{op, GPK_F32, {4}}, {op, GPK_F32, {64}}, {op, GPK_F64, {16}}};
            std::vector<Spec> specs;
            for (int dtype : {GPK_F32, GPK_F64})
                for (uint64_t n : {4u, 8u, 16u, 32u, 64u, 128u, 256u, 512u}) specs.push_back({op, dtype, {n}});
            return specs;
        }
        default:
            return {{op, -1, {quick ? p22 : uint64_t(1) << 32}}};
    }
}

struct Options {
    std::vector<int> ops;
    std::vector<std::string> sizes;  // as given, parsed per op
    std::vector<int> dtypes;
    std::vector<std::string> dtype_words;  // --dtype as given: --tune reads them as the table's classes
    std::vector<std::string> variants;  // empty: every variant, or with --memory pinned {"auto"}
    bool pinned = false;                // --memory pinned
    int repeat = 0;  // 0: the default for the mode
    std::string json;  // empty: no JSON file
    bool quick = false;
    bool list = false;
    bool kernels = false;  // --kernels: each row's kernels (kernels.hpp)
    std::string tune;  // --tune FILE: the tuning table to measure and write
    std::string shapes;  // --shapes membound or fp8: that sweep instead of the ops' tables
    int c_dtype = -1;    // --c-dtype: C's dtype for gemm_ex (-1: BF16 for FP8, else the inputs')
    bool scale_tensor = false, scale_block = false;  // --scaling (neither: the default)
    int backend = GPK_BACKEND_AUTO;
    int device = 0;
    GemmSettings gemm;  // --math, --ld
};

// gemm's shapes for the 16-bit dtypes and TF32 when no --size is given: the square
// sizes around the chip's peak, a short-k product, and 4097^3 (with --ld odd, every
// leading dimension odd), where vendor libraries leave their aligned fast paths.
const std::vector<std::vector<uint64_t>> kTensorCoreShapes = {{1024}, {4096}, {8192}, {8192, 8192, 256}, {4097}};

void usage(std::FILE *to) {
    std::fprintf(to,
                 "usage: %s [--op gemm|reduce|transpose|pi|gemm_batched|all] [--size S[,S...]] [--dtype f32|f64|i32|i64[,...]]\n"
                 "                 [--variant NAME[,NAME...]] [--memory device|pinned] [--repeat R] [--json FILE]\n"
                 "                 [--quick] [--backend auto|cuda|host] [--device N] [--list]\n"
                 "                 [--math default|tf32] [--ld tight|odd] [--tune FILE] [--shapes membound|fp8]\n"
                 "                 [--c-dtype f32|f16|bf16] [--scaling tensor|block] [--kernels]\n"
                 "  --op       ops to run, comma-separated (default all; reduce,transpose with --memory pinned)\n"
                 "  --size     gemm: N or MxNxK; reduce: N; transpose: N or ROWSxCOLS; pi: samples;\n"
                 "             gemm_batched: N (N x N x N products, the batch filling about 1 GiB per operand).\n"
                 "             Counts may be written 4096, 2^28 or 1e8. Default: the headline set\n"
                 "             (gemm 1024^3 and 4096^3; reduce 2^22 and 2^28; transpose 8192^2 and\n"
                 "             16384^2 (f64: 8192^2); pi 2^32 samples; gemm_batched f32 and f64, 4 to 512)\n"
                 "  --dtype    element types, comma-separated: f32, f64, i32, i64, f16, bf16 (default: gemm\n"
                 "             f32,f64; reduce f32,i32; transpose f32,f64); pi has none. gemm of f16 or bf16\n"
                 "             without --size runs 1024^3, 4096^3, 8192^3, 8192x8192x256 and 4097^3. gemm also\n"
                 "             takes fp8 (E4M3 x E4M3), fp8-e5m2 (E5M2 x E5M2) and fp8-mixed (E4M3 x E5M2):\n"
                 "             gpk_gemm_ex, TN (cuBLASLt's FP8 layout), C bf16 unless --c-dtype says otherwise;\n"
                 "             without --size 4096^3, 8192^3, 4096x7168x16384, 4096x24576x1536, 8192x8192x1024.\n"
                 "             Each row is held to the contract's bound on a sample of C computed exactly\n"
                 "  --c-dtype  C's dtype for gemm_ex: f32, f16 or bf16 (FP8 default bf16); with f16 or bf16\n"
                 "             inputs, f32 makes the mixed-precision gemm_ex (F16/BF16 -> F32)\n"
                 "  --scaling  FP8 scaling, comma-separated: tensor (gpk_gemm_ex, the scale in alpha; the\n"
                 "             default) or block (gpk_gemm_blockscaled, DeepSeek-V3's 1x128 and 128x128 scales)\n"
                 "  --math     gemm's math mode (gpk_set_math_mode): default (exact FP32) or tf32, in which\n"
                 "             F32 gemm may use TF32 tensor cores (without --size: the f16 shapes above)\n"
                 "  --ld       gemm's leading dimensions: tight (default, the matrices' heights) or odd (the\n"
                 "             smallest odd value at or above each height)\n"
                 "  --variant  run only these variants, and the vendor's for the ratios (default all; the vendor\n"
                 "             and auto with --memory pinned). \"auto\" is the library's own choice, as a row of\n"
                 "             its own after the ladder; \"all\" is every rung\n"
                 "  --memory   where the arrays live. device (default): device memory, each call timed with\n"
                 "             CUDA events after an L2 flush. pinned: pinned host memory (cudaHostAlloc), so\n"
                 "             each call is staged through the GPU by the library's pipeline; it is timed\n"
                 "             with a steady clock around the call (synchronous on host arrays), no L2 flush.\n"
                 "             GB/s then count the bytes over the link, in + out, and reduce and transpose\n"
                 "             get the link's ceilings: pinned copies of the input's size, h2d and d2h, the\n"
                 "             ratios taken to h2d (transpose also to h2d + d2h, since it uses both at\n"
                 "             once). Default sizes: reduce f32 2^28, transpose f32 16384^2, gemm f32 4096^3;\n"
                 "             pi has no arrays and is skipped. The host backend stages nothing: there the\n"
                 "             arrays are ordinary host memory, with the same defaults at small sizes\n"
                 "  --repeat   timed calls per variant (default %d; %d with --quick or on the host backend);\n"
                 "             a variant whose first call takes over 2 s gets 3. Without it, on the GPU\n"
                 "             with device arrays, a variant whose calls are short gets enough of them to\n"
                 "             add up to %g ms, at most %d\n"
                 "  --json     also write every row to FILE as JSON (default: no file)\n"
                 "  --kernels  under each row, the kernels that one more call of its variant launched, untimed\n"
                 "             and after the timed ones: name, grid, block, registers per thread, shared memory\n"
                 "             per block (static + dynamic) and theoretical occupancy (resident blocks per SM and\n"
                 "             their warps in %% of the SM's), each with its launches; the case's roofline line\n"
                 "             says which roof binds. Also in --json (\"kernels\"). CUDA backend only, in a build\n"
                 "             with CUPTI; not under a profiler that holds CUPTI (ncu, nsys)\n"
                 "  --quick    small sizes, for a smoke test\n"
                 "  --backend  auto (default): the GPU, or the host backend at small sizes without one\n"
                 "  --device   CUDA device index (default 0)\n"
                 "  --list     print every rung of every ladder this build holds, each backend's, marking\n"
                 "             those this machine cannot run, and exit\n"
                 "  --shapes   membound: skinny products (M of 1 to 128 rows against W of 8192x8192, 28672x8192\n"
                 "             and 12288x5120, both orientations) and Gram products (8x8 to 128x128, k of 2^20 to\n"
                 "             2^23) in f64, f32, tf32, f16 and bf16, under the vendor, skinny, gram and auto (or\n"
                 "             --variant), with roofline fractions and a summary (apps/bench/membound.cpp).\n"
                 "             fp8: gemm_ex at the sizes of --dtype fp8 (TN), 4097^3 with odd leading dimensions,\n"
                 "             NN, NT, TT and row-major NN at 8192^3, block scaling at 4096x7168x16384 and\n"
                 "             8192^3, and bf16 -> f32 at 8192^3; every rung, the vendor's, auto and the 16-bit\n"
                 "             gemm (or, block-scaled, the per-tensor FP8 gemm) timed beside them, then a\n"
                 "             summary of each case against its target. Small sizes (each / 64) on the host\n"
                 "             backend or with --quick\n"
                 "  --tune     measure the tuning table of this GPU (\"auto\" chooses from it: gpk_load_tuning,\n"
                 "             GPK_TUNING) over its grid of shapes, for --op (default every op), and write it\n"
                 "             to FILE; --quick: a small grid (apps/bench/tune.cpp lists both). --dtype: those\n"
                 "             classes alone: f32 (with tf32), f64, i32, i64, f16, bf16, fp8 (per tensor and\n"
                 "             block-scaled; --scaling tensor or block: one), fp8_block, half_f32 (bf16 -> f32)\n"
                 "Exit status: 0 when every variant matched the vendor's output, 1 otherwise.\n",
                 kProg, kDefaultRepeat, kQuickRepeat, kMinTimedMs, kShortRepeat);
}

// What is wrong with a list option's value: missing, or a list with an empty part.
std::string list_problem(const char *option, const char *what, bool missing, const std::string &value) {
    if (missing) return std::string(option) + " needs a value: " + what + ", comma-separated";
    return std::string(option) + ": '" + value + "' is not a list of " + what + " (comma-separated, no empty parts)";
}

// The --op choices for a message.
std::string op_choices() {
    std::vector<std::string> names;
    for (int op = 0; op < kOpCount; ++op) names.push_back(gpk_app::op_name(op));
    names.push_back("all");
    return gpk_app::join_choices(names);
}

// The forms of an op's --size, for a message.
const char *size_forms(int op) {
    switch (op) {
        case GPK_OP_GEMM: return "N or MxNxK";
        case GPK_OP_TRANSPOSE: return "N or ROWSxCOLS";
        case GPK_OP_PI: return "a sample count";
        default: return "N";
    }
}

// What --tune measures of --dtype and --scaling (tune.hpp).
TuneOptions tune_options(const Options &opt) {
    TuneOptions t;
    t.path = opt.tune, t.ops = opt.ops, t.quick = opt.quick;
    t.dtypes = opt.dtype_words;
    t.scale_tensor = opt.scale_tensor, t.scale_block = opt.scale_block;
    return t;
}

// --dtype's words for the tuning table's gpk_gemm_ex classes that gpk-bench's own
// tables name otherwise (--dtype fp8 --scaling block; --dtype bf16 --c-dtype f32).
bool is_tune_class(const std::string &w) { return w == "fp8_block" || w == "half_f32"; }

// --tune's options: its --dtype words, and no C dtype of the caller's (each class has
// its own). Returns 0 or the exit status.
int check_tune_options(const Options &opt) {
    const auto bad = [](const std::string &what) {
        std::fprintf(stderr, "%s: %s\n", kProg, what.c_str());
        return 2;
    };
    if (opt.tune.empty()) {
        for (const std::string &w : opt.dtype_words)
            if (is_tune_class(w))
                return bad("--dtype: '" + w + "' is a class of the tuning table, for --tune only (" +
                           (w == "half_f32" ? "--dtype bf16 --c-dtype f32" : "--dtype fp8 --scaling block") +
                           " time it here)");
        return 0;
    }
    if (opt.c_dtype >= 0)
        return bad("--c-dtype: --tune measures each class with its own C (bf16 for fp8 and fp8_block, f32 for "
                   "half_f32)");
    std::vector<int> classes;
    std::string problem;
    if (!tune_classes(tune_options(opt), &classes, &problem)) return bad(problem);
    return 0;
}

// Returns 0 when the options are good, else the exit status to use.
int parse(int argc, char **argv, Options *opt) {
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        std::string value;
        bool missing = false;
        const auto bad = [&](const std::string &what) {
            std::fprintf(stderr, "%s: %s\n", kProg, what.c_str());
            return 2;
        };
        if (arg == "-h" || arg == "--help") {
            usage(stdout);
            std::exit(0);
        } else if (arg == "--quick") {
            opt->quick = true;
        } else if (arg == "--list") {
            opt->list = true;
        } else if (arg == "--kernels") {
            if (!kernels_built()) {
                std::fprintf(stderr, "%s was built without CUPTI: --kernels is not available\n", kProg);
                return 2;
            }
            opt->kernels = true;
        } else if (gpk_app::take_option(argc, argv, &i, "--tune", &value, &missing)) {
            if (missing || value.empty()) return bad("--tune needs a file name");
            opt->tune = value;
        } else if (gpk_app::take_option(argc, argv, &i, "--op", &value, &missing)) {
            const auto names = missing ? std::nullopt : gpk_app::parse_list(value);
            if (!names) return bad(list_problem("--op", "ops", missing, value));
            for (const std::string &name : *names) {
                if (name == "all") {
                    opt->ops = {GPK_OP_GEMM, GPK_OP_REDUCE, GPK_OP_TRANSPOSE, GPK_OP_PI, GPK_OP_GEMM_BATCHED};
                    continue;
                }
                const int op = gpk_app::parse_op(name);
                if (op < 0)
                    return bad("--op: unknown op '" + name + "'; the choices are " + op_choices());
                opt->ops.push_back(op);
            }
        } else if (gpk_app::take_option(argc, argv, &i, "--size", &value, &missing)) {
            const auto sizes = missing ? std::nullopt : gpk_app::parse_list(value);
            if (!sizes) return bad(list_problem("--size", "sizes", missing, value));
            opt->sizes.insert(opt->sizes.end(), sizes->begin(), sizes->end());
        } else if (gpk_app::take_option(argc, argv, &i, "--dtype", &value, &missing)) {
            const auto names = missing ? std::nullopt : gpk_app::parse_list(value);
            if (!names) return bad(list_problem("--dtype", "dtypes", missing, value));
            for (const std::string &name : *names) {
                opt->dtype_words.push_back(name);
                if (is_tune_class(name)) continue;  // --tune's alone: checked once every option is read
                const int dtype = parse_fp8(name) >= 0 ? parse_fp8(name) : gpk_app::parse_dtype(name);
                if (dtype < 0)
                    return bad("--dtype: unknown dtype '" + name + "'; the choices are " + gpk_app::dtype_choices() +
                               " (and for gemm fp8, fp8-e5m2 and fp8-mixed)");
                opt->dtypes.push_back(dtype);
            }
        } else if (gpk_app::take_option(argc, argv, &i, "--c-dtype", &value, &missing)) {
            const int dtype = missing ? -1 : gpk_app::parse_dtype(value);
            if (dtype != GPK_F32 && dtype != GPK_F16 && dtype != GPK_BF16)
                return bad(missing ? "--c-dtype needs a value: f32, f16 or bf16"
                                   : "--c-dtype: unknown C dtype '" + value + "'; the choices are f32, f16 and bf16");
            opt->c_dtype = dtype;
        } else if (gpk_app::take_option(argc, argv, &i, "--scaling", &value, &missing)) {
            const auto names = missing ? std::nullopt : gpk_app::parse_list(value);
            if (!names) return bad(list_problem("--scaling", "scalings", missing, value));
            for (const std::string &name : *names) {
                if (name != "tensor" && name != "block")
                    return bad("--scaling: unknown scaling '" + name + "'; the choices are tensor and block");
                (name == "tensor" ? opt->scale_tensor : opt->scale_block) = true;
            }
        } else if (gpk_app::take_option(argc, argv, &i, "--math", &value, &missing)) {
            if (missing) return bad("--math needs a value");
            if (value != "default" && value != "tf32") return bad("unknown math mode '" + value + "' (default or tf32)");
            opt->gemm.math = value == "tf32" ? GPK_MATH_TF32 : GPK_MATH_DEFAULT;
        } else if (gpk_app::take_option(argc, argv, &i, "--shapes", &value, &missing)) {
            if (missing || (value != "membound" && value != "fp8"))
                return bad(missing ? "--shapes needs a value: membound or fp8"
                                   : "--shapes: unknown sweep '" + value + "'; the choices are membound and fp8");
            opt->shapes = value;
        } else if (gpk_app::take_option(argc, argv, &i, "--ld", &value, &missing)) {
            if (missing) return bad("--ld needs a value");
            if (value != "tight" && value != "odd") return bad("unknown --ld '" + value + "' (tight or odd)");
            opt->gemm.odd_ld = value == "odd";
        } else if (gpk_app::take_option(argc, argv, &i, "--variant", &value, &missing)) {
            // Checked against the ladders once the backend is known (check_variants).
            const auto names = missing ? std::nullopt : gpk_app::parse_list(value);
            if (!names) return bad(list_problem("--variant", "variant names", missing, value));
            opt->variants.insert(opt->variants.end(), names->begin(), names->end());
        } else if (gpk_app::take_option(argc, argv, &i, "--memory", &value, &missing)) {
            if (missing || (value != "device" && value != "pinned")) return bad("--memory must be device or pinned");
            opt->pinned = value == "pinned";
        } else if (gpk_app::take_option(argc, argv, &i, "--repeat", &value, &missing)) {
            const auto repeat = missing ? std::nullopt : gpk_app::parse_count(value, 100000);
            if (!repeat || *repeat < 1) return bad("--repeat needs a count from 1 to 100000");
            opt->repeat = static_cast<int>(*repeat);
        } else if (gpk_app::take_option(argc, argv, &i, "--json", &value, &missing)) {
            if (missing || value.empty()) return bad("--json needs a file name");
            opt->json = value;
        } else if (gpk_app::take_option(argc, argv, &i, "--backend", &value, &missing)) {
            opt->backend = missing ? -1 : gpk_app::parse_backend(value);
            if (opt->backend < 0) return bad("--backend must be auto, cuda or host");
        } else if (gpk_app::take_option(argc, argv, &i, "--device", &value, &missing)) {
            const auto device = missing ? std::nullopt : gpk_app::parse_count(value, 1023);
            if (!device) return bad("--device needs a device index, 0 to 1023");
            opt->device = static_cast<int>(*device);
        } else {
            std::fprintf(stderr, "%s: unexpected argument '%s'\n", kProg, arg.c_str());
            usage(stderr);
            return 2;
        }
    }
    if (const int rc = check_tune_options(*opt)) return rc;
    if (opt->kernels && !opt->tune.empty()) {
        std::fprintf(stderr, "%s: --kernels: --tune prints no rows to list kernels under\n", kProg);
        return 2;
    }
    // FP8 is gemm's alone: asked for by itself, it means gemm (and so do the tuning
    // table's gpk_gemm_ex classes).
    const bool all_fp8 = !opt->dtype_words.empty() &&
                         std::all_of(opt->dtype_words.begin(), opt->dtype_words.end(), [](const std::string &w) {
                             return parse_fp8(w) >= 0 || is_tune_class(w);
                         });
    if (opt->ops.empty() && (opt->shapes == "fp8" || all_fp8)) opt->ops = {GPK_OP_GEMM};
    if (opt->ops.empty()) {
        if (opt->pinned)
            opt->ops = {GPK_OP_REDUCE, GPK_OP_TRANSPOSE};
        else
            opt->ops = {GPK_OP_GEMM, GPK_OP_REDUCE, GPK_OP_TRANSPOSE, GPK_OP_PI, GPK_OP_GEMM_BATCHED};
    }
    if (opt->pinned) {
        const auto pi = std::find(opt->ops.begin(), opt->ops.end(), GPK_OP_PI);
        if (pi != opt->ops.end()) {
            std::printf("%s: pi has no arrays to stage; skipped with --memory pinned\n", kProg);
            opt->ops.erase(std::remove(opt->ops.begin(), opt->ops.end(), GPK_OP_PI), opt->ops.end());
        }
    }
    // Staging every rung says nothing the device tables do not: the vendor and
    // "auto" unless asked otherwise.
    if (opt->pinned && opt->variants.empty()) opt->variants = {"auto"};
    return 0;
}

bool valid_dims(int op, const std::vector<uint64_t> &d) {
    for (uint64_t v : d)
        if (v == 0) return false;
    switch (op) {
        case GPK_OP_GEMM: return d.size() == 1 || d.size() == 3;
        case GPK_OP_TRANSPOSE: return d.size() == 1 || d.size() == 2;
        default: return d.size() == 1;
    }
}

// gemm_ex's settings for a --dtype choice: FP8 A and B, C as --c-dtype says (BF16 by
// default), TN; or 16-bit A and B into --c-dtype's C, NN as gemm's own tables.
GemmExSettings ex_settings(const Options &opt, int dtype) {
    GemmExSettings s;
    if (is_fp8_choice(dtype)) {
        s.a_dtype = dtype == kFp8E5M2 ? GPK_F8E5M2 : GPK_F8E4M3;
        s.b_dtype = dtype == kFp8 ? GPK_F8E4M3 : GPK_F8E5M2;
        s.c_dtype = opt.c_dtype >= 0 ? opt.c_dtype : GPK_BF16;
    } else {
        s.a_dtype = s.b_dtype = dtype;
        s.c_dtype = opt.c_dtype;
        s.transa = GPK_NO_TRANS;
    }
    s.odd_ld = opt.gemm.odd_ld;
    return s;
}

// F16 or BF16 gemm with another --c-dtype: gpk_gemm_ex's mixed precision.
bool mixed_16bit(const Options &opt, int dtype) {
    return (dtype == GPK_F16 || dtype == GPK_BF16) && opt.c_dtype >= 0 && opt.c_dtype != dtype;
}

// --dtype fp8 without --size: the square and LLM-layer shapes, per tensor (TN).
const std::vector<std::vector<uint64_t>> kFp8Shapes = {
    {4096}, {8192}, {4096, 7168, 16384}, {4096, 24576, 1536}, {8192, 8192, 1024}};
const std::vector<std::vector<uint64_t>> kFp8SmallShapes = {{64}, {128, 96, 160}};

// gemm_ex cases of a --dtype choice at `sizes`, once per --scaling (per tensor by default).
void add_gemm_ex(const Options &opt, int dtype, const std::vector<std::vector<uint64_t>> &sizes,
                 std::vector<Spec> *specs) {
    GemmExSettings s = ex_settings(opt, dtype);
    const bool block = opt.scale_block && is_fp8_choice(dtype);
    const bool tensor = opt.scale_tensor || !opt.scale_block || !is_fp8_choice(dtype);
    for (const auto &dims : sizes) {
        if (tensor) specs->push_back({GPK_OP_GEMM, dtype, dims, true, s});
        if (block) {
            s.block_scaled = true;
            specs->push_back({GPK_OP_GEMM, dtype, dims, true, s});
            s.block_scaled = false;
        }
    }
}

// --shapes fp8: the cases, in one run (`small`: each dimension / 64). The FP8
// dtype is the first --dtype fp8 choice (fp8 by default), C --c-dtype's (bf16).
std::vector<Spec> fp8_sweep(const Options &opt, bool small) {
    int dtype = kFp8;
    for (int d : opt.dtypes)
        if (is_fp8_choice(d)) {
            dtype = d;
            break;
        }
    const auto sized = [small](std::vector<uint64_t> dims) {
        for (uint64_t &d : dims) d = small ? std::max<uint64_t>(1, d / 64) : d;
        return dims;
    };
    const bool tensor = opt.scale_tensor || !opt.scale_block;
    const bool block_everywhere = opt.scale_block && !opt.scale_tensor;
    const bool block_targets = opt.scale_block || !opt.scale_tensor;
    std::vector<Spec> specs;
    const GemmExSettings base = ex_settings(opt, dtype);
    const auto add = [&](std::vector<uint64_t> dims, GemmExSettings s) {
        specs.push_back({GPK_OP_GEMM, dtype, dims, true, s});
    };
    for (const auto &dims : kFp8Shapes) {
        GemmExSettings s = base;
        if (tensor) add(sized(dims), s);
        const bool target = dims == std::vector<uint64_t>{4096, 7168, 16384} || dims == std::vector<uint64_t>{8192};
        if (block_everywhere || (block_targets && target)) {
            s.block_scaled = true;
            add(sized(dims), s);
        }
    }
    if (!tensor) return specs;
    // 4097^3, every leading dimension odd: what cuBLASLt cannot run at all.
    GemmExSettings odd = base;
    odd.odd_ld = true;
    add({sized({4096})[0] + 1}, odd);
    // The layouts cuBLASLt refuses, at 8192^3.
    for (const auto &[layout, ta, tb] : {std::tuple{GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS},
                                         std::tuple{GPK_COL_MAJOR, GPK_NO_TRANS, GPK_TRANS},
                                         std::tuple{GPK_COL_MAJOR, GPK_TRANS, GPK_TRANS},
                                         std::tuple{GPK_ROW_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS}}) {
        GemmExSettings s = base;
        s.layout = layout;
        s.transa = ta;
        s.transb = tb;
        add(sized({8192}), s);
    }
    // gemm_ex's 16-bit inputs into F32 C, against BF16 gemm in the same layout.
    GemmExSettings mixed;
    mixed.a_dtype = mixed.b_dtype = GPK_BF16;
    mixed.c_dtype = GPK_F32;
    mixed.transa = GPK_NO_TRANS;
    specs.push_back({GPK_OP_GEMM, GPK_BF16, sized({8192}), true, mixed});
    return specs;
}

// The tables to print, in order: the defaults, with --dtype and --size replacing
// the default dtypes and sizes of each op.
bool plan(const Options &opt, bool small, std::vector<Spec> *specs) {
    for (int op : opt.ops) {
        const std::vector<Spec> defaults = default_specs(op, small, opt.pinned);
        if (opt.dtypes.empty() && opt.sizes.empty()) {
            specs->insert(specs->end(), defaults.begin(), defaults.end());
            continue;
        }
        std::vector<int> dtypes;
        std::vector<std::vector<uint64_t>> sizes;
        for (const Spec &s : defaults) {
            if (std::find(dtypes.begin(), dtypes.end(), s.dtype) == dtypes.end()) dtypes.push_back(s.dtype);
            if (std::find(sizes.begin(), sizes.end(), s.dims) == sizes.end()) sizes.push_back(s.dims);
        }
        if (!opt.dtypes.empty() && op != GPK_OP_PI) {
            dtypes.clear();
            for (int dtype : opt.dtypes) {
                if ((op == GPK_OP_GEMM || op == GPK_OP_GEMM_BATCHED) && (dtype == GPK_I32 || dtype == GPK_I64)) {
                    std::printf("%s: gemm is floating point only; skipping %s\n", kProg, gpk_app::dtype_name(dtype));
                    continue;
                }
                if (op != GPK_OP_GEMM && is_fp8_choice(dtype)) {
                    std::printf("%s: %s is gemm's alone (gpk_gemm_ex); skipping it for %s\n", kProg,
                                fp8_choice_name(dtype), gpk_app::op_name(op));
                    continue;
                }
                dtypes.push_back(dtype);
            }
        }
        if (!opt.sizes.empty()) {
            sizes.clear();
            for (const std::string &text : opt.sizes) {
                const auto dims = gpk_app::parse_dims(text);
                if (!dims || !valid_dims(op, *dims)) {
                    std::fprintf(stderr, "%s: --size: '%s' is not a %s size (%s, each from 1 to 2^63 - 1)\n", kProg,
                                 text.c_str(), gpk_app::op_name(op), size_forms(op));
                    return false;
                }
                sizes.push_back(*dims);
            }
        }
        for (int dtype : dtypes) {
            if (op == GPK_OP_GEMM && (is_fp8_choice(dtype) || mixed_16bit(opt, dtype))) {
                add_gemm_ex(opt, dtype, opt.sizes.empty() ? (small ? kFp8SmallShapes : kFp8Shapes) : sizes, specs);
                continue;
            }
            // The tensor-core dtypes and modes have their own default shapes.
            const bool tensor = op == GPK_OP_GEMM && opt.sizes.empty() && !small && !opt.pinned &&
                                (dtype == GPK_F16 || dtype == GPK_BF16 || (dtype == GPK_F32 && opt.gemm.math == GPK_MATH_TF32));
            for (const auto &dims : tensor ? kTensorCoreShapes : sizes) specs->push_back({op, dtype, dims});
        }
    }
    return true;
}

std::unique_ptr<Case> make_case(const Env &env, const Spec &s, const GemmSettings &gemm, bool small) {
    const auto dim = [&](size_t i) { return static_cast<int64_t>(s.dims[std::min(i, s.dims.size() - 1)]); };
    switch (s.op) {
        case GPK_OP_GEMM:
            if (s.ex)
                return s.dims.size() == 1 ? make_gemm_ex_case(env, dim(0), dim(0), dim(0), s.ex_settings)
                                          : make_gemm_ex_case(env, dim(0), dim(1), dim(2), s.ex_settings);
            return s.dims.size() == 1 ? make_gemm_case(env, s.dtype, dim(0), dim(0), dim(0), gemm)
                                      : make_gemm_case(env, s.dtype, dim(0), dim(1), dim(2), gemm);
        case GPK_OP_REDUCE: return make_reduce_case(env, s.dtype, dim(0));
        case GPK_OP_TRANSPOSE: return make_transpose_case(env, s.dtype, dim(0), dim(1));
        case GPK_OP_GEMM_BATCHED:
            return make_gemm_batched_case(env, s.dtype, dim(0), small ? kBatchedOperandBytes / 64 : kBatchedOperandBytes);
        default: return make_pi_case(env, s.dims[0], kPiSeed);
    }
}

// --list: every rung of every ladder the build holds, the CUDA backend's and the host
// backend's, each line marked where this machine cannot run it. The CUDA rungs come
// from a CUDA context where there is a usable GPU, else from the build's lists
// (gpk_app::built_cuda_rungs), so that a machine without one still shows them.
int list_rungs(const Options &opt) {
    gpk_context *cuda = nullptr, *host = nullptr;
    std::string cuda_absent;
    if (!gpk_app::build_has_cuda()) {
        cuda_absent = "this build has no CUDA backend";
    } else if (gpk_create(&cuda, GPK_BACKEND_CUDA, opt.device) != GPK_SUCCESS) {
        cuda_absent = gpk_last_error(nullptr);
        cuda = nullptr;
    }
    if (const gpk_status st = gpk_create(&host, GPK_BACKEND_HOST, 0); st != GPK_SUCCESS) {
        gpk_app::report_failure(kProg, "gpk_create (host)", st, nullptr);
        gpk_destroy(cuda);
        return 1;
    }
    std::printf("the ladders of this build, each backend's rungs in ladder order (index:name); --variant takes\n"
                "the names, \"all\" and \"auto\"\n");
    const auto print = [](const char *backend, const char *mark, const std::vector<std::string> &rungs) {
        std::printf("  %-5s%s", backend, mark);
        for (size_t i = 0; i < rungs.size(); ++i) std::printf(" %zu:%s", i, rungs[i].c_str());
        std::printf("\n");
    };
    for (int op = 0; op < kOpCount; ++op) {
        std::printf("%s\n", gpk_app::op_name(op));
        if (gpk_app::build_has_cuda())
            print("cuda", cuda ? "" : " (cannot run here)",
                  cuda ? gpk_app::context_rungs(cuda, op) : gpk_app::built_cuda_rungs(op));
        else
            std::printf("  cuda  none: this build has no CUDA backend\n");
        print("host", "", gpk_app::context_rungs(host, op));
    }
    if (!cuda_absent.empty() && gpk_app::build_has_cuda())
        std::printf("(cannot run here): no usable GPU on this machine: %s\n", cuda_absent.c_str());
    gpk_destroy(cuda);
    gpk_destroy(host);
    return 0;
}

// Every --variant name must be a rung of one of the ops asked for on the backend at
// hand, or "all" or "auto": a name that is none would otherwise run the vendor's row
// alone and pass, a typo unnoticed. Returns the exit status to use when one is not.
int check_variants(const Options &opt, const Env &env) {
    for (const std::string &name : opt.variants) {
        if (name == "all" || name == "auto") continue;
        std::vector<std::string> ops, cuda_ops, choices;
        bool found = false;
        for (int op : opt.ops) {
            const std::vector<std::string> rungs = gpk_app::context_rungs(env.ctx, op);
            found = found || std::find(rungs.begin(), rungs.end(), name) != rungs.end();
            const std::vector<std::string> &built = gpk_app::built_cuda_rungs(op);
            if (std::find(built.begin(), built.end(), name) != built.end()) cuda_ops.push_back(gpk_app::op_name(op));
            ops.push_back(gpk_app::op_name(op));
            choices.push_back(std::string(gpk_app::op_name(op)) + ": " + gpk_app::join_choices(rungs, ", "));
        }
        if (found) continue;
        std::string text = "--variant: '" + name + "' is ";
        if (!env.cuda && !cuda_ops.empty())
            text += "a CUDA rung of " + gpk_app::join_choices(cuda_ops, " and ") +
                    ", and this run is on the host backend";
        else
            text += "not a variant of " + gpk_app::join_choices(ops) + " on the " + (env.cuda ? "CUDA" : "host") +
                    " backend";
        text += "; the choices are the rungs (" + gpk_app::join_choices(choices, "; ") + "), all and auto";
        if (!env.cuda && gpk_app::build_has_cuda()) text += " (gpk-bench --list shows the CUDA rungs too)";
        std::fprintf(stderr, "%s: %s\n", kProg, text.c_str());
        return 2;
    }
    return 0;
}

// The context under test. AUTO tries the GPU first so that a missing one is said
// out loud rather than silently benchmarking the host.
std::unique_ptr<Env> open_env(const Options &opt) {
    gpk_status st = GPK_SUCCESS;
    if (opt.backend == GPK_BACKEND_AUTO) {
        auto env = Env::create(GPK_BACKEND_CUDA, opt.device, opt.pinned, &st);
        if (env) return env;
        if (st != GPK_ERROR_NO_DEVICE) {
            gpk_app::report_failure(kProg, "gpk_create (cuda)", st, nullptr);
            return nullptr;
        }
        std::printf("%s: no usable GPU (%s); benchmarking the host backend at small sizes\n", kProg,
                    gpk_last_error(nullptr));
    }
    const int backend = opt.backend == GPK_BACKEND_CUDA ? GPK_BACKEND_CUDA : GPK_BACKEND_HOST;
    auto env = Env::create(backend, opt.device, opt.pinned, &st);
    if (!env) gpk_app::report_failure(kProg, "gpk_create", st, nullptr);
    if (env && opt.pinned && !env->cuda)
        std::printf("%s: --memory pinned needs the CUDA backend (the host backend stages nothing); "
                    "running with the arrays in ordinary host memory\n",
                    kProg);
    return env;
}

}  // namespace

int main(int argc, char **argv) {
    Options opt;
    if (const int rc = parse(argc, argv, &opt)) return rc;
    if (opt.list) return list_rungs(opt);

    try {
        const std::unique_ptr<Env> env = open_env(opt);
        if (!env) return 1;
        if (!opt.tune.empty()) return run_tune(*env, tune_options(opt));
        if (const int rc = check_variants(opt, *env)) return rc;

        if (opt.gemm.math != GPK_MATH_DEFAULT) {
            const gpk_status st = gpk_set_math_mode(env->ctx, opt.gemm.math);
            if (st != GPK_SUCCESS) {
                gpk_app::report_failure(kProg, "gpk_set_math_mode", st, env->ctx);
                return 1;
            }
            std::printf("%s: gemm in GPK_MATH_TF32 (F32 gemm may use TF32 tensor cores)\n", kProg);
        }

        // The host backend is a reference, not a contender: small sizes keep it quick.
        const bool small = opt.quick || !env->cuda;
        std::vector<Spec> specs;
        if (!plan(opt, small, &specs)) return 2;
        RunOptions run;
        run.repeat = opt.repeat ? opt.repeat : small ? kQuickRepeat : kDefaultRepeat;
        run.variants = opt.variants;
        // The sweep's targets include what "auto" makes of each case.
        if (opt.shapes == "fp8" && run.variants.empty()) run.variants = {"all", "auto"};
        if (!opt.repeat && !small && env->cuda && !env->pinned) {
            run.min_timed_ms = kMinTimedMs;
            run.short_repeat = kShortRepeat;
        }

        // Recorded only where there are kernels to see, and CUPTI to see them with.
        std::unique_ptr<KernelRecorder> recorder;
        if (opt.kernels && !env->cuda) {
            std::printf("%s: --kernels needs the CUDA backend (the host backend launches no kernels); "
                        "running without the kernel lines\n",
                        kProg);
        } else if (opt.kernels) {
            std::string why;
            recorder = KernelRecorder::open(*env, &why);
            if (!recorder)
                std::printf("%s: --kernels: CUPTI cannot be had (%s); running without the kernel lines\n", kProg,
                            why.c_str());
        }
        run.kernels = recorder.get();

        const RunInfo info = describe_run(*env, small, run);
        std::printf("%s: libgpk %s, %s backend on %s", kProg, gpk_app::library_version().c_str(),
                    info.backend.c_str(), info.device.c_str());
        if (env->cuda)
            std::printf(" (sm_%s, CUDA driver %s, runtime %s)", info.compute_capability.c_str(),
                        info.cuda_driver.c_str(), info.cuda_runtime.c_str());
        std::printf("\n%d timed calls per variant", run.repeat);
        if (run.min_timed_ms > 0)
            std::printf(" (more, up to %d, where %d take less than %g ms)", run.short_repeat, run.repeat, run.min_timed_ms);
        std::printf(" (median; the variants' calls in turns, each turn in a random order), %s\n",
                    env->pinned ? "arrays in pinned host memory (staged), steady clock around each call, no L2 flush"
                    : env->cuda ? "CUDA events, L2 flushed before each (then a one-block kernel)"
                                : "steady clock");
        if (recorder)
            std::printf("each row's kernels (--kernels): one more call of its variant, untimed, its launches seen "
                        "through CUPTI; occupancy is the theoretical one\n");

        std::vector<CaseResult> results;
        int failed = 0;
        if (opt.shapes == "membound") {
            specs.clear();
            failed += run_membound_sweep(*env, run, opt.quick, &results);
        } else if (opt.shapes == "fp8") {
            specs = fp8_sweep(opt, small);
        }
        for (const Spec &spec : specs) {
            std::unique_ptr<Case> c;
            try {
                c = make_case(*env, spec, opt.gemm, small);
            } catch (const Error &e) {
                std::fprintf(stderr, "%s: %s\n", kProg, e.what());
                ++failed;
                continue;
            }
            results.push_back(run_case(*env, *c, run));
            const CaseResult &r = results.back();
            failed += !r.error.empty();
            for (const Row &row : r.rows) failed += row.failed();
        }

        // JSON only where asked: a run leaves no file behind in the current directory.
        const bool written = opt.json.empty() || write_json(opt.json, info, results);
        print_fp8_summary(results);
        if (!opt.json.empty() && written)
            std::printf("\nwrote %s\n", opt.json.c_str());
        else if (!written)
            std::fprintf(stderr, "%s: cannot write %s\n", kProg, opt.json.c_str());
        if (failed) std::printf("%d FAILED\n", failed);
        return failed || !written ? 1 : 0;
    } catch (const Error &e) {
        std::fprintf(stderr, "%s: %s\n", kProg, e.what());
        return 1;
    } catch (const std::bad_alloc &) {
        // The cases report their own; this is what the run around them could not get.
        std::fprintf(stderr, "%s: out of host memory\n", kProg);
        return 1;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "%s: %s\n", kProg, e.what());
        return 1;
    }
}
