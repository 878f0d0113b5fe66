"""Device-free routing queries (no GPU, explicit arch): aiter-compatible asm table queries, the
head plan, the shape-support query, reducer support. Mirrors the ROUTING section of
include/mla_c_api.h; keywords follow aiter's Python API (get_mla_decode_shape_support)."""
import ctypes
from collections import namedtuple
from dataclasses import dataclass
from typing import Optional, Tuple

from . import _lib
from . import _types as T
from ._convert import dtype_enum, as_int, as_flag


def version():
    """(major, minor, patch) of the loaded libmla."""
    return _lib.version()


def version_string():
    return _lib.load().mla_version_string().decode()


AsmQuery = namedtuple("AsmQuery", ["status", "table_gqa", "table_qseqlen", "kernel"])
AsmQuery.__doc__ = """Answer of an asm table query: status (MlaAsmStatus; index 0 as in aiter),
table_gqa / table_qseqlen (the remapped table key; None for the PS1 query), kernel (the row's
knl_name, "" if none)."""


def _asm_answer(r, buf, packed):
    if r < 0:
        _lib.check(-r)
    status = T.ASM_STATUSES[r & 0xFF] if packed else T.ASM_STATUSES[r]
    kernel = buf.value.decode()
    if packed:
        return AsmQuery(status, (r >> 8) & 0xFF, (r >> 16) & 0xFF, kernel)
    return AsmQuery(status, None, None, kernel)


def decode_asm_query(arch, q_type, kv_type, num_heads, nhead_kv=1, max_seqlen_q=1, persistent=True,
                     causal=True, has_lse=False, has_cprr=False):
    """aiter's mla_decode_asm_query: the exact table row (after aiter's remap) for a decode shape.
    dtype strings: "bf16", "fp16", "fp8", "fp8_fnuz", "byte". Returns AsmQuery; raises
    MlaInvalidArgument (bad counts or dtype), MlaArchNotBuilt (unknown arch), MlaTableError."""
    buf = ctypes.create_string_buffer(256)
    r = _lib.load().mla_decode_asm_query(
        _lib.cstr(arch, "arch"), _lib.cstr(q_type, "q_type"), _lib.cstr(kv_type, "kv_type"),
        as_int(num_heads, "num_heads"), as_int(nhead_kv, "nhead_kv"),
        as_int(max_seqlen_q, "max_seqlen_q"), as_flag(persistent, "persistent"),
        as_flag(causal, "causal"), as_flag(has_lse, "has_lse"), as_flag(has_cprr, "has_cprr"),
        buf, len(buf), None)
    return _asm_answer(r, buf, True)


def ps1_fp8_asm_query(arch, num_heads, max_seqlen_q, causal=True, has_lse=False, has_cprr=False):
    """aiter's mla_ps1_fp8_asm_query (gfx1250 mla_dsl.csv). Returns AsmQuery (no table key)."""
    buf = ctypes.create_string_buffer(256)
    r = _lib.load().mla_ps1_fp8_asm_query(
        _lib.cstr(arch, "arch"), as_int(num_heads, "num_heads"),
        as_int(max_seqlen_q, "max_seqlen_q"), as_flag(causal, "causal"),
        as_flag(has_lse, "has_lse"), as_flag(has_cprr, "has_cprr"), buf, len(buf), None)
    return _asm_answer(r, buf, False)


def reduce_supports(num_heads, head_dim):
    """True if aiter's mla_reduce_v1 has a (num_heads, head_dim) specialisation."""
    return bool(_lib.load().mla_reduce_v1_supports(as_int(num_heads, "num_heads"),
                                                   as_int(head_dim, "head_dim")))


def decode_occupancy(arch, num_heads, max_seqlen_q, q_dtype="bf16", kv_dtype="bf16",
                     enable_experimental=False):
    """Planner cluster multiplier (aiter mla_metadata_cluster_multiplier): 1 or 2."""
    r = _lib.load().mla_decode_occupancy(
        _lib.cstr(arch, "arch"), as_int(num_heads, "num_heads"),
        as_int(max_seqlen_q, "max_seqlen_q"), dtype_enum(q_dtype, "q_dtype"),
        dtype_enum(kv_dtype, "kv_dtype"), as_flag(enable_experimental, "enable_experimental"))
    if r < 0:
        raise ValueError(f"mla_decode_occupancy rejects its input: {_lib.last_error()}")
    return r


