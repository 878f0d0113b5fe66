#!/usr/bin/env bash
# session 27 call 3: every GPU check on the final build, the target table, traces of the 32-row kernel
set -u
O=${OUT:-/tmp/out}
mkdir -p $O
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
T=build-lead/tools/mla/mla
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
echo "== targets"; timeout 200 $T bench --targets 2>&1 | tee $O/targets.txt
echo "== gpu_check"; BUILD=build-lead OUT=$O/gc PLAN_SWEEP=600 timeout 400 scripts/gpu_check.sh 2>&1 | tail -45
for a in "--batch 64 --kv-len 1024 --heads 32" "--batch 128 --kv-len 4096 --heads 32"; do
  echo "== trace m32 $a"; MLA_CODEOBJECT_DIR=$PWD/build-lead/tests/gpu/tr32 LIBMLA_PATH=$PWD/build-lead/src/libmla.so.0 PYTHONPATH=$PWD/bindings/python \
    python3 benchmarks/decode_trace.py $a --iters 10 2>&1 | grep -vE "^(2[0-9]|1[6-9]|3[2-7]) "
done
(cd $O && tar czf gc.tgz gc && rm -rf gc)
