// csv_table.cpp - one code-object CSV table: parsing with fccp, validation, exact-key lookup.
//
// fccp's CSVReader needs its column count at compile time, so a table is read in two passes over
// the same bytes: an io::LineReader finds the header (skipping '#' and blank lines) to learn the
// column names, then a CSVReader<kMaxColumns> is given those names padded with names that cannot
// occur (ignored as missing columns) and reads the rows, checking each row's field count.
#define CSV_IO_NO_THREAD 1
// fccp copies file names into fixed 255-byte buffers with strncpy (truncation is intended there).
#pragma GCC diagnostic ignored "-Wstringop-truncation"
#include <limits>  // fccp's csv.h uses std::numeric_limits without including it
#include <libfccp/csv.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include "common/error.h"
#include "registry/registry.h"

namespace fs = std::filesystem;

namespace mla::reg {
namespace {

// MLA_TABLE_DUPLICATES=first keeps the first of two rows with equal keys (aiter's own gfx950
// mla_asm.csv has such a pair; aiter picks one arbitrarily). Default: a duplicate is an error.
bool allow_duplicates() {
    const char* v = std::getenv("MLA_TABLE_DUPLICATES");
    return v && std::string(v) == "first";
}

using Comments = io::single_and_empty_line_comment<'#'>;
using Reader = io::CSVReader<kMaxColumns, io::trim_chars<' ', '\t'>, io::no_quote_escape<','>,
                             io::throw_on_overflow, Comments>;

std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) MLA_FAIL(MLA_ERROR_TABLE, path << ": cannot open table: " << std::strerror(errno));
    std::ostringstream os;
    os << in.rdbuf();
    return os.str();
}

std::string trim(const std::string& s) {
    size_t b = s.find_first_not_of(" \t\r");
    size_t e = s.find_last_not_of(" \t\r");
    return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

// Header columns (first non-comment line) and its line number.
std::vector<std::string> read_header(const std::string& path, const std::string& data,
                                     int* header_line) {
    io::LineReader lines(path, data.data(), data.data() + data.size());
    char* line = nullptr;
    do {
        line = lines.next_line();
        if (!line) MLA_FAIL(MLA_ERROR_TABLE, path << ": empty table (no header line)");
    } while (Comments::is_comment(line));
    *header_line = static_cast<int>(lines.get_file_line());
    std::vector<std::string> columns;
    std::string text(line), field;
    std::istringstream fields(text);
    while (std::getline(fields, field, ',')) columns.push_back(trim(field));
    if (!text.empty() && text.back() == ',') columns.push_back("");
    return columns;
}

template <size_t... I>
void read_header_padded(Reader& reader, const std::string (&names)[kMaxColumns],
                        std::index_sequence<I...>) {
    reader.read_header(io::ignore_missing_column, names[I]...);
}

template <size_t... I>
bool read_row_padded(Reader& reader, char* (&fields)[kMaxColumns], std::index_sequence<I...>) {
    return reader.read_row(fields[I]...);
}

std::string describe_key(const Table& t, const Row& r) {
    std::string out;
    for (const std::string& k : t.key_columns)
        out += (out.empty() ? "" : ", ") + k + "=" + r.values.at(k);
    return out;
}

}  // namespace

bool is_value_column(const std::string& c) {
    return c == "knl_name" || c == "co_name" || c == "dyn_lds" || c.rfind("launch_", 0) == 0;
}

const std::string& Row::get(const std::string& column) const {
    static const std::string empty;
    auto it = values.find(column);
    return it == values.end() ? empty : it->second;
}

long Row::get_int(const std::string& column, long fallback) const {
    auto it = values.find(column);
    if (it == values.end() || it->second.empty()) return fallback;
    const char* s = it->second.c_str();
    char* end = nullptr;
    errno = 0;
    long v = std::strtol(s, &end, 0);
    if (errno != 0 || end == s || *end != '\0')
        MLA_FAIL(MLA_ERROR_TABLE, file << ":" << line << ": column '" << column << "' value '"
                                       << it->second << "' is not an integer");
    return v;
}

bool Table::has_column(const std::string& column) const {
    for (const std::string& c : columns)
        if (c == column) return true;
    return false;
}

