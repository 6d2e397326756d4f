"""Context.load_tuning, Context.tuning_name and Context.last_variant over
gpk_load_tuning, gpk_tuning_name and gpk_last_variant, on the host backend, whose
device kind is "host" and whose ladders have the one rung "host"."""

import numpy as np
import pytest

import gpk

NONE = "none: the vendor library and each ladder's default"
HEADER = "gpk-tuning\t1\ndevice\thost\ncompute_capability\t-\nsm_count\t-\n"
ROWS = "gemm\tf64\tdefault\tnn\ta16\t8x8x8\thost:1.5\nreduce\tf32\tdefault\t-\ta16\t1000\thost\n"


def test_last_variant(ctx):
    assert ctx.last_variant("gemm") is None
    a = np.ones((4, 4))
    ctx.gemm(a, a)
    assert ctx.last_variant("gemm") == "host"
    assert ctx.last_variant(gpk.OP_GEMM) == "host"
    assert ctx.last_variant("reduce") is None
    ctx.sum(np.ones(10, dtype=np.float32))
    assert ctx.last_variant("reduce") == "host"
    with pytest.raises(gpk.InvalidArgumentError):
        ctx.last_variant("gemv")


def test_load_tuning(ctx, tmp_path):
    assert ctx.tuning_name() == NONE
    good = tmp_path / "good.tsv"
    good.write_text(HEADER + ROWS)
    ctx.load_tuning(good)
    assert ctx.tuning_name() == str(good)
    ctx.gemm(np.ones((8, 8)), np.ones((8, 8)))
    assert ctx.last_variant("gemm") == "host"
    ctx.load_tuning(None)
    assert ctx.tuning_name() == NONE


@pytest.mark.parametrize(
    "text, says",
    [
        (HEADER.replace("host", "NVIDIA H200", 1) + ROWS, "line 2: the table was measured on a GPU of device"),
        (HEADER + ROWS + "gemm\tf64\tdefault\tnn\ta16\t16x8x8\tcublas\n", "line 7: unknown rung 'cublas' of gemm"),
        (HEADER + "reduce\tf32\n", "line 5: a row has 7 fields"),
    ],
)
def test_load_tuning_refuses(ctx, tmp_path, text, says):
    good = tmp_path / "good.tsv"
    good.write_text(HEADER + ROWS)
    ctx.load_tuning(str(good))
    bad = tmp_path / "bad.tsv"
    bad.write_text(text)
    with pytest.raises(gpk.InvalidArgumentError) as e:
        ctx.load_tuning(bad)
    assert f"{bad}{' ' if says.startswith('line') else ''}{says}" in e.value.message
    assert ctx.tuning_name() == str(good)  # unchanged


def test_load_tuning_arguments(ctx):
    with pytest.raises(gpk.InvalidArgumentError):
        ctx.load_tuning(42)
    with pytest.raises(gpk.InvalidArgumentError):
        ctx.load_tuning("a\0b")
    with pytest.raises(gpk.InvalidArgumentError):
        ctx.load_tuning("")
