// routing.h - internal entry points of the device-free routing rules (src/routing/*), used by
// the planner, the launch code and the CLI. All throw mla::Error; the C API wraps them.
#pragma once
#include <string>

#include "mla_c_api.h"

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
// Number of known archs and the name of the i-th (nullptr out of range), for listings.
int arch_count();
const char* arch_name_at(int index);

// Validates a shape [INVALID_ARGUMENT: heads < 1, qlen < 1, num_heads_k != 1, bad dtype,
// page_size not a power of two] and computes its head plan and backend (aiter §4.3 rules for
// AMD archs, libmla's rules for sm_90a, see docs/routing.md).
mla_head_plan head_plan(const mla_decode_shape& shape);

}  // namespace mla::route
