"""Loading libmla.so with ctypes and declaring the prototypes of the C API (include/mla_c_api.h).

Every function used from Python is declared once in _PROTOTYPES (argtypes and restype), so that
pointers and 64-bit values are never truncated to C int. Failing calls raise MlaError carrying the
status and the library's thread-local message (mla_last_error), read straight after the call.

The library is found, in order: the path given to load(), $MLA_LIBRARY, then the soname through
the normal loader search (libmla.so.0, libmla.so).
"""
import ctypes
import os

c_status = ctypes.c_int


class mla_context_options(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("device", ctypes.c_int32),
                ("arch", ctypes.c_char_p), ("codeobject_root", ctypes.c_char_p)]

    def __init__(self, **kw):
        super().__init__(struct_size=ctypes.sizeof(self), **kw)


_PROTOTYPES = [
    ("mla_version", ctypes.c_int, []),
    ("mla_version_string", ctypes.c_char_p, []),
    ("mla_status_string", ctypes.c_char_p, [ctypes.c_int]),
    ("mla_last_error", ctypes.c_char_p, []),
    ("mla_clear_last_error", None, []),
    ("mla_arch_count", ctypes.c_int, []),
    ("mla_arch_name", ctypes.c_char_p, [ctypes.c_int]),
    ("mla_context_create", c_status,
     [ctypes.POINTER(mla_context_options), ctypes.POINTER(ctypes.c_void_p)]),
    ("mla_context_destroy", None, [ctypes.c_void_p]),
]


class MlaError(RuntimeError):
    """A libmla call failed: .status (int), .status_name, .message."""

    def __init__(self, status, message):
        self.status = status
        self.status_name = status_string(status)
        self.message = message
        super().__init__(f"{self.status_name}: {message}")


lib = None


def load(path=None):
    """Loads libmla (once) and declares its prototypes; returns the ctypes.CDLL."""
    global lib
    if lib is not None and path is None:
        return lib
    candidates = [p for p in (path, os.environ.get("MLA_LIBRARY")) if p]
    candidates += ["libmla.so.0", "libmla.so"]
    errors = []
    for c in candidates:
        try:
            handle = ctypes.CDLL(c)
            break
        except OSError as e:
            errors.append(f"{c}: {e}")
    else:
        raise OSError("libmla not found; tried:\n  " + "\n  ".join(errors))
    for name, restype, argtypes in _PROTOTYPES:
        fn = getattr(handle, name)
        fn.restype = restype
        fn.argtypes = argtypes
    lib = handle
    return lib


def check(status):
    """Raises MlaError for a non-zero status, with this thread's message."""
    if status != 0:
        raise MlaError(status, load().mla_last_error().decode())


def status_string(status):
    return load().mla_status_string(status).decode()


def version():
    """(major, minor, patch) of the loaded library."""
    v = load().mla_version()
    return (v // 10000, v // 100 % 100, v % 100)
