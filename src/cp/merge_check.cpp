// merge_check.cpp - validation of mla_merge_args for the host and the device merge: counts,
// dtypes, pointers, sizes, aliasing (and alignment for the kernel). Nothing is read or written.
#include <climits>
#include <cstdint>

#include "common/error.h"
#include "context/struct_io.h"
#include "cp/merge.h"

namespace mla::cp {
namespace {

constexpr const char* kWhere = "mla_merge_attn_states: ";

struct Range {
    const char* name;
    uintptr_t lo, hi;  // [lo, hi), empty when lo == hi
};

bool overlap(const Range& x, const Range& y) {
    return x.lo < x.hi && y.lo < y.hi && x.lo < y.hi && y.lo < x.hi;
}

Range range(const char* name, const void* p, int64_t bytes) {
    const uintptr_t lo = reinterpret_cast<uintptr_t>(p);
    return {name, lo, p ? lo + uintptr_t(bytes) : lo};
}

}  // namespace

Merge check_merge(const mla_merge_args* args, bool device) {
    const mla_merge_args defaults = MLA_MERGE_ARGS_INIT;
    Merge m;
    m.a = read_struct(args, defaults, "mla_merge_attn_states: args");
    const mla_merge_args& a = m.a;
    MLA_CHECK_ARG(a.world_size >= 1, kWhere << "world_size must be >= 1 (got " << a.world_size << ")");
    MLA_CHECK_ARG(a.total_q >= 0, kWhere << "total_q is negative (" << a.total_q << ")");
    MLA_CHECK_ARG(a.num_heads >= 1, kWhere << "num_heads must be >= 1 (got " << a.num_heads << ")");
    MLA_CHECK_ARG(a.partial_dtype == MLA_DTYPE_FP32 || a.partial_dtype == MLA_DTYPE_BF16,
                  kWhere << "partial_dtype " << int(a.partial_dtype) << " is not fp32 or bf16");
    MLA_CHECK_ARG(a.out_dtype == MLA_DTYPE_FP32 || a.out_dtype == MLA_DTYPE_BF16,
                  kWhere << "out_dtype " << int(a.out_dtype) << " is not bf16 or fp32");
    m.units = int64_t(a.total_q) * a.num_heads;
    // W * units * 512 elements must be addressable: W < 2^31, units < 2^31 * 2^31 -> bound it.
    MLA_CHECK_ARG(m.units <= (int64_t(1) << 40) / a.world_size,
                  kWhere << "world_size x total_q x num_heads = " << a.world_size << " x "
                         << a.total_q << " x " << a.num_heads << " is too large");
    if (device)
        MLA_CHECK_ARG(m.units <= INT32_MAX, kWhere << "total_q x num_heads = " << m.units
                                                   << " exceeds 2^31 - 1 (the kernel's grid)");
    MLA_CHECK_ARG(a.partial_out_rank_stride == 0 || a.partial_out_rank_stride >= m.units * kVDim,
                  kWhere << "partial_out_rank_stride " << a.partial_out_rank_stride << " is smaller than one rank's "
                         << "block (total_q x num_heads x 512 = " << m.units * kVDim << " elements; 0 = that)");
    MLA_CHECK_ARG(a.partial_lse_rank_stride == 0 || a.partial_lse_rank_stride >= m.units,
                  kWhere << "partial_lse_rank_stride " << a.partial_lse_rank_stride << " is smaller than one rank's "
                         << "block (total_q x num_heads = " << m.units << " floats; 0 = that)");
    m.out_stride = a.partial_out_rank_stride ? a.partial_out_rank_stride : m.units * kVDim;
    m.lse_stride = a.partial_lse_rank_stride ? a.partial_lse_rank_stride : m.units;
    MLA_CHECK_ARG(m.out_stride <= (int64_t(1) << 50) / a.world_size && m.lse_stride <= (int64_t(1) << 50) / a.world_size,
                  kWhere << "the rank strides (" << m.out_stride << ", " << m.lse_stride << " elements) x world_size "
                         << a.world_size << " are too large");
    if (m.units == 0) return m;
    MLA_CHECK_ARG(a.partial_out && a.partial_lse && a.out,
                  kWhere << "partial_out, partial_lse and out must not be NULL");
    if (device) {
        auto aligned = [](const void* p, uintptr_t n) { return reinterpret_cast<uintptr_t>(p) % n == 0; };
        MLA_CHECK_ARG(aligned(a.partial_out, 16) && aligned(a.out, 16),
                      kWhere << "partial_out and out must be 16-byte aligned");
        MLA_CHECK_ARG(m.out_stride * int64_t(mla_dtype_size(a.partial_dtype)) % 16 == 0,
                      kWhere << "partial_out_rank_stride " << m.out_stride << " elements is not a multiple of 16 bytes");
        MLA_CHECK_ARG(aligned(a.partial_lse, 4) && (!a.lse || aligned(a.lse, 4)),
                      kWhere << "partial_lse and lse must be 4-byte aligned");
    }
    const int64_t W = a.world_size;
    const Range out = range("out", a.out, m.units * kVDim * int64_t(mla_dtype_size(a.out_dtype)));
    const Range lse = range("lse", a.lse, m.units * 4);
    // the inputs' spans, first rank's block to the last one's end (gaps included)
    const Range po = range("partial_out", a.partial_out,
                           ((W - 1) * m.out_stride + m.units * kVDim) * int64_t(mla_dtype_size(a.partial_dtype)));
    const Range pl = range("partial_lse", a.partial_lse, ((W - 1) * m.lse_stride + m.units) * 4);
    for (const Range* x : {&out, &lse})
        for (const Range* y : {&out, &lse, &po, &pl})
            if (x != y && !(x == &lse && y == &out))
                MLA_CHECK_ARG(!overlap(*x, *y),
                              kWhere << x->name << " overlaps " << y->name << " (the merge does "
                                     << "not work in place)");
    return m;
}

}  // namespace mla::cp
