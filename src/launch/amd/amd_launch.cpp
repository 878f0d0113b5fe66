// amd_launch.cpp - mla_amd_decode_stage1: checked args -> table row (the routing engineer's asm
// remap / PS1 lookup, src/routing/asm_query.cpp) -> code object through the context's module
// cache -> one packed-argument launch (aiter-mla-semantics.md §5.6).
#include <sstream>

#include "common/error.h"
#include "context/struct_io.h"
#include "launch/amd/amd_stage1.h"

namespace mla::amd {
namespace {

const char* const kWhere = "mla_amd_decode_stage1: ";

// The table row of a checked request, or the status the lookup gives.
route::TableVerdict find_row(mla_context* ctx, const Stage1& s, bool* cprr) {
    const mla_amd_stage1_args& a = s.a;
    route::TableVerdict v;
    std::ostringstream key;
    if (s.route == Route::gfx1250_ps1) {
        // mla_ps1_fp8_asm_fwd keys cprr on the world size (§5.5, PR #6107 follow-up).
        *cprr = a.cp_world_size > 1;
        MLA_CHECK_ARG(!*cprr || a.g_kv_indptr,
                      kWhere << "cp_world_size " << a.cp_world_size
                             << " > 1 selects the round-robin PS1 kernel, which needs g_kv_indptr");
        v = route::ps1_fp8_asm_query(s.arch, a.num_heads, a.max_seqlen_q, a.causal != 0,
                                     a.lse != nullptr, *cprr, ctx->root);
        key << "mla_dsl key qType=fp8 kvType=fp8 Gqa=" << a.num_heads << " qSeqLen="
            << a.max_seqlen_q << " (or 0) causal=" << (a.causal ? 1 : 0) << " lse="
            << (a.lse ? 1 : 0) << " cprr=" << (*cprr ? 1 : 0);
    } else {
        route::AsmRequest r;
        r.arch = s.arch;
        r.q = a.q_dtype;
        r.kv = a.kv_dtype;
        r.num_heads = a.num_heads;
        r.max_seqlen_q = a.max_seqlen_q;
        r.persistent = a.persistent != 0;
        r.causal = a.causal != 0;
        r.lse = a.lse != nullptr;
        r.cprr = a.g_kv_indptr != nullptr;  // aiter: g_kv_indptr given selects the cprr rows
        r.page_size = a.page_size;
        *cprr = r.cprr;
        v = route::asm_query(r, ctx->root);
        key << "mla_asm key qType=" << table_dtype(a.q_dtype) << " kvType=" << table_dtype(a.kv_dtype)
            << " Gqa=" << v.table_gqa << " ps=" << (a.persistent ? 1 : 0) << " qSeqLen="
            << v.table_qseqlen << " (from " << a.num_heads << " heads, max_seqlen_q "
            << a.max_seqlen_q << ") lse=" << (a.lse ? 1 : 0) << " cprr=" << (*cprr ? 1 : 0);
    }
    const std::string detail = v.detail.empty() ? "" : ": " + v.detail;
    switch (v.status) {
        case MLA_ASM_OK: return v;
        case MLA_ASM_REMAP_REJECT:
            MLA_FAIL(MLA_ERROR_UNSUPPORTED_SHAPE,
                     kWhere << ctx->arch << " remap rejects the request" << detail);
        case MLA_ASM_ARCH_NOT_BUILT:
            MLA_FAIL(MLA_ERROR_NO_KERNEL, kWhere << ctx->arch << ": " << v.detail << " (" << ctx->root
                                                 << ")");
        default:
            MLA_FAIL(MLA_ERROR_NO_KERNEL, kWhere << "no " << ctx->arch << " kernel for " << key.str()
                                                 << detail);
    }
}

// Threads and dynamic LDS of the route; PS1 rows give dyn_lds and may give launch_threads.
void launch_shape(const Stage1& s, const reg::Row& row, unsigned* threads, unsigned* lds) {
    *lds = 0;
    if (s.route == Route::gfx9) {
        *threads = 256;  // 4 x wave64
        return;
    }
    if (s.route == Route::gfx1250_page64) {
        *threads = 128;  // 4 x wave32
        return;
    }
    const long dyn = row.get_int("dyn_lds", 0);
    if (dyn < 0 || dyn > (1L << 20))
        MLA_FAIL(MLA_ERROR_TABLE, row.file << ":" << row.line << ": dyn_lds must be in 0..1048576, got "
                                           << row.get("dyn_lds"));
    const long t = row.get_int("launch_threads", 256);
    if (t < 32 || t > 1024 || t % 32)
        MLA_FAIL(MLA_ERROR_TABLE, row.file << ":" << row.line
                                           << ": launch_threads must be a multiple of 32 in 32..1024, got "
                                           << row.get("launch_threads"));
    *threads = unsigned(t);
    *lds = unsigned(dyn);
}

}  // namespace
}  // namespace mla::amd

extern "C" MLA_API mla_status mla_amd_decode_stage1(mla_context* ctx, const mla_amd_stage1_args* args,
                                                    void* stream) {
    return mla::guard([&] {
        using namespace mla::amd;
        mla::check_context(ctx);
        const mla_amd_stage1_args defaults = MLA_AMD_STAGE1_ARGS_INIT;
        const mla_amd_stage1_args in = mla::read_struct(args, defaults, "mla_amd_decode_stage1: args");
        const Stage1 s = check_stage1(ctx, in);
        const mla_amd_stage1_args& a = s.a;

        bool cprr = false;
        const mla::route::TableVerdict v = find_row(ctx, s, &cprr);
        const mla::reg::Row& row = *v.row;
        unsigned threads = 0, lds = 0;
        launch_shape(s, row, &threads, &lds);

        std::vector<unsigned char> block;
        mla::rt::Dim3 grid, block_dim;
        block_dim.x = threads;
        if (s.route == Route::gfx9) {
            const Gfx9Tiling t = gfx9_tiling(s.arch, a.q_dtype, a.kv_dtype, a.num_heads,
                                             a.max_seqlen_q, a.persistent != 0);
            block = gfx9_block(s, t);
            if (a.persistent) {
                grid.x = unsigned(a.work_indptr_len - 1);
            } else {
                grid.x = unsigned((int64_t(a.max_seqlen_q) * a.num_heads + t.sub_q - 1) / t.sub_q);
                grid.y = unsigned(a.batch_size);
                grid.z = unsigned(a.num_splits);
            }
        } else if (s.route == Route::gfx1250_page64) {
            block = gfx1250_block(s);
            // One workgroup covers gqa*L rows; 128 heads run two (along x since aiter PR #5065).
            grid.x = a.num_heads == 128 ? 2 : 1;
            grid.y = unsigned(a.batch_size);
            grid.z = unsigned(a.num_splits);
        } else {
            block = ps1_block(s, cprr);
            grid.x = unsigned(a.work_indptr_len - 1);
        }

        mla::rt::Function f = mla::context_function(ctx, row);  // CODE_OBJECT naming the file
        ctx->runtime->set_device(ctx->device);
        if (lds) ctx->runtime->set_max_dynamic_shared(f, int(lds));
        ctx->runtime->launch(f, grid, block_dim, lds, stream, block.data(), block.size());
    });
}