def _shape(num_heads, max_seqlen_qo, q_dtype, kv_dtype, arch, num_heads_k=1, v_head_dim=512,
           return_lse=False, causal=True, persistent=True, cp_round_robin=False, page_size=1,
           fast_mode=True, intra_batch_mode=False, enable_experimental=False, flydsl_ps1=False,
           use_ps1_asm=True, use_opus=False, uni_seqlen_qo=-1, has_scales=True):
    if arch is None:
        raise TypeError("arch is required (e.g. arch=\"sm_90a\"): queries never ask a device")
    return T.mla_decode_shape(
        arch=_lib.cstr(arch, "arch"), num_heads=as_int(num_heads, "num_heads"),
        num_heads_k=as_int(num_heads_k, "num_heads_k"),
        max_seqlen_qo=as_int(max_seqlen_qo, "max_seqlen_qo"),
        uni_seqlen_qo=as_int(uni_seqlen_qo, "uni_seqlen_qo"),
        q_dtype=dtype_enum(q_dtype, "q_dtype"), kv_dtype=dtype_enum(kv_dtype, "kv_dtype"),
        v_head_dim=as_int(v_head_dim, "v_head_dim"), page_size=as_int(page_size, "page_size"),
        return_lse=as_flag(return_lse, "return_lse"), causal=as_flag(causal, "causal"),
        persistent=as_flag(persistent, "persistent"),
        cp_round_robin=as_flag(cp_round_robin, "cp_round_robin"),
        cp_world_size=2 if cp_round_robin else 1,
        fast_mode=as_flag(fast_mode, "fast_mode"),
        intra_batch_mode=as_flag(intra_batch_mode, "intra_batch_mode"),
        has_scales=as_flag(has_scales, "has_scales"),
        enable_experimental=as_flag(enable_experimental, "enable_experimental"),
        flydsl_ps1=as_flag(flydsl_ps1, "flydsl_ps1"), use_ps1_asm=as_flag(use_ps1_asm, "use_ps1_asm"),
        use_opus=as_flag(use_opus, "use_opus"))


@dataclass(frozen=True)
class HeadPlan:
    """aiter's MlaDecodeHeadPlan plus the backend (every field of mla_head_plan)."""
    planner: str                 # "v1_0" | "v1_1" | "v1_2"
    plan: str                    # "Native" | "Folded" | "AcceptedNonNative" | "Unsupported"
    planner_accepts: bool
    natively_supported: bool
    qk_batch_ratio: int
    kernel_num_heads: int
    seqlen_fold: int
    packed_qo_len_per_wg: int
    reduce_supported: bool
    backend: T.MlaBackend


@dataclass(frozen=True)
class ShapeSupport:
    """Every field of mla_decode_support (aiter's MlaDecodeShapeSupport plus the table key and
    the code-object path). supported: True / False / None (unknown: no table to ask)."""
    arch: str
    enable_experimental: bool
    flydsl_ps1: bool
    planner: str
    plan: str
    planner_accepts: bool
    natively_supported: bool
    fold_factor: int
    seqlen_fold: int
    native: bool
    kernel_num_heads: int
    packed_qo_len_per_wg: int
    reduce_supported: bool
    backend: T.MlaBackend
    asm_status: T.MlaAsmStatus
    table_gqa: int
    table_qseqlen: int
    asm_kernel: Optional[str]
    code_object: Optional[str]
    supported: Optional[bool]
    num_reasons: int
    reasons: Tuple[str, ...]
    libmla_reducer: bool


def head_plan(num_heads, max_seqlen_qo, q_dtype, kv_dtype, *, arch, **kw):
    """Head plan and backend of a shape; keywords as shape_support. An unsupported shape is not
    an error (plan == "Unsupported"). Raises MlaInvalidArgument, MlaArchNotBuilt."""
    s = _shape(num_heads, max_seqlen_qo, q_dtype, kv_dtype, arch, **kw)
    out = T.mla_head_plan()
    _lib.check(_lib.load().mla_decode_head_plan(ctypes.byref(s), ctypes.byref(out)))
    return HeadPlan(
        planner=T.PLANNERS[out.planner], plan=T.HEAD_PLAN_KINDS[out.plan],
        planner_accepts=bool(out.planner_accepts), natively_supported=bool(out.natively_supported),
        qk_batch_ratio=out.qk_batch_ratio, kernel_num_heads=out.kernel_num_heads,
        seqlen_fold=out.seqlen_fold, packed_qo_len_per_wg=out.packed_qo_len_per_wg,
        reduce_supported=bool(out.reduce_supported), backend=T.BACKENDS[out.backend])


