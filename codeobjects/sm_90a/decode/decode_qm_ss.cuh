// decode_qm_ss.cuh - the qm kernel's "seesaw" body for bf16 Q and KV loaded by TMA (64-row tiles:
// 64 and 128 heads): both warpgroups compute S, of alternate tiles, so that one warpgroup's
// softmax runs beside the other's MMAs. The schedule is the one FlashMLA's deep-dive write-up
// describes (docs/kernels.md item 7 has the derivation and the cost model); built with
// -DMLA_QM_SEESAW=1 (decode_qm.cuh's dispatch). Off: slower (session 17: 369-375 µs at 128
// heads against the then shipped body's 336-339; the ring exposes the loads; docs/performance.md,
// which says which checks ran on which version). Session 37 (calls 1-4, a 3-D map): 317.4 µs at
// 128 heads against the shipped body's 275.3; its chain alone with S1 staggered (229.8) is under
// the shipped body's (248.8), so its loss is its loads (+86 µs over its chain against +23-26);
// MLA_QM_SS_ORDER 1 and 2 (below) refill slot 0 earlier and lengthen the chain: 312.5 / 308.3.
// Session 38: MLA_QM_SS_ORDER 3 298.2-300.0 µs at 128 heads (the fastest seesaw with loads, the
// shipped body 267.1-274.1). compute-sanitizer synccheck passes orders 0 and 3 with
// --num-cuda-barriers 1024 (0 errors); with 64 the tool overflows its tracked barriers and the
// kernel fails under it (session 37 call 4's report).
//
// Tiles go in pairs, t0 = 2j in ring slot 0 and t1 = 2j + 1 in slot 1; O is split by columns
// (warpgroup 0 O_L = O[:, 0..255], warpgroup 1 O_R = O[:, 256..511]); m is the running row max
// before the pair, the same in both warpgroups.
//   [0] S0 = Q K0^T; m0 = max(m, rowmax S0), sc0 = 2^(m - m0), P0 = 2^(S0 - m0) (fp32, kept);
//       (m0, sc0) to shared memory, barrier SC0; O_L = sc0 O_L + P0 V0_L
//   [1] S1 = Q K1^T (beside S0); after SC0: m1 = max(m0, rowmax S1), sc1 = 2^(m0 - m1),
//       P1 = 2^(S1 - m1); P1 (bf16, fragment order) and (m1, sc1) to shared memory, barrier SC1;
//       O_R = sc0 sc1 O_R + P1 V1_R
//   [0] after SC1: P1 from the exchange buffer to registers and P0 sc1 (bf16) into it (each
//       thread reads and writes only its own fragment slots), barrier P0; O_L = sc1 O_L + P1 V1_L
//   [1] after P0: O_R += (P0 sc1) V0_R
// so O_L and O_R both end the pair relative to m1, and l (each warpgroup sums the rows of its
// own tiles' P, rescaled alike) is summed over both warpgroups in the epilogue.
//
// Loads: each slot has two mbarriers, "early" and "late", each for a set of its 64-column
// blocks, refilled by TMA as soon as their last reader is done, by that reader. Slot 0: early =
// blocks 0..3 (V_L) and 8 (rope, read by S0 only), refilled by warpgroup 0 after P0 V0_L; late =
// blocks 4..7, by warpgroup 1 after (P0 sc1) V0_R. Slot 1: early = blocks 4..8, by warpgroup 1
// after P1 V1_R; late = blocks 0..3, by warpgroup 0 after P1 V1_L. Each S runs over its slot's
// early blocks first (S0: blocks 0..3, 8, then 4..7; S1: 4..8, then 0..3), waiting for the late
// ones only then. The token flags of slot 0 are written and read by warpgroup 0 only (the early
// issuer, S0's softmax, the zeroing of masked rows), those of slot 1 by warpgroup 1 only. A tile
// count that is odd ends with a pair without t1: warpgroup 1 then hands over (m0, 1).
// Measurement hook: MLA_QMT_ABLATE & 2 (decode_qm_tma.cuh) skips the KV loads here too.
#pragma once
#include "decode/decode_qm_tma.cuh"  // kv_load.cuh, qm_common.cuh; MLA_QMT_ABLATE, qmt_ablate_flags

