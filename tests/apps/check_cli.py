#!/usr/bin/env python3
"""Checks the apps' command lines: what they refuse, how they say it, and what they take.

usage: check_cli.py GROUP --bench APP --gemm APP --pi APP --rungs DIR --cuda-build 0|1 --cupti 0|1

GROUP is one of
  numbers   one strict grammar for sizes, lists and numbers in every app: "5xx6", "x5",
            "0,,1" refused; --name=value for every option, --gpus=2 included; any
            64-bit seed
  sizes     sizes whose arrays cannot be allocated (their bytes wrap, or pass what the
            machine holds) are refused with a message naming the size, never a crash
  names     unknown op, dtype and variant names are refused, named, with the choices
  messages  a missing value is called missing; gpk-bench --list shows every rung of
            the build (the CUDA ladders too, from DIR/<op>/rungs.def, in a CUDA build)
            and marks those this machine cannot run; gpk-bench --kernels is refused by a build
            without CUPTI (--cupti 0), and elsewhere, on the host backend, says that it needs
            the CUDA backend and runs on without kernel lines
  json      gpk-bench writes JSON only where asked

Every command runs on the host backend (or, for --list, with no GPU visible), so that
the checks mean the same on every machine. A refusal must be an exit status of its own,
not a signal: a crash is not a refusal.
"""

import json
import os
import resource
import subprocess
import sys
import tempfile

# What the sizes group gives each command: room for everything the checks run, and
# far less than the arrays it asks for, whatever the machine holds. (Not under
# AddressSanitizer, whose shadow memory alone is terabytes of address space: there the
# machine's memory is the limit, and the checks that need more than it are skipped.)
ADDRESS_LIMIT = 16 << 30
HOST = ["--backend", "host"]
failures = []


def sanitized(app):
    """Whether the app runs under AddressSanitizer (linked with its runtime)."""
    done = subprocess.run(["ldd", app], capture_output=True, text=True)
    return "libasan" in done.stdout


def host_memory():
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def run(command, cwd=None, env=None, limit=None):
    if limit and sanitized(command[0]):
        limit = None
    print("$", " ".join(command), flush=True)

    def limit_memory():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    done = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=cwd, env=env,
                          preexec_fn=limit_memory if limit else None)
    output = done.stdout + done.stderr
    for line in output.splitlines()[-12:]:
        print("  |", line)
    return done.returncode, output, done.stdout


def expect(ok, what):
    print(("ok: " if ok else "FAIL: ") + what, flush=True)
    if not ok:
        failures.append(what)


def refuses(command, *says, limit=None):
    """The command exits with a status of its own, not 0 and not a signal, saying each of `says`."""
    rc, output, _ = run(command, limit=limit)
    what = " ".join(command[1:])
    if rc < 0:
        expect(False, f"{what}: killed by signal {-rc}, not refused")
        return output
    expect(rc != 0, f"{what}: refused (exit status {rc})")
    for text in says:
        expect(text in output, f"{what}: the message says {text!r}")
    return output


def accepts(command, cwd=None):
    rc, output, stdout = run(command, cwd=cwd)
    expect(rc == 0, f"{' '.join(command[1:])}: exits 0 (status {rc})")
    return stdout


def as_json(stdout, what):
    try:
        return json.loads(stdout)
    except ValueError:
        expect(False, f"{what}: prints one JSON object")
        return {}


# ---------------------------------------------------------------- groups --------

