"""The decode launch (mla_decode_fwd, sm_90a) and plans on the device: upload of a host Plan,
the device planner (mla_plan_metadata_device), DevicePlan."""
import ctypes
import math
import numbers

from . import _lib
from . import _types as T
from ._convert import as_flag, as_int
from ._device_arrays import _ITEMSIZE, _check, _torch, device_array
from .device import _device_of, _resolve_stream, context
from .planner import Plan, make_params, _info

QK_DIM, V_DIM = 576, 512
DEFAULT_SM_SCALE = 1.0 / math.sqrt(QK_DIM)


# ---- plans on the device --------------------------------------------------------------------

class DevicePlan:
    """Planner buffers in device memory (torch tensors when torch is used, else DeviceBuffers),
    with the params, info and the device they live on. Made by plan_metadata_device or by
    uploading a host Plan (Plan.to_device)."""

    def __init__(self, params, info, device, arrays, arch):
        self.params, self.info, self.device, self.arch = params, info, device, arch
        self._arrays = arrays  # name -> (owner, ptr)
        for name, (owner, _ptr) in arrays.items():
            setattr(self, name, owner)

    @property
    def batch_size(self):
        return self.params.batch_size

    @property
    def num_heads(self):
        return self.params.num_heads

    def buffers(self):
        b = T.mla_metadata_buffers()
        for name in Plan.BUFFERS:
            setattr(b, name, self._arrays[name][1])
        i = self.info
        b.work_metadata_len = i.work_metadata_len
        b.work_indptr_len = i.work_indptr_len
        b.work_info_set_rows = i.work_info_set_rows
        b.reduce_indptr_len = i.reduce_indptr_len
        b.reduce_final_map_rows = i.reduce_final_map_rows
        b.reduce_partial_map_len = i.reduce_partial_map_len
        return b

    def to_host(self):
        """The buffers as NumPy arrays (a dict), copied back and synchronised."""
        import numpy as np
        out = {}
        for name in Plan.BUFFERS:
            owner, ptr = self._arrays[name]
            if hasattr(owner, "cpu"):
                a = owner.cpu().numpy()
            else:
                ref = _host_layout(self.info)[name]
                a = np.empty_like(ref)
                context(self.device).dtoh(a, ptr)
            out[name] = a.view(np.uint64) if name == "work_metadata" else a
        return out


def _host_layout(info):
    import numpy as np
    return {"work_metadata": np.zeros(info.work_metadata_len, np.uint64),
            "work_indptr": np.zeros(info.work_indptr_len, np.int32),
            "work_info_set": np.zeros((info.work_info_set_rows, 8), np.int32),
            "reduce_indptr": np.zeros(info.reduce_indptr_len, np.int32),
            "reduce_final_map": np.zeros((info.reduce_final_map_rows, 2), np.int32),
            "reduce_partial_map": np.zeros(info.reduce_partial_map_len, np.int32)}


def _alloc(nbytes, device, use_torch, shape=None, torch_dtype=None):
    """(owner, ptr) of fresh device memory: a torch tensor, or a DeviceBuffer."""
    if use_torch:
        torch = _torch()
        t = torch.empty(shape if shape is not None else (max(int(nbytes), 1),),
                        dtype=torch_dtype or torch.uint8, device=f"cuda:{device}")
        return t, t.data_ptr()
    buf = context(device).malloc(nbytes)
    return buf, buf.ptr