#ifndef MLA_QM_SEESAW
#define MLA_QM_SEESAW 0
#endif
// MLA_QM_SS_STAGGER=1 (measurement): warpgroup 1 issues S1 only once S0 is done (barrier S0),
// so that S0 has the tensor pipe alone and softmax 0 starts after 36 MMAs instead of 72.
#ifndef MLA_QM_SS_STAGGER
#define MLA_QM_SS_STAGGER 0
#endif
// MLA_QM_SS_ORDER=1 (session 37, measurement build): warpgroup 1 takes P0 first, as the plain
// online softmax orders it: after SC0 and softmax 1 (SC1), O_R = sc0 O_R + P0 V0_R, and once it
// is done slot 0's late blocks (4..7) are refilled, a P.V earlier than after (P0 sc1) V0_R at the
// pair's end (order 0, session 17's); then O_R = sc1 O_R + P1 V1_R. P0 goes to the exchange
// buffer at SC0, P1 at SC1 (each side reads the other's P into registers before it writes its
// own); both softmaxes take the lazy running max (MLA_QM_LAZY) and the rescale skip, as the
// shipped body does (order 0 takes the exact max). 56 bytes of spills (order 0: none). Session
// 37 call 3, staggered, 128 / 64 heads: 316.2 / 193.3 µs (order 0) -> 312.1 / 181.9, its chain
// alone 229.8 / 118.5 -> 254.1 / 130.6.
// MLA_QM_SS_ORDER=2: the same with warpgroup 1's two P.V back to back, as order 0 issues them:
// O_R = sc0 sc1 O_R + (P0 sc1) V0_R + P1 V1_R (P0 rescaled in bf16 where sc1 is not 1), slot 0's
// late blocks refilled once the first is done. Session 37 call 4: 308.3 / 183.2 µs, its chain
// alone 255.8 / 134.9: the back-to-back issue was not what lengthened order 1's chain.
// MLA_QM_SS_ORDER=3 (session 38): as order 1, with warpgroup 1's P0 V0_R issued before its
// softmax 1 (right after SC0 and S1's wait), so that it runs beside the softmax and ahead of
// warpgroup 0's P1 V1_L, which gates the next S0; slot 0's late blocks are refilled after SC1.
// Orders 1 and 2 issue warpgroup 1's two P.V after SC1, ahead of P1 V1_L on the tensor pipe.
// Session 38 call 2, staggered, 128 / 64 heads: 300.0 / 178.0 µs, its chain alone 260.9 / 135.3
// (its loads +39 over its chain; order 0 +85, order 1 +58).
#ifndef MLA_QM_SS_ORDER
#define MLA_QM_SS_ORDER 0
#endif
#if MLA_QM_SS_ORDER < 0 || MLA_QM_SS_ORDER > 3
#error "MLA_QM_SS_ORDER is 0, 1, 2 or 3"
#endif
// Measurement hooks of orders 1 and 2 (session 37, prepared for session 38: which lengthens their
// chain against order 0's; MLA_QM_SS_LAZYMAX applies to order 3 too, MLA_QM_SS_P0LATE does not).
// MLA_QM_SS_LAZYMAX: the running max's kLazy of their softmaxes (default MLA_QM_LAZY; 0 the exact
// max, as order 0). MLA_QM_SS_P0LATE=1: warpgroup 0 arrives on SC0 before it stores P0 and then
// arrives on P0 (kSsP0), which warpgroup 1 syncs on before it reads P0, as order 0 hands over (m0,
// sc0) without P. MLA_QM_SS_P1RELOAD=1 (order 1): warpgroup 1 keeps no P1 fragments across P0 V0_R
// and reads its own P1 slots back before it refills slot 0 (warpgroup 0 writes the next P0 only
// after that refill has landed), 16 registers fewer there.
#ifndef MLA_QM_SS_LAZYMAX
#define MLA_QM_SS_LAZYMAX MLA_QM_LAZY
#endif
#ifndef MLA_QM_SS_P0LATE
#define MLA_QM_SS_P0LATE 0
#endif
#ifndef MLA_QM_SS_P1RELOAD
#define MLA_QM_SS_P1RELOAD 0
#endif
// MLA_QM_SS_L2PF=1 (session 38): each pair prefetches into the L2 the KV rows of a tile of the
// next pair (warpgroup 0: tile t0 + 2, at the pair's start; warpgroup 1: t0 + 3, after SC0), one
// bulk prefetch per page run of the tile, so that the next pair's refills read the L2 instead
// of HBM. Session 38 call 3's profile of order 3: a sixth of warpgroup 1's stall samples
// wait on slot 1's early blocks at S1's start. Measured (call 4, 128 / 64 heads): order 3 298.2 /
// 177.5 -> 322.8 / 187.8 µs, order 0 312.2 / 192.8 -> 312.6 / 190.8: off.
#ifndef MLA_QM_SS_L2PF
#define MLA_QM_SS_L2PF 0
#endif
#if MLA_QM_SS_P1RELOAD && MLA_QM_SS_ORDER != 1
#error "MLA_QM_SS_P1RELOAD is written for MLA_QM_SS_ORDER 1"
#endif
#if MLA_QM_SS_P0LATE && MLA_QM_SS_ORDER == 3
#error "MLA_QM_SS_P0LATE is written for MLA_QM_SS_ORDER 1 and 2 (order 3 reads P0 right after SC0)"
#endif

