// registry.h - the code-object registry: per-arch CSV tables under <root>/<arch>/ (any depth),
// read with fccp (Debian libfccp-dev), validated on load, looked up by exact key match.
//
// A table's name is its file's basename without ".csv" ("mla_asm", "mla_dsl", "mla_decode").
// Value columns: knl_name, co_name, dyn_lds and every column whose name starts with "launch_".
// Key columns: all the others. A duplicate key (two rows with equal key columns) is an
// MLA_ERROR_TABLE naming both rows (file:line) (MLA_TABLE_DUPLICATES=first keeps the first row
// instead and records the other in Table::dropped_duplicates); so is a missing knl_name/co_name column, an
// empty file or a row with the wrong number of fields, an empty knl_name/co_name, a header with
// an empty or repeated column name, or more than kMaxColumns columns. Lines starting with '#' and
// blank lines are comments; fields are trimmed of spaces and tabs; there is no quoting.
// Exact-match lookup (Table::find): a column the table lacks reads as "0" (cprr in gfx942's
// mla_asm.csv), and a key column of the table that the caller does not pass must be "0" in the
// row.
// A row's code-object file is <dir of the csv>/<co_name>, or <root>/<arch>/<co_name> when that is
// missing (aiter's layout); its absence is recorded, not an error, until the row is launched.
#pragma once
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace mla::reg {

struct Row {
    std::string table;   // table name
    std::string file;    // csv path
    int line = 0;        // 1-based line in the csv
    std::map<std::string, std::string> values;  // every column of the table's header
    std::string knl_name;
    std::string co_name;
    std::string co_path;       // resolved absolute path of the code object
    bool co_exists = false;

    // Column value as int; `fallback` if absent; throws MLA_ERROR_TABLE if not an integer.
    long get_int(const std::string& column, long fallback = 0) const;
    const std::string& get(const std::string& column) const;  // "" if absent
};

struct Table {
    std::string name;
    std::string path;
    std::vector<std::string> columns;
    std::vector<std::string> key_columns;
    std::vector<Row> rows;
    // With MLA_TABLE_DUPLICATES=first: one message per dropped duplicate row (file:line of both).
    std::vector<std::string> dropped_duplicates;

    // The row matching `key` exactly (rules in the file comment); nullptr if none. Keys are
    // unique (checked at load), so there is at most one.
    const Row* find(const std::map<std::string, std::string>& key) const;
    bool has_column(const std::string& column) const;
};

struct ArchTables {
    std::string arch;
    std::string dir;  // <root>/<arch>
    std::map<std::string, Table> tables;  // by table name

    const Table* table(const std::string& name) const;  // nullptr if absent
    int num_rows() const;
    int missing_files() const;
};

// Most columns a table may have.
constexpr int kMaxColumns = 32;

// True for value columns (knl_name, co_name, dyn_lds, launch_*); all others are key columns.
bool is_value_column(const std::string& column);

// Reads one CSV table [TABLE on malformed input, naming file and line]. `arch_dir` is
// <root>/<arch>, the fallback folder of code-object files.
Table load_table(const std::string& csv_path, const std::string& arch_dir);

// Loads every *.csv under root/arch (recursively, in path order). Returns nullptr when root/arch
// has no table [TABLE for a malformed table or two tables with the same name].
std::shared_ptr<const ArchTables> load_arch(const std::string& root, const std::string& arch);

// Code-object root search (see mla_c_api.h; a set MLA_CODEOBJECT_DIR that is not a folder ends it
// with no root): explicit, MLA_CODEOBJECT_DIR, next to the .so
// (dladdr), install prefix, build tree. Returns "" if none exists; `tried` (if given) gets the
// list of candidates with the reason each was skipped.
std::string find_root(const std::string& explicit_root, std::string* tried = nullptr);

// Process-wide cache of loaded tables, keyed by (root, arch); thread-safe.
class Registry {
public:
    static Registry& global();
    // Root used by device-free queries (mla_set_codeobject_root / search order).
    std::string default_root();
    void set_default_root(const std::string& root);  // "" = search order
    // Tables of `arch` under `root` ("" = default root); nullptr if none (ARCH_NOT_BUILT).
    // Throws MLA_ERROR_TABLE for a malformed table.
    std::shared_ptr<const ArchTables> arch(const std::string& arch, const std::string& root = "");
    void clear();

private:
    std::mutex mutex_;
    std::string override_root_;
    bool searched_ = false;      // searched_root_ is valid
    std::string searched_root_;  // result of find_root("") for searched_env_
    std::string searched_env_;   // MLA_CODEOBJECT_DIR when searched
    std::map<std::pair<std::string, std::string>, std::shared_ptr<const ArchTables>> cache_;
};

// Reads a row's code object file into memory [CODE_OBJECT naming the path, the kernel and the
// table row when the file is missing, unreadable or empty].
std::vector<char> read_code_object(const Row& row);

}  // namespace mla::reg
