/*
 * mla_c_api.h - the one public header of libmla.
 *
 * libmla plans and launches absorbed Multi-head Latent Attention (MLA) decode, the attention of
 * DeepSeek-V2/V3/R1, Kimi K2 and GLM-5 at inference time: one shared latent KV head, Q and KV rows
 * of 576 elements (512 latent "nope" + 64 rope), V = the first 512 columns of each KV row, a paged
 * KV cache, natural-log LSE, causal MTP (query i of L sees keys j <= kv_len - L + i).
 *
 * Conventions (read once, they hold for every function below):
 *  - Every function that can fail returns mla_status (0 = MLA_SUCCESS). On failure a thread-local
 *    message is set, read with mla_last_error() on the same thread. No C++ exception ever crosses
 *    this boundary. On failure nothing is written to caller buffers and nothing is launched.
 *  - Input structs start with `size_t struct_size` and must be set from their *_INIT macro; the
 *    library reads min(struct_size, sizeof) bytes and gives later fields their defaults, so a
 *    caller built against an older header keeps working. Output structs too: set struct_size.
 *  - Sizes are in elements unless a name ends in _bytes. Strides are in elements.
 *  - Arch strings: "gfx942", "gfx950", "gfx1250" (AMD, aiter's code objects), "sm_90a" (NVIDIA
 *    Hopper, libmla's own cubins). Device-free functions take an explicit arch and never touch a
 *    GPU runtime; only functions taking an mla_context* (and the runtime probe) load one.
 *  - dtype strings (queries, CLI, Python): "bf16", "fp16", "fp8" (e4m3fn), "fp8_fnuz"
 *    (e4m3fnuz), "byte" (DeepSeek-V3.2 3-buffer layout), "fp32".
 */
#ifndef MLA_C_API_H
#define MLA_C_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * Version. MLA_VERSION = MAJOR*10000 + MINOR*100 + PATCH. The soname carries the major.
 * ------------------------------------------------------------------------------------------- */
#define MLA_VERSION_MAJOR 0
#define MLA_VERSION_MINOR 1
#define MLA_VERSION_PATCH 0
#define MLA_VERSION (MLA_VERSION_MAJOR * 10000 + MLA_VERSION_MINOR * 100 + MLA_VERSION_PATCH)

#if defined(_WIN32)
#define MLA_API __declspec(dllexport)
#else
#define MLA_API __attribute__((visibility("default")))
#endif

/* ---------------------------------------------------------------------------------------------
 * Status codes and errors.
 * ------------------------------------------------------------------------------------------- */
typedef enum mla_status {
    MLA_SUCCESS = 0,
    MLA_ERROR_INVALID_ARGUMENT = 1,   /* null pointer, bad value, sizes that disagree          */
    MLA_ERROR_UNSUPPORTED_SHAPE = 2,  /* a valid request that no route of this arch can run    */
    MLA_ERROR_NO_KERNEL = 3,          /* the arch's table has no row for the request           */
    MLA_ERROR_ARCH_NOT_BUILT = 4,     /* unknown arch, or no table for the arch under the root */
    MLA_ERROR_RUNTIME_UNAVAILABLE = 5,/* libcuda.so.1 / libamdhip64.so not found or unusable    */
    MLA_ERROR_NO_DEVICE = 6,          /* the runtime loaded but reports no usable device       */
    MLA_ERROR_CODE_OBJECT = 7,        /* code object file missing, unreadable or rejected      */
    MLA_ERROR_LAUNCH = 8,             /* the runtime refused a launch, copy or allocation      */
    MLA_ERROR_BUFFER_TOO_SMALL = 9,   /* a caller buffer is smaller than required              */
    MLA_ERROR_INTERNAL = 10,          /* a bug in libmla; the message says where               */
    MLA_ERROR_TABLE = 11              /* a code-object CSV table is malformed                  */
} mla_status;

/* Static name of a status ("MLA_ERROR_NO_KERNEL"); "MLA_UNKNOWN_STATUS" for other values. */
MLA_API const char* mla_status_string(int status);

/* This thread's message for the last failing call ("" if none). Valid until the next libmla
 * call on this thread. Successful calls leave it unchanged. */
MLA_API const char* mla_last_error(void);

/* Clears this thread's last error message. */
MLA_API void mla_clear_last_error(void);

/* Returns MLA_VERSION of the loaded library. This signature never changes. */
MLA_API int mla_version(void);

/* Returns the version as "MAJOR.MINOR.PATCH". */
MLA_API const char* mla_version_string(void);

/* ---------------------------------------------------------------------------------------------
 * Data types.
 * ------------------------------------------------------------------------------------------- */
typedef enum mla_dtype {
    MLA_DTYPE_BF16 = 0,
    MLA_DTYPE_FP16 = 1,
    MLA_DTYPE_FP8_E4M3FN = 2,   /* "fp8": NVIDIA, gfx950, gfx1250                          */
    MLA_DTYPE_FP8_E4M3FNUZ = 3, /* "fp8_fnuz": gfx942                                      */
    MLA_DTYPE_BYTE = 4,         /* "byte": DeepSeek-V3.2 3-buffer KV (routing only)        */
    MLA_DTYPE_FP32 = 5
} mla_dtype;

/* Parses a dtype string (see the conventions above) into *out.
 * MLA_ERROR_INVALID_ARGUMENT: null pointer or unknown string. */
MLA_API mla_status mla_dtype_from_string(const char* name, mla_dtype* out);

/* Canonical string of a dtype ("bf16", ...), or NULL for an unknown value. */
MLA_API const char* mla_dtype_string(mla_dtype dtype);

/* Size of one element in bytes (bf16 2, fp8 1, byte 1, fp32 4); 0 for an unknown value. */
MLA_API size_t mla_dtype_size(mla_dtype dtype);

/* ---------------------------------------------------------------------------------------------
 * Archs and the code-object registry.
 *
 * Code objects are listed in CSV tables under <root>/<arch>/ (at any depth: aiter keeps them in
 * <arch>/mla/ and <arch>/mla_dsl/). The root is, in order: an explicit root (context), the
 * MLA_CODEOBJECT_DIR environment variable, the `codeobjects` folder next to the loaded libmla.so
 * (dladdr), the install prefix (<datadir>/libmla/codeobjects), the build tree (a library still
 * inside its build tree takes the build tree before the install prefix). An explicit root that
 * is not a folder is refused (MLA_ERROR_INVALID_ARGUMENT: mla_set_codeobject_root,
 * mla_context_create); a set (non-empty) MLA_CODEOBJECT_DIR that is not a folder ends the search
 * with no root: the calls that need one fail with MLA_ERROR_ARCH_NOT_BUILT and a message naming
 * it, rather than load code objects from a place not asked for. For AMD archs
 * point the root at an aiter installation's hsa/ directory.
 * ------------------------------------------------------------------------------------------- */

/* Number of archs libmla knows the rules of (gfx942, gfx950, gfx1250, sm_90a). */
MLA_API int mla_arch_count(void);

/* Name of known arch i (0 <= i < mla_arch_count()), NULL otherwise. */
MLA_API const char* mla_arch_name(int index);

/* Writes the code-object root that device-free queries use into buf (NUL-terminated).
 * MLA_ERROR_INVALID_ARGUMENT: buf null or len < 1. MLA_ERROR_BUFFER_TOO_SMALL: the path does not
 * fit (*needed, if not null, gets the length needed including the NUL). MLA_ERROR_ARCH_NOT_BUILT:
 * no root was found (the message lists every place searched). */
MLA_API mla_status mla_codeobject_root(char* buf, size_t len, size_t* needed);

/* Sets the code-object root used by device-free queries (NULL: back to the search order above).
 * Tables are re-read on the next query. MLA_ERROR_INVALID_ARGUMENT: the path is not a folder. */
MLA_API mla_status mla_set_codeobject_root(const char* root);

/* Information about one arch under the current root. */
typedef struct mla_arch_info {
    size_t struct_size;
    char arch[32];
    int32_t known;          /* 1 if libmla knows this arch's rules                             */
    int32_t vendor;         /* 0 = AMD (HIP), 1 = NVIDIA (CUDA driver)                         */
    int32_t num_tables;     /* CSV tables found for this arch under the root                   */
    int32_t num_rows;       /* rows over all of them                                           */
    int32_t missing_files;  /* rows whose code-object file is missing                          */
    int32_t default_num_cus;/* CU/SM count libmla assumes when none is given (132 on sm_90a)   */
} mla_arch_info;
#define MLA_ARCH_INFO_INIT {sizeof(mla_arch_info), {0}, 0, 0, 0, 0, 0, 0}

/* Fills *info for `arch` under the current root. MLA_ERROR_INVALID_ARGUMENT: null pointer.
 * MLA_ERROR_ARCH_NOT_BUILT: arch unknown (info->known = 0 is still filled). MLA_ERROR_TABLE: a
 * table of the arch is malformed (duplicate key, missing column): the message names the rows. */
MLA_API mla_status mla_arch_query(const char* arch, mla_arch_info* info);

/* Writes into buf one line per table row of `arch` whose code-object file is missing
 * ("<table csv path>:<line>: <code-object path>\n", tables in name order, rows in file order),
 * and, with MLA_TABLE_DUPLICATES=first (keep the first of two rows with equal keys instead of
 * failing with MLA_ERROR_TABLE; aiter's own gfx950 mla_asm.csv needs it), one line per dropped
 * duplicate row, NUL-terminated; *count gets the number of such lines. buf may be NULL when len
 * is 0 (size query:
 * BUFFER_TOO_SMALL with *needed set).
 * Errors as mla_arch_query, plus MLA_ERROR_BUFFER_TOO_SMALL (*needed gets the size). */
MLA_API mla_status mla_arch_check(const char* arch, char* buf, size_t len, size_t* needed,
                                  int* count);

/* ---------------------------------------------------------------------------------------------
 * Context: one GPU, its runtime (loaded with dlopen on first use), its module cache.
 * ------------------------------------------------------------------------------------------- */
