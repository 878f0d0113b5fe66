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

int arch_count() { return static_cast<int>(sizeof(kArchs) / sizeof(kArchs[0])); }

const char* arch_name_at(int index) {
    if (index < 0 || index >= arch_count()) return nullptr;
    return kArchs[index].name;
}

}  // namespace mla::route
