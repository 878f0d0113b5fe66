// fake_test_util.h - Catch2 helpers shared by the suites that run libmla on the fake runtime:
// code-object roots made of the project's tables and fake images, and a context on a fake
// device. Header-only; include after <catch2/catch.hpp>.
#pragma once
#include <fstream>
#include <string>
#include <vector>

#include "fake_codeobject_root.h"
#include "fake_runtime.h"
#include "mla_c_api.h"

namespace fake_test {

inline void copy_file(const std::string& from, const std::string& to) { REQUIRE(fake_root::copy_file(from, to)); }

// A fake code object (fake_rt_format_image) whose payload is `tag`, written to `path`.
inline void write_fake_image(const std::string& path, const std::string& tag) {
    REQUIRE(fake_root::write_image(path, tag));
}

// A context for `arch` on a fresh fake device (compute capability 9.0 for sm_90a, else the gfx
// arch; 132 CUs) with code-object root `root`; the fake's records are reset after creation, so a
// test sees only its own calls.
inline mla_context* fake_context(const std::string& root, const char* arch = "sm_90a") {
    fake_rt_install_env();
    fake_rt_reset();
    const char* device = arch[0] == 'g' ? arch : "9.0";
    fake_rt_set_device(device, 132);
    mla_context_options o = MLA_CONTEXT_OPTIONS_INIT;
    o.arch = arch;
    o.codeobject_root = root.c_str();
    mla_context* ctx = nullptr;
    const mla_status st = mla_context_create(&o, &ctx);
    INFO(mla_last_error());
    REQUIRE(st == MLA_SUCCESS);
    fake_rt_reset();
    fake_rt_set_device(device, 132);
    return ctx;
}

}  // namespace fake_test
