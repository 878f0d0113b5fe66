// hip_runtime.cpp - mla::rt::Runtime over the HIP runtime (libamdhip64.so), loaded with dlopen
// (no HIP header, no link-time dependency). Used for the gfx* archs and aiter's code objects.
//
// libamdhip64 exports plain names and signals ABI breaks with new names
// (hipGetDevicePropertiesR0600), so entry points are taken with dlsym (c-abi-and-style.md §2.3).
//
// Device queries, and the choices made to stay independent of the HIP headers' layouts:
//  * CU count: hipDeviceGetAttribute(hipDeviceAttributeMultiprocessorCount = 63), the value of
//    that enumerator since the ROCm 5 reordering of hipDeviceAttribute_t.
//  * Arch: hipDeviceProp_t changed layout in ROCm 6 (R0600) and no device attribute carries
//    gcnArchName, so hipGetDevicePropertiesR0600 (else hipGetDeviceProperties) fills an oversized
//    zeroed buffer and the arch is read from the one NUL-started string there that begins with
//    "gfx" (gcnArchName, e.g. "gfx942:sramecc+:xnack-"), cut at the first ':'.
#include <unistd.h>

#include <cctype>
#include <cstring>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "common/error.h"
#include "runtime/dl_library.h"
#include "runtime/fork_guard.h"
#include "runtime/runtime.h"

namespace mla::rt {
namespace {

using hipError_t = int;
constexpr hipError_t hipSuccess = 0;
constexpr hipError_t hipErrorNoDevice = 100;
constexpr hipError_t hipErrorInvalidDevice = 101;
constexpr int hipDeviceAttributeMultiprocessorCount = 63;
// hipModuleLaunchKernel "extra" tokens (note: END is 3 on HIP, 0 on CUDA).
void* const HIP_LAUNCH_PARAM_BUFFER_POINTER = reinterpret_cast<void*>(0x01);
void* const HIP_LAUNCH_PARAM_BUFFER_SIZE = reinterpret_cast<void*>(0x02);
void* const HIP_LAUNCH_PARAM_END = reinterpret_cast<void*>(0x03);
// Larger than any hipDeviceProp_t so far (about 1.5 KiB in ROCm 6).
constexpr size_t kDevicePropBytes = 16384;

// X(name, function type): required entry points.
#define MLA_HIP_SYMBOLS(X)                                                                  \
    X(hipGetErrorName, const char*(hipError_t))                                             \
    X(hipGetErrorString, const char*(hipError_t))                                           \
    X(hipInit, hipError_t(unsigned))                                                        \
    X(hipGetDeviceCount, hipError_t(int*))                                                  \
    X(hipSetDevice, hipError_t(int))                                                        \
    X(hipDeviceGetAttribute, hipError_t(int*, int, int))                                    \
    X(hipModuleLoadData, hipError_t(void**, const void*))                                   \
    X(hipModuleUnload, hipError_t(void*))                                                   \
    X(hipModuleGetFunction, hipError_t(void**, void*, const char*))                         \
    X(hipModuleLaunchKernel, hipError_t(void*, unsigned, unsigned, unsigned, unsigned,      \
                                        unsigned, unsigned, unsigned, void*, void**, void**)) \
    X(hipMalloc, hipError_t(void**, size_t))                                                \
    X(hipFree, hipError_t(void*))                                                           \
    X(hipMemcpyHtoDAsync, hipError_t(void*, void*, size_t, void*))                          \
    X(hipMemcpyDtoHAsync, hipError_t(void*, void*, size_t, void*))                          \
    X(hipMemsetD8Async, hipError_t(void*, unsigned char, size_t, void*))                    \
    X(hipStreamSynchronize, hipError_t(void*))                                              \
    X(hipEventCreate, hipError_t(void**))                                                   \
    X(hipEventDestroy, hipError_t(void*))                                                   \
    X(hipEventRecord, hipError_t(void*, void*))                                             \
    X(hipEventSynchronize, hipError_t(void*))                                               \
    X(hipEventElapsedTime, hipError_t(float*, void*, void*))

using GetDeviceProperties = hipError_t(void*, int);

struct HipSymbols {
#define MLA_DECLARE_PFN(name, type) std::add_pointer_t<type> name = nullptr;
    MLA_HIP_SYMBOLS(MLA_DECLARE_PFN)
#undef MLA_DECLARE_PFN
    GetDeviceProperties* get_props = nullptr;  // R0600 variant when present
    const char* get_props_name = "";
};

// The gcnArchName in a device-properties buffer, without feature suffixes ("" if none).
std::string find_gfx_arch(const unsigned char* buf, size_t n) {
    for (size_t p = 0; p + 4 < n; ++p) {
        if ((p == 0 || buf[p - 1] == 0) && buf[p] == 'g' && buf[p + 1] == 'f' &&
            buf[p + 2] == 'x' && std::isalnum(buf[p + 3])) {
            std::string arch;
            for (size_t i = p; i < n && buf[i] && buf[i] != ':'; ++i) arch += char(buf[i]);
            return arch;
        }
    }
    return "";
}

class HipRuntime final : public Runtime {
public:
    void load();
    mla_status load_status = MLA_SUCCESS;
    std::string load_message;

