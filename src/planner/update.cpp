// update.cpp - mla_update_metadata: advances a host plan by one decode step without replanning
// (aiter decode_update_mla_metadata_v1, §3.4). Page size 1 only (kv indptr in tokens).
//
// Per request b: delta = 1 - num_reject_tokens[b]; shift = new_kv_indptr[b] - old start (the
// request's tokens move when earlier requests grow). Non-final fragments keep their KV range
// (moved by shift) and their kv_offset grows by delta; the final fragment of each tile keeps its
// start (moved by shift) and is re-anchored to the new request end (kv_offset 0). A plan made
// for qlen L > 1 (one tile per pseudo-request) collapses to qlen 1: qo rows become (p, p + 1)
// for pseudo-request p, partial rows and reduce_partial_map entries are divided by L.
// Everything is computed into copies and checked before the buffers are written.
#include <algorithm>
#include <map>
#include <vector>

#include "common/error.h"
#include "planner/planner.h"

namespace mla::plan {

void update_plan(const Setup& s, const int32_t* new_kv, const int32_t* rejected,
                 const mla_metadata_buffers& b) {
    const mla_metadata_params& p = s.params;
    MLA_CHECK_ARG(p.page_size == 1, "mla_update_metadata needs page_size 1 (got " << p.page_size
                                                                                  << ")");
    MLA_CHECK_ARG(p.kv_granularity >= 16,
                  "mla_update_metadata needs kv_granularity >= 16 (got " << p.kv_granularity << ")");
    MLA_CHECK_ARG(new_kv != nullptr, "new_kv_indptr is NULL");
    const int32_t B = p.batch_size, r = s.cfg.ratio, C = s.cfg.num_clusters;
    const int32_t L = p.max_seqlen_qo;
    for (int32_t i = 0; i < B; ++i) {
        MLA_CHECK_ARG(new_kv[i + 1] >= new_kv[i], "new_kv_indptr decreases at request " << i);
        if (rejected)
            MLA_CHECK_ARG(rejected[i] >= 0 && rejected[i] <= L,
                          "num_reject_tokens[" << i << "] = " << rejected[i] << " is outside 0.."
                                               << L);
    }
    MLA_CHECK_ARG(new_kv[0] >= 0, "new_kv_indptr[0] is negative");
    const int32_t nw = b.work_indptr[C];
    MLA_CHECK_ARG(b.work_indptr[0] == 0 && nw >= 0 && nw <= b.work_info_set_rows,
                  "work_indptr does not describe a plan of these params");
    std::vector<int32_t> w(b.work_info_set, b.work_info_set + int64_t(nw) * 8);

    // Old request starts (the first fragment's kv_start) and ends (kv_end + kv_offset); the
    // final fragment of each tile (largest kv_start per (batch_idx, qo_start)).
    std::vector<int64_t> old_start(B, INT64_MAX), old_end(B, -1);
    std::map<std::pair<int32_t, int32_t>, int32_t> final_of;  // tile -> work index
    std::map<std::pair<int32_t, int32_t>, int32_t> tiles_of_pseudo;
    for (int32_t i = 0; i < nw; ++i) {
        const int32_t* wi = &w[int64_t(i) * 8];
        const int32_t req = wi[0] / r;
        MLA_CHECK_ARG(wi[0] >= 0 && req < B, "work " << i << " names pseudo-request " << wi[0]
                                                     << ", outside the batch of the params");
        old_start[req] = std::min<int64_t>(old_start[req], wi[4]);
        const int64_t end = int64_t(wi[5]) + wi[6];
        MLA_CHECK_ARG(old_end[req] < 0 || old_end[req] == end,
                      "works of request " << req << " disagree on its KV end");
        old_end[req] = end;
        const auto key = std::make_pair(wi[0], wi[2]);
        auto it = final_of.find(key);
        if (it == final_of.end() || w[int64_t(it->second) * 8 + 4] < wi[4]) final_of[key] = i;
    }
    const bool collapse = L > 1;
    if (collapse) {
        std::map<int32_t, int32_t> n;
        for (const auto& kv : final_of) ++n[kv.first.first];
        for (const auto& kv : n)
            MLA_CHECK_ARG(kv.second == 1, "pseudo-request " << kv.first << " has " << kv.second
                                                            << " qo tiles: a plan for qlen > 1 "
                                                               "collapses only with one tile per "
                                                               "request (replan instead)");
    }
    for (int32_t i = 0; i < nw; ++i) {
        int32_t* wi = &w[int64_t(i) * 8];
        const int32_t req = wi[0] / r;
        const int32_t delta = 1 - (rejected ? rejected[req] : 0);
        const int64_t new_len = int64_t(new_kv[req + 1]) - new_kv[req];
        MLA_CHECK_ARG(new_len == old_end[req] - old_start[req] + delta,
                      "request " << req << ": new KV length " << new_len << " is not the planned "
                                 << old_end[req] - old_start[req] << " + " << delta);
        const int64_t shift = int64_t(new_kv[req]) - old_start[req];
        const bool final = final_of[std::make_pair(wi[0], wi[2])] == i;
        wi[4] = int32_t(wi[4] + shift);
        if (final) {
            wi[5] = new_kv[req + 1];
            wi[6] = 0;
            MLA_CHECK_ARG(wi[5] >= wi[4], "request " << req << " shrinks below its last split "
                                                     << "fragment: replan");
        } else {
            wi[5] = int32_t(wi[5] + shift);
            wi[6] += delta;
            MLA_CHECK_ARG(wi[6] >= 0, "request " << req << " shrinks below a split fragment: replan");
        }
        if (collapse) {
            const int32_t t_len = wi[3] - wi[2];
            MLA_CHECK_ARG(t_len == L, "work " << i << " covers " << t_len << " query tokens, not "
                                              << L << ": only uniform qlen plans collapse");
            wi[2] = wi[0];
            wi[3] = wi[0] + 1;
            if (wi[1] >= 0) wi[1] /= L;
        }
    }
    // Reduce maps of the collapsed plan.
    std::vector<int32_t> fmap, pmap;
    int64_t ntiles = 0;
    if (collapse) {
        ntiles = b.reduce_indptr_len - 1;
        fmap.assign(b.reduce_final_map, b.reduce_final_map + 2 * std::min<int64_t>(ntiles, b.reduce_final_map_rows));
        for (size_t t = 0; t + 1 < fmap.size(); t += 2) {
            fmap[t] = fmap[t] / L;  // a tile's first folded row is p * L (uniform qlen)
            fmap[t + 1] = fmap[t] + 1;
        }
        const int32_t np = b.reduce_indptr[b.reduce_indptr_len - 1];
        MLA_CHECK_ARG(np >= 0 && np <= b.reduce_partial_map_len, "reduce_indptr is inconsistent");
        pmap.assign(b.reduce_partial_map, b.reduce_partial_map + np);
        for (int32_t& v : pmap) v /= L;
    }
    std::copy(w.begin(), w.end(), b.work_info_set);
    if (collapse) {
        std::copy(fmap.begin(), fmap.end(), b.reduce_final_map);
        std::copy(pmap.begin(), pmap.end(), b.reduce_partial_map);
    }
}

}  // namespace mla::plan
