"""Context: one libgpk context, and the four operations on arrays."""

import ctypes
import math
import operator
import os
from typing import NamedTuple

import numpy as np

from . import _arrays, _cuda, _dlpack, _library
from ._arrays import COL, ROW, invalid
from .constants import (
    BACKEND_NAMES,
    BACKENDS,
    BF16,
    COL_MAJOR,
    F8E4M3,
    F8E5M2,
    F16,
    F32,
    F64,
    I32,
    I64,
    MATH_MODE_NAMES,
    MATH_MODES,
    NO_TRANS,
    OPS,
    REDUCE_OPS,
    ROW_MAJOR,
    STAGE_NAMES,
    TRANS,
    Status,
)
from .errors import InvalidArgumentError, InvalidHandleError, error_for


class PiResult(NamedTuple):
    """What Context.pi() and Context.pi_range() report (gpk_pi_result)."""

    estimate: float
    std_error: float
    samples: int
    hits: int


# The ctypes type of gpk_reduce's result for each dtype: float for F32 and F64,
# a 64-bit int for the integer types.
# F16 and BF16 accumulate in F32 and give a float, as F32 does.
_RESULT_TYPES = {
    F32: ctypes.c_float,
    F64: ctypes.c_double,
    I32: ctypes.c_int64,
    I64: ctypes.c_int64,
    F16: ctypes.c_float,
    BF16: ctypes.c_float,
}
# The names and values reduce() takes for op, looked up before the general _choice.
_REDUCE_CODES = dict(REDUCE_OPS)
_REDUCE_CODES.update({code: code for code in REDUCE_OPS.values()})


def check(status, handle, function):
    """Raises the GpkError for a failed status, with gpk_last_error()'s text."""
    if status != 0:
        text = _library.lib().gpk_last_error(handle)
        raise error_for(status, text.decode("utf-8", "replace") if text else "", function)


def _integer(value, name, where):
    """An int from an int-like value; 1e6 is accepted, 1.5 is not, and neither is
    True or False (ints to Python, but never a count or an index)."""
    if type(value) is int:
        return value
    if isinstance(value, bool):
        raise invalid(f"{name} must be an integer, not {value!r}", where)
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    try:
        return operator.index(value)
    except TypeError:
        raise invalid(f"{name} must be an integer, not {value!r}", where) from None


def _scalar(value, name, where):
    """A float from a real number: Python's, numpy's or a 0-d array's. A str is not
    a number (float("2") would parse it), and neither is a bool: alpha=True is far
    likelier a flag passed in the wrong place than a scale of 1."""
    if type(value) is float or type(value) is int:
        return float(value)
    kind = getattr(getattr(value, "dtype", None), "kind", None)
    if (
        isinstance(value, (bool, np.bool_, str, bytes, bytearray))
        or kind == "b"
        or getattr(value, "ndim", 0) != 0
        or not hasattr(type(value), "__float__")
    ):
        raise invalid(f"{name} must be a real number, not {value!r}", where)
    try:
        return float(value)
    except (TypeError, ValueError) as e:  # complex values, for one
        raise invalid(f"{name} must be a real number, not {value!r}: {e}", where) from None


def _flag(value, name, where):
    """Whether to transpose: a bool (numpy's too) or gpk.TRANS / gpk.NO_TRANS. Other
    values are refused rather than read as truthy: "no" or NO_TRANS (a nonzero int)
    would otherwise transpose."""
    if value is True or value is False:
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    if not isinstance(value, bool) and isinstance(value, int) and value in (TRANS, NO_TRANS):
        return value == TRANS
    raise invalid(f"{name} ({value!r}) must be True, False, gpk.TRANS ({TRANS}) or gpk.NO_TRANS ({NO_TRANS})", where)


def _choice(value, table, name, where):
    """The C constant for a name in `table` (case-insensitive) or for one of its values."""
    if isinstance(value, str):
        code = table.get(value.lower())
        if code is not None:
            return code
    elif not isinstance(value, bool):
        try:
            if operator.index(value) in table.values():
                return operator.index(value)
        except TypeError:
            pass
    names = ", ".join(repr(k) for k in table)
    raise invalid(f"{name} ({value!r}) must be one of {names}", where)


# What gemm_ex's dtype arguments (a_dtype, b_dtype, out_dtype) take besides the
# gpk.* constants and numpy dtypes: the C names without GPK_, numpy's names and ml_dtypes'.
_DTYPE_NAMES = {
    "f32": F32, "float32": F32, "f64": F64, "float64": F64, "f16": F16, "float16": F16, "bf16": BF16,
    "bfloat16": BF16, "f8e4m3": F8E4M3, "e4m3": F8E4M3, "float8_e4m3fn": F8E4M3, "f8e5m2": F8E5M2, "e5m2": F8E5M2,
    "float8_e5m2": F8E5M2,
}
_FP8_AND_16BIT = (F8E4M3, F8E5M2, F16, BF16)


def _dtype_arg(value, name, where):
    """None, or the GPK dtype a dtype argument names: a gpk constant (gpk.F8E4M3), a
    name ('float8_e4m3fn', 'e4m3', 'bf16', ...) or a numpy dtype (ml_dtypes.float8_e5m2,
    np.float32). Which combinations a call takes is the library's rule."""
    if value is None:
        return None
    code = None
    if isinstance(value, str):
        code = _DTYPE_NAMES.get(value.lower())
    elif isinstance(value, int) and not isinstance(value, bool):
        code = value if value in _arrays.CODE_NAMES else None
    elif not isinstance(value, bool):
        try:
            code = _arrays.DTYPES.get(np.dtype(value))
        except (TypeError, ValueError):
            code = None
    if code is None:
        raise invalid(
            f"{name} ({value!r}) must be a gpk dtype (gpk.F8E4M3, gpk.F8E5M2, gpk.F16, gpk.BF16, gpk.F32, gpk.F64), "
            "a name ('float8_e4m3fn', 'float8_e5m2', 'float16', 'bfloat16', 'float32', 'float64') or a numpy dtype",
            where,
        )
    return code


def _result_order(*operands):
    """'F' when every operand is column-major only, so that a Fortran-ordered
    computation stays Fortran-ordered; 'C' otherwise."""
    present = [op for op in operands if op is not None]
    column_only = all(COL in op.storages() and ROW not in op.storages() for op in present)
    return "F" if present and column_only else "C"


def _same_view(a, b):
    return (a.device, a.ptr, a.shape, a.strides) == (b.device, b.ptr, b.shape, b.strides)


def _matrix_in(op, orient, trans, name, where):
    """(operand, ld, GPK_*TRANS) to read `op` in the `orient` layout: in place when
    possible -- a matrix stored the other way round is its own transpose in that
    layout, so the trans flag flips -- else through a host copy."""
    storages = op.storages()
    if orient in storages:
        return op, storages[orient], TRANS if trans else NO_TRANS
    other = COL if orient == ROW else ROW
    if other in storages:
        return op, storages[other], NO_TRANS if trans else TRANS
    if op.device:
        raise invalid(
            f"{name} is a device array with no unit stride (strides {op.strides}); "
            "pass a contiguous array or a slice of one",
            where,
        )
    op = _arrays.as_host_copy(op, "C" if orient == ROW else "F")
    return op, op.storages()[orient], TRANS if trans else NO_TRANS


