// amd_blocks.cpp - the stage-1 argument blocks (amd_args.h) filled from a checked request, and
// the gfx942/gfx950 tiling of aiter's remap (sub_Q and s_MQA, aiter-mla-semantics.md §5.3).
#include <cstring>

#include "launch/amd/amd_args.h"
#include "launch/amd/amd_stage1.h"

namespace mla::amd {
namespace {

bool fp8(mla_dtype d) { return d == MLA_DTYPE_FP8_E4M3FN || d == MLA_DTYPE_FP8_E4M3FNUZ; }

template <class T>
std::vector<unsigned char> bytes_of(const T& block) {
    std::vector<unsigned char> out(sizeof(T));
    std::memcpy(out.data(), &block, sizeof(T));
    return out;
}

// aiter passes q_scale only with fp8 Q; kv_scale with fp8 Q, or with fp8 KV when given.
const void* q_scale_arg(const mla_amd_stage1_args& a) { return fp8(a.q_dtype) ? a.q_scale : nullptr; }
const void* kv_scale_arg(const mla_amd_stage1_args& a) {
    return (fp8(a.q_dtype) || fp8(a.kv_dtype)) ? a.kv_scale : nullptr;
}

}  // namespace

Gfx9Tiling gfx9_tiling(route::Arch arch, mla_dtype q, mla_dtype kv, int gqa, int l, bool ps) {
    Gfx9Tiling t;
    t.mqa = gqa * l;
    const bool bf16 = q == MLA_DTYPE_BF16 && kv == MLA_DTYPE_BF16;
    const bool f8 = fp8(q) && fp8(kv);
    if (gqa == 16) {
        if (bf16 && !ps && l == 1) t.sub_q = 16;
        else if (fp8(q) && (l == 3 || l == 4)) t.sub_q = 64;
        else if (fp8(q) && l > 4 && ps && arch == route::Arch::gfx950) t.mqa = gqa;  // -> (32, 4)
    } else if (gqa == 32) {
        if (bf16 && !ps) t.sub_q = 64;
        else if (f8 && l == 1 && !ps) t.sub_q = 32;
    } else if (gqa == 64) {
        if (bf16 && !ps) t.sub_q = 64;
    } else if (gqa == 8) {
        if (bf16 && !ps && l == 1) t.sub_q = 8;
        else if (bf16 && !ps && l == 2) {
            t.sub_q = 16;
            t.mqa = 8;
        } else if (f8 && !ps && l == 1) t.sub_q = 8;
    }
    // gfx950 persistent overrides (first match; each kernel packs gqa*L rows, s_MQA = gqa). The
    // table key they select is the routing remap's (src/routing/asm_query.cpp).
    if (arch == route::Arch::gfx950 && ps) {
        const bool o1 = bf16 && (gqa * l >= 128 || gqa > 64) && gqa != 48;
        const bool o2 = bf16 && (gqa * l >= 64 || gqa >= 16);
        const bool o3 = f8 && ((gqa == 32 && l >= 4) || (gqa == 64 && l >= 2) || gqa == 128);
        const bool o4 = f8 && ((gqa == 16 && (l == 3 || l == 4)) || (gqa == 32 && (l == 2 || l == 3)) ||
                               (gqa == 64 && l == 1));
        if (o1 || o2 || o3 || o4) t.mqa = gqa;
    }
    return t;
}

std::vector<unsigned char> gfx9_block(const Stage1& s, const Gfx9Tiling& t) {
    const mla_amd_stage1_args& a = s.a;
    const bool ps = a.persistent != 0;
    Gfx9Args b;
    std::memset(&b, 0, sizeof b);
    b.r = a.split_data;
    b.lse = a.split_lse;
    b.q = a.q;
    b.kv = a.kv_cache;
    b.ltp = a.kv_indptr;
    b.ltd = a.kv_page_indices;
    b.ltl = a.kv_last_page_lens;
    b.scale = a.softmax_scale;
    b.mqa = uint32_t(t.mqa);
    b.kv_split = uint32_t(a.num_splits);
    b.q_bytes = uint32_t(s.q_stride_token * s.q_item * a.max_seqlen_q);
    b.page_bytes = uint32_t(s.kv_stride_page * s.kv_item);
    b.log2_page = uint32_t(s.log2_page);
    b.qtp = a.qo_indptr;
    b.stp = ps ? static_cast<const void*>(a.work_meta_data) : a.num_kv_splits_indptr;
    b.rp = ps ? a.output : nullptr;
    b.q_scale = q_scale_arg(a);
    b.kv_scale = kv_scale_arg(a);
    // persistent: the split count (1); non-persistent: 1 iff one split writes bf16 output.
    b.out16_nosplit = ps ? uint32_t(a.num_splits) : (a.num_splits == 1 ? 1u : 0u);
    b.lsep = a.lse;
    b.gkvtp = a.g_kv_indptr;
    b.cp_world_size = uint32_t(a.cp_world_size);
    b.cp_rank = uint32_t(a.cp_rank);
    return bytes_of(b);
}

std::vector<unsigned char> gfx1250_block(const Stage1& s) {
    const mla_amd_stage1_args& a = s.a;
    Gfx1250Args b;
    std::memset(&b, 0, sizeof b);
    b.r = a.split_data;
    b.lse = a.split_lse;
    b.q = a.q;
    b.kv = a.kv_cache;
    b.ltp = a.kv_indptr;
    b.ltd = a.kv_page_indices;
    b.ltl = a.kv_last_page_lens;
    b.qtp = a.qo_indptr;
    b.q_scale = a.q_scale;
    b.kv_scale = a.kv_scale;
    b.valid_splits = a.valid_split_count;
    b.out16_nosplit = a.num_splits == 1 ? 1u : 0u;
    b.scale = a.softmax_scale;
    b.q_seq_lens = uint32_t(a.num_heads * a.max_seqlen_q);
    b.passes = uint32_t(a.num_splits);
    b.page_bytes = uint32_t(s.kv_stride_page * s.kv_item);
    b.log2_page = uint32_t(s.log2_page);
    // aiter computes the per-request Q bytes from the head dim (576), not from the row pitch.
    b.q_bytes = uint32_t(int64_t(a.num_heads) * a.max_seqlen_q * 576 * s.q_item);
    b.use_valid_split_count_reduce = a.use_valid_split_count_reduce ? 1u : 0u;
    return bytes_of(b);
}

std::vector<unsigned char> ps1_block(const Stage1& s, bool cprr) {
    const mla_amd_stage1_args& a = s.a;
    Ps1CprrArgs b;
    std::memset(&b, 0, sizeof b);
    Ps1Args& p = b.base;
    p.r = a.split_data;
    p.lse = a.split_lse;
    p.final_out = a.output;
    p.final_lse = a.lse;
    p.q = a.q;
    p.kv = a.kv_cache;
    p.page_indices = a.kv_page_indices;
    p.work_indptr = a.work_indptr;
    p.work_info = a.work_info_set;
    p.q_scale = a.q_scale;
    p.kv_scale = a.kv_scale;
    p.scale = a.softmax_scale;
    p.num_pages = int32_t(a.num_pages);
    p.num_page_indices = int32_t(a.num_page_indices);
    if (!cprr) return bytes_of(p);
    b.qo_indptr = a.qo_indptr;
    b.kv_indptr = a.kv_indptr;
    b.g_kv_indptr = a.g_kv_indptr;
    b.cp_world_size = a.cp_world_size;
    b.cp_rank = a.cp_rank;
    return bytes_of(b);
}

}  // namespace mla::amd
