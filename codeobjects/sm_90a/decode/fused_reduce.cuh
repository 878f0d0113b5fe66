// fused_reduce.cuh - the split-KV reduction done by the decode kernel itself (the "fused
// reduction": the *_fused kernels, mla_decode.csv rows keyed fused = 1, where mla_reduce.csv says
// launch_fused 1), so that
// mla_decode_fwd launches one kernel instead of two: the last CTA to finish a fragment of a split
// qo tile reduces that tile (reduce/split_tile.cuh, the whole-tile reducer's arithmetic).
//
// Protocol, per split tile t (docs/plan-layout.md: a split work's dw 7 is its tile t on sm_90a):
//   a CTA notes each split work it finishes (fused_note) and, after its last work (fused_flush),
//   meets at a barrier (its partial rows, store_lse / store_rows, are then stored), and one thread
//   per noted work adds 1 to tile_counters[t] (acq_rel, GPU scope); the CTA whose add brings it to
//   the tile's fragment count (reduce_indptr[t + 1] - reduce_indptr[t]) knows every fragment is
//   visible, sets the counter back to 0 for the next call (no other fragment of t is left to
//   count in this one) and reduces t with all its warps.
// The counters so start and end every call at 0: the caller zeroes them once (mla_decode_args
// tile_counters), and a CUDA graph can replay the call. A work the kernel rejects
// (MLA_DECODE_ERR_PLAN) never counts in: its tile stays unreduced and its counter non-zero, which
// the caller must clear after such an error. A split work's tile t (dw 7) is checked before it
// counts in: t in [0, reduce.num_tiles) and reduce_final_map[t] equal to the work's own qo rows;
// a work that fails is flagged MLA_DECODE_ERR_PLAN and never counts in (so a foreign plan cannot
// make the kernel write past the counters or reduce another tile). The fragment rows
// (reduce_indptr, reduce_partial_map) are trusted as the reducer kernel trusts them.
// Latency: thread 0 fetches a split work's fragment count and final map by cp.async at the
// work's start, and its fragments' first partial rows when the work is noted, so the end-of-CTA
// chain is barrier, atomic, barrier, one round of loads (reduce_tile_short: tiles of up to
// kFusedFrags fragments; longer tiles take reduce_split_tile). Cost (docs/performance.md, sessions
// 15-16): at b 64 the fused path takes 44.3 µs against the reducer kernel path's 43.1; at
// s_k 16384 and b 1536 the two are equal within 0.7 µs; where no tile splits it saves the
// reducer launch (-1.6 to -2.2 µs on the main job, session 15).
#pragma once
#include "decode/decode_kernel.cuh"
#include "reduce/split_tile.cuh"

// Measurement hook (never set in the shipped build; a variant is built with
// scripts/variant_bench.sh build NAME codeobjects/sm_90a/decode/mla_decode_wg_bf16_bf16.cu
// -DMLA_FUSED_ABLATE=N, to place the fused chain's time by differences; results are wrong):
// 1: count in and reset as usual, but reduce no tile; 2: no end-of-CTA step at all (no barrier, no
// count: the counters are never read, so later calls time alike).
#ifndef MLA_FUSED_ABLATE
#define MLA_FUSED_ABLATE 0
#endif
namespace mla_dec {

constexpr int kFusedPending = 4;  // split works noted before a flush (v1_2 plans give a CTA at most 2)
constexpr int kFusedFrags = 4;    // fragments a tile's short reduction takes (more: reduce_split_tile)

// The split works a CTA has finished and not yet counted in (shared memory; `n` lives in a
// register of every thread, the same value in each).
struct FusedPending {
    int4 work[kFusedPending];               // (tile, qo_start, qo_end, -) of each noted work
    mla_split::Request req[kFusedPending];  // its request b and qo_indptr[b], qo_indptr[b + 1]
    int4 tile[kFusedPending];               // (f0, f1, qo_start, qo_end) to reduce; qo_end -1: none
    int count[kFusedPending][2];            // reduce_indptr[t], [t + 1] (cp.async at the work's start)
    int fmap[kFusedPending][2];             // reduce_final_map[t] (idem); (-1, -1): t out of range
    int rows[kFusedPending][kFusedFrags];   // reduce_partial_map[f0 ..] (cp.async when noted)
};

// cp.async of one int32 from global to shared memory (4 bytes; no commit: it joins the thread's
// next commit group, and cp.async.wait_all covers it).
__device__ __forceinline__ void cp_async4(void* dst, const int* src) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"((uint32_t)__cvta_generic_to_shared(dst)), "l"(src)
                 : "memory");
}

