// amd_stage1.h - the AMD stage-1 launch (mla_amd_decode_stage1): validation (amd_check.cpp),
// the aiter remap's tiling and the argument blocks (amd_blocks.cpp), the launch (amd_launch.cpp).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "context/context.h"
#include "mla_c_api.h"
#include "routing/routing.h"

namespace mla::amd {

enum class Route {
    gfx9,            // gfx942 / gfx950: table mla_asm, 368-byte block, 256 threads
    gfx1250_page64,  // gfx1250 non-persistent: table mla_asm, 120-byte packed block, 128 threads
    gfx1250_ps1      // gfx1250 persistent page 1: table mla_dsl, PS1 block, dyn_lds
};

// A checked request: the caller's args with defaults resolved.
struct Stage1 {
    mla_amd_stage1_args a;
    route::Arch arch = route::Arch::gfx942;
    Route route = Route::gfx9;
    int64_t q_stride_token = 0;  // elements
    int64_t q_stride_head = 0;   // elements
    int64_t kv_stride_page = 0;  // elements
    int q_item = 2;              // bytes per Q element
    int kv_item = 2;             // bytes per KV element
    int log2_page = 0;
};

// Validates args against the context [INVALID_ARGUMENT, UNSUPPORTED_SHAPE: see mla_c_api.h].
Stage1 check_stage1(mla_context* ctx, const mla_amd_stage1_args& args);

// gfx942/gfx950 tiling of the remap (§5.3): sub_q = query rows one workgroup covers in the
// non-persistent grid, mqa = the s_MQA field (gqa * L, or gqa where the remap packs rows).
struct Gfx9Tiling {
    int sub_q = 128;
    int mqa = 0;
};
Gfx9Tiling gfx9_tiling(route::Arch arch, mla_dtype q, mla_dtype kv, int gqa, int qlen,
                       bool persistent);

// Argument blocks, as the bytes to launch with.
std::vector<unsigned char> gfx9_block(const Stage1& s, const Gfx9Tiling& t);
std::vector<unsigned char> gfx1250_block(const Stage1& s);
std::vector<unsigned char> ps1_block(const Stage1& s, bool cprr);

// Table spelling of a dtype ("bf16", "fp8", "byte") for messages.
const char* table_dtype(mla_dtype d);

}  // namespace mla::amd
