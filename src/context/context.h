// context.h - struct mla_context: one device, its runtime, its tables and its module cache.
#pragma once
#include <atomic>
#include <climits>
#include <map>
#include <tuple>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "mla_c_api.h"
#include "registry/registry.h"
#include "runtime/runtime.h"

struct mla_context {
    mla::rt::Runtime* runtime = nullptr;
    int device = 0;
    std::string arch;        // "sm_90a", "gfx942", ...
    int num_cus = 0;
    std::string root;        // code-object root in use
    std::shared_ptr<const mla::reg::ArchTables> tables;  // may be null for an arch with none

    std::mutex mutex;                                  // guards the caches below
    std::map<std::string, mla::rt::Module> modules;    // by code-object path, loaded once
    std::map<std::string, mla::rt::Function> functions;  // by path + "\n" + symbol
    // Fast paths of the launch calls (mla_decode_fwd runs per decode step):
    std::unordered_map<const mla::reg::Row*, mla::rt::Function> row_functions;  // rows of `tables`
    // caller-packed key -> row and its integer launch values: launch_threads, launch_smem (-1
    // where the row has none), launch_units_per_cta, launch_pdl (mla_decode, mla_reduce; kAbsent where the
    // row has none, so that a negative value in the table still reaches the launch's checks),
    // launch_kv_tma, launch_kv_tma_l2, launch_cluster (mla_decode; kAbsent likewise), launch_fused
    // (mla_reduce; kAbsent likewise), launch_carveout (both; kAbsent likewise)
    struct LaunchRow {
        static constexpr long kAbsent = LONG_MIN;
        const mla::reg::Row* row = nullptr;
        long threads = -1, smem = -1, units_per_cta = kAbsent, pdl = kAbsent, kv_tma = kAbsent, kv_tma_l2 = kAbsent,
             fused = kAbsent, cluster = kAbsent, carveout = kAbsent;
    };
    std::unordered_map<uint64_t, LaunchRow> launch_rows;
    std::unordered_map<mla::rt::Function, int> max_dynamic_shared;   // value last set per kernel
    std::unordered_map<mla::rt::Function, int> smem_carveout;        // likewise (launch_carveout)
    // whether smem_carveout holds any value >= 0: a row with none (-1, every shipped row) then
    // needs no call and no lock (context_set_smem_carveout, once per decode launch)
    std::atomic<bool> carveout_set{false};
    // KV-cache tensor maps mla_decode_fwd encoded (launch_kv_tma rows), by (cache pointer, element
    // bytes (2 bf16, 1 fp8), page size, pages, page stride, L2 promotion in bytes, rank: 3 for
    // boxes of one 64-column block, 4 for page boxes of all 9): engines pass
    // one cache per layer, the same ones on every step. `ok` false: the runtime had no map to give
    // (the kernel loads another way). Cleared past 1024 entries.
    struct TensorMapKey {
        const void* kv;
        long elem_bytes, page_size, num_pages, stride_page, l2_promotion, rank;
        bool operator<(const TensorMapKey& o) const {
            return std::tie(kv, elem_bytes, page_size, num_pages, stride_page, l2_promotion, rank) <
                   std::tie(o.kv, o.elem_bytes, o.page_size, o.num_pages, o.stride_page, o.l2_promotion, o.rank);
        }
    };
    struct TensorMapEntry {
        bool ok = false;
        uint64_t map[16] = {};
    };
    std::map<TensorMapKey, TensorMapEntry> kv_tmaps;
    // The last mla_metadata_info answer of mla_decode_fwd (engines pass the same plan params on
    // every step): params as given (arch pointer cleared), the arch string, the sizes.
    struct InfoMemo {
        bool valid = false;
        mla_metadata_params params{};
        std::string arch;
        mla_metadata_sizes sizes{};
    } info_memo;

    ~mla_context();
};

