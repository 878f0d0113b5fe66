#!/usr/bin/env python3
"""ctypes test of the aiter-compatible asm queries: libmla.so loaded with no GPU and no driver,
an explicit arch, the packed return value decoded as aiter's Python does
(status = r & 0xff, gqa = (r >> 8) & 0xff, qseqlen = (r >> 16) & 0xff; negative = error).
Usage: test_ctypes_query.py <path of libmla.so>; tables from $MLA_TEST_FIXTURES."""
import ctypes
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from script_checks import check, finish  # noqa: E402

lib = ctypes.CDLL(sys.argv[1])
lib.mla_decode_asm_query.restype = ctypes.c_int
lib.mla_decode_asm_query.argtypes = [
    ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_int,
    ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_int,
    ctypes.c_void_p]
lib.mla_ps1_fp8_asm_query.restype = ctypes.c_int
lib.mla_ps1_fp8_asm_query.argtypes = [
    ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int,
    ctypes.c_char_p, ctypes.c_int, ctypes.c_void_p]
lib.mla_last_error.restype = ctypes.c_char_p
lib.mla_set_codeobject_root.argtypes = [ctypes.c_char_p]
lib.mla_set_codeobject_root.restype = ctypes.c_int

STATUS = {0: "OK", 1: "REMAP_REJECT", 2: "NO_KERNEL", 3: "ARCH_NOT_BUILT"}


def query(arch, q, kv, heads, qlen, persistent=1, causal=1, lse=0, cprr=0, nkv=1, buflen=256):
    buf = ctypes.create_string_buffer(buflen)
    r = lib.mla_decode_asm_query(arch.encode(), q.encode(), kv.encode(), heads, nkv, qlen,
                                 persistent, causal, lse, cprr, buf, buflen, None)
    if r < 0:
        return ("error", -r, lib.mla_last_error().decode())
    return (STATUS[r & 0xFF], (r >> 8) & 0xFF, (r >> 16) & 0xFF, buf.value.decode())


check("set root", lib.mla_set_codeobject_root(os.environ["MLA_TEST_FIXTURES"].encode()), 0)
check("gfx950 fp8 32 qlen2 lse", query("gfx950", "fp8", "fp8", 32, 2, lse=1),
      ("OK", 16, 4, "fx950_fp8_g16_q4_lse_ps"))
check("gfx950 fp8 16 qlen2 lse", query("gfx950", "fp8", "fp8", 16, 2, lse=1),
      ("NO_KERNEL", 16, 2, ""))
check("gfx950 fp8 64 non-persistent", query("gfx950", "fp8", "fp8", 64, 1, persistent=0),
      ("REMAP_REJECT", 0, 0, ""))
check("gfx942 fp8 64 qlen1 lse", query("gfx942", "fp8", "fp8", 64, 1, lse=1),
      ("OK", 64, 1, "fx942_fp8_g64_q1_lse_ps"))
check("sm_90a bf16 16 qlen2", query("sm_90a", "bf16", "bf16", 16, 2), ("OK", 32, 0, "fx_sm90_bf16_m32"))
r = query("gfx2000", "fp8", "fp8", 16, 1)
check("unknown arch", r[:2], ("error", 4))
check("unknown arch message", "unknown arch 'gfx2000'" in r[2], True)
check("nhead_kv 2", query("gfx950", "fp8", "fp8", 16, 1, nkv=2)[:2], ("error", 1))
check("heads 0", query("gfx950", "fp8", "fp8", 0, 1)[:2], ("error", 1))
check("qlen 0", query("gfx950", "fp8", "fp8", 16, 0)[:2], ("error", 1))
check("bad dtype", query("gfx950", "fp4", "fp8", 16, 1)[:2], ("error", 1))
r = query("gfx950", "fp8", "fp8", 32, 2, lse=1, buflen=8)
check("short kernel_buf", r[:2], ("error", 9))
check("short kernel_buf message", "needs 24" in r[2], True)
buf = ctypes.create_string_buffer(256)
check("ps1 96 qlen4 lse", lib.mla_ps1_fp8_asm_query(b"gfx1250", 96, 4, 1, 1, 0, buf, 256, None), 0)
check("ps1 kernel", buf.value.decode(), "fx1250_ps1_g96_lse")
check("ps1 on gfx950", lib.mla_ps1_fp8_asm_query(b"gfx950", 96, 4, 1, 1, 0, None, 0, None), 3)
finish()
