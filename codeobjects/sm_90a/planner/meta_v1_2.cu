// meta_v1_2.cu - the device v1_2 metadata planner: one CTA of 1024 threads computes the same
// buffers as the host planner (src/planner/plan_v1_2.cpp) from device-resident indptrs, with
// the same functions (src/planner/v1_2_core.h). No allocation, no host synchronisation: a CUDA
// graph can capture it. Phases (barriers between them):
//   1. per request: cost and tiles (chunked), block scans -> R (positions), TR (tiles)
//   2. warp 0: the cluster chain x[c+1] = snap(x[c] + W), a 32-wide forward search per step
//   3. per cluster: tiles before x[c], inside flag, work counts, block scan -> work_indptr
//   4. per cluster boundary: split tiles, block scans -> reduce / partial bases
//   5. per request: works and reduce entries of each of its tiles (fill_tile)
#include "meta_params.h"
#include "../../../src/planner/v1_2_core.h"

using namespace mla_v12;

namespace {

constexpr int kThreads = MLA_META_THREADS;
constexpr int kWarps = kThreads / 32;
constexpr unsigned kFull = 0xffffffffu;

// Block-wide exclusive scan of int64 values (all threads call it). scratch: kWarps int64.
__device__ int64_t scan_excl64(int64_t v, int64_t* scratch, int64_t* total) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    int64_t inc = v;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        const int64_t u = __shfl_up_sync(kFull, inc, o);
        if (lane >= o) inc += u;
    }
    if (lane == 31) scratch[warp] = inc;
    __syncthreads();
    if (warp == 0) {
        int64_t w = scratch[lane];
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
            const int64_t u = __shfl_up_sync(kFull, w, o);
            if (lane >= o) w += u;
        }
        scratch[lane] = w;  // inclusive warp totals
    }
    __syncthreads();
    const int64_t before = (warp ? scratch[warp - 1] : 0) + inc - v;
    *total = scratch[kWarps - 1];
    __syncthreads();  // scratch is reused by the next scan
    return before;
}

// Two exclusive scans in one pass (scratch: 2 * kWarps int64).
__device__ void scan_excl_pair(int64_t a, int64_t b, int64_t* scratch, int64_t* ea, int64_t* eb,
                               int64_t* ta, int64_t* tb) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    int64_t ia = a, ib = b;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        const int64_t ua = __shfl_up_sync(kFull, ia, o), ub = __shfl_up_sync(kFull, ib, o);
        if (lane >= o) {
            ia += ua;
            ib += ub;
        }
    }
    if (lane == 31) {
        scratch[warp] = ia;
        scratch[kWarps + warp] = ib;
    }
    __syncthreads();
    if (warp == 0) {
        int64_t wa = scratch[lane], wb = scratch[kWarps + lane];
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
            const int64_t ua = __shfl_up_sync(kFull, wa, o), ub = __shfl_up_sync(kFull, wb, o);
            if (lane >= o) {
                wa += ua;
                wb += ub;
            }
        }
        scratch[lane] = wa;
        scratch[kWarps + lane] = wb;
    }
    __syncthreads();
    *ea = (warp ? scratch[warp - 1] : 0) + ia - a;
    *eb = (warp ? scratch[kWarps + warp - 1] : 0) + ib - b;
    *ta = scratch[kWarps - 1];
    *tb = scratch[2 * kWarps - 1];
    __syncthreads();
}

__device__ int32_t scan_excl32(int32_t v, int64_t* scratch, int32_t* total) {
    int64_t t;
    const int32_t r = (int32_t)scan_excl64(v, scratch, &t);
    *total = (int32_t)t;
    return r;
}

// Request holding position y: the b with R[b] <= y < R[b+1] (B when y >= R[B]).
__device__ int32_t locate(const int64_t* R, int32_t B, int64_t y) {
    int32_t lo = 0, hi = B + 1;  // first index with R[idx] > y, in [1, B+1]
    while (lo < hi) {
        const int32_t mid = (lo + hi) >> 1;
        if (R[mid] > y) hi = mid;
        else lo = mid + 1;
    }
    return lo - 1;
}

}  // namespace

// Phase timestamps for profiling builds (-DMLA_META_PROFILE): thread 0 writes the clock deltas
// of each phase over reduce_final_map[0..7] at the end (the plan is then not usable).
#ifdef MLA_META_PROFILE
#define MLA_META_MARK(i) \
    do {                 \
        if (tid == 0) prof[i] = clock64(); \
    } while (0)
#else
#define MLA_META_MARK(i) \
    do {                 \
    } while (0)
#endif

