"""Context.gemm on the host backend, compared with numpy."""

import numpy as np
import pytest

import gpk
from helpers import FLOAT_DTYPES, assert_gemm_close, gemm_reference, random_array

SHAPES = [(1, 1, 1), (1, 17, 5), (17, 1, 9), (17, 13, 19), (100, 97, 101)]  # (m, n, k)


def operands(rng, m, n, k, dtype, order, transa, transb):
    a_shape = (k, m) if transa else (m, k)
    b_shape = (n, k) if transb else (k, n)
    return random_array(rng, a_shape, dtype, order), random_array(rng, b_shape, dtype, order)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("transa", [False, True])
@pytest.mark.parametrize("transb", [False, True])
@pytest.mark.parametrize("m,n,k", SHAPES)
def test_gemm_matches_numpy(ctx, rng, dtype, order, transa, transb, m, n, k):
    A, B = operands(rng, m, n, k, dtype, order, transa, transb)
    got = ctx.gemm(A, B, transa=transa, transb=transb)
    want, scale = gemm_reference(A, B, transa=transa, transb=transb)
    assert_gemm_close(got, want, scale, k, dtype)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_result_keeps_c_order_for_c_inputs(ctx, rng, dtype):
    A = random_array(rng, (6, 4), dtype, "C")
    B = random_array(rng, (4, 5), dtype, "C")
    got = ctx.gemm(A, B)
    assert got.flags.c_contiguous
    assert got.dtype == np.dtype(dtype)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_result_keeps_fortran_order_for_fortran_inputs(ctx, rng, dtype):
    A = random_array(rng, (6, 4), dtype, "F")
    B = random_array(rng, (4, 5), dtype, "F")
    got = ctx.gemm(A, B)
    assert got.flags.f_contiguous and not got.flags.c_contiguous
    want, scale = gemm_reference(A, B)
    assert_gemm_close(got, want, scale, 4, dtype)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("order_a,order_b", [("C", "F"), ("F", "C")])
def test_mixed_orders(ctx, rng, dtype, order_a, order_b):
    A = random_array(rng, (23, 11), dtype, order_a)
    B = random_array(rng, (11, 31), dtype, order_b)
    got = ctx.gemm(A, B)
    want, scale = gemm_reference(A, B)
    assert_gemm_close(got, want, scale, 11, dtype)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("alpha,beta", [(2.5, -0.5), (-1.0, 1.0), (0.25, 3.0), (1.0, 0.0)])
def test_alpha_beta(ctx, rng, dtype, order, alpha, beta):
    m, n, k = 17, 13, 19
    A = random_array(rng, (m, k), dtype, order)
    B = random_array(rng, (k, n), dtype, order)
    C = random_array(rng, (m, n), dtype, order)
    C_before = C.copy()
    got = ctx.gemm(A, B, C, alpha=alpha, beta=beta)
    want, scale = gemm_reference(A, B, C, alpha=alpha, beta=beta)
    assert_gemm_close(got, want, scale, k, dtype)
    assert got is not C
    np.testing.assert_array_equal(C, C_before)  # C is only read unless it is out


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("transa,transb", [(False, True), (True, False), (True, True)])
def test_alpha_beta_with_transposes(ctx, rng, dtype, transa, transb):
    m, n, k = 9, 14, 33
    A, B = operands(rng, m, n, k, dtype, "C", transa, transb)
    C = random_array(rng, (m, n), dtype, "C")
    got = ctx.gemm(A, B, C, alpha=-1.5, beta=0.75, transa=transa, transb=transb)
    want, scale = gemm_reference(A, B, C, alpha=-1.5, beta=0.75, transa=transa, transb=transb)
    assert_gemm_close(got, want, scale, k, dtype)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("order", ["C", "F"])
def test_beta_zero_nan_in_c_does_not_leak(ctx, rng, dtype, order):
    A = random_array(rng, (8, 5), dtype, order)
    B = random_array(rng, (5, 7), dtype, order)
    C = np.full((8, 7), np.nan, dtype=dtype, order=order)
    got = ctx.gemm(A, B, C, beta=0.0)
    want, scale = gemm_reference(A, B)
    assert_gemm_close(got, want, scale, 5, dtype)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("order", ["C", "F"])
