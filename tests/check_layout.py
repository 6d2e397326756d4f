#!/usr/bin/env python3
"""The limits the project keeps on its own layout, checked without a build or a GPU:

- docs/PERFORMANCE.md, the record a maintainer reads, at most 450 lines (the runs go to
  the lab log, docs/lab/);
- no line of README.md over 300 characters;
- no file under libgpk/ over 650 lines;
- no rung built apart from the library: the guard that once cut a rung's launcher away
  for stand-alone harnesses appears nowhere (the bench programs link the library);
- every section of docs/PERFORMANCE.md that a file of the code cites by name (the record's
  path, the word section and the name in quotes) is a heading of the record;
- every CUDA file of the library whose code (its own or its quoted includes') uses
  instructions that exist only for an architecture-specific target (wgmma, setmaxnreg,
  TMA tensor copies, clusters: sm_90a) is a rung file that says so in its opening
  comment, "// gpk-arch: 90a": libgpk/meson.build reads that line to build the file for
  the target, and a file without it would build with its kernels empty everywhere.

usage: tests/check_layout.py [SOURCE_ROOT]
"""
import os
import re
import sys

RECORD_MAX_LINES = 450
README_MAX_CHARS = 300
LIBGPK_MAX_LINES = 650
# Spelled in two pieces, so that this file does not hold it.
GUARD = "GPK_TC_" + "STANDALONE"
# Folders of the code that may cite the record.
CODE_DIRS = ("libgpk", "apps", "bench", "scripts", "tests", "bindings", "examples", "include")
# PTX that only an architecture-specific target (sm_90a) assembles: wgmma, setmaxnreg,
# TMA tensor copies, and the cluster barriers and multicast that go with them.
ARCH_SPECIFIC_PTX = ("wgmma.mma_async", "setmaxnreg", "cp.async.bulk.tensor", "barrier.cluster")
# The line of a rung's opening comment that names its target; libgpk/meson.build reads
# the same spelling (a line that starts with it, the target after it up to a comma or a
# space, words about it after that).
ARCH_MARKER = re.compile(r"^// gpk-arch:[ \t]*([^\s,]*)", re.M)


def skipped(name):
    """Folders that are not the project's sources: build trees, caches, hidden ones."""
    return name.startswith(".") or name.startswith("build") or name in ("__pycache__", "subprojects") or \
        name.endswith(".egg-info")


def files_under(root, top):
    for folder, dirs, names in os.walk(os.path.join(root, top)):
        dirs[:] = sorted(d for d in dirs if not skipped(d))
        for name in sorted(names):
            yield os.path.join(folder, name)


