"""Shared test helpers: random batches, a NumPy float64 MLA decode reference, plan invariants."""
import math

import numpy as np

QK, V = 576, 512


def make_batch(rng, kv_lens, qlens, num_heads, page_size=1, q_dtype="bf16", kv_dtype="bf16",
               extra_pages=3):
    """A random paged batch: q [total_q, H, 576], kv [num_pages, page_size, 1, 576] with pages
    shuffled, CSR page table. Values are rounded to the dtypes first."""
    import libmla
    B = len(kv_lens)
    qo = np.concatenate([[0], np.cumsum(qlens)]).astype(np.int32)
    pages_per = [(n + page_size - 1) // page_size for n in kv_lens]
    kvi = np.concatenate([[0], np.cumsum(pages_per)]).astype(np.int32)
    last = np.array([n - (p - 1) * page_size if p else 1 for n, p in zip(kv_lens, pages_per)],
                    np.int32)
    num_pages = int(kvi[-1]) + extra_pages
    page_ids = rng.permutation(num_pages)[:int(kvi[-1])].astype(np.int32)
    q = (rng.standard_normal((int(qo[-1]), num_heads, QK)) * 0.5).astype(
        libmla.numpy_dtype(q_dtype))
    kv = (rng.standard_normal((num_pages, page_size, 1, QK)) * 0.5).astype(
        libmla.numpy_dtype(kv_dtype))
    assert B == len(qlens)
    return q, kv, qo, kvi, page_ids, last


def np_reference(q, kv, qo, kvi, pages, last, page_size, sm_scale=None, causal=True, q_scale=1.0,
                 kv_scale=1.0):
    """MLA decode in float64 NumPy: scores (q . k) * sm_scale * q_scale * kv_scale over the
    576 columns, softmax, P @ (V * kv_scale) with V = the first 512 columns. Causal MTP: token t
    of L sees keys j <= N - L + t. No visible key: out 0, lse -inf."""
    sm_scale = 1.0 / math.sqrt(QK) if sm_scale is None else sm_scale
    qf = q.astype(np.float64)
    kvf = kv.astype(np.float64).reshape(kv.shape[0], page_size, QK)
    total_q, H = q.shape[0], q.shape[1]
    out = np.zeros((total_q, H, V))
    lse = np.full((total_q, H), -np.inf)
    for b in range(len(qo) - 1):
        L = int(qo[b + 1] - qo[b])
        P = int(kvi[b + 1] - kvi[b])
        N = (P - 1) * page_size + int(last[b]) if P else 0
        if L == 0 or N == 0:
            continue
        keys = kvf[pages[kvi[b]:kvi[b + 1]]].reshape(-1, QK)[:N]
        s = np.einsum("lhd,nd->lhn", qf[qo[b]:qo[b + 1]], keys) * (sm_scale * q_scale * kv_scale)
        t = np.arange(L)[:, None, None]
        j = np.arange(N)[None, None, :]
        visible = (j <= N - L + t) if causal else np.ones_like(j, dtype=bool)
        visible = np.broadcast_to(visible, s.shape)
        s = np.where(visible, s, -np.inf)
        m = s.max(axis=2, keepdims=True)
        seen = np.isfinite(m)
        e = np.where(visible, np.exp(s - np.where(seen, m, 0)), 0.0)
        l = e.sum(axis=2, keepdims=True)
        o = np.einsum("lhn,nd->lhd", e, keys[:, :V]) / np.where(seen, l, 1) * kv_scale
        out[qo[b]:qo[b + 1]] = np.where(seen, o, 0)
        lse[qo[b]:qo[b + 1]] = np.where(seen[..., 0], m[..., 0] + np.log(np.where(seen, l, 1))[..., 0],
                                        -np.inf)
    return out, lse


def check_plan(plan, qo, kvi, last, page_size, hk_tile=None):
    """Invariants of docs/plan-layout.md on a host plan (folded row space, r = head fold)."""
    info = plan.info
    r = info.qk_batch_ratio
    B = len(qo) - 1
    wi = plan.work_indptr
    assert wi.shape == (info.num_clusters + 1,) and wi[0] == 0
    assert np.all(np.diff(wi) >= 0)
    nw = int(wi[-1])
    assert nw == plan.summary.num_works <= info.work_info_set_rows
    assert plan.work_metadata[0] == plan.work_indptr.ctypes.data
    assert plan.work_metadata[1] == plan.work_info_set.ctypes.data
    works = plan.work_info_set[:nw]
    # dw 7: in sm_90a v1_2 plans the tile whose reduce_final_map row is the work's qo range (the
    # decode kernels' fused reduction counts fragments per tile); aiter's pad 0 otherwise
    if plan.arch == "sm_90a" and plan.params.fast_mode:
        fm = plan.reduce_final_map
        for w in works:
            t = int(w[7])
            assert 0 <= t < fm.shape[0] and fm[t, 0] == w[2] and fm[t, 1] == w[3]
    else:
        assert np.all(works[:, 7] == 0)
    # Token coverage: each (pseudo-request, tile) covered exactly once by its works.
    cover = {}
    split_tiles = {}
    for w in works:
        p, ploc, q0, q1, k0, k1, koff = (int(x) for x in w[:7])
        b = p // r
        assert 0 <= b < B
        L = int(qo[b + 1] - qo[b])
        P = int(kvi[b + 1] - kvi[b])
        N = (P - 1) * page_size + int(last[b]) if P else 0
        base = int(qo[b]) * r + (p % r) * L
        assert base <= q0 < q1 <= base + L
        assert kvi[b] <= k0 <= k1 <= kvi[b + 1]
        t0 = (k0 - int(kvi[b])) * page_size
        t1 = N - koff
        assert 0 <= t0 <= t1 <= N or (N == 0 and t0 == t1 == 0)
        cover.setdefault((p, q0, q1), []).append((t0, t1))
        if ploc >= 0:
            split_tiles.setdefault((q0, q1), []).append((t0, ploc))
    for (p, q0, q1), ranges in cover.items():
        b = p // r
        P = int(kvi[b + 1] - kvi[b])
        N = (P - 1) * page_size + int(last[b]) if P else 0
        ranges.sort()
        assert ranges[0][0] == 0 and ranges[-1][1] == N, (p, ranges)
        for (a0, a1), (c0, c1) in zip(ranges, ranges[1:]):
            assert a1 == c0, (p, ranges)
    # Every query row of every pseudo-request is in exactly one tile.
    rows = sorted((q0, q1) for (_, q0, q1) in cover)
    total_rows = int(qo[-1]) * r
    covered = np.zeros(total_rows, np.int32)
    for q0, q1 in rows:
        covered[q0:q1] += 1
    assert np.all(covered == 1)
    # Split tiles: reduce maps list their fragments in KV order.
    ntiles = plan.summary.num_tiles
    ri = plan.reduce_indptr
    assert ri[0] == 0 and np.all(np.diff(ri[:ntiles + 1]) >= 0)
    found = 0
    for t in range(ntiles):
        if ri[t + 1] == ri[t]:
            continue
        q0, q1 = (int(x) for x in plan.reduce_final_map[t])
        frags = sorted(split_tiles[(q0, q1)])
        assert [f[1] for f in frags] == plan.reduce_partial_map[ri[t]:ri[t + 1]].tolist()
        found += 1
    assert found == plan.summary.num_split_tiles == len(split_tiles)
    return works
