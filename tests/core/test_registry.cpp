// test_registry.cpp - CSV code-object tables: parsing, validation, lookup, discovery, root
// search, and the registry's C API.
#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <thread>

#include "common/error.h"
#include "registry/registry.h"
#include "test_util.h"

using mla::reg::Registry;
using mla::reg::Row;
using mla::reg::Table;
using test::contains;
using test::TempDir;

namespace {

// Status and message of f() throwing mla::Error (MLA_SUCCESS, "" if it did not throw).
template <class F>
std::pair<mla_status, std::string> error_of(F&& f) {
    try {
        f();
    } catch (const mla::Error& e) {
        return {e.status(), e.message()};
    }
    return {MLA_SUCCESS, ""};
}

const char* kAsmTable =
    "# aiter-style table, with comments and blank lines\n"       // line 1
    "qType,kvType,Gqa,ps,qSeqLen,knl_name,co_name\n"              // line 2
    "\n"                                                          // line 3
    "bf16, bf16 ,16,1,4,_ZN5aiter4k16E,k16.co\n"                  // line 4
    "# a commented-out row\n"                                     // line 5
    "fp8,fp8,16,1,4,_ZN5aiter4f16E,sub/f16.co\n"                  // line 6
    "fp8,fp8,128,0,0,_ZN5aiter5f128E,f128.co\n";                  // line 7

}  // namespace

TEST_CASE("a good table: columns, keys, values, lines, code-object paths", "[core][registry]") {
    TempDir root;
    const std::string csv = root.write("gfx942/mla/mla_asm.csv", kAsmTable);
    root.write("gfx942/mla/k16.co", "x");        // beside the csv
    root.write("gfx942/sub/f16.co", "y");        // only under <root>/<arch> (aiter layout)
    const std::string arch_dir = root.path() + "/gfx942";

    Table t = mla::reg::load_table(csv, arch_dir);
    CHECK(t.name == "mla_asm");
    CHECK(t.path == csv);
    CHECK(t.columns == std::vector<std::string>{"qType", "kvType", "Gqa", "ps", "qSeqLen",
                                                "knl_name", "co_name"});
    CHECK(t.key_columns == std::vector<std::string>{"qType", "kvType", "Gqa", "ps", "qSeqLen"});
    REQUIRE(t.rows.size() == 3);

    const Row& r0 = t.rows[0];
    CHECK(r0.line == 4);
    CHECK(r0.table == "mla_asm");
    CHECK(r0.file == csv);
    CHECK(r0.get("kvType") == "bf16");  // trimmed
    CHECK(r0.knl_name == "_ZN5aiter4k16E");
    CHECK(r0.co_name == "k16.co");
    CHECK(r0.co_path == root.path() + "/gfx942/mla/k16.co");
    CHECK(r0.co_exists);
    CHECK(r0.get_int("Gqa") == 16);
    CHECK(r0.get_int("cprr", 7) == 7);  // absent column: fallback
    CHECK(r0.get("cprr").empty());

    CHECK(t.rows[1].line == 6);
    CHECK(t.rows[1].co_path == root.path() + "/gfx942/sub/f16.co");
    CHECK(t.rows[1].co_exists);
    CHECK(t.rows[2].line == 7);
    CHECK(t.rows[2].co_path == root.path() + "/gfx942/mla/f128.co");
    CHECK_FALSE(t.rows[2].co_exists);

    auto bad = error_of([&] { t.rows[0].get_int("qType"); });
    CHECK(bad.first == MLA_ERROR_TABLE);
    CHECK(bad.second == csv + ":4: column 'qType' value 'bf16' is not an integer");
}

