"""libmla's CPU reference (decode_reference) against the NumPy float64 reference of helpers.py:
dtypes (bf16, fp16, fp8 with scales), page sizes, causal and non-causal MTP, empty requests,
strided q, the default scale 1/sqrt(576)."""
import math

import numpy as np
import pytest

import libmla
from helpers import make_batch, np_reference


def _check(got, want):
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(np.isneginf(got[1]), np.isneginf(want[1]))
    np.testing.assert_allclose(got[1], want[1], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("q_dt,kv_dt,ps,causal,qlens,kv_lens,scales", [
    ("bf16", "bf16", 1, True, [1, 1, 1], [37, 1, 200], (1.0, 1.0)),
    ("bf16", "fp8", 16, True, [2, 1, 2], [40, 16, 3], (1.0, 0.5)),
    ("fp8", "fp8", 64, True, [3, 3], [130, 2], (0.25, 2.0)),
    ("fp16", "bf16", 8, False, [4, 2], [9, 60], (1.0, 1.0)),
    ("bf16", "bf16", 4, True, [2, 0, 1], [0, 7, 0], (1.0, 1.0)),
    ("fp8_fnuz", "fp8_fnuz", 2, True, [1, 2], [5, 6], (0.5, 0.5)),
])
def test_reference_matches_numpy_float64(q_dt, kv_dt, ps, causal, qlens, kv_lens, scales):
    rng = np.random.default_rng(sum(kv_lens) + ps)
    H = 8
    q, kv, qo, kvi, pages, last = make_batch(rng, kv_lens, qlens, H, ps, q_dt, kv_dt)
    L = max(qlens)
    qs, ks = scales
    out, lse = libmla.decode_reference(q, kv, qo, kvi, pages, last, L, page_size=ps,
                                       causal=causal, q_scale=qs, kv_scale=ks)
    assert out.dtype == np.float32 and out.shape == (q.shape[0], H, 512)
    assert lse.dtype == np.float32 and lse.shape == (q.shape[0], H)
    want = np_reference(q, kv, qo, kvi, pages, last, ps, causal=causal, q_scale=qs, kv_scale=ks)
    _check((out, lse), want)


def test_rows_that_see_no_key():
    rng = np.random.default_rng(3)
    q, kv, qo, kvi, pages, last = make_batch(rng, [0, 5], [1, 1], 4)
    out, lse = libmla.decode_reference(q, kv, qo, kvi, pages, last, 1)
    assert np.all(out[0] == 0) and np.all(np.isneginf(lse[0]))
    assert np.all(np.isfinite(lse[1]))


def test_default_scale_and_explicit_scale():
    rng = np.random.default_rng(5)
    q, kv, qo, kvi, pages, last = make_batch(rng, [50], [1], 16)
    a = libmla.decode_reference(q, kv, qo, kvi, pages, last, 1)
    b = libmla.decode_reference(q, kv, qo, kvi, pages, last, 1, sm_scale=1 / math.sqrt(576))
    np.testing.assert_array_equal(a[0], b[0])
    assert libmla.DEFAULT_SM_SCALE == 1 / math.sqrt(576)
    c = libmla.decode_reference(q, kv, qo, kvi, pages, last, 1, sm_scale=0.1352)
    _check(c, np_reference(q, kv, qo, kvi, pages, last, 1, sm_scale=0.1352))


def test_strided_q_and_kv_layouts():
    rng = np.random.default_rng(9)
    q, kv, qo, kvi, pages, last = make_batch(rng, [33, 70], [2, 2], 8, page_size=4)
    want = np_reference(q, kv, qo, kvi, pages, last, 4)
    # q as a view of every other head of a wider array (head stride 2*576).
    wide = np.zeros((q.shape[0], 16, 576), q.dtype)
    wide[:, ::2] = q
    got = libmla.decode_reference(wide[:, ::2], kv, qo, kvi, pages, last, 2, page_size=4)
    _check(got, want)
    # kv as [num_pages, page_size, 576] and as rows [num_pages * page_size, 576].
    _check(libmla.decode_reference(q, kv[:, :, 0], qo, kvi, pages, last, 2, page_size=4), want)
    _check(libmla.decode_reference(q, kv.reshape(-1, 576), qo, kvi, pages, last, 2,
                                   page_size=4), want)
    # Index arrays as lists and int64.
    _check(libmla.decode_reference(q, kv, qo.tolist(), kvi.astype(np.int64), list(pages),
                                   last.tolist(), 2, page_size=4), want)


def test_execute_plan_reference_matches_numpy():
    rng = np.random.default_rng(21)
    q, kv, qo, kvi, pages, last = make_batch(rng, [900, 20, 1300], [1, 1, 1], 128)
    plan = libmla.plan_metadata(qo, kvi, last, 128, arch="sm_90a", num_clusters=24)
    assert plan.summary.num_split_tiles > 0
    got = libmla.execute_plan_reference(q, kv, qo, kvi, pages, last, 1, plan)
    _check(got, np_reference(q, kv, qo, kvi, pages, last, 1))
