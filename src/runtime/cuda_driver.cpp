// cuda_driver.cpp - mla::rt::Runtime over the CUDA driver API, loaded with dlopen (no CUDA header,
// no link-time libcuda dependency).
//
// Bootstrap (c-abi-and-style.md §2.2): open libcuda.so.1 (never the toolkit's libcuda.so stub),
// dlsym "cuGetProcAddress_v2" (5 arguments, CUDA >= 12 drivers) or else "cuGetProcAddress"
// (4 arguments, CUDA 11.3+), call cuInit(0), then resolve every entry point of the X-macro list
// below by its base name with a pinned cudaVersion (kCudaApiVersion) and
// CU_GET_PROC_ADDRESS_DEFAULT, checking both the returned pointer and the symbol status. The pin
// makes the driver hand out the ABI variant a CUDA 12.0 program would bind (cuMemAlloc ->
// cuMemAlloc_v2, cuEventDestroy -> cuEventDestroy_v2, ...), never a newer one with other
// semantics.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <type_traits>

#include "common/error.h"
#include "runtime/dl_library.h"
#include "runtime/fork_guard.h"
#include "runtime/runtime.h"

namespace mla::rt {
namespace {

// ---- The few CUDA driver types libmla needs (values from the CUDA driver API). ------------
using CUresult = int;
using CUdevice = int;
using CUcontext = void*;
using CUmodule = void*;
using CUfunction = void*;
using CUstream = void*;
using CUevent = void*;
using CUdeviceptr = unsigned long long;
using cuuint64_t = std::uint64_t;
using CUdriverProcAddressQueryResult = int;

constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_INVALID_VALUE = 1;
constexpr CUresult CUDA_ERROR_NOT_SUPPORTED = 801;
constexpr CUresult CUDA_ERROR_INVALID_CLUSTER_SIZE = 912;
constexpr CUresult CUDA_ERROR_STUB_LIBRARY = 34;
constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;
constexpr CUresult CUDA_ERROR_INVALID_DEVICE = 101;
constexpr int CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
constexpr int CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;
constexpr int CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT = 9;
constexpr cuuint64_t CU_GET_PROC_ADDRESS_DEFAULT = 0;
constexpr int CU_GET_PROC_ADDRESS_SUCCESS = 0;
constexpr int CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT = 2;
constexpr unsigned CU_EVENT_DEFAULT = 0;
// cuLaunchKernel "extra" tokens.
void* const CU_LAUNCH_PARAM_END = reinterpret_cast<void*>(0x00);
void* const CU_LAUNCH_PARAM_BUFFER_POINTER = reinterpret_cast<void*>(0x01);
void* const CU_LAUNCH_PARAM_BUFFER_SIZE = reinterpret_cast<void*>(0x02);

// cuLaunchKernelEx's config (CUlaunchConfig, CUlaunchAttribute of the CUDA 12 driver API; the
// attribute value is a 64-byte union of which libmla sets one int, programmatic stream
// serialization, or three unsigned, the cluster dimensions).
constexpr int CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4;
constexpr int CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION = 6;
struct CUlaunchAttribute {
    int id;
    char pad[4];
    union alignas(8) {
        char bytes[64];
        int programmatic_stream_serialization_allowed;
        unsigned cluster_dim[3];  // x, y, z
    } value;
};
struct CUlaunchConfig {
    unsigned grid_x, grid_y, grid_z, block_x, block_y, block_z, shared_bytes;
    CUstream stream;
    CUlaunchAttribute* attrs;
    unsigned num_attrs;
};
static_assert(sizeof(CUlaunchAttribute) == 72 && offsetof(CUlaunchAttribute, value) == 8 &&
                  sizeof(CUlaunchConfig) == 56 && offsetof(CUlaunchConfig, stream) == 32 &&
                  offsetof(CUlaunchConfig, attrs) == 40 && offsetof(CUlaunchConfig, num_attrs) == 48,
              "CUlaunchAttribute / CUlaunchConfig of the CUDA 12 driver API (x86-64 and aarch64 layout)");

// cuTensorMapEncodeTiled's enum values that libmla passes (CUtensorMapDataType,
// CUtensorMapSwizzle, CUtensorMapL2promotion of the CUDA 12 driver API).
constexpr int CU_TENSOR_MAP_DATA_TYPE_UINT8 = 0;
constexpr int CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 = 9;
constexpr int CU_TENSOR_MAP_SWIZZLE_128B = 3;
constexpr int CU_TENSOR_MAP_L2_PROMOTION_NONE = 0;
constexpr int CU_TENSOR_MAP_L2_PROMOTION_L2_64B = 1;
constexpr int CU_TENSOR_MAP_L2_PROMOTION_L2_128B = 2;
constexpr int CU_TENSOR_MAP_L2_PROMOTION_L2_256B = 3;

// The ABI version every entry point is resolved at (see the file comment).
constexpr int kCudaApiVersion = 12000;

using GetProcAddressV2 = CUresult(const char*, void**, int, cuuint64_t,
                                  CUdriverProcAddressQueryResult*);
using GetProcAddressV1 = CUresult(const char*, void**, int, cuuint64_t);

// X(name, function type): every driver entry point libmla calls, resolved by its base name.
#define MLA_CUDA_DRIVER_SYMBOLS(X)                                                            \
    X(cuGetErrorName, CUresult(CUresult, const char**))                                       \
    X(cuGetErrorString, CUresult(CUresult, const char**))                                     \
    X(cuInit, CUresult(unsigned))                                                             \
    X(cuDeviceGetCount, CUresult(int*))                                                       \
    X(cuDeviceGet, CUresult(CUdevice*, int))                                                  \
    X(cuDeviceGetAttribute, CUresult(int*, int, CUdevice))                                    \
    X(cuDevicePrimaryCtxRetain, CUresult(CUcontext*, CUdevice))                               \
    X(cuCtxSetCurrent, CUresult(CUcontext))                                                   \
    X(cuModuleLoadData, CUresult(CUmodule*, const void*))                                     \
    X(cuModuleUnload, CUresult(CUmodule))                                                     \
    X(cuModuleGetFunction, CUresult(CUfunction*, CUmodule, const char*))                      \
    X(cuFuncSetAttribute, CUresult(CUfunction, int, int))                                     \
    X(cuLaunchKernel, CUresult(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,  \
                               unsigned, unsigned, CUstream, void**, void**))                 \
    X(cuLaunchKernelEx, CUresult(const CUlaunchConfig*, CUfunction, void**, void**))          \
    X(cuMemAlloc, CUresult(CUdeviceptr*, size_t))                                             \
    X(cuMemFree, CUresult(CUdeviceptr))                                                       \
    X(cuMemcpyHtoDAsync, CUresult(CUdeviceptr, const void*, size_t, CUstream))                \
    X(cuMemcpyDtoHAsync, CUresult(void*, CUdeviceptr, size_t, CUstream))                      \
    X(cuMemsetD8Async, CUresult(CUdeviceptr, unsigned char, size_t, CUstream))                \
    X(cuStreamSynchronize, CUresult(CUstream))                                                \
    X(cuEventCreate, CUresult(CUevent*, unsigned))                                            \
    X(cuEventDestroy, CUresult(CUevent))                                                      \
    X(cuEventRecord, CUresult(CUevent, CUstream))                                             \
    X(cuEventSynchronize, CUresult(CUevent))                                                  \
    X(cuEventElapsedTime, CUresult(float*, CUevent, CUevent))

struct CudaSymbols {
#define MLA_DECLARE_PFN(name, type) std::add_pointer_t<type> name = nullptr;
    MLA_CUDA_DRIVER_SYMBOLS(MLA_DECLARE_PFN)
#undef MLA_DECLARE_PFN
};

class CudaDriver final : public Runtime {
public:
    // Loads the driver; on failure records status + message (thrown by every later use).
    void load();

