// wg_common.cuh - what every sm_90a wgmma decode body shares (decode_wgmma.cuh, decode_qm.cuh,
// decode_ra.cuh): tile constants, fences and barriers, the wgmma wrappers and their shared-memory
// descriptors, the 128-byte swizzle, the launch check and the staging of Q. Layouts and formulation:
// decode_wgmma.cuh; design: docs/kernels.md.
#pragma once
#include "decode/decode_kernel.cuh"  // cp.async, ex2, fp8 widening, Work

// Measurement hook (docs/kernels.md, "placing the time"): a build with -DMLA_WG_ABLATE=1 skips the
// O^T MMAs, 2 the S^T MMAs, 4 all MMA-warpgroup work after each tile lands (loads only), 8 (the
// ring body, decode_wgmma.cuh) a work's epilogue: the output staging, the LSE and the stores, its
// barriers kept (session 22); 16 its output stores only, 32 its output staging only (session 23);
// 64 every work's output rows written over one region per CTA (wg_tile.cuh, out_token: in every
// body that stores through store_rows_part; session 23); 128 tile_mma's online softmax (its
// masks, exponentials, P^T stores and its warpgroup barriers; alpha 1, the MMAs read a stale P^T:
// the MMA warpgroup's time a tile without its softmax; session 28); within tile_softmax (session
// 29): 256 without the proxy fence before barrier C (and, since session 35, before the one-barrier
// lazy path's barrier C'), 512 without the P^T conversions and stores,
// 1024 without the three shuffle rounds of the column maxima (each thread's own 2 tokens a column;
// with the lazy max this also changes which tiles take the moved path: not a clean cost).
// Results are then wrong; the shipped cubins are built with 0.
#ifndef MLA_WG_ABLATE
#define MLA_WG_ABLATE 0
#endif
// Measurement variant (session 9): -DMLA_WG_NC32=1 runs the 32-row tiles on both warpgroups, 16
// query rows each, as the 64-row tiles run (shipped: 0, one MMA warpgroup).
// Measurement hooks (session 11, 16-row TMA path of the ring body; results then wrong, shipped 0):
// -DMLA_WG_NOLOAD=1 loads a work's first STAGES tiles only and runs every later tile's MMAs on the
// stale slots (the MMA warpgroup's time per tile, with no load beside it); -DMLA_WG_SPIN=N makes
// the MMA warpgroup spin N clocks per tile after its MMAs (with MLA_WG_ABLATE=4: a slot held N
// clocks with no shared-memory traffic). NOLOAD turns MLA_WG_DEC off (decode_wgmma.cuh).
// Decoupled warpgroups (session 11; the 16-row body on TMA with the early refill, and the 32-row
// one since session 27, MLA_WG_EARLY32): the MMA
// warpgroup waits for each tile itself, zeroes masked rows from the flags, and arrives on a named
// barrier EMPTY (per slot parity) once the tile's MMAs are done; warpgroup 1 syncs on it and issues
// the slot's next tile (issue_tile_tma_wg, 2 threads per token), as the qm TMA body does. No CTA
// barrier inside a work. 0: the two CTA barriers (A, B) per tile of sessions 6-10. Shipped (1):
// main-job kernel 153.2 -> 145.8 us (ncu), mla run 160.6 -> 159.4 us (docs/performance.md, session 11).
#ifndef MLA_WG_DEC
#define MLA_WG_DEC 1
#endif
#ifndef MLA_WG_NOLOAD
#define MLA_WG_NOLOAD 0
#endif
#ifndef MLA_WG_SPIN
#define MLA_WG_SPIN 0
#endif
#ifndef MLA_WG_NC32
#define MLA_WG_NC32 0
#endif
// Early refill (session 10, TMA path of the bf16-KV ring body, 16-row tiles): a work's first
// STAGES tiles are issued together and a tile's slot is refilled as soon as its MMAs are done (a
// second CTA barrier, B, per tile) instead of when the next tile has landed (barrier A), so STAGES
// tiles are in flight while the MMA warpgroup waits (since session 11 the refill waits on the
// named barrier EMPTY instead of B, MLA_WG_DEC). Shipped (1) with the tables' L2 promotion
// none (launch_kv_tma_l2 0): together main job -1.7%, s_k 16384 -2.4%, b = 1 -3.3%, b = 64 -1.5%;
// the early refill alone +0.6% on the main job (docs/performance.md, session 10). -DMLA_WG_EARLY=0 issues at barrier A as the cp.async path does.
#ifndef MLA_WG_EARLY
#define MLA_WG_EARLY 1
#endif
// MLA_WG_EARLY32 (session 27, shipped 1): the 32-row bf16-KV kernels (one MMA warpgroup) on the
// early refill and the decoupled warpgroups too, as the 16-row ones: warpgroup 1, idle at 32 rows,
// issues each slot's next tile once the MMA warpgroup is done with it, so two tiles are in flight.
// -DMLA_WG_EARLY32=0 (sessions 10-26): the next tile issued by all 256 threads at barrier A, after
// the current one has landed. Measured (session 27 call 2, with page boxes): 16 heads x MTP 2
// 172.7 -> 166.6 µs, 32 heads 172.8 -> 166.2, 16 x MTP 2 at page 16 187.5 -> 168.4.
#ifndef MLA_WG_EARLY32
#define MLA_WG_EARLY32 1
#endif
// Measured and removed (their code is at 6b914ee, decode_wgmma.cuh): MLA_WG_CPEARLY, the cp.async
// path of the 16-row bf16-KV ring on the TMA path's early refill (two tiles in flight; session 35
// call 2: page 1 194.5 -> 253.3 µs, page 4 167.5 -> 221.9), and MLA_WG_CP8_WG1, MLA_WG_CP8's
// copies issued by warpgroup 1 alone (session 36 call 1: page 1 161.0 -> 162.1; it tested whether
// the softmax's proxy fence waits for the MMA warpgroup's own outstanding copies, refuted by the
// fence dropped, MLA_WG_ABLATE=256: level at pages 1, 2 and 4).
// MLA_WG_CP8 (shipped 1 since session 35, at the page sizes of MLA_WG_CP8_MAX_LOG2): the same
// path's tile copies by 8 threads a 128-byte line (issue_tile_cp8, kv_load.cuh): thread t copies
// 16-byte chunk t % 8 of every 64-column block of tokens t / 8 and t / 8 + 32 (2 page lookups, 18
// copies at immediate offsets), so that one warp's copy covers 4 whole lines of 4 token rows (4 L2
// requests of 128 B) instead of 8 half lines of 8 rows (8 requests of 64 B; TileLoader<false, 4>):
// half the requests per tile, the same bytes. 0: TileLoader<false, 4> (4 threads a token, one
// lookup each). Session 35 call 3 (same machine): page 1 194.5 -> 160.8 µs (c8p1), main job and
// b 64 level, pages 2 and 4 (TileLoader still) 168.4 -> 169.9 and 167.1 -> 167.9; gpu_check 42/42
// on that cubin (its fused kernel and a bad page at page 1 joined the tests after it).
#ifndef MLA_WG_CP8
#define MLA_WG_CP8 1
#endif
// The largest page size (log2) that MLA_WG_CP8's loader serves on the cp.async path; pages of 8
// and more without a tensor map keep TileLoader<false, 4>. Shipped 2 (every page size below 8)
// since session 36: pages 2 and 4 169.6 -> 159.6 and 167.6 -> 158.5 µs, page 1 161.0 -> 161.2,
// the main job 153.2 -> 153.4 (call 1, same machine, against session 35's cubin; session 35 call
// 3: 168.4 -> 159.7, 167.1 -> 158.9 against session 34's); gpu_check 43/43 on that cubin (c8p4,
// SASS md5 791e0518). 0: page size 1 only (session 35's cubin). Session 35 call 2's build of this
// loader at every small page (c8) ran 181.7 / 179.0 µs at pages 1 / 4: its softmax came out in
// another order.
#ifndef MLA_WG_CP8_MAX_LOG2
#define MLA_WG_CP8_MAX_LOG2 2
#endif
// (Measured off, session 37 call 1: the cp8 copies issued through decode_wgmma.cuh's issue_pf
// helper, MLA_WG_CP8_FOLD at 1914396: pages 1 and 2 +0.4 µs (160.6 -> 161.0, 159.1 -> 159.5),
// page 4 +0.1, the main job level, within the rounds' spread.)
// Measurement hook (session 14; shipped 0): -DMLA_WG_TMA_ONLY=1 makes the 16-row bf16-KV kernel
// assume the host's tensor map and drops its cp.async path, to test whether that code costs time
// (invalid, and may fault or hang, without a tensor map: page size below 8, or launch_kv_tma 0).
#ifndef MLA_WG_TMA_ONLY
#define MLA_WG_TMA_ONLY 0
#endif

