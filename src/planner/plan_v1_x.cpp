// plan_v1_x.cpp - the non-fast planners (§4.5), host only: v1_0 (intra_batch_mode: the same
// split count for every tile of the batch, equal fragments, works dealt in contiguous runs over
// the clusters) and v1_1 (cost 2*qo_len + kv_len per tile, tiles by decreasing cost, each to the
// least-loaded cluster, long tiles cut into equal fragments). Neither trims for causality (the
// kernel masks) and v1_1 ignores max_split_per_batch, as aiter's.
#include <algorithm>
#include <numeric>
#include <queue>

#include "common/error.h"
#include "planner/planner.h"
#include "planner/v1_2_core.h"

namespace mla::plan {

std::vector<Tile> list_tiles(const Setup& s, const int32_t* qo, const int32_t* kv,
                             const int32_t* last) {
    const mla_v12_config& c = s.cfg;
    std::vector<Tile> tiles;
    for (int32_t b = 0; b < c.num_batches; ++b) {
        const mla_v12::Req q = mla_v12::make_req(c, qo[b], qo[b + 1], kv[b], kv[b + 1], last[b]);
        for (int32_t g = 0; g < c.ratio; ++g)
            for (int32_t i = 0; i < q.ntiles; ++i) {
                Tile t;
                t.batch = b * c.ratio + g;
                t.req = b;
                t.index = i;
                const int32_t base = qo[b] * c.ratio + g * q.qlen;
                t.qo_start = base + i * q.tsize;
                t.qo_end = std::min(t.qo_start + q.tsize, base + q.qlen);
                t.tsize = q.tsize;
                t.pages = q.pages;
                t.tokens = q.tokens;
                t.blocks = q.blocks;
                tiles.push_back(t);
            }
    }
    return tiles;
}

void tile_work(const Setup& s, const Tile& t, const int32_t* kv, const int32_t* last, int32_t j0,
               int32_t j1, int32_t partial, int32_t* w) {
    const mla_v12_config& c = s.cfg;
    const int32_t kv0 = kv[t.req], end = kv0 + t.pages;
    const int32_t kv_end = j1 < 0 ? end : std::min(kv0 + j1 * c.pages_per_block, end);
    w[0] = t.batch;
    w[1] = partial;
    w[2] = t.qo_start;
    w[3] = t.qo_end;
    w[4] = kv0 + j0 * c.pages_per_block;
    w[5] = kv_end;
    w[6] = kv_end == end ? 0 : (end - kv_end - 1) * c.page_size + last[t.req];
    w[7] = 0;
}

namespace {

struct Frag {
    int32_t tile, f, nf;  // fragment f of nf of tile `tile`
};

// Writes reduce entries (tile order) and works (per cluster, in the given order).
void emit(const Setup& s, const std::vector<Tile>& tiles, const std::vector<int32_t>& nfrag,
          const std::vector<std::vector<Frag>>& per_cluster, const int32_t* kv,
          const int32_t* last, const mla_metadata_buffers& b) {
    const int32_t C = s.cfg.num_clusters, T = int32_t(tiles.size());
    std::vector<int32_t> part_base(T, -1), red_base(T, 0);
    int32_t part = 0, red = 0;
    b.reduce_indptr[0] = 0;
    for (int32_t t = 0; t < T; ++t) {
        red_base[t] = red;
        if (nfrag[t] > 1) {
            part_base[t] = part;
            for (int32_t f = 0; f < nfrag[t]; ++f)
                b.reduce_partial_map[red + f] = part + f * tiles[t].tsize;
            part += nfrag[t] * tiles[t].tsize;
            red += nfrag[t];
        }
        b.reduce_indptr[t + 1] = red;
        b.reduce_final_map[2 * t] = tiles[t].qo_start;
        b.reduce_final_map[2 * t + 1] = tiles[t].qo_end;
    }
    for (int64_t i = T + 1; i < b.reduce_indptr_len; ++i) b.reduce_indptr[i] = red;
    int32_t w = 0;
    b.work_indptr[0] = 0;
    for (int32_t cl = 0; cl < C; ++cl) {
        for (const Frag& fr : per_cluster[cl]) {
            const Tile& t = tiles[fr.tile];
            const int32_t j0 = int32_t(int64_t(fr.f) * t.blocks / fr.nf);
            const int32_t j1 = fr.f == fr.nf - 1 ? -1 : int32_t(int64_t(fr.f + 1) * t.blocks / fr.nf);
            const int32_t p = fr.nf > 1 ? part_base[fr.tile] + fr.f * t.tsize : -1;
            tile_work(s, t, kv, last, j0, j1, p, b.work_info_set + int64_t(w) * 8);
            ++w;
        }
        b.work_indptr[cl + 1] = w;
    }
    for (int64_t i = C + 1; i < b.work_indptr_len; ++i) b.work_indptr[i] = w;
}

}  // namespace

void plan_v1_0(const Setup& s, const int32_t* qo, const int32_t* kv, const int32_t* last,
               const mla_metadata_buffers& b) {
    const mla_v12_config& c = s.cfg;
    const std::vector<Tile> tiles = list_tiles(s, qo, kv, last);
    const int32_t C = c.num_clusters, T = int32_t(tiles.size());
    const int64_t Bp = int64_t(c.num_batches) * c.ratio;
    const int32_t nks = s.params.num_kv_splits;
    std::vector<int32_t> nfrag(T);
    std::vector<Frag> all;
    for (int32_t t = 0; t < T; ++t) {
        int64_t n;
        if (s.arch == route::Arch::gfx942) {
            n = std::min(16, nks);  // gfx942 uses a fixed 16 (§4.5)
        } else {
            n = std::min<int64_t>({tiles[t].tokens / 196, (C + Bp - 1) / Bp, nks});
        }
        n = std::max<int64_t>(1, std::min<int64_t>(n, std::max(1, tiles[t].blocks)));
        nfrag[t] = int32_t(n);
        for (int32_t f = 0; f < n; ++f) all.push_back({t, f, int32_t(n)});
    }
    // Contiguous runs: cluster cl gets works [cl*W/C, (cl+1)*W/C).
    std::vector<std::vector<Frag>> per_cluster(C);
    const int64_t W = int64_t(all.size());
    for (int32_t cl = 0; cl < C; ++cl)
        for (int64_t i = cl * W / C; i < (cl + 1) * W / C; ++i) per_cluster[cl].push_back(all[i]);
    emit(s, tiles, nfrag, per_cluster, kv, last, b);
}

void plan_v1_1(const Setup& s, const int32_t* qo, const int32_t* kv, const int32_t* last,
               const mla_metadata_buffers& b) {
    const mla_v12_config& c = s.cfg;
    const std::vector<Tile> tiles = list_tiles(s, qo, kv, last);
    const int32_t C = c.num_clusters, T = int32_t(tiles.size());
    std::vector<int64_t> cost(T);
    int64_t total = 0;
    for (int32_t t = 0; t < T; ++t) {
        cost[t] = 2 * int64_t(tiles[t].qo_end - tiles[t].qo_start) + tiles[t].tokens;
        total += cost[t];
    }
    const int64_t limit = std::max<int64_t>(1, (total + C - 1) / C);
    std::vector<int32_t> order(T);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int32_t a, int32_t z) { return cost[a] > cost[z]; });
    // Min-heap of (load, cluster): the least-loaded cluster, lowest index on ties.
    using Slot = std::pair<int64_t, int32_t>;
    std::priority_queue<Slot, std::vector<Slot>, std::greater<Slot>> heap;
    for (int32_t cl = 0; cl < C; ++cl) heap.push({0, cl});
    std::vector<int32_t> nfrag(T);
    std::vector<std::vector<Frag>> per_cluster(C);
    for (int32_t t : order) {
        const int64_t n = cost[t] <= limit ? 1
                                           : std::max<int64_t>(1, std::min<int64_t>(
                                                 {C, (cost[t] + limit - 1) / limit,
                                                  std::max(1, tiles[t].blocks)}));
        nfrag[t] = int32_t(n);
        for (int32_t f = 0; f < n; ++f) {
            Slot top = heap.top();
            heap.pop();
            per_cluster[top.second].push_back({t, f, int32_t(n)});
            top.first += 2 * int64_t(tiles[t].qo_end - tiles[t].qo_start) + tiles[t].tokens / n;
            heap.push(top);
        }
    }
    emit(s, tiles, nfrag, per_cluster, kv, last, b);
}

}  // namespace mla::plan
