// v1_2_core.h - the v1_2 (fast_mode) planning algorithm, written once for the host planner
// (plan_v1_2.cpp, serial loops) and the device planner (codeobjects/sm_90a/planner/
// meta_v1_2.cu, the same functions in parallel). Plain C++ with int arithmetic only, so both
// produce the same bytes. No std::, no exceptions: nvcc compiles it as __host__ __device__.
//
// The algorithm is aiter's v1_2 greedy walk (§4.4), restated so it can run in parallel:
//
// * Every qo tile of every pseudo-request costs `blocks + overhead` units (blocks = the
//   request's KV pages in split units of pages_per_block; overhead = max(1, ceil(16/page_size)),
//   aiter's, or the larger work_overhead_tokens in blocks: mla_v12_config.overhead).
//   Laid end to end in tile order, tile t occupies positions [S_t, S_t + cost), blocks first.
// * aiter walks clusters with a budget P = ceil(sum / eff) + overhead: a tile that fits is taken
//   whole; else, if more than `overhead` is left, a fragment takes (left - overhead) blocks and
//   the cluster closes; else the cluster closes. At page_size 1 a fragment that would leave fewer
//   than max_seqlen_qo tokens of its tile absorbs the tail (the tile finishes in this cluster).
// * That walk is exactly: cluster 0 starts at x_0 = 0, and x_{c+1} = snap(x_c + W) with
//   W = P - overhead, where snap(y) = y if y is a tile start or lies in the first `good` blocks
//   of its tile (a fragment boundary), else the start of the next tile (y fell in the tile's
//   overhead, or in the absorbed tail). Cluster c covers positions [x_c, x_{c+1}); the last one
//   takes everything left (aiter's budget already guarantees this; it is a safety net).
// * The works of cluster c: the fragment of the tile containing x_c when x_c is inside it, then
//   every tile starting in [x_c, x_{c+1}). A tile with fragment boundaries inside it is split:
//   its fragments get consecutive partial rows (tile size rows each) and reduce entries.
//
// Inputs are clamped (qlen to [0, L], pages >= 0, last page length to [1, page_size]) so that a
// device planner fed bad data still stays within the sizes of mla_metadata_info; the host
// validates everything before calling in, so the clamps never change a valid plan.
#pragma once
#include <stdint.h>

#include "../../codeobjects/sm_90a/planner/meta_params.h"

#if defined(__CUDACC__)
#define MLA_HD __host__ __device__ __forceinline__
#else
#define MLA_HD inline
#endif