// Fast start (session 25; the ring body's first work of a CTA; shipped 1): the record of work
// blockIdx.x is read together with work_indptr (it is the CTA's first work in a plan of one work
// a cluster; p.work_rows bounds the guess), and the pages of the first tiles (CSR page tables)
// together with the record's request lookups, from the record's kv_start. Measured (performance.md,
// session 25 calls 2-3): the first TMA issues 0.35-0.7 µs earlier, not the two ~0.85 µs misses
// expected, since the start's ~3.6 µs are not its data misses alone; with the late trigger below,
// -0.5 to -2.1 µs end to end on the 16-row rows with one work a CTA (16 heads x MTP 2, the 32-row
// kernel, which has the fast start only: -0.3 to -0.9).
#ifndef MLA_WG_FASTSTART
#define MLA_WG_FASTSTART 1
#endif

// Late trigger (session 25, the ring body's decoupled path, i.e. the 16-row bf16 kernels, and the
// 32-row ones since session 27 (MLA_WG_EARLY32); shipped
// 1): the MMA warpgroup's thread 0 triggers the dependent launch (griddepcontrol.launch_dependents)
// once the CTA's last tile has landed, so the reducer grid is scheduled during the CTAs' last MMAs
// and epilogues instead of after the last CTA exits. Safe for the reducers' plan reads before
// their own wait (mla_reduce.cu): every CTA triggers after its grid dependency wait. A kernel the
// caller launches programmatically after the decode may then start early too, as programmatic
// launches allow; it must wait (griddepcontrol.wait) before it reads the decode's output.
// Measured (session 25 call 2): b 64 -1.0 µs, main job -1.4 (the whole-tile reducer's launch and
// check overlapped), b 1 -0.1. (Session 5 triggered at every CTA's start: b = 1 +1.6 µs, the
// reducer's CTAs resident beside the decode.)
#ifndef MLA_WG_LATE_TRIG
#define MLA_WG_LATE_TRIG 1
#endif
// MLA_WG_KVFIRST (session 34, measurement hook; 0 shipped): the ring body's first tiles of a work
// issued (TMA) before its Q copies (load_q) instead of after them, so that the KV stream starts as
// soon as the work record and its pages are read; Q's copies (one cp.async group, still waited for
// before tile 0's MMAs) then go out behind the first tiles. Only with TMA tiles (a cp.async ring
// counts its groups from Q's). Slower (session 34 call 1, against the same build without it):
// main job +1.3 µs, b 1 +0.8, b 64 +1.1, 16 x MTP 2 +2.7: Q's copies queue behind the tiles and
// tile 0's MMAs wait for them.
#ifndef MLA_WG_KVFIRST
#define MLA_WG_KVFIRST 0
#endif
// MLA_QM_RA_LATE_TRIG=1 (session 31; default 0, set to 1 by the .cu files of the bf16 qm and the
// bf16 Q / fp8 KV register-A cubins, session 32: split plans 0.3-1.5 µs faster there, the fp8 qm
// body 2.7 µs slower, the fp8 Q register-A one within noise): the same late trigger in
// the bodies that have none, the qm bf16 and fp8 TMA bodies (decode_qm_tma.cuh, decode_qm8.cuh:
// warpgroup 0's thread 0) and the register-A body (decode_ra.cuh: thread 0 of the warpgroup that
// runs the CTA's last tile), once the CTA's last tile has landed, so that the reducer after a
// split plan is scheduled during their last MMAs and epilogues instead of after the last CTA
// exits. Session 31 (call 3): the reducer that found nothing after an unsplit plan cost the
// 64-row rows 5.0-7.7 µs and the register-A rows 0.6-2.2, the bf16 TMA ring body's (which
// triggers late) 0.1-0.6.
#ifndef MLA_QM_RA_LATE_TRIG
#define MLA_QM_RA_LATE_TRIG 0
#endif

