// struct_io.h - reading and writing the public structs that start with `size_t struct_size`
// (mla_c_api.h conventions): the library reads / writes min(struct_size, sizeof) bytes, so a
// caller built against an older (shorter) header keeps working.
#pragma once
#include <algorithm>
#include <cstring>

#include "common/error.h"

namespace mla {

// Largest struct_size accepted: anything bigger is taken as an uninitialised struct.
constexpr size_t kMaxStructSize = 1 << 16;

// Copy of *in with the fields beyond in->struct_size taken from `defaults` (the *_INIT values).
// [INVALID_ARGUMENT: in null, struct_size too small or absurd (not set from the INIT macro)]
template <class T>
T read_struct(const T* in, const T& defaults, const char* what) {
    MLA_CHECK_ARG(in != nullptr, what << " is NULL");
    MLA_CHECK_ARG(in->struct_size >= sizeof(size_t) && in->struct_size <= kMaxStructSize,
                  what << "->struct_size is " << in->struct_size
                       << ": initialise the struct with its *_INIT macro");
    T out = defaults;
    std::memcpy(static_cast<void*>(&out), in, std::min(in->struct_size, sizeof(T)));
    out.struct_size = sizeof(T);
    return out;
}

// Checks an output struct's struct_size [INVALID_ARGUMENT as read_struct].
template <class T>
void check_out_struct(const T* out, const char* what) {
    MLA_CHECK_ARG(out != nullptr, what << " is NULL");
    MLA_CHECK_ARG(out->struct_size >= sizeof(size_t) && out->struct_size <= kMaxStructSize,
                  what << "->struct_size is " << out->struct_size
                       << ": initialise the struct with its *_INIT macro");
}

// Writes `value` into *out: min(out->struct_size, sizeof) bytes, struct_size left unchanged.
template <class T>
void write_struct(T* out, const T& value) {
    const size_t n = std::min(out->struct_size, sizeof(T));
    if (n > sizeof(size_t))
        std::memcpy(reinterpret_cast<char*>(out) + sizeof(size_t),
                    reinterpret_cast<const char*>(&value) + sizeof(size_t), n - sizeof(size_t));
}

// Copies `s` into a C buffer [INVALID_ARGUMENT: buf null with len > 0; BUFFER_TOO_SMALL: *needed
// (if not null) gets s.size() + 1]. On success *needed gets s.size() + 1 too.
inline void copy_string_out(const std::string& s, char* buf, size_t len, size_t* needed,
                            const char* what) {
    MLA_CHECK_ARG(buf != nullptr || len == 0, what << ": buf is NULL");
    if (needed) *needed = s.size() + 1;
    if (s.size() + 1 > len)
        MLA_FAIL(MLA_ERROR_BUFFER_TOO_SMALL,
                 what << ": needs " << s.size() + 1 << " bytes, the buffer has " << len);
    std::memcpy(buf, s.c_str(), s.size() + 1);
}

}  // namespace mla
