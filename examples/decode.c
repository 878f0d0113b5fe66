/*
 * decode.c - the path a C engine takes through libmla's public API: ask whether the shape runs
 * (mla_decode_shape_support), size and build the plan on the host (mla_metadata_info,
 * mla_plan_metadata), copy everything to the GPU, decode (mla_decode_fwd) and check the result
 * against the CPU reference (mla_decode_reference).
 *
 * Build against the installed library:
 *   cc -std=c11 decode.c $(pkg-config --cflags --libs libmla) -lm -o decode
 * Run: ./decode   (exit 0 = checked, 77 = no CUDA device, 1 = failure)
 *
 * Problem: 3 requests with 1 query token each, 16 heads, KV lengths 100 / 1 / 700 tokens in
 * pages of 16 (pages in reverse order), bf16, causal, DeepSeek-V3 softmax scale.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mla_c_api.h>

#define B 3
#define H 16
#define PS 16

static uint16_t to_bf16(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}
static float from_bf16(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static float frand(uint32_t* s) {
    *s = *s * 1664525u + 1013904223u;
    return ((float)(*s >> 8) / 16777216.0f - 0.5f) * 0.2f;
}

#define CHECK(call)                                                                     \
    do {                                                                                \
        mla_status st_ = (call);                                                        \
        if (st_ != MLA_SUCCESS) {                                                       \
            fprintf(stderr, "%s: %s: %s\n", #call, mla_status_string(st_), mla_last_error()); \
            return 1;                                                                   \
        }                                                                               \
    } while (0)

int main(void) {
    const int kv_lens[B] = {100, 1, 700};
    int32_t qo_indptr[B + 1], kv_indptr[B + 1], last[B];
    qo_indptr[0] = kv_indptr[0] = 0;
    for (int b = 0; b < B; ++b) {
        int pages = (kv_lens[b] + PS - 1) / PS;
        qo_indptr[b + 1] = qo_indptr[b] + 1;
        kv_indptr[b + 1] = kv_indptr[b] + pages;
        last[b] = kv_lens[b] - (pages - 1) * PS;
    }
    const int total_q = qo_indptr[B], num_pages = kv_indptr[B];
    int32_t* page_ids = malloc(sizeof(int32_t) * num_pages);
    for (int i = 0; i < num_pages; ++i) page_ids[i] = num_pages - 1 - i;
    const double mscale = 0.1 * log(40.0) + 1.0;
    const float scale = (float)(mscale * mscale / sqrt(192.0));

    /* 1. can this shape run here? */
    mla_decode_shape shape = MLA_DECODE_SHAPE_INIT;
    shape.arch = "sm_90a";
    shape.num_heads = H;
    shape.page_size = PS;
    shape.return_lse = 1;
    mla_decode_support sup;
    memset(&sup, 0, sizeof sup);
    sup.struct_size = sizeof sup;
    CHECK(mla_decode_shape_support(&shape, &sup));
    printf("shape support on sm_90a: supported=%d kernel=%s\n", sup.supported, sup.asm_kernel);

    mla_context_options opt = MLA_CONTEXT_OPTIONS_INIT;
    mla_context* ctx = NULL;
    mla_status st = mla_context_create(&opt, &ctx);
    if (st == MLA_ERROR_RUNTIME_UNAVAILABLE || st == MLA_ERROR_NO_DEVICE) {
        printf("no CUDA device: %s\n", mla_last_error());
        return 77;
    }
    CHECK(st);

    /* 2. data */
    size_t nq = (size_t)total_q * H * 576, nkv = (size_t)num_pages * PS * 576;
    uint16_t* q = malloc(nq * 2);
    uint16_t* kv = malloc(nkv * 2);
    uint32_t seed = 7;
    for (size_t i = 0; i < nq; ++i) q[i] = to_bf16(frand(&seed));
    for (size_t i = 0; i < nkv; ++i) kv[i] = to_bf16(frand(&seed));

    /* 3. plan on the host */
    mla_metadata_params mp = MLA_METADATA_PARAMS_INIT;
    mp.arch = mla_context_arch(ctx);
    mp.num_clusters = mla_context_num_cus(ctx);
    mp.batch_size = B;
    mp.num_heads = H;
    mp.page_size = PS;
    mla_metadata_sizes sz;
    memset(&sz, 0, sizeof sz);
    sz.struct_size = sizeof sz;
    CHECK(mla_metadata_info(&mp, &sz));
    uint64_t wm[2];
    int32_t* wi = calloc((size_t)sz.work_indptr_len, 4);
    int32_t* ws = calloc((size_t)sz.work_info_set_rows * 8, 4);
    int32_t* ri = calloc((size_t)sz.reduce_indptr_len, 4);
    int32_t* rf = calloc((size_t)sz.reduce_final_map_rows * 2 + 2, 4);
    int32_t* rp = calloc((size_t)sz.reduce_partial_map_len + 1, 4);
    void *d_wi, *d_ws, *d_ri, *d_rf, *d_rp, *d_wm;
    CHECK(mla_device_malloc(ctx, &d_wi, (size_t)sz.work_indptr_len * 4));
    CHECK(mla_device_malloc(ctx, &d_ws, (size_t)sz.work_info_set_rows * 32 + 32));
    CHECK(mla_device_malloc(ctx, &d_ri, (size_t)sz.reduce_indptr_len * 4));
    CHECK(mla_device_malloc(ctx, &d_rf, (size_t)sz.reduce_final_map_rows * 8 + 8));
    CHECK(mla_device_malloc(ctx, &d_rp, (size_t)sz.reduce_partial_map_len * 4 + 4));
    CHECK(mla_device_malloc(ctx, &d_wm, 16));
    mla_metadata_buffers hb = {sizeof(mla_metadata_buffers), wm, 2, wi, sz.work_indptr_len, ws,
                               sz.work_info_set_rows, ri, sz.reduce_indptr_len, rf,
                               sz.reduce_final_map_rows, rp, sz.reduce_partial_map_len + 1};
    CHECK(mla_plan_metadata(&mp, qo_indptr, kv_indptr, last, &hb, d_wi, d_ws, NULL));
    CHECK(mla_memcpy_htod(ctx, d_wm, wm, 16, NULL));
    CHECK(mla_memcpy_htod(ctx, d_wi, wi, (size_t)sz.work_indptr_len * 4, NULL));
    CHECK(mla_memcpy_htod(ctx, d_ws, ws, (size_t)sz.work_info_set_rows * 32, NULL));
    CHECK(mla_memcpy_htod(ctx, d_ri, ri, (size_t)sz.reduce_indptr_len * 4, NULL));
    CHECK(mla_memcpy_htod(ctx, d_rf, rf, (size_t)sz.reduce_final_map_rows * 8, NULL));
    CHECK(mla_memcpy_htod(ctx, d_rp, rp, (size_t)sz.reduce_partial_map_len * 4 + 4, NULL));
    mla_metadata_buffers db = hb;
    db.work_metadata = d_wm;
    db.work_indptr = d_wi;
    db.work_info_set = d_ws;
    db.reduce_indptr = d_ri;
    db.reduce_final_map = d_rf;
    db.reduce_partial_map = d_rp;

    /* 4. device data and decode */
    void *d_q, *d_kv, *d_qo, *d_kvi, *d_pages, *d_last, *d_out, *d_lse, *d_ws_part, *d_flag;
    CHECK(mla_device_malloc(ctx, &d_q, nq * 2));
    CHECK(mla_device_malloc(ctx, &d_kv, nkv * 2));
    CHECK(mla_device_malloc(ctx, &d_qo, sizeof qo_indptr));
    CHECK(mla_device_malloc(ctx, &d_kvi, sizeof kv_indptr));
    CHECK(mla_device_malloc(ctx, &d_pages, (size_t)num_pages * 4));
    CHECK(mla_device_malloc(ctx, &d_last, sizeof last));
    CHECK(mla_device_malloc(ctx, &d_out, (size_t)total_q * H * 512 * 2));
    CHECK(mla_device_malloc(ctx, &d_lse, (size_t)total_q * H * 4));
    CHECK(mla_device_malloc(ctx, &d_ws_part, (size_t)sz.workspace_bytes + 16));
    CHECK(mla_device_malloc(ctx, &d_flag, 4));
    CHECK(mla_memcpy_htod(ctx, d_q, q, nq * 2, NULL));
    CHECK(mla_memcpy_htod(ctx, d_kv, kv, nkv * 2, NULL));
    CHECK(mla_memcpy_htod(ctx, d_qo, qo_indptr, sizeof qo_indptr, NULL));
    CHECK(mla_memcpy_htod(ctx, d_kvi, kv_indptr, sizeof kv_indptr, NULL));
    CHECK(mla_memcpy_htod(ctx, d_pages, page_ids, (size_t)num_pages * 4, NULL));
    CHECK(mla_memcpy_htod(ctx, d_last, last, sizeof last, NULL));
    CHECK(mla_memset_d8(ctx, d_flag, 0, 4, NULL));

    mla_decode_args a = MLA_DECODE_ARGS_INIT;
    a.batch_size = B;
    a.num_heads = H;
    a.max_seqlen_q = 1;
    a.total_q = total_q;
    a.page_size = PS;
    a.num_pages = num_pages;
    a.causal = 1;
    a.softmax_scale = scale;
    a.q = d_q;
    a.kv_cache = d_kv;
    a.qo_indptr = d_qo;
    a.kv_indptr = d_kvi;
    a.kv_page_indices = d_pages;
    a.kv_last_page_lens = d_last;
    a.num_page_indices = num_pages;
    a.out = d_out;
    a.lse = d_lse;
    a.plan = &db;
    a.plan_params = &mp;
    a.workspace = d_ws_part;
    a.workspace_bytes = (size_t)sz.workspace_bytes;
    a.error_flag = d_flag;
    CHECK(mla_decode_fwd(ctx, &a, NULL));
    CHECK(mla_stream_synchronize(ctx, NULL));

    uint16_t* out = malloc((size_t)total_q * H * 512 * 2);
    float* lse = malloc((size_t)total_q * H * 4);
    int32_t flag = -1;
    CHECK(mla_memcpy_dtoh(ctx, out, d_out, (size_t)total_q * H * 512 * 2, NULL));
    CHECK(mla_memcpy_dtoh(ctx, lse, d_lse, (size_t)total_q * H * 4, NULL));
    CHECK(mla_memcpy_dtoh(ctx, &flag, d_flag, 4, NULL));

    /* 5. check against the CPU reference */
    mla_host_problem hp = MLA_HOST_PROBLEM_INIT;
    hp.batch_size = B;
    hp.num_heads = H;
    hp.page_size = PS;
    hp.num_pages = num_pages;
    hp.softmax_scale = scale;
    hp.q = q;
    hp.q_stride_token = H * 576;
    hp.q_stride_head = 576;
    hp.kv_cache = kv;
    hp.qo_indptr = qo_indptr;
    hp.kv_indptr = kv_indptr;
    hp.kv_page_indices = page_ids;
    hp.kv_last_page_lens = last;
    float* ref = malloc((size_t)total_q * H * 512 * 4);
    float* ref_lse = malloc((size_t)total_q * H * 4);
    CHECK(mla_decode_reference(&hp, ref, ref_lse));
    int bad = 0;
    double max_err = 0;
    for (size_t i = 0; i < (size_t)total_q * H * 512; ++i) {
        double e = fabs(from_bf16(out[i]) - ref[i]);
        if (e > max_err) max_err = e;
        if (!(e < 8e-4 || e < 0.016 * fabs(ref[i]))) ++bad;
    }
    for (size_t i = 0; i < (size_t)total_q * H; ++i)
        if (!(fabs(lse[i] - ref_lse[i]) <= 1.2e-4 * fabs(ref_lse[i]) + 1e-6)) ++bad;
    printf("decode %d requests x %d heads: max abs error %.2e, %d mismatches, error flag %d: %s\n", B, H,
           max_err, bad, flag, bad == 0 && flag == 0 ? "OK" : "FAIL");
    mla_context_destroy(ctx);
    return bad == 0 && flag == 0 ? 0 : 1;
}