def text_of(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except (UnicodeDecodeError, OSError):
        return None  # a binary file (an image, a compiled object)


def line_count(text):
    return text.count("\n") + (0 if text.endswith("\n") or not text else 1)


def cited_sections(text):
    """The names of the record's sections a file cites, its comment markers and line
    breaks taken out (the record's path, a comma, the word section or not, the name in
    double quotes)."""
    flat = re.sub(r"\n\s*(//+|#+|\*)?\s*", " ", text)
    return re.findall(r'PERFORMANCE\.md,?\s+(?:section\s+)?"([^"]+)"', flat)


def quoted_includes(path, text, root):
    """The files a file includes by a quoted name, resolved as the library's build does:
    beside the file, then under libgpk/ and include/."""
    for name in re.findall(r'^\s*#\s*include\s+"([^"]+)"', text, re.M):
        for folder in (os.path.dirname(path), os.path.join(root, "libgpk"), os.path.join(root, "include")):
            candidate = os.path.normpath(os.path.join(folder, name))
            if os.path.isfile(candidate):
                yield candidate
                break


def arch_specific_uses(path, root):
    """The architecture-specific instructions a translation unit uses, with the file
    (itself or one it includes, at any depth) where each first appears."""
    found, seen, todo = {}, set(), [path]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        text = text_of(current) or ""
        for ptx in ARCH_SPECIFIC_PTX:
            if ptx in text and ptx not in found:
                found[ptx] = os.path.relpath(current, root)
        todo.extend(quoted_includes(current, text, root))
    return found


def opening_comment(text):
    """The lines of comment (and blank lines) that open a file, up to its first code."""
    lines = []
    for line in text.split("\n"):
        if line.strip() and not line.lstrip().startswith("//"):
            break
        lines.append(line)
    return "\n".join(lines)


def rung_files(root):
    """The rung files that the ladders' rungs.def name, as libgpk/meson.build forms them
    (cuda/<op>/NN_name.cu), relative to the source root."""
    files = set()
    cuda = os.path.join(root, "libgpk", "cuda")
    for op in sorted(os.listdir(cuda)):
        text = text_of(os.path.join(cuda, op, "rungs.def"))
        for number, name in re.findall(r"^GPK_RUNG\(\s*(\w+)\s*,\s*(\w+)\s*,", text or "", re.M):
            files.add(os.path.join("libgpk", "cuda", op, f"{number}_{name}.cu"))
    return files


def arch_marker_problems(root):
    problems = []
    rungs = rung_files(root)
    for path in files_under(root, "libgpk"):
        if not path.endswith(".cu"):
            continue
        rel = os.path.relpath(path, root)
        text = text_of(path) or ""
        markers = ARCH_MARKER.findall(text)
        uses = arch_specific_uses(path, root)
        if markers and rel not in rungs:
            problems.append(f"{rel} carries a gpk-arch line but is no rung of a rungs.def: libgpk/meson.build reads "
                            "the line of rung files only")
        if not uses:
            continue
        where = ", ".join(f"{ptx} ({src})" for ptx, src in sorted(uses.items()))
        if not markers:
            problems.append(f"{rel} uses {where}, which need an architecture-specific target, and has no "
                            '"// gpk-arch: 90a" line in its opening comment')
            continue
        if len(markers) > 1 or not ARCH_MARKER.search(opening_comment(text)):
            problems.append(f"{rel}: one gpk-arch line, in the opening comment (found {len(markers)})")
        if not re.fullmatch(r"\d+a", markers[0]):
            problems.append(f'{rel}: gpk-arch names "{markers[0]}", not an architecture-specific target such as 90a')
    return problems


def main(argv):
    root = os.path.abspath(argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    problems = []

    record_path = os.path.join(root, "docs", "PERFORMANCE.md")
    record = text_of(record_path) or ""
    n = line_count(record)
    if n > RECORD_MAX_LINES:
        problems.append(f"docs/PERFORMANCE.md has {n} lines, more than {RECORD_MAX_LINES}: move runs to docs/lab/")
    headings = {m.group(1).strip() for m in re.finditer(r"^#+\s+(.+)$", record, re.M)}

    with open(os.path.join(root, "README.md"), encoding="utf-8") as f:
        for number, line in enumerate(f.read().split("\n"), 1):
            if len(line) > README_MAX_CHARS:
                problems.append(f"README.md:{number} is {len(line)} characters long, more than {README_MAX_CHARS}")

    for path in files_under(root, "libgpk"):
        text = text_of(path)
        if text is not None and line_count(text) > LIBGPK_MAX_LINES:
            problems.append(f"{os.path.relpath(path, root)} has {line_count(text)} lines, more than {LIBGPK_MAX_LINES}")

    tops = sorted(d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d)) and not skipped(d))
    tops += sorted(f for f in os.listdir(root) if os.path.isfile(os.path.join(root, f)))
    for top in tops:
        paths = files_under(root, top) if os.path.isdir(os.path.join(root, top)) else [os.path.join(root, top)]
        for path in paths:
            text = text_of(path)
            if text is None:
                continue
            rel = os.path.relpath(path, root)
            if GUARD in text:
                problems.append(f"{rel} names {GUARD}: a rung file is built whole, with its launcher")
            if rel.split(os.sep)[0] in CODE_DIRS:
                for section in cited_sections(text):
                    if section not in headings:
                        problems.append(f'{rel} cites section "{section}" of docs/PERFORMANCE.md, which has no such '
                                        "heading")

    problems += arch_marker_problems(root)

    for p in problems:
        print(p)
    if problems:
        return 1
    print(f"layout: record {n} lines, README lines within {README_MAX_CHARS} characters, libgpk files within "
          f"{LIBGPK_MAX_LINES} lines, no {GUARD}, every cited section of the record present, every file of "
          "architecture-specific instructions marked with its target")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
