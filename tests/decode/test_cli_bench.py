#!/usr/bin/env python3
"""`mla bench --targets --list` (no device): the table holds issue 8's 13 target rows, each
with FlashMLA's figure (anchors.md §0) and the target, in the columns a GPU run fills (the time
after do_bench's L2 flush and the idle-GPU time), and `--list` alone is refused; `--fused-reduce`
(tile counters on every call) lists the same rows and is named in `--help`. On a GPU
`mla bench --targets` times the same rows and says which are met. Usage: test_cli_bench.py
<mla program>."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from script_checks import check, finish  # noqa: E402

mla = sys.argv[1]
p = subprocess.run([mla, "bench", "--targets", "--list"], capture_output=True, text=True)
check("exit status", p.returncode, 0)
table = [l.split("|")[1:-1] for l in p.stdout.splitlines() if l.startswith("| ") and "---" not in l]
check("columns", [c.strip() for c in table[0]],
      ["q / kv", "b", "s_q", "h", "s_k", "page", "FlashMLA us", "target us", "us", "% of copy", "TFLOPS", "met",
       "idle GPU us"])
check("every row has every column", {len(c) for c in table}, {13})
rows = table[1:]
got = [(c[0].strip(), int(c[1]), int(c[2]), int(c[3]), int(c[4]), int(c[5]), c[6].strip(), c[7].strip())
       for c in rows]
# issue 8: q / kv, b, s_q, h, s_k, page size, FlashMLA µs, target µs ("fp8 KV" at 16 heads is run
# with bf16 Q and with fp8 Q)
want = [("bf16 / bf16", 128, 1, 16, 4096, 64, "164.8", "145"),
        ("bf16 / bf16", 128, 1, 64, 4096, 64, "166.9", "145"),
        ("bf16 / bf16", 128, 1, 16, 16384, 64, "592.4", "560"),
        ("bf16 / bf16", 128, 1, 128, 4096, 64, "242.0", "215"),
        ("bf16 / bf16", 128, 2, 128, 4096, 64, "483.2", "430"),
        ("bf16 / bf16", 128, 2, 16, 4096, 64, "165.2", "155"),
        ("bf16 / bf16", 1, 1, 16, 32768, 64, "50.1", "20"),
        ("bf16 / bf16", 64, 1, 16, 1024, 64, "38.8", "28"),
        ("bf16 / bf16", 1536, 1, 16, 2048, 64, "904.1", "860"),
        ("bf16 / fp8", 128, 1, 16, 4096, 64, "-", "85"),
        ("fp8 / fp8", 128, 1, 16, 4096, 64, "-", "85"),
        ("fp8 / fp8", 128, 1, 128, 4096, 64, "-", "150"),
        ("bf16 / bf16", 128, 1, 16, 4096, 1, "-", "160")]
check("issue 8's target rows", got, want)
q = subprocess.run([mla, "bench", "--list"], capture_output=True, text=True)
check("--list without --targets: exit status", q.returncode, 2)
check("--list without --targets: message", q.stderr.strip(), "mla bench: --list goes with --targets")
f = subprocess.run([mla, "bench", "--targets", "--list", "--fused-reduce"], capture_output=True, text=True)
check("--fused-reduce: exit status", f.returncode, 0)
check("--fused-reduce: the same table", f.stdout, p.stdout)
h = subprocess.run([mla, "bench", "--help"], capture_output=True, text=True)
check("--help names --fused-reduce", "--fused-reduce" in h.stdout, True)
finish()