// MLA_WG_ULO (session 28; shipped 1): the wgmma descriptors' bases broadcast from lane 0
// (__shfl_sync), so that the compiler knows them warp-uniform and keeps the descriptors and their
// k-step adds in uniform registers; the k-step offsets are 32-bit adds on the low words
// (tile_mma through wgmma_lo, qm's S and P.V, qm8's S and O^T; ra adds to desc_bcast's result).
// 0 (sessions 6-27): the descriptors in vector registers, each moved to uniform registers (R2UR x 4
// and 64-bit adds, ~10 instructions) before its MMA.
#ifndef MLA_WG_ULO
#define MLA_WG_ULO 1
#endif

namespace mla_wg {

using mla_dec::cp_async16;
using mla_dec::cp_commit;
using mla_dec::cp_wait;
using mla_dec::ex2;
using mla_dec::smem_u32;

constexpr int kD = MLA_DECODE_D_QK;
constexpr int kDV = MLA_DECODE_D_V;
constexpr int kTN = 64;              // KV tokens per tile (the MMA's M)
constexpr int kBlk = kTN * 128;      // one 64-column block of a tile: 64 rows x 128 B
constexpr int kTile = 9 * kBlk;      // bf16 tile, 576 columns
constexpr int kRaw8 = kTN * kD;      // fp8 tile, unswizzled rows of 576 B
constexpr int kOPitch = kDV + 4;     // output staging row, floats
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

template <int N, bool KV8>
struct Cfg {
    static constexpr int NC = (N == 64 || (MLA_WG_NC32 && N == 32)) ? 2 : 1;  // MMA warpgroups
    static constexpr int NQ = N / NC;           // query rows per MMA warpgroup (16 or 32)
    static constexpr int STAGES = mla_decode_wg_stages(N, KV8);
    static constexpr int OFF_Q = 0;
    static constexpr int OFF_KV = N * 1152;
    static constexpr int RING = STAGES * (KV8 ? kRaw8 : kTile);
    static constexpr int OFF_KVB = OFF_KV + RING;  // fp8: the widened bf16 tile
    static constexpr int OFF_P = OFF_KVB + (KV8 ? kTile : 0);
    // P^T buffers: 2 with bf16 KV at 16 and 32 rows, used by tile parity. There the decoupled MMA
    // warpgroup meets no barrier between its P.V wait of tile t and its P^T stores of tile t + 1
    // (MLA_WG_LAZY1B takes the decision after them), so tile t + 1 writes the other buffer; every
    // warp passed tile t's barrier C / C' after its wait for P.V(t - 1), the buffer's last reader.
    static constexpr int PBUF = (!KV8 && N <= 32) ? 2 : 1;
    static constexpr int OFF_RED = OFF_P + PBUF * N * 128;
    static constexpr int OFF_TOK = OFF_RED + 16 * N;
    static constexpr int SMEM = OFF_TOK + STAGES * kTN * 4;
    static_assert(SMEM == mla_decode_wg_smem_bytes(N, KV8), "smem layout and formula disagree");
    static_assert(SMEM <= 232448, "more than 227 KB of shared memory");
    static_assert(N * kOPitch * 4 <= RING + (KV8 ? kTile : 0), "output staging does not fit the ring");
    static_assert(OFF_KV % 1024 == 0 && OFF_KVB % 1024 == 0 && OFF_P % 1024 == 0, "swizzle atoms");
};

__device__ __forceinline__ void fence_proxy_async() {
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
// Busy-waits n clocks (the MLA_WG_SPIN measurement hook).
__device__ __forceinline__ void spin_clocks(long long n) {
    const long long t0 = clock64();
    while (clock64() - t0 < n) {
    }
}
__device__ __forceinline__ void bar_sync(int id, int n) {
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(n) : "memory");
}
__device__ __forceinline__ void bar_arrive(int id, int n) {
    asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(n) : "memory");
}
// Named barrier id over n threads that also ORs v over them: true in every thread when v was
// true in one (a decision the threads of a warpgroup must take together, e.g. before a wgmma).
__device__ __forceinline__ bool bar_red_or(int id, int n, bool v) {
    uint32_t r;
    asm volatile(
        "{\n.reg .pred p, q;\nsetp.ne.u32 p, %1, 0;\nbar.red.or.pred q, %2, %3, p;\nselp.u32 %0, 1, 0, q;\n}\n"
        : "=r"(r)
        : "r"(uint32_t(v)), "r"(id), "r"(n)
        : "memory");
    return r != 0;
}
// Named barriers of the 16-row ring body (decode_wgmma.cuh) and its cross-work variant
// (decode_wg_xwork.cuh): 1 + warpgroup (softmax, column sums), EMPTY + slot parity (MLA_WG_DEC).
constexpr int kWgEmpty = 3;
__device__ __forceinline__ void wg_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wg_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wg_wait0() { asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory"); }
__device__ __forceinline__ void wg_wait1() { asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory"); }
template <int R>
__device__ __forceinline__ void reg_fence(float (&d)[R]) {
#pragma unroll
    for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// Shared-memory matrix descriptor, 128-byte swizzle (layout type 1 in bits 62-63). Addresses and
// offsets in bytes; the swizzle atoms (8 rows x 128 B) must start 1024-byte aligned.
// Its high word (SBO field in bits 32-45, swizzle mode in 62-63) is sw128_desc_hi(sbo), the same
// for every descriptor with that SBO.
__host__ __device__ constexpr uint32_t sw128_desc_hi(uint32_t sbo) { return (sbo >> 4) | (1u << 30); }
__device__ __forceinline__ uint64_t sw128_desc(uint32_t saddr, uint32_t lbo, uint32_t sbo) {
    return uint64_t((saddr & 0x3FFFF) >> 4) | (uint64_t(lbo >> 4) << 16) | (uint64_t(sw128_desc_hi(sbo)) << 32);
}
// The low word of descriptor d, broadcast from lane 0 (MLA_WG_ULO; d's own otherwise), and d with
// that low word: the caller's warp holds the same d in every lane, and all 32 lanes call.
__device__ __forceinline__ uint32_t desc_lo_bcast(uint64_t d) {
    if constexpr (MLA_WG_ULO != 0) return __shfl_sync(0xffffffffu, uint32_t(d), 0);
    else return uint32_t(d);
}
__device__ __forceinline__ uint64_t desc_bcast(uint64_t d) {
    return (d & 0xFFFFFFFF00000000ull) | desc_lo_bcast(d);
}

// D[64 x 16] (+)= A . B, bf16 in, fp32 accumulate; TA = 1: A is MN-major (transposed).
template <int TA>
__device__ __forceinline__ void wgmma_n16(float (&d)[8], uint64_t a, uint64_t b, int acc) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %10, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 "
        "{%0,%1,%2,%3,%4,%5,%6,%7}, %8, %9, p, 1, 1, %11, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
        : "l"(a), "l"(b), "r"(acc), "n"(TA));
}
template <int TA>
__device__ __forceinline__ void wgmma_n32(float (&d)[16], uint64_t a, uint64_t b, int acc) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 "
        "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15}, %16, %17, p, 1, 1, %19, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
        : "l"(a), "l"(b), "r"(acc), "n"(TA));
}
template <int NQ, int TA>
__device__ __forceinline__ void wgmma(float (&d)[NQ / 2], uint64_t a, uint64_t b, int acc) {
    if constexpr (NQ == 16) wgmma_n16<TA>(d, a, b, acc);
    else wgmma_n32<TA>(d, a, b, acc);
}
// The same from the descriptors' low words alo, blo and their common high word hi (put together in
// the asm, as wgmma_n64_ss_lo in qm_common.cuh does): a k-step's offset is then a 32-bit add on
// each low word (the 14-bit address field never carries: shared addresses stay below 2^18).
template <int TA>
__device__ __forceinline__ void wgmma_n16_lo(float (&d)[8], uint32_t alo, uint32_t blo, uint32_t hi, int acc) {
    asm volatile(
        "{\n.reg .pred p;\n.reg .b64 da, db;\nsetp.ne.b32 p, %11, 0;\n"
        "mov.b64 da, {%8, %10};\nmov.b64 db, {%9, %10};\n"
        "wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 "
        "{%0,%1,%2,%3,%4,%5,%6,%7}, da, db, p, 1, 1, %12, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
        : "r"(alo), "r"(blo), "r"(hi), "r"(acc), "n"(TA));
}
template <int TA>
__device__ __forceinline__ void wgmma_n32_lo(float (&d)[16], uint32_t alo, uint32_t blo, uint32_t hi, int acc) {
    asm volatile(
        "{\n.reg .pred p;\n.reg .b64 da, db;\nsetp.ne.b32 p, %19, 0;\n"
        "mov.b64 da, {%16, %18};\nmov.b64 db, {%17, %18};\n"
        "wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 "
        "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15}, da, db, p, 1, 1, %20, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
        : "r"(alo), "r"(blo), "r"(hi), "r"(acc), "n"(TA));
}
template <int NQ, int TA>
__device__ __forceinline__ void wgmma_lo(float (&d)[NQ / 2], uint32_t alo, uint32_t blo, uint32_t hi, int acc) {
    if constexpr (NQ == 16) wgmma_n16_lo<TA>(d, alo, blo, hi, acc);
    else wgmma_n32_lo<TA>(d, alo, blo, hi, acc);
}

