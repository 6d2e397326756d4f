// What gpk-bench shows: one aligned table per case on stdout, and every row with
// the run's header in a JSON file for scripts (scripts/gpu-check reads it).
#include "bench.hpp"

#include "../common/cli.hpp"
#include "../common/json.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>

namespace gpk_bench {
namespace {

std::string fixed(double v, const char *format) {
    char buf[48];
    std::snprintf(buf, sizeof buf, format, v);
    return buf;
}

std::string times(const std::optional<double> &v) { return v ? fixed(*v, "%.2fx") : "-"; }

std::string cuda_version(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

// The column of ratios to the first ceiling: "vs copy", "vs h2d", "vs simple fused".
std::string ceiling_column(const CaseResult &r) { return "vs " + r.yardstick.label; }
int ceiling_column_width(const CaseResult &r) { return std::max(7, static_cast<int>(ceiling_column(r).size())); }

}  // namespace

std::string case_title(const CaseResult &r) {
    std::string title = r.op;
    if (r.dtype != "-") title += " " + r.dtype;
    title += " ";
    for (const auto &[name, value] : r.sizes) title += " " + std::string(name) + "=" + std::to_string(value);
    return title;
}

void print_table_header(const Env &env, const CaseResult &r, const std::string &note) {
    std::printf("\n%s%s\n", case_title(r).c_str(), note.empty() ? "" : ("  (" + note + ")").c_str());
    char vs_copy[64] = "";
    if (r.has_ceilings)
        std::snprintf(vs_copy, sizeof vs_copy, "%*s  ", ceiling_column_width(r), ceiling_column(r).c_str());
    // The roofline (roofline.cpp) and each row's fraction of it, "roof".
    if (r.roofline) {
        std::printf("  roofline %.4f ms, %s-bound (copy %.0f GB/s, peak %.4g TFLOP/s, both measured in this run)\n",
                    r.roofline->ms, r.roofline->compute_bound ? "compute" : "memory", r.roofline->copy_gbs,
                    r.roofline->peak_tflops);
        std::snprintf(vs_copy + std::strlen(vs_copy), sizeof vs_copy - std::strlen(vs_copy), "%5s  ", "roof");
    }
    std::printf("  %2s  %-*s  %10s  %10s  %10s  %9s  %6s  %6s  %s%s\n", "#", r.name_width, "variant", "median ms",
                "min ms", r.unit.c_str(), env.cuda ? "vs vendor" : "vs #0", "step", "cumul", vs_copy, "check");
    std::fflush(stdout);
}

void print_row(const CaseResult &r, const Row &row) {
    const bool timed = row.timed();
    std::string check = status_name(row.status);
    if (!row.ran.empty()) check = "ran " + row.ran + ", " + check;
    if (!row.detail.empty()) check += ": " + row.detail;
    if (row.time_boxed) check += " [slow first call: " + std::to_string(row.repeats) + " repeats]";
    // Ceilings and "auto" are not rungs: no ladder index.
    const std::string index = row.ceiling || row.auto_pick ? "-" : std::to_string(row.index);
    char vs_copy[64] = "";
    if (r.has_ceilings)
        std::snprintf(vs_copy, sizeof vs_copy, "%*s  ", ceiling_column_width(r), times(row.ratio_to_ceiling).c_str());
    if (r.roofline)
        std::snprintf(vs_copy + std::strlen(vs_copy), sizeof vs_copy - std::strlen(vs_copy), "%5s  ",
                      row.roofline_fraction ? fixed(*row.roofline_fraction, "%.2f").c_str() : "-");
    std::printf("  %2s  %-*s  %10s  %10s  %10s  %9s  %6s  %6s  %s%s\n", index.c_str(), r.name_width,
                row.variant.c_str(), timed ? fixed(row.median_ms, "%.4f").c_str() : "-",
                timed ? fixed(row.min_ms, "%.4f").c_str() : "-", timed ? fixed(row.throughput, "%.4g").c_str() : "-",
                times(row.ratio_to_vendor).c_str(), times(row.step_speedup).c_str(),
                times(row.speedup_over_first).c_str(), vs_copy, check.c_str());
    std::fflush(stdout);
}

void print_kernels(const Row &row) {
    if (!row.kernels) return;
    if (row.kernels->empty()) std::printf("      no kernel launched\n");
    size_t width = 0;
    for (const KernelInfo &k : *row.kernels) width = std::max(width, k.name.size());
    for (const KernelInfo &k : *row.kernels) {
        const auto dims = [](const unsigned *d, bool always) {
            if (!always && d[1] == 1 && d[2] == 1) return std::to_string(d[0]);
            return std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
        };
        const std::string regs = k.regs >= 0 ? std::to_string(k.regs) : "?";
        const std::string smem =
            k.static_smem >= 0 ? fixed((double(k.static_smem) + double(k.dynamic_smem)) / 1024, "%.1f KiB") : "?";
        const std::string occupancy =
            k.blocks_per_sm >= 0
                ? std::to_string(k.blocks_per_sm) + " blocks/SM (" + fixed(k.warps_percent, "%.0f") + " % of warps)"
                : "?";
        std::printf("      kernel %-*s  grid %s  block %s  regs %s  smem %s  occupancy %s  launches %d\n",
                    static_cast<int>(width), k.name.c_str(), dims(k.grid, true).c_str(), dims(k.block, false).c_str(),
                    regs.c_str(), smem.c_str(), occupancy.c_str(), k.launches);
    }
    std::fflush(stdout);
}

void print_ceiling_summary(const CaseResult &r) {
    const Row *best = nullptr, *pick = nullptr, *copy = nullptr, *second = nullptr, *third = nullptr;
    for (const Row &row : r.rows) {
        if (row.ceiling) {
            if (!copy) copy = &row;
            else if (!second) second = &row;
            else if (!third) third = &row;
        } else if (row.auto_pick) {
            if (row.timed()) pick = &row;
        } else if (row.index > 0 && row.timed() && (!best || row.throughput > best->throughput)) {
            best = &row;
        }
    }
    const std::string who = pick ? "auto" : best ? "best rung " + best->variant : "";
    if (pick) best = pick;
    if (!best || !copy || !copy->timed() || !best->ratio_to_ceiling) return;
    const char *unit = r.unit.c_str();
    std::printf("  %s: %.4g %s = %.2fx the %s's %.4g %s\n", who.c_str(), best->throughput, unit,
                *best->ratio_to_ceiling, r.yardstick.noun.c_str(), copy->throughput, unit);
    // Bytes in and bytes out cross the link at once: the ceiling is both directions.
    if (r.link_duplex && second && second->timed()) {
        const double both = copy->throughput + second->throughput;
        std::printf("  %s: both directions at once, h2d + d2h = %.4g + %.4g = %.4g %s: %.2fx that\n", who.c_str(),
                    copy->throughput, second->throughput, both, unit, best->throughput / both);
        // What the link does with the same bytes copied both ways at once, measured.
        if (third && third->timed())
            std::printf("  %s: %.2fx the %.4g %s of h2d and d2h copies run at once\n", who.c_str(),
                        best->throughput / third->throughput, third->throughput, unit);
    }
    std::fflush(stdout);
}

void print_case_error(const CaseResult &r) {
    std::printf("  FAILED: %s\n", r.error.c_str());
    std::fflush(stdout);
}

RunInfo describe_run(const Env &env, bool quick, const RunOptions &run) {
    RunInfo info;
    info.backend = gpk_app::backend_name(env.cuda ? GPK_BACKEND_CUDA : GPK_BACKEND_HOST);
    info.device_index = env.device;
    info.date = gpk_app::utc_timestamp();
    info.memory = env.memory_name();
    info.quick = quick;
    info.repeat = run.repeat;
    info.min_timed_ms = run.min_timed_ms;
    info.short_repeat = run.short_repeat;
    info.l2_flush_bytes = env.l2_flush_bytes;
    if (!env.cuda) {
        info.device = gpk_app::host_cpu_description();
        return info;
    }
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, env.device) == cudaSuccess) {
        info.device = prop.name;
        info.compute_capability = std::to_string(prop.major) + "." + std::to_string(prop.minor);
        info.sm_count = prop.multiProcessorCount;
    }
    int version = 0;
    if (cudaDriverGetVersion(&version) == cudaSuccess) info.cuda_driver = cuda_version(version);
    if (cudaRuntimeGetVersion(&version) == cudaSuccess) info.cuda_runtime = cuda_version(version);
    return info;
}

