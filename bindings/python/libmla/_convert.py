"""Argument checks and conversions shared by the wrappers. Everything here raises TypeError /
ValueError before any C call; NumPy, ml_dtypes and torch are imported only when used."""
import numbers
import sys

from . import _types as T


def as_int(v, what):
    """A Python int (or NumPy integer); bool and floats are TypeError (aiter's rule)."""
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise TypeError(f"{what} must be an int, got {type(v).__name__} {v!r}")
    v = int(v)
    if not -(1 << 31) <= v < (1 << 31):
        raise ValueError(f"{what} = {v} does not fit in int32")
    return v


def as_flag(v, what):
    """bool / 0 / 1 -> 0 or 1."""
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, numbers.Integral) and int(v) in (0, 1):
        return int(v)
    raise TypeError(f"{what} must be a bool, got {type(v).__name__} {v!r}")


def _ml_dtypes():
    try:
        import ml_dtypes
    except ImportError as e:  # pragma: no cover - ml_dtypes is a dependency of the package
        raise ImportError("bf16 / fp8 host arrays need the ml_dtypes package "
                          "(pip install ml_dtypes)") from e
    return ml_dtypes


def numpy_dtype(name):
    """NumPy dtype of a libmla dtype string ("bf16" -> ml_dtypes.bfloat16, "fp8" ->
    ml_dtypes.float8_e4m3fn, "fp8_fnuz" -> float8_e4m3fnuz, "fp16", "fp32", "byte" -> uint8)."""
    import numpy as np
    if name == "fp16":
        return np.dtype(np.float16)
    if name == "fp32":
        return np.dtype(np.float32)
    if name == "byte":
        return np.dtype(np.uint8)
    m = _ml_dtypes()
    table = {"bf16": m.bfloat16, "fp8": m.float8_e4m3fn, "fp8_fnuz": m.float8_e4m3fnuz}
    if name not in table:
        raise ValueError(f"unknown dtype {name!r} (bf16, fp16, fp8, fp8_fnuz, byte, fp32)")
    return np.dtype(table[name])


def dtype_name(d):
    """libmla dtype string of a str / NumPy / ml_dtypes / torch dtype, or None if it has none."""
    if isinstance(d, str):
        return d if d in T.DTYPE_NAMES else None
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(d, torch.dtype):
        table = {torch.bfloat16: "bf16", torch.float16: "fp16", torch.float32: "fp32",
                 torch.uint8: "byte", torch.int8: "byte"}
        for attr, name in (("float8_e4m3fn", "fp8"), ("float8_e4m3fnuz", "fp8_fnuz")):
            if hasattr(torch, attr):
                table[getattr(torch, attr)] = name
        return table.get(d)
    try:
        import numpy as np
        d = np.dtype(d)
    except Exception:
        return None
    if d == np.float16:
        return "fp16"
    if d == np.float32:
        return "fp32"
    if d in (np.uint8, np.int8):
        return "byte"
    name = getattr(d, "name", "")
    return {"bfloat16": "bf16", "float8_e4m3fn": "fp8", "float8_e4m3fnuz": "fp8_fnuz"}.get(name)


def dtype_enum(d, what):
    """mla_dtype value of a dtype string or dtype object; ValueError for an unknown one."""
    if d is None:
        raise TypeError(f"{what} is required")
    name = dtype_name(d)
    if name is None:
        raise ValueError(f"{what} {d!r} is not a libmla dtype (bf16, fp16, fp8, fp8_fnuz, byte, "
                         f"fp32)")
    return int(T.DTYPE_NAMES[name])


def is_device_object(x):
    """True for torch CUDA tensors and objects with __cuda_array_interface__."""
    if hasattr(x, "__cuda_array_interface__"):
        return True
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(x, torch.Tensor) and x.is_cuda


def host_int32(x, what, length=None, min_length=None):
    """A host index array as a C-contiguous int32 NumPy array (lists, NumPy integer arrays, CPU
    torch tensors). TypeError for non-integer dtypes and device tensors; ValueError for a wrong
    rank, length or a value outside int32."""
    import numpy as np
    if x is None:
        raise TypeError(f"{what} is required")
    if is_device_object(x):
        raise TypeError(f"{what} must be a host array (NumPy / list); got a device tensor")
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        x = x.numpy()
    a = np.asarray(x)
    if a.dtype == np.bool_ or not (np.issubdtype(a.dtype, np.integer) or a.size == 0):
        raise TypeError(f"{what} must be an integer array, got dtype {a.dtype}")
    if a.ndim != 1:
        raise ValueError(f"{what} must be 1-D, got shape {a.shape}")
    if a.size and (a.min() < -(1 << 31) or a.max() >= (1 << 31)):
        raise ValueError(f"{what} has values outside int32")
    if length is not None and a.shape[0] != length:
        raise ValueError(f"{what} must have {length} entries, got {a.shape[0]}")
    if min_length is not None and a.shape[0] < min_length:
        raise ValueError(f"{what} must have at least {min_length} entries, got {a.shape[0]}")
    return np.ascontiguousarray(a, dtype=np.int32)


def host_indptrs(qo_indptr, kv_indptr, kv_last_page_lens, kv_page_indices=None):
    """Checks the CSR inputs of a batch (lengths B+1 / B+1 / B, non-decreasing, last pages)."""
    import numpy as np
    qo = host_int32(qo_indptr, "qo_indptr", min_length=1)
    B = qo.shape[0] - 1
    kv = host_int32(kv_indptr, "kv_indptr", length=B + 1)
    last = host_int32(kv_last_page_lens, "kv_last_page_lens", length=B)
    for name, a in (("qo_indptr", qo), ("kv_indptr", kv)):
        if a[0] < 0 or np.any(np.diff(a) < 0):
            raise ValueError(f"{name} must start >= 0 and never decrease: {a.tolist()}")
    out = [qo, kv, last]
    if kv_page_indices is not None:
        pages = host_int32(kv_page_indices, "kv_page_indices", min_length=int(kv[-1]))
        out.append(pages)
    return out
