// meta_v1_2.cu - the device v1_2 metadata planner: computes the same buffers as the host planner
// (src/planner/plan_v1_2.cpp) from device-resident indptrs, with the same functions
// (src/planner/v1_2_core.h). No allocation, no host synchronisation: a CUDA graph can capture it.
//
// Grid: gridDim.x independent CTAs of 1024 threads (no inter-CTA communication). Every CTA
// computes the whole plan skeleton in its shared memory (phases 0-4, identical in every CTA: the
// same integer arithmetic on the same inputs) and writes its share of the outputs: the requests
// [k*B/n, (k+1)*B/n) in phase 5, the boundary clusters c = k (mod n) in phase 4, and strided
// paddings. Each output element has exactly one writer. Phases (barriers between them):
//   0. stage qo_indptr / kv_indptr / kv_last_page_lens in shared memory (cp.async, all in flight)
//   1. per request (contiguous chunks): cost and tiles, a paired block scan -> R, TR; warp 0
//      derives the cluster stride W and the bucket count while the block waits
//   2. buckets: BK[i] = request holding position i*W (one binary search per bucket)
//   3. warps 0-7: the cluster chain x[c+1] = snap(x[c] + W), two 128-step speculations per round;
//      each accepted step also yields tiles-before, inside flag and request of x[c]
//   4. per cluster: work counts, fragment counts and partial rows, one block scan of three ->
//      work_indptr, reduce / partial bases; boundary clusters write their own fragments
//   5. per request: the unsplit work or fragment 0 of each of its tiles, reduce and final maps
// Head-group-major plans (cfg.group_major, C a multiple of the group count r; the host planner's
// twin sections, src/planner/plan_v1_2.cpp): every head group's section is the same plan over
// C / r clusters, shifted by whole sections. The skeleton (phases 1-4) is computed once, for
// group 0's units (each request's first ntiles tiles) on C / r clusters with num_splits / r;
// phases 4 and 5 write it r times: group g's works, tiles, reduce entries and partial rows
// follow group g - 1's, its clusters are c + g C / r, and its work rows are those of tile
// g ntiles + j of the request (make_work).
#include "meta_params.h"
#include "../../../src/planner/v1_2_core.h"

using namespace mla_v12;

namespace {

constexpr int kThreads = MLA_META_THREADS;
constexpr int kChainWarps = 8;  // two speculations of 4 warps (128 lanes) each
constexpr int kChainLanes = 32 * kChainWarps;
constexpr unsigned kFull = 0xffffffffu;

__device__ __forceinline__ int64_t warp_incl64(int64_t v, int lane) {
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        const int64_t u = __shfl_up_sync(kFull, v, o);
        if (lane >= o) v += u;
    }
    return v;
}
__device__ __forceinline__ int32_t warp_incl32(int32_t v, int lane) {
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        const int32_t u = __shfl_up_sync(kFull, v, o);
        if (lane >= o) v += u;
    }
    return v;
}

// 4-byte asynchronous global -> shared copy (completed by cp_wait_all + a barrier).
__device__ __forceinline__ void cp4(int32_t* s, const int32_t* g) {
    const unsigned sa = (unsigned)__cvta_generic_to_shared(s);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(sa), "l"(g) : "memory");
}
__device__ __forceinline__ void cp_wait_all() { asm volatile("cp.async.wait_all;\n" ::: "memory"); }

// Barrier of the chain warps only (named barrier 1; __syncthreads uses 0).
__device__ __forceinline__ void chain_barrier() {
    asm volatile("bar.sync 1, %0;\n" ::"n"(kChainLanes) : "memory");
}

// Cost (positions) and tiles of one request, as req_cost / req_tiles of make_req, without the
// fields the scan does not need. maxpages = 0x3fffffff / page_size (make_req's clamp).
// gpu: head groups per unit (r in aiter's order, 1 in the sections of a head-group-major plan).
__device__ __forceinline__ void cost_tiles(const mla_v12_config& c, int32_t gpu, int32_t maxpages, int32_t qo0,
                                           int32_t qo1, int32_t kv0, int32_t kv1, int64_t* cost,
                                           int32_t* tiles) {
    const int32_t qlen = min32(max32(qo1 - qo0, 0), c.max_seqlen_qo);
    int32_t nt, ts;
    qo_tiles(c, qlen, &nt, &ts);
    const int32_t pages = min32(max32(kv1 - kv0, 0), maxpages);
    const int32_t blocks = (pages + c.pages_per_block - 1) >> c.block_shift;
    *tiles = gpu * nt;
    *cost = (int64_t)(*tiles) * (blocks + c.overhead);
}

}  // namespace

