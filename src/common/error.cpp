// error.cpp - thread-local last error, status names, version.
#include "common/error.h"

namespace mla {
namespace {
thread_local std::string t_last_error;
}
void set_last_error(const std::string& message) { t_last_error = message; }
const char* last_error_cstr() { return t_last_error.c_str(); }
void clear_last_error() { t_last_error.clear(); }
}  // namespace mla

extern "C" {

MLA_API const char* mla_status_string(int status) {
    switch (status) {
        case MLA_SUCCESS: return "MLA_SUCCESS";
        case MLA_ERROR_INVALID_ARGUMENT: return "MLA_ERROR_INVALID_ARGUMENT";
        case MLA_ERROR_UNSUPPORTED_SHAPE: return "MLA_ERROR_UNSUPPORTED_SHAPE";
        case MLA_ERROR_NO_KERNEL: return "MLA_ERROR_NO_KERNEL";
        case MLA_ERROR_ARCH_NOT_BUILT: return "MLA_ERROR_ARCH_NOT_BUILT";
        case MLA_ERROR_RUNTIME_UNAVAILABLE: return "MLA_ERROR_RUNTIME_UNAVAILABLE";
        case MLA_ERROR_NO_DEVICE: return "MLA_ERROR_NO_DEVICE";
        case MLA_ERROR_CODE_OBJECT: return "MLA_ERROR_CODE_OBJECT";
        case MLA_ERROR_LAUNCH: return "MLA_ERROR_LAUNCH";
        case MLA_ERROR_BUFFER_TOO_SMALL: return "MLA_ERROR_BUFFER_TOO_SMALL";
        case MLA_ERROR_INTERNAL: return "MLA_ERROR_INTERNAL";
        case MLA_ERROR_TABLE: return "MLA_ERROR_TABLE";
        default: return "MLA_UNKNOWN_STATUS";
    }
}

MLA_API const char* mla_last_error(void) { return mla::last_error_cstr(); }

MLA_API void mla_clear_last_error(void) { mla::clear_last_error(); }

MLA_API int mla_version(void) { return MLA_VERSION; }

#define MLA_STR2(x) #x
#define MLA_STR(x) MLA_STR2(x)
MLA_API const char* mla_version_string(void) {
    return MLA_STR(MLA_VERSION_MAJOR) "." MLA_STR(MLA_VERSION_MINOR) "." MLA_STR(MLA_VERSION_PATCH);
}

}  // extern "C"
