// mla_decode_qm_bf16_bf16.cu - sm_90a MLA decode kernel with the query rows on the MMA's M side, Q bf16 /
// KV bf16, row tile M = 64 (mla_decode_qm_bf16_bf16_m64). Body: decode_qm.cuh; table: mla_decode.csv.
// (M = 16 and 32 stay on the transposed kernels of decode_wgmma.cuh: they measured faster there.)
// The late trigger (wg_common.cuh's MLA_QM_RA_LATE_TRIG 1): on split plans (varied lengths) 128
// heads 350.4 -> 349.1 µs, 64 heads 223.2 -> 221.7 (session 32 calls 1-2); off in the fp8 qm cubin
// (+2.7 µs at 128 heads).
#ifndef MLA_QM_RA_LATE_TRIG
#define MLA_QM_RA_LATE_TRIG 1
#endif
// The TMA body's start with the page-table reads ahead of Q (MLA_QMT_PGFIRST) and its P fence in
// the P.V's shadow (MLA_QMT_FENCE_LATE), decode_qm_tma.cuh: fixed plans 64 heads 175.3 -> 173.0 and
// 174.7 -> 172.7 µs, 128 heads 296.9 -> 291.4 and 295.8 -> 291.6, 128 heads MTP 2 550.9 -> 542.9 and
// 546.2 -> 540.3 (session 33 calls 1-2).
#ifndef MLA_QMT_PGFIRST
#define MLA_QMT_PGFIRST 1
#endif
#ifndef MLA_QMT_FENCE_LATE
#define MLA_QMT_FENCE_LATE 1
#endif
// The softmax's path for tiles without masked keys (qm_common.cuh's MLA_QM_FAST_SOFTMAX; session
// 42 call 1, A/B on one machine: 128 heads 269.3 -> 265.1 µs, 128 heads MTP 2 510.2 -> 499.7, 64
// heads 160.7 -> 160.1; off in the fp8 qm cubin: 258.3 -> 263.1 at fp8 128 heads).
#ifndef MLA_QM_FAST_SOFTMAX
#define MLA_QM_FAST_SOFTMAX 1
#endif
// The output stores with the per-row division (wg_tile.cuh's MLA_STORE_ROWS_STEP 0; session 33
// call 4: with the stepped loop 128 heads 278.9 -> 281.2 µs, 64 heads level, same machine).
#ifndef MLA_STORE_ROWS_STEP
#define MLA_STORE_ROWS_STEP 0
#endif
#include "decode/decode_qm.cuh"

MLA_DECODE_QM_KERNEL(bf16, bf16, false, false, 64)
