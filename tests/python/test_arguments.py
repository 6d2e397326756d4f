"""What Context's calls take for their scalars and flags, and how they refuse an
output they cannot write in place: alpha and beta are real numbers (a str is not
parsed, a bool is not a scale), transa and transb are bools or gpk.TRANS /
gpk.NO_TRANS (a truthy str or NO_TRANS itself does not transpose), and a misaligned
out is refused by the alignment rule, not a stride rule. Each refusal leaves out
as it was, on the general path and on the short one (device-array interface)."""

import fractions

import numpy as np
import pytest

import gpk
from helpers import random_array


class DeviceLike:
    """Host memory shown through __cuda_array_interface__, as CuPy shows its arrays;
    the host backend reads such memory."""

    def __init__(self, array):
        self.array = array

    @property
    def __cuda_array_interface__(self):
        a = self.array
        return {"shape": a.shape, "typestr": a.dtype.str, "data": (a.ctypes.data, False),
                "strides": None if a.flags.c_contiguous else a.strides, "version": 3}


def misaligned(shape, dtype):
    """A writable array of `shape` whose data starts one byte past an element boundary."""
    dtype = np.dtype(dtype)
    count = int(np.prod(shape))
    raw = np.zeros(count * dtype.itemsize + 2 * dtype.itemsize, np.uint8)
    start = dtype.itemsize - raw.ctypes.data % dtype.itemsize + 1
    view = raw[start:start + count * dtype.itemsize].view(dtype).reshape(shape)
    assert view.ctypes.data % dtype.itemsize == 1
    return view


@pytest.mark.parametrize("name", ["alpha", "beta"])
@pytest.mark.parametrize("value", ["2", b"2", True, False, np.bool_(True), 1 + 2j, np.ones(2), None, [2.0]],
                         ids=repr)
def test_scalars_that_are_not_numbers_are_refused(ctx, name, value):
    A, B = np.ones((3, 2)), np.ones((2, 4))
    C = np.ones((3, 4))
    out = np.full((3, 4), 7.0)
    with pytest.raises(gpk.InvalidArgumentError, match=f"{name} must be a real number") as info:
        ctx.gemm(A, B, C, **{name: value}, out=out)
    assert info.value.status == gpk.ERROR_INVALID_ARGUMENT
    assert (out == 7.0).all()
    if name == "alpha":  # the short path (device arrays, no C) refuses it too
        with pytest.raises(gpk.InvalidArgumentError, match="alpha must be a real number"):
            ctx.gemm(DeviceLike(A), DeviceLike(B), alpha=value)


@pytest.mark.parametrize("value", [2, 2.0, np.float32(2), np.int64(2), np.float64(2), np.array(2.0),
                                   fractions.Fraction(4, 2)], ids=repr)
def test_real_numbers_are_taken(ctx, rng, value):
    A, B = rng.standard_normal((3, 2)), rng.standard_normal((2, 4))
    C = rng.standard_normal((3, 4))
    np.testing.assert_allclose(ctx.gemm(A, B, C, alpha=value, beta=value), 2 * (A @ B) + 2 * C, rtol=1e-12)


@pytest.mark.parametrize("name", ["transa", "transb"])
@pytest.mark.parametrize("value", ["no", "yes", "", 0, 1, 2, None, 111.0, gpk.TRANS + 1], ids=repr)
def test_flags_other_than_bools_and_the_constants_are_refused(ctx, name, value):
    A = np.ones((3, 3))
    out = np.full((3, 3), 7.0)
    with pytest.raises(gpk.InvalidArgumentError, match=f"{name} .* must be True, False, gpk.TRANS") as info:
        ctx.gemm(A, A, **{name: value}, out=out)
    assert info.value.status == gpk.ERROR_INVALID_ARGUMENT
    assert (out == 7.0).all()
    with pytest.raises(gpk.InvalidArgumentError, match=name):
        ctx.gemm(DeviceLike(A), DeviceLike(A), **{name: value})


@pytest.mark.parametrize("transa", [False, True, np.False_, np.True_, gpk.NO_TRANS, gpk.TRANS], ids=repr)
@pytest.mark.parametrize("transb", [False, gpk.TRANS], ids=repr)
def test_bools_and_the_constants_mean_what_they_say(ctx, rng, transa, transb):
    # Square operands: a flag read the wrong way round gives a result of the right
    # shape and the wrong values (NO_TRANS, a nonzero int, once transposed).
    A, B = rng.standard_normal((4, 4)), rng.standard_normal((4, 4))
    want = (A.T if transa in (True, gpk.TRANS) else A) @ (B.T if transb in (True, gpk.TRANS) else B)
    np.testing.assert_allclose(ctx.gemm(A, B, transa=transa, transb=transb), want, rtol=1e-12)
    out = DeviceLike(np.full((4, 4), np.nan))  # the package allocates no DeviceLike
    ctx.gemm(DeviceLike(A), DeviceLike(B), transa=transa, transb=transb, out=out)
    np.testing.assert_allclose(out.array, want, rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_misaligned_out_is_refused_by_alignment(ctx, rng, dtype):
    A = random_array(rng, (3, 2), dtype)
    B = random_array(rng, (2, 4), dtype)
    out = misaligned((3, 4), dtype)
    before = out.copy()
    for call in (lambda: ctx.gemm(A, B, out=out), lambda: ctx.gemm(DeviceLike(A), DeviceLike(B), out=DeviceLike(out))):
        with pytest.raises(gpk.InvalidArgumentError, match="out is misaligned") as info:
            call()
        assert "element size" in info.value.message and "stride" not in info.value.message
        np.testing.assert_array_equal(out.view(np.uint8), before.view(np.uint8))


def test_misaligned_out_of_matmul_and_transpose(ctx, rng):
    A = random_array(rng, (2, 3, 2), np.float64)
    out = misaligned((2, 3, 3), np.float64)
    with pytest.raises(gpk.InvalidArgumentError, match="out is misaligned"):
        ctx.matmul(A, A.transpose(0, 2, 1).copy(), out=out)
    out = misaligned((2, 3), np.float64)
    with pytest.raises(gpk.InvalidArgumentError, match="out is misaligned"):
        ctx.transpose(A[0], out=out)


def test_misaligned_host_inputs_are_copied_and_device_inputs_refused(ctx, rng):
    a = misaligned((3, 2), np.float64)
    a[...] = rng.standard_normal((3, 2))
    b = rng.standard_normal((2, 4))
    np.testing.assert_allclose(ctx.gemm(a, b), a @ b, rtol=1e-12)
    with pytest.raises(gpk.InvalidArgumentError, match="A is misaligned"):
        ctx.gemm(DeviceLike(a), DeviceLike(b))
