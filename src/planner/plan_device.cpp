// plan_device.cpp - mla_plan_metadata_device: validates params and buffer lengths on the host
// (the indptrs are device-resident and are not read), looks up table `mla_meta` (kind v1_2) of
// the context's arch and launches the device planner (codeobjects/sm_90a/planner/meta_v1_2.cu)
// on the caller's stream: no allocation, no synchronisation (CUDA graph capturable).
#include <cstring>

#include "common/error.h"
#include "context/context.h"
#include "context/struct_io.h"
#include "planner/planner.h"
#include "planner/v1_2_core.h"

namespace mla::plan {

void check_device_plan(const Setup& s, const int32_t* qo, const int32_t* kv, const int32_t* last) {
    const mla_v12_config& c = s.cfg;
    if (s.planner != MLA_PLANNER_V1_2)
        MLA_FAIL(MLA_ERROR_UNSUPPORTED_SHAPE,
                 "the device planner runs v1_2 only (fast_mode = 1); plan v1_0 / v1_1 on the host");
    if (c.num_batches > MLA_META_MAX_BATCH)
        MLA_FAIL(MLA_ERROR_UNSUPPORTED_SHAPE, "the device planner takes at most "
                                                  << MLA_META_MAX_BATCH << " requests (got "
                                                  << c.num_batches << "): plan on the host");
    if (c.num_clusters > MLA_META_MAX_CLUSTERS)
        MLA_FAIL(MLA_ERROR_UNSUPPORTED_SHAPE, "the device planner takes at most "
                                                  << MLA_META_MAX_CLUSTERS << " clusters (got "
                                                  << c.num_clusters << ")");
    MLA_CHECK_ARG(qo != nullptr, "qo_indptr is NULL");
    MLA_CHECK_ARG(kv != nullptr, "kv_indptr is NULL");
    MLA_CHECK_ARG(last != nullptr || c.num_batches == 0, "kv_last_page_lens is NULL");
}

// Fills the kernel params of a device plan; throws like mla_plan_metadata_device.
mla_meta_params device_params(const Setup& s, const int32_t* qo, const int32_t* kv,
                              const int32_t* last, const mla_metadata_buffers& b) {
    check_device_plan(s, qo, kv, last);
    const mla_v12_config& c = s.cfg;
    mla_meta_params p;
    std::memset(&p, 0, sizeof(p));
    p.qo_indptr = qo;
    p.kv_indptr = kv;
    p.kv_last_page_lens = last;
    p.work_metadata = b.work_metadata;
    p.work_indptr = b.work_indptr;
    p.work_info_set = b.work_info_set;
    p.reduce_indptr = b.reduce_indptr;
    p.reduce_final_map = b.reduce_final_map;
    p.reduce_partial_map = b.reduce_partial_map;
    p.work_indptr_len = int32_t(b.work_indptr_len);
    p.work_info_set_rows = int32_t(b.work_info_set_rows);
    p.reduce_indptr_len = int32_t(b.reduce_indptr_len);
    p.reduce_final_map_rows = int32_t(b.reduce_final_map_rows);
    p.reduce_partial_map_len = int32_t(b.reduce_partial_map_len);
    p.cfg = c;
    return p;
}

}  // namespace mla::plan

using namespace mla;

extern "C" MLA_API mla_status mla_plan_metadata_device(mla_context* ctx,
                                                       const mla_metadata_params* params,
                                                       const int32_t* qo_indptr,
                                                       const int32_t* kv_indptr,
                                                       const int32_t* kv_last_page_lens,
                                                       const mla_metadata_buffers* buffers,
                                                       void* stream) {
    return guard([&] {
        check_context(ctx);
        const plan::Setup s = plan::resolve_public(params);
        MLA_CHECK_ARG(ctx->arch == route::arch_name(s.arch),
                      "params->arch is " << s.params.arch << " but the context's device is "
                                         << ctx->arch);
        if (s.cfg.group_major) {
            int32_t nt = 0, ts = 0;
            mla_v12::qo_tiles(s.cfg, s.cfg.max_seqlen_qo, &nt, &ts);
            if (nt > 1)
                MLA_FAIL(MLA_ERROR_UNSUPPORTED_SHAPE,
                         "head_group_major = 1 with max_seqlen_qo " << s.cfg.max_seqlen_qo << " ("
                         << nt << " qo tiles per request): the device planner lays out head-group "
                            "sections only, the qo-tile sections are host-only (docs/planner.md); plan "
                            "on the host (mla_plan_metadata)");
            if (mla_v12::group_sections(s.cfg) == 1)  // C not a multiple of r: one drifting chain
                MLA_FAIL(MLA_ERROR_UNSUPPORTED_SHAPE,
                         "head_group_major = 1 with " << s.cfg.num_clusters << " clusters, not a multiple of the "
                         << s.cfg.ratio << " head groups: the device planner lays out the twin sections only "
                            "(docs/planner.md); plan on the host (mla_plan_metadata) or use a multiple");
        }
        plan::check_device_plan(s, qo_indptr, kv_indptr, kv_last_page_lens);
        const mla_metadata_buffers b = plan::check_buffers(s, buffers);
        const mla_meta_params p = plan::device_params(s, qo_indptr, kv_indptr, kv_last_page_lens, b);
        const reg::Row& row = context_row(ctx, "mla_meta", {{"kind", "v1_2"}});
        const long threads = row.get_int("launch_threads", MLA_META_THREADS);
        if (threads != MLA_META_THREADS)
            MLA_FAIL(MLA_ERROR_TABLE, row.file << ":" << row.line << ": launch_threads " << threads
                                               << " but the kernel is built for "
                                               << MLA_META_THREADS);
        const rt::Function f = context_function(ctx, row);
        const unsigned smem = mla_meta_smem_bytes(s.cfg.num_batches, s.cfg.num_clusters);
        ctx->runtime->set_device(ctx->device);
        if (smem > 48 * 1024) ctx->runtime->set_max_dynamic_shared(f, int(smem));
        // CTAs: each computes the plan skeleton and writes its share (meta_v1_2.cu); the table's
        // launch_max_blocks caps them (1 = one CTA writes everything).
        const long max_blocks = row.get_int("launch_max_blocks", 1);
        if (max_blocks < 1 || max_blocks > 1024)
            MLA_FAIL(MLA_ERROR_TABLE, row.file << ":" << row.line << ": launch_max_blocks "
                                               << max_blocks << " is not in [1, 1024]");
        const long want = (long(s.cfg.num_batches) + MLA_META_REQS_PER_CTA - 1) /
                          MLA_META_REQS_PER_CTA;
        rt::Dim3 grid, block;
        grid.x = unsigned(want < 1 ? 1 : (want > max_blocks ? max_blocks : want));
        block.x = MLA_META_THREADS;
        ctx->runtime->launch(f, grid, block, smem, stream, &p, sizeof(p));
    });
}