// Byte offset of 16-byte chunk q (of 72 per 576-column bf16 row) of row r in a swizzled matrix
// of `rows` rows.
__device__ __forceinline__ uint32_t sw_off(int rows, int r, int q) {
    return uint32_t((q >> 3) * rows * 128 + r * 128 + (((q & 7) ^ (r & 7)) << 4));
}

// 16 fp8 bytes (columns 16 q8 ..) of row r widened to bf16 into a swizzled matrix of `rows` rows.
__device__ __forceinline__ void widen_store(char* base, int rows, int r, int q8, const uint4 v) {
    uint4 w[2];
    mla_dec::fp8x16_to_bf16(v, w);
    *reinterpret_cast<uint4*>(base + sw_off(rows, r, 2 * q8)) = w[0];
    *reinterpret_cast<uint4*>(base + sw_off(rows, r, 2 * q8 + 1)) = w[1];
}

// The launch matches the kernel: kThreads threads (256; the three-warpgroup fp8 qm kernel 384),
// at least `bytes` of dynamic shared memory at `smem`, 1024-byte aligned (the swizzle atoms).
// Otherwise nothing runs and (too little or misaligned shared memory) MLA_DECODE_ERR_SMEM is
// flagged; a wrong block size means a table row disagrees with the build, which the launch code
// already refuses.
template <int kThreads = 256>
__device__ __forceinline__ bool launch_ok(const mla_decode_params& p, const char* smem, int bytes) {
    if (blockDim.x != kThreads) return false;
    uint32_t dsmem;
    asm("mov.u32 %0, %%dynamic_smem_size;\n" : "=r"(dsmem));
    if (dsmem < static_cast<uint32_t>(bytes) || (smem_u32(smem) & 1023u) != 0) {
        if (threadIdx.x == 0 && p.error_flag) atomicOr(p.error_flag, MLA_DECODE_ERR_SMEM);
        return false;
    }
    return true;
}

