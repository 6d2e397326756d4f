#!/usr/bin/env python3
"""The limits the project keeps on its own layout, checked without a build or a GPU:

- docs/PERFORMANCE.md, the record a maintainer reads, at most 450 lines (the runs go to
  the lab log, docs/lab/);
- no line of README.md over 300 characters;
- no file under libgpk/ over 650 lines;
- no rung built apart from the library: the guard that once cut a rung's launcher away
  for stand-alone harnesses appears nowhere (the bench programs link the library);
- every section of docs/PERFORMANCE.md that a file of the code cites by name (the record's
  path, the word section and the name in quotes) is a heading of the record.

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

    for p in problems:
        print(p)
    if problems:
        return 1
    print(f"layout: record {n} lines, README lines within {README_MAX_CHARS} characters, libgpk files within "
          f"{LIBGPK_MAX_LINES} lines, no {GUARD}, every cited section of the record present")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
