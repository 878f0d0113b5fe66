// plan_v1_2.cpp - the host v1_2 planner: the phases of v1_2_core.h run as serial loops (the
// device planner runs the same functions in parallel and writes the same bytes).
#include <algorithm>
#include <vector>

#include "common/error.h"
#include "planner/planner.h"
#include "planner/v1_2_core.h"

namespace mla::plan {

int32_t plan_v1_2(const Setup& s, const int32_t* qo, const int32_t* kv, const int32_t* last,
                  const mla_metadata_buffers& buf) {
    return plan_v1_2_config(s.cfg, qo, kv, last, buf);
}

int32_t plan_v1_2_config(const mla_v12_config& c, const int32_t* qo, const int32_t* kv,
                      const int32_t* last, const mla_metadata_buffers& buf) {
    const int32_t B = c.num_batches, C = c.num_clusters;
    // Units laid end to end: aiter's order takes request b whole (its r head groups' tiles, group
    // by group); group-major (c.group_major) takes head group g of every request, then g + 1, so
    // unit u = g * B + b holds the ntiles tiles of pseudo-request (b, g). A unit's tiles are
    // tiles j0 .. j0 + nt - 1 of its request (fill_tile's numbering), so the work rows mean the
    // same in both orders.
    // Tile sections (group-major, every request with tiles has the same n > 1 qo tiles, e.g. MTP
    // with 64 heads, and C a multiple of r n): unit u = s B + b is tile s of request b (s = g n +
    // i: tile i of head group g), so the r n tiles of a request, which all read its KV, become r n
    // twin sections like the head groups below.
    const bool gm = c.group_major != 0;
    std::vector<mla_v12::Req> req(B);
    for (int32_t b = 0; b < B; ++b) req[b] = mla_v12::make_req(c, qo[b], qo[b + 1], kv[b], kv[b + 1], last[b]);
    int32_t nu = 0;  // the common tile count of the requests with tiles; -1 when they differ
    for (int32_t b = 0; gm && b < B && nu >= 0; ++b)
        if (req[b].ntiles) nu = nu == 0 ? req[b].ntiles : (nu == req[b].ntiles ? nu : -1);
    const bool ts = gm && nu > 1 && C % (c.ratio * nu) == 0;
    const int32_t U = ts ? B * c.ratio * nu : (gm ? B * c.ratio : B);
    auto unit_req = [&](int32_t u) { return gm ? u % B : u; };

    // Phase 1: per unit its first position R[u] and first global tile TR[u].
    auto unit_tiles = [&](int32_t u) {
        const mla_v12::Req& q = req[unit_req(u)];
        return ts ? (q.ntiles ? 1 : 0) : (gm ? q.ntiles : mla_v12::req_tiles(c, q));
    };
    auto unit_j0 = [&](int32_t u) { return ts ? u / B : (gm ? (u / B) * req[unit_req(u)].ntiles : 0); };
    std::vector<int64_t> R(U + 1);
    std::vector<int32_t> TR(U + 1);
    R[0] = 0;
    TR[0] = 0;
    for (int32_t u = 0; u < U; ++u) {
        const int32_t nt = unit_tiles(u);
        R[u + 1] = R[u] + int64_t(nt) * mla_v12::tile_cost(c, req[unit_req(u)]);
        TR[u + 1] = TR[u] + nt;
    }
    const int64_t total = R[U];
    const int32_t num_tiles = TR[U];

    // The unit holding position y (U when y == total): R[u] <= y < R[u+1].
    auto locate = [&](int64_t y) -> int32_t {
        return int32_t(std::upper_bound(R.begin(), R.end(), y) - R.begin()) - 1;
    };

    // Phase 2: the cluster chain x[c+1] = snap(x[c] + W); the last cluster takes the rest.
    // Group-major with C a multiple of r: one chain per head group over C / r clusters (group g's
    // units on clusters g C / r ..; with tile sections one per tile of the requests), each with
    // the section's own W, so cluster c + g C / r gets exactly the tiles of group g that cluster
    // c gets of group 0, at the same point of its work list: the r CTAs stream the same KV at the
    // same time and the L2 serves all but the first (one chain over all groups drifts by up to a
    // unit between the halves: no L2 reuse at all, docs/performance.md).
    std::vector<int64_t> x(C + 1);
    std::vector<int32_t> xb(C + 1);
    const int32_t S = ts ? c.ratio * nu : mla_v12::group_sections(c), Cs = C / S;
    mla_v12_config cs = c;
    cs.num_splits = std::max(1, c.num_splits / S);
    for (int32_t sec = 0; sec < S; ++sec) {
        const int64_t s0 = R[size_t(sec) * (U / S)], s1 = R[size_t(sec + 1) * (U / S)];
        const int64_t W = mla_v12::cluster_stride(cs, s1 - s0);
        x[size_t(sec) * Cs] = s0;
        for (int32_t k = 1; k < Cs; ++k) {
            const int32_t cl = sec * Cs + k;
            const int64_t y = x[cl - 1] + W;
            if (x[cl - 1] >= s1 || y >= s1) {
                x[cl] = s1;
                continue;
            }
            const int32_t u = locate(y);
            x[cl] = mla_v12::snap(c, req[unit_req(u)], R[u], y, W);
        }
    }
    x[C] = total;

    // Phase 3: per cluster, tiles starting before x[c], whether x[c] is inside a tile, and the
    // work counts -> work_indptr.
    std::vector<int32_t> tb(C + 1), in(C + 1), wi(C + 1);
    for (int32_t cl = 0; cl <= C; ++cl) {
        if (x[cl] >= total) {
            tb[cl] = num_tiles;
            in[cl] = 0;
            xb[cl] = U;
            continue;
        }
        const int32_t u = locate(x[cl]);
        xb[cl] = u;
        tb[cl] = mla_v12::tiles_before(c, req[unit_req(u)], R[u], TR[u], x[cl]);
        in[cl] = mla_v12::inside_tile(c, req[unit_req(u)], R[u], x[cl]);
    }
    wi[0] = 0;
    for (int32_t cl = 0; cl < C; ++cl) wi[cl + 1] = wi[cl] + (tb[cl + 1] - tb[cl]) + in[cl];

    // Phase 4: split tiles = tiles holding a cluster start strictly inside them; boundaries of
    // one tile are consecutive clusters.
    std::vector<int32_t> sp_tile, sp_first, sp_nfrag, sp_red(1, 0), sp_part;
    for (int32_t cl = 1; cl < C; ++cl) {
        if (!in[cl]) continue;
        const int32_t t = tb[cl] - 1;
        if (!sp_tile.empty() && sp_tile.back() == t && in[cl - 1] && tb[cl - 1] == tb[cl]) {
            ++sp_nfrag.back();
            continue;
        }
        sp_tile.push_back(t);
        sp_first.push_back(cl - 1);
        sp_nfrag.push_back(2);
        sp_part.push_back(xb[cl]);  // unit, replaced by the partial base below
    }
    int32_t part = 0;
    for (size_t i = 0; i < sp_tile.size(); ++i) {
        const int32_t tsize = req[unit_req(sp_part[i])].tsize;
        sp_red.push_back(sp_red.back() + sp_nfrag[i]);
        sp_part[i] = part;
        part += sp_nfrag[i] * tsize;
    }
    mla_v12::SplitTiles sp{sp_tile.data(), sp_first.data(), sp_nfrag.data(), sp_red.data(),
                           sp_part.data(), int32_t(sp_tile.size())};

    // Phase 5: works and reduce entries, tile by tile.
    const mla_v12::Out out{buf.work_info_set,      int32_t(buf.work_info_set_rows),
                           buf.reduce_indptr,      int32_t(buf.reduce_indptr_len),
                           buf.reduce_final_map,   int32_t(buf.reduce_final_map_rows),
                           buf.reduce_partial_map, int32_t(buf.reduce_partial_map_len)};
    int32_t c0 = 0, si = 0;
    for (int32_t u = 0; u < U; ++u) {
        const int32_t b = unit_req(u);
        const mla_v12::Req& q = req[b];
        const int32_t nt = unit_tiles(u), j0 = unit_j0(u), cost = mla_v12::tile_cost(c, q);
        for (int32_t j = 0; j < nt; ++j) {
            const int64_t pos = R[u] + int64_t(j) * cost;
            const int32_t t = TR[u] + j;
            while (c0 + 1 < C && x[c0 + 1] <= pos) ++c0;
            while (si < sp.count && sp.tile[si] < t) ++si;  // = split_lower_bound(sp, t)
            mla_v12::fill_tile(c, q, b, j0 + j, t, pos, c0, si, qo[b], kv[b], last[b], x.data(),
                               tb.data(), in.data(), wi.data(), sp, out);
        }
    }

    // Heads and padding: work_indptr beyond C + 1 and reduce_indptr beyond the tiles repeat the
    // totals (empty clusters / tiles), as aiter pads reduce_indptr.
    for (int64_t i = 0; i < buf.work_indptr_len; ++i)
        buf.work_indptr[i] = i <= C ? wi[i] : wi[C];
    buf.reduce_indptr[0] = 0;
    for (int64_t i = num_tiles + 1; i < buf.reduce_indptr_len; ++i)
        buf.reduce_indptr[i] = sp_red.back();
    return S;
}

}  // namespace mla::plan
