// api_registry.cpp - C API: known archs and the code-object registry (device-free).
#include <cstring>
#include <filesystem>

#include "common/error.h"
#include "context/struct_io.h"
#include "registry/registry.h"
#include "routing/routing.h"

namespace {

// Root for device-free queries [ARCH_NOT_BUILT listing every place searched when none].
std::string current_root_or_fail() {
    std::string root = mla::reg::Registry::global().default_root();
    if (root.empty()) {
        std::string tried;
        mla::reg::find_root("", &tried);
        MLA_FAIL(MLA_ERROR_ARCH_NOT_BUILT, "no code-object root found; searched:\n"
                                               << tried
                                               << "set MLA_CODEOBJECT_DIR or call "
                                                  "mla_set_codeobject_root");
    }
    return root;
}

}  // namespace

extern "C" {

MLA_API int mla_arch_count(void) { return mla::route::arch_count(); }

MLA_API const char* mla_arch_name(int index) { return mla::route::arch_name_at(index); }

MLA_API mla_status mla_codeobject_root(char* buf, size_t len, size_t* needed) {
    return mla::guard([&] {
        MLA_CHECK_ARG(buf != nullptr && len >= 1, "mla_codeobject_root: buf is NULL or len < 1");
        std::string root = current_root_or_fail();
        mla::copy_string_out(root, buf, len, needed, "mla_codeobject_root");
    });
}

MLA_API mla_status mla_set_codeobject_root(const char* root) {
    return mla::guard([&] {
        if (root == nullptr) {
            mla::reg::Registry::global().set_default_root("");
            return;
        }
        std::error_code ec;
        MLA_CHECK_ARG(root[0] != '\0' && std::filesystem::is_directory(root, ec),
                      "mla_set_codeobject_root: '" << root << "' is not a folder");
        std::filesystem::path p = std::filesystem::weakly_canonical(root, ec);
        mla::reg::Registry::global().set_default_root(ec ? std::string(root) : p.string());
    });
}

MLA_API mla_status mla_arch_query(const char* arch, mla_arch_info* info) {
    return mla::guard([&] {
        MLA_CHECK_ARG(arch != nullptr, "mla_arch_query: arch is NULL");
        mla::check_out_struct(info, "mla_arch_query: info");
        mla_arch_info out = MLA_ARCH_INFO_INIT;
        std::strncpy(out.arch, arch, sizeof(out.arch) - 1);
        mla::route::Arch a;
        try {
            a = mla::route::parse_arch(arch);
        } catch (const mla::Error&) {
            out.known = 0;
            mla::write_struct(info, out);
            throw;
        }
        out.known = 1;
        out.vendor = mla::route::is_nvidia(a) ? 1 : 0;
        out.default_num_cus = mla::route::default_num_cus(a);
        auto tables = mla::reg::Registry::global().arch(arch);  // null: no root or no tables
        if (tables) {
            out.num_tables = static_cast<int32_t>(tables->tables.size());
            out.num_rows = tables->num_rows();
            out.missing_files = tables->missing_files();
        }
        mla::write_struct(info, out);
    });
}

MLA_API mla_status mla_arch_check(const char* arch, char* buf, size_t len, size_t* needed,
                                  int* count) {
    return mla::guard([&] {
        MLA_CHECK_ARG(arch != nullptr, "mla_arch_check: arch is NULL");
        MLA_CHECK_ARG(buf != nullptr || len == 0, "mla_arch_check: buf is NULL");
        mla::route::parse_arch(arch);
        auto tables = mla::reg::Registry::global().arch(arch);
        std::string text;
        int n = 0;
        if (tables)
            for (const auto& t : tables->tables) {
                for (const mla::reg::Row& r : t.second.rows)
                    if (!r.co_exists) {
                        text += r.file + ":" + std::to_string(r.line) + ": " + r.co_path + "\n";
                        ++n;
                    }
                for (const std::string& d : t.second.dropped_duplicates) {
                    text += d + "\n";
                    ++n;
                }
            }
        mla::copy_string_out(text, buf, len, needed, "mla_arch_check");
        if (count) *count = n;
    });
}

}  // extern "C"
