"""Errors: every failing status maps to its MlaError subclass with mla_last_error()'s message;
wrong dtype / shape / device raises TypeError or ValueError BEFORE any C call (a spy around the
loaded library records every C function called)."""
import ctypes

import numpy as np
import pytest

import libmla
from libmla import _lib
from helpers import make_batch


class Spy:
    def __init__(self, real):
        self.real, self.calls = real, []

    def __getattr__(self, name):
        fn = getattr(self.real, name)
        if not name.startswith("mla_"):
            return fn

        def call(*a):
            self.calls.append(name)
            return fn(*a)
        return call


@pytest.fixture
def spy(monkeypatch):
    s = Spy(_lib.lib)
    monkeypatch.setattr(_lib, "lib", s)
    return s


def test_error_classes():
    expect = {1: libmla.MlaInvalidArgument, 2: libmla.MlaUnsupported, 3: libmla.MlaNoKernel,
              4: libmla.MlaArchNotBuilt, 5: libmla.MlaRuntimeUnavailable, 6: libmla.MlaNoDevice,
              7: libmla.MlaCodeObjectError, 8: libmla.MlaLaunchError,
              9: libmla.MlaBufferTooSmall, 10: libmla.MlaInternalError, 11: libmla.MlaTableError}
    for status, cls in expect.items():
        assert libmla.error_class(status) is cls
        assert issubclass(cls, libmla.MlaError)
        e = cls(status, "msg")
        assert e.status == status and e.status_name == libmla.status_string(status)
        assert str(e) == f"{e.status_name}: msg"
    assert issubclass(libmla.MlaInvalidArgument, ValueError)
    assert libmla.error_class(99) is libmla.MlaError


def test_failing_call_carries_last_error():
    with pytest.raises(libmla.MlaUnsupported) as e:
        libmla.plan_metadata([0, 1], [0, 10], [1], 16, arch="sm_90a", dtype_q="fp16")
    assert e.value.status == 2 and e.value.status_name == "MLA_ERROR_UNSUPPORTED_SHAPE"
    assert e.value.message == libmla.last_error() != ""
    with pytest.raises(libmla.MlaInvalidArgument, match="power of two"):
        libmla.plan_metadata([0, 1], [0, 10], [1], 16, arch="sm_90a", page_size=3)
    with pytest.raises(libmla.MlaInvalidArgument, match="kv_last_page_lens"):
        libmla.plan_metadata([0, 1], [0, 2], [17], 16, arch="sm_90a", page_size=16)


def _batch():
    rng = np.random.default_rng(1)
    return make_batch(rng, [20, 5], [1, 1], 8)


@pytest.mark.parametrize("mutate,exc,match", [
    (lambda a: a.update(q=a["q"].astype(np.float32)), TypeError, "dtype float32"),
    (lambda a: a.update(q=a["q"][:, :, :512]), ValueError, "576"),
    (lambda a: a.update(q=a["q"][0]), ValueError, "total_q"),
    (lambda a: a.update(q=a["q"][:1]), ValueError, "qo_indptr"),
    (lambda a: a.update(kv=a["kv"].astype(np.float64)), TypeError, "kv_buffer has dtype"),
    (lambda a: a.update(kv=a["kv"][:, :, :, :500]), ValueError, "kv_buffer must be"),
    (lambda a: a.update(kv=a["kv"][::2]), ValueError, "C-contiguous"),
    (lambda a: a.update(qo=np.array([0.0, 1.0, 2.0])), TypeError, "integer array"),
    (lambda a: a.update(qo=np.array([[0, 1, 2]])), ValueError, "1-D"),
    (lambda a: a.update(kvi=a["kvi"][:2]), ValueError, "3 entries"),
    (lambda a: a.update(last=np.array([1, 1, 1])), ValueError, "2 entries"),
    (lambda a: a.update(pages=a["pages"][:3]), ValueError, "at least"),
    (lambda a: a.update(pages=a["pages"] + 1000), ValueError, "page ids outside"),
    (lambda a: a.update(kvi=np.array([0, 20, 10])), ValueError, "never decrease"),
    (lambda a: a.update(q="q"), TypeError, "NumPy array"),
    (lambda a: a.update(L=1.0), TypeError, "max_seqlen_q"),
    (lambda a: a.update(ps=3), ValueError, "power of two"),
    (lambda a: a.update(qs="x"), TypeError, "q_scale"),
])
def test_bad_host_arrays_raise_before_any_c_call(spy, mutate, exc, match):
    q, kv, qo, kvi, pages, last = _batch()
    a = dict(q=q, kv=kv, qo=qo, kvi=kvi, pages=pages, last=last, L=1, ps=1, qs=None)
    mutate(a)
    with pytest.raises(exc, match=match) as e:
        libmla.decode_reference(a["q"], a["kv"], a["qo"], a["kvi"], a["pages"], a["last"],
                                a["L"], page_size=a["ps"], q_scale=a["qs"])
    assert not isinstance(e.value, libmla.MlaError)
    assert [c for c in spy.calls if c not in ("mla_version",)] == []


