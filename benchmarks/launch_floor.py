#!/usr/bin/env python3
"""The fixed cost of kernel launches under `mla bench`'s timing: each call after a 256 MB L2 flush
(triton's do_bench method), timed by CUDA events around it, median of --iters. Not part of
libmla; torch only (the device machine has it).

Prints the median for one tiny kernel (torch.cuda._sleep of a few cycles: no memory traffic) and
for two and four of them back to back in the stream, so that a decode's fixed launch cost can be
read off: a one-kernel decode cannot end sooner after its start event than the first figure, a
decode and reducer pair than the second (without programmatic launch).

  python3 benchmarks/launch_floor.py --iters 50
"""
import argparse
import statistics

import torch


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--cycles", type=int, default=16, help="each tiny kernel's busy wait, in clocks")
    a = ap.parse_args()
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(2)]
    for n in (1, 2, 4):
        for mode in ("flush", "none"):
            times = []
            for _ in range(a.iters):
                torch.cuda._sleep(1_000_000)  # the GPU busy while the host enqueues the rest
                if mode == "flush":
                    flush.zero_()
                ev[0].record()
                for _ in range(n):
                    torch.cuda._sleep(a.cycles)
                ev[1].record()
                torch.cuda.synchronize()
                times.append(ev[0].elapsed_time(ev[1]) * 1e3)
            print(f"{n} tiny kernel{'s' if n > 1 else ''}, cache {mode}: median {statistics.median(times):.2f} us "
                  f"(min {min(times):.2f}, max {max(times):.2f}, {a.iters} calls)")


if __name__ == "__main__":
    main()
