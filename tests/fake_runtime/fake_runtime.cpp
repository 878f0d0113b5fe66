// fake_runtime.cpp - libmla_fake_runtime.so: fake CUDA driver + HIP runtime for CPU tests.
// See fake_runtime.h for what it records and how tests drive it.
#include "fake_runtime.h"

#include <dlfcn.h>

#include <cstddef>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

constexpr int kInvalidValue = 1;       // CUDA_ERROR_INVALID_VALUE / hipErrorInvalidValue
constexpr int kInvalidImage = 200;     // CUDA_ERROR_INVALID_IMAGE / hipErrorInvalidImage
constexpr int kInvalidDevice = 101;    // CUDA_ERROR_INVALID_DEVICE / hipErrorInvalidDevice
constexpr int kInvalidHandle = 400;    // CUDA_ERROR_INVALID_HANDLE / hipErrorInvalidHandle

struct Module {
    int index;
    int api;
    std::vector<unsigned char> image;
    bool unloaded = false;
};
struct Function {
    int module_index;
    std::string symbol;
};
struct Event {
    double ms = 0;
};

struct Kernel {
    fake_rt_kernel_fn fn;
    void* user;
};

struct State {
    std::mutex mutex;
    std::string cc = "9.0";
    std::string gcn = "gfx000";
    int num_cus = 132;
    int device_count = 1;
    std::map<std::string, int> failures;
    std::map<std::string, int> calls;
    std::deque<fake_rt_launch_record> launches;
    std::deque<Module> modules;
    std::deque<Function> functions;       // every lookup (handles point in here)
    std::map<std::string, int> max_dyn_shared;
    std::map<std::string, int> carveout;  // CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT
    std::map<std::string, Kernel> kernels;
    std::map<void*, size_t> allocations;  // never reset
    int last_proc_version = 0;
    unsigned long long last_proc_flags = 0;
    int context_token = 0;
    bool have_tensor_map = false;
    fake_rt_tensor_map_record tensor_map{};
};

State& state() {
    static State s;
    return s;
}

// Counts the call; returns the configured failure code (0 = go on). Caller holds the lock.
int enter(State& s, const char* entry) {
    ++s.calls[entry];
    auto it = s.failures.find(entry);
    return it == s.failures.end() ? 0 : it->second;
}

#define FAKE_ENTER(name)                                   \
    State& s = state();                                    \
    std::unique_lock<std::mutex> lock(s.mutex);            \
    if (int fake_fail_ = enter(s, name)) return fake_fail_

uint64_t rd(const unsigned char* p, int bytes) {
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
    return v;
}

// Size of an image from its bytes (0 = not recognised). See fake_runtime.h.
size_t image_size(const void* image) {
    const unsigned char* p = static_cast<const unsigned char*>(image);
    if (!std::memcmp(p, "FAKECO01", 8)) return static_cast<size_t>(rd(p + 8, 8));
    if (std::memcmp(p, "\x7f" "ELF", 4) || p[4] != 2 /* ELFCLASS64 */) return 0;
    uint64_t end = 64;
    const uint64_t phoff = rd(p + 0x20, 8), shoff = rd(p + 0x28, 8);
    const uint64_t phentsize = rd(p + 0x36, 2), phnum = rd(p + 0x38, 2);
    const uint64_t shentsize = rd(p + 0x3A, 2), shnum = rd(p + 0x3C, 2);
    if (phnum) end = std::max(end, phoff + phnum * phentsize);
    if (shnum) end = std::max(end, shoff + shnum * shentsize);
    for (uint64_t i = 0; i < shnum; ++i) {
        const unsigned char* sh = p + shoff + i * shentsize;
        if (rd(sh + 4, 4) != 8 /* SHT_NOBITS */) end = std::max(end, rd(sh + 0x18, 8) + rd(sh + 0x20, 8));
    }
    for (uint64_t i = 0; i < phnum; ++i) {
        const unsigned char* ph = p + phoff + i * phentsize;
        end = std::max(end, rd(ph + 8, 8) + rd(ph + 0x20, 8));
    }
    return static_cast<size_t>(end);
}