def test_bad_plan_inputs_raise_before_any_c_call(spy):
    for args, exc in [(([0, 1], [0, 10], [1.5], 16), TypeError),
                      (([0, 1], [0, 10], [1, 1], 16), ValueError),
                      (([0, 1], [0, 10, 20], [1], 16), ValueError),
                      (([1, 0], [0, 10], [1], 16), ValueError),
                      (([0, 1], [0, 10], [1], "16"), TypeError)]:
        with pytest.raises(exc):
            libmla.plan_metadata(*args, arch="sm_90a")
    with pytest.raises(TypeError, match="arch"):
        libmla.plan_metadata([0, 1], [0, 10], [1], 16, arch=None)
    with pytest.raises(ValueError, match="dtype"):
        libmla.plan_metadata([0, 1], [0, 10], [1], 16, arch="sm_90a", dtype_q="int4")
    assert spy.calls == []


def test_execute_plan_with_a_foreign_plan(spy):
    q, kv, qo, kvi, pages, last = _batch()
    plan = libmla.plan_metadata([0, 1], [0, 10], [1], 8, arch="sm_90a")
    spy.calls.clear()
    with pytest.raises(ValueError, match="batch_size"):
        libmla.execute_plan_reference(q, kv, qo, kvi, pages, last, 1, plan)
    with pytest.raises(TypeError, match="libmla.Plan"):
        libmla.execute_plan_reference(q, kv, qo, kvi, pages, last, 1, {"not": "a plan"})
    assert spy.calls == []


def test_gpu_functions_reject_host_arrays_before_any_c_call(spy):
    q, kv, qo, kvi, pages, last = _batch()
    plan = libmla.plan_metadata(qo, kvi, last, 8, arch="sm_90a")
    spy.calls.clear()
    with pytest.raises(TypeError, match="host array"):
        libmla.decode(q, kv, qo, kvi, pages, last, 1, plan)
    with pytest.raises(TypeError, match="plan must be"):
        libmla.decode(0x1000, 0x2000, 0x3000, 0x4000, 0x5000, 0x6000, 1, None)
    with pytest.raises(TypeError, match="num_pages is required"):
        libmla.decode(0x1000, 0x2000, 0x3000, 0x4000, 0x5000, 0x6000, 1, plan, out=0x7000)
    with pytest.raises(TypeError, match="out is required"):
        libmla.decode(0x1000, 0x2000, 0x3000, 0x4000, 0x5000, 0x6000, 1, plan, num_pages=4)
    with pytest.raises(TypeError, match="host array"):
        libmla.plan_metadata_device(qo, kvi, last, 8, max_seqlen_qo=1)
    assert spy.calls == []


