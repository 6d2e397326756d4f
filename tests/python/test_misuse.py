"""Misuse at the binding's edges: a failed call leaves the caller's arrays as they
were, and arguments that ctypes would quietly bend are refused."""

import numpy as np
import pytest

import gpk
from gpk import _library


class FailingLibrary:
    """libgpk with one function replaced by one that records its call and fails
    with `status`, the way a call that gets past the binding's checks and is then
    refused by the library (out of memory, a rung that does not take the dtype, a
    validation failure) comes back.

    It stands in for both ways the binding calls the library: the ctypes library
    (ctx._lib, gpk_* names) and the per-operation calls (ctx._calls, names without
    the prefix)."""

    _OPERATIONS = ("gemm", "gemm_strided_batched", "reduce", "transpose")

    def __init__(self, name, status):
        self._real = _library.lib()
        self._real_calls = _library.calls()
        self._name = name
        self._status = int(status)
        self.calls = 0

    def __getattr__(self, name):
        operation = name in self._OPERATIONS
        if (f"gpk_{name}" if operation else name) != self._name:
            return getattr(self._real_calls if operation else self._real, name)

        def failing(*args):
            self.calls += 1
            return self._status

        return failing


def _fail_on(ctx, name, status=gpk.ERROR_OUT_OF_MEMORY):
    fake = FailingLibrary(name, status)
    ctx._lib = fake
    ctx._calls = fake
    return fake


@pytest.mark.parametrize("order", ["C", "F"])
def test_failed_gemm_leaves_out_as_it_was(ctx, rng, order):
    a = rng.standard_normal((5, 4))
    b = rng.standard_normal((4, 3))
    c = np.asfortranarray(rng.standard_normal((5, 3))) if order == "F" else rng.standard_normal((5, 3))
    out = np.full((5, 3), 7.0, order=order)
    c_before, out_before = c.copy(), out.copy()
    fake = _fail_on(ctx, "gpk_gemm")
    with pytest.raises(gpk.OutOfMemoryError):
        ctx.gemm(a, b, C=c, beta=2.0, out=out)
    assert fake.calls == 1, "the call must reach the library for the test to mean anything"
    assert np.array_equal(out, out_before), "a failed gemm changed out"
    assert np.array_equal(c, c_before), "a failed gemm changed C"


def test_gemm_with_c_and_a_separate_out_is_right(ctx, rng):
    # The path that the failing case protects: C copied to scratch, then to out.
    a = rng.standard_normal((6, 5))
    b = rng.standard_normal((5, 4))
    c = rng.standard_normal((6, 4))
    out = np.asfortranarray(np.full((6, 4), np.nan))
    c_before = c.copy()
    got = ctx.gemm(a, b, C=c, alpha=0.5, beta=-1.5, out=out)
    assert got is out
    np.testing.assert_allclose(out, 0.5 * a @ b - 1.5 * c_before, rtol=1e-12, atol=1e-12)
    assert np.array_equal(c, c_before)


def test_failed_gemm_in_place_leaves_c_to_the_library(ctx, rng):
    # out=C: the library updates C in place; the binding writes nothing itself.
    a = rng.standard_normal((3, 2))
    b = rng.standard_normal((2, 3))
    c = rng.standard_normal((3, 3))
    before = c.copy()
    fake = _fail_on(ctx, "gpk_gemm")
    with pytest.raises(gpk.OutOfMemoryError):
        ctx.gemm(a, b, C=c, beta=1.0, out=c)
    assert fake.calls == 1 and np.array_equal(c, before)


@pytest.mark.parametrize(
    "name, call",
    [
        ("gpk_transpose", lambda ctx, x, out: ctx.transpose(x, out=out)),
        ("gpk_gemm", lambda ctx, x, out: ctx.gemm(x, x.T, out=out)),
    ],
    ids=["transpose", "gemm"],
)
def test_every_writing_call_leaves_out_on_failure(ctx, rng, name, call):
    x = rng.standard_normal((4, 4))
    out = np.full((4, 4), 3.0)
    fake = _fail_on(ctx, name, gpk.ERROR_NOT_SUPPORTED)
    with pytest.raises(gpk.NotSupportedError):
        call(ctx, x, out)
    assert fake.calls == 1 and np.array_equal(out, np.full((4, 4), 3.0))


# ------------------------------------------------------------ set_variant --


def test_set_variant_rejects_a_nul_in_the_name(ctx):
    with pytest.raises(gpk.InvalidArgumentError, match="NUL"):
        ctx.set_variant("gemm", "host\x00garbage")
    # Nothing was chosen: the same name without the tail still works.
    ctx.set_variant("gemm", "host")


@pytest.mark.parametrize("name", ["host\ud800", "\udcff"])
def test_set_variant_with_an_unencodable_name_is_a_gpk_error(ctx, name):
    with pytest.raises(gpk.InvalidArgumentError) as info:
        ctx.set_variant("reduce", name)
    assert not isinstance(info.value, UnicodeError)
    assert info.value.function == "Context.set_variant"


# ---------------------------------------------------------------- bools --


@pytest.mark.parametrize("value", [True, False])
def test_bools_are_not_counts(ctx, value):
    with pytest.raises(gpk.InvalidArgumentError, match="streams"):
        ctx.set_staging(value)
    with pytest.raises(gpk.InvalidArgumentError, match="samples"):
        ctx.pi(value)
    with pytest.raises(gpk.InvalidArgumentError, match="count"):
        ctx.pi_range(0, value)
    with pytest.raises(gpk.InvalidArgumentError, match="chunk_bytes"):
        ctx.set_staging(2, chunk_bytes=value)


def test_bools_are_not_devices():
    with pytest.raises(gpk.InvalidArgumentError, match="device"):
        gpk.Context("host", device=True)


def test_bools_are_not_reduce_ops(ctx):
    # True == 1 == MIN to Python; the op must be named or given as an int.
    with pytest.raises(gpk.InvalidArgumentError, match="op"):
        ctx.reduce(np.arange(4.0), True)
    assert ctx.reduce(np.arange(4.0), 1) == 0.0


class HostInterface:
    """Host memory shown through __cuda_array_interface__: an array type the binding
    knows no allocator for."""

    def __init__(self, array):
        self.array = array

    @property
    def __cuda_array_interface__(self):
        a = self.array
        return {"shape": a.shape, "typestr": a.dtype.str, "data": (a.ctypes.data, False), "strides": None,
                "version": 3}


def test_gemm_with_c_and_out_of_an_unknown_array_type_is_refused_untouched(ctx, rng):
    # Without scratch like out, C cannot be added without writing out before the
    # library's checks: the binding refuses, out as it was.
    a, b = rng.standard_normal((3, 2)), rng.standard_normal((2, 3))
    c, out = rng.standard_normal((3, 3)), np.full((3, 3), 5.0)
    with pytest.raises(gpk.InvalidArgumentError, match="out=C"):
        ctx.gemm(HostInterface(a), HostInterface(b), C=HostInterface(c), beta=1.0, out=HostInterface(out))
    assert np.array_equal(out, np.full((3, 3), 5.0))