int load_module(State& s, void** out, const void* image, int api) {
    if (!out || !image) return kInvalidValue;
    size_t n = image_size(image);
    if (n == 0) return kInvalidImage;
    Module m;
    m.index = static_cast<int>(s.modules.size());
    m.api = api;
    m.image.assign(static_cast<const unsigned char*>(image),
                   static_cast<const unsigned char*>(image) + n);
    s.modules.push_back(std::move(m));
    *out = &s.modules.back();
    return 0;
}

bool known_module(State& s, void* m) {
    for (Module& x : s.modules)
        if (&x == m) return true;
    return false;
}

int get_function(State& s, void** out, void* module, const char* name) {
    if (!out || !name || !known_module(s, module)) return kInvalidHandle;
    Module* m = static_cast<Module*>(module);
    if (m->unloaded) return kInvalidHandle;
    s.functions.push_back(Function{m->index, name});
    *out = &s.functions.back();
    return 0;
}

// Records a launch and runs its emulation (if any) with the lock released.
int launch(std::unique_lock<std::mutex>& lock, State& s, int api, void* f, const unsigned* dims,
           unsigned shared, void* stream, void** params, void** extra, void* end_token,
           int programmatic = 0, const unsigned* cluster = nullptr) {
    bool found = false;
    for (Function& x : s.functions) found = found || (&x == f);
    if (!found) return kInvalidHandle;
    const Function* fn = static_cast<const Function*>(f);
    fake_rt_launch_record r{};
    r.api = api;
    std::strncpy(r.symbol, fn->symbol.c_str(), sizeof(r.symbol) - 1);
    r.module_index = fn->module_index;
    for (int i = 0; i < 3; ++i) {
        r.grid[i] = dims[i];
        r.block[i] = dims[3 + i];
    }
    r.shared = shared;
    r.stream = stream;
    r.programmatic = programmatic;
    for (int i = 0; i < 3; ++i) r.cluster[i] = cluster ? cluster[i] : 1;
    if (extra) {
        const void* buf = nullptr;
        size_t bytes = 0;
        for (int i = 0; extra[i] != end_token; i += 2) {
            if (extra[i] == reinterpret_cast<void*>(1)) buf = extra[i + 1];
            else if (extra[i] == reinterpret_cast<void*>(2)) bytes = *static_cast<size_t*>(extra[i + 1]);
            else return kInvalidValue;
        }
        if (!buf || bytes > FAKE_RT_MAX_ARGS) return kInvalidValue;
        r.packed = 1;
        r.args_bytes = bytes;
        std::memcpy(r.args, buf, bytes);
    } else if (!params) {
        return kInvalidValue;
    }
    s.launches.push_back(r);
    const fake_rt_launch_record* rec = &s.launches.back();
    auto k = s.kernels.find(rec->symbol);
    if (k != s.kernels.end()) {
        Kernel kernel = k->second;
        lock.unlock();
        kernel.fn(rec, kernel.user);
    }
    return 0;
}

int dev_malloc(State& s, void** out, size_t bytes) {
    if (!out || bytes == 0) return kInvalidValue;
    void* p = std::malloc(bytes);
    if (!p) return 2;  // out of memory
    s.allocations[p] = bytes;
    *out = p;
    return 0;
}

int dev_free(State& s, void* p) {
    auto it = s.allocations.find(p);
    if (it == s.allocations.end()) return kInvalidValue;
    std::free(p);
    s.allocations.erase(it);
    return 0;
}

double now_ms() {
    using namespace std::chrono;
    return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

int parse_cc(const std::string& cc, int which) {
    size_t dot = cc.find('.');
    if (dot == std::string::npos) return 0;
    return std::atoi(which == 0 ? cc.substr(0, dot).c_str() : cc.substr(dot + 1).c_str());
}

}  // namespace

// ---- Control API ------------------------------------------------------------------------------

FAKE_EXPORT int fake_rt_is_fake_runtime(void) { return 1; }

FAKE_EXPORT const char* fake_rt_library_path(void) {
    static std::string path;
    static std::once_flag once;
    std::call_once(once, [] {
        Dl_info info{};
        if (dladdr(reinterpret_cast<void*>(&fake_rt_library_path), &info) && info.dli_fname) {
            char* abs = realpath(info.dli_fname, nullptr);
            path = abs ? abs : info.dli_fname;
            std::free(abs);
        }
    });
    return path.c_str();
}

