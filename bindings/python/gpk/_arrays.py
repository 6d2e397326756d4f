"""Seeing numpy arrays, __cuda_array_interface__ objects and DLPack tensors the way
the C API does.

Which protocol an object is read through is decided once per type (protocol()):
numpy arrays as numpy arrays; the device arrays of the libraries the package
allocates results like (CuPy, PyTorch, Numba) through __cuda_array_interface__, the
quickest way in (a PyTorch CPU tensor, which has no such interface, through DLPack);
any other object with __dlpack__ through DLPack (_dlpack); the rest through
numpy.asarray.

An Operand is a pointer, a shape, byte strides and a dtype. A 2-D operand with a
unit stride along one axis is a matrix the C API can read in place: along axis 1
it is row-major with ld = strides[0] / itemsize, along axis 0 column-major with
ld = strides[1] / itemsize. A slice such as a[:, :5] of a C-ordered array keeps a
unit stride and so travels without a copy.
"""

import math

import numpy as np

from . import _cuda, _dlpack
from .constants import BF16, F8E4M3, F8E5M2, F16, F32, F64, I32, I64, Status
from .errors import InvalidArgumentError, NotSupportedError

DTYPES = {
    np.dtype(np.float32): F32,
    np.dtype(np.float64): F64,
    np.dtype(np.int32): I32,
    np.dtype(np.int64): I64,
    np.dtype(np.float16): F16,
}
# numpy has no bfloat16; the ml_dtypes package's is the one the ecosystem shares
# (JAX, TensorFlow), and it is optional here.
try:
    import ml_dtypes as _ml_dtypes
except ImportError:  # pragma: no cover - depends on the environment
    _ml_dtypes = None
if _ml_dtypes is not None:
    DTYPES[np.dtype(_ml_dtypes.bfloat16)] = BF16
    # OCP FP8: inputs of gemm_ex and gemm_blockscaled (and of gemm and matmul, which
    # hand them there); "fn" is E4M3 without infinities, as OCP and libgpk define it.
    DTYPES[np.dtype(_ml_dtypes.float8_e4m3fn)] = F8E4M3
    DTYPES[np.dtype(_ml_dtypes.float8_e5m2)] = F8E5M2
FP8_CODES = (F8E4M3, F8E5M2)
# The element size of each GPK dtype, and the numpy dtype of the values each holds
# (None where numpy has none without ml_dtypes).
ITEMSIZE = {F32: 4, F64: 8, I32: 4, I64: 8, F16: 2, BF16: 2, F8E4M3: 1, F8E5M2: 1}
NUMPY_DTYPES = {code: dtype for dtype, code in DTYPES.items()}
# Arrays of these dtypes may carry the bits of a dtype that their library lacks (CuPy
# has neither bfloat16 nor FP8), when the call is told which (gemm_ex's a_dtype,
# b_dtype and out_dtype): unsigned or signed integers of the element's size.
BIT_DTYPES = {np.dtype(t) for t in (np.uint8, np.int8, np.uint16, np.int16)}
ROW, COL = "row", "col"


def invalid(message, where):
    return InvalidArgumentError(Status.ERROR_INVALID_ARGUMENT, message, where)


def unsupported(message, where):
    return NotSupportedError(Status.ERROR_NOT_SUPPORTED, message, where)