    const char* name() const override { return "hip"; }
    const std::string& library_path() const override { return path_; }
    bool is_fake() const override { return fake_; }

    int device_count() override {
        check_pid();
        int n = 0;
        check(s_.hipGetDeviceCount(&n), MLA_ERROR_LAUNCH, "hipGetDeviceCount");
        return n;
    }
    void set_device(int ordinal) override {
        check_pid();
        check(s_.hipSetDevice(ordinal), MLA_ERROR_NO_DEVICE, "hipSetDevice");
    }
    std::string device_arch(int ordinal) override {
        check_pid();
        std::vector<unsigned char> buf(kDevicePropBytes, 0);
        check(s_.get_props(buf.data(), ordinal), MLA_ERROR_NO_DEVICE, s_.get_props_name);
        std::string arch = find_gfx_arch(buf.data(), buf.size());
        if (arch.empty())
            MLA_FAIL(MLA_ERROR_NO_DEVICE, s_.get_props_name << " gave no gcnArchName for device "
                                                            << ordinal);
        return arch;
    }
    int device_num_cus(int ordinal) override {
        check_pid();
        int n = 0;
        check(s_.hipDeviceGetAttribute(&n, hipDeviceAttributeMultiprocessorCount, ordinal),
              MLA_ERROR_LAUNCH, "hipDeviceGetAttribute(MultiprocessorCount)");
        return n;
    }
    Module module_load_data(const void* image, size_t bytes) override {
        check_pid();
        MLA_CHECK_ARG(image != nullptr && bytes > 0, "module_load_data: empty code object");
        void* m = nullptr;
        check(s_.hipModuleLoadData(&m, image), MLA_ERROR_CODE_OBJECT, "hipModuleLoadData");
        return m;
    }
    void module_unload(Module module) override {
        check_pid();
        check(s_.hipModuleUnload(module), MLA_ERROR_CODE_OBJECT, "hipModuleUnload");
    }
    Function module_get_function(Module module, const char* name) override {
        check_pid();
        void* f = nullptr;
        hipError_t r = s_.hipModuleGetFunction(&f, module, name);
        if (r != hipSuccess)
            MLA_FAIL(MLA_ERROR_CODE_OBJECT, "kernel symbol '" << name << "' not found in the code "
                                                              "object: " << describe(r));
        return f;
    }
    // HIP has no opt-in limit for dynamic LDS: the code object's own metadata rules.
    void set_max_dynamic_shared(Function, int) override { check_pid(); }
    void set_smem_carveout(Function, int) override { check_pid(); }
    void launch(Function f, Dim3 grid, Dim3 block, unsigned dynamic_shared, Stream stream,
                const void* args, size_t args_bytes) override {
        check_pid();
        size_t size = args_bytes;
        void* extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, const_cast<void*>(args),
                         HIP_LAUNCH_PARAM_BUFFER_SIZE, &size, HIP_LAUNCH_PARAM_END};
        check(s_.hipModuleLaunchKernel(f, grid.x, grid.y, grid.z, block.x, block.y, block.z,
                                       dynamic_shared, stream, nullptr, extra),
              MLA_ERROR_LAUNCH, "hipModuleLaunchKernel");
    }
    void* malloc(size_t bytes) override {
        check_pid();
        void* p = nullptr;
        check(s_.hipMalloc(&p, bytes), MLA_ERROR_LAUNCH, "hipMalloc");
        return p;
    }
    void free(void* ptr) override {
        check_pid();
        check(s_.hipFree(ptr), MLA_ERROR_LAUNCH, "hipFree");
    }
    void memcpy_htod(void* dst, const void* src, size_t bytes, Stream stream) override {
        check_pid();
        check(s_.hipMemcpyHtoDAsync(dst, const_cast<void*>(src), bytes, stream), MLA_ERROR_LAUNCH,
              "hipMemcpyHtoDAsync");
    }
    void memcpy_dtoh(void* dst, const void* src, size_t bytes, Stream stream) override {
        check_pid();
        check(s_.hipMemcpyDtoHAsync(dst, const_cast<void*>(src), bytes, stream), MLA_ERROR_LAUNCH,
              "hipMemcpyDtoHAsync");
    }
    void memset_d8(void* dst, unsigned char value, size_t bytes, Stream stream) override {
        check_pid();
        check(s_.hipMemsetD8Async(dst, value, bytes, stream), MLA_ERROR_LAUNCH,
              "hipMemsetD8Async");
    }
    void stream_synchronize(Stream stream) override {
        check_pid();
        check(s_.hipStreamSynchronize(stream), MLA_ERROR_LAUNCH, "hipStreamSynchronize");
    }
    Event event_create() override {
        check_pid();
        void* e = nullptr;
        check(s_.hipEventCreate(&e), MLA_ERROR_LAUNCH, "hipEventCreate");
        return e;
    }
    void event_destroy(Event e) override {
        check_pid();
        check(s_.hipEventDestroy(e), MLA_ERROR_LAUNCH, "hipEventDestroy");
    }
    void event_record(Event e, Stream stream) override {
        check_pid();
        check(s_.hipEventRecord(e, stream), MLA_ERROR_LAUNCH, "hipEventRecord");
    }
    float event_elapsed_ms(Event start, Event stop) override {
        check_pid();
        check(s_.hipEventSynchronize(stop), MLA_ERROR_LAUNCH, "hipEventSynchronize");
        float ms = 0.f;
        check(s_.hipEventElapsedTime(&ms, start, stop), MLA_ERROR_LAUNCH, "hipEventElapsedTime");
        return ms;
    }

private:
    void check_pid() const {
        if (fork_guard_forked() && getpid() != pid_)
            MLA_FAIL(MLA_ERROR_RUNTIME_UNAVAILABLE,
                     "the HIP runtime was initialised in process " << pid_ << " and cannot be used "
                     "after fork() (this is process " << getpid() << ")");
    }
    std::string describe(hipError_t r) const {
        const char* nm = s_.hipGetErrorName ? s_.hipGetErrorName(r) : nullptr;
        const char* str = s_.hipGetErrorString ? s_.hipGetErrorString(r) : nullptr;
        std::string out = nm ? nm : "HIP error";
        if (str) out += std::string(" (") + str + ")";
        return out + " [" + std::to_string(r) + "]";
    }
    void check(hipError_t r, mla_status status, const char* what) const {
        if (r == hipSuccess) return;
        if (r == hipErrorNoDevice || r == hipErrorInvalidDevice) status = MLA_ERROR_NO_DEVICE;
        MLA_FAIL(status, what << " failed: " << describe(r));
    }

