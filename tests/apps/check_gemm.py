#!/usr/bin/env python3
"""Checks gpk-gemm's report, its options and its timeline; the app tests run it.

usage: check_gemm.py json [--expect KEY=VALUE]... APP ARGS...
       check_gemm.py timeline SVG APP ARGS...
       check_gemm.py svg SAMPLE SVG
       check_gemm.py usage APP

  json      APP ARGS --json must exit 0 and print one JSON object with every key a
            script charts from, of the right types; the validation (when asked for)
            must find nothing wrong; each --expect KEY=VALUE must hold (VALUE as JSON).
            On the host backend the stage figures must be null with a note saying
            why; on the GPU they must be there, with a trace of the overlapped run.
            With --backend cuda and no usable GPU, the check is skipped (exit 77).
  timeline  APP ARGS --timeline SVG must exit 0. On the host backend, which has no
            stages, it must write nothing and say so; on the GPU, SVG must be a
            well-formed SVG document with one box per event and a lane per stream.
  svg       SAMPLE (tests/apps/timeline_sample.cpp) writes the timeline of a made-up
            trace to SVG, which must be well formed with the boxes, lanes and legend
            the trace calls for: the picture is checked without a GPU.
  usage     bad options must exit 2 with a message, --help 0 with the usage.
"""

import json
import os
import sys
import xml.etree.ElementTree as ET

from app_check import expect, run

SVG_NS = "{http://www.w3.org/2000/svg}"
KINDS = ("copy_in", "compute", "copy_out")


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def check_stage_run(doc, key, streams):
    r = doc[key]
    elem = 8 if doc["dtype"] == "f64" else 4
    m, n, k = doc["m"], doc["n"], doc["k"]
    expect(isinstance(r, dict), f"{key} run reported")
    expect(r["streams"] == streams, f"{key} run on {streams} stream(s)")
    for field in ("elapsed_s", "best_s", "tflops", "transfer_s", "compute_s", "link_gbps", "copy_gbps"):
        expect(is_number(r[field]) and r[field] >= 0, f"{key}.{field} = {r[field]}")
    # Host arrays: A and B must cross the link to the GPU, C back, at least once each.
    copied_in, copied_out = r["stages"]["copy_in"]["bytes"], r["stages"]["copy_out"]["bytes"]
    expect(copied_in >= (m * k + k * n) * elem, f"{key}: {copied_in} bytes copied in, A and B at least")
    expect(copied_out >= m * n * elem, f"{key}: {copied_out} bytes copied out, C at least")
    expect(r["bytes_copied"] == copied_in + copied_out, f"{key}: bytes_copied is their sum")
    for kind in KINDS:
        s = r["stages"][kind]
        expect(all(is_number(s[f]) for f in ("sum_s", "busy_s", "bytes")), f"{key}.stages.{kind} has its figures")
        expect(s["busy_s"] <= s["sum_s"] * (1 + 1e-9) + 1e-12, f"{key}.stages.{kind}: busy time <= summed time")


def check_json(argv):
    expectations = []
    while argv and argv[0] == "--expect":
        key, _, value = argv[1].partition("=")
        expectations.append((key, json.loads(value)))
        argv = argv[2:]
    args = argv + ["--json"]
    doc = json.loads(run(args).stdout)
    expect(doc.get("tool") == "gpk-gemm", "a gpk-gemm report")
    keys = ["backend", "device", "variant", "dtype", "m", "n", "k", "flops", "host_memory", "streams", "overlap",
            "chunk_bytes", "device_bytes", "repeats", "timing", "elapsed_s", "best_s", "gflops", "tflops",
            "stage_breakdown", "sequential", "overlapped", "transfer_s", "compute_s", "overlap_efficiency",
            "predicted_speedup", "ideal_speedup", "measured_speedup", "validation", "trace", "libgpk"]
    missing = [k for k in keys if k not in doc]
    expect(not missing, f"every key is there (missing: {missing})")
    for key, value in expectations:
        expect(doc[key] == value, f"{key} == {value!r} (got {doc[key]!r})")
    expect(is_number(doc["elapsed_s"]) and doc["elapsed_s"] > 0, f"elapsed_s = {doc['elapsed_s']}")
    expect(is_number(doc["gflops"]) and doc["gflops"] > 0, f"gflops = {doc['gflops']}")
    expect(doc["flops"] == 2 * doc["m"] * doc["n"] * doc["k"], "flops = 2 m n k")
    expect(doc["overlap"] == (doc["streams"] > 1), "overlap means more than one stream")
    if "--validate" in argv:
        v = doc["validation"]
        expect(isinstance(v, dict) and v["checked"] > 0, f"{v and v['checked']} entries validated")
        expect(v["wrong"] == 0, "no entry wrong")
    else:
        expect(doc["validation"] is None, "no validation unless asked for")

    if doc["backend"] == "host":
        expect(doc["stage_breakdown"] is False and "GPU" in doc.get("note", ""),
               "the host backend says it has no stages")
        expect(doc["host_memory"] == "pageable", "plain host memory on the host backend")
        for key in ("sequential", "overlapped", "transfer_s", "compute_s", "overlap_efficiency", "predicted_speedup",
                    "ideal_speedup", "measured_speedup", "trace"):
            expect(doc[key] is None, f"{key} is null on the host backend")
        return

    # The GPU: the 1-stream run always, the overlapped one unless --no-overlap.
    expect(doc["stage_breakdown"] is True, "the GPU reports the stages")
    expect(doc["host_memory"] == ("pageable" if "--pageable" in argv else "pinned"), "host memory as asked")
    check_stage_run(doc, "sequential", 1)
    for key in ("transfer_s", "compute_s", "predicted_speedup", "ideal_speedup"):
        expect(is_number(doc[key]) and doc[key] > 0, f"{key} = {doc[key]}")
    trace = doc["trace"]
    if doc["overlap"]:
        check_stage_run(doc, "overlapped", doc["streams"])
        for key in ("overlap_efficiency", "measured_speedup"):
            expect(is_number(doc[key]) and doc[key] > 0, f"{key} = {doc[key]}")
        expect(trace["run"] == "overlapped", "the trace is the overlapped run's")
    else:
        expect(doc["overlapped"] is None and doc["overlap_efficiency"] is None, "no overlapped run")
        expect(trace["run"] == "sequential", "the trace is the 1-stream run's")
    events = trace["events"]
    expect(len(events) > 0, f"{len(events)} trace events")
    expect(all(e["kind"] in KINDS for e in events), "every event is a copy-in, a kernel or a copy-out")
    expect(all(0 <= e["stream"] < trace["streams"] for e in events), "every event on a pipeline stream")
    expect(all(e["end_ms"] >= e["start_ms"] >= 0 for e in events), "every event ends after it starts")
    expect(all((e["bytes"] > 0) == (e["kind"] != "compute") for e in events), "copies move bytes, kernels none")