class Operand:
    __slots__ = ("obj", "ptr", "shape", "strides", "dtype", "device", "writable", "code", "source", "_storages")

    def __init__(self, obj, ptr, shape, strides, dtype, device, writable, code=None, source=None):
        # Keeps the memory alive for as long as the call needs it: the array itself,
        # a numpy view (host memory through DLPack), or what holds a DLPack
        # tensor of the device.
        self.obj = obj
        self.ptr = ptr
        self.shape = shape
        self.strides = strides
        self.dtype = dtype
        self.device = device
        self.writable = writable
        self.code = code  # the GPK_* dtype, when the dtype is one libgpk takes
        self.source = source  # the caller's object, for one read through DLPack
        self._storages = None

    @property
    def size(self):
        return math.prod(self.shape)

    def storages(self):
        """{orientation: ld} for each way a 2-D operand can be passed in place
        (computed once: an operand's layout does not change during a call)."""
        found = self._storages
        if found is None:
            found = self._storages = self._find_storages()
        return found

    def _find_storages(self):
        rows, cols = self.shape
        s0, s1 = self.strides
        item = self.dtype.itemsize
        found = {}
        if self.ptr % item:
            return found
        if rows == 0 or cols == 0:
            # No element is accessed: any layout, with the smallest ld the C API
            # takes (numpy gives such arrays zero strides, which no ld describes).
            return {ROW: max(1, cols), COL: max(1, rows)}
        if cols <= 1 or s1 == item:
            ld = s0 // item if rows > 1 else max(1, cols)
            if rows <= 1 or (s0 % item == 0 and ld >= max(1, cols)):
                found[ROW] = ld
        if rows <= 1 or s0 == item:
            ld = s1 // item if cols > 1 else max(1, rows)
            if cols <= 1 or (s1 % item == 0 and ld >= max(1, rows)):
                found[COL] = ld
        return found

    def is_contiguous(self):
        """Whether the elements fill one block of memory, in C or Fortran order."""
        item = self.dtype.itemsize
        if self.size <= 1:
            return self.ptr % item == 0
        dims = [(n, s) for n, s in zip(self.shape, self.strides) if n != 1]
        for order in (dims[::-1], dims):
            expected = item
            for n, s in order:
                if s != expected:
                    break
                expected *= n
            else:
                return self.ptr % item == 0
        return False

    def extent(self):
        """[lo, hi) byte addresses touched, for overlap checks."""
        if self.size == 0:
            return self.ptr, self.ptr
        lo = hi = self.ptr
        for n, s in zip(self.shape, self.strides):
            if s >= 0:
                hi += (n - 1) * s
            else:
                lo += (n - 1) * s
        return lo, hi + self.dtype.itemsize


def _c_strides(shape, itemsize):
    if len(shape) == 2:  # the common case, without the loop
        return (max(shape[1], 1) * itemsize, itemsize)
    strides, step = [], itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def is_device_array(obj):
    return hasattr(obj, "__cuda_array_interface__")


NUMPY, CAI, DLPACK = "numpy", "cai", "dlpack"
_protocol_of_type = {}


def protocol(kind):
    """How objects of type `kind` are read: NUMPY (numpy arrays, and anything else
    numpy.asarray takes), CAI (__cuda_array_interface__) or DLPACK. Device arrays of
    the libraries in _ALLOCATORS keep to CAI, whose reading costs least; where such
    an object has no interface (a CPU tensor) it goes through DLPack instead."""
    found = _protocol_of_type.get(kind)
    if found is None:
        if issubclass(kind, np.ndarray):
            found = NUMPY
        else:
            cai = hasattr(kind, "__cuda_array_interface__")
            dlpack = hasattr(kind, "__dlpack__")
            if cai and (not dlpack or kind.__module__.split(".")[0] in _ALLOCATORS):
                found = CAI
            else:
                found = DLPACK if dlpack else NUMPY
        _protocol_of_type[kind] = found
    return found


# typestr -> (numpy dtype, GPK_* code or None): parsing a typestr costs more than
# the rest of reading an interface, and a program uses a handful of them.
_TYPESTRS = {}


def _typestr(typestr):
    found = _TYPESTRS.get(typestr)
    if found is None:
        dtype = np.dtype(typestr)
        found = _TYPESTRS[typestr] = (dtype, DTYPES.get(dtype))
    return found


def _interface(obj, name, where):
    """obj's __cuda_array_interface__, or None for an object without one. Read once
    per call: CuPy, for one, builds the dict anew on every access."""
    try:
        return getattr(obj, "__cuda_array_interface__", None)
    except Exception as e:  # e.g. a torch tensor that requires grad
        raise invalid(f"{name}: its __cuda_array_interface__ is unavailable: {e}", where) from e


def _from_cuda_interface(obj, iface, name, where):
    try:
        if iface.get("mask") is not None:
            raise unsupported(f"{name}: masked device arrays are not supported", where)
        shape = tuple(map(int, iface["shape"]))
        dtype, code = _typestr(iface["typestr"])
        strides = iface.get("strides")
        strides = tuple(map(int, strides)) if strides is not None else _c_strides(shape, dtype.itemsize)
        ptr, readonly = iface["data"]
    except (NotSupportedError, InvalidArgumentError):
        raise
    except Exception as e:  # a malformed interface
        raise invalid(f"{name}: its __cuda_array_interface__ is unusable: {e!r}", where) from e
    return Operand(obj, int(ptr or 0), shape, strides, dtype, True, not readonly, code)


