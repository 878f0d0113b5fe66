"""The metadata planner (PLANNER section of include/mla_c_api.h, docs/plan-layout.md): buffer
sizes, the host planner and the one-step update, with NumPy buffers."""
import ctypes
from dataclasses import dataclass

from . import _lib
from . import _types as T
from ._convert import as_flag, as_int, dtype_enum, host_indptrs, host_int32

_PARAM_KEYS = ("num_clusters", "page_size", "kv_granularity", "max_seqlen_qo", "causal",
               "dtype_q", "dtype_kv", "fast_mode", "intra_batch_mode", "max_split_per_batch",
               "num_kv_splits", "is_cp_round_robin", "enable_experimental", "flydsl_ps1",
               "head_group_major", "work_overhead_tokens", "split_tail_tokens")


def make_params(batch_size, num_heads, *, arch, num_clusters=None, page_size=1, kv_granularity=16,
                max_seqlen_qo=1, causal=True, dtype_q="bf16", dtype_kv="bf16", fast_mode=True,
                intra_batch_mode=False, max_split_per_batch=-1, num_kv_splits=32,
                is_cp_round_robin=False, enable_experimental=False, flydsl_ps1=False,
                num_heads_k=1, head_group_major=False, work_overhead_tokens=-1,
                split_tail_tokens=-1):
    """The mla_metadata_params of the keywords (num_clusters None = the arch's default;
    work_overhead_tokens -1 = the arch's: sm_90a 1024 for 64-row tiles and 16-row fp8-KV tiles,
    else aiter's rule; 0 = aiter's rule; split_tail_tokens -1 = the arch's: sm_90a 512 for 16-row
    and 256 for 32-row bf16 tiles, else 0; 0 = none)."""
    if arch is None:
        raise TypeError("arch is required (e.g. arch=\"sm_90a\")")
    return T.mla_metadata_params(
        arch=_lib.cstr(arch, "arch"),
        num_clusters=0 if num_clusters is None else as_int(num_clusters, "num_clusters"),
        batch_size=as_int(batch_size, "batch_size"),
        max_seqlen_qo=as_int(max_seqlen_qo, "max_seqlen_qo"),
        num_heads=as_int(num_heads, "num_heads"), num_heads_k=as_int(num_heads_k, "num_heads_k"),
        q_dtype=dtype_enum(dtype_q, "dtype_q"), kv_dtype=dtype_enum(dtype_kv, "dtype_kv"),
        page_size=as_int(page_size, "page_size"),
        kv_granularity=as_int(kv_granularity, "kv_granularity"), causal=as_flag(causal, "causal"),
        fast_mode=as_flag(fast_mode, "fast_mode"),
        intra_batch_mode=as_flag(intra_batch_mode, "intra_batch_mode"),
        max_split_per_batch=as_int(max_split_per_batch, "max_split_per_batch"),
        num_kv_splits=as_int(num_kv_splits, "num_kv_splits"),
        is_cp_round_robin=as_flag(is_cp_round_robin, "is_cp_round_robin"),
        enable_experimental=as_flag(enable_experimental, "enable_experimental"),
        flydsl_ps1=as_flag(flydsl_ps1, "flydsl_ps1"),
        head_group_major=as_flag(head_group_major, "head_group_major"),
        work_overhead_tokens=as_int(work_overhead_tokens, "work_overhead_tokens"),
        split_tail_tokens=as_int(split_tail_tokens, "split_tail_tokens"))


@dataclass(frozen=True)
class MetadataInfo:
    """Every field of mla_metadata_sizes (lengths in elements of each buffer's own row)."""
    work_metadata_len: int
    work_indptr_len: int
    work_info_set_rows: int
    reduce_indptr_len: int
    reduce_final_map_rows: int
    reduce_partial_map_len: int
    partial_rows: int
    workspace_bytes: int
    num_clusters: int
    kernel_num_heads: int
    qk_batch_ratio: int


def _info(params):
    s = T.mla_metadata_sizes()
    _lib.check(_lib.load().mla_metadata_info(ctypes.byref(params), ctypes.byref(s)))
    return MetadataInfo(**{k: getattr(s, k) for k, _ in T.mla_metadata_sizes._fields_
                           if k != "struct_size"})