class FakeCAI:
    """A device array seen only through __cuda_array_interface__ (nothing is dereferenced)."""

    def __init__(self, shape, typestr, ptr=0x10000, strides=None):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "data": (ptr, False),
                                         "version": 3, "strides": strides}


def test_cuda_array_interface_shapes_are_checked_before_any_c_call(spy):
    plan = libmla.plan_metadata([0, 1, 2], [0, 3, 5], [1, 1], 8, arch="sm_90a")
    spy.calls.clear()
    good = dict(q=FakeCAI((2, 8, 576), "<u2"), kv=FakeCAI((6, 1, 1, 576), "<u2"),
                qo=FakeCAI((3,), "<i4"), kvi=FakeCAI((3,), "<i4"), pages=FakeCAI((5,), "<i4"),
                last=FakeCAI((2,), "<i4"), out=FakeCAI((2, 8, 512), "<u2"))
    bad = [("q", FakeCAI((2, 16, 576), "<u2"), ValueError, "q must have shape"),
           ("q", FakeCAI((2, 8, 576), "<f4"), TypeError, "q has dtype"),
           ("kv", FakeCAI((6, 2, 1, 576), "<u2"), ValueError, "kv_buffer must have shape"),
           ("qo", FakeCAI((3,), "<i8"), TypeError, "qo_indptr has dtype"),
           ("kvi", FakeCAI((4,), "<i4"), ValueError, "kv_indptr must have shape"),
           ("last", FakeCAI((2,), "<i4", strides=(8,)), ValueError, "contiguous"),
           ("out", FakeCAI((2, 8, 576), "<u2"), ValueError, "out must have shape"),
           ("q", FakeCAI((2, 8, 576), "<u2", strides=(8 * 576 * 2, 576 * 2, 4)), ValueError,
            "last dimension")]
    for key, value, exc, match in bad:
        a = dict(good)
        a[key] = value
        with pytest.raises(exc, match=match):
            libmla.decode(a["q"], a["kv"], a["qo"], a["kvi"], a["pages"], a["last"], 1, plan,
                          out=a["out"])
    assert spy.calls == []


