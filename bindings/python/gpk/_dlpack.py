"""DLPack: tensors of any array library in, results handed back to it.

Reading (acquire): the array API standard's exchange. __dlpack_device__() says where
the tensor lives -- checked against the context before anything else -- then
__dlpack__(stream=..., max_version=(1, 0)) gives a capsule (a producer without
max_version, DLPack before 1.0, is asked again without it and gives an unversioned
one). For a CUDA tensor the stream is the context's, so the producer orders its
pending work on the tensor before gpk's; for host memory it is None. The capsule is
read and kept, not consumed: the producer's own destructor releases the tensor when
the capsule goes, after the call (or, for asynchronous work, after that work; see
Context). Host tensors become numpy views of their memory and then follow numpy's
rules; device tensors become operands like __cuda_array_interface__ ones.

Producing (Array): a result gpk allocates for a DLPack caller -- host memory, or
memory of the context's GPU -- with __dlpack__ and __dlpack_device__, so that the
caller's library takes it without a copy (torch.from_dlpack, jax.numpy.from_dlpack,
cupy.from_dlpack, numpy.from_dlpack). A consumer's stream is made to wait for gpk's
work on the result (an event recorded after it) before its own work on it. Device
memory for results comes from a pool of blocks (_cuda.BlockPool), given back when
the array goes -- its capsule's deleter or destructor having run -- and handed out
again once the work queued on it is done.

Capsules are read and made with ctypes (PyCapsule_*), so the package needs no
compiled module for them.
"""

import atexit
import ctypes
import math

import numpy as np

from . import _cuda
from .constants import BF16, F8E4M3, F8E5M2, F16, F32, F64, I32, I64, Status
from .errors import InvalidArgumentError, NotSupportedError

CPU, CUDA, CUDA_HOST, CUDA_MANAGED = 1, 2, 3, 13
DEVICE_NAMES = {1: "cpu", 2: "cuda", 3: "cuda_host", 4: "opencl", 7: "vulkan", 8: "metal", 9: "vpi", 10: "rocm",
                11: "rocm_host", 12: "ext_dev", 13: "cuda_managed", 14: "oneapi", 15: "webgpu", 16: "hexagon",
                17: "maia"}
READ_ONLY, IS_COPIED = 1, 2
MAX_VERSION = (1, 0)

# (DLDataTypeCode, bits) of the dtypes libgpk takes.
_INT, _UINT, _FLOAT, _BFLOAT, _COMPLEX, _BOOL = 0, 1, 2, 4, 5, 6
_F8E4M3FN, _F8E5M2 = 10, 12
_DTYPES = {
    (_FLOAT, 32): (np.dtype(np.float32), F32),
    (_FLOAT, 64): (np.dtype(np.float64), F64),
    (_INT, 32): (np.dtype(np.int32), I32),
    (_INT, 64): (np.dtype(np.int64), I64),
    (_FLOAT, 16): (np.dtype(np.float16), F16),
    # Bytes holding FP8 bits where a library has no FP8 dtype (gemm_ex's a_dtype).
    (_UINT, 8): (np.dtype(np.uint8), None),
}
try:
    import ml_dtypes as _ml_dtypes

    _DTYPES[(_BFLOAT, 16)] = (np.dtype(_ml_dtypes.bfloat16), BF16)
    # OCP FP8 (DLPack 1.1's kDLFloat8_e4m3fn and kDLFloat8_e5m2), for gemm_ex.
    _DTYPES[(_F8E4M3FN, 8)] = (np.dtype(_ml_dtypes.float8_e4m3fn), F8E4M3)
    _DTYPES[(_F8E5M2, 8)] = (np.dtype(_ml_dtypes.float8_e5m2), F8E5M2)
except ImportError:  # pragma: no cover - depends on the environment
    pass
_CODES = {dtype: key for key, (dtype, _) in _DTYPES.items()}
_CODE_NAMES = {_INT: "int", _UINT: "uint", _FLOAT: "float", _BFLOAT: "bfloat", _COMPLEX: "complex", _BOOL: "bool",
               _F8E4M3FN: "float8_e4m3fn", _F8E5M2: "float8_e5m2"}


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32), ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


