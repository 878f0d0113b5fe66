// runtime_select.cpp - which runtime serves an arch: the CUDA driver for sm_*, HIP for gfx*.
#include "common/error.h"
#include "runtime/runtime.h"

namespace mla::rt {

Runtime& runtime_for_arch(const std::string& arch) {
    if (arch.rfind("sm_", 0) == 0) return cuda_runtime();
    if (arch.rfind("gfx", 0) == 0) return hip_runtime();
    MLA_FAIL(MLA_ERROR_ARCH_NOT_BUILT,
             "no GPU runtime for arch '" << arch << "' (sm_* uses the CUDA driver, gfx* uses HIP)");
}

}  // namespace mla::rt
