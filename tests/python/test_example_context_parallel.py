"""examples/context_parallel.py without a GPU (issue 9): its --cpu-check mode (W ranks simulated
with the CPU reference, the shard and comparison code of the NCCL modes) passes, and its shard
layout puts global position p of a request on rank p % W as local token p // W."""
import importlib.util
import os
import subprocess
import sys

import numpy as np
import pytest

import libmla

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(os.path.dirname(os.path.dirname(HERE)), "examples", "context_parallel.py")


def _run(*args):
    env = dict(os.environ)
    env["LIBMLA_PATH"] = libmla._lib.lib_path  # the library this suite loaded
    return subprocess.run([sys.executable, EXAMPLE, *args], capture_output=True, text=True,
                          env=env, timeout=300)


def test_cpu_check_passes():
    r = _run("--cpu-check")
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    lines = r.stdout.strip().splitlines()
    assert lines[-1] == "64 passed, 0 failed", lines[-5:]
    assert all(line.startswith("PASS W=") for line in lines[:-1])


def test_cpu_check_other_world_sizes_and_heads():
    r = _run("--cpu-check", "--cpu-world-sizes", "1,4", "--heads", "128", "--qlen", "2",
             "--s-k", "0,5", "--batch", "2", "--dtype", "bf16")
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert r.stdout.strip().splitlines()[-1] == "4 passed, 0 failed"


def test_bad_arguments_and_help():
    r = _run("--cpu-check", "--s-k", "x")
    assert r.returncode == 2 and "comma list" in r.stderr
    r = _run("--help")
    assert r.returncode == 0 and "--bench" in r.stdout and "--world-size" in r.stdout


@pytest.fixture(scope="module")
def example():
    spec = importlib.util.spec_from_file_location("context_parallel_example", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_nvlink_multicast_stays_off(example):
    for k, v in {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
                 "NVSHMEM_DISABLE_NVLS": "1"}.items():
        assert example._NCCL_ENV[k] == v
        assert k in os.environ


@pytest.mark.parametrize("W", [1, 2, 3, 5])
def test_round_robin_layout(example, W):
    G = np.array([0, 1, 2, 3, 4, 97, 130])
    whole = example.Layout(G, 1, 0, 16, seed=3)
    cache = np.full(whole.num_pages * 16, -1, np.int64)
    for b in range(len(G)):   # the whole cache's row of (b, p) holds the tag b * 1000 + p
        cache[whole.rows(b)] = b * 1000 + np.arange(G[b])
    seen = {b: [] for b in range(len(G))}
    for r in range(W):
        sh = example.Layout(G, W, r, 16, seed=3)
        assert list(sh.n) == [len(range(r, int(g), W)) for g in G]
        libmla.check_cp_shard(sh.g_kv_indptr, sh.kv_indptr, sh.last, 16, W, r)
        src, dst = example.shard_rows(whole, sh)
        local = np.full(sh.num_pages * 16, -1, np.int64)
        local[dst] = cache[src]
        for b in range(len(G)):
            tags = local[sh.rows(b)]
            # local token j of rank r is global position j * W + r
            assert list(tags) == [b * 1000 + j * W + r for j in range(int(sh.n[b]))]
            seen[b] += list(tags)
        assert len(set(sh.pages.tolist())) == len(sh.pages) <= sh.num_pages
    for b in range(len(G)):
        assert sorted(seen[b]) == [b * 1000 + p for p in range(G[b])]
