#!/usr/bin/env bash
# session 26 call 3: where the slim reducer's CTAs run (stamps beside the decode's), and the fixed floor
set -u
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
V=scripts/variant_bench.sh
L=build-lead/codeobjects; W=build-var/s26/wide/codeobjects
for c in flush none; do
  echo "== trace b1 cache $c"
  MLA_CODEOBJECT_DIR=$PWD/build-var/s26/strace/codeobjects LIBMLA_PATH=$PWD/build-lead/src/libmla.so.0 PYTHONPATH=$PWD/bindings/python \
    python3 benchmarks/decode_trace.py --batch 1 --kv-len 32768 --iters 10 --cache $c --slim-trace
done
echo "== floors"
ROUNDS=3 $V run "--batch 1 --kv-len 64 --fixed --clusters 1 --iters 30" $L
ROUNDS=3 $V run "--batch 1 --kv-len 64 --fixed --iters 30" $L $W
ROUNDS=3 $V run "--batch 1 --kv-len 4096 --fixed --iters 30" $L $W
echo done
