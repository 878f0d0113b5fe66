// context.h - struct mla_context: one device, its runtime, its tables and its module cache.
#pragma once
#include <map>
#include <memory>
#include <mutex>
#include <string>

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

// Checks ctx is not null [INVALID_ARGUMENT].
mla_context* check_context(mla_context* ctx);

}  // namespace mla
