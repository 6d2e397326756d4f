"""Finding and loading libgpk, and the ctypes prototype of every C function.

The library is loaded on first use rather than at import, so that `import gpk`
works (constants, docs, error classes) on a machine where libgpk is not installed
and the error appears where a context is made, with the list of places tried.

Where it looks, in order:
  1. $GPK_LIBRARY, the full path of the shared library; when set, nothing else is
     tried, so a test run cannot silently pick up another copy;
  2. the package's own folder, where a wheel (`pip install .`) puts it;
  3. the path `meson install` recorded in gpk/_config.py, and the lib folders of
     the prefixes above the package;
  4. the loader's search by soname (LD_LIBRARY_PATH, rpath, ld.so.cache);
  5. ctypes.util.find_library('gpk');
  6. the lib folders of sys.prefix and /usr/local.
"""

import ctypes
import ctypes.util
import glob
import os
import sys
import sysconfig
import threading

from .errors import LibraryNotFoundError


class PiResultStruct(ctypes.Structure):
    _fields_ = [
        ("estimate", ctypes.c_double),
        ("std_error", ctypes.c_double),
        ("samples", ctypes.c_uint64),
        ("hits", ctypes.c_uint64),
    ]


class StageEventStruct(ctypes.Structure):
    _fields_ = [
        ("kind", ctypes.c_int32),
        ("stream", ctypes.c_int32),
        ("chunk", ctypes.c_int64),
        ("bytes", ctypes.c_uint64),
        ("start_ms", ctypes.c_double),
        ("end_ms", ctypes.c_double),
    ]


_ctx = ctypes.c_void_p
_int = ctypes.c_int
_i64 = ctypes.c_int64
_u64 = ctypes.c_uint64
_ptr = ctypes.c_void_p
_status = ctypes.c_int  # gpk_status is a C enum: int-sized on every ABI we target

# name: (restype, argtypes), in the order of include/gpk/gpk.h.
PROTOTYPES = {
    "gpk_version": (None, [ctypes.POINTER(_int)] * 3),
    "gpk_status_string": (ctypes.c_char_p, [_status]),
    "gpk_last_error": (ctypes.c_char_p, [_ctx]),
    "gpk_create": (_status, [ctypes.POINTER(_ctx), _int, _int]),
    "gpk_destroy": (_status, [_ctx]),
    "gpk_get_backend": (_status, [_ctx, ctypes.POINTER(_int)]),
    "gpk_set_stream": (_status, [_ctx, _ptr]),
    "gpk_synchronize": (_status, [_ctx]),
    "gpk_variant_count": (_status, [_ctx, _int, ctypes.POINTER(_int)]),
    "gpk_variant_name": (ctypes.c_char_p, [_ctx, _int, _int]),
    "gpk_set_variant": (_status, [_ctx, _int, ctypes.c_char_p]),
    "gpk_load_tuning": (_status, [_ctx, ctypes.c_char_p]),
    "gpk_tuning_name": (ctypes.c_char_p, [_ctx]),
    "gpk_last_variant": (ctypes.c_char_p, [_ctx, _int]),
    "gpk_set_validation": (_status, [_ctx, _int]),
    "gpk_set_math_mode": (_status, [_ctx, _int]),
    "gpk_get_math_mode": (_status, [_ctx, ctypes.POINTER(_int)]),
    "gpk_set_staging": (_status, [_ctx, _int, ctypes.c_size_t, ctypes.c_size_t]),
    "gpk_stage_trace": (_status, [_ctx, ctypes.POINTER(StageEventStruct), _i64, ctypes.POINTER(_i64)]),
    "gpk_gemm": (
        _status,
        [_ctx, _int, _int, _int, _int, _i64, _i64, _i64, ctypes.c_double,
         _ptr, _i64, _ptr, _i64, ctypes.c_double, _ptr, _i64],
    ),
    "gpk_gemm_strided_batched": (
        _status,
        [_ctx, _int, _int, _int, _int, _i64, _i64, _i64, ctypes.c_double,
         _ptr, _i64, _i64, _ptr, _i64, _i64, ctypes.c_double, _ptr, _i64, _i64, _i64],
    ),
    "gpk_gemm_ex": (
        _status,
        [_ctx, _int, _int, _int, _i64, _i64, _i64, ctypes.c_double,
         _int, _ptr, _i64, _int, _ptr, _i64, ctypes.c_double, _int, _ptr, _i64],
    ),
    "gpk_gemm_blockscaled": (
        _status,
        [_ctx, _int, _int, _int, _i64, _i64, _i64, ctypes.c_double,
         _int, _ptr, _i64, _ptr, _int, _ptr, _i64, _ptr, ctypes.c_double, _int, _ptr, _i64],
    ),
    "gpk_reduce": (_status, [_ctx, _int, _int, _ptr, _i64, _ptr]),
    "gpk_transpose": (_status, [_ctx, _int, _int, _i64, _i64, _ptr, _i64, _ptr, _i64]),
    "gpk_pi": (_status, [_ctx, _u64, _u64, ctypes.POINTER(PiResultStruct)]),
    "gpk_pi_range": (_status, [_ctx, _u64, _u64, _u64, ctypes.POINTER(PiResultStruct)]),
}

_SONAMES = {
    "linux": ["libgpk.so.0", "libgpk.so"],
    "darwin": ["libgpk.0.dylib", "libgpk.dylib"],
    "win32": ["gpk-0.dll", "libgpk-0.dll", "gpk.dll", "libgpk.dll"],
}
_PATTERNS = {
    "linux": ["libgpk.so.*", "libgpk.so"],
    "darwin": ["libgpk.*dylib"],
    "win32": ["*gpk*.dll"],
}

