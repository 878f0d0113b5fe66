// gpu_context.h - the start of every GPU test program: a libmla context on the default device,
// or the exit status that says why not (77 = skipped, meson's and CI's convention, without a CUDA
// device or, when an sm_90a kernel is needed, on another arch). Public C API only.
#pragma once
#include <cstdio>
#include <cstring>

#include "mla_c_api.h"

// Opens *ctx; returns 0 on success, else the program's exit status after printing why under
// `name`: 77 without a usable GPU runtime or device (MLA_ERROR_RUNTIME_UNAVAILABLE /
// MLA_ERROR_NO_DEVICE) or, with need_sm90, when the device is not sm_90a (the context is then
// destroyed); 1 when mla_context_create fails otherwise.
inline int open_gpu_context(const char* name, bool need_sm90, mla_context** ctx) {
    mla_context_options o = MLA_CONTEXT_OPTIONS_INIT;
    const mla_status st = mla_context_create(&o, ctx);
    if (st == MLA_ERROR_RUNTIME_UNAVAILABLE || st == MLA_ERROR_NO_DEVICE) {
        std::printf("SKIP %s: no CUDA device (%s: %s)\n", name, mla_status_string(st), mla_last_error());
        return 77;
    }
    if (st != MLA_SUCCESS) {
        std::printf("FAIL %s: mla_context_create: %s: %s\n", name, mla_status_string(st), mla_last_error());
        return 1;
    }
    if (need_sm90 && std::strcmp(mla_context_arch(*ctx), "sm_90a") != 0) {
        std::printf("SKIP %s: device is %s, not sm_90a\n", name, mla_context_arch(*ctx));
        mla_context_destroy(*ctx);
        *ctx = nullptr;
        return 77;
    }
    return 0;
}