typedef struct mla_context mla_context;

typedef struct mla_context_options {
    size_t struct_size;
    int32_t device;               /* device ordinal (default 0)                                   */
    const char* arch;             /* NULL: ask the device. Else must match the device's arch,
                                     except with a fake runtime or MLA_ALLOW_ARCH_OVERRIDE=1   */
    const char* codeobject_root;  /* NULL: the search order above                                 */
} mla_context_options;
#define MLA_CONTEXT_OPTIONS_INIT {sizeof(mla_context_options), 0, NULL, NULL}

/* Creates a context. The runtime is chosen by arch: CUDA driver (libcuda.so.1, override with
 * MLA_LIBCUDA_PATH) for sm_*, HIP (libamdhip64.so, override with MLA_LIBHIP_PATH) for gfx*; with
 * arch NULL, CUDA is tried first, then HIP.
 * MLA_ERROR_INVALID_ARGUMENT: out null, bad options. MLA_ERROR_RUNTIME_UNAVAILABLE: no runtime
 * library (the message lists every path tried). MLA_ERROR_NO_DEVICE: no device at that ordinal.
 * MLA_ERROR_ARCH_NOT_BUILT: unknown arch or no tables for it. */
MLA_API mla_status mla_context_create(const mla_context_options* options, mla_context** out);

/* Destroys a context and unloads its modules. NULL is a no-op. */
MLA_API void mla_context_destroy(mla_context* ctx);

/* Arch string of the context ("sm_90a"), or NULL for a NULL context. */
MLA_API const char* mla_context_arch(const mla_context* ctx);

/* Number of compute units (CUs / SMs) of the context's device; 0 for NULL. */
MLA_API int mla_context_num_cus(const mla_context* ctx);

/* Launches the registry's smoke kernel (table `smoke`) writing out[i] = a * i + b for
 * i < n (int32, device pointer) on stream (CUstream / hipStream_t, NULL = default). Proves the
 * table -> code object -> module -> launch path. Errors: INVALID_ARGUMENT, NO_KERNEL,
 * CODE_OBJECT (file missing: the message names the path), LAUNCH. */
MLA_API mla_status mla_smoke_launch(mla_context* ctx, int32_t* out, int32_t n, int32_t a,
                                    int32_t b, void* stream);

/* Minimal device helpers for tests, examples, benchmarks and bindings that have no CUDA/HIP
 * runtime of their own. Thin wrappers of the context's runtime; errors are MLA_ERROR_LAUNCH with
 * the runtime's message, or INVALID_ARGUMENT. */
MLA_API mla_status mla_device_malloc(mla_context* ctx, void** ptr, size_t bytes);
MLA_API mla_status mla_device_free(mla_context* ctx, void* ptr);
MLA_API mla_status mla_memcpy_htod(mla_context* ctx, void* dst, const void* src, size_t bytes,
                                   void* stream);
MLA_API mla_status mla_memcpy_dtoh(mla_context* ctx, void* dst, const void* src, size_t bytes,
                                   void* stream);
MLA_API mla_status mla_memset_d8(mla_context* ctx, void* dst, unsigned char value, size_t bytes,
                                 void* stream);
MLA_API mla_status mla_stream_synchronize(mla_context* ctx, void* stream);
/* Event timing: records a start and stop event around nothing else; use as
 * mla_timer_start(ctx, stream, &t); ...launches...; mla_timer_stop_ms(ctx, t, &ms).
 * mla_timer_stop_ms records the stop event on the start's stream, waits for it and frees the
 * timer (also when it fails, except for INVALID_ARGUMENT on a NULL argument). */
typedef struct mla_timer mla_timer;
MLA_API mla_status mla_timer_start(mla_context* ctx, void* stream, mla_timer** timer);
MLA_API mla_status mla_timer_stop_ms(mla_context* ctx, mla_timer* timer, float* ms);

/* ==== BEGIN AMD (issue 7) ==================================================================== */
/* Stage 1 of MLA decode on AMD GPUs with aiter's own code objects (the code-object root is an
 * aiter installation's hsa/ folder, see docs/amd.md): the equivalent of aiter's
 * mla_decode_stage1_asm_fwd (gfx942, gfx950, gfx1250 page 64) and mla_ps1_fp8_asm_fwd (gfx1250
 * page 1, persistent). libmla has no AMD reducer: split partials (num_splits > 1, or split works
 * of a persistent plan) must be merged by aiter's mla_reduce_v1 / stage-2 kernel.
 * All pointers are device pointers; strides are in elements. Validates everything before
 * loading or launching; allocates nothing, never synchronises. */
typedef struct mla_amd_stage1_args {
    size_t struct_size;
    mla_dtype q_dtype;            /* bf16 or fp8 (gfx942: fp8_fnuz; gfx950/gfx1250: fp8 e4m3fn)     */
    mla_dtype kv_dtype;           /* bf16, fp8 as q, or byte (DeepSeek-V3.2, bf16 Q, gfx942/950)     */
    int32_t batch_size;           /* B: qo_indptr / kv_indptr have B + 1 entries                   */
    int32_t num_heads;            /* query heads per request as laid out in q (post-fold when the
                                     caller folded heads for a persistent plan)                   */
    int32_t nhead_kv;             /* must be 1 (absorbed MLA)                                      */
    int32_t max_seqlen_q;         /* L: query tokens per request                                   */
    int32_t page_size;            /* tokens per page, power of two (gfx1250: 64 asm, 1 PS1)         */
    int32_t causal;
    int32_t persistent;           /* 1: planner-driven (work_meta_data / work_indptr); 0: split-KV */
    float softmax_scale;          /* > 0                                                           */
    const void* q;                /* [total_q, num_heads, 576]                                     */
    int64_t q_stride_token;       /* 0 = num_heads * q_stride_head; must equal it                  */
    int64_t q_stride_head;        /* 0 = 576; gfx1250 page-64 route: >= 576 (padded rows, e.g. 768
                                     fp8 bytes); every other route: 576                           */
    const void* kv_cache;         /* [num_pages, page_size, 1, 576] (byte KV: its packed pages)     */
    int64_t kv_stride_page;       /* 0 = page_size * 576 (byte KV: required, in bytes)              */
    int64_t num_pages;            /* pages in kv_cache (PS1: the kernel's bound on page ids)        */
    const int32_t* qo_indptr;     /* [B + 1]                                                       */
    const int32_t* kv_indptr;     /* [B + 1] pages                                                 */
    const int32_t* kv_page_indices; /* [num_page_indices]                                          */
    int64_t num_page_indices;     /* length of kv_page_indices (PS1: the kernel's bound)           */
    const int32_t* kv_last_page_lens; /* [B] (not read by PS1, may be NULL there)                  */
    /* non-persistent: */
    const int32_t* num_kv_splits_indptr; /* [B + 1] = b * num_splits                               */
    /* persistent: */
    const uint64_t* work_meta_data; /* [2] addresses of work_indptr and work_info_set (gfx942/950) */
    const int32_t* work_indptr;   /* [num_clusters + 1]: the grid is work_indptr_len - 1 workgroups */
    int64_t work_indptr_len;
    const int32_t* work_info_set; /* [works][8] (read by PS1; gfx942/950 read it via work_meta_data) */
    /* outputs: */
    void* split_data;             /* partials: persistent [partial rows * L, 1, H, 512] fp32;
                                     non-persistent [total_q, num_splits, H, 512], fp32, or bf16
                                     (written as the final output) when num_splits == 1          */
    int32_t num_splits;           /* split_data.size(1): persistent 1; non-persistent >= 1         */
    mla_dtype split_dtype;        /* MLA_DTYPE_FP32, or MLA_DTYPE_BF16 as above                    */
    float* split_lse;             /* partial LSE, [rows, num_splits, H] fp32                       */
    void* output;                 /* [total_q, H, 512] bf16 (persistent: unsplit works write it)   */
    float* lse;                   /* [total_q, H] fp32 final LSE or NULL (persistent: selects the
                                     LSE-writing kernel; gfx1250 asm: must be NULL)               */
    const float* q_scale;         /* [1] fp32; required with fp8 Q                                 */
    const float* kv_scale;        /* [1] fp32; required with fp8 Q; optional with bf16 Q, fp8 KV   */
    /* round-robin context parallel: g_kv_indptr given selects the cprr kernels */
    const int32_t* g_kv_indptr;   /* [B + 1] global KV lengths, or NULL                            */
    int32_t cp_world_size;        /* >= 1                                                          */
    int32_t cp_rank;              /* 0 <= cp_rank < cp_world_size                                  */
    /* gfx1250 page-64 (packed argument ABI): */
    int32_t* valid_split_count;   /* [B] int32 scratch, required on gfx1250 page 64                */
    int32_t use_valid_split_count_reduce;
} mla_amd_stage1_args;
#define MLA_AMD_STAGE1_ARGS_INIT                                                                  \
    {sizeof(mla_amd_stage1_args), MLA_DTYPE_BF16, MLA_DTYPE_BF16, 0, 16, 1, 1, 1, 1, 1, 0.0f,    \
     NULL, 0, 0, NULL, 0, 0, NULL, NULL, NULL, 0, NULL, NULL, NULL, NULL, 0, NULL, NULL, 1,          \
     MLA_DTYPE_FP32, NULL, NULL, NULL, NULL, NULL, NULL, 1, 0, NULL, 0}

