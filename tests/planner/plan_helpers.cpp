// plan_helpers.cpp - see plan_helpers.h. The walk and the checker restate the rules of
// docs/plan-layout.md and §4.4 directly; they share no code with src/planner.
#include "plan_helpers.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <map>
#include <sstream>

#include <catch2/catch.hpp>

#include "host_plan.h"

namespace plantest {

Batch make_batch(const std::vector<int32_t>& qlens, const std::vector<int64_t>& kv_tokens,
                 int32_t ps) {
    Batch b;
    b.qo.push_back(0);
    b.kv.push_back(0);
    for (size_t i = 0; i < qlens.size(); ++i) {
        const int64_t n = kv_tokens[i];
        const int32_t pages = int32_t((n + ps - 1) / ps);
        b.qo.push_back(b.qo.back() + qlens[i]);
        b.kv.push_back(b.kv.back() + pages);
        b.last.push_back(pages ? int32_t(n - int64_t(pages - 1) * ps) : ps);
    }
    return b;
}

mla_metadata_buffers Plan::buffers() {
    void* const ptr[kPlanBuffers] = {md.data(),            work_indptr.data(), work_info.data(),
                                     reduce_indptr.data(), final_map.data(),   partial_map.data()};
    const int64_t rows[kPlanBuffers] = {int64_t(md.size()),            int64_t(work_indptr.size()),
                                        int64_t(work_info.size() / 8), int64_t(reduce_indptr.size()),
                                        int64_t(final_map.size() / 2), int64_t(partial_map.size())};
    return plan_buffers_view(ptr, rows);
}

mla_metadata_sizes sizes_of(const mla_metadata_params& p) {
    mla_metadata_sizes z{};
    z.struct_size = sizeof(z);
    const mla_status st = mla_metadata_info(&p, &z);
    INFO(mla_last_error());
    REQUIRE(st == MLA_SUCCESS);
    return z;
}

Plan alloc_plan(const mla_metadata_params& p) {
    Plan pl;
    pl.sizes = sizes_of(p);
    const mla_metadata_sizes& z = pl.sizes;
    pl.md.assign(size_t(z.work_metadata_len), 0);
    pl.work_indptr.assign(size_t(z.work_indptr_len), kSentinel);
    pl.work_info.assign(size_t(z.work_info_set_rows) * 8, kSentinel);
    pl.reduce_indptr.assign(size_t(z.reduce_indptr_len), kSentinel);
    pl.final_map.assign(size_t(z.reduce_final_map_rows) * 2, kSentinel);
    pl.partial_map.assign(size_t(z.reduce_partial_map_len), kSentinel);
    return pl;
}

mla_status run_plan(const mla_metadata_params& p, const Batch& b, Plan& plan,
                    mla_plan_summary* summary) {
    mla_metadata_buffers m = plan.buffers();
    return mla_plan_metadata(&p, b.qo.data(), b.kv.data(), b.last.data(), &m, nullptr, nullptr,
                             summary);
}

namespace {

struct Geo {  // per-batch geometry, restated from docs/plan-layout.md
    int32_t r, hk, packed, C;
    bool sm90;
    bool group_major = false;  // params.head_group_major: tiles head group by head group
    bool tile_ids = false;     // work dw 7 is the tile index (sm_90a v1_2 plans), else aiter's 0
};

Geo geo_of(const mla_metadata_params& p) {
    const mla_metadata_sizes z = sizes_of(p);
    mla_decode_shape sh = MLA_DECODE_SHAPE_INIT;
    sh.arch = p.arch;
    sh.num_heads = p.num_heads;
    sh.max_seqlen_qo = p.max_seqlen_qo;
    sh.q_dtype = p.q_dtype;
    sh.kv_dtype = p.kv_dtype;
    sh.page_size = p.page_size;
    sh.fast_mode = p.fast_mode;
    sh.intra_batch_mode = p.intra_batch_mode;
    sh.enable_experimental = p.enable_experimental;
    mla_head_plan hp = MLA_HEAD_PLAN_INIT;
    REQUIRE(mla_decode_head_plan(&sh, &hp) == MLA_SUCCESS);
    Geo g{z.qk_batch_ratio, z.kernel_num_heads, hp.packed_qo_len_per_wg, z.num_clusters,
          std::string(p.arch) == "sm_90a"};
    g.group_major = p.head_group_major != 0;
    g.tile_ids = g.sm90 && hp.planner == MLA_PLANNER_V1_2;
    return g;
}

// (tiles, tile size) of a request with L query tokens.
std::pair<int32_t, int32_t> tiles_of(const Geo& g, int32_t L) {
    if (L == 0) return {0, 0};
    int32_t t;
    if (g.sm90) {
        t = std::min(L, std::max(1, g.packed / g.hk));
    } else {
        const int32_t n = 2 * g.hk > g.packed ? L : (L * g.hk + g.packed - 1) / g.packed;
        t = (L + n - 1) / n;
    }
    return {(L + t - 1) / t, t};
}

struct TileRef {
    int32_t b, g, i, n, tsize, qo_start, qo_end;
};

// head_group_major's qo-tile sections: n when every request with tiles has the same n > 1 tiles
// and C is a multiple of r n (docs/planner.md), else 0.
int32_t tile_sections(const Geo& geo, const Batch& bt) {
    if (!geo.group_major) return 0;
    int32_t n = 0;
    for (int32_t b = 0; b < bt.B(); ++b) {
        const int32_t nt = tiles_of(geo, bt.qo[b + 1] - bt.qo[b]).first;
        if (nt == 0) continue;
        if (n == 0) n = nt;
        else if (n != nt) return 0;
    }
    return n > 1 && geo.C % (geo.r * n) == 0 ? n : 0;
}

// Every qo tile in the plan's global order: request by request (aiter), or with
// head_group_major head group by head group (all requests' group 0, then group 1, ...).
std::vector<TileRef> tiles_list(const Geo& geo, const Batch& bt) {
    std::vector<TileRef> v;
    auto add = [&](int32_t b, int32_t g) {
        const int32_t L = bt.qo[b + 1] - bt.qo[b];
        const auto nt = tiles_of(geo, L);
        for (int32_t i = 0; i < nt.first; ++i) {
            const int32_t base = bt.qo[b] * geo.r + g * L;
            v.push_back({b, g, i, nt.first, nt.second, base + i * nt.second,
                         std::min(base + (i + 1) * nt.second, base + L)});
        }
    };
    const int32_t n = tile_sections(geo, bt);
    if (n > 1) {  // tile sections: tile i of group g of every request, then the next (i, g)
        for (int32_t g = 0; g < geo.r; ++g)
            for (int32_t i = 0; i < n; ++i)
                for (int32_t b = 0; b < bt.B(); ++b) {
                    const int32_t L = bt.qo[b + 1] - bt.qo[b];
                    const auto nt = tiles_of(geo, L);
                    if (nt.first == 0) continue;
                    const int32_t base = bt.qo[b] * geo.r + g * L;
                    v.push_back({b, g, i, nt.first, nt.second, base + i * nt.second,
                                 std::min(base + (i + 1) * nt.second, base + L)});
                }
    } else if (geo.group_major)
        for (int32_t g = 0; g < geo.r; ++g)
            for (int32_t b = 0; b < bt.B(); ++b) add(b, g);
    else
        for (int32_t b = 0; b < bt.B(); ++b)
            for (int32_t g = 0; g < geo.r; ++g) add(b, g);
    return v;
}

int64_t tokens_of(const mla_metadata_params& p, const Batch& bt, int32_t b) {
    const int64_t P = bt.kv[b + 1] - bt.kv[b];
    return P ? (P - 1) * p.page_size + bt.last[b] : 0;
}

}  // namespace

int32_t tile_sections_of(const mla_metadata_params& p, const Batch& b) {
    return tile_sections(geo_of(p), b);
}

namespace {
// What sm_90a's split rules read of a plan's params (routing/arch.cpp's rule table, restated):
// the tokens of a split block, the tile rows (kernel heads x tile tokens at max_seqlen_qo) and
// whether the KV is fp8.
struct RuleInputs {
    int64_t block_tokens;
    int32_t rows;
    bool kv8, sm90;
};
RuleInputs rule_inputs(const mla_metadata_params& p) {
    const Geo geo = geo_of(p);
    const int32_t gran = std::max(1, p.kv_granularity / p.page_size);
    return {int64_t(gran) * p.page_size, geo.hk * tiles_of(geo, p.max_seqlen_qo).second,
            p.kv_dtype == MLA_DTYPE_FP8_E4M3FN || p.kv_dtype == MLA_DTYPE_FP8_E4M3FNUZ,
            std::strcmp(p.arch, "sm_90a") == 0};
}
}  // namespace

int32_t serial_overhead_blocks(const mla_metadata_params& p) {
    // A work's fixed cost in blocks: aiter's max(1, ceil(16 / page_size)), raised to
    // work_overhead_tokens (-1: the arch's: on sm_90a 1024 tokens when the tiles have 64 rows or
    // more, kernel heads x tile tokens at max_seqlen_qo, or at most 16 rows with fp8 KV; else 0;
    // mla_c_api.h).
    const RuleInputs r = rule_inputs(p);
    const int64_t ot = p.work_overhead_tokens >= 0
                           ? p.work_overhead_tokens
                           : (r.sm90 && (r.rows >= 64 || (r.rows <= 16 && r.kv8)) ? 1024 : 0);
    return int32_t(std::max<int64_t>(std::max(1, (16 + p.page_size - 1) / p.page_size),
                                     (ot + r.block_tokens - 1) / r.block_tokens));
}

int32_t serial_tail_blocks(const mla_metadata_params& p) {
    // The split tail in blocks (split_tail_tokens; -1: the arch's: on sm_90a with bf16 KV 512
    // tokens when the tiles have at most 16 rows, 256 at 17-32 rows, else 0): a fragment that
    // would leave fewer blocks of its tile takes the rest instead, as an absorbed page-1 tail does
    // (on tiles of at most 2 W blocks: serial_walk_v1_2).
    const RuleInputs r = rule_inputs(p);
    const int64_t tt = p.split_tail_tokens >= 0
                           ? p.split_tail_tokens
                           : (!r.sm90 || r.kv8 ? 0 : r.rows <= 16 ? 512 : r.rows <= 32 ? 256 : 0);
    return int32_t((tt + r.block_tokens - 1) / r.block_tokens);
}

int32_t serial_walk_v1_2(const mla_metadata_params& p, const Batch& bt, Plan& plan) {
    const Geo geo = geo_of(p);
    const std::vector<TileRef> tiles = tiles_list(geo, bt);
    const int32_t T = int32_t(tiles.size()), C = geo.C, ps = p.page_size;
    const int32_t gran = std::max(1, p.kv_granularity / ps);  // pages per split unit
    const int32_t o = serial_overhead_blocks(p), tailb = serial_tail_blocks(p);
    const int32_t thr = p.max_seqlen_qo;
    const bool trim = ps == 1 && p.causal && !p.is_cp_round_robin;
    auto blocks = [&](int32_t b) { return (bt.kv[b + 1] - bt.kv[b] + gran - 1) / gran; };
    // Sections: group-major with C a multiple of r walks each head group's tiles over its own C / r
    // clusters (the twin layout: cluster c + g C / r mirrors cluster c); otherwise one section.
    const int32_t tsec = tile_sections(geo, bt);
    const int32_t S = tsec ? geo.r * tsec : ((geo.group_major && C % geo.r == 0) ? geo.r : 1);
    const int32_t Cs = C / S, Ts = T / S;
    auto payload_of = [&](int32_t sec) {
        int64_t sum = 0;
        for (int32_t i = sec * Ts; i < (sec + 1) * Ts; ++i) sum += blocks(tiles[i].b) + o;
        // Split count: cap -> min(Cs, cap * B * r / S); automatic -> round(1.2 sqrt(sum * Cs)) in [1, Cs].
        int64_t eff = Cs;
        if (p.max_split_per_batch > 0) {
            eff = std::max<int64_t>(1, std::min<int64_t>(Cs, int64_t(p.max_split_per_batch) * bt.B() * geo.r / S));
        } else {
            const double e = std::floor(1.2 * std::sqrt(double(sum) * Cs) + 0.5);
            eff = std::max<int64_t>(1, std::min<int64_t>(Cs, int64_t(e)));
        }
        return (sum + eff - 1) / eff + o;
    };

    // dw 7: the tile index in sm_90a v1_2 plans (the fused reduction's counter), aiter's pad 0 elsewhere
    auto work = [&](const TileRef& t, int32_t tile, int32_t j0, int32_t j1, int32_t partial, int32_t* w) {
        const int32_t kv0 = bt.kv[t.b], kv1 = bt.kv[t.b + 1];
        int32_t kv_end, off;
        if (ps == 1) {
            const int32_t tail = trim ? t.n - 1 - t.i : 0;
            const int32_t trim_end = kv0 + std::max(kv1 - kv0 - tail, 0);
            kv_end = j1 < 0 ? trim_end : std::min(kv0 + j1 * gran, trim_end);
            off = kv1 - kv_end;
        } else {
            kv_end = j1 < 0 ? kv1 : std::min(kv0 + j1 * gran, kv1);
            off = kv_end == kv1 ? 0 : (kv1 - kv_end - 1) * ps + bt.last[t.b];
        }
        const int32_t v[8] = {t.b * geo.r + t.g, partial, t.qo_start, t.qo_end,
                              kv0 + j0 * gran,   kv_end,  off,        geo.tile_ids ? tile : 0};
        std::copy(v, v + 8, w);
    };

    int32_t tau = 0, cur = 0, nsplit = 0, nw = 0, partial_idx = 0, red = 0;
    bool tail_done = false;
    plan.work_indptr[0] = 0;
    plan.reduce_indptr[0] = 0;
    for (int32_t cl = 0; cl < C; ++cl) {
        const int32_t sec = cl / Cs, tau_end = (sec + 1) * Ts;
        const int64_t payload = payload_of(sec);
        int64_t remain = cl == (sec + 1) * Cs - 1 ? INT64_MAX / 4 : payload;
        while (tau < tau_end) {
            const TileRef& t = tiles[tau];
            const int32_t rem_blocks = blocks(t.b) - cur;
            if (remain >= rem_blocks + o || tail_done) {
                int32_t w[8];
                work(t, tau, cur, -1, nsplit ? partial_idx : -1, &plan.work_info[size_t(nw) * 8]);
                (void)w;
                ++nw;
                if (nsplit) {
                    for (int32_t f = 0; f <= nsplit; ++f)
                        plan.partial_map[red + f] = partial_idx - (nsplit - f) * t.tsize;
                    red += nsplit + 1;
                    partial_idx += t.tsize;
                }
                plan.reduce_indptr[tau + 1] = red;
                plan.final_map[2 * tau] = t.qo_start;
                plan.final_map[2 * tau + 1] = t.qo_end;
                remain -= rem_blocks + o;
                ++tau;
                cur = 0;
                nsplit = 0;
                tail_done = false;
                continue;
            }
            if (remain <= o) break;
            const int32_t consume = int32_t(remain - o);
            int32_t w[8];
            work(t, tau, cur, cur + consume, partial_idx, w);
            // the tail is absorbed: at page size 1, or the split tail of a tile of at most 2 W
            // blocks (W = payload - o, the chain's stride)
            if ((ps == 1 && bt.kv[t.b + 1] - w[5] < thr) ||
                (blocks(t.b) - (cur + consume) < tailb && blocks(t.b) <= 2 * (payload - o))) {
                tail_done = true;
                continue;
            }
            std::copy(w, w + 8, &plan.work_info[size_t(nw) * 8]);
            ++nw;
            partial_idx += t.tsize;
            cur += consume;
            ++nsplit;
            break;
        }
        plan.work_indptr[cl + 1] = nw;
    }
    for (size_t i = C + 1; i < plan.work_indptr.size(); ++i) plan.work_indptr[i] = nw;
    for (size_t i = T + 1; i < plan.reduce_indptr.size(); ++i) plan.reduce_indptr[i] = red;
    return S;
}

std::string check_invariants(const mla_metadata_params& p, const Batch& bt, const Plan& plan,
                             bool in_order) {
    std::ostringstream err;
    const Geo geo = geo_of(p);
    const std::vector<TileRef> tiles = tiles_list(geo, bt);
    const int32_t T = int32_t(tiles.size()), C = geo.C, ps = p.page_size;
    const mla_metadata_sizes& z = plan.sizes;
    if (plan.work_indptr[0] != 0) return "work_indptr[0] != 0";
    for (int32_t c = 0; c < C; ++c)
        if (plan.work_indptr[c + 1] < plan.work_indptr[c]) return "work_indptr decreases";
    const int32_t nw = plan.work_indptr[C];
    if (nw > z.work_info_set_rows) return "more works than work_info_set_rows";
    for (size_t i = C + 1; i < plan.work_indptr.size(); ++i)
        if (plan.work_indptr[i] != nw) return "work_indptr padding";
    // Works per tile (by pseudo-request and qo_start).
    std::map<std::pair<int32_t, int32_t>, int32_t> tile_of;
    for (int32_t t = 0; t < T; ++t) tile_of[{tiles[t].b * geo.r + tiles[t].g, tiles[t].qo_start}] = t;
    std::vector<std::vector<int32_t>> works_of(T);
    int64_t last_key = -1;
    for (int32_t w = 0; w < nw; ++w) {
        const int32_t* wi = &plan.work_info[size_t(w) * 8];
        auto it = tile_of.find({wi[0], wi[2]});
        if (it == tile_of.end()) {
            err << "work " << w << " names no tile (batch " << wi[0] << ", qo " << wi[2] << ")";
            return err.str();
        }
        const TileRef& t = tiles[it->second];
        if (wi[3] != t.qo_end) {
            err << "work " << w << ": qo_end " << wi[3] << " != " << t.qo_end;
            return err.str();
        }
        // dw 7: sm_90a v1_2, the tile whose reduce_final_map row is this work's qo range; else 0
        const bool tile_ok = geo.tile_ids ? wi[7] >= 0 && wi[7] < T && plan.final_map[2 * size_t(wi[7])] == wi[2] &&
                                            plan.final_map[2 * size_t(wi[7]) + 1] == wi[3]
                                      : wi[7] == 0;
        if (!tile_ok) {
            err << "work " << w << ": dw 7 = " << wi[7] << " names no tile of qo rows [" << wi[2] << ", " << wi[3] << ")";
            return err.str();
        }
        const int64_t key = int64_t(it->second) * (int64_t(1) << 32) + wi[4];
        if (in_order && key <= last_key) {
            err << "work " << w << " is out of (tile, kv) order";
            return err.str();
        }
        last_key = key;
        works_of[it->second].push_back(w);
    }
    // Coverage: per tile, token ranges contiguous from 0, disjoint, to >= the causal need.
    std::vector<std::pair<int32_t, int32_t>> prow;  // partial row ranges
    for (int32_t t = 0; t < T; ++t) {
        const TileRef& tr = tiles[t];
        std::vector<int32_t> ws = works_of[t];
        if (ws.empty()) {
            err << "tile " << t << " has no work";
            return err.str();
        }
        std::sort(ws.begin(), ws.end(), [&](int32_t a, int32_t c) {
            return plan.work_info[size_t(a) * 8 + 4] < plan.work_info[size_t(c) * 8 + 4];
        });
        const int64_t N = tokens_of(p, bt, tr.b), L = bt.qo[tr.b + 1] - bt.qo[tr.b];
        const int32_t kv0 = bt.kv[tr.b], kv1 = bt.kv[tr.b + 1];
        int64_t at = 0;
        for (int32_t w : ws) {
            const int32_t* wi = &plan.work_info[size_t(w) * 8];
            const int64_t k0 = int64_t(wi[4] - kv0) * ps, k1 = N - wi[6];
            if (wi[4] < kv0 || wi[5] > kv1 || wi[4] > wi[5] || k0 != at || k1 < k0 ||
                k1 > int64_t(wi[5] - kv0) * ps || (k1 > k0 && k1 <= int64_t(wi[5] - kv0 - 1) * ps)) {
                err << "tile " << t << " work " << w << ": kv [" << wi[4] << "," << wi[5]
                    << ") off " << wi[6] << " tokens [" << k0 << "," << k1 << ") expected start "
                    << at << " (request pages [" << kv0 << "," << kv1 << "), N " << N << ")";
                return err.str();
            }
            at = k1;
        }
        const int64_t t_last = (tr.qo_end - tr.qo_start) + int64_t(tr.i) * tr.tsize - 1;
        int64_t need = p.causal ? N - L + t_last + 1 : N;
        need = std::max<int64_t>(0, std::min(need, N));
        if (at < need || at > N) {
            err << "tile " << t << " covers tokens [0," << at << "), needs " << need << " of " << N;
            return err.str();
        }
        // Reduce entries.
        const int32_t r0 = plan.reduce_indptr[t], r1 = plan.reduce_indptr[t + 1];
        if (plan.final_map[2 * t] != tr.qo_start || plan.final_map[2 * t + 1] != tr.qo_end) {
            err << "tile " << t << ": reduce_final_map";
            return err.str();
        }
        if (ws.size() == 1) {
            if (plan.work_info[size_t(ws[0]) * 8 + 1] != -1 || r1 != r0) {
                err << "unsplit tile " << t << " has partials";
                return err.str();
            }
        } else {
            if (r1 - r0 != int32_t(ws.size())) {
                err << "split tile " << t << ": " << r1 - r0 << " reduce entries for " << ws.size()
                    << " works";
                return err.str();
            }
            for (size_t f = 0; f < ws.size(); ++f) {
                const int32_t loc = plan.work_info[size_t(ws[f]) * 8 + 1];
                if (loc < 0 || plan.partial_map[r0 + f] != loc) {
                    err << "split tile " << t << " fragment " << f << ": partial " << loc
                        << " vs map " << plan.partial_map[r0 + f];
                    return err.str();
                }
                prow.push_back({loc, loc + tr.tsize});
            }
        }
    }
    for (size_t i = T + 1; i < plan.reduce_indptr.size(); ++i)
        if (plan.reduce_indptr[i] != plan.reduce_indptr[T]) return "reduce_indptr padding";
    if (plan.reduce_indptr[T] > z.reduce_partial_map_len) return "more partials than the map holds";
    std::sort(prow.begin(), prow.end());
    for (size_t i = 0; i < prow.size(); ++i) {
        if (i && prow[i].first < prow[i - 1].second) return "partial rows overlap";
        if (prow[i].second > z.partial_rows) return "partial rows beyond sizes.partial_rows";
    }
    return "";
}

Batch random_batch(std::mt19937& rng, int32_t B, int32_t max_qlen, int64_t max_kv, int32_t ps,
                   bool varlen_q) {
    std::vector<int32_t> q(B);
    std::vector<int64_t> n(B);
    std::uniform_int_distribution<int> kind(0, 9);
    for (int32_t b = 0; b < B; ++b) {
        q[b] = varlen_q ? std::uniform_int_distribution<int32_t>(0, max_qlen)(rng) : max_qlen;
        switch (kind(rng)) {
        case 0: n[b] = 0; break;
        case 1: n[b] = std::uniform_int_distribution<int64_t>(1, 16)(rng); break;
        case 2: n[b] = std::uniform_int_distribution<int64_t>(1, 4)(rng) * ps; break;
        case 3: n[b] = max_kv; break;
        case 4: n[b] = std::uniform_int_distribution<int64_t>(max_kv / 2, max_kv)(rng); break;
        default: n[b] = std::uniform_int_distribution<int64_t>(0, std::min<int64_t>(max_kv, 5000))(rng);
        }
    }
    return make_batch(q, n, ps);
}

}  // namespace plantest
