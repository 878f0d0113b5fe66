// test_status.cpp - status strings, the thread-local error, version, struct sizes, dtypes.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <thread>

#include "mla_c_api.h"

TEST_CASE("status strings name every status", "[core][status]") {
    const char* names[] = {"MLA_SUCCESS",
                           "MLA_ERROR_INVALID_ARGUMENT",
                           "MLA_ERROR_UNSUPPORTED_SHAPE",
                           "MLA_ERROR_NO_KERNEL",
                           "MLA_ERROR_ARCH_NOT_BUILT",
                           "MLA_ERROR_RUNTIME_UNAVAILABLE",
                           "MLA_ERROR_NO_DEVICE",
                           "MLA_ERROR_CODE_OBJECT",
                           "MLA_ERROR_LAUNCH",
                           "MLA_ERROR_BUFFER_TOO_SMALL",
                           "MLA_ERROR_INTERNAL",
                           "MLA_ERROR_TABLE"};
    for (int i = 0; i <= 11; ++i) CHECK(std::string(mla_status_string(i)) == names[i]);
    CHECK(std::string(mla_status_string(12)) == "MLA_UNKNOWN_STATUS");
    CHECK(std::string(mla_status_string(-1)) == "MLA_UNKNOWN_STATUS");
    CHECK(MLA_ERROR_RUNTIME_UNAVAILABLE == 5);
    CHECK(MLA_ERROR_TABLE == 11);
}

TEST_CASE("the last error is per thread", "[core][status]") {
    mla_clear_last_error();
    mla_dtype d = MLA_DTYPE_FP32;
    REQUIRE(mla_dtype_from_string("bogus_a", &d) == MLA_ERROR_INVALID_ARGUMENT);
    const std::string mine = mla_last_error();
    CHECK(mine == "unknown dtype 'bogus_a' (known: bf16, fp16, fp8, fp8_fnuz, byte, fp32)");
    CHECK(d == MLA_DTYPE_FP32);  // nothing written on failure

    std::string other_before, other_after;
    std::thread t([&] {
        other_before = mla_last_error();
        mla_dtype x;
        mla_dtype_from_string("bogus_b", &x);
        other_after = mla_last_error();
    });
    t.join();
    CHECK(other_before.empty());
    CHECK(other_after.find("'bogus_b'") != std::string::npos);
    CHECK(std::string(mla_last_error()) == mine);  // untouched by the other thread

    // A successful call leaves the message; clear empties it.
    REQUIRE(mla_dtype_from_string("bf16", &d) == MLA_SUCCESS);
    CHECK(std::string(mla_last_error()) == mine);
    mla_clear_last_error();
    CHECK(std::string(mla_last_error()).empty());
}

TEST_CASE("version macros, mla_version and the meson project version agree", "[core][version]") {
    CHECK(MLA_VERSION == MLA_VERSION_MAJOR * 10000 + MLA_VERSION_MINOR * 100 + MLA_VERSION_PATCH);
    CHECK(mla_version() == MLA_VERSION);
    const std::string s = std::to_string(MLA_VERSION_MAJOR) + "." +
                          std::to_string(MLA_VERSION_MINOR) + "." +
                          std::to_string(MLA_VERSION_PATCH);
    CHECK(std::string(mla_version_string()) == s);
    CHECK(std::string(mla_version_string()) == MLA_MESON_VERSION);
}

TEST_CASE("INIT macros set struct_size to the struct's size", "[core][abi]") {
    mla_arch_info a = MLA_ARCH_INFO_INIT;
    mla_context_options o = MLA_CONTEXT_OPTIONS_INIT;
    CHECK(a.struct_size == sizeof(mla_arch_info));
    CHECK(o.struct_size == sizeof(mla_context_options));
    CHECK(o.device == 0);
    CHECK(o.arch == nullptr);
    CHECK(o.codeobject_root == nullptr);
    CHECK(a.arch[0] == '\0');
    // struct_size is the first member of every public struct.
    CHECK(offsetof(mla_arch_info, struct_size) == 0);
    CHECK(offsetof(mla_context_options, struct_size) == 0);
}

TEST_CASE("dtype names, parsing and sizes", "[core][dtype]") {
    struct {
        const char* name;
        mla_dtype dtype;
        size_t size;
    } const cases[] = {{"bf16", MLA_DTYPE_BF16, 2},         {"fp16", MLA_DTYPE_FP16, 2},
                       {"fp8", MLA_DTYPE_FP8_E4M3FN, 1},    {"fp8_fnuz", MLA_DTYPE_FP8_E4M3FNUZ, 1},
                       {"byte", MLA_DTYPE_BYTE, 1},         {"fp32", MLA_DTYPE_FP32, 4}};
    for (const auto& c : cases) {
        mla_dtype d = MLA_DTYPE_FP32;
        REQUIRE(mla_dtype_from_string(c.name, &d) == MLA_SUCCESS);
        CHECK(d == c.dtype);
        CHECK(std::string(mla_dtype_string(c.dtype)) == c.name);
        CHECK(mla_dtype_size(c.dtype) == c.size);
    }
    mla_dtype d = MLA_DTYPE_BF16;
    CHECK(mla_dtype_from_string("BF16", &d) == MLA_ERROR_INVALID_ARGUMENT);
    CHECK(mla_dtype_from_string("", &d) == MLA_ERROR_INVALID_ARGUMENT);
    CHECK(mla_dtype_from_string(nullptr, &d) == MLA_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(mla_last_error()) == "mla_dtype_from_string: NULL pointer");
    CHECK(mla_dtype_from_string("bf16", nullptr) == MLA_ERROR_INVALID_ARGUMENT);
    CHECK(d == MLA_DTYPE_BF16);
    CHECK(mla_dtype_string(static_cast<mla_dtype>(42)) == nullptr);
    CHECK(mla_dtype_size(static_cast<mla_dtype>(42)) == 0);
}

TEST_CASE("known archs", "[core][arch]") {
    REQUIRE(mla_arch_count() == 4);
    CHECK(std::string(mla_arch_name(0)) == "gfx942");
    CHECK(std::string(mla_arch_name(1)) == "gfx950");
    CHECK(std::string(mla_arch_name(2)) == "gfx1250");
    CHECK(std::string(mla_arch_name(3)) == "sm_90a");
    CHECK(mla_arch_name(4) == nullptr);
    CHECK(mla_arch_name(-1) == nullptr);
}
