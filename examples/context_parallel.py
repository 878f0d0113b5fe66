#!/usr/bin/env python3
"""Context-parallel MLA decode across GPUs with libmla and NCCL (issue 9, docs/context-parallel.md).

One process per GPU (torch.multiprocessing, torch.distributed over NCCL). Every rank builds the
same random decode problem from a seed (B requests with their global KV lengths, q, the whole
paged KV cache), keeps its round-robin shard (global KV position p of a request lives on rank
p % W, local token j of rank r is global position j * W + r) in its own paged cache, plans it
with libmla (is_cp_round_robin=True) and decodes it with libmla.decode (g_kv_indptr,
cp_world_size, cp_rank; out_dtype fp32: the partial out is not rounded to bf16; lse returned).
The ranks all-gather their fp32 partial (out, lse), merge them on the GPU with
libmla.merge_attn_states (fp32 partials, bf16 out: the one bf16 rounding of the CP path), and
rank 0 compares the result with a single-GPU libmla decode of the whole KV (bf16 out).

Modes:
  --check       the acceptance sweep: b in {1, 8}, s_k in {1, 2, 3, 4097, 131072}, qlen 1..4
                (causal), heads 16 and 128, bf16 and fp8 (fp8 q and kv with scales). One line per
                case, then "N passed, N failed" (exit 1 on any failure).
  --bench       b=1, s_k=1048576, h=16, bf16: W-GPU time (decode with fp32 out + all-gather of
                the fp32 partials + merge, CUDA events, median after warm-up) against the
                1-GPU decode of the whole KV (bf16 out).
  --cpu-check   no GPU, no torch: W ranks simulated in one process with the CPU reference (the
                plans' work items executed as the kernels must, fp32 partials, the host merge),
                the same shard and comparison code; CI runs it
                (tests/python/test_example_context_parallel.py).
  --simulate W  with --check: W shards decoded one after the other on one GPU, no NCCL.

Run from a checkout (the package in bindings/python, the library from the build tree, as
tests/python does; set LIBMLA_PATH to pick a library, LIBMLA_EXAMPLE_INSTALLED=1 to use an
installed package instead):
  python3 examples/context_parallel.py --check                 # W = 2 (or the visible GPUs, <= 2)
  python3 examples/context_parallel.py --bench --world-size 2
  python3 examples/context_parallel.py --check --world-size 1  # smoke test on one GPU
  python3 examples/context_parallel.py --cpu-check

Comparison, merged vs the single-GPU decode (docs/kernels.md, FlashMLA's rule, strict: no
allowance): an element passes when its error is below the abs OR the rel tolerance: out abs 8e-4
or rel 1.6%, lse abs 1e-6 or rel 1.2e-4; -inf must match and nothing may be NaN. The ranks write
fp32 partial outputs (mla_decode_args.out_dtype), so the CP path rounds its out to bf16 once (in
the merge), as the single decode does (--bench --partial-dtype bf16 gathers bf16 partials: half
the bytes, one more rounding). Each line also prints both paths' max error against a float64
reference.
"""
import argparse
import math
import os
import statistics
import sys
import time

# NVLink multicast (NVLS) stays off: set before torch / NCCL are imported or initialised, never
# unset (children inherit them).
_NCCL_ENV = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
             "NVSHMEM_DISABLE_NVLS": "1"}
# The partials are tens of KB, so the all-gather is latency-bound: NCCL's LL all-gather of 33 KB
# between two H200s took 14.7 µs with NCCL's default channel count and 10.8 µs with at least 8
# (docs/performance.md, session 5). A value the caller sets wins (for both dicts).
_NCCL_TUNING = {"NCCL_MIN_NCHANNELS": "8"}
for _k, _v in {**_NCCL_ENV, **_NCCL_TUNING}.items():
    os.environ.setdefault(_k, _v)

_HERE = os.path.dirname(os.path.abspath(__file__))
_BINDINGS = os.path.join(os.path.dirname(_HERE), "bindings", "python")
if not os.environ.get("LIBMLA_EXAMPLE_INSTALLED") and os.path.isdir(os.path.join(_BINDINGS, "libmla")):
    sys.path.insert(0, _BINDINGS)  # the checkout's package first, as tests/python/conftest.py
try:
    import numpy as np
    import libmla
except ImportError as e:  # numpy / ml_dtypes missing, or no libmla.so found
    sys.exit(f"context_parallel.py: cannot import libmla ({e}).\n"
             f"  Build the library (meson setup build && ninja -C build), then run from the checkout "
             f"(PYTHONPATH=bindings/python is implied) or set LIBMLA_PATH=build/src/libmla.so.0; "
             f"the package needs numpy and ml_dtypes (pip install ./bindings/python).")

QK, V = 576, 512
OUT_ABS, OUT_REL = 8e-4, 2.01 / 128      # docs/kernels.md (FlashMLA's rule)
LSE_ABS, LSE_REL = 1e-6, 8.01 / 65536
Q_SCALE, KV_SCALE = 0.5, 1.25             # fp8 dequant factors of the fp8 cases


# ---- the problem and its shards (NumPy index arithmetic, shared by every mode) -----------------