FAKE_EXPORT void fake_rt_install_env(void) {
    setenv("MLA_LIBCUDA_PATH", fake_rt_library_path(), 1);
    setenv("MLA_LIBHIP_PATH", fake_rt_library_path(), 1);
}

FAKE_EXPORT void fake_rt_reset(void) {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    s.cc = "9.0";
    s.gcn = "gfx000";
    s.num_cus = 132;
    s.device_count = 1;
    s.failures.clear();
    s.calls.clear();
    s.launches.clear();
    s.modules.clear();
    s.functions.clear();
    s.max_dyn_shared.clear();
    s.carveout.clear();
    s.kernels.clear();
    s.have_tensor_map = false;
}

FAKE_EXPORT void fake_rt_clear_launches(void) {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    s.calls.clear();
    s.launches.clear();
}

FAKE_EXPORT void fake_rt_set_device(const char* arch_or_cc, int num_cus) {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    std::string a = arch_or_cc ? arch_or_cc : "";
    if (a.rfind("gfx", 0) == 0) {
        s.gcn = a;
        s.cc = "0.0";
    } else {
        s.cc = a;
        s.gcn = "gfx000";
    }
    s.num_cus = num_cus;
}

FAKE_EXPORT void fake_rt_set_device_count(int count) {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    s.device_count = count;
}

FAKE_EXPORT void fake_rt_fail(const char* entry, int code) {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (code) s.failures[entry] = code;
    else s.failures.erase(entry);
}

FAKE_EXPORT int fake_rt_call_count(const char* entry) {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    auto it = s.calls.find(entry);
    return it == s.calls.end() ? 0 : it->second;
}

FAKE_EXPORT int fake_rt_last_proc_version(void) { return state().last_proc_version; }
FAKE_EXPORT unsigned long long fake_rt_last_proc_flags(void) { return state().last_proc_flags; }

FAKE_EXPORT int fake_rt_launch_count(void) {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    return static_cast<int>(s.launches.size());
}

FAKE_EXPORT const fake_rt_launch_record* fake_rt_launch(int index) {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (index < 0 || index >= static_cast<int>(s.launches.size())) return nullptr;
    return &s.launches[index];
}

FAKE_EXPORT int fake_rt_module_count(void) {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    return static_cast<int>(s.modules.size());
}

FAKE_EXPORT const unsigned char* fake_rt_module_image(int index, size_t* size) {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (index < 0 || index >= static_cast<int>(s.modules.size())) return nullptr;
    if (size) *size = s.modules[index].image.size();
    return s.modules[index].image.data();
}

FAKE_EXPORT int fake_rt_module_api(int index) {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (index < 0 || index >= static_cast<int>(s.modules.size())) return -1;
    return s.modules[index].api;
}

FAKE_EXPORT int fake_rt_module_unloaded(int index) {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (index < 0 || index >= static_cast<int>(s.modules.size())) return -1;
    return s.modules[index].unloaded ? 1 : 0;
}

FAKE_EXPORT int fake_rt_function_count(void) {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    return static_cast<int>(s.functions.size());
}

FAKE_EXPORT const char* fake_rt_function_name(int index) {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (index < 0 || index >= static_cast<int>(s.functions.size())) return nullptr;
    return s.functions[index].symbol.c_str();
}

FAKE_EXPORT int fake_rt_smem_carveout(const char* symbol) {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    auto it = s.carveout.find(symbol ? symbol : "");
    return it == s.carveout.end() ? -1 : it->second;
}

FAKE_EXPORT int fake_rt_max_dynamic_shared(const char* symbol) {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    auto it = s.max_dyn_shared.find(symbol ? symbol : "");
    return it == s.max_dyn_shared.end() ? -1 : it->second;
}

FAKE_EXPORT void fake_rt_set_kernel(const char* symbol, fake_rt_kernel_fn fn, void* user) {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (fn) s.kernels[symbol] = Kernel{fn, user};
    else s.kernels.erase(symbol);
}

FAKE_EXPORT int fake_rt_live_allocations(void) {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    return static_cast<int>(s.allocations.size());
}

