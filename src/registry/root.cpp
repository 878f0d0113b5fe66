// root.cpp - finding the code-object root, and the process-wide cache of loaded tables.
#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>

#include "common/error.h"
#include "registry/registry.h"

#ifndef MLA_INSTALL_CODEOBJECT_DIR
#define MLA_INSTALL_CODEOBJECT_DIR ""
#endif
#ifndef MLA_BUILD_CODEOBJECT_DIR
#define MLA_BUILD_CODEOBJECT_DIR ""
#endif

namespace fs = std::filesystem;

namespace mla::reg {
namespace {

// Folder of the binary holding this code (libmla.so, or a program linking the core statically).
std::string self_dir() {
    Dl_info info{};
    if (!dladdr(reinterpret_cast<void*>(&self_dir), &info) || !info.dli_fname) return "";
    std::error_code ec;
    fs::path p = fs::absolute(info.dli_fname, ec);  // dli_fname echoes a relative dlopen path
    return ec ? "" : p.parent_path().string();
}

}  // namespace

std::string find_root(const std::string& explicit_root, std::string* tried) {
    struct Candidate {
        std::string from, path, note;  // note: appended to "not a directory" in `tried`
    };
    std::vector<Candidate> candidates;
    const char* env = std::getenv("MLA_CODEOBJECT_DIR");
    // A chosen root is the only candidate: an explicit one, or a set MLA_CODEOBJECT_DIR (when it
    // names no folder the search stops, rather than load other code objects than the ones asked for).
    if (!explicit_root.empty()) {
        candidates.push_back({"explicit root", explicit_root, ""});
    } else if (env && env[0]) {
        candidates.push_back(
            {"MLA_CODEOBJECT_DIR", env, "; the search stops at a set MLA_CODEOBJECT_DIR: fix or unset it"});
    } else {
        std::string lib = self_dir();
        if (!lib.empty()) {
            candidates.push_back({"next to the library", lib + "/codeobjects", ""});
            candidates.push_back({"next to the library", lib + "/../share/libmla/codeobjects", ""});
        }
        // A library (or test program) still inside its meson build tree uses that tree's code
        // objects before the install prefix, so a stale installation cannot mask the build.
        const std::string build_dir = MLA_BUILD_CODEOBJECT_DIR;
        const std::string build_root = fs::path(build_dir).parent_path().string();
        const bool in_build_tree =
            !build_root.empty() && !lib.empty() && lib.compare(0, build_root.size() + 1, build_root + "/") == 0;
        if (in_build_tree) candidates.push_back({"build tree", build_dir, ""});
        candidates.push_back({"install prefix", MLA_INSTALL_CODEOBJECT_DIR, ""});
        if (!in_build_tree) candidates.push_back({"build tree", build_dir, ""});
    }
    for (const auto& c : candidates) {
        std::error_code ec;
        if (!c.path.empty() && fs::is_directory(c.path, ec)) {
            fs::path p = fs::weakly_canonical(c.path, ec);
            return ec ? c.path : p.string();
        }
        if (tried) *tried += "  " + c.from + ": " + c.path + " (not a directory" + c.note + ")\n";
    }
    return "";
}

Registry& Registry::global() {
    static Registry registry;
    return registry;
}

std::string Registry::default_root() {
    // The search touches the filesystem, so its result is cached; it is redone when
    // MLA_CODEOBJECT_DIR changes, on set_default_root and on clear.
    const char* env = std::getenv("MLA_CODEOBJECT_DIR");
    const std::string env_now = env ? env : "";
    std::lock_guard<std::mutex> lock(mutex_);
    if (!override_root_.empty()) return override_root_;
    if (!searched_ || env_now != searched_env_) {
        searched_root_ = find_root("");
        searched_env_ = env_now;
        searched_ = true;
    }
    return searched_root_;
}

void Registry::set_default_root(const std::string& root) {
    std::lock_guard<std::mutex> lock(mutex_);
    override_root_ = root;
    searched_ = false;
    cache_.clear();
}

std::shared_ptr<const ArchTables> Registry::arch(const std::string& arch, const std::string& root) {
    const std::string r = root.empty() ? default_root() : root;
    if (r.empty()) return nullptr;
    std::lock_guard<std::mutex> lock(mutex_);
    auto key = std::make_pair(r, arch);
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
    std::shared_ptr<const ArchTables> tables = load_arch(r, arch);
    cache_[key] = tables;  // a null entry caches "no tables" (ARCH_NOT_BUILT) too
    return tables;
}

void Registry::clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    searched_ = false;
    cache_.clear();
}

}  // namespace mla::reg