def global_lengths(seed, b, s_k):
    """Global KV lengths of a case: request 0 has exactly s_k tokens, the last one (b > 1) none
    (a request that no rank sees), the others between s_k // 2 and s_k."""
    rng = np.random.default_rng([seed, b, s_k])
    G = [s_k] + [int(rng.integers(max(1, s_k // 2), s_k + 1)) if s_k else 0 for _ in range(b - 1)]
    if b > 1:
        G[-1] = 0
    return np.array(G, np.int64)


class Layout:
    """A paged KV cache holding, for each request b, the tokens at global positions r, r + W,
    r + 2W, ... < G_b (W = 1, r = 0: the whole KV): local token j = global position j * W + r.
    Pages of page_size tokens, shuffled (seeded), `extra` unused pages; CSR page table."""

    def __init__(self, G, W, r, page_size, seed, extra=2):
        self.G, self.W, self.r, self.ps = np.asarray(G, np.int64), W, r, page_size
        self.n = np.where(self.G > r, (self.G - r + W - 1) // W, 0)           # local lengths
        pages = (self.n + page_size - 1) // page_size
        self.kv_indptr = np.concatenate([[0], np.cumsum(pages)]).astype(np.int32)
        self.last = np.where(pages > 0, self.n - (pages - 1) * page_size, 1).astype(np.int32)
        self.num_pages = int(self.kv_indptr[-1]) + extra
        rng = np.random.default_rng([seed, W, r, page_size])
        self.pages = rng.permutation(self.num_pages)[:int(self.kv_indptr[-1])].astype(np.int32)
        self.g_kv_indptr = np.concatenate([[0], np.cumsum(self.G)]).astype(np.int32)

    def rows(self, b):
        """Cache rows (page * page_size + slot) of request b's local tokens, in order."""
        j = np.arange(int(self.n[b]), dtype=np.int64)
        return self.pages[self.kv_indptr[b] + j // self.ps].astype(np.int64) * self.ps + j % self.ps

    def global_positions(self, b):
        return np.arange(self.r, int(self.G[b]), self.W, dtype=np.int64)


def shard_rows(whole, shard):
    """(src, dst): rows of the whole cache and of the shard's cache holding the same tokens."""
    src, dst = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
    whole_rows = [whole.rows(b) for b in range(len(whole.G))]
    for b in range(len(shard.G)):
        src.append(whole_rows[b][shard.global_positions(b)])
        dst.append(shard.rows(b))
    return np.concatenate(src), np.concatenate(dst)


def qo_indptr(b, qlen):
    return (np.arange(b + 1) * qlen).astype(np.int32)


# ---- comparison (NumPy or torch arrays: xp is the module) --------------------------------------

def _torch_mod(xp):
    return xp.__name__ == "torch"


def _f64(xp, a):
    return a.double() if _torch_mod(xp) else np.asarray(a).astype(np.float64)


def _size(xp, a):
    return a.numel() if _torch_mod(xp) else a.size


def _take_rows(xp, rows, idx):
    """rows[idx] for a [n, 576] cache (bytes for torch: float8 indexing is not in every torch)."""
    if not _torch_mod(xp):
        return rows[idx]
    t = xp.from_numpy(idx).to(rows.device)
    return rows.view(xp.uint8)[t].view(rows.dtype)


def compare(xp, out, lse, want_out, want_lse):
    """Checks (out, lse) against (want_out, want_lse) with the strict rule of the module
    docstring. Returns (ok, text)."""
    o, w, l_, wl = _f64(xp, out), _f64(xp, want_out), _f64(xp, lse), _f64(xp, want_lse)
    problems = []
    if bool(xp.isnan(o).any()) or bool(xp.isnan(l_).any()):
        problems.append("NaN in the result")
    inf_mismatch = int((xp.isneginf(l_) != xp.isneginf(wl)).sum())
    if inf_mismatch:
        problems.append(f"{inf_mismatch} -inf lse elements differ")
    d = xp.abs(o - w)
    d = xp.where(xp.isnan(d), xp.full_like(d, math.inf), d)
    rule = (d < OUT_ABS) | (d < OUT_REL * xp.abs(w))
    n_bad = int((~rule).sum())
    if n_bad:
        problems.append(f"{n_bad} of {_size(xp, d)} out elements off")
    fin = ~xp.isneginf(wl)
    dl = xp.where(fin, xp.abs(l_ - xp.where(fin, wl, xp.zeros_like(wl))), xp.zeros_like(wl))
    dl = xp.where(xp.isnan(dl), xp.full_like(dl, math.inf), dl)
    n_bad_l = int((fin & ~((dl < LSE_ABS) | (dl < LSE_REL * xp.abs(wl)))).sum())
    if n_bad_l:
        problems.append(f"{n_bad_l} lse elements off")
    max_d = float(d.max()) if _size(xp, d) else 0.0
    max_dl = float(dl.max()) if _size(xp, dl) else 0.0
    text = f"out max|d| {max_d:.2e} | lse max|d| {max_dl:.2e}"
    if problems:
        text += " | " + "; ".join(problems)
    return not problems, text


def reference_f64(xp, q, rows_kv, layout, qo, scale, q_scale, kv_scale):
    """float64 decode of the whole KV: (out, lse), causal MTP on global positions.
    q [total_q, H, 576], rows_kv [rows, 576] (the whole cache's rows)."""
    torch_ = _torch_mod(xp)
    total_q, H = q.shape[0], q.shape[1]
    kw = dict(device=q.device) if torch_ else {}
    out = xp.zeros((total_q, H, V), dtype=xp.float64, **kw)
    lse = xp.full((total_q, H), -math.inf, dtype=xp.float64, **kw)
    for b in range(len(layout.G)):
        L, N = int(qo[b + 1] - qo[b]), int(layout.G[b])
        if L == 0 or N == 0:
            continue
        keys = _f64(xp, _take_rows(xp, rows_kv, layout.rows(b)))
        qb = _f64(xp, q[int(qo[b]):int(qo[b + 1])])
        s = xp.einsum("lhd,nd->lhn", qb, keys) * (scale * q_scale * kv_scale)
        t = xp.arange(L, **kw).reshape(L, 1, 1)
        j = xp.arange(N, **kw).reshape(1, 1, N)
        visible = j <= N - L + t
        s = xp.where(visible, s, xp.full_like(s, -math.inf))
        m = s.amax(dim=2, keepdim=True) if torch_ else s.max(axis=2, keepdims=True)
        seen = xp.isfinite(m)
        e = xp.where(visible, xp.exp(s - xp.where(seen, m, xp.zeros_like(m))), xp.zeros_like(s))
        l_ = e.sum(2, keepdim=True) if torch_ else e.sum(axis=2, keepdims=True)
        l1 = xp.where(seen, l_, xp.ones_like(l_))
        v = keys[:, :V] * kv_scale
        out[int(qo[b]):int(qo[b + 1])] = xp.einsum("lhn,nd->lhd", e, v) / l1
        lse[int(qo[b]):int(qo[b + 1])] = xp.where(seen, m + xp.log(l1), m)[..., 0]
    return out, lse


# ---- cases --------------------------------------------------------------------------------------

def parse_list(s, conv=int):
    return [conv(x) for x in str(s).split(",") if x != ""]


def check_cases(args):
    return [(b, s_k, L, H, dt) for dt in parse_list(args.dtype, str) for H in parse_list(args.heads)
            for b in parse_list(args.batch) for s_k in parse_list(args.s_k)
            for L in parse_list(args.qlen)]


def case_name(b, s_k, L, H, dt):
    return f"b={b} s_k={s_k} qlen={L} h={H} {dt}"


# ---- CPU self-check (no GPU, no torch) ----------------------------------------------------------

def cpu_check(args):
    """W ranks in one process: each rank's cprr plan executed by the CPU reference (as the
    kernels must run it), its out kept in fp32 (what a rank's decode with out_dtype fp32
    writes), the host merge to bf16, against the whole-KV reference rounded to bf16, with the
    GPU modes' comparison (and both against float64)."""
    import ml_dtypes
    bf16 = ml_dtypes.bfloat16
    W_list = parse_list(args.cpu_world_sizes)
    cases = [(W, *c) for W in W_list for c in check_cases(args)]
    passed = failed = 0
    for W, b, s_k, L, H, dt in cases:
        G = global_lengths(args.seed, b, s_k)
        rng = np.random.default_rng([args.seed, b, s_k, L, H])
        npd = libmla.numpy_dtype(dt)
        qs, ks = (Q_SCALE, KV_SCALE) if dt == "fp8" else (1.0, 1.0)
        qo = qo_indptr(b, L)
        # FlashMLA's test data (randn / 10 clamped to [-1, 1]), for which its tolerances are made
        q = np.clip(rng.standard_normal((b * L, H, QK)) * 0.1, -1, 1).astype(npd)
        whole = Layout(G, 1, 0, args.page_size, args.seed)
        kv = np.clip(rng.standard_normal((whole.num_pages * whole.ps, QK)) * 0.1, -1, 1).astype(npd)
        kv[np.setdiff1d(np.arange(kv.shape[0]),
                        np.concatenate([whole.rows(i) for i in range(b)] + [np.zeros(0, np.int64)]))] = np.nan
        sm = libmla.DEFAULT_SM_SCALE
        parts_o, parts_l = [], []
        for r in range(W):
            sh = Layout(G, W, r, args.page_size, args.seed)
            libmla.check_cp_shard(sh.g_kv_indptr, sh.kv_indptr, sh.last, sh.ps, W, r)
            src, dst = shard_rows(whole, sh)
            lkv = np.full((sh.num_pages * sh.ps, QK), np.nan, np.float32).astype(npd)
            lkv[dst] = kv[src]
            plan = libmla.plan_metadata(qo, sh.kv_indptr, sh.last, H, arch="sm_90a",
                                        num_clusters=8, page_size=sh.ps, max_seqlen_qo=L,
                                        dtype_q=dt, dtype_kv=dt, is_cp_round_robin=W > 1)
            cp = dict(g_kv_indptr=sh.g_kv_indptr, cp_world_size=W, cp_rank=r) if W > 1 else {}
            o, l_ = libmla.execute_plan_reference(
                q, lkv.reshape(sh.num_pages, sh.ps, 1, QK), qo, sh.kv_indptr, sh.pages, sh.last,
                L, plan, page_size=sh.ps, sm_scale=sm, q_scale=qs, kv_scale=ks, **cp)
            parts_o.append(o)  # float32: the ranks' fp32 partial outputs
            parts_l.append(l_)
        out, lse = libmla.merge_attn_states_host(np.stack(parts_o), np.stack(parts_l),
                                                 out_dtype="bf16")
        want, want_lse = libmla.decode_reference(
            q, kv.reshape(whole.num_pages, whole.ps, 1, QK), qo, whole.kv_indptr, whole.pages,
            whole.last, L, page_size=whole.ps, sm_scale=sm, q_scale=qs, kv_scale=ks)
        want = want.astype(bf16)  # the single decode's bf16 out
        ok, text = compare(np, out, lse, want, want_lse)
        ref_out, _ = reference_f64(np, q, kv, whole, qo, sm, qs, ks)
        e_cp = float(np.abs(out.astype(np.float64) - ref_out).max()) if out.size else 0.0
        e_1 = float(np.abs(want.astype(np.float64) - ref_out).max()) if out.size else 0.0
        text += f" | vs float64: cp {e_cp:.2e}, 1 GPU {e_1:.2e}"
        passed, failed = passed + ok, failed + (not ok)
        print(f"{'PASS' if ok else 'FAIL'} W={W} {case_name(b, s_k, L, H, dt)} | {text}", flush=True)
    print(f"{passed} passed, {failed} failed", flush=True)
    return failed == 0


# ---- GPU modes ---------------------------------------------------------------------------------

class Comm:
    """The ranks this process runs and how their partials meet: NCCL across processes
    (dist), or, with --simulate, all W shards in this process (stacked)."""

    def __init__(self, torch, W, ranks, device, dist=None):
        self.torch, self.W, self.ranks, self.device, self.dist = torch, W, ranks, device, dist

    @property
    def lead(self):
        return 0 in self.ranks

    def all_ok(self, ok):
        """True when every rank's local phase succeeded (a collective every rank reaches)."""
        if self.dist is None:
            return ok
        t = self.torch.tensor([0 if ok else 1], dtype=self.torch.int32, device=self.device)
        self.dist.all_reduce(t)
        return int(t.item()) == 0

    def sync(self):
        if self.dist is not None:
            t = self.torch.zeros(1, dtype=self.torch.int32, device=self.device)
            self.dist.all_reduce(t)
        self.torch.cuda.synchronize(self.device)

    def all_gather(self, recv, send):
        """recv [W, n] <- every rank's send [n] (one collective; flat views, the form every
        backend takes)."""
        if self.dist is None:
            raise RuntimeError("all_gather needs torch.distributed")
        flat_recv, flat_send = recv.view(-1), send.reshape(-1)
        if hasattr(self.dist, "all_gather_into_tensor"):
            self.dist.all_gather_into_tensor(flat_recv, flat_send)
        else:  # torch < 2.0
            self.dist._all_gather_base(flat_recv, flat_send)


class GpuCase:
    """One case on this process's GPU: the problem (same seed on every rank), the shards of the
    ranks this process runs, their plans, device page tables and the buffers of the gather."""

    def __init__(self, comm, b, s_k, L, H, dt, page_size, seed):
        torch = comm.torch
        self.comm, self.b, self.L, self.H, self.dt = comm, b, L, H, dt
        dev = comm.device
        self.tdt = {"bf16": torch.bfloat16, "fp8": getattr(torch, "float8_e4m3fn", None)}[dt]
        if self.tdt is None:
            raise RuntimeError("fp8 cases need torch.float8_e4m3fn (torch >= 2.1)")
        self.q_scale, self.kv_scale = (Q_SCALE, KV_SCALE) if dt == "fp8" else (None, None)
        self.G = global_lengths(seed, b, s_k)
        self.qo = qo_indptr(b, L)
        self.qo_d = torch.from_numpy(self.qo).to(dev)
        # The same random q and whole KV on every rank: a seeded generator on each GPU.
        gen = torch.Generator(device=dev)
        gen.manual_seed(seed * 1000003 + b * 7919 + s_k * 31 + L * 7 + H)
        self.whole = Layout(self.G, 1, 0, page_size, seed)
        # FlashMLA's test data (randn / 10 clamped to [-1, 1]), for which its tolerances are made
        q = (torch.randn((b * L, H, QK), generator=gen, device=dev, dtype=torch.float32) * 0.1).clamp_(-1, 1)
        self.q = q.to(self.tdt)
        del q
        rows = self.whole.num_pages * page_size
        kv = torch.empty((rows, QK), dtype=self.tdt, device=dev)
        chunk = 1 << 18  # generate in chunks: no fp32 copy of a whole 1M-token cache
        for i in range(0, rows, chunk):
            n = min(chunk, rows - i)
            kv[i:i + n] = (torch.randn((n, QK), generator=gen, device=dev) * 0.1).clamp_(-1, 1).to(self.tdt)
        used = torch.zeros(rows, dtype=torch.bool, device=dev)
        used_rows = np.concatenate([self.whole.rows(i) for i in range(b)] + [np.zeros(0, np.int64)])
        used[torch.from_numpy(used_rows).to(dev)] = True
        kv_u8 = kv.view(torch.uint8)
        kv_u8[~used] = self._nan_byte_row(kv_u8.shape[1])  # NaN past each length: never read
        self.kv_rows = kv  # [rows, 576]

    # NaN as bytes: bf16 0x7FC0 (little endian C0 7F), e4m3fn 0x7F
    def _nan_byte_row(self, nbytes):
        torch = self.comm.torch
        if self.tdt == torch.bfloat16:
            return torch.tensor([0xC0, 0x7F] * (nbytes // 2), dtype=torch.uint8, device=self.comm.device)
        return torch.full((nbytes,), 0x7F, dtype=torch.uint8, device=self.comm.device)

    def verify_same_data(self):
        """Every rank must have generated the same problem; if not (GPUs whose RNG differ), rank
        0's data is broadcast. A collective: every rank calls it (after all_ok)."""
        torch, dist = self.comm.torch, self.comm.dist
        if dist is None:
            return
        def fp(t):
            u = t.reshape(-1).view(torch.uint8)
            return u[::997].sum(dtype=torch.int64) + u[-4096:].sum(dtype=torch.int64) * 3
        mine = torch.stack([fp(self.q), fp(self.kv_rows)])
        allfp = [torch.zeros_like(mine) for _ in range(self.comm.W)]
        dist.all_gather(allfp, mine)
        if not all(torch.equal(allfp[0], x) for x in allfp[1:]):
            if self.comm.lead:
                print("note: the ranks' random data differ (GPU RNG); broadcasting rank 0's",
                      flush=True)
            dist.broadcast(self.q.view(torch.uint8), 0)
            dist.broadcast(self.kv_rows.view(torch.uint8), 0)

    def shard(self, r, page_size, seed):
        """Rank r's shard: its own paged cache (NaN in unused slots), device page table, g."""
        torch = self.comm.torch
        dev = self.comm.device
        sh = Layout(self.G, self.comm.W, r, page_size, seed)
        src, dst = shard_rows(self.whole, sh)
        lkv = torch.empty((sh.num_pages * page_size, QK), dtype=self.tdt, device=dev)
        u8 = lkv.view(torch.uint8)
        u8[:] = self._nan_byte_row(u8.shape[1])
        if src.size:
            u8[torch.from_numpy(dst).to(dev)] = self.kv_rows.view(torch.uint8)[torch.from_numpy(src).to(dev)]
        sh.kv = lkv.view(sh.num_pages, page_size, 1, QK)
        sh.d = {k: torch.from_numpy(np.ascontiguousarray(v)).to(dev) for k, v in
                (("kv_indptr", sh.kv_indptr), ("last", sh.last), ("pages", sh.pages),
                 ("g", sh.g_kv_indptr))}
        sh.plan = libmla.plan_metadata(self.qo, sh.kv_indptr, sh.last, self.H, arch="sm_90a",
                                       page_size=page_size, max_seqlen_qo=self.L, causal=True,
                                       dtype_q=self.dt, dtype_kv=self.dt,
                                       is_cp_round_robin=self.comm.W > 1)
        sh.ws = torch.empty(max(sh.plan.info.workspace_bytes, 16), dtype=torch.uint8, device=dev)
        return sh

    def decode_shard(self, sh, r, out, lse, flag=None, validate=False):
        """Rank r's partial: out [T, H, 512] float32 or bfloat16 (out_dtype from out), lse
        [T, H] float32."""
        cp = dict(g_kv_indptr=sh.d["g"], cp_world_size=self.comm.W, cp_rank=r) \
            if self.comm.W > 1 else {}
        return libmla.decode(self.q, sh.kv, self.qo_d, sh.d["kv_indptr"], sh.d["pages"],
                             sh.d["last"], self.L, sh.plan, q_scale=self.q_scale,
                             kv_scale=self.kv_scale, out=out, lse=lse, workspace=sh.ws,
                             error_flag=flag, validate=validate, **cp)

    def whole_decode(self, page_size, out=None, lse=None, return_lse=True):
        """The single-GPU decode of the whole KV (plan without is_cp_round_robin)."""
        torch = self.comm.torch
        wl = self.whole
        if not hasattr(self, "_whole"):
            d = {k: torch.from_numpy(np.ascontiguousarray(v)).to(self.comm.device) for k, v in
                 (("kv_indptr", wl.kv_indptr), ("last", wl.last), ("pages", wl.pages))}
            plan = libmla.plan_metadata(self.qo, wl.kv_indptr, wl.last, self.H, arch="sm_90a",
                                        page_size=page_size, max_seqlen_qo=self.L, causal=True,
                                        dtype_q=self.dt, dtype_kv=self.dt)
            ws = torch.empty(max(plan.info.workspace_bytes, 16), dtype=torch.uint8,
                             device=self.comm.device)
            self._whole = (d, plan, ws)
        d, plan, ws = self._whole
        kv = self.kv_rows.view(wl.num_pages, page_size, 1, QK)
        return libmla.decode(self.q, kv, self.qo_d, d["kv_indptr"], d["pages"], d["last"],
                             self.L, plan, q_scale=self.q_scale, kv_scale=self.kv_scale,
                             out=out, lse=lse, return_lse=return_lse, workspace=ws)


class Gather:
    """Send / receive buffers of the partials: each rank's out [T, H, 512] (fp32 by default, the
    decode's out_dtype fp32; bf16 with partial="bf16": half the bytes, one more bf16 rounding
    before the merge) and lse [T, H] fp32 share one byte buffer
    (the lse padded to 16 bytes), gathered with ONE all_gather (packed); the merge reads the
    receive buffer in place through its rank strides (views [W, T, H, 512] and [W, T, H] whose
    ranks are one packed block apart). Or two all_gathers straight into contiguous arrays
    (separate). The merge writes bf16 out."""

    def __init__(self, comm, T, H, packed=True, partial="fp32"):
        torch = comm.torch
        self.comm, self.packed, self.W = comm, packed, comm.W
        dev = comm.device
        pdt = torch.float32 if partial == "fp32" else torch.bfloat16
        self.ob, self.lb = T * H * V * (4 if partial == "fp32" else 2), T * H * 4  # out, lse bytes
        blk = self.ob + (self.lb + 15) // 16 * 16
        self.send = torch.empty(blk, dtype=torch.uint8, device=dev)
        self.out = self.send[:self.ob].view(pdt).view(T, H, V)
        self.lse = self.send[self.ob:self.ob + self.lb].view(torch.float32).view(T, H)
        if packed:
            self.recv = torch.empty((self.W, blk), dtype=torch.uint8, device=dev)
            self.part_out = self.recv[:, :self.ob].view(pdt).view(self.W, T, H, V)
            self.part_lse = self.recv[:, self.ob:self.ob + self.lb].view(torch.float32).view(self.W, T, H)
        else:
            self.part_out = torch.empty((self.W, T, H, V), dtype=pdt, device=dev)
            self.part_lse = torch.empty((self.W, T, H), dtype=torch.float32, device=dev)
        self.merged_out = torch.empty((T, H, V), dtype=torch.bfloat16, device=dev)
        self.merged_lse = torch.empty((T, H), dtype=torch.float32, device=dev)

    def gather(self):
        c = self.comm
        if self.packed:
            c.all_gather(self.recv, self.send)
        else:
            c.all_gather(self.part_out.view(self.W, -1), self.out.reshape(-1))
            c.all_gather(self.part_lse.view(self.W, -1), self.lse.reshape(-1))

    @property
    def bytes_per_rank(self):
        return self.send.numel()

    def merge(self):
        # fp32 or bf16 partials (merge_attn_states takes partial_dtype from the tensor), bf16 out
        libmla.merge_attn_states(self.part_out, self.part_lse, out=self.merged_out,
                                 lse=self.merged_lse)


def run_check_case(comm, case, args):
    """One acceptance case; returns (ok, text) on the lead rank, (None, None) elsewhere."""
    torch = comm.torch
    b, s_k, L, H, dt = case
    T = b * L

    def failed(err):
        """Every rank reaches this collective; the lead rank gets every rank's message."""
        if comm.all_ok(err is None):
            return None
        msgs = [None] * comm.W
        if comm.dist is not None:
            comm.dist.all_gather_object(msgs, err)
        else:
            msgs = [err]
        return (False, "; ".join(m for m in msgs if m)) if comm.lead else (None, None)

    # Local phases run inside try and end in an all-reduce of "ok" that every rank reaches, so a
    # rank that fails never leaves the others waiting in a collective.
    err = None
    try:
        gc = GpuCase(comm, b, s_k, L, H, dt, args.page_size, args.seed)
    except Exception as e:
        err = f"rank {comm.ranks}: problem: {type(e).__name__}: {e}"
    res = failed(err)
    if res is not None:
        return res
    gc.verify_same_data()
    try:
        g = Gather(comm, T, H, packed=args.gather == "packed")
        flag = torch.zeros(1, dtype=torch.int32, device=comm.device)
        shards = {}
        for r in comm.ranks:
            shards[r] = gc.shard(r, args.page_size, args.seed)
        if comm.dist is None:  # simulated: every shard here, stacked
            for r in comm.ranks:
                gc.decode_shard(shards[r], r, g.part_out[r], g.part_lse[r], flag, validate=True)
        else:
            (r,) = comm.ranks
            gc.decode_shard(shards[r], r, g.out, g.lse, flag, validate=True)
        torch.cuda.synchronize(comm.device)
        if int(flag.item()):
            raise RuntimeError(f"decode error_flag = {int(flag.item())} (decode_params.h bits)")
    except Exception as e:  # reported after every rank has had its say
        err = f"rank {comm.ranks}: {type(e).__name__}: {e}"
    res = failed(err)
    if res is not None:
        return res
    if comm.dist is not None:
        g.gather()
    g.merge()
    if not comm.lead:
        torch.cuda.synchronize(comm.device)
        return None, None
    try:
        want, want_lse = gc.whole_decode(args.page_size)
        ref_out, ref_lse = reference_f64(
            torch, gc.q, gc.kv_rows, gc.whole, gc.qo, libmla.DEFAULT_SM_SCALE,
            gc.q_scale or 1.0, gc.kv_scale or 1.0)
        torch.cuda.synchronize(comm.device)
        ok, text = compare(torch, g.merged_out, g.merged_lse, want, want_lse)
        e_cp = float((g.merged_out.double() - ref_out).abs().max()) if T else 0.0
        e_1 = float((want.double() - ref_out).abs().max()) if T else 0.0
        text += f" | vs float64: cp {e_cp:.2e}, 1 GPU {e_1:.2e}"
        return ok, text
    except Exception as e:
        return False, f"rank 0 comparison: {type(e).__name__}: {e}"


def gpu_check(comm, args):
    cases = check_cases(args)
    passed = failed = 0
    for case in cases:
        t0 = time.time()
        ok, text = run_check_case(comm, case, args)
        if comm.lead:
            passed, failed = passed + bool(ok), failed + (not ok)
            print(f"{'PASS' if ok else 'FAIL'} W={comm.W} {case_name(*case)} | {text} "
                  f"[{time.time() - t0:.1f} s]", flush=True)
        comm.torch.cuda.empty_cache()
    if comm.lead:
        print(f"{passed} passed, {failed} failed", flush=True)
    return failed


def kernel_table(torch, comm, step, title, reps=10):
    """--profile: runs step() reps times under torch.profiler and prints each GPU kernel's (and
    copy's) mean time per step in µs, so that a call's fixed costs (the reducer, the copies, the
    collective) can be told apart from the decode kernel's own time."""
    from torch.profiler import ProfilerActivity, profile
    torch.cuda.synchronize(comm.device)
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            step()
        torch.cuda.synchronize(comm.device)
    kern = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    per = {}
    for e in kern:
        t = per.setdefault(e.name, [0, 0.0])
        t[0] += 1
        t[1] += e.time_range.elapsed_us()
    lines = [f"profile ({title}; {reps} steps, torch.profiler):"]
    for name, (n, us) in sorted(per.items(), key=lambda kv: -kv[1][1]):
        lines.append(f"  {us / reps:9.1f} us per step  {n // reps:3d} x  {name[:90]}")
    print("\n".join(lines), flush=True)


def align_gpus(torch, comm, args, collective=True):
    """Before a timed iteration: a GPU sleep of --sleep-us (the host enqueues the iteration
    meanwhile, so host launch time is not timed) and, with several ranks and `collective`, a
    one-int all_reduce that every rank's GPU leaves at the same moment. --align collective (the
    default) sleeps first and ends with the all_reduce, so the ranks start the timed work
    together; --align sleep does the all_reduce first, then sleeps: the ranks then start apart
    by the difference of their SM clocks over the sleep (torch.cuda._sleep counts cycles)."""
    sleep = getattr(torch.cuda, "_sleep", None)
    cycles = int(args.sleep_us * 2000)  # ~2 GHz SM clock
    reduce_ = collective and comm.dist is not None
    if reduce_:
        t = torch.zeros(1, dtype=torch.int32, device=comm.device)
    if reduce_ and args.align == "sleep":
        comm.dist.all_reduce(t)
    if sleep is not None:
        sleep(cycles)
    if reduce_ and args.align == "collective":
        comm.dist.all_reduce(t)


def graph_time(torch, comm, body, args, align, reset=None):
    """--graph: body() captured once in a CUDA graph (after a warm-up on a side stream, as
    torch.cuda.graph asks), then replayed args.iters times, each after the same alignment and GPU
    sleep as the eager loop; returns the median replay time in ms (CUDA events). reset(), if
    given, runs after the capture and before the replays (e.g. poisons the outputs, so that what
    they hold afterwards was written by a replay)."""
    side = torch.cuda.Stream(device=comm.device)
    side.wait_stream(torch.cuda.current_stream(comm.device))
    with torch.cuda.stream(side):
        body()
    torch.cuda.current_stream(comm.device).wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        body()
    if reset is not None:
        reset()
    times = []
    for i in range(args.warmup + args.iters):
        align_gpus(torch, comm, args, align)
        ev = [torch.cuda.Event(enable_timing=True) for _ in range(2)]
        ev[0].record()
        graph.replay()
        ev[1].record()
        if i >= args.warmup:
            times.append(ev)
    torch.cuda.synchronize(comm.device)
    return statistics.median(a.elapsed_time(b) for a, b in times)


def gpu_bench(comm, args):
    """Times W-GPU decode + all-gather + merge against the 1-GPU decode of the whole KV."""
    torch = comm.torch
    (r,) = comm.ranks
    b, s_k, H, dt, L = args.bench_b, args.bench_s_k, args.bench_heads, args.bench_dtype, 1
    gc = GpuCase(comm, b, s_k, L, H, dt, args.page_size, args.seed)
    gc.verify_same_data()
    sh = gc.shard(r, args.page_size, args.seed)
    g = Gather(comm, b * L, H, packed=args.gather == "packed", partial=args.partial_dtype)
    sleep = getattr(torch.cuda, "_sleep", None)

    def cp_iter(ev, phases=True):
        # phases False: events only at the start and the end, so that nothing stands between
        # the kernels (an event between the all-gather and the merge would keep the merge's
        # programmatic launch from starting early): these iterations give the total
        align_gpus(torch, comm, args)
        ev[0].record()
        gc.decode_shard(sh, r, g.out, g.lse)
        if phases:
            ev[1].record()
        g.gather()
        if phases:
            ev[2].record()
        g.merge()
        ev[3].record()

    def new_events():
        return [torch.cuda.Event(enable_timing=True) for _ in range(4)]

    for _ in range(args.warmup):
        cp_iter(new_events())
    comm.sync()
    evs = [new_events() for _ in range(args.iters)]
    evt = [new_events() for _ in range(args.iters)]
    for ev, et in zip(evs, evt):  # alternated: phase split, then the total alone
        cp_iter(ev)
        cp_iter(et, phases=False)
    comm.sync()
    total = statistics.median(ev[0].elapsed_time(ev[3]) for ev in evt)
    total_phased = statistics.median(ev[0].elapsed_time(ev[3]) for ev in evs)
    dec = statistics.median(ev[0].elapsed_time(ev[1]) for ev in evs)
    gat = statistics.median(ev[1].elapsed_time(ev[2]) for ev in evs)
    mer = statistics.median(ev[2].elapsed_time(ev[3]) for ev in evs)
    eager_out = g.merged_out.clone()
    graph_cp, graph_same = math.nan, 1.0
    if args.graph:  # decode + reducer + all-gather + merge as one CUDA graph (NCCL captured too)
        graph_cp = graph_time(torch, comm, lambda: (gc.decode_shard(sh, r, g.out, g.lse),
                                                     g.gather(), g.merge()), args, align=True,
                              reset=lambda: g.merged_out.fill_(math.nan))
        graph_same = float(torch.equal(g.merged_out, eager_out))
    mine = torch.tensor([total, dec, gat, mer, graph_cp, graph_same, total_phased], dtype=torch.float64,
                        device=comm.device)
    every = [torch.zeros_like(mine) for _ in range(comm.W)]
    comm.dist.all_gather(every, mine)
    if args.profile:
        kernel_table(torch, comm, lambda: cp_iter(new_events()), f"rank {r}, one CP iteration")
    # correctness of what was timed, against the whole decode below
    merged_out, merged_lse = g.merged_out.clone(), g.merged_lse.clone()

    base = None
    if comm.lead:
        out1 = torch.empty((b * L, H, V), dtype=torch.bfloat16, device=comm.device)
        def one_iter(ev):
            align_gpus(torch, comm, args, collective=False)
            ev[0].record()
            gc.whole_decode(args.page_size, out=out1, return_lse=False)
            ev[1].record()
        for _ in range(args.warmup):
            one_iter(new_events())
        torch.cuda.synchronize(comm.device)
        evs1 = [new_events() for _ in range(args.iters)]
        for ev in evs1:
            one_iter(ev)
        torch.cuda.synchronize(comm.device)
        base = statistics.median(ev[0].elapsed_time(ev[1]) for ev in evs1)
        graph_1 = graph_time(torch, comm, lambda: gc.whole_decode(args.page_size, out=out1,
                                                                 return_lse=False),
                             args, align=False) if args.graph else None
        if args.profile:
            kernel_table(torch, comm, lambda: one_iter(new_events()), "1 GPU, whole KV")
        want, want_lse = gc.whole_decode(args.page_size)
        torch.cuda.synchronize(comm.device)
        ok, text = compare(torch, merged_out, merged_lse, want, want_lse)
        kv_bytes = int(gc.G.sum()) * QK * gc.kv_rows.element_size()
        rows = [x.tolist() for x in every]
        print(f"bench: b={b} s_k={s_k} h={H} {dt} qlen={L} page={args.page_size}, "
              f"{args.iters} iterations after {args.warmup} warm-up, median, CUDA events, "
              f"--align {args.align}"
              f"{'' if sleep else ' (no torch.cuda._sleep: host launch time included)'}",
              flush=True)
        for i, (t, d, ga, m, _, _, tp) in enumerate(rows):
            print(f"  rank {i}: decode {d * 1e3:8.1f} us  all-gather {ga * 1e3:7.1f} us  "
                  f"merge {m * 1e3:6.1f} us  (sum {tp * 1e3:6.1f} us with the phase events)  "
                  f"total {t * 1e3:8.1f} us (start and end events only)", flush=True)
        nb = g.bytes_per_rank
        print(f"  all-gather: {comm.W} x {nb} bytes ({args.partial_dtype} partial out {g.ob} + "
              f"lse {g.lb} per rank, padded to 16 bytes); the merge reads the receive buffer in "
              f"place", flush=True)
        cp_ms = rows[0][0]
        print(f"  {comm.W} GPUs (decode + all-gather + merge, rank 0's events): "
              f"{cp_ms * 1e3:8.1f} us", flush=True)
        print(f"  1 GPU (decode of the whole KV):                 {base * 1e3:8.1f} us  "
              f"({kv_bytes / (base * 1e-3) / 1e9:.0f} GB/s of KV)", flush=True)
        print(f"  speedup: {base / cp_ms:.2f}x (target >= 1.7x for W = 2)", flush=True)
        print(f"  merged vs 1-GPU decode (strict rule): {'PASS' if ok else 'FAIL'} | {text}",
              flush=True)
        if graph_1 is not None:
            gcp = rows[0][4]
            same = all(x[5] == 1.0 for x in rows)
            print(f"  CUDA graphs (one replay per iteration, median): 2 GPUs {gcp * 1e3:8.1f} us "
                  f"(rank 0), 1 GPU {graph_1 * 1e3:8.1f} us, speedup {graph_1 / gcp:.2f}x; the "
                  f"replayed merge {'equals' if same else 'DIFFERS from'} the eager one bit for bit",
                  flush=True)
    comm.sync()
    return 0


# ---- processes ---------------------------------------------------------------------------------

def _import_torch():
    try:
        import torch
    except ImportError:
        sys.exit("context_parallel.py: the GPU modes need torch (pip install torch); "
                 "--cpu-check runs without it")
    return torch


def _check_gpu(torch, device):
    major, minor = torch.cuda.get_device_capability(device)
    if (major, minor) != (9, 0):
        raise RuntimeError(f"cuda:{device} is sm_{major}{minor}; libmla's kernels are sm_90a (H100/H200)")
    ctx = libmla.context(device)
    if ctx.arch != "sm_90a":
        raise RuntimeError(f"libmla context on cuda:{device} is {ctx.arch}")


def worker(rank, W, args, port, results):
    torch = _import_torch()
    import torch.distributed as dist
    from datetime import timedelta
    torch.cuda.set_device(rank)
    try:
        dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                                world_size=W, timeout=timedelta(seconds=args.timeout))
    except TypeError:
        dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                                world_size=W)
    failed = 1
    try:
        _check_gpu(torch, rank)
        if rank == 0:
            print(f"context_parallel: W={W} ranks over NCCL, libmla {libmla.version_string()} "
                  f"({libmla._lib.lib_path}), torch {torch.__version__}, "
                  f"{torch.cuda.get_device_name(0)}; "
                  + ", ".join(f"{k}={os.environ.get(k)}" for k in {**_NCCL_ENV, **_NCCL_TUNING}),
                  flush=True)
        comm = Comm(torch, W, [rank], f"cuda:{rank}", dist)
        failed = gpu_bench(comm, args) if args.bench else gpu_check(comm, args)
    finally:
        if rank == 0 and results is not None:
            results.put(int(failed))
        try:
            dist.destroy_process_group()
        except Exception:
            pass


def simulate(args):
    torch = _import_torch()
    if not torch.cuda.is_available():
        sys.exit("context_parallel.py: --simulate needs a CUDA GPU (--cpu-check runs without one)")
    _check_gpu(torch, 0)
    torch.cuda.set_device(0)
    W = args.simulate
    print(f"context_parallel: W={W} shards simulated on cuda:0 (no NCCL), libmla "
          f"{libmla.version_string()} ({libmla._lib.lib_path})", flush=True)
    return gpu_check(Comm(torch, W, list(range(W)), "cuda:0", None), args) == 0


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="See the module docstring and docs/context-parallel.md.")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="the acceptance sweep (default)")
    mode.add_argument("--bench", action="store_true", help="W GPUs vs 1 GPU timing")
    mode.add_argument("--cpu-check", action="store_true", help="no GPU: simulated ranks on the CPU")
    ap.add_argument("--world-size", type=int, default=None,
                    help="ranks = GPUs (default: 2, or 1 when only one GPU is visible)")
    ap.add_argument("--simulate", type=int, default=None, metavar="W",
                    help="with --check: W shards on one GPU in one process, no NCCL")
    sweep = ("batch", "s_k", "qlen", "heads", "dtype")
    gpu_sweep = dict(zip(sweep, ("1,8", "1,2,3,4097,131072", "1,2,3,4", "16,128", "bf16,fp8")))
    cpu_sweep = dict(zip(sweep, ("1,3", "1,2,3,37", "1,3", "16", "bf16,fp8")))
    for name, what in zip(sweep, ("batch sizes", "global KV lengths of request 0 (the others: "
                                  "s_k/2..s_k, the last of a batch 0)", "query tokens per "
                                  "request (causal MTP)", "heads", "bf16 and/or fp8 (q and kv)")):
        ap.add_argument("--" + name.replace("_", "-"), default=None,
                        help=f"check sweep: comma list of {what} (default {gpu_sweep[name]}; "
                             f"--cpu-check {cpu_sweep[name]})")
    ap.add_argument("--page-size", type=int, default=64)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--gather", choices=("packed", "separate"), default="packed",
                    help="one all_gather of out+lse bytes (default) or one per array")
    ap.add_argument("--partial-dtype", choices=("fp32", "bf16"), default="fp32",
                    help="bench: dtype of the all-gathered partial out (the check sweep: fp32)")
    ap.add_argument("--bench-b", type=int, default=1)
    ap.add_argument("--bench-s-k", type=int, default=1048576)
    ap.add_argument("--bench-heads", type=int, default=16)
    ap.add_argument("--bench-dtype", default="bf16", choices=("bf16", "fp8"))
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--sleep-us", type=float, default=2000.0,
                    help="bench: GPU sleep before each timed iteration while the host enqueues")
    ap.add_argument("--align", choices=("collective", "sleep"), default="collective",
                    help="--bench: how the ranks start a timed iteration together: GPU sleep, "
                         "then a one-int all_reduce (collective), or the all_reduce, then the "
                         "sleep (sleep: the ranks drift apart by their clock difference)")
    ap.add_argument("--graph", action="store_true",
                    help="bench: also time both paths captured as CUDA graphs (NCCL included)")
    ap.add_argument("--profile", action="store_true",
                    help="bench: also print each GPU kernel's time per iteration (torch.profiler)")
    ap.add_argument("--timeout", type=int, default=900, help="NCCL collective timeout, seconds")
    ap.add_argument("--cpu-world-sizes", default="2,3", help="--cpu-check: simulated W values")
    args = ap.parse_args(argv)
    for name in sweep:
        if getattr(args, name) is None:
            setattr(args, name, (cpu_sweep if args.cpu_check else gpu_sweep)[name])
    for name in sweep[:4]:
        try:
            if not parse_list(getattr(args, name)) or min(parse_list(getattr(args, name))) < (
                    0 if name == "s_k" else 1):
                raise ValueError
        except ValueError:
            ap.error(f"--{name.replace('_', '-')} {getattr(args, name)!r}: a comma list of "
                     f"positive ints")
    if set(parse_list(args.dtype, str)) - {"bf16", "fp8"}:
        ap.error(f"--dtype {args.dtype!r}: bf16 and/or fp8")
    for k, v in _NCCL_ENV.items():
        if os.environ.get(k) != v:
            print(f"warning: {k}={os.environ.get(k)} (this example expects {v}: NVLink "
                  f"multicast off)", file=sys.stderr)

    if args.cpu_check:
        return 0 if cpu_check(args) else 1
    if args.simulate is not None:
        if args.bench:
            sys.exit("context_parallel.py: --simulate runs --check only")
        if args.simulate < 1:
            sys.exit("context_parallel.py: --simulate needs W >= 1")
        return 0 if simulate(args) else 1

    torch = _import_torch()
    import torch.multiprocessing as mp
    if not torch.cuda.is_available():
        sys.exit("context_parallel.py: no CUDA GPU visible (torch.cuda.is_available() is False); "
                 "--cpu-check runs without one")
    n = torch.cuda.device_count()
    W = args.world_size if args.world_size is not None else min(2, n)
    if W < 1 or W > n:
        sys.exit(f"context_parallel.py: --world-size {W} needs {W} GPUs, {n} visible "
                 f"(CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES')})")
    if W == 1:
        print("note: world size 1 (a smoke test: no round robin, no NCCL traffic); "
              "--simulate W checks round robin on one GPU", file=sys.stderr)
    ctx = mp.get_context("spawn")
    results = ctx.SimpleQueue()
    port = free_port()
    try:
        mp.spawn(worker, args=(W, args, port, results), nprocs=W, join=True)
    except Exception as e:  # a rank raised: torch prints its traceback in the message
        print(f"context_parallel.py: a rank failed:\n{e}", file=sys.stderr)
        return 1
    failed = results.get() if not results.empty() else 1
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
