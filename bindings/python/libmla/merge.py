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


def _rank_stride(a, what):
    """Elements from rank k's block of a [W, ...] device array to rank k + 1's (0 for W = 1): the
    dimensions after the first must be contiguous, the ranks' blocks must not overlap."""
    acc = 1
    for s, st in zip(reversed(a.shape[1:]), reversed(a.strides[1:])):
        if s > 1 and st != acc:
            raise ValueError(f"{what}: each rank's block must be contiguous, got strides {a.strides}")
        acc *= s
    block = acc
    if a.shape[0] <= 1:
        return 0
    if a.strides[0] < block:
        raise ValueError(f"{what}: the ranks' blocks overlap (rank stride {a.strides[0]} < "
                         f"{block} elements)")
    return a.strides[0]


def merge_attn_states(partial_out, partial_lse, *, out=None, lse=None, return_lse=True,
                      stream=None, device=None):
    """The merge on the GPU (sm_90a code object, mla_merge_attn_states): partial_out
    [W, total_q, H, 512] float32 or bfloat16 and partial_lse [W, total_q, H] float32, torch CUDA
    tensors (or __cuda_array_interface__ objects), each rank's [total_q, H, ...] block contiguous,
    the ranks any stride apart (partial_*_rank_stride): views of one all-gather buffer of packed
    per-rank (out, lse) bytes are merged without copying them apart. Returns (out [total_q, H, 512]
    bfloat16, lse [total_q, H] float32 or None); out / lse may be given (contiguous, same device).
    Runs on torch's current stream by default. TypeError / ValueError before any C call;
    MlaError from the library."""
    from ._device_arrays import _check, _torch, device_array
    from .device import _device_of, _resolve_stream, context
    po = device_array(partial_out, "partial_out")
    pl = device_array(partial_lse, "partial_lse")
    if po.shape is None or pl.shape is None:
        raise TypeError("partial_out and partial_lse must be tensors with a shape (not raw pointers)")
    _check(po, "partial_out", ("fp32", "bf16"), ndim=4)
    if po.shape[3] != V_DIM:
        raise ValueError(f"partial_out must be [W, total_q, H, {V_DIM}], got {po.shape}")
    W, total_q, H, _ = po.shape
    _check(pl, "partial_lse", ("fp32",), shape=(W, total_q, H), ndim=3)
    out_stride = _rank_stride(po, "partial_out")
    lse_stride = _rank_stride(pl, "partial_lse")
    use_torch = po.is_torch
    dev = _device_of([po, pl], device)
    if out is None:
        if not use_torch:
            raise TypeError("out is required when the inputs are not torch tensors")
        torch = _torch()
        out = torch.empty((total_q, H, V_DIM), dtype=torch.bfloat16, device=f"cuda:{dev}")
    if lse is None and return_lse:
        if not use_torch:
            raise TypeError("lse is required (or return_lse=False) when the inputs are not torch "
                            "tensors")
        torch = _torch()
        lse = torch.empty((total_q, H), dtype=torch.float32, device=f"cuda:{dev}")
    o = device_array(out, "out")
    _check(o, "out", ("bf16",), shape=(total_q, H, V_DIM), ndim=3, contiguous=True)
    lo = device_array(lse, "lse", required=False)
    _check(lo, "lse", ("fp32",), shape=(total_q, H), ndim=2, contiguous=True)
    _device_of([po, pl, o, lo], dev)
    a = T.mla_merge_args()
    a.world_size, a.total_q, a.num_heads = W, total_q, H
    a.partial_dtype = T.DType.FP32 if po.dtype == "fp32" else T.DType.BF16
    a.out_dtype = T.DType.BF16
    a.partial_out, a.partial_lse, a.out = po.ptr, pl.ptr, o.ptr
    a.partial_out_rank_stride, a.partial_lse_rank_stride = out_stride, lse_stride
    a.lse = lo.ptr if lo is not None else None
    ctx = context(dev)
    st = _resolve_stream(stream, use_torch, dev)
    _lib.check(_lib.load().mla_merge_attn_states(ctx.handle, ctypes.byref(a), st))
    return out, lse
