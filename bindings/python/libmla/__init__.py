"""libmla: Python bindings of the libmla C ABI (ctypes). Minimal loader for now."""
from ._lib import MlaError, lib, load, status_string, version

__all__ = ["MlaError", "lib", "load", "status_string", "version"]
