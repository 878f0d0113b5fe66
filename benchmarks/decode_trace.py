#!/usr/bin/env python3
"""Where a short work's time goes: runs libmla's decode on a built-in bf16 shape with a code-object
directory whose 16-row wgmma cubin was built with -DMLA_WG_TRACE=1 (codeobjects/sm_90a/decode/
trace.cuh), and prints, per stamp, when the CTAs reached it. Not part of libmla; results of a trace
build are wrong by design (the stamps overwrite each CTA's first output row).

  MLA_CODEOBJECT_DIR=build-var/s25/trace/codeobjects LIBMLA_PATH=build-lead/src/libmla.so.0 \\
  PYTHONPATH=bindings/python python3 benchmarks/decode_trace.py --batch 1 --kv-len 32768

Each call runs after a 256 MB L2 flush (as `mla bench` times; --cache for the other states), with
the GPU kept busy ahead of it so that the events time the decode and reducer launches alone; the
last of --iters calls is read.
--qm: the directory's 64-row bf16 cubin (mla_decode_qm_bf16_bf16.cubin) was built with
-DMLA_WG_TRACE=2 instead (the qm TMA body's stamps, decode_qm_tma.cuh; --heads 64, one head group).
--slim-trace: the directory's reduce cubin was also built with -DMLA_SLIM_TRACE=1
(codeobjects/sm_90a/reduce/reduce_slim.cuh); the slim reducer's CTAs' stamps are printed on the
same clock (b = 1 only: one split tile).
Times are µs from the first CTA's entry (%globaltimer), over the CTAs: median [min, max]; and
within each CTA from its own entry by clock64 (converted with the CTA's own clock rate)."""
import argparse
import statistics

import numpy as np
import torch

import libmla

KN = 70  # trace.cuh's kN
# in-tile points (trace.cuh, clock64 only): 40 + 10 (k - 2) + j for tiles k = 2, 3, 4
SUB = ("entry", "S issued", "S done", "logits, maxima", "P", "P^T stored", "proxy fence", "C' passed",
       "P.V issued", "P.V done")
SUB_TILES = (2, 3, 4)
# the qm TMA body's in-tile points (decode_qm_tma.cuh, MLA_WG_TRACE=2), same numbering
SUB_QM = ("entry", "S waited", "softmax", "P, alpha stored", "zeroing, fence", "PREADY", "P.V done",
          "EMPTY", "next tile landed", "next S issued")
NAMES = {0: "entry", 1: "grid wait done", 2: "work record read", 3: "Q copies issued",
         4: "first tiles issued", 5: "Q visible", 22: "last tile landed", 23: "last tile MMAs done",
         24: "epilogue start", 25: "output staged", 26: "output stored", 27: "sums exchanged (qm)"}
