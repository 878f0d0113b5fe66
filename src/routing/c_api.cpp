// c_api.cpp - the ROUTING section of mla_c_api.h: device-free head plan, shape support, the
// aiter-compatible asm table queries, the reducer table and the occupancy multiplier.
#include <string>

#include "context/struct_io.h"
#include "routing/rules.h"

namespace {

using namespace mla;
using namespace mla::route;

// The error an int-returning query reports: -status, with the message already set.
template <class F>
int guard_int(F&& f) noexcept {
    int result = 0;
    const mla_status st = mla::guard([&] { result = f(); });
    return st == MLA_SUCCESS ? result : -static_cast<int>(st);
}

// Checks kernel_buf / kernel_buf_len and writes `name` NUL-terminated into it, never past
// kernel_buf_len. kernel_buf_len 0 (buf may be NULL): the name is not wanted.
void check_kernel_buf(const char* buf, int len) {
    MLA_CHECK_ARG(len >= 0, "kernel_buf_len must be >= 0 (got " << len << ")");
    MLA_CHECK_ARG(len == 0 || buf != nullptr, "kernel_buf is NULL but kernel_buf_len is " << len);
}
void write_kernel_name(char* buf, int len, const std::string& name) {
    if (len == 0) return;
    const size_t need = name.size() + 1;
    MLA_CHECK(need <= static_cast<size_t>(len), MLA_ERROR_BUFFER_TOO_SMALL,
              "kernel_buf holds " << len << " bytes; kernel name '" << name << "' needs " << need
                                  << " (including the NUL)");
    std::memcpy(buf, name.c_str(), need);
}

int pack(mla_asm_status st, int gqa, int qlen) {
    auto field = [](int v) { return v < 0 ? 0 : v > 255 ? 255 : v; };  // 8 bits, saturated
    return static_cast<int>(st) | field(gqa) << 8 | field(qlen) << 16;
}

mla_decode_shape shape_defaults() {
    mla_decode_shape s = MLA_DECODE_SHAPE_INIT;
    return s;
}

}  // namespace

