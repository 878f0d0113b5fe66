#!/usr/bin/env bash
# session 26 call 1: slim reducer correctness + A/B, b 64 split experiments
set -u
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
T=build-lead/tools/mla/mla
O=${OUT:-/tmp/out}
mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
echo "== A/B slim vs wide"
V=scripts/variant_bench.sh
ROUNDS=5 $V run "--batch 1 --kv-len 32768 --fixed --iters 30" build-lead/codeobjects build-var/s26/wide/codeobjects
ROUNDS=3 $V run "--batch 1 --kv-len 32768 --fixed --heads 128 --iters 30" build-lead/codeobjects build-var/s26/wide/codeobjects
ROUNDS=3 $V run "--batch 3 --kv-len 300 --iters 30" build-lead/codeobjects build-var/s26/wide/codeobjects
echo "== b 64"
ROUNDS=3 $V run "--batch 64 --kv-len 1024 --fixed --iters 30" build-lead/codeobjects
ROUNDS=3 $V run "--batch 64 --kv-len 1024 --fixed --iters 30 --tail-tokens 0" build-lead/codeobjects build-var/s26/slimall/codeobjects
ROUNDS=3 $V run "--batch 64 --kv-len 1024 --fixed --iters 30 --tail-tokens 0 --fused-reduce" build-lead/codeobjects
echo "== checks"
for a in "--batch 1 --kv-len 32768 --fixed" "--batch 1 --kv-len 32768 --fixed --heads 128" "--batch 3 --kv-len 300" "--batch 1 --kv-len 200000 --fixed" ; do
  $T run $a --iters 3 --check -1 2>&1 | grep -E "check|decode:|reduce|error" | head -4
done
echo "== sanitizers"
for a in "--batch 1 --kv-len 32768 --fixed" "--batch 1 --kv-len 32768 --fixed --heads 128" "--batch 3 --kv-len 300"; do
  compute-sanitizer --tool memcheck --error-exitcode 9 $T run $a --iters 1 --check -1 > $O/mc.txt 2>&1; echo "memcheck [$a] rc=$? $(grep -c 'Invalid\|ERROR' $O/mc.txt) $(tail -1 $O/mc.txt)"
  compute-sanitizer --tool racecheck --kernel-name kns=slim --error-exitcode 9 $T run $a --iters 1 --check -1 > $O/rc.txt 2>&1; echo "racecheck [$a] rc=$? $(tail -1 $O/rc.txt)"
done
compute-sanitizer --tool synccheck --kernel-name kns=slim --error-exitcode 9 $T run --batch 1 --kv-len 32768 --fixed --iters 1 --check -1 > $O/sc.txt 2>&1; echo "synccheck rc=$? $(tail -1 $O/sc.txt)"
echo "== decode test"
timeout 240 build-lead/tests/gpu/gpu_decode_test > $O/decode_test.txt 2>&1; echo "rc=$?"; tail -3 $O/decode_test.txt
echo "== ncu"
$V ncu "--batch 64 --kv-len 1024 --fixed --iters 5 --tail-tokens 0" "mla_decode" build-lead/codeobjects
$V ncu "--batch 64 --kv-len 1024 --fixed --iters 5 --tail-tokens 0" "mla_reduce" build-lead/codeobjects build-var/s26/slimall/codeobjects
$V ncu "--batch 1 --kv-len 32768 --fixed --iters 5" "mla_reduce" build-lead/codeobjects build-var/s26/wide/codeobjects
echo done
