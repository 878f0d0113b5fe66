#!/usr/bin/env python3
"""The tensor-core ceiling of issue 8's 128-head rows (docs/performance.md, session 24).

Launches the kernels of benchmarks/mma_ceiling.cu (built by meson into
<build>/benchmarks/mma_ceiling.cubin when nvcc is found): each issues one tile step's MMAs of a
shipped 64-row qm body `steps` times per CTA, on one CTA per SM, with no loads and no softmax.
The rows' plans run 128 CTAs: at 128 heads (bf16, and fp8 Q and KV) 128 tile steps each (two
whole 64-tile works), at 128 heads x MTP 2 256. Prints for each kernel, mode and grid: µs (mean
of back-to-back launches and median after a 256 MB L2 flush, cudrv.py), the slowest CTA's clock64
cycles per tile step, the SM clock they imply (cycles / µs), and the tensor pipe's share
(the step's MMA cycles at the dense rate, 2176 bf16 / 1600 fp8, over the cycles measured).

Modes (mma_ceiling.cu): S only, P.V only, both free-running (the tensor pipe's rate for the mix),
both in the shipped bodies' order of dependences (S waited for, a CTA barrier before the other
warpgroup's P.V, each P.V waited for), and (bf16) S on both warpgroups by turns.

usage: mma_ceiling.py --cubin build/benchmarks/mma_ceiling.cubin [--iters 20] [--rounds 2]
                      [--kernel mma_qm_bf16|mma_qm_fp8] [--mode 1|2|3|7|11]
Needs torch with CUDA and an sm_90a GPU (the cubin's arch).
"""
import argparse
import ctypes

import torch

from cudrv import Driver

SMEM = {"mma_qm_bf16": 64 * 1152 + 2 * 9 * 8192, "mma_qm_fp8": 5 * 8192 + 4 * 5 * 8192}
IDEAL = {  # MMA cycles of one tile step at the dense rate: mode -> cycles (S, P.V / O^T)
    "mma_qm_bf16": {1: 1152, 2: 1024, 3: 2176, 7: 2176, 11: 2176},
    "mma_qm_fp8": {1: 576, 2: 1024, 3: 1600, 7: 1600},
}
MODES = {1: "S only", 2: "P.V only", 3: "S + P.V, free-running", 7: "S + P.V, shipped order",
         11: "S by turns + P.V, free-running"}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cubin", required=True)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--kernel", choices=sorted(SMEM), help="only this kernel")
    ap.add_argument("--mode", type=int, choices=sorted(MODES), help="only this mode (for a profiler: one launch"
                    " of each grid with --iters 1 --rounds 1)")
    args = ap.parse_args()
    drv = Driver()
    module = drv.load(args.cubin)
    fill_bytes = max(SMEM.values())
    # operands: bf16 / e4m3 values of N(0, 1) (random bits would make NaNs and change the power)
    fill = {"mma_qm_bf16": torch.randn(fill_bytes // 2, device=drv.dev).to(torch.bfloat16).view(torch.uint8),
            "mma_qm_fp8": torch.randn(fill_bytes, device=drv.dev).to(torch.float8_e4m3fn).view(torch.uint8)}
    cyc = torch.zeros(drv.sms, dtype=torch.int64, device=drv.dev)
    sink = torch.zeros(4, dtype=torch.float32, device=drv.dev)
    rows = [(128, 128, "h 128 (bf16: 215 us; fp8: 150 us)"), (128, 256, "h 128 x MTP 2 (430 us)"),
            (drv.sms, 124, "all SMs, the h 128 steps spread")]
    for rnd in range(args.rounds):
        for name in ("mma_qm_bf16", "mma_qm_fp8"):
            if args.kernel and name != args.kernel:
                continue
            f = drv.function(module, name, SMEM[name])
            for mode, ideal in IDEAL[name].items():
                if args.mode and mode != args.mode:
                    continue
                for grid, steps, what in rows:
                    if grid != 128 and mode not in (3, 7):
                        continue
                    if steps == 256 and name == "mma_qm_fp8":
                        continue
                    run = drv.launch(f, grid, 256, SMEM[name],
                                     [ctypes.c_uint64(fill[name].data_ptr()), ctypes.c_uint32(steps),
                                      ctypes.c_uint32(mode), ctypes.c_uint64(cyc.data_ptr()),
                                      ctypes.c_uint64(sink.data_ptr())])
                    b_us = drv.timed(run, args.iters)
                    cycles = int(cyc[:grid].max().item()) / steps
                    f_us = drv.flushed(run, args.iters)
                    cycles_f = int(cyc[:grid].max().item()) / steps
                    print(f"{name:11s} {MODES[mode]:31s} {grid:3d} CTAs x {steps:3d} steps ({what:34s})"
                          f"  b2b {b_us:6.1f} us {cycles:6.0f} cyc/step {cycles * steps / b_us:5.0f} MHz"
                          f"  flushed {f_us:6.1f} us {cycles_f:6.0f} cyc/step {cycles_f * steps / f_us:5.0f} MHz"
                          f"  tensor {ideal / cycles:4.0%}, round {rnd}", flush=True)
    torch.cuda.synchronize()
    print("sink (0 expected):", sink.tolist())


if __name__ == "__main__":
    main()
