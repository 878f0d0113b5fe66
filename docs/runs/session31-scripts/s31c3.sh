#!/usr/bin/env bash
# session 31 call 3: mla_decode_args.no_split_tiles (no reducer launch after a plan that split no
# tile; the decode kernel rejects a split work without partial buffers). The target table as the
# tools now run it and with --always-reduce (libmla's default, the reducer after every plan that
# may split), on the new cubins; the new cubins against session 30's (old31: load_work without the
# check, the shipped SASS cecb8ebc ...) with --always-reduce, to see the check's cost; the hint's
# A/B in the loop. The full gpu_check (the decode test has the new cases) runs first. Build first:
#   D=codeobjects/sm_90a/decode; B=docs/runs/session29-scripts/build_variants.sh
#   git stash push codeobjects/sm_90a/decode/decode_kernel.cuh   # (session 30's load_work)
#   $B old31 "" $D/mla_decode_wg_bf16_bf16.cu $D/mla_decode_qm_bf16_bf16.cu $D/mla_decode_ra_fp8_fp8.cu \
#      $D/mla_decode_ra_bf16_fp8.cu $D/mla_decode_qm_fp8_fp8.cu; git stash pop
#   cp docs/runs/session31-scripts/s31c3.sh build-lead/tests/gpu/s31c3.sh
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
exec > >(tee $O/s31c3.txt) 2>&1
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
T=build-lead/tools/mla/mla
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
bash docs/runs/session29-scripts/build_variants.sh assemble old31
V=scripts/variant_bench.sh; L=$PWD/build-lead/codeobjects; S=/tmp/s29
echo "== gpu_check"; BUILD=build-lead OUT=$O/gc PLAN_SWEEP=600 timeout 300 scripts/gpu_check.sh 2>&1 | tail -42
(cd $O && tar czf gc.tgz gc && rm -rf gc)
echo "== targets (no_split_tiles from the host plan)"; timeout 120 $T bench --targets 2>&1 | tee $O/targets.txt
echo "== targets --always-reduce"; timeout 120 $T bench --targets --always-reduce 2>&1 | tee $O/targets-always.txt
echo "== main, always-reduce: new vs old31"; ROUNDS=3 timeout 40 $V run "--batch 128 --kv-len 4096 --fixed --iters 30 --always-reduce" $L $S/old31/codeobjects
echo "== fp8 16h, always-reduce: new vs old31"; ROUNDS=3 timeout 40 $V run "--batch 128 --kv-len 4096 --fixed --dtype fp8 --iters 30 --always-reduce" $L $S/old31/codeobjects
for a in "--batch 128 --kv-len 4096 --fixed --iters 30" "--batch 128 --kv-len 4096 --fixed --qlen 2 --iters 30" "--batch 64 --kv-len 1024 --fixed --iters 30"; do
  for r in 0 1; do
    echo "== hint A/B round $r: $a"; ROUNDS=1 timeout 15 $V run "$a" $L; ROUNDS=1 timeout 15 $V run "$a --always-reduce" $L
  done
done
echo "== check: mla run --check -1 with the hint (b 64, 16x2)"; timeout 30 $T run --batch 64 --kv-len 1024 --fixed --check -1 --iters 3 2>&1 | grep -E "plan:|check|decode:"
timeout 30 $T run --batch 16 --kv-len 4096 --fixed --qlen 2 --check -1 --iters 3 2>&1 | grep -E "plan:|check|decode:"
echo done
