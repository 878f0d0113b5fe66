// rules.h - small helpers shared by the routing rules (src/routing/*.cpp only): dtype classes as
// aiter's C++ sees them and shape validation.
#pragma once
#include <cstring>

#include "common/error.h"
#include "routing/routing.h"

namespace mla::route {

// aiter collapses both fp8 variants to one AiterDtype fp8, and plans a DeepSeek-V3.2 "byte" KV
// buffer as fp8 (aiter PR #6107 A4/A5). These are the dtype classes its head plan sees.
inline bool plans_as_fp8(mla_dtype d) {
    return d == MLA_DTYPE_FP8_E4M3FN || d == MLA_DTYPE_FP8_E4M3FNUZ || d == MLA_DTYPE_BYTE;
}
inline bool both_fp8(mla_dtype q, mla_dtype kv) { return plans_as_fp8(q) && plans_as_fp8(kv); }
inline bool both_bf16(mla_dtype q, mla_dtype kv) {
    return q == MLA_DTYPE_BF16 && kv == MLA_DTYPE_BF16;
}

// The fp8 variant an arch's kernels read: e4m3fnuz on gfx942, e4m3fn elsewhere.
inline mla_dtype native_fp8(Arch a) {
    return a == Arch::gfx942 ? MLA_DTYPE_FP8_E4M3FNUZ : MLA_DTYPE_FP8_E4M3FN;
}

// aiter get_mla_decode_shape_support: "a fp8 variant not native to the arch, or byte, forces
// backend ASM" (§3.5).
inline bool forces_asm(Arch a, mla_dtype q, mla_dtype kv) {
    auto odd = [a](mla_dtype d) {
        return d == MLA_DTYPE_BYTE ||
               ((d == MLA_DTYPE_FP8_E4M3FN || d == MLA_DTYPE_FP8_E4M3FNUZ) && d != native_fp8(a));
    };
    return odd(q) || odd(kv);
}

// Dtypes a decode shape may name (aiter accepts fp8 variants, bf16, fp16, byte) [fp32 and
// unknown values are INVALID_ARGUMENT].
inline bool routable_dtype(mla_dtype d) {
    return d == MLA_DTYPE_BF16 || d == MLA_DTYPE_FP16 || d == MLA_DTYPE_FP8_E4M3FN ||
           d == MLA_DTYPE_FP8_E4M3FNUZ || d == MLA_DTYPE_BYTE;
}

inline bool is_pow2(long v) { return v > 0 && (v & (v - 1)) == 0; }

// Name of a dtype for messages ("fp8", "bf16", ...; "dtype(<n>)" for a bad value).
const char* dtype_name(mla_dtype d);

// Parses a dtype string of the query ABI ("bf16", "fp16", "fp8", "fp8_fnuz", "byte")
// [INVALID_ARGUMENT naming `what` for NULL or anything else].
mla_dtype parse_query_dtype(const char* s, const char* what);

// Checks every field head_plan() reads [INVALID_ARGUMENT / ARCH_NOT_BUILT as head_plan()].
Arch validate_shape(const mla_decode_shape& s);

// uni_seqlen_qo with -1 resolved to max_seqlen_qo.
inline int uni_seqlen(const mla_decode_shape& s) {
    return s.uni_seqlen_qo < 0 ? s.max_seqlen_qo : s.uni_seqlen_qo;
}

}  // namespace mla::route
