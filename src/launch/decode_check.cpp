// decode_check.cpp - validation of mla_decode_fwd's arguments (mla_c_api.h, DECODE section):
// pointers and alignment, strides, the plan against the call (plan_params field by field, buffer
// lengths from mla_metadata_info), the head plan (src/routing) and the sm_90a table rows.
// Nothing here touches device memory; page ids are checked by the kernel (error_flag).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include "common/error.h"
#include "context/struct_io.h"
#include "launch/decode_launch.h"
#include "planner/planner.h"
#include "routing/routing.h"

// The smallest page size whose KV tiles load by TMA (boxes of min(page_size, 64) rows); below
// it the same kernels load by cp.async. 8: page 1 by TMA measured 79% slower, page 4 2% faster on
// the 16-row kernel (the only kernel timed at page 4; docs/performance.md, session 22).
// Measurement builds set -DMLA_KV_TMA_MIN_PAGE=N.
#ifndef MLA_KV_TMA_MIN_PAGE
#define MLA_KV_TMA_MIN_PAGE 8
#endif

namespace mla::launch {
namespace {

bool aligned(const void* p, size_t a) { return (reinterpret_cast<uintptr_t>(p) % a) == 0; }

void check_ptr(const void* p, size_t align, const char* name) {
    MLA_CHECK_ARG(p != nullptr, "mla_decode_fwd: " << name << " is NULL");
    MLA_CHECK_ARG(aligned(p, align),
                  "mla_decode_fwd: " << name << " (" << p << ") is not " << align << "-byte aligned");
}

const char* dtype_key(mla_dtype d) {
    switch (d) {
        case MLA_DTYPE_BF16: return "bf16";
        case MLA_DTYPE_FP8_E4M3FN: return "fp8";
        default: return nullptr;
    }
}

int log2_exact(int v) {
    int l = 0;
    while ((1 << l) < v) ++l;
    return l;
}

// A row's launch_kv_tma (`value` as parsed, LaunchRow::kAbsent where the row has none): 0 where
// absent or 0 (cp.async), 1 (TMA boxes of one 64-column block, 9 a tile), 2 (1, and where the KV
// is bf16 with pages of at least 64 tokens, one 4-D box of all 9 blocks per tile: kv_load.cuh,
// issue_tile_tma_tpt); anything else is MLA_ERROR_TABLE "<file>:<line>: launch_kv_tma must be ...".
int kv_tma_of(const reg::Row& row, long value) {
    if (value == mla_context::LaunchRow::kAbsent) return 0;
    MLA_CHECK(value >= 0 && value <= 2, MLA_ERROR_TABLE,
              row.file << ":" << row.line << ": launch_kv_tma must be 0 (cp.async), 1 (TMA, a box per 64-column "
                          "block) or 2 (TMA, a box per 64-token tile where pages hold >= 64 tokens), got " << value);
    return int(value);
}

// A row's launch_carveout (`value` as parsed, LaunchRow::kAbsent where the row has none): -1
// where absent or -1 (the driver's choice), else 0..100, the percent of the SM's unified L1 /
// shared memory the kernel asks to be shared memory (CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_
// CARVEOUT); anything else is MLA_ERROR_TABLE "<file>:<line>: launch_carveout must be ...".
int carveout_of(const reg::Row& row, long value) {
    if (value == mla_context::LaunchRow::kAbsent) return -1;
    MLA_CHECK(value >= -1 && value <= 100, MLA_ERROR_TABLE,
              row.file << ":" << row.line << ": launch_carveout must be -1 (the driver's choice) or 0..100 (percent of "
                          "the SM's L1 / shared memory given to shared memory), got " << value);
    return int(value);
}

// Plan buffers as given, fields past struct_size zero (mla_metadata_buffers has no INIT macro).
mla_metadata_buffers read_buffers(const mla_metadata_buffers* in) {
    MLA_CHECK_ARG(in != nullptr, "mla_decode_fwd: args->plan is NULL");
    MLA_CHECK_ARG(in->struct_size >= sizeof(size_t) && in->struct_size <= kMaxStructSize,
                  "mla_decode_fwd: plan->struct_size is " << in->struct_size
                                                          << ": set it to sizeof(mla_metadata_buffers)");
    mla_metadata_buffers out;
    std::memset(&out, 0, sizeof out);
    std::memcpy(&out, in, std::min(in->struct_size, sizeof out));
    return out;
}

void check_len(int64_t have, int64_t need, const void* ptr, const char* name) {
    if (have < need)
        MLA_FAIL(MLA_ERROR_BUFFER_TOO_SMALL, "mla_decode_fwd: plan buffer " << name << " has "
                                                 << have << " entries, the plan params need "
                                                 << need << " (mla_metadata_info)");
    if (need > 0) check_ptr(ptr, 4, name);
}

// The TMA tensor map of a KV cache [num_pages, page_size, 1, 576] with pages stride_page elements
// apart (decode_params.h, kv_tmap; kv_load.cuh, issue_tile_tma_tpt), with L2 promotion l2 bytes
// (the row's launch_kv_tma_l2), copied to `out` (128 bytes):
// - page_box false: 3-D {576, page_size, num_pages}, boxes of 128 bytes (bf16: 64 columns; fp8,
//   kv8: 128 columns, the last box of a row half past its 576 bytes, which land as zeros) x
//   min(page_size, 64) tokens: one box per 64-column block of a run of tokens on one page;
// - page_box true (bf16, page_size >= 64): 4-D {64 columns, page_size, 9 blocks, num_pages}
//   with byte strides {1152, 128, stride_page * 2} (a block's 64 columns, the token, the block,
//   the page), box {64, 64, 9, 1}: one box per 64-token tile, landing as the kernels' tile layout
//   ([block][token][128 bytes], 128-byte swizzle; the blocks' stride is below the tokens': TMA
//   takes any strides that are multiples of 16 bytes).
// Encoded once per context, cache, dtype, promotion and rank (memoised with the answer). False
// where the runtime has no tensor maps or the driver refuses this one: the kernel then loads by
// cp.async.
bool kv_tensor_map(mla_context* ctx, const void* kv, bool kv8, int page_size, int num_pages, int64_t stride_page,
                   long l2, bool page_box, uint64_t (&out)[16]) {
    const long eb = kv8 ? 1 : 2;
    const unsigned rank = page_box ? 4 : 3;
    const mla_context::TensorMapKey key{kv, eb, page_size, num_pages, long(stride_page), l2, long(rank)};
    {
        std::lock_guard<std::mutex> lock(ctx->mutex);
        auto it = ctx->kv_tmaps.find(key);
        if (it != ctx->kv_tmaps.end()) {
            std::memcpy(out, it->second.map, sizeof out);
            return it->second.ok;
        }
    }
    const uint64_t row = uint64_t(MLA_DECODE_D_QK * eb), page = uint64_t(stride_page * eb);
    const uint64_t dims3[3] = {uint64_t(MLA_DECODE_D_QK), uint64_t(page_size), uint64_t(num_pages)};
    const uint64_t strides3[2] = {row, page};
    const uint32_t box3[3] = {uint32_t(128 / eb), uint32_t(page_size < 64 ? page_size : 64), 1};
    const uint64_t dims4[4] = {64, uint64_t(page_size), uint64_t(MLA_DECODE_D_QK / 64), uint64_t(num_pages)};
    const uint64_t strides4[3] = {row, 128, page};
    const uint32_t box4[4] = {64, 64, uint32_t(MLA_DECODE_D_QK / 64), 1};
    alignas(128) uint64_t map[16] = {};  // the driver writes a 64-byte aligned CUtensorMap
    mla_context::TensorMapEntry e;
    e.ok = ctx->runtime->encode_tensor_map(map, int(eb), kv, rank, page_box ? dims4 : dims3,
                                           page_box ? strides4 : strides3, page_box ? box4 : box3, unsigned(l2));
    std::memcpy(e.map, map, sizeof map);
    std::memcpy(out, map, sizeof out);
    std::lock_guard<std::mutex> lock(ctx->mutex);
    if (ctx->kv_tmaps.size() >= 1024) ctx->kv_tmaps.clear();
    ctx->kv_tmaps[key] = e;
    return e.ok;
}

// The params struct starts the kernels' parameter space (packed argument buffer) only while it
// is not over-aligned; kv_tmap then sits where sm_90's parameter space (constant bank 0x210)
// makes it 128-byte aligned (decode_params.h).
static_assert(alignof(mla_decode_params) <= 16, "an over-aligned params struct moves the kernel's parameter");
static_assert(offsetof(mla_decode_params, kv_tmap) % 128 == 112 && sizeof(mla_decode_params{}.kv_tmap) == 128,
              "kv_tmap: 128 bytes at 0x210 + offset = 0 (mod 128)");

}  // namespace

DecodeLaunch check_decode(mla_context* ctx, const mla_decode_args& a) {
    check_context(ctx);
    if (ctx->arch != "sm_90a")
        MLA_FAIL(MLA_ERROR_UNSUPPORTED_SHAPE,
                 "mla_decode_fwd runs libmla's sm_90a kernels only; the context is "
                     << ctx->arch << " (AMD archs: use aiter's mla_decode_fwd with libmla's plan)");
    const std::string where = "mla_decode_fwd: ";

    // ---- scalars ----
    MLA_CHECK_ARG(a.batch_size >= 1, where << "batch_size " << a.batch_size << " < 1");
    MLA_CHECK_ARG(a.num_heads >= 1, where << "num_heads " << a.num_heads << " < 1");
    MLA_CHECK_ARG(a.max_seqlen_q >= 1, where << "max_seqlen_q " << a.max_seqlen_q << " < 1");
    MLA_CHECK_ARG(a.total_q >= 0, where << "total_q " << a.total_q << " < 0");
    MLA_CHECK_ARG(a.page_size >= 1 && a.page_size <= 1024 && (a.page_size & (a.page_size - 1)) == 0,
                  where << "page_size " << a.page_size << " is not a power of two in 1..1024");
    MLA_CHECK_ARG(a.num_pages >= 0, where << "num_pages " << a.num_pages << " < 0");
    MLA_CHECK_ARG(a.softmax_scale > 0.f && a.softmax_scale < 1e30f,
                  where << "softmax_scale " << a.softmax_scale << " is not a positive finite number");
    const char* qk = dtype_key(a.q_dtype);
    const char* kvk = dtype_key(a.kv_dtype);
    if (!qk || !kvk)
        MLA_FAIL(MLA_ERROR_UNSUPPORTED_SHAPE,
                 where << "dtypes q=" << (mla_dtype_string(a.q_dtype) ? mla_dtype_string(a.q_dtype) : "?")
                       << " kv=" << (mla_dtype_string(a.kv_dtype) ? mla_dtype_string(a.kv_dtype) : "?")
                       << ": sm_90a runs bf16/bf16, bf16/fp8, fp8/fp8 (fp8 = e4m3fn)");
    const bool q8 = a.q_dtype == MLA_DTYPE_FP8_E4M3FN, kv8 = a.kv_dtype == MLA_DTYPE_FP8_E4M3FN;
    const int64_t qe = q8 ? 1 : 2, kve = kv8 ? 1 : 2;
    if (q8) check_ptr(a.q_scale, 4, "q_scale (required for fp8 Q)");
    else if (a.q_scale) check_ptr(a.q_scale, 4, "q_scale");
    if (kv8) check_ptr(a.kv_scale, 4, "kv_scale (required for fp8 KV)");
    else if (a.kv_scale) check_ptr(a.kv_scale, 4, "kv_scale");

    // ---- output dtype: bf16 (default) or fp32 (context-parallel partials, docs/kernels.md) ----
    MLA_CHECK_ARG(a.out_dtype == MLA_DTYPE_BF16 || a.out_dtype == MLA_DTYPE_FP32,
                  where << "out_dtype " << int(a.out_dtype) << " ("
                        << (mla_dtype_string(a.out_dtype) ? mla_dtype_string(a.out_dtype) : "unknown")
                        << ") is not MLA_DTYPE_BF16 (" << int(MLA_DTYPE_BF16) << ") or MLA_DTYPE_FP32 ("
                        << int(MLA_DTYPE_FP32) << ")");
    const bool out32 = a.out_dtype == MLA_DTYPE_FP32;
    const int64_t oe = out32 ? 4 : 2;  // bytes per out element

    // ---- tensors and strides ----
    const int64_t H = a.num_heads;
    const int64_t qsh = a.q_stride_head ? a.q_stride_head : 576;
    const int64_t qst = a.q_stride_token ? a.q_stride_token : H * qsh;
    const int64_t osh = a.out_stride_head ? a.out_stride_head : 512;
    const int64_t ost = a.out_stride_token ? a.out_stride_token : H * osh;
    const int64_t kvsp = a.kv_stride_page ? a.kv_stride_page : int64_t(a.page_size) * 576;
    MLA_CHECK_ARG(qsh >= 576 && (H == 1 || qst >= (H - 1) * qsh + 576),
                  where << "q strides (token " << qst << ", head " << qsh
                        << ") overlap rows of 576 elements");
    MLA_CHECK_ARG((qsh * qe) % 16 == 0 && (qst * qe) % 16 == 0,
                  where << "q strides (token " << qst << ", head " << qsh
                        << ") must be multiples of 16 bytes");
    MLA_CHECK_ARG(osh >= 512 && (H == 1 || ost >= (H - 1) * osh + 512),
                  where << "out strides (token " << ost << ", head " << osh
                        << ") overlap rows of 512 elements");
    MLA_CHECK_ARG((osh * oe) % 16 == 0 && (ost * oe) % 16 == 0,
                  where << "out strides (token " << ost << ", head " << osh
                        << ") must be multiples of 16 bytes (" << 16 / oe << " elements of "
                        << (out32 ? "fp32" : "bf16") << " out)");
    MLA_CHECK_ARG(kvsp >= int64_t(a.page_size) * 576 && (kvsp * kve) % 16 == 0,
                  where << "kv_stride_page " << kvsp << " must be >= page_size * 576 = "
                        << int64_t(a.page_size) * 576 << " and a multiple of 16 bytes");
    if (a.total_q > 0) {
        check_ptr(a.q, 16, "q");
        check_ptr(a.out, 16, "out");
    }
    if (a.num_pages > 0) check_ptr(a.kv_cache, 16, "kv_cache");
    if (a.lse) check_ptr(a.lse, 4, "lse");
    if (a.error_flag) check_ptr(a.error_flag, 4, "error_flag");
    check_ptr(a.qo_indptr, 4, "qo_indptr");
    check_ptr(a.kv_indptr, 4, "kv_indptr (required in both page-table forms)");
    check_ptr(a.kv_last_page_lens, 4, "kv_last_page_lens (required in both page-table forms)");
    const bool block_form = a.kv_page_indices == nullptr && a.block_table != nullptr;
    if (block_form) {
        check_ptr(a.block_table, 4, "block_table");
        MLA_CHECK_ARG(a.block_table_stride >= 1,
                      where << "block_table_stride " << a.block_table_stride << " < 1");
    } else {
        MLA_CHECK_ARG(a.num_page_indices >= 0,
                      where << "num_page_indices " << a.num_page_indices << " < 0");
        if (a.kv_page_indices == nullptr)
            MLA_CHECK_ARG(a.num_page_indices == 0,
                          where << "kv_page_indices is NULL (and no block_table) with "
                                << a.num_page_indices << " page indices");
        else
            check_ptr(a.kv_page_indices, 4, "kv_page_indices");
    }

    // ---- the plan against the call ----
    MLA_CHECK_ARG(a.plan_params != nullptr, where << "plan_params is NULL");
    const mla_metadata_params defaults = MLA_METADATA_PARAMS_INIT;
    const mla_metadata_params pp = read_struct(a.plan_params, defaults, "mla_decode_fwd: plan_params");
    MLA_CHECK_ARG(pp.arch != nullptr && ctx->arch == pp.arch,
                  where << "the plan was made for arch " << (pp.arch ? pp.arch : "(null)")
                        << ", the context is " << ctx->arch);
    auto same = [&](long have, long want, const char* what) {
        MLA_CHECK_ARG(have == want, where << "the plan was made for " << what << " = " << have
                                          << ", the call has " << want);
    };
    same(pp.batch_size, a.batch_size, "batch_size");
    same(pp.num_heads, a.num_heads, "num_heads");
    same(pp.num_heads_k, 1, "num_heads_k");
    same(pp.max_seqlen_qo, a.max_seqlen_q, "max_seqlen_qo");
    same(pp.page_size, a.page_size, "page_size");
    same(pp.causal != 0, a.causal != 0, "causal");
    same(pp.q_dtype, a.q_dtype, "q_dtype");
    same(pp.kv_dtype, a.kv_dtype, "kv_dtype");

    // ---- round-robin context parallel (docs/context-parallel.md) ----
    // Only the arguments are checked: g_kv_indptr's contents and the local lengths it implies
    // (ceil((G_b - rank) / W)) live in device memory and would need a synchronisation.
    const int W = a.cp_world_size;
    MLA_CHECK_ARG(W >= 1, where << "cp_world_size " << W << " < 1 (1 = no context parallel)");
    MLA_CHECK_ARG(a.cp_rank >= 0 && a.cp_rank < W,
                  where << "cp_rank " << a.cp_rank << " is outside [0, cp_world_size = " << W << ")");
    const bool cprr = W > 1;
    if (cprr) {
        MLA_CHECK_ARG(a.g_kv_indptr != nullptr,
                      where << "cp_world_size " << W
                            << " (round-robin context parallel) needs g_kv_indptr, the [B+1] "
                               "prefix sums of the global KV lengths");
        check_ptr(a.g_kv_indptr, 4, "g_kv_indptr");
        MLA_CHECK_ARG(a.causal != 0, where << "round-robin context parallel (cp_world_size " << W
                                           << ") is causal only: causal must be 1");
        MLA_CHECK_ARG(pp.is_cp_round_robin != 0,
                      where << "cp_world_size " << W << " but the plan was made with "
                            << "is_cp_round_robin = 0 (plan each rank's shard with "
                               "is_cp_round_robin = 1: the causal trim drops keys a row sees)");
    } else {
        MLA_CHECK_ARG(pp.is_cp_round_robin == 0,
                      where << "the plan was made with is_cp_round_robin = 1 but cp_world_size is "
                            << W << " (set cp_world_size, cp_rank and g_kv_indptr for a "
                               "round-robin shard, or plan with is_cp_round_robin = 0)");
    }

    mla_metadata_sizes sz;
    std::memset(&sz, 0, sizeof sz);
    sz.struct_size = sizeof sz;
    {
        const mla_status st = context_metadata_info(ctx, a.plan_params, &sz);
        if (st != MLA_SUCCESS)
            MLA_FAIL(st, where << "plan_params rejected by mla_metadata_info: " << mla_last_error());
    }
    const mla_metadata_buffers pb = read_buffers(a.plan);
    check_len(pb.work_indptr_len, int64_t(sz.num_clusters) + 1, pb.work_indptr, "work_indptr");
    check_len(pb.work_info_set_rows, sz.work_info_set_rows, pb.work_info_set, "work_info_set");
    if (sz.work_info_set_rows > 0) check_ptr(pb.work_info_set, 16, "plan work_info_set");
    check_len(pb.reduce_indptr_len, sz.reduce_indptr_len, pb.reduce_indptr, "reduce_indptr");
    check_len(pb.reduce_final_map_rows, sz.reduce_final_map_rows, pb.reduce_final_map, "reduce_final_map");
    check_len(pb.reduce_partial_map_len, sz.reduce_partial_map_len, pb.reduce_partial_map, "reduce_partial_map");
    MLA_CHECK_ARG(sz.num_clusters >= 1, where << "the plan has " << sz.num_clusters << " clusters");
    if (a.workspace_bytes < size_t(sz.workspace_bytes))
        MLA_FAIL(MLA_ERROR_BUFFER_TOO_SMALL, where << "workspace has " << a.workspace_bytes
                                                   << " bytes, the plan needs " << sz.workspace_bytes
                                                   << " (mla_metadata_sizes.workspace_bytes)");
    if (sz.workspace_bytes > 0) check_ptr(a.workspace, 16, "workspace");
    // tile_counters (the fused reduction): checked whenever given, used only where both rows allow
    MLA_CHECK_ARG(a.tile_counters_len >= 0, where << "tile_counters_len " << a.tile_counters_len << " < 0");
    if (a.tile_counters) {
        check_ptr(a.tile_counters, 4, "tile_counters");
        const int64_t tiles = std::max<int64_t>(sz.reduce_indptr_len - 1, 0);
        if (a.tile_counters_len < tiles)
            MLA_FAIL(MLA_ERROR_BUFFER_TOO_SMALL, where << "tile_counters has " << a.tile_counters_len
                                                       << " elements, the plan has " << tiles
                                                       << " qo tiles (mla_metadata_sizes.reduce_indptr_len - 1)");
    }
    // active_clusters: launch only the clusters that hold works (the kernel checks that none
    // beyond them does: mla_dec::kernel_start)
    MLA_CHECK_ARG(a.active_clusters >= 0 && a.active_clusters <= sz.num_clusters,
                  where << "active_clusters " << a.active_clusters << " outside 0.." << sz.num_clusters
                        << " (0 = every one of the plan's num_clusters; mla_plan_summary.active_clusters)");
    // no_split_tiles: the caller says that no tile splits (mla_plan_summary.num_split_tiles 0): no
    // reducer, no partial buffers (the kernel rejects a split work: mla_dec::load_work_rec)
    MLA_CHECK_ARG(a.no_split_tiles == 0 || a.no_split_tiles == 1,
                  where << "no_split_tiles " << a.no_split_tiles
                        << " is not 0 or 1 (1: the plan splits no tile, mla_plan_summary.num_split_tiles == 0)");

    // ---- head plan (routing) and table rows ----
    mla_decode_shape shape = MLA_DECODE_SHAPE_INIT;
    shape.arch = ctx->arch.c_str();
    shape.num_heads = a.num_heads;
    shape.num_heads_k = 1;
    shape.max_seqlen_qo = a.max_seqlen_q;
    shape.q_dtype = a.q_dtype;
    shape.kv_dtype = a.kv_dtype;
    shape.page_size = a.page_size;
    shape.return_lse = a.lse != nullptr;
    shape.causal = a.causal != 0;
    shape.persistent = 1;
    shape.fast_mode = pp.fast_mode;
    shape.intra_batch_mode = pp.intra_batch_mode;
    shape.has_scales = (a.q_scale && a.kv_scale) ? 1 : 0;
    const mla_head_plan hp = route::head_plan(shape);
    if (hp.plan == MLA_HEAD_PLAN_UNSUPPORTED || !hp.planner_accepts)
        MLA_FAIL(MLA_ERROR_UNSUPPORTED_SHAPE,
                 where << "the sm_90a head plan rejects " << a.num_heads << " heads, qlen "
                       << a.max_seqlen_q << ", q=" << qk << " kv=" << kvk
                       << " (mla_decode_shape_support says why)");
    const int hk = hp.kernel_num_heads, r = hp.qk_batch_ratio;
    MLA_CHECK(hk >= 1 && r >= 1 && hk * r == a.num_heads, MLA_ERROR_INTERNAL,
              where << "head plan " << r << " x " << hk << " does not cover " << a.num_heads << " heads");
    same(sz.kernel_num_heads, hk, "kernel heads (mla_metadata_info vs head plan)");
    const int m = route::sm90_row_tile(hk, a.max_seqlen_q);
    if (m < 0)
        MLA_FAIL(MLA_ERROR_UNSUPPORTED_SHAPE, where << hk << " kernel heads exceed the 64-row tile");

    const bool causal_key = a.causal || a.max_seqlen_q == 1;  // as the routing key (L=1: causal)
    const bool lse_key = a.lse != nullptr;
    // The row is memoised per context under a packing of exactly the key's varying columns.
    const uint64_t row_id = (uint64_t(a.q_dtype) & 0xff) | (uint64_t(a.kv_dtype) & 0xff) << 8 |
                            uint64_t(m & 0xffff) << 16 | uint64_t(causal_key) << 32 |
                            uint64_t(lse_key) << 33 | uint64_t(cprr) << 34 |
                            uint64_t(1) << 40;  // 1: mla_decode
    DecodeLaunch d;
    // The reducer row, when the plan can split: spread = 1 when the launch is narrow (tiles x M
    // at most 2 x clusters: a few long-split tiles, e.g. one request of 32K-1M tokens): the
    // table then gives the slim reducer (since session 26; before it the wide one), one unit per
    // CTA of 4 warps, sized to sit beside a 16-row decode CTA; with many tiles, the
    // whole-tile reducer (a CTA per SM at most, each reducing its split tiles with all its warps;
    // mla_reduce.csv).
    // partial buffers for split works: the plan's, unless the caller says no tile splits
    // (no_split_tiles: a split work then finds partial_out NULL and is rejected, MLA_DECODE_ERR_PLAN)
    const bool partials = sz.partial_rows > 0 && a.no_split_tiles == 0;
    const bool can_split = partials && sz.reduce_indptr_len > 1;
    const bool spread = int64_t(sz.reduce_indptr_len - 1) * m <= 2 * int64_t(sz.num_clusters);
    const auto reduce_row = [&] {
        return context_row_cached(ctx, (uint64_t(2) << 40) | uint64_t(spread), "mla_reduce", [&] {
            return std::map<std::string, std::string>{{"kind", "reduce"}, {"outType", "bf16"}, {"spread", spread ? "1" : "0"}};
        });
    };
    // The fused reduction (tile_counters, docs/plan-layout.md "Fused reduction"): wanted when the
    // caller passes counters, the plan is a v1_2 plan (only its works name their tile, dw 7) and
    // the reducer row says launch_fused 1 (many tiles of a few fragments; the spread-1 reducer's few
    // long tiles would leave one CTA reading every fragment of a 32K-1M-token request); it runs
    // where the decode table has a row keyed fused = 1 (the *_fused kernels), else the reducer does.
    const bool want_fused = a.tile_counters && can_split && hp.planner == MLA_PLANNER_V1_2 && hp.reduce_supported &&
                            [&] {
                                const mla_context::LaunchRow rr = reduce_row();
                                return launch_flag(*rr.row, "launch_fused", rr.fused);
                            }();
    const auto decode_key = [&](bool fused) {
        std::map<std::string, std::string> k{
            {"qType", qk},
            {"kvType", kvk},
            {"Gqa", std::to_string(m)},
            {"ps", "1"},
            {"qSeqLen", "0"},
            {"prefill", "0"},
            {"causal", causal_key ? "1" : "0"},
            {"lse", lse_key ? "1" : "0"},
            {"cprr", cprr ? "1" : "0"},
        };
        if (fused) k["fused"] = "1";
        return k;
    };
    mla_context::LaunchRow lr;
    if (want_fused)
        lr = context_row_cached(ctx, row_id | uint64_t(1) << 35, "mla_decode", [&] { return decode_key(true); }, true);
    d.fused_reduce = lr.row != nullptr;
    if (!d.fused_reduce) lr = context_row_cached(ctx, row_id, "mla_decode", [&] { return decode_key(false); });
    d.decode_row = lr.row;
    d.threads = unsigned(lr.threads < 0 ? 0 : lr.threads);
    d.smem = unsigned(lr.smem < 0 ? 0 : lr.smem);
    // Four kernel families share the params struct: mla_decode_qm_* (wgmma, query rows on the
    // MMA's M side), mla_decode_wg_* (wgmma, transposed), mla_decode_ra_* (wgmma, transposed,
    // A from registers) and mla_decode_* (mma.sync, the fallback); the row's knl_name says which
    // launch values it must carry.
    const std::string& kn = d.decode_row->knl_name;
    const bool qm_family = kn.rfind("mla_decode_qm_", 0) == 0;
    const bool wg_family = kn.rfind("mla_decode_wg_", 0) == 0 || kn.rfind("mla_decode_ra_", 0) == 0;
    const bool ra_family = kn.rfind("mla_decode_ra_", 0) == 0;
    const bool qm_ws = qm_family && kn.size() > 3 && kn.compare(kn.size() - 3, 3, "_ws") == 0;
    const int want_threads = qm_ws       ? mla_decode_qm_ws_threads()
                             : qm_family ? mla_decode_qm_threads()
                             : ra_family ? mla_decode_ra_threads()
                             : wg_family ? mla_decode_wg_threads()
                                         : mla_decode_warps(m) * 32;
    const int want_smem = qm_family   ? mla_decode_qm_smem_bytes(kv8)
                          : ra_family ? mla_decode_ra_smem_bytes(m, q8)
                          : wg_family ? mla_decode_wg_smem_bytes(m, kv8)
                                      : mla_decode_smem_bytes(m, kv8);
    if (int(d.threads) != want_threads || int(d.smem) != want_smem)
        MLA_FAIL(MLA_ERROR_TABLE, d.decode_row->file << ":" << d.decode_row->line << ": "
                                  << d.decode_row->knl_name << " launch_threads " << d.threads
                                  << " / launch_smem " << d.smem << ", the kernel is built for "
                                  << want_threads << " / " << want_smem);
    // launch_kv_tma 1: the kernel loads KV tiles by TMA through a tensor map of the cache
    // (kv_load.cuh); allowed on the kernels it was verified on: the transposed bf16-KV kernels of
    // 16 and 32 rows (issue_tile_tma), the qm bf16 kernel of 64 rows, whose TMA body is a
    // different schedule (decode_qm_tma.cuh; docs/performance.md, session 8), and the qm fp8
    // kernel of 64 rows, whose TMA body runs S on the fp8 tensor cores (decode_qm8.cuh; session
    // 20). The 64-row wg kernel has no table row. launch_kv_tma 2: as 1, and at pages of >= 64
    // tokens one 4-D box a tile instead of 9 (a map of rank 4, p.kv_tma 2; session 27); on the
    // bf16-KV kernels of those (the fp8 map's last box reads past the row, which only the 3-D
    // map's bounds fill with zeros).
    const int kv_tma_mode = kv_tma_of(*d.decode_row, lr.kv_tma);
    const bool kv_tma = kv_tma_mode != 0;
    const bool bf16_tma_kernel = kn == "mla_decode_wg_bf16_bf16_m16" || kn == "mla_decode_wg_bf16_bf16_m32" ||
                                 kn == "mla_decode_wg_bf16_bf16_m16_fused" ||
                                 kn == "mla_decode_wg_bf16_bf16_m32_fused" || kn == "mla_decode_qm_bf16_bf16_m64";
    MLA_CHECK(kv_tma_mode != 2 || bf16_tma_kernel, MLA_ERROR_TABLE,
              d.decode_row->file << ":" << d.decode_row->line
                                 << ": launch_kv_tma 2 (page boxes) needs a bf16-KV kernel whose TMA loads are verified "
                                    "(mla_decode_wg_bf16_bf16_m16 / _m32 and their _fused builds, "
                                    "mla_decode_qm_bf16_bf16_m64), not " << kn);
    // (the register-A kernels since session 40: their box layout, MLA_RA_VSWAP 3, or for fp8 Q
    // MLA_RA_SSK; decode_ra.cuh)
    const bool ra_box = ra_family && (MLA_RA_VSWAP == 3 || (q8 && MLA_RA_SSK));
    MLA_CHECK(!kv_tma || bf16_tma_kernel || ra_box || kn == "mla_decode_qm_fp8_fp8_m64" ||
                  kn == "mla_decode_qm_fp8_fp8_m64_ws",
              MLA_ERROR_TABLE,
              d.decode_row->file << ":" << d.decode_row->line << ": launch_kv_tma " << kv_tma_mode
                                 << " needs a kernel whose TMA loads are verified "
                                    "(mla_decode_wg_bf16_bf16_m16 / _m32 and their _fused builds, mla_decode_qm_bf16_bf16_m64, "
                                    "mla_decode_qm_fp8_fp8_m64 and its three-warpgroup build _ws; mla_decode_ra_* only "
                                    "when built with MLA_RA_VSWAP 3, or MLA_RA_SSK for fp8 Q), not " << kn);
    // launch_kv_tma_l2: the tensor map's L2 promotion in bytes, 0 (none), 64, 128 or 256 (absent:
    // 256, the setting of sessions 6-9). Every shipped row says 0 since session 10: at 256 the TMA
    // box pattern streamed 4-9% slower (docs/performance.md, session 10)
    const long kv_l2 = lr.kv_tma_l2 == mla_context::LaunchRow::kAbsent ? 256 : lr.kv_tma_l2;
    MLA_CHECK(kv_l2 == 0 || kv_l2 == 64 || kv_l2 == 128 || kv_l2 == 256, MLA_ERROR_TABLE,
              d.decode_row->file << ":" << d.decode_row->line << ": launch_kv_tma_l2 must be 0, 64, 128 or 256, got "
                                 << kv_l2);
    // launch_pdl 1: a programmatic dependent launch of the decode (every sm_90a decode kernel
    // starts with griddepcontrol.wait, so it reads nothing before the kernel ahead has finished;
    // its CTAs become resident while that kernel's last CTAs run)
    d.decode_programmatic = launch_flag(*d.decode_row, "launch_pdl", lr.pdl);
    d.decode_carveout = carveout_of(*d.decode_row, lr.carveout);
    // launch_cluster (absent: 1): the decode grid as clusters of that many CTAs (1 or 2). Kernels
    // built for it (the qm TMA body: two CTAs share each KV tile by TMA multicast where their works
    // read the same KV, decode_qm_tma.cuh) also run correctly without, so a grid that is not a
    // multiple of it, or a runtime without clusters, launches plainly
    const long cl = lr.cluster == mla_context::LaunchRow::kAbsent ? 1 : lr.cluster;
    MLA_CHECK(cl == 1 || cl == 2, MLA_ERROR_TABLE,
              d.decode_row->file << ":" << d.decode_row->line << ": launch_cluster must be 1 or 2, got " << cl);
    // fused = 1 rows must name a kernel with the fused reduction (decode/fused_reduce.cuh): the
    // bf16-KV wgmma body of 16 and 32 rows, built as *_fused
    MLA_CHECK(!d.fused_reduce || kn == "mla_decode_wg_bf16_bf16_m16_fused" || kn == "mla_decode_wg_bf16_bf16_m32_fused",
              MLA_ERROR_TABLE,
              d.decode_row->file << ":" << d.decode_row->line << ": a fused = 1 row needs a kernel with the fused "
                                    "reduction (mla_decode_wg_bf16_bf16_m16_fused / _m32_fused), not " << kn);
    // fp32 out is written by the wgmma families' epilogues and the reducer only; the mma.sync
    // fallback (no rows in the shipped table) stores bf16 whatever out_fp32 says.
    if (out32 && !qm_family && !wg_family)
        MLA_FAIL(MLA_ERROR_UNSUPPORTED_SHAPE,
                 where << "out_dtype fp32 is not supported by " << kn << " (the mma.sync fallback, "
                       << d.decode_row->file << ":" << d.decode_row->line
                       << "): only the wgmma kernels (mla_decode_qm_*, mla_decode_wg_*, mla_decode_ra_*) write fp32 out; "
                          "use out_dtype bf16");
    // active_clusters trims the grid, except for clusters of 2 CTAs (the pairs are CTAs k and
    // k + grid / 2: decode_qm_tma.cuh, MLA_QM_MC)
    d.grid = unsigned(a.active_clusters > 0 && cl == 1 ? a.active_clusters : sz.num_clusters);
    d.decode_cluster = d.grid % unsigned(cl) == 0 ? unsigned(cl) : 1u;
    d.row_tile = m;
    d.kernel_heads = hk;
    d.qk_batch_ratio = r;
    if (can_split) {
        if (!hp.reduce_supported)
            MLA_FAIL(MLA_ERROR_UNSUPPORTED_SHAPE, where << "no reducer for " << hk << " kernel heads");
        const mla_context::LaunchRow rr = reduce_row();
        d.reduce_row = rr.row;
        d.reduce_threads = unsigned(rr.threads < 0 ? 128 : rr.threads);
        const long upc = rr.units_per_cta == rr.kAbsent ? MLA_REDUCE_UNITS_PER_CTA : rr.units_per_cta;
        // the row must keep its kernel's launch contract (reduce_params.h): a wide or slim reducer given
        // 4 units per CTA would leave 3 of every 4 units unwritten
        struct Contract {
            const char* kernel;
            long units_per_cta;  // 0: whole split tiles, a CTA per SM looping over tiles (grid y 1)
            unsigned min_threads, max_threads;
            unsigned slices;  // column slices of a (row, head) unit: 4 quarters, or 8 eighths
        };
        static const Contract contracts[] = {{"mla_reduce_bf16", MLA_REDUCE_UNITS_PER_CTA, 128, 512, 4},
                                             {"mla_reduce_wide_bf16", 1, MLA_REDUCE_WIDE_THREADS, MLA_REDUCE_WIDE_THREADS, 4},
                                             {"mla_reduce_slim_bf16", 1, MLA_REDUCE_SLIM_THREADS, MLA_REDUCE_SLIM_THREADS, 8},
                                             {"mla_reduce_tiles_bf16", 0, 128, MLA_REDUCE_TILES_MAX_THREADS, 4}};
        const Contract* c = nullptr;
        for (const Contract& x : contracts)
            if (d.reduce_row->knl_name == x.kernel) c = &x;
        const auto where_row = [&] { return d.reduce_row->file + ":" + std::to_string(d.reduce_row->line) + ": "; };
        MLA_CHECK(c, MLA_ERROR_TABLE, where_row() << "no launch contract for reducer kernel " << d.reduce_row->knl_name
                                                  << " (reduce_params.h: mla_reduce_bf16, mla_reduce_wide_bf16, "
                                                     "mla_reduce_slim_bf16, mla_reduce_tiles_bf16)");
        MLA_CHECK(upc == c->units_per_cta && d.reduce_threads >= c->min_threads && d.reduce_threads <= c->max_threads &&
                      d.reduce_threads % 128 == 0,
                  MLA_ERROR_TABLE,
                  where_row() << c->kernel << " takes launch_units_per_cta " << c->units_per_cta << " and launch_threads "
                              << c->min_threads << ".." << c->max_threads << " in steps of 128; the row gives "
                              << upc << " and " << d.reduce_threads);
        // launch_pdl 1: a programmatic dependent launch (the reducer's grid launches as the
        // decode's CTAs exit, and its CTAs wait for the whole decode grid: griddepcontrol.wait)
        d.reduce_programmatic = launch_flag(*d.reduce_row, "launch_pdl", rr.pdl);
        d.reduce_carveout = carveout_of(*d.reduce_row, rr.carveout);
        (void)launch_flag(*d.reduce_row, "launch_fused", rr.fused);  // 0 / 1 on every call (used above, want_fused)
        if (c->units_per_cta == 0) {
            // whole tiles: at most one CTA per SM (reduce_params.h), each looping over its tiles
            const int64_t sms = ctx->num_cus > 0 ? ctx->num_cus : sz.num_clusters;
            d.reduce_grid = unsigned(std::min<int64_t>(sz.reduce_indptr_len - 1, std::max<int64_t>(sms, 1)));
            d.reduce_grid_y = 1;
        } else {
            d.reduce_grid = unsigned(sz.reduce_indptr_len - 1);
            // (row, head, column slice) units of a tile: at most M * slices of them (128-column
            // quarters, or the slim reducer's 64-column eighths)
            d.reduce_grid_y = unsigned(m * int(c->slices) / upc);
        }
    }

    // ---- kernel params ----
    char* ws = static_cast<char*>(a.workspace);
    float* pout = partials ? reinterpret_cast<float*>(ws) : nullptr;
    float* plse = partials
                      ? reinterpret_cast<float*>(ws + plan::partial_lse_offset(sz.partial_rows, hk))
                      : nullptr;
    mla_decode_params& p = d.decode;
    p.q = a.q;
    p.kv = a.kv_cache;
    p.out = a.out;
    p.lse = a.lse;
    p.partial_out = pout;
    p.partial_lse = plse;
    p.qo_indptr = a.qo_indptr;
    p.kv_indptr = a.kv_indptr;
    p.kv_last_page_lens = a.kv_last_page_lens;
    p.page_table = block_form ? a.block_table : a.kv_page_indices;
    p.work_indptr = pb.work_indptr;
    p.work_info_set = pb.work_info_set;
    p.q_scale = a.q_scale;
    p.kv_scale = a.kv_scale;
    p.error_flag = a.error_flag;
    p.q_stride_token = qst;
    p.q_stride_head = qsh;
    p.kv_stride_page = kvsp;
    p.out_stride_token = ost;
    p.out_stride_head = osh;
    p.num_page_indices = block_form ? 0 : a.num_page_indices;
    p.softmax_scale = a.softmax_scale;
    p.batch_size = a.batch_size;
    p.num_heads = a.num_heads;
    p.kernel_heads = hk;
    p.qk_batch_ratio = r;
    p.page_size_log2 = log2_exact(a.page_size);
    p.num_pages = a.num_pages;
    p.block_table_stride = block_form ? a.block_table_stride : 0;
    p.causal = a.causal ? 1 : 0;
    p.cp_world_size = cprr ? W : 1;
    p.cp_rank = cprr ? a.cp_rank : 0;
    p.g_kv_indptr = cprr ? a.g_kv_indptr : nullptr;  // W = 1: not read, not passed
    p.out_fp32 = out32 ? 1 : 0;
    p.tile_counters = d.fused_reduce ? a.tile_counters : nullptr;
    p.num_clusters = sz.num_clusters;  // the grid may be fewer (active_clusters)
    p.work_rows = int32_t(std::min<int64_t>(sz.work_info_set_rows, INT32_MAX));
    // TMA boxes of min(page_size, 64) rows from page size MLA_KV_TMA_MIN_PAGE (8) on, and a cache
    // of at least one page (boxes of 1-4 rows land correctly too, the swizzle following the shared
    // address, but at page 1 a tile's 576 one-row boxes are 79% slower than cp.async: session
    // 22); the driver's alignment rules (cache pointer and page stride multiples of 16 bytes) are
    // argument checks above. Otherwise, or where the runtime has no tensor maps, the same kernel
    // loads by cp.async (p.kv_tma = 0).
    // launch_kv_tma 2 with bf16 KV in pages of >= 64 tokens: the 4-D map, p.kv_tma 2.
    if (kv_tma && a.num_pages > 0 && a.page_size >= MLA_KV_TMA_MIN_PAGE) {
        const bool page_box = kv_tma_mode == 2 && !kv8 && a.page_size >= 64;
        p.kv_tma = kv_tensor_map(ctx, a.kv_cache, kv8, a.page_size, a.num_pages, kvsp, kv_l2, page_box, p.kv_tmap)
                       ? (page_box ? 2 : 1)
                       : 0;
    }

    mla_reduce_params& rp = d.reduce;
    rp.partial_out = pout;
    rp.partial_lse = plse;
    rp.reduce_indptr = pb.reduce_indptr;
    rp.reduce_final_map = pb.reduce_final_map;
    rp.reduce_partial_map = pb.reduce_partial_map;
    rp.qo_indptr = a.qo_indptr;
    rp.out = a.out;
    rp.lse = a.lse;
    rp.out_stride_token = ost;
    rp.out_stride_head = osh;
    rp.batch_size = a.batch_size;
    rp.num_heads = a.num_heads;
    rp.kernel_heads = hk;
    rp.qk_batch_ratio = r;
    rp.num_tiles = d.reduce_grid > 0 ? int(sz.reduce_indptr_len - 1) : 0;
    rp.out_fp32 = out32 ? 1 : 0;
    // the fused reduction's view (decode_params.h): the same struct, with every tile of the plan
    // (the kernel bounds a split work's tile, dw 7, by it)
    p.reduce = rp;
    p.reduce.num_tiles = int32_t(std::max<int64_t>(sz.reduce_indptr_len - 1, 0));
    return d;
}

}  // namespace mla::launch
