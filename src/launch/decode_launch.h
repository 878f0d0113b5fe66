// decode_launch.h - host side of mla_decode_fwd: validation of mla_decode_args against the plan
// and the sm_90a tables (decode_check.cpp), then the launches (decode_fwd.cpp).
// Kernel params structs: codeobjects/sm_90a/decode/decode_params.h, reduce/reduce_params.h.
#pragma once
#include <string>

#include "../../codeobjects/sm_90a/decode/decode_params.h"
#include "../../codeobjects/sm_90a/reduce/reduce_params.h"
#include "context/context.h"
#include "mla_c_api.h"

namespace mla::launch {

// Everything a validated call launches. Rows point into ctx->tables (alive with the context).
struct DecodeLaunch {
    const reg::Row* decode_row = nullptr;
    const reg::Row* reduce_row = nullptr;  // null when the plan cannot split (no partial rows)
    mla_decode_params decode{};
    mla_reduce_params reduce{};
    unsigned grid = 0;          // num_clusters
    unsigned threads = 0;       // launch_threads of the decode row
    unsigned smem = 0;          // launch_smem of the decode row
    unsigned reduce_grid = 0;   // grid x: planned tiles, or min(tiles, SMs) for whole-tile reducers
    unsigned reduce_grid_y = 1; // grid y: CTAs per tile (M rows x 4 column quarters / units_per_cta), or 1
    unsigned reduce_threads = 0;
    bool decode_programmatic = false;  // mla_decode.csv launch_pdl: programmatic dependent launch
    unsigned decode_cluster = 1;       // mla_decode.csv launch_cluster: CTAs per thread-block cluster
    bool reduce_programmatic = false;  // mla_reduce.csv launch_pdl: programmatic dependent launch
    bool fused_reduce = false;  // the decode kernel reduces the split tiles: no reducer launch
    // launch_carveout of each row: the shared-memory share of the SM's L1 / shared memory the
    // kernel asks for, in percent; -1 (or no column): the driver's choice, nothing is set
    int decode_carveout = -1;
    int reduce_carveout = -1;
    int row_tile = 0;           // M
    int kernel_heads = 0;
    int qk_batch_ratio = 1;
};

// Validates every argument (see mla_c_api.h, mla_decode_fwd) and resolves the table rows.
// Throws mla::Error; touches no device memory and launches nothing.
DecodeLaunch check_decode(mla_context* ctx, const mla_decode_args& args);

}  // namespace mla::launch
