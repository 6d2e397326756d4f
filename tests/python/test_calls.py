"""The per-operation calls through the compiled module gpk._calls: the same
statuses, messages and results as through ctypes for the same arguments, and the
short path of Context.gemm (new result, C-ordered device arrays) agreeing with the
general one."""

import ctypes

import numpy as np
import pytest

import gpk
from gpk import _arrays, _library

calls = _library.calls()
needs_compiled = pytest.mark.skipif(not calls.compiled, reason="gpk._calls was not built (no Python headers)")
lib = _library.lib()


def both(ctx, operation, *args):
    """(status, last error) through gpk._calls, then through ctypes."""
    results = []
    for function in (getattr(calls, operation), getattr(lib, "gpk_" + operation)):
        status = function(ctx._hv, *args)
        results.append((status, lib.gpk_last_error(ctx._hv) if status else None))
    return results


@needs_compiled
@pytest.mark.parametrize(
    "m, n, k, lda",
    [(3, 2, 4, 4), (-1, 2, 4, 4), (2**64 - 1, 2, 4, 4), (3, 2, 4, 1), (3, 2, 4, 2**63), (0, 0, 0, 1)],
    ids=["valid", "negative m", "m wraps to -1", "lda too small", "lda wraps negative", "empty"],
)
def test_gemm_statuses_and_results_agree(ctx, rng, m, n, k, lda):
    a = rng.standard_normal((3, 4))
    b = rng.standard_normal((4, 2))
    outs = [np.full((3, 2), 5.0), np.full((3, 2), 5.0)]
    got = []
    for function, out in zip((calls.gemm, lib.gpk_gemm), outs):
        status = function(ctx._hv, gpk.F64, gpk.ROW_MAJOR, gpk.NO_TRANS, gpk.NO_TRANS, m, n, k, 2.0,
                          a.ctypes.data, lda, b.ctypes.data, 2, 0.0, out.ctypes.data, 2)
        got.append((status, lib.gpk_last_error(ctx._hv) if status else None))
    assert got[0] == got[1]
    np.testing.assert_array_equal(outs[0], outs[1])
    if (m, lda) == (3, 4):
        assert got[0][0] == gpk.SUCCESS
        np.testing.assert_allclose(outs[0], 2.0 * a @ b, rtol=1e-12)
    elif m != 0:
        assert got[0][0] == gpk.ERROR_INVALID_ARGUMENT


@needs_compiled
def test_null_pointers_and_numpy_integers_convert_as_ctypes_converts(ctx):
    # None is NULL (an invalid argument where the array is read); numpy's integers
    # are taken through __index__, as ctypes takes them.
    first, second = both(ctx, "gemm", gpk.F32, gpk.COL_MAJOR, gpk.NO_TRANS, gpk.NO_TRANS, np.int64(2), 2, 2, 1.0,
                         None, 2, None, 2, 0.0, None, 2)
    assert first == second and first[0] == gpk.ERROR_INVALID_ARGUMENT
    with pytest.raises(TypeError):
        calls.gemm(ctx._hv, gpk.F32, gpk.COL_MAJOR, gpk.NO_TRANS, gpk.NO_TRANS, 2.0, 2, 2, 1.0, None, 2, None, 2,
                   0.0, None, 2)
    with pytest.raises(TypeError):
        calls.reduce(ctx._hv, gpk.F32, gpk.SUM, None, 1)  # one argument short


