// mla_decode_ra_bf16_fp8.cu - sm_90a MLA decode kernel on wgmma with register-sourced A, Q bf16 / KV
// fp8, row tile M = 16 (mla_decode_ra_bf16_fp8_m16). Body: decode_ra.cuh; table: mla_decode.csv.
// The lazy max's decision before P (wg_tile.cuh's MLA_WG_LAZY1B 0): with the one-barrier path
// this kernel spills 4 bytes and ran bf16 Q / fp8 KV 119.0 -> 120.7 µs (docs/performance.md,
// session 30 call 2); now without the spill (246 registers), it still loses: 104.9 -> 106.0 µs,
// varied lengths 130.2 -> 131.5 (session 42 call 3).
#ifndef MLA_WG_LAZY1B
#define MLA_WG_LAZY1B 0
#endif
// The late trigger (wg_common.cuh's MLA_QM_RA_LATE_TRIG 1): on split plans (varied lengths) bf16 Q /
// fp8 KV 149.3 -> 148.7 µs (session 32 call 1); off in the fp8 Q register-A cubin (within noise).
#ifndef MLA_QM_RA_LATE_TRIG
#define MLA_QM_RA_LATE_TRIG 1
#endif
#include "decode/decode_ra.cuh"

MLA_DECODE_RA_KERNEL(bf16, fp8, false, 16)
