// mla_decode_wg_bf16_bf16.cu - sm_90a MLA decode kernels on wgmma, Q bf16 / KV bf16, row tiles M = 16, 32, 64
// (mla_decode_wg_bf16_bf16_m16 / _m32 / _m64), and the 16- and 32-row ones with the fused split-KV
// reduction (_m16_fused / _m32_fused). Body: decode_wgmma.cuh; table: mla_decode.csv.
// Two S^T accumulator chains at 16 rows in this cubin (wg_tile.cuh's default is 4, which the fp8-KV
// cubins keep): with uniform descriptors (MLA_WG_ULO) b 64 39.6 -> 39.1 µs, the main job and
// 16 x MTP 2 equal (docs/performance.md, session 28 call 3).
#ifndef MLA_WG_SCHAINS16
#define MLA_WG_SCHAINS16 2
#endif
// The tile-row division (small_div.cuh) by one reciprocal at every site and Q copied row by row
// (wg_common.cuh), as the other decode cubins have had since session 34. History: with the division at
// every site this cubin's cp.async ring (page sizes below 8, no TMA) ran the page-1 row 192.6 ->
// 228.8 µs on its old loader (TileLoader, session 34 call 2), so session 35 shipped the division at
// `q_row` only (MLA_DIV_RCP_SITES 1, qs1); on the 8-threads-a-line loader (MLA_WG_CP8) every site
// holds page 1 (161.2 -> 160.1) and gains 0.1-0.8 µs on the TMA rows (session 36 call 2, same
// machine; b 1536 874.9 -> 874.7 in call 3; gpu_check 43/43 there, SASS md5 564ea36e). So this
// cubin takes MLA_DIV_RCP, MLA_DIV_RCP_SITES and MLA_LOADQ_ROW at their defaults.
#include "decode/decode_wgmma.cuh"

MLA_DECODE_WG_KERNEL(bf16, bf16, false, false, 16)
MLA_DECODE_WG_KERNEL(bf16, bf16, false, false, 32)
MLA_DECODE_WG_KERNEL(bf16, bf16, false, false, 64)
MLA_DECODE_WG_FUSED_KERNEL(bf16, bf16, false, false, 16)
MLA_DECODE_WG_FUSED_KERNEL(bf16, bf16, false, false, 32)