/* Launches one stage-1 decode kernel of aiter's tables on `stream` (hipStream_t, NULL = default).
 * Route (docs/amd.md): gfx942/gfx950 and gfx1250 non-persistent -> table mla_asm, key from the
 * asm remap (aiter asm_mla.cu, §5.3; mla_decode_asm_query gives the same answer); gfx1250
 * persistent -> table mla_dsl (PS1 FP8 code objects, key as mla_ps1_fp8_asm_query with
 * cprr = cp_world_size > 1), launched with the row's dyn_lds bytes of dynamic LDS.
 * The kernel comes from the row's co_name (file) and knl_name (mangled symbol); arguments are
 * passed as one packed block (hipModuleLaunchKernel "extra" form):
 *   gfx942/gfx950: 368 bytes of 16-byte slots, 256 threads, grid persistent
 *     (work_indptr_len - 1, 1, 1), else (ceil(L*H / sub_Q), B, num_splits);
 *   gfx1250 page 64: the 120-byte packed ABI, 128 threads, grid (1, B, num_splits), 128 heads
 *     (2, B, num_splits);
 *   gfx1250 PS1: docs/amd.md (inferred layout), grid (work_indptr_len - 1, 1, 1).
 * MLA_ERROR_INVALID_ARGUMENT: null ctx/args/required pointer, nhead_kv != 1, bad dtype for the
 * arch, fp8 Q without both scales, cp_rank outside [0, cp_world_size), strides or sizes that
 * disagree or overflow the kernel's 32-bit fields, split_dtype that does not match num_splits.
 * MLA_ERROR_UNSUPPORTED_SHAPE: the context is not an AMD arch; the remap rejects the request.
 * MLA_ERROR_NO_KERNEL: no table row for the key (the message gives it). MLA_ERROR_TABLE: a
 * malformed row (dyn_lds, launch_threads). MLA_ERROR_CODE_OBJECT: the row's file is missing or
 * rejected (the message names the path). MLA_ERROR_LAUNCH: the runtime refused the launch. */
MLA_API mla_status mla_amd_decode_stage1(mla_context* ctx, const mla_amd_stage1_args* args,
                                         void* stream);
/* ==== END AMD ================================================================================ */

/* ==== BEGIN ROUTING (issue 3) ================================================================ */
/* Device-free routing. Rules reproduce aiter (csrc/include/mla_decode_shape.h, asm_mla.cu, see
 * docs/routing.md) for gfx942/gfx950/gfx1250 and libmla's own rules for sm_90a. */

typedef enum mla_planner { MLA_PLANNER_V1_0 = 0, MLA_PLANNER_V1_1 = 1, MLA_PLANNER_V1_2 = 2 } mla_planner;

typedef enum mla_head_plan_kind {
    MLA_HEAD_PLAN_NATIVE = 0,              /* the planner and kernels take the heads as they are   */
    MLA_HEAD_PLAN_FOLDED = 1,              /* heads folded into qk_batch_ratio pseudo-batches      */
    MLA_HEAD_PLAN_ACCEPTED_NON_NATIVE = 2, /* accepted without fold, not a native shape           */
    MLA_HEAD_PLAN_UNSUPPORTED = 3
} mla_head_plan_kind;

typedef enum mla_backend {
    MLA_BACKEND_ASM = 0,         /* aiter hand-written asm stage 1 (mla_asm.csv)                */
    MLA_BACKEND_FLYDSL_PS1 = 1,  /* aiter FlyDSL JIT, gfx1250 page size 1 (no table)           */
    MLA_BACKEND_OPUS = 2,        /* aiter opus, gfx950 (no table)                               */
    MLA_BACKEND_HK = 3,          /* aiter HipKittens (experimental, never runnable)             */
    MLA_BACKEND_PS1_FP8_ASM = 4, /* aiter PS1 FP8 code objects (mla_dsl.csv)                    */
    MLA_BACKEND_SM90 = 5         /* libmla's own Hopper cubins (codeobjects/sm_90a)             */
} mla_backend;

typedef enum mla_asm_status {
    MLA_ASM_OK = 0,
    MLA_ASM_REMAP_REJECT = 1,    /* the remap itself refuses (e.g. fp8 gqa64 non-persistent)    */
    MLA_ASM_NO_KERNEL = 2,       /* no exact table row                                          */
    MLA_ASM_ARCH_NOT_BUILT = 3,  /* no table for the arch under the code-object root            */
    MLA_ASM_NOT_ASM = 4,         /* backend is not table-driven (shape support only)            */
    MLA_ASM_UNKNOWN = 5
} mla_asm_status;

/* One decode shape, the input of the head plan and shape-support queries. Defaults (from the
 * INIT macro) follow aiter's get_mla_decode_shape_support keywords. */
typedef struct mla_decode_shape {
    size_t struct_size;
    const char* arch;            /* required                                                    */
    int32_t num_heads;           /* query heads (per KV head), >= 1                              */
    int32_t num_heads_k;         /* must be 1 (absorbed MLA)                                     */
    int32_t max_seqlen_qo;       /* L: query tokens per request (MTP), >= 1                      */
    int32_t uni_seqlen_qo;       /* uniform qlen, -1 = same as max_seqlen_qo                     */
    mla_dtype q_dtype;
    mla_dtype kv_dtype;
    int32_t v_head_dim;          /* 512                                                          */
    int32_t page_size;           /* tokens per page, power of two                                */
    int32_t return_lse;          /* caller wants the final LSE                                   */
    int32_t causal;              /* causal MTP mask (no-op at L = 1)                             */
    int32_t persistent;          /* persistent (planner-driven) launch                           */
    int32_t cp_round_robin;      /* round-robin context parallel (g_kv_indptr given)             */
    int32_t cp_world_size;       /* 1 = no context parallel; forced to 2 when cp_round_robin
                                    and left at 1 (aiter's shape query does the same)          */
    int32_t fast_mode;           /* 1: planner v1_2                                              */
    int32_t intra_batch_mode;    /* with fast_mode 0: 1 -> v1_0, 0 -> v1_1                       */
    int32_t has_scales;          /* q_scale and kv_scale will be given                           */
    int32_t enable_experimental; /* aiter AITER_ENABLE_EXPERIMENTAL                              */
    int32_t flydsl_ps1;          /* aiter AITER_MLA_DECODE_PS1_FLYDSL                            */
    int32_t use_ps1_asm;         /* aiter AITER_MLA_DECODE_PS1_ASM (default 1)                   */
    int32_t use_opus;            /* aiter AITER_MLA_USE_OPUS                                     */
} mla_decode_shape;
#define MLA_DECODE_SHAPE_INIT                                                                  \
    {sizeof(mla_decode_shape), NULL, 16, 1, 1, -1, MLA_DTYPE_BF16, MLA_DTYPE_BF16, 512, 1, 0, 1, \
     1, 0, 1, 1, 0, 1, 0, 0, 1, 0}

/* aiter's MlaDecodeHeadPlan plus the backend. */
typedef struct mla_head_plan {
    size_t struct_size;
    mla_planner planner;
    mla_head_plan_kind plan;
    int32_t planner_accepts;      /* plan != UNSUPPORTED                                        */
    int32_t natively_supported;
    int32_t qk_batch_ratio;       /* head fold factor (1 = no fold)                             */
    int32_t kernel_num_heads;     /* heads per (pseudo-)request the kernel sees                 */
    int32_t seqlen_fold;          /* v1_0, 128 heads: each query token becomes a pseudo-batch    */
    int32_t packed_qo_len_per_wg; /* query rows (tokens x heads) one workgroup packs            */
    int32_t reduce_supported;     /* mla_reduce_v1_supports(kernel_num_heads, v_head_dim)       */
    mla_backend backend;
} mla_head_plan;
#define MLA_HEAD_PLAN_INIT {sizeof(mla_head_plan), MLA_PLANNER_V1_2, MLA_HEAD_PLAN_UNSUPPORTED, 0, 0, 1, 0, 1, 128, 0, MLA_BACKEND_ASM}

/* Head plan and backend of a shape (aiter get_mla_decode_head_plan_v1 rules, §4.3).
 * MLA_ERROR_INVALID_ARGUMENT: null pointer, num_heads < 1, max_seqlen_qo < 1, num_heads_k != 1,
 * bad dtype. MLA_ERROR_ARCH_NOT_BUILT: unknown arch. An unsupported shape is not an error:
 * plan->plan = MLA_HEAD_PLAN_UNSUPPORTED. */
MLA_API mla_status mla_decode_head_plan(const mla_decode_shape* shape, mla_head_plan* plan);

/* Result of the shape-support query: every field of aiter's MlaDecodeShapeSupport. */
typedef struct mla_decode_support {
    size_t struct_size;
    char arch[32];
    int32_t enable_experimental;
    int32_t flydsl_ps1;
    mla_planner planner;
    mla_head_plan_kind plan;
    int32_t planner_accepts;
    int32_t natively_supported;
    int32_t fold_factor;          /* = qk_batch_ratio                                           */
    int32_t seqlen_fold;
    int32_t native;               /* natively_supported && fold_factor == 1 && seqlen_fold == 1 */
    int32_t kernel_num_heads;
    int32_t packed_qo_len_per_wg;
    int32_t reduce_supported;
    mla_backend backend;
    mla_asm_status asm_status;
    int32_t table_gqa;            /* remapped table key, -1 if none                             */
    int32_t table_qseqlen;
    char asm_kernel[256];         /* table knl_name, "" if none                                 */
    char code_object[512];        /* path of the row's code object, "" if none                  */
    int32_t supported;            /* 1 = runs, 0 = does not, -1 = unknown (no table to ask)     */
    int32_t num_reasons;
    char reasons[1024];           /* one reason per line, aiter's wording                       */
    int32_t libmla_reducer;       /* 1 if libmla itself can merge this shape's split tiles (its
                                     sm_90a reducer); 0 on AMD archs, where `supported` is
                                     aiter's verdict and split tiles need aiter's mla_reduce_v1
                                     (libmla ships no AMD reducer, docs/amd.md)               */
} mla_decode_support;
/* Output struct: only struct_size needs setting; the call fills every field. */
#define MLA_DECODE_SUPPORT_INIT                                                                \
    {sizeof(mla_decode_support), {0}, 0, 0, MLA_PLANNER_V1_2, MLA_HEAD_PLAN_UNSUPPORTED, 0, 0, 1, \
     1, 0, 0, 128, 0, MLA_BACKEND_ASM, MLA_ASM_UNKNOWN, -1, -1, {0}, {0}, -1, 0, {0}, 0}

