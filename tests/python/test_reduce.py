"""Context.reduce (and sum/min/max) on the host backend, compared with numpy."""

import math

import numpy as np
import pytest

import gpk
from helpers import ALL_DTYPES, FLOAT_DTYPES, random_array

# 4096 is the host backend's block: sizes on both sides of one and several.
SIZES = [1, 2, 17, 4095, 4096, 4097, 3 * 4096 + 5, 100_003]
NUMPY_OP = {"sum": np.sum, "min": np.min, "max": np.max}
INT_DTYPES = [np.int32, np.int64]


def expected(x, op):
    """numpy's answer, floats summed in float64 (the library's float32 sums are
    at least that accurate) and integer sums wrapped modulo 2^64 like the C API."""
    if op == "sum":
        if x.dtype.kind == "f":
            return float(np.sum(x, dtype=np.float64))
        return int(np.sum(x.astype(np.int64), dtype=np.int64))
    return NUMPY_OP[op](x).item()


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("op", ["sum", "min", "max"])
@pytest.mark.parametrize("n", SIZES)
def test_reduce_matches_numpy(ctx, rng, dtype, op, n):
    if np.dtype(dtype).kind == "i" and op == "sum":
        x = rng.integers(-1000, 1000, size=n, dtype=dtype)
    else:
        x = random_array(rng, n, dtype)
    got = ctx.reduce(x, op)
    want = expected(x, op)
    if np.dtype(dtype).kind == "i":
        assert isinstance(got, int)
        assert got == want
    elif op == "sum":
        assert isinstance(got, float)
        # float32 results are rounded to float32; float64 ones sum pairwise.
        rtol = 1e-6 if dtype == np.float32 else 1e-13
        assert got == pytest.approx(want, rel=rtol, abs=rtol * np.sum(np.abs(x), dtype=np.float64))
    else:
        assert isinstance(got, float)
        assert got == want  # min and max are exact


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_float_sum_of_representable_values_is_exact(ctx, dtype):
    x = np.arange(1, 10_001, dtype=dtype)
    assert ctx.sum(x) == 50_005_000.0


def test_float32_sum_is_more_accurate_than_naive_float32(ctx):
    """1 + 2^-24 * many: a float32 running sum would never move off 1."""
    x = np.full(1 << 20, 2.0**-24, dtype=np.float32)
    x[0] = 1.0
    got = ctx.sum(x)
    assert got == pytest.approx(1.0 + ((1 << 20) - 1) * 2.0**-24, rel=1e-6)
    assert got > 1.06


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_integer_sum_accumulates_in_64_bits(ctx, dtype):
    top = np.iinfo(dtype).max
    x = np.full(3, top, dtype=dtype)
    if dtype == np.int32:
        assert ctx.sum(x) == 3 * top  # past int32: no wrap at 32 bits
    else:
        assert ctx.sum(x) == 3 * top - 2**64  # int64 sums wrap modulo 2^64


def test_int32_sum_of_large_array(ctx):
    x = np.full(100_000, 2**31 - 1, dtype=np.int32)
    assert ctx.sum(x) == 100_000 * (2**31 - 1)


def test_int64_sum_wraps(ctx):
    assert ctx.sum(np.array([2**63 - 1, 1], dtype=np.int64)) == -(2**63)


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_integer_min_max_extremes(ctx, dtype):
    info = np.iinfo(dtype)
    x = np.array([0, info.max, -5, info.min, 7], dtype=dtype)
    assert ctx.min(x) == info.min
    assert ctx.max(x) == info.max


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_sum_of_nothing_is_zero(ctx, dtype):
    got = ctx.reduce(np.empty(0, dtype=dtype), "sum")
    assert got == 0
    assert isinstance(got, int if np.dtype(dtype).kind == "i" else float)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("op", ["min", "max"])
def test_min_max_of_nothing_is_an_error(ctx, dtype, op):
    with pytest.raises(gpk.InvalidArgumentError) as info:
        ctx.reduce(np.empty(0, dtype=dtype), op)
    error = info.value
    assert error.status == gpk.ERROR_INVALID_ARGUMENT
    assert error.function == "gpk_reduce"
    assert error.message.startswith("n (0)")
    assert ("GPK_MIN" if op == "min" else "GPK_MAX") in error.message
    assert "n (0)" in str(error) and "ERROR_INVALID_ARGUMENT" in str(error)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("op", ["min", "max"])
