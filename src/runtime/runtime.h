// runtime.h - the GPU runtime interface, one implementation per vendor. Reads like a spec:
// every call throws mla::Error on failure (status in brackets), never returns an error code.
// The core includes no GPU header: handles are opaque pointers, launch arguments are bytes.
//
//   cuda_driver.cpp : libcuda.so.1 through dlopen + cuGetProcAddress (sm_*)
//   hip_runtime.cpp : libamdhip64.so through dlopen + dlsym / hipGetProcAddress (gfx*)
// Library search: MLA_LIBCUDA_PATH / MLA_LIBHIP_PATH, then an already-loaded copy (RTLD_NOLOAD),
// then the soname (an override that is set is the only candidate: see dl_library.h). Loading
// happens once per process (std::call_once); the outcome, success or the failure message listing
// every path tried, is cached. The pid is recorded at load: any call from a fork()ed child fails
// with RUNTIME_UNAVAILABLE (a GPU runtime does not survive fork).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace mla::rt {

using Module = void*;    // CUmodule / hipModule_t
using Function = void*;  // CUfunction / hipFunction_t
using Stream = void*;    // CUstream / hipStream_t (nullptr = default stream)
using Event = void*;     // CUevent / hipEvent_t

struct Dim3 {
    unsigned x = 1, y = 1, z = 1;
};

class Runtime {
public:
    virtual ~Runtime() = default;

    // "cuda" or "hip".
    virtual const char* name() const = 0;
    // Absolute path (or soname) of the loaded runtime library.
    virtual const std::string& library_path() const = 0;
    // True when the loaded library is libmla's test fake (tests/fake_runtime: it exports
    // fake_rt_is_fake_runtime). A context on a fake runtime may take an explicit arch that
    // differs from the device's (mla_context_options.arch).
    virtual bool is_fake() const = 0;

    // Number of devices [LAUNCH if the runtime call fails].
    virtual int device_count() = 0;
    // Makes `ordinal` current on this thread (CUDA: retains and sets its primary context)
    // [NO_DEVICE if there is no such device].
    virtual void set_device(int ordinal) = 0;
    // Arch string of a device: "sm_90a" for compute capability 9.0, "sm_<maj><min>" otherwise;
    // HIP: gcnArchName without features ("gfx942").
    virtual std::string device_arch(int ordinal) = 0;
    // Multiprocessor / compute-unit count.
    virtual int device_num_cus(int ordinal) = 0;

    // Loads a code object image from memory (cuModuleLoadData / hipModuleLoadData)
    // [CODE_OBJECT with the runtime's message].
    virtual Module module_load_data(const void* image, size_t bytes) = 0;
    virtual void module_unload(Module module) = 0;
    // Finds a kernel by (mangled) name [CODE_OBJECT naming the symbol].
    virtual Function module_get_function(Module module, const char* name) = 0;
    // Raises the dynamic shared-memory limit of a kernel (CUDA: cuFuncSetAttribute
    // MAX_DYNAMIC_SHARED_SIZE_BYTES; HIP: no-op) [LAUNCH].
    virtual void set_max_dynamic_shared(Function f, int bytes) = 0;
    // The preferred share of the SM's unified L1 / shared memory given to shared memory, in
    // percent 0..100, or -1 for the driver's choice (CUDA: cuFuncSetAttribute
    // PREFERRED_SHARED_MEMORY_CARVEOUT; the tables' launch_carveout column). A hint to the driver;
    // session 26 measured no gain from it on any row, and the slim reducer runs beside the decode
    // without it (docs/performance.md). Runtimes without it: no-op (this default) [LAUNCH].
    virtual void set_smem_carveout(Function, int) {}
    // Launches with a packed argument buffer (CU_LAUNCH_PARAM_BUFFER_POINTER /
    // HIP_LAUNCH_PARAM_BUFFER_POINTER "extra" form) [LAUNCH].
    virtual void launch(Function f, Dim3 grid, Dim3 block, unsigned dynamic_shared, Stream stream,
                        const void* args, size_t args_bytes) = 0;
    // launch() as a programmatic dependent launch: the kernel may start while the kernel before
    // it in the stream still runs, and must execute `griddepcontrol.wait` before it reads that
    // kernel's output (CUDA: cuLaunchKernelEx with PROGRAMMATIC_STREAM_SERIALIZATION, sm_90+).
    // Runtimes without it launch plainly (this default) [LAUNCH].
    virtual void launch_programmatic(Function f, Dim3 grid, Dim3 block, unsigned dynamic_shared, Stream stream,
                                     const void* args, size_t args_bytes) {
        launch(f, grid, block, dynamic_shared, stream, args, args_bytes);
    }
    // launch() / launch_programmatic() as a grid of thread-block clusters of `cluster` (> 1) CTAs
    // along x (CUDA: cuLaunchKernelEx with CLUSTER_DIMENSION {cluster, 1, 1}, sm_90+; grid.x a
    // multiple of it, which the caller ensures). Returns false where the runtime has no clusters
    // (this default: HIP) or the driver refuses the attribute; the caller then launches plainly,
    // so a kernel launched this way must also run correctly without clusters [LAUNCH].
    virtual bool launch_cluster(Function, Dim3, Dim3, unsigned, Stream, const void*, size_t, bool /*programmatic*/,
                                unsigned /*cluster*/) {
        return false;
    }
    // launch_programmatic() where `programmatic` (a table row's launch_pdl), else launch(); as
    // clusters of `cluster` CTAs (a table row's launch_cluster) where cluster > 1 and the runtime
    // has them.
    void launch_as(bool programmatic, Function f, Dim3 grid, Dim3 block, unsigned dynamic_shared, Stream stream,
                   const void* args, size_t args_bytes, unsigned cluster = 1) {
        if (cluster > 1 &&
            launch_cluster(f, grid, block, dynamic_shared, stream, args, args_bytes, programmatic, cluster))
            return;
        if (programmatic)
            launch_programmatic(f, grid, block, dynamic_shared, stream, args, args_bytes);
        else
            launch(f, grid, block, dynamic_shared, stream, args, args_bytes);
    }

