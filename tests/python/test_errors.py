"""Failures: the exception classes, the statuses and libgpk's messages."""

import ctypes

import numpy as np
import pytest

import gpk
from gpk import _library
from gpk.errors import error_for

CLASSES = {
    gpk.ERROR_INVALID_ARGUMENT: gpk.InvalidArgumentError,
    gpk.ERROR_INVALID_HANDLE: gpk.InvalidHandleError,
    gpk.ERROR_NO_DEVICE: gpk.NoDeviceError,
    gpk.ERROR_OUT_OF_MEMORY: gpk.OutOfMemoryError,
    gpk.ERROR_NOT_SUPPORTED: gpk.NotSupportedError,
    gpk.ERROR_CUDA: gpk.CudaError,
    gpk.ERROR_CUBLAS: gpk.CublasError,
    gpk.ERROR_CURAND: gpk.CurandError,
    gpk.ERROR_VALIDATION: gpk.ValidationError,
    gpk.ERROR_INTERNAL: gpk.InternalError,
}


# ------------------------------------------------------ exception classes --


@pytest.mark.parametrize("status", list(CLASSES))
def test_one_class_per_status(status):
    error = error_for(status, "what went wrong", "gpk_something")
    assert type(error) is CLASSES[status]
    assert isinstance(error, gpk.GpkError)
    assert error.status == status and isinstance(error.status, gpk.Status)
    assert error.message == "what went wrong"
    assert error.function == "gpk_something"
    assert str(error) == f"gpk_something: what went wrong [{gpk.Status(status).name}]"


def test_unknown_status_becomes_an_internal_error():
    error = error_for(42, "odd", "gpk_x")
    assert type(error) is gpk.GpkError
    assert error.status == gpk.ERROR_INTERNAL
    assert "unknown status 42" in error.message and "odd" in error.message


def test_python_builtin_bases():
    assert issubclass(gpk.InvalidArgumentError, ValueError)
    assert issubclass(gpk.OutOfMemoryError, MemoryError)
    assert issubclass(gpk.LibraryNotFoundError, OSError)
    assert not issubclass(gpk.InvalidHandleError, ValueError)


def test_invalid_argument_is_caught_as_value_error(ctx):
    with pytest.raises(ValueError):
        ctx.gemm(np.ones((2, 3)), np.ones((2, 3)))


# ------------------------------------------------------ a closed context --


CLOSED_CALLS = {
    "gemm": lambda c: c.gemm(np.ones((2, 2)), np.ones((2, 2))),
    "reduce": lambda c: c.reduce(np.ones(3)),
    "sum": lambda c: c.sum(np.ones(3)),
    "min": lambda c: c.min(np.ones(3)),
    "max": lambda c: c.max(np.ones(3)),
    "transpose": lambda c: c.transpose(np.ones((2, 3))),
    "pi": lambda c: c.pi(100),
    "variants": lambda c: c.variants("gemm"),
    "set_variant": lambda c: c.set_variant("gemm", "auto"),
    "set_validation": lambda c: c.set_validation(False),
    "set_stream": lambda c: c.set_stream(None),
    "synchronize": lambda c: c.synchronize(),
    "handle": lambda c: c.handle,
}


@pytest.mark.parametrize("call", list(CLOSED_CALLS))
def test_closed_context_is_refused(call):
    c = gpk.Context("host")
    c.close()
    with pytest.raises(gpk.InvalidHandleError) as info:
        CLOSED_CALLS[call](c)
    assert info.value.status == gpk.ERROR_INVALID_HANDLE
    assert "closed" in info.value.message


def test_closed_context_leaves_out_alone():
    c = gpk.Context("host")
    c.close()
    out = np.full((2, 2), 5.0)
    with pytest.raises(gpk.InvalidHandleError):
        c.gemm(np.ones((2, 2)), np.ones((2, 2)), out=out)
    assert np.all(out == 5.0)


# -------------------------------------------------------- creating one --


@pytest.mark.parametrize("backend", ["opencl", "", 3, -1, None, True])
def test_unknown_backend(backend):
    with pytest.raises(gpk.InvalidArgumentError) as info:
        gpk.Context(backend)
    assert info.value.status == gpk.ERROR_INVALID_ARGUMENT
    assert "backend" in info.value.message and "'host'" in info.value.message


