// cvt_rate.cu (session 39, measurement only): issue rate on one H200 of the instructions that build
// the register-A kernels' f16 fragments from e4m3 bytes: cvt.rn.f16x2.e4m3x2 (SASS F2FP...UNPACK_B),
// prmt, lop3, shf, and the exact bit trick (e4m3 byte at bits 15..8 of each half -> f16 of value/256:
// sign kept, the 7 other bits moved down by one). 8 independent chains a thread, every SM full.
// Build: nvcc -gencode=arch=compute_90a,code=sm_90a -O3 -o cvt_rate cvt_rate.cu
#include <cstdio>
#include <cuda_runtime.h>
constexpr int kIters = 4096, kChains = 8;
template <int OP>
__global__ void __launch_bounds__(1024) rate(unsigned* out, unsigned seed) {
    unsigned x[kChains];
#pragma unroll
    for (int c = 0; c < kChains; ++c) x[c] = seed * (threadIdx.x + 17 * c) | 0x01010101u;
    for (int i = 0; i < kIters; ++i) {
#pragma unroll
        for (int c = 0; c < kChains; ++c) {
            unsigned y = x[c];
            if (OP == 0) asm volatile("{.reg .b16 l; mov.b32 {l, _}, %1; cvt.rn.f16x2.e4m3x2 %0, l;}" : "=r"(y) : "r"(y));
            if (OP == 1) asm volatile("prmt.b32 %0, %0, %1, 0x5140;" : "+r"(y) : "r"(seed));
            if (OP == 2) asm volatile("lop3.b32 %0, %0, %1, 0x3f803f80, 0xe8;" : "+r"(y) : "r"(seed));
            if (OP == 3) asm volatile("shf.r.wrap.b32 %0, %0, %0, 1;" : "+r"(y));
            if (OP == 4) {  // the bit trick as the kernel writes it (C, compiler's choice of ops)
                asm volatile("" : "+r"(y));
                y = (y & 0x80008000u) | ((y >> 1) & 0x3f803f80u);
                asm volatile("" : "+r"(y));
            }
            if (OP == 5) asm volatile("fma.rn.f16x2 %0, %0, %0, %1;" : "+r"(y) : "r"(seed));
            x[c] = y;
        }
    }
    unsigned s = 0;
#pragma unroll
    for (int c = 0; c < kChains; ++c) s ^= x[c];
    if (s == 0x12345678u) out[0] = s;
}
template <int OP>
float run(int sms, unsigned* out, int blocks_per_sm) {
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    rate<OP><<<sms * blocks_per_sm, 1024>>>(out, 3u);
    cudaEventRecord(a);
    for (int r = 0; r < 5; ++r) rate<OP><<<sms * blocks_per_sm, 1024>>>(out, 3u);
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms;
    cudaEventElapsedTime(&ms, a, b);
    return ms / 5;
}
int main() {
    int sms, clk;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, 0);  // kHz (the maximum)
    unsigned* out;
    cudaMalloc(&out, 4);
    const char* names[] = {"cvt.rn.f16x2.e4m3x2", "prmt", "lop3", "shf", "bit trick (C)", "fma.rn.f16x2"};
    float ms[6] = {run<0>(sms, out, 2), run<1>(sms, out, 2), run<2>(sms, out, 2),
                   run<3>(sms, out, 2), run<4>(sms, out, 2), run<5>(sms, out, 2)};
    const double ops = double(sms) * 2 * 1024 * kIters * kChains;  // thread-ops per launch
    printf("SMs %d, max clock %d MHz\n", sms, clk / 1000);
    for (int i = 0; i < 6; ++i)
        printf("%-22s %8.3f ms  %7.1f thread-ops/clk/SM at the max clock\n", names[i], ms[i],
               ops / (ms[i] * 1e-3) / (clk * 1e3) / sms);
    return cudaGetLastError() != cudaSuccess;
}
