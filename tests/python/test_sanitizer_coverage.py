"""Device-free check that scripts/gpu_check.sh's compute-sanitizer memcheck runs
(scripts/sanitizer_runs.txt, `mla run ARGS`) launch every decode kernel of the sm_90a table
(codeobjects/sm_90a/decode/mla_decode.csv) and both reducers of reduce/mla_reduce.csv. Each run's
decode kernel is routed with libmla.shape_support, as mla_decode_fwd routes it; its reducer row
follows mla_decode_fwd's launch rule (src/launch/decode_check.cpp: the plan can split when
mla_metadata_info gives partial rows and tiles; spread = 1 when tiles x M <= 2 x clusters) on the
plan of an H200 (132 SMs), whose sizes do not depend on the KV lengths."""
import csv
import pathlib
import shlex

import numpy as np

import libmla

ROOT = pathlib.Path(__file__).resolve().parents[2]
RUNS = ROOT / "scripts" / "sanitizer_runs.txt"
TABLES = ROOT / "codeobjects" / "sm_90a"
H200_SMS = 132


def _table(rel):
    with open(TABLES / rel, newline="") as f:
        return list(csv.DictReader(f))


def _runs():
    for line in RUNS.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            yield line


def _args(line):
    """The `mla run` flags these lines use, with mla run's defaults (tools/mla/cmd_run.cpp)."""
    a = {"--batch": 128, "--kv-len": 4096, "--heads": 16, "--qlen": 1, "--page-size": 64,
         "--dtype": "bf16", "--kv-dtype": None, "--long-first": 1}
    words = shlex.split(line)
    a["--fused-reduce"] = "--fused-reduce" in words  # (a flag without a value)
    words = [w for w in words if w != "--fused-reduce"]
    for flag, value in zip(words[::2], words[1::2]):
        assert flag in a, f"{RUNS.name}: flag {flag} is not known to this test"
        a[flag] = value if flag in ("--dtype", "--kv-dtype") else int(value)
    a["--kv-dtype"] = a["--kv-dtype"] or a["--dtype"]
    return a


def _plan(a):
    """The H200 host plan of `mla run` flags `a` (_args), as mla run plans (head-group-major),
    with every request at --kv-len tokens and request 0 at --long-first times that."""
    B, L, H, ps = a["--batch"], a["--qlen"], a["--heads"], a["--page-size"]
    lens = [a["--kv-len"] * (a["--long-first"] if b == 0 else 1) for b in range(B)]
    pages = [-(-n // ps) for n in lens]
    return libmla.plan_metadata(np.arange(B + 1) * L, np.concatenate([[0], np.cumsum(pages)]),
                                np.array([n - (p - 1) * ps for n, p in zip(lens, pages)]), H,
                                arch="sm_90a", num_clusters=H200_SMS, page_size=ps, max_seqlen_qo=L,
                                dtype_q=a["--dtype"], dtype_kv=a["--kv-dtype"], head_group_major=True)


def _launched(line):
    """((decode kernel, the decode row's fused column), reducer kernel or None) that `mla run LINE`
    launches on an H200."""
    a = _args(line)
    s = libmla.shape_support(a["--heads"], a["--qlen"], a["--dtype"], a["--kv-dtype"], arch="sm_90a",
                             causal=True, page_size=a["--page-size"], return_lse=True)
    assert s.supported, line
    # a plain row may name the *_fused build (bf16 m32); an fp8 qm row may name the three-warpgroup
    # *_ws (a -DMLA_QM8_WS=1 build only; no shipped row does)
    plain = s.asm_kernel.removesuffix("_fused").removesuffix("_ws")
    m = int(plain.rsplit("_m", 1)[1])  # the row tile M (the table's Gqa)
    info = _plan(a).info
    if info.partial_rows <= 0 or info.reduce_indptr_len <= 1:
        return (s.asm_kernel, "0"), None
    spread = (info.reduce_indptr_len - 1) * m <= 2 * info.num_clusters
    row = [r for r in _table("reduce/mla_reduce.csv") if r["spread"] == str(int(spread))]
    assert len(row) == 1, f"mla_reduce.csv has {len(row)} rows for spread {int(spread)}"
    # --fused-reduce: the decode row keyed fused = 1 reduces the split tiles itself, where the
    # reducer row says launch_fused 1 and the decode table has such a row (decode_check.cpp)
    fused = plain + "_fused"
    if a["--fused-reduce"] and row[0].get("launch_fused") == "1" and \
            any(r["knl_name"] == fused and r["fused"] == "1" for r in _table("decode/mla_decode.csv")):
        return (fused, "1"), None
    return (s.asm_kernel, "0"), row[0]["knl_name"]


def test_memcheck_runs_cover_every_sm90a_kernel():
    decode = {(r["knl_name"], r["fused"]) for r in _table("decode/mla_decode.csv")}
    reduce = {r["knl_name"] for r in _table("reduce/mla_reduce.csv")}
    got_decode, got_reduce = set(), set()
    for line in _runs():
        d, r = _launched(line)
        got_decode.add(d)
        if r:
            got_reduce.add(r)
    assert decode - got_decode == set(), f"no memcheck run for {sorted(decode - got_decode)}"
    assert reduce - got_reduce == set(), f"no memcheck run for {sorted(reduce - got_reduce)}"
    assert got_decode <= decode


def test_a_memcheck_run_reduces_a_tile_of_more_than_32_fragments():
    # mla_reduce_tiles_bf16 holds 32 fragments per lane round; request 0 of 9000 tokens among
    # four of ~300 splits into more (the plan's fragment count does not depend on the data)
    line = "--batch 5 --kv-len 300 --heads 64 --page-size 16 --long-first 30"
    assert line in list(_runs())
    assert _launched(line)[1] == "mla_reduce_tiles_bf16"
    plan = _plan(_args(line))  # 9000 tokens, then four of 300
    ri = np.asarray(plan.reduce_indptr)[:plan.info.reduce_indptr_len]
    assert np.diff(ri).max() > 32


def test_the_rule_sees_both_reducers():
    # b = 3 of 300 tokens splits into few tiles (slim reducer), b = 40 of 2000 into many
    assert _launched("--batch 3 --kv-len 300 --heads 16") == (("mla_decode_wg_bf16_bf16_m16", "0"),
                                                              "mla_reduce_slim_bf16")
    assert _launched("--batch 40 --kv-len 2000 --heads 16") == (("mla_decode_wg_bf16_bf16_m16", "0"),
                                                                "mla_reduce_tiles_bf16")
