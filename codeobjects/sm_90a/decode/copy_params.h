// copy_params.h - params of the device-to-device copy kernel (mla_copy_16b, mla_copy.cu) that
// mla_device_copy launches: the copy-bandwidth yardstick `mla run` prints beside decode.
#pragma once
#include <stdint.h>

struct mla_copy_params {
    const void* src;   /* 16-byte aligned */
    void* dst;         /* 16-byte aligned */
    uint64_t n16;      /* 16-byte vectors to copy */
};
