"""Device-free check that the GPU tests' float64 torch cases (test_gpu.CASES) reach every decode
kernel of the sm_90a table (codeobjects/sm_90a/decode/mla_decode.csv): each case is routed with
libmla.shape_support, exactly as mla_decode_fwd routes it, and the kernels they name must be all
of the table's. Runs in CI (no GPU), so a new kernel cannot land without a torch case."""
import csv
import pathlib

import libmla
import test_gpu

TABLE = pathlib.Path(__file__).resolve().parents[2] / "codeobjects" / "sm_90a" / "decode" / "mla_decode.csv"


def test_torch_cases_cover_every_sm90a_decode_kernel():
    with open(TABLE, newline="") as f:
        # (kernel, fused column): a plain row may name a *_fused build (the bf16 m32 rows since
        # session 17), so the fused = 1 rows need their own (fused) cases
        table = {(row["knl_name"], row["fused"]) for row in csv.DictReader(f)}
    reached = set()
    for q_dt, kv_dt, H, qlens, ps, _lens, causal, *_ in test_gpu.CASES:
        s = libmla.shape_support(H, max(qlens), q_dt, kv_dt, arch="sm_90a", causal=causal, page_size=ps)
        assert s.supported, (q_dt, kv_dt, H, qlens, ps)
        reached.add((s.asm_kernel, "0"))
    for q_dt, kv_dt, H, qlens, ps, _lens, causal, *_ in test_gpu.FUSED_CASES:  # the *_fused builds
        s = libmla.shape_support(H, max(qlens), q_dt, kv_dt, arch="sm_90a", causal=causal, page_size=ps)
        assert s.supported, (q_dt, kv_dt, H, qlens, ps)
        reached.add((s.asm_kernel.removesuffix("_fused") + "_fused", "1"))
    assert table - reached == set(), f"no float64 torch case for {sorted(table - reached)}"
    assert reached <= table