def test_decode_context_parallel_arguments_raise_before_any_c_call(spy):
    """Round-robin context parallel (issue 9): every bad cp argument of decode() raises
    TypeError / ValueError before any C function (raw device pointers, nothing dereferenced)."""
    # Rank 1 of 2 holds 5 of 10 global tokens of request 0 and 2 of 5 of request 1 (page 1).
    qo, lkvi, llast = [0, 1, 2], [0, 5, 7], [1, 1]
    g_ok = np.array([0, 10, 15], np.int32)
    cp_plan = libmla.plan_metadata(qo, lkvi, llast, 16, arch="sm_90a", is_cp_round_robin=True)
    plain = libmla.plan_metadata(qo, lkvi, llast, 16, arch="sm_90a")
    libmla.check_cp_shard(g_ok, lkvi, llast, 1, 2, 1)  # the shard itself is right
    spy.calls.clear()
    ptrs = (0x1000, 0x2000, 0x3000, 0x4000, 0x5000, 0x6000, 1)
    kw = dict(out=0x7000, num_pages=8)
    cases = [
        (cp_plan, dict(), ValueError, "is_cp_round_robin=True but cp_world_size is 1"),
        (plain, dict(cp_world_size=2, cp_rank=1, g_kv_indptr=g_ok), ValueError,
         "is_cp_round_robin=False"),
        (cp_plan, dict(cp_world_size=2, cp_rank=1), TypeError, "needs g_kv_indptr"),
        (cp_plan, dict(cp_world_size=0, g_kv_indptr=g_ok), ValueError, "cp_world_size 0 < 1"),
        (cp_plan, dict(cp_world_size=2, cp_rank=2, g_kv_indptr=g_ok), ValueError,
         r"cp_rank 2 is outside \[0, cp_world_size = 2\)"),
        (cp_plan, dict(cp_world_size=2, cp_rank=-1, g_kv_indptr=g_ok), ValueError, "cp_rank -1"),
        (plain, dict(cp_rank=1), ValueError, r"outside \[0, cp_world_size = 1\)"),
        (cp_plan, dict(cp_world_size=2.0, g_kv_indptr=g_ok), TypeError, "cp_world_size must be"),
        (cp_plan, dict(cp_world_size=2, cp_rank=1, g_kv_indptr=g_ok, causal=False), ValueError,
         "causal only"),
        # the local page table disagrees with g_kv_indptr and W (checked on the plan's host
        # copy of the page table when g_kv_indptr is a host array)
        (cp_plan, dict(cp_world_size=2, cp_rank=0, g_kv_indptr=np.array([0, 10, 16], np.int32)),
         ValueError, "request 1: the local page table holds 2 tokens, but rank 0 of 2 holds 3 "
                     "of its 6 global tokens"),
        (cp_plan, dict(cp_world_size=3, cp_rank=1, g_kv_indptr=[0, 10, 15]), ValueError,
         "request 0: the local page table holds 5 tokens, but rank 1 of 3 holds 3"),
        (cp_plan, dict(cp_world_size=2, cp_rank=1, g_kv_indptr=[0, 10]), ValueError,
         "g_kv_indptr must have 3 entries"),
        (cp_plan, dict(cp_world_size=2, cp_rank=1, g_kv_indptr=np.array([0, 10, 5], np.int32)),
         ValueError, "never decrease"),
        (cp_plan, dict(cp_world_size=2, cp_rank=1, g_kv_indptr=np.array([0., 10., 15.])),
         TypeError, "integer"),
        # a device g_kv_indptr: dtype and shape checked (its contents only with validate=True)
        (cp_plan, dict(cp_world_size=2, cp_rank=1, g_kv_indptr=FakeCAI((3,), "<i8")), TypeError,
         "g_kv_indptr has dtype int64"),
        (cp_plan, dict(cp_world_size=2, cp_rank=1, g_kv_indptr=FakeCAI((4,), "<i4")), ValueError,
         "g_kv_indptr must have shape"),
        (cp_plan, dict(cp_world_size=2, cp_rank=1, g_kv_indptr=0x8000, validate=True), TypeError,
         "validate=True needs g_kv_indptr with a shape"),
        (cp_plan, dict(cp_world_size=2, cp_rank=1, g_kv_indptr=g_ok, validate=2), TypeError,
         "validate must be a bool"),
    ]
    for plan, extra, exc, match in cases:
        with pytest.raises(exc, match=match):
            libmla.decode(*ptrs, plan, **kw, **extra)
    assert spy.calls == []