TEST_CASE("exact-key lookup; absent columns read as 0", "[core][registry]") {
    TempDir root;
    const std::string csv = root.write("gfx942/mla/mla_asm.csv", kAsmTable);
    Table t = mla::reg::load_table(csv, root.path() + "/gfx942");
    const Row* r = t.find({{"qType", "fp8"}, {"kvType", "fp8"}, {"Gqa", "16"}, {"ps", "1"},
                           {"qSeqLen", "4"}});
    REQUIRE(r != nullptr);
    CHECK(r->line == 6);
    // cprr is not a column: "0" matches, "1" does not.
    CHECK(t.find({{"qType", "fp8"}, {"kvType", "fp8"}, {"Gqa", "16"}, {"ps", "1"},
                  {"qSeqLen", "4"}, {"cprr", "0"}}) == r);
    CHECK(t.find({{"qType", "fp8"}, {"kvType", "fp8"}, {"Gqa", "16"}, {"ps", "1"},
                  {"qSeqLen", "4"}, {"cprr", "1"}}) == nullptr);
    // A key column not passed must be "0" in the row: ps/qSeqLen = 0 only in line 7.
    const Row* r128 = t.find({{"qType", "fp8"}, {"kvType", "fp8"}, {"Gqa", "128"}});
    REQUIRE(r128 != nullptr);
    CHECK(r128->line == 7);
    CHECK(t.find({{"qType", "fp8"}, {"kvType", "fp8"}, {"Gqa", "16"}}) == nullptr);
    CHECK(t.find({{"qType", "bf16"}, {"kvType", "bf16"}, {"Gqa", "16"}, {"ps", "1"},
                  {"qSeqLen", "2"}}) == nullptr);
}

TEST_CASE("malformed tables are MLA_ERROR_TABLE naming file and line", "[core][registry]") {
    TempDir root;
    const std::string arch = root.path() + "/gfx942";
    auto load = [&](const std::string& name, const std::string& text) {
        const std::string p = root.write("gfx942/" + name, text);
        return std::make_pair(p, error_of([&] { mla::reg::load_table(p, arch); }));
    };

    SECTION("duplicate key names both rows") {
        auto r = load("dup.csv",
                      "kind,outType,knl_name,co_name\n"
                      "reduce,bf16,k1,a.co\n"
                      "reduce,fp32,k2,b.co\n"
                      "# comment\n"
                      "reduce,bf16,k3,c.co\n");
        CHECK(r.second.first == MLA_ERROR_TABLE);
        CHECK(r.second.second == r.first + ":5: duplicate key (kind=reduce, outType=bf16): same as " +
                                     r.first + ":2 (set MLA_TABLE_DUPLICATES=first to keep the "
                                               "first row, as aiter does)");
    }
    SECTION("MLA_TABLE_DUPLICATES=first keeps the first row and records the other") {
        test::ScopedEnv keep("MLA_TABLE_DUPLICATES", "first");
        const std::string p = root.write("gfx942/dupok.csv", "kind,outType,knl_name,co_name\n"
                                                           "reduce,bf16,k1,a.co\n"
                                                           "reduce,fp32,k2,b.co\n"
                                                           "reduce,bf16,k3,c.co\n");
        const mla::reg::Table t = mla::reg::load_table(p, arch);
        REQUIRE(t.rows.size() == 2);
        CHECK(t.rows[0].knl_name == "k1");
        CHECK(t.rows[1].knl_name == "k2");
        REQUIRE(t.dropped_duplicates.size() == 1);
        CHECK(t.dropped_duplicates[0] == p + ":4: duplicate key (kind=reduce, outType=bf16): same as " +
                                             p + ":2 (row dropped, first row kept)");
    }
    SECTION("missing knl_name / co_name column") {
        auto r = load("nok.csv", "kind,co_name\nsmoke,a.co\n");
        CHECK(r.second.first == MLA_ERROR_TABLE);
        CHECK(r.second.second == r.first + ":1: missing column 'knl_name'");
        auto r2 = load("noco.csv", "# c\nkind,knl_name\nsmoke,k\n");
        CHECK(r2.second.second == r2.first + ":2: missing column 'co_name'");
    }
    SECTION("a row with too few or too many fields") {
        auto r = load("few.csv", "kind,knl_name,co_name\nsmoke,k,a.co\nsmoke2,k\n");
        CHECK(r.second.first == MLA_ERROR_TABLE);
        CHECK(contains(r.second.second, "malformed table " + r.first));
        CHECK(contains(r.second.second, "line 3"));
        auto r2 = load("many.csv", "kind,knl_name,co_name\nsmoke,k,a.co,extra\n");
        CHECK(r2.second.first == MLA_ERROR_TABLE);
        CHECK(contains(r2.second.second, "line 2"));
    }
    SECTION("empty file, empty or repeated column names, empty values") {
        auto r = load("empty.csv", "# only a comment\n\n");
        CHECK(r.second.first == MLA_ERROR_TABLE);
        CHECK(r.second.second == r.first + ": empty table (no header line)");
        auto r2 = load("blankcol.csv", "kind,,knl_name,co_name\n");
        CHECK(r2.second.second == r2.first + ":1: column 2 of the header has no name");
        auto r3 = load("twice.csv", "kind,kind,knl_name,co_name\n");
        CHECK(r3.second.second == r3.first + ":1: column 'kind' appears twice");
        auto r4 = load("noname.csv", "kind,knl_name,co_name\nsmoke,,a.co\n");
        CHECK(r4.second.second == r4.first + ":2: empty knl_name or co_name");
    }
    SECTION("a header with no rows is a valid empty table") {
        const std::string p = root.write("gfx942/none.csv", "kind,knl_name,co_name\n");
        Table t = mla::reg::load_table(p, arch);
        CHECK(t.rows.empty());
        CHECK(t.key_columns == std::vector<std::string>{"kind"});
    }
    SECTION("an unreadable path") {
        auto e = error_of([&] { mla::reg::load_table(root.path() + "/nope.csv", arch); });
        CHECK(e.first == MLA_ERROR_TABLE);
        CHECK(contains(e.second, root.path() + "/nope.csv: cannot open table"));
    }
}

