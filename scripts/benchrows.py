"""What the scripts that read gpk-bench's JSON share: how a row's case is named and
which of its keys holds the ratio to the case's first ceiling.

Imported by scripts/perf-tables, scripts/charts and scripts/gpu-check (which puts
this folder on PYTHONPATH).
"""
import math

# The keys that size a case, by op.
SIZE_KEYS = {"gemm": ("m", "n", "k"), "transpose": ("rows", "cols"), "reduce": ("n",), "pi": ("samples",)}


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def count(v):
    """268435456 reads better as 2^28: powers of two from 2^10 up."""
    return f"2^{v.bit_length() - 1}" if isinstance(v, int) and v >= 1 << 10 and v & (v - 1) == 0 else str(v)


def size_keys(row):
    return SIZE_KEYS.get(row["op"]) or tuple(k for k in ("m", "n", "k", "rows", "cols", "samples") if k in row)


def case_dims(row):
    """The case's sizes: 4096^3 (gemm, m = n = k), 8192^2 (square transpose),
    8192x8192x256, 2^28."""
    sizes = [row.get(k) for k in size_keys(row)]
    if row["op"] == "gemm" and len(set(sizes)) == 1:
        return f"{sizes[0]}^3"
    if row["op"] == "transpose" and len(set(sizes)) == 1:
        return f"{sizes[0]}^2"
    return "x".join(count(s) for s in sizes)


def case_label(row, with_op=True):
    """'gemm f32 4096^3' (or 'f32 4096^3' without the op); ops without a dtype
    (pi) leave it out."""
    dtype = row.get("dtype")
    parts = ([row["op"]] if with_op else []) + ([dtype] if dtype not in (None, "-") else []) + [case_dims(row)]
    return " ".join(parts)


def ceiling_key(rows):
    """The ratio to a case's first ceiling row: the JSON's key k that comes with
    k + "_of", and what the ratio is against ("copy", "h2d", "simple fused");
    (None, None) when the rows have none."""
    return next(((k, r[k + "_of"]) for r in rows for k in r if k.startswith("ratio_to_") and k + "_of" in r),
                (None, None))
