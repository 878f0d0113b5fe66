#!/usr/bin/env python3
"""`mla run --cpu` (no device): the CPU path plans the problem with the sm_90a rules, executes the
plan on the CPU and compares it with the direct reference, and prints PASS; `--fast-fill` (the KV
tiled from one random block, as `mla bench` fills it, for large problems) keeps the plan and
passes too, with other data; `--help` names it. Usage: test_cli_run.py <mla program>."""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from script_checks import check, finish  # noqa: E402

mla = sys.argv[1]


def run(*args):
    # 4 requests of ~2048 tokens on 6 clusters: split tiles under any sm_90a default, so the plan
    # executed on the CPU sums fragments and its difference from the direct reference depends on
    # the data
    p = subprocess.run([mla, "run", "--cpu", "--batch", "4", "--kv-len", "2048", "--clusters", "6", *args],
                       capture_output=True, text=True)
    plan = re.search(r"(\d+) works over (\d+) clusters, (\d+) split tiles", p.stdout)
    res = re.search(r"(\d+) values, max abs diff ([0-9.e+-]+), (PASS|FAIL)", p.stdout)
    return p.returncode, plan.groups() if plan else None, res.groups() if res else None


for extra in ([], ["--dtype", "fp8"]):
    rc, plan, res = run(*extra)
    rc_f, plan_f, res_f = run("--fast-fill", *extra)
    name = " ".join(extra) or "bf16"
    check(f"{name}: the plan and check lines printed", None not in (plan, res, plan_f, res_f), True)
    if None in (plan, res, plan_f, res_f):
        continue
    check(f"{name}: exit status", (rc, rc_f), (0, 0))
    check(f"{name}: the plan ({plan})", plan_f, plan)
    check(f"{name}: tiles split", int(plan[2]) > 0, True)
    check(f"{name}: 32768 values checked, PASS", (res[0], res[2], res_f[0], res_f[2]),
          ("32768", "PASS", "32768", "PASS"))
    check(f"{name}: --fast-fill fills other data", res_f[1] != res[1], True)
h = subprocess.run([mla, "run", "--help"], capture_output=True, text=True)
check("--help names --fast-fill", "--fast-fill" in h.stdout, True)
finish()