/* Can this shape run on this arch, on which kernel, and if not, why not (aiter PR #6107).
 * Errors as mla_decode_head_plan; a shape that cannot run is not an error (supported = 0). */
MLA_API mla_status mla_decode_shape_support(const mla_decode_shape* shape,
                                            mla_decode_support* out);

/* aiter-compatible asm table query. Returns status | table_gqa << 8 | table_qseqlen << 16
 * (status an mla_asm_status: OK, REMAP_REJECT, NO_KERNEL, ARCH_NOT_BUILT), or a negative
 * mla_status (-MLA_ERROR_INVALID_ARGUMENT, -MLA_ERROR_BUFFER_TOO_SMALL, ...) with
 * mla_last_error() set. The row's knl_name goes NUL-terminated into kernel_buf ("" if none);
 * if it does not fit, -MLA_ERROR_BUFFER_TOO_SMALL and the message gives the length needed
 * (kernel_buf is then left untouched). kernel_buf may be NULL when kernel_buf_len is 0 (the name
 * is then not written). Each packed field is 8 bits: a key above 255 (only in a NO_KERNEL answer)
 * reads 255, no key (REMAP_REJECT) reads 0. An unknown arch is -MLA_ERROR_ARCH_NOT_BUILT; a
 * known arch without the table answers the status ARCH_NOT_BUILT; a malformed table is
 * -MLA_ERROR_TABLE. dtype strings: bf16, fp16, fp8, fp8_fnuz, byte. sm_90a looks up
 * codeobjects/sm_90a/decode/mla_decode.csv (table_gqa = the row tile M, table_qseqlen 0).
 * `stream` is ignored (aiter's trailing slot). Remap rules: aiter asm_mla.cu (§5.3), see
 * docs/routing.md. */
MLA_API int mla_decode_asm_query(const char* arch, const char* q_type, const char* kv_type,
                                 int num_heads, int nhead_kv, int max_seqlen_q, int persistent,
                                 int causal, int has_lse, int has_cprr, char* kernel_buf,
                                 int kernel_buf_len, void* stream);

/* aiter-compatible PS1 FP8 table query (mla_dsl.csv, gfx1250). Returns an mla_asm_status, or a
 * negative mla_status as above. */
MLA_API int mla_ps1_fp8_asm_query(const char* arch, int num_heads, int max_seqlen_q, int causal,
                                  int has_lse, int has_cprr, char* kernel_buf, int kernel_buf_len,
                                  void* stream);

/* 1 if aiter's mla_reduce_v1 has a (num_heads, head_dim) specialisation (its 24 rows), else 0. */
MLA_API int mla_reduce_v1_supports(int num_heads, int head_dim);

/* Planner cluster multiplier (aiter mla_metadata_cluster_multiplier / occupancy): 2 iff gfx950,
 * enable_experimental, heads*qlen == 64 and fp8/fp8; else 1. -1 on bad input. */
MLA_API int mla_decode_occupancy(const char* arch, int num_heads, int max_seqlen_q,
                                 mla_dtype q_dtype, mla_dtype kv_dtype, int enable_experimental);

/* Names for printing: "v1_2", "Native"/"Folded"/..., "asm"/"sm90"/..., "OK"/"NO_KERNEL"/... */
MLA_API const char* mla_planner_string(mla_planner p);
MLA_API const char* mla_head_plan_string(mla_head_plan_kind k);
MLA_API const char* mla_backend_string(mla_backend b);
MLA_API const char* mla_asm_status_string(mla_asm_status s);
/* ==== END ROUTING ============================================================================ */

/* ==== BEGIN PLANNER (issue 4) ================================================================ */
/* The metadata planner: splits every request's KV across the compute units into work items, in
 * aiter's buffer layout (get_mla_metadata_v1), so that a persistent kernel runs one workgroup per
 * cluster. Buffers (all int32 unless stated, row-major):
 *   work_metadata      uint64[2]     device addresses of work_indptr and work_info_set
 *   work_indptr        [num_clusters + 1]  works of cluster c: work_info_set rows
 *                                    [work_indptr[c], work_indptr[c+1])
 *   work_info_set      [max_works][8]  batch_idx, partial_qo_loc (-1 = unsplit), qo_start,
 *                                    qo_end, kv_start, kv_end (page units, into kv_page_indices),
 *                                    kv_offset (tokens of the request after kv_end), tile (sm_90a
 *                                    v1_2 plans: the work's qo tile, the reduce_* index; else 0,
 *                                    aiter's pad)
 *   reduce_indptr      [tiles + 1]   partials of tile t: reduce_partial_map[reduce_indptr[t] ..
 *                                    reduce_indptr[t+1]); unsplit tiles have none
 *   reduce_final_map   [tiles][2]    (qo_start, qo_end) output rows of a split tile
 *   reduce_partial_map [max_partials] first partial-buffer row of each fragment
 * Query rows are in folded row space when the head plan folds heads (batch_idx is the
 * pseudo-batch; the real request is batch_idx / qk_batch_ratio). */

typedef struct mla_metadata_params {
    size_t struct_size;
    const char* arch;            /* required: selects the head plan and default CU count        */
    int32_t num_clusters;        /* CUs / SMs to spread over; 0 = the arch's default (sm_90a 132,
                                    gfx942 304, gfx950 256, gfx1250 the arch table's)          */
    int32_t batch_size;          /* B (requests); qo/kv indptr have B + 1 entries                */
    int32_t max_seqlen_qo;       /* L, 1..8 (MTP)                                                */
    int32_t num_heads;           /* query heads per KV head (before folding)                     */
    int32_t num_heads_k;         /* must be 1                                                    */
    mla_dtype q_dtype;
    mla_dtype kv_dtype;
    int32_t page_size;           /* power of two, 1..1024                                        */
    int32_t kv_granularity;      /* tokens per split unit, power of two (aiter default 16)       */
    int32_t causal;
    int32_t fast_mode;           /* 1 = v1_2 (default); 0 -> intra_batch_mode picks v1_0 / v1_1  */
    int32_t intra_batch_mode;
    int32_t max_split_per_batch; /* -1 = automatic (workload-adaptive); > 0 caps the split count  */
    int32_t num_kv_splits;       /* v1_0 / intra-batch sizing (aiter default 32)                 */
    int32_t is_cp_round_robin;   /* round-robin context parallel: no local causal trim           */
    int32_t enable_experimental; /* as in mla_decode_shape                                       */
    int32_t flydsl_ps1;
    /* sm_90a, v1_2, heads folded (qk_batch_ratio r > 1, e.g. 128 heads = 2 x 64): 1 lays the
     * pseudo-requests out head group by head group (all requests' group 0, then group 1, ...)
     * instead of aiter's request by request; when num_clusters C is a multiple of r, cluster
     * c + g C/r gets group g of exactly the tiles cluster c gets of group 0, in the same order
     * (and when every request has the same n > 1 qo tiles, e.g. uniform MTP at 64 heads, and C
     * is a multiple of r n: one such section per tile, so the r n tiles of a request are twins),
     * so the r CTAs read the request's KV together and the L2 serves all but one read (H200,
     * 128 heads, b = 128, s_k = 4096: 440 -> 390 us; docs/planner.md). The work items mean the
     * same either way (docs/plan-layout.md); only their assignment to clusters differs.
     * Recommended on sm_90a (the mla tools' default). mla_plan_metadata_device writes the same
     * bytes when C is a multiple of r and max_seqlen_qo fits one qo tile, and returns
     * MLA_ERROR_UNSUPPORTED_SHAPE otherwise (the qo-tile sections are host-only);
     * mla_update_metadata returns MLA_ERROR_UNSUPPORTED_SHAPE for it. 0 (default) = aiter's
     * order. MLA_ERROR_INVALID_ARGUMENT: not 0 / 1, or 1 on another arch or planner. */
    int32_t head_group_major;
    /* v1_2's cost of one work item beyond its KV blocks, in KV tokens: each work costs its blocks
     * plus max(aiter's max(1, ceil(16 / page_size)), ceil(work_overhead_tokens / block tokens))
     * blocks, block tokens = max(1, kv_granularity / page_size) x page_size. A larger overhead
     * raises every work's cost (a short request's most) and widens the zone at a tile's end where
     * a cluster boundary moves on to the next tile, so fewer tiles split (a split costs the decode
     * a second work's refill, the partial output and the reducer's merge) and the clusters'
     * loads are balanced by work count more than by KV; it sets no minimum fragment length.
     * -1 (default) = the arch's value (a rule table, src/routing/arch.cpp): on sm_90a 1024 when
     * the qo tiles (kernel heads x tile tokens at max_seqlen_qo) have 64 rows (64 or 128 heads;
     * 16 heads x 4 MTP tokens, 32 x 2, 8 x 8) or at most 16 rows with fp8 KV (the register-A
     * kernels, fp8 or bf16 Q), else aiter's rule (16-row bf16 tiles, 17-32-row tiles, and
     * 33-63-row tiles, e.g. 48 heads, the last not measured); aiter's rule on gfx942 / gfx950 /
     * gfx1250.
     * Measured on the H200 (docs/performance.md, sessions 18-19), 1024 against aiter's rule, µs:
     * b = 128, s_k = 4096, 128 heads 334 -> 308 (256 whole tiles); s_q = 2 578 -> 564; fp8 Q and
     * KV 445 -> 425; 128 heads bf16 at varied lengths (s_k ~ normal(4096, 2048)) 381 -> 356.
     * 16 rows, fp8 KV:
     * varied 155.8 -> 140.2 (fp8 Q), 165 -> 155 (bf16 Q); b = 64, s_k = 1024 51.1 -> 43.0. Not
     * taken: 16 rows bf16, where the varied main job lost (179.8 -> 190.3: a short request weighs
     * like 1024 tokens of KV and the busiest SM gets ~25% more KV than the mean) while fixed
     * lengths gained (s_k = 16384 582 -> 574, b = 64 43.0 -> 41.2); 32 rows, where varied s_q = 2
     * lost (bf16 218 -> 239, fp8 243 -> 275). 0 = aiter's rule on
     * any arch. Host and device planners read the same value.
     * MLA_ERROR_INVALID_ARGUMENT: below -1 or above 1048576. */
    int32_t work_overhead_tokens;
    /* Padding made explicit (the struct ended at 96 bytes before split_tail_tokens, its last 4
     * bytes padding that a caller of the older header does not initialise): ignored. */
    int32_t reserved0;
    /* v1_2's split tail, in KV tokens: a cluster boundary never leaves fewer than this many
     * tokens (rounded up to whole blocks, block tokens as above) of a tile of at most 2 W blocks
     * (W: the plan's cluster stride, so the tile spans two clusters at most); the cluster that
     * reaches such a tail takes it whole, past its budget, so no short last fragment is split
     * off. Longer tiles are split over many clusters regardless and keep aiter's boundaries (b =
     * 1, s_k = 32768 lost 28.9 -> 33.2 us before this condition, docs/performance.md session
     * 20). Unlike work_overhead_tokens it changes no work's cost, so the clusters stay balanced
     * by KV. -1 (default) = the arch's value (the same rule table): on sm_90a with bf16 KV 512 for
     * tiles of at most 16 rows (16 heads; 8 x 2 MTP) and 256 for 17-32 rows (16 heads x 2 MTP),
     * else 0; 0 on gfx942 / gfx950 / gfx1250. Measured on the H200 (docs/performance.md), against
     * aiter's rule, 16 heads bf16, µs: 512 (session 19 call 4, one round): b = 128, s_k = 16384
     * 573.6 -> 565.9 and b = 64, s_k = 1024 43.4 -> 41.6 (both unsplit), the varied main job
     * 180.5 -> 180.7; at 32 rows (MTP 2, varied lengths) 512 lost (218 -> 224.5) and 256 gained:
     * 217.6, 217.7 -> 214.9, 214.5 (session 20 call 1, two rounds). 0 = no tail rule (aiter's
     * rule when work_overhead_tokens is 0 too). Host and device planners read the same value.
     * MLA_ERROR_INVALID_ARGUMENT: below -1 or above 1048576. */
    int32_t split_tail_tokens;
} mla_metadata_params;
#define MLA_METADATA_PARAMS_INIT                                                               \
    {sizeof(mla_metadata_params), NULL, 0, 1, 1, 16, 1, MLA_DTYPE_BF16, MLA_DTYPE_BF16, 1, 16, 1, \
     1, 0, -1, 32, 0, 0, 0, 0, -1, 0, -1}