const Row* Table::find(const std::map<std::string, std::string>& key) const {
    for (const Row& row : rows) {
        bool match = true;
        for (const auto& kv : key) {
            auto it = row.values.find(kv.first);
            const std::string& have = it == row.values.end() ? std::string("0") : it->second;
            if (have != kv.second) {
                match = false;
                break;
            }
        }
        for (size_t i = 0; match && i < key_columns.size(); ++i)
            if (!key.count(key_columns[i]) && row.values.at(key_columns[i]) != "0") match = false;
        if (match) return &row;
    }
    return nullptr;
}

Table load_table(const std::string& csv_path, const std::string& arch_dir) {
    const std::string data = read_text(csv_path);
    Table t;
    t.path = csv_path;
    t.name = fs::path(csv_path).stem().string();
    try {
        int header_line = 0;
        t.columns = read_header(csv_path, data, &header_line);
        if (t.columns.size() > static_cast<size_t>(kMaxColumns))
            MLA_FAIL(MLA_ERROR_TABLE, csv_path << ":" << header_line << ": " << t.columns.size()
                                               << " columns, at most " << kMaxColumns);
        for (size_t i = 0; i < t.columns.size(); ++i) {
            if (t.columns[i].empty())
                MLA_FAIL(MLA_ERROR_TABLE, csv_path << ":" << header_line << ": column " << i + 1
                                                   << " of the header has no name");
            for (size_t j = 0; j < i; ++j)
                if (t.columns[j] == t.columns[i])
                    MLA_FAIL(MLA_ERROR_TABLE, csv_path << ":" << header_line << ": column '"
                                                       << t.columns[i] << "' appears twice");
        }
        for (const char* required : {"knl_name", "co_name"})
            if (!t.has_column(required))
                MLA_FAIL(MLA_ERROR_TABLE, csv_path << ":" << header_line << ": missing column '"
                                                   << required << "'");
        for (const std::string& c : t.columns)
            if (!is_value_column(c)) t.key_columns.push_back(c);

        std::string names[kMaxColumns];
        for (int i = 0; i < kMaxColumns; ++i)
            names[i] = i < static_cast<int>(t.columns.size()) ? t.columns[i]
                                                                : "\x01unused" + std::to_string(i);
        Reader reader(csv_path, data.data(), data.data() + data.size());
        read_header_padded(reader, names, std::make_index_sequence<kMaxColumns>());

        const fs::path csv_dir = fs::path(csv_path).parent_path();
        std::map<std::vector<std::string>, int> seen;  // key -> line
        char* fields[kMaxColumns];
        for (;;) {
            for (char*& f : fields) f = nullptr;
            if (!read_row_padded(reader, fields, std::make_index_sequence<kMaxColumns>())) break;
            Row row;
            row.table = t.name;
            row.file = csv_path;
            row.line = static_cast<int>(reader.get_file_line());
            for (size_t i = 0; i < t.columns.size(); ++i)
                row.values[t.columns[i]] = fields[i] ? fields[i] : "";
            row.knl_name = row.values["knl_name"];
            row.co_name = row.values["co_name"];
            if (row.knl_name.empty() || row.co_name.empty())
                MLA_FAIL(MLA_ERROR_TABLE, csv_path << ":" << row.line
                                                   << ": empty knl_name or co_name");
            std::vector<std::string> key;
            for (const std::string& k : t.key_columns) key.push_back(row.values[k]);
            auto ins = seen.emplace(key, row.line);
            if (!ins.second) {
                std::ostringstream msg;
                msg << csv_path << ":" << row.line << ": duplicate key (" << describe_key(t, row)
                    << "): same as " << csv_path << ":" << ins.first->second;
                if (!allow_duplicates())
                    MLA_FAIL(MLA_ERROR_TABLE, msg.str() << " (set MLA_TABLE_DUPLICATES=first to keep "
                                                           "the first row, as aiter does)");
                t.dropped_duplicates.push_back(msg.str() + " (row dropped, first row kept)");
                continue;
            }
            fs::path beside = csv_dir / row.co_name;
            fs::path in_arch = fs::path(arch_dir) / row.co_name;
            std::error_code ec;
            if (fs::is_regular_file(beside, ec)) {
                row.co_path = beside.string();
                row.co_exists = true;
            } else if (!arch_dir.empty() && fs::is_regular_file(in_arch, ec)) {
                row.co_path = in_arch.string();
                row.co_exists = true;
            } else {
                row.co_path = beside.string();
            }
            t.rows.push_back(std::move(row));
        }
    } catch (const io::error::base& e) {
        MLA_FAIL(MLA_ERROR_TABLE, "malformed table " << csv_path << ": " << e.what());
    }
    return t;
}

}  // namespace mla::reg
