"""The record's current figures, the one source of the README's figures and charts.

docs/PERFORMANCE.md, section "Current figures": a line naming the device, the table
that `scripts/perf-tables --summary` prints (a row per headline case: op, case, our
best rung, its figure, its ratio to the vendor variant timed in the same process, the
run), and a subsection "Several GPUs" whose text the README quotes.

Read by scripts/perf-tables (--readme writes the README's generated blocks, --check
compares them and the charts with the record, in CI) and scripts/charts (--record
draws the charts). Standard library only: CI checks without matplotlib.
"""
import hashlib
import json
import os
import re
import struct
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
RECORD = os.path.join(ROOT, "docs", "PERFORMANCE.md")
README = os.path.join(ROOT, "README.md")
IMG = os.path.join(ROOT, "docs", "img")

SECTION = "## Current figures"
TABLE_HEAD = "| op | case | best rung | figure | vs vendor | run |"
GPUS_HEAD = "### Several GPUs"


class RecordError(Exception):
    pass


def _section(lines, head, level):
    """The lines under `head` up to the next heading of `level` or above."""
    try:
        start = lines.index(head)
    except ValueError:
        raise RecordError(f'no line "{head}"') from None
    stops = tuple("#" * n + " " for n in range(1, level + 1))
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith(stops)), len(lines))
    return lines[start + 1:end]


def _cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


