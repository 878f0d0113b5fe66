// amd_check.cpp - validation of mla_amd_decode_stage1's arguments (mla_c_api.h, AMD section).
// The rules are aiter's stage-1 entry checks (§5.1: nhead_kv 1, contiguous Q, fp8 Q needs both
// scales; gfx1250: §5.3 last paragraph and §7) plus what a launch needs to be well formed:
// required pointers, consistent strides, values that fit the kernels' 32-bit fields.
#include <cmath>
#include <cstdint>
#include <limits>

#include "common/error.h"
#include "launch/amd/amd_stage1.h"

namespace mla::amd {
namespace {

const char* const kWhere = "mla_amd_decode_stage1: ";

bool is_fp8(mla_dtype d) { return d == MLA_DTYPE_FP8_E4M3FN || d == MLA_DTYPE_FP8_E4M3FNUZ; }

void need(const void* p, size_t align, const char* name) {
    MLA_CHECK_ARG(p != nullptr, kWhere << name << " is NULL");
    MLA_CHECK_ARG(reinterpret_cast<uintptr_t>(p) % align == 0,
                  kWhere << name << " (" << p << ") is not " << align << "-byte aligned");
}

// The fp8 encoding the arch's code objects read (aiter keys both as "fp8").
mla_dtype arch_fp8(route::Arch a) {
    return a == route::Arch::gfx942 ? MLA_DTYPE_FP8_E4M3FNUZ : MLA_DTYPE_FP8_E4M3FN;
}

void check_dtype(route::Arch arch, mla_dtype d, bool is_q, const char* name) {
    const bool ok = d == MLA_DTYPE_BF16 || is_fp8(d) || (!is_q && d == MLA_DTYPE_BYTE);
    const char* s = mla_dtype_string(d);
    MLA_CHECK_ARG(ok, kWhere << name << " " << (s ? s : "(unknown)") << ": aiter's stage-1 kernels take "
                             << (is_q ? "bf16 or fp8" : "bf16, fp8 or byte"));
    if (is_fp8(d) && d != arch_fp8(arch))
        MLA_FAIL(MLA_ERROR_INVALID_ARGUMENT,
                 kWhere << name << " " << s << ": " << route::arch_name(arch)
                        << " code objects read fp8 as " << mla_dtype_string(arch_fp8(arch)));
}

void fits_u32(int64_t v, const char* what) {
    MLA_CHECK_ARG(v >= 0 && v <= int64_t(std::numeric_limits<uint32_t>::max()),
                  kWhere << what << " = " << v << " does not fit the kernel's 32-bit field");
}

}  // namespace

const char* table_dtype(mla_dtype d) {
    if (is_fp8(d)) return "fp8";
    const char* s = mla_dtype_string(d);
    return s ? s : "?";
}

Stage1 check_stage1(mla_context* ctx, const mla_amd_stage1_args& in) {
    check_context(ctx);
    Stage1 s;
    s.a = in;
    const mla_amd_stage1_args& a = s.a;
    s.arch = route::parse_arch(ctx->arch.c_str());
    if (s.arch == route::Arch::sm90a)
        MLA_FAIL(MLA_ERROR_UNSUPPORTED_SHAPE,
                 kWhere << "runs aiter's AMD code objects; the context is " << ctx->arch
                        << " (use mla_decode_fwd)");
    const bool gfx1250 = s.arch == route::Arch::gfx1250;
    const bool ps = a.persistent != 0;
    s.route = !gfx1250 ? Route::gfx9 : ps ? Route::gfx1250_ps1 : Route::gfx1250_page64;
    const bool ps1 = s.route == Route::gfx1250_ps1;

    // ---- scalars ----
    MLA_CHECK_ARG(a.nhead_kv == 1, kWhere << "nhead_kv " << a.nhead_kv
                                          << ": only 1 KV head (absorbed MLA) is supported");
    MLA_CHECK_ARG(a.batch_size >= 1, kWhere << "batch_size " << a.batch_size << " < 1");
    MLA_CHECK_ARG(a.num_heads >= 1, kWhere << "num_heads " << a.num_heads << " < 1");
    MLA_CHECK_ARG(a.max_seqlen_q >= 1, kWhere << "max_seqlen_q " << a.max_seqlen_q << " < 1");
    MLA_CHECK_ARG(a.page_size >= 1 && a.page_size <= 1024 && (a.page_size & (a.page_size - 1)) == 0,
                  kWhere << "page_size " << a.page_size << " is not a power of two in 1..1024");
    MLA_CHECK_ARG(std::isfinite(a.softmax_scale) && a.softmax_scale > 0.f,
                  kWhere << "softmax_scale " << a.softmax_scale << " is not a positive finite number");
    while ((1 << s.log2_page) < a.page_size) ++s.log2_page;

    check_dtype(s.arch, a.q_dtype, true, "q_dtype");
    check_dtype(s.arch, a.kv_dtype, false, "kv_dtype");
    s.q_item = int(mla_dtype_size(a.q_dtype));
    s.kv_item = int(mla_dtype_size(a.kv_dtype));
    if (ps1) {
        if (!is_fp8(a.q_dtype) || !is_fp8(a.kv_dtype))
            MLA_FAIL(MLA_ERROR_UNSUPPORTED_SHAPE,
                     kWhere << "gfx1250 persistent launches run the PS1 FP8 code objects (mla_dsl), "
                               "which take fp8 Q and KV, not "
                            << table_dtype(a.q_dtype) << "/" << table_dtype(a.kv_dtype));
        if (a.page_size != 1)
            MLA_FAIL(MLA_ERROR_UNSUPPORTED_SHAPE,
                     kWhere << "gfx1250 persistent launches run the PS1 code objects, which read "
                               "page_size 1, not "
                            << a.page_size << " (page 64 is non-persistent)");
    }

    // ---- context parallel ----
    MLA_CHECK_ARG(a.cp_world_size >= 1, kWhere << "cp_world_size " << a.cp_world_size << " < 1");
    MLA_CHECK_ARG(a.cp_rank >= 0 && a.cp_rank < a.cp_world_size,
                  kWhere << "cp_rank " << a.cp_rank << " is outside [0, cp_world_size = "
                         << a.cp_world_size << ")");
    if (a.g_kv_indptr) need(a.g_kv_indptr, 4, "g_kv_indptr");

    // ---- scales (aiter: fp8 Q requires both; gfx1250 kernels always read both) ----
    if (is_fp8(a.q_dtype) || gfx1250) {
        MLA_CHECK_ARG(a.q_scale && a.kv_scale,
                      kWhere << (is_fp8(a.q_dtype) ? "fp8 Q" : "gfx1250")
                             << " requires q_scale and kv_scale (got q_scale "
                             << (a.q_scale ? "set" : "NULL") << ", kv_scale "
                             << (a.kv_scale ? "set" : "NULL") << ")");
    }
    if (a.q_scale) need(a.q_scale, 4, "q_scale");
    if (a.kv_scale) need(a.kv_scale, 4, "kv_scale");

    // ---- tensors ----
    need(a.q, 16, "q");
    need(a.kv_cache, 16, "kv_cache");
    need(a.qo_indptr, 4, "qo_indptr");
    need(a.kv_indptr, 4, "kv_indptr");
    need(a.kv_page_indices, 4, "kv_page_indices");
    if (!ps1) need(a.kv_last_page_lens, 4, "kv_last_page_lens");
    need(a.split_data, 16, "split_data");
    need(a.split_lse, 4, "split_lse");
    if (ps) need(a.output, 16, "output");
    if (a.lse) need(a.lse, 4, "lse");
    MLA_CHECK_ARG(a.num_pages >= 0, kWhere << "num_pages " << a.num_pages << " < 0");
    MLA_CHECK_ARG(a.num_page_indices >= 0,
                  kWhere << "num_page_indices " << a.num_page_indices << " < 0");

    // ---- schedule: persistent plan or uniform splits ----
    if (ps) {
        if (ps1) {
            need(a.work_indptr, 4, "work_indptr");
            need(a.work_info_set, 16, "work_info_set");
        } else {
            // aiter builds the 2-address table itself (hipMalloc + blocking copy, every call)
            // when it is missing; libmla never allocates: the caller passes it.
            need(a.work_meta_data, 8, "work_meta_data");
        }
        MLA_CHECK_ARG(a.work_indptr_len >= 2 && a.work_indptr_len - 1 <= 0x7fffffff,
                      kWhere << "work_indptr_len " << a.work_indptr_len
                             << " must be num_clusters + 1 >= 2");
        MLA_CHECK_ARG(a.num_splits == 1, kWhere << "num_splits " << a.num_splits
                                                << ": a persistent launch has one split column");
        MLA_CHECK_ARG(a.split_dtype == MLA_DTYPE_FP32,
                      kWhere << "split_dtype must be fp32 for a persistent launch (partials)");
    } else {
        need(a.num_kv_splits_indptr, 4, "num_kv_splits_indptr");
        MLA_CHECK_ARG(a.num_splits >= 1 && a.num_splits <= 65535,
                      kWhere << "num_splits " << a.num_splits << " is not in 1..65535");
        const mla_dtype want = a.num_splits == 1 ? MLA_DTYPE_BF16 : MLA_DTYPE_FP32;
        MLA_CHECK_ARG(a.split_dtype == want,
                      kWhere << "split_dtype must be " << mla_dtype_string(want) << " with num_splits "
                             << a.num_splits << " (one split writes the bf16 output directly)");
    }
    // gfx1250 page 64: the packed ABI writes valid_split_count (aiter requires it); a final LSE
    // has no kernel there (lse=0 rows only), which the remap reports as NO_KERNEL.
    if (s.route == Route::gfx1250_page64) need(a.valid_split_count, 4, "valid_split_count");

    // ---- strides (elements) ----
    s.q_stride_head = a.q_stride_head ? a.q_stride_head : 576;
    s.q_stride_token = a.q_stride_token ? a.q_stride_token : int64_t(a.num_heads) * s.q_stride_head;
    if (s.route == Route::gfx1250_page64) {
        MLA_CHECK_ARG(s.q_stride_head >= 576,
                      kWhere << "q_stride_head " << s.q_stride_head << " < 576 (the Q row)");
    } else {
        MLA_CHECK_ARG(s.q_stride_head == 576,
                      kWhere << "q_stride_head " << s.q_stride_head
                             << ": this route reads contiguous Q rows of 576 (only gfx1250 page 64 "
                                "takes padded rows)");
    }
    MLA_CHECK_ARG(s.q_stride_token == int64_t(a.num_heads) * s.q_stride_head,
                  kWhere << "q_stride_token " << s.q_stride_token << " must be num_heads * q_stride_head = "
                         << int64_t(a.num_heads) * s.q_stride_head);
    if (a.kv_dtype == MLA_DTYPE_BYTE) {
        MLA_CHECK_ARG(a.kv_stride_page > 0,
                      kWhere << "byte KV needs kv_stride_page (bytes per packed page)");
        s.kv_stride_page = a.kv_stride_page;
    } else {
        const int64_t min_page = int64_t(a.page_size) * 576;
        s.kv_stride_page = a.kv_stride_page ? a.kv_stride_page : min_page;
        MLA_CHECK_ARG(s.kv_stride_page >= min_page,
                      kWhere << "kv_stride_page " << s.kv_stride_page << " < page_size * 576 = " << min_page);
        if (ps1)
            MLA_CHECK_ARG(s.kv_stride_page == 576,
                          kWhere << "kv_stride_page " << s.kv_stride_page
                                 << ": the PS1 code objects read KV rows of 576 back to back");
    }
    fits_u32(s.kv_stride_page * s.kv_item, "kv_stride_page * itemsize");
    fits_u32(s.q_stride_token * s.q_item * a.max_seqlen_q, "q bytes per request");
    fits_u32(int64_t(a.num_heads) * a.max_seqlen_q, "num_heads * max_seqlen_q");
    if (ps1) {
        MLA_CHECK_ARG(a.num_pages >= 1 && a.num_pages <= 0x7fffffff,
                      kWhere << "num_pages " << a.num_pages << " must be in 1..2^31-1 (PS1 bound)");
        MLA_CHECK_ARG(a.num_page_indices <= 0x7fffffff,
                      kWhere << "num_page_indices " << a.num_page_indices << " > 2^31-1");
    }
    return s;
}

}  // namespace mla::amd