def metadata_info(batch_size, num_heads, *, arch, **kw):
    """Buffer lengths for a batch of up to batch_size requests (aiter get_mla_metadata_info_v1).
    Keywords as plan_metadata. Raises MlaInvalidArgument, MlaUnsupported (the head plan rejects
    the shape)."""
    return _info(make_params(batch_size, num_heads, arch=arch, **kw))


@dataclass(frozen=True)
class PlanSummary:
    """Every field of mla_plan_summary."""
    num_works: int
    num_tiles: int
    num_split_tiles: int
    num_partials: int
    num_partial_rows: int
    max_works_per_cluster: int
    total_kv_blocks: int
    max_cluster_cost: int
    num_sections: int
    work_overhead_blocks: int
    split_tail_blocks: int
    active_clusters: int  # clusters holding works (decode(..., active_clusters=...) launches only those)


class Plan:
    """A host plan: the six planner buffers as NumPy arrays (full lengths of metadata_info),
    the params it was made with (.params, an mla_metadata_params), .info (MetadataInfo),
    .summary (PlanSummary) and copies of its inputs (.qo_indptr, .kv_indptr,
    .kv_last_page_lens). work_metadata is uint64 [2], work_info_set int32 [rows, 8],
    reduce_final_map int32 [rows, 2], the others int32 1-D."""

    BUFFERS = ("work_metadata", "work_indptr", "work_info_set", "reduce_indptr",
               "reduce_final_map", "reduce_partial_map")

    def __init__(self, params, info, arch):
        import numpy as np
        self.params = params
        self.info = info
        self.arch = arch
        self.work_metadata = np.zeros(info.work_metadata_len, np.uint64)
        self.work_indptr = np.zeros(info.work_indptr_len, np.int32)
        self.work_info_set = np.zeros((info.work_info_set_rows, 8), np.int32)
        self.reduce_indptr = np.zeros(info.reduce_indptr_len, np.int32)
        self.reduce_final_map = np.zeros((info.reduce_final_map_rows, 2), np.int32)
        self.reduce_partial_map = np.zeros(info.reduce_partial_map_len, np.int32)
        self.summary = None
        self.qo_indptr = self.kv_indptr = self.kv_last_page_lens = None
        self.generation = 0          # bumped by update_metadata (device copies are re-made)
        self._device_copies = {}

    @property
    def batch_size(self):
        return self.params.batch_size

    @property
    def num_heads(self):
        return self.params.num_heads

    @property
    def num_works(self):
        return int(self.work_indptr[-1])

    def works(self):
        """work_info_set rows in use: int32 [num_works, 8]."""
        return self.work_info_set[:self.num_works]

    def buffers(self):
        """An mla_metadata_buffers pointing at the NumPy arrays (keep self alive while used)."""
        b = T.mla_metadata_buffers()
        for name in self.BUFFERS:
            a = getattr(self, name)
            setattr(b, name, a.ctypes.data)
        b.work_metadata_len = self.work_metadata.shape[0]
        b.work_indptr_len = self.work_indptr.shape[0]
        b.work_info_set_rows = self.work_info_set.shape[0]
        b.reduce_indptr_len = self.reduce_indptr.shape[0]
        b.reduce_final_map_rows = self.reduce_final_map.shape[0]
        b.reduce_partial_map_len = self.reduce_partial_map.shape[0]
        return b

    def __repr__(self):
        return (f"<libmla.Plan {self.arch} B={self.batch_size} H={self.num_heads} "
                f"works={self.num_works} clusters={self.info.num_clusters}>")


