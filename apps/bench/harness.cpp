// The harness: for each variant of a case's op, in ladder order -- select it by
// name, run it once on poisoned output and check it; then time the variants that
// passed in turns, one call of each per turn, with L2 flushed before every call.
// Variant 0 (the vendor library; the reference on the host backend)
// runs first and its output is the reference. When asked for, "auto" (the library's
// own choice) follows the ladder as a row of its own. Where the case has ceilings
// (CUDA only), they are checked and timed, each in a block of its own, before the
// ladder, so that every row can show its ratio to the first (the copy; for pi, the
// simple fused reference), and their rows are printed after it.
//
// Turns rather than each variant's calls in a block: the GPU's clocks climb for a
// while after it was idle and fall once a long run meets the power cap, so a block of
// calls carries the clock its place in the order met, and the order alone would move
// the ratios between rows. In turns every variant meets the same drift. The order
// inside a turn counts too: where calls take microseconds, some calls meet a fixed
// delay that others do not, whichever kernel they run, and which ones follows the
// pattern of the turns, so a fixed order (or one rotated by a place each turn) gave
// the same kernel different medians in different rows (docs/PERFORMANCE.md, section
// "gpk-bench: the order inside a turn"). So each turn runs its variants in an order
// drawn at random, and every variant meets that delay as often as the others. The
// delay comes with starting right after the L2 flush, and a one-block kernel queued
// after the flush (Timer::time) spares nearly every call of it; the order stays random
// for what remains.
// Each timed call follows an untimed one of the same variant (time_in_turns).
//
// With --memory pinned the arrays are pinned host memory: each call is staged
// through the GPU and returns with its result in place, so it is timed with a
// steady clock around the call (and a wait on the stream, idle by then), with no
// L2 flush; the ceilings are the link's copies (link_ceilings), timed the same way.
#include "bench.hpp"
#include "ceilings.hpp"
#include "kernels.hpp"
#include "timer.hpp"

#include "../common/cli.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <chrono>
#include <new>
#include <numeric>
#include <random>

