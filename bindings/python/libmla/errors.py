"""The exception hierarchy: one MlaError subclass per mla_status category.

Every failing libmla call raises the subclass of its status, carrying .status (int),
.status_name ("MLA_ERROR_NO_KERNEL") and .message (mla_last_error(), read on the same thread
straight after the call). Bad Python-side input (wrong dtype, shape, device) raises TypeError /
ValueError before any C call instead.
"""


class MlaError(RuntimeError):
    """A libmla call failed: .status (int), .status_name, .message."""

    status_code = None  # the mla_status of the subclass

    def __init__(self, status, message, status_name=None):
        self.status = int(status)
        if status_name is None:
            status_name = _NAMES.get(self.status, "MLA_UNKNOWN_STATUS")
        self.status_name = status_name
        self.message = message
        super().__init__(f"{self.status_name}: {message}")


class MlaInvalidArgument(MlaError, ValueError):
    """MLA_ERROR_INVALID_ARGUMENT: null pointer, bad value, sizes that disagree."""
    status_code = 1


class MlaUnsupported(MlaError):
    """MLA_ERROR_UNSUPPORTED_SHAPE: a valid request that no route of this arch can run."""
    status_code = 2


class MlaNoKernel(MlaError):
    """MLA_ERROR_NO_KERNEL: the arch's table has no row for the request."""
    status_code = 3


class MlaArchNotBuilt(MlaError):
    """MLA_ERROR_ARCH_NOT_BUILT: unknown arch, or no table for the arch under the root."""
    status_code = 4


class MlaRuntimeUnavailable(MlaError):
    """MLA_ERROR_RUNTIME_UNAVAILABLE: libcuda.so.1 / libamdhip64.so not found or unusable."""
    status_code = 5


class MlaNoDevice(MlaRuntimeUnavailable):
    """MLA_ERROR_NO_DEVICE: the runtime loaded but reports no usable device."""
    status_code = 6


class MlaCodeObjectError(MlaError):
    """MLA_ERROR_CODE_OBJECT: code object file missing, unreadable or rejected."""
    status_code = 7


class MlaLaunchError(MlaError):
    """MLA_ERROR_LAUNCH: the runtime refused a launch, copy or allocation."""
    status_code = 8


class MlaBufferTooSmall(MlaError):
    """MLA_ERROR_BUFFER_TOO_SMALL: a caller buffer is smaller than required."""
    status_code = 9


class MlaInternalError(MlaError):
    """MLA_ERROR_INTERNAL: a bug in libmla; the message says where."""
    status_code = 10


class MlaTableError(MlaError):
    """MLA_ERROR_TABLE: a code-object CSV table is malformed."""
    status_code = 11


_CLASSES = {c.status_code: c for c in (
    MlaInvalidArgument, MlaUnsupported, MlaNoKernel, MlaArchNotBuilt, MlaRuntimeUnavailable,
    MlaNoDevice, MlaCodeObjectError, MlaLaunchError, MlaBufferTooSmall, MlaInternalError,
    MlaTableError)}

_NAMES = {0: "MLA_SUCCESS", 1: "MLA_ERROR_INVALID_ARGUMENT", 2: "MLA_ERROR_UNSUPPORTED_SHAPE",
          3: "MLA_ERROR_NO_KERNEL", 4: "MLA_ERROR_ARCH_NOT_BUILT",
          5: "MLA_ERROR_RUNTIME_UNAVAILABLE", 6: "MLA_ERROR_NO_DEVICE", 7: "MLA_ERROR_CODE_OBJECT",
          8: "MLA_ERROR_LAUNCH", 9: "MLA_ERROR_BUFFER_TOO_SMALL", 10: "MLA_ERROR_INTERNAL",
          11: "MLA_ERROR_TABLE"}


def error_class(status):
    """The MlaError subclass of a status (MlaError itself for an unknown one)."""
    return _CLASSES.get(int(status), MlaError)


def make_error(status, message, status_name=None):
    return error_class(status)(status, message, status_name)