def _interface_view(obj):
    iface = obj.__cuda_array_interface__
    c_order = iface.get("strides") is None and iface.get("mask") is None  # the interface's rule
    return iface["shape"], iface["typestr"], c_order, iface["data"][0]


def _cupy_view(obj):
    # CuPy builds its interface dict, descr list included, on each access; these
    # attributes cost a fraction of that.
    return obj.shape, obj.dtype.str, obj.flags.c_contiguous, obj.data.ptr


def _cupy_view_attribute(obj):
    # Where CuPy keeps the flag as an attribute, without making a flags object.
    return obj.shape, obj.dtype.str, obj._c_contiguous, obj.data.ptr


def _cupy_views(kind):
    return _cupy_view_attribute if hasattr(kind, "_c_contiguous") else _cupy_view


def _no_view(obj):
    return None


_VIEWS = {"cupy": _cupy_views}
_view_of_type = {}


def device_view(obj):
    """(shape, typestr, C-ordered, address) of a device array, read the quickest
    way its library allows; None for an object without __cuda_array_interface__."""
    kind = type(obj)
    view = _view_of_type.get(kind)
    if view is None:
        if protocol(kind) != CAI:
            _view_of_type[kind] = _no_view
            return None
        views = _VIEWS.get(kind.__module__.split(".")[0])
        view = _view_of_type[kind] = views(kind) if views is not None else _interface_view
    return view(obj)


def _from_numpy(arr):
    return Operand(arr, arr.__array_interface__["data"][0], arr.shape, arr.strides, arr.dtype, False,
                   arr.flags.writeable, DTYPES.get(arr.dtype))


def _from_dlpack(obj, name, where, ctx, output):
    if ctx is None:
        raise invalid(f"{name}: a DLPack tensor is read for a context", where)
    held, ptr, shape, strides, dtype, code, device, writable = _dlpack.acquire(obj, name, where, ctx, output)
    if not device:
        return Operand(held.view, ptr, shape, strides, dtype, False, writable, code, obj)
    return Operand(held, ptr, shape, strides, dtype, True, writable, code, obj)


def _from_gpk_array(array, name, where, ctx):
    """A gpk.Array read as DLPack would read it, less the capsule."""
    host = array._host
    if host is None:
        if ctx is None or ctx.backend != "cuda" or ctx.device != array._device:
            raise invalid(f"{name} is on {array.device} but the context is on "
                          f"{_dlpack._context_name(ctx) if ctx is not None else 'none'}", where)
        stream = ctx._dlpack_stream()
        if array._ready is not None and array._stream != stream:
            array._ready.wait(stream)
        array.used_on(stream)
    return Operand(array if host is None else host, array.ptr, array.shape, array.strides, array.dtype,
                   host is None, True, DTYPES.get(array.dtype), array)


def _read(obj, name, where, ctx, output):
    """The operand of obj through its protocol, or None for numpy's way."""
    kind = protocol(type(obj))
    if kind == CAI:
        iface = _interface(obj, name, where)
        if iface is not None:
            return _from_cuda_interface(obj, iface, name, where)
        if not hasattr(obj, "__dlpack__"):
            return None
        kind = DLPACK
    if kind == DLPACK:
        if type(obj) is _dlpack.Array:
            return _from_gpk_array(obj, name, where, ctx)
        return _from_dlpack(obj, name, where, ctx, output)
    return None


def as_bits(op, bits, name, where, dtype_name):
    """`op` read as the GPK dtype `bits`, told by the caller (argument `dtype_name`):
    an array of that dtype, or of integers of its element size holding its bits (a
    uint8 CuPy array for FP8, say). Anything else is refused, naming both."""
    if op.code == bits:
        return op
    if op.dtype in BIT_DTYPES and op.dtype.itemsize == ITEMSIZE[bits]:
        op.code = bits
        return op
    want = NUMPY_DTYPES.get(bits)
    raise invalid(
        f"{name} has dtype {op.dtype} but {dtype_name} is {dtype_label(bits)}: pass {name} as "
        + (f"{want} or " if want is not None else "")
        + f"as {ITEMSIZE[bits] * 8}-bit integers holding its bits",
        where,
    )


CODE_NAMES = {F32: "F32", F64: "F64", I32: "I32", I64: "I64", F16: "F16", BF16: "BF16", F8E4M3: "F8E4M3",
              F8E5M2: "F8E5M2"}


def dtype_label(code):
    """'gpk.F8E4M3 (float8_e4m3fn)' and the like, for messages."""
    want = NUMPY_DTYPES.get(code)
    label = f"gpk.{CODE_NAMES.get(code, code)}"
    return f"{label} ({want})" if want is not None else label