@needs_compiled
def test_reduce_transpose_and_batched_agree(ctx, rng):
    x = rng.standard_normal(1001)
    results = [ctypes.c_double(), ctypes.c_double()]
    assert calls.reduce(ctx._hv, gpk.F64, gpk.SUM, x.ctypes.data, x.size, ctypes.addressof(results[0])) == 0
    assert lib.gpk_reduce(ctx._hv, gpk.F64, gpk.SUM, x.ctypes.data, x.size, ctypes.byref(results[1])) == 0
    assert results[0].value == results[1].value
    assert both(ctx, "reduce", gpk.F64, gpk.SUM, x.ctypes.data, -1, ctypes.addressof(results[0]))[0][0] == (
        gpk.ERROR_INVALID_ARGUMENT
    )

    a = rng.standard_normal((7, 5))
    outs = [np.empty((5, 7)), np.empty((5, 7))]
    for function, out in zip((calls.transpose, lib.gpk_transpose), outs):
        assert function(ctx._hv, gpk.F64, gpk.ROW_MAJOR, 7, 5, a.ctypes.data, 5, out.ctypes.data, 7) == 0
    np.testing.assert_array_equal(outs[0], a.T)
    np.testing.assert_array_equal(outs[1], a.T)
    first, second = both(ctx, "transpose", gpk.F64, gpk.ROW_MAJOR, 7, 5, a.ctypes.data, 4, outs[0].ctypes.data, 7)
    assert first == second and first[0] == gpk.ERROR_INVALID_ARGUMENT

    s = rng.standard_normal((3, 4, 2))
    t = rng.standard_normal((3, 2, 5))
    outs = [np.empty((3, 4, 5)), np.empty((3, 4, 5))]
    for function, out in zip((calls.gemm_strided_batched, lib.gpk_gemm_strided_batched), outs):
        assert function(ctx._hv, gpk.F64, gpk.ROW_MAJOR, gpk.NO_TRANS, gpk.NO_TRANS, 4, 5, 2, 1.0, s.ctypes.data, 2,
                        8, t.ctypes.data, 5, 10, 0.0, out.ctypes.data, 5, 20, 3) == 0
    np.testing.assert_allclose(outs[0], s @ t, rtol=1e-12)
    np.testing.assert_array_equal(outs[0], outs[1])


# ------------------------------------------------------- Context.gemm's short path --


class DeviceLike:
    """Host memory shown through __cuda_array_interface__, as CuPy shows its arrays
    (strides None when C-ordered); the host backend reads such memory."""

    def __init__(self, array):
        self.array = array

    @property
    def __cuda_array_interface__(self):
        a = self.array
        return {
            "shape": a.shape,
            "typestr": a.dtype.str,
            "data": (a.ctypes.data, not a.flags.writeable),
            "strides": None if a.flags.c_contiguous else a.strides,
            "version": 3,
        }


@pytest.fixture
def device_like():
    # An allocator for results like DeviceLike, as the package has one for CuPy's.
    _arrays._allocator_of_type[DeviceLike] = (
        lambda obj, shape, dtype, order: DeviceLike(np.full(shape, np.nan, dtype=dtype, order=order)),
        lambda array: array.array.ctypes.data,
    )
    yield DeviceLike
    del _arrays._allocator_of_type[DeviceLike]


