// context.cpp - the context's module cache and table lookups (see context.h).
#include "context/context.h"

#include <cstring>

#include "common/error.h"

mla_context::~mla_context() {
    if (!runtime) return;
    try {
        runtime->set_device(device);
        for (auto& m : modules) runtime->module_unload(m.second);
    } catch (...) {
        // Destruction cannot report; a failing unload (e.g. after fork) leaks the module.
    }
}

namespace mla {

mla_context* check_context(mla_context* ctx) {
    MLA_CHECK_ARG(ctx != nullptr, "context is NULL");
    return ctx;
}

namespace {
// True when `row` is one of the context's own table rows (alive as long as the context).
bool owned_row(const mla_context* ctx, const reg::Row& row) {
    if (!ctx->tables) return false;
    const reg::Table* t = ctx->tables->table(row.table);
    return t && !t->rows.empty() && &row >= &t->rows.front() && &row <= &t->rows.back();
}
}  // namespace

bool launch_flag(const reg::Row& row, const char* column, long value) {
    if (value == mla_context::LaunchRow::kAbsent) return false;
    MLA_CHECK(value == 0 || value == 1, MLA_ERROR_TABLE,
              row.file << ":" << row.line << ": " << column << " must be 0 or 1, got " << value);
    return value == 1;
}

rt::Function context_function(mla_context* ctx, const reg::Row& row) {
    check_context(ctx);
    std::lock_guard<std::mutex> lock(ctx->mutex);
    const bool owned = owned_row(ctx, row);
    if (owned) {
        auto rit = ctx->row_functions.find(&row);
        if (rit != ctx->row_functions.end()) return rit->second;
    }
    const std::string fkey = row.co_path + "\n" + row.knl_name;
    auto fit = ctx->functions.find(fkey);
    if (fit != ctx->functions.end()) {
        if (owned) ctx->row_functions[&row] = fit->second;
        return fit->second;
    }

    ctx->runtime->set_device(ctx->device);
    rt::Module module = nullptr;
    auto mit = ctx->modules.find(row.co_path);
    if (mit != ctx->modules.end()) {
        module = mit->second;
    } else {
        std::vector<char> image = reg::read_code_object(row);
        try {
            module = ctx->runtime->module_load_data(image.data(), image.size());
        } catch (const Error& e) {
            MLA_FAIL(e.status(), "loading code object " << row.co_path << " (table " << row.file
                                                        << ":" << row.line << "): "
                                                        << e.message());
        }
        ctx->modules[row.co_path] = module;
    }
    rt::Function f = nullptr;
    try {
        f = ctx->runtime->module_get_function(module, row.knl_name.c_str());
    } catch (const Error& e) {
        MLA_FAIL(e.status(), e.message() << " (code object " << row.co_path << ", table "
                                         << row.file << ":" << row.line << ")");
    }
    ctx->functions[fkey] = f;
    if (owned) ctx->row_functions[&row] = f;
    return f;
}

namespace {
// A per-kernel attribute set through the runtime unless this context last set f to `value`
// (`cache`, one of ctx's maps, guarded by ctx->mutex; the runtime call runs outside the lock), or,
// for a kernel this context never set, unless `value` is `unset`, the value such a kernel has.
// The caller has checked ctx.
template <class Set>
void set_attribute_once(mla_context* ctx, std::unordered_map<rt::Function, int>& cache, rt::Function f, int value,
                        int unset, Set&& set) {
    {
        std::lock_guard<std::mutex> lock(ctx->mutex);
        auto it = cache.find(f);
        if (it != cache.end() ? it->second == value : value == unset) return;
    }
    set();
    std::lock_guard<std::mutex> lock(ctx->mutex);
    cache[f] = value;
}
}  // namespace

void context_set_max_dynamic_shared(mla_context* ctx, rt::Function f, int bytes) {
    check_context(ctx);
    // (a kernel's own limit is not known here: every first value is set)
    set_attribute_once(ctx, ctx->max_dynamic_shared, f, bytes, INT_MIN,
                       [&] { ctx->runtime->set_max_dynamic_shared(f, bytes); });
}

void context_set_smem_carveout(mla_context* ctx, rt::Function f, int percent) {
    check_context(ctx);
    // -1 (the driver's choice) is what a kernel has until this context sets it: no call, and in a
    // context that never set one (every shipped table), no lock either
    if (percent < 0 && !ctx->carveout_set.load(std::memory_order_acquire)) return;
    set_attribute_once(ctx, ctx->smem_carveout, f, percent, -1, [&] { ctx->runtime->set_smem_carveout(f, percent); });
    if (percent >= 0) ctx->carveout_set.store(true, std::memory_order_release);
}

const reg::Row& context_row(mla_context* ctx, const std::string& table,
                            const std::map<std::string, std::string>& key) {
    check_context(ctx);
    if (!ctx->tables)
        MLA_FAIL(MLA_ERROR_ARCH_NOT_BUILT,
                 "no code-object tables for " << ctx->arch << " under " << ctx->root);
    const reg::Table* t = ctx->tables->table(table);
    if (!t)
        MLA_FAIL(MLA_ERROR_NO_KERNEL, "no table '" << table << "' for " << ctx->arch << " under "
                                                   << ctx->tables->dir);
    const reg::Row* row = t->find(key);
    if (!row) {
        std::string k;
        for (const auto& kv : key) k += (k.empty() ? "" : ", ") + kv.first + "=" + kv.second;
        MLA_FAIL(MLA_ERROR_NO_KERNEL, "no row of " << t->path << " matches " << k);
    }
    return *row;
}

mla_status context_metadata_info(mla_context* ctx, const mla_metadata_params* params, mla_metadata_sizes* sizes) {
    // Only a current-version struct with an arch string is memoised: its bytes (arch pointer
    // cleared) and the arch string are the whole input of mla_metadata_info.
    const bool memo = params && params->struct_size == sizeof(mla_metadata_params) && params->arch && sizes &&
                      sizes->struct_size == sizeof(mla_metadata_sizes);
    mla_metadata_params key{};
    if (memo) {
        std::memcpy(&key, params, sizeof key);
        key.arch = nullptr;
        std::lock_guard<std::mutex> lock(ctx->mutex);
        const mla_context::InfoMemo& m = ctx->info_memo;
        if (m.valid && std::memcmp(&m.params, &key, sizeof key) == 0 && m.arch == params->arch) {
            *sizes = m.sizes;
            return MLA_SUCCESS;
        }
    }
    const mla_status st = mla_metadata_info(params, sizes);
    if (st == MLA_SUCCESS && memo) {
        std::lock_guard<std::mutex> lock(ctx->mutex);
        mla_context::InfoMemo& m = ctx->info_memo;
        m.params = key;
        m.arch = params->arch;
        m.sizes = *sizes;
        m.valid = true;
    }
    return st;
}

}  // namespace mla
