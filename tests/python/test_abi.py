"""The binding cannot drift from include/mla_c_api.h:
* every MLA_API function of the header is in PROTOTYPES with the same argument count and kinds
  (pointer / int32 / size_t / float / byte, the right Structure behind struct pointers) and the
  same return kind, and the library exports it;
* every public struct of the header has a ctypes Structure with the same field names in order,
  and a C program compiled here checks sizeof, each field's offset and the *_INIT defaults."""
import ctypes
import os
import re
import shutil
import subprocess

import pytest

import libmla
from libmla import _types as T

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HEADER = os.path.join(ROOT, "include", "mla_c_api.h")


def _header_text():
    with open(HEADER) as f:
        s = f.read()
    s = re.sub(r"/\*.*?\*/", " ", s, flags=re.S)
    s = re.sub(r"//[^\n]*", " ", s)
    return s


def _header_structs():
    out = {}
    for name, body in re.findall(r"typedef\s+struct\s+(\w+)\s*\{(.*?)\}\s*\1\s*;", _header_text(),
                                 flags=re.S):
        fields = []
        for decl in body.split(";"):
            decl = " ".join(decl.split())
            if not decl:
                continue
            m = re.match(r"(.*?)(\w+)\s*(\[\s*(\d+)\s*\])?$", decl)
            assert m, decl
            fields.append((m.group(2), m.group(1).strip(), m.group(4)))
        out[name] = fields
    return out


def _header_functions():
    out = {}
    for ret, name, params in re.findall(r"MLA_API\s+([^;{}]*?)\b(mla_\w+)\s*\(([^)]*)\)\s*;",
                                        _header_text(), flags=re.S):
        params = " ".join(params.split())
        plist = [] if params in ("void", "") else [p.strip() for p in params.split(",")]
        out[name] = (" ".join(ret.split()), plist)
    return out


ENUMS = {"mla_status", "mla_dtype", "mla_planner", "mla_head_plan_kind", "mla_backend",
         "mla_asm_status"}


def _c_kind(decl):
    """Kind of a C type (a parameter with its name or a bare type)."""
    d = decl.replace("const ", "").strip()
    if "*" in d:
        base = d.split("*")[0].strip()
        return ("ptr", base)
    words = d.split()
    t = " ".join(words[:-1]) if len(words) > 1 and words[-1] not in ("int", "char") else d
    if t in ("int", "int32_t") or t in ENUMS:
        return ("i32", None)
    if t == "int64_t":
        return ("i64", None)
    if t == "size_t":
        return ("size_t", None)
    if t == "float":
        return ("float", None)
    if t == "unsigned char":
        return ("u8", None)
    if t == "void":
        return ("void", None)
    raise AssertionError(f"unknown C type in {decl!r}")


def _py_kind(t):
    if t is None:
        return "void"
    if t in (ctypes.c_char_p, ctypes.c_void_p) or (isinstance(t, type) and
                                                   issubclass(t, ctypes._Pointer)):
        return "ptr"
    if t is ctypes.c_float:
        return "float"
    if t is ctypes.c_ubyte:
        return "u8"
    if t is ctypes.c_size_t:
        return "size_t"
    if t is ctypes.c_int64 and ctypes.sizeof(t) == 8 and t is not ctypes.c_size_t:
        return "i64"
    if ctypes.sizeof(t) == 4 and t in (ctypes.c_int, ctypes.c_int32):
        return "i32"
    raise AssertionError(f"unexpected ctypes type {t}")


def test_every_header_function_is_declared_with_matching_kinds():
    header = _header_functions()
    table = {name: (res, args) for name, res, args in libmla.PROTOTYPES}
    assert len(header) >= 45
    assert sorted(header) == sorted(table), (set(header) ^ set(table))
    for name, (ret, params) in header.items():
        res, args = table[name]
        assert len(args) == len(params), name
        for p, a in zip(params, args):
            kind, base = _c_kind(p)
            assert _py_kind(a) == kind, f"{name}: {p!r} declared as {a}"
            if kind == "ptr" and base in T.STRUCTS:
                assert a is ctypes.POINTER(T.STRUCTS[base][0]), f"{name}: {p!r} -> {a}"
            if kind == "ptr" and base == "char" and "const" in p:
                assert a is ctypes.c_char_p, f"{name}: {p!r} should be c_char_p"
        rkind, rbase = _c_kind(ret + " x")
        assert _py_kind(res) == rkind, f"{name} returns {ret!r}, declared {res}"
        if rkind == "ptr" and rbase == "char":
            assert res is ctypes.c_char_p, name
    assert libmla._lib.missing_symbols == []


def test_struct_fields_match_header_names_and_kinds():
    structs = _header_structs()
    assert sorted(structs) == sorted(T.STRUCTS)
    for name, fields in structs.items():
        cls = T.STRUCTS[name][0]
        assert [f[0] for f in fields] == [f[0] for f in cls._fields_], name
        for (fname, ctype, arr), (_, pytype) in zip(fields, cls._fields_):
            if arr is not None:
                assert issubclass(pytype, ctypes.Array) and pytype._length_ == int(arr), fname
                assert pytype._type_ is ctypes.c_char, fname
            else:
                kind, base = _c_kind(ctype + " x")
                assert _py_kind(pytype) == kind, f"{name}.{fname}: {ctype} vs {pytype}"
                if kind == "ptr" and base in T.STRUCTS:
                    assert pytype is ctypes.POINTER(T.STRUCTS[base][0])