extern "C" __global__ void __launch_bounds__(kThreads, 1)
    mla_meta_v1_2(const __grid_constant__ mla_meta_params p) {
    const mla_v12_config& c = p.cfg;
    const int32_t B = c.num_batches, C = c.num_clusters;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
#ifdef MLA_META_PROFILE
    long long prof[8];
#endif
    MLA_META_MARK(0);

    extern __shared__ __align__(16) unsigned char smem[];
    int64_t* R = reinterpret_cast<int64_t*>(smem);
    int64_t* X = R + (B + 1);
    int64_t* scr = X + (C + 1);
    int32_t* TR = reinterpret_cast<int32_t*>(scr + 64);
    int32_t* K = TR + (B + 1);
    int32_t* A = K + B;
    int32_t* XB = A + B;
    int32_t* TB = XB + (C + 1);
    int32_t* IN = TB + (C + 1);
    int32_t* WI = IN + (C + 1);
    int32_t* SP_RED = WI + (C + 1);
    int32_t* SP_TILE = SP_RED + (C + 1);
    int32_t* SP_FIRST = SP_TILE + C;
    int32_t* SP_NFRAG = SP_FIRST + C;
    int32_t* SP_PART = SP_NFRAG + C;
    int32_t* BK = SP_PART + C;  // [C + 2] bucket -> request

    // ---- 1. costs and tiles per request, prefix scans -------------------------------------
    const int32_t chunk = (B + kThreads - 1) / kThreads;
    const int32_t b_lo = min(B, tid * chunk), b_hi = min(B, b_lo + chunk);
    int64_t my_cost = 0;
    int32_t my_tiles = 0;
    for (int32_t b = b_lo; b < b_hi; ++b) {
        const Req q = make_req(c, p.qo_indptr[b], p.qo_indptr[b + 1], p.kv_indptr[b],
                               p.kv_indptr[b + 1], p.kv_last_page_lens[b]);
        K[b] = q.blocks;
        A[b] = q.good;
        R[b] = req_cost(c, q);
        TR[b] = req_tiles(c, q);
        my_cost += R[b];
        my_tiles += TR[b];
    }
    int64_t total;
    int64_t pos, tpos64, tiles64;
    scan_excl_pair(my_cost, my_tiles, scr, &pos, &tpos64, &total, &tiles64);
    int32_t tpos = (int32_t)tpos64;
    const int32_t num_tiles = (int32_t)tiles64;
    for (int32_t b = b_lo; b < b_hi; ++b) {
        const int64_t cost = R[b];
        const int32_t tiles = TR[b];
        R[b] = pos;
        TR[b] = tpos;
        pos += cost;
        tpos += tiles;
    }
    if (tid == 0) {
        R[B] = total;
        TR[B] = num_tiles;
        p.work_metadata[0] = (uint64_t)(uintptr_t)p.work_indptr;
        p.work_metadata[1] = (uint64_t)(uintptr_t)p.work_info_set;
    }
    __syncthreads();
    MLA_META_MARK(1);
    const int64_t W = cluster_stride(c, total);

    // ---- 2. the cluster chain ---------------------------------------------------------------
    // Bucket index: BK[i] = the request holding position i * W (every bucket below total has
    // exactly one writer). y = x + m W lies in bucket floor(x / W) + m, so its request is found
    // by a short binary search between BK[i] and BK[i + 1].
    const int32_t nb = (int32_t)((total + W - 1) / W);  // buckets below total (<= eff <= C)
    for (int32_t b = b_lo; b < b_hi; ++b) {
        const int64_t r0 = R[b], r1 = R[b + 1];
        if (r1 == r0) continue;
        for (int64_t i = (r0 + W - 1) / W; i * W < r1; ++i) BK[i] = b;
    }
    __syncthreads();
    // Warp 0 advances in rounds: lane l tries step l+1 from x assuming no snap in between;
    // steps up to and including the first one that snaps (or reaches total) are exact.
    if (warp == 0) {
        int64_t x = 0, qx = 0;  // qx = floor(x / W)
        if (lane == 0) X[0] = 0;
        int32_t cl = 1;
        while (cl < C) {
            if (x >= total) {
                for (int32_t i = cl + lane; i < C; i += 32) X[i] = total;
                break;
            }
            const int64_t y = x + (int64_t)(lane + 1) * W;
            int64_t z = total;
            if (y < total) {
                const int64_t bi = qx + lane + 1;  // bucket of y
                int32_t lo = BK[bi], hi = (bi + 1 < nb) ? BK[bi + 1] : B - 1;
                while (lo < hi) {  // largest b in [lo, hi] with R[b] <= y
                    const int32_t mid = (lo + hi + 1) >> 1;
                    if (R[mid] <= y) lo = mid;
                    else hi = mid - 1;
                }
                Req q{};
                q.blocks = K[lo];
                q.good = A[lo];
                z = snap(c, q, R[lo], y);
            }
            const unsigned m = __ballot_sync(kFull, z != y);
            const int k = m ? __ffs(m) - 1 : 31;
            if (lane <= k && cl + lane < C) X[cl + lane] = z;
            x = __shfl_sync(kFull, z, k);
            qx += k + 1;
            while ((qx + 1) * W <= x) ++qx;
            cl += k + 1;
        }
        if (lane == 0) X[C] = total;
    }
    __syncthreads();
    MLA_META_MARK(2);

    // ---- 3. per cluster: tiles before x[c], inside flag, work counts -> work_indptr --------
    for (int32_t cl = tid; cl <= C; cl += kThreads) {
        const int64_t xc = X[cl];
        if (xc >= total) {
            XB[cl] = B;
            TB[cl] = num_tiles;
            IN[cl] = 0;
        } else {
            const int32_t b = locate(R, B, xc);
            Req q{};
            q.blocks = K[b];
            XB[cl] = b;
            TB[cl] = tiles_before(c, q, R[b], TR[b], xc);
            IN[cl] = inside_tile(c, q, R[b], xc);
        }
    }
    __syncthreads();
    {
        const int32_t cnt = tid < C ? (TB[tid + 1] - TB[tid]) + IN[tid] : 0;
        int32_t num_works;
        const int32_t before = scan_excl32(cnt, scr, &num_works);
        if (tid < C) WI[tid] = before;
        if (tid == 0) WI[C] = num_works;
    }
    __syncthreads();
    for (int32_t i = tid; i < p.work_indptr_len; i += kThreads)
        p.work_indptr[i] = WI[min(i, C)];

    MLA_META_MARK(3);
    // ---- 4. split tiles: groups of consecutive boundary clusters inside one tile -----------
    int32_t num_split;
    {
        const int32_t cl = tid;
        const bool bnd = cl >= 1 && cl < C && IN[cl];
        const bool start = bnd && !(IN[cl - 1] && TB[cl - 1] == TB[cl]);
        const bool end = bnd && !(cl + 1 < C && IN[cl + 1] && TB[cl + 1] == TB[cl]);
        const int32_t s = scan_excl32(start ? 1 : 0, scr, &num_split);
        if (start) {
            SP_TILE[s] = TB[cl] - 1;
            SP_FIRST[s] = cl - 1;
        }
        __syncthreads();
        if (end) {
            const int32_t g = s - (start ? 0 : 1);  // the group this boundary closes
            SP_NFRAG[g] = cl - SP_FIRST[g] + 1;
        }
        __syncthreads();
    }
    {
        int32_t nf = 0, rows = 0;
        if (tid < num_split) {
            const int32_t b = XB[SP_FIRST[tid] + 1];
            const Req q = make_req(c, p.qo_indptr[b], p.qo_indptr[b + 1], p.kv_indptr[b],
                                   p.kv_indptr[b + 1], p.kv_last_page_lens[b]);
            nf = SP_NFRAG[tid];
            rows = nf * q.tsize;
        }
        int64_t red64, part64, tot_red64, tot_rows64;
        scan_excl_pair(nf, rows, scr, &red64, &part64, &tot_red64, &tot_rows64);
        const int32_t red = (int32_t)red64, part = (int32_t)part64, tot_red = (int32_t)tot_red64;
        if (tid < num_split) {
            SP_RED[tid] = red;
            SP_PART[tid] = part;
        }
        if (tid == 0) SP_RED[num_split] = tot_red;
        __syncthreads();
        for (int32_t i = num_tiles + 1 + tid; i < p.reduce_indptr_len; i += kThreads)
            p.reduce_indptr[i] = tot_red;
        if (tid == 0 && p.reduce_indptr_len > 0) p.reduce_indptr[0] = 0;
    }

    MLA_META_MARK(4);
    // ---- 5. works and reduce entries, one request per thread -------------------------------
    const SplitTiles sp{SP_TILE, SP_FIRST, SP_NFRAG, SP_RED, SP_PART, num_split};
    const Out out{p.work_info_set,      p.work_info_set_rows, p.reduce_indptr,
                  p.reduce_indptr_len,  p.reduce_final_map,   p.reduce_final_map_rows,
                  p.reduce_partial_map, p.reduce_partial_map_len};
    // One thread per tile: consecutive lanes write consecutive works (coalesced rows).
    for (int32_t t = tid; t < num_tiles; t += kThreads) {
        int32_t lo = 0, hi = B - 1;  // request b: TR[b] <= t < TR[b+1]
        while (lo < hi) {
            const int32_t mid = (lo + hi + 1) >> 1;
            if (TR[mid] <= t) lo = mid;
            else hi = mid - 1;
        }
        const int32_t b = lo, j = t - TR[b];
        const int32_t qo0 = p.qo_indptr[b], kv0 = p.kv_indptr[b], last = p.kv_last_page_lens[b];
        const Req q = make_req(c, qo0, p.qo_indptr[b + 1], kv0, p.kv_indptr[b + 1], last);
        const int64_t s = R[b] + (int64_t)j * tile_cost(c, q);
        int32_t c0 = 0, c1 = C - 1;  // largest c0 < C with X[c0] <= s
        while (c0 < c1) {
            const int32_t mid = (c0 + c1 + 1) >> 1;
            if (X[mid] <= s) c0 = mid;
            else c1 = mid - 1;
        }
        fill_tile(c, q, b, j, t, s, c0, split_lower_bound(sp, t), qo0, kv0, last, X, TB, IN, WI,
                  sp, out);
    }
#ifdef MLA_META_PROFILE
    __syncthreads();
    MLA_META_MARK(5);
    if (tid == 0)
        for (int i = 0; i < 5; ++i) p.reduce_final_map[i] = (int32_t)(prof[i + 1] - prof[i]);
#endif
}