def read(path=RECORD):
    """{"device": str, "rows": [row...], "gpus": [markdown lines]}; each row: op, case,
    dtype (the group the README lists it under), rung, value, unit, ratio, run."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    section = _section(lines, SECTION, 2)
    device = next((m.group(1).strip() for m in (re.match(r"Device: (.+?)\.?$", l) for l in section) if m), None)
    if not device:
        raise RecordError(f'"{SECTION}" has no line "Device: NAME."')
    try:
        at = section.index(TABLE_HEAD)
    except ValueError:
        raise RecordError(f'"{SECTION}" has no table headed "{TABLE_HEAD}"') from None
    rows = []
    for line in section[at + 2:]:
        if not line.startswith("|"):
            break
        op, case, rung, figure, ratio, run = _cells(line)
        value, _, unit = figure.partition(" ")
        m = re.fullmatch(r"([0-9.]+)x", ratio)
        if not m:
            raise RecordError(f"row {line!r}: the ratio is not a number followed by x")
        try:
            value = float(value)
        except ValueError:
            raise RecordError(f"row {line!r}: the figure is not a number and a unit") from None
        first = case.split()[0] if op != "pi" else "-"
        dtype = "tf32" if case.startswith("f32 TF32") else first
        rows.append({"op": op, "case": case, "dtype": dtype, "rung": rung, "value": value, "unit": unit,
                     "ratio": float(m.group(1)), "run": run})
    if not rows:
        raise RecordError(f'the table of "{SECTION}" has no rows')
    gpus = _section(section, GPUS_HEAD, 3) if GPUS_HEAD in section else []
    while gpus and not gpus[0].strip():
        gpus.pop(0)
    while gpus and not gpus[-1].strip():
        gpus.pop()
    return {"device": device, "rows": rows, "gpus": gpus}


def digest(device, rows):
    """What a chart was drawn from, as the PNG records it (scripts/charts --record)."""
    text = json.dumps({"device": device, "rows": rows}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def png_text(path):
    """The tEXt entries of a PNG file (matplotlib writes its metadata there)."""
    out = {}
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise RecordError(f"{path} is not a PNG file")
    at = 8
    while at + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        body = data[at + 8:at + 8 + length]
        if kind == b"tEXt":
            key, _, value = body.partition(b"\0")
            out[key.decode("latin-1")] = value.decode("latin-1")
        elif kind == b"zTXt":
            key, _, rest = body.partition(b"\0")
            out[key.decode("latin-1")] = zlib.decompress(rest[1:]).decode("latin-1")
        elif kind == b"IEND":
            break
        at += 12 + length
    return out


# ---------------------------------------------------------------- the charts ----

# Each chart of the README: file, title, and which rows of the table it draws.
CHARTS = [
    ("current-gemm.png", "gemm", lambda r: r["op"] == "gemm"),
    ("current-reduce-transpose-pi.png", "reduce, transpose and pi", lambda r: r["op"] in ("reduce", "transpose", "pi")),
    ("current-gemm-batched.png", "gemm_batched", lambda r: r["op"] == "gemm_batched"),
]


def chart_rows(record, select):
    return [r for r in record["rows"] if select(r)]


# ---------------------------------------------------------------- the README ----

def pretty_case(row):
    """How the README names a case: 4096³, 8192×8192×256, 2^22, 4³ ×2^24."""
    case = row["case"]
    if row["op"] != "pi":
        case = case.split(" ", 2 if row["dtype"] == "tf32" else 1)[-1]
    if row["op"] == "gemm":
        case = re.sub(r"(?<![\d^])2\^(\d+)", lambda m: str(2 ** int(m.group(1))) if int(m.group(1)) <= 16 else m.group(0),
                      case)
    case = re.sub(r"(\d)\^3(?!\d)", r"\1³", case)
    case = re.sub(r"(\d)\^2(?!\d)", r"\1²", case)
    case = re.sub(r"(?<=[\d³²])x(?=\d)", "×", case).replace(" x", " ×")
    # "4097^3, every ld odd": the condition in brackets, so that lists of cases read.
    head, _, condition = case.partition(", ")
    return f"{head} ({condition})" if condition else head


def runs_text(runs):
    runs = sorted(set(runs), key=int)
    return ("run " + runs[0]) if len(runs) == 1 else "runs " + ", ".join(runs[:-1]) + " and " + runs[-1]


def figures_block(record):
    """The README's block "figures": the table grouped by op and dtype, then the charts."""
    out = [f"Our best rung against the vendor library timed in the same process, on an {record['device']} "
           f"({runs_text(r['run'] for r in record['rows'])} of the [record](docs/PERFORMANCE.md#current-figures), "
           "where each figure is; the bars and lines below are the same figures):",
           "",
           "| op | dtype | our best rung: its speed over the vendor's, by case |",
           "|---|---|---|"]
    groups, ops = {}, {}
    for r in record["rows"]:
        ops.setdefault(r["op"], len(ops))
        groups.setdefault((r["op"], r["dtype"]), []).append(r)
    # Each op's rows together, in the order the record first names the op.
    for (op, dtype), rows in sorted(groups.items(), key=lambda g: ops[g[0][0]]):
        parts, rung = [], None
        for r in rows:
            # A batched case's batch count only fills about 1 GiB: the size n^3 names it.
            case = pretty_case(r).split(" ×")[0] if op == "gemm_batched" else pretty_case(r)
            text = f"{r['ratio']:.2f}x at {case}"
            if r["rung"] != rung:
                rung = r["rung"]
                text = f"`{rung}` " + text
                if parts:
                    parts[-1] += ";"
            elif parts:
                parts[-1] += ","
            parts.append(text)
        out.append(f"| {op} | {dtype if dtype != '-' else '–'} | {' '.join(parts)} |")
    out += ["", "| | |", "|---|---|"]
    cells = [f"![{title}](docs/img/{name})" for name, title, _ in CHARTS]
    cells += [""] * (len(cells) % 2)
    for i in range(0, len(cells), 2):
        out.append(f"| {cells[i]} | {cells[i + 1]} |")
    return out


def several_gpus_block(record):
    if not record["gpus"]:
        raise RecordError(f'"{SECTION}" has no subsection "{GPUS_HEAD}"')
    return list(record["gpus"])


BLOCKS = {"figures": figures_block, "several-gpus": several_gpus_block}


def begin_marker(name):
    return f"<!-- generated: {name} (scripts/perf-tables --readme, from docs/PERFORMANCE.md; edit the record, not this) -->"


def end_marker(name):
    return f"<!-- end generated: {name} -->"


def render_readme(text, record):
    """The README with each generated block made anew from the record."""
    lines = text.split("\n")
    for name, make in BLOCKS.items():
        begin, end = begin_marker(name), end_marker(name)
        if lines.count(begin) != 1 or lines.count(end) != 1:
            raise RecordError(f"README.md must hold the lines {begin!r} and {end!r} once each")
        a, b = lines.index(begin), lines.index(end)
        if b < a:
            raise RecordError(f"README.md: the end of block {name!r} comes before its start")
        lines[a + 1:b] = make(record)
    return "\n".join(lines)
