#include "timeline.hpp"

#include "stages.hpp"

#include "../common/cli.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>

namespace gpk_gemm_app {
namespace {

// Geometry, in SVG user units (pixels).
constexpr double kWidth = 1200;
constexpr double kLeft = 150;   // lane labels
constexpr double kRight = 24;
constexpr double kTop = 96;     // title, subtitle, legend
constexpr double kLane = 22;    // lane pitch
constexpr double kBox = 16;     // box height
constexpr double kGap = 14;     // between the engine lanes and the stream lanes
constexpr double kAxis = 44;    // tick labels and the axis title
constexpr double kMinBox = 0.5; // so that the shortest event still shows

// Tableau colors: copies in blue and green on either side of compute in orange.
const char *const kColors[kStageKinds] = {"#4e79a7", "#f28e2b", "#59a14f"};
const char *const kEngineLanes[kStageKinds] = {"H2D copies", "kernels", "D2H copies"};

std::string xml_escape(const std::string &text) {
    std::string out;
    for (char c : text) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            default: out += c;
        }
    }
    return out;
}

std::string format(const char *fmt, double a, double b = 0, double c = 0, double d = 0) {
    char buf[160];
    std::snprintf(buf, sizeof buf, fmt, a, b, c, d);
    return buf;
}

// A round tick step (1, 2 or 5 times a power of ten) giving at most ~10 ticks.
double tick_step(double span) {
    if (!(span > 0)) return 1;
    const double raw = span / 10;
    const double decade = std::pow(10.0, std::floor(std::log10(raw)));
    for (double m : {1.0, 2.0, 5.0, 10.0})
        if (m * decade >= raw) return m * decade;
    return 10 * decade;
}

std::string tick_label(double ms, double step) {
    // As many decimals as the step needs, no more.
    const int decimals = step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, ms);
    return buf;
}

std::string tooltip(const gpk_stage_event &e) {
    std::string text = std::string(stage_label(e.kind)) + ", chunk " + std::to_string(e.chunk) + ", stream " +
                       std::to_string(e.stream) + ": " +
                       format("%.3f to %.3f ms (%.3f ms)", e.start_ms, e.end_ms, e.end_ms - e.start_ms);
    if (e.bytes > 0) {
        const double ms = e.end_ms - e.start_ms;
        text += ", " + gpk_app::format_bytes(e.bytes);
        if (ms > 0) text += format(", %.1f GB/s", static_cast<double>(e.bytes) / (ms * 1e6));
    }
    return text;
}

}  // namespace