NAMES[38] = "wg1 passed EMPTY of tile 0"
NAMES[39] = "wg1 issued tile 2's boxes"
for k in range(8):
    NAMES[6 + k] = f"tile {k} landed"
    NAMES[14 + k] = f"tile {k} MMAs done"
    NAMES[30 + k] = f"wg1 issued tile {k + 2}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--kv-len", type=int, default=32768)
    ap.add_argument("--heads", type=int, default=16)
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--clusters", type=int, default=0, help="plan clusters (0 = the GPU's SMs)")
    ap.add_argument("--per-cta", action="store_true", help="also print every CTA's record")
    ap.add_argument("--cache", choices=("flush", "none", "warm-code"), default="flush",
                    help="before each call: the 256 MB L2 flush (default), nothing (back to back), "
                         "or the flush and then a small decode on other buffers with the same "
                         "kernels (b 1, s_k 4096: split, so the slim reducer runs too), which "
                         "brings their code, not this call's data, back into the L2")
    ap.add_argument("--no-split", action="store_true",
                    help="pass no_split_tiles=True (mla_decode_args.no_split_tiles): no reducer launch after an "
                         "unsplit plan, as `mla run --fixed` times (the plan must split no tile)")
    ap.add_argument("--last", action="store_true",
                    help="read each CTA's last work's record (a cubin built with -DMLA_WG_TRACE_LAST=1 as well; "
                         "the qm TMA body): with several works a CTA, a work whose code ran before on its SM")
    ap.add_argument("--qm", action="store_true",
                    help="the qm TMA body's stamps (a -DMLA_WG_TRACE=2 mla_decode_qm_bf16_bf16 cubin; --heads 64)")
    ap.add_argument("--slim-trace", action="store_true",
                    help="also read the slim reducer's stamps (a -DMLA_SLIM_TRACE=1 reduce cubin; b 1)")
    a = ap.parse_args()
    B, N, H, ps = a.batch, a.kv_len, a.heads, 64
    if a.qm and H != 64:
        ap.error("--qm reads one head group's record: --heads 64")
    sub_names = SUB_QM if a.qm else SUB
    sms = a.clusters or torch.cuda.get_device_properties(0).multi_processor_count
    warm = None
    if a.cache == "warm-code":
        wq = torch.zeros((1, H, 576), dtype=torch.bfloat16, device="cuda")
        wkv = torch.zeros((64, ps, 1, 576), dtype=torch.bfloat16, device="cuda")
        wqo, wkvi, wlast = (np.array(x, np.int32) for x in ([0, 1], [0, 64], [ps]))
        wplan = libmla.plan_metadata(wqo, wkvi, wlast, H, arch="sm_90a", num_clusters=sms,
                                     page_size=ps, causal=True, head_group_major=True)
        wdev = [torch.from_numpy(x).cuda() for x in (wqo, wkvi, np.arange(64, dtype=np.int32), wlast)]
        wout = torch.empty((1, H, 512), dtype=torch.bfloat16, device="cuda")
        wws = torch.zeros(wplan.info.workspace_bytes, dtype=torch.uint8, device="cuda")

        def warm():
            libmla.decode(wq, wkv, wdev[0], wdev[1], wdev[2], wdev[3], 1, wplan, out=wout,
                          workspace=wws, active_clusters=wplan.summary.active_clusters)
    npg = (N + ps - 1) // ps
    qo = np.arange(B + 1, dtype=np.int32)
    kvi = (np.arange(B + 1) * npg).astype(np.int32)
    last = np.full(B, N - (npg - 1) * ps, np.int32)
    g = torch.Generator().manual_seed(1)
    num_pages = B * npg
    pages = torch.randperm(num_pages, generator=g).to(torch.int32)
    q = (torch.randn((B, H, 576), generator=g) * 0.5).to(torch.bfloat16).cuda()
    kv = (torch.randn((num_pages, ps, 1, 576), generator=g) * 0.5).to(torch.bfloat16).cuda()
    plan = libmla.plan_metadata(qo, kvi, last, H, arch="sm_90a", num_clusters=sms, page_size=ps,
                                causal=True, head_group_major=True)
    dev = {k: torch.from_numpy(v).cuda() for k, v in (("qo", qo), ("kvi", kvi), ("last", last))}
    dev["pages"] = pages.cuda()
    ws = torch.zeros(plan.info.workspace_bytes, dtype=torch.uint8, device="cuda")
    out = torch.empty((B, H, 512), dtype=torch.bfloat16, device="cuda")
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    active = plan.summary.active_clusters
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(2)]
    times = []
    for _ in range(a.iters):
        torch.cuda._sleep(2_000_000)  # keeps the GPU busy while the host enqueues the rest
        if a.cache != "none":
            flush.zero_()
        if warm:
            warm()
        ev[0].record()
        libmla.decode(q, kv, dev["qo"], dev["kvi"], dev["pages"], dev["last"], 1, plan, out=out,
                      workspace=ws, active_clusters=active, no_split_tiles=a.no_split)
        ev[1].record()
        torch.cuda.synchronize()
        times.append(ev[0].elapsed_time(ev[1]) * 1e3)
    works = plan.works()
    wptr = plan.work_indptr
    Hk = H  # s_q 1, one head group (16 heads; --qm: 64)
    wsb = ws.cpu().numpy()
    outb = out.view(torch.uint8).cpu().numpy().reshape(B, H * 1024)
    recs = []
    for c in range(active):
        if wptr[c + 1] <= wptr[c]:
            continue
        wi = wptr[c + 1] - 1 if a.last else wptr[c]
        pql, tok = works[wi][1], works[wi][2]
        if pql >= 0:
            raw = wsb[pql * Hk * 512 * 4:][:(2 * KN + 3) * 8]
        else:
            raw = outb[tok][:(2 * KN + 3) * 8]
        r = raw.view(np.uint64).astype(np.int64)
        recs.append((c, r))
    t0 = min(int(r[0]) for _, r in recs)
    print(f"b {B} s_k {N} h {H}, cache {a.cache}{', no reducer' if a.no_split else ''}: {plan.num_works} works on {active} of {sms} clusters; "
          f"end to end (events) median {statistics.median(times):.1f} us over {a.iters}: "
          + " ".join(f"{t:.1f}" for t in times))
    print(f"CTAs traced {len(recs)}; tiles a work: {sorted(set(int(r[2 * KN + 1]) for _, r in recs))}; "
          f"works a CTA: {sorted(set(int(r[2 * KN + 2]) for _, r in recs))}")
    rates = []
    for _, r in recs:
        dn, dc = int(r[26]) - int(r[0]), int(r[KN + 26]) - int(r[KN + 0])
        if dn > 0 and r[26] != 0:
            rates.append(dc / dn)
    ghz = statistics.median(rates) if rates else float("nan")
    print(f"SM clock from the CTAs' own clocks: {ghz:.3f} GHz (median)")
    print(f"{'stamp':<26} {'from first entry (globaltimer, us)':>40}   {'from own entry (clock64, us)':>34}  CTAs")
    for i in sorted(NAMES):
        g = [(int(r[i]) - t0) / 1e3 for _, r in recs if r[i] != 0]
        own = [(int(r[KN + i]) - int(r[KN])) / ghz / 1e3 for _, r in recs if r[i] != 0]
        if not g:
            continue
        print(f"{i:>2} {NAMES[i]:<23} {statistics.median(g):10.2f} [{min(g):8.2f}, {max(g):8.2f}]"
              f"          {statistics.median(own):10.2f} [{min(own):8.2f}, {max(own):8.2f}]  {len(g)}")
    # in-tile steps: clock64 differences within each CTA, median [min, max] over the CTAs, in ns
    print(f"in-tile steps (ns, own clock at {ghz:.3f} GHz; median [min, max] over the CTAs that reached both):")

    def step(label, i0, i1):  # stamp i0 -> i1 (record words KN + i)
        d = [(int(r[KN + i1]) - int(r[KN + i0])) / ghz for _, r in recs if r[KN + i1] != 0 and r[KN + i0] != 0]
        if d:
            print(f"   {label} {statistics.median(d):8.1f} [{min(d):8.1f}, {max(d):8.1f}]  {len(d)}")

    for k in SUB_TILES:
        b0 = 40 + 10 * (k - 2)
        for j in range(1, len(sub_names)):
            step(f"tile {k} {sub_names[j - 1]:>16} -> {sub_names[j]:<16}", b0 + j - 1, b0 + j)
        step(f"tile {k} entry -> {sub_names[9]} (total)", b0, b0 + 9)
        if k + 1 in SUB_TILES:
            step(f"tile {k} {sub_names[9]} -> tile {k + 1} entry", b0 + 9, b0 + 10)
    if a.slim_trace and B == 1:
        snames = ("entry", "plan read", "grid wait done", "loads landed", "before store")
        srecs = []
        for h in range(H):
            for e in range(8):
                r = outb[0][h * 1024 + e * 128:][:6 * 8].view(np.uint64).astype(np.int64)
                if r[0] != 0:
                    srecs.append(r)
        dec_end = max((int(r[26]) - t0) / 1e3 for _, r in recs if r[26] != 0)
        dec_sms = {int(r[2 * KN]) for _, r in recs}
        print(f"slim reducer: {len(srecs)} CTAs traced; the last decode CTA stored at {dec_end:.2f} us")
        for i, n in enumerate(snames):
            g = [(int(r[i]) - t0) / 1e3 for r in srecs if r[i] != 0]
            if g:
                print(f"   slim {n:<18} {statistics.median(g):10.2f} [{min(g):8.2f}, {max(g):8.2f}]  {len(g)}")
        before = sum(1 for r in srecs if (int(r[0]) - t0) / 1e3 < dec_end)
        beside = sum(1 for r in srecs if int(r[5]) in dec_sms and (int(r[0]) - t0) / 1e3 < dec_end)
        print(f"   slim CTAs entered before the decode's last store: {before}; of them on an SM "
              f"that ran a decode CTA: {beside}")
    if a.per_cta:
        for c, r in recs:
            print(f"cta {c} sm {int(r[2 * KN])}: " + " ".join(
                f"{i}:{(int(r[i]) - t0) / 1e3:.2f}" for i in sorted(NAMES) if r[i] != 0))


if __name__ == "__main__":
    main()