namespace mla {

// Loaded kernel of a table row: loads the row's code object once (thread-safe) and resolves
// knl_name [CODE_OBJECT naming the path or symbol].
rt::Function context_function(mla_context* ctx, const reg::Row& row);

// Row of table `table` of the context's arch matching `key` [NO_KERNEL with the key and the
// table path; ARCH_NOT_BUILT if the arch has no tables].
const reg::Row& context_row(mla_context* ctx, const std::string& table,
                            const std::map<std::string, std::string>& key);

// Row of `table` for `key` like context_row, with its integer launch values (LaunchRow; -1 where
// absent; MLA_ERROR_TABLE if not integers), memoised in the context under `id`, a 64-bit
// packing of the key that the caller guarantees to be unique per (table, key): a repeated launch
// then skips building the key, the table lookup and the parsing. make_key() is only called on a
// miss. optional: a key no row matches gives a LaunchRow whose row is null (memoised too)
// instead of NO_KERNEL.
template <class MakeKey>
mla_context::LaunchRow context_row_cached(mla_context* ctx, uint64_t id, const std::string& table,
                                          MakeKey&& make_key, bool optional = false) {
    {
        std::lock_guard<std::mutex> lock(ctx->mutex);
        auto it = ctx->launch_rows.find(id);
        if (it != ctx->launch_rows.end()) return it->second;
    }
    mla_context::LaunchRow lr;
    if (optional) {
        const reg::Table* t = ctx->tables ? ctx->tables->table(table) : nullptr;
        lr.row = t ? t->find(make_key()) : nullptr;
        if (!lr.row) {
            std::lock_guard<std::mutex> lock(ctx->mutex);
            ctx->launch_rows[id] = lr;
            return lr;
        }
    } else {
        lr.row = &context_row(ctx, table, make_key());
    }
    lr.threads = lr.row->get_int("launch_threads", -1);
    lr.smem = lr.row->get_int("launch_smem", -1);
    lr.units_per_cta = lr.row->get_int("launch_units_per_cta", mla_context::LaunchRow::kAbsent);
    lr.pdl = lr.row->get_int("launch_pdl", mla_context::LaunchRow::kAbsent);
    lr.kv_tma = lr.row->get_int("launch_kv_tma", mla_context::LaunchRow::kAbsent);
    lr.kv_tma_l2 = lr.row->get_int("launch_kv_tma_l2", mla_context::LaunchRow::kAbsent);
    lr.fused = lr.row->get_int("launch_fused", mla_context::LaunchRow::kAbsent);
    lr.cluster = lr.row->get_int("launch_cluster", mla_context::LaunchRow::kAbsent);
    lr.carveout = lr.row->get_int("launch_carveout", mla_context::LaunchRow::kAbsent);
    std::lock_guard<std::mutex> lock(ctx->mutex);
    ctx->launch_rows[id] = lr;
    return lr;
}

// A 0/1 launch column of `row` (launch_pdl, launch_kv_tma): `value` as parsed (get_int, or a
// LaunchRow field), LaunchRow::kAbsent where the row has no such column (false). Any other value
// is MLA_ERROR_TABLE "<file>:<line>: <column> must be 0 or 1, got <value>".
bool launch_flag(const reg::Row& row, const char* column, long value);

// mla_metadata_info(params) memoised per context (the last params given; a params struct of
// another struct_size is not memoised). Returns the status; sizes filled on success.
mla_status context_metadata_info(mla_context* ctx, const mla_metadata_params* params, mla_metadata_sizes* sizes);

// Raises a kernel's dynamic shared-memory limit to `bytes` once per context (the runtime call is
// skipped when the value is already set) [LAUNCH].
void context_set_max_dynamic_shared(mla_context* ctx, rt::Function f, int bytes);
// runtime->set_smem_carveout(f, percent) unless this context last set f to that value; percent
// -1 (the driver's choice) calls it only where this context set f to a value before
// [INVALID_ARGUMENT for a bad ctx, LAUNCH from the runtime].
void context_set_smem_carveout(mla_context* ctx, rt::Function f, int percent);

// Checks ctx is not null [INVALID_ARGUMENT].
mla_context* check_context(mla_context* ctx);

}  // namespace mla