# The deleters take the managed tensor's address; a pointer either way in C.
_Deleter = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", _Deleter)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p), ("deleter", _Deleter),
                ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]


_VERSIONED, _UNVERSIONED = b"dltensor_versioned", b"dltensor"


def _pyfunc(name, restype, *argtypes):
    # A function object of our own (not ctypes.pythonapi's shared one), so that its
    # argument types are ours alone; it runs with the GIL held.
    return ctypes.PYFUNCTYPE(restype, *argtypes)((name, ctypes.pythonapi))


_is_valid = _pyfunc("PyCapsule_IsValid", ctypes.c_int, ctypes.py_object, ctypes.c_char_p)
_get_pointer = _pyfunc("PyCapsule_GetPointer", ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)
# The capsule destructor gets the capsule while it is being freed: as an address,
# never as a Python object (which would take a reference to it).
_is_valid_raw = _pyfunc("PyCapsule_IsValid", ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)
_get_pointer_raw = _pyfunc("PyCapsule_GetPointer", ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)
_Destructor = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_new_capsule = _pyfunc("PyCapsule_New", ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p, _Destructor)


def invalid(message, where):
    return InvalidArgumentError(Status.ERROR_INVALID_ARGUMENT, message, where)


def unsupported(message, where):
    return NotSupportedError(Status.ERROR_NOT_SUPPORTED, message, where)


def _device_name(device_type, device_id):
    return f"{DEVICE_NAMES.get(device_type, f'device type {device_type}')}:{device_id}"


def _context_name(ctx):
    return f"cuda:{ctx.device}" if ctx.backend == "cuda" else "the host backend (host memory only)"


# ------------------------------------------------------------------- reading --


class _Held:
    """What keeps a tensor alive while gpk uses it: the producer's object and its
    capsule (whose destructor releases the tensor), and for host memory the numpy
    interface of the memory."""

    __slots__ = ("source", "capsule", "view", "__array_interface__")

    def __init__(self, source, capsule):
        self.source = source
        self.capsule = capsule
        self.view = None


