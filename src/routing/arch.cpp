// arch.cpp - the archs libmla knows the rules of, and their default CU/SM counts.
#include <cstring>

#include "common/error.h"
#include "routing/routing.h"

namespace mla::route {
namespace {
struct ArchEntry {
    Arch arch;
    const char* name;
    int num_cus;  // default CU / SM count when the caller gives none
    // mla_metadata_params.work_overhead_tokens when the caller passes -1: the fixed cost of one
    // work item in KV tokens in the v1_2 planner's cost model (0: aiter's rule, the AMD archs),
    // for plans whose qo tiles have at least work_overhead_min_rows rows (kernel heads x tile
    // tokens at max_seqlen_qo), else 0. sm_90a: 1024 tokens for 64-row tiles (64, 128 heads; MTP
    // where heads x tokens fill 64), measured on the H200 (docs/performance.md, session 18): a
    // 64-row fragment writes 128 KB of fp32 partial output and the reducer merges it; 128 heads
    // ran 333-335 -> 308 us with its 256 tiles whole. Fewer rows keep aiter's rule (including the
    // 33-63-row tiles the 64-row kernels run, not measured): at 16 rows the overhead helped the
    // fixed-length rows (s_k 16384 -1.6%, b 64 -4%) and the varied fp8 job, but the varied bf16
    // main job ran 178-182 -> 190 us, a short request weighing like 1024 tokens of KV.
    int work_overhead_tokens;
    int work_overhead_min_rows;
};
// CU counts: MI300X (gfx942) 304 CUs, MI355X (gfx950) 256 CUs, H100/H200 SXM (sm_90a) 132 SMs.
// gfx1250 has no public part count; 256 is a placeholder the caller should override with the
// device's real count (mla_metadata_params.num_clusters).
const ArchEntry kArchs[] = {
    {Arch::gfx942, "gfx942", 304, 0, 0},
    {Arch::gfx950, "gfx950", 256, 0, 0},
    {Arch::gfx1250, "gfx1250", 256, 0, 0},
    {Arch::sm90a, "sm_90a", 132, 1024, 64},
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

int default_work_overhead_tokens(Arch arch, int tile_rows) {
    for (const ArchEntry& e : kArchs)
        if (e.arch == arch) return tile_rows >= e.work_overhead_min_rows ? e.work_overhead_tokens : 0;
    return 0;
}

int arch_count() { return static_cast<int>(sizeof(kArchs) / sizeof(kArchs[0])); }

const char* arch_name_at(int index) {
    if (index < 0 || index >= arch_count()) return nullptr;
    return kArchs[index].name;
}

}  // namespace mla::route