def numbers(a):
    # Sizes: an empty part is a typo, never a shorter size.
    for size in ["5xx6", "x5", "5x", "5x6x", "x"]:
        refuses([a.gemm, size] + HOST, "sizes are M [N [K]] or MxNxK", repr(size))
        refuses([a.bench, "--op", "gemm", "--size", size] + HOST, "--size", repr(size))
    # Lists, as "0,,1" always was for --devices.
    refuses([a.pi, "1000", "--devices", "0,,1"] + HOST, "--devices", "'0,,1'")
    refuses([a.bench, "--op", "gemm,,reduce"] + HOST, "--op", "'gemm,,reduce'")
    refuses([a.bench, "--op", "gemm", "--size", "64,"] + HOST, "--size", "'64,'")
    refuses([a.bench, "--op", "gemm", "--dtype", ",f32"] + HOST, "--dtype", "',f32'")
    refuses([a.bench, "--op", "gemm", "--variant", "all,,auto"] + HOST, "--variant", "'all,,auto'")
    # Numbers: whole texts only.
    for text in ["1.e3", ".5e3", "1e", "2^", "^3", "1e3x", "+5", "0x10", "1e3e2"]:
        refuses([a.pi, text] + HOST, "samples must be a positive integer")
    refuses([a.gemm, "64", "--chunk", ".5M"] + HOST, "--chunk", "'.5M'")

    # Any 64-bit seed, as gpk_pi and the gemm app's entries take it; 2^64 is none.
    top = 2**64 - 1
    for form in [["--seed", str(top)], [f"--seed={top}"], ["--seed", "18446744073709551615"]]:
        doc = as_json(accepts([a.pi, "1000", "--json"] + form + HOST), "gpk-pi --seed 2^64 - 1")
        expect(doc.get("seed") == top, f"gpk-pi {' '.join(form)}: the JSON's seed is {top} (got {doc.get('seed')})")
    refuses([a.pi, "1000", "--seed", str(2**64)] + HOST, "--seed", str(2**64))
    doc = as_json(accepts([a.gemm, "16", "--json", "--validate", "--seed", str(top)] + HOST), "gpk-gemm --seed")
    expect(doc.get("validation", {}).get("wrong") == 0, "gpk-gemm --seed 2^64 - 1: C validates")
    refuses([a.gemm, "16", "--seed", str(2**64)] + HOST, "--seed")

    # --name=value for every option that takes a value.
    doc = as_json(accepts([a.pi, "1000", "--seed=7", "--backend=host", "--replicates=3", "--variant=host",
                           "--device=0", "--json"]), "gpk-pi --name=value")
    expect(doc.get("seed") == 7 and doc.get("replicates") == 3 and doc.get("variant") == "host",
           "gpk-pi --seed=7 --replicates=3 --variant=host: taken")
    doc = as_json(accepts([a.gemm, "64", "--backend=host", "--dtype=f64", "--repeats=2", "--seed=5", "--streams=2",
                           "--chunk=1M", "--device-memory=64M", "--variant=host", "--devices=0", "--json"]),
                  "gpk-gemm --name=value")
    expect(doc.get("dtype") == "f64" and doc.get("repeats") == 2 and doc.get("streams") == 2 and
           doc.get("chunk_bytes") == 1 << 20 and doc.get("device_bytes") == 64 << 20,
           "gpk-gemm --dtype=f64 --repeats=2 --streams=2 --chunk=1M --device-memory=64M: taken")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "bench.json")
        accepts([a.bench, "--op=gemm", "--size=32", "--dtype=f64", "--repeat=1", "--variant=all",
                 "--backend=host", "--device=0", "--memory=device", "--math=default", "--ld=odd", f"--json={path}"])
        with open(path) as f:
            doc = json.load(f)
        rows = doc.get("results", [])
        expect(doc.get("repeat") == 1 and rows and all(r["op"] == "gemm" and r["dtype"] == "f64" for r in rows),
               "gpk-bench --op=gemm --dtype=f64 --repeat=1 --json=FILE: taken")
    # --gpus=N as --gpus N: the one-process twins, here on the host backend.
    for app, args in [(a.pi, ["100000"]), (a.gemm, ["64", "--validate"])]:
        for form in [["--gpus", "2"], ["--gpus=2"]]:
            out = accepts([app] + args + form + HOST)
            expect("in one process" in out, f"{os.path.basename(app)} {' '.join(form)}: runs the parts in one process")
        refuses([app] + args + ["--gpus=0"] + HOST, "--gpus needs a GPU count from 1 to 64", "'0'")


