// c_api_cxx.cpp - compiles mla_c_api.h as C++17 with -Wall -Wextra -Werror -pedantic, linked
// against libmla.so (not the static core), and checks the exported C entry points from C++.
#include <cstdio>
#include <cstring>

#include "mla_c_api.h"

int main() {
    mla_arch_info info = MLA_ARCH_INFO_INIT;
    mla_context_options opts = MLA_CONTEXT_OPTIONS_INIT;
    mla_decode_args args = MLA_DECODE_ARGS_INIT;
    int failures = 0;
    failures += info.struct_size != sizeof(mla_arch_info);
    failures += opts.struct_size != sizeof(mla_context_options);
    failures += args.struct_size != sizeof(mla_decode_args);
    failures += mla_version() != MLA_VERSION;
    failures += std::strcmp(mla_version_string(), "0.1.0") != 0 && MLA_VERSION == 100;
    failures += mla_arch_query("sm_90a", &info) != MLA_SUCCESS || info.vendor != 1;
    if (failures) std::fprintf(stderr, "%d check(s) failed\n", failures);
    return failures ? 1 : 0;
}