namespace mla_v12 {

// Derived quantities of one request.
struct Req {
    int32_t qlen;     // query tokens L_b (0..max_seqlen_qo)
    int32_t ntiles;   // qo tiles per pseudo-request (0 when qlen == 0)
    int32_t tsize;    // tokens per tile (the last tile may be shorter); partial rows per fragment
    int32_t pages;    // P_b
    int32_t tokens;   // N_b
    int32_t blocks;   // split units: ceil(P_b / pages_per_block)
    int32_t good;     // a cluster boundary may fall at block offsets [0, good) of a tile (0 at
                      // its start, else a fragment boundary); 0 for a tile without blocks
};

MLA_HD int32_t min32(int32_t a, int32_t b) { return a < b ? a : b; }
MLA_HD int32_t max32(int32_t a, int32_t b) { return a > b ? a : b; }
MLA_HD int32_t cdiv32(int32_t a, int32_t b) { return (a + b - 1) / b; }
MLA_HD int64_t cdiv64(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Tiles of a request with `qlen` tokens: sm_90a T = min(L, max(1, packed / Hk)); aiter
// n = L if 2*Hk > packed else ceil(L*Hk / packed), T = ceil(L / n) (docs/plan-layout.md).
MLA_HD void qo_tiles(const mla_v12_config& c, int32_t qlen, int32_t* ntiles, int32_t* tsize) {
    if (qlen <= 0) {
        *ntiles = 0;
        *tsize = 0;
        return;
    }
    int32_t t;
    if (c.tile_rule == 0) {
        t = min32(qlen, c.tile_tokens);  // tile_tokens = max(1, packed / Hk)
    } else {
        const int32_t n = 2 * c.kernel_heads > c.packed ? qlen
                                                        : cdiv32(qlen * c.kernel_heads, c.packed);
        t = cdiv32(qlen, n);
    }
    *tsize = t;
    *ntiles = t == qlen ? 1 : cdiv32(qlen, t);
}

// Request b from its indptr entries (clamped, see the file comment).
MLA_HD Req make_req(const mla_v12_config& c, int32_t qo0, int32_t qo1, int32_t kv0, int32_t kv1,
                    int32_t last) {
    Req q;
    q.qlen = min32(max32(qo1 - qo0, 0), c.max_seqlen_qo);
    qo_tiles(c, q.qlen, &q.ntiles, &q.tsize);
    q.pages = max32(kv1 - kv0, 0);
    if ((int64_t)q.pages * c.page_size > 0x3fffffff)  // N_b < 2^30 (the host checks)
        q.pages = (int32_t)(0x3fffffff / c.page_size);
    last = min32(max32(last, 1), c.page_size);
    q.tokens = q.pages ? (q.pages - 1) * c.page_size + last : 0;
    q.blocks = (q.pages + c.pages_per_block - 1) >> c.block_shift;
    // Page size 1: a boundary after j blocks leaves N - j*gran tokens (trimmed or not, the trim
    // is below the threshold); it is absorbed when that is < max_seqlen_qo.
    int32_t good = q.blocks;
    if (c.page_size == 1) {
        const int32_t need = q.tokens - c.max_seqlen_qo + 1;  // j*gran >= need -> absorbed
        good = need <= 0 ? 1 : (need + c.pages_per_block - 1) >> c.block_shift;
    }
    // A tile with no block fits whole wherever its start falls: no boundary inside it at all.
    // (The split tail narrows this further where the tile is short enough: boundary_limit.)
    q.good = q.blocks ? max32(1, min32(good, q.blocks)) : 0;
    return q;
}

// The block offsets [0, limit) of a tile of request q at which a cluster boundary may fall in a
// chain of stride W: q.good, narrowed by the split tail (mla_metadata_params.split_tail_tokens,
// docs/planner.md) for a tile of at most 2 W blocks, which spans two clusters at most: a boundary
// never leaves fewer than tail_blocks blocks of it, it moves on to the next tile start instead
// (the cluster that reached the tail takes it), so a short last fragment is never split off (the
// tile stays whole or keeps one fragment fewer) without weighing every work as the work overhead
// does. A longer tile is split over many clusters whatever the tail, and absorbing its tail would
// only load the last of them with up to tail_blocks more (b = 1, s_k = 32768 on 132 SMs: the last
// of 127 fragments 9 blocks instead of 5, 29.1 -> 33.2 us; docs/performance.md, session 20).
// Every step still advances at least W, so the size bounds hold.
MLA_HD int32_t boundary_limit(const mla_v12_config& c, const Req& q, int64_t W) {
    if (q.blocks && c.tail_blocks > 0 && q.blocks <= 2 * W) return max32(1, min32(q.good, q.blocks - c.tail_blocks + 1));
    return q.good;
}

MLA_HD int32_t req_tiles(const mla_v12_config& c, const Req& q) { return c.ratio * q.ntiles; }
MLA_HD int32_t tile_cost(const mla_v12_config& c, const Req& q) { return q.blocks + c.overhead; }
MLA_HD int64_t req_cost(const mla_v12_config& c, const Req& q) {
    return (int64_t)req_tiles(c, q) * tile_cost(c, q);
}

// Head-group sections of a head-group-major plan (docs/planner.md): r when the plan is
// group-major with r > 1 head groups and the cluster count is a multiple of r (each group's
// units get their own chain over C / r clusters), else 1 (one chain over all units). The host
// planner may instead lay out qo-tile sections, which depend on the data (plan_v1_2.cpp).
MLA_HD int32_t group_sections(const mla_v12_config& c) {
    return (c.group_major && c.ratio > 1 && c.num_clusters % c.ratio == 0) ? c.ratio : 1;
}

// Integer square root (floor), exact.
MLA_HD int64_t isqrt64(int64_t v) {
    int64_t r = 0;
    for (int64_t bit = (int64_t)1 << 30; bit; bit >>= 1)
        if ((r + bit) * (r + bit) <= v) r += bit;
    return r;
}

// Effective split count: an explicit cap uses num_splits verbatim; automatic (aiter PR #4899)
// eff = clamp(round(1.2 * sqrt(sum * num_splits)), 1, num_splits), computed exactly in integers
// (round(sqrt(1.44 s n)) = (isqrt(floor(144 s n / 25)) + 1) / 2; for sum >= n it is >= n).
MLA_HD int32_t effective_splits(const mla_v12_config& c, int64_t sum) {
    const int32_t n = max32(c.num_splits, 1);
    if (!c.auto_splits) return n;
    if (sum >= n) return n;
    const int64_t e = (isqrt64(144 * sum * n / 25) + 1) / 2;
    return e < 1 ? 1 : (e > n ? n : (int32_t)e);
}

// W = ceil(sum / eff): positions a cluster advances before its boundary (at least 1).
MLA_HD int64_t cluster_stride(const mla_v12_config& c, int64_t sum) {
    const int64_t w = cdiv64(sum, effective_splits(c, sum));
    return w < 1 ? 1 : w;
}

// Offset of position `off` (>= 0, relative to the request's first position) within its tile.
MLA_HD int32_t offset_in_tile(int64_t off, int32_t cost) {
    if (off < cost) return (int32_t)off;  // one tile per request: no division
    if (off < 0x7fffffff) return (int32_t)off % cost;
    return (int32_t)(off % cost);
}
MLA_HD int32_t tile_index(int64_t off, int32_t cost) {
    if (off < cost) return 0;
    if (off < 0x7fffffff) return (int32_t)off / cost;
    return (int32_t)(off / cost);
}

// snap(y) for y inside request q starting at position rb, in a chain of stride W: y itself if y
// is a tile start or a fragment boundary, else the start of the next tile (y fell in the tile's
// overhead, so the tile fits whole; or in its absorbed tail; or the tile has no block and fits at
// its start).
MLA_HD int64_t snap(const mla_v12_config& c, const Req& q, int64_t rb, int64_t y, int64_t W) {
    const int32_t cost = tile_cost(c, q);
    const int32_t jt = offset_in_tile(y - rb, cost);
    return jt < boundary_limit(c, q, W) ? y : y - jt + cost;
}

// Tiles starting before position y (y inside request q starting at rb, preceded by tb tiles).
MLA_HD int32_t tiles_before(const mla_v12_config& c, const Req& q, int64_t rb, int32_t tb,
                            int64_t y) {
    const int32_t cost = tile_cost(c, q);
    const int64_t off = y - rb;
    return tb + tile_index(off, cost) + (offset_in_tile(off, cost) ? 1 : 0);
}
MLA_HD int32_t inside_tile(const mla_v12_config& c, const Req& q, int64_t rb, int64_t y) {
    return offset_in_tile(y - rb, tile_cost(c, q)) != 0;
}

// One work item (8 int32) for tile j (0 <= j < r * ntiles) of request b, covering split blocks
// [j0, j1) of the tile (j1 < 0: to the tile's end), partial_qo_loc `partial` (-1 = unsplit).
// qo0 = qo_indptr[b], kv0 = kv_indptr[b], last = kv_last_page_lens[b].
MLA_HD void make_work(const mla_v12_config& c, const Req& q, int32_t b, int32_t j, int32_t qo0,
                      int32_t kv0, int32_t last, int32_t j0, int32_t j1, int32_t partial,
                      int32_t* w) {
    const int32_t g = q.ntiles == 1 ? j : j / q.ntiles, i = j - g * q.ntiles;
    const int32_t qo_base = qo0 * c.ratio + g * q.qlen;
    const int32_t qo_start = qo_base + i * q.tsize;
    const int32_t kv_end_req = kv0 + q.pages;
    const int32_t kv_start = kv0 + j0 * c.pages_per_block;
    int32_t kv_end, kv_offset;
    if (c.page_size == 1) {
        // Causal trim (aiter "batch_tail"): tile i of n ends n-1-i keys early, never before the
        // request's first key.
        const int32_t tail = c.causal_trim ? q.ntiles - 1 - i : 0;
        const int32_t trim_end = kv0 + max32(q.pages - tail, 0);
        kv_end = j1 < 0 ? trim_end : min32(kv0 + j1 * c.pages_per_block, trim_end);
        kv_offset = kv_end_req - kv_end;
    } else {
        kv_end = j1 < 0 ? kv_end_req : min32(kv0 + j1 * c.pages_per_block, kv_end_req);
        last = min32(max32(last, 1), c.page_size);
        kv_offset = kv_end == kv_end_req ? 0 : (kv_end_req - kv_end - 1) * c.page_size + last;
    }
    w[0] = b * c.ratio + g;
    w[1] = partial;
    w[2] = qo_start;
    w[3] = min32(qo_start + q.tsize, qo_base + q.qlen);
    w[4] = kv_start;
    w[5] = kv_end;
    w[6] = kv_offset;
    w[7] = 0;
}

// Cluster layout: x[0..C] (x[C] = total), per cluster the request holding x[c] (B if x[c] ==
// total), tiles starting before x[c] and whether x[c] is inside a tile, and work_indptr.
// Split tiles (sorted by global tile index): tile, first cluster, fragments, reduce base
// (prefix of fragments), partial base (prefix of fragments * tile size).
struct SplitTiles {
    const int32_t* tile;
    const int32_t* first_cluster;
    const int32_t* nfrag;
    const int32_t* red_base;   // [count + 1]
    const int32_t* part_base;  // [count]
    int32_t count;
};

// First index s with tile[s] >= t (binary search).
MLA_HD int32_t split_lower_bound(const SplitTiles& sp, int32_t t) {
    int32_t lo = 0, hi = sp.count;
    while (lo < hi) {
        const int32_t mid = (lo + hi) >> 1;
        if (sp.tile[mid] < t) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

// Output buffers and their lengths (writes past a length are dropped: the host validated the
// sizes, so this only matters for a device planner fed bad data).
struct Out {
    int32_t* work_info_set;  int32_t work_rows;
    int32_t* reduce_indptr;  int32_t reduce_indptr_len;
    int32_t* final_map;      int32_t final_rows;
    int32_t* partial_map;    int32_t partial_len;
};

MLA_HD void put_work(const Out& o, int32_t idx, const int32_t* w) {
    if (idx < 0 || idx >= o.work_rows) return;
    int32_t* d = o.work_info_set + (int64_t)idx * 8;
#if defined(__CUDA_ARCH__)
    if (((uintptr_t)d & 15) == 0) {  // two 16-byte stores: a warp writes whole rows
        reinterpret_cast<int4*>(d)[0] = make_int4(w[0], w[1], w[2], w[3]);
        reinterpret_cast<int4*>(d)[1] = make_int4(w[4], w[5], w[6], w[7]);
        return;
    }
#endif
    for (int k = 0; k < 8; ++k) d[k] = w[k];
}

// Writes the works and reduce entries of global tile `t` = tile j of request b, which starts at
// position s in cluster c0; si = split_lower_bound(sp, t). x / tb / in / work_indptr:
// per-cluster arrays as above.
MLA_HD void fill_tile(const mla_v12_config& c, const Req& q, int32_t b, int32_t j, int32_t t,
                      int64_t s, int32_t c0, int32_t si, int32_t qo0, int32_t kv0, int32_t last,
                      const int64_t* x, const int32_t* tb, const int32_t* in,
                      const int32_t* work_indptr, const SplitTiles& sp, const Out& o) {
    int32_t w[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    const bool split = si < sp.count && sp.tile[si] == t;
    const int32_t first_work = work_indptr[c0] + in[c0] + (t - tb[c0]);
    int32_t red_end;
    if (!split) {
        make_work(c, q, b, j, qo0, kv0, last, 0, -1, -1, w);
        if (c.tile_ids) w[7] = t;
        put_work(o, first_work, w);
        red_end = sp.red_base[si];
    } else {
        const int32_t nf = sp.nfrag[si];
        for (int32_t f = 0; f < nf; ++f) {
            const int32_t cl = c0 + f;
            const int32_t j0 = f == 0 ? 0 : (int32_t)(x[cl] - s);
            const int32_t j1 = f == nf - 1 ? -1 : (int32_t)(x[cl + 1] - s);
            const int32_t part = sp.part_base[si] + f * q.tsize;
            make_work(c, q, b, j, qo0, kv0, last, j0, j1, part, w);
            if (c.tile_ids) w[7] = t;
            put_work(o, f == 0 ? first_work : work_indptr[cl], w);
            const int32_t pm = sp.red_base[si] + f;
            if (pm < o.partial_len) o.partial_map[pm] = part;
        }
        red_end = sp.red_base[si] + nf;
    }
    if (t + 1 < o.reduce_indptr_len) o.reduce_indptr[t + 1] = red_end;
    if (t < o.final_rows) {  // (qo_start, qo_end) of every tile, split or not
        o.final_map[2 * t] = w[2];
        o.final_map[2 * t + 1] = w[3];
    }
}

}  // namespace mla_v12
