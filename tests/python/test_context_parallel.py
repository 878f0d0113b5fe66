"""Round-robin context parallel on the CPU (issue 9): shard each request's KV over W ranks
(global position p on rank p % W), run the reference on every rank with g_kv_indptr, merge the
ranks' (O, LSE) with merge_attn_states_host, and compare with the reference of the whole KV.
Also the merge's exact values for -inf partials and its argument checks."""
import numpy as np
import pytest

import libmla
from helpers import make_batch


def _shard(q, kv, qo, kvi, pages, last, page_size, W, r):
    """Rank r's local paged KV (page size 1 for simplicity) and the global lengths."""
    flat = kv.reshape(kv.shape[0], page_size, -1)
    B = len(qo) - 1
    g = np.zeros(B + 1, np.int32)
    rows, lkvi = [], [0]
    for b in range(B):
        P = int(kvi[b + 1] - kvi[b])
        N = (P - 1) * page_size + int(last[b]) if P else 0
        g[b + 1] = g[b] + N
        keys = flat[pages[kvi[b]:kvi[b + 1]]].reshape(-1, flat.shape[2])[:N]
        local = keys[r::W]
        rows.append(local)
        lkvi.append(lkvi[-1] + local.shape[0])
    lkv = np.concatenate(rows + [np.zeros((1, flat.shape[2]), kv.dtype)])[:, None, None, :]
    lkvi = np.array(lkvi, np.int32)
    lpages = np.arange(int(lkvi[-1]), dtype=np.int32)
    llast = np.ones(B, np.int32)
    return lkv, lkvi, lpages, llast, g


@pytest.mark.parametrize("W", [2, 3, 4])
@pytest.mark.parametrize("qlen,heads,kv_dt", [(1, 16, "bf16"), (3, 16, "fp8"), (2, 128, "bf16")])
def test_sharded_decode_merges_to_the_whole(W, qlen, heads, kv_dt):
    rng = np.random.default_rng(W * 100 + qlen)
    kv_lens = [0, 1, 2, 3, W - 1, W, 97]
    kv_lens = [max(n, 0) for n in kv_lens]
    qlens = [qlen] * len(kv_lens)
    ps = 16
    q, kv, qo, kvi, pages, last = make_batch(rng, kv_lens, qlens, heads, ps, "bf16", kv_dt)
    want_out, want_lse = libmla.decode_reference(q, kv, qo, kvi, pages, last, qlen, page_size=ps)
    parts_o, parts_l = [], []
    for r in range(W):
        lkv, lkvi, lpages, llast, g = _shard(q, kv, qo, kvi, pages, last, ps, W, r)
        o, l = libmla.decode_reference(q, lkv, qo, lkvi, lpages, llast, qlen, page_size=1,
                                       g_kv_indptr=g, cp_world_size=W, cp_rank=r)
        parts_o.append(o)
        parts_l.append(l)
    out, lse = libmla.merge_attn_states_host(np.stack(parts_o), np.stack(parts_l))
    np.testing.assert_array_equal(np.isneginf(lse), np.isneginf(want_lse))
    np.testing.assert_allclose(out, want_out, rtol=1e-5, atol=1e-6)
    fin = np.isfinite(want_lse)
    np.testing.assert_allclose(lse[fin], want_lse[fin], rtol=1e-6, atol=1e-6)
    assert not np.isnan(out).any()


def test_merge_exact_values_with_empty_and_poisoned_partials():
    # Row 0: partial A empty (lse -inf, O NaN), partial B lse 2, O = x: merged is B exactly.
    # Row 1: both empty: O 0, lse -inf, no NaN.
    x = np.linspace(-1, 1, 512, dtype=np.float32)
    po = np.zeros((2, 2, 1, 512), np.float32)
    pl = np.zeros((2, 2, 1), np.float32)
    po[0, 0, 0] = np.nan
    pl[0, 0, 0] = -np.inf
    po[1, 0, 0] = x
    pl[1, 0, 0] = 2.0
    po[:, 1, 0] = np.nan
    pl[:, 1, 0] = -np.inf
    out, lse = libmla.merge_attn_states_host(po, pl)
    np.testing.assert_array_equal(out[0, 0], x)
    assert lse[0, 0] == 2.0
    np.testing.assert_array_equal(out[1, 0], np.zeros(512, np.float32))
    assert np.isneginf(lse[1, 0])
    # Two equal partials: lse + ln 2, same O.
    po2 = np.stack([po[1], po[1]])
    pl2 = np.stack([pl[1], pl[1]])
    out2, lse2 = libmla.merge_attn_states_host(po2[:, :1], pl2[:, :1])
    np.testing.assert_allclose(out2[0, 0], x, rtol=1e-6)
    assert abs(lse2[0, 0] - (2.0 + np.log(2.0))) < 1e-6


