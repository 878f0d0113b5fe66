// context.h - struct mla_context: one device, its runtime, its tables and its module cache.
#pragma once
#include <map>
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
    std::unordered_map<uint64_t, const mla::reg::Row*> launch_rows;  // caller-packed key -> row
    std::unordered_map<mla::rt::Function, int> max_dynamic_shared;   // value last set per kernel

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

// Row of `table` for `key` like context_row, memoised in the context under `id`, a 64-bit packing
// of the key that the caller guarantees to be unique per (table, key): a repeated launch then
// skips building the key and the table lookup. make_key() is only called on a miss.
template <class MakeKey>
const reg::Row& context_row_cached(mla_context* ctx, uint64_t id, const std::string& table,
                                   MakeKey&& make_key) {
    {
        std::lock_guard<std::mutex> lock(ctx->mutex);
        auto it = ctx->launch_rows.find(id);
        if (it != ctx->launch_rows.end()) return *it->second;
    }
    const reg::Row& row = context_row(ctx, table, make_key());
    std::lock_guard<std::mutex> lock(ctx->mutex);
    ctx->launch_rows[id] = &row;
    return row;
}

// Raises a kernel's dynamic shared-memory limit to `bytes` once per context (the runtime call is
// skipped when the value is already set) [LAUNCH].
void context_set_max_dynamic_shared(mla_context* ctx, rt::Function f, int bytes);

// Checks ctx is not null [INVALID_ARGUMENT].
mla_context* check_context(mla_context* ctx);

}  // namespace mla
