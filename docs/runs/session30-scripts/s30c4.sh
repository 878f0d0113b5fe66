#!/usr/bin/env bash
# session 30 call 4 (the last ~290 s of device time): the double-buffered P^T of the 16- and
# 32-row bf16-KV kernels (shipped build) against `ls` (call 3's cubins, single P^T), then its
# decode test and sanitizer runs. `ls` was built at 339ba51 (s30c3.sh's head).
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
exec > >(tee $O/s30c4.txt) 2>&1
export LD_LIBRARY_PATH=$PWD/build-lead/src
T=build-lead/tools/mla/mla
bash docs/runs/session29-scripts/build_variants.sh assemble ls
V=scripts/variant_bench.sh; L=$PWD/build-lead/codeobjects; Z=/tmp/s29/ls/codeobjects
echo "== b64"; ROUNDS=3 timeout 30 $V run "--batch 64 --kv-len 1024 --fixed --iters 30" $L $Z
echo "== 16x2"; ROUNDS=2 timeout 30 $V run "--batch 128 --kv-len 4096 --fixed --qlen 2 --iters 30" $L $Z
export MLA_CODEOBJECT_DIR=$L
echo "== decode_test"; timeout 120 build-lead/tests/gpu/gpu_decode_test > $O/decode_test.log 2>&1; echo "rc=$?"; tail -1 $O/decode_test.log
for a in "--batch 3 --kv-len 300 --heads 16" "--batch 3 --kv-len 300 --heads 32 --page-size 8 --qlen 2"; do
  echo "== memcheck $a"; timeout 20 compute-sanitizer --tool memcheck --error-exitcode 9 $T run $a --iters 1 --check -1 2>&1 | grep -E "check:|ERROR SUMMARY"
done
for a in "--batch 40 --kv-len 2000" "--batch 40 --kv-len 2000 --heads 32"; do
  echo "== synccheck $a"; timeout 20 compute-sanitizer --tool synccheck --num-cuda-barriers 64 --error-exitcode 9 $T run $a --iters 1 --check -1 2>&1 | grep -E "check:|ERROR SUMMARY"
done
echo done
