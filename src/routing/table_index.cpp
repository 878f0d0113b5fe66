// table_index.cpp - hashed exact-key index over a registry table, built on first use and kept
// while the registry's ArchTables stays loaded (so a query costs a hash lookup, not a scan).
#include "routing/table_index.h"

#include <cctype>
#include <cstdlib>
#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace mla::route {
namespace {

// Trims blanks; integers are rewritten in canonical form so that "04" and "4" match.
std::string canon(const std::string& v) {
    size_t b = 0, e = v.size();
    while (b < e && std::isspace(static_cast<unsigned char>(v[b]))) ++b;
    while (e > b && std::isspace(static_cast<unsigned char>(v[e - 1]))) --e;
    std::string s = v.substr(b, e - b);
    if (s.empty()) return s;
    char* end = nullptr;
    const long n = std::strtol(s.c_str(), &end, 10);
    if (end && *end == '\0') return std::to_string(n);
    return s;
}

// Key string of a row (values canonicalised) or of a query (values already canonical).
std::string join(const std::string* values, int n, bool canonicalise) {
    std::string k;
    k.reserve(64);
    for (int i = 0; i < n; ++i) {
        if (i) k += '\x1f';
        k += canonicalise ? canon(values[i]) : values[i];
    }
    return k;
}

struct Index {
    std::shared_ptr<const reg::ArchTables> owner;  // keeps the table (and the pointer key) alive
    std::unordered_map<std::string, const reg::Row*> rows;
};

std::mutex g_mutex;
// By (table, column list): callers pass static column arrays, so the pointer names the list.
std::map<std::pair<const reg::Table*, const char* const*>, Index> g_indexes;

Index build(const std::shared_ptr<const reg::ArchTables>& tables, const reg::Table& table,
            const char* const* cols, int n) {
    Index ix;
    ix.owner = tables;
    std::vector<std::string> extra;  // key columns of the table the caller does not name
    for (const std::string& c : table.key_columns) {
        bool named = false;
        for (int i = 0; i < n; ++i) named = named || c == cols[i];
        if (!named) extra.push_back(c);
    }
    std::vector<std::string> vals(static_cast<size_t>(n));
    for (const reg::Row& row : table.rows) {
        bool ok = true;
        for (const std::string& c : extra) {
            auto it = row.values.find(c);
            if (it != row.values.end() && canon(it->second) != "0" && !canon(it->second).empty())
                ok = false;
        }
        if (!ok) continue;
        for (int i = 0; i < n; ++i) {
            auto it = row.values.find(cols[i]);
            vals[static_cast<size_t>(i)] = it == row.values.end() ? "0" : it->second;
        }
        ix.rows.emplace(join(vals.data(), n, true), &row);  // first row wins on a duplicate key
    }
    return ix;
}

}  // namespace

const reg::Row* find_row(const std::shared_ptr<const reg::ArchTables>& tables,
                         const reg::Table& table, const char* const* cols, int n,
                         const std::string* values) {
    const std::string key = join(values, n, false);
    std::lock_guard<std::mutex> lock(g_mutex);
    auto id = std::make_pair(&table, cols);
    auto it = g_indexes.find(id);
    if (it == g_indexes.end() || it->second.owner != tables) {
        if (g_indexes.size() > 64) g_indexes.clear();  // tables reloaded many times: start over
        it = g_indexes.insert_or_assign(id, build(tables, table, cols, n)).first;
    }
    auto r = it->second.rows.find(key);
    return r == it->second.rows.end() ? nullptr : r->second;
}

}  // namespace mla::route
