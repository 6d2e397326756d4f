"""gpk: Python bindings of libgpk, the GPU performance kit.

    >>> import numpy as np, gpk
    >>> with gpk.Context() as ctx:            # the GPU if usable, else the host
    ...     c = ctx.gemm(np.ones((2, 3)), np.ones((3, 4)))
    ...     total = ctx.reduce(c)              # 24.0
    ...     pi = ctx.pi(10_000_000, seed=42)   # PiResult(estimate=3.14..., ...)

Arrays are numpy arrays, device arrays with __cuda_array_interface__ (CuPy, PyTorch,
Numba) or any DLPack tensor (PyTorch, JAX, CuPy, TensorFlow...); results come back
in the caller's library (gpk.Array, which speaks DLPack, where gpk knows none).

The package is Python over ctypes. libgpk itself is found through $GPK_LIBRARY,
beside the package (a wheel from `pip install .`), the path recorded by `meson
install`, or the loader's usual search (see gpk._library). Failing calls raise gpk.GpkError (a subclass per status)
carrying .status and libgpk's message.
"""

import ctypes as _ctypes

from . import _config, _library, constants
from .constants import *  # noqa: F401,F403  (the C API's constants)
from .constants import Status
from ._dlpack import Array
from .context import Context, PiResult
from .errors import (
    CublasError,
    CudaError,
    CurandError,
    GpkError,
    InternalError,
    InvalidArgumentError,
    InvalidHandleError,
    LibraryNotFoundError,
    NoDeviceError,
    NotSupportedError,
    OutOfMemoryError,
    ValidationError,
)

# The project version (meson.build), the same as libgpk's gpk_version().
__version__ = _config.VERSION


def version():
    """The loaded libgpk's version, (major, minor, patch)."""
    parts = [_ctypes.c_int() for _ in range(3)]
    _library.lib().gpk_version(*(_ctypes.byref(p) for p in parts))
    return tuple(p.value for p in parts)


def library_path():
    """Where libgpk was loaded from (loading it if needed)."""
    return _library.path()


def status_string(status):
    """libgpk's short name for a status ("invalid argument", ...)."""
    return _library.lib().gpk_status_string(int(status)).decode()


def last_error():
    """The calling thread's most recent libgpk failure message ("" if none)."""
    return (_library.lib().gpk_last_error(None) or b"").decode("utf-8", "replace")


__all__ = [
    "Array",
    "Context",
    "PiResult",
    "GpkError",
    "InvalidArgumentError",
    "InvalidHandleError",
    "NoDeviceError",
    "OutOfMemoryError",
    "NotSupportedError",
    "CudaError",
    "CublasError",
    "CurandError",
    "ValidationError",
    "InternalError",
    "LibraryNotFoundError",
    "version",
    "library_path",
    "status_string",
    "last_error",
] + constants.__all__