def sizes(a):
    # gpk-gemm: C's bytes wrap to 537552 in 64 bits; refused before anything is
    # allocated, by the app and by its twins.
    big = ["1073764994", "2147437309", "1", "--dtype", "f64"]
    refuses([a.gemm] + big + HOST, "C (M x N)", "1073764994 x 2147437309 x 1", "choose a smaller M or N",
            limit=ADDRESS_LIMIT)
    refuses([a.gemm] + big + ["--gpus", "2"] + HOST, "C (M x N)", "choose a smaller M or N", limit=ADDRESS_LIMIT)
    # Sizes whose bytes fit in 64 bits but not in the host: refused, not killed while
    # the matrices are filled.
    refuses([a.gemm, "1000000", "1000000", "1"] + HOST, "(M x N x K = 1000000 x 1000000 x 1, f32) need",
            "of host memory", "choose smaller sizes", limit=ADDRESS_LIMIT)
    if not sanitized(a.gemm) or host_memory() < 3 * 200000**2 * 4:
        refuses([a.gemm, "200000", "--gpus", "2"] + HOST, "of host memory", "choose smaller sizes", limit=ADDRESS_LIMIT)

    # gpk-bench: each case whose arrays cannot be allocated fails with a message naming
    # --size and the case, and the run goes on (and exits 1).
    refuses([a.bench, "--op", "reduce", "--size", "2^62", "--dtype", "f32"] + HOST,
            "--size: reduce f32 n=4611686018427387904", "more bytes than a process can address", limit=ADDRESS_LIMIT)
    if not sanitized(a.bench) or host_memory() < 5 * 9e9 * 4:
        refuses([a.bench, "--op", "transpose", "--size", "3000000000x3", "--dtype", "f32"] + HOST,
                "--size: transpose f32 3000000000x3", "of host memory", limit=ADDRESS_LIMIT)
    refuses([a.bench, "--op", "gemm_batched", "--size", "2^31", "--dtype", "f32"] + HOST,
            "--size: gemm_batched f32 n=2147483648", "more bytes than a process can address", limit=ADDRESS_LIMIT)
    refuses([a.bench, "--op", "gemm", "--size", "2^40", "--dtype", "f64"] + HOST,
            "--size: gemm f64 1099511627776x1099511627776x1099511627776", limit=ADDRESS_LIMIT)
    refuses([a.bench, "--op", "gemm", "--size", "2^63"] + HOST, "--size", "'2^63'", limit=ADDRESS_LIMIT)
    # One size too large among good ones: the others still run.
    out = refuses([a.bench, "--op", "reduce", "--size", "1024,2^62", "--dtype", "f32", "--repeat", "1"] + HOST,
                  "--size: reduce f32 n=4611686018427387904", limit=ADDRESS_LIMIT)
    expect("n=1024" in out and "1 FAILED" in out, "gpk-bench --size 1024,2^62: the 1024 case runs, one fails")


def names(a):
    refuses([a.bench, "--op", "gemm", "--size", "64", "--variant", "nosuch"] + HOST,
            "--variant", "'nosuch'", "gemm: host", "all and auto")
    refuses([a.bench, "--op", "gemm,pi", "--size", "64", "--variant", "host,nosuch"] + HOST,
            "'nosuch'", "gemm: host", "pi: host")
    refuses([a.bench, "--op", "nosuch"] + HOST, "--op", "'nosuch'", "gemm, reduce, transpose, pi, gemm_batched or all")
    refuses([a.bench, "--dtype", "f33"] + HOST, "--dtype", "'f33'", "f32, f64, i32, i64, f16 or bf16")
    refuses([a.pi, "1000", "--variant", "nosuch"] + HOST, "--variant 'nosuch'", "host or auto")
    refuses([a.gemm, "64", "--variant", "nosuch"] + HOST, "--variant 'nosuch'", "host or auto")
    refuses([a.gemm, "64", "--dtype", "f33"] + HOST, "--dtype must be f32 or f64", "'f33'")
    # The twins refuse as the apps do.
    refuses([a.pi, "1000", "--gpus", "2", "--variant", "nosuch"] + HOST, "--variant 'nosuch'", "host or auto")
    refuses([a.gemm, "64", "--gpus", "2", "--variant", "nosuch"] + HOST, "--variant 'nosuch'", "host or auto")
    # A CUDA rung asked of the host backend is named as one.
    if a.cuda_build:
        refuses([a.pi, "1000", "--variant", "persistent"] + HOST, "'persistent' is a CUDA rung of pi")
        refuses([a.bench, "--op", "pi", "--variant", "persistent"] + HOST, "'persistent' is a CUDA rung of pi")


def rungs_def(directory, op):
    names = []
    with open(os.path.join(directory, op, "rungs.def")) as f:
        for line in f:
            if line.startswith("GPK_RUNG("):
                names.append(line[len("GPK_RUNG("):].split(",")[1].strip())
    return names