namespace gpk_bench {
namespace {

std::string failure_text(const char *what, gpk_status st, const gpk_context *ctx) {
    return std::string(what) + ": " + gpk_status_string(st) + ": " + gpk_last_error(ctx);
}

// The row's timing from its timed calls, each of which did `work` (in the case's
// units).
void record_times(const Case &c, double work, const std::vector<double> &ms, Row &row) {
    row.repeats = static_cast<int>(ms.size());
    row.median_ms = median(ms);
    row.min_ms = *std::min_element(ms.begin(), ms.end());
    row.throughput = work / (row.median_ms * 1e-3) / c.unit_scale();
}

// Makes row.variant the one the case's calls run ("auto" for the library's choice).
gpk_status select(Env &env, Case &c, const Row &row) {
    c.set_variant(row.variant);
    return gpk_set_variant(env.ctx, c.op(), row.variant.c_str());
}

// Checks the variant of `row`; the case's reference is set by variant 0.
// Returns how many calls of it to time (0 where it failed or cannot take the case).
int prepare(Env &env, Case &c, const RunOptions &opt, Timer &timer, Row &row) {
    gpk_context *ctx = env.ctx;
    gpk_status st = select(env, c, row);
    if (st != GPK_SUCCESS) {
        row.status = Row::Status::kFailed;
        row.detail = failure_text("gpk_set_variant", st, ctx);
        return 0;
    }

    c.poison();
    const auto t0 = Clock::now();
    st = c.call(ctx);
    if (st == GPK_SUCCESS) st = gpk_synchronize(ctx);
    const double first_call_s = seconds_since(t0);
    if (st == GPK_ERROR_NOT_SUPPORTED) {
        row.status = Row::Status::kUnsupported;
        row.detail = gpk_last_error(ctx);
        return 0;
    }
    if (st != GPK_SUCCESS) {
        row.status = Row::Status::kFailed;
        row.detail = failure_text("first call", st, ctx);
        return 0;
    }
    // What "auto" ran: the same rung on every call of the case (one table, one call).
    if (row.auto_pick) {
        const char *ran = gpk_last_variant(ctx, c.op());
        row.ran = ran != nullptr ? ran : "?";
    }

    if (row.index == 0) {
        c.keep_reference();
    } else if (!c.has_reference()) {
        gpk_context *host = env.host_reference_ctx();
        const gpk_status ref = host ? c.host_reference(host) : GPK_ERROR_NO_DEVICE;
        if (ref != GPK_SUCCESS) {
            row.status = Row::Status::kUnchecked;
            row.detail = failure_text("no reference: host backend", ref, host);
        }
    }
    if (c.has_reference()) {
        const Check verdict = c.check(env.cuda && row.index == 0);
        row.detail = verdict.detail;
        if (!verdict.ok) {
            // A wrong answer has no speed worth reporting.
            row.status = Row::Status::kFailed;
            return 0;
        }
    }

    // The checked call paid for one-time setup (handles, workspace, module loading);
    // the untimed call before each timed one (time_in_turns) gives the steady state.
    row.time_boxed = first_call_s > opt.time_box_s;
    if (row.time_boxed) return std::min(opt.repeat, opt.time_boxed_repeat);
    // Short calls: timed calls (after the checked one, as in the turns) size the row's
    // count, the least of three, since one can come out slow, and a short row sized by
    // a slow one alone would time fewer calls than the rows beside it
    // (docs/PERFORMANCE.md, section "How the figures are taken"). A first call long by
    // a wide margin decides alone.
    double ms = 0;
    if (opt.min_timed_ms <= 0 || timer.time(c, &ms) != GPK_SUCCESS || ms * opt.repeat >= 4 * opt.min_timed_ms)
        return opt.repeat;
    for (int i = 0; i < 2; ++i) {
        double again = 0;
        if (timer.time(c, &again) == GPK_SUCCESS) ms = std::min(ms, again);
    }
    if (ms * opt.repeat >= opt.min_timed_ms) return opt.repeat;
    return ms > 0 ? static_cast<int>(std::min<double>(opt.short_repeat, std::ceil(opt.min_timed_ms / ms)))
                  : opt.short_repeat;
}

// Times the prepared rows in turns, `repeats[i]` calls of rows[i] (see the top of the
// file for why), and records each row's times. A row whose call fails is left out of
// the later turns.
void time_in_turns(Env &env, Case &c, Timer &timer, std::vector<Row> &rows, const std::vector<int> &repeats) {
    std::vector<std::vector<double>> ms(rows.size());
    const int turns = repeats.empty() ? 0 : *std::max_element(repeats.begin(), repeats.end());
    // Each turn in an order of its own, drawn from a fixed seed so that a run can be
    // repeated (see the top of the file for why).
    std::vector<size_t> order(rows.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::mt19937 draw(20261127u);
    for (int turn = 0; turn < turns; ++turn) {
        std::shuffle(order.begin(), order.end(), draw);
        for (const size_t i : order) {
            Row &row = rows[i];
            if (turn >= repeats[i] || row.failed()) continue;
            try {
                gpk_status st = select(env, c, row);
                // An untimed call first, as a block of calls would have made: the timed
                // call then finds its code in the SMs' caches and the clocks it drives,
                // not what the variant before it left. (Not for the slow rows, whose
                // calls are long enough not to feel it.)
                if (st == GPK_SUCCESS && !row.time_boxed) st = c.call(env.ctx);
                double t = 0;
                if (st == GPK_SUCCESS) st = timer.time(c, &t);
                if (st != GPK_SUCCESS) {
                    row.status = Row::Status::kFailed;
                    row.detail = failure_text("timed call", st, env.ctx);
                    continue;
                }
                ms[i].push_back(t);
            } catch (const Error &e) {
                row.status = Row::Status::kFailed;
                row.detail = e.what();
            }
        }
    }
    const gpk_status st = gpk_synchronize(env.ctx);
    for (size_t i = 0; i < rows.size(); ++i) {
        Row &row = rows[i];
        if (row.failed() || ms[i].empty()) continue;
        if (st != GPK_SUCCESS) {
            row.status = Row::Status::kFailed;
            row.detail = failure_text("gpk_synchronize", st, env.ctx);
            continue;
        }
        record_times(c, c.work(), ms[i], row);
    }
}

// Fills `row` for a ceiling: checked on poisoned output, one warm-up call, then
// timed like a variant. Errors come as Error.
void measure_ceiling(Env &env, Case &c, Timer &timer, const RunOptions &opt, const Ceiling &ceiling, Row &row) {
    c.poison();
    if (ceiling.setup) ceiling.setup();
    ceiling.launch(env.stream);
    env.sync();
    const Check verdict = ceiling.check();
    row.detail = verdict.detail;
    if (!verdict.ok) {
        row.status = Row::Status::kFailed;
        return;
    }
    ceiling.launch(env.stream);
    env.sync();
    std::vector<double> ms(static_cast<size_t>(opt.repeat));
    for (double &t : ms) {
        timer.time(
            [&] {
                ceiling.launch(env.stream);
                return GPK_SUCCESS;
            },
            &t);
    }
    record_times(c, ceiling.work > 0 ? ceiling.work : c.work(), ms, row);
}

// --kernels: one more call of each row that ran, untimed and after the timed ones, so
// that CUPTI is never in the way of a timed call; its launches become the row's kernels.
// A row whose call fails now keeps its times and goes without them.
void record_kernels(Env &env, Case &c, KernelRecorder &recorder, std::vector<Row> &rows) {
    for (Row &row : rows) {
        if (row.failed() || row.status == Row::Status::kUnsupported) continue;
        try {
            gpk_status st = select(env, c, row);
            if (st != GPK_SUCCESS) continue;
            std::vector<KernelInfo> kernels = recorder.record(
                [&] {
                    const gpk_status s = c.call(env.ctx);
                    return s == GPK_SUCCESS ? gpk_synchronize(env.ctx) : s;
                },
                &st);
            if (st == GPK_SUCCESS) row.kernels = std::move(kernels);
        } catch (const Error &e) {
            std::fprintf(stderr, "gpk-bench: no kernels for %s: %s\n", row.variant.c_str(), e.what());
        }
    }
}

std::optional<double> ratio(const Row &num, const Row &den) {
    if (!num.timed() || !den.timed() || den.throughput <= 0) return std::nullopt;
    return num.throughput / den.throughput;
}

// Variant 0 is the vendor; the ladder of ours starts at rung 1 (on a one-variant
// ladder, variant 0 itself), or, for a dtype the first rungs do not take (the 16-bit
// ones start at the tensor-core rungs), at the first rung that ran. A step is the
// speedup over the rung below that ran, cumulative the speedup over that first one.
// `rows` holds variants only.
void fill_ratios(std::vector<Row> &rows, size_t ladder_size) {
    size_t first = ladder_size > 1 ? 1 : 0;
    while (first + 1 < rows.size() && !rows[first].timed()) ++first;
    size_t below = first;
    for (size_t i = 0; i < rows.size(); ++i) {
        rows[i].ratio_to_vendor = ratio(rows[i], rows[0]);
        rows[i].speedup_over_first = first < rows.size() && i >= first ? ratio(rows[i], rows[first]) : std::nullopt;
        rows[i].step_speedup = i > first ? ratio(rows[i], rows[below]) : std::nullopt;
        if (i > first && rows[i].timed()) below = i;
    }
}

}  // namespace

std::string Case::dtype_label() const { return gpk_app::dtype_name(dtype()); }

const char *status_name(Row::Status status) {
    switch (status) {
        case Row::Status::kOk: return "ok";
        case Row::Status::kFailed: return "FAILED";
        case Row::Status::kUnsupported: return "unsupported";
        case Row::Status::kUnchecked: return "unchecked";
    }
    return "?";
}

CaseResult run_case(Env &env, Case &c, const RunOptions &opt) {
    CaseResult r;
    r.op = c.op_name();
    r.dtype = c.dtype_label();
    r.sizes = c.sizes();
    r.unit = c.unit();
    r.memory = env.memory_name();
    r.yardstick = c.yardstick();
    if (env.pinned) {
        r.yardstick = {"h2d", "h2d copy", "ratio_to_copy"};
        r.link_duplex = c.link_duplex();
    }
    const auto listed = [&](const char *name) {
        return std::find(opt.variants.begin(), opt.variants.end(), name) != opt.variants.end();
    };
    const auto wanted = [&](const std::string &name) {
        return opt.variants.empty() || listed("all") || listed(name.c_str());
    };
    // "auto" runs only when asked for by name: with every variant, the ladder has it.
    const bool run_auto = listed("auto");

    int count = 0;
    gpk_status st = gpk_variant_count(env.ctx, c.op(), &count);
    if (st != GPK_SUCCESS) {
        r.error = failure_text("gpk_variant_count", st, env.ctx);
        return r;
    }
    std::vector<std::string> names;
    for (int i = 0; i < count; ++i) {
        const char *name = gpk_variant_name(env.ctx, c.op(), i);
        names.push_back(name ? name : "");
        r.name_width = std::max(r.name_width, static_cast<int>(names.back().size()));
    }
    std::vector<Ceiling> ceilings;
    if (env.cuda) ceilings = c.ceilings();
    r.has_ceilings = !ceilings.empty();
    for (const Ceiling &ceiling : ceilings)
        r.name_width = std::max(r.name_width, static_cast<int>(ceiling.name.size()));
    // The roofline's copy and peak are measured (once per run) before the case's arrays
    // exist; a failure there leaves the case without the column.
    if (const std::optional<RooflineWork> work = c.roofline_work()) {
        try {
            r.roofline = roofline_of(env, *work);
        } catch (const Error &e) {
            std::fprintf(stderr, "gpk-bench: no roofline: %s\n", e.what());
        }
    }
    r.note = c.shape_note();
    print_table_header(env, r, r.note);

    try {
        c.prepare();
        Timer timer(env);
        std::vector<Row> ceiling_rows;
        for (const Ceiling &ceiling : ceilings) {
            Row row;
            row.variant = ceiling.name;
            row.ceiling = true;
            try {
                measure_ceiling(env, c, timer, opt, ceiling, row);
            } catch (const Error &e) {
                row.status = Row::Status::kFailed;
                row.detail = e.what();
            }
            ceiling_rows.push_back(row);
        }
        for (Row &row : ceiling_rows) row.ratio_to_ceiling = ratio(row, ceiling_rows.front());

        // Each variant asked for, in ladder order, then "auto": checked one after
        // another (variant 0's output is the reference of the others'),
        // then timed in turns.
        std::vector<Row> rows;
        std::vector<int> repeats;
        auto add = [&](Row row) {
            int n = 0;
            try {
                n = prepare(env, c, opt, timer, row);
            } catch (const Error &e) {
                row.status = Row::Status::kFailed;
                row.detail = e.what();
            }
            rows.push_back(row);
            repeats.push_back(n);
        };
        for (int i = 0; i < count; ++i) {
            const std::string &name = names[static_cast<size_t>(i)];
            if (i > 0 && !wanted(name)) continue;
            Row row;
            row.index = i;
            row.variant = name;
            add(row);
        }
        if (run_auto) {
            Row row;
            row.index = -1;
            row.auto_pick = true;
            row.variant = "auto";
            add(row);
        }
        // The rows of short calls time as many as the one that asked for most, so that
        // the vendor's row and ours rest on equally many.
        if (opt.min_timed_ms > 0 && !repeats.empty()) {
            const int most = *std::max_element(repeats.begin(), repeats.end());
            for (int &n : repeats)
                if (n > opt.repeat) n = most;
        }
        time_in_turns(env, c, timer, rows, repeats);
        if (opt.kernels) record_kernels(env, c, *opt.kernels, rows);
        for (Row &row : rows)
            if (r.roofline && row.timed()) row.roofline_fraction = r.roofline->ms / row.median_ms;

        for (const Row &row : rows)
            if (!row.auto_pick) r.rows.push_back(row);
        fill_ratios(r.rows, names.size());
        for (Row &row : r.rows) {
            if (!ceiling_rows.empty()) row.ratio_to_ceiling = ratio(row, ceiling_rows.front());
            print_row(r, row);
            print_kernels(row);
        }
        if (run_auto) {
            Row row = rows.back();
            if (!r.rows.empty()) row.ratio_to_vendor = ratio(row, r.rows.front());
            if (!ceiling_rows.empty()) row.ratio_to_ceiling = ratio(row, ceiling_rows.front());
            r.rows.push_back(row);
            print_row(r, row);
            print_kernels(row);
        }
        for (Row &row : ceiling_rows) {
            if (!r.rows.empty()) row.ratio_to_vendor = ratio(row, r.rows.front());
            r.rows.push_back(row);
            print_row(r, row);
        }
        if (r.has_ceilings) print_ceiling_summary(r);
    } catch (const Error &e) {
        r.error = e.what();
        print_case_error(r);
    } catch (const std::bad_alloc &) {
        // Host memory the case's sizes passed need_host_memory with but did not get:
        // the case fails, the run goes on with the next.
        r.error = "out of host memory for the case's arrays";
        print_case_error(r);
    }
    // Later cases, and anyone reusing the context, start from the default again.
    gpk_set_variant(env.ctx, c.op(), nullptr);
    return r;
}

}  // namespace gpk_bench
