/*
 * fake_runtime.h - control and inspection API of libmla_fake_runtime.so, a test double of the
 * CUDA driver (libcuda.so.1) and the HIP runtime (libamdhip64.so) that needs no GPU.
 *
 * The library exports the driver entry points libmla uses (cuGetProcAddress_v2 / cuGetProcAddress
 * hand out the fakes by base name; the hip* names are plain exports) and records every call.
 * Device memory is host memory (malloc), so copies and memsets really happen; kernels do not run
 * unless a test registers a host emulation for the symbol (fake_rt_set_kernel).
 *
 * How a test uses it (see tests/core/meson.build):
 *   - link the test program with `fake_runtime_dep` (tests/fake_runtime/meson.build);
 *   - make libmla's dlopen return this same, already-loaded copy: call fake_rt_install_env()
 *     (sets MLA_LIBCUDA_PATH and MLA_LIBHIP_PATH to this library's absolute path) before the first
 *     mla_context_create, or set those variables in the test's environment;
 *   - fake_rt_reset() at the start of each test case, then fake_rt_set_device(...).
 * libmla loads a runtime once per process: cuInit/hipInit failures can only be tested in a
 * process of their own.
 *
 * Code-object images: the fake must know an image's size from its bytes (cuModuleLoadData takes
 * a bare pointer). ELF images (cubins, AMD code objects) are sized from their headers; other
 * images must start with the 16-byte header written by fake_rt_format_image ("FAKECO01" + total
 * size, little-endian uint64). Anything else is rejected with CUDA_ERROR_INVALID_IMAGE / 200.
 *
 * Thread-safe (one mutex). Record pointers stay valid until fake_rt_reset().
 */
#ifndef MLA_FAKE_RUNTIME_H
#define MLA_FAKE_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FAKE_RT_CUDA 0
#define FAKE_RT_HIP 1
#define FAKE_RT_MAX_ARGS 4096
#define FAKE_RT_IMAGE_HEADER 16

/* One kernel launch (cuLaunchKernel, cuLaunchKernelEx / hipModuleLaunchKernel). */
typedef struct fake_rt_launch_record {
    int api;                 /* FAKE_RT_CUDA or FAKE_RT_HIP                                     */
    char symbol[256];        /* kernel name the function was looked up with                     */
    int module_index;        /* fake_rt_module_* index of the module holding the function        */
    unsigned grid[3];
    unsigned block[3];
    unsigned shared;         /* dynamic shared memory bytes                                     */
    void* stream;
    int packed;              /* 1: "extra" packed-buffer form; 0: kernelParams form (args empty) */
    size_t args_bytes;       /* size given with *_LAUNCH_PARAM_BUFFER_SIZE                       */
    unsigned char args[FAKE_RT_MAX_ARGS]; /* copy of the packed argument buffer                 */
    int programmatic;        /* 1: cuLaunchKernelEx with PROGRAMMATIC_STREAM_SERIALIZATION = 1    */
    unsigned cluster[3];     /* cuLaunchKernelEx CLUSTER_DIMENSION; {1, 1, 1} without it          */
} fake_rt_launch_record;

/* The last cuTensorMapEncodeTiled call (fake_rt_call_count("cuTensorMapEncodeTiled") counts them).
 * The fake checks the driver's rules that libmla relies on (map 64-byte aligned, base 16-byte
 * aligned, strides multiples of 16, boxes of 1..256 elements, a 128-byte-swizzled box row of at
 * most 128 bytes) and returns CUDA_ERROR_INVALID_VALUE (1) where one fails; on success the map's
 * first 8 bytes are FAKE_RT_TENSOR_MAP_MAGIC and the next 8 the base address. */