def upload_plan(plan, device=0, use_torch=None):
    """Copies a host Plan to a device (work_metadata gets the device addresses); cached on the
    plan until update_metadata changes it. Synchronous."""
    import numpy as np
    if use_torch is None:
        use_torch = _torch() is not None and _torch().cuda.is_available()
    key = (device, bool(use_torch), plan.generation)
    cached = plan._device_copies.get(key)
    if cached is not None:
        return cached
    plan._device_copies = {}
    arrays = {}
    torch = _torch()
    for name in Plan.BUFFERS[1:]:
        a = getattr(plan, name)
        if use_torch:
            t = torch.from_numpy(np.ascontiguousarray(a)).to(f"cuda:{device}")
            arrays[name] = (t, t.data_ptr())
        else:
            buf = context(device).malloc(a.nbytes)
            context(device).htod(buf.ptr, np.ascontiguousarray(a))
            arrays[name] = (buf, buf.ptr)
    meta = plan.work_metadata.copy()
    meta[0], meta[1] = arrays["work_indptr"][1], arrays["work_info_set"][1]
    if use_torch:
        t = torch.from_numpy(meta.view(np.int64)).to(f"cuda:{device}")
        arrays["work_metadata"] = (t, t.data_ptr())
    else:
        buf = context(device).malloc(meta.nbytes)
        context(device).htod(buf.ptr, meta)
        arrays["work_metadata"] = (buf, buf.ptr)
    dp = DevicePlan(plan.params, plan.info, device, arrays, plan.arch)
    plan._device_copies[key] = dp
    return dp


def plan_metadata_device(qo_indptr, kv_indptr, kv_last_page_lens, num_heads, *, max_seqlen_qo,
                         batch_size=None, arch=None, stream=None, device=None, **kw):
    """Device planner (sm_90a): the same buffers as plan_metadata, byte for byte, computed on
    the stream from device-resident int32 qo_indptr / kv_indptr / kv_last_page_lens, without a
    host synchronisation. Keywords as plan_metadata; arch defaults to the context's.
    batch_size is needed only for raw pointers. Returns a DevicePlan."""
    qo = device_array(qo_indptr, "qo_indptr")
    kv = device_array(kv_indptr, "kv_indptr")
    last = device_array(kv_last_page_lens, "kv_last_page_lens")
    if qo.shape is not None:
        _check(qo, "qo_indptr", ("int32",), ndim=1, contiguous=True)
        B = qo.shape[0] - 1
        if batch_size is not None and as_int(batch_size, "batch_size") != B:
            raise ValueError(f"batch_size={batch_size} but qo_indptr has {qo.shape[0]} entries")
    elif batch_size is None:
        raise TypeError("batch_size is required when qo_indptr is a raw pointer")
    else:
        B = as_int(batch_size, "batch_size")
    _check(kv, "kv_indptr", ("int32",), shape=(B + 1,), ndim=1, contiguous=True)
    _check(last, "kv_last_page_lens", ("int32",), shape=(B,), ndim=1, contiguous=True)
    dev = _device_of([qo, kv, last], device)
    use_torch = any(a.is_torch for a in (qo, kv, last))
    ctx = context(dev)
    params = make_params(B, num_heads, arch=arch or ctx.arch, max_seqlen_qo=max_seqlen_qo, **kw)
    info = _info(params)
    torch = _torch()
    layout = _host_layout(info)
    arrays = {}
    for name, ref in layout.items():
        if use_torch:
            tdt = torch.int64 if name == "work_metadata" else torch.int32
            arrays[name] = _alloc(ref.nbytes, dev, True, ref.shape, tdt)
        else:
            arrays[name] = _alloc(ref.nbytes, dev, False)
    dp = DevicePlan(params, info, dev, arrays, arch or ctx.arch)
    buffers = dp.buffers()
    s = _resolve_stream(stream, use_torch, dev)
    _lib.check(_lib.load().mla_plan_metadata_device(ctx.handle, ctypes.byref(params), qo.ptr,
                                                    kv.ptr, last.ptr, ctypes.byref(buffers), s))
    return dp


# ---- decode ---------------------------------------------------------------------------------

def _is_host_array(x):
    """NumPy arrays, lists / tuples and CPU torch tensors (not ints: those are raw pointers)."""
    if isinstance(x, (list, tuple)):
        return True
    if hasattr(x, "__cuda_array_interface__"):
        return False
    torch = _torch()
    if torch is not None and isinstance(x, torch.Tensor):
        return not x.is_cuda
    return hasattr(x, "__array_interface__") or type(x).__module__ == "numpy"


