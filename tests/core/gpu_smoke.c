/* gpu_smoke.c - the registry's smoke kernel on a real GPU, through libmla.so only: table ->
 * meson-built cubin -> cuModuleLoadData -> cuLaunchKernel, result checked on the host.
 * Exits 77 (skipped) when there is no usable GPU runtime or device. */
#include <stdio.h>
#include <stdlib.h>

#include "mla_c_api.h"

int main(void) {
    mla_context* ctx = NULL;
    mla_context_options o = MLA_CONTEXT_OPTIONS_INIT;
    mla_status st = mla_context_create(&o, &ctx);
    if (st == MLA_ERROR_RUNTIME_UNAVAILABLE || st == MLA_ERROR_NO_DEVICE ||
        st == MLA_ERROR_ARCH_NOT_BUILT) { /* no GPU, or not one libmla has kernels for */
        printf("skipped: %s: %s\n", mla_status_string(st), mla_last_error());
        return 77;
    }
    if (st != MLA_SUCCESS) {
        fprintf(stderr, "mla_context_create: %s: %s\n", mla_status_string(st), mla_last_error());
        return 1;
    }
    enum { N = 100003 };
    int32_t* dev = NULL;
    int32_t* host = (int32_t*)malloc(N * sizeof(int32_t));
    int bad = 0;
    if (mla_device_malloc(ctx, (void**)&dev, N * sizeof(int32_t)) != MLA_SUCCESS ||
        mla_memset_d8(ctx, dev, 0, N * sizeof(int32_t), NULL) != MLA_SUCCESS ||
        (st = mla_smoke_launch(ctx, dev, N, 5, -11, NULL)) != MLA_SUCCESS ||
        mla_memcpy_dtoh(ctx, host, dev, N * sizeof(int32_t), NULL) != MLA_SUCCESS ||
        mla_stream_synchronize(ctx, NULL) != MLA_SUCCESS) {
        fprintf(stderr, "smoke on %s failed: %s\n", mla_context_arch(ctx), mla_last_error());
        return 1;
    }
    for (int i = 0; i < N; ++i)
        if (host[i] != 5 * i - 11) {
            if (bad++ < 5) fprintf(stderr, "out[%d] = %d, expected %d\n", i, host[i], 5 * i - 11);
        }
    printf("%s (%d SMs/CUs): smoke kernel wrote %d values, %d wrong\n", mla_context_arch(ctx),
           mla_context_num_cus(ctx), N, bad);
    mla_device_free(ctx, dev);
    mla_context_destroy(ctx);
    free(host);
    return bad ? 1 : 0;
}
