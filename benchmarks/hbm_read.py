#!/usr/bin/env python3
"""Read-only bandwidth of the GPU for issue 8's memory-bound rows (docs/performance.md).

Launches the kernels of benchmarks/hbm_read.cu (built by meson into
<build>/benchmarks/hbm_read.cubin when nvcc is found) through the CUDA driver API (ctypes,
torch's primary context and stream) and, as another reading, torch.sum over the same bytes:
16-byte loads, a ring of bulk copies, and rings of 64-token pages loaded the decode kernels' way
(9 TMA boxes with 128-byte swizzle, at L2 promotion none and 256 B, on 128 CTAs and one per SM) or as 64 row
copies, with the pages in order or in a random order (as a page table places them), and
half-page bulk copies re-laid into swizzled tiles.
Each figure is the mean over --iters launches enqueued back to back between one pair of CUDA
events (the launch arguments built before), so no host time between launches is counted.
Prints one line per (kernel, configuration, size): µs, GB/s; then whether the re-layout kernel's
tile equals the TMA boxes' tile of the same page (CTA 0's first page, byte for byte).
The sizes are the KV bytes of the rows (bf16, 1152 bytes per token):
  b 128 x s_k 4096 (604 MB), b 128 x s_k 16384 (2.42 GB), b 1536 x s_k 2048 (3.62 GB).

usage: hbm_read.py --cubin build/benchmarks/hbm_read.cubin [--iters 20] [--split-only | --gather | --flushed | --twin [--shift D ...] | --hold [H ...]]
(--split-only: the first row's pages only, whole against split in two halves a step apart.
 --gather: the first row's 524,288 token rows of 1152 bytes gathered one by one, in order and in
 a random order: the ceiling of the page-size-1 row, whose cache places every token at random.
 --twin: the first row's pages read by 2 and 4 CTAs each, as the 128-head rows read them, plain
 and shared by the two CTAs of a cluster through multicast.
 --hold: the first row's bytes through rings of 147,456 B cut into 2, 4 or 6 slots, each piece
 held H clocks per 73,728 B before its slot is refilled (a decode CTA's chain), flushed timing.
 --flushed: the best reader of each kind on every row, timed as `mla bench` times the decode:
 the median of --iters launches, each after a 256 MB L2 flush (a memset, as do_bench's zero_()),
 events around the launch alone; beside it the mean of back-to-back launches as above.)
Needs torch with CUDA and an sm_90a GPU (the cubin's arch).
"""
import argparse
import ctypes

import torch

from cudrv import Driver, check

