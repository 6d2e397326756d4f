"""What the apps' check scripts share (check_gemm.py, check_fp8_bench.py,
check_bench.py): a failure ends the script naming what failed, each check that holds
is printed, and an app runs with its output kept for the report of a failure."""

import subprocess
import sys

SKIP = 77


def fail(what):
    sys.exit(f"FAIL: {what}")


def expect(ok, what):
    if not ok:
        fail(what)
    print(f"ok: {what}")


def run(command, want_rc=0):
    """Runs command, which must exit want_rc; its output is shown when it does not."""
    print("$", " ".join(command), flush=True)
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    # Asked for the GPU where there is none: skipped, which gpu-check does not let
    # pass on a machine with one.
    if done.returncode == 1 and "--backend cuda" in " ".join(command) and "no usable GPU" in done.stderr:
        print(done.stderr, end="", file=sys.stderr)
        print("skipped: no usable GPU")
        sys.exit(SKIP)
    if done.returncode != want_rc:
        print(done.stdout, end="")
        print(done.stderr, end="", file=sys.stderr)
        fail(f"exit status {done.returncode}, expected {want_rc}")
    return done