def as_input(obj, name, where, ctx=None, bits=None):
    """An operand the call reads: device arrays and DLPack tensors as they are,
    anything else through numpy (a list becomes an array; non-native byte order is
    converted). `ctx` (the Context) is where DLPack tensors must be. `bits`, a GPK
    dtype, reads integer arrays of its size as its bits (as_bits)."""
    kind = type(obj)
    if kind is np.ndarray:
        op = None
    elif _protocol_of_type.get(kind) is CAI and (iface := _interface(obj, name, where)) is not None:
        op = _from_cuda_interface(obj, iface, name, where)  # the common device case, in fewest steps
    else:
        op = _read(obj, name, where, ctx, False)
    if op is None:
        arr = np.asarray(obj)
        if not arr.dtype.isnative and arr.dtype.newbyteorder("=") in DTYPES:
            arr = arr.astype(arr.dtype.newbyteorder("="))
        op = _from_numpy(arr)
    if bits is not None:
        as_bits(op, bits, name, where, bits_name(name))
    if op.code is None:
        gpk_dtype(op.dtype, name, where)  # raises
    if op.device and op.ptr % op.dtype.itemsize:
        # Host arrays are copied (aligned) where needed; device arrays are not.
        require_aligned(op, name, where)
    return op


def bits_name(name):
    """The argument that tells an operand's dtype: a_dtype for A, out_dtype for out."""
    return {"A": "a_dtype", "B": "b_dtype"}.get(name, "out_dtype")


def as_output(obj, name, where, ctx=None, bits=None):
    """An operand the call writes: it must be an array the caller can see change.
    `bits` as for as_input."""
    op = _from_numpy(obj) if isinstance(obj, np.ndarray) else _read(obj, name, where, ctx, True)
    if op is None:
        raise invalid(
            f"{name} must be a numpy array, an object with __cuda_array_interface__ or a DLPack tensor "
            f"(__dlpack__), not {type(obj).__name__}",
            where,
        )
    if not op.writable:
        raise invalid(f"{name} is read-only", where)
    if not op.dtype.isnative:
        raise invalid(f"{name} has non-native byte order ({op.dtype.str})", where)
    if bits is not None:
        as_bits(op, bits, name, where, bits_name(name))
    if op.code is None:
        gpk_dtype(op.dtype, name, where)  # raises
    # An output cannot be copied (the caller must see the result in it), so a
    # misaligned one is refused -- by its rule, before the layout checks, whose
    # message would be about strides.
    require_aligned(op, name, where)
    return op


def require_aligned(op, name, where):
    item = op.dtype.itemsize
    if op.ptr % item:
        raise invalid(
            f"{name} is misaligned: its data starts at {op.ptr:#x}, not a multiple of its element size "
            f"({item} bytes)",
            where,
        )


def gpk_dtype(dtype, name, where):
    try:
        return DTYPES[np.dtype(dtype)]
    except KeyError:
        raise unsupported(
            f"{name} has dtype {np.dtype(dtype)}; libgpk takes float32, float64, int32 or int64, and the "
            f"16-bit float16 and bfloat16 (ml_dtypes.bfloat16{'' if _ml_dtypes is not None else ', with ml_dtypes installed'})"
            "; gemm_ex also FP8 (ml_dtypes.float8_e4m3fn and float8_e5m2, or their bits in uint8 arrays with "
            "a_dtype / b_dtype)",
            where,
        ) from None


def require_ndim(op, ndim, name, where):
    if len(op.shape) != ndim:
        raise invalid(f"{name} must be {ndim}-D, but its shape is {op.shape}", where)


def as_host_copy(op, order):
    """A fresh, aligned numpy copy in `order` ('C' or 'F'): for layouts no ld can describe.
    It keeps the original's source: a result still goes back to the caller's library."""
    copy = _from_numpy(np.array(op.obj, order=order, copy=True))
    copy.source = op.source
    copy.code = op.code  # integers holding another dtype's bits still hold them
    return copy


def overlaps(a, b):
    lo_a, hi_a = a.extent()
    lo_b, hi_b = b.extent()
    return a.device == b.device and lo_a < hi_b and lo_b < hi_a


_cupy = None  # (cupy.ndarray, cupy.cuda.runtime.getDevice) once CuPy is imported