/* Buffer lengths (get_mla_metadata_info_v1 semantics: never too small), in elements of each
 * buffer's own row: work_info_set_rows rows of 8 int32, reduce_final_map_rows rows of 2 int32. */
typedef struct mla_metadata_sizes {
    size_t struct_size;
    int64_t work_metadata_len;       /* 2 (uint64)                                             */
    int64_t work_indptr_len;         /* num_clusters + 1                                       */
    int64_t work_info_set_rows;      /* max works                                              */
    int64_t reduce_indptr_len;       /* tiles + 1                                              */
    int64_t reduce_final_map_rows;   /* tiles                                                  */
    int64_t reduce_partial_map_len;  /* max fragments of split tiles                           */
    int64_t partial_rows;            /* rows of the partial output/LSE workspace (each row holds
                                        kernel_num_heads x 512 fp32 + kernel_num_heads fp32)   */
    int64_t workspace_bytes;         /* decode workspace: partial output + partial LSE, bytes  */
    int32_t num_clusters;            /* resolved cluster count                                 */
    int32_t kernel_num_heads;        /* heads per row after folding                            */
    int32_t qk_batch_ratio;          /* head fold factor                                       */
} mla_metadata_sizes;

/* Computes buffer lengths for a batch of up to params->batch_size requests.
 * MLA_ERROR_INVALID_ARGUMENT: null pointer, bad value (message names it), is_cp_round_robin
 * with causal 0 (round-robin context parallel is causal only, aiter §7).
 * MLA_ERROR_UNSUPPORTED_SHAPE: the head plan rejects the heads/qlen/dtypes. */
MLA_API mla_status mla_metadata_info(const mla_metadata_params* params, mla_metadata_sizes* out);

/* Caller-owned planner buffers (host pointers for mla_plan_metadata, device pointers for
 * mla_plan_metadata_device and mla_decode_fwd), each with its length as above. */
typedef struct mla_metadata_buffers {
    size_t struct_size;
    uint64_t* work_metadata;       int64_t work_metadata_len;
    int32_t* work_indptr;          int64_t work_indptr_len;
    int32_t* work_info_set;        int64_t work_info_set_rows;
    int32_t* reduce_indptr;        int64_t reduce_indptr_len;
    int32_t* reduce_final_map;     int64_t reduce_final_map_rows;
    int32_t* reduce_partial_map;   int64_t reduce_partial_map_len;
} mla_metadata_buffers;

/* Summary of a plan (host planner output; for printing and tests). */
typedef struct mla_plan_summary {
    size_t struct_size;
    int32_t num_works;          /* work_indptr[num_clusters]                                   */
    int32_t num_tiles;          /* qo tiles planned (reduce_indptr entries used)               */
    int32_t num_split_tiles;    /* tiles split over several works                              */
    int32_t num_partials;       /* fragments written to the partial buffer                     */
    int32_t num_partial_rows;   /* partial-buffer rows used                                    */
    int32_t max_works_per_cluster;
    int64_t total_kv_blocks;    /* cost units planned (kv_granularity blocks + overhead)       */
    int64_t max_cluster_cost;   /* largest cluster cost; balance = total / (clusters * max)   */
    /* Twin sections the clusters are laid out in (head_group_major, docs/planner.md): S > 1 when
     * each of S groups of num_clusters / S consecutive clusters runs one head group (or, for
     * uniform MTP batches, one qo tile of one head group) of the same requests' tiles in the same
     * order; 1 in aiter's order or when the layout changes nothing. */
    int32_t num_sections;
    /* Padding made explicit (the struct ended here, at 56 bytes, before work_overhead_blocks):
     * reserved, callers must not read it (this library writes 0). A new field must not sit in an
     * old struct's tail padding, or a library of that older size would write it without the
     * caller knowing. */
    int32_t reserved0;
    /* Cost units every work adds to total_kv_blocks / max_cluster_cost: the work overhead in
     * effect, max(aiter's max(1, ceil(16 / page_size)), ceil(work_overhead_tokens / block
     * tokens)) blocks with the arch's default resolved (mla_metadata_params.work_overhead_tokens;
     * the v1_2 planner's cost model, which v1_0 / v1_1 do not plan by). Added in session 19 at
     * byte 56: a caller whose struct_size is 56 (the older header) does not get it, and a
     * library older than the field leaves it as the caller set it: preset it to -1 to tell
     * (its real values are >= 1). */
    int32_t work_overhead_blocks;
    /* Padding made explicit (the struct ended at 64 bytes before split_tail_blocks): written as
     * 0. */
    int32_t reserved1;
    /* The split tail in effect, in blocks (mla_metadata_params.split_tail_tokens rounded up,
     * the arch's default resolved; 0 = none). At byte 64, past the older struct's end. */
    int32_t split_tail_blocks;
    /* Padding made explicit (the struct ended at 72 bytes before active_clusters): written as
     * 0. */
    int32_t reserved2;
    /* CTAs a decode of this plan needs: 1 + the last cluster c with work_indptr[c + 1] >
     * work_indptr[c] (1 for a plan with no work), at most num_clusters. Empty clusters before it
     * (e.g. at the end of each twin section of a head_group_major plan) are still counted. Pass
     * it as mla_decode_args.active_clusters so that no CTA is launched for the trailing empty
     * clusters: 128 whole tiles on 132 SMs decode 1.1-1.7% faster on the H200 that way
     * (docs/performance.md, session 24). At byte 72, past the older struct's end: a caller whose
     * struct_size is 72 does not get it, and a library older than the field leaves it as the
     * caller set it (zero the struct first: 0 there means every cluster). */
    int32_t active_clusters;
} mla_plan_summary;

/* Host planner (v1_2 / v1_0 / v1_1 by fast_mode and intra_batch_mode). Inputs are host arrays:
 * qo_indptr [B+1] (query tokens), kv_indptr [B+1] (pages), kv_last_page_lens [B] (tokens in each
 * request's last page, 1..page_size; ignored for requests with no page). work_metadata[0..1] get
 * the addresses of the given work_indptr / work_info_set (pass device addresses through
 * device_work_indptr / device_work_info_set to plan on the host for a device copy, or NULL).
 * summary may be NULL.
 * MLA_ERROR_INVALID_ARGUMENT: null pointer, decreasing indptr, negative or overflowing length,
 * last page length out of range, page_size / kv_granularity not a power of two, qlen > L.
 * MLA_ERROR_BUFFER_TOO_SMALL: a buffer shorter than mla_metadata_info says.
 * MLA_ERROR_UNSUPPORTED_SHAPE: head plan rejects the shape. Nothing is written on error. */
MLA_API mla_status mla_plan_metadata(const mla_metadata_params* params, const int32_t* qo_indptr,
                                     const int32_t* kv_indptr, const int32_t* kv_last_page_lens,
                                     const mla_metadata_buffers* buffers,
                                     const void* device_work_indptr,
                                     const void* device_work_info_set, mla_plan_summary* summary);

/* Device planner: the same buffers, byte for byte, computed on `stream` from device-resident
 * qo_indptr / kv_indptr / kv_last_page_lens, with no host synchronisation and no allocation (CUDA
 * graph capturable). sm_90a only (table `mla_meta`). Errors: INVALID_ARGUMENT, BUFFER_TOO_SMALL,
 * UNSUPPORTED_SHAPE (as the host planner, checked on the host from params; also
 * head_group_major = 1 with num_clusters not a multiple of the head groups or with more than one
 * qo tile per request at max_seqlen_qo), NO_KERNEL,
 * CODE_OBJECT, LAUNCH. */