extern "C" {

MLA_API mla_status mla_decode_head_plan(const mla_decode_shape* shape, mla_head_plan* plan) {
    return mla::guard([&] {
        const mla_decode_shape s = read_struct(shape, shape_defaults(), "shape");
        check_out_struct(plan, "plan");
        mla_head_plan p = head_plan(s);
        write_struct(plan, p);
    });
}

MLA_API mla_status mla_decode_shape_support(const mla_decode_shape* shape,
                                            mla_decode_support* out) {
    return mla::guard([&] {
        const mla_decode_shape s = read_struct(shape, shape_defaults(), "shape");
        check_out_struct(out, "out");
        mla_decode_support v;
        shape_support(s, v);
        write_struct(out, v);
    });
}

MLA_API int mla_decode_asm_query(const char* arch, const char* q_type, const char* kv_type,
                                 int num_heads, int nhead_kv, int max_seqlen_q, int persistent,
                                 int causal, int has_lse, int has_cprr, char* kernel_buf,
                                 int kernel_buf_len, void* stream) {
    (void)stream;
    return guard_int([&] {
        AsmRequest r;
        r.arch = parse_arch(arch);
        r.q = parse_query_dtype(q_type, "q_type");
        r.kv = parse_query_dtype(kv_type, "kv_type");
        MLA_CHECK_ARG(num_heads >= 1, "num_heads must be >= 1 (got " << num_heads << ")");
        MLA_CHECK_ARG(nhead_kv == 1, "nhead_kv must be 1 for absorbed MLA (got " << nhead_kv << ")");
        MLA_CHECK_ARG(max_seqlen_q >= 1, "max_seqlen_q must be >= 1 (got " << max_seqlen_q << ")");
        check_kernel_buf(kernel_buf, kernel_buf_len);
        r.num_heads = num_heads / nhead_kv;
        r.max_seqlen_q = max_seqlen_q;
        r.persistent = persistent != 0;
        r.causal = causal != 0;
        r.lse = has_lse != 0;
        r.cprr = has_cprr != 0;
        const TableVerdict v = asm_query(r);
        write_kernel_name(kernel_buf, kernel_buf_len, v.row ? v.row->knl_name : std::string());
        return pack(v.status, v.table_gqa, v.table_qseqlen);
    });
}

MLA_API int mla_ps1_fp8_asm_query(const char* arch, int num_heads, int max_seqlen_q, int causal,
                                  int has_lse, int has_cprr, char* kernel_buf, int kernel_buf_len,
                                  void* stream) {
    (void)stream;
    return guard_int([&] {
        const Arch a = parse_arch(arch);
        MLA_CHECK_ARG(num_heads >= 1, "num_heads must be >= 1 (got " << num_heads << ")");
        MLA_CHECK_ARG(max_seqlen_q >= 1, "max_seqlen_q must be >= 1 (got " << max_seqlen_q << ")");
        check_kernel_buf(kernel_buf, kernel_buf_len);
        const TableVerdict v = ps1_fp8_asm_query(a, num_heads, max_seqlen_q, causal != 0,
                                                 has_lse != 0, has_cprr != 0);
        write_kernel_name(kernel_buf, kernel_buf_len, v.row ? v.row->knl_name : std::string());
        return static_cast<int>(v.status);
    });
}

MLA_API int mla_reduce_v1_supports(int num_heads, int head_dim) {
    return reduce_v1_supports(num_heads, head_dim) ? 1 : 0;
}

MLA_API int mla_decode_occupancy(const char* arch, int num_heads, int max_seqlen_q,
                                 mla_dtype q_dtype, mla_dtype kv_dtype, int enable_experimental) {
    const int r = guard_int([&] {
        const Arch a = parse_arch(arch);
        MLA_CHECK_ARG(num_heads >= 1, "num_heads must be >= 1 (got " << num_heads << ")");
        MLA_CHECK_ARG(max_seqlen_q >= 1, "max_seqlen_q must be >= 1 (got " << max_seqlen_q << ")");
        MLA_CHECK_ARG(routable_dtype(q_dtype) && routable_dtype(kv_dtype),
                      "q_dtype / kv_dtype must be decode dtypes (bf16, fp16, fp8, fp8_fnuz, byte)");
        return occupancy(a, num_heads, max_seqlen_q, q_dtype, kv_dtype, enable_experimental != 0);
    });
    return r < 0 ? -1 : r;
}

MLA_API const char* mla_planner_string(mla_planner p) {
    switch (p) {
    case MLA_PLANNER_V1_0: return "v1_0";
    case MLA_PLANNER_V1_1: return "v1_1";
    case MLA_PLANNER_V1_2: return "v1_2";
    }
    return "unknown";
}

MLA_API const char* mla_head_plan_string(mla_head_plan_kind k) {
    switch (k) {
    case MLA_HEAD_PLAN_NATIVE: return "Native";
    case MLA_HEAD_PLAN_FOLDED: return "Folded";
    case MLA_HEAD_PLAN_ACCEPTED_NON_NATIVE: return "AcceptedNonNative";
    case MLA_HEAD_PLAN_UNSUPPORTED: return "Unsupported";
    }
    return "unknown";
}

MLA_API const char* mla_backend_string(mla_backend b) {
    switch (b) {
    case MLA_BACKEND_ASM: return "asm";
    case MLA_BACKEND_FLYDSL_PS1: return "flydsl_ps1";
    case MLA_BACKEND_OPUS: return "opus";
    case MLA_BACKEND_HK: return "hk";
    case MLA_BACKEND_PS1_FP8_ASM: return "ps1_fp8_asm";
    case MLA_BACKEND_SM90: return "sm90";
    }
    return "unknown";
}

MLA_API const char* mla_asm_status_string(mla_asm_status s) {
    switch (s) {
    case MLA_ASM_OK: return "OK";
    case MLA_ASM_REMAP_REJECT: return "REMAP_REJECT";
    case MLA_ASM_NO_KERNEL: return "NO_KERNEL";
    case MLA_ASM_ARCH_NOT_BUILT: return "ARCH_NOT_BUILT";
    case MLA_ASM_NOT_ASM: return "NOT_ASM";
    case MLA_ASM_UNKNOWN: return "UNKNOWN";
    }
    return "UNKNOWN";
}

}  // extern "C"
