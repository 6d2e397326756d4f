#!/usr/bin/env python3
"""gpk-bench --tune writes a table the library reads: the tuner and the loader agree.

usage: check_tune.py GPK_BENCH LIBGPK OUT.tsv

Runs GPK_BENCH --tune OUT.tsv --backend host (the host backend: a small grid, every
op, the one rung "host"), checks the table's header and that every op has rows, then
loads it into a host context of LIBGPK (ctypes) with gpk_load_tuning: it must load,
gpk_tuning_name must name it, and a gemm must then run "host" (gpk_last_variant).
"""

import ctypes
import subprocess
import sys


def fail(what):
    sys.exit(f"FAIL: {what}")


def main():
    bench, library, out = sys.argv[1:4]
    run = subprocess.run([bench, "--tune", out, "--backend", "host"], capture_output=True, text=True, timeout=600)
    if run.returncode != 0:
        fail(f"gpk-bench --tune exited {run.returncode}:\n{run.stdout}\n{run.stderr}")
    if "wrote " + out not in run.stdout:
        fail(f"gpk-bench --tune did not say it wrote {out}:\n{run.stdout}")
    lines = open(out, encoding="utf-8").read().splitlines()
    if lines[:4] != ["gpk-tuning\t1", "device\thost", "compute_capability\t-", "sm_count\t-"]:
        fail(f"header: {lines[:4]}")
    rows = [line.split("\t") for line in lines if line and not line.startswith("#") and len(line.split("\t")) == 7]
    ops = {row[0] for row in rows}
    if ops != {"gemm", "gemm_batched", "reduce", "transpose", "pi"}:
        fail(f"ops with rows: {sorted(ops)}")
    for row in rows:
        if not row[6].startswith("host:"):
            fail(f"a row's rungs: {row}")

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
    finally:
        gpk.gpk_destroy(ctx)
    print(f"check_tune: {len(rows)} rows of {len(ops)} ops, loaded by libgpk")


if __name__ == "__main__":
    main()