_lock = threading.Lock()
_lib = None
_path = None


def _platform():
    for name in ("linux", "darwin", "win32"):
        if sys.platform.startswith(name):
            return name
    return "linux"


def _files_in(folder):
    found = []
    for pattern in _PATTERNS[_platform()]:
        found += sorted(glob.glob(os.path.join(folder, pattern)))
    return found


def _lib_folders(prefix):
    """lib, lib64 and the multiarch lib/<triplet> folders of an install prefix."""
    folders = [os.path.join(prefix, "lib"), os.path.join(prefix, "lib64")]
    multiarch = sysconfig.get_config_var("MULTIARCH")
    if multiarch:
        folders.append(os.path.join(prefix, "lib", multiarch))
    return folders


def _candidates():
    """(what to hand to the loader, where it came from), best first."""
    here = os.path.dirname(os.path.abspath(__file__))
    for path in _files_in(here):
        yield path, "the package folder"
    try:
        from ._config import LIBRARY  # written by meson; empty in a wheel

        if LIBRARY:
            yield LIBRARY, "the path recorded by meson install"
    except ImportError:
        pass
    # <prefix>/lib/python3.X/site-packages/gpk: the prefix is 3 or 4 folders up.
    folder = here
    for _ in range(5):
        folder = os.path.dirname(folder)
        for lib in _lib_folders(folder):
            for path in _files_in(lib):
                yield path, "a prefix above the package"

    for soname in _SONAMES[_platform()]:
        yield soname, "the loader's search path"
    found = ctypes.util.find_library("gpk")
    if found:
        yield found, "ctypes.util.find_library"
    for prefix in (sys.prefix, "/usr/local"):
        for lib in _lib_folders(prefix):
            for path in _files_in(lib):
                yield path, "a standard prefix"


def _declare(lib):
    for name, (restype, argtypes) in PROTOTYPES.items():
        try:
            function = getattr(lib, name)
        except AttributeError:
            raise LibraryNotFoundError(f"{lib._name} has no symbol {name}: it is not libgpk, or too old")
        function.restype = restype
        function.argtypes = argtypes
    return lib


def _open():
    explicit = os.environ.get("GPK_LIBRARY")
    if explicit:
        try:
            return _declare(ctypes.CDLL(explicit)), explicit
        except OSError as e:
            raise LibraryNotFoundError(f"GPK_LIBRARY={explicit} could not be loaded: {e}") from e

    tried = []
    seen = set()
    for path, origin in _candidates():
        if path in seen:
            continue
        seen.add(path)
        if os.path.isabs(path) and not os.path.exists(path):
            tried.append(f"{path} ({origin}): no such file")
            continue
        try:
            return _declare(ctypes.CDLL(path)), path
        except OSError as e:
            # A library that exists but does not load (a missing libcudart, say)
            # is worth reporting even if a later candidate loads.
            tried.append(f"{path} ({origin}): {e}")
    raise LibraryNotFoundError(
        "libgpk was not found; set GPK_LIBRARY to the full path of the shared library, "
        "or install libgpk where the loader finds it. Tried:\n  " + "\n  ".join(tried)
    )


def lib():
    """The loaded libgpk (ctypes.CDLL) with every prototype declared."""
    global _lib, _path
    if _lib is None:
        with _lock:
            if _lib is None:
                _lib_loaded, _path = _open()
                _bind(_lib_loaded)
                _lib = _lib_loaded
    return _lib


# The per-operation calls go through the compiled module _calls where it was built
# (it converts arguments in C: a small product's call costs less than through
# ctypes), else through ctypes. Both take the same arguments, the context as an int
# or a ctypes pointer, and return the status. GPK_PYTHON_CTYPES=1 keeps to ctypes.
try:
    from . import _calls as _compiled
except ImportError:  # pragma: no cover - built without Python's headers
    _compiled = None
if os.environ.get("GPK_PYTHON_CTYPES", "") not in ("", "0"):
    _compiled = None

_OPERATIONS = ("gpk_gemm", "gpk_gemm_strided_batched", "gpk_reduce", "gpk_transpose", "gpk_gemm_ex",
               "gpk_gemm_blockscaled")


class Calls:
    """gemm, gemm_strided_batched, reduce, transpose, gemm_ex and gemm_blockscaled
    of the loaded libgpk."""

    __slots__ = ("gemm", "gemm_strided_batched", "reduce", "transpose", "gemm_ex", "gemm_blockscaled", "compiled")

    def __init__(self, functions, compiled):
        (self.gemm, self.gemm_strided_batched, self.reduce, self.transpose, self.gemm_ex,
         self.gemm_blockscaled) = functions
        self.compiled = compiled


_calls = None


def _bind(library):
    global _calls
    if _compiled is not None:
        _compiled.bind(*(ctypes.cast(getattr(library, name), ctypes.c_void_p).value for name in _OPERATIONS))
        functions = (_compiled.gemm, _compiled.gemm_strided_batched, _compiled.reduce, _compiled.transpose,
                     _compiled.gemm_ex, _compiled.gemm_blockscaled)
    else:
        functions = tuple(getattr(library, name) for name in _OPERATIONS)
    _calls = Calls(functions, _compiled is not None)


def calls():
    """The per-operation calls (Calls) of the loaded libgpk."""
    if _calls is None:
        lib()
    return _calls


def path():
    """The file or name libgpk was loaded from."""
    lib()
    return _path
