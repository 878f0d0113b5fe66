// decode_call.h - a whole valid mla_decode_fwd call on the fake CUDA runtime, shared by the
// decode suite (test_decode_launch.cpp) and the host-cost benchmark (bench_decode_host.cpp).
// Header-only, no test framework.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "host_plan.h"
#include "mla_c_api.h"

// A whole valid mla_decode_fwd call for the fake runtime: host memory stands in for device
// memory (the fake never dereferences it; the KV cache is a small stand-in). B requests of L query tokens and kv_len + len_step * b
// KV tokens each in pages of ps, a host plan (v1_2, sm_90a) and buffers of the sizes the call
// needs. cp_world > 1: rank cp_rank's round-robin shard (plan is_cp_round_robin = 1, g_kv_indptr
// holding global lengths whose shard on this rank has exactly the call's local lengths).
// If planning is refused, ok = false, why says why and the args are left unset.
struct DecodeCall {
    int B, H, L, ps;
    mla_dtype qd, kvd;
    std::vector<int32_t> qo, kvi, pages, last, g;
    mla_metadata_params mp = MLA_METADATA_PARAMS_INIT;
    mla_metadata_sizes sz{};
    std::unique_ptr<HostPlan> host;  // plan memory sized by mla_metadata_info
    mla_metadata_buffers plan{};
    std::vector<uint8_t> q, kv, out_buf, work;
    std::vector<float> lse, scales{1.0f, 1.0f};
    int32_t flag = 0;
    mla_decode_args a = MLA_DECODE_ARGS_INIT;
    bool ok = true;   // planning succeeded (else `why` says what refused)
    std::string why;

    DecodeCall(int B_, int H_, int L_, int ps_, int kv_len, mla_dtype qd_ = MLA_DTYPE_BF16,
               mla_dtype kvd_ = MLA_DTYPE_BF16, int causal = 1, int cp_world = 1, int cp_rank = 0,
               int len_step = 37)
        : B(B_), H(H_), L(L_), ps(ps_), qd(qd_), kvd(kvd_) {
        qo.assign(B + 1, 0);
        kvi.assign(B + 1, 0);
        g.assign(B + 1, 0);
        for (int b = 0; b < B; ++b) {
            const int n = kv_len + len_step * b, np = (n + ps - 1) / ps;
            qo[b + 1] = qo[b] + L;
            kvi[b + 1] = kvi[b] + np;
            last.push_back(n - (np - 1) * ps);
            // the largest global length whose shard on cp_rank holds n tokens
            g[b + 1] = g[b] + (cp_world > 1 ? n * cp_world + cp_rank : n);
        }
        for (int i = 0; i < kvi[B]; ++i) pages.push_back(i);
        mp.arch = "sm_90a";
        mp.batch_size = B;
        mp.num_heads = H;
        mp.max_seqlen_qo = L;
        mp.q_dtype = qd;
        mp.kv_dtype = kvd;
        mp.page_size = ps;
        mp.causal = causal;
        mp.is_cp_round_robin = cp_world > 1 ? 1 : 0;
        sz.struct_size = sizeof sz;
        mla_status st = mla_metadata_info(&mp, &sz);
        if (st == MLA_SUCCESS) {
            host.reset(new HostPlan(sz));
            plan = host->buffers;
            st = mla_plan_metadata(&mp, qo.data(), kvi.data(), last.data(), &plan, nullptr, nullptr,
                                   nullptr);
        }
        if (st != MLA_SUCCESS) {
            why = std::string("planning: ") + mla_last_error();
            ok = false;
            return;
        }
        const size_t qe = mla_dtype_size(qd), kve = mla_dtype_size(kvd);
        q.resize(size_t(qo[B]) * H * 576 * qe + 64);
        // the KV cache's extent reaches mla_decode_fwd only as num_pages (never a byte size), so a
        // stand-in serves: a full cache would be 0.6 GB at b = 128, 4096 tokens (the benchmark)
        kv.resize(64 + 16 * kve);
        out_buf.resize(size_t(qo[B]) * H * 512 * 4 + 64);  // room for fp32 out too
        lse.resize(size_t(qo[B]) * H);
        work.resize(size_t(sz.workspace_bytes) + 64);
        a.q_dtype = qd;
        a.kv_dtype = kvd;
        a.batch_size = B;
        a.num_heads = H;
        a.max_seqlen_q = L;
        a.total_q = qo[B];
        a.page_size = ps;
        a.num_pages = kvi[B];
        a.causal = causal;
        a.softmax_scale = 0.1f;
        a.q_scale = &scales[0];
        a.kv_scale = &scales[1];
        a.q = align16(q.data());
        a.kv_cache = align16(kv.data());
        a.qo_indptr = qo.data();
        a.kv_indptr = kvi.data();
        a.kv_page_indices = pages.data();
        a.kv_last_page_lens = last.data();
        a.num_page_indices = int64_t(pages.size());
        a.out = align16(out_buf.data());
        a.lse = lse.data();
        a.plan = &plan;
        a.plan_params = &mp;
        a.workspace = align16(work.data());
        a.workspace_bytes = size_t(sz.workspace_bytes);
        a.error_flag = &flag;
        if (cp_world > 1) {
            a.g_kv_indptr = g.data();
            a.cp_world_size = cp_world;
            a.cp_rank = cp_rank;
        }
    }
    static void* align16(void* p) {
        return reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(p) + 15) & ~uintptr_t(15));
    }
};
