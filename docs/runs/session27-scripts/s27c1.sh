#!/usr/bin/env bash
# session 27 call 1: page boxes (launch_kv_tma 2, one 4-D TMA box a tile) against 9 3-D boxes
set -u
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
T=build-lead/tools/mla/mla
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
O=build-var/s27/old/codeobjects; L=build-lead/codeobjects; P=build-var/s27/pb/codeobjects
for a in "--batch 64 --kv-len 1024" "--batch 1 --kv-len 32768"; do
 for d in tr1 trpb; do
  echo "== trace $d $a"
  MLA_CODEOBJECT_DIR=$PWD/build-var/s27/$d/codeobjects LIBMLA_PATH=$PWD/build-lead/src/libmla.so.0 PYTHONPATH=$PWD/bindings/python \
    python3 benchmarks/decode_trace.py $a --iters 10 2>&1 | grep -vE "^(30|31|2[0-9]|1[6-9]|3[2-7]) "
 done
done
V=scripts/variant_bench.sh
echo "== b64"; ROUNDS=5 $V run "--batch 64 --kv-len 1024 --fixed --iters 30" $O $L $P
echo "== b1"; ROUNDS=3 $V run "--batch 1 --kv-len 32768 --fixed --iters 30" $O $L $P
echo "== main"; ROUNDS=3 $V run "--batch 128 --kv-len 4096 --fixed --iters 30" $O $L $P
echo "== 16x2"; ROUNDS=3 $V run "--batch 128 --kv-len 4096 --fixed --qlen 2 --iters 30" $O $L $P
echo "== 64h"; ROUNDS=3 $V run "--batch 128 --kv-len 4096 --fixed --heads 64 --iters 30" $O $L $P
echo "== b1536"; ROUNDS=2 $V run "--batch 1536 --kv-len 2048 --fixed --iters 10" $O $L $P
echo "== decode test pb"; MLA_CODEOBJECT_DIR=$PWD/$P timeout 200 build-lead/tests/gpu/gpu_decode_test 2>&1 | tail -3
echo "== sanitizers pb"
export MLA_CODEOBJECT_DIR=$PWD/$P
for a in "--batch 3 --kv-len 900 --heads 16 --page-size 64" "--batch 3 --kv-len 700 --heads 32 --page-size 128 --qlen 2" "--batch 4 --kv-len 2000 --heads 64 --page-size 256" "--batch 3 --kv-len 300 --heads 16 --page-size 16"; do
  compute-sanitizer --tool memcheck --error-exitcode 9 $T run $a --iters 1 --check -1 > /tmp/m.txt 2>&1; echo "memcheck [$a] rc=$? $(tail -1 /tmp/m.txt)"
done
compute-sanitizer --tool synccheck --num-cuda-barriers 64 --error-exitcode 9 $T run --batch 40 --kv-len 2000 --iters 1 > /tmp/s.txt 2>&1; echo "synccheck rc=$? $(tail -1 /tmp/s.txt)"
echo done
