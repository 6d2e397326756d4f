#!/usr/bin/env python3
"""Passes when a command refuses its input: it exits with a non-zero status of its own
(not killed by a signal, which would be a crash) and its output names the problem.

usage: expect_failure.py [--says TEXT]... -- COMMAND [ARG...]

Each TEXT must appear in the command's stdout or stderr. Meson's should_fail would
pass a crash too, and reports the test apart from the others ("Expected Fail").
"""
import subprocess
import sys


def main(argv):
    if "--" not in argv:
        sys.exit(__doc__)
    split = argv.index("--")
    options, command = argv[:split], argv[split + 1:]
    says = []
    while options:
        if options[0] != "--says" or len(options) < 2:
            sys.exit(__doc__)
        says.append(options[1])
        options = options[2:]
    if not command:
        sys.exit(__doc__)
    print("$", " ".join(command), flush=True)
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    output = done.stdout + done.stderr
    print(output, end="")
    if done.returncode == 0:
        sys.exit("FAIL: the command succeeded; it should have refused its input")
    if done.returncode < 0:
        sys.exit(f"FAIL: the command was killed by signal {-done.returncode}")
    missing = [text for text in says if text not in output]
    if missing:
        sys.exit("FAIL: its output does not say " + ", ".join(repr(t) for t in missing))
    print(f"ok: exit status {done.returncode}" + (", naming " + ", ".join(repr(t) for t in says) if says else ""))


if __name__ == "__main__":
    main(sys.argv[1:])
