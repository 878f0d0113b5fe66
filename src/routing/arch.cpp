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

// mla_metadata_params.work_overhead_tokens when the caller passes -1: the fixed cost of one work
// item in KV tokens in the v1_2 planner's cost model, for plans whose qo tiles have rows in
// [min_rows, max_rows] (kernel heads x tile tokens at max_seqlen_qo) and whose KV dtype matches
// (kv_fp8: -1 any, 0 bf16, 1 fp8). The first matching rule wins; none = 0, aiter's rule (every
// AMD arch). Each rule names the decode kernels it was measured on, on the H200
// (docs/performance.md):
//  - 64-row tiles (64, 128 heads; MTP where heads x tokens fill 64), the qm kernels: a 64-row
//    fragment writes 128 KB of fp32 partial output and the reducer merges it; 128 heads ran
//    333-335 -> 308 us with its 256 tiles whole (session 18 call 3), varied lengths 381 -> 356
//    (session 19 call 1).
//  - 16-row tiles with fp8 KV, the register-A kernels (fp8 or bf16 Q): varied lengths 155.8 ->
//    140.2 (fp8 Q) and 165 -> 155 (bf16 Q), b = 64 x 1024 51.1 -> 43.0, s_k = 16384 383 -> 367
//    (session 19 calls 1-2).
// Not here, measured against: 16-row bf16 tiles (the varied main job 179.8 -> 190.3, the busiest
// SM getting ~25% more KV than the mean) and 32-row tiles (varied s_q 2: bf16 218 -> 239, fp8
// 243 -> 275); 33-63-row tiles (e.g. 48 heads) were never measured with it.
struct OverheadRule {
    Arch arch;
    int min_rows, max_rows;
    int kv_fp8;
    int tokens;
};
const OverheadRule kOverheadRules[] = {
    {Arch::sm90a, 64, 1 << 30, -1, 1024},
    {Arch::sm90a, 1, 16, 1, 1024},
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

int default_work_overhead_tokens(Arch arch, int tile_rows, mla_dtype kv_dtype) {
    const int fp8 = plans_as_fp8(kv_dtype) ? 1 : 0;  // the dtype class the head plan sees
    for (const OverheadRule& r : kOverheadRules)
        if (r.arch == arch && tile_rows >= r.min_rows && tile_rows <= r.max_rows &&
            (r.kv_fp8 < 0 || r.kv_fp8 == fp8))
            return r.tokens;
    return 0;
}

int arch_count() { return static_cast<int>(sizeof(kArchs) / sizeof(kArchs[0])); }

const char* arch_name_at(int index) {
    if (index < 0 || index >= arch_count()) return nullptr;
    return kArchs[index].name;
}

}  // namespace mla::route
