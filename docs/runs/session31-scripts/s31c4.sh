#!/usr/bin/env bash
# session 31 call 4: the full gpu_check on 145319d's cubins with the decode test's no_split_tiles
# cases made small (call 3's ran out of time). cp docs/runs/session31-scripts/s31c4.sh build-lead/tests/gpu/s31c4.sh
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
exec > >(tee $O/s31c4.txt) 2>&1
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
echo "== gpu_check"; BUILD=build-lead OUT=$O/gc PLAN_SWEEP=600 timeout 330 scripts/gpu_check.sh 2>&1 | tail -42
(cd $O && tar czf gc.tgz gc && rm -rf gc)
echo done