bool write_json(const std::string &path, const RunInfo &info, const std::vector<CaseResult> &results) {
    const auto optional_text = [](const std::string &s) { return s.empty() ? nullptr : s.c_str(); };
    int failed = 0;
    gpk_app::JsonWriter json;
    json.begin_object()
        .field("tool", "gpk-bench")
        .field("libgpk", gpk_app::library_version())
        .field("date", info.date)
        .field("backend", info.backend)
        .field("device", info.device)
        .field("device_index", info.device_index)
        .field("compute_capability", optional_text(info.compute_capability))
        .field("sm_count", info.sm_count)
        .field("cuda_driver", optional_text(info.cuda_driver))
        .field("cuda_runtime", optional_text(info.cuda_runtime))
        .field("quick", info.quick)
        .field("repeat", info.repeat)
        .field("min_timed_ms", info.min_timed_ms)
        .field("short_repeat", info.short_repeat)
        .field("memory", info.memory)
        .field("timing", info.memory == "device" ? "cuda events" : "steady clock")
        .field("order", "shuffled turns")
        .field("l2_flush_bytes", static_cast<uint64_t>(info.l2_flush_bytes))
        // What runs between the flush and each timed call (harness.cpp, Timer::time).
        .field("after_flush", info.l2_flush_bytes > 0 ? "one-block kernel" : static_cast<const char *>(nullptr));
    json.begin_array("results");
    for (const CaseResult &r : results) {
        bool kinds = r.has_ceilings;
        for (const Row &row : r.rows) kinds = kinds || row.auto_pick;
        if (!r.error.empty()) {
            ++failed;
            json.begin_object().field("op", r.op).field("dtype", r.dtype);
            for (const auto &[name, value] : r.sizes) json.field(name, value);
            json.field("memory", r.memory);
            json.field("ok", false).field("status", "FAILED").field("error", r.error).end_object();
        }
        for (const Row &row : r.rows) {
            failed += row.failed();
            json.begin_object().field("op", r.op).field("dtype", r.dtype);
            for (const auto &[name, value] : r.sizes) json.field(name, value);
            json.field("memory", r.memory);
            const std::optional<double> median = row.timed() ? std::optional<double>(row.median_ms) : std::nullopt;
            const std::optional<double> min = row.timed() ? std::optional<double>(row.min_ms) : std::nullopt;
            const std::optional<double> tp = row.timed() ? std::optional<double>(row.throughput) : std::nullopt;
            json.field("variant", row.variant);
            // A ceiling, or "auto", is no rung of the ladder: no index.
            if (row.ceiling || row.auto_pick)
                json.null_field("index");
            else
                json.field("index", row.index);
            if (kinds) json.field("kind", row.ceiling ? "ceiling" : row.auto_pick ? "auto" : "variant");
            if (row.auto_pick) json.field("ran", row.ran);  // the rung "auto" ran
            json.field("median_ms", median)
                .field("min_ms", min)
                .field("repeats", row.repeats)
                .field("time_boxed", row.time_boxed)
                .field("throughput", tp)
                .field("unit", r.unit)
                .field("ratio_to_vendor", row.ratio_to_vendor)
                .field("speedup_over_first", row.speedup_over_first)
                .field("step_speedup", row.step_speedup);
            // The ratio to the first ceiling, under the case's key: "ratio_to_copy"
            // (transpose; with --memory pinned, to the h2d copy) or
            // "ratio_to_simple_fused" (pi); "<key>_of" says what it is against:
            // "copy", "h2d" or "simple fused".
            if (r.has_ceilings) {
                const std::string &key = r.yardstick.json_key;
                json.field(key.c_str(), row.ratio_to_ceiling);
                json.field((key + "_of").c_str(), r.yardstick.label);
            }
            // The case's shape note (layout, transposition, math mode, dtypes' call), which
            // tells apart cases of equal sizes; then its roofline (roofline.cpp) and the
            // row's fraction of it.
            if (!r.note.empty()) json.field("note", r.note);
            if (r.roofline) {
                json.field("roofline_ms", r.roofline->ms)
                    .field("roofline_bound", r.roofline->compute_bound ? "compute" : "memory")
                    .field("copy_gbs", r.roofline->copy_gbs)
                    .field("peak_tflops", r.roofline->peak_tflops)
                    .field("roofline_fraction", row.roofline_fraction);
            }
            // --kernels: what one call launched (kernels.cpp); -1 becomes null.
            if (row.kernels) {
                const auto dims = [&](const char *key, const unsigned *d) {
                    json.begin_array(key);
                    for (int i = 0; i < 3; ++i) json.field(nullptr, static_cast<uint64_t>(d[i]));
                    json.end_array();
                };
                json.begin_array("kernels");
                for (const KernelInfo &k : *row.kernels) {
                    json.begin_object().field("name", k.name);
                    dims("grid", k.grid);
                    dims("block", k.block);
                    const auto known = [](double v) { return v >= 0 ? std::optional<double>(v) : std::nullopt; };
                    json.field("regs_per_thread", known(k.regs))
                        .field("static_smem_bytes", known(double(k.static_smem)))
                        .field("dynamic_smem_bytes", static_cast<uint64_t>(k.dynamic_smem))
                        .field("blocks_per_sm", known(k.blocks_per_sm))
                        .field("occupancy_percent", known(k.warps_percent))
                        .field("launches", k.launches)
                        .end_object();
                }
                json.end_array();
            }
            json.field("ok", !row.failed())
                .field("status", status_name(row.status))
                .field("check", row.detail)
                .end_object();
        }
    }
    json.end_array();
    json.field("failed", failed).end_object();

    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    file << json.str();
    file.close();
    return static_cast<bool>(file);
}

}  // namespace gpk_bench