TEST_CASE("tables are found at any depth under <root>/<arch>", "[core][registry]") {
    TempDir root;
    root.write("gfx1250/mla/mla_asm.csv",
               "qType,kvType,Gqa,knl_name,co_name\nfp8,fp8,8,k8,k8.co\nfp8,fp8,16,k16,k16.co\n");
    root.write("gfx1250/mla_dsl/mla_dsl.csv",
               "qType,kvType,Gqa,cprr,dyn_lds,knl_name,co_name\nfp8,fp8,96,0,254208,d96,d96.co\n");
    root.write("gfx1250/mla/k8.co", "co");
    root.write("gfx1250/notes.txt", "not a table");

    auto tables = mla::reg::load_arch(root.path(), "gfx1250");
    REQUIRE(tables);
    CHECK(tables->arch == "gfx1250");
    CHECK(tables->tables.size() == 2);
    REQUIRE(tables->table("mla_dsl") != nullptr);
    CHECK(tables->table("mla_dsl")->key_columns ==
          std::vector<std::string>{"qType", "kvType", "Gqa", "cprr"});
    CHECK(tables->table("nope") == nullptr);
    CHECK(tables->num_rows() == 3);
    CHECK(tables->missing_files() == 2);
    CHECK(mla::reg::load_arch(root.path(), "gfx950") == nullptr);  // no folder
    root.write("gfx950/readme.txt", "x");
    CHECK(mla::reg::load_arch(root.path(), "gfx950") == nullptr);  // folder without tables

    root.write("gfx1250/other/mla_asm.csv", "kind,knl_name,co_name\n");
    auto e = error_of([&] { mla::reg::load_arch(root.path(), "gfx1250"); });
    CHECK(e.first == MLA_ERROR_TABLE);
    CHECK(e.second == "two tables named 'mla_asm' for gfx1250: " + root.path() +
                          "/gfx1250/mla/mla_asm.csv and " + root.path() +
                          "/gfx1250/other/mla_asm.csv");
}

