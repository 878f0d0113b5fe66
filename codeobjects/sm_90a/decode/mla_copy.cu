// mla_copy.cu - grid-stride 16-byte-vector device-to-device copy (mla_copy_16b), the copy
// bandwidth yardstick of `mla run` (mla_device_copy). Table: mla_copy.csv (kind=copy).
#include <stdint.h>

#include "decode/copy_params.h"

extern "C" __global__ void __launch_bounds__(256) mla_copy_16b(const __grid_constant__ mla_copy_params p) {
    const uint4* __restrict__ s = static_cast<const uint4*>(p.src);
    uint4* __restrict__ d = static_cast<uint4*>(p.dst);
    const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
    uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    for (; i + 3 * stride < p.n16; i += 4 * stride) {  // four loads in flight per thread
        const uint4 a = s[i], b = s[i + stride], c = s[i + 2 * stride], e = s[i + 3 * stride];
        d[i] = a;
        d[i + stride] = b;
        d[i + 2 * stride] = c;
        d[i + 3 * stride] = e;
    }
    for (; i < p.n16; i += stride) d[i] = s[i];
}
