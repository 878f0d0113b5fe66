// api_planner.cpp - the C API of the host planner: mla_metadata_info, mla_plan_metadata,
// mla_update_metadata (mla_plan_metadata_device is in plan_device.cpp).
#include <cstring>

#include "common/error.h"
#include "context/struct_io.h"
#include "planner/planner.h"

using namespace mla;

extern "C" {

MLA_API mla_status mla_metadata_info(const mla_metadata_params* params, mla_metadata_sizes* out) {
    return guard([&] {
        check_out_struct(out, "out");
        const plan::Setup s = plan::resolve_public(params);
        write_struct(out, s.sizes);
    });
}

MLA_API mla_status mla_plan_metadata(const mla_metadata_params* params, const int32_t* qo_indptr,
                                     const int32_t* kv_indptr, const int32_t* kv_last_page_lens,
                                     const mla_metadata_buffers* buffers,
                                     const void* device_work_indptr,
                                     const void* device_work_info_set,
                                     mla_plan_summary* summary) {
    return guard([&] {
        if (summary) check_out_struct(summary, "summary");
        const plan::Setup s = plan::resolve_public(params);
        const mla_metadata_buffers b = plan::check_buffers(s, buffers);
        plan::validate_inputs(s, qo_indptr, kv_indptr, kv_last_page_lens);
        // Everything is checked: from here on the buffers are written.
        int32_t sections = 1;  // v1_0 / v1_1: aiter's order
        switch (s.planner) {
        case MLA_PLANNER_V1_2: sections = plan::plan_v1_2(s, qo_indptr, kv_indptr, kv_last_page_lens, b); break;
        case MLA_PLANNER_V1_0: plan::plan_v1_0(s, qo_indptr, kv_indptr, kv_last_page_lens, b); break;
        case MLA_PLANNER_V1_1: plan::plan_v1_1(s, qo_indptr, kv_indptr, kv_last_page_lens, b); break;
        }
        b.work_metadata[0] = uint64_t(reinterpret_cast<uintptr_t>(
            device_work_indptr ? device_work_indptr : static_cast<const void*>(b.work_indptr)));
        b.work_metadata[1] = uint64_t(reinterpret_cast<uintptr_t>(
            device_work_info_set ? device_work_info_set
                                 : static_cast<const void*>(b.work_info_set)));
        if (summary) {
            mla_plan_summary r = plan::summarize(s, kv_indptr, b);
            r.num_sections = sections;
            write_struct(summary, r);
        }
    });
}

MLA_API mla_status mla_update_metadata(const mla_metadata_params* params,
                                       const int32_t* new_kv_indptr,
                                       const int32_t* num_reject_tokens,
                                       const mla_metadata_buffers* buffers) {
    return guard([&] {
        const plan::Setup s = plan::resolve_public(params);
        if (s.cfg.group_major)
            MLA_FAIL(MLA_ERROR_UNSUPPORTED_SHAPE,
                     "mla_update_metadata does not advance head_group_major plans (replan instead)");
        const mla_metadata_buffers b = plan::check_buffers(s, buffers);
        plan::update_plan(s, new_kv_indptr, num_reject_tokens, b);
    });
}

}  // extern "C"
