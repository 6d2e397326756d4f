#!/usr/bin/env python3
"""gpk-bench --tune writes a table the library reads: the tuner and the loader agree.

usage: check_tune.py GPK_BENCH LIBGPK OUT.tsv

Runs GPK_BENCH --tune OUT.tsv --backend host (the host backend: a small grid, every
op, the one rung "host"), checks the table's header, that every op has rows and gemm
has gpk_gemm_ex's classes (fp8, fp8_block, half_f32) in every layout and alignment,
then loads it into a host context of LIBGPK (ctypes) with gpk_load_tuning: it must
load, gpk_tuning_name must name it, and a gemm and an FP8 gpk_gemm_ex must then run
"host" (gpk_last_variant). Then --dtype fp8 alone: its table holds the two FP8 classes
and nothing else, and loads; --scaling block narrows it to fp8_block; words --tune does
not measure are refused with exit status 2.
"""

import ctypes
import subprocess
import sys


def fail(what):
    sys.exit(f"FAIL: {what}")


EX_CLASSES = ("fp8", "fp8_block", "half_f32")


def tune(bench, out, *options):
    """The rows of the table gpk-bench --tune OUT --backend host OPTIONS writes."""
    run = subprocess.run([bench, "--tune", out, "--backend", "host", *options], capture_output=True, text=True,
                         timeout=600)
    if run.returncode != 0:
        fail(f"gpk-bench --tune {' '.join(options)} exited {run.returncode}:\n{run.stdout}\n{run.stderr}")
    if "wrote " + out not in run.stdout:
        fail(f"gpk-bench --tune did not say it wrote {out}:\n{run.stdout}")
    lines = open(out, encoding="utf-8").read().splitlines()
    if lines[:4] != ["gpk-tuning\t1", "device\thost", "compute_capability\t-", "sm_count\t-"]:
        fail(f"header: {lines[:4]}")
    rows = [line.split("\t") for line in lines if line and not line.startswith("#") and len(line.split("\t")) == 7]
    for row in rows:
        if not row[6].startswith("host:"):
            fail(f"a row's rungs: {row}")
    return rows


def classes_of(rows):
    """(op, dtype) -> the (layout, align) pairs with rows."""
    have = {}
    for row in rows:
        have.setdefault((row[0], row[1]), set()).add((row[3], row[4]))
    return have


def loads(gpk, path):
    ctx = ctypes.c_void_p()
    if gpk.gpk_create(ctypes.byref(ctx), 2, 0) != 0:
        fail("gpk_create(host)")
    try:
        if gpk.gpk_load_tuning(ctx, path.encode()) != 0:
            fail(f"gpk_load_tuning({path}): {gpk.gpk_last_error(ctx).decode()}")
    finally:
        gpk.gpk_destroy(ctx)


def main():
    bench, library, out = sys.argv[1:4]
    rows = tune(bench, out)
    ops = {row[0] for row in rows}
    if ops != {"gemm", "gemm_batched", "reduce", "transpose", "pi"}:
        fail(f"ops with rows: {sorted(ops)}")
    have = classes_of(rows)
    every = {(layout, align) for layout in ("nn", "nt", "tn", "tt") for align in ("a16", "u")}
    for cls in EX_CLASSES:
        if have.get(("gemm", cls)) != every:
            fail(f"gemm {cls}: rows in {sorted(have.get(('gemm', cls), ()))}, expected every layout and alignment")

    gpk = ctypes.CDLL(library)
    gpk.gpk_tuning_name.restype = ctypes.c_char_p
    gpk.gpk_last_variant.restype = ctypes.c_char_p
    gpk.gpk_last_error.restype = ctypes.c_char_p
    ctx = ctypes.c_void_p()
    if gpk.gpk_create(ctypes.byref(ctx), 2, 0) != 0:
        fail("gpk_create(host)")
    try:
        if gpk.gpk_load_tuning(ctx, out.encode()) != 0:
            fail(f"gpk_load_tuning: {gpk.gpk_last_error(ctx).decode()}")
        if gpk.gpk_tuning_name(ctx).decode() != out:
            fail(f"gpk_tuning_name: {gpk.gpk_tuning_name(ctx)}")
        a = (ctypes.c_float * 4)(1, 2, 3, 4)
        c = (ctypes.c_float * 4)()
        one, zero = ctypes.c_double(1.0), ctypes.c_double(0.0)
        i64 = ctypes.c_int64
        st = gpk.gpk_gemm(ctx, 0, 102, 111, 111, i64(2), i64(2), i64(2), one, a, i64(2), a, i64(2), zero, c, i64(2))
        if st != 0 or gpk.gpk_last_variant(ctx, 0) != b"host":
            fail(f"gemm after loading: status {st}, ran {gpk.gpk_last_variant(ctx, 0)}")
        # E4M3 ones (0x38) into BF16 C: 2x2x2, TN, every element 2 (BF16 0x4000).
        f8 = (ctypes.c_uint8 * 4)(0x38, 0x38, 0x38, 0x38)
        cb = (ctypes.c_uint16 * 4)()
        st = gpk.gpk_gemm_ex(ctx, 102, 112, 111, i64(2), i64(2), i64(2), one, 6, f8, i64(2), 6, f8, i64(2), zero, 5,
                             cb, i64(2))
        if st != 0 or gpk.gpk_last_variant(ctx, 0) != b"host" or list(cb) != [0x4000] * 4:
            fail(f"FP8 gemm_ex after loading: status {st}, ran {gpk.gpk_last_variant(ctx, 0)}, C {list(cb)}")
    finally:
        gpk.gpk_destroy(ctx)

    # The FP8 classes alone, as a GPU run measures them.
    fp8 = tune(bench, out, "--dtype", "fp8")
    if set(classes_of(fp8)) != {("gemm", "fp8"), ("gemm", "fp8_block")}:
        fail(f"--dtype fp8: classes {sorted(classes_of(fp8))}, expected gemm fp8 and fp8_block")
    loads(gpk, out)
    block = tune(bench, out, "--dtype", "fp8", "--scaling", "block")
    if set(classes_of(block)) != {("gemm", "fp8_block")}:
        fail(f"--dtype fp8 --scaling block: classes {sorted(classes_of(block))}")
    for options in (["--dtype", "fp8-e5m2"], ["--dtype", "bf16", "--c-dtype", "f32"]):
        run = subprocess.run([bench, "--tune", out, "--backend", "host", *options], capture_output=True, text=True,
                             timeout=60)
        if run.returncode != 2 or "gpk-bench: " not in run.stderr:
            fail(f"--tune {' '.join(options)}: exit {run.returncode}, stderr {run.stderr!r}, expected a refusal")
    run = subprocess.run([bench, "--dtype", "half_f32", "--backend", "host"], capture_output=True, text=True,
                         timeout=60)
    if run.returncode != 2 or "for --tune only" not in run.stderr:
        fail(f"--dtype half_f32 without --tune: exit {run.returncode}, stderr {run.stderr!r}")
    print(f"check_tune: {len(rows)} rows of {len(ops)} ops ({len(fp8)} of --dtype fp8), loaded by libgpk")


if __name__ == "__main__":
    main()