def test_negative_device_is_refused_by_the_library():
    with pytest.raises(gpk.InvalidArgumentError) as info:
        gpk.Context("host", device=-1)
    error = info.value
    assert error.function == "gpk_create"
    assert error.message == "device (-1) must be >= 0"
    assert gpk.last_error() == error.message  # how the C API reports a failed create


@pytest.mark.parametrize("device", [2**31, -(2**31) - 1, -(2**32), 2**40])
def test_device_outside_a_c_int_is_refused(device):
    """Such values would wrap to another device index on the way to C."""
    with pytest.raises(gpk.InvalidArgumentError, match="device"):
        gpk.Context("host", device=device)


@pytest.mark.parametrize("device", [1.5, "0", None])
def test_device_must_be_an_integer(device):
    with pytest.raises(gpk.InvalidArgumentError, match="device must be an integer"):
        gpk.Context("host", device=device)


def test_cuda_without_a_gpu_is_no_device():
    try:
        c = gpk.Context("cuda")
    except gpk.NoDeviceError as e:
        assert e.status == gpk.ERROR_NO_DEVICE
        assert e.function == "gpk_create"
        assert "device (0)" in e.message
    else:
        assert c.backend == "cuda"
        c.close()


def test_cuda_device_that_does_not_exist():
    with pytest.raises(gpk.NoDeviceError) as info:
        gpk.Context("cuda", device=4096)
    assert info.value.status == gpk.ERROR_NO_DEVICE
    assert "4096" in info.value.message


# -------------------------------------------------- host backend limits --


@pytest.mark.parametrize("stream", [1234, 0xDEAD0000])
def test_stream_on_host_backend_is_not_supported(ctx, stream):
    with pytest.raises(gpk.NotSupportedError) as info:
        ctx.set_stream(stream)
    assert info.value.function == "gpk_set_stream"
    assert "host backend" in info.value.message


def test_validation_on_host_backend_is_not_supported(ctx):
    with pytest.raises(gpk.NotSupportedError) as info:
        ctx.set_validation(True)
    assert info.value.status == gpk.ERROR_NOT_SUPPORTED
    assert "CUDA backend" in info.value.message


# --------------------------------------------- the error kinds, per op --


@pytest.mark.parametrize("dtype", [np.complex128, np.int16])
@pytest.mark.parametrize("op", ["gemm", "reduce", "transpose"])
def test_wrong_dtype(ctx, op, dtype):
    x = np.ones((3, 3), dtype=dtype)
    call = {"gemm": lambda: ctx.gemm(x, x), "reduce": lambda: ctx.reduce(x), "transpose": lambda: ctx.transpose(x)}
    with pytest.raises(gpk.NotSupportedError) as info:
        call[op]()
    assert info.value.status == gpk.ERROR_NOT_SUPPORTED
    assert f"has dtype {np.dtype(dtype)}" in info.value.message
    assert "float32, float64, int32 or int64" in info.value.message


@pytest.mark.parametrize("op", ["gemm", "transpose"])
def test_shape_mismatch(ctx, op):
    with pytest.raises(gpk.InvalidArgumentError) as info:
        if op == "gemm":
            ctx.gemm(np.ones((4, 5)), np.ones((4, 5)))
        else:
            ctx.transpose(np.ones((4, 5)), out=np.empty((4, 5)))
    assert info.value.status == gpk.ERROR_INVALID_ARGUMENT
    assert ("(k)" if op == "gemm" else "out has shape (4, 5)") in info.value.message


@pytest.mark.parametrize("op", ["gemm", "transpose"])
def test_non_contiguous_out_is_not_copied(ctx, op):
    out = np.zeros((10, 10))[::2, ::3]  # 5 x 4 without a unit stride
    with pytest.raises(gpk.InvalidArgumentError, match="unit stride"):
        if op == "gemm":
            ctx.gemm(np.ones((5, 2)), np.ones((2, 4)), out=out)
        else:
            ctx.transpose(np.ones((4, 5)), out=out)


# ------------------------------------------- the C API, called directly --


def lib():
    return _library.lib()


def last_error(ctx):
    return lib().gpk_last_error(ctx.handle).decode()


def test_last_error_is_per_context():
    with gpk.Context("host") as a, gpk.Context("host") as b:
        with pytest.raises(gpk.InvalidArgumentError) as info:
            a.set_variant("gemm", "nope")
        assert last_error(a) == info.value.message
        assert last_error(b) == ""


