// mla_decode_qm_bf16_fp8.cu - sm_90a MLA decode kernel with the query rows on the MMA's M side, Q bf16 /
// KV fp8, row tile M = 64 (mla_decode_qm_bf16_fp8_m64). Body: decode_qm.cuh; table: mla_decode.csv.
// (M = 16 and 32 stay on the transposed kernels of decode_wgmma.cuh: they measured faster there.)
#include "decode/decode_qm.cuh"

MLA_DECODE_QM_KERNEL(bf16, fp8, false, true, 64)
