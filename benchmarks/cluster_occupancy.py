#!/usr/bin/env python3
"""How many clusters of N CTAs of a decode kernel the GPU holds at once (docs/performance.md,
session 16: the question behind a 2-CTA cluster with TMA multicast for the 64-row qm kernel at
128 heads, where the two head groups of a request would share each KV tile).

A persistent decode grid has one CTA per SM (132 on the H200). Launched as clusters of N CTAs,
it runs in one wave only if the GPU holds 132 / N such clusters at once: a cluster's CTAs must
sit in one GPC, so SMs left over in a GPC stay idle. Prints, for each cluster size, the driver's
cuOccupancyMaxActiveClusters for the kernel at its table row's launch (256 threads, the row's
dynamic shared memory), and the CTAs that makes.

usage: cluster_occupancy.py CUBIN KERNEL SMEM_BYTES [--threads 256] [--sizes 1 2 4]
e.g.   cluster_occupancy.py build/codeobjects/sm_90a/decode/mla_decode_qm_bf16_bf16.cubin \
           mla_decode_qm_bf16_bf16_m64 231936
Needs the NVIDIA driver (libcuda.so.1) and a GPU of the cubin's arch; no torch.
"""
import argparse
import ctypes

CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4
CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16


class LaunchAttribute(ctypes.Structure):  # CUlaunchAttribute: id, 4 bytes pad, 64-byte value union
    _fields_ = [("id", ctypes.c_int), ("pad", ctypes.c_char * 4), ("value", ctypes.c_uint * 16)]


class LaunchConfig(ctypes.Structure):  # CUlaunchConfig of the CUDA 12 driver API
    _fields_ = [("grid", ctypes.c_uint * 3), ("block", ctypes.c_uint * 3), ("shared", ctypes.c_uint),
                ("stream", ctypes.c_void_p), ("attrs", ctypes.POINTER(LaunchAttribute)), ("num_attrs", ctypes.c_uint)]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cubin")
    ap.add_argument("kernel")
    ap.add_argument("smem", type=int)
    ap.add_argument("--threads", type=int, default=256)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1, 2, 4])
    a = ap.parse_args()
    cu = ctypes.CDLL("libcuda.so.1")

    def ok(res, what):
        if res != 0:
            raise RuntimeError(f"{what}: CUresult {res}")

    ok(cu.cuInit(0), "cuInit")
    dev, ctx, mod, fn = ctypes.c_int(), ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
    ok(cu.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
    ok(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
    ok(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    sms = ctypes.c_int()
    ok(cu.cuDeviceGetAttribute(ctypes.byref(sms), CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev), "SM count")
    ok(cu.cuModuleLoad(ctypes.byref(mod), a.cubin.encode()), "cuModuleLoad")
    ok(cu.cuModuleGetFunction(ctypes.byref(fn), mod, a.kernel.encode()), "cuModuleGetFunction")
    ok(cu.cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, a.smem), "max dynamic smem")
    print(f"{a.kernel}: {a.threads} threads, {a.smem} bytes of dynamic shared memory, {sms.value} SMs")
    for n in a.sizes:
        attr = LaunchAttribute()
        attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
        attr.value[0], attr.value[1], attr.value[2] = n, 1, 1
        grid = sms.value // n * n
        cfg = LaunchConfig((grid, 1, 1), (a.threads, 1, 1), a.smem, None, ctypes.pointer(attr), 1)
        clusters = ctypes.c_int()
        res = cu.cuOccupancyMaxActiveClusters(ctypes.byref(clusters), fn, ctypes.byref(cfg))
        if res != 0:
            print(f"  cluster {n}: cuOccupancyMaxActiveClusters failed, CUresult {res}")
            continue
        print(f"  cluster {n}: {clusters.value} clusters at once = {clusters.value * n} CTAs "
              f"({'one wave' if clusters.value * n >= grid else 'NOT one wave'} for a grid of {grid})")


if __name__ == "__main__":
    main()
