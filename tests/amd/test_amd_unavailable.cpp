// test_amd_unavailable.cpp - a process whose MLA_LIBHIP_PATH points at nothing: creating an AMD
// context gives RUNTIME_UNAVAILABLE (no crash), the launch entry refuses a NULL context, and the
// device-free AMD queries keep working.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>

#include "mla_c_api.h"

TEST_CASE("no libamdhip64.so: RUNTIME_UNAVAILABLE, nothing crashes", "[amd][unavailable]") {
    const char* fixtures = std::getenv("MLA_TEST_FIXTURES");
    REQUIRE(fixtures != nullptr);
    const std::string root = std::string(fixtures) + "/amd_launch";
    mla_context_options o = MLA_CONTEXT_OPTIONS_INIT;
    o.codeobject_root = root.c_str();
    for (const char* arch : {"gfx942", "gfx950", "gfx1250"}) {
        o.arch = arch;
        mla_context* ctx = nullptr;
        REQUIRE(mla_context_create(&o, &ctx) == MLA_ERROR_RUNTIME_UNAVAILABLE);
        const std::string msg = mla_last_error();
        CHECK(msg.find("HIP runtime library (libamdhip64.so) not found; tried:\n") != std::string::npos);
        CHECK(msg.find("MLA_LIBHIP_PATH=/nonexistent/libamdhip64.so") != std::string::npos);
        CHECK(ctx == nullptr);
    }
    mla_amd_stage1_args a = MLA_AMD_STAGE1_ARGS_INIT;
    CHECK(mla_amd_decode_stage1(nullptr, &a, nullptr) == MLA_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(mla_last_error()) == "context is NULL");

    // Device-free: the same row the launch would take, without a runtime.
    REQUIRE(mla_set_codeobject_root(root.c_str()) == MLA_SUCCESS);
    char name[256];
    const int r = mla_decode_asm_query("gfx950", "fp8", "fp8", 64, 1, 2, 1, 1, 1, 0, name, sizeof name,
                                       nullptr);
    CHECK((r & 0xff) == MLA_ASM_OK);
    CHECK(((r >> 8) & 0xff) == 32);
    CHECK(((r >> 16) & 0xff) == 4);
    CHECK(std::string(name) == "_ZN5aiter28fx_a8w8_qh32_qseqlen4_lse_psE");
}
