// host_plan.h - host memory for one metadata plan, sized by mla_metadata_info, and the
// mla_metadata_buffers view of it that mla_plan_metadata fills. Shared by the `mla` program, the
// benchmarks and the GPU test programs (public C API only).
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "mla_c_api.h"

struct HostPlan {
    std::vector<uint64_t> work_metadata;
    std::vector<int32_t> work_indptr, work_info_set, reduce_indptr, reduce_final_map,
        reduce_partial_map;
    mla_metadata_buffers buffers{};  // points into the vectors above

    explicit HostPlan(const mla_metadata_sizes& z)
        : work_metadata(n(z.work_metadata_len, 2)),
          work_indptr(n(z.work_indptr_len)),
          work_info_set(n(z.work_info_set_rows) * 8),
          reduce_indptr(n(z.reduce_indptr_len)),
          reduce_final_map(n(z.reduce_final_map_rows) * 2),
          reduce_partial_map(n(z.reduce_partial_map_len)) {
        buffers.struct_size = sizeof buffers;
        buffers.work_metadata = work_metadata.data();
        buffers.work_metadata_len = int64_t(work_metadata.size());
        buffers.work_indptr = work_indptr.data();
        buffers.work_indptr_len = int64_t(work_indptr.size());
        buffers.work_info_set = work_info_set.data();
        buffers.work_info_set_rows = int64_t(work_info_set.size() / 8);
        buffers.reduce_indptr = reduce_indptr.data();
        buffers.reduce_indptr_len = int64_t(reduce_indptr.size());
        buffers.reduce_final_map = reduce_final_map.data();
        buffers.reduce_final_map_rows = int64_t(reduce_final_map.size() / 2);
        buffers.reduce_partial_map = reduce_partial_map.data();
        buffers.reduce_partial_map_len = int64_t(reduce_partial_map.size());
    }
    HostPlan(const HostPlan&) = delete;  // `buffers` points into this object's vectors
    HostPlan& operator=(const HostPlan&) = delete;

private:
    // Length of a buffer: what mla_metadata_info asked for, at least `least` (never 0, so that
    // data() is never null).
    static size_t n(int64_t len, int64_t least = 1) { return size_t(std::max(len, least)); }
};
