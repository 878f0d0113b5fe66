// device_copy.cpp - mla_device_copy (mla_c_api.h, DECODE section): launches the table `mla_copy`
// kernel (codeobjects/sm_90a/decode/mla_copy.cu), launch_blocks_per_sm CTAs per SM.
#include <cstdint>

#include "../../codeobjects/sm_90a/decode/copy_params.h"
#include "common/error.h"
#include "context/context.h"

extern "C" {

MLA_API mla_status mla_device_copy(mla_context* ctx, void* dst, const void* src, size_t bytes,
                                   void* stream) {
    return mla::guard([&] {
        mla::check_context(ctx);
        MLA_CHECK_ARG(dst != nullptr && src != nullptr, "mla_device_copy: NULL pointer");
        MLA_CHECK_ARG(reinterpret_cast<uintptr_t>(dst) % 16 == 0 && reinterpret_cast<uintptr_t>(src) % 16 == 0,
                      "mla_device_copy: src and dst must be 16-byte aligned");
        MLA_CHECK_ARG(bytes % 16 == 0, "mla_device_copy: bytes (" << bytes << ") is not a multiple of 16");
        if (bytes == 0) return;
        const mla::reg::Row& row = mla::context_row(ctx, "mla_copy", {{"kind", "copy"}});
        const mla::rt::Function f = mla::context_function(ctx, row);
        mla_copy_params p;
        p.src = src;
        p.dst = dst;
        p.n16 = bytes / 16;
        const long threads = row.get_int("launch_threads", 256);
        const long per_sm = row.get_int("launch_blocks_per_sm", 8);
        MLA_CHECK(threads >= 32 && threads <= 1024 && per_sm >= 1, MLA_ERROR_TABLE,
                  row.file << ":" << row.line << ": bad launch_threads / launch_blocks_per_sm");
        mla::rt::Dim3 grid, block;
        grid.x = unsigned(per_sm * (ctx->num_cus > 0 ? ctx->num_cus : 132));
        block.x = unsigned(threads);
        ctx->runtime->set_device(ctx->device);
        ctx->runtime->launch(f, grid, block, 0, stream, &p, sizeof p);
    });
}

}  // extern "C"
