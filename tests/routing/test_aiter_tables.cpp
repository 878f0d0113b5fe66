// test_aiter_tables.cpp - checks by hand that the queries give aiter's verdicts on aiter's REAL
// tables (§5.3 "verified expectations"). Runs only where the tables are: $MLA_AITER_TABLES,
// <source>/../shared/aiter-tables, /work/shared/aiter-tables; exits 77 (skip) otherwise.
// aiter's gfx950 mla_asm.csv holds two rows with one key (bf16 gqa8 qlen2, one named _causal);
// aiter picks one arbitrarily, libmla's registry refuses the table (MLA_ERROR_TABLE). The test
// checks that refusal, then queries a copy without the later duplicate, made in /tmp.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <unistd.h>

#include "mla_c_api.h"

namespace {

std::string g_tables;  // aiter's tables root

bool is_dir(const std::string& p) {
    struct stat st;
    return stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

int query(const char* arch, int heads, int qlen, int lse) {
    return mla_decode_asm_query(arch, "fp8", "fp8", heads, 1, qlen, 1, 1, lse, 0, nullptr, 0, nullptr);
}

// Copy of aiter's gfx950 table without rows whose key repeats an earlier row's key.
std::string dedup_gfx950() {
    char tmpl[] = "/tmp/mla_aiter_tables_XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    const std::string root = tmpl;
    REQUIRE(mkdir((root + "/gfx950").c_str(), 0755) == 0);
    REQUIRE(mkdir((root + "/gfx950/mla").c_str(), 0755) == 0);
    std::ifstream in(g_tables + "/gfx950/mla/mla_asm.csv");
    std::ofstream out(root + "/gfx950/mla/mla_asm.csv");
    std::string line;
    std::set<std::string> keys;
    int dropped = 0;
    for (int n = 0; std::getline(in, line); ++n) {
        // key = the 9 columns before knl_name
        std::string key;
        std::istringstream ss(line);
        std::string cell;
        for (int i = 0; i < 9 && std::getline(ss, cell, ','); ++i) key += cell + ",";
        if (n > 0 && !keys.insert(key).second) {
            ++dropped;
            continue;
        }
        out << line << "\n";
    }
    CHECK(dropped == 1);
    return root;
}

}  // namespace

TEST_CASE("aiter's verified LSE expectations on aiter's tables", "[routing][aiter]") {
    REQUIRE(mla_set_codeobject_root(g_tables.c_str()) == MLA_SUCCESS);
    // gfx942 fp8: 128 heads qlen 1 +lse not OK (no lse row); 64 heads qlen 1 +lse OK.
    CHECK((query("gfx942", 128, 1, 1) & 0xff) == MLA_ASM_NO_KERNEL);
    CHECK((query("gfx942", 64, 1, 1) & 0xff) == MLA_ASM_OK);
    char name[256];
    CHECK(mla_decode_asm_query("gfx942", "fp8", "fp8", 64, 1, 1, 1, 1, 1, 0, name, 256, nullptr) ==
          (MLA_ASM_OK | 64 << 8 | 1 << 16));
    CHECK(std::string(name) == "_ZN5aiter43mla_a8w8_qh64_qseqlen1_gqaratio64_lse_v3_psE");
    // the registry refuses the duplicate key in aiter's gfx950 table
    CHECK(query("gfx950", 16, 2, 1) == -MLA_ERROR_TABLE);
    CHECK(std::string(mla_last_error()).find("duplicate key") != std::string::npos);
    // gfx1250 tables load as they are
    mla_decode_shape s = MLA_DECODE_SHAPE_INIT;
    s.arch = "gfx1250";
    s.num_heads = 96;
    s.max_seqlen_qo = 4;
    s.q_dtype = s.kv_dtype = MLA_DTYPE_FP8_E4M3FN;
    s.return_lse = 1;
    s.flydsl_ps1 = 1;
    mla_decode_support v = MLA_DECODE_SUPPORT_INIT;
    REQUIRE(mla_decode_shape_support(&s, &v) == MLA_SUCCESS);
    CHECK(v.backend == MLA_BACKEND_PS1_FP8_ASM);
    CHECK(v.supported == 1);
    CHECK(std::string(v.asm_kernel) == "_ZN5aiter36mla_a8w8_qh96_1tg_16mx6_64nx1_lse_psE");
    CHECK(mla_ps1_fp8_asm_query("gfx1250", 128, 1, 1, 1, 1, name, 256, nullptr) == MLA_ASM_OK);
    CHECK(std::string(name) == "_ZN5aiter42mla_a8w8_qh128_1tg_16mx8_64nx1_lse_cprr_psE");
    CHECK((mla_decode_asm_query("gfx1250", "fp8", "fp8", 128, 1, 1, 0, 1, 0, 0, nullptr, 0, nullptr) & 0xff) ==
          MLA_ASM_OK);

    // gfx950 fp8: 16 heads qlen 2 +lse not OK; 32/64/128 heads qlen 2 +lse OK.
    const std::string root = dedup_gfx950();
    REQUIRE(mla_set_codeobject_root(root.c_str()) == MLA_SUCCESS);
    CHECK((query("gfx950", 16, 2, 1) & 0xff) == MLA_ASM_NO_KERNEL);
    CHECK(query("gfx950", 32, 2, 1) == (MLA_ASM_OK | 16 << 8 | 4 << 16));
    CHECK(query("gfx950", 64, 2, 1) == (MLA_ASM_OK | 32 << 8 | 4 << 16));
    CHECK(query("gfx950", 128, 2, 1) == (MLA_ASM_OK | 32 << 8 | 4 << 16));
    std::remove((root + "/gfx950/mla/mla_asm.csv").c_str());
    rmdir((root + "/gfx950/mla").c_str());
    rmdir((root + "/gfx950").c_str());
    rmdir(root.c_str());
}

int main(int argc, char** argv) {
    const char* env = std::getenv("MLA_AITER_TABLES");
    const std::string candidates[] = {env ? env : "",
                                      std::string(MLA_SOURCE_ROOT) + "/../shared/aiter-tables",
                                      "/work/shared/aiter-tables"};
    for (const std::string& c : candidates)
        if (!c.empty() && is_dir(c + "/gfx942") && is_dir(c + "/gfx950")) {
            g_tables = c;
            break;
        }
    if (g_tables.empty()) {
        std::printf("aiter tables not found ($MLA_AITER_TABLES, ../shared/aiter-tables): skipped\n");
        return 77;
    }
    std::printf("aiter tables: %s\n", g_tables.c_str());
    return Catch::Session().run(argc, argv);
}