FAKE_EXPORT size_t fake_rt_live_bytes(void) {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    size_t n = 0;
    for (const auto& a : s.allocations) n += a.second;
    return n;
}

FAKE_EXPORT size_t fake_rt_format_image(const void* payload, size_t payload_bytes,
                                        unsigned char* out, size_t cap) {
    const size_t total = FAKE_RT_IMAGE_HEADER + payload_bytes;
    if (!out || cap < total) return 0;
    std::memcpy(out, "FAKECO01", 8);
    for (int i = 0; i < 8; ++i) out[8 + i] = static_cast<unsigned char>(uint64_t(total) >> (8 * i));
    if (payload_bytes) std::memcpy(out + FAKE_RT_IMAGE_HEADER, payload, payload_bytes);
    return total;
}

// ---- CUDA driver ------------------------------------------------------------------------------
using CUresult = int;
using CUdeviceptr = unsigned long long;

static void* as_ptr(CUdeviceptr p) { return reinterpret_cast<void*>(static_cast<uintptr_t>(p)); }

FAKE_EXPORT CUresult cuGetErrorName(CUresult r, const char** out) {
    static const std::map<int, const char*> names = {
        {0, "CUDA_SUCCESS"}, {1, "CUDA_ERROR_INVALID_VALUE"}, {2, "CUDA_ERROR_OUT_OF_MEMORY"},
        {34, "CUDA_ERROR_STUB_LIBRARY"}, {100, "CUDA_ERROR_NO_DEVICE"},
        {101, "CUDA_ERROR_INVALID_DEVICE"}, {200, "CUDA_ERROR_INVALID_IMAGE"},
        {400, "CUDA_ERROR_INVALID_HANDLE"}, {500, "CUDA_ERROR_NOT_FOUND"},
        {701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"}, {719, "CUDA_ERROR_LAUNCH_FAILED"}};
    auto it = names.find(r);
    if (!out) return kInvalidValue;
    *out = it == names.end() ? "CUDA_ERROR_UNKNOWN" : it->second;
    return 0;
}
FAKE_EXPORT CUresult cuGetErrorString(CUresult r, const char** out) {
    if (!out) return kInvalidValue;
    *out = r == 0 ? "no error" : "fake runtime error";
    return 0;
}
FAKE_EXPORT CUresult cuInit(unsigned flags) {
    FAKE_ENTER("cuInit");
    return flags == 0 ? 0 : kInvalidValue;
}
FAKE_EXPORT CUresult cuDeviceGetCount(int* n) {
    FAKE_ENTER("cuDeviceGetCount");
    *n = s.device_count;
    return 0;
}
FAKE_EXPORT CUresult cuDeviceGet(int* dev, int ordinal) {
    FAKE_ENTER("cuDeviceGet");
    if (ordinal < 0 || ordinal >= s.device_count) return kInvalidDevice;
    *dev = ordinal;
    return 0;
}
FAKE_EXPORT CUresult cuDeviceGetAttribute(int* v, int attrib, int dev) {
    FAKE_ENTER("cuDeviceGetAttribute");
    if (dev < 0 || dev >= s.device_count) return kInvalidDevice;
    *v = attrib == 16 ? s.num_cus : attrib == 75 ? parse_cc(s.cc, 0) : attrib == 76 ? parse_cc(s.cc, 1) : 0;
    return 0;
}
FAKE_EXPORT CUresult cuDevicePrimaryCtxRetain(void** ctx, int dev) {
    FAKE_ENTER("cuDevicePrimaryCtxRetain");
    if (dev < 0 || dev >= s.device_count) return kInvalidDevice;
    *ctx = &s.context_token;
    return 0;
}
FAKE_EXPORT CUresult cuCtxSetCurrent(void*) {
    FAKE_ENTER("cuCtxSetCurrent");
    return 0;
}
FAKE_EXPORT CUresult cuModuleLoadData(void** m, const void* image) {
    FAKE_ENTER("cuModuleLoadData");
    return load_module(s, m, image, FAKE_RT_CUDA);
}
FAKE_EXPORT CUresult cuModuleUnload(void* m) {
    FAKE_ENTER("cuModuleUnload");
    if (!known_module(s, m) || static_cast<Module*>(m)->unloaded) return kInvalidHandle;
    static_cast<Module*>(m)->unloaded = true;
    return 0;
}
FAKE_EXPORT CUresult cuModuleGetFunction(void** f, void* m, const char* name) {
    FAKE_ENTER("cuModuleGetFunction");
    return get_function(s, f, m, name);
}
FAKE_EXPORT CUresult cuFuncSetAttribute(void* f, int attrib, int value) {
    FAKE_ENTER("cuFuncSetAttribute");
    if (!f) return kInvalidHandle;
    if (attrib == 8) s.max_dyn_shared[static_cast<Function*>(f)->symbol] = value;
    if (attrib == 9) s.carveout[static_cast<Function*>(f)->symbol] = value;
    return 0;
}
FAKE_EXPORT CUresult cuLaunchKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                    unsigned by, unsigned bz, unsigned shared, void* stream,
                                    void** params, void** extra) {
    FAKE_ENTER("cuLaunchKernel");
    const unsigned dims[6] = {gx, gy, gz, bx, by, bz};
    return launch(lock, s, FAKE_RT_CUDA, f, dims, shared, stream, params, extra,
                  reinterpret_cast<void*>(0));
}
// cuLaunchKernelEx's config as the CUDA 12 driver API lays it out (see cuda_driver.cpp)
struct FakeLaunchAttribute {
    int id;
    char pad[4];
    union alignas(8) {
        char bytes[64];
        int value;
    } v;
};
static_assert(sizeof(FakeLaunchAttribute) == 72 && offsetof(FakeLaunchAttribute, v) == 8, "CUlaunchAttribute");
struct FakeLaunchConfig {
    unsigned gx, gy, gz, bx, by, bz, shared;
    void* stream;
    FakeLaunchAttribute* attrs;
    unsigned num_attrs;
};
static_assert(sizeof(FakeLaunchConfig) == 56 && offsetof(FakeLaunchConfig, stream) == 32 &&
                  offsetof(FakeLaunchConfig, attrs) == 40 && offsetof(FakeLaunchConfig, num_attrs) == 48,
              "CUlaunchConfig");
FAKE_EXPORT CUresult cuLaunchKernelEx(const FakeLaunchConfig* c, void* f, void** params, void** extra) {
    FAKE_ENTER("cuLaunchKernelEx");
    if (!c || (c->num_attrs && !c->attrs)) return kInvalidValue;
    int programmatic = 0;
    unsigned cluster[3] = {1, 1, 1};
    for (unsigned i = 0; i < c->num_attrs; ++i) {
        if (c->attrs[i].id == 6) {  // PROGRAMMATIC_STREAM_SERIALIZATION
            programmatic = c->attrs[i].v.value;
        } else if (c->attrs[i].id == 4) {  // CLUSTER_DIMENSION {x, y, z}: the grid a multiple of it
            std::memcpy(cluster, c->attrs[i].v.bytes, sizeof cluster);
            if (!cluster[0] || !cluster[1] || !cluster[2] || c->gx % cluster[0] || c->gy % cluster[1] ||
                c->gz % cluster[2])
                return 912;  // CUDA_ERROR_INVALID_CLUSTER_SIZE
        } else {
            return kInvalidValue;
        }
    }
    const unsigned dims[6] = {c->gx, c->gy, c->gz, c->bx, c->by, c->bz};
    return launch(lock, s, FAKE_RT_CUDA, f, dims, c->shared, c->stream, params, extra,
                  reinterpret_cast<void*>(0), programmatic, cluster);
}
FAKE_EXPORT CUresult cuTensorMapEncodeTiled(void* map, int data_type, unsigned rank, void* base,
                                            const unsigned long long* dims, const unsigned long long* strides,
                                            const unsigned* box, const unsigned* element_strides, int interleave,
                                            int swizzle, int l2_promotion, int oob_fill) {
    FAKE_ENTER("cuTensorMapEncodeTiled");
    if (!map || !base || !dims || !box || !element_strides || rank < 1 || rank > 5) return kInvalidValue;
    if (reinterpret_cast<uintptr_t>(map) % 64 || reinterpret_cast<uintptr_t>(base) % 16) return kInvalidValue;
    if (rank > 1 && !strides) return kInvalidValue;
    for (unsigned i = 0; i + 1 < rank; ++i)
        if (strides[i] % 16) return kInvalidValue;
    for (unsigned i = 0; i < rank; ++i)
        if (box[i] < 1 || box[i] > 256 || dims[i] < 1) return kInvalidValue;
    const unsigned elem = data_type == 9 || data_type == 6 ? 2 : 1;
    if (swizzle == 3 && box[0] * elem > 128) return kInvalidValue;
    fake_rt_tensor_map_record& r = s.tensor_map;
    r = fake_rt_tensor_map_record{};
    r.data_type = data_type;
    r.rank = rank;
    r.base = base;
    for (unsigned i = 0; i < rank; ++i) {
        r.dims[i] = dims[i];
        r.box[i] = box[i];
        r.element_strides[i] = element_strides[i];
        if (i + 1 < rank) r.strides[i] = strides[i];
    }
    r.interleave = interleave;
    r.swizzle = swizzle;
    r.l2_promotion = l2_promotion;
    r.oob_fill = oob_fill;
    s.have_tensor_map = true;
    std::memset(map, 0, 128);
    const unsigned long long magic = FAKE_RT_TENSOR_MAP_MAGIC;
    const uintptr_t b = reinterpret_cast<uintptr_t>(base);
    std::memcpy(map, &magic, 8);
    std::memcpy(static_cast<char*>(map) + 8, &b, 8);
    return 0;
}
FAKE_EXPORT const fake_rt_tensor_map_record* fake_rt_last_tensor_map(void) {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    return s.have_tensor_map ? &s.tensor_map : nullptr;
}
FAKE_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr* p, size_t bytes) {
    FAKE_ENTER("cuMemAlloc");
    void* out = nullptr;
    int r = dev_malloc(s, &out, bytes);
    if (!r) *p = static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(out));
    return r;
}
FAKE_EXPORT CUresult cuMemFree_v2(CUdeviceptr p) {
    FAKE_ENTER("cuMemFree");
    return dev_free(s, as_ptr(p));
}
FAKE_EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void* src, size_t n, void*) {
    FAKE_ENTER("cuMemcpyHtoDAsync");
    std::memcpy(as_ptr(dst), src, n);
    return 0;
}
FAKE_EXPORT CUresult cuMemcpyDtoHAsync_v2(void* dst, CUdeviceptr src, size_t n, void*) {
    FAKE_ENTER("cuMemcpyDtoHAsync");
    std::memcpy(dst, as_ptr(src), n);
    return 0;
}
FAKE_EXPORT CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char v, size_t n, void*) {
    FAKE_ENTER("cuMemsetD8Async");
    std::memset(as_ptr(dst), v, n);
    return 0;
}
FAKE_EXPORT CUresult cuStreamSynchronize(void*) {
    FAKE_ENTER("cuStreamSynchronize");
    return 0;
}
FAKE_EXPORT CUresult cuEventCreate(void** e, unsigned) {
    FAKE_ENTER("cuEventCreate");
    *e = new Event();
    return 0;
}
FAKE_EXPORT CUresult cuEventDestroy_v2(void* e) {
    FAKE_ENTER("cuEventDestroy");
    delete static_cast<Event*>(e);
    return 0;
}
FAKE_EXPORT CUresult cuEventRecord(void* e, void*) {
    FAKE_ENTER("cuEventRecord");
    static_cast<Event*>(e)->ms = now_ms();
    return 0;
}
FAKE_EXPORT CUresult cuEventSynchronize(void*) {
    FAKE_ENTER("cuEventSynchronize");
    return 0;
}
FAKE_EXPORT CUresult cuEventElapsedTime(float* ms, void* a, void* b) {
    FAKE_ENTER("cuEventElapsedTime");
    *ms = static_cast<float>(static_cast<Event*>(b)->ms - static_cast<Event*>(a)->ms);
    return 0;
}

