#!/usr/bin/env bash
# session 27 call 2: the 32-row kernels on the early refill with decoupled warpgroups (MLA_WG_EARLY32=1); page boxes again at b 1 and 128 heads
set -u
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
T=build-lead/tools/mla/mla
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
V=scripts/variant_bench.sh
L=build-lead/codeobjects; E=build-var/s27/e32/codeobjects; N=build-var/s27/one/codeobjects
echo "== 16x2"; ROUNDS=3 $V run "--batch 128 --kv-len 4096 --fixed --qlen 2 --iters 30" $L $E
echo "== 32h"; ROUNDS=3 $V run "--batch 128 --kv-len 4096 --fixed --heads 32 --iters 30" $L $E
echo "== 16x2 page16"; ROUNDS=2 $V run "--batch 128 --kv-len 4096 --fixed --qlen 2 --page-size 16 --iters 20" $L $E
echo "== 16x2 b64"; ROUNDS=3 $V run "--batch 64 --kv-len 1024 --fixed --qlen 2 --iters 30" $L $E
echo "== 16x2 b1"; ROUNDS=3 $V run "--batch 1 --kv-len 32768 --fixed --qlen 2 --iters 30" $L $E
echo "== b1 one/pb"; ROUNDS=5 $V run "--batch 1 --kv-len 32768 --fixed --iters 30" $N $L
echo "== 128h one/pb"; ROUNDS=2 $V run "--batch 128 --kv-len 4096 --fixed --heads 128 --iters 20" $N $L
echo "== decode test e32"; MLA_CODEOBJECT_DIR=$PWD/$E timeout 200 build-lead/tests/gpu/gpu_decode_test 2>&1 | tail -3
echo "== checks e32"
export MLA_CODEOBJECT_DIR=$PWD/$E
for a in "--batch 5 --kv-len 3000 --qlen 2" "--batch 3 --kv-len 5000 --heads 32 --page-size 16" "--batch 2 --kv-len 20000 --qlen 2 --page-size 128"; do
  $T run $a --iters 2 --check -1 | grep -E "check" | head -2
done
for a in "--batch 3 --kv-len 900 --qlen 2 --page-size 64" "--batch 3 --kv-len 700 --heads 32 --page-size 16" "--batch 2 --kv-len 3000 --qlen 2 --page-size 128"; do
  compute-sanitizer --tool memcheck --error-exitcode 9 $T run $a --iters 1 --check -1 > /tmp/m.txt 2>&1; echo "memcheck [$a] rc=$? $(tail -1 /tmp/m.txt)"
done
compute-sanitizer --tool synccheck --num-cuda-barriers 64 --error-exitcode 9 $T run --batch 40 --kv-len 2000 --qlen 2 --iters 1 > /tmp/s.txt 2>&1; echo "synccheck rc=$? $(tail -1 /tmp/s.txt)"
for d in $L $E; do MLA_CODEOBJECT_DIR=$PWD/$d compute-sanitizer --tool racecheck --error-exitcode 9 $T run --batch 3 --kv-len 700 --qlen 2 --iters 1 > /tmp/r.txt 2>&1; echo "racecheck $d rc=$? $(grep -c "Race reported\|hazard" /tmp/r.txt) $(tail -1 /tmp/r.txt)"; done
echo done
