"""Context.transpose on the host backend: exact, for every dtype and order."""

import numpy as np
import pytest

import gpk
from helpers import ALL_DTYPES, random_array

SHAPES = [(1, 1), (1, 7), (7, 1), (5, 3), (3, 5), (32, 32), (33, 65), (100, 37), (1, 1000)]


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("shape", SHAPES)
def test_transpose_matches_numpy(ctx, rng, dtype, order, shape):
    A = random_array(rng, shape, dtype, order)
    got = ctx.transpose(A)
    assert got.shape == shape[::-1]
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, A.T)


@pytest.mark.parametrize("order", ["C", "F"])
def test_result_keeps_the_input_order(ctx, rng, order):
    A = random_array(rng, (6, 9), np.float64, order)
    got = ctx.transpose(A)
    if order == "C":
        assert got.flags.c_contiguous and not got.flags.f_contiguous
    else:
        assert got.flags.f_contiguous and not got.flags.c_contiguous


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("order_a,order_out", [("C", "C"), ("C", "F"), ("F", "C"), ("F", "F")])
def test_out_in_either_order(ctx, rng, dtype, order_a, order_out):
    A = random_array(rng, (13, 29), dtype, order_a)
    out = np.zeros((29, 13), dtype=dtype, order=order_out)
    result = ctx.transpose(A, out=out)
    assert result is out
    np.testing.assert_array_equal(out, A.T)


@pytest.mark.parametrize("order", ["C", "F"])
def test_padded_out_leaves_the_padding_alone(ctx, rng, order):
    A = random_array(rng, (10, 6), np.int32, order)
    big = np.full((9, 14), -1, dtype=np.int32, order=order)
    out = big[1:7, 2:12]
    ctx.transpose(A, out=out)
    np.testing.assert_array_equal(out, A.T)
    mask = np.ones(big.shape, dtype=bool)
    mask[1:7, 2:12] = False
    assert np.all(big[mask] == -1), "transpose wrote outside the out view"


def test_padded_input_slice(ctx, rng):
    big = random_array(rng, (40, 50), np.float32)
    A = big[3:20, 5:44]  # unit stride, leading dimension 50
    np.testing.assert_array_equal(ctx.transpose(A), A.T)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_strided_input_is_copied(ctx, rng, dtype):
    A = random_array(rng, (30, 40), dtype)[::3, ::-2]
    assert not (A.flags.c_contiguous or A.flags.f_contiguous)
    np.testing.assert_array_equal(ctx.transpose(A), A.T)


def test_nan_payloads_move_bit_for_bit(ctx):
    bits = np.array([[0x7FC00001, 0xFFC12345, 0x7F800001], [0x00000001, 0x80000000, 0x7FBFFFFF]], dtype=np.uint32)
    A = bits.view(np.float32)
    got = ctx.transpose(A)
    np.testing.assert_array_equal(got.view(np.uint32), bits.T)


def test_float64_bits_are_preserved(ctx):
    bits = np.array([[0x7FF0000000000001, 0xFFF8DEADBEEF0000], [0x8000000000000000, 0x0000000000000001]],
                    dtype=np.uint64)
    got = ctx.transpose(bits.view(np.float64))
    np.testing.assert_array_equal(got.view(np.uint64), bits.T)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_extreme_values(ctx, dtype):
    info = np.iinfo(dtype) if np.dtype(dtype).kind == "i" else np.finfo(dtype)
    A = np.array([[info.min, info.max, 0], [1, -1, info.max]], dtype=dtype)
    np.testing.assert_array_equal(ctx.transpose(A), A.T)


def test_transpose_twice_is_the_identity(ctx, rng):
    A = random_array(rng, (57, 31), np.int64)
    np.testing.assert_array_equal(ctx.transpose(ctx.transpose(A)), A)


@pytest.mark.parametrize("shape", [(0, 5), (5, 0), (0, 0)])
def test_empty(ctx, shape):
    got = ctx.transpose(np.empty(shape, dtype=np.float32))
    assert got.shape == shape[::-1]


def test_nested_list(ctx):
    got = ctx.transpose([[1, 2, 3], [4, 5, 6]])
    np.testing.assert_array_equal(got, [[1, 4], [2, 5], [3, 6]])


# ------------------------------------------------------------------ errors --


@pytest.mark.parametrize("shape", [(5,), (2, 3, 4)])
def test_input_must_be_a_matrix(ctx, shape):
    with pytest.raises(gpk.InvalidArgumentError, match="A must be 2-D"):
        ctx.transpose(np.ones(shape))


@pytest.mark.parametrize("dtype", [np.complex128, np.int16, np.int8])
def test_unsupported_dtype(ctx, dtype):
    with pytest.raises(gpk.NotSupportedError) as info:
        ctx.transpose(np.ones((2, 3), dtype))
    assert info.value.status == gpk.ERROR_NOT_SUPPORTED
    assert np.dtype(dtype).name in info.value.message


def test_out_shape_mismatch(ctx):
    with pytest.raises(gpk.InvalidArgumentError, match=r"out has shape \(2, 3\)") as info:
        ctx.transpose(np.ones((2, 3)), out=np.empty((2, 3)))
    assert info.value.status == gpk.ERROR_INVALID_ARGUMENT


def test_out_dtype_mismatch(ctx):
    with pytest.raises(gpk.InvalidArgumentError, match="out has dtype int64"):
        ctx.transpose(np.ones((2, 3)), out=np.empty((3, 2), np.int64))


def test_out_without_unit_stride_is_refused(ctx):
    out = np.zeros((6, 4))[::2, ::2]
    with pytest.raises(gpk.InvalidArgumentError, match="unit stride"):
        ctx.transpose(np.ones((2, 3)), out=out)
    assert not out.any()


def test_out_read_only(ctx):
    out = np.empty((3, 2))
    out.flags.writeable = False
    with pytest.raises(gpk.InvalidArgumentError, match="read-only"):
        ctx.transpose(np.ones((2, 3)), out=out)


def test_in_place_is_refused_by_the_library(ctx):
    A = np.arange(16.0).reshape(4, 4)
    with pytest.raises(gpk.InvalidArgumentError) as info:
        ctx.transpose(A, out=A)
    assert info.value.function == "gpk_transpose"
    assert "B overlaps A" in info.value.message
    np.testing.assert_array_equal(A, np.arange(16.0).reshape(4, 4))
