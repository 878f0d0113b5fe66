// host_plan.h - host memory for one metadata plan, sized by mla_metadata_info, and the
// mla_metadata_buffers view of it that mla_plan_metadata fills. Shared by the `mla` program, the
// benchmarks and the GPU test programs (public C API only).
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "mla_c_api.h"

// The six plan buffers in mla_metadata_buffers order: work_metadata (uint64), work_indptr,
// work_info_set (8 int32 per row), reduce_indptr, reduce_final_map (2 int32 per row),
// reduce_partial_map (int32).
constexpr int kPlanBuffers = 6;
inline const char* const kPlanBufferNames[kPlanBuffers] = {"work_metadata",    "work_indptr",
                                                           "work_info_set",    "reduce_indptr",
                                                           "reduce_final_map", "reduce_partial_map"};
constexpr size_t kPlanRowBytes[kPlanBuffers] = {8, 4, 32, 4, 8, 4};

// The lengths mla_metadata_info gives for the six buffers, each in its own rows.
inline void plan_rows(const mla_metadata_sizes& z, int64_t rows[kPlanBuffers]) {
    const int64_t r[kPlanBuffers] = {z.work_metadata_len, z.work_indptr_len,       z.work_info_set_rows,
                                     z.reduce_indptr_len, z.reduce_final_map_rows, z.reduce_partial_map_len};
    for (int i = 0; i < kPlanBuffers; ++i) rows[i] = r[i];
}

// mla_metadata_buffers over six buffers at ptr[i] holding rows[i] rows each (host or device).
inline mla_metadata_buffers plan_buffers_view(void* const ptr[kPlanBuffers], const int64_t rows[kPlanBuffers]) {
    mla_metadata_buffers m{};
    m.struct_size = sizeof m;
    m.work_metadata = static_cast<uint64_t*>(ptr[0]);
    m.work_metadata_len = rows[0];
    m.work_indptr = static_cast<int32_t*>(ptr[1]);
    m.work_indptr_len = rows[1];
    m.work_info_set = static_cast<int32_t*>(ptr[2]);
    m.work_info_set_rows = rows[2];
    m.reduce_indptr = static_cast<int32_t*>(ptr[3]);
    m.reduce_indptr_len = rows[3];
    m.reduce_final_map = static_cast<int32_t*>(ptr[4]);
    m.reduce_final_map_rows = rows[4];
    m.reduce_partial_map = static_cast<int32_t*>(ptr[5]);
    m.reduce_partial_map_len = rows[5];
    return m;
}

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
        void* const ptr[kPlanBuffers] = {work_metadata.data(), work_indptr.data(),      work_info_set.data(),
                                         reduce_indptr.data(), reduce_final_map.data(), reduce_partial_map.data()};
        const int64_t rows[kPlanBuffers] = {int64_t(work_metadata.size()),        int64_t(work_indptr.size()),
                                            int64_t(work_info_set.size() / 8),    int64_t(reduce_indptr.size()),
                                            int64_t(reduce_final_map.size() / 2), int64_t(reduce_partial_map.size())};
        buffers = plan_buffers_view(ptr, rows);
    }
    HostPlan(const HostPlan&) = delete;  // `buffers` points into this object's vectors
    HostPlan& operator=(const HostPlan&) = delete;

private:
    // Length of a buffer: what mla_metadata_info asked for, at least `least` (never 0, so that
    // data() is never null).
    static size_t n(int64_t len, int64_t least = 1) { return size_t(std::max(len, least)); }
};
