"""The few CUDA driver calls the DLPack exchange needs, through ctypes.

Results that gpk allocates for a DLPack caller on the GPU live in memory of the
context's GPU, and handing them out follows the DLPack stream rule: an event
recorded on the context's stream after gpk's work, waited for by the consumer's
stream. libgpk's C API allocates nothing for its callers, so these few calls go to
the CUDA driver (libcuda), which every process that can use a GPU has loaded or can
load, whichever CUDA runtime libgpk and the array libraries were built with. Each
call runs in the device's primary context -- the one the CUDA runtime, and so
libgpk, CuPy, PyTorch and JAX, all work in -- pushed for the call alone, so that it
is right from any thread (a deleter may run wherever the consumer frees).

Streams are the DLPack standard's integers: 1 is the legacy default stream and 2
the per-thread one (the driver's CU_STREAM_LEGACY and CU_STREAM_PER_THREAD handles
have these very values), anything else a cudaStream_t.
"""

import ctypes
import threading

from .constants import Status
from .errors import CudaError, OutOfMemoryError

_SUCCESS = 0
_NOT_READY = 600  # CUDA_ERROR_NOT_READY: cuEventQuery's "not yet"
_OUT_OF_MEMORY = 2  # CUDA_ERROR_OUT_OF_MEMORY
_EVENT_DISABLE_TIMING = 0x2
_MEMORYTYPE_UNIFIED = 4

LEGACY_STREAM = 1


class _Memcpy2D(ctypes.Structure):
    """CUDA_MEMCPY2D."""

    _fields_ = [
        ("srcXInBytes", ctypes.c_size_t), ("srcY", ctypes.c_size_t), ("srcMemoryType", ctypes.c_int),
        ("srcHost", ctypes.c_void_p), ("srcDevice", ctypes.c_uint64), ("srcArray", ctypes.c_void_p),
        ("srcPitch", ctypes.c_size_t),
        ("dstXInBytes", ctypes.c_size_t), ("dstY", ctypes.c_size_t), ("dstMemoryType", ctypes.c_int),
        ("dstHost", ctypes.c_void_p), ("dstDevice", ctypes.c_uint64), ("dstArray", ctypes.c_void_p),
        ("dstPitch", ctypes.c_size_t),
        ("WidthInBytes", ctypes.c_size_t), ("Height", ctypes.c_size_t),
    ]


_P = ctypes.c_void_p
_PP = ctypes.POINTER(ctypes.c_void_p)
_PROTOTYPES = {
    "cuInit": [ctypes.c_uint],
    "cuGetErrorName": [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)],
    "cuDeviceGet": [ctypes.POINTER(ctypes.c_int), ctypes.c_int],
    "cuDevicePrimaryCtxRetain": [_PP, ctypes.c_int],
    "cuCtxPushCurrent_v2": [_P],
    "cuCtxPopCurrent_v2": [_PP],
    "cuMemAlloc_v2": [ctypes.POINTER(ctypes.c_uint64), ctypes.c_size_t],
    "cuMemFree_v2": [ctypes.c_uint64],
    "cuMemcpy2DAsync_v2": [ctypes.POINTER(_Memcpy2D), _P],
    "cuEventCreate": [_PP, ctypes.c_uint],
    "cuEventRecord": [_P, _P],
    "cuEventQuery": [_P],
    "cuEventDestroy_v2": [_P],
    "cuStreamWaitEvent": [_P, _P, ctypes.c_uint],
}
_NAMES = ("libcuda.so.1", "libcuda.so", "libcuda.dylib", "nvcuda.dll")

_lock = threading.Lock()
_driver = None