def _compiler():
    for cand in (os.environ.get("MLA_TEST_CC"), os.environ.get("CC"), "cc", "gcc", "clang"):
        if cand and shutil.which(cand.split()[0]):
            return cand.split()
    pytest.fail("no C compiler found (set MLA_TEST_CC); the ABI check needs one")


def _c_program():
    lines = ["#include <stdio.h>", "#include <stddef.h>", '#include "mla_c_api.h"',
             "int main(void) {"]
    for name, (cls, init) in T.STRUCTS.items():
        lines.append(f'printf("size {name} %zu\\n", sizeof({name}));')
        for fname, ftype in cls._fields_:
            lines.append(f'printf("off {name}.{fname} %zu\\n", offsetof({name}, {fname}));')
        if init is None:
            continue
        var = f"v_{name}"
        lines.append(f"{{ {name} {var} = {init};")
        for fname, ftype in cls._fields_:
            k = _py_kind(ftype) if not issubclass(ftype, ctypes.Array) else "array"
            if k == "ptr":
                expr = f'printf("val {name}.{fname} %d\\n", {var}.{fname} != NULL);'
            elif k == "float":
                expr = f'printf("val {name}.{fname} %.9g\\n", (double){var}.{fname});'
            elif k == "array":
                expr = f'printf("val {name}.{fname} %d\\n", (int){var}.{fname}[0]);'
            else:
                expr = f'printf("val {name}.{fname} %lld\\n", (long long){var}.{fname});'
            lines.append(expr)
        lines.append("}")
    lines += ["return 0;", "}"]
    return "\n".join(lines) + "\n"


def _py_value(s, fname, ftype):
    v = getattr(s, fname)
    if issubclass(ftype, ctypes.Array):
        return str(v[0] if not isinstance(v, bytes) else (v[:1] or b"\0")[0])
    if _py_kind(ftype) == "ptr":
        return "0" if not v else "1"
    if ftype is ctypes.c_float:
        return f"{v:.9g}"
    return str(int(v))


def test_struct_layout_and_defaults_match_compiled_header(tmp_path):
    src = tmp_path / "abi.c"
    src.write_text(_c_program())
    exe = tmp_path / "abi"
    r = subprocess.run(_compiler() + ["-std=c11", "-I", os.path.join(ROOT, "include"), str(src),
                                      "-o", str(exe)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    seen = 0
    for line in out.splitlines():
        what, key, value = line.split()
        if what == "size":
            cls = T.STRUCTS[key][0]
            assert ctypes.sizeof(cls) == int(value), key
        elif what == "off":
            sname, fname = key.split(".")
            cls = T.STRUCTS[sname][0]
            assert getattr(cls, fname).offset == int(value), key
        else:
            sname, fname = key.split(".")
            cls = T.STRUCTS[sname][0]
            s = cls()
            if fname == "struct_size":
                assert int(value) == ctypes.sizeof(cls) == s.struct_size
                continue
            ftype = dict(cls._fields_)[fname]
            assert _py_value(s, fname, ftype) == value, f"default of {key}"
        seen += 1
    assert seen > 200


def test_every_structure_sets_struct_size():
    for name, (cls, _init) in T.STRUCTS.items():
        assert cls().struct_size == ctypes.sizeof(cls), name
        assert cls._fields_[0] == ("struct_size", ctypes.c_size_t)


def test_enums_match_header():
    text = _header_text()
    for prefix, enum in (("MLA_DTYPE_", T.DType), ("MLA_PLANNER_", T.Planner),
                         ("MLA_HEAD_PLAN_", T.HeadPlanKind)):
        for m in re.finditer(prefix + r"(\w+)\s*=\s*(\d+)", text):
            assert enum[m.group(1)] == int(m.group(2))
    for m in re.finditer(r"MLA_(SUCCESS|ERROR_\w+)\s*=\s*(\d+)", text):
        assert T.Status[m.group(1)] == int(m.group(2))
        assert libmla.status_string(int(m.group(2))) == "MLA_" + m.group(1)
        if int(m.group(2)):
            assert libmla.error_class(int(m.group(2))).status_code == int(m.group(2))
    for m in re.finditer(r"MLA_BACKEND_(\w+)\s*=\s*(\d+)", text):
        assert T.BACKENDS[int(m.group(2))].name == m.group(1)
        assert libmla.lib.mla_backend_string(int(m.group(2))).decode() == \
            T.BACKENDS[int(m.group(2))].value
    for m in re.finditer(r"MLA_ASM_(\w+)\s*=\s*(\d+)", text):
        assert T.ASM_STATUSES[int(m.group(2))].name == m.group(1)
        assert libmla.lib.mla_asm_status_string(int(m.group(2))).decode() == m.group(1)
    for i, s in enumerate(T.PLANNERS):
        assert libmla.lib.mla_planner_string(i).decode() == s
    for i, s in enumerate(T.HEAD_PLAN_KINDS):
        assert libmla.lib.mla_head_plan_string(i).decode() == s
    for name, value in T.DTYPE_NAMES.items():
        out = ctypes.c_int(-1)
        assert libmla.lib.mla_dtype_from_string(name.encode(), ctypes.byref(out)) == 0
        assert out.value == value
        assert libmla.lib.mla_dtype_string(value).decode() == name