    HipSymbols s_;
    std::string path_;
    bool fake_ = false;
    pid_t pid_ = 0;
};

void HipRuntime::load() {
    fork_guard_install();
    pid_ = getpid();
    DlLibrary lib = open_dl_library(
        "MLA_LIBHIP_PATH", {"libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6",
                            "libamdhip64.so.5", "/opt/rocm/lib/libamdhip64.so"});
    if (!lib.handle) {
        load_status = MLA_ERROR_RUNTIME_UNAVAILABLE;
        load_message = "HIP runtime library (libamdhip64.so) not found; tried:\n" + lib.tried +
                       "install ROCm's HIP runtime or point MLA_LIBHIP_PATH at libamdhip64.so";
        return;
    }
    path_ = lib.path;
    fake_ = dl_symbol(lib.handle, "fake_rt_is_fake_runtime") != nullptr;
    std::string missing;
#define MLA_RESOLVE(name, type)                                              \
    s_.name = reinterpret_cast<std::add_pointer_t<type>>(dl_symbol(lib.handle, #name));        \
    if (!s_.name) missing += "  " #name "\n";
    MLA_HIP_SYMBOLS(MLA_RESOLVE)
#undef MLA_RESOLVE
    s_.get_props_name = "hipGetDevicePropertiesR0600";
    s_.get_props = reinterpret_cast<GetDeviceProperties*>(dl_symbol(lib.handle, s_.get_props_name));
    if (!s_.get_props) {
        s_.get_props_name = "hipGetDeviceProperties";
        s_.get_props =
            reinterpret_cast<GetDeviceProperties*>(dl_symbol(lib.handle, s_.get_props_name));
    }
    if (!s_.get_props) missing += "  hipGetDevicePropertiesR0600 / hipGetDeviceProperties\n";
    if (!missing.empty()) {
        load_status = MLA_ERROR_RUNTIME_UNAVAILABLE;
        load_message = "HIP runtime " + path_ + " lacks entry points libmla needs:\n" + missing;
        return;
    }
    hipError_t r = s_.hipInit(0);
    if (r == hipErrorNoDevice) {
        load_status = MLA_ERROR_NO_DEVICE;
        load_message = "hipInit: the HIP runtime " + path_ + " reports no device: " + describe(r);
    } else if (r != hipSuccess) {
        load_status = MLA_ERROR_RUNTIME_UNAVAILABLE;
        load_message = "hipInit failed for the HIP runtime " + path_ + ": " + describe(r);
    }
}

}  // namespace

Runtime& hip_runtime() {
    static HipRuntime runtime;
    static std::once_flag once;
    std::call_once(once, [] { runtime.load(); });
    if (runtime.load_status != MLA_SUCCESS) throw Error(runtime.load_status, runtime.load_message);
    return runtime;
}

}  // namespace mla::rt
