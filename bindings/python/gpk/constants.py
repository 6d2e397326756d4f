"""The constants of include/gpk/gpk.h, named without their GPK_ prefix.

The values are part of the C ABI and never change, so they are spelled out here
rather than read from the library: importing them must not need libgpk.
"""

import enum


class Status(enum.IntEnum):
    """gpk_status: what every failing call returns (see GpkError.status)."""

    SUCCESS = 0
    ERROR_INVALID_ARGUMENT = 1
    ERROR_INVALID_HANDLE = 2
    ERROR_NO_DEVICE = 3
    ERROR_OUT_OF_MEMORY = 4
    ERROR_NOT_SUPPORTED = 5
    ERROR_CUDA = 6
    ERROR_CUBLAS = 7
    ERROR_CURAND = 8
    ERROR_VALIDATION = 9
    ERROR_INTERNAL = 99


SUCCESS = Status.SUCCESS
ERROR_INVALID_ARGUMENT = Status.ERROR_INVALID_ARGUMENT
ERROR_INVALID_HANDLE = Status.ERROR_INVALID_HANDLE
ERROR_NO_DEVICE = Status.ERROR_NO_DEVICE
ERROR_OUT_OF_MEMORY = Status.ERROR_OUT_OF_MEMORY
ERROR_NOT_SUPPORTED = Status.ERROR_NOT_SUPPORTED
ERROR_CUDA = Status.ERROR_CUDA
ERROR_CUBLAS = Status.ERROR_CUBLAS
ERROR_CURAND = Status.ERROR_CURAND
ERROR_VALIDATION = Status.ERROR_VALIDATION
ERROR_INTERNAL = Status.ERROR_INTERNAL

BACKEND_AUTO = 0
BACKEND_CUDA = 1
BACKEND_HOST = 2

F32 = 0
F64 = 1
I32 = 2
I64 = 3
F16 = 4
BF16 = 5
# OCP FP8 (1-byte elements): the inputs of gemm_ex and gemm_blockscaled only.
F8E4M3 = 6
F8E5M2 = 7

ROW_MAJOR = 101
COL_MAJOR = 102

NO_TRANS = 111
TRANS = 112

SUM = 0
MIN = 1
MAX = 2

OP_GEMM = 0
OP_REDUCE = 1
OP_TRANSPOSE = 2
OP_PI = 3
OP_GEMM_BATCHED = 4

MATH_DEFAULT = 0
MATH_TF32 = 1

STAGE_COPY_IN = 0
STAGE_COMPUTE = 1
STAGE_COPY_OUT = 2

BACKENDS = {"auto": BACKEND_AUTO, "cuda": BACKEND_CUDA, "host": BACKEND_HOST}
BACKEND_NAMES = {BACKEND_CUDA: "cuda", BACKEND_HOST: "host"}
REDUCE_OPS = {"sum": SUM, "min": MIN, "max": MAX}
MATH_MODES = {"default": MATH_DEFAULT, "tf32": MATH_TF32}
MATH_MODE_NAMES = {MATH_DEFAULT: "default", MATH_TF32: "tf32"}
OPS = {"gemm": OP_GEMM, "reduce": OP_REDUCE, "transpose": OP_TRANSPOSE, "pi": OP_PI, "gemm_batched": OP_GEMM_BATCHED}
STAGE_NAMES = {STAGE_COPY_IN: "copy_in", STAGE_COMPUTE: "compute", STAGE_COPY_OUT: "copy_out"}

# The lookup tables above serve the binding; the C constants are the public names.
__all__ = ["Status"] + [
    name for name, value in list(globals().items()) if name.isupper() and isinstance(value, int)
]