MLA_API mla_status mla_plan_metadata_device(mla_context* ctx, const mla_metadata_params* params,
                                            const int32_t* qo_indptr, const int32_t* kv_indptr,
                                            const int32_t* kv_last_page_lens,
                                            const mla_metadata_buffers* buffers, void* stream);

/* Advances a host plan by one decode step without replanning (aiter
 * decode_update_mla_metadata_v1): requires page_size 1, num_heads_k 1, kv_granularity >= 16.
 * new_kv_indptr [B+1] is the new kv_indptr; num_reject_tokens [B] (NULL = none) counts the draft
 * tokens rejected per request (delta = 1 - rejected). Buffers are updated in place.
 * MLA_ERROR_INVALID_ARGUMENT as the planner, and for a plan that does not match params. */
MLA_API mla_status mla_update_metadata(const mla_metadata_params* params,
                                       const int32_t* new_kv_indptr,
                                       const int32_t* num_reject_tokens,
                                       const mla_metadata_buffers* buffers);

/* ---- CPU reference ----------------------------------------------------------------------- */

/* Host-side decode problem (all host pointers). Shapes:
 *   q           [total_q, num_heads, 576]    q_dtype, strides q_stride_token / q_stride_head
 *   kv_cache    [num_pages, page_size, 1, 576] kv_dtype, contiguous rows of 576
 *   qo_indptr   [B+1], kv_indptr [B+1] (pages), kv_page_indices [kv_indptr[B]],
 *   kv_last_page_lens [B]
 *   out         [total_q, num_heads, 512] fp32 (reference) ; lse [total_q, num_heads] fp32
 * Scores s = (q . k) * softmax_scale * q_scale * kv_scale; out = softmax(s) @ (V * kv_scale).
 * A query row that sees no key gets out 0 and LSE -inf. */
typedef struct mla_host_problem {
    size_t struct_size;
    int32_t batch_size;
    int32_t num_heads;
    int32_t max_seqlen_q;
    int32_t page_size;
    int32_t num_pages;
    int32_t causal;
    mla_dtype q_dtype;
    mla_dtype kv_dtype;
    float softmax_scale;
    float q_scale;             /* dequant factor, 1 for bf16                                  */
    float kv_scale;
    const void* q;             int64_t q_stride_token;   int64_t q_stride_head;
    const void* kv_cache;
    const int32_t* qo_indptr;
    const int32_t* kv_indptr;
    const int32_t* kv_page_indices;
    const int32_t* kv_last_page_lens;
    int32_t fp8_p_quant;       /* 1: quantise exp(s - max) to fp8 before P.V (fp8 Q kernels)  */
    /* round-robin context parallel (cp_world_size > 1): g_kv_indptr [B+1] global KV lengths */
    const int32_t* g_kv_indptr;
    int32_t cp_world_size;
    int32_t cp_rank;
} mla_host_problem;
#define MLA_HOST_PROBLEM_INIT {sizeof(mla_host_problem), 0, 16, 1, 1, 0, 1, MLA_DTYPE_BF16, MLA_DTYPE_BF16, 0.0f, 1.0f, 1.0f, NULL, 0, 0, NULL, NULL, NULL, NULL, NULL, 0, NULL, 1, 0}

/* Direct reference (float64 accumulation). out [total_q, H, 512] fp32, lse [total_q, H] fp32
 * (NULL = not wanted). MLA_ERROR_INVALID_ARGUMENT on bad shapes or page ids out of range, and with
 * cp_world_size > 1 for: g_kv_indptr NULL or decreasing, cp_rank outside [0, W), causal 0, a local
 * page table whose length for request b is not ceil((G_b - cp_rank) / W) tokens. */
MLA_API mla_status mla_decode_reference(const mla_host_problem* problem, float* out, float* lse);

/* Executes a plan's work items exactly as the kernels must (per work: unsplit -> out/lse, split
 * -> partial rows), then reduces split tiles (o = sum exp(lse_i - lse*) o_i). Same outputs as
 * mla_decode_reference to fp32 rounding. partial_out / partial_lse may be NULL (allocated
 * internally). MLA_ERROR_INVALID_ARGUMENT: plan inconsistent with the problem. */
MLA_API mla_status mla_execute_plan_reference(const mla_host_problem* problem,
                                              const mla_metadata_params* params,
                                              const mla_metadata_buffers* plan, float* out,
                                              float* lse);
/* ==== END PLANNER ============================================================================ */

/* ==== BEGIN CONTEXT PARALLEL (issue 9) ======================================================= */
/* Round-robin context parallelism (aiter "cprr", docs/context-parallel.md): global KV position p
 * of a request lives on rank p mod W; each rank decodes its shard (g_kv_indptr / cp_world_size /
 * cp_rank of mla_decode_args on the GPU, of mla_host_problem on the CPU; planner
 * is_cp_round_robin = 1) into a partial O and LSE for every query row; the caller all-gathers
 * them (NCCL, not libmla) and merges them here.
 *
 * Merge of W partial (O, LSE) pairs of the same query rows. Shapes (row-major; each rank's block
 * contiguous, the ranks' blocks partial_*_rank_stride elements apart, by default back to back):
 *   partial_out  [W, total_q, H, 512]  partial_dtype: MLA_DTYPE_FP32 or MLA_DTYPE_BF16 (what a
 *                                      rank's mla_decode_fwd writes), each normalised within its
 *                                      rank (o_k = softmax over the rank's keys @ V)
 *   partial_lse  [W, total_q, H]       fp32 natural-log LSE of each partial
 * The rank strides let one all-gather receive buffer that holds each rank's (out, lse) packed
 * together be merged in place, without first copying it apart.
 *   out          [total_q, H, 512]     out_dtype (device: bf16; host: bf16 or fp32)
 *   lse          [total_q, H]          fp32, or NULL (not wanted)
 * For each (row, head): lse* = m + log sum_k exp(lse_k - m) with m the largest FINITE lse_k,
 * o = sum_k exp(lse_k - lse*) o_k (§1). A partial whose LSE is not finite (-inf: the rank saw
 * no key; +inf or NaN: aiter's HIP reducer's marker of an all-empty group) gets weight 0 and its
 * o_k is never used (the device kernel may load it, but never multiplies or adds it), so it can
 * never bring NaN in; when no lse_k is finite: o = 0, lse* = -inf.
 * W = 1 copies (o converted to out_dtype). */
typedef struct mla_merge_args {
    size_t struct_size;
    int32_t world_size;           /* W >= 1                                                        */
    int32_t total_q;              /* query rows per partial, >= 0 (0: nothing to do)               */
    int32_t num_heads;            /* H >= 1                                                        */
    mla_dtype partial_dtype;      /* MLA_DTYPE_FP32 or MLA_DTYPE_BF16                              */
    mla_dtype out_dtype;          /* MLA_DTYPE_BF16 (device and host) or MLA_DTYPE_FP32 (host)     */
    const void* partial_out;      /* [W, total_q, H, 512]                                          */
    const float* partial_lse;     /* [W, total_q, H]                                               */
    void* out;                    /* [total_q, H, 512]                                             */
    float* lse;                   /* [total_q, H] or NULL                                          */
    /* Appended fields: a struct_size that stops before them reads them as 0. Elements of
     * partial_dtype from rank k's partial_out block to rank k + 1's; 0: total_q * H * 512 (back
     * to back). Otherwise >= total_q * H * 512; on the device a multiple of 16 bytes.           */
    int64_t partial_out_rank_stride;
    /* floats from rank k's partial_lse block to rank k + 1's; 0: total_q * H; else >= total_q * H */
    int64_t partial_lse_rank_stride;
} mla_merge_args;
#define MLA_MERGE_ARGS_INIT {sizeof(mla_merge_args), 1, 0, 16, MLA_DTYPE_FP32, MLA_DTYPE_BF16, NULL, NULL, NULL, NULL, 0, 0}

/* Merges on the context's device on `stream` (CUstream; NULL = default stream) with the sm_90a
 * code object of table mla_merge (key kind=merge, outType=bf16): device pointers, validated on
 * the host before anything is launched; allocates nothing, never synchronises (CUDA graph
 * capturable); total_q == 0 launches nothing. Where the row says launch_pdl 1 (the shipped
 * table) the kernel is a programmatic dependent launch: when the kernel ahead of it on the same
 * `stream` (e.g. the all-gather that filled partial_out) ends, the merge's launch latency overlaps
 * that kernel's completion (or its tail, if it triggers its dependents early), and the merge
 * reads nothing until that kernel has completed, so stream order holds as for a plain launch.
 * After an event wait on another stream it is an ordinary launch.
 * MLA_ERROR_INVALID_ARGUMENT: ctx / args / a required pointer NULL, world_size < 1, total_q < 0,
 * num_heads < 1, partial_dtype not fp32/bf16, total_q * H above 2^31 - 1, a rank stride that is
 * negative or smaller than one rank's block, partial_out, its rank stride in bytes or out not
 * 16-byte aligned, partial_lse or lse not 4-byte aligned, outputs that overlap each other or an
 * input. MLA_ERROR_UNSUPPORTED_SHAPE: the context is not sm_90a. MLA_ERROR_NO_KERNEL: no table
 * row for out_dtype (only bf16 has one). MLA_ERROR_TABLE: the row's launch_threads is not the
 * kernel's (256), or its launch_pdl is not 0 / 1 (absent: 0). MLA_ERROR_CODE_OBJECT,
 * MLA_ERROR_LAUNCH from the runtime. */
MLA_API mla_status mla_merge_attn_states(mla_context* ctx, const mla_merge_args* args,
                                         void* stream);