def test_decode_out_dtype_errors_raise_before_any_c_call(spy):
    """fp32 out (out_dtype): a bad out_dtype, or one that disagrees with the given out's dtype,
    raises before any C function is called."""
    plan = libmla.plan_metadata([0, 1, 2], [0, 3, 5], [1, 1], 8, arch="sm_90a")
    spy.calls.clear()
    ins = dict(q=FakeCAI((2, 8, 576), "<u2"), kv=FakeCAI((6, 1, 1, 576), "<u2"),
               qo=FakeCAI((3,), "<i4"), kvi=FakeCAI((3,), "<i4"), pages=FakeCAI((5,), "<i4"),
               last=FakeCAI((2,), "<i4"))
    args = [ins[k] for k in ("q", "kv", "qo", "kvi", "pages", "last")] + [1, plan]
    out16, out32 = FakeCAI((2, 8, 512), "<u2"), FakeCAI((2, 8, 512), "<f4")
    cases = [
        (dict(out=out32, out_dtype="fp16"), ValueError, "out_dtype must be 'bf16' or 'fp32'"),
        (dict(out=out32, out_dtype="float32"), ValueError, "got 'float32'"),
        (dict(out=out16, out_dtype=True), ValueError, "out_dtype must be"),
        (dict(out=out16, out_dtype=5), ValueError, "out_dtype must be"),
        (dict(out=out16, out_dtype=np.float16), ValueError, "out_dtype must be"),
        (dict(out=0x7000, out_dtype="fp8"), ValueError, "out_dtype must be"),
        (dict(out=out16, out_dtype="fp32"), TypeError, "out has dtype raw2 but out_dtype='fp32'"),
        (dict(out=out32, out_dtype="bf16"), TypeError, "out has dtype fp32 but out_dtype='bf16'"),
        (dict(out=out32, out_dtype=np.dtype(np.uint8)), ValueError, "out_dtype must be"),
        (dict(out=FakeCAI((2, 8, 512), "<f2")), TypeError, "out has dtype fp16, expected"),
        (dict(out=FakeCAI((2, 8, 512), "<f8")), TypeError, "out has dtype"),
        (dict(out=FakeCAI((2, 8, 576), "<f4")), ValueError, "out must have shape"),
        (dict(out=FakeCAI((2, 8, 512), "<f4", strides=(8 * 512 * 4, 512 * 4, 8))), ValueError,
         "last dimension"),
        (dict(out_dtype="fp32"), TypeError, "out is required"),  # no torch: nothing to allocate
    ]
    for kw, exc, match in cases:
        with pytest.raises(exc, match=match):
            libmla.decode(*args, **kw)
    assert spy.calls == []


class _FakeContext:
    """Stands in for libmla.context(d): device memory is never touched (fake addresses)."""
    handle, arch = None, "sm_90a"

    def malloc(self, nbytes):
        return type("Buf", (), {"ptr": 0x100000, "nbytes": nbytes})()

    scratch = malloc

    def htod(self, dst, src, stream=None):
        pass

    def synchronize(self, stream=None):
        pass


def test_decode_passes_out_dtype_and_element_strides_to_c(monkeypatch):
    """What decode() hands to mla_decode_fwd (a stand-in records the struct; fake context):
    out_dtype FP32 for a float32 out or out_dtype='fp32', BF16 otherwise; strides in elements."""
    import sys
    from libmla import _types as T
    dmod = sys.modules["libmla.decode"]
    monkeypatch.setattr(dmod, "context", lambda device=0: _FakeContext())
    seen = []
    real = _lib.load()

    class Lib:
        def __getattr__(self, name):
            return getattr(real, name)

        def mla_decode_fwd(self, ctx, pargs, stream):
            seen.append(T.mla_decode_args.from_buffer_copy(pargs._obj))
            return 0

    monkeypatch.setattr(_lib, "lib", Lib())
    plan = libmla.plan_metadata([0, 1, 2], [0, 3, 5], [1, 1], 8, arch="sm_90a")
    ins = [FakeCAI((2, 8, 576), "<u2"), FakeCAI((6, 1, 1, 576), "<u2"), FakeCAI((3,), "<i4"),
           FakeCAI((3,), "<i4"), FakeCAI((5,), "<i4"), FakeCAI((2,), "<i4"), 1, plan]
    padded = FakeCAI((2, 8, 512), "<f4", strides=(8 * 520 * 4 + 64, 520 * 4, 4))
    runs = [
        (dict(out=FakeCAI((2, 8, 512), "<f4")), T.DType.FP32, 8 * 512, 512),
        (dict(out=FakeCAI((2, 8, 512), "<f4"), out_dtype="fp32"), T.DType.FP32, 8 * 512, 512),
        (dict(out=padded), T.DType.FP32, 8 * 520 + 16, 520),
        (dict(out=FakeCAI((2, 8, 512), "<u2")), T.DType.BF16, 8 * 512, 512),
        (dict(out=FakeCAI((2, 8, 512), "<u2"), out_dtype="bf16"), T.DType.BF16, 8 * 512, 512),
        (dict(out=0x7000, num_pages=6), T.DType.BF16, 0, 0),
        (dict(out=0x7000, num_pages=6, out_dtype="fp32"), T.DType.FP32, 0, 0),
        (dict(out=0x7000, num_pages=6, out_dtype=np.float32), T.DType.FP32, 0, 0),
    ]
    for kw, want, st_token, st_head in runs:
        a = ins if "num_pages" not in kw else [0x1000, 0x2000] + ins[2:]
        libmla.decode(*a, workspace=0x9000, **kw)
        got = seen[-1]
        assert got.out_dtype == want, kw
        assert (got.out_stride_token, got.out_stride_head) == (st_token, st_head), kw
        assert got.struct_size == ctypes.sizeof(T.mla_decode_args)
    assert len(seen) == len(runs)