namespace mla_wg {

struct CfgQSS {
    static constexpr int OFF_Q = 0;                          // Q, 64 rows bf16, swizzled
    static constexpr int OFF_KV = 64 * 1152;                 // ring of 2 tiles (slot 0 even, 1 odd)
    // P1, then P0 sc1 (orders 1-3: P0, then P1): [4 k-blocks][128] uint4
    static constexpr int OFF_PX = OFF_KV + 2 * kTile;
    static constexpr int OFF_SC = OFF_PX + 4 * 128 * 16;     // float2 (m, scale) [2][64]: SC0, SC1
    static constexpr int OFF_TOK = OFF_SC + 2 * 64 * 8;      // token flags [2][64]
    static constexpr int OFF_BAR = OFF_TOK + 2 * kTN * 4;    // mbarriers E0, L0, L1, E1
    static constexpr int SMEM = OFF_BAR + 4 * 8;
    static_assert(SMEM <= mla_decode_qm_smem_bytes(false), "more than the qm rows' launch_smem");
    static_assert(64 * kOPitch * 4 <= 2 * kTile, "output staging does not fit the ring");
    static_assert(2 * 128 * 2 * 4 <= OFF_KV, "the epilogue's l exchange fits the Q region");
    static_assert(OFF_KV % 1024 == 0 && OFF_BAR % 8 == 0, "swizzle atoms, mbarriers");
};

// named barriers of this body (0 is __syncthreads): the two warpgroup-local ones (zeroing of
// masked rows), SC0, SC1, P0 (order 0; orders 1-2 with MLA_QM_SS_P0LATE) and, with
// MLA_QM_SS_STAGGER, S0 (each: arrive by one warpgroup, sync by the other)
constexpr int kSsWg0 = 5, kSsSc0 = 6, kSsSc1 = 7, kSsP0 = 8, kSsWg1 = 9, kSsS0 = 10;
// the ring's mbarriers (bar0 + 8 i): early / late blocks of slot 0 / 1
constexpr int kE0 = 0, kL0 = 1, kL1 = 2, kE1 = 3;

// warpgroup 0: S0 = Q K0^T over slot 0 (descriptor dK), the early blocks (0..3, 8) as soon as
// they land, then the late ones (4..7); waited for (with MLA_QM_SS_STAGGER: then S0 arrived on)
template <class WaitFill>
__device__ __forceinline__ void qm_ss_s0(float (&sacc)[32], uint64_t dQ, uint64_t dK, WaitFill& wait_fill) {
    wait_fill(kE0);
    reg_fence(sacc);
    wg_fence();
    qm_s_steps<0, 16, true>(sacc, dQ, dK);
    qm_s_steps<32, 36, false>(sacc, dQ, dK);
    wait_fill(kL0);
    qm_s_steps<16, 32, false>(sacc, dQ, dK);
    wg_commit();
    wg_wait0();
    if (MLA_QM_SS_STAGGER) bar_arrive(kSsS0, 256);
    reg_fence(sacc);
}

// rows r0, r0 + 8's (m, sc) into the exchange x (SC0: scx, SC1: scx + 64), one thread a quad
__device__ __forceinline__ void qm_ss_put_sc(float2* x, int r0, int lane, const float (&m)[2], const float (&sc)[2]) {
    if ((lane & 3) == 0) {
        x[r0] = make_float2(m[0], sc[0]);
        x[r0 + 8] = make_float2(m[1], sc[1]);
    }
}

// warpgroup 0, after SC1: sc1, and the running max taken as m1
__device__ __forceinline__ void qm_ss_take_sc1(const float2* scx, int r0, float (&sc1)[2], float (&m_run)[2]) {
    const float2 v0 = scx[64 + r0], v1 = scx[64 + r0 + 8];
    sc1[0] = v0.y;
    sc1[1] = v1.y;
    m_run[0] = v0.x;
    m_run[1] = v1.x;
}

// warpgroup 1: (m1, sc1) to warpgroup 0 (with a tile t1: its zeroed rows and P1 written before), then its
// running max and sum taken as m1 and l1
__device__ __forceinline__ void qm_ss_hand_sc1(float2* scx, int r0, int lane, const float (&m1)[2],
                                               const float (&sc1)[2], const float (&l1)[2], float (&m_run)[2],
                                               float (&l_run)[2]) {
    qm_ss_put_sc(scx + 64, r0, lane, m1, sc1);
    fence_proxy_async();  // zeroed rows -> warpgroup 0's P.V (async proxy)
    bar_arrive(kSsSc1, 256);
    l_run[0] = l1[0];
    l_run[1] = l1[1];
    m_run[0] = m1[0];
    m_run[1] = m1[1];
}

// warpgroup 1: S1 = Q K1^T over slot 1, the early blocks (4..8) first, then the late (0..3);
// one commit group, not waited for (with MLA_QM_SS_STAGGER: issued once S0 is done)
template <class WaitFill>
__device__ __forceinline__ void qm_ss_s1_issue(float (&sacc)[32], uint64_t dQ, uint64_t dK, WaitFill& wait_fill) {
    wait_fill(kE1);
    if (MLA_QM_SS_STAGGER) bar_sync(kSsS0, 256);
    reg_fence(sacc);
    wg_fence();
    qm_s_steps<16, 36, true>(sacc, dQ, dK);
    wait_fill(kL1);
    qm_s_steps<0, 16, false>(sacc, dQ, dK);
    wg_commit();
}

// The pairs of a work in MLA_QM_SS_ORDER 1, 2 and 3 (above): both warpgroups' loops; `refill`,
// `wait_fill` and the page prefetches pe / po as decode_qm_ss_body defines them.
template <class Refill, class WaitFill, class L2Pf>
__device__ __forceinline__ void qm_ss_pairs_p0_first(const mla_dec::Work& w, char* smem,
                                                     uint32_t sbase, uint64_t dQ, int n_tiles, float sl2,
                                                     const int (&lim)[2], int cq, int r0, int wt, int wg, int lane,
                                                     float (&m_run)[2], float (&l_run)[2], float (&o)[128],
                                                     Refill& refill, PagePrefetch& pe, PagePrefetch& po,
                                                     WaitFill& wait_fill, L2Pf& l2pf) {
    using C = CfgQSS;
    float2* scx = reinterpret_cast<float2*>(smem + C::OFF_SC);
    int* tokok = reinterpret_cast<int*>(smem + C::OFF_TOK);
    uint4* px = reinterpret_cast<uint4*>(smem + C::OFF_PX);
    auto slot = [&](int s) { return C::OFF_KV + s * kTile; };
    if (wg == 0) {
        for (int t0 = 0; t0 < n_tiles; t0 += 2) {
            const bool has1 = t0 + 1 < n_tiles;
            l2pf(t0 + 2, pe);
            float sacc[32];
            qm_ss_s0(sacc, dQ, sw128_desc(sbase + slot(0), 16, 1024), wait_fill);
            float m0[2], sc0[2];
            uint32_t a[4][4];
            const bool masked = qm_softmax_p<true, MLA_QM_SS_LAZYMAX>(sacc, tokok, w.tok_begin + t0 * kTN, lim, sl2, cq,
                                                               m_run, m0, sc0, l_run, a);
            qm_lazy_unit<MLA_QM_SS_LAZYMAX>(sc0, m_run, m0);
            // every warp sees all 64 flags (a quad covers the tile's tokens): a uniform branch
            if (__any_sync(0xffffffffu, masked)) zero_flagged_v(smem + slot(0), tokok, wt, kSsWg0);
            qm_ss_put_sc(scx, r0, lane, m0, sc0);
            // P0 for warpgroup 1 (it read the last P0 before SC1; this thread read the last P1)
            if (!MLA_QM_SS_P0LATE) qm_store_p(px, a, wt);
            fence_proxy_async();    // zeroed rows -> warpgroup 1's P.V (async proxy)
            bar_arrive(kSsSc0, 256);
            if (MLA_QM_SS_P0LATE) {
                qm_store_p(px, a, wt);
                bar_arrive(kSsP0, 256);
            }
            // O_L = sc0 O_L + P0 V0_L, waited for: slot 0's early blocks are then free
            qm_pv(o, sc0, a, sw128_desc(sbase + slot(0), kVLbo, kVSbo));
            refill(t0 + 2, pe);

            bar_sync(kSsSc1, 256);  // (m1, sc1), P1, the zeroed rows of slot 1
            float sc1[2];
            qm_ss_take_sc1(scx, r0, sc1, m_run);
            l_run[0] *= sc1[0];
            l_run[1] *= sc1[1];
            if (has1) {  // O_L = sc1 O_L + P1 V1_L, waited for: slot 1's late blocks are then free
                uint32_t a1[4][4];
                qm_load_p(px, a1, wt);
                wait_fill(kL1);
                qm_pv(o, sc1, a1, sw128_desc(sbase + slot(1), kVLbo, kVSbo));
                refill(t0 + 3, po);
            }
        }
    } else {
        for (int t0 = 0; t0 < n_tiles; t0 += 2) {
            const bool has1 = t0 + 1 < n_tiles;
            float sacc[32];
            if (has1) {  // S1, committed, not waited for
                qm_ss_s1_issue(sacc, dQ, sw128_desc(sbase + slot(1), 16, 1024), wait_fill);
            } else if (MLA_QM_SS_STAGGER) {
                bar_sync(kSsS0, 256);
            }
            bar_sync(kSsSc0, 256);  // (m0, sc0), P0, the zeroed rows of slot 0
            l2pf(t0 + 3, po);
            const float2 v0 = scx[r0], v1 = scx[r0 + 8];
            const float m0[2] = {v0.x, v1.x};
            const float sc0[2] = {v0.y, v1.y};
            float l1[2] = {l_run[0] * sc0[0], l_run[1] * sc0[1]};
            float m1[2] = {m0[0], m0[1]}, sc1[2] = {1.f, 1.f};
            uint32_t a[4][4];
            // softmax 1 of S1 in s (P1 into a; m1, sc1, l1), slot 1's masked rows zeroed
            auto softmax1 = [&](float (&s)[32]) {
                const bool masked = qm_softmax_p<true, MLA_QM_SS_LAZYMAX>(s, tokok + kTN, w.tok_begin + (t0 + 1) * kTN, lim,
                                                                          sl2, cq, m0, m1, sc1, l1, a);
                qm_lazy_unit<MLA_QM_SS_LAZYMAX>(sc1, m0, m1);
                if (__any_sync(0xffffffffu, masked)) zero_flagged_v(smem + slot(1), tokok + kTN, wt, kSsWg1);
            };
            // once P0 V0_R is done: slot 0's late blocks refilled, then O_R = sc1 O_R + P1 V1_R, waited
            // for, and slot 1's early blocks refilled
            auto p1_v1r = [&]() {
                refill(t0 + 2, pe);
                if (has1) {
                    qm_pv(o, sc1, a, sw128_desc(sbase + slot(1) + 4 * kBlk, kVLbo, kVSbo));
                    refill(t0 + 3, po);
                }
            };
            if (MLA_QM_SS_ORDER == 3) {
                // O_R = sc0 O_R + P0 V0_R issued before softmax 1 (S1 waited for first), so that it
                // runs on the tensor pipe beside softmax 1, ahead of warpgroup 0's P1 V1_L; slot 0's
                // late blocks are refilled once it is done, after SC1
                uint32_t a0[4][4];
                qm_load_p(px, a0, wt);  // P0 (this thread's slots), read before P1 goes there
                wg_wait0();             // S1 (on every path: ptxas serialises every wgmma otherwise, C7520)
                reg_fence(sacc);
                // S1 into registers no wgmma defines: the softmax writes its input in place, and ptxas
                // serialises every wgmma where an accumulator is written inside another's stage (C7515)
                float s1[32];
#pragma unroll
                for (int i = 0; i < 32; ++i) asm volatile("mov.b32 %0, %1;" : "=f"(s1[i]) : "f"(sacc[i]));
                wait_fill(kL0);
                qm_pv_scaled_issue(o, sc0, a0, sw128_desc(sbase + slot(0) + 4 * kBlk, kVLbo, kVSbo));
                if (has1) {
                    softmax1(s1);
                    qm_store_p(px, a, wt);
                }
                qm_ss_hand_sc1(scx, r0, lane, m1, sc1, l1, m_run, l_run);
                wg_wait0();
                reg_fence(o);
                p1_v1r();
                continue;
            }
            if (has1) {  // softmax 1 with nothing pending (ptxas serialises wgmmas whose stage sees
                         // their accumulators touched, C7514 / C7515)
                wg_wait0();
                reg_fence(sacc);
                softmax1(sacc);
            }
            uint32_t a0[4][4];
            if (MLA_QM_SS_P0LATE) bar_sync(kSsP0, 256);
            qm_load_p(px, a0, wt);       // P0 (this thread's slots), read before P1 goes there
            if (has1) qm_store_p(px, a, wt);
            qm_ss_hand_sc1(scx, r0, lane, m1, sc1, l1, m_run, l_run);
            wait_fill(kL0);
            if (MLA_QM_SS_ORDER == 2 && has1) {
                // O_R = sc0 sc1 O_R + (P0 sc1) V0_R + P1 V1_R, the two P.V back to back (two commit
                // groups); slot 0's late blocks are refilled once the first is done
                if (__any_sync(0xffffffffu, sc1[0] != 1.f || sc1[1] != 1.f)) {
#pragma unroll
                    for (int kb = 0; kb < 4; ++kb)
#pragma unroll
                        for (int j = 0; j < 4; ++j) {  // a0[kb][j]: rows r0 + 8 (j & 1) (qm_pack_p's layout)
                            const uint32_t x = a0[kb][j];
                            a0[kb][j] = mla_dec::pack_bf16(__uint_as_float(x << 16) * sc1[j & 1],
                                                           __uint_as_float(x & 0xffff0000u) * sc1[j & 1]);
                        }
                }
                const float f[2] = {sc0[0] * sc1[0], sc0[1] * sc1[1]};
                qm_pv_scaled_issue(o, f, a0, sw128_desc(sbase + slot(0) + 4 * kBlk, kVLbo, kVSbo));
                qm_pv_issue(o, a, sw128_desc(sbase + slot(1) + 4 * kBlk, kVLbo, kVSbo));
                wg_wait1();  // (P0 sc1) V0_R done; O stays untouched while P1 V1_R runs
                refill(t0 + 2, pe);
                wg_wait0();
                reg_fence(o);
                refill(t0 + 3, po);
                continue;
            }
            // O_R = sc0 O_R + P0 V0_R, waited for: slot 0's late blocks are then free
            qm_pv(o, sc0, a0, sw128_desc(sbase + slot(0) + 4 * kBlk, kVLbo, kVSbo));
            if (MLA_QM_SS_P1RELOAD && has1) qm_load_p(px, a, wt);  // (before the refill: see above)
            p1_v1r();
        }
    }
}

template <int M>
__device__ __forceinline__ void decode_qm_ss_body(const mla_decode_params& p, char* smem) {
    using C = CfgQSS;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, wg = warp >> 2, wl = warp & 3;
    const int wt = tid & 127;
    if (!launch_ok(p, smem, C::SMEM)) return;
    const uint32_t sbase = smem_u32(smem);
    float2* scx = reinterpret_cast<float2*>(smem + C::OFF_SC);  // [2][64]: (m0, sc0), (m1, sc1)
    int* tokok = reinterpret_cast<int*>(smem + C::OFF_TOK);      // [2][64]
    uint4* px = reinterpret_cast<uint4*>(smem + C::OFF_PX);      // P1 / P0 sc1 [kb][128] (order 0)
    const uint32_t bar0 = sbase + C::OFF_BAR;                    // + 8 i, i = kE0, kL0, kL1, kE1
    if (tid < 4) mbar_init(bar0 + 8 * tid, 64);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    // bit i: the parity of mbarrier i's next phase, for the mbarriers this warpgroup waits on
    // (warpgroup 0: E0, L0, L1; warpgroup 1: E1, L1, L0), each waited once per fill
    uint32_t phase = 0;
    auto wait_fill = [&](int i) {
        mbar_wait(bar0 + 8 * i, (phase >> i) & 1);
        phase ^= 1u << i;
    };

    const mla_dec::Scales scl = mla_dec::decode_scales(p);
    const float kvsc = scl.kvsc, sl2 = scl.sl2;
    const int r0 = 16 * wl + (lane >> 2), cq = 2 * (lane & 3);  // rows r0, r0 + 8; columns cq, cq + 1
    const uint64_t dQ = sw128_desc(sbase + C::OFF_Q, 16, 1024);
    auto slot = [&](int s) { return C::OFF_KV + s * kTile; };  // byte offset of ring slot s

    const int w_begin = p.work_indptr[blockIdx.x], w_end = p.work_indptr[blockIdx.x + 1];
    for (int wi = w_begin; wi < w_end; ++wi) {
        mla_dec::Work w;
        if (!mla_dec::load_work(p, wi, M, w)) continue;
        const int n_tiles = w.tiles(kTN);

        fence_proxy_async();  // this thread's generic accesses of the ring before the next TMA writes
        __syncthreads();      // the previous work's epilogue is done with shared memory
        // this warpgroup's blocks of tile `tile` into slot tile & 1 (warpgroup 0: slot 0's early
        // blocks 0..3, 8 with the flags, slot 1's late 0..3; warpgroup 1: slot 0's late 4..7, slot
        // 1's early 4..8 with the flags); =2: no load, the flags as on good pages, a plain arrival
        auto issue = [&](int tile, const PagePrefetch& pg) {
            const int s = tile & 1;
            const uint32_t dst = sbase + slot(s);
            int* tk = tokok + s * kTN;
            const int bi = wg == 0 ? (s == 0 ? kE0 : kL1) : (s == 0 ? kL0 : kE1);
            if (MLA_QMT_ABLATE & 2) {
                if (tile < n_tiles && (wt & 1) == 0) {
                    if (wg == s) qmt_ablate_flags(w, tile, n_tiles, tk, wt);
                    mbar_arrive(bar0 + 8 * bi);
                }
                return;
            }
            if (wg == 0) {
                if (s == 0) issue_tile_tma_tpt<2, false, 0x10Fu, true>(p, w, tile, n_tiles, 0, dst, tk, bar0 + 8 * bi, pg, nullptr, wt);
                else issue_tile_tma_tpt<2, false, 0x00Fu, false>(p, w, tile, n_tiles, 0, dst, tk, bar0 + 8 * bi, pg, nullptr, wt);
            } else {
                if (s == 0) issue_tile_tma_tpt<2, false, 0x0F0u, false>(p, w, tile, n_tiles, 0, dst, tk, bar0 + 8 * bi, pg, nullptr, wt);
                else issue_tile_tma_tpt<2, false, 0x1F0u, true>(p, w, tile, n_tiles, 0, dst, tk, bar0 + 8 * bi, pg, nullptr, wt);
            }
        };
        // the pages of the next even and odd tile this warpgroup issues, looked up ahead
        PagePrefetch pe, po;
        {
            PagePrefetch pg0, pg1;
            pg0.fetch(p, w, 0, n_tiles, wt >> 1, (wt & 1) == 0);
            pg1.fetch(p, w, 1, n_tiles, wt >> 1, (wt & 1) == 0);
            issue(0, pg0);
            issue(1, pg1);
            pe.fetch(p, w, 2, n_tiles, wt >> 1, (wt & 1) == 0);
            po.fetch(p, w, 3, n_tiles, wt >> 1, (wt & 1) == 0);
        }
        // tile `tile`'s blocks of this warpgroup into their slot once this thread's reads of them
        // are done, and the page of the tile two ahead looked up
        auto refill = [&](int tile, PagePrefetch& pg) {
            fence_proxy_async();
            issue(tile, pg);
            pg.fetch(p, w, tile + 2, n_tiles, wt >> 1, (wt & 1) == 0);
        };
        // MLA_QM_SS_L2PF: tile `tile`'s rows into the L2 (page pg of this thread's token, looked up a
        // pair ahead), one bulk prefetch per page run of the tile (a page's token rows are
        // contiguous), by the thread of the run's first token, as issue_tile_tma_tpt issues boxes
        auto l2pf = [&](int tile, const PagePrefetch& pg) {
            if (!MLA_QM_SS_L2PF || (MLA_QMT_ABLATE & 2) || (wt & 1) != 0 || tile >= n_tiles) return;
            const int lt = wt >> 1, j = w.tok_begin + tile * kTN + lt, psz = 1 << p.page_size_log2;
            if (j >= w.tok_end || (lt != 0 && (j & (psz - 1)) != 0)) return;
            const char* row = kv_row_on<false>(p, pg.page, j, false);
            const int n = min(min(psz - (j & (psz - 1)), kTN - lt), w.tok_end - j);
            if (row != nullptr)
                asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(row), "r"(n * kD * 2) : "memory");
        };
        float m_run[2], l_run[2], o[128];
        int lim[2];
        qm_work_start(p, w, smem, sbase, C::OFF_Q, r0, m_run, l_run, lim, o);

        if constexpr (MLA_QM_SS_ORDER != 0) {
            qm_ss_pairs_p0_first(w, smem, sbase, dQ, n_tiles, sl2, lim, cq, r0, wt, wg, lane, m_run, l_run, o,
                                 refill, pe, po, wait_fill, l2pf);
        } else if (wg == 0) {
            for (int t0 = 0; t0 < n_tiles; t0 += 2) {
                const bool has1 = t0 + 1 < n_tiles;
                l2pf(t0 + 2, pe);
                float sacc[32];
                qm_ss_s0(sacc, dQ, sw128_desc(sbase + slot(0), 16, 1024), wait_fill);
                float m0[2], sc0[2];
                uint32_t a[4][4];
                const bool masked = qm_softmax_p<false>(sacc, tokok, w.tok_begin + t0 * kTN, lim, sl2, cq, m_run, m0,
                                                        sc0, l_run, a);
                // every warp sees all 64 flags (a quad covers the tile's tokens): a uniform branch
                if (__any_sync(0xffffffffu, masked)) zero_flagged_v(smem + slot(0), tokok, wt, kSsWg0);
                qm_ss_put_sc(scx, r0, lane, m0, sc0);
                fence_proxy_async();  // zeroed rows -> warpgroup 1's P.V (async proxy)
                bar_arrive(kSsSc0, 256);

                // O_L = sc0 O_L + P0 V0_L, waited for: slot 0's early blocks are then free
                qm_pack_p<false>(sacc, sc0, a);
                qm_pv(o, sc0, a, sw128_desc(sbase + slot(0), kVLbo, kVSbo));
                refill(t0 + 2, pe);

                bar_sync(kSsSc1, 256);  // (m1, sc1), P1, the zeroed rows of slot 1
                float sc1[2];
                qm_ss_take_sc1(scx, r0, sc1, m_run);
                uint32_t a1[4][4];
                if (has1) qm_load_p(px, a1, wt);  // this thread's slots: read before they are rewritten
                qm_pack_p<true>(sacc, sc1, a);
                qm_store_p(px, a, wt);
                bar_arrive(kSsP0, 256);
                l_run[0] *= sc1[0];
                l_run[1] *= sc1[1];
                if (has1) {  // O_L = sc1 O_L + P1 V1_L, waited for: slot 1's late blocks are then free
                    wait_fill(kL1);
                    qm_pv(o, sc1, a1, sw128_desc(sbase + slot(1), kVLbo, kVSbo));
                    refill(t0 + 3, po);
                }
            }
        } else {
            for (int t0 = 0; t0 < n_tiles; t0 += 2) {
                const bool has1 = t0 + 1 < n_tiles;
                float m0[2], sc0[2], m1[2], sc1[2] = {1.f, 1.f};
                float l1[2];
                uint32_t a[4][4];
                if (has1) {
                    float sacc[32];
                    qm_ss_s1_issue(sacc, dQ, sw128_desc(sbase + slot(1), 16, 1024), wait_fill);
                    wg_wait0();
                    reg_fence(sacc);
                    bar_sync(kSsSc0, 256);  // (m0, sc0)
                    l2pf(t0 + 3, po);
                    const float2 v0 = scx[r0], v1 = scx[r0 + 8];
                    m0[0] = v0.x;
                    m0[1] = v1.x;
                    sc0[0] = v0.y;
                    sc0[1] = v1.y;
                    l1[0] = l_run[0] * sc0[0];
                    l1[1] = l_run[1] * sc0[1];
                    const bool masked = qm_softmax_p<true>(sacc, tokok + kTN, w.tok_begin + (t0 + 1) * kTN, lim, sl2,
                                                           cq, m0, m1, sc1, l1, a);
                    if (__any_sync(0xffffffffu, masked)) zero_flagged_v(smem + slot(1), tokok + kTN, wt, kSsWg1);
                    qm_store_p(px, a, wt);
                } else {
                    if (MLA_QM_SS_STAGGER) bar_sync(kSsS0, 256);
                    bar_sync(kSsSc0, 256);
                    const float2 v0 = scx[r0], v1 = scx[r0 + 8];
                    m0[0] = m1[0] = v0.x;
                    m0[1] = m1[1] = v1.x;
                    sc0[0] = v0.y;
                    sc0[1] = v1.y;
                    l1[0] = l_run[0] * sc0[0];
                    l1[1] = l_run[1] * sc0[1];
                }
                qm_ss_hand_sc1(scx, r0, lane, m1, sc1, l1, m_run, l_run);

                // O_R = sc0 sc1 O_R (+ P1 V1_R, not waited for)
                const float f[2] = {sc0[0] * sc1[0], sc0[1] * sc1[1]};
#pragma unroll
                for (int e = 0; e < 128; ++e) o[e] *= f[(e >> 1) & 1];
                reg_fence(o);
                if (has1) qm_pv_issue(o, a, sw128_desc(sbase + slot(1) + 4 * kBlk, kVLbo, kVSbo));

                // O_R += (P0 sc1) V0_R
                bar_sync(kSsP0, 256);
                wait_fill(kL0);
                uint32_t a0[4][4];
                qm_load_p(px, a0, wt);
                qm_pv_issue(o, a0, sw128_desc(sbase + slot(0) + 4 * kBlk, kVLbo, kVSbo));
                if (has1) {  // P1 V1_R done: slot 1's early blocks are free
                    wg_wait1();
                    refill(t0 + 3, po);
                }
                wg_wait0();
                reg_fence(o);
                refill(t0 + 2, pe);
            }
        }

        // ---- epilogue (qm_common.cuh): l exchanged in the Q region (every S is done) ----
        qm_epilogue<false>(p, w, reinterpret_cast<float*>(smem + C::OFF_KV), reinterpret_cast<float*>(smem + C::OFF_Q),
                           o, l_run, m_run, kvsc);
    }
}

}  // namespace mla_wg