namespace {
const std::map<std::string, void*>& proc_table() {
    static const std::map<std::string, void*> table = {
#define FAKE_PROC(base, fn) {base, reinterpret_cast<void*>(&fn)}
        FAKE_PROC("cuGetErrorName", cuGetErrorName),
        FAKE_PROC("cuGetErrorString", cuGetErrorString),
        FAKE_PROC("cuInit", cuInit),
        FAKE_PROC("cuDeviceGetCount", cuDeviceGetCount),
        FAKE_PROC("cuDeviceGet", cuDeviceGet),
        FAKE_PROC("cuDeviceGetAttribute", cuDeviceGetAttribute),
        FAKE_PROC("cuDevicePrimaryCtxRetain", cuDevicePrimaryCtxRetain),
        FAKE_PROC("cuCtxSetCurrent", cuCtxSetCurrent),
        FAKE_PROC("cuModuleLoadData", cuModuleLoadData),
        FAKE_PROC("cuModuleUnload", cuModuleUnload),
        FAKE_PROC("cuModuleGetFunction", cuModuleGetFunction),
        FAKE_PROC("cuFuncSetAttribute", cuFuncSetAttribute),
        FAKE_PROC("cuLaunchKernel", cuLaunchKernel),
        FAKE_PROC("cuLaunchKernelEx", cuLaunchKernelEx),
        FAKE_PROC("cuTensorMapEncodeTiled", cuTensorMapEncodeTiled),
        FAKE_PROC("cuMemAlloc", cuMemAlloc_v2),
        FAKE_PROC("cuMemFree", cuMemFree_v2),
        FAKE_PROC("cuMemcpyHtoDAsync", cuMemcpyHtoDAsync_v2),
        FAKE_PROC("cuMemcpyDtoHAsync", cuMemcpyDtoHAsync_v2),
        FAKE_PROC("cuMemsetD8Async", cuMemsetD8Async),
        FAKE_PROC("cuStreamSynchronize", cuStreamSynchronize),
        FAKE_PROC("cuEventCreate", cuEventCreate),
        FAKE_PROC("cuEventDestroy", cuEventDestroy_v2),
        FAKE_PROC("cuEventRecord", cuEventRecord),
        FAKE_PROC("cuEventSynchronize", cuEventSynchronize),
        FAKE_PROC("cuEventElapsedTime", cuEventElapsedTime),
#undef FAKE_PROC
    };
    return table;
}
}  // namespace

