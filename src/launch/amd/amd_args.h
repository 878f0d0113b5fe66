// amd_args.h - the argument blocks of aiter's MLA stage-1 code objects, one plain struct per
// kernel family, laid out byte for byte as the kernels read them (aiter-mla-semantics.md §5.2,
// §5.5). Plain C types only: the blocks are copied as they are into the launch ("extra" form).
#pragma once
#include <cstddef>
#include <cstdint>

namespace mla::amd {

// gfx942 / gfx950 stage 1 (aiter asm_mla.cu KernelArgs, §5.2): every field in its own 16-byte
// slot, pointers 8 bytes + 8 of padding, 32-bit scalars 4 + 12. 0x170 = 368 bytes.
struct Gfx9Args {
    const void* r;            uint64_t pad_r;        // 0x000 split data (or bf16 output)
    const void* lse;          uint64_t pad_lse;      // 0x010 split LSE
    const void* q;            uint64_t pad_q;        // 0x020
    const void* kv;           uint64_t pad_kv;       // 0x030
    const void* ltp;          uint64_t pad_ltp;      // 0x040 kv_indptr
    const void* ltd;          uint64_t pad_ltd;      // 0x050 kv_page_indices
    const void* ltl;          uint64_t pad_ltl;      // 0x060 kv_last_page_lens
    float scale;              uint32_t pad_scale[3]; // 0x070 softmax_scale
    uint32_t mqa;             uint32_t pad_mqa[3];   // 0x080 gqa*L, or gqa when remapped
    uint32_t kv_split;        uint32_t pad_split[3]; // 0x090 split_data.size(1)
    uint32_t q_bytes;         uint32_t pad_qb[3];    // 0x0A0 bytes of Q per request
    uint32_t page_bytes;      uint32_t pad_pb[3];    // 0x0B0 bytes per KV page
    uint32_t log2_page;       uint32_t pad_lp[3];    // 0x0C0
    const void* qtp;          uint64_t pad_qtp;      // 0x0D0 qo_indptr
    const void* stp;          uint64_t pad_stp;      // 0x0E0 work_meta_data | num_kv_splits_indptr
    const void* rp;           uint64_t pad_rp;       // 0x0F0 persistent: final output
    const void* q_scale;      uint64_t pad_qs;       // 0x100
    const void* kv_scale;     uint64_t pad_kvs;      // 0x110
    uint32_t out16_nosplit;   uint32_t pad_o16[3];   // 0x120
    const void* lsep;         uint64_t pad_lsep;     // 0x130 final LSE
    const void* gkvtp;        uint64_t pad_gkv;      // 0x140 g_kv_indptr
    uint32_t cp_world_size;   uint32_t pad_cpw[3];   // 0x150
    uint32_t cp_rank;         uint32_t pad_cpr[3];   // 0x160
};
static_assert(sizeof(Gfx9Args) == 368, "gfx9 stage-1 block is 0x170 bytes");
static_assert(offsetof(Gfx9Args, scale) == 0x70 && offsetof(Gfx9Args, qtp) == 0xD0 &&
                  offsetof(Gfx9Args, out16_nosplit) == 0x120 && offsetof(Gfx9Args, cp_rank) == 0x160,
              "gfx9 stage-1 slots");

// gfx1250 page-64 stage 1, the packed "preload" ABI (aiter PR #5065, §5.2): 11 pointers, then
// 8 dwords, no padding. 120 bytes.
struct Gfx1250Args {
    const void* r;            // 0   split data (bf16 output when passes == 1)
    const void* lse;          // 8
    const void* q;            // 16
    const void* kv;           // 24
    const void* ltp;          // 32  kv_indptr
    const void* ltd;          // 40  kv_page_indices
    const void* ltl;          // 48  kv_last_page_lens
    const void* qtp;          // 56  qo_indptr
    const void* q_scale;      // 64
    const void* kv_scale;     // 72
    const void* valid_splits; // 80  valid_split_count [B]
    uint32_t out16_nosplit;   // 88
    float scale;              // 92
    uint32_t q_seq_lens;      // 96  gqa * L
    uint32_t passes;          // 100 splits
    uint32_t page_bytes;      // 104
    uint32_t log2_page;       // 108
    uint32_t q_bytes;         // 112 gqa * L * 576 * itemsize
    uint32_t use_valid_split_count_reduce;  // 116
};
static_assert(sizeof(Gfx1250Args) == 120 && offsetof(Gfx1250Args, out16_nosplit) == 88,
              "gfx1250 packed block");

// gfx1250 PS1 FP8 code objects (mla_dsl.csv, FlyDSL-exported). Not documented by aiter's C++;
// inferred from the public FlyDSL page-size-1 kernel's parameter list (natural alignment):
// 11 pointers, softmax_scale, num_pages, num_page_indices. 104 bytes (4 trailing pad bytes).
struct Ps1Args {
    const void* r;            // 0   split data [partials, H, 512] fp32
    const void* lse;          // 8   split LSE
    const void* final_out;    // 16  [total_q, H, 512] bf16
    const void* final_lse;    // 24  [total_q, H] fp32 or null
    const void* q;            // 32
    const void* kv;           // 40
    const void* page_indices; // 48
    const void* work_indptr;  // 56
    const void* work_info;    // 64
    const void* q_scale;      // 72
    const void* kv_scale;     // 80
    float scale;              // 88
    int32_t num_pages;        // 92
    int32_t num_page_indices; // 96
    int32_t pad;              // 100
};
static_assert(sizeof(Ps1Args) == 104, "PS1 block");

// The round-robin CP rows (cprr = 1) take the CP arguments of mla_ps1_fp8_asm_fwd (§5.5) after
// the plain block, in the entry's order (inferred, not verified against the code objects).
struct Ps1CprrArgs {
    Ps1Args base;             // 0
    const void* qo_indptr;    // 104
    const void* kv_indptr;    // 112
    const void* g_kv_indptr;  // 120
    int32_t cp_world_size;    // 128
    int32_t cp_rank;          // 132
};
static_assert(sizeof(Ps1CprrArgs) == 136 && offsetof(Ps1CprrArgs, qo_indptr) == 104,
              "PS1 cprr block");

}  // namespace mla::amd
