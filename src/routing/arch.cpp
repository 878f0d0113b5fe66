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
    // work item in KV tokens in the v1_2 planner's cost model (0: aiter's rule, the AMD archs).
    // sm_90a 1024, measured on the H200 (docs/performance.md, session 18): a split costs the
    // ring's refill, the partial output and the reducer's merge, ~9-18 us at b = 128, s_k = 16384
    // (4-8 tiles of 64 tokens at that row's per-SM rate) where aiter's rule charges 1 block. 512
    // and 1024 give the same plans on the measured rows except b = 64, s_k = 1024 (1024: unsplit
    // on 64 SMs, 4% faster) and b = 1536, s_k = 2048 (as many split tiles, other fragment ends;
    // 1024's plan not yet compared with aiter's on one machine).
    int work_overhead_tokens;
};
// CU counts: MI300X (gfx942) 304 CUs, MI355X (gfx950) 256 CUs, H100/H200 SXM (sm_90a) 132 SMs.
// gfx1250 has no public part count; 256 is a placeholder the caller should override with the
// device's real count (mla_metadata_params.num_clusters).
const ArchEntry kArchs[] = {
    {Arch::gfx942, "gfx942", 304, 0},
    {Arch::gfx950, "gfx950", 256, 0},
    {Arch::gfx1250, "gfx1250", 256, 0},
    {Arch::sm90a, "sm_90a", 132, 1024},
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

int default_work_overhead_tokens(Arch arch) {
    for (const ArchEntry& e : kArchs)
        if (e.arch == arch) return e.work_overhead_tokens;
    return 0;
}

int arch_count() { return static_cast<int>(sizeof(kArchs) / sizeof(kArchs[0])); }

const char* arch_name_at(int index) {
    if (index < 0 || index >= arch_count()) return nullptr;
    return kArchs[index].name;
}

}  // namespace mla::route