TEST_CASE("a missing code object blocks only its launch", "[core][registry]") {
    TempDir root;
    root.write("sm_90a/smoke/smoke.csv",
               "kind,launch_threads,knl_name,co_name\nsmoke,128,mla_smoke_fill,gone.cubin\n");
    auto tables = mla::reg::load_arch(root.path(), "sm_90a");
    REQUIRE(tables);
    const Row* row = tables->table("smoke")->find({{"kind", "smoke"}});
    REQUIRE(row);
    CHECK(row->get_int("launch_threads") == 128);
    auto e = error_of([&] { mla::reg::read_code_object(*row); });
    CHECK(e.first == MLA_ERROR_CODE_OBJECT);
    CHECK(e.second == "code object file missing: " + root.path() +
                          "/sm_90a/smoke/gone.cubin (kernel mla_smoke_fill, table " + root.path() +
                          "/sm_90a/smoke/smoke.csv:2)");
    root.write("sm_90a/smoke/gone.cubin", std::string("\x01\x02\0\x03", 4));
    CHECK(mla::reg::read_code_object(*row) == std::vector<char>{1, 2, 0, 3});
}

TEST_CASE("code-object root search order", "[core][registry][root]") {
    mla_set_codeobject_root(nullptr);
    TempDir env_root, api_root;
    const std::string install = MLA_TEST_INSTALL_CODEOBJECT_DIR;
    const std::string build = std::filesystem::canonical(MLA_TEST_BUILD_CODEOBJECT_DIR).string();
    std::error_code ec;
    const std::string fallback = std::filesystem::is_directory(install, ec) ? install : build;
    char buf[4096];
    size_t needed = 0;
    {
        test::ScopedEnv unset("MLA_CODEOBJECT_DIR", nullptr);
        CHECK(mla::reg::find_root("") == fallback);
        REQUIRE(mla_codeobject_root(buf, sizeof buf, &needed) == MLA_SUCCESS);
        CHECK(std::string(buf) == fallback);
        CHECK(needed == fallback.size() + 1);
    }
    {
        test::ScopedEnv env("MLA_CODEOBJECT_DIR", env_root.path().c_str());
        CHECK(mla::reg::find_root("") == env_root.path());
        CHECK(mla::reg::find_root(api_root.path()) == api_root.path());  // explicit first
        REQUIRE(mla_codeobject_root(buf, sizeof buf, nullptr) == MLA_SUCCESS);
        CHECK(std::string(buf) == env_root.path());
        // mla_set_codeobject_root overrides the environment until reset with NULL.
        REQUIRE(mla_set_codeobject_root(api_root.path().c_str()) == MLA_SUCCESS);
        REQUIRE(mla_codeobject_root(buf, sizeof buf, nullptr) == MLA_SUCCESS);
        CHECK(std::string(buf) == api_root.path());
        REQUIRE(mla_set_codeobject_root(nullptr) == MLA_SUCCESS);
        REQUIRE(mla_codeobject_root(buf, sizeof buf, nullptr) == MLA_SUCCESS);
        CHECK(std::string(buf) == env_root.path());
        // Too small a buffer: BUFFER_TOO_SMALL with the size needed, buffer untouched.
        char small[4] = {'a', 'b', 'c', '\0'};
        CHECK(mla_codeobject_root(small, sizeof small, &needed) == MLA_ERROR_BUFFER_TOO_SMALL);
        CHECK(needed == env_root.path().size() + 1);
        CHECK(std::string(small) == "abc");
    }
    {
        // a set MLA_CODEOBJECT_DIR that is not a folder ends the search: no root, and it is named
        test::ScopedEnv env("MLA_CODEOBJECT_DIR", "/nonexistent/mla_root");
        std::string tried;
        CHECK(mla::reg::find_root("", &tried).empty());
        CHECK(tried ==
              "  MLA_CODEOBJECT_DIR: /nonexistent/mla_root (not a directory; the search stops at a set "
              "MLA_CODEOBJECT_DIR: fix or unset it)\n");
        size_t n = 7;
        CHECK(mla_codeobject_root(buf, sizeof buf, &n) == MLA_ERROR_ARCH_NOT_BUILT);
        CHECK(contains(mla_last_error(), "MLA_CODEOBJECT_DIR: /nonexistent/mla_root (not a directory"));
        CHECK(n == 7);  // nothing written on failure
        std::string tried2;
        CHECK(mla::reg::find_root("/nonexistent/explicit", &tried2).empty());  // explicit only
        CHECK(tried2 == "  explicit root: /nonexistent/explicit (not a directory)\n");
    }
    CHECK(mla_set_codeobject_root("/nonexistent/mla_root") == MLA_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(mla_last_error()) ==
          "mla_set_codeobject_root: '/nonexistent/mla_root' is not a folder");
    CHECK(mla_set_codeobject_root("") == MLA_ERROR_INVALID_ARGUMENT);
    CHECK(mla_codeobject_root(nullptr, 10, nullptr) == MLA_ERROR_INVALID_ARGUMENT);
    CHECK(mla_codeobject_root(buf, 0, nullptr) == MLA_ERROR_INVALID_ARGUMENT);
}