FAKE_EXPORT CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int version,
                                         unsigned long long flags, int* status) {
    State& s = state();
    {
        std::lock_guard<std::mutex> lock(s.mutex);
        ++s.calls["cuGetProcAddress"];
        s.last_proc_version = version;
        s.last_proc_flags = flags;
    }
    if (!symbol || !pfn) return kInvalidValue;
    auto it = proc_table().find(symbol);
    *pfn = it == proc_table().end() ? nullptr : it->second;
    if (status) *status = *pfn ? 0 : 1;  // CU_GET_PROC_ADDRESS_SUCCESS / SYMBOL_NOT_FOUND
    return 0;
}

FAKE_EXPORT CUresult cuGetProcAddress(const char* symbol, void** pfn, int version,
                                      unsigned long long flags) {
    return cuGetProcAddress_v2(symbol, pfn, version, flags, nullptr);
}

// ---- HIP runtime ------------------------------------------------------------------------------
using hipError_t = int;

FAKE_EXPORT const char* hipGetErrorName(hipError_t r) {
    const char* name = nullptr;
    cuGetErrorName(r, &name);
    return r == 0 ? "hipSuccess" : name;
}
FAKE_EXPORT const char* hipGetErrorString(hipError_t r) {
    return r == 0 ? "no error" : "fake runtime error";
}
FAKE_EXPORT hipError_t hipInit(unsigned flags) {
    FAKE_ENTER("hipInit");
    return flags == 0 ? 0 : kInvalidValue;
}
FAKE_EXPORT hipError_t hipGetDeviceCount(int* n) {
    FAKE_ENTER("hipGetDeviceCount");
    *n = s.device_count;
    return 0;
}
FAKE_EXPORT hipError_t hipSetDevice(int d) {
    FAKE_ENTER("hipSetDevice");
    return d >= 0 && d < s.device_count ? 0 : kInvalidDevice;
}
FAKE_EXPORT hipError_t hipDeviceGetAttribute(int* v, int attrib, int d) {
    FAKE_ENTER("hipDeviceGetAttribute");
    if (d < 0 || d >= s.device_count) return kInvalidDevice;
    *v = attrib == 63 ? s.num_cus : 0;
    return 0;
}
// Writes a name at offset 0 and gcnArchName at 1160 (inside any real layout's size).
FAKE_EXPORT hipError_t hipGetDevicePropertiesR0600(void* prop, int d) {
    FAKE_ENTER("hipGetDeviceProperties");
    if (d < 0 || d >= s.device_count) return kInvalidDevice;
    char* p = static_cast<char*>(prop);
    std::memset(p, 0, 1536);
    std::strcpy(p, "Fake AMD Instinct");
    std::strncpy(p + 1160, s.gcn.c_str(), 255);
    return 0;
}
FAKE_EXPORT hipError_t hipModuleLoadData(void** m, const void* image) {
    FAKE_ENTER("hipModuleLoadData");
    return load_module(s, m, image, FAKE_RT_HIP);
}
FAKE_EXPORT hipError_t hipModuleUnload(void* m) {
    FAKE_ENTER("hipModuleUnload");
    if (!known_module(s, m) || static_cast<Module*>(m)->unloaded) return kInvalidHandle;
    static_cast<Module*>(m)->unloaded = true;
    return 0;
}
FAKE_EXPORT hipError_t hipModuleGetFunction(void** f, void* m, const char* name) {
    FAKE_ENTER("hipModuleGetFunction");
    return get_function(s, f, m, name);
}
FAKE_EXPORT hipError_t hipModuleLaunchKernel(void* f, unsigned gx, unsigned gy, unsigned gz,
                                             unsigned bx, unsigned by, unsigned bz,
                                             unsigned shared, void* stream, void** params,
                                             void** extra) {
    FAKE_ENTER("hipModuleLaunchKernel");
    const unsigned dims[6] = {gx, gy, gz, bx, by, bz};
    return launch(lock, s, FAKE_RT_HIP, f, dims, shared, stream, params, extra,
                  reinterpret_cast<void*>(3));
}
FAKE_EXPORT hipError_t hipMalloc(void** p, size_t bytes) {
    FAKE_ENTER("hipMalloc");
    return dev_malloc(s, p, bytes);
}
FAKE_EXPORT hipError_t hipFree(void* p) {
    FAKE_ENTER("hipFree");
    return p ? dev_free(s, p) : 0;
}
FAKE_EXPORT hipError_t hipMemcpyHtoDAsync(void* dst, void* src, size_t n, void*) {
    FAKE_ENTER("hipMemcpyHtoDAsync");
    std::memcpy(dst, src, n);
    return 0;
}
FAKE_EXPORT hipError_t hipMemcpyDtoHAsync(void* dst, void* src, size_t n, void*) {
    FAKE_ENTER("hipMemcpyDtoHAsync");
    std::memcpy(dst, src, n);
    return 0;
}
FAKE_EXPORT hipError_t hipMemsetD8Async(void* dst, unsigned char v, size_t n, void*) {
    FAKE_ENTER("hipMemsetD8Async");
    std::memset(dst, v, n);
    return 0;
}
FAKE_EXPORT hipError_t hipStreamSynchronize(void*) {
    FAKE_ENTER("hipStreamSynchronize");
    return 0;
}
FAKE_EXPORT hipError_t hipEventCreate(void** e) {
    FAKE_ENTER("hipEventCreate");
    *e = new Event();
    return 0;
}
FAKE_EXPORT hipError_t hipEventDestroy(void* e) {
    FAKE_ENTER("hipEventDestroy");
    delete static_cast<Event*>(e);
    return 0;
}
FAKE_EXPORT hipError_t hipEventRecord(void* e, void*) {
    FAKE_ENTER("hipEventRecord");
    static_cast<Event*>(e)->ms = now_ms();
    return 0;
}
FAKE_EXPORT hipError_t hipEventSynchronize(void*) {
    FAKE_ENTER("hipEventSynchronize");
    return 0;
}
FAKE_EXPORT hipError_t hipEventElapsedTime(float* ms, void* a, void* b) {
    FAKE_ENTER("hipEventElapsedTime");
    *ms = static_cast<float>(static_cast<Event*>(b)->ms - static_cast<Event*>(a)->ms);
    return 0;
}
