"""Device arrays (CuPy, through __cuda_array_interface__) on the CUDA backend.
Skipped where CuPy is not installed or no usable GPU exists."""

import math

import numpy as np
import pytest

import gpk
from helpers import FLOAT_DTYPES, assert_gemm_close, cuda_context_or_skip, gemm_reference, random_array

cupy = pytest.importorskip("cupy")


@pytest.fixture(scope="module")
def gpu():
    context = cuda_context_or_skip()
    yield context
    context.close()


@pytest.fixture
def cuda(gpu):
    yield gpu
    gpu.synchronize()
    gpu.set_stream(None)


def device(x, order="K"):
    """x copied to the GPU, the copy finished before libgpk reads it."""
    d = cupy.array(x, order=order)
    cupy.cuda.Device().synchronize()
    return d


def host(context, d):
    """d back on the host once the context's work is done."""
    context.synchronize()
    return cupy.asnumpy(d)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("transa,transb", [(False, False), (True, False), (False, True), (True, True)])
def test_gemm_device_arrays(cuda, rng, dtype, order, transa, transb):
    m, n, k = 67, 45, 129
    A = random_array(rng, (k, m) if transa else (m, k), dtype, order)
    B = random_array(rng, (n, k) if transb else (k, n), dtype, order)
    got = cuda.gemm(device(A), device(B), transa=transa, transb=transb)
    assert isinstance(got, cupy.ndarray)
    assert got.flags.f_contiguous if order == "F" else got.flags.c_contiguous
    want, scale = gemm_reference(A, B, transa=transa, transb=transb)
    assert_gemm_close(host(cuda, got), want, scale, k, dtype)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_gemm_out_in_place_on_device(cuda, rng, dtype):
    A = random_array(rng, (40, 30), dtype)
    B = random_array(rng, (30, 20), dtype)
    C = random_array(rng, (40, 20), dtype)
    dC = device(C)
    result = cuda.gemm(device(A), device(B), dC, alpha=2.0, beta=0.5, out=dC)
    assert result is dC
    want, scale = gemm_reference(A, B, C, alpha=2.0, beta=0.5)
    assert_gemm_close(host(cuda, dC), want, scale, 30, dtype)


def test_gemm_beta_zero_nan_on_device(cuda, rng):
    A = random_array(rng, (16, 8), np.float32)
    B = random_array(rng, (8, 12), np.float32)
    out = cupy.full((16, 12), cupy.nan, dtype=cupy.float32)
    cuda.gemm(device(A), device(B), out=out)
    want, scale = gemm_reference(A, B)
    assert_gemm_close(host(cuda, out), want, scale, 8, np.float32)


def test_gemm_mixed_host_and_device(cuda, rng):
    A = random_array(rng, (25, 35), np.float64)
    B = random_array(rng, (35, 15), np.float64)
    got = cuda.gemm(device(A), B)
    assert isinstance(got, cupy.ndarray)
    want, scale = gemm_reference(A, B)
    assert_gemm_close(host(cuda, got), want, scale, 35, np.float64)
    out = np.empty((25, 15))
    cuda.gemm(device(A), device(B), out=out)  # a host result: the call waits
    assert_gemm_close(out, want, scale, 35, np.float64)


def test_gemm_device_slice_with_unit_stride(cuda, rng):
    big = random_array(rng, (50, 60), np.float32)
    A = big[5:25, 10:40]
    B = random_array(rng, (30, 12), np.float32)
    got = cuda.gemm(device(big)[5:25, 10:40], device(B))
    want, scale = gemm_reference(A, B)
    assert_gemm_close(host(cuda, got), want, scale, 30, np.float32)


