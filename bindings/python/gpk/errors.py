"""Exceptions: one class per gpk_status, all deriving from GpkError."""

from .constants import Status


class GpkError(Exception):
    """A libgpk call failed, or the binding refused its arguments before calling.

    Attributes:
        status:   the gpk.Status the call returned (or would have returned).
        message:  gpk_last_error() for a failed call -- it names the parameter, its
                  value and the rule it broke -- or the binding's own message.
        function: the C function or Python method that failed.
    """

    def __init__(self, status, message, function=None):
        self.status = Status(status)
        self.message = message
        self.function = function
        super().__init__(status, message, function)

    def __str__(self):
        where = f"{self.function}: " if self.function else ""
        return f"{where}{self.message} [{self.status.name}]"


# Where a Python built-in exception means the same thing, the class derives from it
# too, so that code written against numpy's errors keeps working.
class InvalidArgumentError(GpkError, ValueError):
    pass


class InvalidHandleError(GpkError):
    pass


class NoDeviceError(GpkError):
    pass


class OutOfMemoryError(GpkError, MemoryError):
    pass


class NotSupportedError(GpkError):
    pass


class CudaError(GpkError):
    pass


class CublasError(GpkError):
    pass


class CurandError(GpkError):
    pass


class ValidationError(GpkError):
    pass


class InternalError(GpkError):
    pass


class LibraryNotFoundError(OSError):
    """libgpk could not be loaded; the message lists every place that was tried."""


_BY_STATUS = {
    Status.ERROR_INVALID_ARGUMENT: InvalidArgumentError,
    Status.ERROR_INVALID_HANDLE: InvalidHandleError,
    Status.ERROR_NO_DEVICE: NoDeviceError,
    Status.ERROR_OUT_OF_MEMORY: OutOfMemoryError,
    Status.ERROR_NOT_SUPPORTED: NotSupportedError,
    Status.ERROR_CUDA: CudaError,
    Status.ERROR_CUBLAS: CublasError,
    Status.ERROR_CURAND: CurandError,
    Status.ERROR_VALIDATION: ValidationError,
    Status.ERROR_INTERNAL: InternalError,
}


def error_for(status, message, function=None):
    """The exception to raise for `status` (GpkError itself for unknown values)."""
    try:
        status = Status(status)
    except ValueError:
        return GpkError(Status.ERROR_INTERNAL, f"unknown status {status}: {message}", function)
    return _BY_STATUS.get(status, GpkError)(status, message, function)