@pytest.mark.parametrize("transa", [False, True])
@pytest.mark.parametrize("transb", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_short_path_is_taken_and_agrees(ctx, rng, device_like, transa, transb, dtype):
    m, n, k = 17, 5, 33
    a = rng.standard_normal((k, m) if transa else (m, k)).astype(dtype)
    b = rng.standard_normal((n, k) if transb else (k, n)).astype(dtype)
    short = ctx._gemm_short(device_like(a), device_like(b), 1.5, 0, transa, transb, None)
    assert short is not None, "the call the short path is for went the general way"
    want = 1.5 * (a.T if transa else a) @ (b.T if transb else b)
    general = ctx.gemm(a, b, alpha=1.5, transa=transa, transb=transb)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(short.array, want, rtol=tol, atol=tol)
    np.testing.assert_array_equal(short.array, general)
    out = device_like(np.full((m, n), np.nan, dtype=dtype))
    assert ctx._gemm_short(device_like(a), device_like(b), 1.5, 0, transa, transb, out) is out
    np.testing.assert_array_equal(out.array, general)


def test_short_path_leaves_other_calls_to_the_general_one(ctx, rng, device_like):
    a = device_like(rng.standard_normal((4, 3)))
    b = device_like(rng.standard_normal((3, 2)))
    f = device_like(np.asfortranarray(rng.standard_normal((3, 2))))
    for args in [
        (a, b, np.float64(1.0), 0.0, False, False),  # alpha not a Python number
        (a, b, 1.0, 2.0, False, False),  # beta nonzero (without C: the general path refuses)
        (a, b, 1.0, 0.0, 1, False),  # transa not a bool
        (a, f, 1.0, 0.0, False, False),  # B not C-ordered
        (a, a, 1.0, 0.0, False, False),  # k disagrees
        (device_like(np.empty((0, 3))), b, 1.0, 0.0, False, False),  # empty
        (a, device_like(rng.standard_normal((3, 2)).astype(np.float32)), 1.0, 0.0, False, False),  # dtypes differ
        (a, rng.standard_normal((3, 2)), 1.0, 0.0, False, False),  # B in host memory
    ]:
        assert ctx._gemm_short(*args, None) is None


def test_short_path_leaves_other_outs_to_the_general_one(ctx, rng, device_like):
    a = device_like(rng.standard_normal((4, 3)))
    b = device_like(rng.standard_normal((3, 2)))
    for out in [
        device_like(np.empty((4, 2), order="F")),  # not C-ordered
        device_like(np.empty((2, 4))),  # wrong shape
        device_like(np.empty((4, 2), np.float32)),  # wrong dtype
        np.empty((4, 2)),  # host memory
    ]:
        assert ctx._gemm_short(a, b, 1.0, 0.0, False, False, out) is None
    readonly = np.empty((4, 2))
    readonly.flags.writeable = False
    assert ctx._gemm_short(a, b, 1.0, 0.0, False, False, device_like(readonly)) is None


def test_overlapping_out_is_refused_and_left_alone(ctx, rng, device_like):
    x = rng.standard_normal((3, 3))
    before = x.copy()
    with pytest.raises(gpk.InvalidArgumentError):
        ctx._gemm_short(device_like(x), device_like(rng.standard_normal((3, 3))), 1.0, 0.0, False, False,
                        device_like(x))
    np.testing.assert_array_equal(x, before)


def test_short_path_errors_are_the_general_paths(ctx, rng, device_like):
    a = device_like(rng.standard_normal((4, 3)))
    with pytest.raises(gpk.InvalidArgumentError, match="k"):
        ctx.gemm(a, a)
    with pytest.raises(gpk.InvalidArgumentError, match="beta"):
        ctx.gemm(a, device_like(rng.standard_normal((3, 2))), beta=1.0)
    with pytest.raises(gpk.InvalidArgumentError, match="dtype"):
        ctx.gemm(a, device_like(rng.standard_normal((3, 2)).astype(np.float32)))


def test_short_path_reports_a_failing_library_call(ctx, rng, device_like):
    class Failing:
        def gemm(self, *args):
            return gpk.ERROR_OUT_OF_MEMORY

    a = device_like(rng.standard_normal((4, 3)))
    b = device_like(rng.standard_normal((3, 2)))
    ctx._calls = Failing()
    with pytest.raises(gpk.OutOfMemoryError):
        ctx._gemm_short(a, b, 1.0, 0.0, False, False, None)


class FakeCupyArray:
    """What the short path reads of a CuPy array, under CuPy's module name."""

    __module__ = "cupy._core.core"

    class _Memory:
        def __init__(self, ptr):
            self.ptr = ptr
            self.device_id = 0

    def __init__(self, array):
        self.array = array
        self.shape = array.shape
        self.dtype = array.dtype
        self.flags = array.flags
        self._c_contiguous = array.flags.c_contiguous
        self.data = self._Memory(array.ctypes.data)

    @property
    def __cuda_array_interface__(self):
        raise AssertionError("the short path reads CuPy arrays through their attributes")


def test_cupy_arrays_are_read_through_their_attributes(rng):
    c = rng.standard_normal((3, 4))
    f = np.asfortranarray(c)
    assert _arrays.device_view(FakeCupyArray(c)) == ((3, 4), c.dtype.str, True, c.ctypes.data)
    assert _arrays.device_view(FakeCupyArray(f))[2] is False
    assert _arrays.device_view(np.ones(2)) is None
