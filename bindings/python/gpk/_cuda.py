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

import atexit
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


class BlockPool:
    """Device memory of one GPU for the results gpk allocates (gpk.Array), kept for
    reuse: cuMemAlloc and cuMemFree, which also waits for the whole device, cost
    several times a small call, once each per result.

    A block comes back with the streams its array was used on (written by gpk, read
    by the consumers that took it through DLPack, which pass their stream), and an
    event recorded on each of them then: it is handed out again once all those
    events are done, so that no work queued on it before it came back can still
    read or write it; until then a request takes other memory. A block whose
    streams are not all known (its __cuda_array_interface__ was taken, or a
    consumer passed stream -1) goes to cuMemFree at once, which waits for the
    device, as every block did before the pool.

    Sizes are rounded up to powers of two from 512 bytes; blocks over kMaxBlock go
    straight back to the driver, and at most kMaxIdle bytes are kept idle. When the
    GPU is out of memory the idle blocks are freed and the request tried again.
    trim() frees the idle blocks (a context's close, the interpreter's exit).

    alloc(nbytes) -> address, release(address) and event() -> an object with
    record(stream) and done() are the driver's by default (allocate, free, Event);
    tests pass their own. Deleters run on any thread, and a block may come back
    while the same thread is inside take() (a garbage collection there): the lock
    is re-entrant and each list is changed by one step at a time."""

    kMinBlock = 512
    kMaxBlock = 64 << 20
    kMaxIdle = 256 << 20

    def __init__(self, alloc, release, event):
        self._alloc, self._release, self._event = alloc, release, event
        self._lock = threading.RLock()
        self._idle = {}  # block size -> [(address, [events]), ...], oldest first
        self._idle_bytes = 0
        self._spare_events = []
        self.fresh = 0  # blocks taken from the driver (tests and the curious)

    @classmethod
    def block_size(cls, nbytes):
        size = cls.kMinBlock
        while size < nbytes:
            size *= 2
        return size

    def take(self, nbytes):
        """(address, block size) of memory for nbytes, ready for any stream."""
        size = self.block_size(nbytes)
        if size > self.kMaxBlock:
            return self._fresh(max(1, nbytes)), nbytes
        with self._lock:
            blocks = self._idle.get(size, ())
            for i, (address, events) in enumerate(blocks):
                # A collection inside done() may have closed a context (trim).
                if all(e.done() for e in events) and self._idle.get(size) is blocks:
                    del blocks[i]
                    self._idle_bytes -= size
                    self._spare_events.extend(events)
                    return address, size
        return self._fresh(size), size

    def _fresh(self, size):
        try:
            address = self._alloc(size)
        except OutOfMemoryError:
            if not self.trim():
                raise
            address = self._alloc(size)
        self.fresh += 1
        return address

    def give(self, address, size, streams):
        """Takes back the block at `address` of `size` bytes (as take() said), used on
        `streams` (DLPack stream integers; None: not all known)."""
        if streams is None or not streams or size > self.kMaxBlock or size != self.block_size(size):
            self._release(address)
            return
        with self._lock:
            if self._idle_bytes + size > self.kMaxIdle:
                keep = False
            else:
                keep = True
                events = []
                try:
                    for stream in streams:
                        event = self._spare_events.pop() if self._spare_events else self._event()
                        events.append(event)
                        event.record(stream)
                except Exception:  # noqa: BLE001  (a stream gone: the driver's free waits for all)
                    self._spare_events.extend(events)
                    keep = False
            if keep:
                self._idle.setdefault(size, []).append((address, events))
                self._idle_bytes += size
        if not keep:
            self._release(address)

    def trim(self):
        """Frees every idle block (the driver's free waits for the device's work on
        them); whether there was any."""
        with self._lock:
            blocks = [address for entries in self._idle.values() for address, _ in entries]
            for entries in self._idle.values():
                self._spare_events.extend(e for _, events in entries for e in events)
            self._idle.clear()
            self._idle_bytes = 0
        for address in blocks:
            self._release(address)
        return bool(blocks)

    def idle_bytes(self):
        return self._idle_bytes


_pools = {}  # device -> BlockPool


def pool(device):
    """The BlockPool of `device`'s results."""
    found = _pools.get(device)
    if found is None:
        with _lock:
            found = _pools.get(device)
            if found is None:
                found = _pools[device] = BlockPool(lambda n: allocate(device, n), lambda a: free(device, a),
                                                   lambda: Event(device))
    return found


def trim(device=None):
    """Gives `device`'s idle result memory back to the driver (every device's with
    None)."""
    for d, p in list(_pools.items()):
        if device is None or d == device:
            p.trim()


@atexit.register
def _trim_at_exit():
    try:
        trim()
    except Exception:  # noqa: BLE001  (the driver already gone: the process frees it)
        pass


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
