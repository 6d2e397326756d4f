#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_api.cpp into tests/fuzz/corpus/.

Each seed is a short sequence of calls spelled in the target's input format (see
Input in fuzz_api.cpp): a selector byte per call, then one byte or a few per
argument, where a small byte picks an ordinary value. The seeds give the fuzzer a
valid call of every function and one for each kind of rule, to mutate from.
Run it again after changing the format; the files are committed.
"""

import pathlib
import struct

GEMM, REDUCE, TRANSPOSE, PI, VARIANTS, CONTEXT, BATCHED = range(7)
LIVE, STALE_CTX, NULL_CTX = 0x00, 0x0E, 0x0F  # STALE_CTX: a destroyed handle
F32, F64, I32, I64, F16, BF16 = range(6)  # choice() indices, in the order of the enum
COL, ROW = 0, 1
N, T = 0, 1
SUM, MIN, MAX = range(3)
NORMAL, TOP, NULL, ALIAS = 0, 4, 5, 6     # mode bytes (TOP: runs past the end of the address space)
ZERO, ONE, MINUS_ONE, TWO, HALF = range(5)  # scalar() bytes of exact values
NAN = 0xC0                               # an awkward scalar
DENORM_MIN, MINUS_1E300 = 0xC5, 0xC7     # awkward scalars that are 0 in F32 but not in F64


def size16(n):
    """A size above 47: the two-byte form."""
    return [0xC0, *struct.pack("<H", n)]


def special(i):
    """Edge values of Input::size(): 0 -> -1, 2 -> INT64_MIN, 3 -> INT64_MAX, 7 -> 2^32."""
    return [0xE0 + i]


def ld(pad=0):
    """The least leading dimension plus pad (0..3)."""
    return [pad]


def ld_abs(v):
    """An absolute leading dimension in -16..15, often too small."""
    return [0xD0 + v]


# Sizes and leading dimensions are byte sequences: (5,), size16(...), ld(...), ...
def gemm(dtype=F32, layout=COL, ta=N, tb=N, m=(4,), n=(3,), k=(2,), lda=(0,), ldb=(0,), ldc=(0,),
         alpha=ONE, beta=ZERO, modes=(NORMAL, NORMAL, NORMAL), ctx=LIVE, alias_b=0):
    return [GEMM, ctx, dtype, layout, ta, tb, *m, *n, *k, *lda, *ldb, *ldc, alpha, beta, *modes, alias_b]


# Stride bytes of Input::stride(): PACKED + pad (0..3) is one matrix's span plus pad,
# SHARED is 0, OVERLAP + x is x % span (matrices overlapping), NEG + x is -(x + 1),
# STRIDE_SPECIAL + i an extreme value (3: INT64_MAX / 2, 4: INT64_MAX / 4 + 1).
PACKED, SHARED, OVERLAP, NEG, STRIDE_SPECIAL = 0x00, 0xA0, 0xC0, 0xD0, 0xE0
# Batch count bytes of Input::batch(): 0..4 as such; COUNT_SPECIAL + i an edge value
# (0: -1, 3: INT64_MAX, 5: 2^62).
COUNT_SPECIAL = 0xE0
ALIAS_B, TOP_FIRST_FITS = 1, 2  # flags of a batched call


def batched(dtype=F32, layout=COL, ta=N, tb=N, m=(4,), n=(3,), k=(2,), lda=(0,), ldb=(0,), ldc=(0,),
            strides=(PACKED, PACKED, PACKED), count=3, alpha=ONE, beta=ZERO, modes=(NORMAL, NORMAL, NORMAL),
            flags=0, alias_at=0, ctx=LIVE):
    return [BATCHED, ctx, dtype, layout, ta, tb, *m, *n, *k, *lda, *ldb, *ldc, *strides, count, alpha, beta, *modes,
            flags, alias_at]


def reduce(dtype=F32, op=SUM, n=(5,), modes=(NORMAL, NORMAL), nan_at=0xFF, ctx=LIVE):
    return [REDUCE, ctx, dtype, op, *n, *modes, nan_at]


def transpose(dtype=F32, layout=COL, rows=(5,), cols=(3,), lda=(0,), ldb=(0,), modes=(NORMAL, NORMAL), ctx=LIVE):
    return [TRANSPOSE, ctx, dtype, layout, *rows, *cols, *lda, *ldb, *modes]


def pi(samples=(7,), seed=b"\x2a", mode=NORMAL, ctx=LIVE):
    return [PI, ctx, *samples, len(seed), *seed, mode]


def set_variant(op, name, ctx=LIVE):
    """name: an index into the target's list (0 'host', 1 'auto', 2 'cublas', 3 ''),
    bytes for a name of its own, or None for NULL."""
    if name is None:
        spelled = [15]
    elif isinstance(name, int):
        spelled = [name]
    else:
        spelled = [8, len(name), *name]
    return [VARIANTS, ctx, op, 0, *spelled]


def variant_count(op, null=False):
    return [VARIANTS, LIVE, op, 1, 7 if null else 0]


def variant_name(op, index):
    """index in -1..2."""
    return [VARIANTS, LIVE, op, 2, index + 1]


def create(backend=0, device=0, null_out=False):
    """backend: 0 HOST, 1 -1, 2 3 (the target's list); device in -2..237."""
    return [CONTEXT, LIVE, 4, backend, device + 2, 7 if null_out else 0]


def info(version_mask, status, ctx=LIVE):
    """gpk_version with the parts in the mask, gpk_status_string(status in -2..237)."""
    return [CONTEXT, ctx, 5, version_mask, status + 2]


SEEDS = {
    "gemm-f32-col": gemm(),
    "gemm-f64-row-tt-beta": gemm(F64, ROW, T, T, (5,), (7,), (3,), ld(2), ld(0), ld(1), TWO, MINUS_ONE),
    "gemm-f32-row-nt-padded": gemm(F32, ROW, N, T, (9,), (4,), (6,), ld(3), ld(1), ld(2), HALF, ONE),
    "gemm-k0-scales-c": gemm(F64, COL, N, N, (3,), (4,), (0,), beta=HALF),
    "gemm-alpha0-beta0": gemm(F32, COL, T, N, (6,), (2,), (5,), alpha=ZERO, beta=ZERO),
    "gemm-nan-alpha": gemm(F64, COL, N, N, (2,), (2,), (2,), alpha=NAN),
    "gemm-c-over-a": gemm(modes=(NORMAL, NORMAL, ALIAS)),
    "gemm-c-over-b": gemm(modes=(NORMAL, NORMAL, ALIAS), alias_b=1),
    "gemm-null-b": gemm(modes=(NORMAL, NULL, NORMAL)),
    "gemm-null-abc-empty": gemm(m=(0,), modes=(NULL, NULL, NULL)),
    "gemm-lda-too-small": gemm(lda=ld_abs(2)),
    "gemm-int-dtype": gemm(dtype=I32),
    "gemm-bad-layout": gemm(layout=0xE9),
    "gemm-negative-k": gemm(k=special(0)),
    "gemm-huge-overflow": gemm(m=special(3), n=special(3), k=(1,)),
    "gemm-null-ctx": gemm(ctx=NULL_CTX),
    "gemm-f16-row-tn-padded": gemm(F16, ROW, T, N, (9,), (4,), (6,), ld(1), ld(3), ld(2), HALF, ONE),
    "gemm-bf16-col-beta0": gemm(BF16, COL, N, T, (7,), (5,), (3,), alpha=TWO, beta=ZERO),
    "gemm-f16-k0-scales-c": gemm(F16, COL, N, N, (3,), (4,), (0,), beta=HALF),
    "reduce-f32-sum": reduce(),
    "reduce-f64-sum-blocks": reduce(F64, SUM, size16(10000)),
    "reduce-f32-min-nan": reduce(F32, MIN, (9,), nan_at=4),
    "reduce-f64-max-nan": reduce(F64, MAX, size16(5000), nan_at=31),
    "reduce-i32-sum-blocks": reduce(I32, SUM, size16(8193)),
    "reduce-i64-min": reduce(I64, MIN, (17,)),
    "reduce-i32-max": reduce(I32, MAX, (1,)),
    "reduce-sum-empty": reduce(F32, SUM, (0,), modes=(NULL, NORMAL)),
    "reduce-min-empty": reduce(F64, MIN, (0,)),
    "reduce-null-result": reduce(modes=(NORMAL, NULL)),
    "reduce-bad-op": reduce(op=0xEB),
    "reduce-f16-sum-blocks": reduce(F16, SUM, size16(9000)),
    "reduce-bf16-max-nan": reduce(BF16, MAX, (33,), nan_at=7),
    "transpose-f32-col": transpose(),
    "transpose-f64-row-padded": transpose(F64, ROW, (7,), (9,), ld(3), ld(2)),
    "transpose-i32-tall": transpose(I32, COL, (40,), (1,)),
    "transpose-i64-large": transpose(I64, ROW, size16(100), (33,), ld(1), ld(0)),
    "transpose-in-place": transpose(modes=(NORMAL, ALIAS)),
    "transpose-f16-row-padded": transpose(F16, ROW, (7,), (9,), ld(3), ld(2)),
    "transpose-bf16-large": transpose(BF16, COL, size16(130), (17,), ld(1), ld(0)),
    "transpose-ldb-too-small": transpose(ldb=ld_abs(1)),
    "transpose-empty-null": transpose(rows=(0,), modes=(NULL, NULL)),
    "pi-small": pi(),
    "pi-thousands": pi((100,), b"\x01\x02\x03\x04\x05\x06\x07\x08"),
    "pi-zero-samples": pi((0xE0,)),
    "pi-two-to-63": pi((0xE2,)),
    "pi-above-two-to-63": pi((0xE3,)),
    "pi-null-result": pi(mode=NULL),
    "variants-set": set_variant(0, 0) + set_variant(1, 1) + set_variant(2, None) + set_variant(3, 2),
    "variants-unknown-names": set_variant(0, 3) + set_variant(1, b"single_pass") + set_variant(0xEC, 0),
    "variants-long-name": set_variant(2, b"x" * 99),
    "variants-count-and-names": variant_count(0) + variant_count(3, null=True) + variant_count(0xEC)
    + variant_name(0, 0) + variant_name(1, -1) + variant_name(2, 1) + variant_name(0xEC, 0),
    "context-calls": [CONTEXT, LIVE, 0, 0, CONTEXT, LIVE, 0, 7, CONTEXT, LIVE, 1, 1, 0x10, 0, 0, 0, 0, 0, 0, 0,
                      CONTEXT, LIVE, 1, 0, CONTEXT, LIVE, 2, 1, 1, 0, 0, 0, CONTEXT, LIVE, 2, 0,
                      CONTEXT, LIVE, 3],
    "context-create": create(device=3) + create(device=-2) + create(backend=1) + create(null_out=True),
    "context-info": info(7, 0) + info(2, 42) + info(0, 50, ctx=NULL_CTX),
    # Values no C++ gpk_status may hold (its enumerators span 0..127), which a C
    # caller can pass: 195 was the fuzzer's first finding.
    "status-strings-out-of-range": info(0, 195) + info(0, -1) + info(0, 128)
    + [CONTEXT, LIVE, 5, 0, 0xFF, *struct.pack("<i", -2**31)] + [CONTEXT, LIVE, 5, 0, 0xFF, *struct.pack("<i", 2**31 - 1)],
    # Destroyed handles: the session's dead one everywhere, and a context made,
    # destroyed twice, then used.
    "stale-context-everywhere": gemm(ctx=STALE_CTX) + reduce(ctx=STALE_CTX) + transpose(ctx=STALE_CTX)
    + pi(ctx=STALE_CTX) + set_variant(0, 0, ctx=STALE_CTX) + variant_name(0, 0)
    + [CONTEXT, STALE_CTX, 0, 0, CONTEXT, STALE_CTX, 3, CONTEXT, STALE_CTX, 5, 7, 2],
    "context-destroyed-twice": create() + gemm(ctx=STALE_CTX) + create() + [CONTEXT, STALE_CTX, 3] + gemm(),
    # Arrays that would run past the end of the address space.
    "gemm-top-c": gemm(modes=(NORMAL, NORMAL, TOP)),
    "gemm-top-a": gemm(F64, ROW, T, N, modes=(TOP, NORMAL, NORMAL)),
    "transpose-top-b": transpose(F64, modes=(NORMAL, TOP)),
    "reduce-top-x": reduce(I32, MAX, (9,), modes=(TOP, NORMAL)),
    # alpha and beta decided in the dtype: 0 in F32, not in F64.
    "gemm-f32-alpha-underflows": gemm(F32, COL, N, N, (5,), (4,), (3,), alpha=MINUS_1E300, beta=TWO),
    "gemm-f32-beta-underflows": gemm(F32, ROW, T, N, (4,), (6,), (2,), beta=DENORM_MIN),
    "gemm-f64-beta-denormal": gemm(F64, COL, N, T, (3,), (3,), (4,), beta=DENORM_MIN),
    "null-context-everywhere": reduce(ctx=NULL_CTX) + transpose(ctx=NULL_CTX) + pi(ctx=NULL_CTX)
    + set_variant(0, 0, ctx=NULL_CTX) + [CONTEXT, NULL_CTX, 3, CONTEXT, NULL_CTX, 0, 0],
    # gpk_gemm_strided_batched: valid batches, shared and overlapping inputs, k == 0,
    # and each batch rule broken once.
    "batched-f32-col": batched(),
    "batched-f64-row-tt-padded": batched(F64, ROW, T, T, (5,), (7,), (3,), ld(2), ld(0), ld(1),
                                         (PACKED + 1, PACKED + 2, PACKED + 3), 4, TWO, MINUS_ONE),
    "batched-shared-a": batched(strides=(SHARED, PACKED, PACKED + 1), count=4, beta=HALF),
    "batched-f16-shared-b": batched(F16, COL, N, T, (6,), (5,), (4,), strides=(PACKED, SHARED, PACKED), count=2),
    "batched-bf16-row-beta0": batched(BF16, ROW, N, N, (3,), (4,), (5,), count=4, alpha=TWO),
    "batched-overlapping-a": batched(strides=(OVERLAP + 1, PACKED, PACKED), count=4),
    "batched-one-product-stride-c-0": batched(strides=(PACKED, PACKED, SHARED), count=1),
    "batched-k0-null-ab": batched(F64, k=(0,), count=3, beta=HALF, modes=(NULL, NULL, NORMAL)),
    "batched-k0-stride-a-overflow": batched(k=(0,), strides=(STRIDE_SPECIAL + 3, PACKED, PACKED), count=3,
                                            modes=(NULL, NULL, NORMAL)),
    "batched-k0-stride-b-overflow": batched(F16, k=(0,), strides=(PACKED, STRIDE_SPECIAL + 4, PACKED), count=4),
    "batched-m0-stride-c-overflow": batched(m=(0,), strides=(PACKED, PACKED, STRIDE_SPECIAL + 3), count=3),
    "batched-negative-stride-b": batched(strides=(PACKED, NEG + 0, PACKED)),
    "batched-c-matrices-overlap": batched(strides=(PACKED, PACKED, OVERLAP + 1), count=2),
    "batched-c-over-a": batched(modes=(NORMAL, NORMAL, ALIAS), alias_at=5),
    "batched-c-over-b": batched(F64, modes=(NORMAL, NORMAL, ALIAS), flags=ALIAS_B, alias_at=200),
    "batched-top-c-later": batched(modes=(NORMAL, NORMAL, TOP), flags=TOP_FIRST_FITS),
    "batched-top-a": batched(F64, ROW, T, N, modes=(TOP, NORMAL, NORMAL)),
    "batched-top-b-later": batched(modes=(NORMAL, TOP, NORMAL), flags=TOP_FIRST_FITS, count=4),
    "batched-count0-null": batched(count=0, modes=(NULL, NULL, NULL)),
    "batched-count-negative": batched(count=COUNT_SPECIAL + 0),
    "batched-count-huge": batched(count=COUNT_SPECIAL + 3),
    "batched-int-dtype": batched(I64),
    "batched-null-ctx": batched(ctx=NULL_CTX),
    "mixed-sequence": gemm() + set_variant(0, 0) + reduce(F64, MAX, (30,)) + transpose(I32, ROW, (4,), (6,))
    + pi() + gemm(F64, ROW, T, N, (3,), (3,), (3,)) + [CONTEXT, LIVE, 3] + batched(F64, count=2),
}


def main():
    out = pathlib.Path(__file__).resolve().parent / "corpus"
    out.mkdir(exist_ok=True)
    for old in out.iterdir():
        old.unlink()
    for name, data in SEEDS.items():
        (out / name).write_bytes(bytes(data))
    print(f"{len(SEEDS)} seeds in {out}")


if __name__ == "__main__":
    main()
