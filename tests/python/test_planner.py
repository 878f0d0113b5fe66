"""Host planner through the Python package: buffer sizes, exact small plans, the plan-layout
invariants over varied batches, execute_plan_reference == decode_reference, update_metadata."""
import numpy as np
import pytest

import libmla
from helpers import check_plan, make_batch


def test_metadata_info_sm90():
    info = libmla.metadata_info(4, 128, arch="sm_90a")
    assert isinstance(info, libmla.MetadataInfo)
    assert (info.num_clusters, info.kernel_num_heads, info.qk_batch_ratio) == (132, 64, 2)
    assert info.work_metadata_len == 2 and info.work_indptr_len == 133
    # Partial workspace (plan-layout.md): align_up(rows*Hk*512*4, 256) + rows*Hk*4.
    rows, hk = info.partial_rows, info.kernel_num_heads
    body = rows * hk * 512 * 4
    assert info.workspace_bytes == (body + 255) // 256 * 256 + rows * hk * 4
    small = libmla.metadata_info(4, 16, arch="sm_90a", num_clusters=8)
    assert (small.num_clusters, small.work_indptr_len, small.qk_batch_ratio) == (8, 9, 1)


def test_single_cluster_plan_is_exact():
    plan = libmla.plan_metadata([0, 1], [0, 100], [1], 16, arch="sm_90a", num_clusters=1)
    assert plan.work_indptr.tolist() == [0, 1]
    assert plan.works().tolist() == [[0, -1, 0, 1, 0, 100, 0, 0]]
    assert plan.summary.num_split_tiles == 0 and plan.summary.num_tiles == 1
    assert plan.summary.active_clusters == 1
    assert plan.work_metadata.dtype == np.uint64
    for name in ("work_indptr", "work_info_set", "reduce_indptr", "reduce_final_map",
                 "reduce_partial_map"):
        assert getattr(plan, name).dtype == np.int32
    assert plan.work_info_set.shape == (plan.info.work_info_set_rows, 8)
    assert plan.reduce_final_map.shape == (plan.info.reduce_final_map_rows, 2)


def test_empty_request_gets_one_unsplit_work():
    plan = libmla.plan_metadata([0, 1, 2], [0, 0, 40], [1, 1], 16, arch="sm_90a", num_clusters=2)
    works = check_plan(plan, [0, 1, 2], [0, 0, 40], [1, 1], 1)
    empty = [w.tolist() for w in works if w[0] == 0]
    assert empty == [[0, -1, 0, 1, 0, 0, 0, 0]]


CASES = [
    # kv_lens, qlens, heads, page_size, L, clusters, dtypes
    ([700, 3, 1500, 64], [1, 1, 1, 1], 16, 1, 1, 16, ("bf16", "bf16")),
    ([300, 2000], [1, 1], 128, 1, 1, 132, ("fp8", "fp8")),
    ([130, 257, 1], [2, 2, 2], 16, 64, 2, 8, ("bf16", "fp8")),
    ([1000, 999], [4, 3], 32, 16, 4, 20, ("bf16", "bf16")),
    ([5000], [1], 96, 1, 1, 132, ("bf16", "bf16")),
    ([0, 77, 0, 1024], [1, 1, 1, 1], 64, 8, 1, 6, ("fp8", "fp8")),
]


@pytest.mark.parametrize("kv_lens,qlens,heads,ps,L,clusters,dt", CASES)
def test_plan_invariants_and_reference_agreement(kv_lens, qlens, heads, ps, L, clusters, dt):
    rng = np.random.default_rng(len(kv_lens) * 1000 + heads)
    q, kv, qo, kvi, pages, last = make_batch(rng, kv_lens, qlens, heads, ps, *dt)
    plan = libmla.plan_metadata(qo, kvi, last, heads, arch="sm_90a", num_clusters=clusters,
                                page_size=ps, max_seqlen_qo=L, dtype_q=dt[0], dtype_kv=dt[1])
    assert plan.info == libmla.metadata_info(len(kv_lens), heads, arch="sm_90a",
                                             num_clusters=clusters, page_size=ps,
                                             max_seqlen_qo=L, dtype_q=dt[0], dtype_kv=dt[1])
    check_plan(plan, qo, kvi, last, ps)
    assert plan.qo_indptr.tolist() == qo.tolist() and plan.kv_indptr.tolist() == kvi.tolist()
    ref_out, ref_lse = libmla.decode_reference(q, kv, qo, kvi, pages, last, L, page_size=ps)
    out, lse = libmla.execute_plan_reference(q, kv, qo, kvi, pages, last, L, plan, page_size=ps)
    np.testing.assert_allclose(out, ref_out, rtol=2e-5, atol=2e-6)
    np.testing.assert_allclose(lse, ref_lse, rtol=2e-6, atol=2e-6)