def acquire(obj, name, where, ctx, output):
    """(held, ptr, shape, byte strides, numpy dtype, GPK dtype, on the device,
    writable) of obj through DLPack. Host memory comes with held.view, a numpy
    view of it. Refuses a tensor the context cannot reach, naming `name`."""
    try:
        device_type, device_id = (int(x) for x in obj.__dlpack_device__())
    except Exception as e:  # noqa: BLE001  (any failure of the producer is reported)
        raise invalid(f"{name}: its __dlpack_device__() failed: {e!r}", where) from e
    if device_type in (CPU, CUDA_HOST) or (device_type == CUDA_MANAGED and ctx.backend != "cuda"):
        on_device, stream = False, None  # host-accessible memory: no stream applies
    elif device_type in (CUDA, CUDA_MANAGED):
        if ctx.backend != "cuda" or device_id != ctx.device:
            raise invalid(f"{name} is on {_device_name(device_type, device_id)} but the context is on "
                          f"{_context_name(ctx)}", where)
        on_device, stream = True, ctx._dlpack_stream()
    else:
        raise invalid(f"{name} is on {_device_name(device_type, device_id)}; gpk takes host memory or memory of the "
                      f"context's GPU ({_context_name(ctx)})", where)

    try:
        try:
            capsule = obj.__dlpack__(stream=stream, max_version=MAX_VERSION)
        except TypeError:  # a producer from before DLPack 1.0: no max_version
            capsule = obj.__dlpack__(stream=stream)
    except Exception as e:  # noqa: BLE001
        read_only = output and isinstance(e, BufferError) and "readonly" in str(e).replace("-", "").replace(" ", "")
        reason = "is read-only: " if read_only else "could not be exported: "
        raise invalid(f"{name} {reason}its __dlpack__() failed: {e}", where) from e
    held = _Held(obj, capsule)

    flags = 0
    if _is_valid(capsule, _VERSIONED):
        managed = DLManagedTensorVersioned.from_address(_get_pointer(capsule, _VERSIONED))
        if managed.version.major != MAX_VERSION[0]:
            # Nothing past the version may be read from a major version we do not
            # know; the capsule, unconsumed, is released by its destructor.
            raise unsupported(f"{name}: its DLPack capsule is version {managed.version.major}."
                              f"{managed.version.minor}; gpk reads version 1", where)
        flags = managed.flags
    elif _is_valid(capsule, _UNVERSIONED):
        managed = DLManagedTensor.from_address(_get_pointer(capsule, _UNVERSIONED))
    else:
        raise invalid(f"{name}: its __dlpack__() returned {capsule!r}, not an unconsumed DLPack capsule", where)
    t = managed.dl_tensor

    if (t.device.device_type, t.device.device_id) != (device_type, device_id):
        raise invalid(f"{name}: its capsule is on {_device_name(t.device.device_type, t.device.device_id)} but "
                      f"__dlpack_device__() said {_device_name(device_type, device_id)}", where)
    key = (t.dtype.code, t.dtype.bits)
    found = _DTYPES.get(key) if t.dtype.lanes == 1 else None
    if found is None:
        lanes = f"x{t.dtype.lanes}" if t.dtype.lanes != 1 else ""
        described = f"{_CODE_NAMES.get(t.dtype.code, f'code {t.dtype.code} ')}{t.dtype.bits}{lanes}"
        raise unsupported(f"{name} has dtype {described}; libgpk takes float32, float64, int32 or int64, and the "
                          "16-bit float16 and bfloat16", where)
    dtype, code = found
    ndim = t.ndim
    shape = tuple(t.shape[i] for i in range(ndim))
    item = dtype.itemsize
    if t.strides:
        strides = tuple(t.strides[i] * item for i in range(ndim))
    else:  # NULL: compact and row-major
        strides, step = [], item
        for n in reversed(shape):
            strides.append(step)
            step *= max(n, 1)
        strides = tuple(reversed(strides))
    ptr = (t.data or 0) + t.byte_offset
    if output and flags & IS_COPIED:
        raise invalid(f"{name}: its __dlpack__() exported a copy, where a result written would be lost", where)
    writable = not flags & READ_ONLY

    if not on_device:
        held.view = _host_view(held, ptr, shape, strides, dtype, writable)
    return held, ptr, shape, strides, dtype, code, on_device, writable


def _host_view(held, ptr, shape, strides, dtype, writable):
    """A numpy array over host memory of the tensor, kept alive by `held`."""
    if math.prod(shape) == 0:
        # No element: the pointer may be NULL, which numpy will not wrap.
        return np.empty(shape, dtype)
    # numpy makes the view from the interface of an object that it then keeps as the
    # view's base. The elements are described as unsigned ints of their size
    # (bfloat16 has no typestr of its own) and reinterpreted.
    held.__array_interface__ = {"data": (ptr, not writable), "shape": shape, "strides": strides,
                                "typestr": f"<u{dtype.itemsize}", "version": 3}
    view = np.asarray(held)
    if len(shape):
        return view.view(dtype)
    return view.reshape(1).view(dtype).reshape(())



# ------------------------------------------------------------------ producing --


_exported = {}  # managed tensor address -> what it needs alive: (struct, shape, strides, array)


def _release(address):
    _exported.pop(address, None)


@_Deleter
def _deleter(address):
    # Called by the consumer (with the GIL taken by ctypes) when it is done.
    try:
        _release(address)
    except Exception:  # noqa: BLE001  (a deleter has nowhere to report)
        pass


@_Destructor
def _capsule_destructor(capsule):
    # A capsule never consumed still owns its tensor; a consumed one was renamed
    # ("used_dltensor...") and its consumer calls the deleter.
    try:
        for name in (_VERSIONED, _UNVERSIONED):
            if _is_valid_raw(capsule, name):
                _release(_get_pointer_raw(capsule, name))
    except Exception:  # noqa: BLE001  (a destructor has nowhere to report)
        pass