def test_beta_zero_nan_in_out_does_not_leak(ctx, rng, dtype, order):
    A = random_array(rng, (8, 5), dtype, order)
    B = random_array(rng, (5, 7), dtype, order)
    out = np.full((8, 7), np.nan, dtype=dtype, order=order)
    out[0, 0] = np.inf
    got = ctx.gemm(A, B, out=out)
    assert got is out
    want, scale = gemm_reference(A, B)
    assert_gemm_close(out, want, scale, 5, dtype)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_beta_zero_nan_in_c_as_out_does_not_leak(ctx, rng, dtype):
    A = random_array(rng, (4, 3), dtype)
    B = random_array(rng, (3, 6), dtype)
    C = np.full((4, 6), np.nan, dtype=dtype)
    result = ctx.gemm(A, B, C, beta=0.0, out=C)
    assert result is C
    want, scale = gemm_reference(A, B)
    assert_gemm_close(C, want, scale, 3, dtype)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("order", ["C", "F"])
def test_out_is_c_updates_in_place(ctx, rng, dtype, order):
    A = random_array(rng, (12, 7), dtype, order)
    B = random_array(rng, (7, 10), dtype, order)
    C = random_array(rng, (12, 10), dtype, order)
    want, scale = gemm_reference(A, B, C, alpha=2.0, beta=1.0)
    result = ctx.gemm(A, B, C, alpha=2.0, beta=1.0, out=C)
    assert result is C
    assert_gemm_close(C, want, scale, 7, dtype)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_out_in_the_other_order(ctx, rng, dtype):
    A = random_array(rng, (15, 8), dtype, "C")
    B = random_array(rng, (8, 6), dtype, "C")
    C = random_array(rng, (15, 6), dtype, "C")
    out = np.empty((15, 6), dtype=dtype, order="F")
    result = ctx.gemm(A, B, C, alpha=1.0, beta=-2.0, out=out)
    assert result is out
    want, scale = gemm_reference(A, B, C, alpha=1.0, beta=-2.0)
    assert_gemm_close(out, want, scale, 8, dtype)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_padded_slices_are_read_in_place(ctx, rng, dtype):
    """Slices with a unit stride and a leading dimension larger than their width."""
    big_a = random_array(rng, (20, 30), dtype)
    big_b = random_array(rng, (30, 40), dtype, "F")
    A = big_a[2:13, 3:10]   # 11 x 7, row-major with ld 30
    B = big_b[5:12, 1:20]   # 7 x 19, column-major with ld 30
    out_big = np.full((25, 25), -7.0, dtype=dtype)
    out = out_big[1:12, 2:21]
    ctx.gemm(A, B, out=out)
    want, scale = gemm_reference(A, B)
    assert_gemm_close(out, want, scale, 7, dtype)
    mask = np.ones(out_big.shape, dtype=bool)
    mask[1:12, 2:21] = False
    assert np.all(out_big[mask] == -7.0), "gemm wrote outside the out view"


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_strided_inputs_are_copied(ctx, rng, dtype):
    """Host inputs with no unit stride (or negative strides) are copied first."""
    A = random_array(rng, (30, 30), dtype)[::2, ::3]           # 15 x 10
    B = random_array(rng, (10, 14), dtype)[::-1, ::2]          # 10 x 7
    assert not (A.flags.c_contiguous or A.flags.f_contiguous)
    assert not (B.flags.c_contiguous or B.flags.f_contiguous)
    got = ctx.gemm(A, B)
    want, scale = gemm_reference(A, B)
    assert_gemm_close(got, want, scale, 10, dtype)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("order", ["C", "F"])
def test_k_zero_gives_zeros(ctx, dtype, order):
    A = np.empty((5, 0), dtype=dtype, order=order)
    B = np.empty((0, 4), dtype=dtype, order=order)
    got = ctx.gemm(A, B)
    assert got.shape == (5, 4)
    np.testing.assert_array_equal(got, np.zeros((5, 4)))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("order", ["C", "F"])
