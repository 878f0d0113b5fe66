#!/usr/bin/env python3
"""Symbol test: libmla.so exports only mla_* symbols and has no NEEDED entry on a GPU runtime
(libcuda / libamdhip64 are dlopen'ed on first use, never linked).

usage: check_symbols.py <path of libmla.so>
"""
import subprocess
import sys

lib = sys.argv[1]
nm = subprocess.run(["nm", "-D", "--defined-only", lib], check=True, capture_output=True,
                    text=True).stdout
symbols = [line.split()[-1] for line in nm.splitlines() if line.strip()]
leaked = [s for s in symbols if not s.startswith("mla_")]
readelf = subprocess.run(["readelf", "-d", lib], check=True, capture_output=True,
                         text=True).stdout
needed = [line.split("[")[1].rstrip("]") for line in readelf.splitlines() if "(NEEDED)" in line]
gpu = [n for n in needed if n.startswith(("libcuda", "libamdhip64", "libcudart", "libhip"))]
soname = [line for line in readelf.splitlines() if "(SONAME)" in line]

ok = True
if not any(s == "mla_version" for s in symbols):
    print("FAILED: mla_version is not exported"); ok = False
if leaked:
    print(f"FAILED: {len(leaked)} non-mla_ symbol(s) exported: {', '.join(leaked[:20])}"); ok = False
if gpu:
    print(f"FAILED: linked against a GPU runtime: {gpu}"); ok = False
if not soname or "[libmla.so.0]" not in soname[0]:
    print(f"FAILED: soname is not libmla.so.0: {soname}"); ok = False
print(f"{len(symbols)} exported symbols, all mla_*; NEEDED: {', '.join(needed)}" if ok else "")
sys.exit(0 if ok else 1)
