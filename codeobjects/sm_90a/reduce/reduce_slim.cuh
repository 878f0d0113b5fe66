// reduce_slim.cuh - mla_reduce_slim_bf16, the reducer of a few long-split tiles (mla_reduce.csv
// spread 1 since session 26), included by mla_reduce.cu after its helpers (row_of, store_row).
//
// Why slim: the 16-row bf16 decode CTA (256 threads at 205 registers: 53248 of the SM's 65536,
// ~171 KB of shared memory) leaves 12288 registers on its SM. The wide reducer's CTA (512 threads
// at 54 registers) never fits beside it, so at b = 1 its 64 CTAs start only as decode CTAs exit
// and read the plan after the decode has ended (~8.6 µs of the row after the decode kernel,
// session 25). This kernel's CTA is 128 threads at most 96 registers and 4.2 KB of shared
// memory (3.1 KB declared, 1 KB the system's): with the decode's late trigger
// (MLA_WG_LATE_TRIG) its grid is placed beside the decode CTAs during their last tiles, reads
// the plan there, and waits (griddepcontrol.wait).
//
// Grid (tiles, M x 8), launch_units_per_cta 1, exactly 128 threads: CTA (tile, u) reduces unit u,
// (row i, head h) = u / 8 and the 64-column eighth e = u % 8 of the tile. Thread (g, c) =
// (tid / 16, tid % 16) holds columns e * 64 + 4c .. + 3 of fragments g, g + 8, ... of each
// batch of 128 fragments: sixteen 16-byte loads in flight, and one partial LSE, that of fragment
// 8c + g, which the group's lanes exchange by shuffles. So every load after the wait is issued in
// one round (the first batch's partial rows are looked up before the wait), the weights need no
// second pass: each group keeps a running (m, s, acc) over its fragments, rescaled when m grows,
// and the 8 groups meet in shared memory:
//   M = max m_g, S = sum_g exp(m_g - M) s_g, o = sum_g exp(m_g - M) acc_g / S, lse* = M + ln S,
// equal to the other reducers' o = sum_k exp(lse_k - lse*) o_k. A fragment with a non-finite
// lse_k gets weight 0 and its o_k (loaded before its weight is known) is never added, so 0 * NaN
// cannot occur; all -inf -> o = 0, lse* = -inf.
#pragma once

// Measurement hook -DMLA_SLIM_TRACE=1 (0 shipped: no code): thread 0 of each CTA takes
// %globaltimer stamps (ns) at entry, after the plan reads, after the grid wait, once its loads
// have landed, and before its store, and writes them with %smid over the first 6 words of its own
// 64-column out slice after the result (results are then wrong); benchmarks/decode_trace.py
// --slim-trace reads them back beside the decode kernel's (MLA_WG_TRACE).
#ifndef MLA_SLIM_TRACE
#define MLA_SLIM_TRACE 0
#endif
__device__ __forceinline__ unsigned long long slim_now() {
    unsigned long long t = 0;
#if MLA_SLIM_TRACE
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)::"memory");
#endif
    return t;
}