@pytest.mark.parametrize("where", [0, 1, 4095, 4096, 9000, -1])
def test_min_max_propagate_nan(ctx, rng, dtype, op, where):
    x = random_array(rng, 10_000, dtype)
    x[where] = np.nan
    assert math.isnan(ctx.reduce(x, op))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_sum_propagates_nan(ctx, dtype):
    x = np.ones(5000, dtype=dtype)
    x[4321] = np.nan
    assert math.isnan(ctx.sum(x))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_infinities(ctx, dtype):
    x = np.array([1.0, -np.inf, 2.0, np.inf, 3.0], dtype=dtype)
    assert ctx.min(x) == -np.inf
    assert ctx.max(x) == np.inf
    assert math.isnan(ctx.sum(x))  # inf + -inf
    assert ctx.sum(x[[0, 3]]) == np.inf


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_results_are_deterministic(ctx, rng, dtype):
    x = random_array(rng, 123_457, dtype)
    first = ctx.sum(x)
    for _ in range(3):
        assert ctx.sum(x) == first


@pytest.mark.parametrize("op", ["sum", "min", "max"])
def test_float32_result_is_a_float32_value(ctx, rng, op):
    x = random_array(rng, 1000, np.float32) + np.float32(1.0 / 3.0)
    got = ctx.reduce(x, op)
    assert float(np.float32(got)) == got  # rounded to float32, not a double
    assert got == pytest.approx(expected(x, op), rel=1e-6)


@pytest.mark.parametrize("order", ["C", "F"])
def test_two_dimensional_arrays_reduce_every_element(ctx, rng, order):
    x = random_array(rng, (37, 53), np.float64, order)
    assert ctx.sum(x) == pytest.approx(float(x.sum()), rel=1e-13)
    assert ctx.min(x) == x.min()
    assert ctx.max(x) == x.max()


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_non_contiguous_arrays_are_copied(ctx, rng, dtype):
    base = random_array(rng, (64, 64), dtype)
    x = base[::3, 1::2]
    assert not x.flags.c_contiguous and not x.flags.f_contiguous
    assert ctx.min(x) == x.min().item()
    assert ctx.max(x) == x.max().item()
    y = base[::-1]
    assert ctx.max(y) == base.max().item()


def test_zero_dimensional_and_list_inputs(ctx):
    assert ctx.sum(np.float64(2.5)) == 2.5
    assert ctx.max(np.array(7, dtype=np.int32)) == 7
    assert ctx.sum([1, 2, 3, 4]) == 10
    assert ctx.min([3.5, -1.25, 2.0]) == -1.25


def test_op_names_and_codes(ctx):
    x = np.array([4, -2, 9, 1], dtype=np.int64)
    assert ctx.reduce(x) == 12  # sum by default
    assert ctx.reduce(x, gpk.SUM) == 12
    assert ctx.reduce(x, gpk.MIN) == -2
    assert ctx.reduce(x, gpk.MAX) == 9
    assert ctx.reduce(x, "MAX") == 9
    assert ctx.sum(x) == 12 and ctx.min(x) == -2 and ctx.max(x) == 9


@pytest.mark.parametrize("op", ["prod", 3, -1, True, None])
def test_unknown_op(ctx, op):
    with pytest.raises(gpk.InvalidArgumentError) as info:
        ctx.reduce(np.ones(3), op)
    assert info.value.status == gpk.ERROR_INVALID_ARGUMENT
    assert "op" in info.value.message and "'sum'" in info.value.message


@pytest.mark.parametrize("dtype", [np.complex64, np.uint16, np.uint8, np.int16, np.bool_])
def test_unsupported_dtype(ctx, dtype):
    with pytest.raises(gpk.NotSupportedError) as info:
        ctx.reduce(np.ones(4, dtype=dtype))
    assert info.value.status == gpk.ERROR_NOT_SUPPORTED
    assert f"x has dtype {np.dtype(dtype)}" in info.value.message