def test_k_zero_scales_c_by_beta(ctx, rng, dtype, order):
    A = np.empty((5, 0), dtype=dtype, order=order)
    B = np.empty((0, 4), dtype=dtype, order=order)
    C = random_array(rng, (5, 4), dtype, order)
    got = ctx.gemm(A, B, C, alpha=3.0, beta=-2.0)
    np.testing.assert_array_equal(got, (dtype(-2.0) * C).astype(dtype))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_alpha_zero_does_not_read_a_or_b(ctx, rng, dtype):
    """CBLAS: alpha == 0 leaves C = beta * C, so NaN in A or B cannot appear."""
    A = np.full((6, 3), np.nan, dtype=dtype)
    B = np.full((3, 4), np.nan, dtype=dtype)
    C = random_array(rng, (6, 4), dtype)
    got = ctx.gemm(A, B, C, alpha=0.0, beta=0.5)
    np.testing.assert_array_equal(got, (dtype(0.5) * C).astype(dtype))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("m,n", [(0, 4), (4, 0), (0, 0)])
def test_empty_result(ctx, dtype, m, n):
    A = np.ones((m, 3), dtype=dtype)
    B = np.ones((3, n), dtype=dtype)
    got = ctx.gemm(A, B)
    assert got.shape == (m, n)
    assert got.dtype == np.dtype(dtype)


def test_outer_and_inner_products(ctx, rng):
    x = random_array(rng, (9, 1), np.float64)
    y = random_array(rng, (1, 11), np.float64)
    np.testing.assert_allclose(ctx.gemm(x, y), x @ y, rtol=1e-14, atol=1e-15)
    inner = ctx.gemm(x, x, transa=True)
    assert inner.shape == (1, 1)
    np.testing.assert_allclose(inner[0, 0], float(x[:, 0] @ x[:, 0]), rtol=1e-14)


def test_known_product(ctx):
    A = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    B = np.array([[7.0, 8.0], [9.0, 10.0], [11.0, 12.0]])
    np.testing.assert_array_equal(ctx.gemm(A, B), [[58.0, 64.0], [139.0, 154.0]])
    np.testing.assert_array_equal(ctx.gemm(B, A, transa=True, transb=True), [[58.0, 139.0], [64.0, 154.0]])


def test_nested_lists_are_accepted(ctx):
    got = ctx.gemm([[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]])
    assert isinstance(got, np.ndarray) and got.dtype == np.float64
    np.testing.assert_array_equal(got, [[19.0, 22.0], [43.0, 50.0]])


def test_non_native_byte_order_is_converted(ctx, rng):
    A = random_array(rng, (4, 5), np.float64)
    B = random_array(rng, (5, 3), np.float64)
    swapped = np.dtype(np.float64).newbyteorder("S")
    got = ctx.gemm(A.astype(swapped), B.astype(swapped))
    want, scale = gemm_reference(A, B)
    assert_gemm_close(got, want, scale, 5, np.float64)


def test_float32_is_computed_in_float32(ctx):
    """A float32 result is rounded to float32, not returned in double."""
    A = np.array([[1.0, 1e-8]], dtype=np.float32)
    B = np.array([[1.0], [1.0]], dtype=np.float32)
    got = ctx.gemm(A, B)
    assert got.dtype == np.float32
    assert got[0, 0] == np.float32(1.0)


def test_large_k_float32_accuracy(ctx, rng):
    A = random_array(rng, (3, 4096), np.float32, low=0.0, high=1.0)
    B = random_array(rng, (4096, 2), np.float32, low=0.0, high=1.0)
    got = ctx.gemm(A, B)
    want = A.astype(np.float64) @ B.astype(np.float64)
    np.testing.assert_allclose(got, want, rtol=2e-6)


# ------------------------------------------------------------------ errors --


def test_dtype_mismatch(ctx):
    with pytest.raises(gpk.InvalidArgumentError) as info:
        ctx.gemm(np.ones((2, 2), np.float32), np.ones((2, 2), np.float64))
    assert info.value.status == gpk.ERROR_INVALID_ARGUMENT
    assert "B has dtype float64" in info.value.message


