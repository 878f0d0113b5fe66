// gpu_driver.h - the few CUDA driver entry points the GPU planner tests need for streams and CUDA
// graphs (libmla's public API has neither), loaded with dlopen("libcuda.so.1") so the tests link
// without libcuda and build without the toolkit's headers (the types below are the driver ABI's:
// handles are pointers, CUresult an int, CUdeviceptr 64-bit). Header-only, C++17.
#pragma once
#include <dlfcn.h>

#include <cstdio>

namespace gpu_test {

using CUresult = int;
using CUstream = void*;
using CUgraph = void*;
using CUgraphExec = void*;
using CUcontext = void*;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
constexpr int kStreamNonBlocking = 1;        // CU_STREAM_NON_BLOCKING
constexpr int kCaptureModeThreadLocal = 1;   // CU_STREAM_CAPTURE_MODE_THREAD_LOCAL

struct Driver {
    void* lib = nullptr;
    CUresult (*cuInit)(unsigned) = nullptr;
    CUresult (*cuDeviceGet)(CUdevice*, int) = nullptr;
    CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice) = nullptr;
    CUresult (*cuCtxSetCurrent)(CUcontext) = nullptr;
    CUresult (*cuStreamCreate)(CUstream*, unsigned) = nullptr;
    CUresult (*cuStreamDestroy)(CUstream) = nullptr;
    CUresult (*cuStreamSynchronize)(CUstream) = nullptr;
    CUresult (*cuStreamBeginCapture)(CUstream, int) = nullptr;
    CUresult (*cuStreamEndCapture)(CUstream, CUgraph*) = nullptr;
    CUresult (*cuGraphInstantiateWithFlags)(CUgraphExec*, CUgraph, unsigned long long) = nullptr;
    CUresult (*cuGraphLaunch)(CUgraphExec, CUstream) = nullptr;
    CUresult (*cuGraphExecDestroy)(CUgraphExec) = nullptr;
    CUresult (*cuGraphDestroy)(CUgraph) = nullptr;
    CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void*, size_t) = nullptr;
    CUresult (*cuGetErrorName)(CUresult, const char**) = nullptr;

    template <class F>
    bool sym(F& f, const char* name) {
        f = reinterpret_cast<F>(dlsym(lib, name));
        if (!f) std::fprintf(stderr, "libcuda.so.1: no symbol %s\n", name);
        return f != nullptr;
    }
    // Loads the driver and makes device `ordinal`'s primary context (the one libmla uses)
    // current on this thread. false: no driver.
    bool load(int ordinal = 0) {
        lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!lib) return false;
        bool ok = sym(cuInit, "cuInit") && sym(cuDeviceGet, "cuDeviceGet") &&
                  sym(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain") &&
                  sym(cuCtxSetCurrent, "cuCtxSetCurrent") &&
                  sym(cuStreamCreate, "cuStreamCreate") &&
                  sym(cuStreamDestroy, "cuStreamDestroy_v2") &&
                  sym(cuStreamSynchronize, "cuStreamSynchronize") &&
                  sym(cuStreamBeginCapture, "cuStreamBeginCapture_v2") &&
                  sym(cuStreamEndCapture, "cuStreamEndCapture") &&
                  sym(cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags") &&
                  sym(cuGraphLaunch, "cuGraphLaunch") &&
                  sym(cuGraphExecDestroy, "cuGraphExecDestroy") &&
                  sym(cuGraphDestroy, "cuGraphDestroy") && sym(cuMemcpyHtoD, "cuMemcpyHtoD_v2") &&
                  sym(cuGetErrorName, "cuGetErrorName");
        if (!ok) return false;
        CUdevice dev = 0;
        CUcontext ctx = nullptr;
        return check(cuInit(0), "cuInit") && check(cuDeviceGet(&dev, ordinal), "cuDeviceGet") &&
               check(cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain") &&
               check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
    }
    bool check(CUresult r, const char* what) const {
        if (r == 0) return true;
        const char* name = "?";
        if (cuGetErrorName) cuGetErrorName(r, &name);
        std::fprintf(stderr, "%s failed: %d (%s)\n", what, r, name);
        return false;
    }
};

}  // namespace gpu_test