def svg_boxes(path):
    root = ET.parse(path).getroot()
    expect(root.tag == SVG_NS + "svg", f"{path} is an SVG document")
    rects = [r for r in root.iter(SVG_NS + "rect") if r.find(SVG_NS + "title") is not None]
    texts = [t.text or "" for t in root.iter(SVG_NS + "text")]
    return rects, texts


def check_timeline(argv):
    svg, app_args = argv[0], argv[1:]
    if os.path.exists(svg):
        os.remove(svg)
    done = run(app_args + ["--timeline", svg, "--json"])
    doc = json.loads(done.stdout)
    if doc["backend"] == "host":
        expect(not os.path.exists(svg), "the host backend writes no timeline")
        expect("not written" in done.stderr and "host backend" in done.stderr, "and says why")
        return
    events = doc["trace"]["events"]
    rects, texts = svg_boxes(svg)
    # Each event is drawn twice: in its engine's lane and in its stream's lane.
    expect(len(rects) == 2 * len(events), f"{len(rects)} boxes for {len(events)} events")
    streams = {e["stream"] for e in events}
    expect(all(f"stream {s}" in texts for s in streams), f"a lane for each of the {len(streams)} streams")


def check_svg(argv):
    sample, svg = argv
    if os.path.exists(svg):
        os.remove(svg)
    done = run([sample, svg])
    events, streams = (int(x) for x in done.stdout.split())
    rects, texts = svg_boxes(svg)
    expect(len(rects) == 2 * events, f"{len(rects)} boxes for {events} events")
    expect(all(f"stream {s}" in texts for s in range(streams)), f"a lane for each of the {streams} streams")
    for label in ("copy-in (H2D)", "compute", "copy-out (D2H)", "H2D copies", "kernels", "D2H copies"):
        expect(label in texts, f"'{label}' in the legend or the lanes")
    expect(any("ms" in t for t in texts), "a time axis in ms")
    expect(any("efficiency" in t for t in texts), "the title's figures")


def check_usage(argv):
    app = argv[0]
    common = [app, "7", "--backend", "host"]
    bad = [
        ["--streams", "0"],
        ["--streams", "17"],
        ["--streams"],
        ["--chunk", "abc"],
        ["--chunk", "1.3K"],
        ["--chunk", "0"],
        ["--device-memory", "-1G"],
        ["--no-overlap", "--streams", "4"],
        ["--timeline"],
        ["--bogus"],
    ]
    for extra in bad:
        done = run(common + extra, want_rc=2)
        expect(done.stderr.strip() != "", f"{' '.join(extra)}: exit 2 with a message")
    done = run([app, "--help"])
    expect("--streams" in done.stdout and "--timeline" in done.stdout, "--help prints the usage")
    # Suffixes and sizes that are good.
    for extra in (["--chunk", "64M"], ["--chunk", "1.5K"], ["--chunk", "512KiB"], ["--device-memory", "2G"],
                  ["--chunk", "2^20"], ["--no-overlap", "--streams", "1"], ["--pageable"]):
        run(common + extra + ["--repeats", "1"])
        print(f"ok: {' '.join(extra)} accepted")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    mode, argv = sys.argv[1], sys.argv[2:]
    {"json": check_json, "timeline": check_timeline, "svg": check_svg, "usage": check_usage}[mode](argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
