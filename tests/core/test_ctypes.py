#!/usr/bin/env python3
"""ctypes test: libmla.so loads with ctypes.CDLL on a machine without any GPU driver, answers
mla_version()/mla_status_string(), and a context fails with RUNTIME_UNAVAILABLE (5) and a message.

usage: test_ctypes.py <path of libmla.so> <bindings/python folder>
"""
import ctypes
import os
import sys

lib_path, bindings = sys.argv[1], sys.argv[2]
# No GPU runtime reachable (the overrides are authoritative, see src/runtime/dl_library.h).
os.environ["MLA_LIBCUDA_PATH"] = "/nonexistent/libcuda.so.1"
os.environ["MLA_LIBHIP_PATH"] = "/nonexistent/libamdhip64.so"
sys.path.insert(0, bindings)
import libmla  # noqa: E402
from libmla import _lib  # noqa: E402

failures = []


def expect(cond, what):
    if not cond:
        failures.append(what)
        print("FAILED:", what)


raw = ctypes.CDLL(lib_path)  # plain CDLL, as the acceptance asks
raw.mla_version.restype = ctypes.c_int
expect(raw.mla_version() == 100, f"mla_version() == 100, got {raw.mla_version()}")

lib = libmla.load(lib_path)
expect(libmla.version() == (0, 1, 0), f"version {libmla.version()}")
expect(lib.mla_version_string() == b"0.1.0", "mla_version_string")
expect(libmla.status_string(0) == "MLA_SUCCESS", "status 0")
expect(libmla.status_string(5) == "MLA_ERROR_RUNTIME_UNAVAILABLE", "status 5")
expect(libmla.status_string(99) == "MLA_UNKNOWN_STATUS", "status 99")
expect([lib.mla_arch_name(i).decode() for i in range(lib.mla_arch_count())] ==
       ["gfx942", "gfx950", "gfx1250", "sm_90a"], "arch names")

opts = _lib.mla_context_options(arch=b"sm_90a")
ctx = ctypes.c_void_p()
st = lib.mla_context_create(ctypes.byref(opts), ctypes.byref(ctx))
msg = lib.mla_last_error().decode()
expect(st == 5, f"mla_context_create -> 5, got {st} ({msg})")
expect("MLA_LIBCUDA_PATH=/nonexistent/libcuda.so.1" in msg, f"message names the path: {msg!r}")
expect(ctx.value is None, "no context written")
try:
    _lib.check(st)
    expect(False, "check() raises")
except libmla.MlaError as e:
    expect(e.status == 5 and e.status_name == "MLA_ERROR_RUNTIME_UNAVAILABLE", "MlaError status")
    expect("libcuda.so.1" in e.message, "MlaError message")

print(f"ctypes: {'FAILED' if failures else 'ok'}; context error was: {msg.splitlines()[0]}")
sys.exit(1 if failures else 0)