def test_long_request_splits_over_clusters():
    plan = libmla.plan_metadata([0, 1], [0, 4096], [1], 16, arch="sm_90a", num_clusters=8)
    check_plan(plan, [0, 1], [0, 4096], [1], 1)
    assert plan.summary.num_split_tiles == 1 and plan.summary.num_works >= 2
    assert plan.summary.num_partials == plan.summary.num_works


@pytest.mark.parametrize("fast,intra", [(False, False), (False, True)])
def test_other_planners_execute_like_the_reference(fast, intra):
    rng = np.random.default_rng(7)
    kv_lens, qlens = [500, 33, 1200], [1, 1, 1]
    q, kv, qo, kvi, pages, last = make_batch(rng, kv_lens, qlens, 16)
    plan = libmla.plan_metadata(qo, kvi, last, 16, arch="sm_90a", num_clusters=12,
                                fast_mode=fast, intra_batch_mode=intra)
    ref = libmla.decode_reference(q, kv, qo, kvi, pages, last, 1)
    got = libmla.execute_plan_reference(q, kv, qo, kvi, pages, last, 1, plan)
    np.testing.assert_allclose(got[0], ref[0], rtol=2e-5, atol=2e-6)
    np.testing.assert_allclose(got[1], ref[1], rtol=2e-6, atol=2e-6)


def test_update_metadata_advances_one_step():
    rng = np.random.default_rng(11)
    kv_lens = [300, 50, 901]
    qo = np.arange(4, dtype=np.int32)
    kvi = np.concatenate([[0], np.cumsum(kv_lens)]).astype(np.int32)
    last = np.ones(3, np.int32)
    plan = libmla.plan_metadata(qo, kvi, last, 16, arch="sm_90a", num_clusters=10)
    before = plan.works().copy()
    # One rejected token per request: delta 0, the work items stay as they are (aiter's test).
    same = libmla.update_metadata(plan, kvi, num_reject_tokens=[1, 1, 1])
    assert same is plan and np.array_equal(plan.works(), before)
    # One step: every request grows by one token; the updated plan computes the new problem.
    new_lens = [n + 1 for n in kv_lens]
    q, kv, _, new_kvi, pages, new_last = make_batch(rng, new_lens, [1, 1, 1], 16)
    libmla.update_metadata(plan, new_kvi)
    assert plan.kv_indptr.tolist() == new_kvi.tolist() and plan.generation == 2
    check_plan(plan, qo, new_kvi, new_last, 1)
    ref = libmla.decode_reference(q, kv, qo, new_kvi, pages, new_last, 1)
    got = libmla.execute_plan_reference(q, kv, qo, new_kvi, pages, new_last, 1, plan)
    np.testing.assert_allclose(got[0], ref[0], rtol=2e-5, atol=2e-6)
    np.testing.assert_allclose(got[1], ref[1], rtol=2e-6, atol=2e-6)


def test_update_metadata_errors():
    plan = libmla.plan_metadata([0, 1], [0, 10], [1], 16, arch="sm_90a", page_size=1)
    with pytest.raises(libmla.MlaInvalidArgument, match="new KV length"):
        libmla.update_metadata(plan, [0, 20])
    with pytest.raises(ValueError, match="2 entries"):
        libmla.update_metadata(plan, [0, 10, 11])
    paged = libmla.plan_metadata([0, 1], [0, 2], [5], 16, arch="sm_90a", page_size=16)
    with pytest.raises(libmla.MlaInvalidArgument, match="page_size 1"):
        libmla.update_metadata(paged, [0, 2])
    with pytest.raises(TypeError):
        libmla.update_metadata("not a plan", [0, 1])