    mla_status load_status = MLA_SUCCESS;
    std::string load_message;

    const char* name() const override { return "cuda"; }
    const std::string& library_path() const override { return path_; }
    bool is_fake() const override { return fake_; }

    int device_count() override {
        check_pid();
        int n = 0;
        check(s_.cuDeviceGetCount(&n), MLA_ERROR_LAUNCH, "cuDeviceGetCount");
        return n;
    }

    void set_device(int ordinal) override {
        check_pid();
        CUcontext ctx = nullptr;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            auto it = contexts_.find(ordinal);
            if (it == contexts_.end()) {
                CUdevice dev = get_device(ordinal);
                check(s_.cuDevicePrimaryCtxRetain(&ctx, dev), MLA_ERROR_NO_DEVICE,
                      "cuDevicePrimaryCtxRetain");
                contexts_[ordinal] = ctx;
            } else {
                ctx = it->second;
            }
        }
        check(s_.cuCtxSetCurrent(ctx), MLA_ERROR_LAUNCH, "cuCtxSetCurrent");
    }

    std::string device_arch(int ordinal) override {
        check_pid();
        CUdevice dev = get_device(ordinal);
        int major = 0, minor = 0;
        check(s_.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev),
              MLA_ERROR_LAUNCH, "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MAJOR)");
        check(s_.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev),
              MLA_ERROR_LAUNCH, "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MINOR)");
        // Hopper's arch-specific features (wgmma, setmaxnreg) need the "a" target: libmla's
        // sm_90 cubins are built for sm_90a, so a 9.0 device is "sm_90a".
        if (major == 9 && minor == 0) return "sm_90a";
        return "sm_" + std::to_string(major) + std::to_string(minor);
    }

    int device_num_cus(int ordinal) override {
        check_pid();
        CUdevice dev = get_device(ordinal);
        int n = 0;
        check(s_.cuDeviceGetAttribute(&n, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev),
              MLA_ERROR_LAUNCH, "cuDeviceGetAttribute(MULTIPROCESSOR_COUNT)");
        return n;
    }

    Module module_load_data(const void* image, size_t bytes) override {
        check_pid();
        MLA_CHECK_ARG(image != nullptr && bytes > 0, "module_load_data: empty code object");
        CUmodule m = nullptr;
        check(s_.cuModuleLoadData(&m, image), MLA_ERROR_CODE_OBJECT, "cuModuleLoadData");
        return m;
    }

    void module_unload(Module module) override {
        check_pid();
        check(s_.cuModuleUnload(module), MLA_ERROR_CODE_OBJECT, "cuModuleUnload");
    }

    Function module_get_function(Module module, const char* name) override {
        check_pid();
        CUfunction f = nullptr;
        CUresult r = s_.cuModuleGetFunction(&f, module, name);
        if (r != CUDA_SUCCESS)
            MLA_FAIL(MLA_ERROR_CODE_OBJECT, "kernel symbol '" << name << "' not found in the code "
                                                              "object: " << describe(r));
        return f;
    }

    void set_max_dynamic_shared(Function f, int bytes) override {
        check_pid();
        check(s_.cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes),
              MLA_ERROR_LAUNCH, "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
    }
    void set_smem_carveout(Function f, int percent) override {
        check_pid();
        check(s_.cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, percent),
              MLA_ERROR_LAUNCH, "cuFuncSetAttribute(PREFERRED_SHARED_MEMORY_CARVEOUT)");
    }

    void launch(Function f, Dim3 grid, Dim3 block, unsigned dynamic_shared, Stream stream,
                const void* args, size_t args_bytes) override {
        launch_with(f, grid, block, dynamic_shared, stream, args, args_bytes, false);
    }

    void launch_programmatic(Function f, Dim3 grid, Dim3 block, unsigned dynamic_shared, Stream stream,
                             const void* args, size_t args_bytes) override {
        launch_with(f, grid, block, dynamic_shared, stream, args, args_bytes, true);
    }

    // cuLaunchKernelEx with CLUSTER_DIMENSION {cluster, 1, 1} (and PROGRAMMATIC_STREAM_SERIALIZATION
    // where programmatic); false where the driver refuses it (NOT_SUPPORTED, INVALID_VALUE,
    // INVALID_CLUSTER_SIZE): the caller launches plainly.
    bool launch_cluster(Function f, Dim3 grid, Dim3 block, unsigned dynamic_shared, Stream stream, const void* args,
                        size_t args_bytes, bool programmatic, unsigned cluster) override {
        check_pid();
        PackedArgs pa(args, args_bytes);
        const CUresult r = launch_ex(f, grid, block, dynamic_shared, stream, pa.extra, programmatic, cluster);
        if (r == CUDA_ERROR_NOT_SUPPORTED || r == CUDA_ERROR_INVALID_VALUE || r == CUDA_ERROR_INVALID_CLUSTER_SIZE)
            return false;
        check(r, MLA_ERROR_LAUNCH, "cuLaunchKernelEx(CLUSTER_DIMENSION)");
        return true;
    }

    void* malloc(size_t bytes) override {
        check_pid();
        CUdeviceptr p = 0;
        check(s_.cuMemAlloc(&p, bytes), MLA_ERROR_LAUNCH, "cuMemAlloc");
        return reinterpret_cast<void*>(static_cast<uintptr_t>(p));
    }
    void free(void* ptr) override {
        check_pid();
        check(s_.cuMemFree(dptr(ptr)), MLA_ERROR_LAUNCH, "cuMemFree");
    }
    void memcpy_htod(void* dst, const void* src, size_t bytes, Stream stream) override {
        check_pid();
        check(s_.cuMemcpyHtoDAsync(dptr(dst), src, bytes, stream), MLA_ERROR_LAUNCH,
              "cuMemcpyHtoDAsync");
    }
    void memcpy_dtoh(void* dst, const void* src, size_t bytes, Stream stream) override {
        check_pid();
        check(s_.cuMemcpyDtoHAsync(dst, dptr(src), bytes, stream), MLA_ERROR_LAUNCH,
              "cuMemcpyDtoHAsync");
    }
    void memset_d8(void* dst, unsigned char value, size_t bytes, Stream stream) override {
        check_pid();
        check(s_.cuMemsetD8Async(dptr(dst), value, bytes, stream), MLA_ERROR_LAUNCH,
              "cuMemsetD8Async");
    }
    void stream_synchronize(Stream stream) override {
        check_pid();
        check(s_.cuStreamSynchronize(stream), MLA_ERROR_LAUNCH, "cuStreamSynchronize");
    }
    Event event_create() override {
        check_pid();
        CUevent e = nullptr;
        check(s_.cuEventCreate(&e, CU_EVENT_DEFAULT), MLA_ERROR_LAUNCH, "cuEventCreate");
        return e;
    }
    void event_destroy(Event e) override {
        check_pid();
        check(s_.cuEventDestroy(e), MLA_ERROR_LAUNCH, "cuEventDestroy");
    }
    void event_record(Event e, Stream stream) override {
        check_pid();
        check(s_.cuEventRecord(e, stream), MLA_ERROR_LAUNCH, "cuEventRecord");
    }
    float event_elapsed_ms(Event start, Event stop) override {
        check_pid();
        check(s_.cuEventSynchronize(stop), MLA_ERROR_LAUNCH, "cuEventSynchronize");
        float ms = 0.f;
        check(s_.cuEventElapsedTime(&ms, start, stop), MLA_ERROR_LAUNCH, "cuEventElapsedTime");
        return ms;
    }

    bool encode_tensor_map(void* map, int elem_bytes, const void* base, unsigned rank, const uint64_t* dims,
                           const uint64_t* strides_bytes, const uint32_t* box, unsigned l2_promotion_bytes) override {
        check_pid();
        if (!tensor_map_encode_ || (elem_bytes != 1 && elem_bytes != 2)) return false;
        int promotion = CU_TENSOR_MAP_L2_PROMOTION_NONE;
        switch (l2_promotion_bytes) {
            case 0: break;
            case 64: promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_64B; break;
            case 128: promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_128B; break;
            case 256: promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_256B; break;
            default: return false;
        }
        const uint32_t ones[5] = {1, 1, 1, 1, 1};
        const int type = elem_bytes == 1 ? CU_TENSOR_MAP_DATA_TYPE_UINT8 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
        return tensor_map_encode_(map, type, rank, const_cast<void*>(base), dims, strides_bytes, box, ones,
                                  0 /* interleave none */, CU_TENSOR_MAP_SWIZZLE_128B, promotion,
                                  0 /* OOB fill none: zeros */) == CUDA_SUCCESS;
    }