/* The same merge on the host (host pointers), float64 accumulation; out rounded to fp32, then
 * (out_dtype bf16) to bf16, nearest even. The CPU reference of mla_merge_attn_states, used by
 * the tests and the Python package. Errors: INVALID_ARGUMENT as above (no alignment rule). */
MLA_API mla_status mla_merge_attn_states_host(const mla_merge_args* args);
/* ==== END CONTEXT PARALLEL =================================================================== */

/* ==== BEGIN DECODE (issue 5) ================================================================= */
/* Launch of absorbed MLA decode on the context's device: the persistent decode kernel driven by
 * the plan's work items, then the reducer for split tiles. All pointers are device pointers;
 * strides are in elements. The call validates everything before launching, allocates nothing and
 * never synchronises (CUDA graph capturable). */
typedef struct mla_decode_args {
    size_t struct_size;
    mla_dtype q_dtype;            /* bf16 or fp8 (e4m3fn on sm_90a)                                */
    mla_dtype kv_dtype;           /* bf16 or fp8                                                   */
    int32_t batch_size;           /* B                                                             */
    int32_t num_heads;            /* H (query heads; one KV head)                                  */
    int32_t max_seqlen_q;         /* L (MTP 1..4 on sm_90a)                                        */
    int32_t total_q;              /* rows of q / out = qo_indptr[B]                                */
    int32_t page_size;            /* tokens per page                                               */
    int32_t num_pages;            /* pages in the KV cache (page ids must be < num_pages)          */
    int32_t causal;
    float softmax_scale;          /* the model's scale (DeepSeek-V3: 1/sqrt(192) x mscale^2)      */
    const float* q_scale;         /* [1] fp32 dequant factor, required for fp8 Q                    */
    const float* kv_scale;        /* [1] fp32 dequant factor, required for fp8 KV                   */
    const void* q;                /* [total_q, H, 576]                                             */
    int64_t q_stride_token;       /* 0 = H*576                                                     */
    int64_t q_stride_head;        /* 0 = 576                                                       */
    const void* kv_cache;         /* [num_pages, page_size, 1, 576], rows contiguous              */
    int64_t kv_stride_page;       /* 0 = page_size*576                                             */
    const int32_t* qo_indptr;     /* [B+1]                                                         */
    /* Page table, form 1 (aiter CSR): */
    const int32_t* kv_indptr;     /* [B+1] pages                                                   */
    const int32_t* kv_page_indices; /* [kv_indptr[B]]                                              */
    const int32_t* kv_last_page_lens; /* [B]                                                       */
    int64_t num_page_indices;     /* length of kv_page_indices                                     */
    /* Page table, form 2 (FlashMLA / vLLM): used when kv_page_indices is NULL and block_table is
     * not. block_table replaces kv_page_indices only: page i of request b is
     * block_table[b * block_table_stride + i]. kv_indptr and kv_last_page_lens stay REQUIRED in
     * both forms: they are the planner's inputs (kv_indptr[b+1] - kv_indptr[b] = pages of b =
     * ceil(seq_lens[b] / page_size), last = seq_lens[b] - (pages - 1) * page_size), the exact
     * arrays the plan was made from; the caller builds them from seq_lens (a prefix sum) before
     * planning. seq_lens itself is not read by mla_decode_fwd. */
    const int32_t* block_table;   /* [B, block_table_stride]                                       */
    int32_t block_table_stride;   /* max blocks per request                                        */
    const int32_t* seq_lens;      /* [B] tokens (documentation only, not read)                     */
    void* out;                    /* [total_q, H, 512] of out_dtype (bf16 unless out_dtype below) */
    int64_t out_stride_token;     /* 0 = H*512, elements of out_dtype                              */
    int64_t out_stride_head;      /* 0 = 512, elements of out_dtype                                */
    float* lse;                   /* [total_q, H] fp32 natural log, NULL = not wanted              */
    const mla_metadata_buffers* plan;  /* device buffers from the planner for this batch          */
    const mla_metadata_params* plan_params; /* the params the plan was made with                  */
    void* workspace;              /* partial output + LSE, mla_metadata_sizes.workspace_bytes,
                                     16-byte aligned (NULL allowed when that size is 0)            */
    size_t workspace_bytes;
    /* Device-side error flag: page ids cannot be checked on the host without a synchronisation,
     * so the kernel checks each one it uses. A page id outside [0, num_pages) or a page-table
     * index outside kv_page_indices / the block_table row is never read (its tokens get no
     * weight) and sets a bit here with atomicOr: 1 = page id out of range, 2 = page-table index
     * out of range, 4 = work item inconsistent with the kernel or beyond active_clusters, 8 =
     * launched with too little shared memory. The caller zeroes it (mla_memset_d8) and reads it after the stream
     * synchronises; NULL = not reported (bad ids are still never read). */
    int32_t* error_flag;          /* [1] int32 device memory, 4-byte aligned, or NULL              */
    /* Round-robin context parallel ("cprr", issue 9, docs/context-parallel.md), appended
     * after the fields above: a caller whose struct_size ends before them gets W = 1 (off).
     * With cp_world_size W > 1 this call decodes rank cp_rank's shard of every request: global
     * KV position p of request b lives on rank p % W, and the rank's LOCAL token j (what
     * kv_indptr / kv_last_page_lens / the page table above describe) is global position
     * j * W + cp_rank. Causal MTP then masks on GLOBAL positions: query t of L sees the local
     * keys whose global position is <= G_b - L + t. The result is the rank's partial out / lse
     * (every row written; a row that sees no local key: out 0, lse -inf), to be all-gathered by
     * the caller and merged with mla_merge_attn_states. W > 1 needs causal = 1, a plan made with
     * is_cp_round_robin = 1 and lse (to merge; not enforced). */
    const int32_t* g_kv_indptr;   /* [B+1] int32 device array, prefix sums of the GLOBAL KV
                                     lengths in tokens: G_b = g_kv_indptr[b+1] - g_kv_indptr[b]
                                     (as mla_host_problem.g_kv_indptr). Required when W > 1,
                                     ignored (not read) when W = 1. The local length of request
                                     b must be ceil((G_b - cp_rank) / W) tokens (0 if G_b <=
                                     cp_rank); that cannot be checked here without a
                                     synchronisation (device arrays), see mla_decode_fwd        */
    int32_t cp_world_size;        /* W >= 1; 1 = no context parallel (default)                     */
    int32_t cp_rank;              /* this rank, 0 <= cp_rank < W (default 0)                       */
    /* Output dtype (appended after the cprr fields: a caller whose struct_size ends before it
     * gets MLA_DTYPE_BF16; so does a zeroed struct, MLA_DTYPE_BF16 being 0).
     * MLA_DTYPE_BF16 (default): out is bf16 [total_q, H, 512]. MLA_DTYPE_FP32: out is fp32
     * [total_q, H, 512], written without the final bf16 rounding (both the decode kernel's
     * unsplit works and the reducer store fp32): what context-parallel ranks hand to
     * mla_merge_attn_states as partial_dtype MLA_DTYPE_FP32, so that the merged output is
     * rounded to bf16 once. For either dtype out_stride_token / out_stride_head count elements
     * of out_dtype, out must be 16-byte aligned and both strides multiples of 16 bytes (8 bf16
     * or 4 fp32 elements); lse stays fp32. Any other value: MLA_ERROR_INVALID_ARGUMENT. fp32
     * out needs a wgmma kernel (mla_decode_qm_* / mla_decode_wg_*, every row of the shipped
     * table): a table row naming the mma.sync fallback (mla_decode_<q>_<kv>_m*) gives
     * MLA_ERROR_UNSUPPORTED_SHAPE. */
    mla_dtype out_dtype;
    /* Fused reduction (appended after out_dtype: a caller whose struct_size ends before it, or
     * that passes NULL, gets the separate reducer launch). tile_counters: int32 device memory of
     * at least mla_metadata_sizes.reduce_indptr_len - 1 elements (one per planned qo tile),
     * 4-byte aligned, ZEROED BY THE CALLER ONCE (e.g. mla_memset_d8 after allocating it); every
     * call leaves it zeroed again, so the same buffer serves every layer and step, eager or
     * replayed in a CUDA graph, as long as the calls that share it run in stream order (one
     * buffer per stream that decodes concurrently). With it, a v1_2 plan (fast_mode 1) made by
     * libmla's planner for these params (the kernel checks each split work's tile index, dw 7,
     * against the plan's tile count and reduce_final_map and rejects a work that fails with
     * MLA_DECODE_ERR_PLAN; it trusts the plan's partial rows), a reducer row for the plan's geometry that says
     * launch_fused 1 (many split tiles, not the slim reducer's few long ones) and a decode row
     * keyed fused = 1 (the 16- and 32-row bf16 wgmma kernels, *_fused; none for context
     * parallel, cp_world_size > 1, yet), that kernel reduces the split tiles itself (the CTA that finishes a
     * tile's last fragment reduces it, docs/plan-layout.md "Fused reduction") and mla_decode_fwd
     * launches one kernel instead of two, with the same results. Otherwise the buffer is not
     * touched. Measured on the H200 (docs/performance.md, sessions 15-17): one launch saves ~3
     * us of host time per call and 0.7-2.2 us on plans without split tiles (b = 128, 4K tokens);
     * where tiles split it costs 1.3-1.7 us more than the reducer kernel at b = 64 / 1K tokens and
     * the same within 1.4 us at b = 128 / 16K and b = 1536 / 2K. (The ~7 us it seemed to save at 2
     * query tokens in session 16 was the fused build's code, which the plain 32-row rows now run
     * too: session 17.) If error_flag reports
     * MLA_DECODE_ERR_PLAN (4), a rejected work left its tile's counter non-zero: zero the buffer
     * again. */
    int32_t* tile_counters;
    int64_t tile_counters_len;    /* elements of tile_counters                                    */
    /* Launch only CTAs 0 .. active_clusters - 1 of the plan's num_clusters (appended after
     * tile_counters_len: a caller whose struct_size ends before it, or that passes 0, gets one
     * CTA per cluster; a table row with launch_cluster 2 also launches every cluster).
     * 1..num_clusters: every work of the plan must lie in clusters [0, active_clusters), as
     * mla_plan_summary.active_clusters gives for a host plan; the kernel checks it (its last CTA
     * compares work_indptr at active_clusters and at num_clusters) and ORs MLA_DECODE_ERR_PLAN
     * (4) into error_flag when works were left out: their rows are then not written, or, for
     * split tiles, reduced from partials never written (and tile_counters are left non-zero).
     * Why: each CTA that finds its cluster empty cost the others memory throughput, ~0.3-0.4%
     * of the decode's time apiece on the H200 (docs/performance.md, session 24: 128 whole tiles
     * on 132 SMs, main job -1.1%, b 128 x 16K tokens -1.7%). A device-planned plan
     * (mla_plan_metadata_device) has no host summary: pass 0. A CUDA graph keeps the grid it
     * captured: replanning into the same buffers needs an active_clusters no larger than the
     * captured one (or capture with 0). Negative or above num_clusters:
     * MLA_ERROR_INVALID_ARGUMENT. */
    int32_t active_clusters;
    /* Padding made explicit (the struct ended at 288 bytes, active_clusters and 4 bytes of tail
     * padding): ignored by this library, so that a caller built before no_split_tiles, whose
     * struct_size covers these bytes, cannot set it by chance. */
    int32_t reserved0;
    /* 1: the plan splits no qo tile over several works, as mla_plan_summary.num_split_tiles == 0
     * says for a host plan (e.g. b = 128 requests of 4K tokens on 132 clusters, or b = 64 of 1K
     * with the default work overhead): mla_decode_fwd then launches the decode kernel alone, no
     * reducer (and no fused reduction: tile_counters, still checked for alignment and length, are
     * not used; no reducer table row is looked up, so its errors cannot occur), and gives the
     * kernel no partial buffers. The kernel checks it: a split work (partial_qo_loc >= 0) is rejected, its
     * rows not written, and MLA_DECODE_ERR_PLAN (4) ORed into error_flag, as for any plan the
     * kernel cannot run. 0 (and a caller whose struct_size ends before the field, appended at
     * byte 288): the reducer launches whenever the plan's sizes allow splits
     * (mla_metadata_sizes.partial_rows > 0), and finds nothing to do where no tile split. Why:
     * that reducer cost such plans 0.1-7.7 us of GPU time on the H200, 5.0-7.7 on the 64-row
     * rows (64 and 128 heads), and a launch's host time a call (docs/performance.md, session 31
     * call 3). A device-planned plan has no host summary: pass 0, or 1 only where the caller
     * knows that no tile splits. Other values: MLA_ERROR_INVALID_ARGUMENT. */
    int32_t no_split_tiles;
} mla_decode_args;
#define MLA_DECODE_ARGS_INIT {sizeof(mla_decode_args), MLA_DTYPE_BF16, MLA_DTYPE_BF16, 0, 16, 1, 0, 1, 0, 1, 0.0f, NULL, NULL, NULL, 0, 0, NULL, 0, NULL, NULL, NULL, NULL, 0, NULL, 0, NULL, NULL, 0, 0, NULL, NULL, NULL, NULL, 0, NULL, NULL, 1, 0, MLA_DTYPE_BF16, NULL, 0, 0, 0, 0}

