// shape_support.cpp - "can this decode shape run on this arch, on which kernel, and if not, why
// not": aiter get_mla_decode_shape_support (PR #6107, §3.5) over the head plan, the backend and
// the code-object tables, with aiter's reason wording, one reason per failure.
#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <string>

#include "routing/rules.h"

namespace mla::route {
namespace {

const char* planner_name(mla_planner p) { return mla_planner_string(p); }
const char* backend_name(mla_backend b) { return mla_backend_string(b); }
const char* status_name(mla_asm_status s) { return mla_asm_status_string(s); }
const char* tf(bool b) { return b ? "True" : "False"; }

// The reasons text, written straight into the result: one line per reason, cut with "...\n"
// when the 1024 bytes run out (num_reasons still counts every reason).
struct Reasons {
    char* buf;
    size_t cap;
    size_t len = 0;
    int count = 0;
    bool cut = false;

    Reasons(char* b, size_t c) : buf(b), cap(c) { buf[0] = '\0'; }
    __attribute__((format(printf, 2, 3))) void add(const char* f, ...) {
        ++count;
        if (cut) return;
        va_list ap;
        va_start(ap, f);
        const int n = std::vsnprintf(buf + len, cap - len, f, ap);
        va_end(ap);
        if (n >= 0 && len + static_cast<size_t>(n) + 1 < cap) {
            len += static_cast<size_t>(n);
            buf[len++] = '\n';
            buf[len] = '\0';
            return;
        }
        cut = true;  // keep the lines that fit and mark the cut
        len = std::min(len, cap - 5);
        std::memcpy(buf + len, "...\n", 5);
    }
};

void copy_str(char* dst, size_t cap, const std::string& s) {
    const size_t n = std::min(s.size(), cap - 1);
    std::memcpy(dst, s.data(), n);
    dst[n] = '\0';
}

}  // namespace

void shape_support(const mla_decode_shape& in, mla_decode_support& out, const std::string& root) {
    const Arch a = validate_shape(in);
    mla_decode_shape s = in;
    // aiter's query plans with cp_world_size 2 for round-robin CP left at 1.
    if (s.cp_round_robin && s.cp_world_size == 1) s.cp_world_size = 2;
    const mla_head_plan p = head_plan(s);
    const bool ps = s.persistent != 0;
    const bool sm90 = a == Arch::sm90a;
    const int h = s.num_heads, l = s.max_seqlen_qo;
    const char* q = dtype_name(s.q_dtype);
    const char* kv = dtype_name(s.kv_dtype);

    std::memset(static_cast<void*>(&out), 0, sizeof(out));
    out.struct_size = sizeof(out);
    copy_str(out.arch, sizeof(out.arch), arch_name(a));
    out.enable_experimental = s.enable_experimental ? 1 : 0;
    out.flydsl_ps1 = s.flydsl_ps1 ? 1 : 0;
    out.planner = p.planner;
    out.plan = p.plan;
    out.planner_accepts = p.planner_accepts;
    out.natively_supported = p.natively_supported;
    out.fold_factor = p.qk_batch_ratio;
    out.seqlen_fold = p.seqlen_fold;
    out.native = (p.natively_supported && p.qk_batch_ratio == 1 && p.seqlen_fold == 1) ? 1 : 0;
    out.kernel_num_heads = p.kernel_num_heads;
    out.packed_qo_len_per_wg = p.packed_qo_len_per_wg;
    out.reduce_supported = p.reduce_supported;
    out.backend = (ps || sm90) ? p.backend : MLA_BACKEND_ASM;  // non-persistent: stage-1 asm
    out.asm_status = MLA_ASM_NOT_ASM;
    out.table_gqa = -1;
    out.table_qseqlen = -1;

    Reasons reasons(out.reasons, sizeof(out.reasons));
    bool rejected = false;
    const mla_backend b = out.backend;
    if (sm90) {
        // libmla's own kernels: the planner takes every head count; dtypes, page size and
        // v_head_dim are the kernels' limits, reported for any launch mode.
        if (!p.planner_accepts) {
            const bool dt = (s.q_dtype == MLA_DTYPE_BF16 &&
                             (s.kv_dtype == MLA_DTYPE_BF16 || s.kv_dtype == MLA_DTYPE_FP8_E4M3FN)) ||
                            (s.q_dtype == MLA_DTYPE_FP8_E4M3FN && s.kv_dtype == MLA_DTYPE_FP8_E4M3FN);
            if (!dt)
                reasons.add("sm90 kernels take q/kv bf16/bf16, bf16/fp8 or fp8/fp8 "
                            "(fp8 = e4m3fn), not %s/%s", q, kv);
            if (s.page_size > 1024)
                reasons.add("sm90 kernels take page_size <= 1024, not %d", s.page_size);
            rejected = true;
        }
        if (s.v_head_dim != 512) {
            reasons.add("sm90 kernels and reducer need v_head_dim 512, not %d", s.v_head_dim);
            rejected = true;
        }
        // Round-robin context parallel masks on global positions, causal only (the planner
        // refuses is_cp_round_robin without causal, mla_decode_fwd cp_world_size > 1 too), even
        // at qlen 1 where the table key reads causal anyway.
        if ((s.cp_round_robin || s.cp_world_size > 1) && !s.causal) {
            reasons.add("sm90 round-robin context parallel (cp_world_size=%d) is causal only, "
                        "causal=False", s.cp_world_size);
            rejected = true;
        }
    } else if (ps) {  // a non-persistent launch never plans nor reduces (PR #6107 A4)
        if (!p.planner_accepts) {
            reasons.add("planner %s rejects %d heads on %s (max_seqlen_qo=%d, %s/%s)",
                        planner_name(p.planner), h, arch_name(a), l, q, kv);
            rejected = true;
        }
        if (!p.reduce_supported) {
            reasons.add("mla_reduce_v1 has no (%d heads, head_dim %d) case", p.kernel_num_heads,
                        s.v_head_dim);
            rejected = true;
        }
    }
    if ((b == MLA_BACKEND_FLYDSL_PS1 || b == MLA_BACKEND_PS1_FP8_ASM) && p.qk_batch_ratio != 1) {
        reasons.add("%s kernels read unfolded heads; planner %s folds %d heads %dx",
                    backend_name(b), planner_name(p.planner), h, p.qk_batch_ratio);
        rejected = true;
    }
    if (b == MLA_BACKEND_HK) {
        reasons.add("hk backend: hk_mla_decode_fwd is not defined (AITER_ENABLE_EXPERIMENTAL route)");
        rejected = true;
    }
    if (b == MLA_BACKEND_OPUS && s.cp_world_size > 1 &&
        (!plans_as_fp8(s.q_dtype) || !s.cp_round_robin)) {
        // aiter PR #6107 follow-up: opus_mla_decode_fwd raises for CP without fp8 Q or
        // without g_kv_indptr.
        reasons.add("opus context parallel (cp_world_size=%d) needs fp8 Q and round-robin "
                    "g_kv_indptr", s.cp_world_size);
        rejected = true;
    }

    const bool table_route =
        b == MLA_BACKEND_ASM || b == MLA_BACKEND_PS1_FP8_ASM || b == MLA_BACKEND_SM90;
    bool ok = false;
    if (table_route) {
        // Persistent asm and sm90 kernels see the folded heads; PS1 and non-persistent the caller's.
        const int heads = (b == MLA_BACKEND_SM90 || (b == MLA_BACKEND_ASM && ps)) ? p.kernel_num_heads : h;
        // cprr key: PS1 keys on the world size (§5.5); sm90's mla_decode_fwd runs round robin
        // whenever cp_world_size > 1; aiter's asm on g_kv_indptr being given (cp_round_robin).
        const bool cprr = b == MLA_BACKEND_PS1_FP8_ASM ? s.cp_world_size > 1
                          : b == MLA_BACKEND_SM90      ? (s.cp_round_robin != 0 || s.cp_world_size > 1)
                                                       : s.cp_round_robin != 0;
        try {
            TableVerdict v;
            if (b == MLA_BACKEND_PS1_FP8_ASM) {
                v = ps1_fp8_asm_query(a, heads, l, s.causal != 0, s.return_lse != 0, cprr, root);
            } else {
                AsmRequest r;
                r.arch = a;
                r.q = s.q_dtype;
                r.kv = s.kv_dtype;
                r.num_heads = heads;
                r.max_seqlen_q = l;
                r.persistent = ps;
                r.causal = s.causal != 0;
                r.lse = s.return_lse != 0;
                r.cprr = cprr;
                r.page_size = s.page_size;
                v = asm_query(r, root);
            }
            out.asm_status = v.status;
            out.table_gqa = v.table_gqa;
            out.table_qseqlen = v.table_qseqlen;
            if (v.row) {
                copy_str(out.asm_kernel, sizeof(out.asm_kernel), v.row->knl_name);
                copy_str(out.code_object, sizeof(out.code_object), v.row->co_path);
            }
            if (v.status == MLA_ASM_OK) {
                ok = true;
            } else {
                reasons.add("%s %s on %s: q=%s kv=%s heads=%d qlen=%d (table gqa=%d qseqlen=%d) "
                            "persistent=%s causal=%s lse=%s cprr=%s%s%s",
                            backend_name(b), status_name(v.status), arch_name(a), q, kv, heads, l,
                            v.table_gqa, v.table_qseqlen, tf(ps), tf(s.causal), tf(s.return_lse),
                            tf(cprr), v.detail.empty() ? "" : ": ", v.detail.c_str());
                rejected = true;
            }
        } catch (const Error& e) {
            out.asm_status = MLA_ASM_UNKNOWN;
            reasons.add("asm query failed: %s", e.message().c_str());
        }
    }
    out.supported = rejected ? 0 : ok ? 1 : -1;
    if (out.supported == -1 && !table_route)
        reasons.add("%s backend has no availability table", backend_name(b));
    out.num_reasons = reasons.count;
    // libmla ships a reducer for its own sm_90a kernels only (docs/amd.md).
    out.libmla_reducer = (sm90 && p.reduce_supported) ? 1 : 0;
}

}  // namespace mla::route