@pytest.mark.parametrize("dtype", [np.complex128, np.int16, np.bool_])
def test_unsupported_dtype(ctx, dtype):
    with pytest.raises(gpk.NotSupportedError) as info:
        ctx.gemm(np.ones((2, 2), dtype), np.ones((2, 2), dtype))
    assert info.value.status == gpk.ERROR_NOT_SUPPORTED
    assert np.dtype(dtype).name in info.value.message
    assert "A" in info.value.message


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_integer_gemm_is_not_supported_by_the_library(ctx, dtype):
    with pytest.raises(gpk.NotSupportedError) as info:
        ctx.gemm(np.ones((2, 2), dtype), np.ones((2, 2), dtype))
    assert info.value.status == gpk.ERROR_NOT_SUPPORTED
    assert info.value.function == "gpk_gemm"
    assert "dtype" in info.value.message and "GPK_I" in info.value.message


@pytest.mark.parametrize("transa,transb", [(False, False), (True, False), (False, True)])
def test_inner_dimension_mismatch(ctx, transa, transb):
    with pytest.raises(gpk.InvalidArgumentError) as info:
        ctx.gemm(np.ones((3, 4)), np.ones((5, 6)), transa=transa, transb=transb)
    assert info.value.status == gpk.ERROR_INVALID_ARGUMENT
    assert "(k)" in info.value.message


@pytest.mark.parametrize("shape", [(4,), (2, 2, 2)])
def test_operands_must_be_matrices(ctx, shape):
    with pytest.raises(gpk.InvalidArgumentError, match="must be 2-D"):
        ctx.gemm(np.ones(shape), np.ones((2, 2)))


def test_c_shape_mismatch(ctx):
    with pytest.raises(gpk.InvalidArgumentError, match=r"C has shape \(3, 3\)"):
        ctx.gemm(np.ones((3, 2)), np.ones((2, 4)), np.ones((3, 3)), beta=1.0)


def test_c_dtype_mismatch(ctx):
    with pytest.raises(gpk.InvalidArgumentError, match="C has dtype float32"):
        ctx.gemm(np.ones((3, 2)), np.ones((2, 4)), np.ones((3, 4), np.float32), beta=1.0)


def test_beta_without_c(ctx):
    with pytest.raises(gpk.InvalidArgumentError, match="beta"):
        ctx.gemm(np.ones((3, 2)), np.ones((2, 4)), beta=1.0)


def test_out_shape_mismatch(ctx):
    with pytest.raises(gpk.InvalidArgumentError, match="out has shape"):
        ctx.gemm(np.ones((3, 2)), np.ones((2, 4)), out=np.empty((4, 3)))


def test_out_dtype_mismatch(ctx):
    with pytest.raises(gpk.InvalidArgumentError, match="out has dtype float32"):
        ctx.gemm(np.ones((3, 2)), np.ones((2, 4)), out=np.empty((3, 4), np.float32))


def test_out_read_only(ctx):
    out = np.empty((3, 4))
    out.flags.writeable = False
    with pytest.raises(gpk.InvalidArgumentError, match="read-only"):
        ctx.gemm(np.ones((3, 2)), np.ones((2, 4)), out=out)


def test_out_must_be_an_array(ctx):
    with pytest.raises(gpk.InvalidArgumentError, match="numpy array"):
        ctx.gemm(np.ones((2, 2)), np.ones((2, 2)), out=[[0.0, 0.0], [0.0, 0.0]])


def test_out_without_unit_stride_is_refused(ctx):
    """out cannot be copied (the caller must see the result in it)."""
    out = np.zeros((6, 8))[::2, ::2]
    with pytest.raises(gpk.InvalidArgumentError, match="unit stride") as info:
        ctx.gemm(np.ones((3, 2)), np.ones((2, 4)), out=out)
    assert info.value.status == gpk.ERROR_INVALID_ARGUMENT
    assert not out.any(), "a refused call must not write out"


def test_out_aliasing_an_input_is_refused_by_the_library(ctx):
    A = np.ones((3, 3))
    with pytest.raises(gpk.InvalidArgumentError) as info:
        ctx.gemm(A, np.ones((3, 3)), out=A)
    assert info.value.function == "gpk_gemm"
    assert "overlaps A" in info.value.message
    np.testing.assert_array_equal(A, np.ones((3, 3)))


def test_out_aliasing_an_input_with_c_is_refused(ctx):
    A = np.ones((3, 3))
    with pytest.raises(gpk.InvalidArgumentError, match="overlaps A"):
        ctx.gemm(A, np.ones((3, 3)), np.ones((3, 3)), beta=1.0, out=A)
