#!/usr/bin/env python3
"""Checks gpk-bench's FP8 and mixed-precision gemm: --dtype fp8 (and fp8-e5m2,
fp8-mixed), --c-dtype, --scaling and --shapes fp8.

usage: check_fp8_bench.py MODE APP JSON

  host   On the host backend (any machine): --shapes fp8 runs each of the sweep's
         cases at small sizes (the host rung and "auto"), every row within the
         contract's bound on its sampled elements, then the summary; --dtype with
         --c-dtype and --scaling gives the cases they name; unknown dtype, C dtype,
         scaling and sweep names are refused (exit 2), naming them.
  cuda   On the GPU (skipped, exit 77, without one): FP8 at sizes with partial tiles,
         per tensor and block-scaled, every rung, the vendor's and "auto": none may
         fail (a rung may refuse), and the yardstick (the BF16 gemm, or the per-tensor
         FP8 gemm for block scaling) is timed beside them.
"""

import json
import sys

from app_check import expect, run

HOST = ["--backend", "host"]

# --shapes fp8 on the host backend: each dimension of the sweep / 64 (4097: 65).
SWEEP = [
    ("e4m3xe4m3->bf16", (64, 64, 64), "column-major, TN"),
    ("e4m3xe4m3->bf16", (128, 128, 128), "column-major, TN"),
    ("e4m3xe4m3->bf16 block", (128, 128, 128), "column-major, TN"),
    ("e4m3xe4m3->bf16", (64, 112, 256), "column-major, TN"),
    ("e4m3xe4m3->bf16 block", (64, 112, 256), "column-major, TN"),
    ("e4m3xe4m3->bf16", (64, 384, 24), "column-major, TN"),
    ("e4m3xe4m3->bf16", (128, 128, 16), "column-major, TN"),
    ("e4m3xe4m3->bf16", (65, 65, 65), "column-major, TN"),
    ("e4m3xe4m3->bf16", (128, 128, 128), "column-major, NN"),
    ("e4m3xe4m3->bf16", (128, 128, 128), "column-major, NT"),
    ("e4m3xe4m3->bf16", (128, 128, 128), "column-major, TT"),
    ("e4m3xe4m3->bf16", (128, 128, 128), "row-major, NN"),
    ("bf16xbf16->f32", (128, 128, 128), "column-major, NN"),
]


def cases(path):
    """The JSON's rows gathered into cases, in order: ({dtype, note, rows}, (m, n, k))."""
    with open(path) as f:
        doc = json.load(f)
    found = []
    for row in doc["results"]:
        key = (row["dtype"], (row["m"], row["n"], row["k"]), row.get("note", ""))
        if not found or found[-1][2] != key:
            found.append(({"dtype": key[0], "note": key[2], "rows": []}, key[1], key))
        found[-1][0]["rows"].append(row)
    return [(case, sizes) for case, sizes, _ in found]


def rows_of(case):
    """The rows of the ladder and "auto", without the yardstick."""
    return [r for r in case["rows"] if r.get("kind") != "ceiling"]


def host(app, path):
    done = run([app, "--shapes", "fp8", "--json", path] + HOST)
    got = cases(path)
    expect([(c["dtype"], s) for c, s in got] == [(d, s) for d, s, _ in SWEEP],
           f"--shapes fp8 runs the sweep's {len(SWEEP)} cases in order, at the host's sizes")
    for (case, sizes), (_, _, layout) in zip(got, SWEEP):
        what = f"{case['dtype']} {sizes} {layout}"
        expect(case["note"].startswith(layout + " ("), f"{what}: its note names the layout ({case['note']})")
        names = [r["variant"] for r in rows_of(case)]
        expect(names == ["host", "auto"], f"{what}: the host rung and auto ran ({names})")
        for row in rows_of(case):
            expect(row["status"] == "ok" and "sampled elements" in row["check"] and row["repeats"] > 0,
                   f"{what}: {row['variant']} checked against the bound and timed ({row['check']})")
    expect("; lda 65, ldb 65, ldc 65" in got[7][0]["note"], "4097^3 (65^3 here) has every leading dimension odd")
    expect("gpk_gemm_blockscaled" in got[2][0]["note"], "the block-scaled cases call gpk_gemm_blockscaled")
    expect("FP8 and mixed-precision summary" in done.stdout and "column-major, TN, odd ld" in done.stdout,
           "the summary follows the tables")

    run([app, "--dtype", "fp8-mixed", "--c-dtype", "f32", "--scaling", "tensor,block", "--size", "33x17x300",
         "--json", path] + HOST)
    expect([(c["dtype"], s) for c, s in cases(path)] ==
           [("e4m3xe5m2->f32", (33, 17, 300)), ("e4m3xe5m2->f32 block", (33, 17, 300))],
           "--dtype fp8-mixed --c-dtype f32 --scaling tensor,block: both cases, C f32")
    run([app, "--op", "gemm", "--dtype", "fp8-e5m2,bf16", "--c-dtype", "f32", "--size", "40", "--ld", "odd",
         "--json", path] + HOST)
    got = cases(path)
    expect([c["dtype"] for c, _ in got] == ["e5m2xe5m2->f32", "bf16xbf16->f32"] and
           all("lda 41" in c["note"] for c, _ in got), "--dtype fp8-e5m2,bf16 --c-dtype f32 --ld odd")

    for args, says in [
        (["--dtype", "fp9"], "--dtype: unknown dtype 'fp9'"),
        (["--dtype", "fp8", "--scaling", "rowwise"], "--scaling: unknown scaling 'rowwise'"),
        (["--dtype", "fp8", "--scaling", "tensor,"], "--scaling"),
        (["--dtype", "fp8", "--c-dtype", "f64"], "--c-dtype: unknown C dtype 'f64'"),
        (["--dtype", "fp8", "--c-dtype"], "--c-dtype needs a value"),
        (["--shapes", "fp9"], "--shapes: unknown sweep 'fp9'"),
    ]:
        done = run([app] + args + HOST, want_rc=2)
        expect(says in done.stderr, f"{' '.join(args)}: refused with exit status 2, saying {says!r}")


def cuda(app, path):
    run([app, "--backend", "cuda", "--dtype", "fp8", "--size", "1031x517x2053,4097", "--ld", "odd",
         "--scaling", "tensor,block", "--variant", "all,auto", "--repeat", "3", "--json", path])
    got = cases(path)
    expect(len(got) == 4, "four cases: two sizes, per tensor and block-scaled")
    for case, sizes in got:
        what = f"{case['dtype']} {sizes}"
        rows = rows_of(case)
        expect(not any(r["status"] == "FAILED" for r in case["rows"]), f"{what}: no row failed")
        expect(any(r["status"] == "ok" and r["variant"] not in ("cublas", "auto") for r in rows),
               f"{what}: an FP8 rung of ours ran and met the bound")
        yard = [r for r in case["rows"] if r.get("kind") == "ceiling"]
        expect(yard and yard[0]["status"] == "ok", f"{what}: the yardstick ran ({[r['variant'] for r in yard]})")


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("host", "cuda"):
        sys.exit(__doc__)
    mode, app, path = sys.argv[1:]
    (host if mode == "host" else cuda)(app, path)


if __name__ == "__main__":
    main()