// At the start of work wi (all threads; before the body's first cp.async wait): thread 0 fetches
// the fragment count and final map of a split work's tile into pending entry n, so that they have
// landed when the work ends (they join load_q's commit group; the body's cp_wait<0> and barrier
// after its tile loop, decode_wgmma.cuh, come before fused_note reads them, also for a work
// with no tiles).
// A tile outside [0, num_tiles) gets count (0, 0) and map (-1, -1): fused_flush rejects it.
__device__ __forceinline__ void fused_prefetch(const mla_decode_params& p, FusedPending& fp, int n, int wi, const Work& w) {
    if (p.tile_counters == nullptr || w.pql < 0 || n >= kFusedPending || threadIdx.x != 0) return;
    const int t = p.work_info_set[8 * (int64_t)wi + 7];  // (the row is in L1 since load_work)
    if (t < 0 || t >= p.reduce.num_tiles) {
        fp.count[n][0] = fp.count[n][1] = 0;
        fp.fmap[n][0] = fp.fmap[n][1] = -1;
        return;
    }
    cp_async4(&fp.count[n][0], p.reduce.reduce_indptr + t);
    cp_async4(&fp.count[n][1], p.reduce.reduce_indptr + t + 1);
    cp_async4(&fp.fmap[n][0], p.reduce.reduce_final_map + 2 * (int64_t)t);
    cp_async4(&fp.fmap[n][1], p.reduce.reduce_final_map + 2 * (int64_t)t + 1);
}

// The short reduction of tile (f0, f1, qs, qe), F = f1 - f0 <= kFusedFrags fragments whose first
// partial rows are rows[0 .. F): reduce_split_tile's arithmetic, with every load of a (row, head)
// pair, its fragments' LSEs and O, in one round, two pairs per warp in flight (warp w takes pairs
// w, w + W, ...). In the decode kernel's tail the other CTAs still stream KV, so a round trip is
// slow: this takes one per two pairs where reduce_split_tile takes about five (session 15, call 6).
__device__ __forceinline__ void reduce_tile_short(const mla_reduce_params& rp, int4 tile, const int* rows,
                                                  const mla_split::Request& req, int warp, int W, int lane) {
    constexpr int kPF = 2;  // pairs in flight per warp
    const int F = tile.y - tile.x, Hk = rp.kernel_heads, pairs = (tile.w - tile.z) * Hk;
    const int L = req.qo_end - req.qo_begin;
    const int64_t rel0 = tile.z - (int64_t)req.qo_begin * rp.qk_batch_ratio;
    int prow[kFusedFrags];
#pragma unroll
    for (int k = 0; k < kFusedFrags; ++k) prow[k] = k < F ? rows[k] : 0;
    for (int pr0 = warp; pr0 < pairs; pr0 += kPF * W) {
        float x[kPF][kFusedFrags];
        float4 v[kPF][kFusedFrags][4];
#pragma unroll
        for (int j = 0; j < kPF; ++j) {
            const int pr = pr0 + j * W;
            const mla_div::DivMod ih = mla_div::divmod_row<mla_div::kDivFused>(pr, Hk);
            const int i = ih.q, h = ih.r;
#pragma unroll
            for (int k = 0; k < kFusedFrags; ++k) {
                const bool ld = pr < pairs && k < F;
                const int64_t row = ((int64_t)prow[k] + i) * Hk + h;
                x[j][k] = ld ? mla_split::load_lse<true>(rp.partial_lse + row) : -INFINITY;
#pragma unroll
                for (int q = 0; q < 4; ++q)
                    v[j][k][q] = ld ? mla_split::load_o<true>(rp.partial_out + row * mla_split::kDV + q * 128 + 4 * lane)
                                    : make_float4(0.f, 0.f, 0.f, 0.f);
            }
        }
#pragma unroll
        for (int j = 0; j < kPF; ++j) {
            const int pr = pr0 + j * W;
            if (pr >= pairs) break;
            float m = -INFINITY;
#pragma unroll
            for (int k = 0; k < kFusedFrags; ++k)
                if (mla_split::finite_lse(x[j][k])) m = fmaxf(m, x[j][k]);
            float sum = 0.f;
            if (m > -INFINITY) {
#pragma unroll
                for (int k = 0; k < kFusedFrags; ++k)
                    if (mla_split::finite_lse(x[j][k])) sum += __expf(x[j][k] - m);
            }
            const float lse = mla_lse::combined_lse(m, sum);
            float4 acc[4];
#pragma unroll
            for (int q = 0; q < 4; ++q) acc[q] = make_float4(0.f, 0.f, 0.f, 0.f);
            if (lse > -INFINITY) {
#pragma unroll
                for (int k = 0; k < kFusedFrags; ++k) {
                    const float wk = mla_split::finite_lse(x[j][k]) ? __expf(x[j][k] - lse) : 0.f;
                    if (wk != 0.f)
#pragma unroll
                        for (int q = 0; q < 4; ++q) mla_split::add4(acc[q], wk, v[j][k][q]);
                }
            }
            const mla_div::DivMod ih = mla_div::divmod_row<mla_div::kDivFused>(pr, Hk);
            mla_split::store_tile_row(rp, req, L, rel0, ih.q, ih.r, lane, acc, lse);
        }
    }
}