#define FAKE_RT_TENSOR_MAP_MAGIC 0x50414d54454b4146ull /* "FAKETMAP" */
typedef struct fake_rt_tensor_map_record {
    int data_type;           /* CUtensorMapDataType (9 = bf16)                                  */
    unsigned rank;
    const void* base;
    unsigned long long dims[5];
    unsigned long long strides[4]; /* bytes, dims 1 .. rank - 1                                 */
    unsigned box[5];
    unsigned element_strides[5];
    int interleave, swizzle, l2_promotion, oob_fill;
} fake_rt_tensor_map_record;
/* NULL before the first call since the last reset. */
const fake_rt_tensor_map_record* fake_rt_last_tensor_map(void);

/* Host emulation of a kernel, called (outside the fake's lock) after the launch is recorded. */
typedef void (*fake_rt_kernel_fn)(const fake_rt_launch_record* launch, void* user);

/* Marker libmla looks for (dlsym) to know it runs on the fake; returns 1. */
int fake_rt_is_fake_runtime(void);
/* Absolute path of this library (dladdr). */
const char* fake_rt_library_path(void);
/* setenv MLA_LIBCUDA_PATH and MLA_LIBHIP_PATH to fake_rt_library_path() (overwriting). */
void fake_rt_install_env(void);

/* Forgets every record, failure, emulation and module; device back to "9.0", 132 CUs, 1 device.
 * Live allocations stay valid (and counted). */
void fake_rt_reset(void);
/* Forgets the launch records and call counts only (modules, functions, emulations, failures and
 * the device stay): for a benchmark that launches many times and must not time the records'
 * growth. */
void fake_rt_clear_launches(void);
/* The device(s): a compute capability "M.m" (CUDA side reports it; HIP reports "gfx000") or a
 * gcnArchName "gfx942[:features]" (HIP reports it; CUDA reports 0.0), and the SM/CU count. */
void fake_rt_set_device(const char* arch_or_cc, int num_cus);
void fake_rt_set_device_count(int count);

/* Makes every later call of entry point `entry` (base name: "cuLaunchKernel", "cuMemAlloc",
 * "hipModuleLoadData", ...) return `code` without doing anything; code 0 clears it. */
void fake_rt_fail(const char* entry, int code);
/* Calls of an entry point since the last reset (failed ones included). */
int fake_rt_call_count(const char* entry);
/* cudaVersion and flags of the last cuGetProcAddress call (process-wide, not reset). */
int fake_rt_last_proc_version(void);
unsigned long long fake_rt_last_proc_flags(void);

int fake_rt_launch_count(void);
const fake_rt_launch_record* fake_rt_launch(int index); /* NULL out of range */

/* Modules loaded since the reset, in load order (unloaded ones stay listed). */
int fake_rt_module_count(void);
const unsigned char* fake_rt_module_image(int index, size_t* size); /* copy of the image bytes */
int fake_rt_module_api(int index);                                  /* FAKE_RT_CUDA / _HIP */
int fake_rt_module_unloaded(int index);                             /* 1 once unloaded */

/* Function lookups (cuModuleGetFunction / hipModuleGetFunction), in call order. */
int fake_rt_function_count(void);
const char* fake_rt_function_name(int index);
/* Last MAX_DYNAMIC_SHARED_SIZE_BYTES set on a function with this symbol, -1 if none. */
int fake_rt_max_dynamic_shared(const char* symbol);
/* Last PREFERRED_SHARED_MEMORY_CARVEOUT (percent) set on a function with this symbol, -1 if none. */
int fake_rt_smem_carveout(const char* symbol);

/* Registers (fn non-NULL) or removes a host emulation for kernel `symbol`. */
void fake_rt_set_kernel(const char* symbol, fake_rt_kernel_fn fn, void* user);

/* Device allocations alive now (all time, not reset) and their total bytes. */
int fake_rt_live_allocations(void);
size_t fake_rt_live_bytes(void);

/* Writes header + payload (a non-ELF fake code object) into out; returns the total size, or 0
 * if cap is too small. */
size_t fake_rt_format_image(const void* payload, size_t payload_bytes, unsigned char* out,
                            size_t cap);

#ifdef __cplusplus
}
#endif

#endif /* MLA_FAKE_RUNTIME_H */