private:
    // The packed argument buffer of a launch, as cuLaunchKernel's "extra" list (which points at
    // `size`, so the object stays where it was built).
    struct PackedArgs {
        size_t size;
        void* extra[5];
        PackedArgs(const void* args, size_t bytes)
            : size(bytes), extra{CU_LAUNCH_PARAM_BUFFER_POINTER, const_cast<void*>(args), CU_LAUNCH_PARAM_BUFFER_SIZE,
                                 &size, CU_LAUNCH_PARAM_END} {}
        PackedArgs(const PackedArgs&) = delete;
        PackedArgs& operator=(const PackedArgs&) = delete;
    };

    // cuLaunchKernelEx with the attributes asked for: CLUSTER_DIMENSION {cluster, 1, 1} where
    // cluster > 1, PROGRAMMATIC_STREAM_SERIALIZATION = 1 where programmatic.
    CUresult launch_ex(Function f, Dim3 grid, Dim3 block, unsigned dynamic_shared, Stream stream, void** extra,
                       bool programmatic, unsigned cluster) {
        CUlaunchAttribute attr[2]{};
        unsigned n = 0;
        if (cluster > 1) {
            attr[n].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
            attr[n].value.cluster_dim[0] = cluster;
            attr[n].value.cluster_dim[1] = attr[n].value.cluster_dim[2] = 1;
            ++n;
        }
        if (programmatic) {
            attr[n].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
            attr[n].value.programmatic_stream_serialization_allowed = 1;
            ++n;
        }
        const CUlaunchConfig cfg{grid.x, grid.y, grid.z, block.x, block.y, block.z, dynamic_shared, stream, attr, n};
        return s_.cuLaunchKernelEx(&cfg, f, nullptr, extra);
    }

    // The packed argument buffer ("extra" form); programmatic: cuLaunchKernelEx with
    // PROGRAMMATIC_STREAM_SERIALIZATION = 1, else cuLaunchKernel. A driver that refuses the
    // attribute (NOT_SUPPORTED, INVALID_VALUE) gets the plain launch: the kernels wait with
    // griddepcontrol.wait, which returns at once after a plain launch, so the result is the same.
    void launch_with(Function f, Dim3 grid, Dim3 block, unsigned dynamic_shared, Stream stream, const void* args,
                     size_t args_bytes, bool programmatic) {
        check_pid();
        PackedArgs pa(args, args_bytes);
        if (!programmatic) {
            check(s_.cuLaunchKernel(f, grid.x, grid.y, grid.z, block.x, block.y, block.z,
                                    dynamic_shared, stream, nullptr, pa.extra),
                  MLA_ERROR_LAUNCH, "cuLaunchKernel");
            return;
        }
        const CUresult r = launch_ex(f, grid, block, dynamic_shared, stream, pa.extra, true, 1);
        if (r == CUDA_ERROR_NOT_SUPPORTED || r == CUDA_ERROR_INVALID_VALUE) {
            launch_with(f, grid, block, dynamic_shared, stream, args, args_bytes, false);
            return;
        }
        check(r, MLA_ERROR_LAUNCH, "cuLaunchKernelEx(PROGRAMMATIC_STREAM_SERIALIZATION)");
    }

    static CUdeviceptr dptr(const void* p) {
        return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(p));
    }

    void check_pid() const {
        if (fork_guard_forked() && getpid() != pid_)
            MLA_FAIL(MLA_ERROR_RUNTIME_UNAVAILABLE,
                     "the CUDA driver was initialised in process " << pid_ << " and cannot be used "
                     "after fork() (this is process " << getpid() << "); create contexts in the "
                     "child only, or fork before the first GPU call");
    }

    // "CUDA_ERROR_INVALID_IMAGE (device kernel image is invalid) [200]"
    std::string describe(CUresult r) const {
        const char* nm = nullptr;
        const char* str = nullptr;
        if (s_.cuGetErrorName) s_.cuGetErrorName(r, &nm);
        if (s_.cuGetErrorString) s_.cuGetErrorString(r, &str);
        std::string out = nm ? nm : "CUDA error";
        if (str) out += std::string(" (") + str + ")";
        return out + " [" + std::to_string(r) + "]";
    }

    void check(CUresult r, mla_status status, const char* what) const {
        if (r == CUDA_SUCCESS) return;
        if (r == CUDA_ERROR_NO_DEVICE || r == CUDA_ERROR_INVALID_DEVICE)
            status = MLA_ERROR_NO_DEVICE;
        MLA_FAIL(status, what << " failed: " << describe(r));
    }

    CUdevice get_device(int ordinal) {
        CUdevice dev = 0;
        CUresult r = s_.cuDeviceGet(&dev, ordinal);
        if (r != CUDA_SUCCESS)
            MLA_FAIL(MLA_ERROR_NO_DEVICE, "no CUDA device " << ordinal << ": " << describe(r));
        return dev;
    }

    CudaSymbols s_;
    // cuTensorMapEncodeTiled (CUDA 12.0+), optional: without it bf16 tiles load by cp.async
    using TensorMapEncodeTiled = CUresult(void*, int, uint32_t, void*, const cuuint64_t*, const cuuint64_t*,
                                          const uint32_t*, const uint32_t*, int, int, int, int);
    TensorMapEncodeTiled* tensor_map_encode_ = nullptr;
    std::string path_;
    bool fake_ = false;
    pid_t pid_ = 0;
    std::mutex mutex_;
    std::map<int, CUcontext> contexts_;  // retained primary contexts (never released)
};

