#!/usr/bin/env python3
"""`mla plan` end to end: the layout it reports and plans (head-group-major twin sections by
default on sm_90a with v1_2, aiter's order with --aiter-order, on other archs and planners), and in
the --dump of 128 requests x 4096 tokens at 128 heads, cluster c + 66 holding group 1 of exactly
cluster c's works. Usage: test_cli_plan.py <path of the mla program>."""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from script_checks import check, finish  # noqa: E402

mla = sys.argv[1]


def plan(*args):
    p = subprocess.run([mla, "plan"] + list(args), capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit("mla plan %s failed: %s" % (" ".join(args), p.stderr))
    return p.stdout


def layout(out):
    return next(l.split(None, 1)[1] for l in out.splitlines() if l.startswith("layout"))


AITER = "aiter's order (request by request)"
check("sm_90a default, 128 heads", layout(plan("--heads", "128")),
      "head-group-major: 2 sections of 66 clusters (a request's tiles that read the same KV run at once)")
check("64 heads, qlen 3", layout(plan("--heads", "64", "--qlen", "3")),
      "head-group-major: 3 sections of 44 clusters (a request's tiles that read the same KV run at once)")
check("16 heads: nothing to lay out", layout(plan("--heads", "16")),
      AITER + "; head-group-major changes nothing here")
check("--aiter-order", layout(plan("--heads", "128", "--aiter-order")), AITER)
check("gfx942", layout(plan("--heads", "128", "--arch", "gfx942")), AITER)
check("v1_0 planner", layout(plan("--heads", "128", "--planner", "v1_0")), AITER)

# --dump rows: "  c<cluster> w<work> batch partial qo_start qo_end kv_start kv_end kv_offset tile"
# (aiter's work overhead, --overhead-tokens 0: this plan splits tiles, so the twins hold fragments)
out = plan("--heads", "128", "--batch", "128", "--kv-len", "4096", "--page-size", "64", "--dump",
           "--overhead-tokens", "0")
works = {}
for line in out.splitlines():
    f = line.split()
    if len(f) == 10 and f[0].startswith("c") and f[1].startswith("w"):
        works.setdefault(int(f[0][1:]), []).append([int(x) for x in f[2:]])
twins = sum(1 for c in range(66)
            if [[w[0] + 1, w[1] >= 0, w[2] + 1, w[4], w[5], w[6]] for w in works.get(c, [])]
            == [[w[0], w[1] >= 0, w[2], w[4], w[5], w[6]] for w in works.get(c + 66, [])])
check("clusters c and c + 66 are twins (of 66)", twins, 66)
check("works on clusters 0..65 are group 0", all(w[0] % 2 == 0 for c in range(66) for w in works.get(c, [])), True)
check("works dumped", sum(len(v) for v in works.values()), 382)
# sm_90a's default work overhead (1024 tokens, 16 blocks at page 64) keeps these 256 tiles whole:
# 2 per cluster on 128 clusters, no partial rows
summary = plan("--heads", "128", "--batch", "128", "--kv-len", "4096", "--page-size", "64")
check("default overhead: works", re.search(r"works\s+(\d+)", summary).group(1), "256")
check("default overhead: split tiles", re.search(r"qo tiles\s+256 \((\d+) split", summary).group(1), "0")
check("default overhead: the line in blocks and tokens",
      re.search(r"work overhead\s+(\d+ blocks \(\d+ tokens\)) per work, the arch's default", summary).group(1),
      "16 blocks (1024 tokens)")
# 16 heads (16-row bf16 tiles): the default is a 512-token split tail (8 blocks at page 64), which
# keeps all 128 requests of 16384 tokens whole, as 1024 tokens of overhead do; aiter's rule (both
# 0) splits every one
p16 = plan("--batch", "128", "--kv-len", "16384", "--page-size", "64")
check("16 heads, default (split tail): works", re.search(r"works\s+(\d+)", p16).group(1), "128")
check("16 heads, default: the tail line", re.search(r"split tail\s+(\d+) blocks", p16).group(1), "8")
check("16 heads, aiter's rule: works",
      re.search(r"works\s+(\d+)", plan("--batch", "128", "--kv-len", "16384", "--page-size", "64",
                                       "--overhead-tokens", "0", "--tail-tokens", "0")).group(1), "259")
check("16 heads, --overhead-tokens 1024: works",
      re.search(r"works\s+(\d+)", plan("--batch", "128", "--kv-len", "16384", "--page-size", "64",
                                       "--overhead-tokens", "1024")).group(1), "128")
check("--overhead-tokens 0 (aiter's rule): split tiles",
      re.search(r"qo tiles\s+256 \((\d+) split",
                plan("--heads", "128", "--batch", "128", "--kv-len", "4096", "--page-size", "64",
                     "--overhead-tokens", "0")).group(1), "126")
out_a = plan("--heads", "128", "--batch", "128", "--kv-len", "4096", "--page-size", "64", "--dump",
             "--aiter-order")
odd = [int(l.split()[2]) % 2 for l in out_a.splitlines()
       if len(l.split()) == 10 and l.split()[0].startswith("c") and int(l.split()[0][1:]) < 66]
check("aiter's order: clusters 0..65 also hold group-1 pseudo-requests", 0 < sum(odd) < len(odd), True)
finish()