std::string timeline_svg(const std::vector<gpk_stage_event> &events, const std::string &title,
                         const std::string &subtitle) {
    std::set<int32_t> stream_set;
    double t0 = 0, t1 = 0;
    for (const gpk_stage_event &e : events) {
        stream_set.insert(e.stream);
        t0 = std::min(t0, e.start_ms);
        t1 = std::max(t1, e.end_ms);
    }
    if (!(t1 > t0)) t1 = t0 + 1;
    const std::vector<int32_t> streams(stream_set.begin(), stream_set.end());

    const double plot_w = kWidth - kLeft - kRight;
    const double engines_y = kTop;
    const double streams_y = engines_y + kStageKinds * kLane + kGap;
    const double plot_bottom = streams_y + static_cast<double>(streams.size()) * kLane;
    const double height = plot_bottom + kAxis;
    const auto x_of = [&](double ms) { return kLeft + (ms - t0) / (t1 - t0) * plot_w; };
    const auto stream_row = [&](int32_t s) {
        return static_cast<double>(std::lower_bound(streams.begin(), streams.end(), s) - streams.begin());
    };

    std::string svg;
    svg += format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
                  "font-family=\"Helvetica, Arial, sans-serif\">\n",
                  kWidth, height, kWidth, height);
    svg += format("<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"white\"/>\n", kWidth, height);
    svg += format("<text x=\"%.1f\" y=\"24\" font-size=\"16\" font-weight=\"bold\">", kLeft - 130) +
           xml_escape(title) + "</text>\n";
    svg += format("<text x=\"%.1f\" y=\"44\" font-size=\"12\" fill=\"#333\">", kLeft - 130) + xml_escape(subtitle) +
           "</text>\n";

    // Legend.
    double lx = kLeft;
    for (int k = 0; k < kStageKinds; ++k) {
        svg += format("<rect x=\"%.1f\" y=\"60\" width=\"14\" height=\"12\" fill=\"", lx) + kColors[k] + "\"/>\n";
        svg += format("<text x=\"%.1f\" y=\"70\" font-size=\"12\">", lx + 19) + stage_label(k) + "</text>\n";
        lx += 150;
    }

    // Grid and time axis.
    const double step = tick_step(t1 - t0);
    svg += "<g stroke=\"#ddd\" stroke-width=\"1\">\n";
    for (double t = std::ceil(t0 / step) * step; t <= t1 + step * 1e-9; t += step)
        svg += format("<line x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\"/>\n", x_of(t), engines_y - 4, x_of(t),
                      plot_bottom);
    svg += "</g>\n<g font-size=\"11\" text-anchor=\"middle\">\n";
    for (double t = std::ceil(t0 / step) * step; t <= t1 + step * 1e-9; t += step)
        svg += format("<text x=\"%.2f\" y=\"%.1f\">", x_of(t), plot_bottom + 16) + tick_label(t, step) + "</text>\n";
    svg += format("<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\">time since the start of the call (ms)</text>\n",
                  kLeft + plot_w / 2, plot_bottom + 36);
    svg += "</g>\n";

    // Lane labels and backgrounds.
    svg += "<g font-size=\"12\" text-anchor=\"end\">\n";
    for (int k = 0; k < kStageKinds; ++k) {
        const double y = engines_y + k * kLane;
        svg += format("<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#f4f4f4\"/>\n", kLeft, y,
                      plot_w, kBox);
        svg += format("<text x=\"%.1f\" y=\"%.1f\">", kLeft - 8, y + kBox - 4) + kEngineLanes[k] + "</text>\n";
    }
    for (size_t r = 0; r < streams.size(); ++r) {
        const double y = streams_y + static_cast<double>(r) * kLane;
        svg += format("<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#f4f4f4\"/>\n", kLeft, y,
                      plot_w, kBox);
        svg += format("<text x=\"%.1f\" y=\"%.1f\">stream ", kLeft - 8, y + kBox - 4) + std::to_string(streams[r]) +
               "</text>\n";
    }
    svg += "</g>\n";

    // The events: once in their engine's lane, once in their stream's lane.
    svg += "<g stroke=\"white\" stroke-width=\"0.3\">\n";
    for (const gpk_stage_event &e : events) {
        if (e.kind < 0 || e.kind >= kStageKinds) continue;
        const double x = x_of(e.start_ms), w = std::max(kMinBox, x_of(e.end_ms) - x);
        const std::string tip = "<title>" + xml_escape(tooltip(e)) + "</title>";
        for (double y : {engines_y + e.kind * kLane, streams_y + stream_row(e.stream) * kLane}) {
            svg += format("<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"", x, y, w, kBox) +
                   kColors[e.kind] + "\">" + tip + "</rect>\n";
        }
        // The chunk number, where the box in the stream lane has room for it.
        if (w >= 18)
            svg += format("<text x=\"%.2f\" y=\"%.1f\" font-size=\"9\" fill=\"white\" stroke=\"none\" "
                          "text-anchor=\"middle\">",
                          x + w / 2, streams_y + stream_row(e.stream) * kLane + kBox - 4) +
                   std::to_string(e.chunk) + "</text>\n";
    }
    svg += "</g>\n";
    svg += format("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>\n", kLeft, plot_bottom,
                  kLeft + plot_w, plot_bottom);
    svg += "</svg>\n";
    return svg;
}

bool write_text_file(const std::string &path, const std::string &text, std::string *error) {
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    if (file) file << text;
    file.close();
    if (!file) {
        *error = "cannot write " + path + ": " + std::strerror(errno);
        return false;
    }
    return true;
}

}  // namespace gpk_gemm_app
