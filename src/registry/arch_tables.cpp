// arch_tables.cpp - every table of one arch under a code-object root, and code-object reading.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "common/error.h"
#include "registry/registry.h"

namespace fs = std::filesystem;

namespace mla::reg {

const Table* ArchTables::table(const std::string& name) const {
    auto it = tables.find(name);
    return it == tables.end() ? nullptr : &it->second;
}

int ArchTables::num_rows() const {
    int n = 0;
    for (const auto& t : tables) n += static_cast<int>(t.second.rows.size());
    return n;
}

int ArchTables::missing_files() const {
    int n = 0;
    for (const auto& t : tables)
        for (const Row& r : t.second.rows) n += r.co_exists ? 0 : 1;
    return n;
}

std::shared_ptr<const ArchTables> load_arch(const std::string& root, const std::string& arch) {
    std::error_code ec;
    const fs::path dir = fs::path(root) / arch;
    if (root.empty() || arch.empty() || !fs::is_directory(dir, ec)) return nullptr;

    std::vector<fs::path> csvs;
    fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec),
        end;
    for (; !ec && it != end; it.increment(ec))
        if (it->path().extension() == ".csv" && it->is_regular_file(ec)) csvs.push_back(it->path());
    if (csvs.empty()) return nullptr;
    std::sort(csvs.begin(), csvs.end());

    auto out = std::make_shared<ArchTables>();
    out->arch = arch;
    out->dir = dir.string();
    for (const fs::path& p : csvs) {
        Table t = load_table(p.string(), out->dir);
        auto prev = out->tables.find(t.name);
        if (prev != out->tables.end())
            MLA_FAIL(MLA_ERROR_TABLE, "two tables named '" << t.name << "' for " << arch << ": "
                                                          << prev->second.path << " and " << t.path);
        std::string name = t.name;
        out->tables.emplace(name, std::move(t));
    }
    return out;
}

std::vector<char> read_code_object(const Row& row) {
    const std::string where = " (kernel " + row.knl_name + ", table " + row.file + ":" +
                              std::to_string(row.line) + ")";
    std::error_code ec;
    if (!fs::is_regular_file(row.co_path, ec))
        MLA_FAIL(MLA_ERROR_CODE_OBJECT, "code object file missing: " << row.co_path << where);
    std::ifstream in(row.co_path, std::ios::binary);
    if (!in)
        MLA_FAIL(MLA_ERROR_CODE_OBJECT, "cannot read code object " << row.co_path << ": "
                                                                   << std::strerror(errno) << where);
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (bytes.empty())
        MLA_FAIL(MLA_ERROR_CODE_OBJECT, "code object file is empty: " << row.co_path << where);
    return bytes;
}

}  // namespace mla::reg