def _stack_strides(op):
    """(ld, batch stride) in elements of a 2-D or 3-D operand read as row-major
    matrices in place, or None when its strides cannot be described that way."""
    item = op.dtype.itemsize
    if op.ptr % item:
        return None
    rows, cols = op.shape[-2:]
    if op.size == 0:
        # No element is accessed: the smallest ld and stride the C API takes
        # (numpy gives empty arrays strides that need not describe any layout).
        return max(1, cols), 0
    s_row, s_col = op.strides[-2:]
    s_batch = op.strides[0] if len(op.shape) == 3 else 0
    if cols > 1 and s_col != item:
        return None
    ld = s_row // item if rows > 1 else max(1, cols)
    if rows > 1 and (s_row % item or ld < max(1, cols)):
        return None
    if s_batch % item or s_batch < 0:
        return None
    return ld, s_batch // item


def _stack_in(op, batch, name, where):
    """(operand, ld, stride) for an input stack; one matrix shared (stride 0) when
    its batch extent is 1. Host stacks no ld describes are copied, C-ordered."""
    found = _stack_strides(op)
    if found is None:
        if op.device:
            raise invalid(
                f"{name} is a device array whose matrices have no unit stride along rows (strides {op.strides}); "
                "pass a C-contiguous array or a slice of one",
                where,
            )
        op = _arrays.as_host_copy(op, "C")
        found = _stack_strides(op)
    ld, stride = found
    return op, ld, 0 if batch == 1 else stride


def _stack_out(op, batch, where):
    found = _stack_strides(op)
    if found is None:
        raise invalid(f"out needs row-major matrices with a unit stride along rows, but its strides are {op.strides}",
                      where)
    ld, stride = found
    if batch > 1 and stride == 0 and op.size > 0:
        raise invalid("out has a batch stride of 0: its matrices would overlap one another", where)
    return ld, stride


def _describe(storages):
    return " or ".join(sorted({ROW: "row-major", COL: "column-major"}[s] for s in storages)) or "strided"


