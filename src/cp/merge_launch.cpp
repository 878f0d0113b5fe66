// merge_launch.cpp - mla_merge_attn_states: validates on the host, resolves the table row
// (mla_merge: kind=merge, outType) and its code object, then launches the sm_90a merge kernel
// (codeobjects/sm_90a/merge/merge.cu) with one warp per (row, head), as a programmatic dependent
// launch where the row says launch_pdl 1 (the grid may become resident while the kernel ahead
// of it in the stream, typically the all-gather, finishes; the kernel waits for it before its
// first load). Allocates nothing, never synchronises.
#include "common/error.h"
#include "context/context.h"
#include "cp/merge.h"

namespace mla::cp {

mla_merge_params merge_params(const Merge& m) {
    mla_merge_params p{};
    p.partial_out = m.a.partial_out;
    p.partial_lse = m.a.partial_lse;
    p.out = m.a.out;
    p.lse = m.a.lse;
    p.num_units = m.units;
    p.out_rank_stride = m.out_stride;
    p.lse_rank_stride = m.lse_stride;
    p.world_size = m.a.world_size;
    p.partial_bf16 = m.a.partial_dtype == MLA_DTYPE_BF16 ? 1 : 0;
    return p;
}

}  // namespace mla::cp

extern "C" MLA_API mla_status mla_merge_attn_states(mla_context* ctx, const mla_merge_args* args,
                                                    void* stream) {
    return mla::guard([&] {
        mla::check_context(ctx);
        const mla::cp::Merge m = mla::cp::check_merge(args, true);
        if (ctx->arch != "sm_90a")
            MLA_FAIL(MLA_ERROR_UNSUPPORTED_SHAPE,
                     "mla_merge_attn_states runs libmla's sm_90a merge kernel only; the context is "
                         << ctx->arch);
        const mla::reg::Row& row = mla::context_row(
            ctx, "mla_merge", {{"kind", "merge"}, {"outType", mla_dtype_string(m.a.out_dtype)}});
        const long threads = row.get_int("launch_threads", 0);
        MLA_CHECK(threads == MLA_MERGE_THREADS, MLA_ERROR_TABLE,
                  row.file << ":" << row.line << ": launch_threads " << threads << " of "
                           << row.knl_name << " is not the kernel's " << MLA_MERGE_THREADS);
        const bool pdl = mla::launch_flag(row, "launch_pdl", row.get_int("launch_pdl", mla_context::LaunchRow::kAbsent));
        const mla::rt::Function f = mla::context_function(ctx, row);
        if (m.units == 0) return;
        const mla_merge_params p = mla::cp::merge_params(m);
        const int64_t warps = MLA_MERGE_THREADS / 32;
        mla::rt::Dim3 grid, block;
        grid.x = unsigned((m.units + warps - 1) / warps);
        block.x = unsigned(MLA_MERGE_THREADS);
        ctx->runtime->set_device(ctx->device);
        ctx->runtime->launch_as(pdl, f, grid, block, 0, stream, &p, sizeof p);
    });
}
