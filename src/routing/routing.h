// routing.h - internal entry points of the device-free routing rules (src/routing/*), used by
// the planner, the launch code and the CLI. All throw mla::Error; the C API wraps them.
#pragma once
#include <memory>
#include <string>

#include "mla_c_api.h"
#include "registry/registry.h"

namespace mla::route {

enum class Arch { gfx942, gfx950, gfx1250, sm90a };

// Parses "gfx942" / "gfx950" / "gfx1250" / "sm_90a" [ARCH_NOT_BUILT for anything else,
// INVALID_ARGUMENT for null].
Arch parse_arch(const char* arch);
const char* arch_name(Arch arch);
bool is_nvidia(Arch arch);
// CU / SM count assumed when none is given: gfx942 304, gfx950 256, gfx1250 256 (see
// docs/routing.md for the source), sm_90a 132 (H100/H200 SXM).
int default_num_cus(Arch arch);
// The v1_2 planner's split defaults, in KV tokens, when the caller passes -1
// (mla_metadata_params.work_overhead_tokens / split_tail_tokens), for qo tiles of tile_rows rows
// (kernel heads x tile tokens) of KV dtype kv_dtype (arch.cpp's rule table): 0 and 0 = aiter's
// rule (AMD archs; sm_90a's 17-63-row tiles); sm_90a: overhead 1024 from 64 rows and for up to
// 16 rows with fp8 KV, tail 512 for up to 16 rows with bf16 KV.
struct SplitDefaults {
    int overhead_tokens;
    int tail_tokens;
};
SplitDefaults default_split(Arch arch, int tile_rows, mla_dtype kv_dtype);
// Number of known archs and the name of the i-th (nullptr out of range), for listings.
int arch_count();
const char* arch_name_at(int index);

// Validates a shape [INVALID_ARGUMENT: heads < 1, qlen < 1, num_heads_k != 1, bad dtype,
// page_size not a power of two] and computes its head plan and backend (aiter §4.3 rules for
// AMD archs, libmla's rules for sm_90a, see docs/routing.md).
// The shape must come from MLA_DECODE_SHAPE_INIT (struct_size is not read here). `backend` is
// the persistent route (plan_backend below); plan == UNSUPPORTED is not an error.
mla_head_plan head_plan(const mla_decode_shape& shape);

// Backend of a validated shape whose head plan is `plan` (aiter mla_decode_backend, §4.3, with
// the gfx1250 PS1 rules of aiter PR #6563; MLA_BACKEND_SM90 on sm_90a). The persistent route:
// a non-persistent launch is always ASM on AMD archs.
mla_backend plan_backend(Arch arch, const mla_decode_shape& shape, const mla_head_plan& plan);

// 1 if aiter's mla_reduce_v1 has a (num_heads, head_dim) specialisation (§4.6, 24 rows).
bool reduce_v1_supports(int num_heads, int head_dim);

// Planner cluster multiplier (§3.6): 2 iff gfx950, enable_experimental, heads*qlen == 64 and
// both dtypes fp8; else 1.
int occupancy(Arch arch, int num_heads, int max_seqlen_q, mla_dtype q, mla_dtype kv,
              bool enable_experimental);

// One code-object table query: the remapped key and the row it names.
struct TableVerdict {
    mla_asm_status status = MLA_ASM_UNKNOWN;
    int table_gqa = -1;      // remapped Gqa key (sm_90a: the row tile M), -1 if none
    int table_qseqlen = -1;  // remapped qSeqLen key (0 = any), -1 if none
    std::string detail;      // why the remap refused, or the rule that left no kernel ("" if none)
    std::shared_ptr<const reg::ArchTables> tables;  // keeps `row` alive
    const reg::Row* row = nullptr;                   // the matching row (status OK)
};

// Stage-1 decode kernel request (aiter mla_decode_asm_query arguments; §5.3).
struct AsmRequest {
    Arch arch = Arch::gfx950;
    mla_dtype q = MLA_DTYPE_BF16;
    mla_dtype kv = MLA_DTYPE_BF16;
    int num_heads = 16;        // gqa = num_heads / nhead_kv (nhead_kv is 1)
    int max_seqlen_q = 1;
    bool persistent = true;
    bool causal = true;
    bool lse = false;
    bool cprr = false;
    int page_size = 0;         // 0: not known (the C query); gfx1250 stage-1 asm needs 64
};

// Remaps the request to its table key and looks it up: gfx942/gfx950 `mla_asm` (§5.3), gfx1250
// `mla_asm` (non-persistent page-64 kernels), sm_90a `mla_decode` (docs/routing.md). `root` ""
// = the registry's default root. Statuses OK / REMAP_REJECT / NO_KERNEL / ARCH_NOT_BUILT; the
// remap runs first, so REMAP_REJECT is reported even without tables. [TABLE: malformed table.]
TableVerdict asm_query(const AsmRequest& req, const std::string& root = "");

// gfx1250 PS1 FP8 code objects (`mla_dsl`, §5.5): row (fp8, fp8, Gqa = num_heads, qSeqLen =
// max_seqlen_q or 0 = any, causal, lse, cprr). OK / NO_KERNEL / ARCH_NOT_BUILT. [TABLE]
TableVerdict ps1_fp8_asm_query(Arch arch, int num_heads, int max_seqlen_q, bool causal, bool lse,
                               bool cprr, const std::string& root = "");

// sm_90a decode row tile M for kernel heads hk and max qlen L: tokens per tile
// T = min(L, max(1, 64 / hk)), M = T*hk rounded up to 16, 32 or 64; -1 when hk > 64.
int sm90_row_tile(int hk, int max_seqlen_q);

// Full shape-support verdict (aiter get_mla_decode_shape_support, §3.5). `shape` as for
// head_plan(). Fills every field of `out` (struct_size included).
void shape_support(const mla_decode_shape& shape, mla_decode_support& out,
                   const std::string& root = "");

}  // namespace mla::route