def shape_support(num_heads, max_seqlen_qo, q_dtype, kv_dtype, *, arch, num_heads_k=1,
                  v_head_dim=512, return_lse=False, causal=True, persistent=True,
                  cp_round_robin=False, page_size=1, fast_mode=True, intra_batch_mode=False,
                  enable_experimental=False, flydsl_ps1=False, use_ps1_asm=True, use_opus=False,
                  uni_seqlen_qo=-1, has_scales=True):
    """Can this shape run on this arch, on which kernel, and if not why (aiter
    get_mla_decode_shape_support). dtypes: "bf16", "fp16", "fp8", "fp8_fnuz", "byte" (or NumPy /
    ml_dtypes / torch dtypes). A shape that cannot run is not an error (supported False).
    Raises TypeError (non-int counts, bool counts), MlaInvalidArgument (a ValueError: heads < 1,
    qlen < 1, num_heads_k != 1, bad dtype), MlaArchNotBuilt (unknown arch)."""
    s = _shape(num_heads, max_seqlen_qo, q_dtype, kv_dtype, arch, num_heads_k, v_head_dim,
               return_lse, causal, persistent, cp_round_robin, page_size, fast_mode,
               intra_batch_mode, enable_experimental, flydsl_ps1, use_ps1_asm, use_opus,
               uni_seqlen_qo, has_scales)
    o = T.mla_decode_support()
    _lib.check(_lib.load().mla_decode_shape_support(ctypes.byref(s), ctypes.byref(o)))
    reasons = tuple(line for line in o.reasons.decode().split("\n") if line)
    return ShapeSupport(
        arch=o.arch.decode(), enable_experimental=bool(o.enable_experimental),
        flydsl_ps1=bool(o.flydsl_ps1), planner=T.PLANNERS[o.planner],
        plan=T.HEAD_PLAN_KINDS[o.plan], planner_accepts=bool(o.planner_accepts),
        natively_supported=bool(o.natively_supported), fold_factor=o.fold_factor,
        seqlen_fold=o.seqlen_fold, native=bool(o.native), kernel_num_heads=o.kernel_num_heads,
        packed_qo_len_per_wg=o.packed_qo_len_per_wg, reduce_supported=bool(o.reduce_supported),
        backend=T.BACKENDS[o.backend], asm_status=T.ASM_STATUSES[o.asm_status],
        table_gqa=o.table_gqa, table_qseqlen=o.table_qseqlen,
        asm_kernel=o.asm_kernel.decode() or None, code_object=o.code_object.decode() or None,
        supported=None if o.supported < 0 else bool(o.supported), num_reasons=o.num_reasons,
        reasons=reasons, libmla_reducer=bool(o.libmla_reducer))


# ---- archs and the code-object registry ---------------------------------------------------

def arch_names():
    """The archs libmla knows the rules of."""
    lib = _lib.load()
    return [lib.mla_arch_name(i).decode() for i in range(lib.mla_arch_count())]


def codeobject_root():
    """The code-object root device-free queries use. Raises MlaArchNotBuilt if none is found."""
    lib = _lib.load()
    needed = ctypes.c_size_t(0)
    buf = ctypes.create_string_buffer(4096)
    st = lib.mla_codeobject_root(buf, len(buf), ctypes.byref(needed))
    if st == T.Status.ERROR_BUFFER_TOO_SMALL:
        buf = ctypes.create_string_buffer(needed.value)
        st = lib.mla_codeobject_root(buf, len(buf), ctypes.byref(needed))
    _lib.check(st)
    return buf.value.decode()


def set_codeobject_root(root):
    """Sets the code-object root of device-free queries (None: back to the search order)."""
    _lib.check(_lib.load().mla_set_codeobject_root(_lib.cstr(
        None if root is None else str(root), "root")))


@dataclass(frozen=True)
class ArchInfo:
    arch: str
    known: bool
    vendor: str            # "amd" | "nvidia"
    num_tables: int
    num_rows: int
    missing_files: int
    default_num_cus: int


def arch_info(arch):
    """Tables of one arch under the current root. Raises MlaArchNotBuilt, MlaTableError."""
    info = T.mla_arch_info()
    _lib.check(_lib.load().mla_arch_query(_lib.cstr(arch, "arch"), ctypes.byref(info)))
    return ArchInfo(info.arch.decode(), bool(info.known), "nvidia" if info.vendor else "amd",
                    info.num_tables, info.num_rows, info.missing_files, info.default_num_cus)


def arch_check(arch):
    """Lines "<table>:<line>: <code object>" for every table row whose file is missing."""
    lib = _lib.load()
    needed, count = ctypes.c_size_t(0), ctypes.c_int(0)
    st = lib.mla_arch_check(_lib.cstr(arch, "arch"), None, 0, ctypes.byref(needed),
                            ctypes.byref(count))
    if st == T.Status.ERROR_BUFFER_TOO_SMALL:
        buf = ctypes.create_string_buffer(max(needed.value, 1))
        st = lib.mla_arch_check(_lib.cstr(arch, "arch"), buf, len(buf), ctypes.byref(needed),
                                ctypes.byref(count))
        _lib.check(st)
        return [line for line in buf.value.decode().split("\n") if line]
    _lib.check(st)
    return []
