// scripts/racecheck_barriers.cu - a diagnostic for docs/performance.md (session 6, fourth call):
// build: nvcc -gencode=arch=compute_90a,code=sm_90a -O3 -o racecheck_barriers scripts/racecheck_barriers.cu
// run (GPU): for m in 0 1 2; do compute-sanitizer --tool racecheck --racecheck-report hazard ./racecheck_barriers $m; done
//
// Does compute-sanitizer racecheck report a RAW hazard where warpgroup 0
// uses warpgroup-local named barriers (bar.sync ID, 128) before both warpgroups meet at
// __syncthreads (barrier 0), as the transposed decode kernels do? Mode 0: no named barriers
// (control); 1: named barrier with an immediate id; 2: id in a register (as in decode_wgmma.cuh).
// Every read below is separated from every write by __syncthreads: a correct tool reports 0.
#include <cstdio>
#include <cstdlib>
__global__ void toy(float* out, int k, int mode) {
    __shared__ float buf[2048];
    const int tid = threadIdx.x, wg = tid >> 7;
    for (int it = 0; it < 4; ++it) {
        if (wg == 0 && mode == 1)
            for (int i = 0; i < k; ++i) asm volatile("bar.sync 1, 128;\n" ::: "memory");
        if (wg == 0 && mode == 2)
            for (int i = 0; i < k; ++i) asm volatile("bar.sync %0, 128;\n" ::"r"(1 + wg) : "memory");
        __syncthreads();
        if (wg == 0)
            for (int i = tid; i < 2048; i += 128) buf[i] = float(i * (it + 1));
        __syncthreads();
        float s = 0.f;
        for (int i = tid; i < 2048; i += 256) s += buf[(i * 7) % 2048];
        out[blockIdx.x * 256 + tid] += s;
        __syncthreads();
    }
}
int main(int argc, char** argv) {
    const int mode = argc > 1 ? std::atoi(argv[1]) : 2;
    float* d = nullptr;
    cudaMalloc(&d, 132 * 256 * 4);
    cudaMemset(d, 0, 132 * 256 * 4);
    toy<<<132, 256>>>(d, 3, mode);
    const cudaError_t e = cudaDeviceSynchronize();
    std::printf("mode %d: %s\n", mode, cudaGetErrorString(e));
    return e != cudaSuccess;
}
