"""Device-free check of the built sm_90a cubins' kernel parameter layout, which libmla's launch
relies on: every kernel takes one params struct, and the runtime passes it as a packed argument
buffer (CU_LAUNCH_PARAM_BUFFER_POINTER), which the driver copies to the start of the kernel's
parameter space. So parameter 0 must sit at offset 0 there. An over-aligned struct breaks that
silently: ptxas then places it further in (a 128-byte aligned struct lands at offset 112 on
sm_90, after constant-bank byte 0x210) and every field the kernel reads is shifted (session 6:
every decode kernel faulted on the H200). Reads EIATTR_KPARAM_INFO from each cubin's
.nv.info.<kernel> sections. Also: the decode kernels' TMA tensor map (decode_params.h, kv_tmap)
lands 128-byte aligned in the constant bank, and each table row's shared memory (the kernel's
static .nv.shared section plus the row's launch_smem) fits the SM. Skips when the build has no
cubins (no nvcc)."""
import csv
import os
import pathlib
import struct

import pytest

EIATTR_KPARAM_INFO = 0x17
EIATTR_PARAM_CBANK = 0x0A


# byte offset of mla_decode_params.kv_tmap modulo 128 (decode_check.cpp static_asserts it)
KV_TMAP_OFFSET_MOD_128 = 112
# shared memory per SM that a CTA may hold on sm_90: 228 KB, of which the driver reserves 1 KB per
# CTA (counted in each kernel's .nv.shared section), the rest static + dynamic (227 KB opt-in)
SM90_SHARED_PER_CTA = 228 * 1024


def _root():
    return pathlib.Path(os.environ.get("MLA_BUILD_ROOT", "build")) / "codeobjects" / "sm_90a"


def _cubins():
    return sorted(_root().glob("*/*.cubin"))


def _section_heads(data):
    """(name, file offset, size) of every ELF64 section."""
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    heads = [struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize) for i in range(shnum)]
    stroff = heads[shstrndx][4]
    for name, _typ, _flags, _addr, off, size in heads:
        end = data.index(b"\0", stroff + name)
        yield data[stroff + name:end].decode(), off, size


def _sections(data):
    """(name, bytes) of every ELF64 section."""
    for name, off, size in _section_heads(data):
        yield name, data[off:off + size]


def _attributes(info):
    """(attribute, value bytes) of an .nv.info section (format 4: u16 length + value)."""
    i = 0
    while i < len(info):
        fmt, attr = info[i], info[i + 1]
        if fmt == 4:
            n = struct.unpack_from("<H", info, i + 2)[0]
            yield attr, info[i + 4:i + 4 + n]
            i += 4 + n
        elif fmt == 3:
            yield attr, info[i + 2:i + 4]
            i += 4
        else:
            i += 2


def _kernel_params(path):
    """{kernel: [(ordinal, offset, size)], ...} and {kernel: parameter-space size}."""
    params, space = {}, {}
    for name, body in _sections(path.read_bytes()):
        if not name.startswith(".nv.info."):
            continue
        kernel = name[len(".nv.info."):]
        for attr, val in _attributes(body):
            if attr == EIATTR_KPARAM_INFO:
                _index, ordinal, offset, flags = struct.unpack_from("<IHHI", val)
                params.setdefault(kernel, []).append((ordinal, offset, (flags >> 18) & 0x3FFF))
            elif attr == EIATTR_PARAM_CBANK:
                space[kernel] = struct.unpack_from("<HH", val, 4)  # (constant-bank offset, size)
    return params, space


def test_every_kernel_takes_one_struct_at_parameter_offset_0():
    cubins = _cubins()
    if not cubins:
        pytest.skip("no sm_90a cubins in the build (built without nvcc)")
    kernels = 0
    for path in cubins:
        params, space = _kernel_params(path)
        assert params, f"{path.name}: no kernel parameter info"
        for kernel, ps in params.items():
            assert len(ps) == 1, f"{path.name}:{kernel}: {len(ps)} parameters, libmla passes one struct"
            ordinal, offset, size = ps[0]
            assert ordinal == 0
            assert offset == 0, (f"{path.name}:{kernel}: the params struct is at parameter offset {offset}; "
                                 "the packed launch buffer starts at 0 (an over-aligned struct?)")
            assert space[kernel][1] == size, f"{path.name}:{kernel}: parameter space {space[kernel][1]} != struct {size}"
            if kernel.startswith("mla_decode_"):
                # TMA reads kv_tmap in place and needs it 64-byte aligned; the struct places it to
                # be 128-byte aligned at the parameter space's constant-bank offset
                assert (space[kernel][0] + KV_TMAP_OFFSET_MOD_128) % 128 == 0, (
                    f"{path.name}:{kernel}: parameters at constant-bank {space[kernel][0]:#x}: kv_tmap misaligned")
            kernels += 1
    assert kernels >= 10  # decode families, reducers, merge, planner, copy, smoke


def test_the_check_sees_an_offset_parameter():
    # the layout of session 6's broken build: a 384-byte struct at offset 112 (0x70) in a
    # 496-byte parameter space; the parser must report it, not offset 0
    val = struct.pack("<IHHI", 0, 0, 0x70, (384 << 18) | 0x1F000)
    info = bytes([4, EIATTR_KPARAM_INFO]) + struct.pack("<H", len(val)) + val
    (attr, got), = list(_attributes(info))
    _index, ordinal, offset, flags = struct.unpack_from("<IHHI", got)
    assert (attr, ordinal, offset, (flags >> 18) & 0x3FFF) == (EIATTR_KPARAM_INFO, 0, 0x70, 384)


def test_every_table_row_fits_the_shared_memory_of_an_sm():
    # static shared memory (the kernel's .nv.shared section: the 1 KB the driver reserves plus
    # what the kernel declares, e.g. the transposed kernels' mbarriers, which pad to 1 KB ahead of
    # the 1024-byte aligned dynamic part) plus the row's launch_smem
    if not _cubins():
        pytest.skip("no sm_90a cubins in the build (built without nvcc)")
    with open(_root() / "decode" / "mla_decode.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert rows
    for row in rows:
        data = (_root() / "decode" / row["co_name"]).read_bytes()
        static = {name: size for name, _off, size in _section_heads(data)}.get(".nv.shared." + row["knl_name"], 0)
        total = static + int(row["launch_smem"])
        assert total <= SM90_SHARED_PER_CTA, f"{row['knl_name']}: {static} static + {row['launch_smem']} dynamic"