# A consumer may free what gpk handed out after this module is gone, as the
# interpreter shuts down: the callbacks it will call, and what is still handed out
# then, are kept for good (one reference never dropped) rather than freed under it.
_keep = _pyfunc("Py_IncRef", None, ctypes.py_object)
_keep(_deleter)
_keep(_capsule_destructor)


@atexit.register
def _keep_exported():
    for entry in list(_exported.values()):
        _keep(entry)


def exported_count():
    """How many managed tensors gpk has handed out and not had released."""
    return len(_exported)


class Array:
    """An array that gpk allocated for a result: host memory, or memory of a
    context's GPU. Any array library takes it without a copy through DLPack
    (__dlpack__, __dlpack_device__), CUDA libraries also through
    __cuda_array_interface__, numpy through numpy.asarray for host memory.

    A consumer on a CUDA stream is ordered after gpk's work on the array: the
    stream it passes to __dlpack__ waits for that work.
    """

    __slots__ = ("shape", "dtype", "strides", "ptr", "_device", "_stream", "_ready", "_host", "_block", "_streams",
                 "__weakref__")

    def __init__(self, shape, dtype, order="C", device=None, stream=None):
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self._device = device
        self._stream = stream
        self._ready = None
        self.ptr = None
        # Device memory comes from the device's BlockPool (_cuda.py) and goes back to
        # it with the streams it was used on: gpk's, and each DLPack consumer's. None:
        # a consumer whose stream is not known (the CUDA array interface, stream -1).
        self._block = 0
        self._streams = set()
        item = self.dtype.itemsize
        count = math.prod(self.shape)
        if device is None:
            # 64-byte aligned, as some consumers want host memory to be to take it
            # without a copy (XLA's CPU client).
            raw = np.empty(count * item + 64, np.uint8)
            start = -raw.ctypes.data % 64
            flat = raw[start:start + count * item].view(self.dtype)
            self._host = flat.reshape(self.shape) if order == "C" else flat.reshape(self.shape[::-1]).T
            self.strides = self._host.strides
            self.ptr = self._host.ctypes.data
        else:
            self._host = None
            strides, step = [], item
            dims = list(enumerate(self.shape))
            for axis, n in (reversed(dims) if order == "C" else dims):
                strides.append((axis, step))
                step *= max(n, 1)
            self.strides = tuple(s for _, s in sorted(strides))
            self.ptr, self._block = _cuda.pool(device).take(count * item)
            self.used_on(stream)

    def __del__(self):
        if self._host is None and self.ptr is not None:
            try:
                _cuda.pool(self._device).give(self.ptr, self._block, self._streams)
            except Exception:  # noqa: BLE001  (shutdown, or a driver error nobody can handle)
                pass
            self.ptr = None

    def used_on(self, stream):
        """Notes that work on the array is queued on `stream` (a DLPack stream
        integer; None: the legacy default stream, -1: not known)."""
        if self._streams is not None:
            if stream == -1:
                self._streams = None
            else:
                self._streams.add(_cuda.LEGACY_STREAM if stream is None else int(stream))

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return math.prod(self.shape)

    @property
    def device(self):
        """'cpu', or 'cuda:N' for memory of GPU N."""
        return "cpu" if self._device is None else f"cuda:{self._device}"

    def __repr__(self):
        return f"gpk.Array(shape={self.shape}, dtype={self.dtype}, device={self.device!r})"

    def __array__(self, dtype=None, copy=None):
        if self._host is None:
            raise TypeError("gpk.Array: the memory is on the GPU; take it with your GPU library's from_dlpack")
        if copy:
            return np.array(self._host, dtype=dtype, copy=True)
        return self._host if dtype is None else self._host.astype(dtype, copy=False)

    @property
    def __cuda_array_interface__(self):
        if self._host is not None:
            raise AttributeError("gpk.Array in host memory has no __cuda_array_interface__")
        self._streams = None  # its consumer's stream is not said
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (self.ptr, False),
                "strides": self.strides, "version": 3, "stream": self._stream}

    def written_on(self, stream):
        """Marks that gpk's work writing the array was queued on `stream` (a DLPack
        stream integer): consumers on other streams will wait for it."""
        self._stream = stream
        self.used_on(stream)
        event = _cuda.Event(self._device)
        event.record(stream)
        self._ready = event
        return event

    def __dlpack_device__(self):
        return (CPU, 0) if self._device is None else (CUDA, self._device)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        if copy:
            raise BufferError("gpk.Array exports its own memory: it makes no copy (copy=True)")
        if dl_device is not None and tuple(int(x) for x in dl_device) != self.__dlpack_device__():
            raise BufferError(f"gpk.Array is on {_device_name(*self.__dlpack_device__())}, not on "
                              f"{_device_name(*(int(x) for x in dl_device))}")
        if self._device is None:
            if stream is not None:
                raise BufferError(f"gpk.Array in host memory takes stream=None, not {stream!r}")
        elif stream != -1:
            if stream == 0:
                raise ValueError("stream 0 is ambiguous in DLPack: pass 1 for the legacy default stream, 2 for the "
                                 "per-thread one")
            stream = _cuda.LEGACY_STREAM if stream is None else int(stream)
            if self._ready is not None and stream != self._stream:
                self._ready.wait(stream)
        if self._device is not None:
            self.used_on(stream)
        versioned = max_version is not None and tuple(max_version)[0] >= 1
        return _export(self, versioned)


