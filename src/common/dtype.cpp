// dtype.cpp - dtype names and sizes (C API).
#include <cstring>

#include "common/error.h"

namespace {
struct DtypeName {
    mla_dtype dtype;
    const char* name;
    size_t size;
};
const DtypeName kDtypes[] = {
    {MLA_DTYPE_BF16, "bf16", 2},          {MLA_DTYPE_FP16, "fp16", 2},
    {MLA_DTYPE_FP8_E4M3FN, "fp8", 1},     {MLA_DTYPE_FP8_E4M3FNUZ, "fp8_fnuz", 1},
    {MLA_DTYPE_BYTE, "byte", 1},          {MLA_DTYPE_FP32, "fp32", 4},
};
}  // namespace

extern "C" {

MLA_API mla_status mla_dtype_from_string(const char* name, mla_dtype* out) {
    return mla::guard([&] {
        MLA_CHECK_ARG(name != nullptr && out != nullptr, "mla_dtype_from_string: NULL pointer");
        for (const DtypeName& d : kDtypes)
            if (!std::strcmp(name, d.name)) {
                *out = d.dtype;
                return;
            }
        MLA_FAIL(MLA_ERROR_INVALID_ARGUMENT,
                 "unknown dtype '" << name << "' (known: bf16, fp16, fp8, fp8_fnuz, byte, fp32)");
    });
}

MLA_API const char* mla_dtype_string(mla_dtype dtype) {
    for (const DtypeName& d : kDtypes)
        if (d.dtype == dtype) return d.name;
    return nullptr;
}

MLA_API size_t mla_dtype_size(mla_dtype dtype) {
    for (const DtypeName& d : kDtypes)
        if (d.dtype == dtype) return d.size;
    return 0;
}

}  // extern "C"
