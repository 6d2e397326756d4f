#!/usr/bin/env python3
"""The ladder lists agree with the rung files.

For each libgpk/cuda/<op>/rungs.def: its GPK_RUNG lines are numbered 00, 01, ...
without a gap; each names a file NN_<name>.cu of the op's folder that defines the
line's launcher (and <launcher>_takes when the rung is `checked`); every numbered
file NN_*.cu of the folder has its line; the dtypes and takes columns hold known
words; the GPK_VENDOR, GPK_REFERENCE, GPK_AUTO and GPK_AUTO_NEVER lines name rungs of
the list, and no rung is both GPK_AUTO and GPK_AUTO_NEVER.
Prints every disagreement and exits 1 if there is one.
"""
import re
import sys
from pathlib import Path

OPS = ["gemm", "reduce", "transpose", "pi", "gemm_batched"]
# Ladders whose rung files depend on nothing of the library (a standalone harness
# builds them): their launchers, and _takes, are defined in the folder's launch.cu.
LAUNCH_FILES = {"gemm_batched": "launch.cu"}
DTYPES = {"float", "floats", "words", "all", "half", "f32_half", "f32", "f64", "fp8", "floats_ex", "float_ex"}
TAKES = {"any", "checked"}
RUNG = re.compile(r"^GPK_RUNG\((.*)\)\s*$")
ROLE = re.compile(r"^GPK_(VENDOR|REFERENCE|AUTO|AUTO_NEVER)\(\s*(\w+)\s*\)\s*$")
NUMBERED = re.compile(r"^(\d\d)_(\w+)\.cu$")


def check_op(folder: Path, errors: list) -> int:
    def error(text):
        errors.append(f"{folder.name}/rungs.def: {text}")

    deffile = folder / "rungs.def"
    if not deffile.is_file():
        error("missing")
        return 0
    rungs, roles = [], {"VENDOR": [], "REFERENCE": [], "AUTO": [], "AUTO_NEVER": []}
    for number, line in enumerate(deffile.read_text().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("//"):
            continue
        m = RUNG.match(line)
        if m:
            fields = [f.strip() for f in m.group(1).split(",")]
            if len(fields) != 5:
                error(f"line {number}: GPK_RUNG takes 5 fields, got {len(fields)}")
                continue
            rungs.append((number, *fields))
            continue
        m = ROLE.match(line)
        if m:
            roles[m.group(1)].append(m.group(2))
            continue
        error(f"line {number}: neither a GPK_RUNG nor a role line: {line}")

    names, files = [], {}
    for position, (number, nn, name, launcher, dtypes, takes) in enumerate(rungs):
        if nn != f"{position:02d}":
            error(f"line {number}: rung '{name}' is numbered {nn}, its place in the list is {position:02d}")
        if dtypes not in DTYPES:
            error(f"line {number}: dtypes '{dtypes}' is none of {sorted(DTYPES)}")
        if takes not in TAKES:
            error(f"line {number}: takes '{takes}' is none of {sorted(TAKES)}")
        if name in names:
            error(f"line {number}: rung name '{name}' is listed twice")
        names.append(name)
        source = folder / f"{nn}_{name}.cu"
        if not source.is_file():
            error(f"line {number}: no file {source.name} for rung '{name}'")
            continue
        text = source.read_text()
        if folder.name in LAUNCH_FILES:
            text = (folder / LAUNCH_FILES[folder.name]).read_text()
        files[name] = text
        if not re.search(rf"\bgpk_status {launcher}\(gpk_context &", text):
            error(f"{source.name} does not define the launcher {launcher} its line names")
        defines_takes = re.search(rf"\bgpk_status {launcher}_takes\(", text) is not None
        if takes == "checked" and not defines_takes:
            error(f"{source.name} is 'checked' but does not define {launcher}_takes")
        if takes == "any" and defines_takes:
            error(f"{source.name} defines {launcher}_takes but its line says 'any'")

    listed = {f"{nn}_{name}.cu" for _, nn, name, *_ in rungs}
    for path in sorted(folder.iterdir()):
        if NUMBERED.match(path.name) and path.name not in listed:
            error(f"{path.name} has no GPK_RUNG line")

    for role, wanted in (("VENDOR", 1), ("REFERENCE", 1)):
        if len(roles[role]) != wanted:
            error(f"{len(roles[role])} GPK_{role} lines, want {wanted}")
    if not 1 <= len(roles["AUTO"]) <= 4:
        error(f"{len(roles['AUTO'])} GPK_AUTO lines, want 1 to 4")
    for role, listed_names in roles.items():
        for name in listed_names:
            if name not in names:
                error(f"GPK_{role}({name}) names no rung of the list")
    for name in set(roles["AUTO"]) & set(roles["AUTO_NEVER"]):
        error(f"rung '{name}' is both GPK_AUTO and GPK_AUTO_NEVER")
    return len(rungs)


def main() -> int:
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent
    cuda = root / "libgpk" / "cuda"
    errors, counts = [], []
    for op in OPS:
        counts.append(f"{op} {check_op(cuda / op, errors)}")
    # Every op folder with numbered rung files is a ladder this test knows.
    for folder in sorted(p for p in cuda.iterdir() if p.is_dir()):
        if folder.name not in OPS and any(NUMBERED.match(p.name) for p in folder.iterdir()):
            errors.append(f"{folder.name}: numbered rung files, but not a ladder of this test")
    for e in errors:
        print(e)
    print(f"rungs listed: {', '.join(counts)}; {len(errors)} disagreement(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