def _cupy_empty(obj, shape, dtype, order):
    global _cupy
    if _cupy is None:
        import cupy

        _cupy = (cupy.ndarray, cupy.cuda.runtime.getDevice)
    ndarray, current_device = _cupy
    # Entering the array's device costs two runtime calls: only when it is not
    # current. The array's memory names its device without making a Device object,
    # and the ndarray constructor is what cupy.empty calls, less a Python frame.
    if obj.data.device_id == current_device():
        return ndarray(shape, dtype, order=order)
    with obj.device:
        return ndarray(shape, dtype, order=order)


def _numba_empty(obj, shape, dtype, order):
    from numba import cuda

    return cuda.device_array(shape, dtype=dtype, order=order)


def _torch_empty(obj, shape, dtype, order):
    import torch

    torch_dtype = getattr(torch, np.dtype(dtype).name)
    if order == "F":
        return torch.empty(tuple(reversed(shape)), dtype=torch_dtype, device=obj.device).T
    return torch.empty(shape, dtype=torch_dtype, device=obj.device)


_ALLOCATORS = {"cupy": _cupy_empty, "numba": _numba_empty, "torch": _torch_empty}
# Where an array that an allocator above made starts, without building its
# __cuda_array_interface__ (CuPy builds the dict anew on each access).
_POINTERS = {"cupy": lambda array: array.data.ptr}
_allocator_of_type = {}  # type -> (allocator, pointer of its arrays); (None, None): none known


def _interface_pointer(array):
    return array.__cuda_array_interface__["data"][0]


def allocators_for(kind):
    """(allocate(obj, shape, dtype, order), pointer(array)) for device arrays of
    type `kind`: a new array like obj, and where such a new array starts; (None,
    None) when the package cannot allocate like `kind`."""
    try:
        return _allocator_of_type[kind]
    except KeyError:
        library = kind.__module__.split(".")[0]
        allocate = _ALLOCATORS.get(library)
        found = _allocator_of_type[kind] = (allocate, _POINTERS.get(library, _interface_pointer) if allocate else None)
        return found


def result_proto(*operands):
    """The operand whose kind a new result takes: the first in device memory (the
    result lives there), else the first read through DLPack (the result goes back
    to its library), else None (numpy)."""
    found = None
    for op in operands:
        if op is not None:
            if op.device:
                return op
            if found is None and op.source is not None:
                found = op
    return found


def empty_like(proto, shape, dtype, order, where, ctx=None):
    """A new array for a result: numpy, or of the same device-array library as
    `proto` (CuPy, Numba, PyTorch), or for a DLPack operand a gpk.Array where it
    lives, for the caller to take in its own library (Context hands it over).
    Other device-array types must pass out=."""
    if proto is not None and proto.source is not None:
        device = ctx.device if proto.device else None
        return _dlpack.Array(shape, dtype, order, device, ctx._dlpack_stream() if proto.device else None)
    if proto is None or not proto.device:
        return np.empty(shape, dtype=dtype, order=order)
    obj = proto.obj
    kind = type(obj)
    allocate = allocators_for(kind)[0]
    if allocate is None:
        raise invalid(
            f"out: cannot allocate a result like a {kind.__module__}.{kind.__name__}; "
            "pass out= (an array with __cuda_array_interface__)",
            where,
        )
    return allocate(obj, shape, dtype, order)


def copy_into(dst, src, where, ctx):
    """dst's elements = src's (operands of one shape). Host memory through numpy;
    device arrays of one library through that library, as the caller would; device
    memory read through DLPack (or gpk's own) as matrices, on the context's stream,
    ordered before the call that follows."""
    if dst.device != src.device:
        raise invalid("C and out must both be host arrays or both device arrays (or pass out=C)", where)
    if not dst.device:
        dst.obj[...] = src.obj
        return
    if dst.source is None and src.source is None:
        dst.obj[...] = src.obj
        return
    d, s = dst.storages(), src.storages()
    common = [o for o in (ROW, COL) if o in d and o in s]
    if not common:
        raise invalid(
            f"C and out are device arrays without a common layout (unit stride along one axis; strides "
            f"{src.strides} and {dst.strides}): pass out=C, or C and out in one order",
            where,
        )
    orient = common[0]
    rows, cols = src.shape if orient == ROW else src.shape[::-1]
    item = src.dtype.itemsize
    _cuda.copy_matrix(ctx.device, ctx._dlpack_stream(), dst.ptr, d[orient] * item, src.ptr, s[orient] * item,
                      cols * item, rows)
