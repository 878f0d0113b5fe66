// mla_decode_qm_bf16_fp8.cu - sm_90a MLA decode kernel with the query rows on the MMA's M side, Q bf16 /
// KV fp8, row tile M = 64 (mla_decode_qm_bf16_fp8_m64). Body: decode_qm.cuh; table: mla_decode.csv.
// (M = 16 and 32 stay on the transposed kernels of decode_wgmma.cuh: they measured faster there.)
// The output stores with the per-row division (wg_tile.cuh's MLA_STORE_ROWS_STEP 0; session 33
// call 4: the stepped loop cost 128 heads 2.3 µs).
#ifndef MLA_STORE_ROWS_STEP
#define MLA_STORE_ROWS_STEP 0
#endif
#include "decode/decode_qm.cuh"

MLA_DECODE_QM_KERNEL(bf16, fp8, false, true, 64)
