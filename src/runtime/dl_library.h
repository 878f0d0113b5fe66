// dl_library.h - finding and opening a GPU runtime library with dlopen, shared by the CUDA driver
// and HIP backends (cuda_driver.cpp, hip_runtime.cpp).
//
// Search order (c-abi-and-style.md §2.1/§2.4):
//   1. the environment override (MLA_LIBCUDA_PATH / MLA_LIBHIP_PATH). When it is set it is the
//      ONLY candidate: a wrong override is an error, never silently replaced by another copy
//      (so tests and users get exactly the library they named);
//   2. a copy already loaded in the process (dlopen(..., RTLD_NOLOAD)), e.g. PyTorch's;
//   3. the sonames, in order, through the normal loader search.
// Libraries are opened RTLD_NOW | RTLD_LOCAL and never closed.
#pragma once
#include <string>
#include <vector>

namespace mla::rt {

struct DlLibrary {
    void* handle = nullptr;  // null when nothing could be opened
    std::string path;        // absolute path of the loaded file (from the link map) or the name
    std::string tried;       // one line per candidate: "  <what>: <dlerror()>"
};

// Opens the runtime library as described above. Never throws.
DlLibrary open_dl_library(const char* env_var, const std::vector<std::string>& sonames);

// dlsym that returns nullptr (and clears dlerror) when the symbol is absent.
void* dl_symbol(void* handle, const char* name);

}  // namespace mla::rt
