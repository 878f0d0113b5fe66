// test_nodevice.cpp - a process whose (fake) driver loads but cuInit reports no device: contexts
// fail with MLA_ERROR_NO_DEVICE, and the outcome is cached for the process.
#include <catch2/catch.hpp>

#include <string>

#include "fake_runtime.h"
#include "mla_c_api.h"
#include "test_util.h"

TEST_CASE("cuInit reporting no device gives NO_DEVICE, cached", "[core][nodevice]") {
    fake_rt_install_env();
    fake_rt_reset();
    fake_rt_fail("cuInit", 100);  // CUDA_ERROR_NO_DEVICE
    mla_context_options o = MLA_CONTEXT_OPTIONS_INIT;
    o.arch = "sm_90a";
    const std::string root = test::build_codeobjects();
    o.codeobject_root = root.c_str();
    mla_context* ctx = nullptr;
    REQUIRE(mla_context_create(&o, &ctx) == MLA_ERROR_NO_DEVICE);
    const std::string msg = mla_last_error();
    CHECK(msg == std::string("cuInit: the CUDA driver ") + fake_rt_library_path() +
                     " reports no device: CUDA_ERROR_NO_DEVICE (fake runtime error) [100]");
    fake_rt_fail("cuInit", 0);
    REQUIRE(mla_context_create(&o, &ctx) == MLA_ERROR_NO_DEVICE);  // cached, cuInit not retried
    CHECK(std::string(mla_last_error()) == msg);
    CHECK(fake_rt_call_count("cuInit") == 1);
    CHECK(ctx == nullptr);
}