ROWS = [("b 128, s_k 4096", 128 * 4096 * 1152, 145.0),
        ("b 128, s_k 16384", 128 * 16384 * 1152, 560.0),
        ("b 1536, s_k 2048", 1536 * 2048 * 1152, 860.0)]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cubin", required=True)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--flushed", action="store_true",
                    help="the best readers on every row, each launch after a 256 MB L2 flush (mla bench's timing)")
    ap.add_argument("--gather", action="store_true",
                    help="only the first row's bytes as 1152-byte token rows, in order and gathered at random")
    ap.add_argument("--twin", action="store_true",
                    help="only the first row's pages read by 2 and 4 CTAs each (the 128-head rows), plain and multicast")
    ap.add_argument("--shift", type=int, nargs="+", default=[0],
                    help="--twin: the later readers of a page read it this many pages after the first")
    ap.add_argument("--hold", type=int, nargs="*", default=None,
                    help="only the first row's bytes through rings of 147,456 B (2 x 73,728, 4 x 36,864, "
                         "6 x 24,576) with a serial hold of these clocks per 73,728 B (pro rata per piece), "
                         "flushed timing")
    ap.add_argument("--split-only", action="store_true",
                    help="only the first row's TMA page streams: whole pages (2, 3 in flight) and split pages")
    args = ap.parse_args()

    drv = Driver()
    cuda, dev, sms = drv.cuda, drv.dev, drv.sms
    total = max(r[1] for r in ROWS)
    buf = torch.empty(total, dtype=torch.uint8, device=dev)
    buf.random_(0, 256)  # real bytes: the XOR never reaches the sink's constant by design
    sink = torch.zeros(4, dtype=torch.int32, device=dev)
    torch.cuda.synchronize()

    module = drv.load(args.cubin)

    def function(name):
        return drv.function(module, name)

    f_ldg, f_bulk = function("hbm_read_ldg"), function("hbm_read_bulk")
    f_tma, f_rows = function("hbm_read_tma"), function("hbm_read_rows")
    f_relayout, f_split = function("hbm_read_relayout"), function("hbm_read_tma_split")
    encode = cuda.cuTensorMapEncodeTiled
    page = 64 * 1152
    launch = drv.launch

    def timed(run):
        return drv.timed(run, args.iters)

    def report(kind, config, name, nbytes, target, us):
        print(f"{kind:5s} {config:40s} {name:18s} {us:9.1f} us {nbytes / us / 1e3:8.0f} GB/s"
              f"   (row target {target:.0f} us)", flush=True)

    src = buf.data_ptr()
    layout_ok = None
    if args.flushed:
        flushed_rows(drv, encode, timed, function, src, page, args.iters)
        return
    if args.twin:
        twin_only(drv, encode, function, src, page, args.iters, args.shift)
        return
    if args.gather:
        gather_only(cuda, launch, timed, report, function, src, sms, dev)
        return
    if args.hold is not None:
        hold_only(drv, function, src, args.iters, args.hold or [0, 1500, 3000, 4500, 6000])
        return
    if args.split_only:
        split_only(cuda, encode, launch, timed, report, f_tma, f_split, src, sms, page, dev)
        return
    for name, nbytes, target in ROWS:
        for per_sm in (4, 8):
            grid = per_sm * sms
            us = timed(launch(f_ldg, grid, 256, 0,
                                      [ctypes.c_uint64(src), ctypes.c_uint64(nbytes // 16),
                                       ctypes.c_uint64(sink.data_ptr())]))
            report("ldg", f"{grid} CTAs x 256", name, nbytes, target, us)
        for chunk, slots in ((73728, 2), (73728, 3), (36864, 4), (36864, 6)):
            smem = chunk * slots
            check(cuda.cuFuncSetAttribute(f_bulk, 8, smem), "cuFuncSetAttribute")  # max dynamic smem
            n_chunks = nbytes // chunk
            for grid in (sms, 128):
                us = timed(launch(f_bulk, grid, 32, smem,
                                          [ctypes.c_uint64(src), ctypes.c_uint64(n_chunks), ctypes.c_uint32(chunk),
                                           ctypes.c_uint32(slots), ctypes.c_uint64(sink.data_ptr())]))
                report("bulk", f"{grid} CTAs, {slots} x {chunk} B", name, n_chunks * chunk, target, us)
        n_pages = nbytes // page
        ident = torch.arange(n_pages, dtype=torch.int32, device=dev)
        rand = torch.randperm(n_pages, device=dev).to(torch.int32)
        # the decode kernels' map had L2 promotion 256 B (3) until session 10; 0 is none. Pages on
        # 128 CTAs and on one CTA per SM (the decode kernels' grid), 1, 2 or 3 pages in flight, the
        # page ids in order or shuffled (as a page table places them)
        for promo in (0, 3):
            tmap, _store = page_tmap(encode, src, n_pages, page, promo)
            for grid in (128, sms):
                for slots in (1, 2, 3):
                    for oname, order in (("in order", ident), ("random order", rand)):
                        smem = slots * page
                        check(cuda.cuFuncSetAttribute(f_tma, 8, smem), "cuFuncSetAttribute")
                        us = timed(launch(f_tma, grid, 32, smem,
                                          [tmap, ctypes.c_uint64(order.data_ptr()), ctypes.c_uint32(n_pages),
                                           ctypes.c_uint32(slots), ctypes.c_uint64(sink.data_ptr()),
                                           ctypes.c_uint64(0)]))
                        report("tma", f"{grid} CTAs, {slots} pages, {oname}, L2 {promo}", name, n_pages * page,
                               target, us)
        # the same pages as 64 row copies of 1152 B each (128 CTAs)
        for slots in (1, 2, 3):
            for oname, order in (("in order", ident), ("random order", rand)):
                smem = slots * 64 * 1168
                check(cuda.cuFuncSetAttribute(f_rows, 8, smem), "cuFuncSetAttribute")
                us = timed(launch(f_rows, 128, 32, smem,
                                  [ctypes.c_uint64(src), ctypes.c_uint64(order.data_ptr()), ctypes.c_uint32(n_pages),
                                   ctypes.c_uint32(slots), ctypes.c_uint64(sink.data_ptr())]))
                report("rows", f"128 CTAs, {slots} pages, {oname}", name, n_pages * page, target, us)
        # half-page bulk copies re-laid into swizzled tiles (raw slots, tiles): the layouts that would
        # fit beside Q in the 16-row kernel (3, 1) and around it (docs/kernels.md next steps 8; run in
        # session 10, no better than the boxes at promotion none on 132 CTAs, not built)
        for raw, tiles, oname, order in ((2, 1, "in order", ident), (3, 1, "in order", ident),
                                         (4, 1, "in order", ident), (2, 2, "in order", ident),
                                         (3, 1, "random order", rand)):
            smem = raw * page // 2 + tiles * page
            check(cuda.cuFuncSetAttribute(f_relayout, 8, smem), "cuFuncSetAttribute")
            us = timed(launch(f_relayout, 128, 256, smem,
                                      [ctypes.c_uint64(src), ctypes.c_uint64(order.data_ptr()),
                                       ctypes.c_uint32(n_pages), ctypes.c_uint32(raw), ctypes.c_uint32(tiles),
                                       ctypes.c_uint64(sink.data_ptr()), ctypes.c_uint64(0)]))
            report("relay", f"128 CTAs, {raw} halves, {tiles} tiles, {oname}", name, n_pages * page, target, us)
        view = buf[:nbytes].view(torch.float32)
        us = timed(lambda: torch.sum(view))  # (torch's own launch path, between the same events)
        report("torch", "torch.sum (fp32)", name, nbytes, target, us)
        if nbytes == ROWS[0][1]:  # the layout check, once: CTA 0's first page by both kernels
            dumps = torch.zeros(2, page, dtype=torch.uint8, device=dev)
            check(cuda.cuFuncSetAttribute(f_tma, 8, 2 * page), "cuFuncSetAttribute")
            launch(f_tma, 128, 32, 2 * page,
                   [tmap, ctypes.c_uint64(ident.data_ptr()), ctypes.c_uint32(n_pages), ctypes.c_uint32(2),
                    ctypes.c_uint64(sink.data_ptr()), ctypes.c_uint64(dumps[0].data_ptr())])()
            check(cuda.cuFuncSetAttribute(f_relayout, 8, 3 * page // 2 + page), "cuFuncSetAttribute")
            launch(f_relayout, 128, 256, 3 * page // 2 + page,
                   [ctypes.c_uint64(src), ctypes.c_uint64(ident.data_ptr()), ctypes.c_uint32(n_pages),
                    ctypes.c_uint32(3), ctypes.c_uint32(1), ctypes.c_uint64(sink.data_ptr()),
                    ctypes.c_uint64(dumps[1].data_ptr())])()
            torch.cuda.synchronize()
            layout_ok = bool(torch.equal(dumps[0], dumps[1])) and bool(dumps[0].any())
    torch.cuda.synchronize()
    print("re-layout tile equals the TMA boxes' tile (page 0, byte for byte):", layout_ok)
    print("sink (0 expected):", sink.tolist())


def page_tmap(encode, src, n_pages, page, promo):
    """A CUtensorMap (64-byte aligned) of n_pages bf16 pages as the decode kernels see the cache:
    {576, 64, pages}, strides {1152, page} bytes, box {64, 64, 1}, 128-byte swizzle, L2 promotion
    `promo` (0 none, 3 256 B: the decode kernels' map until session 10). Returns the map (a view
    that keeps its storage alive) and the storage."""
    store = (ctypes.c_uint64 * 32)()
    off = (ctypes.addressof(store) + 63) // 64 * 64 - ctypes.addressof(store)
    tmap = (ctypes.c_uint64 * 16).from_buffer(store, off)
    dims = (ctypes.c_uint64 * 3)(576, 64, n_pages)
    strides = (ctypes.c_uint64 * 2)(1152, page)
    box = (ctypes.c_uint32 * 3)(64, 64, 1)
    ones = (ctypes.c_uint32 * 3)(1, 1, 1)
    check(encode(ctypes.byref(tmap), 9, 3, ctypes.c_void_p(src), dims, strides, box, ones, 0, 3, promo, 0),
          "cuTensorMapEncodeTiled")
    return tmap, store


def hold_only(drv, function, src, iters, holds):
    """The first row's 604 MB through one CTA per SM and a ring of 147,456 bytes cut three ways
    (2 x 73,728: the bf16 decode rings; 4 x 36,864; 6 x 24,576), each piece held `h` x chunk /
    73,728 clocks before its slot is refilled (hbm_read_hold), for each h in holds (clocks per
    73,728 B, the bf16 tile of 64 tokens). Timed as `mla bench` times the decode (flushed)."""
    f_hold = function("hbm_read_hold")
    cuda, launch, sms, dev = drv.cuda, drv.launch, drv.sms, drv.dev
    sink = torch.zeros(4, dtype=torch.int32, device=dev)
    name, nbytes, target = ROWS[0]
    print(f"hold sweep, {name} ({nbytes} B), {sms} CTAs, flushed median of {iters}", flush=True)
    for h in holds:
        line = []
        for chunk, slots in ((73728, 2), (36864, 4), (24576, 6)):
            check(cuda.cuFuncSetAttribute(f_hold, 8, chunk * slots), "cuFuncSetAttribute")
            n_chunks = nbytes // chunk
            run = launch(f_hold, sms, 32, chunk * slots,
                         [ctypes.c_uint64(src), ctypes.c_uint64(n_chunks), ctypes.c_uint32(chunk),
                          ctypes.c_uint32(slots), ctypes.c_uint32(h * chunk // 73728),
                          ctypes.c_uint64(sink.data_ptr())])
            line.append(f"{slots} x {chunk} B {drv.flushed(run, iters):7.1f} us")
        print(f"hold {h:5d} clocks / 73,728 B: " + " | ".join(line), flush=True)


def flushed_rows(drv, encode, timed, function, src, page, iters):
    """Each row's bytes by the best reader of each kind (16-byte loads at 8 CTAs per SM; the bulk
    ring, 2 x 73,728 B on 132 CTAs; the decode kernels' TMA boxes, pages at random, 2 in flight,
    132 CTAs, L2 promotion none; for the first row also its bytes as token rows gathered at
    random, the page-1 row), timed two ways: `flushed` = the median of `iters` launches each after
    a 256 MB memset (mla bench's and do_bench's method: events around the launch only),
    `b2b` = the mean of back-to-back launches (timed() above)."""
    f_ldg, f_bulk, f_tma, f_lg = (function(n) for n in ("hbm_read_ldg", "hbm_read_bulk", "hbm_read_tma",
                                                          "hbm_read_ldg_gather"))
    cuda, launch, sms, dev = drv.cuda, drv.launch, drv.sms, drv.dev
    sink = torch.zeros(4, dtype=torch.int32, device=dev)

    def flushed(run):
        return drv.flushed(run, iters)

    keep = []
    more = [("b 64, s_k 1024", 64 * 1024 * 1152, 28.0), ("b 1, s_k 32768", 32768 * 1152, 20.0),
            ("fp8 KV, b 128, s_k 4096", 128 * 4096 * 576, 85.0)]  # the other targets' KV bytes
    for rnd in range(2):
        for name, nbytes, target in ROWS + more:
            n_pages = nbytes // page
            runs = [("ldg", f"{8 * sms} CTAs x 256", nbytes,
                     launch(f_ldg, 8 * sms, 256, 0, [ctypes.c_uint64(src), ctypes.c_uint64(nbytes // 16),
                                                     ctypes.c_uint64(sink.data_ptr())]))]
            check(cuda.cuFuncSetAttribute(f_bulk, 8, 2 * page), "cuFuncSetAttribute")
            runs.append(("bulk", f"{sms} CTAs, 2 x {page} B", n_pages * page,
                         launch(f_bulk, sms, 32, 2 * page, [ctypes.c_uint64(src), ctypes.c_uint64(n_pages),
                                                            ctypes.c_uint32(page), ctypes.c_uint32(2),
                                                            ctypes.c_uint64(sink.data_ptr())])))
            rand = torch.randperm(n_pages, device=dev).to(torch.int32)
            tmap, store = page_tmap(encode, src, n_pages, page, 0)
            keep += [rand, tmap, store]
            check(cuda.cuFuncSetAttribute(f_tma, 8, 2 * page), "cuFuncSetAttribute")
            runs.append(("tma", f"{sms} CTAs, 2 pages, random order", n_pages * page,
                         launch(f_tma, sms, 32, 2 * page, [tmap, ctypes.c_uint64(rand.data_ptr()),
                                                           ctypes.c_uint32(n_pages), ctypes.c_uint32(2),
                                                           ctypes.c_uint64(sink.data_ptr()), ctypes.c_uint64(0)])))
            if nbytes == ROWS[0][1]:
                rows = torch.randperm(nbytes // 1152, device=dev).to(torch.int32)
                keep.append(rows)
                runs.append(("rowld", f"{8 * sms} CTAs x 256, token rows at random (page 1)", nbytes,
                             launch(f_lg, 8 * sms, 256, 0, [ctypes.c_uint64(src), ctypes.c_uint64(rows.data_ptr()),
                                                            ctypes.c_uint64(nbytes // 1152),
                                                            ctypes.c_uint64(sink.data_ptr())])))
            for kind, config, nb, run in runs:
                f_us, b_us = flushed(run), timed(run)
                print(f"{kind:5s} {config:52s} {name:18s} flushed {f_us:8.1f} us ({nb / f_us / 1e3:5.0f} GB/s)"
                      f"  b2b {b_us:8.1f} us   (row target {target:.0f} us; page 1: 160), round {rnd}", flush=True)
    torch.cuda.synchronize()
    print("sink (0 expected):", sink.tolist())


def twin_only(drv, encode, function, src, page, iters, shifts):
    """The 128-head rows' reads: the first row's 604 MB of pages (b 128 x s_k 4096 bf16) with each
    page read by 2 CTAs (h 128: two 64-row head groups) or 4 (h 128 x MTP 2), as the head-group-major
    plan reads them: on 128 CTAs, CTA c and c + 64 (+ 32, + 96) take the same pages in the same
    order (hbm_read_tma, `order` the random page order repeated), and against that the pairs of a
    2-CTA cluster sharing each page by multicast (hbm_read_tma_mc: one L2 read for both SMs).
    2 and 3 pages in flight, L2 promotion none; flushed and back to back, 2 rounds. The L2 -> SM
    bytes are the page bytes times the CTAs that read each page without multicast. With a shift
    d > 0 (plain reads only), the k-th copy of the order is the page order rotated by k d: CTA
    c + 64 k reads each page k d steps before CTA c does (a later reader then finds it in the L2).
    Last, the same 2 readers a page on every SM (2 pages in flight): the plain pattern and the
    multicast pairs over all SMs, each CTA an equal share (the order padded)."""
    name, nbytes, _ = ROWS[0]
    n_pages = nbytes // page
    f_tma, f_mc = function("hbm_read_tma"), function("hbm_read_tma_mc")
    sink = torch.zeros(4, dtype=torch.int32, device=drv.dev)
    tmap, _store = page_tmap(encode, src, n_pages, page, 0)
    rand = torch.randperm(n_pages, device=drv.dev).to(torch.int32)
    orders = {(k, d): torch.cat([torch.roll(rand, -j * d) for j in range(k)]).contiguous()
              for k in (1, 2, 4) for d in shifts}
    runs = []
    for slots in (2, 3):
        smem = slots * page
        for d in shifts:
            for k, target in ((1, 145.0), (2, 215.0), (4, 430.0)):
                if k == 1 and d:
                    continue
                order = orders[(k, d)]
                runs.append((f"tma   {slots} pages, each page by {k} CTAs, shift {d}", k, target, f_tma, smem,
                             [tmap, ctypes.c_uint64(order.data_ptr()), ctypes.c_uint32(k * n_pages),
                              ctypes.c_uint32(slots), ctypes.c_uint64(sink.data_ptr()), ctypes.c_uint64(0)]))
        for k, target in ((1, 215.0), (2, 430.0)):
            order = orders[(k, 0)]
            runs.append((f"mc    {slots} pages, each page by {k} pair(s)", k, target, f_mc, smem,
                         [tmap, ctypes.c_uint64(order.data_ptr()), ctypes.c_uint32(k * n_pages), ctypes.c_uint32(slots),
                          ctypes.c_uint64(sink.data_ptr())]))
    # on every SM: CTA c and c + sms / 2 (multicast: the pair of cluster c) take the same pages,
    # the order padded (with pages of its own) to an equal share per CTA, as a plan of split tiles
    # would spread the same steps
    half = drv.sms // 2
    per = (n_pages + half - 1) // half
    pad = torch.cat([rand, rand[:half * per - n_pages]])
    orders[("all", 2)] = pad.repeat(2).contiguous()
    orders[("all", 1)] = pad.contiguous()
    for slots in (2,):
        smem = slots * page
        runs.append((f"tma   {slots} pages, each page by 2 CTAs, all SMs", 2, 215.0, f_tma, smem,
                     [tmap, ctypes.c_uint64(orders[("all", 2)].data_ptr()), ctypes.c_uint32(2 * half * per),
                      ctypes.c_uint32(slots), ctypes.c_uint64(sink.data_ptr()), ctypes.c_uint64(0)], drv.sms,
                     half * per))
        runs.append((f"mc    {slots} pages, each page by 1 pair, all SMs", 1, 215.0, f_mc, smem,
                     [tmap, ctypes.c_uint64(orders[("all", 1)].data_ptr()), ctypes.c_uint32(half * per),
                      ctypes.c_uint32(slots), ctypes.c_uint64(sink.data_ptr())], drv.sms, half * per))
    for rnd in range(2):
        for config, k, target, f, smem, params, *extra in runs:
            grid, pages = extra if extra else (128, n_pages)  # all SMs: the padded order's pages
            drv.set_smem(f, smem)
            run = drv.launch(f, grid, 32, smem, params)
            f_us, b_us = drv.flushed(run, iters), drv.timed(run, iters)
            l2 = k * pages * page
            print(f"{config:49s} {grid} CTAs {name:16s} flushed {f_us:7.1f} us  b2b {b_us:7.1f} us"
                  f"  L2->SM {l2 / 1e6:6.0f} MB ({l2 / f_us / 1e3:5.0f} GB/s flushed)  (row target {target:.0f} us)"
                  f", round {rnd}", flush=True)
    torch.cuda.synchronize()
    print("sink (0 expected):", sink.tolist())


def gather_only(cuda, launch, timed, report, function, src, sms, dev):
    """The first row's bytes (b 128 x s_k 4096 bf16) as 524,288 token rows of 1152 bytes, read in
    order and in a random order (a page-size-1 cache: the page-1 target row, 160 us): one
    cp.async.bulk per row through a ring of 32-row steps (hbm_read_gather: 2-6 steps in flight, 128
    CTAs and one per SM) and 16-byte loads (hbm_read_ldg_gather: 4 and 8 CTAs per SM), 3 rounds."""
    f_gather, f_lg = function("hbm_read_gather"), function("hbm_read_ldg_gather")
    name, nbytes, _ = ROWS[0]
    target = 160.0
    n_rows = nbytes // 1152
    orders = (("in order", torch.arange(n_rows, dtype=torch.int32, device=dev)),
              ("random order", torch.randperm(n_rows, device=dev).to(torch.int32)))
    sink = torch.zeros(4, dtype=torch.int32, device=dev)
    for rnd in range(3):  # rounds, so that drift hits every variant alike
        for oname, order in orders:
            for grid in (128, sms):
                for slots in (2, 4, 6):
                    smem = slots * 32 * 1168
                    check(cuda.cuFuncSetAttribute(f_gather, 8, smem), "cuFuncSetAttribute")
                    us = timed(launch(f_gather, grid, 32, smem,
                                      [ctypes.c_uint64(src), ctypes.c_uint64(order.data_ptr()),
                                       ctypes.c_uint32(n_rows // 32), ctypes.c_uint32(slots),
                                       ctypes.c_uint64(sink.data_ptr())]))
                    report("rowbk", f"{grid} CTAs, {slots} x 32 rows, {oname}, r{rnd}", name, nbytes, target, us)
            for per_sm in (4, 8):
                us = timed(launch(f_lg, per_sm * sms, 256, 0,
                                  [ctypes.c_uint64(src), ctypes.c_uint64(order.data_ptr()), ctypes.c_uint64(n_rows),
                                   ctypes.c_uint64(sink.data_ptr())]))
                report("rowld", f"{per_sm * sms} CTAs x 256, {oname}, r{rnd}", name, nbytes, target, us)
    torch.cuda.synchronize()
    print("sink (0 expected):", sink.tolist())


def split_only(cuda, encode, launch, timed, report, f_tma, f_split, src, sms, page, dev):
    """The first row's pages at L2 promotion none on one CTA per SM: 2 and 3 whole pages in
    flight (hbm_read_tma) against pages split in two halves issued a step apart (hbm_read_tma_split)."""
    name, nbytes, target = ROWS[0]
    n_pages = nbytes // page
    orders = (("in order", torch.arange(n_pages, dtype=torch.int32, device=dev)),
              ("random order", torch.randperm(n_pages, device=dev).to(torch.int32)))
    tmap, _store = page_tmap(encode, src, n_pages, page, 0)
    sink = torch.zeros(4, dtype=torch.int32, device=dev)
    for rnd in range(3):  # rounds, so that drift hits every variant alike
        for oname, order in orders:
            for slots in (2, 3):
                check(cuda.cuFuncSetAttribute(f_tma, 8, slots * page), "cuFuncSetAttribute")
                us = timed(launch(f_tma, sms, 32, slots * page,
                                  [tmap, ctypes.c_uint64(order.data_ptr()), ctypes.c_uint32(n_pages),
                                   ctypes.c_uint32(slots), ctypes.c_uint64(sink.data_ptr()), ctypes.c_uint64(0)]))
                report("tma", f"{sms} CTAs, {slots} pages, {oname}, round {rnd}", name, n_pages * page, target, us)
            check(cuda.cuFuncSetAttribute(f_split, 8, 3 * page), "cuFuncSetAttribute")
            us = timed(launch(f_split, sms, 32, 3 * page,
                              [tmap, ctypes.c_uint64(order.data_ptr()), ctypes.c_uint32(n_pages),
                               ctypes.c_uint64(sink.data_ptr())]))
            report("split", f"{sms} CTAs, halves a step apart, {oname}, round {rnd}", name, n_pages * page, target, us)
    torch.cuda.synchronize()
    print("sink (0 expected):", sink.tolist())


if __name__ == "__main__":
    main()
