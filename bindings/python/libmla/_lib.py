"""Loading libmla.so with ctypes and declaring every prototype of include/mla_c_api.h.

Every C function is declared once in PROTOTYPES (argtypes and restype), so that pointers and
64-bit values are never truncated to C int (tests/python/test_abi.py checks the table against the
header). Failing calls raise the MlaError subclass of their status (libmla.errors) carrying the
library's thread-local message (mla_last_error), read straight after the call.

The library is found, in order (the first that loads wins):
  1. the path given to load(),
  2. $LIBMLA_PATH (a file, or a folder holding libmla.so*); $MLA_LIBRARY is an older alias,
  3. next to the package (libmla/libmla.so*, as a wheel or a copy would place it),
  4. the build tree: $MLA_BUILD_ROOT/src (meson test sets it), then build*/src of every folder
     above the package (newest first),
  5. ctypes.util.find_library("mla"), then the soname libmla.so.0 (an installed libmla).
Nothing of this touches a GPU driver: libmla.so loads its runtime only when a context is created.
"""
import ctypes
import ctypes.util
import glob
import os

from . import _types as T
from .errors import MlaError, make_error  # noqa: F401  (MlaError re-exported, used by tests/core)

__version__ = "0.1.0"
# The package speaks this major of the C ABI (MLA_VERSION_MAJOR, carried by the soname).
ABI_MAJOR = 0

c_int, c_int32, c_size_t, c_float = ctypes.c_int, ctypes.c_int32, ctypes.c_size_t, ctypes.c_float
c_char_p, c_void_p, P = ctypes.c_char_p, ctypes.c_void_p, ctypes.POINTER
c_status, c_enum = T.c_status, T.c_enum
mla_context_options = T.mla_context_options  # kept here for tests/core/test_ctypes.py

# (name, restype, argtypes), in header order. Data pointers are c_void_p (Python ints),
# structs travel by pointer, enums as int, mla_context* / mla_timer* / streams as c_void_p.
PROTOTYPES = [
    ("mla_status_string", c_char_p, [c_int]),
    ("mla_last_error", c_char_p, []),
    ("mla_clear_last_error", None, []),
    ("mla_version", c_int, []),
    ("mla_version_string", c_char_p, []),
    ("mla_dtype_from_string", c_status, [c_char_p, P(c_enum)]),
    ("mla_dtype_string", c_char_p, [c_enum]),
    ("mla_dtype_size", c_size_t, [c_enum]),
    ("mla_arch_count", c_int, []),
    ("mla_arch_name", c_char_p, [c_int]),
    ("mla_codeobject_root", c_status, [c_char_p, c_size_t, P(c_size_t)]),
    ("mla_set_codeobject_root", c_status, [c_char_p]),
    ("mla_arch_query", c_status, [c_char_p, P(T.mla_arch_info)]),
    ("mla_arch_check", c_status, [c_char_p, c_char_p, c_size_t, P(c_size_t), P(c_int)]),
    ("mla_context_create", c_status, [P(T.mla_context_options), P(c_void_p)]),
    ("mla_context_destroy", None, [c_void_p]),
    ("mla_context_arch", c_char_p, [c_void_p]),
    ("mla_context_num_cus", c_int, [c_void_p]),
    ("mla_smoke_launch", c_status, [c_void_p, c_void_p, c_int32, c_int32, c_int32, c_void_p]),
    ("mla_device_malloc", c_status, [c_void_p, P(c_void_p), c_size_t]),
    ("mla_device_free", c_status, [c_void_p, c_void_p]),
    ("mla_memcpy_htod", c_status, [c_void_p, c_void_p, c_void_p, c_size_t, c_void_p]),
    ("mla_memcpy_dtoh", c_status, [c_void_p, c_void_p, c_void_p, c_size_t, c_void_p]),
    ("mla_memset_d8", c_status, [c_void_p, c_void_p, ctypes.c_ubyte, c_size_t, c_void_p]),
    ("mla_stream_synchronize", c_status, [c_void_p, c_void_p]),
    ("mla_timer_start", c_status, [c_void_p, c_void_p, P(c_void_p)]),
    ("mla_timer_stop_ms", c_status, [c_void_p, c_void_p, P(c_float)]),
    # AMD stage 1 (aiter code objects)
    ("mla_amd_decode_stage1", c_status, [c_void_p, P(T.mla_amd_stage1_args), c_void_p]),
    # routing
    ("mla_decode_head_plan", c_status, [P(T.mla_decode_shape), P(T.mla_head_plan)]),
    ("mla_decode_shape_support", c_status, [P(T.mla_decode_shape), P(T.mla_decode_support)]),
    ("mla_decode_asm_query", c_int,
     [c_char_p, c_char_p, c_char_p, c_int, c_int, c_int, c_int, c_int, c_int, c_int, c_char_p,
      c_int, c_void_p]),
    ("mla_ps1_fp8_asm_query", c_int,
     [c_char_p, c_int, c_int, c_int, c_int, c_int, c_char_p, c_int, c_void_p]),
    ("mla_reduce_v1_supports", c_int, [c_int, c_int]),
    ("mla_decode_occupancy", c_int, [c_char_p, c_int, c_int, c_enum, c_enum, c_int]),
    ("mla_planner_string", c_char_p, [c_enum]),
    ("mla_head_plan_string", c_char_p, [c_enum]),
    ("mla_backend_string", c_char_p, [c_enum]),
    ("mla_asm_status_string", c_char_p, [c_enum]),
    # planner
    ("mla_metadata_info", c_status, [P(T.mla_metadata_params), P(T.mla_metadata_sizes)]),
    ("mla_plan_metadata", c_status,
     [P(T.mla_metadata_params), c_void_p, c_void_p, c_void_p, P(T.mla_metadata_buffers),
      c_void_p, c_void_p, P(T.mla_plan_summary)]),
    ("mla_plan_metadata_device", c_status,
     [c_void_p, P(T.mla_metadata_params), c_void_p, c_void_p, c_void_p,
      P(T.mla_metadata_buffers), c_void_p]),
    ("mla_update_metadata", c_status,
     [P(T.mla_metadata_params), c_void_p, c_void_p, P(T.mla_metadata_buffers)]),
    ("mla_decode_reference", c_status, [P(T.mla_host_problem), c_void_p, c_void_p]),
    ("mla_execute_plan_reference", c_status,
     [P(T.mla_host_problem), P(T.mla_metadata_params), P(T.mla_metadata_buffers), c_void_p,
      c_void_p]),
    # context parallel
    ("mla_merge_attn_states", c_status, [c_void_p, P(T.mla_merge_args), c_void_p]),
    ("mla_merge_attn_states_host", c_status, [P(T.mla_merge_args)]),
    # decode
    ("mla_decode_fwd", c_status, [c_void_p, P(T.mla_decode_args), c_void_p]),
    ("mla_device_copy", c_status, [c_void_p, c_void_p, c_void_p, c_size_t, c_void_p]),
]