def _export(array, versioned):
    ndim = array.ndim
    shape = (ctypes.c_int64 * max(ndim, 1))(*array.shape)
    item = array.dtype.itemsize
    strides = (ctypes.c_int64 * max(ndim, 1))(*(s // item for s in array.strides))
    if versioned:
        managed = DLManagedTensorVersioned()
        managed.version.major, managed.version.minor = MAX_VERSION
        managed.flags = 0
    else:
        managed = DLManagedTensor()
    t = managed.dl_tensor
    t.data = array.ptr
    t.device.device_type, t.device.device_id = array.__dlpack_device__()
    t.ndim = ndim
    t.dtype.code, t.dtype.bits = _CODES[array.dtype]
    t.dtype.lanes = 1
    t.shape = shape
    t.strides = strides
    t.byte_offset = 0
    managed.deleter = _deleter
    address = ctypes.addressof(managed)
    managed.manager_ctx = address
    _exported[address] = (managed, shape, strides, array)
    return _new_capsule(address, _VERSIONED if versioned else _UNVERSIONED, _capsule_destructor)


# ------------------------------------------------------- the caller's library --


_from_dlpack_of_type = {}


def _known(library):
    if library == "torch":
        import torch

        return torch.from_dlpack
    if library == "cupy":
        import cupy

        return cupy.from_dlpack
    if library in ("jax", "jaxlib"):
        import jax.numpy

        return jax.numpy.from_dlpack
    if library == "numpy":
        return np.from_dlpack
    if library == "tensorflow":
        import tensorflow as tf

        return lambda array: tf.experimental.dlpack.from_dlpack(array.__dlpack__())
    return None


def converter(source):
    """The from_dlpack of source's array library -- known ones by name, others
    through the array API's __array_namespace__() -- or None."""
    kind = type(source)
    try:
        return _from_dlpack_of_type[kind]
    except KeyError:
        pass
    found = _known(kind.__module__.split(".")[0])
    if found is None and hasattr(source, "__array_namespace__"):
        try:
            found = getattr(source.__array_namespace__(), "from_dlpack", None)
        except Exception:  # noqa: BLE001  (no namespace: the result stays a gpk.Array)
            found = None
    _from_dlpack_of_type[kind] = found
    return found


def deliver(array, source, where):
    """The gpk.Array `array` as an array of source's library (zero copy), or as it is
    where that library has no from_dlpack."""
    convert = converter(source)
    if convert is None:
        return array
    try:
        return convert(array)
    except Exception as e:  # noqa: BLE001
        library = type(source).__module__.split(".")[0]
        raise unsupported(f"the result could not be handed to {library}'s from_dlpack: {e!r}", where) from e
