"""The CPU reference (float64 accumulation) over NumPy arrays: the direct decode reference and
the execution of a plan's work items plus the reduce, exactly as the kernels must."""
import ctypes
import math
import numbers

from . import _lib
from . import _types as T
from ._convert import as_flag, as_int, dtype_name, host_indptrs, is_device_object
from .planner import Plan

QK_DIM, V_DIM = 576, 512
DEFAULT_SM_SCALE = 1.0 / math.sqrt(QK_DIM)
_REF_DTYPES = ("bf16", "fp16", "fp8", "fp8_fnuz")


def _scale(v, what, default):
    if v is None:
        return default
    if isinstance(v, bool):
        raise TypeError(f"{what} must be a float")
    if isinstance(v, numbers.Real):
        return float(v)
    import numpy as np
    a = np.asarray(v)
    if a.size != 1 or not np.issubdtype(a.dtype, np.floating):
        raise TypeError(f"{what} must be a float or a one-element float array, got {v!r}")
    return float(a.reshape(-1)[0])


def _host_tensor(x, what):
    import numpy as np
    if is_device_object(x):
        raise TypeError(f"{what} must be a host NumPy array; got a device tensor")
    if not isinstance(x, np.ndarray):
        raise TypeError(f"{what} must be a NumPy array (bf16 / fp8 through ml_dtypes), got "
                        f"{type(x).__name__}")
    name = dtype_name(x.dtype)
    if name not in _REF_DTYPES:
        raise TypeError(f"{what} has dtype {x.dtype}; the reference takes ml_dtypes.bfloat16, "
                        f"float16, ml_dtypes.float8_e4m3fn or float8_e4m3fnuz")
    return name