lib = None          # the loaded ctypes.CDLL (set by load(), called on import)
lib_path = None     # the path it was loaded from
missing_symbols = []  # header functions this libmla.so does not export (calls raise)


def _names_in(folder):
    """Candidate library files in a folder: the soname first, then the dev link, then others."""
    out = [os.path.join(folder, n) for n in ("libmla.so.0", "libmla.so")]
    out += sorted(set(glob.glob(os.path.join(folder, "libmla.so.*"))) - set(out))
    return [p for p in out if os.path.isfile(p)]


def candidate_paths():
    """Every place load() tries, in order (files that exist, then loader names)."""
    here = os.path.dirname(os.path.abspath(__file__))
    out = []
    for var in ("LIBMLA_PATH", "MLA_LIBRARY"):
        v = os.environ.get(var)
        if v:
            out += _names_in(v) if os.path.isdir(v) else [v]
    out += _names_in(here)
    build_root = os.environ.get("MLA_BUILD_ROOT")
    if build_root:
        out += _names_in(os.path.join(build_root, "src"))
    d = here
    while True:
        parent = os.path.dirname(d)
        found = []
        for p in glob.glob(os.path.join(d, "build*", "src", "libmla.so.0")):
            try:
                found.append((os.path.getmtime(p), p))
            except OSError:  # a dangling link of a build in progress
                pass
        out += [p for _, p in sorted(found, reverse=True)]
        if parent == d:
            break
        d = parent
    name = ctypes.util.find_library("mla")
    if name:
        out.append(name)
    out.append("libmla.so.0")
    seen, uniq = set(), []
    for p in out:
        if p not in seen:
            seen.add(p)
            uniq.append(p)
    return uniq


def _missing(name):
    def call(*_args):
        raise MlaError(10, f"{name} is not exported by {lib_path} (an older libmla?)",
                       "MLA_ERROR_INTERNAL")
    call.__name__ = name
    return call


def _declare(handle):
    missing = []
    for name, restype, argtypes in PROTOTYPES:
        try:
            fn = getattr(handle, name)
        except AttributeError:
            missing.append(name)
            continue
        fn.restype = restype
        fn.argtypes = argtypes
    return missing


def load(path=None):
    """Loads libmla (once) and declares its prototypes; returns the ctypes.CDLL.
    With a path, that library is (re)loaded. Raises ImportError listing every path tried."""
    global lib, lib_path, missing_symbols
    if lib is not None and path is None:
        return lib
    errors = []
    for c in ([path] if path else candidate_paths()):
        try:
            handle = ctypes.CDLL(c)
        except OSError as e:
            errors.append(f"{c}: {e}")
            continue
        try:
            handle.mla_version.restype = ctypes.c_int
            v = handle.mla_version()
        except AttributeError:
            errors.append(f"{c}: not a libmla (no mla_version)")
            continue
        if v // 10000 != ABI_MAJOR:
            errors.append(f"{c}: ABI major {v // 10000}, this package needs {ABI_MAJOR}")
            continue
        missing_symbols = _declare(handle)
        for name in missing_symbols:
            setattr(handle, name, _missing(name))
        lib, lib_path = handle, c
        return lib
    raise ImportError("libmla: no usable libmla.so found (set LIBMLA_PATH to the library or its "
                      "folder); tried:\n  " + "\n  ".join(errors or ["(nothing)"]))


def last_error():
    return load().mla_last_error().decode(errors="replace")


def check(status):
    """Raises the MlaError subclass of a non-zero status, with this thread's message."""
    if status != 0:
        raise make_error(status, last_error(), status_string(status))


def status_string(status):
    return load().mla_status_string(int(status)).decode()


def version():
    """(major, minor, patch) of the loaded library."""
    v = load().mla_version()
    return (v // 10000, v // 100 % 100, v % 100)


def cstr(s, what):
    """str -> bytes for a const char* argument (None stays NULL)."""
    if s is None:
        return None
    if isinstance(s, bytes):
        return s
    if not isinstance(s, str):
        raise TypeError(f"{what} must be a str, got {type(s).__name__}")
    return s.encode()