def plan_metadata(qo_indptr, kv_indptr, kv_last_page_lens, num_heads, *, arch, num_clusters=None,
                  page_size=1, kv_granularity=16, max_seqlen_qo=1, causal=True, dtype_q="bf16",
                  dtype_kv="bf16", fast_mode=True, intra_batch_mode=False, max_split_per_batch=-1,
                  num_kv_splits=32, is_cp_round_robin=False, enable_experimental=False,
                  flydsl_ps1=False, head_group_major=False, work_overhead_tokens=-1,
                  split_tail_tokens=-1):
    """Host planner (aiter get_mla_metadata_v1; v1_2 / v1_0 / v1_1 by fast_mode and
    intra_batch_mode). Inputs: host int arrays qo_indptr [B+1] (query tokens), kv_indptr [B+1]
    (pages), kv_last_page_lens [B] (1..page_size). Returns a Plan (NumPy buffers,
    work_metadata holding the host addresses of work_indptr / work_info_set).
    head_group_major (sm_90a v1_2, folded heads): lay the head groups out group by group so a
    request's groups read its KV at the same time (mla_metadata_params.head_group_major; the
    device planner takes it when num_clusters is a multiple of the head groups).
    work_overhead_tokens: a work's fixed cost in KV tokens in v1_2's cost model; larger values
    split fewer tiles (mla_metadata_params.work_overhead_tokens; -1 = the arch's: on
    sm_90a 1024 for tiles of 64 rows (64, 128 heads) and 16-row tiles with fp8 KV, else aiter's
    rule; 0 = aiter's cost; the plan's summary.work_overhead_blocks gives the value in effect).
    split_tail_tokens: a cluster boundary never leaves fewer KV tokens of its tile
    (mla_metadata_params.split_tail_tokens; -1 = the arch's: on sm_90a 512 for 16-row and 256
    for 32-row bf16 tiles, else 0; 0 = none, so both 0 give aiter's rule; summary.split_tail_blocks
    in effect).
    Raises TypeError / ValueError for bad arrays (before the C call), MlaInvalidArgument,
    MlaUnsupported (the head plan rejects the shape)."""
    qo, kv, last = host_indptrs(qo_indptr, kv_indptr, kv_last_page_lens)
    B = qo.shape[0] - 1
    params = make_params(
        B, num_heads, arch=arch, num_clusters=num_clusters, page_size=page_size,
        kv_granularity=kv_granularity, max_seqlen_qo=max_seqlen_qo, causal=causal,
        dtype_q=dtype_q, dtype_kv=dtype_kv, fast_mode=fast_mode, intra_batch_mode=intra_batch_mode,
        max_split_per_batch=max_split_per_batch, num_kv_splits=num_kv_splits,
        is_cp_round_robin=is_cp_round_robin, enable_experimental=enable_experimental,
        flydsl_ps1=flydsl_ps1, head_group_major=head_group_major,
        work_overhead_tokens=work_overhead_tokens, split_tail_tokens=split_tail_tokens)
    plan = Plan(params, _info(params), arch)
    summary = T.mla_plan_summary()
    summary.work_overhead_blocks = -1  # stays -1 where a library older than the field planned
    summary.split_tail_blocks = -1  # likewise
    buffers = plan.buffers()
    _lib.check(_lib.load().mla_plan_metadata(
        ctypes.byref(params), qo.ctypes.data, kv.ctypes.data, last.ctypes.data,
        ctypes.byref(buffers), None, None, ctypes.byref(summary)))
    plan.summary = PlanSummary(**{k: getattr(summary, k) for k, _ in T.mla_plan_summary._fields_
                                  if k not in ("struct_size", "reserved0", "reserved1", "reserved2")})
    plan.qo_indptr, plan.kv_indptr, plan.kv_last_page_lens = qo, kv, last
    return plan


def update_metadata(plan, new_kv_indptr, num_reject_tokens=None):
    """Advances a host plan by one decode step in place (aiter decode_update_mla_metadata_v1):
    page_size 1, kv_granularity >= 16. new_kv_indptr [B+1] is the new kv_indptr (tokens);
    num_reject_tokens [B] (None = none) the draft tokens rejected per request. A plan for
    max_seqlen_qo > 1 collapses to one query token per request (plan.qo_indptr becomes
    0..B). Returns the plan. Raises TypeError / ValueError, MlaInvalidArgument."""
    import numpy as np
    if not isinstance(plan, Plan):
        raise TypeError(f"plan must be a libmla.Plan (from plan_metadata), got "
                        f"{type(plan).__name__}")
    B = plan.batch_size
    new_kv = host_int32(new_kv_indptr, "new_kv_indptr", length=B + 1)
    rej = None
    if num_reject_tokens is not None:
        rej = host_int32(num_reject_tokens, "num_reject_tokens", length=B)
    buffers = plan.buffers()
    _lib.check(_lib.load().mla_update_metadata(
        ctypes.byref(plan.params), new_kv.ctypes.data,
        None if rej is None else rej.ctypes.data, ctypes.byref(buffers)))
    plan.kv_indptr = new_kv
    plan.kv_last_page_lens = np.ones(B, np.int32)
    if plan.params.max_seqlen_qo > 1:
        plan.qo_indptr = np.arange(B + 1, dtype=np.int32)
    plan.generation += 1
    return plan
