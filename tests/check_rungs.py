#!/usr/bin/env python3
"""The ladder lists agree with the rung files.

For each libgpk/cuda/<op>/rungs.def: its GPK_RUNG lines are numbered 00, 01, ...
without a gap; each names a file NN_<name>.cu of the op's folder that defines the
line's launcher (and <launcher>_takes when the rung is `checked`), and no other file
of the library (or of the bench programs) defines either, so that a rung is its file
and its line; every numbered file NN_*.cu of the folder has its line; the dtypes and takes columns hold known
words; the GPK_VENDOR, GPK_REFERENCE, GPK_AUTO and GPK_AUTO_NEVER lines name rungs of
the list, and no rung is both GPK_AUTO and GPK_AUTO_NEVER.
Prints every disagreement and exits 1 if there is one.
"""
import re
import sys
from pathlib import Path

OPS = ["gemm", "reduce", "transpose", "pi", "gemm_batched"]
# Where a launcher or a _takes could be defined apart from its rung file.
SOURCE_DIRS = ["libgpk", "bench"]
SOURCE_SUFFIXES = {".cu", ".cuh", ".cpp", ".hpp", ".h", ".inc"}
DTYPES = {"float", "floats", "words", "all", "half", "f32_half", "f32", "f64", "fp8", "floats_ex", "float_ex"}
TAKES = {"any", "checked"}
RUNG = re.compile(r"^GPK_RUNG\((.*)\)\s*$")
ROLE = re.compile(r"^GPK_(VENDOR|REFERENCE|AUTO|AUTO_NEVER)\(\s*(\w+)\s*\)\s*$")
NUMBERED = re.compile(r"^(\d\d)_(\w+)\.cu$")


def defines(text: str, function: str) -> bool:
    """Whether `text` defines (or declares by name) gpk_status `function`(gpk_context &...)."""
    return re.search(rf"\bgpk_status\s+{function}\s*\(\s*gpk_context\s*&", text) is not None


def check_op(folder: Path, sources: dict, errors: list) -> int:
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

    names = []
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
        if not defines(text, launcher):
            error(f"{source.name} does not define the launcher {launcher} its line names")
        defines_takes = defines(text, f"{launcher}_takes")
        if takes == "checked" and not defines_takes:
            error(f"{source.name} is 'checked' but does not define {launcher}_takes")
        if takes == "any" and defines_takes:
            error(f"{source.name} defines {launcher}_takes but its line says 'any'")
        # The rung's file alone: a launcher or a _takes elsewhere makes the rung more
        # than its file and its line.
        for path, other in sources.items():
            if path == source.resolve():
                continue
            for function in (launcher, f"{launcher}_takes"):
                if defines(other, function):
                    error(f"{function} of rung '{name}' is defined in {path}, outside its file {source.name}")

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
    sources = {
        path.resolve(): path.read_text(errors="replace")
        for top in SOURCE_DIRS
        if (root / top).is_dir()
        for path in sorted((root / top).rglob("*"))
        if path.is_file() and path.suffix in SOURCE_SUFFIXES
    }
    errors, counts = [], []
    for op in OPS:
        counts.append(f"{op} {check_op(cuda / op, sources, errors)}")
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
