"""Merging partial attention states (context parallel, issue 9): W partial (O, LSE) pairs of the
same query rows, e.g. one per rank of a round-robin KV shard, into the final O and LSE:
lse* = log sum_k exp(lse_k), o = sum_k exp(lse_k - lse*) o_k (natural log). A partial whose LSE is
not finite (a rank that saw no key for the row) gets weight 0 and its O is never read; if none is
finite the row gets O = 0 and LSE = -inf. This is the host version (float64 accumulation,
mla_merge_attn_states_host); the device version is the C function mla_merge_attn_states."""
import ctypes

from . import _lib
from . import _types as T
from ._convert import is_device_object

V_DIM = 512


def merge_attn_states_host(partial_out, partial_lse, *, out_dtype="fp32"):
    """Merges partial_out [W, total_q, H, 512] (float32, or bfloat16 through ml_dtypes) and
    partial_lse [W, total_q, H] float32 (host NumPy arrays). Returns (out [total_q, H, 512] in
    out_dtype "fp32" or "bf16", lse [total_q, H] float32). Raises TypeError / ValueError for
    wrong dtypes, shapes or device arrays before any C call, MlaError from the library."""
    import numpy as np
    import ml_dtypes
    for name, a in (("partial_out", partial_out), ("partial_lse", partial_lse)):
        if is_device_object(a):
            raise TypeError(f"{name} must be a host NumPy array; got a device tensor")
        if not isinstance(a, np.ndarray):
            raise TypeError(f"{name} must be a NumPy array, got {type(a).__name__}")
    if partial_out.dtype == np.float32:
        p_dtype = T.DType.FP32
    elif partial_out.dtype == ml_dtypes.bfloat16:
        p_dtype = T.DType.BF16
    else:
        raise TypeError(f"partial_out has dtype {partial_out.dtype}; expected float32 or bfloat16")
    if partial_lse.dtype != np.float32:
        raise TypeError(f"partial_lse has dtype {partial_lse.dtype}; expected float32")
    if partial_out.ndim != 4 or partial_out.shape[3] != V_DIM:
        raise ValueError(f"partial_out must be [W, total_q, H, {V_DIM}], got {partial_out.shape}")
    if partial_lse.shape != partial_out.shape[:3]:
        raise ValueError(f"partial_lse must be {partial_out.shape[:3]} (W, total_q, H), got "
                         f"{partial_lse.shape}")
    if out_dtype == "fp32":
        o_dtype, o_np = T.DType.FP32, np.float32
    elif out_dtype == "bf16":
        o_dtype, o_np = T.DType.BF16, ml_dtypes.bfloat16
    else:
        raise ValueError(f"out_dtype must be 'fp32' or 'bf16', got {out_dtype!r}")
    W, total_q, H, _ = partial_out.shape
    if W < 1 or H < 1:
        raise ValueError(f"need W >= 1 and H >= 1, got W={W}, H={H}")
    po = np.ascontiguousarray(partial_out)
    pl = np.ascontiguousarray(partial_lse)
    out = np.zeros((total_q, H, V_DIM), o_np)
    lse = np.zeros((total_q, H), np.float32)
    a = T.mla_merge_args()
    a.world_size, a.total_q, a.num_heads = W, total_q, H
    a.partial_dtype, a.out_dtype = p_dtype, o_dtype
    a.partial_out = po.ctypes.data
    a.partial_lse = pl.ctypes.data
    a.out = out.ctypes.data
    a.lse = lse.ctypes.data
    _lib.check(_lib.load().mla_merge_attn_states_host(ctypes.byref(a)))
    return out, lse