extern "C" __global__ void __maxnreg__(96)
    mla_reduce_slim_bf16(const __grid_constant__ mla_reduce_params p) {
    constexpr int kG = 8, kL = 16, kBatch = kG * kL;  // fragment groups, lanes a group, fragments a batch
    __shared__ int64_t s_row[kBatch];  // partial row of the first batch's fragment k
    __shared__ float4 s_acc[kG][kL];   // the groups' column sums
    __shared__ float s_m[kG], s_s[kG];
    const int tile = blockIdx.x, tid = threadIdx.x, c = tid % kL, g = tid / kL;
    unsigned long long st[5] = {slim_now(), 0, 0, 0, 0};  // MLA_SLIM_TRACE stamps (thread 0)
    const int Hk = p.kernel_heads;
    const int u = blockIdx.y;  // `live` is CTA-uniform
    bool live = tile < p.num_tiles && blockDim.x == kG * kL;
    int f0 = 0, f1 = 0, qs = 0, qe = 0, qo0 = 0, qo1 = 0;
    if (live) {  // the first loads depend on nothing but the tile: issued together
        f0 = p.reduce_indptr[tile], f1 = p.reduce_indptr[tile + 1];
        qs = p.reduce_final_map[2 * tile], qe = p.reduce_final_map[2 * tile + 1];
        qo0 = p.qo_indptr[0], qo1 = p.qo_indptr[1];
    }
    live = live && f1 > f0 && u < (qe - qs) * Hk * 8;  // (unsplit tile: the decode kernel wrote it)
    const int e = u % 8, i = (u / 8) / Hk, h = (u / 8) % Hk;
    int b = 0, t = 0, gh = 0;
    live = live && row_of(p, qs + i, qo0, qo1, b, t, gh);
    // The plan before the wait (the decode kernel does not write it: split_tile.cuh says why that
    // is safe), the partials after it; every thread waits (mla_reduce_tiles_bf16's closing comment).
    if (live && tid < f1 - f0) s_row[tid] = ((int64_t)p.reduce_partial_map[f0 + tid] + i) * Hk + h;
    __syncthreads();
    st[1] = slim_now();
    wait_for_decode();
    st[2] = slim_now();
    if (!live) return;

    const int col = e * 64 + 4 * c;
    float m = -INFINITY, s = 0.f;  // this group's running max and sum of exp(lse_k - m)
    float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
    for (int base = f0; base < f1; base += kBatch) {
        const int n = min(kBatch, f1 - base);
        if (base != f0) {  // a later batch's partial rows (the loop is CTA-uniform)
            __syncthreads();  // the previous batch's readers are done
            if (tid < n) s_row[tid] = ((int64_t)p.reduce_partial_map[base + tid] + i) * Hk + h;
            __syncthreads();
        }
        const auto row = [&](int k) -> int64_t { return s_row[k]; };
        float4 v[kL];
#pragma unroll
        for (int j = 0; j < kL; ++j) {
            const int k = j * kG + g;
            v[j] = k < n ? __ldg(reinterpret_cast<const float4*>(p.partial_out + row(k) * kDV + col))
                         : make_float4(0.f, 0.f, 0.f, 0.f);
        }
        const int kx = c * kG + g;  // the fragment whose lse this lane loads
        float x = kx < n ? p.partial_lse[row(kx)] : -INFINITY;
        // ptxas would otherwise schedule the shuffles of x (and so the wait for it) between the
        // 16-byte loads: two round trips. A zero that depends on every load (tid < 128, checked
        // by `live`) ties them all to before the first shuffle: one round trip.
        unsigned dep = 0;
#pragma unroll
        for (int j = 0; j < kL; ++j) dep |= __float_as_uint(v[j].x);
        x = __uint_as_float(__float_as_uint(x) | (dep & (unsigned(tid) >> 7)));
        // (the first batch's loads have landed: a condition on x, which waits for all of them)
        if (MLA_SLIM_TRACE && base == f0 && __float_as_uint(x) != 0x7fbadbadu) st[3] = slim_now();
        float mb = finite_lse(x) ? x : -INFINITY;  // the batch's largest finite lse_k of this group
#pragma unroll
        for (int o = kL / 2; o > 0; o >>= 1) mb = fmaxf(mb, __shfl_xor_sync(0xffffffffu, mb, o, kL));
        const float mn = fmaxf(m, mb);
        const float sc = m > -INFINITY ? __expf(m - mn) : 0.f;  // (m = -inf: s and acc are 0)
        s *= sc;
        acc.x *= sc, acc.y *= sc, acc.z *= sc, acc.w *= sc;
        m = mn;
#pragma unroll
        for (int j = 0; j < kL; ++j) {
            const float xj = __shfl_sync(0xffffffffu, x, j, kL);  // lane j holds fragment j kG + g
            const float wj = finite_lse(xj) ? __expf(xj - m) : 0.f;
            s += wj;
            if (wj != 0.f) add4(acc, wj, v[j]);
        }
    }
    if (c == 0) s_m[g] = m, s_s[g] = s;
    s_acc[g][c] = acc;
    __syncthreads();
    if (g != 0) return;
    float M = -INFINITY, S = 0.f;
#pragma unroll
    for (int k = 0; k < kG; ++k) M = fmaxf(M, s_m[k]);
    acc = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
    for (int k = 0; k < kG; ++k) {  // the same order in every thread
        const float w = s_m[k] > -INFINITY ? __expf(s_m[k] - M) : 0.f;
        S += w * s_s[k];
        add4(acc, w, s_acc[k][c]);
    }
    const float lse = mla_lse::combined_lse(M, S);
    const float inv = lse > -INFINITY ? 1.f / S : 0.f;
    acc.x *= inv, acc.y *= inv, acc.z *= inv, acc.w *= inv;
    // columns e * 64 + 4c = quarter e / 2, lane (e % 2) * 16 + c of store_token_row
    if (MLA_SLIM_TRACE) st[4] = slim_now();
    store_row(p, b, t, gh, h, e / 2, (e % 2) * 16 + c, acc, lse);
#if MLA_SLIM_TRACE
    __syncwarp(0xffffu);  // group 0's stores, then thread 0's record over the slice's first words
    if (tid == 0) {
        unsigned smid;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
        const int head = gh * p.kernel_heads + h;
        unsigned long long* dst = reinterpret_cast<unsigned long long*>(
            static_cast<char*>(p.out) + (((p.qo_indptr[b] + t) * p.out_stride_token + (int64_t)head * p.out_stride_head +
                                          e * 64) * (p.out_fp32 ? 4 : 2)));
        for (int k = 0; k < 5; ++k) dst[k] = st[k];
        dst[5] = smid;
    }
#endif
}
