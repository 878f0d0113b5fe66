// arch.cpp - the archs libmla knows the rules of, and their default CU/SM counts.
#include <cstring>

#include "common/error.h"
#include "routing/routing.h"
#include "routing/rules.h"

namespace mla::route {
namespace {
struct ArchEntry {
    Arch arch;
    const char* name;
    int num_cus;  // default CU / SM count when the caller gives none
};
// CU counts: MI300X (gfx942) 304 CUs, MI355X (gfx950) 256 CUs, H100/H200 SXM (sm_90a) 132 SMs.
// gfx1250 has no public part count; 256 is a placeholder the caller should override with the
// device's real count (mla_metadata_params.num_clusters).
const ArchEntry kArchs[] = {
    {Arch::gfx942, "gfx942", 304},
    {Arch::gfx950, "gfx950", 256},
    {Arch::gfx1250, "gfx1250", 256},
    {Arch::sm90a, "sm_90a", 132},
};

// The v1_2 planner's split defaults: mla_metadata_params.work_overhead_tokens and
// split_tail_tokens when the caller passes -1, for plans whose qo tiles have rows in [min_rows,
// max_rows] (kernel heads x tile tokens at max_seqlen_qo) and whose KV dtype matches (kv_fp8: -1
// any, 0 bf16, 1 fp8). The first matching rule wins; none = 0 and 0, aiter's rule (every AMD
// arch). overhead_tokens: a work's fixed cost in KV tokens in the cost model; tail_tokens: a
// cluster boundary never leaves fewer KV tokens of its tile. Each rule names the decode kernels
// it was measured on, on the H200 (docs/performance.md; µs, aiter's rule -> the rule):
//  - 64-row tiles (64, 128 heads; MTP where heads x tokens fill 64), the qm kernels, overhead
//    1024: a 64-row fragment writes 128 KB of fp32 partial output and the reducer merges it;
//    128 heads 333-335 -> 308 with its 256 tiles whole (session 18 call 3), varied lengths
//    381 -> 356 (session 19 call 1).
//  - up to 16 rows with fp8 KV, the register-A kernels (fp8 or bf16 Q), overhead 1024: varied
//    lengths 155.8 -> 140.2 (fp8 Q) and 165 -> 155 (bf16 Q), b = 64 x 1024 51.1 -> 43.0,
//    s_k = 16384 383 -> 367 (session 19 calls 1-2).
//  - up to 16 rows with bf16 KV, the 16-row TMA kernel, tail 512: s_k = 16384 573.6 -> 565.9 and
//    b = 64 x 1024 43.4 -> 41.6 (both unsplit), the varied main job 180.5 -> 180.7 (session 19
//    call 4, one round). The overhead instead (1024) lost there: varied 179.8 -> 190.3, a short
//    request weighing like 1024 tokens of KV (session 19 call 1).
//  - 17-32 rows with bf16 KV (16 heads x MTP 2: the 32-row transposed kernel), tail 256: varied
//    s_q 2 217.6, 217.7 -> 214.9, 214.5 (session 20 call 1, two rounds; 217.7 -> 214.9 in session
//    19 call 4); tail 128 changed nothing (217.6, 218.0).
// Not here, measured against: 32-row tiles, overhead 1024 (varied s_q 2: bf16 218 -> 239, fp8
// 243 -> 275) and tail 512 (bf16 218 -> 224.5). 32-row fp8-KV tiles and 33-63-row tiles (e.g. 48
// heads) were never measured with a tail.
struct SplitRule {
    Arch arch;
    int min_rows, max_rows;
    int kv_fp8;
    int overhead_tokens, tail_tokens;
};
const SplitRule kSplitRules[] = {
    {Arch::sm90a, 64, 1 << 30, -1, 1024, 0},
    {Arch::sm90a, 1, 16, 1, 1024, 0},
    {Arch::sm90a, 1, 16, 0, 0, 512},
    {Arch::sm90a, 17, 32, 0, 0, 256},
};
}  // namespace

Arch parse_arch(const char* arch) {
    MLA_CHECK_ARG(arch != nullptr, "arch is NULL");
    for (const ArchEntry& e : kArchs)
        if (!std::strcmp(arch, e.name)) return e.arch;
    MLA_FAIL(MLA_ERROR_ARCH_NOT_BUILT,
             "unknown arch '" << arch << "' (known: gfx942, gfx950, gfx1250, sm_90a)");
}

const char* arch_name(Arch arch) {
    for (const ArchEntry& e : kArchs)
        if (e.arch == arch) return e.name;
    return "unknown";
}

bool is_nvidia(Arch arch) { return arch == Arch::sm90a; }

int default_num_cus(Arch arch) {
    for (const ArchEntry& e : kArchs)
        if (e.arch == arch) return e.num_cus;
    return 0;
}

SplitDefaults default_split(Arch arch, int tile_rows, mla_dtype kv_dtype) {
    const int fp8 = plans_as_fp8(kv_dtype) ? 1 : 0;  // the dtype class the head plan sees
    for (const SplitRule& r : kSplitRules)
        if (r.arch == arch && tile_rows >= r.min_rows && tile_rows <= r.max_rows &&
            (r.kv_fp8 < 0 || r.kv_fp8 == fp8))
            return SplitDefaults{r.overhead_tokens, r.tail_tokens};
    return SplitDefaults{0, 0};
}

int arch_count() { return static_cast<int>(sizeof(kArchs) / sizeof(kArchs[0])); }

const char* arch_name_at(int index) {
    if (index < 0 || index >= arch_count()) return nullptr;
    return kArchs[index].name;
}

}  // namespace mla::route
