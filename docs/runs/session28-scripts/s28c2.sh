#!/usr/bin/env bash
# session 28 call 2: uniform descriptors (MLA_WG_ULO) against the shipped cubins: both target
# tables, A/Bs, and gpu_check on the new build
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
exec > >(tee $O/s28c2.txt) 2>&1
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
T=build-lead/tools/mla/mla; S=build-lead/tests/gpu/s28
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
V=scripts/variant_bench.sh; A=$S/old; B=build-lead/codeobjects
echo "== 16x2"; ROUNDS=3 timeout 45 $V run "--batch 128 --kv-len 4096 --fixed --qlen 2 --iters 30" $A $B
echo "== b64"; ROUNDS=5 timeout 40 $V run "--batch 64 --kv-len 1024 --fixed --iters 30" $A $B
echo "== 128h"; ROUNDS=2 timeout 50 $V run "--batch 128 --kv-len 4096 --fixed --heads 128 --iters 30" $A $B
echo "== targets ulo"; timeout 150 $T bench --targets 2>&1 | tee $O/targets-ulo.txt
echo "== targets old"; MLA_CODEOBJECT_DIR=$PWD/$A timeout 150 $T bench --targets 2>&1 | tee $O/targets-old.txt
echo "== gpu_check"; BUILD=build-lead OUT=$O/gc PLAN_SWEEP=600 timeout 300 scripts/gpu_check.sh 2>&1 | tail -42
(cd $O && tar czf gc.tgz gc && rm -rf gc)
echo done
