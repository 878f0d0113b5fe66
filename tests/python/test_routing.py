"""Device-free queries through the Python package: explicit arch, the project's fixture tables
(tests/fixtures) and the build tree's real sm_90a tables. Expected values follow the routing
rules (aiter's asm remap for AMD, libmla's sm_90a rules: Hk = H / r with r the smallest divisor
>= ceil(H/64), row tile M = T * Hk padded to 16/32/64 with T = min(L, max(1, 64 / Hk)))."""
import csv
import dataclasses
import os

import pytest

import libmla
from libmla import MlaAsmStatus, MlaBackend


def test_version():
    assert libmla.version() == (0, 1, 0)
    assert libmla.version_string() == "0.1.0"
    assert libmla.__version__ == "0.1.0"
    assert libmla.arch_names() == ["gfx942", "gfx950", "gfx1250", "sm_90a"]


# ---- aiter-compatible asm queries on the fixture tables ------------------------------------

def test_decode_asm_query_fixture_rows(fixture_root):
    r = libmla.decode_asm_query("gfx950", "fp8", "fp8", 32, 1, 2, True, True, True, False)
    assert r == (MlaAsmStatus.OK, 16, 4, "fx950_fp8_g16_q4_lse_ps")
    assert r[0] == "OK" and r.status is MlaAsmStatus.OK
    assert libmla.decode_asm_query("gfx950", "fp8", "fp8", 16, max_seqlen_q=2, has_lse=True) == \
        (MlaAsmStatus.NO_KERNEL, 16, 2, "")
    assert libmla.decode_asm_query("gfx950", "fp8", "fp8", 64, persistent=False) == \
        (MlaAsmStatus.REMAP_REJECT, 0, 0, "")
    assert libmla.decode_asm_query("gfx942", "fp8", "fp8", 64, has_lse=True) == \
        (MlaAsmStatus.OK, 64, 1, "fx942_fp8_g64_q1_lse_ps")


def test_ps1_fp8_asm_query_fixture_rows(fixture_root):
    assert libmla.ps1_fp8_asm_query("gfx1250", 96, 4, causal=True, has_lse=True) == \
        (MlaAsmStatus.OK, None, None, "fx1250_ps1_g96_lse")
    assert libmla.ps1_fp8_asm_query("gfx1250", 96, 1, causal=False) == \
        (MlaAsmStatus.OK, None, None, "fx1250_ps1_g96_msk0")
    # gfx950 has no mla_dsl table: a known arch without the table answers ARCH_NOT_BUILT.
    assert libmla.ps1_fp8_asm_query("gfx950", 96, 4).status is MlaAsmStatus.ARCH_NOT_BUILT


def test_asm_query_errors(fixture_root):
    with pytest.raises(libmla.MlaArchNotBuilt, match="unknown arch 'gfx2000'") as e:
        libmla.decode_asm_query("gfx2000", "fp8", "fp8", 16)
    assert e.value.status == 4 and e.value.status_name == "MLA_ERROR_ARCH_NOT_BUILT"
    with pytest.raises(libmla.MlaInvalidArgument):
        libmla.decode_asm_query("gfx950", "fp8", "fp8", 16, nhead_kv=2)
    with pytest.raises(ValueError):  # MlaInvalidArgument is a ValueError too
        libmla.decode_asm_query("gfx950", "fp4", "fp8", 16)
    with pytest.raises(libmla.MlaInvalidArgument, match="num_heads"):
        libmla.decode_asm_query("gfx950", "fp8", "fp8", 0)
    with pytest.raises(TypeError):
        libmla.decode_asm_query("gfx950", "fp8", "fp8", 16.0)
    with pytest.raises(TypeError):
        libmla.decode_asm_query("gfx950", "fp8", "fp8", True)


# ---- sm_90a on the build tree's real tables ------------------------------------------------

def _sm90_row(root, q, kv, m, causal=1, lse=0, cprr=0):
    """The build tree's sm_90a decode table row of a key (read here with the csv module)."""
    path = os.path.join(root, "sm_90a", "decode", "mla_decode.csv")
    with open(path) as f:
        rows = [r for r in csv.DictReader(f) if (r["qType"], r["kvType"], int(r["Gqa"]),
                                                   int(r["causal"]), int(r["lse"]),
                                                   int(r["cprr"]), int(r.get("fused", 0))) ==
                (q, kv, m, causal, lse, cprr, 0)]  # (fused = 1 rows: the tile_counters builds)
    assert len(rows) == 1, (path, q, kv, m)
    return rows[0]