    // A TMA tensor map (CUDA: cuTensorMapEncodeTiled) of a tensor in device memory whose elements
    // are elem_bytes wide (2: bf16, 1: bytes, e.g. fp8 e4m3fn codes), written to `map` (128 bytes,
    // 128-byte aligned): `rank` (<= 5) dims, innermost first, of dims[i] elements; strides_bytes[i]
    // bytes between consecutive indices of dim i + 1 (rank - 1 values); boxes of box[i] elements;
    // 128-byte swizzle, L2 promotion of l2_promotion_bytes (0 none, 64, 128 or 256: how much the
    // L2 fetches per request); out-of-bounds elements of a box land as zeros. Returns false where
    // the runtime has no tensor maps (HIP, a CUDA driver without the entry point: this default),
    // elem_bytes or the promotion is none of those, or the driver refuses the arguments; the
    // caller then loads another way.
    virtual bool encode_tensor_map(void* map, int elem_bytes, const void* base, unsigned rank, const uint64_t* dims,
                                   const uint64_t* strides_bytes, const uint32_t* box, unsigned l2_promotion_bytes) {
        (void)map, (void)elem_bytes, (void)base, (void)rank, (void)dims, (void)strides_bytes, (void)box,
            (void)l2_promotion_bytes;
        return false;
    }

    // Memory, streams and events for tests, benchmarks and the CLI [LAUNCH].
    virtual void* malloc(size_t bytes) = 0;
    virtual void free(void* ptr) = 0;
    virtual void memcpy_htod(void* dst, const void* src, size_t bytes, Stream stream) = 0;
    virtual void memcpy_dtoh(void* dst, const void* src, size_t bytes, Stream stream) = 0;
    virtual void memset_d8(void* dst, unsigned char value, size_t bytes, Stream stream) = 0;
    virtual void stream_synchronize(Stream stream) = 0;
    virtual Event event_create() = 0;
    virtual void event_destroy(Event e) = 0;
    virtual void event_record(Event e, Stream stream) = 0;
    // Milliseconds between two recorded events (synchronises on `stop`).
    virtual float event_elapsed_ms(Event start, Event stop) = 0;
};

// The process-wide runtimes, loaded on first call [RUNTIME_UNAVAILABLE, listing paths tried;
// NO_DEVICE when the driver loads but cuInit/hipInit report no device].
Runtime& cuda_runtime();
Runtime& hip_runtime();

// "cuda" for sm_*, "hip" for gfx*; [ARCH_NOT_BUILT] otherwise.
Runtime& runtime_for_arch(const std::string& arch);

}  // namespace mla::rt
