#!/usr/bin/env python3
"""`mla query` end to end on the fixture tables: the JSON verdict, the exit status (0 supported,
1 not, 3 unknown, 2 bad arguments) and the environment-variable defaults.
Usage: test_cli_query.py <path of the mla program>; tables from $MLA_TEST_FIXTURES."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from script_checks import check, finish  # noqa: E402

mla = sys.argv[1]
root = os.environ["MLA_TEST_FIXTURES"]


def run(args, env=None):
    e = dict(os.environ)
    for k in ("AITER_ENABLE_EXPERIMENTAL", "AITER_MLA_DECODE_PS1_FLYDSL", "AITER_MLA_DECODE_PS1_ASM",
              "AITER_MLA_USE_OPUS"):
        e.pop(k, None)
    e.update(env or {})
    p = subprocess.run([mla, "query", "--root", root] + args, capture_output=True, text=True, env=e)
    return p.returncode, p.stdout, p.stderr


rc, out, _ = run(["--arch", "gfx950", "--heads", "128", "--qlen", "2", "--q", "fp8", "--kv", "fp8",
                  "--lse", "--json"])
v = json.loads(out)
check("exit status (supported)", rc, 0)
check("verdict", (v["supported"], v["backend"], v["asm_status"], v["table_gqa"], v["table_qseqlen"],
                  v["asm_kernel"], v["reasons"]),
      (True, "asm", "OK", 32, 4, "fx950_fp8_g32_q4_lse_ps", []))
rc, out, _ = run(["--arch", "gfx950", "--heads", "24", "--q", "fp8", "--kv", "fp8", "--json"])
v = json.loads(out)
check("exit status (rejected)", rc, 1)
check("reasons", v["reasons"], [
    "planner v1_2 rejects 24 heads on gfx950 (max_seqlen_qo=1, fp8/fp8)",
    "asm NO_KERNEL on gfx950: q=fp8 kv=fp8 heads=24 qlen=1 (table gqa=24 qseqlen=1) "
    "persistent=True causal=True lse=False cprr=False"])
rc, out, _ = run(["--arch", "gfx950", "--heads", "64", "--qlen", "2", "--q", "fp8", "--kv", "fp8",
                  "--non-persistent", "--json"])
check("non-persistent fp8 gqa64", (rc, json.loads(out)["asm_status"]), (1, "REMAP_REJECT"))
# environment variables give the defaults, options override them
rc, out, _ = run(["--arch", "gfx1250", "--heads", "96", "--qlen", "4", "--q", "fp8", "--kv", "fp8",
                  "--lse", "--json"], {"AITER_MLA_DECODE_PS1_FLYDSL": "1"})
v = json.loads(out)
check("PS1 env", (rc, v["flydsl_ps1"], v["backend"], v["fold_factor"], v["asm_kernel"]),
      (0, True, "ps1_fp8_asm", 1, "fx1250_ps1_g96_lse"))
rc, out, _ = run(["--arch", "gfx1250", "--heads", "96", "--qlen", "4", "--q", "fp8", "--kv", "fp8",
                  "--json", "--ps1-asm", "0"], {"AITER_MLA_DECODE_PS1_FLYDSL": "1"})
v = json.loads(out)
check("flydsl (unknown)", (rc, v["backend"], v["supported"]), (3, "flydsl_ps1", None))
rc, out, _ = run(["--arch", "gfx1250", "--heads", "96", "--q", "fp8", "--kv", "fp8", "--json",
                  "--flydsl-ps1", "0"], {"AITER_MLA_DECODE_PS1_FLYDSL": "1"})
check("option over env", json.loads(out)["fold_factor"], 6)
# the readable table
rc, out, _ = run(["--arch", "sm_90a", "--heads", "128", "--qlen", "2"])
check("table exit", rc, 0)
check("table lines", [l.split()[0] for l in out.splitlines()],
      ["shape", "supported", "planner", "heads", "packing", "backend", "table", "kernel",
       "code"])
check("table kernel", "fx_sm90_bf16_m64" in out, True)
# bad arguments
rc, _, err = run(["--arch", "gfx950", "--heads", "0"])
check("heads 0", (rc, "num_heads must be >= 1" in err), (2, True))
rc, _, err = run(["--arch", "gfx9", "--heads", "16"])
check("unknown arch", (rc, "unknown arch 'gfx9'" in err), (2, True))
rc, _, err = run(["--arch", "gfx950", "--heads", "16", "--q", "fp4"])
check("bad dtype", (rc, "fp4" in err), (2, True))
rc, _, _ = run(["--heads", "16"])
check("missing arch", rc, 2)
finish()