@pytest.mark.parametrize("heads,qlen,q,kv,fold,hk,m", [
    (16, 1, "bf16", "bf16", 1, 16, 16),
    (16, 2, "bf16", "bf16", 1, 16, 32),
    (16, 4, "fp8", "fp8", 1, 16, 64),
    (32, 1, "bf16", "fp8", 1, 32, 32),
    (64, 1, "bf16", "bf16", 1, 64, 64),
    (128, 1, "fp8", "fp8", 2, 64, 64),
    (96, 2, "bf16", "fp8", 2, 48, 64),
    (8, 3, "bf16", "bf16", 1, 8, 32),
])
def test_sm90_shape_support_real_tables(build_root, heads, qlen, q, kv, fold, hk, m):
    s = libmla.shape_support(heads, qlen, q, kv, arch="sm_90a")
    assert isinstance(s, libmla.ShapeSupport)
    assert s.arch == "sm_90a" and s.backend is MlaBackend.SM90 and s.backend == "sm90"
    assert s.planner == "v1_2" and s.planner_accepts and s.packed_qo_len_per_wg == 64
    assert s.fold_factor == fold and s.kernel_num_heads == hk
    assert s.plan == ("Native" if fold == 1 else "Folded")
    assert s.natively_supported == (fold == 1) and s.native == (fold == 1)
    assert s.reduce_supported is True
    assert s.asm_status is MlaAsmStatus.OK and s.asm_status == "OK"
    assert (s.table_gqa, s.table_qseqlen) == (m, 0)
    row = _sm90_row(build_root, q, kv, m)
    assert s.asm_kernel == row["knl_name"]
    assert s.code_object == os.path.join(build_root, "sm_90a", "decode", row["co_name"])
    assert s.supported is True and s.reasons == () and s.num_reasons == 0
    # The aiter-compatible query reports the same row for the kernel heads.
    assert libmla.decode_asm_query("sm_90a", q, kv, hk, max_seqlen_q=qlen) == \
        (MlaAsmStatus.OK, m, 0, s.asm_kernel)
    # head_plan agrees with the shape query.
    hp = libmla.head_plan(heads, qlen, q, kv, arch="sm_90a")
    assert (hp.qk_batch_ratio, hp.kernel_num_heads, hp.plan, hp.backend) == \
        (fold, hk, s.plan, MlaBackend.SM90)


def test_sm90_unsupported_shapes_give_reasons(build_root):
    s = libmla.shape_support(16, 1, "fp16", "bf16", arch="sm_90a")
    assert s.supported is False and s.plan == "Unsupported" and not s.planner_accepts
    assert s.asm_status is MlaAsmStatus.NO_KERNEL and s.asm_kernel is None
    assert s.num_reasons == len(s.reasons) == 2
    assert s.reasons[0].startswith("sm90 kernels take q/kv bf16/bf16, bf16/fp8 or fp8/fp8")
    assert s.reasons[1].startswith("sm90 NO_KERNEL on sm_90a: q=fp16 kv=bf16 heads=16 qlen=1")
    # round-robin context parallel is causal only (even at qlen 1, where the key reads causal)
    cp = libmla.shape_support(16, 1, "bf16", "bf16", arch="sm_90a", cp_round_robin=True,
                              causal=False)
    assert cp.supported is False
    assert cp.reasons == ("sm90 round-robin context parallel (cp_world_size=2) is causal only, "
                          "causal=False",)


@pytest.mark.parametrize("heads,qlen,q,kv,m,lse", [
    (16, 1, "bf16", "bf16", 16, False), (16, 4, "bf16", "fp8", 64, True),
    (128, 2, "fp8", "fp8", 64, True), (32, 1, "bf16", "bf16", 32, False)])
def test_sm90_cprr_rows_real_tables(build_root, heads, qlen, q, kv, m, lse):
    """Round-robin context parallel (issue 9): the cprr rows run the same kernel as the plain
    ones (the kernel reads cp_world_size at run time); the shape query finds them."""
    s = libmla.shape_support(heads, qlen, q, kv, arch="sm_90a", cp_round_robin=True,
                             return_lse=lse)
    assert s.supported is True and s.reasons == ()
    assert (s.table_gqa, s.table_qseqlen) == (m, 0)
    row = _sm90_row(build_root, q, kv, m, lse=int(lse), cprr=1)
    plain = _sm90_row(build_root, q, kv, m, lse=int(lse), cprr=0)
    assert s.asm_kernel == row["knl_name"] == plain["knl_name"]
    assert (row["launch_threads"], row["launch_smem"]) == \
        (plain["launch_threads"], plain["launch_smem"])
    hk = heads // (2 if heads > 64 else 1)
    assert libmla.decode_asm_query("sm_90a", q, kv, hk, max_seqlen_q=qlen, has_lse=lse,
                                   has_cprr=True) == (MlaAsmStatus.OK, m, 0, s.asm_kernel)
    # no non-causal cprr row (the aiter query with causal=False finds none at qlen > 1)
    if qlen > 1:
        assert libmla.decode_asm_query("sm_90a", q, kv, hk, max_seqlen_q=qlen, causal=False,
                                       has_lse=lse, has_cprr=True).status is \
            MlaAsmStatus.NO_KERNEL


