// mla_decode_qm_fp8_fp8.cu - sm_90a MLA decode kernels with the query rows on the MMA's M side, Q fp8 /
// KV fp8, row tile M = 64: mla_decode_qm_fp8_fp8_m64 (two warpgroups, decode_qm.cuh) and, with
// -DMLA_QM8_WS=1 (a measurement build), mla_decode_qm_fp8_fp8_m64_ws (three warpgroups,
// decode_qm8_ws.cuh: 2% slower, session 22). Table: mla_decode.csv.
// (M = 16 and 32 stay on the transposed kernels of decode_wgmma.cuh: they measured faster there.)
// The fp8 TMA body has its own lazy max (MLA_QM8_LAZY); the cp.async body's bf16-P softmax keeps
// the exact one here (MLA_QM_LAZY 0: this cubin's SASS as measured before session 29).
#ifndef MLA_QM_LAZY
#define MLA_QM_LAZY 0
#endif
#include "decode/decode_qm8_ws.cuh"

MLA_DECODE_QM_KERNEL(fp8, fp8, true, true, 64)
#if MLA_QM8_WS
MLA_DECODE_QM8_WS_KERNEL(64)
#endif