def messages(a):
    for app in [a.pi, a.gemm]:
        refuses([app, "--seed", "--json"] + HOST, "--seed", "the value is missing")
        refuses([app, "--backend"], "--backend", "the value is missing")
    refuses([a.bench, "--op", "--quick"], "--op needs a value")

    # --list, with no GPU visible whatever the machine has.
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="-1")
    rc, output, stdout = run([a.bench, "--list"], env=env)
    expect(rc == 0, "gpk-bench --list exits 0")
    lines = stdout.splitlines()
    ops = ["gemm", "reduce", "transpose", "pi", "gemm_batched"]
    for op in ops:
        at = lines.index(op) if op in lines else -1
        expect(at >= 0, f"--list has a section for {op}")
        if at < 0:
            continue
        section = lines[at + 1:at + 3]
        cuda = next((l for l in section if l.strip().startswith("cuda")), "")
        host = next((l for l in section if l.strip().startswith("host")), "")
        expect(" 0:host" in host, f"--list {op}: the host backend's rung")
        if a.cuda_build:
            want = [f"{i}:{name}" for i, name in enumerate(rungs_def(a.rungs, op))]
            got = cuda.split()
            expect(want and all(w in got for w in want), f"--list {op}: every CUDA rung of the build ({len(want)})")
            expect("(cannot run here)" in cuda, f"--list {op}: the CUDA rungs marked as not runnable here")
        else:
            expect("no CUDA backend" in cuda, f"--list {op}: says the build has no CUDA backend")
    if a.cuda_build:
        expect("no usable GPU" in stdout, "--list says why the CUDA rungs cannot run here")

    # --kernels: on the host backend, asked for or fallen back to with no GPU visible.
    kernels = [a.bench, "--kernels", "--quick", "--op", "pi", "--repeat", "1"]
    if not a.cupti:
        rc, output, _ = run(kernels + HOST)
        expect(rc == 2, f"--kernels without CUPTI: exit status 2 (got {rc})")
        expect("built without CUPTI: --kernels is not available" in output, "--kernels says the build has no CUPTI")
        return
    for backend, visible in [(HOST, os.environ), ([], env)]:
        with tempfile.TemporaryDirectory() as tmp:
            rows = os.path.join(tmp, "rows.json")
            rc, output, stdout = run(kernels + backend + ["--json", rows], env=visible)
            what = " ".join(["gpk-bench --kernels"] + backend)
            expect(rc == 0, f"{what}: exits 0 (status {rc})")
            expect("--kernels needs the CUDA backend" in stdout, f"{what}: says it needs the CUDA backend")
            expect(not any(l.lstrip().startswith("kernel ") for l in stdout.splitlines()),
                   f"{what}: prints no kernel lines")
            if not backend:
                expect("no usable GPU" in stdout, f"{what}: says there is no usable GPU")
            if os.path.exists(rows):
                with open(rows) as f:
                    results = json.load(f).get("results", [])
                expect(results and not any("kernels" in r for r in results), f"{what}: JSON rows without kernels")
            else:
                expect(False, f"{what}: writes {rows}")
    refuses([a.bench, "--kernels", "--tune", "t.tsv"] + HOST, "--kernels", "--tune")


def json_files(a):
    with tempfile.TemporaryDirectory() as tmp:
        accepts([a.bench, "--quick", "--op", "pi", "--repeat", "1"] + HOST, cwd=tmp)
        expect(os.listdir(tmp) == [], f"gpk-bench without --json leaves no file (found {os.listdir(tmp)})")
        accepts([a.bench, "--quick", "--op", "pi", "--repeat", "1", "--json", "rows.json"] + HOST, cwd=tmp)
        expect(os.listdir(tmp) == ["rows.json"], "gpk-bench --json rows.json writes that file alone")
        with open(os.path.join(tmp, "rows.json")) as f:
            expect(any(r.get("op") == "pi" for r in json.load(f).get("results", [])), "rows.json holds the pi rows")


GROUPS = {"numbers": numbers, "sizes": sizes, "names": names, "messages": messages, "json": json_files}


class Apps:
    pass


def main(argv):
    if not argv or argv[0] not in GROUPS or len(argv) != 13:
        sys.exit(__doc__)
    a = Apps()
    options = dict(zip(argv[1::2], argv[2::2]))
    try:
        # Absolute: the json group runs the apps in a folder of its own.
        a.bench, a.gemm, a.pi, a.rungs = (os.path.abspath(options[key]) for key in ["--bench", "--gemm", "--pi", "--rungs"])
        a.cuda_build = options["--cuda-build"] == "1"
        a.cupti = options["--cupti"] == "1"
    except KeyError:
        sys.exit(__doc__)
    GROUPS[argv[0]](a)
    if failures:
        sys.exit(f"{len(failures)} FAILED:\n  " + "\n  ".join(failures))
    print("all ok")


if __name__ == "__main__":
    main(sys.argv[1:])
