// cmd_archs.cpp - `mla archs`: the archs libmla knows, the code-object root, and per arch its
// tables, rows and missing code-object files; `--check` lists every row whose file is missing.
// Public C API only.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "commands.h"
#include "mla_c_api.h"

namespace {

void archs_usage(FILE* f) {
    std::fprintf(f,
                 "usage: mla archs [--root DIR] [--check]\n"
                 "  --root DIR  use DIR as the code-object root (default: MLA_CODEOBJECT_DIR, next\n"
                 "              to libmla.so, the install prefix, the build tree)\n"
                 "  --check     list every table row whose code-object file is missing;\n"
                 "              exit 1 if there is any\n");
}

}  // namespace

int cmd_archs(int argc, char** argv) {
    bool check = false;
    const char* root_arg = nullptr;
    for (int i = 0; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--check")) {
            check = true;
        } else if (!std::strcmp(argv[i], "--root") && i + 1 < argc) {
            root_arg = argv[++i];
        } else if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
            archs_usage(stdout);
            return 0;
        } else {
            std::fprintf(stderr, "mla archs: unknown option '%s'\n", argv[i]);
            archs_usage(stderr);
            return 2;
        }
    }
    if (root_arg && mla_set_codeobject_root(root_arg) != MLA_SUCCESS) {
        std::fprintf(stderr, "mla archs: %s\n", mla_last_error());
        return 2;
    }

    char root[4096];
    const mla_status rs = mla_codeobject_root(root, sizeof root, nullptr);
    if (rs == MLA_SUCCESS)
        std::printf("code-object root: %s\n\n", root);
    else
        std::printf("code-object root: none (%s)\n\n", mla_last_error());

    int exit_code = 0;
    int total_missing = 0;
    std::printf("%-8s %-6s %6s %6s %8s %12s\n", "arch", "vendor", "tables", "rows", "missing",
                "default CUs");
    for (int i = 0; i < mla_arch_count(); ++i) {
        const char* arch = mla_arch_name(i);
        mla_arch_info info = MLA_ARCH_INFO_INIT;
        const mla_status st = mla_arch_query(arch, &info);
        if (st != MLA_SUCCESS) {
            std::printf("%-8s %s: %s\n", arch, mla_status_string(st), mla_last_error());
            exit_code = 1;
            continue;
        }
        std::printf("%-8s %-6s %6d %6d %8d %12d\n", arch, info.vendor ? "NVIDIA" : "AMD",
                    info.num_tables, info.num_rows, info.missing_files, info.default_num_cus);
    }
    if (!check) return exit_code;

    std::printf("\nmissing code objects:\n");
    for (int i = 0; i < mla_arch_count(); ++i) {
        const char* arch = mla_arch_name(i);
        size_t needed = 0;
        int count = 0;
        mla_status st = mla_arch_check(arch, nullptr, 0, &needed, &count);
        if (st != MLA_SUCCESS && st != MLA_ERROR_BUFFER_TOO_SMALL) {
            std::printf("  %s: %s: %s\n", arch, mla_status_string(st), mla_last_error());
            exit_code = 1;
            continue;
        }
        std::vector<char> text(needed);
        st = mla_arch_check(arch, text.data(), text.size(), &needed, &count);
        if (st != MLA_SUCCESS) {
            std::printf("  %s: %s: %s\n", arch, mla_status_string(st), mla_last_error());
            exit_code = 1;
            continue;
        }
        total_missing += count;
        if (count) std::printf("%s", text.data());
    }
    std::printf("%d row(s) with a missing code object\n", total_missing);
    return total_missing ? 1 : exit_code;
}