// ---- pieces shared by the wgmma kernel bodies (this file and decode_qm.cuh) ----

// Byte address of tile row `row` (token row / Hk, head row % Hk) of work w's Q in global memory.
template <bool Q8>
__device__ __forceinline__ const char* q_row(const mla_decode_params& p, const mla_dec::Work& w, int row) {
    const int Hk = p.kernel_heads;
    const mla_div::DivMod th = mla_div::divmod_row<mla_div::kDivQRow>(row, Hk);
    const int tt = th.q, h = th.r;
    return static_cast<const char*>(p.q) + (Q8 ? 1 : 2) * ((int64_t)(w.qo_b + w.t0 + tt) * p.q_stride_token +
                                                         (int64_t)(w.g * Hk + h) * p.q_stride_head);
}

// Work w's Q tile -> shared memory at off_q as bf16 in the swizzled layout of ROWS rows; rows
// past w.nrows are zero. bf16 Q: cp.async, one commit group (the caller waits); fp8 Q: loaded,
// widened and stored by the threads (visible after the next barrier). All NT threads (tid = 0 ..
// NT - 1) call it.
// MLA_LOADQ_ROW (shipped 1 since session 34, in the wg bf16/bf16 cubin since session 35; measured
// with MLA_DIV_RCP: small_div.cuh): bf16 Q
// with NT a multiple of ROWS copied row by row (NT / ROWS threads a row, one row address each);
// 0, chunk c = tid + NT k of the tile (a row address, with its division by kernel_heads, for
// every chunk: 5-36 unrolled copies).
#ifndef MLA_LOADQ_ROW
#define MLA_LOADQ_ROW 1
#endif
// MLA_LOADQ8_ROW (session 34; shipped 1 since session 35, after its gpu_check): fp8 Q (widened to bf16 by the
// threads) the same way, each thread's loads issued before its widening stores; 0, chunk c = tid
// + NT k, each load followed by its stores (the compiler keeps them in that order: one global
// round trip per chunk). Session 34 call 2: fp8 16 x MTP 2 181.3 -> 176.0 µs (the wg fp8/fp8
// 32-row kernel), correct on `mla run --check -1`.
#ifndef MLA_LOADQ8_ROW
#define MLA_LOADQ8_ROW 1
#endif
template <int ROWS, bool Q8, int NT = 256>
__device__ __forceinline__ void load_q(const mla_decode_params& p, const mla_dec::Work& w, char* smem,
                                       uint32_t sbase, uint32_t off_q, int tid) {
    if constexpr (!Q8 && MLA_LOADQ_ROW && NT % ROWS == 0) {
        // (MLA_LOADQ_ROW) NT / ROWS threads a row: one row address a thread, its chunks at a
        // constant stride (q & 7 is the thread's own while NT / ROWS is a multiple of 8)
        constexpr int TPR = NT / ROWS;
        const int row = tid / TPR, sub = tid % TPR;
        const bool ok = row < w.nrows;
        const char* src = ok ? q_row<false>(p, w, row) : static_cast<const char*>(p.q);
        constexpr int K = (72 + TPR - 1) / TPR;  // copies a thread (the last one of K guarded)
#pragma unroll(K <= 9 ? K : 4)  // (the 64-row qm body's 36 copies a thread, unrolled in full, spill)
        for (int k = 0; k < K; ++k) {
            const int q = sub + TPR * k;
            if (72 % TPR == 0 || q < 72)
                cp_async16(sbase + off_q + sw_off(ROWS, row, q), ok ? src + 16 * q : p.q, ok ? 16 : 0);
        }
        cp_commit();
    } else if constexpr (!Q8) {
        for (int c = tid; c < ROWS * 72; c += NT) {
            const int row = c / 72, q = c - row * 72;
            const bool ok = row < w.nrows;
            cp_async16(sbase + off_q + sw_off(ROWS, row, q), ok ? q_row<false>(p, w, row) + 16 * q : p.q, ok ? 16 : 0);
        }
        cp_commit();
    } else if constexpr (Q8 && MLA_LOADQ8_ROW && NT % ROWS == 0) {
        // (MLA_LOADQ8_ROW) NT / ROWS threads a row, all of a thread's loads before its stores
        constexpr int TPR = NT / ROWS, K = (36 + TPR - 1) / TPR;
        const int row = tid / TPR, sub = tid % TPR;
        const char* src = row < w.nrows ? q_row<true>(p, w, row) : nullptr;
        uint4 v[K];
#pragma unroll
        for (int k = 0; k < K; ++k) {
            const int q8 = sub + TPR * k;
            v[k] = make_uint4(0, 0, 0, 0);
            if (src && (36 % TPR == 0 || q8 < 36)) v[k] = *reinterpret_cast<const uint4*>(src + 16 * q8);
        }
#pragma unroll
        for (int k = 0; k < K; ++k) {
            const int q8 = sub + TPR * k;
            if (36 % TPR == 0 || q8 < 36) widen_store(smem + off_q, ROWS, row, q8, v[k]);
        }
    } else {
        for (int c = tid; c < ROWS * 36; c += NT) {
            const int row = c / 36, q8 = c - row * 36;
            uint4 v = make_uint4(0, 0, 0, 0);
            if (row < w.nrows) v = *reinterpret_cast<const uint4*>(q_row<true>(p, w, row) + 16 * q8);
            widen_store(smem + off_q, ROWS, row, q8, v);
        }
    }
}

}  // namespace mla_wg
