#!/usr/bin/env bash
# session 26 call 6: per-warp aggregated mbarrier arrivals in the TMA tile issue (MLA_TMA_ARRIVE_AGG=1)
set -u
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
T=build-lead/tools/mla/mla
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
V=scripts/variant_bench.sh
L=build-lead/codeobjects; A=build-var/s26/agg/codeobjects
echo "== b64"; ROUNDS=5 $V run "--batch 64 --kv-len 1024 --fixed --iters 30" $L $A
echo "== b1"; ROUNDS=3 $V run "--batch 1 --kv-len 32768 --fixed --iters 30" $L $A
echo "== main"; ROUNDS=3 $V run "--batch 128 --kv-len 4096 --fixed --iters 30" $L $A
echo "== 16x2"; ROUNDS=3 $V run "--batch 128 --kv-len 4096 --fixed --qlen 2 --iters 30" $L $A
echo "== 64h"; ROUNDS=3 $V run "--batch 128 --kv-len 4096 --fixed --heads 64 --iters 30" $L $A
echo "== fp8 128h"; ROUNDS=3 $V run "--batch 128 --kv-len 4096 --fixed --heads 128 --dtype fp8 --iters 30" $L $A
echo "== page16"; ROUNDS=3 $V run "--batch 128 --kv-len 4096 --fixed --page-size 16 --iters 20" $L $A
echo "== b1536"; ROUNDS=2 $V run "--batch 1536 --kv-len 2048 --fixed --iters 10" $L $A
echo "== decode test agg"; MLA_CODEOBJECT_DIR=$PWD/$A timeout 200 build-lead/tests/gpu/gpu_decode_test 2>&1 | tail -2
echo "== sanitizers agg"
export MLA_CODEOBJECT_DIR=$PWD/$A
for a in "--batch 40 --kv-len 2000" "--batch 4 --kv-len 16384 --heads 64 --check 2" "--batch 4 --kv-len 16384 --heads 64 --dtype fp8 --check 2"; do
  compute-sanitizer --tool synccheck --num-cuda-barriers 64 --error-exitcode 9 $T run $a --iters 1 > /tmp/s.txt 2>&1; echo "synccheck [$a] rc=$? $(tail -1 /tmp/s.txt)"
done
for a in "--batch 3 --kv-len 300 --heads 16 --page-size 16" "--batch 4 --kv-len 2000 --dtype fp8 --heads 64 --page-size 16" "--batch 3 --kv-len 300 --heads 32 --page-size 8 --qlen 2" "--batch 3 --kv-len 900 --heads 16 --page-size 128"; do
  compute-sanitizer --tool memcheck --error-exitcode 9 $T run $a --iters 1 --check -1 > /tmp/m.txt 2>&1; echo "memcheck [$a] rc=$? $(tail -1 /tmp/m.txt)"
done
echo done