def test_leading_dimension_too_small_is_named(ctx):
    A = np.ones((8, 8))
    C = np.zeros((8, 8))
    status = lib().gpk_gemm(ctx.handle, gpk.F64, gpk.COL_MAJOR, gpk.NO_TRANS, gpk.NO_TRANS, 8, 8, 8, 1.0,
                            A.ctypes.data, 3, A.ctypes.data, 8, 0.0, C.ctypes.data, 8)
    assert status == gpk.ERROR_INVALID_ARGUMENT
    assert last_error(ctx) == "lda (3) must be >= max(1, m) = 8"
    assert not C.any(), "a refused call must not write C"


@pytest.mark.parametrize(
    "args,text",
    [
        (dict(dtype=8), "dtype (8)"),
        # FP8 is an input of gpk_gemm_ex alone: gpk_gemm refuses it by name.
        (dict(dtype=7), "dtype (GPK_F8E5M2)"),
        (dict(layout=100), "layout (100)"),
        (dict(transa=0), "transa (0)"),
        (dict(transb=113), "transb (113)"),
        (dict(m=-1), "m (-1) must be >= 0"),
        (dict(k=-2), "k (-2) must be >= 0"),
        (dict(ldc=1), "ldc (1) must be >= max(1, n) = 4"),
        (dict(C=None), "C is NULL"),
    ],
)
def test_gemm_argument_messages(ctx, args, text):
    A, B, C = np.ones((4, 4)), np.ones((4, 4)), np.zeros((4, 4))
    call = dict(dtype=gpk.F64, layout=gpk.ROW_MAJOR, transa=gpk.NO_TRANS, transb=gpk.NO_TRANS, m=4, n=4, k=4,
                A=A.ctypes.data, B=B.ctypes.data, C=C.ctypes.data, ldc=4)
    call.update(args)
    status = lib().gpk_gemm(ctx.handle, call["dtype"], call["layout"], call["transa"], call["transb"], call["m"],
                            call["n"], call["k"], 1.0, call["A"], 4, call["B"], 4, 0.0, call["C"], call["ldc"])
    assert status == gpk.ERROR_INVALID_ARGUMENT
    assert text in last_error(ctx)
    assert not C.any()


def test_reduce_null_result(ctx):
    x = np.ones(4)
    assert lib().gpk_reduce(ctx.handle, gpk.F64, gpk.SUM, x.ctypes.data, 4, None) == gpk.ERROR_INVALID_ARGUMENT
    assert last_error(ctx) == "result is NULL"


def test_reduce_negative_n(ctx):
    x = np.ones(4)
    out = ctypes.c_double(7.0)
    status = lib().gpk_reduce(ctx.handle, gpk.F64, gpk.SUM, x.ctypes.data, -3, ctypes.byref(out))
    assert status == gpk.ERROR_INVALID_ARGUMENT
    assert "n (-3) must be >= 0" in last_error(ctx)
    assert out.value == 7.0


def test_transpose_leading_dimension_message(ctx):
    A, B = np.ones((3, 5)), np.zeros((5, 3))
    status = lib().gpk_transpose(ctx.handle, gpk.F64, gpk.ROW_MAJOR, 3, 5, A.ctypes.data, 4, B.ctypes.data, 3)
    assert status == gpk.ERROR_INVALID_ARGUMENT
    assert last_error(ctx) == "lda (4) must be >= max(1, cols) = 5"
    assert not B.any()


def test_null_and_destroyed_handles():
    assert lib().gpk_destroy(None) == gpk.SUCCESS
    count = ctypes.c_int(-1)
    assert lib().gpk_variant_count(None, gpk.OP_GEMM, ctypes.byref(count)) == gpk.ERROR_INVALID_HANDLE
    assert lib().gpk_variant_name(None, gpk.OP_GEMM, 0) is None
    assert "ctx is NULL" in gpk.last_error()


def test_variant_name_out_of_range(ctx):
    assert lib().gpk_variant_name(ctx.handle, gpk.OP_GEMM, 0) == b"host"
    assert lib().gpk_variant_name(ctx.handle, gpk.OP_GEMM, 1) is None
    assert lib().gpk_variant_name(ctx.handle, gpk.OP_GEMM, -1) is None
    assert lib().gpk_variant_name(ctx.handle, 9, 0) is None