def _problem(q, kv_buffer, qo_indptr, kv_indptr, kv_page_indices, kv_last_page_lens,
             max_seqlen_q, page_size, sm_scale, causal, q_scale, kv_scale, fp8_p_quant):
    """Checks every array and builds the mla_host_problem; returns (problem, keep-alive, sizes)."""
    import numpy as np
    q_name = _host_tensor(q, "q")
    kv_name = _host_tensor(kv_buffer, "kv_buffer")
    page_size = as_int(page_size, "page_size")
    max_seqlen_q = as_int(max_seqlen_q, "max_seqlen_q")
    if page_size < 1 or page_size & (page_size - 1):
        raise ValueError(f"page_size must be a power of two, got {page_size}")
    if q.ndim != 3 or q.shape[2] != QK_DIM:
        raise ValueError(f"q must be [total_q, num_heads, {QK_DIM}], got shape {q.shape}")
    item = q.dtype.itemsize
    if q.strides[2] != item or q.strides[0] % item or q.strides[1] % item or min(q.strides) < 0:
        raise ValueError("q's last dimension must be contiguous (and strides non-negative)")
    if not kv_buffer.flags.c_contiguous:
        raise ValueError("kv_buffer must be C-contiguous (rows of 576 back to back)")
    kv = kv_buffer
    if kv.ndim == 4 and kv.shape[2] == 1:
        kv = kv.reshape(kv.shape[0], kv.shape[1], QK_DIM) if kv.shape[3] == QK_DIM else kv
    if kv.ndim == 2 and kv.shape[1] == QK_DIM:
        if kv.shape[0] % page_size:
            raise ValueError(f"kv_buffer rows ({kv.shape[0]}) are not a multiple of page_size")
        kv = kv.reshape(kv.shape[0] // page_size, page_size, QK_DIM)
    if kv.ndim != 3 or kv.shape[1] != page_size or kv.shape[2] != QK_DIM:
        raise ValueError(f"kv_buffer must be [num_pages, page_size={page_size}, 1, {QK_DIM}] (or "
                         f"[num_pages, page_size, {QK_DIM}]), got shape {kv_buffer.shape}")
    qo, kvp, last, pages = host_indptrs(qo_indptr, kv_indptr, kv_last_page_lens, kv_page_indices)
    B = qo.shape[0] - 1
    total_q = q.shape[0]
    if int(qo[-1]) != total_q:
        raise ValueError(f"qo_indptr[-1] = {int(qo[-1])} but q has {total_q} rows")
    if B and int(np.max(np.diff(qo))) > max_seqlen_q:
        raise ValueError(f"a request has more than max_seqlen_q = {max_seqlen_q} query tokens")
    num_pages = kv.shape[0]
    used = pages[:int(kvp[-1])]
    if used.size and (used.min() < 0 or used.max() >= num_pages):
        raise ValueError(f"kv_page_indices has page ids outside 0..{num_pages - 1}")
    H = q.shape[1]
    p = T.mla_host_problem(
        batch_size=B, num_heads=H, max_seqlen_q=max_seqlen_q, page_size=page_size,
        num_pages=num_pages, causal=as_flag(causal, "causal"),
        q_dtype=T.DTYPE_NAMES[q_name], kv_dtype=T.DTYPE_NAMES[kv_name],
        softmax_scale=_scale(sm_scale, "sm_scale", DEFAULT_SM_SCALE),
        q_scale=_scale(q_scale, "q_scale", 1.0), kv_scale=_scale(kv_scale, "kv_scale", 1.0),
        q=q.ctypes.data, q_stride_token=q.strides[0] // item, q_stride_head=q.strides[1] // item,
        kv_cache=kv.ctypes.data, qo_indptr=qo.ctypes.data, kv_indptr=kvp.ctypes.data,
        kv_page_indices=pages.ctypes.data, kv_last_page_lens=last.ctypes.data,
        fp8_p_quant=as_flag(fp8_p_quant, "fp8_p_quant"))
    keep = (q, kv, qo, kvp, last, pages)
    return p, keep, total_q, H


def _set_cp(p, g_kv_indptr, cp_world_size, cp_rank):
    """Round-robin context-parallel fields of a host problem; returns arrays to keep alive."""
    import numpy as np
    cp_world_size = as_int(cp_world_size, "cp_world_size")
    cp_rank = as_int(cp_rank, "cp_rank")
    keep = ()
    if cp_world_size > 1:
        if g_kv_indptr is None:
            raise ValueError("g_kv_indptr is required when cp_world_size > 1")
        if is_device_object(g_kv_indptr):
            raise TypeError("g_kv_indptr must be a host array")
        g = np.ascontiguousarray(np.asarray(g_kv_indptr), dtype=np.int32)
        if g.shape != (p.batch_size + 1,):
            raise ValueError(f"g_kv_indptr must have {p.batch_size + 1} entries, got {g.shape}")
        p.g_kv_indptr = g.ctypes.data
        keep = (g,)
    p.cp_world_size = cp_world_size
    p.cp_rank = cp_rank
    return keep


def _outputs(total_q, H):
    import numpy as np
    return np.zeros((total_q, H, V_DIM), np.float32), np.zeros((total_q, H), np.float32)


def decode_reference(q, kv_buffer, qo_indptr, kv_indptr, kv_page_indices, kv_last_page_lens,
                     max_seqlen_q, *, page_size=1, sm_scale=None, causal=True, q_scale=None,
                     kv_scale=None, fp8_p_quant=False, g_kv_indptr=None, cp_world_size=1,
                     cp_rank=0):
    """Direct CPU reference of absorbed MLA decode (float64 accumulation).
    q [total_q, H, 576] and kv_buffer [num_pages, page_size, 1, 576] are NumPy arrays of
    ml_dtypes.bfloat16, float16, ml_dtypes.float8_e4m3fn or float8_e4m3fnuz; qo_indptr [B+1],
    kv_indptr [B+1] (pages), kv_page_indices, kv_last_page_lens [B] host int arrays.
    sm_scale None = 1/sqrt(576); q_scale / kv_scale are dequant factors (None = 1).
    Returns (out float32 [total_q, H, 512], lse float32 [total_q, H], natural log; -inf for a
    row that sees no key). Round-robin context parallel (aiter §7): with cp_world_size W > 1 the
    KV given is rank cp_rank's shard (global position p lives on rank p % W) and g_kv_indptr
    [B+1] holds the global KV lengths; causal masks on global positions.
    TypeError / ValueError for bad arrays, MlaInvalidArgument."""
    p, keep, total_q, H = _problem(q, kv_buffer, qo_indptr, kv_indptr, kv_page_indices,
                                   kv_last_page_lens, max_seqlen_q, page_size, sm_scale, causal,
                                   q_scale, kv_scale, fp8_p_quant)
    keep = keep + _set_cp(p, g_kv_indptr, cp_world_size, cp_rank)
    out, lse = _outputs(total_q, H)
    _lib.check(_lib.load().mla_decode_reference(ctypes.byref(p), out.ctypes.data, lse.ctypes.data))
    del keep
    return out, lse


def execute_plan_reference(q, kv_buffer, qo_indptr, kv_indptr, kv_page_indices,
                           kv_last_page_lens, max_seqlen_q, plan, *, page_size=1, sm_scale=None,
                           causal=True, q_scale=None, kv_scale=None, fp8_p_quant=False,
                           g_kv_indptr=None, cp_world_size=1, cp_rank=0):
    """Executes a host Plan's work items on the CPU as the kernels must (unsplit -> out/lse,
    split -> partial rows), then reduces split tiles. Same inputs and outputs as
    decode_reference (round-robin context parallel included: a cprr shard needs a plan made
    with is_cp_round_robin=True), plus the plan (from plan_metadata with the same qo/kv indptr,
    page_size and causal). Raises ValueError for a plan of another batch / heads / page size,
    and MlaInvalidArgument for a plan inconsistent with the problem."""
    if not isinstance(plan, Plan):
        raise TypeError(f"plan must be a libmla.Plan, got {type(plan).__name__}")
    p, keep, total_q, H = _problem(q, kv_buffer, qo_indptr, kv_indptr, kv_page_indices,
                                   kv_last_page_lens, max_seqlen_q, page_size, sm_scale, causal,
                                   q_scale, kv_scale, fp8_p_quant)
    for name, mine, theirs in (("batch_size", p.batch_size, plan.params.batch_size),
                               ("num_heads", H, plan.params.num_heads),
                               ("page_size", p.page_size, plan.params.page_size),
                               ("causal", p.causal, plan.params.causal)):
        if mine != theirs:
            raise ValueError(f"the plan was made for {name} = {theirs}, the problem has {mine}")
    keep = keep + _set_cp(p, g_kv_indptr, cp_world_size, cp_rank)
    out, lse = _outputs(total_q, H)
    buffers = plan.buffers()
    _lib.check(_lib.load().mla_execute_plan_reference(
        ctypes.byref(p), ctypes.byref(plan.params), ctypes.byref(buffers), out.ctypes.data,
        lse.ctypes.data))
    del keep
    return out, lse