def test_merge_bad_arguments_raise_before_the_call():
    po = np.zeros((2, 3, 4, 512), np.float32)
    pl = np.zeros((2, 3, 4), np.float32)
    with pytest.raises(TypeError):
        libmla.merge_attn_states_host(po.astype(np.float64), pl)
    with pytest.raises(TypeError):
        libmla.merge_attn_states_host(po, pl.astype(np.float64))
    with pytest.raises(ValueError):
        libmla.merge_attn_states_host(po, pl[:, :2])
    with pytest.raises(ValueError):
        libmla.merge_attn_states_host(po[..., :256], pl)
    with pytest.raises(ValueError):
        libmla.merge_attn_states_host(po, pl, out_dtype="fp16")


def test_cprr_reference_checks_its_arguments():
    rng = np.random.default_rng(5)
    q, kv, qo, kvi, pages, last = make_batch(rng, [5], [1], 16, 1)
    g = np.array([0, 10], np.int32)
    with pytest.raises(ValueError):
        libmla.decode_reference(q, kv, qo, kvi, pages, last, 1, cp_world_size=2, cp_rank=0)
    # 10 global tokens on 2 ranks: rank 0 holds 5 (ok), rank 1 holds 5 (ok), rank 2 of 2: error
    with pytest.raises(libmla.MlaInvalidArgument):
        libmla.decode_reference(q, kv, qo, kvi, pages, last, 1, g_kv_indptr=g, cp_world_size=2,
                                cp_rank=2)
    # rank 0 of 3 holds ceil(10/3) = 4 tokens, not 5
    with pytest.raises(libmla.MlaInvalidArgument):
        libmla.decode_reference(q, kv, qo, kvi, pages, last, 1, g_kv_indptr=g, cp_world_size=3,
                                cp_rank=0)


@pytest.mark.parametrize("W,qlen,heads,ps", [(2, 4, 16, 1), (3, 2, 128, 16), (4, 1, 16, 64)])
def test_cprr_plans_executed_per_rank_equal_the_rank_reference(W, qlen, heads, ps):
    """Each rank's plan (is_cp_round_robin=True; 8 clusters so long requests split) run by
    execute_plan_reference equals the rank's direct reference, and the merge equals the whole."""
    rng = np.random.default_rng(W * 7 + qlen)
    kv_lens = [0, 1, W, 2 * W + 1, 300]
    q, kv, qo, kvi, pages, last = make_batch(rng, kv_lens, [qlen] * len(kv_lens), heads, ps)
    want_out, want_lse = libmla.decode_reference(q, kv, qo, kvi, pages, last, qlen, page_size=ps)
    parts_o, parts_l = [], []
    for r in range(W):
        lkv, lkvi, lpages, llast, g = _shard(q, kv, qo, kvi, pages, last, ps, W, r)
        libmla.check_cp_shard(g, lkvi, llast, 1, W, r)
        plan = libmla.plan_metadata(qo, lkvi, llast, heads, arch="sm_90a", num_clusters=8,
                                    max_seqlen_qo=qlen, is_cp_round_robin=True)
        o, l = libmla.execute_plan_reference(q, lkv, qo, lkvi, lpages, llast, qlen, plan,
                                             g_kv_indptr=g, cp_world_size=W, cp_rank=r)
        ro, rl = libmla.decode_reference(q, lkv, qo, lkvi, lpages, llast, qlen, g_kv_indptr=g,
                                         cp_world_size=W, cp_rank=r)
        np.testing.assert_array_equal(np.isneginf(l), np.isneginf(rl))
        np.testing.assert_allclose(o, ro, rtol=1e-5, atol=1e-6)
        parts_o.append(o)
        parts_l.append(l)
        if qlen > 1 and W == 2:  # a plan without is_cp_round_robin is refused for a shard
            bad = libmla.plan_metadata(qo, lkvi, llast, heads, arch="sm_90a", max_seqlen_qo=qlen)
            with pytest.raises(libmla.MlaInvalidArgument, match="is_cp_round_robin"):
                libmla.execute_plan_reference(q, lkv, qo, lkvi, lpages, llast, qlen, bad,
                                              g_kv_indptr=g, cp_world_size=W, cp_rank=r)
    out, lse = libmla.merge_attn_states_host(np.stack(parts_o), np.stack(parts_l))
    np.testing.assert_array_equal(np.isneginf(lse), np.isneginf(want_lse))
    np.testing.assert_allclose(out, want_out, rtol=1e-5, atol=1e-6)
