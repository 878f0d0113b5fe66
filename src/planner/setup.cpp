// setup.cpp - params validation, the resolved planner setup and the buffer sizes
// (mla_metadata_info, aiter get_mla_metadata_info_v1 semantics, §3.2: never too small).
#include <algorithm>
#include <climits>

#include "common/error.h"
#include "context/struct_io.h"
#include "planner/planner.h"
#include "planner/v1_2_core.h"

namespace mla::plan {
namespace {

bool is_pow2(long v) { return v > 0 && (v & (v - 1)) == 0; }

mla_decode_shape shape_of(const mla_metadata_params& p) {
    mla_decode_shape sh = MLA_DECODE_SHAPE_INIT;
    sh.arch = p.arch;
    sh.num_heads = p.num_heads;
    sh.num_heads_k = p.num_heads_k;
    sh.max_seqlen_qo = p.max_seqlen_qo;
    sh.uni_seqlen_qo = -1;
    sh.q_dtype = p.q_dtype;
    sh.kv_dtype = p.kv_dtype;
    sh.v_head_dim = 512;
    sh.page_size = p.page_size;
    sh.causal = p.causal;
    sh.persistent = 1;
    sh.cp_round_robin = p.is_cp_round_robin;
    sh.fast_mode = p.fast_mode;
    sh.intra_batch_mode = p.intra_batch_mode;
    sh.enable_experimental = p.enable_experimental;
    sh.flydsl_ps1 = p.flydsl_ps1;
    return sh;
}

// Sizes (§3.2). Bp = B * r pseudo-requests, n = tiles of a max-length request, C clusters.
void compute_sizes(Setup& s) {
    const mla_metadata_params& p = s.params;
    const mla_v12_config& c = s.cfg;
    const int64_t C = c.num_clusters;
    const int64_t Bp = int64_t(p.batch_size) * c.ratio;
    int32_t n = 0, t = 0;
    mla_v12::qo_tiles(c, p.max_seqlen_qo, &n, &t);
    const int64_t tile_cnt = Bp * n;
    int64_t works = 0, partials = 0, frags = 0;
    if (s.planner == MLA_PLANNER_V1_2) {
        works = (Bp + C - 1) * n;
        partials = std::min(Bp + C - 1, 2 * (C - 1)) * n;
        // Fragments the v1_2 walk can make with S effective clusters: S-1 non-final ones plus
        // one final per split tile (docs/planner.md).
        const int64_t S = c.num_splits;
        frags = (S - 1) + std::min(tile_cnt, S - 1);
        if (p.max_split_per_batch > 0)  // the split-cap test's min form (§8): never enlarges
            partials = std::min(partials, tile_cnt + std::min<int64_t>(C, p.max_split_per_batch * Bp));
        works = std::max(works, tile_cnt + S - 1);
        partials = std::max(partials, frags);
    } else if (s.planner == MLA_PLANNER_V1_0) {
        works = partials = tile_cnt * p.num_kv_splits;
        const int64_t per_tile = s.arch == route::Arch::gfx942
                                     ? std::min(16, p.num_kv_splits)
                                     : std::min<int64_t>(p.num_kv_splits,
                                                         Bp ? (C + Bp - 1) / Bp : 1);
        frags = tile_cnt * std::max<int64_t>(per_tile, 1);
    } else {
        works = partials = tile_cnt * C;
        frags = std::min(tile_cnt * C, 2 * C);
    }
    works = std::max<int64_t>(works, tile_cnt);
    frags = std::max<int64_t>(frags, 0);
    partials = std::max<int64_t>(partials, 0);
    mla_metadata_sizes& z = s.sizes;
    z = mla_metadata_sizes{};
    z.struct_size = sizeof(mla_metadata_sizes);
    z.work_metadata_len = 2;
    z.work_indptr_len = C + 1;
    z.work_info_set_rows = works;
    z.reduce_indptr_len = tile_cnt + 1;
    z.reduce_final_map_rows = tile_cnt;
    z.reduce_partial_map_len = partials;
    z.partial_rows = frags * s.max_tile_tokens;
    const int64_t Hk = c.kernel_heads;
    z.workspace_bytes = z.partial_rows ? partial_lse_offset(z.partial_rows, Hk) + z.partial_rows * Hk * 4 : 0;
    z.num_clusters = c.num_clusters;
    z.kernel_num_heads = c.kernel_heads;
    z.qk_batch_ratio = c.ratio;
    MLA_CHECK_ARG(z.work_info_set_rows < INT32_MAX / 8 && z.reduce_indptr_len < INT32_MAX &&
                      z.reduce_partial_map_len < INT32_MAX && z.partial_rows < INT32_MAX,
                  "the plan for batch_size " << p.batch_size << " x " << c.ratio
                                             << " pseudo-requests is too large for int32 indices");
}

}  // namespace

Setup resolve(const mla_metadata_params& p) {
    Setup s;
    s.params = p;
    MLA_CHECK_ARG(p.arch != nullptr, "params->arch is NULL");
    s.arch = route::parse_arch(p.arch);
    MLA_CHECK_ARG(p.batch_size >= 0 && p.batch_size <= (1 << 24),
                  "batch_size must be in 0..16777216 (got " << p.batch_size << ")");
    MLA_CHECK_ARG(p.max_seqlen_qo >= 1 && p.max_seqlen_qo <= 8,
                  "max_seqlen_qo must be in 1..8 (got " << p.max_seqlen_qo << ")");
    MLA_CHECK_ARG(p.num_heads >= 1 && p.num_heads <= 1024,
                  "num_heads must be in 1..1024 (got " << p.num_heads << ")");
    MLA_CHECK_ARG(p.num_heads_k == 1, "num_heads_k must be 1 (got " << p.num_heads_k << ")");
    // Round-robin context parallel masks on global positions, which only means something for
    // causal decode (aiter: cprr kernels exist for causal only; §7).
    MLA_CHECK_ARG(!p.is_cp_round_robin || p.causal,
                  "is_cp_round_robin needs causal = 1 (round-robin context parallel is causal only)");
    MLA_CHECK_ARG(is_pow2(p.page_size) && p.page_size <= 1024,
                  "page_size must be a power of two in 1..1024 (got " << p.page_size << ")");
    MLA_CHECK_ARG(is_pow2(p.kv_granularity) && p.kv_granularity <= (1 << 20),
                  "kv_granularity must be a power of two in 1..2^20 (got " << p.kv_granularity
                                                                          << ")");
    MLA_CHECK_ARG(p.num_clusters >= 0 && p.num_clusters <= 65536,
                  "num_clusters must be in 0..65536 (got " << p.num_clusters << ")");
    MLA_CHECK_ARG(p.max_split_per_batch != 0,
                  "max_split_per_batch 0 would allow no split at all: use -1 (automatic) or >= 1");
    MLA_CHECK_ARG(p.work_overhead_tokens >= -1 && p.work_overhead_tokens <= (1 << 20),
                  "work_overhead_tokens must be -1 (the arch's) or in 0..1048576 (got "
                      << p.work_overhead_tokens << ")");
    MLA_CHECK_ARG(p.split_tail_tokens >= -1 && p.split_tail_tokens <= (1 << 20),
                  "split_tail_tokens must be -1 (the arch's) or in 0..1048576 (got "
                      << p.split_tail_tokens << ")");
    MLA_CHECK_ARG(p.num_kv_splits >= 1 && p.num_kv_splits <= 4096,
                  "num_kv_splits must be in 1..4096 (got " << p.num_kv_splits << ")");

    const mla_decode_shape sh = shape_of(p);
    s.head = route::head_plan(sh);
    if (s.head.plan == MLA_HEAD_PLAN_UNSUPPORTED)
        MLA_FAIL(MLA_ERROR_UNSUPPORTED_SHAPE,
                 "the " << p.arch << " head plan rejects num_heads " << p.num_heads
                        << ", max_seqlen_qo " << p.max_seqlen_qo << ", q "
                        << mla_dtype_string(p.q_dtype) << " / kv "
                        << mla_dtype_string(p.kv_dtype) << " (see mla_decode_shape_support)");
    s.planner = s.head.planner;

    const int cus = p.num_clusters > 0 ? p.num_clusters : route::default_num_cus(s.arch);
    const int mult = route::occupancy(s.arch, p.num_heads, p.max_seqlen_qo, p.q_dtype,
                                      p.kv_dtype, p.enable_experimental != 0);
    mla_v12_config& c = s.cfg;
    c = mla_v12_config{};
    c.num_batches = p.batch_size;
    c.ratio = s.head.qk_batch_ratio;
    c.kernel_heads = s.head.kernel_num_heads;
    c.packed = s.head.packed_qo_len_per_wg;
    c.tile_rule = s.arch == route::Arch::sm90a ? 0 : 1;
    c.max_seqlen_qo = p.max_seqlen_qo;
    c.page_size = p.page_size;
    c.pages_per_block = std::max(1, p.kv_granularity / p.page_size);
    while ((1 << c.block_shift) < c.pages_per_block) ++c.block_shift;
    c.tile_tokens = c.tile_rule == 0 ? std::max(1, c.packed / c.kernel_heads) : 0;
    c.tile_ids = s.arch == route::Arch::sm90a ? 1 : 0;  // work dw 7 of v1_2 plans (docs/plan-layout.md)
    // aiter's fixed cost of a work, max(1, ceil(16 / page_size)) blocks, raised to the arch's (or
    // the caller's) work_overhead_tokens in blocks (mla_metadata_params.work_overhead_tokens).
    c.overhead = std::max(1, (16 + p.page_size - 1) / p.page_size);
    // The split tail (mla_metadata_params.split_tail_tokens) in blocks, rounded up; 0 = none.
    {
        int32_t nt = 0, tile_tokens = 0;  // rows of the longest request's tiles: Hk x tile tokens
        mla_v12::qo_tiles(c, p.max_seqlen_qo, &nt, &tile_tokens);
        const route::SplitDefaults d =
            route::default_split(s.arch, c.kernel_heads * tile_tokens, p.kv_dtype);
        const int64_t tokens = p.work_overhead_tokens < 0 ? d.overhead_tokens : p.work_overhead_tokens;
        const int64_t tail = p.split_tail_tokens < 0 ? d.tail_tokens : p.split_tail_tokens;
        const int64_t block_tokens = int64_t(c.pages_per_block) * p.page_size;
        c.overhead = int32_t(std::max<int64_t>(c.overhead, (tokens + block_tokens - 1) / block_tokens));
        c.tail_blocks = int32_t((tail + block_tokens - 1) / block_tokens);
    }
    c.causal_trim = p.page_size == 1 && p.causal && !p.is_cp_round_robin;
    c.num_clusters = std::max(1, cus * mult);
    const int64_t bp = int64_t(p.batch_size) * c.ratio;
    c.auto_splits = p.max_split_per_batch < 0;
    c.num_splits = c.auto_splits
                       ? c.num_clusters
                       : int32_t(std::max<int64_t>(
                             1, std::min<int64_t>(c.num_clusters, p.max_split_per_batch * bp)));
    MLA_CHECK_ARG(p.head_group_major == 0 || p.head_group_major == 1,
                  "head_group_major must be 0 or 1 (got " << p.head_group_major << ")");
    if (p.head_group_major) {
        MLA_CHECK_ARG(s.arch == route::Arch::sm90a && s.planner == MLA_PLANNER_V1_2,
                      "head_group_major = 1 is for the sm_90a v1_2 planner (arch " << p.arch << ")");
        // one head group and one qo tile per request: the orders are the same
        int32_t nt = 0, ts = 0;
        mla_v12::qo_tiles(c, p.max_seqlen_qo, &nt, &ts);
        c.group_major = (c.ratio > 1 || nt > 1) ? 1 : 0;
    }
    s.max_tile_tokens = 1;
    for (int l = 1; l <= p.max_seqlen_qo; ++l) {
        int32_t n = 0, t = 0;
        mla_v12::qo_tiles(c, l, &n, &t);
        s.max_tile_tokens = std::max(s.max_tile_tokens, t);
    }
    compute_sizes(s);
    return s;
}

Setup resolve_public(const mla_metadata_params* params) {
    const mla_metadata_params defaults = MLA_METADATA_PARAMS_INIT;
    return resolve(read_struct(params, defaults, "params"));
}

mla_metadata_buffers check_buffers(const Setup& s, const mla_metadata_buffers* in) {
    MLA_CHECK_ARG(in != nullptr, "buffers is NULL");
    MLA_CHECK_ARG(in->struct_size >= sizeof(size_t) && in->struct_size <= kMaxStructSize,
                  "buffers->struct_size is " << in->struct_size
                                             << ": initialise it to sizeof(mla_metadata_buffers)");
    mla_metadata_buffers b{};
    std::memcpy(static_cast<void*>(&b), in, std::min(in->struct_size, sizeof(b)));
    MLA_CHECK_ARG(in->struct_size >= sizeof(b), "buffers->struct_size " << in->struct_size
                                                                        << " is too small");
    const mla_metadata_sizes& z = s.sizes;
    auto check = [](const void* ptr, int64_t len, int64_t need, const char* name) {
        if (len < need)
            MLA_FAIL(MLA_ERROR_BUFFER_TOO_SMALL, name << " has " << len << " entries, the plan needs "
                                                      << need << " (mla_metadata_info)");
        MLA_CHECK_ARG(ptr != nullptr || need == 0, name << " is NULL");
        MLA_CHECK_ARG(len <= INT32_MAX, name << " length " << len << " exceeds int32");
    };
    check(b.work_metadata, b.work_metadata_len, z.work_metadata_len, "work_metadata");
    check(b.work_indptr, b.work_indptr_len, z.work_indptr_len, "work_indptr");
    check(b.work_info_set, b.work_info_set_rows, z.work_info_set_rows, "work_info_set");
    check(b.reduce_indptr, b.reduce_indptr_len, z.reduce_indptr_len, "reduce_indptr");
    check(b.reduce_final_map, b.reduce_final_map_rows, z.reduce_final_map_rows,
          "reduce_final_map");
    check(b.reduce_partial_map, b.reduce_partial_map_len, z.reduce_partial_map_len,
          "reduce_partial_map");
    return b;
}

void validate_inputs(const Setup& s, const int32_t* qo, const int32_t* kv, const int32_t* last) {
    const mla_metadata_params& p = s.params;
    const int B = p.batch_size;
    MLA_CHECK_ARG(qo != nullptr, "qo_indptr is NULL");
    MLA_CHECK_ARG(kv != nullptr, "kv_indptr is NULL");
    MLA_CHECK_ARG(last != nullptr || B == 0, "kv_last_page_lens is NULL");
    MLA_CHECK_ARG(qo[0] >= 0, "qo_indptr[0] is negative (" << qo[0] << ")");
    MLA_CHECK_ARG(kv[0] >= 0, "kv_indptr[0] is negative (" << kv[0] << ")");
    const int64_t max_pages = 0x3fffffff / p.page_size;  // N_b < 2^30 tokens
    for (int b = 0; b < B; ++b) {
        const int64_t L = int64_t(qo[b + 1]) - qo[b];
        MLA_CHECK_ARG(L >= 0, "qo_indptr decreases at request " << b << " (" << qo[b] << " -> "
                                                                 << qo[b + 1] << ")");
        MLA_CHECK_ARG(L <= p.max_seqlen_qo, "request " << b << " has " << L
                                                       << " query tokens, more than max_seqlen_qo "
                                                       << p.max_seqlen_qo);
        const int64_t P = int64_t(kv[b + 1]) - kv[b];
        MLA_CHECK_ARG(P >= 0, "kv_indptr decreases at request " << b << " (" << kv[b] << " -> "
                                                                 << kv[b + 1] << ")");
        MLA_CHECK_ARG(P <= max_pages, "request " << b << " has " << P << " pages of "
                                                 << p.page_size
                                                 << " tokens: KV length must stay below 2^30");
        if (P > 0)
            MLA_CHECK_ARG(last[b] >= 1 && last[b] <= p.page_size,
                          "kv_last_page_lens[" << b << "] = " << last[b] << " is outside 1.."
                                               << p.page_size);
    }
    // Folded rows and page indices (plus one split unit) must stay in int32.
    MLA_CHECK_ARG(int64_t(qo[B]) * s.cfg.ratio < INT32_MAX,
                  "qo_indptr[B] * qk_batch_ratio overflows int32 (" << qo[B] << " x "
                                                                    << s.cfg.ratio << ")");
    MLA_CHECK_ARG(int64_t(kv[B]) + s.cfg.pages_per_block < INT32_MAX,
                  "kv_indptr[B] = " << kv[B] << " is too close to INT32_MAX");
}

}  // namespace mla::plan