class Context:
    """A libgpk context: a backend, a device, a stream, the chosen variants.

    Context(backend="auto", device=0): backend is "auto" (the GPU when one is
    usable, the host otherwise), "cuda" or "host" (or a gpk.BACKEND_* value).
    Close it with close() or use it as a context manager; one thread uses a
    context at a time.

    Arrays are numpy arrays (anything numpy.asarray takes, for inputs), objects
    with __cuda_array_interface__ (CuPy, Numba, PyTorch) or DLPack tensors (any
    object with __dlpack__: PyTorch, JAX, CuPy, TensorFlow...), passed by pointer:
      - dtypes float32, float64, int32, int64 (gemm: floats only), float16 and
        ml_dtypes' bfloat16; for gemm_ex and gemm_blockscaled (and gemm and matmul
        handed them) FP8, ml_dtypes' float8_e4m3fn and float8_e5m2, or their bits
        in uint8 arrays (CuPy has no FP8 dtype) with a_dtype / b_dtype;
      - a 2-D array with a unit stride along one axis is read in place, whether
        C-ordered (row-major), Fortran-ordered (column-major) or a slice such as
        a[:, :5] (its leading dimension comes from its strides); other host arrays
        are copied first, other device arrays are an error;
      - results go to out= when given (in place, never reallocated); otherwise a
        new array is made like the inputs: a numpy array, or for device inputs an
        array of the same library (CuPy, Numba, PyTorch; other device-array types
        must pass out=), or for DLPack inputs an array of theirs, through their
        library's from_dlpack (a gpk.Array, itself a DLPack producer, where gpk
        knows none).
    With every array on the device, gemm and transpose are asynchronous on the
    context's stream (set_stream; the default stream otherwise), like the C API;
    the array's own __cuda_array_interface__ stream is not waited for. DLPack
    tensors follow the standard's stream rule instead: the producer orders its
    pending work before the context's stream, and a consumer of a new result
    waits for gpk's work on it. A DLPack tensor must be in host memory or on the
    context's GPU; one read-only or exported as a copy cannot be an output.
    """

    def __init__(self, backend="auto", device=0):
        where = "Context"
        self._handle = None
        code = _choice(backend, BACKENDS, "backend", where)
        device = _integer(device, "device", where)
        # ctypes would wrap values outside a C int silently; the library checks >= 0.
        if not -(2**31) <= device < 2**31:
            raise invalid(f"device ({device}) must be in [0, 2^31)", where)
        lib = _library.lib()
        handle = ctypes.c_void_p()
        check(lib.gpk_create(ctypes.byref(handle), code, device), None, "gpk_create")
        self._lib = lib
        self._handle = handle
        self._hv = handle.value  # the handle as an int, for the per-operation calls
        self._calls = _library.calls()
        self._stream = None
        self._stream_int = None  # the stream as an int; None: the default stream
        # DLPack tensors of the device that asynchronous work still uses: (event
        # after that work, what keeps them alive), oldest first. A producer frees a
        # tensor when its capsule goes; were the capsule dropped when the call
        # returns, its memory could be reused while gpk's kernels still read it.
        self._pending = []
        resolved = ctypes.c_int()
        check(lib.gpk_get_backend(handle, ctypes.byref(resolved)), handle, "gpk_get_backend")
        self._backend = BACKEND_NAMES[resolved.value]
        self._device = device

    # ---------------------------------------------------------------- lifetime --

    def close(self):
        """Waits for the context's work, then frees it. Closing twice is harmless."""
        handle, self._handle = self._handle, None
        if handle is not None:
            try:
                check(self._lib.gpk_destroy(handle), None, "gpk_destroy")
            finally:
                self._pending = []  # gpk_destroy waited for the work
                if getattr(self, "_backend", None) == "cuda":
                    _cuda.trim(self._device)  # the idle memory of results (gpk.Array)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass  # interpreter shutdown, or an error nobody is left to see

    def __repr__(self):
        if self._handle is None:
            return "<gpk.Context closed>"
        return f"<gpk.Context backend={self._backend!r} device={self._device}>"

    def _h(self):
        if self._handle is None:
            raise InvalidHandleError(Status.ERROR_INVALID_HANDLE, "the context is closed", "Context")
        return self._handle

    @property
    def closed(self):
        return self._handle is None

    @property
    def backend(self):
        """'cuda' or 'host': the backend the context resolved to (never 'auto')."""
        return self._backend

    @property
    def device(self):
        return self._device

    @property
    def handle(self):
        """The gpk_context * as an integer, for passing to other C code."""
        return self._h().value

    # ---------------------------------------------------------------- settings --

    def set_stream(self, stream):
        """Issues later work on a CUDA stream: None (the default stream), a
        cudaStream_t as an int, or an object with .ptr (CuPy) or .cuda_stream
        (PyTorch). The stream object is kept alive while it is in use."""
        if stream is None:
            pointer = None
        elif hasattr(stream, "ptr"):
            pointer = stream.ptr
        elif hasattr(stream, "cuda_stream"):
            pointer = stream.cuda_stream
        else:
            pointer = _integer(stream, "stream", "Context.set_stream")
        h = self._h()
        check(self._lib.gpk_set_stream(h, pointer or None), h, "gpk_set_stream")
        self._stream = stream
        self._stream_int = pointer or None

    def _dlpack_stream(self):
        """The context's stream as DLPack numbers streams: 1 for the legacy default
        stream (libgpk's NULL stream), else the cudaStream_t."""
        return self._stream_int or _cuda.LEGACY_STREAM

    def synchronize(self):
        """Waits for the context's work; raises if that work failed."""
        h = self._h()
        check(self._lib.gpk_synchronize(h), h, "gpk_synchronize")
        self._pending = []

    def variants(self, op):
        """The names of op's variants on this backend, in ladder order; op is
        'gemm', 'reduce', 'transpose', 'pi' or 'gemm_batched' (or a gpk.OP_* value)."""
        code = _choice(op, OPS, "op", "Context.variants")
        h = self._h()
        count = ctypes.c_int()
        check(self._lib.gpk_variant_count(h, code, ctypes.byref(count)), h, "gpk_variant_count")
        return [self._lib.gpk_variant_name(h, code, i).decode() for i in range(count.value)]

    def set_variant(self, op, name=None):
        """Chooses the variant of op for later calls; None or 'auto' restores the default."""
        code = _choice(op, OPS, "op", "Context.set_variant")
        where = "Context.set_variant"
        encoded = None
        if name is not None:
            if not isinstance(name, str):
                raise invalid(f"name must be a str or None, not {name!r}", where)
            # C reads the name up to its first NUL: "host\0garbage" would pass as "host".
            if "\0" in name:
                raise invalid(f"name ({name!r}) contains a NUL character", where)
            try:
                encoded = name.encode("utf-8")
            except UnicodeEncodeError as e:
                raise invalid(f"name ({name!r}) cannot be encoded as UTF-8: {e.reason}", where) from None
        h = self._h()
        check(self._lib.gpk_set_variant(h, code, encoded), h, "gpk_set_variant")

    def last_variant(self, op):
        """The rung that op's last successful call on this context ran ('cublas',
        'wgmma_ws', ...; 'host' on the host backend), None before any such call
        (gpk_last_variant): what "auto" chose, for one."""
        code = _choice(op, OPS, "op", "Context.last_variant")
        name = self._lib.gpk_last_variant(self._h(), code)
        return None if name is None else name.decode()

    def load_tuning(self, path=None):
        """Makes "auto" choose from the tuning table in the file at path (a str or
        os.PathLike, as `gpk-bench --tune FILE` writes it on a GPU of this kind), or
        with None from the table built into libgpk for this GPU (gpk_load_tuning). A
        table that cannot be used raises, naming the file and line; the context then
        keeps its table."""
        where = "Context.load_tuning"
        encoded = None
        if path is not None:
            try:
                encoded = os.fsencode(path)
            except TypeError:
                raise invalid(f"path must be a str, bytes, os.PathLike or None, not {path!r}", where) from None
            if b"\0" in encoded:
                raise invalid(f"path ({path!r}) contains a NUL character", where)
        h = self._h()
        check(self._lib.gpk_load_tuning(h, encoded), h, "gpk_load_tuning")

    def tuning_name(self):
        """The table "auto" chooses from (gpk_tuning_name): 'built-in: NVIDIA H200',
        the path of a loaded file, or 'none: the vendor library and each ladder's
        default'."""
        return os.fsdecode(self._lib.gpk_tuning_name(self._h()))

    def set_validation(self, enabled=True):
        """Recomputes every later call with the vendor library (CUDA backend only)."""
        h = self._h()
        check(self._lib.gpk_set_validation(h, 1 if enabled else 0), h, "gpk_set_validation")

    @property
    def math_mode(self):
        """The arithmetic of F32 gemm (gpk_get_math_mode): 'default' (exact FP32) or
        'tf32' (A and B may be rounded to TF32 for the tensor cores). Settable, with
        a name or gpk.MATH_DEFAULT / gpk.MATH_TF32; sticky."""
        h = self._h()
        mode = ctypes.c_int()
        check(self._lib.gpk_get_math_mode(h, ctypes.byref(mode)), h, "gpk_get_math_mode")
        return MATH_MODE_NAMES.get(mode.value, mode.value)

    @math_mode.setter
    def math_mode(self, mode):
        code = _choice(mode, MATH_MODES, "mode", "Context.math_mode")
        h = self._h()
        check(self._lib.gpk_set_math_mode(h, code), h, "gpk_set_math_mode")

    def set_staging(self, streams, chunk_bytes=0, device_bytes=0):
        """Shapes the staging pipeline that moves host arrays through the GPU
        (gpk_set_staging): `streams` streams (1 to 16; 1 overlaps nothing),
        chunks of about `chunk_bytes` of host data (0: the library's choice) and
        at most `device_bytes` of device memory for the pipeline (0: no cap but
        the GPU's free memory; a cap below the operands' size makes gemm run out
        of core). Sticky. The host backend keeps the settings and ignores them."""
        where = "Context.set_staging"
        streams = _integer(streams, "streams", where)
        chunk_bytes = _integer(chunk_bytes, "chunk_bytes", where)
        device_bytes = _integer(device_bytes, "device_bytes", where)
        # ctypes would wrap these silently; the library checks the range of streams.
        if not -(2**31) <= streams < 2**31:
            raise invalid(f"streams ({streams}) must be in 1..16", where)
        size_limit = 2 ** (8 * ctypes.sizeof(ctypes.c_size_t))
        for name, value in (("chunk_bytes", chunk_bytes), ("device_bytes", device_bytes)):
            if not 0 <= value < size_limit:
                raise invalid(f"{name} ({value}) must be in [0, 2^{8 * ctypes.sizeof(ctypes.c_size_t)})", where)
        h = self._h()
        check(self._lib.gpk_set_staging(h, streams, chunk_bytes, device_bytes), h, "gpk_set_staging")

    def stage_trace(self):
        """The steps of the last call that moved host arrays through the staging
        pipeline (gpk_stage_trace), in the order they were issued: a list of dicts
        with "kind" (gpk.STAGE_COPY_IN, STAGE_COMPUTE or STAGE_COPY_OUT), "stage"
        ("copy_in", "compute" or "copy_out"), "stream", "chunk", "bytes" (moved by
        a copy; 0 for a kernel), "start_ms" and "end_ms" (GPU times from the
        call's start). Empty on the host backend and before any such call."""
        h = self._h()
        count = ctypes.c_int64()
        check(self._lib.gpk_stage_trace(h, None, 0, ctypes.byref(count)), h, "gpk_stage_trace")
        if count.value <= 0:
            return []
        events = (_library.StageEventStruct * count.value)()
        capacity = count.value
        check(self._lib.gpk_stage_trace(h, events, capacity, ctypes.byref(count)), h, "gpk_stage_trace")
        return [
            {
                "kind": e.kind,
                "stage": STAGE_NAMES.get(e.kind, "unknown"),
                "stream": e.stream,
                "chunk": e.chunk,
                "bytes": e.bytes,
                "start_ms": e.start_ms,
                "end_ms": e.end_ms,
            }
            for e in events[: min(capacity, count.value)]
        ]

    # -------------------------------------------------------------- operations --

    def gemm(self, A, B, C=None, alpha=1.0, beta=0.0, transa=False, transb=False, out=None, out_dtype=None,
             a_dtype=None, b_dtype=None):
        """alpha * op(A) @ op(B) + beta * C, with op(X) = X.T when transX.

        A and B are 2-D float32, float64, float16 or bfloat16 (ml_dtypes) arrays
        of one dtype; 16-bit products accumulate in F32 and each element of the
        result is rounded once. C, when given, is
        the m x n addend; it is read only when beta != 0 and is never modified
        unless it is also out (out=C updates C in place, as BLAS does). The result
        goes to out when given, else to a new array, which is returned.
        alpha and beta are real numbers (not str, not bool); transa and transb
        are bools or gpk.TRANS / gpk.NO_TRANS.

        FP8 operands (ml_dtypes.float8_e4m3fn / float8_e5m2), or any of out_dtype,
        a_dtype and b_dtype, make it gemm_ex (see there): a float32 result by default.
        """
        where = "Context.gemm"
        h = self._handle
        if h is None:
            self._h()  # raises
        if out_dtype is not None or a_dtype is not None or b_dtype is not None:
            return self._gemm_mixed(where, A, B, C, alpha, beta, transa, transb, out, out_dtype, a_dtype, b_dtype)
        if C is None:
            result = self._gemm_short(A, B, alpha, beta, transa, transb, out)
            if result is not None:
                return result
        alpha, beta = _scalar(alpha, "alpha", where), _scalar(beta, "beta", where)
        transa, transb = _flag(transa, "transa", where), _flag(transb, "transb", where)
        a = _arrays.as_input(A, "A", where, self)
        b = _arrays.as_input(B, "B", where, self)
        if len(a.shape) != 2:
            _arrays.require_ndim(a, 2, "A", where)
        if len(b.shape) != 2:
            _arrays.require_ndim(b, 2, "B", where)
        if a.code in _arrays.FP8_CODES or b.code in _arrays.FP8_CODES:
            return self._gemm_mixed(where, A, B, C, alpha, beta, transa, transb, out, None, None, None, a=a, b=b)
        dtype = a.dtype
        if b.dtype != dtype:
            raise invalid(f"B has dtype {b.dtype} but A has dtype {dtype}; they must match", where)
        m, k = a.shape[::-1] if transa else a.shape
        k_b, n = b.shape[::-1] if transb else b.shape
        if k_b != k:
            raise invalid(f"B: op(B) has {k_b} rows but op(A) has {k} columns; the two must agree (k)", where)

        c = None
        if C is not None:
            c = _arrays.as_input(C, "C", where, self)
            self._check_result(c, (m, n), dtype, "C", where)
        elif beta != 0:
            raise invalid(f"beta ({beta}) is nonzero but C is None: there is nothing to add", where)

        caller_out = out is not None
        proto = None
        if caller_out:
            o = _arrays.as_output(out, "out", where, self)
            self._check_result(o, (m, n), dtype, "out", where)
        else:
            proto = c if c is not None else _arrays.result_proto(a, b)
            out = _arrays.empty_like(proto, (m, n), dtype, _result_order(*((c,) if c is not None else (a, b))),
                                     where, self)
            o = _arrays.as_output(out, "out", where, self)
        storages = o.storages()
        if not storages:
            raise invalid(f"out needs a unit stride along one axis, but its strides are {o.strides}", where)
        orient = ROW if ROW in storages else COL

        a, lda, transa_code = _matrix_in(a, orient, transa, "A", where)
        b, ldb, transb_code = _matrix_in(b, orient, transb, "B", where)

        # The C API adds beta * C in place, so C's values must be in the array the
        # library writes. A caller's out is written by the library alone, after its
        # checks: were C copied into it first, a failing call would leave it
        # changed. So C goes into an array of our own -- out itself when out is
        # ours, else a scratch copy that replaces out's contents on success.
        target = None
        if c is None or beta == 0:
            beta = 0.0  # C is not read: nothing to copy, and NaN in out cannot leak
        elif not _same_view(c, o):
            for x, name in ((a, "A"), (b, "B")):
                if _arrays.overlaps(o, x):
                    raise invalid(f"out overlaps {name}: the output must not alias an input", where)
            if c.device != o.device:
                raise invalid("C and out must both be host arrays or both device arrays (or pass out=C)", where)
            if caller_out:
                try:
                    target = _arrays.empty_like(o, (m, n), dtype, "C" if orient == ROW else "F", where, self)
                except InvalidArgumentError:
                    raise invalid(
                        f"C and out are separate arrays of a type gpk cannot allocate scratch like "
                        f"({type(out).__module__}.{type(out).__name__}): pass out=C to update C in place",
                        where,
                    ) from None
                t = _arrays.as_output(target, "out", where, self)
                _arrays.copy_into(t, c, where, self)
                ldc = t.storages()[orient]
                ptr_c = t.ptr
            else:
                _arrays.copy_into(o, c, where, self)

        if target is None:
            ldc = storages[orient]
            ptr_c = o.ptr
        status = self._calls.gemm(
            self._hv, a.code, ROW_MAJOR if orient == ROW else COL_MAJOR, transa_code, transb_code,
            m, n, k, alpha, a.ptr, lda, b.ptr, ldb, beta, ptr_c, ldc,
        )
        if status:
            check(status, h, "gpk_gemm")
        if target is not None:
            _arrays.copy_into(o, t, where, self)
        if a.source is None and b.source is None and o.source is None and (c is None or c.source is None):
            return out
        return self._handed_out(out, proto, (a, b, c, o), where)

    def gemm_ex(self, A, B, C=None, alpha=1.0, beta=0.0, transa=False, transb=False, out=None, out_dtype=None,
                a_dtype=None, b_dtype=None):
        """gpk_gemm_ex: alpha * op(A) @ op(B) + beta * C with a dtype per operand.

        The combinations libgpk takes: A and B each FP8 -- ml_dtypes.float8_e4m3fn
        (gpk.F8E4M3) or float8_e5m2 (gpk.F8E5M2), any mix -- with a float32,
        float16 or bfloat16 result; A and B both float16 or both bfloat16 with a
        float32 result; all three of one dtype (exactly gemm). Others raise
        InvalidArgumentError naming the operand or out_dtype.

        The result's dtype (the C API's c_dtype) is out_dtype when given, else
        out's, else C's, else float32 for FP8 and 16-bit inputs (every product
        and sum is kept in F32 by the contract, and every array library has
        float32) and A's dtype otherwise. Pass out_dtype=ml_dtypes.bfloat16 (or
        gpk.BF16) for the halved output traffic the tensor-core paths are timed
        with. Dtype arguments take gpk constants, names ('float8_e4m3fn', 'e4m3',
        'bf16', ...) or numpy dtypes.

        Arrays whose library has no FP8 or bfloat16 dtype (CuPy) pass the bits:
        uint8 (or int8) arrays with a_dtype / b_dtype naming their FP8 dtype, and
        for a bfloat16 result a uint16 out with out_dtype=gpk.BF16. A numpy or
        DLPack float8 array needs no dtype argument (one given must agree).

        Accuracy (the contract): products exact, sums in F32 with hardware partial
        sums of at most 128 products at reduced precision, so |C - exact| <=
        2^-9 * sum_k |alpha a b| + 2^-24 |beta c|, plus one rounding of C to its
        dtype. alpha and beta are applied in F32; a per-tensor FP8 scale goes into
        alpha. Everything else -- layouts, transposes, C, out, DLPack and device
        arrays, asynchrony -- as gemm.
        """
        where = "Context.gemm_ex"
        self._h()
        return self._gemm_mixed(where, A, B, C, alpha, beta, transa, transb, out, out_dtype, a_dtype, b_dtype)

    def gemm_blockscaled(self, A, B, scale_a, scale_b, C=None, alpha=1.0, beta=0.0, transa=False, transb=False,
                         out=None, out_dtype=None, a_dtype=None, b_dtype=None):
        """gpk_gemm_blockscaled: FP8 A and B with DeepSeek-V3's fine-grained scales.

        With kb = ceil(k / 128) and nb = ceil(n / 128):
          C[i, j] = alpha * sum_q scale_a[i, q] * scale_b[j // 128, q]
                            * sum_{p in [128q, 128q + 128)} op(A)[i, p] op(B)[p, j] + beta * C[i, j]
        scale_a is m x kb (one scale per row of op(A) and block of 128 along k),
        scale_b is nb x kb (one per 128 x 128 block of op(B)), float32, in the
        column-major order the C API reads (scale_a[i, q] at q * m + i, as
        DeepGEMM keeps them): Fortran-ordered 2-D arrays, or 1-D arrays of m * kb
        and nb * kb elements in that order. Host arrays of another order or float
        dtype are copied to it; device arrays must already be so. The scales live
        where A and B do (host or the same GPU). Everything else as gemm_ex.
        """
        where = "Context.gemm_blockscaled"
        self._h()
        return self._gemm_mixed(where, A, B, C, alpha, beta, transa, transb, out, out_dtype, a_dtype, b_dtype,
                                scales=(scale_a, scale_b))

    def _gemm_mixed(self, where, A, B, C, alpha, beta, transa, transb, out, out_dtype, a_dtype, b_dtype,
                    scales=None, a=None, b=None):
        """gemm_ex or (with scales) gemm_blockscaled; `a` and `b` are the operands of
        A and B where the caller has read them already."""
        h = self._h()
        alpha, beta = _scalar(alpha, "alpha", where), _scalar(beta, "beta", where)
        transa, transb = _flag(transa, "transa", where), _flag(transb, "transb", where)
        a_bits = _dtype_arg(a_dtype, "a_dtype", where)
        b_bits = _dtype_arg(b_dtype, "b_dtype", where)
        c_bits = _dtype_arg(out_dtype, "out_dtype", where)
        if a is None:
            a = _arrays.as_input(A, "A", where, self, a_bits)
        elif a_bits is not None:
            _arrays.as_bits(a, a_bits, "A", where, "a_dtype")
        if b is None:
            b = _arrays.as_input(B, "B", where, self, b_bits)
        elif b_bits is not None:
            _arrays.as_bits(b, b_bits, "B", where, "b_dtype")
        _arrays.require_ndim(a, 2, "A", where)
        _arrays.require_ndim(b, 2, "B", where)
        m, k = a.shape[::-1] if transa else a.shape
        k_b, n = b.shape[::-1] if transb else b.shape
        if k_b != k:
            raise invalid(f"B: op(B) has {k_b} rows but op(A) has {k} columns; the two must agree (k)", where)

        c = None
        if C is not None:
            c = _arrays.as_input(C, "C", where, self, c_bits)
        elif beta != 0:
            raise invalid(f"beta ({beta}) is nonzero but C is None: there is nothing to add", where)
        caller_out = out is not None
        o = _arrays.as_output(out, "out", where, self, c_bits) if caller_out else None
        if c_bits is None:
            if o is not None:
                c_bits = o.code
            elif c is not None:
                c_bits = c.code
            else:
                c_bits = F32 if a.code in _FP8_AND_16BIT else a.code
        if c is not None:
            if c.code != c_bits:
                raise invalid(f"C has dtype {c.dtype} but the result is {_arrays.dtype_label(c_bits)}; "
                              "C and the result (out, out_dtype) must be one dtype", where)
            self._check_shape(c, (m, n), "C", where)

        proto = None
        if caller_out:
            self._check_shape(o, (m, n), "out", where)
        else:
            dtype = _arrays.NUMPY_DTYPES.get(c_bits)
            if dtype is None:
                raise invalid(f"out_dtype is {_arrays.dtype_label(c_bits)}, which numpy has no dtype for here "
                              "(install ml_dtypes), or pass out=", where)
            proto = c if c is not None else _arrays.result_proto(a, b)
            order = _result_order(*((c,) if c is not None else (a, b)))
            try:
                out = _arrays.empty_like(proto, (m, n), dtype, order, where, self)
            except InvalidArgumentError:
                raise
            except (TypeError, ValueError, AttributeError) as e:
                kind = type(proto.obj)
                raise invalid(
                    f"out_dtype: a {dtype} result cannot be made like a {kind.__module__}.{kind.__name__} ({e}); "
                    f"pass out= (for bfloat16, an array of 16-bit integers, with out_dtype=gpk.BF16)",
                    where,
                ) from None
            o = _arrays.as_output(out, "out", where, self, c_bits)
        storages = o.storages()
        if not storages:
            raise invalid(f"out needs a unit stride along one axis, but its strides are {o.strides}", where)
        orient = ROW if ROW in storages else COL
        a, lda, transa_code = _matrix_in(a, orient, transa, "A", where)
        b, ldb, transb_code = _matrix_in(b, orient, transb, "B", where)
        sa = sb = None
        if scales is not None:
            kb = -(-k // 128)
            sa = self._scales_in(scales[0], m, kb, "scale_a", "op(A)'s rows", a.device, where)
            sb = self._scales_in(scales[1], -(-n // 128), kb, "scale_b", "op(B)'s column blocks of 128", a.device,
                                 where)

        # C's values go into an array of ours before the call, as in gemm: out itself
        # when it is ours, else a scratch copy that replaces out's contents on success.
        target = None
        if c is None or beta == 0:
            beta = 0.0
        elif not _same_view(c, o):
            for x, name in ((a, "A"), (b, "B")):
                if _arrays.overlaps(o, x):
                    raise invalid(f"out overlaps {name}: the output must not alias an input", where)
            if c.device != o.device:
                raise invalid("C and out must both be host arrays or both device arrays (or pass out=C)", where)
            if caller_out:
                try:
                    target = _arrays.empty_like(o, (m, n), o.dtype, "C" if orient == ROW else "F", where, self)
                except InvalidArgumentError:
                    raise invalid(
                        f"C and out are separate arrays of a type gpk cannot allocate scratch like "
                        f"({type(out).__module__}.{type(out).__name__}): pass out=C to update C in place",
                        where,
                    ) from None
                t = _arrays.as_output(target, "out", where, self, c_bits)
                _arrays.copy_into(t, c, where, self)
            else:
                _arrays.copy_into(o, c, where, self)
        ptr_c, ldc = (t.ptr, t.storages()[orient]) if target is not None else (o.ptr, storages[orient])

        layout = ROW_MAJOR if orient == ROW else COL_MAJOR
        if sa is None:
            status = self._calls.gemm_ex(
                self._hv, layout, transa_code, transb_code, m, n, k, alpha,
                a.code, a.ptr, lda, b.code, b.ptr, ldb, beta, c_bits, ptr_c, ldc,
            )
            if status:
                check(status, h, "gpk_gemm_ex")
        else:
            status = self._calls.gemm_blockscaled(
                self._hv, layout, transa_code, transb_code, m, n, k, alpha,
                a.code, a.ptr, lda, sa.ptr, b.code, b.ptr, ldb, sb.ptr, beta, c_bits, ptr_c, ldc,
            )
            if status:
                check(status, h, "gpk_gemm_blockscaled")
        if target is not None:
            _arrays.copy_into(o, t, where, self)
        operands = (a, b, c, o, sa, sb)
        if all(op is None or op.source is None for op in operands):
            return out
        return self._handed_out(out, proto, operands, where)

    def _scales_in(self, S, rows, kb, name, what, device, where):
        """The operand of a scale array: rows x kb float32 with element [i, q] at
        q * rows + i (column-major), or that many elements in a row; host arrays of
        another order or float dtype become such a copy."""
        if S is None:
            raise invalid(f"{name} is None: gemm_blockscaled needs the scales ({rows} x {kb} float32)", where)
        s = _arrays.as_input(S, name, where, self)
        if s.device != device:
            raise invalid(
                f"{name} is in {'device' if s.device else 'host'} memory but A is in "
                f"{'device' if device else 'host'} memory: the scales live where A and B do",
                where,
            )
        want = f"{rows} x {kb} ({what} x ceil(k / 128) blocks along k), or 1-D with {rows * kb} elements"
        if len(s.shape) == 2:
            if tuple(s.shape) != (rows, kb):
                raise invalid(f"{name} has shape {tuple(s.shape)}; it must be {want}", where)
            packed = s.size == 0 or s.storages().get(COL) == max(1, rows)
        elif len(s.shape) == 1:
            if s.shape[0] != rows * kb:
                raise invalid(f"{name} has shape {tuple(s.shape)}; it must be {want}", where)
            packed = s.size <= 1 or s.strides[0] == s.dtype.itemsize
        else:
            raise invalid(f"{name} has shape {tuple(s.shape)}; it must be {want}", where)
        if s.dtype == np.float32 and packed:
            return s
        if s.device:
            if s.dtype != np.float32:
                raise invalid(f"{name} has dtype {s.dtype}; the scales are float32", where)
            raise invalid(f"{name} (strides {s.strides}) must be column-major and packed: element [i, q] at "
                          f"q * {rows} + i, as a Fortran-ordered array holds it", where)
        if s.dtype.kind != "f" and s.code not in (F16, BF16):
            raise invalid(f"{name} has dtype {s.dtype}; the scales are float32 (other floats are converted)", where)
        copy = _arrays._from_numpy(np.asarray(s.obj).astype(np.float32, order="F"))
        copy.source = s.source
        return copy

    def _gemm_short(self, A, B, alpha, beta, transa, transb, out):
        """The commonest call in fewer steps: A, B (and out, when given) C-ordered
        device arrays of one dtype, no C. Every check the general path makes for
        such a call is made here too; any other call, and any doubt, gives None,
        and the general path takes it (and reports what is wrong with it)."""
        if not (type(alpha) is float or type(alpha) is int) or not (type(beta) is float or type(beta) is int):
            return None
        if beta != 0 or type(transa) is not bool or type(transb) is not bool:
            return None
        try:
            va = _arrays.device_view(A)
            vb = _arrays.device_view(B)
            if va is None or vb is None:
                return None
            (rows_a, cols_a), typestr, c_a, pa = va
            (rows_b, cols_b), typestr_b, c_b, pb = vb
            # C order: ld is a row's length.
            if not (c_a and c_b) or typestr_b != typestr:
                return None
            dtype, code = _arrays._typestr(typestr)
        except Exception:  # noqa: BLE001  (the general path names what is wrong)
            return None
        if code is None or type(pa) is not int or type(pb) is not int:
            return None
        m, k = (cols_a, rows_a) if transa else (rows_a, cols_a)
        k_b, n = (cols_b, rows_b) if transb else (rows_b, cols_b)
        item = dtype.itemsize
        if k_b != k or not (m > 0 and n > 0 and k > 0) or pa % item or pb % item:
            return None
        if out is None:
            allocate, pointer = _arrays.allocators_for(type(A))
            if allocate is None:
                return None
            result = allocate(A, (m, n), dtype, "C")
            po = pointer(result)
        else:
            result = out
            try:
                io = out.__cuda_array_interface__
                if io.get("strides") is not None or io.get("mask") is not None or io["typestr"] != typestr:
                    return None
                po, readonly = io["data"]
                if readonly or type(po) is not int or po % item or tuple(io["shape"]) != (m, n):
                    return None
            except Exception:  # noqa: BLE001  (the general path names what is wrong)
                return None
        # out overlapping A or B is the library's to refuse (C must not overlap them),
        # before it writes anything.
        status = self._calls.gemm(
            self._hv, code, ROW_MAJOR, TRANS if transa else NO_TRANS, TRANS if transb else NO_TRANS,
            m, n, k, float(alpha), pa, cols_a, pb, cols_b, 0.0, po, n,
        )
        if status:
            check(status, self._handle, "gpk_gemm")
        return result

    def matmul(self, A, B, out=None, out_dtype=None, a_dtype=None, b_dtype=None):
        """A @ B over stacks of matrices, with numpy.matmul's conventions: A is
        (batch, m, k) or (m, k), B is (batch, k, n) or (k, n), the result
        (batch, m, n) -- (m, n) when both are 2-D. A 2-D operand, or one whose
        batch extent is 1, is one matrix shared by every product (stride 0);
        otherwise the batch extents must agree. One gpk_gemm_strided_batched call
        (ladder GPK_OP_GEMM_BATCHED, gpk.OPS["gemm_batched"]).

        Each matrix must have a unit stride along its last axis (rows in place,
        any row and batch strides the C API can describe); other host arrays are
        copied first, other device arrays are an error. The result goes to out
        when given -- (batch, m, n), row-major matrices, written only by the
        library, after its checks, so a failed call leaves it as it was -- else to
        a new array like the inputs (numpy or the device arrays' library).

        FP8 operands (ml_dtypes.float8_e4m3fn / float8_e5m2, any mix), or any of
        out_dtype, a_dtype and b_dtype, go through gpk_gemm_ex, one call per product,
        with its dtype rules (see gemm_ex): the result is float32 unless out_dtype
        (or out) says otherwise, e.g. ml_dtypes.bfloat16; float16 or bfloat16 stacks
        give a float32 result with out_dtype=np.float32. The products' arguments are
        the same, so an argument libgpk refuses is refused at the first product,
        before anything is written.
        """
        where = "Context.matmul"
        h = self._handle
        if h is None:
            self._h()  # raises
        a_bits = _dtype_arg(a_dtype, "a_dtype", where)
        b_bits = _dtype_arg(b_dtype, "b_dtype", where)
        c_bits = _dtype_arg(out_dtype, "out_dtype", where)
        a = _arrays.as_input(A, "A", where, self, a_bits)
        b = _arrays.as_input(B, "B", where, self, b_bits)
        for op, name in ((a, "A"), (b, "B")):
            if len(op.shape) not in (2, 3):
                raise invalid(f"{name} must be 2-D (one matrix) or 3-D (a stack), but its shape is {op.shape}", where)
        mixed = (c_bits is not None or a_bits is not None or b_bits is not None or a.code in _arrays.FP8_CODES
                 or b.code in _arrays.FP8_CODES)
        dtype = a.dtype
        if mixed:
            if c_bits is None:
                if out is not None:
                    c_bits = _arrays.as_output(out, "out", where, self).code
                else:
                    c_bits = F32 if a.code in _FP8_AND_16BIT else a.code
            dtype = _arrays.NUMPY_DTYPES.get(c_bits) if out is None else None
            if out is None and dtype is None:
                raise invalid(f"out_dtype is {_arrays.dtype_label(c_bits)}, which numpy has no dtype for here "
                              "(install ml_dtypes), or pass out=", where)
        elif b.dtype != dtype:
            raise invalid(f"B has dtype {b.dtype} but A has dtype {dtype}; they must match", where)
        m, k = a.shape[-2:]
        k_b, n = b.shape[-2:]
        if k_b != k:
            raise invalid(f"B: its matrices have {k_b} rows but A's have {k} columns; the two must agree (k)", where)
        # numpy's broadcasting: a 2-D operand is a stack of one; extents that
        # differ must have one of them 1, and the result takes the other -- 0
        # included, so (0, m, k) @ (k, n) is (0, m, n), not one product of an empty
        # stack (max() of the extents would make it 1).
        batch_a = a.shape[0] if len(a.shape) == 3 else 1
        batch_b = b.shape[0] if len(b.shape) == 3 else 1
        if batch_a == batch_b or batch_b == 1:
            batch = batch_a
        elif batch_a == 1:
            batch = batch_b
        else:
            raise invalid(
                f"A holds {batch_a} matrices and B {batch_b}: the batch extents must agree, or one be 1 (shared)",
                where,
            )
        stacked = len(a.shape) == 3 or len(b.shape) == 3
        shape = (batch, m, n) if stacked else (m, n)

        a, lda, stride_a = _stack_in(a, batch_a, "A", where)
        b, ldb, stride_b = _stack_in(b, batch_b, "B", where)
        proto = None
        if out is None:
            proto = _arrays.result_proto(a, b)
            out = _arrays.empty_like(proto, shape, dtype, "C", where, self)
        o = _arrays.as_output(out, "out", where, self, c_bits if mixed else None)
        if tuple(o.shape) != shape:
            raise invalid(f"out has shape {tuple(o.shape)}, expected {shape}", where)
        if not mixed and o.dtype != dtype:
            raise invalid(f"out has dtype {o.dtype}, expected {dtype}", where)
        ldc, stride_c = _stack_out(o, batch, where)
        if batch == 0 or m == 0 or n == 0:
            # The result has no element: nothing to compute, and the operands'
            # pointers (an empty stack's, whatever its strides say) are never
            # handed to the library. (k == 0 does call it: the products are zeros.)
            return out if proto is None or proto.source is None else _dlpack.deliver(out, proto.source, where)
        if mixed:
            # gpk_gemm_ex has no batched form: a call per product, at the products'
            # addresses (strides in elements of each operand's own size).
            sizes = (a.dtype.itemsize, b.dtype.itemsize, o.dtype.itemsize)
            for i in range(batch):
                status = self._calls.gemm_ex(
                    self._hv, ROW_MAJOR, NO_TRANS, NO_TRANS, m, n, k, 1.0,
                    a.code, a.ptr + i * stride_a * sizes[0], lda, b.code, b.ptr + i * stride_b * sizes[1], ldb,
                    0.0, c_bits, o.ptr + i * stride_c * sizes[2], ldc,
                )
                if status:
                    check(status, h, "gpk_gemm_ex")
        else:
            status = self._calls.gemm_strided_batched(
                self._hv, a.code, ROW_MAJOR, NO_TRANS, NO_TRANS, m, n, k, 1.0,
                a.ptr, lda, stride_a, b.ptr, ldb, stride_b, 0.0, o.ptr, ldc, stride_c, batch,
            )
            if status:
                check(status, h, "gpk_gemm_strided_batched")
        if a.source is None and b.source is None and o.source is None:
            return out
        return self._handed_out(out, proto, (a, b, o), where)

    def reduce(self, x, op="sum"):
        """The sum, min or max (op 'sum', 'min', 'max' or a gpk.SUM/MIN/MAX value)
        of all elements of x, as a Python float (float dtypes) or int (integer
        dtypes, accumulated in 64 bits). Deterministic from run to run."""
        where = "Context.reduce"
        h = self._handle
        if h is None:
            self._h()  # raises
        # bool is excluded: True would pass as 1 (MIN).
        op_code = _REDUCE_CODES.get(op) if type(op) is str or type(op) is int else None
        if op_code is None:
            op_code = _choice(op, REDUCE_OPS, "op", where)
        v = _arrays.as_input(x, "x", where, self)
        if not v.is_contiguous():
            if v.device:
                raise invalid(f"x is a device array that is not contiguous (strides {v.strides})", where)
            v = _arrays.as_host_copy(v, "C")
        code = v.code
        if code is None:
            code = _arrays.gpk_dtype(v.dtype, "x", where)  # raises, naming the dtype
        if code not in _RESULT_TYPES:  # FP8: an input of gemm_ex alone
            raise _arrays.unsupported(f"x has dtype {v.dtype}; reduce takes float32, float64, int32, int64, float16 "
                                      "and bfloat16", where)
        result = _RESULT_TYPES[code]()
        status = self._calls.reduce(self._hv, code, op_code, v.ptr, v.size, ctypes.addressof(result))
        if status:
            check(status, h, "gpk_reduce")
        return result.value

    def sum(self, x):
        return self.reduce(x, "sum")

    def min(self, x):
        return self.reduce(x, "min")

    def max(self, x):
        return self.reduce(x, "max")

    def transpose(self, A, out=None):
        """A.T, out of place, for any of the four dtypes. out, when given, must be
        A.shape[::-1] with A's dtype; a new array otherwise, in A's order."""
        where = "Context.transpose"
        h = self._h()
        a = _arrays.as_input(A, "A", where, self)
        _arrays.require_ndim(a, 2, "A", where)
        rows, cols = a.shape
        code = _arrays.gpk_dtype(a.dtype, "A", where)
        a_storages = a.storages()
        if not a_storages:
            if a.device:
                raise invalid(f"A is a device array with no unit stride (strides {a.strides})", where)
            a = _arrays.as_host_copy(a, "C")
            a_storages = a.storages()

        proto = None
        if out is None:
            order = "C" if ROW in a_storages else "F"
            proto = _arrays.result_proto(a)
            out = _arrays.empty_like(proto, (cols, rows), a.dtype, order, where, self)
        o = _arrays.as_output(out, "out", where, self)
        self._check_result(o, (cols, rows), a.dtype, "out", where)
        o_storages = o.storages()
        if not o_storages:
            raise invalid(f"out needs a unit stride along one axis, but its strides are {o.strides}", where)

        common = [s for s in (ROW, COL) if s in a_storages and s in o_storages]
        if common:
            orient = common[0]
        else:
            # Between layouts the transpose is a plain strided copy, which the C
            # API does not do: bring A to out's layout first.
            orient = ROW if ROW in o_storages else COL
            if a.device:
                raise invalid(
                    f"out is {_describe(o_storages)} but A is {_describe(a_storages)}; "
                    "for device arrays out must be in A's order",
                    where,
                )
            a = _arrays.as_host_copy(a, "C" if orient == ROW else "F")
            a_storages = a.storages()

        check(
            self._calls.transpose(
                self._hv, code, ROW_MAJOR if orient == ROW else COL_MAJOR, rows, cols,
                a.ptr, a_storages[orient], o.ptr, o_storages[orient],
            ),
            h,
            "gpk_transpose",
        )
        if a.source is None and o.source is None:
            return out
        return self._handed_out(out, proto, (a, o), where)

    def pi(self, samples, seed=0):
        """Monte Carlo pi from `samples` points of a Philox generator keyed by
        `seed`: the same (samples, seed) gives the same hits on every backend and
        GPU (the vendor and lecture variants, families of their own,
        excepted). Returns a PiResult."""
        where = "Context.pi"
        h = self._h()
        samples = _integer(samples, "samples", where)
        seed = _integer(seed, "seed", where)
        # ctypes would wrap these silently; the library checks the rest of the range.
        if samples < 0:
            raise invalid(f"samples ({samples}) must be >= 1", where)
        if samples >= 2**64:
            raise invalid(f"samples ({samples}) must be <= 2^63", where)
        if not 0 <= seed < 2**64:
            raise invalid(f"seed ({seed}) must be in [0, 2^64)", where)
        result = _library.PiResultStruct()
        check(self._lib.gpk_pi(h, samples, seed, ctypes.byref(result)), h, "gpk_pi")
        return PiResult(result.estimate, result.std_error, int(result.samples), int(result.hits))

    def pi_range(self, first_sample, count, seed=0):
        """The samples [first_sample, first_sample + count) of the sequence that
        pi(samples, seed) draws: ranges that split [0, samples) have hits that
        add up exactly to pi()'s, so processes (one per GPU, with mpi4py say)
        can each count their own range and sum the hits. Returns a PiResult of
        the range alone; count 0 gives hits 0 and NaN estimate and std_error."""
        where = "Context.pi_range"
        h = self._h()
        first_sample = _integer(first_sample, "first_sample", where)
        count = _integer(count, "count", where)
        seed = _integer(seed, "seed", where)
        # ctypes would wrap these silently; the library checks that the range ends
        # within 64-bit indices.
        if not 0 <= first_sample < 2**64:
            raise invalid(f"first_sample ({first_sample}) must be in [0, 2^64)", where)
        if not 0 <= count < 2**64:
            raise invalid(f"count ({count}) must be in [0, 2^64)", where)
        if not 0 <= seed < 2**64:
            raise invalid(f"seed ({seed}) must be in [0, 2^64)", where)
        result = _library.PiResultStruct()
        check(self._lib.gpk_pi_range(h, first_sample, count, seed, ctypes.byref(result)), h, "gpk_pi_range")
        return PiResult(result.estimate, result.std_error, int(result.samples), int(result.hits))

    # ----------------------------------------------------------------- helpers --

    def _handed_out(self, out, proto, operands, where):
        """After a successful call with DLPack operands. Device ones stay alive until
        the work on them is done (an event after it); a new result gpk allocated
        (a gpk.Array) gets the same event, which a consumer's stream waits for,
        and goes back to the caller's library through its from_dlpack."""
        fresh = proto is not None and proto.source is not None and type(out) is _dlpack.Array
        held = [op.obj for op in operands if op is not None and op.device and op.source is not None]
        if held or (fresh and out._host is None):
            pending = self._pending
            while pending and pending[0][0].done():
                pending.pop(0)
            stream = self._dlpack_stream()
            event = out.written_on(stream) if fresh and out._host is None else _cuda.Event(self._device)
            if not (fresh and out._host is None):
                event.record(stream)
            if held:
                pending.append((event, held))
        return _dlpack.deliver(out, proto.source, where) if fresh else out

    @staticmethod
    def _check_shape(op, shape, name, where):
        if len(op.shape) != 2 or tuple(op.shape) != tuple(shape):
            raise invalid(f"{name} has shape {tuple(op.shape)} but the result is {shape[0]} x {shape[1]}", where)

    @staticmethod
    def _check_result(op, shape, dtype, name, where):
        if len(op.shape) != 2 or tuple(op.shape) != tuple(shape):
            raise invalid(f"{name} has shape {tuple(op.shape)} but the result is {shape[0]} x {shape[1]}", where)
        if op.dtype != dtype:
            raise invalid(f"{name} has dtype {op.dtype} but the inputs have dtype {dtype}", where)
