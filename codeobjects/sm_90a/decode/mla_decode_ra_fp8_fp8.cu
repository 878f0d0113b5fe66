// mla_decode_ra_fp8_fp8.cu - sm_90a MLA decode kernel on wgmma with register-sourced A, Q fp8 / KV
// fp8, row tile M = 16 (mla_decode_ra_fp8_fp8_m16). Body: decode_ra.cuh; table: mla_decode.csv.
// The exact running max here (wg_tile.cuh's default is the lazy one): with the two-barrier lazy
// max this row ran 112.1 -> 112.6 µs (docs/performance.md, session 29 call 2), and 108.4 -> 111.4
// with stmatrix (a 4-byte spill; session 30 call 1). -DMLA_WG_LAZY=8 builds the one-barrier lazy
// path without spills (245 registers): 94.2 -> 94.8 µs, varied lengths 114.4 -> 116.0 (session 42
// call 3).
#ifndef MLA_WG_LAZY
#define MLA_WG_LAZY 0
#endif
#include "decode/decode_ra.cuh"

MLA_DECODE_RA_KERNEL(fp8, fp8, true, 16)