void CudaDriver::load() {
    fork_guard_install();
    pid_ = getpid();
    DlLibrary lib = open_dl_library("MLA_LIBCUDA_PATH", {"libcuda.so.1"});
    if (!lib.handle) {
        load_status = MLA_ERROR_RUNTIME_UNAVAILABLE;
        load_message = "CUDA driver library (libcuda.so.1) not found; tried:\n" + lib.tried +
                       "install the NVIDIA driver or point MLA_LIBCUDA_PATH at libcuda.so.1";
        return;
    }
    path_ = lib.path;
    fake_ = dl_symbol(lib.handle, "fake_rt_is_fake_runtime") != nullptr;

    auto* gpa2 = reinterpret_cast<GetProcAddressV2*>(dl_symbol(lib.handle, "cuGetProcAddress_v2"));
    auto* gpa1 = reinterpret_cast<GetProcAddressV1*>(dl_symbol(lib.handle, "cuGetProcAddress"));
    if (!gpa2 && !gpa1) {
        load_status = MLA_ERROR_RUNTIME_UNAVAILABLE;
        load_message = path_ + " exports neither cuGetProcAddress_v2 nor cuGetProcAddress: the "
                               "driver is older than CUDA 11.3 or this is not libcuda";
        return;
    }
    // cuInit comes first; resolve it the same way as every other entry point.
    auto resolve = [&](const char* sym, void** pfn) -> std::string {
        *pfn = nullptr;
        CUresult r;
        CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SUCCESS;
        if (gpa2)
            r = gpa2(sym, pfn, kCudaApiVersion, CU_GET_PROC_ADDRESS_DEFAULT, &found);
        else
            r = gpa1(sym, pfn, kCudaApiVersion, CU_GET_PROC_ADDRESS_DEFAULT);
        if (r != CUDA_SUCCESS)
            return "cuGetProcAddress(" + std::string(sym) + ") returned " + std::to_string(r);
        if (found == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT)
            return std::string(sym) + ": the driver is older than CUDA " +
                   std::to_string(kCudaApiVersion / 1000) + "." +
                   std::to_string(kCudaApiVersion % 1000 / 10);
        if (found != CU_GET_PROC_ADDRESS_SUCCESS || *pfn == nullptr)
            return std::string(sym) + ": symbol not found";
        return "";
    };

    // cuInit (and the error-name helpers) first, then cuInit(0), then everything else.
    std::string err = resolve("cuInit", reinterpret_cast<void**>(&s_.cuInit));
    if (!err.empty()) {
        load_status = MLA_ERROR_RUNTIME_UNAVAILABLE;
        load_message = "CUDA driver " + path_ + ": " + err;
        return;
    }
    resolve("cuGetErrorName", reinterpret_cast<void**>(&s_.cuGetErrorName));
    resolve("cuGetErrorString", reinterpret_cast<void**>(&s_.cuGetErrorString));
    CUresult r = s_.cuInit(0);
    if (r == CUDA_ERROR_NO_DEVICE) {
        load_status = MLA_ERROR_NO_DEVICE;
        load_message = "cuInit: the CUDA driver " + path_ + " reports no device: " + describe(r);
        return;
    }
    if (r == CUDA_ERROR_STUB_LIBRARY) {
        load_status = MLA_ERROR_RUNTIME_UNAVAILABLE;
        load_message = path_ + " is the CUDA toolkit's stub library, not the driver: " +
                       describe(r);
        return;
    }
    if (r != CUDA_SUCCESS) {
        load_status = MLA_ERROR_RUNTIME_UNAVAILABLE;
        load_message = "cuInit failed for the CUDA driver " + path_ + ": " + describe(r);
        return;
    }

    std::string missing;
#define MLA_RESOLVE(name, type)                                                       \
    {                                                                                 \
        void* p = nullptr;                                                            \
        std::string e = resolve(#name, &p);                                           \
        if (!e.empty()) missing += "  " + e + "\n";                                   \
        s_.name = reinterpret_cast<std::add_pointer_t<type>>(p);                                         \
    }
    MLA_CUDA_DRIVER_SYMBOLS(MLA_RESOLVE)
#undef MLA_RESOLVE
    if (!missing.empty()) {
        load_status = MLA_ERROR_RUNTIME_UNAVAILABLE;
        load_message = "CUDA driver " + path_ + " lacks entry points libmla needs:\n" + missing;
    }
    if (!resolve("cuTensorMapEncodeTiled", reinterpret_cast<void**>(&tensor_map_encode_)).empty())
        tensor_map_encode_ = nullptr;  // optional (encode_tensor_map returns false)
}

}  // namespace

Runtime& cuda_runtime() {
    static CudaDriver driver;
    static std::once_flag once;
    std::call_once(once, [] { driver.load(); });
    if (driver.load_status != MLA_SUCCESS) throw Error(driver.load_status, driver.load_message);
    return driver;
}

}  // namespace mla::rt