def test_check_cp_shard_on_the_host():
    # W = 3: global lengths 0, 1, 2, 3, 4, 7 -> rank r holds ceil((G - r) / 3) (0 if G <= r)
    G = np.array([0, 1, 2, 3, 4, 7])
    g = np.concatenate([[0], np.cumsum(G)]).astype(np.int32)
    for r, want in ((0, [0, 1, 1, 1, 2, 3]), (1, [0, 0, 1, 1, 1, 2]), (2, [0, 0, 0, 1, 1, 2])):
        assert [len(range(r, n, 3)) for n in G] == want
        for ps in (1, 2, 16):
            pages = [(n + ps - 1) // ps for n in want]
            kvi = np.concatenate([[0], np.cumsum(pages)]).astype(np.int32)
            last = [n - (p - 1) * ps if p else 1 for n, p in zip(want, pages)]
            libmla.check_cp_shard(g, kvi, last, ps, 3, r)
            if want[-1] > 1:
                bad = list(last)
                bad[-1] -= 1
                with pytest.raises(ValueError, match="request 5"):
                    libmla.check_cp_shard(g, kvi, bad, ps, 3, r)
    with pytest.raises(ValueError, match="cp_rank 3 is outside"):
        libmla.check_cp_shard(g, [0] * 7, [1] * 6, 1, 3, 3)
    with pytest.raises(ValueError, match="cp_world_size 0 < 1"):
        libmla.check_cp_shard(g, [0] * 7, [1] * 6, 1, 0, 0)
    with pytest.raises(TypeError, match="device tensor"):
        libmla.check_cp_shard(FakeCAI((7,), "<i4"), [0] * 7, [1] * 6, 1, 3, 0)


def test_merge_rank_strides_are_checked_before_any_c_call(spy):
    """merge_attn_states takes each rank's block contiguous with any rank stride (views of a packed
    all-gather buffer); blocks that are not contiguous or that overlap raise before any C call."""
    W, T, H, V = 2, 3, 4, 512
    blk = T * H * V + T * H + 4  # floats per rank in a packed [out | lse | pad] buffer
    out = FakeCAI((T, H, V), "<u2")
    po = FakeCAI((W, T, H, V), "<f4", strides=(blk * 4, H * V * 4, V * 4, 4))
    pl = FakeCAI((W, T, H), "<f4", strides=(blk * 4, H * 4, 4))
    bad = [(FakeCAI((W, T, H, V), "<f4", strides=(blk * 4, H * V * 4, V * 8, 4)), pl,
            "each rank's block must be contiguous"),
           (FakeCAI((W, T, H, V), "<f4", strides=(V * 4, H * V * 4, V * 4, 4)), pl,
            "the ranks' blocks overlap"),
           (po, FakeCAI((W, T, H), "<f4", strides=(4 * 4, H * 4, 4)), "the ranks' blocks overlap")]
    for a, b, match in bad:
        with pytest.raises(ValueError, match=match):
            libmla.merge_attn_states(a, b, out=out, return_lse=False, device=0)
    assert spy.calls == []
