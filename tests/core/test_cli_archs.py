#!/usr/bin/env python3
"""`mla archs` on a fixture root: the table counts per arch, and `--check` listing the rows whose
code object is missing (exit 1), or none (exit 0).

usage: test_cli_archs.py <path of the mla program>
"""
import os
import subprocess
import sys
import tempfile

mla = sys.argv[1]
failures = []


def expect(cond, what):
    if not cond:
        failures.append(what)
        print("FAILED:", what)


with tempfile.TemporaryDirectory() as root:
    os.makedirs(f"{root}/gfx942/mla")
    with open(f"{root}/gfx942/mla/mla_asm.csv", "w") as f:
        f.write("qType,Gqa,knl_name,co_name\nbf16,16,k16,k16.co\nfp8,16,f16,f16.co\n")
    with open(f"{root}/gfx942/mla/k16.co", "w") as f:
        f.write("x")
    run = subprocess.run([mla, "archs", "--root", root], capture_output=True, text=True)
    expect(run.returncode == 0, f"archs exit 0, got {run.returncode}: {run.stderr}")
    lines = run.stdout.splitlines()
    expect(lines[0] == f"code-object root: {os.path.realpath(root)}", f"root line: {lines[0]!r}")
    row = [l.split() for l in lines if l.startswith("gfx942")]
    expect(row == [["gfx942", "AMD", "1", "2", "1", "304"]], f"gfx942 row: {row}")
    sm = [l.split() for l in lines if l.startswith("sm_90a")]
    expect(sm == [["sm_90a", "NVIDIA", "0", "0", "0", "132"]], f"sm_90a row: {sm}")

    check = subprocess.run([mla, "archs", "--root", root, "--check"], capture_output=True, text=True)
    expect(check.returncode == 1, f"--check exit 1, got {check.returncode}")
    real = os.path.realpath(root)
    expect(f"{real}/gfx942/mla/mla_asm.csv:3: {real}/gfx942/mla/f16.co" in check.stdout,
           f"--check lists the missing row: {check.stdout}")
    expect("1 row(s) with a missing code object" in check.stdout, "--check count")

    with open(f"{root}/gfx942/mla/f16.co", "w") as f:
        f.write("y")
    ok = subprocess.run([mla, "archs", "--root", root, "--check"], capture_output=True, text=True)
    expect(ok.returncode == 0, f"--check with every file present exits 0, got {ok.returncode}")
    expect("0 row(s) with a missing code object" in ok.stdout, "--check count 0")

    bad = subprocess.run([mla, "archs", "--root", f"{root}/nope"], capture_output=True, text=True)
    expect(bad.returncode == 2 and "is not a folder" in bad.stderr, "bad --root")

print("mla archs: " + ("FAILED" if failures else "ok"))
sys.exit(1 if failures else 0)
