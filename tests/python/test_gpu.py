"""GPU decode through the Python package (marked `gpu`: needs torch and an sm_90a device) against
a torch float64 reference. Tolerances are the project's (docs/kernels.md, FlashMLA's rule): an
element passes if its abs error < 8e-4 or rel error < 1.6% (out), abs 1e-6 or rel 1.2e-4 (LSE);
-inf must match exactly; shapes the table routes to a kernel that sums S = Q K^T on the fp8 tensor
cores (fp8 Q and KV: the register-A kernel of 16-row tiles, `mla_decode_ra_fp8_*`, and the qm kernel
of 64-row tiles, `mla_decode_qm_fp8_fp8_*`): LSE abs 2e-4 (those MMAs add with fewer than fp32's
mantissa bits; docs/kernels.md). For out, an element also passes within 2 bf16 ulps (2^-7) of
sum_i p_i |v_i|: the kernels round the probabilities to bf16 before P.V, which dominates the
error when only a few keys are visible and the output cancels (observed 5e-3 with 2 keys).
Run: LIBMLA_PATH=build/src/libmla.so.0 python3 -m pytest tests/python -m gpu"""
import math

import numpy as np
import pytest

import libmla

pytestmark = pytest.mark.gpu
QK, V = 576, 512


def _torch():
    import torch
    return torch


