// table_index.h - exact-key lookup of registry rows through a hashed index built once per loaded
// table (src/routing only). Same semantics as reg::Table::find (exact match on the given key
// columns; a table key column the caller does not name must be "0" or absent), at hash cost.
#pragma once
#include <memory>
#include <string>

#include "registry/registry.h"

namespace mla::route {

// Row of `table` (owned by `tables`) whose columns cols[0..n) equal values[0..n); nullptr if
// none. Table cells are canonicalised (blanks trimmed, integers as std::to_string writes them);
// `values` must already be canonical. `cols` must be a static array: its address names the
// index.
const reg::Row* find_row(const std::shared_ptr<const reg::ArchTables>& tables,
                         const reg::Table& table, const char* const* cols, int n,
                         const std::string* values);

}  // namespace mla::route
