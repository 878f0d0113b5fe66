#!/usr/bin/env bash
# session 26 call 4: every GPU check on the final build, the target table, the launch floor, the b 1 trace
set -u
O=${OUT:-/tmp/out}
mkdir -p $O
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
T=build-lead/tools/mla/mla
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
echo "== launch floor"; python3 benchmarks/launch_floor.py --iters 50
echo "== trace"; MLA_CODEOBJECT_DIR=$PWD/build-lead/tests/gpu/strace LIBMLA_PATH=$PWD/build-lead/src/libmla.so.0 PYTHONPATH=$PWD/bindings/python \
    python3 benchmarks/decode_trace.py --batch 1 --kv-len 32768 --iters 10 --slim-trace 2>&1 | grep -E "end to end|output stored|slim"
echo "== targets"; timeout 200 $T bench --targets 2>&1 | tee $O/targets.txt
echo "== gpu_check"; BUILD=build-lead OUT=$O/gc PLAN_SWEEP=600 timeout 400 scripts/gpu_check.sh 2>&1 | tail -45
cd $O && tar czf gc.tgz gc && rm -rf gc