def test_amd_shape_support_fixture_tables(fixture_root):
    s = libmla.shape_support(32, 2, "fp8", "fp8", arch="gfx950", return_lse=True)
    assert (s.backend, s.asm_status, s.table_gqa, s.table_qseqlen, s.asm_kernel, s.supported) == \
        (MlaBackend.ASM, MlaAsmStatus.OK, 16, 4, "fx950_fp8_g16_q4_lse_ps", True)
    assert s.code_object.endswith("gfx950/mla/fx950_fp8_g16_q4_lse_ps.co")
    s = libmla.shape_support(16, 2, "fp8", "fp8", arch="gfx950", return_lse=True)
    assert s.supported is False and s.asm_status is MlaAsmStatus.NO_KERNEL
    assert s.reasons == ("asm NO_KERNEL on gfx950: q=fp8 kv=fp8 heads=16 qlen=2 (table gqa=16 "
                         "qseqlen=2) persistent=True causal=True lse=True cprr=False",)


def test_shape_support_is_frozen_and_complete(build_root):
    s = libmla.shape_support(16, 1, "bf16", "bf16", arch="sm_90a")
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.supported = False
    from libmla import _types as T
    c_fields = [f for f, _ in T.mla_decode_support._fields_ if f != "struct_size"]
    assert [f.name for f in dataclasses.fields(s)] == c_fields


def test_shape_support_accepts_dtype_objects(build_root):
    import ml_dtypes
    a = libmla.shape_support(16, 1, ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn, arch="sm_90a")
    b = libmla.shape_support(16, 1, "bf16", "fp8", arch="sm_90a")
    assert a == b


def test_shape_support_errors():
    with pytest.raises(TypeError, match="arch is required"):
        libmla.shape_support(16, 1, "bf16", "bf16", arch=None)
    with pytest.raises(libmla.MlaInvalidArgument):
        libmla.shape_support(0, 1, "bf16", "bf16", arch="sm_90a")
    with pytest.raises(libmla.MlaInvalidArgument):
        libmla.shape_support(16, 1, "bf16", "bf16", arch="sm_90a", num_heads_k=2)
    with pytest.raises(ValueError, match="not a libmla dtype"):
        libmla.shape_support(16, 1, "int4", "bf16", arch="sm_90a")
    with pytest.raises(TypeError):
        libmla.shape_support(True, 1, "bf16", "bf16", arch="sm_90a")
    with pytest.raises(libmla.MlaArchNotBuilt):
        libmla.shape_support(16, 1, "bf16", "bf16", arch="sm_75")


def test_reduce_supports():
    assert libmla.reduce_supports(128, 512) is True
    assert libmla.reduce_supports(64, 512) is True
    assert libmla.reduce_supports(3, 512) is False
    assert libmla.reduce_supports(128, 100) is False


def test_occupancy():
    assert libmla.decode_occupancy("gfx950", 16, 4, "fp8", "fp8", enable_experimental=True) == 2
    assert libmla.decode_occupancy("gfx950", 16, 4, "fp8", "fp8") == 1
    assert libmla.decode_occupancy("sm_90a", 64, 1, "fp8", "fp8", enable_experimental=True) == 1


def test_arch_info_and_check(fixture_root):
    info = libmla.arch_info("gfx950")
    assert (info.arch, info.known, info.vendor, info.num_tables, info.default_num_cus) == \
        ("gfx950", True, "amd", 1, 256)
    assert info.num_rows == info.missing_files == 21  # fixture tables list no real files
    lines = libmla.arch_check("gfx950")
    assert len(lines) == 21
    assert lines[0].endswith("gfx950/mla/mla_asm.csv:2: " + fixture_root +
                             "/gfx950/mla/fx950_fp8_g16_q1_ps.co")
    assert libmla.codeobject_root() == fixture_root
    with pytest.raises(libmla.MlaArchNotBuilt):
        libmla.arch_info("gfx2000")
    with pytest.raises(libmla.MlaInvalidArgument):
        libmla.set_codeobject_root("/nonexistent/folder")


def test_sm90_arch_info_real_tables(build_root):
    info = libmla.arch_info("sm_90a")
    assert info.vendor == "nvidia" and info.default_num_cus == 132
    assert info.num_tables >= 4  # decode, copy, reduce, planner, smoke
