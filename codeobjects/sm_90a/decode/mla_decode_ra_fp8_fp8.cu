// mla_decode_ra_fp8_fp8.cu - sm_90a MLA decode kernel on wgmma with register-sourced A, Q fp8 / KV
// fp8, row tile M = 16 (mla_decode_ra_fp8_fp8_m16). Body: decode_ra.cuh; table: mla_decode.csv.
#include "decode/decode_ra.cuh"

MLA_DECODE_RA_KERNEL(fp8, fp8, true, 16)
