#!/usr/bin/env python3
"""A few calls of every CUDA variant of gemm, gemm_ex, gemm_batched, reduce, transpose and pi,
small enough to run under compute-sanitizer's racecheck in seconds where the
conformance programs take minutes: each variant on odd sizes, every dtype (gemm: F16,
BF16 with ml_dtypes, and F32 in TF32 mode too) and reduce op, results checked against
numpy. Exit status 1 on a wrong result.

usage: GPK_LIBRARY=build/libgpk/libgpk.so PYTHONPATH=build/bindings/python \\
           compute-sanitizer --tool racecheck python3 scripts/sanitize-calls.py [cuda|host] [OP...]
(the build's copy of the package, which has its generated _config module; or an
installed one.)
OPs: gemm, gemm_ex (FP8 per tensor and block-scaled, 16-bit into F32), gemm_batched,
reduce, transpose, pi (default: all). Host numpy arrays, so
every call also goes through the staging pipeline.
"""
import sys

import numpy as np

import gpk

try:
    from ml_dtypes import bfloat16, float8_e4m3fn, float8_e5m2
except ImportError:  # BF16 and FP8 need ml_dtypes' dtypes in numpy
    bfloat16 = float8_e4m3fn = float8_e5m2 = None


def main(backend, ops):
    rng = np.random.default_rng(7)
    calls = wrong = 0
    with gpk.Context(backend) as ctx:
        # Small integers: every product and partial sum is exact in F32 (and in TF32's
        # 10-bit mantissa), so any summation order gives numpy's result; 16-bit results
        # are the exact sums rounded once.
        kinds = [(np.float32, "default"), (np.float64, "default"), (np.float32, "tf32"), (np.float16, "default")]
        if bfloat16 is not None:
            kinds.append((bfloat16, "default"))
        for name in ctx.variants("gemm") if "gemm" in ops else ():
            ctx.set_variant("gemm", name)
            for dtype, mode in kinds:
                ctx.math_mode = mode
                for m, n, k in ((1, 1, 1), (33, 17, 65), (130, 70, 129)):
                    for order, ta, tb in (("C", False, False), ("F", True, False), ("F", False, True)):
                        a = np.asarray(rng.integers(-8, 9, (k, m) if ta else (m, k)).astype(dtype), order=order)
                        b = np.asarray(rng.integers(-8, 9, (n, k) if tb else (k, n)).astype(dtype), order=order)
                        try:
                            got = ctx.gemm(a, b, transa=ta, transb=tb)
                        except gpk.NotSupportedError:
                            continue  # a rung without this dtype or mode (dmma_f64 has no F32)
                        calls += 1
                        exact = (a.T if ta else a).astype(np.float64) @ (b.T if tb else b).astype(np.float64)
                        if not np.array_equal(got, exact.astype(dtype)):
                            wrong += 1
                            print(f"gemm {name} {np.dtype(dtype).name} {m}x{n}x{k} {order} {ta} {tb}: wrong result")
            ctx.math_mode = "default"
            print(f"gemm {name}: done", flush=True)
        # gemm_ex: FP8 operands (small integers are exact in E4M3 and E5M2, and their
        # products and sums in F32) per tensor and with block scales of 1, and 16-bit
        # operands into F32, through every rung that takes them.
        ex_kinds = [] if float8_e4m3fn is None else [
            (float8_e4m3fn, float8_e4m3fn, False), (float8_e5m2, float8_e4m3fn, False),
            (float8_e4m3fn, float8_e4m3fn, True), (np.float16, np.float16, False), (bfloat16, bfloat16, False)]
        for name in ctx.variants("gemm") if "gemm_ex" in ops else ():
            ctx.set_variant("gemm", name)
            before = calls
            for da, db, block in ex_kinds:
                for m, n, k in ((1, 1, 1), (33, 17, 65), (130, 70, 300)):
                    for order, ta, tb in (("C", False, False), ("F", True, False), ("F", False, True), ("C", True, False)):
                        a = np.asarray(rng.integers(-8, 9, (k, m) if ta else (m, k)).astype(da), order=order)
                        b = np.asarray(rng.integers(-8, 9, (n, k) if tb else (k, n)).astype(db), order=order)
                        kb = (k + 127) // 128
                        try:
                            if block:
                                got = ctx.gemm_blockscaled(a, b, np.ones((m, kb), np.float32, order="F"),
                                                           np.ones(((n + 127) // 128, kb), np.float32, order="F"),
                                                           transa=ta, transb=tb, out_dtype=np.float32)
                            else:
                                got = ctx.gemm_ex(a, b, transa=ta, transb=tb, out_dtype=np.float32)
                        except gpk.NotSupportedError:
                            continue  # a rung without these dtypes or layout (cuBLASLt's FP8 is TN only)
                        calls += 1
                        exact = (a.T if ta else a).astype(np.float64) @ (b.T if tb else b).astype(np.float64)
                        if not np.array_equal(got, exact.astype(np.float32)):
                            wrong += 1
                            print(f"gemm_ex {name} {np.dtype(da).name}x{np.dtype(db).name} block={block} "
                                  f"{m}x{n}x{k} {order} {ta} {tb}: wrong result")
            # How many calls the rung took: a sanitizer's clean run counts only for those.
            print(f"gemm_ex {name}: done, {calls - before} calls", flush=True)
        # gemm_batched: stacks of products of the sizes each rung is for (a thread's
        # product, a block's, a single gemm's tiles), one shared B among them.
        for name in ctx.variants("gemm_batched") if "gemm_batched" in ops else ():
            ctx.set_variant("gemm_batched", name)
            for dtype in (np.float32, np.float64):
                for m, n, k, batch in ((4, 4, 4, 33), (7, 9, 5, 10), (16, 16, 16, 9), (33, 17, 65, 5), (130, 70, 129, 2)):
                    for shared_b in (False, True):
                        a = rng.integers(-8, 9, (batch, m, k)).astype(dtype)
                        b = rng.integers(-8, 9, (k, n) if shared_b else (batch, k, n)).astype(dtype)
                        try:
                            got = ctx.matmul(a, b)
                        except gpk.NotSupportedError:
                            continue  # a rung for other sizes or dtypes
                        calls += 1
                        if not np.array_equal(got, np.matmul(a.astype(np.float64), b.astype(np.float64)).astype(dtype)):
                            wrong += 1
                            print(f"gemm_batched {name} {np.dtype(dtype).name} {batch} x {m}x{n}x{k}: wrong result")
            print(f"gemm_batched {name}: done", flush=True)
        for name in ctx.variants("reduce") if "reduce" in ops else ():
            ctx.set_variant("reduce", name)
            for dtype in (np.int32, np.float32, np.float64):
                for n in (17, 4097, 100_003):
                    x = rng.integers(-1000, 1000, n).astype(dtype)
                    for op, want in (("sum", x.sum(dtype=np.float64 if x.dtype.kind == "f" else np.int64)),
                                     ("min", x.min()), ("max", x.max())):
                        got = ctx.reduce(x, op)
                        calls += 1
                        if got != want:
                            wrong += 1
                            print(f"reduce {name} {np.dtype(dtype).name} {op} n={n}: {got}, expected {want}")
            print(f"reduce {name}: done", flush=True)
        for name in ctx.variants("transpose") if "transpose" in ops else ():
            ctx.set_variant("transpose", name)
            for dtype in (np.float32, np.float64, np.int32):
                for shape in ((1, 1), (17, 1000), (65, 130), (256, 256)):
                    a = rng.integers(-1000, 1000, shape).astype(dtype)
                    try:
                        got = ctx.transpose(a)
                    except gpk.NotSupportedError:
                        continue  # geam has no integer types
                    calls += 1
                    if not np.array_equal(got, a.T):
                        wrong += 1
                        print(f"transpose {name} {np.dtype(dtype).name} {shape}: wrong result")
            print(f"transpose {name}: done", flush=True)
        # pi: a few sample counts (odd ones too) and an empty range; each estimate
        # within 6 standard errors of pi, and the same hits on a second call.
        for name in ctx.variants("pi") if "pi" in ops else ():
            ctx.set_variant("pi", name)
            for samples in (1, 1001, 1 << 20, (1 << 22) + 3):
                r = ctx.pi(samples, seed=11)
                again = ctx.pi(samples, seed=11)
                calls += 2
                if again.hits != r.hits or (samples > 1000 and abs(r.estimate - np.pi) > 6 * r.std_error):
                    wrong += 1
                    print(f"pi {name} samples={samples}: {r.estimate} +- {r.std_error}, hits {r.hits} then {again.hits}")
            print(f"pi {name}: done", flush=True)
    print(f"sanitize-calls: {calls} calls, {wrong} wrong")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "cuda",
                  set(sys.argv[2:]) or {"gemm", "gemm_ex", "gemm_batched", "reduce", "transpose", "pi"}))