def test_head_group_major_plan_executes_to_the_reference():
    # 128 heads fold into two 64-head groups; head_group_major lays group 0 of every request out
    # before group 1. Same works (as a set of (pseudo-request, qo, kv) ranges when nothing
    # splits), different cluster assignment, the same results.
    rng = np.random.default_rng(7)
    kv_lens, qlens, heads, ps = [300, 2000, 64], [1, 1, 1], 128, 64
    q, kv, qo, kvi, pages, last = make_batch(rng, kv_lens, qlens, heads, ps, "bf16", "bf16")
    gm = libmla.plan_metadata(qo, kvi, last, heads, arch="sm_90a", num_clusters=132,
                              page_size=ps, head_group_major=True)
    aiter = libmla.plan_metadata(qo, kvi, last, heads, arch="sm_90a", num_clusters=132,
                                 page_size=ps)
    assert gm.info == aiter.info
    assert (gm.summary.num_sections, aiter.summary.num_sections) == (2, 1)  # 66 clusters per group
    # active_clusters: 1 + the last cluster with works; every work lies before it
    for pl in (gm, aiter):
        a, wi = pl.summary.active_clusters, pl.work_indptr
        assert 1 <= a <= pl.info.num_clusters and wi[a] == wi[-1] and wi[a - 1] < wi[a]
    assert gm.summary.active_clusters > 66  # group 1's section starts at cluster 66
    first = {}
    for c in range(gm.info.num_clusters):
        for w in gm.works()[gm.work_indptr[c]:gm.work_indptr[c + 1]]:
            first.setdefault(int(w[0]), c)
    # pseudo-request b * 2 + g: every group 0 starts before any group 1
    assert max(first[b * 2] for b in range(3)) <= min(first[b * 2 + 1] for b in range(3))
    ref_out, ref_lse = libmla.decode_reference(q, kv, qo, kvi, pages, last, 1, page_size=ps)
    out, lse = libmla.execute_plan_reference(q, kv, qo, kvi, pages, last, 1, gm, page_size=ps)
    np.testing.assert_allclose(out, ref_out, rtol=2e-5, atol=2e-6)
    np.testing.assert_allclose(lse, ref_lse, rtol=2e-6, atol=2e-6)


def test_head_group_major_needs_sm90_v1_2():
    with pytest.raises(libmla.MlaInvalidArgument, match="head_group_major"):
        libmla.plan_metadata([0, 1], [0, 4], [1], 128, arch="gfx942", page_size=64,
                             head_group_major=True)