// Counts in the noted split works and reduces the tiles they complete. Called by all threads of
// the CTA (the same n in each), once, after its last work; returns 0 (the new count). One thread
// per noted work adds 1 to its tile's counter (acq_rel at GPU scope, after the CTA barrier that
// orders every thread's partial stores before it: the release; the acquire, and the barrier
// after it, order the reads below after the other fragments' stores).
__device__ __forceinline__ int fused_flush(const mla_decode_params& p, FusedPending& fp, int n) {
    if (n == 0 || MLA_FUSED_ABLATE == 2) return 0;
    __syncthreads();  // every thread's partial rows stored; fp.work / fp.req written
    const int tid = threadIdx.x;
    if (tid < n) {  // check, add and decide in one round trip (fp.count / fp.fmap visible since fused_note)
        const int4 wk = fp.work[tid];
        const int t = wk.x, f0 = fp.count[tid][0], f1 = fp.count[tid][1];
        const bool ok = t >= 0 && t < p.reduce.num_tiles && fp.fmap[tid][0] == wk.y && fp.fmap[tid][1] == wk.z && f1 > f0;
        bool last = false;
        if (ok) {
            int old;
            asm volatile("atom.acq_rel.gpu.global.add.s32 %0, [%1], 1;" : "=r"(old) : "l"(p.tile_counters + t) : "memory");
            last = old == f1 - f0 - 1;
            if (last) p.tile_counters[t] = 0;  // every fragment has counted in: nothing else touches it this call
        } else if (p.error_flag) {
            atomicOr(p.error_flag, MLA_DECODE_ERR_PLAN);  // not this work's tile: never counted in
        }
        fp.tile[tid] = last ? make_int4(f0, f1, wk.y, wk.z) : make_int4(0, 0, 0, -1);
    }
    asm volatile("cp.async.wait_all;\n" ::: "memory");  // the fragment rows of fused_note
    __syncthreads();
    for (int i = 0; i < n; ++i) {
        const int4 tile = fp.tile[i];
        if (tile.w < 0 || MLA_FUSED_ABLATE == 1) continue;
        if (tile.y - tile.x <= kFusedFrags)
            reduce_tile_short(p.reduce, tile, fp.rows[i], fp.req[i], tid >> 5, blockDim.x >> 5, tid & 31);
        else
            mla_split::reduce_split_tile<true>(p.reduce, tile, tid >> 5, blockDim.x >> 5, tid & 31, fp.req[i]);
    }
    return 0;
}

// Notes work wi (split: partial_qo_loc >= 0) after all threads stored its partial rows, to be
// counted in by fused_flush after the CTA's last work. A v1_2 plan gives a cluster at most two
// split works, its first (a tile's later fragment) and its last (a tile's first fragment), and a
// tile completes no earlier than its last fragment: counting them in at the CTA's end delays no
// reduction and stalls no work in between. A plan with more than kFusedPending split works in one
// cluster is not a v1_2 plan: the extra ones are flagged (MLA_DECODE_ERR_PLAN) and never counted
// in, as a rejected work. Returns at once when the fused reduction is off or the work is unsplit.
// ("Delays no reduction" holds as CTAs end about together: a tile's last fragment in KV order is
// its CTA's first work, counted in at that CTA's end.)
__device__ __forceinline__ void fused_note(const mla_decode_params& p, FusedPending& fp, int& n, int wi, const Work& w) {
    if (p.tile_counters == nullptr || w.pql < 0) return;
    if (n == kFusedPending) {
        if (threadIdx.x == 0 && p.error_flag) atomicOr(p.error_flag, MLA_DECODE_ERR_PLAN);
        return;
    }
    if (threadIdx.x == 0) {  // the tile (work dw 7: the row is in L1 since load_work) and its rows
        const int qs = (w.qo_b * p.qk_batch_ratio + w.g * w.L) + w.t0;
        fp.work[n] = make_int4(p.work_info_set[8 * (int64_t)wi + 7], qs, qs + w.nrows / p.kernel_heads, 0);
        fp.req[n] = mla_split::Request{w.b, w.qo_b, w.qo_b + w.L};
    }
    if (threadIdx.x < kFusedFrags) {  // the fragments' first partial rows, landing by fused_flush
        const int f0 = fp.count[n][0], F = fp.count[n][1] - f0;  // (fused_prefetch's, waited for after the tile loop)
        if (threadIdx.x < F) cp_async4(&fp.rows[n][threadIdx.x], p.reduce.reduce_partial_map + f0 + threadIdx.x);
    }
    ++n;
}

}  // namespace mla_dec
