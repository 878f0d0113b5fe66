"""The CUDA driver calls shared by the benchmark launchers (hbm_read.py, mma_ceiling.py): a cubin
loaded with cuModuleLoadData in torch's primary context, kernels launched with cuLaunchKernel on
torch's current stream (ctypes), and the two timings of docs/performance.md:
  timed    the mean of `iters` launches enqueued back to back between one pair of CUDA events
           (the launch arguments built before, so no host time between launches is counted);
  flushed  the median of `iters` launches, each after a 256 MB memset (an L2 flush, as do_bench's
           zero_() and `mla bench` do), events around the launch alone.
Needs torch with CUDA and the NVIDIA driver (libcuda.so.1)."""
import ctypes

import torch

CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8


def check(res, what):
    if res != 0:
        raise RuntimeError(f"{what} failed: CUresult {res}")


class Driver:
    def __init__(self):
        self.cuda = ctypes.CDLL("libcuda.so.1")
        self.dev = torch.device("cuda")
        self.sms = torch.cuda.get_device_properties(self.dev).multi_processor_count
        torch.zeros(1, device=self.dev)  # torch's primary context is current from here on
        self.stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        self._flush = None

    def load(self, path):
        """The module of the cubin at `path` (kept alive by the returned handle)."""
        image = open(path, "rb").read()
        module = ctypes.c_void_p()
        check(self.cuda.cuModuleLoadData(ctypes.byref(module), ctypes.c_char_p(image)), "cuModuleLoadData " + path)
        return module

    def function(self, module, name, smem=0):
        """Kernel `name` of `module`, allowed `smem` bytes of dynamic shared memory."""
        f = ctypes.c_void_p()
        check(self.cuda.cuModuleGetFunction(ctypes.byref(f), module, name.encode()), "cuModuleGetFunction " + name)
        if smem:
            self.set_smem(f, smem)
        return f

    def set_smem(self, f, smem):
        check(self.cuda.cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem),
              "cuFuncSetAttribute")

    def launch(self, f, grid, block, smem, params):
        """A closure that launches f once; params: ctypes values in the kernel's order."""
        ptrs = (ctypes.c_void_p * len(params))(*[ctypes.addressof(p) for p in params])

        def run():  # the arguments stay alive with the closure
            check(self.cuda.cuLaunchKernel(f, grid, 1, 1, block, 1, 1, smem, self.stream, ptrs, None),
                  "cuLaunchKernel")
        run.keep = params
        return run

    def timed(self, run, iters):
        """µs: the mean of back-to-back launches (3 warm-up launches first)."""
        for _ in range(3):
            run()
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(iters):
            run()
        b.record()
        b.synchronize()
        return a.elapsed_time(b) * 1000.0 / iters

    def flushed(self, run, iters):
        """µs: the median of launches each after a 256 MB L2 flush (2 warm-up launches first)."""
        if self._flush is None:
            self._flush = torch.empty(256_000_000, dtype=torch.uint8, device=self.dev)
        for _ in range(2):
            run()
        ms = []
        for _ in range(iters):
            self._flush.zero_()
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            run()
            b.record()
            b.synchronize()
            ms.append(a.elapsed_time(b))
        ms.sort()
        return ms[len(ms) // 2] * 1000.0
