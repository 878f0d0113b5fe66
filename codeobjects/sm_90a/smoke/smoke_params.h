// smoke_params.h - plain params struct of the smoke kernel, shared by host and device code.
#pragma once
#include <stdint.h>

struct mla_smoke_params {
    int32_t* out;  // device pointer, n int32
    int32_t n;
    int32_t a;
    int32_t b;
    int32_t pad;
};
