// dl_library.cpp - see dl_library.h.
#include "runtime/dl_library.h"

#include <dlfcn.h>
#include <link.h>

#include <cstdlib>

namespace mla::rt {
namespace {

std::string last_dlerror() {
    const char* e = dlerror();
    return e ? e : "unknown dlopen error";
}

// Absolute path of an opened library, from its link map (falls back to `name`).
std::string loaded_path(void* handle, const std::string& name) {
    struct link_map* map = nullptr;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && map->l_name[0])
        return map->l_name;
    return name;
}

}  // namespace

DlLibrary open_dl_library(const char* env_var, const std::vector<std::string>& sonames) {
    DlLibrary lib;
    const char* env = std::getenv(env_var);
    if (env && env[0]) {
        dlerror();
        lib.handle = dlopen(env, RTLD_NOW | RTLD_LOCAL);
        if (lib.handle) {
            lib.path = loaded_path(lib.handle, env);
        } else {
            lib.tried += std::string("  ") + env_var + "=" + env + ": " + last_dlerror() + "\n";
            lib.tried += std::string("  (") + env_var +
                         " is set, so no other location was searched; unset it to search the "
                         "default library names)\n";
        }
        return lib;
    }
    for (const std::string& name : sonames) {
        dlerror();
        void* h = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
        if (h) {
            lib.handle = h;
            lib.path = loaded_path(h, name);
            return lib;
        }
        lib.tried += "  " + name + " (already loaded, RTLD_NOLOAD probe): not loaded\n";
    }
    for (const std::string& name : sonames) {
        dlerror();
        void* h = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (h) {
            lib.handle = h;
            lib.path = loaded_path(h, name);
            return lib;
        }
        lib.tried += "  " + name + ": " + last_dlerror() + "\n";
    }
    return lib;
}

void* dl_symbol(void* handle, const char* name) {
    dlerror();
    void* p = dlsym(handle, name);
    dlerror();
    return p;
}

}  // namespace mla::rt
