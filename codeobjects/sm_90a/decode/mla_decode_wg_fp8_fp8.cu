// mla_decode_wg_fp8_fp8.cu - sm_90a MLA decode kernels on wgmma, Q fp8 / KV fp8, row tiles M = 16, 32, 64
// (mla_decode_wg_fp8_fp8_m16 / _m32 / _m64). Body: decode_wgmma.cuh; table: mla_decode.csv.
#include "decode/decode_wgmma.cuh"

MLA_DECODE_WG_KERNEL(fp8, fp8, true, true, 16)
MLA_DECODE_WG_KERNEL(fp8, fp8, true, true, 32)
MLA_DECODE_WG_KERNEL(fp8, fp8, true, true, 64)
