#!/usr/bin/env python3
"""Read-only bandwidth of the GPU for issue 8's memory-bound rows (docs/performance.md).

Launches the kernels of benchmarks/hbm_read.cu (built by meson into
<build>/benchmarks/hbm_read.cubin when nvcc is found) through the CUDA driver API (ctypes,
torch's primary context and stream) and, as a third reading, torch.sum over the same bytes.
Each figure is the median over --iters launches, each timed by its own pair of CUDA events,
the way `mla bench` times a decode. Prints one line per (kernel, configuration, size): µs, GB/s.
The sizes are the KV bytes of the rows (bf16, 1152 bytes per token):
  b 128 x s_k 4096 (604 MB), b 128 x s_k 16384 (2.42 GB), b 1536 x s_k 2048 (3.62 GB).

usage: hbm_read.py --cubin build/benchmarks/hbm_read.cubin [--iters 20]
Needs torch with CUDA and an sm_90a GPU (the cubin's arch).
"""
import argparse
import ctypes
import statistics

import torch

ROWS = [("b 128, s_k 4096", 128 * 4096 * 1152, 145.0),
        ("b 128, s_k 16384", 128 * 16384 * 1152, 560.0),
        ("b 1536, s_k 2048", 1536 * 2048 * 1152, 860.0)]


def check(res, what):
    if res != 0:
        raise RuntimeError(f"{what} failed: CUresult {res}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cubin", required=True)
    ap.add_argument("--iters", type=int, default=20)
    args = ap.parse_args()

    cuda = ctypes.CDLL("libcuda.so.1")
    dev = torch.device("cuda")
    sms = torch.cuda.get_device_properties(dev).multi_processor_count
    total = max(r[1] for r in ROWS)
    buf = torch.empty(total, dtype=torch.uint8, device=dev)
    buf.random_(0, 256)  # real bytes: the XOR never reaches the sink's constant by design
    sink = torch.zeros(4, dtype=torch.int32, device=dev)
    torch.cuda.synchronize()

    image = open(args.cubin, "rb").read()
    module = ctypes.c_void_p()
    check(cuda.cuModuleLoadData(ctypes.byref(module), ctypes.c_char_p(image)), "cuModuleLoadData")

    def function(name):
        f = ctypes.c_void_p()
        check(cuda.cuModuleGetFunction(ctypes.byref(f), module, name.encode()), "cuModuleGetFunction " + name)
        return f

    f_ldg, f_bulk = function("hbm_read_ldg"), function("hbm_read_bulk")
    stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)

    def launch(f, grid, block, smem, params):  # params: ctypes values, in the kernel's order
        ptrs = (ctypes.c_void_p * len(params))(*[ctypes.addressof(p) for p in params])
        check(cuda.cuLaunchKernel(f, grid, 1, 1, block, 1, 1, smem, stream, ptrs, None), "cuLaunchKernel")

    def timed(run):
        for _ in range(3):
            run()
        times = []
        for _ in range(args.iters):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            run()
            b.record()
            b.synchronize()
            times.append(a.elapsed_time(b) * 1000.0)
        return statistics.median(times)

    def report(kind, config, name, nbytes, target, us):
        print(f"{kind:5s} {config:28s} {name:18s} {us:9.1f} us {nbytes / us / 1e3:8.0f} GB/s"
              f"   (row target {target:.0f} us)", flush=True)

    src = buf.data_ptr()
    for name, nbytes, target in ROWS:
        for per_sm in (4, 8):
            grid = per_sm * sms
            us = timed(lambda: launch(f_ldg, grid, 256, 0,
                                      [ctypes.c_uint64(src), ctypes.c_uint64(nbytes // 16),
                                       ctypes.c_uint64(sink.data_ptr())]))
            report("ldg", f"{grid} CTAs x 256", name, nbytes, target, us)
        for chunk, slots in ((73728, 2), (73728, 3), (36864, 4), (36864, 6)):
            smem = chunk * slots
            check(cuda.cuFuncSetAttribute(f_bulk, 8, smem), "cuFuncSetAttribute")  # max dynamic smem
            n_chunks = nbytes // chunk
            for grid in (sms, 128):
                us = timed(lambda: launch(f_bulk, grid, 32, smem,
                                          [ctypes.c_uint64(src), ctypes.c_uint64(n_chunks), ctypes.c_uint32(chunk),
                                           ctypes.c_uint32(slots), ctypes.c_uint64(sink.data_ptr())]))
                report("bulk", f"{grid} CTAs, {slots} x {chunk} B", name, n_chunks * chunk, target, us)
        view = buf[:nbytes].view(torch.float32)
        us = timed(lambda: torch.sum(view))
        report("torch", "torch.sum (fp32)", name, nbytes, target, us)
    torch.cuda.synchronize()
    print("sink (0 expected):", sink.tolist())


if __name__ == "__main__":
    main()