def _scale_ptr(v, what, device, use_torch, keep):
    if v is None:
        v = 1.0
    if isinstance(v, numbers.Real) and not isinstance(v, bool):
        import numpy as np
        if use_torch:
            torch = _torch()
            t = torch.full((1,), float(v), dtype=torch.float32, device=f"cuda:{device}")
            keep.append(t)
            return t.data_ptr()
        buf = context(device).malloc(4)
        context(device).htod(buf.ptr, np.array([v], np.float32))
        keep.append(buf)
        return buf.ptr
    a = device_array(v, what)
    _check(a, what, ("fp32",))
    if a.shape is not None and math.prod(a.shape) != 1:
        raise ValueError(f"{what} must hold one float32, got shape {a.shape}")
    return a.ptr


def _host_lens(kv_indptr, kv_last_page_lens, page_size):
    """Local KV lengths in tokens of each request from a host CSR page table."""
    import numpy as np
    kv = np.asarray(kv_indptr, dtype=np.int64)
    last = np.asarray(kv_last_page_lens, dtype=np.int64)
    pages = np.diff(kv)
    return np.where(pages > 0, (pages - 1) * page_size + last, 0)


def check_cp_shard(g_kv_indptr, kv_indptr, kv_last_page_lens, page_size, cp_world_size, cp_rank):
    """Checks a round-robin context-parallel shard on the host (what mla_decode_fwd cannot do
    without a synchronisation): g_kv_indptr [B+1] prefix sums of the global KV lengths (int,
    starting >= 0, never decreasing, each length < 2^31), and for every request b the local
    length of the page table (kv_indptr [B+1] in pages, kv_last_page_lens [B], page_size) equal
    to ceil((G_b - cp_rank) / W) tokens (0 when G_b <= cp_rank), where rank cp_rank holds global
    positions cp_rank, cp_rank + W, ... Host arrays (NumPy, lists, CPU tensors). Raises
    TypeError / ValueError naming the first request that disagrees; returns None."""
    import numpy as np
    from ._convert import host_int32
    W = as_int(cp_world_size, "cp_world_size")
    r = as_int(cp_rank, "cp_rank")
    if W < 1:
        raise ValueError(f"cp_world_size {W} < 1 (1 = no context parallel)")
    if not 0 <= r < W:
        raise ValueError(f"cp_rank {r} is outside [0, cp_world_size = {W})")
    kv = host_int32(kv_indptr, "kv_indptr", min_length=1)
    B = kv.shape[0] - 1
    last = host_int32(kv_last_page_lens, "kv_last_page_lens", length=B)
    g = host_int32(g_kv_indptr, "g_kv_indptr", length=B + 1)
    if g[0] < 0 or np.any(np.diff(g.astype(np.int64)) < 0):
        raise ValueError(f"g_kv_indptr must start >= 0 and never decrease: {g.tolist()[:16]}")
    G = np.diff(g.astype(np.int64))
    want = np.where(G > r, (G - r + W - 1) // W, 0)
    have = _host_lens(kv, last, as_int(page_size, "page_size"))
    bad = np.nonzero(have != want)[0]
    if bad.size:
        b = int(bad[0])
        raise ValueError(f"request {b}: the local page table holds {int(have[b])} tokens, but "
                         f"rank {r} of {W} holds {int(want[b])} of its {int(G[b])} global tokens "
                         f"(g_kv_indptr); {bad.size} of {B} requests disagree")


def _to_host(a, what, device):
    """A small int32 device array copied to a NumPy array (synchronises)."""
    import numpy as np
    if a.is_torch:
        return a.obj.detach().cpu().numpy()
    if a.shape is None:
        raise TypeError(f"validate=True needs {what} with a shape (not a raw pointer)")
    h = np.empty(a.shape, np.int32)
    context(device).dtoh(h, a.ptr)
    return h


def _out_dtype_name(out_dtype):
    """'bf16' / 'fp32' of decode's out_dtype argument (a string or a torch / NumPy dtype)."""
    from ._convert import dtype_name
    name = dtype_name(out_dtype) if not isinstance(out_dtype, bool) else None
    if name not in ("bf16", "fp32"):
        raise ValueError(f"out_dtype must be 'bf16' or 'fp32' (or torch.bfloat16 / "
                         f"torch.float32), got {out_dtype!r}")
    return name


def decode(q, kv_buffer, qo_indptr, kv_indptr, kv_page_indices, kv_last_page_lens, max_seqlen_q,
           plan, *, page_size=None, sm_scale=None, causal=None, q_scale=None, kv_scale=None,
           out=None, lse=None, return_lse=False, block_table=None, seq_lens=None, workspace=None,
           error_flag=None, stream=None, device=None, num_pages=None, total_q=None,
           g_kv_indptr=None, cp_world_size=1, cp_rank=0, validate=False, out_dtype=None,
           tile_counters=None, active_clusters=0, no_split_tiles=False):
    """Absorbed MLA decode on the GPU (mla_decode_fwd, sm_90a): the persistent decode kernel
    driven by the plan's work items, then the reducer for split tiles. Nothing synchronises.

    q [total_q, H, 576] bf16 or fp8 (e4m3fn); kv_buffer [num_pages, page_size, 1, 576] (or
    [num_pages, page_size, 576]) bf16 or fp8, rows contiguous; qo_indptr [B+1], kv_indptr [B+1]
    (pages), kv_page_indices, kv_last_page_lens [B]: int32 device arrays (the arrays the plan was
    made from). plan: a host Plan (uploaded once per device and cached) or a DevicePlan.
    page_size / causal default to the plan's; sm_scale None = 1/sqrt(576); q_scale / kv_scale:
    floats or one-element float32 device tensors (fp8 only; None = 1). block_table [B, stride]
    int32 (FlashMLA / vLLM form) replaces kv_page_indices (pass None for it). out [total_q, H,
    512] bf16 and lse [total_q, H] float32 are allocated with torch when not given (torch inputs
    only). out may also be float32 (mla_decode_args.out_dtype fp32: written without the final
    bf16 rounding, e.g. context-parallel partials for merge_attn_states); out_dtype ('bf16' or
    'fp32', or torch.bfloat16 / torch.float32) picks the dtype of an allocated out (default
    'bf16') and, with a given out, must agree with its dtype; a raw int out pointer is bf16
    unless out_dtype='fp32'. workspace: device memory of plan.info.workspace_bytes (default:
    torch, else a scratch buffer of the context). error_flag: int32 [1] device memory (caller
    zeroes it). Raw int pointers need num_pages (and total_q unless the plan is a host Plan).
    tile_counters: int32 device memory of at least plan.info.reduce_indptr_len - 1 elements,
    zeroed by the caller once (e.g. torch.zeros) and left zeroed by every call: with it the
    16- and 32-row bf16 kernels reduce split tiles themselves, one launch per call instead of
    two, where the reducer's table row allows it (many split tiles; a plan of a few long-split
    tiles keeps the slim reducer) (mla_decode_args.tile_counters; one buffer per stream that
    decodes concurrently).
    None: the reducer kernel runs after the decode kernel. active_clusters: launch only that many
    of the plan's clusters (mla_decode_args.active_clusters; a host Plan's
    plan.summary.active_clusters covers every work, and leaving out the empty trailing clusters
    saves ~0.3-0.4% of the decode's time per cluster on the H200); 0 = every cluster. With a host
    Plan a count that leaves works out raises ValueError; with a DevicePlan the kernel flags it
    (error_flag 4). no_split_tiles=True (mla_decode_args.no_split_tiles): the plan splits no qo
    tile (a host Plan's plan.summary.num_split_tiles == 0), so the decode kernel runs alone, with
    no reducer launch after it (0.1-7.7 us less a call on the H200 where the plan's sizes allow
    splits, 5.0-7.7 at 64 and 128 heads: docs/performance.md, session 31); with a host Plan that did split a tile it raises ValueError, with a DevicePlan the
    kernel rejects the split works and flags them (error_flag 4).

    Round-robin context parallel (docs/context-parallel.md): cp_world_size W > 1 decodes rank
    cp_rank's shard (global KV position p of a request lives on rank p % W; the page table
    describes the rank's LOCAL tokens, local token j = global position j * W + cp_rank) with the
    causal mask on global positions, giving this rank's partial out / lse for every row (merge
    them with merge_attn_states). The plan must be made with is_cp_round_robin=True (and
    causal). g_kv_indptr [B+1] int32: prefix sums of the GLOBAL KV lengths in tokens, a device
    array, or a host array (NumPy / list / CPU tensor), which is checked against the plan's
    host page table (a host Plan) and uploaded. validate=True also copies g_kv_indptr,
    kv_indptr and kv_last_page_lens from the device and checks that every local length is
    ceil((G_b - cp_rank) / W) (check_cp_shard; this synchronises, so it is off by default: the
    C call cannot check device contents).

    Returns out, or (out, lse) when return_lse or lse is given.
    Raises TypeError / ValueError for wrong dtype, shape or device (and context-parallel
    arguments that disagree) before any C call; MlaInvalidArgument, MlaBufferTooSmall,
    MlaUnsupported, MlaNoKernel, MlaCodeObjectError, MlaLaunchError from the launch,
    MlaRuntimeUnavailable / MlaNoDevice without a GPU."""
    if not isinstance(plan, (Plan, DevicePlan)):
        raise TypeError(f"plan must be a libmla.Plan or DevicePlan, got {type(plan).__name__}")
    prm = plan.params
    B, H = prm.batch_size, prm.num_heads
    q_name = T.DTYPE_STRINGS[T.DType(prm.q_dtype)]
    kv_name = T.DTYPE_STRINGS[T.DType(prm.kv_dtype)]
    page_size = prm.page_size if page_size is None else as_int(page_size, "page_size")
    causal = prm.causal if causal is None else as_flag(causal, "causal")
    max_seqlen_q = as_int(max_seqlen_q, "max_seqlen_q")
    W = as_int(cp_world_size, "cp_world_size")
    cp_rank = as_int(cp_rank, "cp_rank")
    validate = as_flag(validate, "validate")
    od = None if out_dtype is None else _out_dtype_name(out_dtype)
    if W < 1:
        raise ValueError(f"cp_world_size {W} < 1 (1 = no context parallel)")
    if not 0 <= cp_rank < W:
        raise ValueError(f"cp_rank {cp_rank} is outside [0, cp_world_size = {W})")
    g_host = ga = None
    if W > 1:
        if g_kv_indptr is None:
            raise TypeError(f"cp_world_size {W} (round-robin context parallel) needs g_kv_indptr, "
                            f"the [B+1] prefix sums of the global KV lengths")
        if not causal:
            raise ValueError(f"round-robin context parallel (cp_world_size {W}) is causal only: "
                             f"causal must be True")
        if not prm.is_cp_round_robin:
            raise ValueError(f"cp_world_size {W} but the plan was made with "
                             f"is_cp_round_robin=False (plan each rank's shard with "
                             f"is_cp_round_robin=True: the causal trim drops keys a row sees)")
        if _is_host_array(g_kv_indptr):
            from ._convert import host_int32
            g_host = host_int32(g_kv_indptr, "g_kv_indptr", length=B + 1)
            if isinstance(plan, Plan):  # the page table the plan was made from, on the host
                check_cp_shard(g_host, plan.kv_indptr, plan.kv_last_page_lens, page_size, W,
                               cp_rank)
        else:
            ga = device_array(g_kv_indptr, "g_kv_indptr")
            _check(ga, "g_kv_indptr", ("int32",), shape=(B + 1,), ndim=1, contiguous=True)
    elif prm.is_cp_round_robin:
        raise ValueError("the plan was made with is_cp_round_robin=True but cp_world_size is 1 "
                         "(pass cp_world_size, cp_rank and g_kv_indptr for a round-robin shard, "
                         "or plan with is_cp_round_robin=False)")

    qa = device_array(q, "q")
    ka = device_array(kv_buffer, "kv_buffer")
    qo = device_array(qo_indptr, "qo_indptr")
    kvp = device_array(kv_indptr, "kv_indptr")
    pages = device_array(kv_page_indices, "kv_page_indices", required=block_table is None)
    last = device_array(kv_last_page_lens, "kv_last_page_lens")
    bt = device_array(block_table, "block_table", required=False)
    sl = device_array(seq_lens, "seq_lens", required=False)
    oa = device_array(out, "out", required=False)
    la = device_array(lse, "lse", required=False)
    ef = device_array(error_flag, "error_flag", required=False)
    ws = device_array(workspace, "workspace", required=False)
    tc = device_array(tile_counters, "tile_counters", required=False)

    def raw_ok(name):  # CAI / raw: accept an element type of the right size for bf16 / fp8
        return (name, {1: "raw1", 2: "raw2"}[_ITEMSIZE[name]],
                {1: "uint8", 2: "raw2"}[_ITEMSIZE[name]])

    q_ok = (q_name,) if qa.is_torch else raw_ok(q_name)
    kv_ok = (kv_name,) if ka.is_torch else raw_ok(kv_name)
    if qa.shape is not None:
        _check(qa, "q", q_ok, shape=(None, H, QK_DIM), ndim=3)
        total = qa.shape[0]
    elif total_q is not None:
        total = as_int(total_q, "total_q")
    elif isinstance(plan, Plan):
        total = int(plan.qo_indptr[-1])
    else:
        raise TypeError("total_q is required when q is a raw pointer and the plan is on the device")
    if total_q is not None and as_int(total_q, "total_q") != total:
        raise ValueError(f"total_q={total_q} but q has {total} rows")
    if isinstance(plan, Plan) and int(plan.qo_indptr[-1]) != total:
        raise ValueError(f"the plan was made for {int(plan.qo_indptr[-1])} query rows, q has {total}")
    active_clusters = as_int(active_clusters, "active_clusters")
    if isinstance(plan, Plan) and active_clusters > 0:  # the host plan says which clusters hold works
        wi = plan.work_indptr
        if active_clusters >= len(wi) or int(wi[active_clusters]) != int(wi[-1]):
            raise ValueError(f"active_clusters={active_clusters} leaves works of the plan out "
                             f"(plan.summary.active_clusters is {plan.summary.active_clusters})")
    if not isinstance(no_split_tiles, bool):
        raise TypeError(f"no_split_tiles must be a bool, got {type(no_split_tiles).__name__}")
    if isinstance(plan, Plan) and no_split_tiles and plan.summary.num_split_tiles != 0:
        raise ValueError(f"no_split_tiles=True but the plan splits {plan.summary.num_split_tiles} tiles "
                         "(plan.summary.num_split_tiles)")

    kv_stride_page = 0
    if ka.shape is not None:
        shp, st = ka.shape, ka.strides
        if len(shp) == 4:
            _check(ka, "kv_buffer", kv_ok, shape=(None, page_size, 1, QK_DIM), ndim=4)
        else:
            _check(ka, "kv_buffer", kv_ok, shape=(None, page_size, QK_DIM), ndim=3)
        if shp[1] > 1 and st[1] != QK_DIM:
            raise ValueError(f"kv_buffer rows must be contiguous within a page, got strides {st}")
        n_pages = shp[0]
        kv_stride_page = st[0] if shp[0] > 1 else page_size * QK_DIM
        if num_pages is not None and as_int(num_pages, "num_pages") != n_pages:
            raise ValueError(f"num_pages={num_pages} but kv_buffer has {n_pages} pages")
    elif num_pages is None:
        raise TypeError("num_pages is required when kv_buffer is a raw pointer")
    else:
        n_pages = as_int(num_pages, "num_pages")

    _check(qo, "qo_indptr", ("int32",), shape=(B + 1,), ndim=1, contiguous=True)
    _check(kvp, "kv_indptr", ("int32",), shape=(B + 1,), ndim=1, contiguous=True)
    _check(last, "kv_last_page_lens", ("int32",), shape=(B,), ndim=1, contiguous=True)
    num_page_indices = 0
    if pages is not None:
        _check(pages, "kv_page_indices", ("int32",), ndim=1, contiguous=True)
        if pages.shape is not None:
            num_page_indices = pages.shape[0]
        elif isinstance(plan, Plan):
            num_page_indices = int(plan.kv_indptr[-1])
        else:
            raise TypeError("a raw kv_page_indices pointer needs a host Plan (for its length)")
    bt_stride = 0
    if bt is not None:
        if pages is not None:
            raise ValueError("give kv_page_indices or block_table, not both")
        if bt.shape is None:
            raise TypeError("block_table must be a tensor (its row stride is needed)")
        _check(bt, "block_table", ("int32",), shape=(B, None), ndim=2)
        bt_stride = bt.strides[0]
    _check(sl, "seq_lens", ("int32",), shape=(B,), ndim=1, contiguous=True)

    arrays = [qa, ka, qo, kvp, pages, last, bt, sl, oa, la, ef, ws, ga]
    dev = _device_of(arrays, device)
    if isinstance(plan, DevicePlan) and plan.device != dev:
        raise ValueError(f"the plan is on cuda:{plan.device}, the tensors on cuda:{dev}")
    use_torch = any(a is not None and a.is_torch for a in arrays)
    torch = _torch()

    keep = []
    if oa is None:
        if not use_torch:
            raise TypeError("out is required when no torch tensors are given")
        tdt = torch.float32 if od == "fp32" else torch.bfloat16
        out = torch.empty((total, H, V_DIM), dtype=tdt, device=f"cuda:{dev}")
        oa = device_array(out, "out")
    if oa.shape is not None:  # out's dtype decides; out_dtype, when given, must agree
        out_ok = ("bf16", "fp32") if oa.is_torch else ("bf16", "raw2", "fp32")
        _check(oa, "out", out_ok, shape=(total, H, V_DIM), ndim=3)
        have = "fp32" if oa.dtype == "fp32" else "bf16"
        if od is not None and od != have:
            raise TypeError(f"out has dtype {oa.dtype} but out_dtype={out_dtype!r}: give a "
                            f"{'float32' if od == 'fp32' else 'bfloat16'} out, or leave out_dtype "
                            f"None (taken from out)")
        od = have
    elif od is None:
        od = "bf16"  # a raw out pointer: bf16 unless out_dtype says fp32
    want_lse = bool(return_lse) or la is not None
    if want_lse and la is None:
        if not use_torch:
            raise TypeError("lse is required (return_lse) when no torch tensors are given")
        lse = torch.empty((total, H), dtype=torch.float32, device=f"cuda:{dev}")
        la = device_array(lse, "lse")
    _check(la, "lse", ("fp32",), shape=(total, H), ndim=2, contiguous=True)
    _check(ef, "error_flag", ("int32",), contiguous=True)
    _check(tc, "tile_counters", ("int32",), contiguous=True)

    g_ptr = None
    if W > 1:
        if validate:  # copy the small index arrays back (synchronises) and check the shard
            g_chk = g_host if g_host is not None else _to_host(ga, "g_kv_indptr", dev)
            if isinstance(plan, Plan) and (kvp.shape is None or last.shape is None):
                kv_chk, last_chk = plan.kv_indptr, plan.kv_last_page_lens  # raw pointers
            else:
                kv_chk = _to_host(kvp, "kv_indptr", dev)
                last_chk = _to_host(last, "kv_last_page_lens", dev)
            check_cp_shard(g_chk, kv_chk, last_chk, page_size, W, cp_rank)
        if g_host is not None:  # upload a host g_kv_indptr
            import numpy as np
            if use_torch:
                gt = torch.from_numpy(np.ascontiguousarray(g_host)).to(f"cuda:{dev}")
                keep.append(gt)
                g_ptr = gt.data_ptr()
            else:
                gbuf = context(dev).malloc(g_host.nbytes)
                context(dev).htod(gbuf.ptr, g_host)
                keep.append(gbuf)
                g_ptr = gbuf.ptr
        else:
            g_ptr = ga.ptr

    q_is_fp8 = q_name in ("fp8", "fp8_fnuz")
    kv_is_fp8 = kv_name in ("fp8", "fp8_fnuz")
    q_scale_ptr = _scale_ptr(q_scale, "q_scale", dev, use_torch, keep) if q_is_fp8 else None
    kv_scale_ptr = _scale_ptr(kv_scale, "kv_scale", dev, use_torch, keep) if kv_is_fp8 else None

    dplan = plan if isinstance(plan, DevicePlan) else upload_plan(plan, dev, use_torch)
    ctx = context(dev)
    need = plan.info.workspace_bytes
    if ws is None:
        if need > 0:
            if use_torch:
                wt = torch.empty((need,), dtype=torch.uint8, device=f"cuda:{dev}")
                keep.append(wt)
                ws_ptr, ws_bytes = wt.data_ptr(), need
            else:
                buf = ctx.scratch(need)
                ws_ptr, ws_bytes = buf.ptr, buf.nbytes
        else:
            ws_ptr, ws_bytes = None, 0
    else:
        ws_ptr = ws.ptr
        if ws.shape is not None:
            ws_bytes = math.prod(ws.shape) * _ITEMSIZE.get(ws.dtype, 1)
        else:
            ws_bytes = need  # a raw pointer: the caller vouches for the size
    tc_len = 0
    if tc is not None:  # a raw pointer: the caller vouches for one counter per planned tile
        tc_len = math.prod(tc.shape) if tc.shape is not None else max(plan.info.reduce_indptr_len - 1, 0)
    s = _resolve_stream(stream, use_torch, dev)

    buffers = dplan.buffers()
    args = T.mla_decode_args(
        q_dtype=prm.q_dtype, kv_dtype=prm.kv_dtype, batch_size=B, num_heads=H,
        max_seqlen_q=max_seqlen_q, total_q=total, page_size=page_size, num_pages=n_pages,
        causal=causal, softmax_scale=DEFAULT_SM_SCALE if sm_scale is None else float(sm_scale),
        q_scale=q_scale_ptr, kv_scale=kv_scale_ptr, q=qa.ptr,
        q_stride_token=qa.strides[0] if qa.strides else 0,
        q_stride_head=qa.strides[1] if qa.strides else 0,
        kv_cache=ka.ptr, kv_stride_page=kv_stride_page, qo_indptr=qo.ptr, kv_indptr=kvp.ptr,
        kv_page_indices=pages.ptr if pages is not None else None,
        kv_last_page_lens=last.ptr, num_page_indices=num_page_indices,
        block_table=bt.ptr if bt is not None else None, block_table_stride=bt_stride,
        seq_lens=sl.ptr if sl is not None else None, out=oa.ptr,
        out_stride_token=oa.strides[0] if oa.strides else 0,
        out_stride_head=oa.strides[1] if oa.strides else 0,
        lse=la.ptr if la is not None else None, plan=ctypes.pointer(buffers),
        plan_params=ctypes.pointer(prm), workspace=ws_ptr, workspace_bytes=ws_bytes,
        error_flag=ef.ptr if ef is not None else None, g_kv_indptr=g_ptr, cp_world_size=W,
        cp_rank=cp_rank if W > 1 else 0, out_dtype=T.DType.FP32 if od == "fp32" else T.DType.BF16,
        tile_counters=tc.ptr if tc is not None else None, tile_counters_len=tc_len,
        active_clusters=active_clusters, no_split_tiles=1 if no_split_tiles else 0)
    _lib.check(_lib.load().mla_decode_fwd(ctx.handle, ctypes.byref(args), s))
    if use_torch and keep:
        # Temporaries (scales, workspace) must outlive the kernels: tell the caching allocator.
        tstream = torch.cuda.ExternalStream(s) if s else torch.cuda.default_stream(dev)
        for t in keep:
            if hasattr(t, "record_stream"):
                t.record_stream(tstream)
    elif keep:
        ctx.synchronize(s)  # DeviceBuffer temporaries are freed when this returns
    out_obj = out if out is not None else oa.ptr
    if want_lse:
        return out_obj, (lse if lse is not None else la.ptr)
    return out_obj