TEST_CASE("the registry cache is keyed by root and arch and thread-safe", "[core][registry]") {
    TempDir root;
    root.write("gfx950/mla/mla_asm.csv", "qType,knl_name,co_name\nbf16,k,k.co\n");
    Registry& reg = Registry::global();
    auto a = reg.arch("gfx950", root.path());
    REQUIRE(a);
    std::shared_ptr<const mla::reg::ArchTables> seen[4];
    std::thread threads[4];
    for (int i = 0; i < 4; ++i) threads[i] = std::thread([&, i] { seen[i] = reg.arch("gfx950", root.path()); });
    for (auto& t : threads) t.join();
    for (auto& s : seen) CHECK(s == a);
    CHECK(reg.arch("gfx942", root.path()) == nullptr);
    reg.clear();
    auto b = reg.arch("gfx950", root.path());
    REQUIRE(b);
    CHECK(b != a);
    CHECK(b->num_rows() == 1);
}

TEST_CASE("mla_arch_query and mla_arch_check", "[core][registry][capi]") {
    TempDir root;
    root.write("gfx942/mla/mla_asm.csv",
               "qType,Gqa,knl_name,co_name\nbf16,16,k16,k16.co\nbf16,32,k32,k32.co\nfp8,16,f16,f16.co\n");
    root.write("gfx942/mla/k32.co", "x");
    root.write("gfx942/extra/more.csv", "kind,knl_name,co_name\na,ka,a.co\n");
    REQUIRE(mla_set_codeobject_root(root.path().c_str()) == MLA_SUCCESS);

    mla_arch_info info = MLA_ARCH_INFO_INIT;
    REQUIRE(mla_arch_query("gfx942", &info) == MLA_SUCCESS);
    CHECK(info.struct_size == sizeof(mla_arch_info));
    CHECK(std::string(info.arch) == "gfx942");
    CHECK(info.known == 1);
    CHECK(info.vendor == 0);
    CHECK(info.num_tables == 2);
    CHECK(info.num_rows == 4);
    CHECK(info.missing_files == 3);
    CHECK(info.default_num_cus == 304);

    mla_arch_info sm = MLA_ARCH_INFO_INIT;
    REQUIRE(mla_arch_query("sm_90a", &sm) == MLA_SUCCESS);  // known, no tables under this root
    CHECK(sm.vendor == 1);
    CHECK(sm.num_tables == 0);
    CHECK(sm.default_num_cus == 132);

    mla_arch_info unk = MLA_ARCH_INFO_INIT;
    unk.known = 5;
    CHECK(mla_arch_query("gfx90a", &unk) == MLA_ERROR_ARCH_NOT_BUILT);
    CHECK(unk.known == 0);
    CHECK(std::string(unk.arch) == "gfx90a");
    CHECK(contains(mla_last_error(), "unknown arch 'gfx90a'"));

    // An older caller's shorter struct: only struct_size bytes are written.
    struct {
        mla_arch_info info;
        char guard[8];
    } short_info;
    std::memset(&short_info, 0x5a, sizeof short_info);
    short_info.info.struct_size = offsetof(mla_arch_info, known);
    REQUIRE(mla_arch_query("gfx942", &short_info.info) == MLA_SUCCESS);
    CHECK(std::string(short_info.info.arch) == "gfx942");
    CHECK(short_info.info.known == 0x5a5a5a5a);

    // Tables in name order ("mla_asm" < "more"), rows in file order.
    const std::string expected = root.path() + "/gfx942/mla/mla_asm.csv:2: " + root.path() +
                                 "/gfx942/mla/k16.co\n" + root.path() +
                                 "/gfx942/mla/mla_asm.csv:4: " + root.path() +
                                 "/gfx942/mla/f16.co\n" + root.path() +
                                 "/gfx942/extra/more.csv:2: " + root.path() +
                                 "/gfx942/extra/a.co\n";
    char buf[4096];
    size_t needed = 0;
    int count = -1;
    REQUIRE(mla_arch_check("gfx942", buf, sizeof buf, &needed, &count) == MLA_SUCCESS);
    CHECK(std::string(buf) == expected);
    CHECK(count == 3);
    CHECK(needed == expected.size() + 1);
    count = -1;
    CHECK(mla_arch_check("gfx942", nullptr, 0, &needed, &count) == MLA_ERROR_BUFFER_TOO_SMALL);
    CHECK(needed == expected.size() + 1);
    CHECK(count == -1);
    REQUIRE(mla_arch_check("sm_90a", buf, sizeof buf, &needed, &count) == MLA_SUCCESS);
    CHECK(count == 0);
    CHECK(std::string(buf).empty());

    // A malformed table: TABLE from both calls.
    root.write("gfx950/t.csv", "kind,knl_name,co_name\na,k,x.co\na,k2,y.co\n");
    mla_arch_info bad = MLA_ARCH_INFO_INIT;
    CHECK(mla_arch_query("gfx950", &bad) == MLA_ERROR_TABLE);
    CHECK(contains(mla_last_error(), "t.csv:3: duplicate key (kind=a): same as"));
    CHECK(mla_arch_check("gfx950", buf, sizeof buf, &needed, &count) == MLA_ERROR_TABLE);

    // Null pointers and bad structs.
    CHECK(mla_arch_query(nullptr, &info) == MLA_ERROR_INVALID_ARGUMENT);
    CHECK(mla_arch_query("gfx942", nullptr) == MLA_ERROR_INVALID_ARGUMENT);
    mla_arch_info zero{};
    CHECK(mla_arch_query("gfx942", &zero) == MLA_ERROR_INVALID_ARGUMENT);
    CHECK(contains(mla_last_error(), "initialise the struct with its *_INIT macro"));
    CHECK(mla_arch_check(nullptr, buf, sizeof buf, &needed, &count) == MLA_ERROR_INVALID_ARGUMENT);
    CHECK(mla_arch_check("gfx942", nullptr, 10, &needed, &count) == MLA_ERROR_INVALID_ARGUMENT);
    CHECK(mla_arch_check("bogus", buf, sizeof buf, &needed, &count) == MLA_ERROR_ARCH_NOT_BUILT);
    REQUIRE(mla_set_codeobject_root(nullptr) == MLA_SUCCESS);
}