/* Runs decode on `stream` (CUstream / hipStream_t; NULL = default stream): the decode kernel of
 * table mla_decode (key: dtypes, row tile M, causal, lse, cprr = (cp_world_size > 1), fused =
 * (tile_counters given and the reducer row allows it; see tile_counters)) with
 * num_clusters CTAs (active_clusters when given), then, when the plan can split (partial_rows > 0) and the caller
 * does not say that it splits no tile (no_split_tiles), the reducer of table
 * mla_reduce (key: spread, a few long-split tiles or many), unless the decode kernel reduces the
 * split tiles itself (tile_counters given, and the tables allow it: see tile_counters). Each is launched as a programmatic
 * dependent launch where its row says launch_pdl 1 (every shipped row): its CTAs may become
 * resident while the kernel ahead of it in the stream finishes, and wait for that kernel's
 * completion (griddepcontrol.wait) before they read what it writes (the reducers read the plan,
 * which the decode does not write, before their wait); the reducer so starts as the decode's CTAs
 * exit or trigger. The 16- and 32-row bf16 decode kernels, where they load by TMA (page_size >= 8),
 * trigger their dependents once each CTA's last KV tile has landed
 * (griddepcontrol.launch_dependents, sm_90a since session 25; 32 rows since session 27), so a kernel
 * the caller launches programmatically right after this call (when no reducer follows) may start
 * before the decode's last CTAs finish: it must wait (griddepcontrol.wait, e.g.
 * cudaGridDependencySynchronize) before it reads out or lse, as every programmatic launch must.
 * A driver that refuses the attribute gets a plain launch. sm_90a only.
 * out_dtype (bf16 or fp32) is a run-time flag of both kernels, not a table key: the same rows
 * and symbols run either. Where the decode row says launch_kv_tma 1 or 2 (bf16 Q and KV: 16-,
 * 32- and 64-row tiles; fp8 Q and KV: 64-row tiles, 1 only) and page_size >= 8, the kernel loads
 * KV tiles by TMA through a tensor map of kv_cache that the call encodes (cuTensorMapEncodeTiled,
 * once per context and cache; its L2 promotion is the row's launch_kv_tma_l2 in bytes, 0 / 64 /
 * 128 / 256, absent = 256): 1, one box per 64-column block of a page run (9 a 64-token tile);
 * 2 (the shipped bf16 rows since session 27), where the KV is bf16 in pages of >= 64 tokens, one
 * box per 64-token tile through a 4-D map, and as 1 otherwise. Without a map (no such driver
 * entry point, or the driver refuses it) the same kernel loads by cp.async, with the same
 * results.
 * MLA_ERROR_INVALID_ARGUMENT: null or misaligned pointer (q, kv_cache, out 16-byte aligned; q,
 * kv and out strides multiples of 16 bytes, i.e. out strides multiples of 8 bf16 / 4 fp32
 * elements; index arrays 4-byte, work_info_set and workspace 16-byte aligned), out_dtype other
 * than MLA_DTYPE_BF16 / MLA_DTYPE_FP32, a size that disagrees (strides that overlap,
 * kv_stride_page < page_size * 576, scale pointer missing for fp8), a plan made for another
 * arch, head count, batch, qlen, page size, causal flag or dtype (plan_params is compared with
 * args field by field); context parallel: cp_world_size < 1, cp_rank outside [0, W),
 * g_kv_indptr NULL or not 4-byte aligned with W > 1, causal = 0 with W > 1, a plan made with
 * is_cp_round_robin = 0 for W > 1 (its causal trim drops keys a row sees under the global
 * mask) or with is_cp_round_robin = 1 for W = 1 (a forgotten cp_world_size); tile_counters
 * not 4-byte aligned, or tile_counters_len < 0; active_clusters < 0 or > the plan's
 * num_clusters; no_split_tiles other than 0 / 1.
 * MLA_ERROR_BUFFER_TOO_SMALL: workspace or plan buffers smaller than mla_metadata_info(plan_params)
 * says, or tile_counters (when not NULL) shorter than reduce_indptr_len - 1 elements.
 * MLA_ERROR_UNSUPPORTED_SHAPE: the head plan rejects the shape, the context is not
 * sm_90a, or out_dtype fp32 with a row naming the mma.sync fallback kernel.
 * MLA_ERROR_NO_KERNEL: no table row for the key. MLA_ERROR_TABLE: a row whose launch_threads /
 * launch_smem disagree with the kernel build, a launch_kv_tma other than 0 / 1 / 2, 1 on a kernel
 * other than mla_decode_wg_bf16_bf16_m16 / _m32, their _fused builds, mla_decode_qm_bf16_bf16_m64
 * and mla_decode_qm_fp8_fp8_m64 / _ws (the ones its TMA loads are verified on), 2 on a kernel other than
 * the bf16-KV ones of those, a launch_kv_tma_l2 other than 0 / 64 / 128 / 256, a reducer row
 * that breaks its kernel's launch contract (launch_units_per_cta, launch_threads;
 * reduce_params.h), a launch_pdl or launch_fused other than 0 / 1, a launch_cluster other than
 * 1 / 2 (the decode grid as thread-block clusters; no shipped row sets it), or a decode row keyed
 * fused = 1 that names a kernel without the fused reduction (not mla_decode_wg_bf16_bf16_m16_fused /
 * _m32_fused). MLA_ERROR_CODE_OBJECT,
 * MLA_ERROR_LAUNCH from the runtime. Page ids: see error_flag. Not checked (device memory, no
 * synchronisation): the contents of g_kv_indptr and whether each local length equals
 * ceil((G_b - cp_rank) / W); a disagreeing shard gives a wrong mask, but no KV outside the
 * local page table is ever read.
 * Check them on the host where the arrays live there: mla_decode_reference does, and the
 * Python decode(..., validate=True) copies them back to check. */
MLA_API mla_status mla_decode_fwd(mla_context* ctx, const mla_decode_args* args, void* stream);

/* Device-to-device copy of `bytes` (a multiple of 16; src, dst 16-byte aligned device pointers)
 * on `stream` with libmla's 16-byte-vector copy kernel (table mla_copy, sm_90a): the copy
 * bandwidth yardstick that `mla run` prints beside decode. Errors: INVALID_ARGUMENT (null,
 * misaligned, size), NO_KERNEL / CODE_OBJECT (no copy kernel for the arch), LAUNCH. */
MLA_API mla_status mla_device_copy(mla_context* ctx, void* dst, const void* src, size_t bytes,
                                   void* stream);
/* ==== END DECODE ============================================================================= */

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* MLA_C_API_H */
