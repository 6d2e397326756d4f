"""Reference computations and comparisons shared by the test modules."""

import numpy as np
import pytest

import gpk

FLOAT_DTYPES = [np.float32, np.float64]
ALL_DTYPES = [np.float32, np.float64, np.int32, np.int64]


def gemm_reference(A, B, C=None, alpha=1.0, beta=0.0, transa=False, transb=False):
    """alpha * op(A) @ op(B) + beta * C in float64, and a scale for tolerances:
    the largest |alpha| |op(A)| @ |op(B)| + |beta| |C| entry."""
    a = np.asarray(A, dtype=np.float64)
    b = np.asarray(B, dtype=np.float64)
    a = a.T if transa else a
    b = b.T if transb else b
    want = alpha * (a @ b)
    scale = abs(alpha) * (np.abs(a) @ np.abs(b))
    if C is not None and beta != 0:
        c = np.asarray(C, dtype=np.float64)
        want = want + beta * c
        scale = scale + abs(beta) * np.abs(c)
    return want, (float(scale.max()) if scale.size else 0.0)


def assert_gemm_close(got, want, scale, k, dtype):
    """got matches the float64 reference within a few roundings per term of the
    dot product: 8 eps (k + 2) times the scale of the entries."""
    assert got.shape == want.shape
    assert got.dtype == np.dtype(dtype)
    eps = np.finfo(dtype).eps
    tol = 8 * eps * (k + 2) * max(scale, np.finfo(dtype).tiny)
    assert np.all(np.isfinite(got)), "gemm produced a non-finite value"
    worst = float(np.max(np.abs(got.astype(np.float64) - want))) if got.size else 0.0
    assert worst <= tol, f"largest |difference| {worst:.3g} exceeds tolerance {tol:.3g}"


def random_array(rng, shape, dtype, order="C", low=-1.0, high=1.0):
    """Random values of `dtype` in `order`: uniform floats, or integers spanning
    negative and positive values."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        values = rng.uniform(low, high, size=shape).astype(dtype)
    else:
        info = np.iinfo(dtype)
        values = rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    return np.asarray(values, order=order)


def cuda_context_or_skip():
    """A CUDA-backend context, or a skip of the calling module's tests when no
    usable GPU exists (gpk.NoDeviceError from gpk_create)."""
    try:
        return gpk.Context("cuda")
    except gpk.NoDeviceError as e:
        assert e.status == gpk.ERROR_NO_DEVICE
        pytest.skip(f"no usable GPU: {e.message}")
