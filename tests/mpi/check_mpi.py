#!/usr/bin/env python3
"""Runs an app's MPI twin under mpirun and checks it against one process.

usage: check_mpi.py --mpirun PATH --np N [--oversubscribe] pi|gemm APP [APP ARGS...]
       check_mpi.py --gpus N [--need-gpus] pi|gemm APP [APP ARGS...]

  pi:   APP (gpk-pi) runs once alone, then as `mpirun -np N APP --mpi`; the ranks'
        hits, estimate and std_error must equal the single process's exactly, the
        ranks' shares must tile [0, samples), and rank 0's own gpk_pi run (the
        baseline) must agree.
  gemm: APP (gpk-gemm) runs as `mpirun -np N APP --mpi --validate`; the gathered C
        must equal rank 0's single-process C bit for bit and pass validation, and
        the row panels must tile the rows; the single-process app must validate too.

With --gpus N the distributed run is `APP --gpus N` instead: one process driving N
GPUs (or, on the host backend, N threads), with the same checks, and for gemm the
end-to-end figures besides. --need-gpus skips the test (77) where fewer GPUs than
the run's N (--gpus or --np) are visible (nvidia-smi -L).

An empty --mpirun (no MPI implementation at configure time, or no mpirun) skips
the test: exit status 77.
"""

import argparse
import json
import subprocess
import sys

SKIP = 77


def run(command):
    """stdout of command as JSON; fails the test with its output otherwise."""
    print("$", " ".join(command), flush=True)
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    if done.stderr:
        print(done.stderr, end="", file=sys.stderr)
    if done.returncode != 0:
        print(done.stdout, end="")
        sys.exit(f"exit status {done.returncode}")
    # mpirun may add its own lines; the report is the one JSON object.
    text = done.stdout
    start, end = text.find("{"), text.rfind("}")
    try:
        return json.loads(text[start : end + 1])
    except ValueError:
        print(text)
        sys.exit("no JSON report in the output")


def expect(ok, what):
    if not ok:
        sys.exit(f"FAIL: {what}")
    print(f"ok: {what}")


def check_tiling(parts, first_key, count_key, total, what):
    at = 0
    for rank, part in enumerate(parts):
        expect(part["rank"] == rank and part[first_key] == at, f"rank {rank}'s {what} starts at {at}")
        at += part[count_key]
    expect(at == total, f"the ranks' {what}s cover all {total}")


def check_pi(launch, app, args, np):
    single = run([app] + args + ["--json"])
    dist = run(launch(app) + args + ["--json"])
    expect(dist["ranks"] == np, f"{np} ranks ran")
    for key in ("samples", "seed", "hits", "estimate", "std_error"):
        expect(dist[key] == single[key], f"{key} {dist[key]} equals one process's {single[key]}")
    expect(dist["single"]["identical"] and dist["single"]["hits"] == single["hits"], "rank 0's own gpk_pi agrees")
    parts = dist["per_rank"]
    expect(len(parts) == np, "one entry per rank")
    expect(sum(p["hits"] for p in parts) == single["hits"], "the ranks' hits add up")
    check_tiling(parts, "first_sample", "samples", single["samples"], "range")
    expect(dist["scaling_efficiency"] is not None and dist["scaling_efficiency"] > 0, "a scaling efficiency")


def check_gemm(launch, app, args, np):
    single = run([app] + args + ["--validate", "--json"])
    expect(single["validation"]["wrong"] == 0, "one process validates")
    dist = run(launch(app) + args + ["--validate", "--json"])
    expect(dist["ranks"] == np, f"{np} ranks ran")
    for key in ("m", "n", "k", "dtype"):
        expect(dist[key] == single[key], f"{key} {dist[key]} as in one process")
    expect(dist["single"]["identical"], "the gathered C equals rank 0's single-process C bit for bit")
    expect(dist["validation"]["wrong"] == 0, f"{dist['validation']['checked']} entries validate")
    check_tiling(dist["per_rank"], "first_row", "rows", single["m"], "row panel")
    expect(dist["scaling_efficiency"] is not None and dist["scaling_efficiency"] > 0, "a scaling efficiency")
    speedup = dist.get("end_to_end_speedup")
    expect(speedup is not None and speedup > 0, f"an end-to-end speedup ({speedup})")


def visible_gpus():
    try:
        done = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return 0
    if done.returncode != 0:
        return 0
    return sum(1 for line in done.stdout.splitlines() if line.startswith("GPU "))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mpirun")
    parser.add_argument("--np", type=int)
    parser.add_argument("--oversubscribe", action="store_true")
    parser.add_argument("--gpus", type=int)
    parser.add_argument("--need-gpus", action="store_true")
    parser.add_argument("app", choices=["pi", "gemm"])
    parser.add_argument("exe")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    opt = parser.parse_args()
    check = check_pi if opt.app == "pi" else check_gemm
    if opt.need_gpus:
        need = opt.gpus if opt.gpus is not None else opt.np
        have = visible_gpus()
        if have < need:
            print(f"skipped: {need} GPUs needed, {have} visible")
            return SKIP
    if opt.gpus is not None:
        check(lambda app: [app, "--gpus", str(opt.gpus)], opt.exe, opt.args, opt.gpus)
        return 0
    if opt.np is None:
        parser.error("--np is needed with --mpirun")
    if not opt.mpirun:
        print("skipped: no MPI implementation (mpirun and an MPI library) was found when the build was set up")
        return SKIP
    # Processes share the machine's cores: no binding, so that oversubscribed ranks
    # are not piled onto one core.
    mpirun = [opt.mpirun, "-np", str(opt.np), "--bind-to", "none"]
    if opt.oversubscribe:
        mpirun.append("--oversubscribe")
    check(lambda app: mpirun + [app, "--mpi"], opt.exe, opt.args, opt.np)
    return 0


if __name__ == "__main__":
    sys.exit(main())
