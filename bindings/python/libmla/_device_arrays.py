"""Device arrays seen from Python: torch CUDA tensors, __cuda_array_interface__ objects (v2/v3)
or raw int device pointers, with their shape, element strides, dtype and device, and the checks
that GPU functions run on them before any C call (TypeError / ValueError)."""
import math  # noqa: F401
import numbers
import sys

QK_DIM, V_DIM = 576, 512
DEFAULT_SM_SCALE = 1.0 / math.sqrt(QK_DIM)
_ITEMSIZE = {"bf16": 2, "fp16": 2, "fp8": 1, "fp8_fnuz": 1, "byte": 1, "fp32": 4, "int32": 4,
             "int64": 8, "uint8": 1, "raw1": 1, "raw2": 2}
_CAI_TYPES = {"<f4": "fp32", "<f2": "fp16", "<i4": "int32", "<i8": "int64", "|u1": "uint8",
              "<u1": "uint8", "|i1": "raw1", "|V1": "raw1", "<V2": "raw2", "|V2": "raw2",
              "<u2": "raw2", "<i2": "raw2"}


class DeviceArray:
    """A device pointer with what is known about it: shape and strides (elements) or None for a
    raw pointer, dtype name, device ordinal (None if unknown), whether it is a torch tensor."""

    def __init__(self, ptr, shape=None, strides=None, dtype=None, device=None, is_torch=False,
                 obj=None):
        self.ptr, self.shape, self.strides, self.dtype = int(ptr), shape, strides, dtype
        self.device, self.is_torch, self.obj = device, is_torch, obj


def _torch():
    return sys.modules.get("torch")


def _torch_dtype_name(t):
    torch = _torch()
    table = {torch.bfloat16: "bf16", torch.float16: "fp16", torch.float32: "fp32",
             torch.int32: "int32", torch.int64: "int64", torch.uint8: "uint8", torch.int8: "raw1"}
    for attr, name in (("float8_e4m3fn", "fp8"), ("float8_e4m3fnuz", "fp8_fnuz")):
        if hasattr(torch, attr):
            table[getattr(torch, attr)] = name
    return table.get(t.dtype, str(t.dtype))


def device_array(x, what, required=True):
    """DeviceArray of a torch CUDA tensor, a __cuda_array_interface__ object or an int pointer.
    TypeError for host arrays (NumPy, CPU tensors) and anything else."""
    if x is None:
        if required:
            raise TypeError(f"{what} is required")
        return None
    if isinstance(x, DeviceArray):
        return x
    if isinstance(x, bool):
        raise TypeError(f"{what} must be a device tensor or pointer, got a bool")
    if isinstance(x, numbers.Integral):
        return DeviceArray(int(x))
    torch = _torch()
    if torch is not None and isinstance(x, torch.Tensor):
        if not x.is_cuda:
            raise TypeError(f"{what} must be a CUDA tensor, got a tensor on {x.device}")
        return DeviceArray(x.data_ptr(), tuple(x.shape), tuple(x.stride()), _torch_dtype_name(x),
                           x.device.index, True, x)
    cai = getattr(x, "__cuda_array_interface__", None)
    if cai is not None:
        shape = tuple(int(s) for s in cai["shape"])
        dt = _CAI_TYPES.get(cai["typestr"], cai["typestr"])
        item = _ITEMSIZE.get(dt) or int(cai["typestr"][2:])
        if cai.get("strides") is None:
            strides, acc = [], 1
            for s in reversed(shape):
                strides.insert(0, acc)
                acc *= s
        else:
            if any(s % item for s in cai["strides"]):
                raise ValueError(f"{what}: strides {cai['strides']} are not whole elements")
            strides = [s // item for s in cai["strides"]]
        return DeviceArray(cai["data"][0], shape, tuple(strides), dt, None, False, x)
    if hasattr(x, "__array_interface__") or type(x).__module__ == "numpy":
        raise TypeError(f"{what} must be on the GPU (torch CUDA tensor, __cuda_array_interface__ "
                        f"object or device pointer), got a host array")
    raise TypeError(f"{what} must be a torch CUDA tensor, a __cuda_array_interface__ object or an "
                    f"int device pointer, got {type(x).__name__}")


def _check(a, what, dtypes, shape=None, ndim=None, contiguous_last=True, contiguous=False):
    """Checks a DeviceArray that has a shape (raw pointers pass unchecked)."""
    if a is None or a.shape is None:
        return
    if a.dtype not in dtypes:
        raise TypeError(f"{what} has dtype {a.dtype}, expected {' or '.join(dtypes)}")
    if ndim is not None and len(a.shape) != ndim:
        raise ValueError(f"{what} must have {ndim} dimensions, got shape {a.shape}")
    if shape is not None:
        for i, (got, want) in enumerate(zip(a.shape, shape)):
            if want is not None and got != want:
                raise ValueError(f"{what} must have shape {tuple('*' if w is None else w for w in shape)}"
                                 f", got {a.shape} (dimension {i})")
    if contiguous_last and a.shape and a.shape[-1] > 1 and a.strides[-1] != 1:
        raise ValueError(f"{what}'s last dimension must be contiguous (stride 1), got strides "
                         f"{a.strides}")
    if contiguous:
        acc = 1
        for s, st in zip(reversed(a.shape), reversed(a.strides)):
            if s > 1 and st != acc:
                raise ValueError(f"{what} must be contiguous, got strides {a.strides}")
            acc *= s
