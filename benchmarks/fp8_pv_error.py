#!/usr/bin/env python3
"""The output error of P.V with P in fp8 e4m3 instead of f16 (docs/performance.md, session 22:
a lead for the fp8 qm kernel, whose O^T chain converts V to f16 for f16 MMAs).

CPU only (numpy, ml_dtypes). Data as FlashMLA's test and `mla run`: q and kv ~ randn / 10
clamped to [-1, 1], rounded to e4m3 (fp8 Q and KV); V = the first 512 columns of KV; softmax
scale 0.135234 times a logit multiplier (1: the test's near-uniform logits; 4, 16: peakier
attention). The reference is float64 throughout. The kernel-like paths keep P = exp(S - m) in
fp32 with the exact row max m (the kernels' running max is at most as large, so their P is not
smaller), the row sum l in fp32 of the unrounded P, and O = (P' . V) / l with P' either f16 (the
shipped kernel) or e4m3 times 2^k (k = 0, 4, 8: the scale keeps small P out of e4m3's
subnormals; 448 is e4m3's largest value, so P <= 1 allows k <= 8). Prints, for each case, the
largest absolute and relative O error against the tolerance of the decode tests (abs 8e-4 or
rel 1.6%, FlashMLA's).

usage: fp8_pv_error.py [--rows 64] [--seed 1]
"""
import argparse

import ml_dtypes
import numpy as np

E4M3 = ml_dtypes.float8_e4m3fn


def fp8(x):
    return x.astype(E4M3).astype(np.float64)


def case(rng, rows, n, mult):
    q = fp8(np.clip(rng.standard_normal((rows, 576)) / 10, -1, 1))
    kv = fp8(np.clip(rng.standard_normal((n, 576)) / 10, -1, 1))
    v = kv[:, :512]
    s = (q @ kv.T) * 0.135234 * mult
    p = np.exp(s - s.max(axis=1, keepdims=True))
    ref = (p @ v) / p.sum(axis=1, keepdims=True)
    p32 = p.astype(np.float32)
    l32 = p32.sum(axis=1, dtype=np.float32, keepdims=True).astype(np.float64)
    out = {"f16 P": (p32.astype(np.float16).astype(np.float64) @ v) / l32}
    for k in (0, 4, 8):
        pk = (p32 * np.float32(2.0**k)).astype(E4M3).astype(np.float64)
        out[f"e4m3 P x 2^{k}"] = (pk @ v) / 2.0**k / l32
    return ref, out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=64)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    print(f"{'s_k':>6} {'logits x':>8} {'P':>14} {'max abs err':>12} {'max rel err':>12}  within 8e-4 abs or 1.6% rel")
    for n in (64, 1024, 4096, 16384):
        for mult in (1, 4, 16):
            ref, out = case(rng, args.rows, n, mult)
            for name, o in out.items():
                d = np.abs(o - ref)
                rel = d / np.maximum(np.abs(ref), 1e-30)
                ok = bool(((d < 8e-4) | (rel < 0.016)).all())
                print(f"{n:6d} {mult:8d} {name:>14} {d.max():12.3e} {rel.max():12.3e}  {'yes' if ok else 'NO'}")


if __name__ == "__main__":
    main()