def test_work_overhead_tokens_keeps_marginal_splits_whole():
    # 128 requests x 16384 tokens, page 64 on 132 SMs. 16 heads (16-row bf16 tiles): aiter's rule
    # (no overhead, no split tail) splits every request in two; sm_90a's default (a 512-token
    # split tail) and 1024 tokens of overhead keep them whole on 128 SMs.
    # 128 heads at 4096 tokens (64-row tiles): the default (1024 tokens) keeps the 256 tiles whole,
    # aiter's rule splits 126 (H200: 334 -> 308 us, docs/performance.md session 18).
    B = 128
    qo = np.arange(B + 1, dtype=np.int32)
    last = np.full(B, 64, dtype=np.int32)
    kvi = np.arange(B + 1, dtype=np.int32) * 256  # 256 pages of 64 tokens each
    default = libmla.plan_metadata(qo, kvi, last, 16, arch="sm_90a", page_size=64)
    aiter = libmla.plan_metadata(qo, kvi, last, 16, arch="sm_90a", page_size=64,
                                 work_overhead_tokens=0, split_tail_tokens=0)
    whole = libmla.plan_metadata(qo, kvi, last, 16, arch="sm_90a", page_size=64,
                                 work_overhead_tokens=1024, split_tail_tokens=0)
    assert (aiter.num_works, aiter.summary.num_split_tiles) == (259, 128)
    assert (default.num_works, default.summary.num_split_tiles) == (128, 0)
    assert (whole.num_works, whole.summary.num_split_tiles) == (128, 0)
    # the overhead and the tail in effect, in blocks (page 64: 1 block = 64 tokens)
    assert (default.summary.work_overhead_blocks, aiter.summary.work_overhead_blocks,
            whole.summary.work_overhead_blocks) == (1, 1, 16)
    assert (default.summary.split_tail_blocks, aiter.summary.split_tail_blocks,
            whole.summary.split_tail_blocks) == (8, 0, 0)
    with pytest.raises(libmla.MlaInvalidArgument, match="split_tail_tokens"):
        libmla.plan_metadata(qo, kvi, last, 16, arch="sm_90a", page_size=64, split_tail_tokens=-2)
    # 16-row tiles with fp8 KV (the register-A kernels; fp8 or bf16 Q) take 1024 tokens by default
    # (H200, varied lengths 155.8 -> 140.2 us, docs/performance.md session 19); 32-row fp8 tiles
    # (16 heads x MTP 2) keep aiter's rule
    for dq in ("fp8", "bf16"):
        f8 = libmla.plan_metadata(qo, kvi, last, 16, arch="sm_90a", page_size=64, dtype_q=dq,
                                  dtype_kv="fp8")
        assert f8.works().tolist() == whole.works().tolist()
        assert f8.summary.work_overhead_blocks == 16
    qo2 = np.arange(B + 1, dtype=np.int32) * 2
    f8q2 = libmla.plan_metadata(qo2, kvi, last, 16, arch="sm_90a", page_size=64, max_seqlen_qo=2,
                                dtype_q="fp8", dtype_kv="fp8")
    f8q2_aiter = libmla.plan_metadata(qo2, kvi, last, 16, arch="sm_90a", page_size=64,
                                      max_seqlen_qo=2, dtype_q="fp8", dtype_kv="fp8",
                                      work_overhead_tokens=0, split_tail_tokens=0)
    assert f8q2.works().tolist() == f8q2_aiter.works().tolist()
    assert f8q2.summary.work_overhead_blocks == 1
    kvi4 = np.arange(B + 1, dtype=np.int32) * 64  # 4096 tokens
    h128 = libmla.plan_metadata(qo, kvi4, last, 128, arch="sm_90a", page_size=64,
                                head_group_major=True)
    h128_aiter = libmla.plan_metadata(qo, kvi4, last, 128, arch="sm_90a", page_size=64,
                                      head_group_major=True, work_overhead_tokens=0,
                                      split_tail_tokens=0)
    assert (h128.num_works, h128.summary.num_split_tiles) == (256, 0)
    assert (h128_aiter.num_works, h128_aiter.summary.num_split_tiles) == (382, 126)
    # gfx942 keeps aiter's rule by default
    g = libmla.plan_metadata(qo, kvi, last, 16, arch="gfx942", page_size=64)
    g0 = libmla.plan_metadata(qo, kvi, last, 16, arch="gfx942", page_size=64,
                              work_overhead_tokens=0)
    assert g.works().tolist() == g0.works().tolist()
    with pytest.raises(libmla.MlaInvalidArgument, match="work_overhead_tokens"):
        libmla.plan_metadata(qo, kvi, last, 16, arch="sm_90a", page_size=64,
                             work_overhead_tokens=-2)
    # executed on the CPU, the plans give the reference's numbers (8 requests of 2048 tokens, 16
    # heads. On 9 clusters aiter's rule splits all 8 for one more cluster; 1024 tokens of overhead
    # and the default 512-token tail split none. On 13 clusters aiter's rule makes 19 works, the
    # tail 16, 8 tiles split either way)
    rng = np.random.default_rng(3)
    kv_lens, qlens, ps = [2048] * 8, [1] * 8, 64
    q, kv, qo3, kvi3, pages, last3 = make_batch(rng, kv_lens, qlens, 16, ps, "bf16", "bf16")
    ref_out, ref_lse = libmla.decode_reference(q, kv, qo3, kvi3, pages, last3, 1, page_size=ps)
    for C, ov, tail, want in ((9, 1024, 0, (8, 0)), (9, 0, 0, (16, 8)), (9, -1, -1, (8, 0)),
                              (13, 0, 0, (19, 8)), (13, -1, -1, (16, 8))):
        plan = libmla.plan_metadata(qo3, kvi3, last3, 16, arch="sm_90a", num_clusters=C,
                                    page_size=ps, work_overhead_tokens=ov, split_tail_tokens=tail)
        assert (plan.num_works, plan.summary.num_split_tiles) == want
        out, lse = libmla.execute_plan_reference(q, kv, qo3, kvi3, pages, last3, 1, plan,
                                                 page_size=ps)
        np.testing.assert_allclose(out, ref_out, rtol=2e-5, atol=2e-6)
        np.testing.assert_allclose(lse, ref_lse, rtol=2e-6, atol=2e-6)
