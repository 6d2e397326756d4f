"""Device memory through __cuda_array_interface__ without CuPy: a minimal device
array over the CUDA runtime (ctypes), so that the zero-copy path of the bindings is
exercised on any machine with a GPU. Skipped where the CUDA runtime library or a
usable GPU is missing."""

import ctypes
import ctypes.util

import numpy as np
import pytest

import gpk
from helpers import FLOAT_DTYPES, assert_gemm_close, cuda_context_or_skip, gemm_reference, random_array


def _cudart():
    names = [ctypes.util.find_library("cudart"), "libcudart.so", "libcudart.so.13", "libcudart.so.12",
             "/usr/local/cuda/lib64/libcudart.so"]
    for name in names:
        if not name:
            continue
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    return None


CUDART = _cudart()
H2D, D2H = 1, 2  # cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost


def _check(err, what):
    if err != 0:
        raise RuntimeError(f"{what} failed with CUDA error {err}")


class DeviceArray:
    """An array in device memory exposing __cuda_array_interface__ (version 3), in
    C or Fortran order; copies to and from numpy arrays."""

    def __init__(self, host, order="C"):
        host = np.asarray(host)
        self.shape, self.dtype, self.order = host.shape, host.dtype, order
        self.nbytes = max(host.nbytes, 1)
        self.ptr = ctypes.c_void_p()
        _check(CUDART.cudaMalloc(ctypes.byref(self.ptr), ctypes.c_size_t(self.nbytes)), "cudaMalloc")
        staged = np.ascontiguousarray(host) if order == "C" else np.asfortranarray(host)
        _check(CUDART.cudaMemcpy(self.ptr, staged.ctypes.data_as(ctypes.c_void_p), ctypes.c_size_t(host.nbytes),
                                 H2D), "cudaMemcpy to the device")

    @property
    def __cuda_array_interface__(self):
        item = self.dtype.itemsize
        if self.order == "C":
            strides = None
        else:
            strides, step = [], item
            for n in self.shape:
                strides.append(step)
                step *= n
            strides = tuple(strides)
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (self.ptr.value or 0, False),
                "strides": strides, "version": 3}

    def get(self):
        out = np.empty(self.shape, self.dtype, order=self.order)
        _check(CUDART.cudaDeviceSynchronize(), "cudaDeviceSynchronize")
        _check(CUDART.cudaMemcpy(out.ctypes.data_as(ctypes.c_void_p), self.ptr, ctypes.c_size_t(out.nbytes), D2H),
               "cudaMemcpy to the host")
        return out

    def __del__(self):
        if CUDART is not None and self.ptr:
            CUDART.cudaFree(self.ptr)
            self.ptr = ctypes.c_void_p()


@pytest.fixture(scope="module")
def cuda():
    if CUDART is None:
        pytest.skip("the CUDA runtime library is not found")
    context = cuda_context_or_skip()
    yield context
    context.close()


@pytest.fixture
def rng():
    return np.random.default_rng(11)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("order", ["C", "F"])
def test_gemm_on_device_arrays(cuda, rng, dtype, order):
    A = random_array(rng, (37, 19), dtype, order)
    B = random_array(rng, (19, 23), dtype, order)
    C = random_array(rng, (37, 23), dtype, order)
    dC = DeviceArray(C, order)
    got = cuda.gemm(DeviceArray(A, order), DeviceArray(B, order), dC, alpha=2.0, beta=0.5, out=dC)
    assert got is dC
    want, scale = gemm_reference(A, B, C, alpha=2.0, beta=0.5)
    assert_gemm_close(dC.get(), want, scale, 19, dtype)


def test_gemm_beta_zero_ignores_nan_in_device_output(cuda, rng):
    A = random_array(rng, (8, 5), np.float64)
    B = random_array(rng, (5, 6), np.float64)
    out = DeviceArray(np.full((8, 6), np.nan))
    cuda.gemm(DeviceArray(A), DeviceArray(B), out=out)
    want, scale = gemm_reference(A, B)
    assert_gemm_close(out.get(), want, scale, 5, np.float64)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_reduce_device_array(cuda, rng, dtype):
    x = rng.integers(-1000, 1000, 100_003).astype(dtype)
    d = DeviceArray(x)
    assert cuda.reduce(d, "sum") == x.sum(dtype=np.float64 if x.dtype.kind == "f" else np.int64)
    assert cuda.reduce(d, "min") == x.min()
    assert cuda.reduce(d, "max") == x.max()


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
@pytest.mark.parametrize("order", ["C", "F"])
def test_transpose_device_array(cuda, rng, dtype, order):
    a = rng.integers(-1000, 1000, (17, 1000)).astype(dtype)
    out = DeviceArray(np.zeros((1000, 17), dtype), order)
    cuda.transpose(DeviceArray(a, order), out=out)
    np.testing.assert_array_equal(out.get(), a.T)


def test_device_output_of_host_call_is_refused_or_correct(cuda, rng):
    """A host input with a device output is either computed correctly or refused
    with a clear error; it never writes through a host pointer."""
    a = rng.standard_normal((9, 4))
    out = DeviceArray(np.zeros((4, 9)))
    try:
        cuda.transpose(a, out=out)
    except gpk.GpkError as e:
        assert e.message
        return
    np.testing.assert_array_equal(out.get(), a.T)
