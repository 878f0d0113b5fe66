// decode_fwd.cpp - mla_decode_fwd (mla_c_api.h, DECODE section): validate everything
// (decode_check.cpp), resolve both kernels (so that a missing code object fails before anything
// runs), then launch the persistent decode kernel and, when the plan can split, the reducer, in
// stream order (each as a programmatic dependent launch where its table row says launch_pdl 1);
// no reducer where the decode kernel reduces the split tiles itself (tile_counters, the fused
// reduction).
// Allocates nothing, never synchronises (CUDA-graph capturable).
#include "common/error.h"
#include "context/struct_io.h"
#include "launch/decode_launch.h"

extern "C" {

MLA_API mla_status mla_decode_fwd(mla_context* ctx, const mla_decode_args* args, void* stream) {
    return mla::guard([&] {
        mla::check_context(ctx);
        const mla_decode_args defaults = MLA_DECODE_ARGS_INIT;
        const mla_decode_args a = mla::read_struct(args, defaults, "mla_decode_fwd: args");
        const mla::launch::DecodeLaunch d = mla::launch::check_decode(ctx, a);

        const mla::rt::Function fdec = mla::context_function(ctx, *d.decode_row);
        const mla::rt::Function fred =
            d.reduce_row && !d.fused_reduce ? mla::context_function(ctx, *d.reduce_row) : nullptr;
        ctx->runtime->set_device(ctx->device);
        if (d.smem > 48 * 1024) mla::context_set_max_dynamic_shared(ctx, fdec, int(d.smem));
        // launch_carveout (an optional hint, no shipped row sets it): -1 sets nothing unless an
        // earlier row of this context set the kernel to a value (context_set_smem_carveout)
        mla::context_set_smem_carveout(ctx, fdec, d.decode_carveout);
        if (fred) mla::context_set_smem_carveout(ctx, fred, d.reduce_carveout);

        mla::rt::Dim3 grid, block;
        grid.x = d.grid;
        block.x = d.threads;
        ctx->runtime->launch_as(d.decode_programmatic, fdec, grid, block, d.smem, stream, &d.decode, sizeof d.decode,
                                d.decode_cluster);
        if (fred && d.reduce_grid > 0) {
            mla::rt::Dim3 rgrid, rblock;
            rgrid.x = d.reduce_grid;
            rgrid.y = d.reduce_grid_y;
            rblock.x = d.reduce_threads;
            ctx->runtime->launch_as(d.reduce_programmatic, fred, rgrid, rblock, 0, stream, &d.reduce,
                                    sizeof d.reduce);
        }
    });
}

}  // extern "C"
