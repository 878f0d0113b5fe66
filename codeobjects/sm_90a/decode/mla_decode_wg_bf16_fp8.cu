// mla_decode_wg_bf16_fp8.cu - sm_90a MLA decode kernels on wgmma, Q bf16 / KV fp8, row tiles M = 16, 32, 64
// (mla_decode_wg_bf16_fp8_m16 / _m32 / _m64). Body: decode_wgmma.cuh; table: mla_decode.csv.
#include "decode/decode_wgmma.cuh"

MLA_DECODE_WG_KERNEL(bf16, fp8, false, true, 16)
MLA_DECODE_WG_KERNEL(bf16, fp8, false, true, 32)
MLA_DECODE_WG_KERNEL(bf16, fp8, false, true, 64)
