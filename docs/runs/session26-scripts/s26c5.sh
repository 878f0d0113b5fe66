#!/usr/bin/env bash
# session 26 call 5: the gap between a tile's MMAs and its slot's refill (trace stamps 38-39), and the fence ablation
set -u
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
for a in "--batch 1 --kv-len 32768" "--batch 64 --kv-len 1024"; do
 for d in trA trB; do
  echo "== trace $d $a"
  MLA_CODEOBJECT_DIR=$PWD/build-var/s26/$d/codeobjects LIBMLA_PATH=$PWD/build-lead/src/libmla.so.0 PYTHONPATH=$PWD/bindings/python \
    python3 benchmarks/decode_trace.py $a --iters 10 2>&1 | grep -vE "^(30|31|2[0-9]|1[6-9]|3[2-7]) "
 done
done
V=scripts/variant_bench.sh
L=build-lead/codeobjects; N=build-var/s26/nof/codeobjects
echo "== b64"; ROUNDS=5 $V run "--batch 64 --kv-len 1024 --fixed --iters 30" $L $N
echo "== b1"; ROUNDS=3 $V run "--batch 1 --kv-len 32768 --fixed --iters 30" $L $N
echo "== main"; ROUNDS=3 $V run "--batch 128 --kv-len 4096 --fixed --iters 30" $L $N
echo "== b1536"; ROUNDS=2 $V run "--batch 1536 --kv-len 2048 --fixed --iters 10" $L $N
echo "== check nof"; MLA_CODEOBJECT_DIR=$PWD/$N build-lead/tools/mla/mla run --batch 64 --kv-len 1024 --iters 2 --check -1 | grep -E "check"
echo done