def make_problem(kv_lens, qlens, H, ps, q_dt, kv_dt, seed=0, block_table=False):
    torch = _torch()
    g = torch.Generator().manual_seed(seed)
    B = len(kv_lens)
    qo = np.concatenate([[0], np.cumsum(qlens)]).astype(np.int32)
    npages = [(n + ps - 1) // ps for n in kv_lens]
    kvi = np.concatenate([[0], np.cumsum(npages)]).astype(np.int32)
    last = np.array([n - (p - 1) * ps if p else 1 for n, p in zip(kv_lens, npages)], np.int32)
    num_pages = int(kvi[-1]) + 5
    pages = torch.randperm(num_pages, generator=g)[:int(kvi[-1])].to(torch.int32)
    tdt = {"bf16": torch.bfloat16, "fp8": torch.float8_e4m3fn}
    q = (torch.randn((int(qo[-1]), H, QK), generator=g) * 0.5).to(tdt[q_dt]).cuda()
    kv = (torch.randn((num_pages, ps, 1, QK), generator=g) * 0.5).to(tdt[kv_dt]).cuda()
    p = dict(q=q, kv=kv, qo=qo, kvi=kvi, last=last, pages=pages.numpy(), ps=ps, H=H, B=B,
             L=max(qlens), num_pages=num_pages)
    if block_table:
        width = max(npages) + 2
        bt = torch.zeros((B, width), dtype=torch.int32)
        for b in range(B):
            bt[b, :npages[b]] = pages[kvi[b]:kvi[b + 1]]
        p["block_table"] = bt.cuda()
    return p


def torch_reference(p, sm_scale, causal, q_scale=1.0, kv_scale=1.0):
    """float64 MLA decode: softmax((q . k) * sm_scale * q_scale * kv_scale) @ (V * kv_scale),
    causal MTP j <= N - L + t; a row without keys: out 0, lse -inf."""
    torch = _torch()
    q = p["q"].double()
    kv = p["kv"].double().reshape(p["kv"].shape[0], p["ps"], QK)
    qo, kvi, last, ps = p["qo"], p["kvi"], p["last"], p["ps"]
    pages = torch.from_numpy(p["pages"]).long().cuda()
    out = torch.zeros((q.shape[0], q.shape[1], V), dtype=torch.float64, device="cuda")
    lse = torch.full((q.shape[0], q.shape[1]), -math.inf, dtype=torch.float64, device="cuda")
    wabs = torch.zeros((q.shape[0], q.shape[1], V), dtype=torch.float64, device="cuda")
    for b in range(len(qo) - 1):
        L, P = int(qo[b + 1] - qo[b]), int(kvi[b + 1] - kvi[b])
        N = (P - 1) * ps + int(last[b]) if P else 0
        if L == 0 or N == 0:
            continue
        keys = kv[pages[kvi[b]:kvi[b + 1]]].reshape(-1, QK)[:N]
        s = torch.einsum("lhd,nd->lhn", q[qo[b]:qo[b + 1]], keys) * (sm_scale * q_scale * kv_scale)
        if causal:
            t = torch.arange(L, device="cuda")[:, None, None]
            j = torch.arange(N, device="cuda")[None, None, :]
            s = s.masked_fill(j > N - L + t, -math.inf)
        m = s.amax(dim=2, keepdim=True)
        seen = torch.isfinite(m)  # rows before every key (causal MTP): out 0, lse -inf
        e = torch.exp(s - torch.where(seen, m, torch.zeros_like(m)))
        l_ = torch.where(seen, e.sum(dim=2, keepdim=True), torch.ones_like(m))
        out[qo[b]:qo[b + 1]] = torch.einsum("lhn,nd->lhd", e, keys[:, :V]) / l_ * kv_scale
        lse[qo[b]:qo[b + 1]] = torch.where(seen, m + torch.log(l_), m)[..., 0]
        wabs[qo[b]:qo[b + 1]] = torch.einsum("lhn,nd->lhd", e, keys[:, :V].abs()) / l_ * kv_scale
    return out, lse, wabs


def assert_close(got, want, abs_tol, rel_tol, what, p_bound=None):
    got = got.double()
    inf_g, inf_w = torch_isneginf(got), torch_isneginf(want)
    assert bool((inf_g == inf_w).all()), f"{what}: -inf rows differ"
    d = (got - want).abs()
    ok = (d < abs_tol) | (d < rel_tol * want.abs()) | inf_w
    if p_bound is not None:
        ok |= d <= 2.0 ** -7 * p_bound
    bad = int((~ok).sum())
    assert bad == 0, (f"{what}: {bad} of {ok.numel()} elements off, max abs err "
                      f"{float(d[~inf_w].max()):.3g}")


def lse_abs_tol(H, L, q_dt, kv_dt, causal, ps):
    """The LSE abs tolerance of a shape: 2e-4 where the sm_90a table routes it to a kernel that
    sums S = Q K^T on the fp8 tensor cores (fp8 Q and KV: the register-A kernel of 16-row tiles,
    `mla_decode_ra_fp8_*`, and the qm kernel of 64-row tiles, `mla_decode_qm_fp8_fp8_*`), whose
    adds keep fewer than fp32's mantissa bits; else 1e-6 (docs/kernels.md)."""
    kernel = libmla.shape_support(H, L, q_dt, kv_dt, arch="sm_90a", causal=causal, page_size=ps).asm_kernel or ""
    return 2e-4 if kernel.startswith(("mla_decode_ra_fp8_", "mla_decode_qm_fp8_fp8_")) else 1e-6


def torch_isneginf(t):
    return _torch().isneginf(t)


CASES = [
    # q, kv, H, qlens, page size, kv lens, causal, q_scale, kv_scale, clusters, block_table
    ("bf16", "bf16", 16, [1, 1, 1, 1], 1, [37, 1, 700, 2000], True, None, None, None, False),
    ("bf16", "fp8", 128, [1, 1, 1, 1], 64, [4000, 65, 0, 1], True, None, 0.7, None, False),
    ("fp8", "fp8", 16, [2, 2], 16, [129, 300], True, 0.5, 1.5, None, False),
    ("fp8", "fp8", 16, [1, 1, 1, 0, 1], 64, [1, 4097, 77, 5, 20000], True, 0.5, 1.5, None, False),
    ("bf16", "bf16", 64, [4, 1, 3], 16, [1000, 5, 333], False, None, None, 20, True),
    ("fp8", "fp8", 96, [3, 3], 1, [100, 5000], True, 1.25, 0.8, None, False),
    ("bf16", "bf16", 8, [1], 64, [20000], True, None, None, 132, True),
    ("bf16", "fp8", 32, [2, 0, 2], 16, [50, 60, 0], True, None, 1.0, 16, False),
    ("bf16", "bf16", 32, [1, 1, 1], 64, [3000, 17, 0], True, None, None, None, False),
    ("bf16", "fp8", 16, [1, 1, 0, 1], 16, [900, 1, 50, 4097], False, None, 0.9, 24, True),
    ("bf16", "fp8", 16, [2, 2], 1, [600, 33], True, None, 1.3, None, False),
    # 1024 clusters: one request splits into 625 fragments, so the slim reducer runs five batches
    # of fragments (more than 128 per batch; never reached at the H200's 132 clusters)
    ("bf16", "bf16", 16, [1], 64, [40000], True, None, None, 1024, False),
]


@pytest.mark.parametrize("q_dt,kv_dt,H,qlens,ps,kv_lens,causal,q_scale,kv_scale,clusters,bt",
                         CASES)
def test_decode_matches_torch_float64(q_dt, kv_dt, H, qlens, ps, kv_lens, causal, q_scale,
                                      kv_scale, clusters, bt):
    torch = _torch()
    p = make_problem(kv_lens, qlens, H, ps, q_dt, kv_dt, seed=H + ps, block_table=bt)
    plan = libmla.plan_metadata(p["qo"], p["kvi"], p["last"], H, arch="sm_90a",
                                num_clusters=clusters, page_size=ps, max_seqlen_qo=p["L"],
                                causal=causal, dtype_q=q_dt, dtype_kv=kv_dt)
    dev = {k: torch.from_numpy(p[k]).cuda() for k in ("qo", "kvi", "last", "pages")}
    sm_scale = 0.1352 if H == 128 else None
    flag = torch.zeros(1, dtype=torch.int32, device="cuda")
    out, lse = libmla.decode(
        p["q"], p["kv"], dev["qo"], dev["kvi"], None if bt else dev["pages"], dev["last"],
        p["L"], plan, sm_scale=sm_scale, q_scale=q_scale, kv_scale=kv_scale,
        block_table=p.get("block_table"), return_lse=True, error_flag=flag)
    torch.cuda.synchronize()
    assert out.dtype == torch.bfloat16 and out.shape == (p["q"].shape[0], H, V)
    assert lse.dtype == torch.float32 and lse.shape == (p["q"].shape[0], H)
    assert int(flag.item()) == 0
    want_out, want_lse, bound = torch_reference(
        p, libmla.DEFAULT_SM_SCALE if sm_scale is None else sm_scale, causal,
        1.0 if q_scale is None else q_scale, 1.0 if kv_scale is None else kv_scale)
    assert_close(out, want_out, 8e-4, 2.01 / 128, "out", bound)
    assert_close(lse, want_lse, lse_abs_tol(H, p["L"], q_dt, kv_dt, causal, ps), 8.01 / 65536, "lse")


# The fused reduction (tile_counters): the 16- and 32-row bf16 kernels' *_fused builds reduce the
# split tiles themselves. Few clusters, so that many tiles split (and the whole-tile geometry,
# launch_fused 1, applies: tiles x M > 2 x clusters).
FUSED_CASES = [
    # q, kv, H, qlens, page size, kv lens, causal, clusters, block_table
    ("bf16", "bf16", 16, [1] * 12, 64, [700, 1, 2000, 33, 4097, 900, 64, 1500, 0, 3000, 250, 1200], True, 16,
     False),
    ("bf16", "bf16", 16, [2, 2, 2, 1, 2, 2], 16, [1000, 5, 3333, 40, 0, 2100], True, 12, True),
    ("bf16", "bf16", 32, [1, 1, 1, 1, 1], 8, [600, 7000, 90, 2500, 1], False, 10, False),
]


@pytest.mark.parametrize("q_dt,kv_dt,H,qlens,ps,kv_lens,causal,clusters,bt", FUSED_CASES)
def test_fused_reduction_matches_torch_float64(q_dt, kv_dt, H, qlens, ps, kv_lens, causal, clusters, bt):
    torch = _torch()
    p = make_problem(kv_lens, qlens, H, ps, q_dt, kv_dt, seed=7 * H + ps, block_table=bt)
    plan = libmla.plan_metadata(p["qo"], p["kvi"], p["last"], H, arch="sm_90a",
                                num_clusters=clusters, page_size=ps, max_seqlen_qo=p["L"],
                                causal=causal, dtype_q=q_dt, dtype_kv=kv_dt)
    assert plan.summary.num_split_tiles > 0
    dev = {k: torch.from_numpy(p[k]).cuda() for k in ("qo", "kvi", "last", "pages")}
    flag = torch.zeros(1, dtype=torch.int32, device="cuda")
    counters = torch.zeros(plan.info.reduce_indptr_len - 1, dtype=torch.int32, device="cuda")
    want_out, want_lse, bound = torch_reference(p, libmla.DEFAULT_SM_SCALE, causal, 1.0, 1.0)
    for _ in range(2):  # the second call needs the counters the first left at 0
        out, lse = libmla.decode(
            p["q"], p["kv"], dev["qo"], dev["kvi"], None if bt else dev["pages"], dev["last"],
            p["L"], plan, block_table=p.get("block_table"), return_lse=True, error_flag=flag,
            tile_counters=counters)
        torch.cuda.synchronize()
        assert int(flag.item()) == 0
        assert int(counters.abs().sum().item()) == 0
        assert_close(out, want_out, 8e-4, 2.01 / 128, "out", bound)
        assert_close(lse, want_lse, 1e-6, 8.01 / 65536, "lse")


# active_clusters: a host plan leaving trailing clusters empty (5 requests on 12 clusters, and
# 40 heads of MTP 2 in 64-row tiles) decoded on only the clusters that hold works gives the same
# bytes as on every cluster; one cluster fewer than that leaves works out, which the kernel flags
# (error value 4) and the host plan's check refuses (ValueError).
@pytest.mark.parametrize("H,qlens,kv_lens", [(16, [1] * 5, [300, 33, 500, 0, 450]),
                                             (64, [2, 2, 2], [700, 300, 64])])
def test_active_clusters_decode_equals_every_cluster(H, qlens, kv_lens):
    torch = _torch()
    p = make_problem(kv_lens, qlens, H, 64, "bf16", "bf16", seed=H)
    plan = libmla.plan_metadata(p["qo"], p["kvi"], p["last"], H, arch="sm_90a", num_clusters=12,
                                page_size=64, max_seqlen_qo=p["L"], causal=True)
    act = plan.summary.active_clusters
    assert 2 <= act < 12
    wi = plan.work_indptr
    assert wi[act] == wi[12] and wi[act - 1] < wi[act]
    dev = {k: torch.from_numpy(p[k]).cuda() for k in ("qo", "kvi", "last", "pages")}
    runs = {}
    # the host plan for the two valid counts; its device copy for the short one, which the host
    # plan's check would refuse before the kernel sees it
    for a, pl in ((0, plan), (act, plan), (act - 1, libmla.upload_plan(plan))):
        flag = torch.zeros(1, dtype=torch.int32, device="cuda")
        out, lse = libmla.decode(p["q"], p["kv"], dev["qo"], dev["kvi"], dev["pages"], dev["last"], p["L"],
                                 pl, return_lse=True, error_flag=flag, active_clusters=a)
        torch.cuda.synchronize()
        runs[a] = (out.clone(), lse.clone(), int(flag.item()))
    assert runs[0][2] == 0 and runs[act][2] == 0
    assert torch.equal(runs[act][0], runs[0][0]) and torch.equal(runs[act][1], runs[0][1])
    assert runs[act - 1][2] & 4
    with pytest.raises(ValueError, match="active_clusters"):
        libmla.decode(p["q"], p["kv"], dev["qo"], dev["kvi"], dev["pages"], dev["last"], p["L"], plan,
                      active_clusters=act - 1)


# no_split_tiles: a host plan that split no tile (4 requests of 450-500 tokens on 8 clusters, and
# 64 heads x MTP 2 on 6 clusters) decoded without the reducer gives the same bytes as with it; on a
# plan that split (one request of 3000 tokens on 8 clusters) the host plan's check refuses it
# (ValueError), and its device copy runs with the split works rejected (error value 4).
@pytest.mark.parametrize("H,qlens,kv_lens,clusters", [(16, [1] * 4, [500, 500, 480, 450], 8),
                                                      (64, [2, 2], [700, 300], 6)])
def test_no_split_tiles_decode_equals_reducer(H, qlens, kv_lens, clusters):
    torch = _torch()
    p = make_problem(kv_lens, qlens, H, 64, "bf16", "bf16", seed=H + 7)
    plan = libmla.plan_metadata(p["qo"], p["kvi"], p["last"], H, arch="sm_90a", num_clusters=clusters,
                                page_size=64, max_seqlen_qo=p["L"], causal=True)
    assert plan.summary.num_split_tiles == 0 and plan.info.partial_rows > 0
    dev = {k: torch.from_numpy(p[k]).cuda() for k in ("qo", "kvi", "last", "pages")}
    runs = {}
    for ns in (False, True):
        flag = torch.zeros(1, dtype=torch.int32, device="cuda")
        out, lse = libmla.decode(p["q"], p["kv"], dev["qo"], dev["kvi"], dev["pages"], dev["last"], p["L"],
                                 plan, return_lse=True, error_flag=flag, no_split_tiles=ns)
        torch.cuda.synchronize()
        runs[ns] = (out.clone(), lse.clone(), int(flag.item()))
    assert runs[False][2] == 0 and runs[True][2] == 0
    assert torch.equal(runs[True][0], runs[False][0]) and torch.equal(runs[True][1], runs[False][1])

    s = make_problem([3000], [1], 16, 64, "bf16", "bf16", seed=5)
    splan = libmla.plan_metadata(s["qo"], s["kvi"], s["last"], 16, arch="sm_90a", num_clusters=8,
                                 page_size=64, max_seqlen_qo=1, causal=True)
    assert splan.summary.num_split_tiles == 1
    sdev = {k: torch.from_numpy(s[k]).cuda() for k in ("qo", "kvi", "last", "pages")}
    sargs = [s["q"], s["kv"], sdev["qo"], sdev["kvi"], sdev["pages"], sdev["last"], 1]
    with pytest.raises(ValueError, match="no_split_tiles"):
        libmla.decode(*sargs, splan, no_split_tiles=True)
    flag = torch.zeros(1, dtype=torch.int32, device="cuda")
    libmla.decode(*sargs, libmla.upload_plan(splan), error_flag=flag, no_split_tiles=True)
    torch.cuda.synchronize()
    assert int(flag.item()) & 4


FP32_CASES = [
    # q, kv, H, qlens, page size, kv lens, q_scale, kv_scale, clusters (None: all SMs)
    ("bf16", "bf16", 16, [1, 1, 1], 64, [37, 700, 9000], None, None, None),   # splits: reducer
    ("bf16", "fp8", 128, [1, 1], 16, [4000, 65], None, 0.7, None),            # 128 heads, folded
    ("fp8", "fp8", 16, [4, 2], 1, [300, 2100], 0.5, 1.5, 20),                 # qm (M = 64), MTP
    ("bf16", "bf16", 32, [2, 0, 2], 16, [50, 60, 0], None, None, 16),         # empty rows
]


@pytest.mark.parametrize("q_dt,kv_dt,H,qlens,ps,kv_lens,q_scale,kv_scale,clusters", FP32_CASES)
def test_decode_fp32_out_matches_torch_float64(q_dt, kv_dt, H, qlens, ps, kv_lens, q_scale,
                                               kv_scale, clusters):
    """out_dtype fp32 (a float32 out, or out_dtype='fp32'): the unrounded output, against the
    float64 reference at the same tolerances as bf16 out, and rounding it to bf16 gives the bf16
    call's output to within half a bf16 ulp (the same fp32 values, rounded once)."""
    torch = _torch()
    p = make_problem(kv_lens, qlens, H, ps, q_dt, kv_dt, seed=H + ps + 1)
    plan = libmla.plan_metadata(p["qo"], p["kvi"], p["last"], H, arch="sm_90a",
                                num_clusters=clusters, page_size=ps, max_seqlen_qo=p["L"],
                                causal=True, dtype_q=q_dt, dtype_kv=kv_dt)
    dev = {k: torch.from_numpy(p[k]).cuda() for k in ("qo", "kvi", "last", "pages")}
    args = [p["q"], p["kv"], dev["qo"], dev["kvi"], dev["pages"], dev["last"], p["L"], plan]
    kw = dict(q_scale=q_scale, kv_scale=kv_scale)
    flag = torch.zeros(1, dtype=torch.int32, device="cuda")
    out32, lse32 = libmla.decode(*args, out_dtype="fp32", return_lse=True, error_flag=flag, **kw)
    given = torch.full_like(out32, math.nan)  # a float32 out given by the caller
    out_given = libmla.decode(*args, out=given, **kw)
    out16, lse16 = libmla.decode(*args, return_lse=True, **kw)
    torch.cuda.synchronize()
    assert int(flag.item()) == 0
    assert out32.dtype == torch.float32 and out32.shape == (p["q"].shape[0], H, V)
    assert out_given is given
    assert torch.equal(given, out32)  # deterministic, every element written (no NaN left)
    assert out16.dtype == torch.bfloat16
    assert torch.equal(lse32, lse16)
    want_out, want_lse, bound = torch_reference(p, libmla.DEFAULT_SM_SCALE, True,
                                                1.0 if q_scale is None else q_scale,
                                                1.0 if kv_scale is None else kv_scale)
    assert_close(out32, want_out, 8e-4, 2.01 / 128, "fp32 out", bound)
    assert_close(lse32, want_lse, 1e-6, 8.01 / 65536, "lse")
    # the bf16 call rounds these very values once: |fp32 - bf16| <= half an ulp (2^-8 relative)
    d = (out32 - out16.float()).abs()
    assert bool((d <= out16.float().abs() * 2.0 ** -8).all()), float(d.max())
    if bool((want_out != 0).any()):  # not bf16 values widened: the kernels wrote fp32
        assert bool((out32 != out32.to(torch.bfloat16).float()).any())
    if clusters is None and max(kv_lens) >= 9000:
        assert plan.summary.num_split_tiles > 0  # the reducer wrote part of the fp32 out


@pytest.mark.parametrize("group_major", [False, True])
def test_device_planner_matches_host_planner(group_major):
    torch = _torch()
    p = make_problem([3000, 17, 0, 640], [1, 1, 1, 1], 128, 1, "bf16", "bf16")
    host = libmla.plan_metadata(p["qo"], p["kvi"], p["last"], 128, arch="sm_90a",
                                head_group_major=group_major)
    dp = libmla.plan_metadata_device(torch.from_numpy(p["qo"]).cuda(),
                                     torch.from_numpy(p["kvi"]).cuda(),
                                     torch.from_numpy(p["last"]).cuda(), 128, max_seqlen_qo=1,
                                     head_group_major=group_major)
    got = dp.to_host()
    for name in ("work_indptr", "reduce_indptr", "reduce_final_map"):
        np.testing.assert_array_equal(got[name], getattr(host, name), err_msg=name)
    # reduce_partial_map past reduce_indptr's last entry is not part of the plan (plan-layout.md):
    # neither planner writes it (the device buffer here comes uninitialised from torch.empty)
    n_part = int(host.reduce_indptr[-1])
    np.testing.assert_array_equal(got["reduce_partial_map"][:n_part], host.reduce_partial_map[:n_part],
                                  err_msg="reduce_partial_map")
    nw = host.num_works
    np.testing.assert_array_equal(got["work_info_set"][:nw], host.works())
    assert got["work_metadata"].tolist() == [dp.work_indptr.data_ptr(), dp.work_info_set.data_ptr()]
    # The device plan drives decode too.
    dev = {k: torch.from_numpy(p[k]).cuda() for k in ("qo", "kvi", "last", "pages")}
    a = libmla.decode(p["q"], p["kv"], dev["qo"], dev["kvi"], dev["pages"], dev["last"], 1, dp)
    b = libmla.decode(p["q"], p["kv"], dev["qo"], dev["kvi"], dev["pages"], dev["last"], 1, host)
    torch.cuda.synchronize()
    assert torch.equal(a, b)


def test_raw_pointers_and_explicit_stream():
    torch = _torch()
    p = make_problem([500, 90], [1, 1], 16, 16, "bf16", "bf16", seed=3)
    plan = libmla.plan_metadata(p["qo"], p["kvi"], p["last"], 16, arch="sm_90a", page_size=16)
    dev = {k: torch.from_numpy(p[k]).cuda() for k in ("qo", "kvi", "last", "pages")}
    out = torch.full((p["q"].shape[0], 16, V), float("nan"), dtype=torch.bfloat16, device="cuda")
    lse = torch.empty((p["q"].shape[0], 16), dtype=torch.float32, device="cuda")
    ws = torch.empty(max(plan.info.workspace_bytes, 16), dtype=torch.uint8, device="cuda")
    s = torch.cuda.Stream()
    torch.cuda.synchronize()
    r = libmla.decode(p["q"].data_ptr(), p["kv"].data_ptr(), dev["qo"].data_ptr(),
                      dev["kvi"].data_ptr(), dev["pages"].data_ptr(), dev["last"].data_ptr(), 1,
                      plan, out=out.data_ptr(), lse=lse.data_ptr(), num_pages=p["num_pages"],
                      workspace=ws.data_ptr(), stream=s.cuda_stream)
    assert r == (out.data_ptr(), lse.data_ptr())
    s.synchronize()
    want_out, want_lse, bound = torch_reference(p, libmla.DEFAULT_SM_SCALE, True)
    assert_close(out, want_out, 8e-4, 2.01 / 128, "out", bound)
    assert_close(lse, want_lse, 1e-6, 8.01 / 65536, "lse")


def test_update_metadata_then_decode():
    torch = _torch()
    p = make_problem([300, 41], [1, 1], 16, 1, "bf16", "bf16", seed=5)
    plan = libmla.plan_metadata(p["qo"], p["kvi"], p["last"], 16, arch="sm_90a", num_clusters=8)
    p2 = make_problem([301, 42], [1, 1], 16, 1, "bf16", "bf16", seed=6)
    libmla.update_metadata(plan, p2["kvi"])
    dev = {k: torch.from_numpy(p2[k]).cuda() for k in ("qo", "kvi", "last", "pages")}
    out = libmla.decode(p2["q"], p2["kv"], dev["qo"], dev["kvi"], dev["pages"], dev["last"], 1,
                        plan)
    torch.cuda.synchronize()
    want_out, _, bound = torch_reference(p2, libmla.DEFAULT_SM_SCALE, True)
    assert_close(out, want_out, 8e-4, 2.01 / 128, "out", bound)


def test_gpu_input_errors_before_launch():
    torch = _torch()
    p = make_problem([30], [1], 16, 1, "bf16", "bf16")
    plan = libmla.plan_metadata(p["qo"], p["kvi"], p["last"], 16, arch="sm_90a")
    dev = {k: torch.from_numpy(p[k]).cuda() for k in ("qo", "kvi", "last", "pages")}
    args = [p["q"], p["kv"], dev["qo"], dev["kvi"], dev["pages"], dev["last"], 1, plan]
    bad_q = p["q"].to(torch.float16)
    with pytest.raises(TypeError, match="q has dtype fp16"):
        libmla.decode(bad_q, *args[1:])
    with pytest.raises(TypeError, match="CUDA tensor"):
        libmla.decode(p["q"].cpu(), *args[1:])
    with pytest.raises(TypeError, match="kv_indptr has dtype int64"):
        libmla.decode(*args[:3], dev["kvi"].long(), *args[4:])
    with pytest.raises(ValueError, match="out must have shape"):
        libmla.decode(*args, out=torch.empty((1, 16, 576), dtype=torch.bfloat16, device="cuda"))
    fp8_plan = libmla.plan_metadata(p["qo"], p["kvi"], p["last"], 16, arch="sm_90a",
                                    dtype_kv="fp8")
    with pytest.raises(TypeError, match="kv_buffer has dtype bf16"):
        libmla.decode(*args[:7], fp8_plan)


def test_smoke_and_context():
    torch = _torch()
    ctx = libmla.context(0)
    assert ctx.arch == "sm_90a" and ctx.num_cus > 0
    out = torch.zeros(1000, dtype=torch.int32, device="cuda")
    libmla.smoke_launch(out, 3, 7)
    torch.cuda.synchronize()
    assert torch.equal(out.cpu(), torch.arange(1000, dtype=torch.int32) * 3 + 7)


@pytest.mark.parametrize("W,partial_dtype", [(2, "fp32"), (3, "bf16"), (8, "fp32")])
def test_merge_attn_states_matches_host_merge(W, partial_dtype):
    """The merge cubin through the package vs merge_attn_states_host, with empty (-inf) and
    NaN-poisoned partials: out within 1 bf16 ulp of the host merge, lse to fp32 rounding, no NaN."""
    import ml_dtypes
    torch = _torch()
    g = torch.Generator().manual_seed(W)
    T_, H = 37, 16
    po = torch.randn(W, T_, H, V, generator=g, dtype=torch.float32)
    pl = torch.randn(W, T_, H, generator=g, dtype=torch.float32) * 3
    pl[0, ::5] = -math.inf   # rank 0 saw no key for every 5th row
    po[0, ::5] = math.nan    # and its output there must never be read
    pl[:, 7] = -math.inf     # row 7: no rank saw a key
    if partial_dtype == "bf16":
        po = po.to(torch.bfloat16)
    host_po = (po.float().numpy() if partial_dtype == "fp32"
               else po.float().numpy().astype(ml_dtypes.bfloat16))
    want_out, want_lse = libmla.merge_attn_states_host(host_po, pl.numpy(), out_dtype="fp32")
    out, lse = libmla.merge_attn_states(po.cuda(), pl.cuda())
    torch.cuda.synchronize()
    got = out.float().cpu().numpy()
    assert not np.isnan(got).any()
    np.testing.assert_allclose(got, want_out, rtol=2 ** -7, atol=1e-6)
    np.testing.assert_array_equal(np.isneginf(lse.cpu().numpy()), np.isneginf(want_lse))
    fin = np.isfinite(want_lse)
    np.testing.assert_allclose(lse.cpu().numpy()[fin], want_lse[fin], rtol=1e-5, atol=1e-6)
    assert (got[7] == 0).all()


def test_merge_attn_states_reads_a_packed_all_gather_buffer():
    """Views of one [W, out | lse] fp32 byte buffer (what an all-gather of each rank's packed
    partials receives) merge to the same bytes as the contiguous arrays: the rank strides."""
    torch = _torch()
    g = torch.Generator().manual_seed(9)
    W, T_, H = 3, 5, 16
    po = torch.randn(W, T_, H, V, generator=g, dtype=torch.float32)
    pl = torch.randn(W, T_, H, generator=g, dtype=torch.float32) * 3
    pl[1, 2] = -math.inf
    ob, lb = T_ * H * V, T_ * H
    recv = torch.full((W, ob + lb + 4), math.nan, dtype=torch.float32)
    recv[:, :ob] = po.reshape(W, -1)
    recv[:, ob:ob + lb] = pl.reshape(W, -1)
    recv = recv.cuda()
    out_v, lse_v = recv[:, :ob].view(W, T_, H, V), recv[:, ob:ob + lb].view(W, T_, H)
    assert not out_v.is_contiguous()
    got, got_lse = libmla.merge_attn_states(out_v, lse_v)
    want, want_lse = libmla.merge_attn_states(po.cuda(), pl.cuda())
    torch.cuda.synchronize()
    assert torch.equal(got, want)
    assert torch.equal(got_lse, want_lse)


def test_merge_attn_states_input_errors():
    torch = _torch()
    po = torch.zeros(2, 3, 4, V, device="cuda")
    pl = torch.zeros(2, 3, 4, device="cuda")
    with pytest.raises(TypeError):
        libmla.merge_attn_states(po.double(), pl)
    with pytest.raises(ValueError):
        libmla.merge_attn_states(po, pl[:, :2])
    with pytest.raises(TypeError):
        libmla.merge_attn_states(po.cpu(), pl.cpu())


def _cp_shard(p, W, r, ps_local, seed):
    """Rank r's round-robin shard of make_problem's whole KV (global position j of request b on
    rank j % W, local token j // W) in its own paged cache (pages of ps_local, shuffled, NaN in
    every unused slot), its page table (torch int32 on the GPU) and g_kv_indptr."""
    torch = _torch()
    kv, ps = p["kv"], p["ps"]
    rows = kv.reshape(-1, QK)
    qo, kvi, last, pages = p["qo"], p["kvi"], p["last"], p["pages"]
    B = len(qo) - 1
    G = [int((kvi[b + 1] - kvi[b] - 1) * ps + last[b]) if kvi[b + 1] > kvi[b] else 0
         for b in range(B)]
    n = [len(range(r, G[b], W)) for b in range(B)]
    npg = [(x + ps_local - 1) // ps_local for x in n]
    lkvi = np.concatenate([[0], np.cumsum(npg)]).astype(np.int32)
    llast = np.array([x - (q - 1) * ps_local if q else 1 for x, q in zip(n, npg)], np.int32)
    num_pages = int(lkvi[-1]) + 3
    lpages = np.random.default_rng(seed).permutation(num_pages)[:int(lkvi[-1])].astype(np.int32)
    src, dst = [], []
    for b in range(B):
        j = np.arange(r, G[b], W)                          # global positions on this rank
        src.append(pages[kvi[b] + j // ps].astype(np.int64) * ps + j % ps)
        loc = np.arange(n[b])
        dst.append(lpages[lkvi[b] + loc // ps_local].astype(np.int64) * ps_local + loc % ps_local)
    local = torch.empty((num_pages, ps_local, 1, QK), dtype=kv.dtype, device="cuda")
    if kv.dtype == torch.bfloat16:
        local.fill_(math.nan)
    else:
        local.view(torch.uint8).fill_(0x7F)  # e4m3fn NaN
    src = torch.from_numpy(np.concatenate(src + [np.zeros(0, np.int64)])).cuda()
    dst = torch.from_numpy(np.concatenate(dst + [np.zeros(0, np.int64)])).cuda()
    # byte views: index_put is not implemented for float8 tensors in every torch version
    nb = QK * kv.element_size()
    local.view(torch.uint8).view(-1, nb)[dst] = rows.view(torch.uint8).view(-1, nb)[src]
    g = np.concatenate([[0], np.cumsum(G)]).astype(np.int32)
    dev = {k: torch.from_numpy(v).cuda() for k, v in
           (("kvi", lkvi), ("last", llast), ("pages", lpages), ("g", g))}
    return dict(kv=local, kvi=lkvi, last=llast, dev=dev, g=g)


@pytest.mark.parametrize("partial", ["bf16", "fp32"])
@pytest.mark.parametrize("W,qlens,H,ps_local,q_dt,kv_dt,kv_lens", [
    (2, [1], 16, 64, "bf16", "bf16", [4097]),
    (2, [4, 4, 4, 4], 16, 1, "bf16", "bf16", [1, 2, 3, 9]),
    (2, [3, 3], 128, 16, "fp8", "fp8", [2, 3000]),
    (3, [2, 2, 2], 16, 64, "bf16", "fp8", [0, 5, 20000]),
    (4, [1, 4], 64, 16, "bf16", "bf16", [3, 700]),
])
def test_cprr_ranks_on_one_gpu_merge_to_the_whole_decode(W, qlens, H, ps_local, q_dt, kv_dt,
                                                          kv_lens, partial):
    """Round-robin context parallel without NCCL: W shards decoded one after the other on one
    GPU (cprr kernels, plans with is_cp_round_robin), merged with merge_attn_states, against
    the whole-KV decode and a float64 torch reference (examples/context_parallel.py does the
    same over NCCL on W GPUs, with fp32 partials). partial: the ranks' out dtype."""
    torch = _torch()
    p = make_problem(kv_lens, qlens, H, 64, q_dt, kv_dt, seed=W * 10 + H)
    L = p["L"]
    qs = 0.5 if q_dt == "fp8" else None
    ks = 1.25 if kv_dt == "fp8" else None
    whole_plan = libmla.plan_metadata(p["qo"], p["kvi"], p["last"], H, arch="sm_90a",
                                      page_size=64, max_seqlen_qo=L, dtype_q=q_dt, dtype_kv=kv_dt)
    qo = torch.from_numpy(p["qo"]).cuda()
    dev = {k: torch.from_numpy(p[k]).cuda() for k in ("kvi", "last", "pages")}
    whole_out, whole_lse = libmla.decode(p["q"], p["kv"], qo, dev["kvi"], dev["pages"],
                                         dev["last"], L, whole_plan, q_scale=qs, kv_scale=ks,
                                         return_lse=True)
    outs, lses = [], []
    flag = torch.zeros(1, dtype=torch.int32, device="cuda")
    for r in range(W):
        s = _cp_shard(p, W, r, ps_local, seed=r)
        plan = libmla.plan_metadata(p["qo"], s["kvi"], s["last"], H, arch="sm_90a",
                                    page_size=ps_local, max_seqlen_qo=L, dtype_q=q_dt,
                                    dtype_kv=kv_dt, is_cp_round_robin=True, num_clusters=16)
        o, l_ = libmla.decode(p["q"], s["kv"], qo, s["dev"]["kvi"], s["dev"]["pages"],
                              s["dev"]["last"], L, plan, q_scale=qs, kv_scale=ks,
                              return_lse=True, error_flag=flag, g_kv_indptr=s["dev"]["g"],
                              cp_world_size=W, cp_rank=r, validate=True, out_dtype=partial)
        assert o.dtype == (torch.float32 if partial == "fp32" else torch.bfloat16)
        outs.append(o)
        lses.append(l_)
    out, lse = libmla.merge_attn_states(torch.stack(outs), torch.stack(lses))
    torch.cuda.synchronize()
    assert int(flag.item()) == 0
    assert not torch.isnan(out.float()).any()
    want_out, want_lse, bound = torch_reference(p, libmla.DEFAULT_SM_SCALE, True,
                                                qs or 1.0, ks or 1.0)
    # merged vs float64: P rounding (<= 2 x 2^-9), the ranks' bf16 outputs and the merge's
    # (2^-9 each): <= 2^-7 sum p|v|
    assert_close(out, want_out, 8e-4, 2.01 / 128, "merged out", bound)
    lse_tol = lse_abs_tol(H, L, q_dt, kv_dt, True, ps_local)
    assert_close(lse, want_lse, lse_tol, 8.01 / 65536, "merged lse")
    # merged vs the whole-KV decode (both rounded, examples/context_parallel.py's allowance):
    # <= 2^-6 sum p|v|; LSE: each side's own error
    assert_close(out, whole_out.double(), 8e-4, 2.01 / 128, "merged vs whole out", 2 * bound)
    assert_close(lse, whole_lse.double(), 2 * lse_tol, 8.01 / 65536, "merged vs whole lse")