def test_gemm_strided_device_array_is_refused(cuda):
    A = cupy.ones((20, 20))[::2, ::2]
    with pytest.raises(gpk.InvalidArgumentError, match="device array with no unit stride") as info:
        cuda.gemm(A, cupy.ones((10, 3)))
    assert info.value.status == gpk.ERROR_INVALID_ARGUMENT


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
@pytest.mark.parametrize("op", ["sum", "min", "max"])
def test_reduce_device_array(cuda, rng, dtype, op):
    x = rng.integers(-1000, 1000, size=(1 << 20) + 7).astype(dtype)
    got = cuda.reduce(device(x), op)
    want = {"sum": np.sum, "min": np.min, "max": np.max}[op](x.astype(np.int64)).item()
    assert got == want


def test_reduce_nan_on_device(cuda):
    x = cupy.arange(100_000, dtype=cupy.float32)
    x[54_321] = cupy.nan
    cupy.cuda.Device().synchronize()
    assert math.isnan(cuda.max(x))
    assert math.isnan(cuda.min(x))


def test_reduce_non_contiguous_device_array_is_refused(cuda):
    x = cupy.ones(100)[::2]
    with pytest.raises(gpk.InvalidArgumentError, match="not contiguous"):
        cuda.sum(x)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
@pytest.mark.parametrize("order", ["C", "F"])
def test_transpose_device_array(cuda, rng, dtype, order):
    A = random_array(rng, (123, 77), dtype, order)
    got = cuda.transpose(device(A, order))
    assert isinstance(got, cupy.ndarray)
    assert got.flags.f_contiguous if order == "F" else got.flags.c_contiguous
    np.testing.assert_array_equal(host(cuda, got), A.T)


def test_transpose_device_out_in_the_other_order_is_refused(cuda):
    A = cupy.ones((4, 6), order="C")
    out = cupy.empty((6, 4), order="F")
    with pytest.raises(gpk.InvalidArgumentError, match="out must be in A's order"):
        cuda.transpose(A, out=out)


def test_user_stream(cuda, rng):
    A = random_array(rng, (200, 100), np.float32)
    B = random_array(rng, (100, 150), np.float32)
    stream = cupy.cuda.Stream(non_blocking=True)
    dA, dB = device(A), device(B)
    cuda.set_stream(stream)
    with stream:
        out = cupy.empty((200, 150), dtype=cupy.float32)
        stream.synchronize()
        cuda.gemm(dA, dB, out=out)
        stream.synchronize()  # the work was queued on this stream
        got = cupy.asnumpy(out)
    want, scale = gemm_reference(A, B)
    assert_gemm_close(got, want, scale, 100, np.float32)


def test_device_memory_on_the_host_backend_is_refused(gpu, ctx):
    x = cupy.ones(16)
    cupy.cuda.Device().synchronize()
    with pytest.raises(gpk.InvalidArgumentError) as info:
        ctx.sum(x)
    assert info.value.function == "gpk_reduce"
    assert info.value.message.startswith("x is device memory")


@pytest.mark.parametrize("view", ["contiguous", "row slice", "column slice", "transposed view"])
@pytest.mark.parametrize("use_out", [False, True])
def test_gemm_views_of_device_arrays(cuda, rng, view, use_out):
    # Context.gemm's short path takes C-ordered operands only; views of other kinds
    # go the general way. Both must give the product of what the views show.
    big_a = random_array(rng, (48, 40), np.float32)
    big_b = random_array(rng, (40, 36), np.float32)
    pick = {
        "contiguous": lambda x: x,
        "row slice": lambda x: x[3:29],
        "column slice": lambda x: x[:, 2:30],
        "transposed view": lambda x: cupy.ascontiguousarray(x.T).T,  # F-ordered
    }[view]
    a = pick(device(big_a))
    b = device(big_b)[: a.shape[1], :20]
    out = cupy.full((a.shape[0], 20), cupy.nan, dtype=cupy.float32) if use_out else None
    got = cuda.gemm(a, b, out=out)
    if use_out:
        assert got is out
    want, scale = gemm_reference(cupy.asnumpy(a), cupy.asnumpy(b))
    assert_gemm_close(host(cuda, got), want, scale, a.shape[1], np.float32)
