// qm_common.cuh - what the qm kernel bodies (decode_qm.cuh, decode_qm_tma.cuh, decode_qm_ss.cuh) share: the
// wgmma wrappers and the V descriptor strides, the online softmax of one S tile, the P.V step of
// one warpgroup and the epilogue. 64-row tiles with the query rows on the MMA's M side.
#pragma once
#include "decode/wg_tile.cuh"  // store_lse, store_rows; wg_common.cuh

namespace mla_wg {

// D[64 x 256] += A . B, bf16 in, fp32 accumulate: A from registers (the m64k16 A fragment: 4 x
// bf16x2 per thread), B from shared memory through descriptor b, MN-major (N contiguous: trans-b).
__device__ __forceinline__ void wgmma_n256_rs(float (&d)[128], const uint32_t (&a)[4], uint64_t b) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %133, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {"
        "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"
        "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,"
        "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,"
        "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,"
        "%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,"
        "%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,"
        "%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,"
        "%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127}, "
        "{%128,%129,%130,%131}, %132, p, 1, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
          "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
          "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
          "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
          "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
          "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
          "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
          "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
          "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(1));
}

// D[64 x 64] (+)= A . B, bf16 in, fp32 accumulate, both operands K-major in shared memory, given
// by their descriptors' low words (start address and LBO fields) and their common high word (SBO
// and swizzle mode): a k-step's offset is a 32-bit add on each low word (it never carries: shared
// addresses stay below 2^18, so the 14-bit address field does not overflow) and the 64-bit
// operands are put together in the asm, instead of the 64-bit adds and moves to uniform registers
// the compiler emits between consecutive MMAs for uint64_t operands (session 17).
__device__ __forceinline__ void wgmma_n64_ss_lo(float (&d)[32], uint32_t alo, uint32_t blo, uint32_t hi, int acc) {
    asm volatile(
        "{\n.reg .pred p;\n.reg .b64 da, db;\nsetp.ne.b32 p, %35, 0;\n"
        "mov.b64 da, {%32, %34};\nmov.b64 db, {%33, %34};\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {"
        "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"
        "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, "
        "da, db, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
        : "r"(alo), "r"(blo), "r"(hi), "r"(acc));
}

// B descriptor strides of the V operand, MN-major 128-byte-swizzle canonical layout (PTX ISA):
// LBO = 8 KB between 64-column blocks (along N), SBO = 1 KB between 8-token groups (along K).
constexpr uint32_t kVLbo = kBlk, kVSbo = 1024;

// S [64 x 64] (+)= Q . K^T over k-steps KK0 .. KK1 - 1 (16 columns each; 36 in all), issued by
// one warpgroup, neither fenced nor committed; kFirst: the first step overwrites the accumulator.
// dQ and dK are sw128_desc(., 16, 1024) descriptors (K-major, 128-byte swizzle): their common high
// word is sw128_desc_hi(1024) and the steps add to the low words only (wgmma_n64_ss_lo; session
// 17: the 64-bit adds cost the hot loop ~10 instructions per MMA, these ~6, 128 heads -1.6%).
// qm_s_steps_lo: the same from the descriptors' low words, already broadcast.
template <int KK0, int KK1, bool kFirst>
__device__ __forceinline__ void qm_s_steps_lo(float (&sacc)[32], uint32_t qlo, uint32_t klo) {
#pragma unroll
    for (int kk = KK0; kk < KK1; ++kk) {
        const uint32_t koff = uint32_t(((kk >> 2) * kBlk + (kk & 3) * 32) >> 4);
        wgmma_n64_ss_lo(sacc, qlo + koff, klo + koff, sw128_desc_hi(1024), kFirst && kk == KK0 ? 0 : 1);
    }
}
template <int KK0, int KK1, bool kFirst>
__device__ __forceinline__ void qm_s_steps(float (&sacc)[32], uint64_t dQ, uint64_t dK) {
    const uint32_t qlo = desc_lo_bcast(dQ), klo = desc_lo_bcast(dK);  // (MLA_WG_ULO: uniform registers)
    qm_s_steps_lo<KK0, KK1, kFirst>(sacc, qlo, klo);
}

// S [64 rows x 64 tokens] = Q . K^T issued by one warpgroup (36 x m64n64k16, qm_s_steps), one
// commit group, not waited for. MMA false: nothing issued (ablation builds; the group is empty).
template <bool MMA = true>
__device__ __forceinline__ void qm_s_mma(float (&sacc)[32], uint64_t dQ, uint64_t dK) {
    reg_fence(sacc);
    wg_fence();
    if constexpr (MMA) qm_s_steps<0, kD / 16, true>(sacc, dQ, dK);
    wg_commit();
}

// MLA_QM_FAST_SOFTMAX=1: qm_softmax_p's path for tiles without masked keys. On in the bf16 qm cubin
// (mla_decode_qm_bf16_bf16.cu; session 42: 128 heads -1.6%, 128 heads MTP 2 -2.1%), off elsewhere
// (the fp8 TMA body: +1.9% at 128 heads, session 42; session 17: no gain on the lock-step cp.async
// body, fp8 3% slower; docs/performance.md).
#ifndef MLA_QM_FAST_SOFTMAX
#define MLA_QM_FAST_SOFTMAX 0
#endif

// The online softmax of one S tile in place (s[e]: row r0 + 8 ((e >> 1) & 1), token 8 (e >> 2) +
// cq + (e & 1) of the tile, whose first token is jt0): masks keys flagged 0 in tk[] and keys past
// the row's causal limit lim[], scales by sl2 (softmax scale x log2 e x the dtype scales), and
// against the running max m_in gives m_out = max(m_in, row max), scale = 2^(m_in - m_out) (0 while
// m_in is -inf), P = 2^(s - m_out) (0 while m_out is -inf: no -inf - -inf), and l = l scale +
// this thread's share of the row sums of P (summed over the quad in the epilogue). P goes to s in
// fp32, or with kPack to a as bf16 A fragments of the tile's 4 k-blocks (qm_pack_p's layout; s is
// then left holding intermediate values). m_out must not alias m_in. Returns whether
// one of this thread's 16 keys is flagged 0 in tk[] (a quad covers the tile's 64 tokens, so
// __any_sync over a warp covers the tile). kLazy > 0 (the fp8 body, decode_qm8.cuh, MLA_QM8_LAZY;
// the bf16-P bodies through qm_softmax, MLA_QM_LAZY): the running max moves only when the row max
// exceeds it by more than kLazy (base-2 units), so scale is 1 on most tiles and P stays below
// 2^kLazy (f16 and bf16 P hold that to the same relative precision as P <= 1); the softmax is the
// same function (o = sum p v / sum p for any reference max). The MLA_QM_FAST_SOFTMAX path (above)
// takes the same running max (lazy since session 33; before, the exact one whatever kLazy was).
template <bool kPack, int kLazy = 0>
__device__ __forceinline__ bool qm_softmax_p(float (&s)[32], const int* tk, int jt0, const int (&lim)[2], float sl2,
                                             int cq, const float (&m_in)[2], float (&m_out)[2], float (&scale)[2],
                                             float (&l)[2], uint32_t (&a)[4][4]) {
#if MLA_QM_FAST_SOFTMAX
    // A tile with no flagged key and no causal limit inside it, in every row of the warp (the
    // common case): no per-key mask, the row max taken on the raw S as a tree (sl2 > 0 keeps
    // the order), P = 2^(S sl2 - m) by one FFMA and one EX2 per key, the row sums as trees.
    {
        // (each lane tests 2 of the tile's 64 flags: the warp covers the tile, as the quads do)
        const int ln = threadIdx.x & 31;
        const bool interior = tk[ln] != 0 && tk[ln + 32] != 0 && jt0 + kTN - 1 <= lim[0] && jt0 + kTN - 1 <= lim[1];
        if (__all_sync(0xffffffffu, interior) && sl2 > 0.f) {
            float t[2][8];
#pragma unroll
            for (int g = 0; g < 8; ++g) {
                t[0][g] = fmaxf(s[4 * g], s[4 * g + 1]);
                t[1][g] = fmaxf(s[4 * g + 2], s[4 * g + 3]);
            }
#pragma unroll
            for (int i = 0; i < 2; ++i) {
                float mx = fmaxf(fmaxf(fmaxf(t[i][0], t[i][1]), fmaxf(t[i][2], t[i][3])),
                                 fmaxf(fmaxf(t[i][4], t[i][5]), fmaxf(t[i][6], t[i][7])));
                mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
                mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
                mx *= sl2;
                if constexpr (kLazy > 0) m_out[i] = mx > m_in[i] + float(kLazy) ? mx : m_in[i];  // (as below)
                else m_out[i] = fmaxf(m_in[i], mx);
                scale[i] = m_in[i] == -INFINITY ? 0.f : ex2(m_in[i] - m_out[i]);
            }
#pragma unroll
            for (int g = 0; g < 8; ++g) {
#pragma unroll
                for (int i = 0; i < 2; ++i) {
                    const float pa = ex2(fmaf(s[4 * g + 2 * i], sl2, -m_out[i]));
                    const float pb = ex2(fmaf(s[4 * g + 2 * i + 1], sl2, -m_out[i]));
                    t[i][g] = pa + pb;
                    if (kPack) {
                        a[g >> 1][2 * (g & 1) + i] = mla_dec::pack_bf16(pa, pb);
                    } else {
                        s[4 * g + 2 * i] = pa;
                        s[4 * g + 2 * i + 1] = pb;
                    }
                }
            }
#pragma unroll
            for (int i = 0; i < 2; ++i)
                l[i] = l[i] * scale[i] + (((t[i][0] + t[i][1]) + (t[i][2] + t[i][3])) +
                                          ((t[i][4] + t[i][5]) + (t[i][6] + t[i][7])));
            return false;
        }
    }
#endif
    float mx[2] = {-INFINITY, -INFINITY};
    bool masked = false;
#pragma unroll
    for (int e = 0; e < 32; ++e) {
        const int ri = (e >> 1) & 1, jj = 8 * (e >> 2) + cq + (e & 1);
        masked |= tk[jj] == 0;
        s[e] = (tk[jj] != 0 && jt0 + jj <= lim[ri]) ? s[e] * sl2 : -INFINITY;
        mx[ri] = fmaxf(mx[ri], s[e]);
    }
#pragma unroll
    for (int i = 0; i < 2; ++i) {
        mx[i] = fmaxf(mx[i], __shfl_xor_sync(0xffffffffu, mx[i], 1));
        mx[i] = fmaxf(mx[i], __shfl_xor_sync(0xffffffffu, mx[i], 2));
        if constexpr (kLazy > 0) m_out[i] = mx[i] > m_in[i] + float(kLazy) ? mx[i] : m_in[i];  // -inf: takes mx
        else m_out[i] = fmaxf(m_in[i], mx[i]);
        scale[i] = m_in[i] == -INFINITY ? 0.f : ex2(m_in[i] - m_out[i]);
        l[i] *= scale[i];
    }
#pragma unroll
    for (int e = 0; e < 32; e += 2) {
        const int ri = (e >> 1) & 1;
        const float pa = m_out[ri] == -INFINITY ? 0.f : ex2(s[e] - m_out[ri]);
        const float pb = m_out[ri] == -INFINITY ? 0.f : ex2(s[e + 1] - m_out[ri]);
        l[ri] += pa + pb;
        if (kPack) {
            a[e >> 3][(e >> 1) & 3] = mla_dec::pack_bf16(pa, pb);
        } else {
            s[e] = pa;
            s[e + 1] = pb;
        }
    }
    return masked;
}

// P (fp32, qm_softmax_p's layout) times the row factors f[] as bf16 A fragments of the tile's 4
// k-blocks (16 tokens each): {p[8kb], p[8kb+1]}, {p[8kb+2], ..+3}, {p[8kb+4], ..+5}, {p[8kb+6], ..+7}
// (the m64nN accumulator layout of columns 16kb..16kb+15 is the m64k16 A fragment).
template <bool kScale>
__device__ __forceinline__ void qm_pack_p(const float (&s)[32], const float (&f)[2], uint32_t (&a)[4][4]) {
#pragma unroll
    for (int e = 0; e < 32; e += 2) {
        const float g = kScale ? f[(e >> 1) & 1] : 1.f;
        a[e >> 3][(e >> 1) & 3] = mla_dec::pack_bf16(kScale ? s[e] * g : s[e], kScale ? s[e + 1] * g : s[e + 1]);
    }
}

// MLA_QM_LAZY (base-2 units; 0 the exact running max): qm_softmax's kLazy, the lazy running max
// of the bf16-P qm bodies (the fp8 body has its own, MLA_QM8_LAZY). With it, alpha is exactly 1
// on a row whose max did not move, and qm_pv_scaled_issue skips the rescale of a warp's O where
// every alpha of the warp is 1 (its 16 rows: the same rows in both warpgroups).
// Shipped 8 (session 29 call 2, A/B on one machine: 128 heads 306.1 -> 302.2 µs, 64 heads 180.7
// -> 179.3); 0 rebuilds session 28's SASS.
#ifndef MLA_QM_LAZY
#define MLA_QM_LAZY 8
#endif
#if MLA_QM_LAZY < 0 || MLA_QM_LAZY > 14
#error "MLA_QM_LAZY is 0 (exact) .. 14"
#endif

// With the lazy running max (kLazy > 0): the rows' rescale factor made exactly 1 where
// qm_softmax_p kept the max (m_out == m_in), the test of qm_pv_scaled_issue's rescale skip;
// kLazy 0 (the exact max): nothing.
template <int kLazy>
__device__ __forceinline__ void qm_lazy_unit(float (&scale)[2], const float (&m_in)[2], const float (&m_out)[2]) {
    if constexpr (kLazy > 0) {
        scale[0] = m_out[0] == m_in[0] ? 1.f : scale[0];
        scale[1] = m_out[1] == m_in[1] ? 1.f : scale[1];
    }
}

// The online softmax of S tile `sacc` in warpgroup 0 of the TMA and cp.async bodies
// (qm_softmax_p against m_run, then m_run = the new max): the rescale factor alpha of the rows' O,
// and P as bf16 A fragments. Returns qm_softmax_p's masked flag.
__device__ __forceinline__ bool qm_softmax(float (&sacc)[32], const int* tk, int jt0, const int (&lim)[2], float sl2,
                                           int cq, float (&m_run)[2], float (&l_run)[2], float (&alpha)[2],
                                           uint32_t (&a)[4][4]) {
    float mn[2];
    const bool masked = qm_softmax_p<true, MLA_QM_LAZY>(sacc, tk, jt0, lim, sl2, cq, m_run, mn, alpha, l_run, a);
    qm_lazy_unit<MLA_QM_LAZY>(alpha, m_run, mn);
    m_run[0] = mn[0];
    m_run[1] = mn[1];
    return masked;
}

// P's A fragments through shared memory, in fragment order (pex: [4 k-blocks][128] uint4): thread
// wt of warpgroup 1 reads exactly what thread wt of warpgroup 0 wrote.
__device__ __forceinline__ void qm_store_p(uint4* pex, const uint32_t (&a)[4][4], int wt) {
#pragma unroll
    for (int kb = 0; kb < 4; ++kb) pex[kb * 128 + wt] = make_uint4(a[kb][0], a[kb][1], a[kb][2], a[kb][3]);
}
__device__ __forceinline__ void qm_load_p(const uint4* pex, uint32_t (&a)[4][4], int wt) {
#pragma unroll
    for (int kb = 0; kb < 4; ++kb) {
        const uint4 v = pex[kb * 128 + wt];
        a[kb][0] = v.x;
        a[kb][1] = v.y;
        a[kb][2] = v.z;
        a[kb][3] = v.w;
    }
}

// O_w (+)= P . V_w over a tile's 4 k-blocks (4 x m64n256k16, A = P from registers, B = V through
// descriptor dV, MN-major), one commit group, not waited for; the caller scaled O. MMA false:
// nothing issued (ablation builds; the group is empty).
template <bool MMA = true>
__device__ __forceinline__ void qm_pv_issue(float (&o)[128], uint32_t (&a)[4][4], uint64_t dV) {
#pragma unroll
    for (int kb = 0; kb < 4; ++kb)
#pragma unroll
        for (int i = 0; i < 4; ++i) asm volatile("" : "+r"(a[kb][i])::"memory");
    wg_fence();
#if MLA_WG_ULO  // (the low word broadcast from lane 0 and a 32-bit add a k-block; dV's high word kept)
    const uint32_t vlo = desc_lo_bcast(dV), vhi = uint32_t(dV >> 32);
#pragma unroll
    for (int kb = 0; kb < (MMA ? 4 : 0); ++kb)
        wgmma_n256_rs(o, a[kb], (uint64_t(vhi) << 32) | (vlo + uint32_t((kb * 2048) >> 4)));
#else
#pragma unroll
    for (int kb = 0; kb < (MMA ? 4 : 0); ++kb) wgmma_n256_rs(o, a[kb], dV + uint64_t((kb * 2048) >> 4));
#endif
    wg_commit();
}

// One warpgroup's O_w = O_w * alpha + P . V_w over a tile's 4 k-blocks: O scaled by the rows'
// alpha, then qm_pv_issue (one commit group, not waited for). MMA false: the scaling only.
template <bool MMA = true>
__device__ __forceinline__ void qm_pv_scaled_issue(float (&o)[128], const float (&alpha)[2], uint32_t (&a)[4][4],
                                                   uint64_t dV) {
#if MLA_QM_LAZY  // (a warp's O unscaled where its rows' alpha are all 1: most tiles, with the lazy max)
    if (__any_sync(0xffffffffu, alpha[0] != 1.f || alpha[1] != 1.f))
#endif
#pragma unroll
        for (int e = 0; e < 128; ++e) o[e] *= alpha[(e >> 1) & 1];
    reg_fence(o);
    qm_pv_issue<MMA>(o, a, dV);
}

// The same, waited for (ablation builds: MMA false, the scaling only).
template <bool MMA = true>
__device__ __forceinline__ void qm_pv(float (&o)[128], const float (&alpha)[2], uint32_t (&a)[4][4], uint64_t dV) {
    qm_pv_scaled_issue<MMA>(o, alpha, a, dV);
    wg_wait0();
    reg_fence(o);
}

// A work's start in the TMA bodies (all 256 threads), after their first tiles are issued: Q
// staged (load_q: rows past nrows zero) and visible to the MMAs; the rows' running max and sum,
// causal limits (rows r0, r0 + 8) and O zeroed. kLoadQ false: the caller issued Q's copies
// (decode_qm_tma.cuh's MLA_QMT_PGFIRST), only waited for here.
template <bool kLoadQ = true>
__device__ __forceinline__ void qm_work_start(const mla_decode_params& p, const mla_dec::Work& w, char* smem,
                                              uint32_t sbase, int off_q, int r0, float (&m_run)[2], float (&l_run)[2],
                                              int (&lim)[2], float (&o)[128]) {
    if constexpr (kLoadQ) load_q<64, false>(p, w, smem, sbase, off_q, threadIdx.x);
    cp_wait<0>();
    fence_proxy_async();  // Q (cp.async) -> the MMAs' async proxy
    __syncthreads();
#pragma unroll
    for (int i = 0; i < 2; ++i) {
        m_run[i] = -INFINITY;
        l_run[i] = 0.f;
        lim[i] = mla_dec::row_limit(p, w, r0 + 8 * i);
    }
#pragma unroll
    for (int e = 0; e < 128; ++e) o[e] = 0.f;
}

// The epilogue of a work (all 256 threads): l summed over the quad and over both warpgroups'
// exchanged sums (lx: [2][128] float2; warpgroup 1's l_run is 0 but in the seesaw body), o = O / l * kv_scale (0 for
// a row with no key) staged as fp32 rows in obuf ([64][kOPitch], the idle ring) and written out
// (store_rows), lse = (m + log2 l) ln 2 by warpgroup 0. SYNC_FIRST: a CTA barrier before lx is
// written (the body still uses lx's memory in its loop). tr: the traced work of an MLA_WG_TRACE
// build (trace.cuh: 27 the sums exchanged, 25 the output staged; no code otherwise).
// MLA_QM_LSE_LATE=1 (session 33, measurement hook; 0 shipped): the LSE stores after the staging
// barrier instead of before it (where the staging step's wait goes with them).
#ifndef MLA_QM_LSE_LATE
#define MLA_QM_LSE_LATE 0
#endif
template <bool SYNC_FIRST>
__device__ __forceinline__ void qm_epilogue(const mla_decode_params& p, const mla_dec::Work& w, float* obuf, float* lx,
                                            const float (&o)[128], const float (&l_run)[2], const float (&m_run)[2],
                                            float kvsc, bool tr = false) {
    (void)tr;
    // thread tid = 128 wg + wt; its rows r0, r0 + 8 and columns cq, cq + 1 in the m64nN
    // accumulator layout
    const int tid = threadIdx.x, lane = tid & 31, wg = tid >> 7, wt = tid & 127;
    const int r0 = 16 * ((tid >> 5) & 3) + (lane >> 2), cq = 2 * (lane & 3);
    float lt[2];
#pragma unroll
    for (int i = 0; i < 2; ++i) {
        lt[i] = l_run[i] + __shfl_xor_sync(0xffffffffu, l_run[i], 1);
        lt[i] += __shfl_xor_sync(0xffffffffu, lt[i], 2);
    }
    if (SYNC_FIRST) __syncthreads();
    *reinterpret_cast<float2*>(lx + (wg * 128 + wt) * 2) = make_float2(lt[0], lt[1]);
    __syncthreads();  // every MMA and load done, the ring free; the sums exchanged
    MLA_TRACE(tr && threadIdx.x == 0, 27);
    {
        const float2 ol = *reinterpret_cast<const float2*>(lx + ((wg ^ 1) * 128 + wt) * 2);
        lt[0] += ol.x;
        lt[1] += ol.y;
    }
    // the rows' two factors, once: written inside the loop below, the division (MUFU.RCP, its
    // refinement and a call to the slow path) was emitted for each of the 64 pairs, ~1,500
    // instructions that each CTA fetched cold (session 33: the staging step took ~7.5 µs)
    float inv[2];
#pragma unroll
    for (int i = 0; i < 2; ++i) inv[i] = lt[i] > 0.f ? kvsc / lt[i] : 0.f;
#pragma unroll
    for (int e = 0; e < 128; e += 2) {
        const int ri = (e >> 1) & 1;
        const int row = r0 + 8 * ri, col = 256 * wg + 8 * (e >> 2) + cq;
        *reinterpret_cast<float2*>(obuf + row * kOPitch + col) = make_float2(o[e] * inv[ri], o[e + 1] * inv[ri]);
    }
    auto lse_out = [&] {
        if (wg == 0 && (lane & 3) == 0) {
#pragma unroll
            for (int i = 0; i < 2; ++i) {
                const int row = r0 + 8 * i;
                if (row < w.nrows) store_lse(p, w, row, lt[i] > 0.f ? (m_run[i] + __log2f(lt[i])) * kLn2 : -INFINITY);
            }
        }
    };
    if (!MLA_QM_LSE_LATE) lse_out();
    __syncthreads();  // staged output visible
    MLA_TRACE(tr && tid == 0, 25);
    if (MLA_QM_LSE_LATE) lse_out();
    store_rows(p, w, obuf, tid);
}

}  // namespace mla_wg