class _Driver:
    def __init__(self):
        errors = []
        for name in _NAMES:
            try:
                lib = ctypes.CDLL(name)
                break
            except OSError as e:
                errors.append(f"{name}: {e}")
        else:
            raise CudaError(Status.ERROR_CUDA, "the CUDA driver library could not be loaded (" + "; ".join(errors)
                            + ")", "gpk")
        for function, argtypes in _PROTOTYPES.items():
            f = getattr(lib, function)
            f.argtypes, f.restype = argtypes, ctypes.c_int
        self.lib = lib
        self.contexts = {}
        self.check(lib.cuInit(0), "cuInit")

    def error_name(self, result):
        name = ctypes.c_char_p()
        if self.lib.cuGetErrorName(result, ctypes.byref(name)) == _SUCCESS and name.value:
            return name.value.decode()
        return f"CUresult {result}"

    def check(self, result, function):
        if result != _SUCCESS:
            kind = OutOfMemoryError if result == _OUT_OF_MEMORY else CudaError
            status = Status.ERROR_OUT_OF_MEMORY if result == _OUT_OF_MEMORY else Status.ERROR_CUDA
            raise kind(status, f"{function} failed: {self.error_name(result)}", "gpk")

    def context(self, device):
        found = self.contexts.get(device)
        if found is None:
            ordinal = ctypes.c_int()
            self.check(self.lib.cuDeviceGet(ctypes.byref(ordinal), device), "cuDeviceGet")
            handle = ctypes.c_void_p()
            # Retained for the life of the process: the primary context outlives
            # every array handed out, whoever frees those last.
            self.check(self.lib.cuDevicePrimaryCtxRetain(ctypes.byref(handle), ordinal), "cuDevicePrimaryCtxRetain")
            found = self.contexts[device] = handle
        return found


def driver():
    global _driver
    if _driver is None:
        with _lock:
            if _driver is None:
                _driver = _Driver()
    return _driver


class on:  # noqa: N801  (used as a function: `with on(device) as d`)
    """The CUDA driver with `device`'s primary context current, for one call."""

    __slots__ = ("device",)

    def __init__(self, device):
        self.device = device

    def __enter__(self):
        d = driver()
        d.check(d.lib.cuCtxPushCurrent_v2(d.context(self.device)), "cuCtxPushCurrent")
        return d

    def __exit__(self, *exc):
        _driver.lib.cuCtxPopCurrent_v2(ctypes.byref(ctypes.c_void_p()))


def allocate(device, nbytes):
    """Device memory of `nbytes` (at least 1) on `device`; its address."""
    address = ctypes.c_uint64()
    with on(device) as d:
        d.check(d.lib.cuMemAlloc_v2(ctypes.byref(address), max(1, nbytes)), "cuMemAlloc")
    return address.value


def free(device, address):
    # cuMemFree waits for the device's work first, so memory still being written
    # by gpk or read by a consumer is never handed back early.
    with on(device) as d:
        d.check(d.lib.cuMemFree_v2(address), "cuMemFree")


def copy_matrix(device, stream, dst, dst_pitch, src, src_pitch, width_bytes, height):
    """height rows of width_bytes each, from src to dst (device addresses, pitches in
    bytes), queued on `stream`."""
    if width_bytes == 0 or height == 0:
        return
    p = _Memcpy2D(srcMemoryType=_MEMORYTYPE_UNIFIED, srcDevice=src, srcPitch=src_pitch,
                  dstMemoryType=_MEMORYTYPE_UNIFIED, dstDevice=dst, dstPitch=dst_pitch,
                  WidthInBytes=width_bytes, Height=height)
    with on(device) as d:
        d.check(d.lib.cuMemcpy2DAsync_v2(ctypes.byref(p), stream), "cuMemcpy2DAsync")


class Event:
    """A CUDA event of `device`, without timing."""

    __slots__ = ("device", "handle")

    def __init__(self, device):
        self.device = device
        self.handle = None
        handle = ctypes.c_void_p()
        with on(device) as d:
            d.check(d.lib.cuEventCreate(ctypes.byref(handle), _EVENT_DISABLE_TIMING), "cuEventCreate")
        self.handle = handle

    def record(self, stream):
        """Marks the point that `stream`'s work queued so far reaches."""
        with on(self.device) as d:
            d.check(d.lib.cuEventRecord(self.handle, stream), "cuEventRecord")

    def wait(self, stream):
        """Makes `stream`'s later work wait for the recorded point."""
        with on(self.device) as d:
            d.check(d.lib.cuStreamWaitEvent(stream, self.handle, 0), "cuStreamWaitEvent")

    def done(self):
        with on(self.device) as d:
            result = d.lib.cuEventQuery(self.handle)
            if result == _NOT_READY:
                return False
            d.check(result, "cuEventQuery")
            return True

    def __del__(self):
        # Destroying an event whose work is pending is allowed: the driver frees it
        # once the work is done.
        if self.handle is not None and _driver is not None:
            try:
                with on(self.device) as d:
                    d.lib.cuEventDestroy_v2(self.handle)
            except Exception:  # noqa: BLE001  (interpreter shutdown: nothing to report to)
                pass