// Phase timestamps for profiling builds (-DMLA_META_PROFILE): thread 0 of CTA 0 writes the clock
// deltas of each phase over reduce_final_map[0..5] at the end (the plan is then not usable).
#ifdef MLA_META_PROFILE
#define MLA_META_MARK(i)                                      \
    do {                                                      \
        if (tid == 0) prof[i] = clock64();                    \
    } while (0)
#else
#define MLA_META_MARK(i) \
    do {                 \
    } while (0)
#endif

extern "C" __global__ void __launch_bounds__(kThreads, 1)
    mla_meta_v1_2(const __grid_constant__ mla_meta_params p) {
    const mla_v12_config& c = p.cfg;
    const int32_t B = c.num_batches, CA = c.num_clusters;
    // Sections (head-group-major, file comment): NS copies of the plan of one section over C
    // clusters, whose units are GPU head groups of a request.
    const int32_t NS = group_sections(c);
    const int32_t C = CA / NS, GPU = NS > 1 ? 1 : c.ratio;
    mla_v12_config cc = c;  // the section's split count (cluster_stride)
    cc.num_splits = max32(1, c.num_splits / NS);
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int cta = blockIdx.x, ncta = gridDim.x;
#ifdef MLA_META_PROFILE
    long long prof[8];
#endif
    MLA_META_MARK(0);

    // Shared memory (mla_meta_smem_bytes): int64 R[B+1], X[C+1], SCR[64], ZW[16], M64[4];
    // int32 QO[B+1], KV[B+1], LS[B+1], TR[B+1], TB[C+1], IN[C+1], XB[C+1], WI[C+1], ERED[C+1],
    // EPART[C+1] (BK during the chain), MW[16], M32[8].
    extern __shared__ __align__(16) unsigned char smem[];
    int64_t* R = reinterpret_cast<int64_t*>(smem);
    int64_t* X = R + (B + 1);
    int64_t* SCR = X + (C + 1);
    int64_t* ZW = SCR + 64;
    int64_t* M64 = ZW + 2 * kChainWarps;
    int32_t* QO = reinterpret_cast<int32_t*>(M64 + 4);
    int32_t* KV = QO + (B + 1);
    int32_t* LS = KV + (B + 1);
    int32_t* TR = LS + (B + 1);
    int32_t* TB = TR + (B + 1);
    int32_t* IN = TB + (C + 1);
    int32_t* XB = IN + (C + 1);
    int32_t* WI = XB + (C + 1);
    int32_t* ERED = WI + (C + 1);
    int32_t* EPART = ERED + (C + 1);
    int32_t* BK = EPART;  // buckets live only until the chain ends; EPART is written after it
    int32_t* MW = EPART + (C + 1);
    int32_t* M32 = MW + 2 * kChainWarps;
    int32_t* S32 = reinterpret_cast<int32_t*>(SCR);

    // ---- 0. stage the inputs ----------------------------------------------------------------
    for (int32_t i = tid; i <= B; i += kThreads) {
        cp4(QO + i, p.qo_indptr + i);
        cp4(KV + i, p.kv_indptr + i);
        if (i < B) cp4(LS + i, p.kv_last_page_lens + i);
    }
    cp_wait_all();
    if (cta == 0 && tid == 0) {
        p.work_metadata[0] = (uint64_t)(uintptr_t)p.work_indptr;
        p.work_metadata[1] = (uint64_t)(uintptr_t)p.work_info_set;
    }
    __syncthreads();
    MLA_META_MARK(1);

    // ---- 1. costs and tiles per request, paired scan -> R (positions), TR (tiles) -------------
    const int32_t maxpages = 0x3fffffff / c.page_size;
    const int32_t chunk = (B + kThreads - 1) / kThreads;
    const int32_t b_lo = min(B, tid * chunk), b_hi = min(B, b_lo + chunk);
    int64_t my_cost = 0;
    int32_t my_tiles = 0;
    for (int32_t b = b_lo; b < b_hi; ++b) {
        int64_t cost;
        int32_t tiles;
        cost_tiles(c, GPU, maxpages, QO[b], QO[b + 1], KV[b], KV[b + 1], &cost, &tiles);
        R[b] = cost;
        TR[b] = tiles;
        my_cost += cost;
        my_tiles += tiles;
    }
    {
        const int64_t ia = warp_incl64(my_cost, lane);
        const int32_t ib = warp_incl32(my_tiles, lane);
        if (lane == 31) {
            SCR[warp] = ia;
            SCR[32 + warp] = ib;
        }
        __syncthreads();
        if (warp == 0) {
            const int64_t wa = warp_incl64(SCR[lane], lane);
            const int64_t wb = warp_incl64(SCR[32 + lane], lane);
            SCR[lane] = wa;
            SCR[32 + lane] = wb;
            if (lane == 31) {  // the totals, the cluster stride and the bucket count
                const int64_t w = cluster_stride(cc, wa);
                M64[0] = wa;
                M64[1] = w;
                M32[0] = (int32_t)wb;
                M32[1] = (int32_t)((wa + w - 1) / w);
            }
        }
        __syncthreads();
        int64_t pos = (warp ? SCR[warp - 1] : 0) + ia - my_cost;
        int32_t tpos = (int32_t)(warp ? SCR[32 + warp - 1] : 0) + ib - my_tiles;
        for (int32_t b = b_lo; b < b_hi; ++b) {
            const int64_t cost = R[b];
            const int32_t tiles = TR[b];
            R[b] = pos;
            TR[b] = tpos;
            pos += cost;
            tpos += tiles;
        }
    }
    const int64_t total = M64[0], W = M64[1];
    const int32_t num_tiles = M32[0], nb = M32[1];
    if (tid == 0) {
        R[B] = total;
        TR[B] = num_tiles;
    }
    MLA_META_MARK(2);

    // ---- 2. buckets: BK[i] = the request holding position i * W (i < nb <= C) --------------
    __syncthreads();  // R, TR final
    for (int32_t i = tid; i < nb; i += kThreads) {
        const int64_t y = (int64_t)i * W;
        int32_t lo = 0, hi = B - 1;  // largest b with R[b] <= y
        while (lo < hi) {
            const int32_t mid = (lo + hi + 1) >> 1;
            if (R[mid] <= y) lo = mid;
            else hi = mid - 1;
        }
        BK[i] = lo;
    }
    __syncthreads();
    MLA_META_MARK(3);

    // ---- 3. the cluster chain (warps 0..7) ------------------------------------------------
    // Two speculations per round, 128 lanes each: lane L of half h takes the step to cluster
    // cl + L from its assumed start s_L, assuming every earlier step of the round advanced as
    // half h predicts. Half 0 predicts W for every step (no snap). Half 1 predicts a periodic
    // pattern: the step to cluster t advances d_1 (the last advance that was not W) when
    // (t - ls) % per == 0 and W otherwise, with ls the last cluster reached by a snap and per the
    // distance between the last two snaps. A uniform batch's chain is exactly periodic: after
    // each snap the chain stands at a tile start again, so the same W-steps and the same snap
    // follow (e.g. 1536 x 2048 tokens with sm_90a's 16-block work overhead: W, W, W + 3, ...);
    // per = 1 is the case of every step snapping (d_1 each step). Lane 0 of each half starts at
    // the exact x, and lane L's start is exact while lanes 0..L-1 of its half advanced as
    // predicted, so each half's steps up to and including its first deviating lane are exact;
    // the round keeps the half with more of them. Varied batches advance as far as their next
    // snap, uniform ones 128 clusters per round once the period is known. y = s + W lies in
    // bucket floor(y / W), so its request is a short search between two bucket entries.
    if (tid < kChainLanes) {
        constexpr int kHalf = kChainLanes / 2, kHalfWarps = kChainWarps / 2;
        const int half = tid / kHalf, hl = tid % kHalf;
        int32_t* SW = S32;  // snap masks per warp, double-buffered (SCR is free during the chain)
        int64_t x = 0, d1 = W;
        int32_t per = 1, ls = 0;  // before any snap is seen: every step d_1 (= W at first)
        if (tid == 0) {
            X[0] = 0;
            TB[0] = 0;
            IN[0] = 0;
            XB[0] = total > 0 ? 0 : B;
        }
        int32_t cl = 1, round = 0;
        while (cl < C) {
            if (x >= total) {
                for (int32_t i = cl + tid; i < C; i += kChainLanes) {
                    X[i] = total;
                    TB[i] = num_tiles;
                    IN[i] = 0;
                    XB[i] = B;
                }
                break;
            }
            // this lane's assumed start and advance; cl - 1 >= ls, so the counts are >= 0
            int64_t sl = x + (int64_t)hl * W, adv = W;
            if (half) {
                const int32_t snaps = (cl + hl - 1 - ls) / per - (cl - 1 - ls) / per;
                sl += (d1 - W) * snaps;
                if ((cl + hl - ls) % per == 0) adv = d1;
            }
            const int64_t y = sl + W;
            int64_t z = total;
            int32_t tb = num_tiles, in = 0, xb = B;
            if (y < total) {
                const int64_t bi = y / W;  // bucket of y, < nb
                int32_t lo = BK[bi], hi = (bi + 1 < nb) ? BK[bi + 1] : B - 1;
                while (lo < hi) {  // largest b in [lo, hi] with R[b] <= y
                    const int32_t mid = (lo + hi + 1) >> 1;
                    if (R[mid] <= y) lo = mid;
                    else hi = mid - 1;
                }
                const Req q = make_req(c, QO[lo], QO[lo + 1], KV[lo], KV[lo + 1], LS[lo]);
                const int32_t cost = tile_cost(c, q);
                const int64_t off = y - R[lo];
                const int32_t jt = offset_in_tile(off, cost), ti = tile_index(off, cost);
                if (jt < boundary_limit(c, q, W)) {  // y itself: a tile start or a fragment boundary
                    z = y;
                    tb = TR[lo] + ti + (jt ? 1 : 0);
                    in = jt != 0;
                    xb = lo;
                } else {  // snaps to the next tile start
                    z = y - jt + cost;
                    tb = TR[lo] + ti + 1;
                    xb = z < total ? lo : B;
                }
            }
            const unsigned m = __ballot_sync(kFull, z != sl + adv);
            const unsigned sm = __ballot_sync(kFull, z != sl + W);  // steps that did not advance W
            const int buf = (round & 1) * kChainWarps;
            if (lane == 0) {
                MW[buf + warp] = (int32_t)m;
                SW[buf + warp] = (int32_t)sm;
            }
            if (lane == (m ? __ffs(m) - 1 : 31)) ZW[buf + warp] = z;
            chain_barrier();
            // per half: K_h = its first deviating lane (kHalf - 1 if none) and that lane's z
            // (scalars, not arrays indexed by the chosen half: no local memory)
            int32_t K0 = kHalf - 1, K1 = kHalf - 1;
            int64_t zn0 = ZW[buf + kHalfWarps - 1], zn1 = ZW[buf + 2 * kHalfWarps - 1];
            for (int w = 0; w < kHalfWarps; ++w) {
                const unsigned mw = (unsigned)MW[buf + w];
                if (mw) {
                    K0 = w * 32 + __ffs(mw) - 1;
                    zn0 = ZW[buf + w];
                    break;
                }
            }
            for (int w = 0; w < kHalfWarps; ++w) {
                const unsigned mw = (unsigned)MW[buf + kHalfWarps + w];
                if (mw) {
                    K1 = w * 32 + __ffs(mw) - 1;
                    zn1 = ZW[buf + kHalfWarps + w];
                    break;
                }
            }
            const int hs = K1 > K0 ? 1 : 0;  // the half that got further (ties: half 0)
            const int32_t Ks = hs ? K1 : K0;
            const int64_t zs = hs ? zn1 : zn0;
            if (half == hs && hl <= Ks && cl + hl < C) {
                X[cl + hl] = z;
                TB[cl + hl] = tb;
                IN[cl + hl] = in;
                XB[cl + hl] = xb;
            }
            // d_1: the advance of the round's last accepted step (its exact z minus its start
            // under the chosen half's prediction) when that was not W; a step predicted as a snap
            // that matched advanced d_1 already
            {
                int64_t sk = x + (int64_t)Ks * W;
                if (hs) sk += (d1 - W) * ((cl + Ks - 1 - ls) / per - (cl - 1 - ls) / per);
                const int64_t dn = zs - sk;
                if (dn >= 1 && dn != W) d1 = dn;
            }
            // ls and per: the last two accepted steps that did not advance W (this round's, else
            // the last one before it)
            int32_t last = -1, prev = -1;
            for (int w = kHalfWarps - 1; w >= 0 && prev < 0; --w) {
                const int32_t hi_lane = Ks - w * 32;  // accepted lanes of this warp: 0..hi_lane
                if (hi_lane < 0) continue;
                unsigned sw = (unsigned)SW[buf + hs * kHalfWarps + w];
                if (hi_lane < 31) sw &= (2u << hi_lane) - 1u;
                while (sw && prev < 0) {
                    const int32_t b = 31 - __clz(sw);
                    sw &= ~(1u << b);
                    if (last < 0) last = w * 32 + b;
                    else prev = w * 32 + b;
                }
            }
            if (last >= 0) {
                per = prev >= 0 ? last - prev : cl + last - ls;
                ls = cl + last;
            }
            x = zs;
            cl += Ks + 1;
            ++round;
        }
        if (tid == 0) {
            X[C] = total;
            TB[C] = num_tiles;
            IN[C] = 0;
            XB[C] = B;
        }
    }
    __syncthreads();
    MLA_META_MARK(4);

    // ---- 4. per cluster: works, fragments, partial rows; boundary fragments ----------------
    // Cluster cl starts inside a tile (IN[cl], a boundary) -> that tile is split. A group of
    // consecutive boundaries inside one tile is one split tile with (boundaries + 1) fragments:
    // fragment 0 in cluster (first boundary - 1), fragment f in the f-th boundary cluster. Each
    // boundary counts 1 fragment, each group start 1 more; partial rows are fragments x the
    // tile's token count. ERED / EPART: exclusive prefixes of those over clusters.
    {
        const int32_t cl = tid;
        int32_t cnt = 0, vred = 0, vpart = 0, tsize = 0;
        bool bnd = false, start = false, end = false;
        if (cl < C) {
            const int32_t tb0 = TB[cl], tb1 = TB[cl + 1];
            bnd = IN[cl] != 0;
            cnt = tb1 - tb0 + (bnd ? 1 : 0);
            if (bnd) {
                start = !(IN[cl - 1] && TB[cl - 1] == tb0);
                end = !(cl + 1 < C && IN[cl + 1] && tb1 == tb0);
                const int32_t b = XB[cl];
                int32_t nt;
                qo_tiles(c, min32(max32(QO[b + 1] - QO[b], 0), c.max_seqlen_qo), &nt, &tsize);
                vred = start ? 2 : 1;
                vpart = vred * tsize;
            }
        }
        const int32_t i0 = warp_incl32(cnt, lane), i1 = warp_incl32(vred, lane),
                      i2 = warp_incl32(vpart, lane);
        if (lane == 31) {
            S32[warp] = i0;
            S32[32 + warp] = i1;
            S32[64 + warp] = i2;
        }
        __syncthreads();
        if (warp == 0) {
            const int32_t a = warp_incl32(S32[lane], lane), r = warp_incl32(S32[32 + lane], lane),
                          q = warp_incl32(S32[64 + lane], lane);
            S32[lane] = a;
            S32[32 + lane] = r;
            S32[64 + lane] = q;
        }
        __syncthreads();
        const int32_t wi = (warp ? S32[warp - 1] : 0) + i0 - cnt;
        const int32_t ered = (warp ? S32[32 + warp - 1] : 0) + i1 - vred;
        const int32_t epart = (warp ? S32[64 + warp - 1] : 0) + i2 - vpart;
        // one section's totals: works, reduce entries, partial rows (section g adds g times each)
        const int32_t num_works = S32[31], tot_red = S32[63], tot_part = S32[95];
        if (cl < C) {
            WI[cl] = wi;
            ERED[cl] = ered;
            EPART[cl] = epart;
        }
        if (tid == 0) {
            WI[C] = num_works;
            ERED[C] = tot_red;
        }
        // Padding of reduce_indptr past the plan, and its first entry (work_indptr: phase 5).
        for (int32_t i = NS * num_tiles + 1 + cta * kThreads + tid; i < p.reduce_indptr_len;
             i += ncta * kThreads)
            p.reduce_indptr[i] = NS * tot_red;
        if (cta == 0 && tid == 0 && p.reduce_indptr_len > 0) p.reduce_indptr[0] = 0;
        // The fragment that starts at this boundary (fragment >= 1 of its tile), in every section.
        if (bnd && cl % ncta == cta) {
            const int32_t b = XB[cl], t = TB[cl] - 1;
            const int32_t qo0 = QO[b], kv0 = KV[b], last = LS[b];
            const Req q = make_req(c, qo0, QO[b + 1], kv0, KV[b + 1], last);
            const int32_t j = t - TR[b];
            const int64_t s = R[b] + (int64_t)j * tile_cost(c, q);
            const int32_t j0 = (int32_t)(X[cl] - s), j1 = end ? -1 : (int32_t)(X[cl + 1] - s);
            const int32_t part = epart + (start ? tsize : 0), slot = ered + (start ? 1 : 0);
            int32_t w[8];
            const Out o{p.work_info_set,      p.work_info_set_rows, p.reduce_indptr,
                        p.reduce_indptr_len,  p.reduce_final_map,   p.reduce_final_map_rows,
                        p.reduce_partial_map, p.reduce_partial_map_len};
            for (int32_t g = 0; g < NS; ++g) {
                const int32_t pg = part + g * tot_part, sg = slot + g * tot_red, tg = t + g * num_tiles;
                make_work(c, q, b, j + g * q.ntiles, qo0, kv0, last, j0, j1, pg, w);
                if (c.tile_ids) w[7] = tg;  // (fill_tile's dw 7)
                put_work(o, wi + g * num_works, w);
                if (sg < p.reduce_partial_map_len) p.reduce_partial_map[sg] = pg;
                if (end && tg + 1 < p.reduce_indptr_len) p.reduce_indptr[tg + 1] = ered + vred + g * tot_red;
            }
        }
    }
    __syncthreads();
    MLA_META_MARK(5);
    const int32_t sec_works = WI[C], sec_red = ERED[C];  // one section's totals
    const int32_t sec_part = S32[95];
    if (cta == 0)  // cluster g C + k of section g: section 0's entry k plus g sections of works
        for (int32_t i = tid; i < p.work_indptr_len; i += kThreads)
            p.work_indptr[i] = i < CA ? (i / C) * sec_works + WI[i % C] : NS * sec_works;

    // ---- 5. per request (this CTA's share): fragment 0 or the whole work of each tile -------
    const Out out{p.work_info_set,      p.work_info_set_rows, p.reduce_indptr,
                  p.reduce_indptr_len,  p.reduce_final_map,   p.reduce_final_map_rows,
                  p.reduce_partial_map, p.reduce_partial_map_len};
    const int32_t per = (B + ncta - 1) / ncta;
    const int32_t r_end = min(B, (cta + 1) * per);
    for (int32_t b = cta * per + tid; b < r_end; b += kThreads) {
        const int32_t qo0 = QO[b], kv0 = KV[b], last = LS[b];
        const Req q = make_req(c, qo0, QO[b + 1], kv0, KV[b + 1], last);
        const int32_t nt = GPU * q.ntiles;  // the unit's tiles (req_tiles in aiter's order)
        if (nt == 0) continue;
        const int32_t t0 = TR[b], cost = tile_cost(c, q);
        const int64_t rb = R[b];
        int32_t c0 = 0;
        for (int32_t j = 0; j < nt; ++j) {
            const int32_t t = t0 + j;
            int32_t hi = C - 1;  // the cluster where tile t starts: largest c with TB[c] <= t
            while (c0 < hi) {
                const int32_t mid = (c0 + hi + 1) >> 1;
                if (TB[mid] <= t) c0 = mid;
                else hi = mid - 1;
            }
            const int32_t first_work = WI[c0] + IN[c0] + (t - TB[c0]);
            const bool split = IN[c0 + 1] && TB[c0 + 1] - 1 == t;
            for (int32_t g = 0; g < NS; ++g) {  // the tile in every section
                const int32_t tg = t + g * num_tiles, jg = j + g * q.ntiles, wg = first_work + g * sec_works;
                int32_t w[8];
                if (!split) {
                    make_work(c, q, b, jg, qo0, kv0, last, 0, -1, -1, w);
                    if (c.tile_ids) w[7] = tg;
                    put_work(out, wg, w);
                    if (tg + 1 < out.reduce_indptr_len) out.reduce_indptr[tg + 1] = ERED[c0 + 1] + g * sec_red;
                } else {
                    const int64_t s = rb + (int64_t)j * cost;
                    const int32_t part = EPART[c0 + 1] + g * sec_part, slot = ERED[c0 + 1] + g * sec_red;
                    make_work(c, q, b, jg, qo0, kv0, last, 0, (int32_t)(X[c0 + 1] - s), part, w);
                    if (c.tile_ids) w[7] = tg;
                    put_work(out, wg, w);
                    if (slot < out.partial_len) out.partial_map[slot] = part;
                }
                if (tg < out.final_rows) {
                    out.final_map[2 * tg] = w[2];
                    out.final_map[2 * tg + 1] = w[3];
                }
            }
        }
    }
#ifdef MLA_META_PROFILE
    __syncthreads();
    MLA_META_MARK(6);
    if (cta == 0 && tid == 0)
        for (int i = 0; i < 6; ++i) p.reduce_final_map[i] = (int32_t)(prof[i + 1] - prof[i]);
#endif
}
