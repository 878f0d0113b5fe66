// test_unavailable.cpp - a process with no GPU runtime (MLA_LIBCUDA_PATH / MLA_LIBHIP_PATH point at
// missing files): device-free calls work, contexts fail with RUNTIME_UNAVAILABLE naming the paths.
#include <catch2/catch.hpp>

#include <string>

#include "mla_c_api.h"
#include "test_util.h"

using test::contains;

TEST_CASE("no runtime: RUNTIME_UNAVAILABLE with every path tried", "[core][unavailable]") {
    test::ScopedEnv cuda("MLA_LIBCUDA_PATH", "/nonexistent/libcuda.so.1");
    test::ScopedEnv hip("MLA_LIBHIP_PATH", "/nonexistent/libamdhip64.so");
    mla_context_options o = MLA_CONTEXT_OPTIONS_INIT;
    const std::string root = test::build_codeobjects();  // must outlive o
    o.codeobject_root = root.c_str();
    mla_context* ctx = nullptr;

    // Device-free queries never load a runtime.
    mla_arch_info info = MLA_ARCH_INFO_INIT;
    REQUIRE(mla_arch_query("sm_90a", &info) == MLA_SUCCESS);
    CHECK(info.known == 1);

    o.arch = "sm_90a";
    REQUIRE(mla_context_create(&o, &ctx) == MLA_ERROR_RUNTIME_UNAVAILABLE);
    const std::string cuda_msg = mla_last_error();
    CHECK(contains(cuda_msg, "CUDA driver library (libcuda.so.1) not found; tried:\n"));
    CHECK(contains(cuda_msg, "  MLA_LIBCUDA_PATH=/nonexistent/libcuda.so.1: /nonexistent/libcuda.so.1: "
                             "cannot open shared object file"));
    CHECK(ctx == nullptr);
    // The outcome is cached: same status and message again.
    REQUIRE(mla_context_create(&o, &ctx) == MLA_ERROR_RUNTIME_UNAVAILABLE);
    CHECK(std::string(mla_last_error()) == cuda_msg);

    o.arch = "gfx942";
    REQUIRE(mla_context_create(&o, &ctx) == MLA_ERROR_RUNTIME_UNAVAILABLE);
    CHECK(contains(mla_last_error(), "HIP runtime library (libamdhip64.so) not found; tried:\n"));
    CHECK(contains(mla_last_error(), "  MLA_LIBHIP_PATH=/nonexistent/libamdhip64.so: "));

    o.arch = nullptr;  // CUDA then HIP: both messages
    REQUIRE(mla_context_create(&o, &ctx) == MLA_ERROR_RUNTIME_UNAVAILABLE);
    CHECK(contains(mla_last_error(), "no GPU runtime usable:\n"));
    CHECK(contains(mla_last_error(), "MLA_LIBCUDA_PATH=/nonexistent/libcuda.so.1"));
    CHECK(contains(mla_last_error(), "MLA_LIBHIP_PATH=/nonexistent/libamdhip64.so"));
    CHECK(ctx == nullptr);
}
