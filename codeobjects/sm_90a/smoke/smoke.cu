// smoke.cu - the registry's smoke kernel: out[i] = a * i + b. Its only job is to prove that a
// table row leads to a cubin that loads and launches (mla_smoke_launch).
#include "smoke_params.h"

extern "C" __global__ void mla_smoke_fill(const __grid_constant__ mla_smoke_params p) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < p.n) p.out[i] = p.a * i + p.b;
}
