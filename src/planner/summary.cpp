// summary.cpp - counts of a planned host buffer set (mla_plan_summary): works, tiles, splits,
// partial rows and the per-cluster cost balance (cost units: split blocks + overhead per work).
#include <algorithm>

#include "planner/planner.h"
#include "planner/v1_2_core.h"

namespace mla::plan {

mla_plan_summary summarize(const Setup& s, const int32_t* kv_indptr,
                           const mla_metadata_buffers& b) {
    (void)kv_indptr;
    const mla_v12_config& c = s.cfg;
    mla_plan_summary r{};
    r.struct_size = sizeof(r);
    const int32_t C = c.num_clusters;
    r.num_works = b.work_indptr[C];
    int64_t tiles = 0;  // unsplit tiles (one work each); split tiles are counted below
    int32_t rows_end = 0;
    r.active_clusters = 1;  // clusters [0, active) hold every work (mla_decode_args.active_clusters)
    for (int32_t cl = 0; cl < C; ++cl) {
        const int32_t n = b.work_indptr[cl + 1] - b.work_indptr[cl];
        r.max_works_per_cluster = std::max(r.max_works_per_cluster, n);
        if (n > 0) r.active_clusters = cl + 1;
        int64_t cost = 0;
        for (int32_t w = b.work_indptr[cl]; w < b.work_indptr[cl + 1]; ++w) {
            const int32_t* wi = b.work_info_set + int64_t(w) * 8;
            cost += mla_v12::cdiv32(wi[5] - wi[4], c.pages_per_block) + c.overhead;
            if (wi[1] >= 0) rows_end = std::max(rows_end, wi[1] + (wi[3] - wi[2]));
            else ++tiles;  // an unsplit work is one whole tile
        }
        r.total_kv_blocks += cost;
        r.max_cluster_cost = std::max(r.max_cluster_cost, cost);
    }
    // Split tiles: reduce_indptr steps (tiles of the plan, padded entries repeat the total).
    int32_t split = 0;
    for (int64_t t = 0; t + 1 < b.reduce_indptr_len; ++t)
        if (b.reduce_indptr[t + 1] > b.reduce_indptr[t]) ++split;
    r.num_split_tiles = split;
    r.num_tiles = int32_t(tiles) + split;
    r.num_partials = b.reduce_indptr_len ? b.reduce_indptr[b.reduce_indptr_len - 1] : 0;
    r.num_partial_rows = rows_end;
    r.work_overhead_blocks = c.overhead;
    r.split_tail_blocks = c.tail_blocks;
    return r;
}

}  // namespace mla::plan
