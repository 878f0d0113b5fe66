"""GPU contexts (one per device, cached), device memory helpers, streams, and the small device
kernels (smoke, copy). GPU functions take torch CUDA tensors, __cuda_array_interface__ objects
or raw device pointers; the stream defaults to torch's current stream of the tensors' device when
the tensors are torch, else 0 (the default stream)."""
import ctypes
import math
import numbers
import threading

from . import _lib
from . import _types as T
from ._convert import as_int
from ._device_arrays import _ITEMSIZE, _check, _torch, device_array

# ---- contexts -------------------------------------------------------------------------------

class DeviceBuffer:
    """Device memory from mla_device_malloc, freed with its context's mla_device_free."""

    def __init__(self, ctx, nbytes):
        self.ctx, self.nbytes = ctx, int(nbytes)
        p = ctypes.c_void_p()
        _lib.check(_lib.load().mla_device_malloc(ctx.handle, ctypes.byref(p), max(self.nbytes, 1)))
        self.ptr = p.value

    def __int__(self):
        return self.ptr

    def free(self):
        if self.ptr and self.ctx.handle:
            _lib.load().mla_device_free(self.ctx.handle, self.ptr)
        self.ptr = None

    def __del__(self):
        try:
            self.free()
        except Exception:
            pass


class Context:
    """An mla_context: one GPU, its runtime (loaded on first use), its module cache.
    Raises MlaRuntimeUnavailable (no libcuda / libamdhip64), MlaNoDevice, MlaArchNotBuilt."""

    def __init__(self, device=0, arch=None, codeobject_root=None):
        opts = T.mla_context_options(device=as_int(device, "device"),
                                     arch=_lib.cstr(arch, "arch"),
                                     codeobject_root=_lib.cstr(
                                         None if codeobject_root is None else str(codeobject_root),
                                         "codeobject_root"))
        h = ctypes.c_void_p()
        _lib.check(_lib.load().mla_context_create(ctypes.byref(opts), ctypes.byref(h)))
        self.handle, self.device = h.value, device
        self.arch = _lib.load().mla_context_arch(self.handle).decode()
        self.num_cus = _lib.load().mla_context_num_cus(self.handle)
        self._scratch = None
        self._lock = threading.Lock()

    def malloc(self, nbytes):
        return DeviceBuffer(self, nbytes)

    def htod(self, dst, src_array, stream=None):
        """Copies a NumPy array to device memory and waits for the copy."""
        lib = _lib.load()
        _lib.check(lib.mla_memcpy_htod(self.handle, int(dst), src_array.ctypes.data,
                                       src_array.nbytes, stream))
        self.synchronize(stream)

    def dtoh(self, dst_array, src, stream=None):
        lib = _lib.load()
        _lib.check(lib.mla_memcpy_dtoh(self.handle, dst_array.ctypes.data, int(src),
                                       dst_array.nbytes, stream))
        self.synchronize(stream)

    def memset(self, dst, value, nbytes, stream=None):
        _lib.check(_lib.load().mla_memset_d8(self.handle, int(dst), value, nbytes, stream))

    def synchronize(self, stream=None):
        _lib.check(_lib.load().mla_stream_synchronize(self.handle, stream))

    def scratch(self, nbytes):
        """A grow-only device buffer owned by the context (the default decode workspace when
        no torch tensors are given). Reused across calls: one decode at a time per context."""
        with self._lock:
            if self._scratch is None or self._scratch.nbytes < nbytes:
                self._scratch = DeviceBuffer(self, nbytes)
            return self._scratch

    def close(self):
        if self.handle:
            self._scratch = None
            _lib.load().mla_context_destroy(self.handle)
            self.handle = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self):
        return f"<libmla.Context device={self.device} arch={self.arch} cus={self.num_cus}>"


_contexts = {}
_contexts_lock = threading.Lock()


def context(device=0):
    """The cached Context of a device ordinal (created on first use)."""
    device = as_int(device, "device")
    with _contexts_lock:
        ctx = _contexts.get(device)
        if ctx is None:
            ctx = _contexts[device] = Context(device)
        return ctx


def _resolve_stream(stream, use_torch, device):
    if stream is None:
        if use_torch:
            torch = _torch()
            return torch.cuda.current_stream(device).cuda_stream or None
        return None
    if hasattr(stream, "cuda_stream"):
        return stream.cuda_stream or None
    if isinstance(stream, bool) or not isinstance(stream, numbers.Integral):
        raise TypeError(f"stream must be an int, a torch.cuda.Stream or None, got "
                        f"{type(stream).__name__}")
    return int(stream) or None


def _device_of(arrays, device):
    devs = {a.device for a in arrays if a is not None and a.device is not None}
    if len(devs) > 1:
        raise ValueError(f"tensors are on different devices: {sorted(devs)}")
    if devs:
        d = devs.pop()
        if device is not None and as_int(device, "device") != d:
            raise ValueError(f"device={device} but the tensors are on cuda:{d}")
        return d
    return 0 if device is None else as_int(device, "device")


def device_copy(dst, src, nbytes=None, *, stream=None, device=None):
    """libmla's 16-byte-vector device copy (mla_device_copy, sm_90a): bytes a multiple of 16."""
    d, s_ = device_array(dst, "dst"), device_array(src, "src")
    if nbytes is None:
        if d.shape is None:
            raise TypeError("nbytes is required for raw pointers")
        nbytes = math.prod(d.shape) * _ITEMSIZE.get(d.dtype, 1)
    dev = _device_of([d, s_], device)
    st = _resolve_stream(stream, d.is_torch or s_.is_torch, dev)
    _lib.check(_lib.load().mla_device_copy(context(dev).handle, d.ptr, s_.ptr, int(nbytes), st))


def smoke_launch(out, a, b, *, n=None, stream=None, device=None):
    """The registry's smoke kernel: out[i] = a * i + b (int32 device array)."""
    o = device_array(out, "out")
    _check(o, "out", ("int32",), ndim=1, contiguous=True)
    if n is None:
        if o.shape is None:
            raise TypeError("n is required for a raw pointer")
        n = o.shape[0]
    dev = _device_of([o], device)
    st = _resolve_stream(stream, o.is_torch, dev)
    _lib.check(_lib.load().mla_smoke_launch(context(dev).handle, o.ptr, as_int(n, "n"),
                                            as_int(a, "a"), as_int(b, "b"), st))
