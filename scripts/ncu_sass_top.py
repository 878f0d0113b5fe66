#!/usr/bin/env python3
"""scripts/ncu_sass_top.py - read the per-instruction SASS table that scripts/ncu_profile.sh writes
(NAME-sass.csv, `ncu --page source --csv --print-source sass`) without ncu: the warp-stall samples
summed by reason, and the instructions with the most samples, each with its neighbours.

usage: scripts/ncu_sass_top.py NAME-sass.csv [TOP (default 25)] [CONTEXT (default 0)]
"""
import csv
import sys


def main():
    path = sys.argv[1]
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 25
    ctx = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    head = next(i for i, r in enumerate(rows) if r and r[0] == "Address")
    cols = rows[head]
    body = [r for r in rows[head + 1:] if len(r) == len(cols)]
    ix = {c: i for i, c in enumerate(cols)}
    reasons = [c for c in cols if c.startswith("stall_") and "Not Issued" not in c]
    samp = ix["Warp Stall Sampling (All Samples)"]

    def n(r, c):
        try:
            return float(r[ix[c]] if isinstance(c, str) else r[c])
        except ValueError:
            return 0.0

    total = sum(n(r, samp) for r in body)
    print(f"{len(body)} instructions, {total:.0f} samples")
    by = sorted(((sum(n(r, c) for r in body), c) for c in reasons), reverse=True)
    print("by reason: " + ", ".join(f"{c[6:]} {v / total:.1%}" for v, c in by if v > 0.005 * total))
    order = sorted(range(len(body)), key=lambda i: -n(body[i], samp))[:top]
    for i in sorted(order):
        r = body[i]
        why = sorted(((n(r, c), c[6:]) for c in reasons), reverse=True)[:3]
        for k in range(max(0, i - ctx), i):
            print(f"      {k:5d} {body[k][1].strip()[:70]}")
        print(f"{n(r, samp) / total:6.1%} {i:5d} {r[1].strip()[:70]:70s} " +
              " ".join(f"{w}:{v / max(1, n(r, samp)):.0%}" for v, w in why if v > 0))


if __name__ == "__main__":
    main()
