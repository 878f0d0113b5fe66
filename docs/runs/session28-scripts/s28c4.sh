#!/usr/bin/env bash
# session 28 call 4: the final build: the target table and every GPU check
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
exec > >(tee $O/s28c4.txt) 2>&1
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
T=build-lead/tools/mla/mla
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
echo "== targets"; timeout 150 $T bench --targets 2>&1 | tee $O/targets.txt
echo "== gpu_check"; BUILD=build-lead OUT=$O/gc PLAN_SWEEP=600 timeout 330 scripts/gpu_check.sh 2>&1 | tail -42
(cd $O && tar czf gc.tgz gc && rm -rf gc)
echo done
