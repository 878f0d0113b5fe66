#!/usr/bin/env bash
# session 29 call 4: P^T by stmatrix (stsm: the wg and ra cubins with -DMLA_WG_STSM=1): decode test,
# Python GPU tests, memcheck / synccheck, A/Bs against the shipped cubins
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
exec > >(tee $O/s29c4.txt) 2>&1
export LD_LIBRARY_PATH=$PWD/build-lead/src
T=build-lead/tools/mla/mla
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
bash docs/runs/session29-scripts/build_variants.sh assemble stsm
V=scripts/variant_bench.sh; L=$PWD/build-lead/codeobjects; Z=/tmp/s29/stsm/codeobjects
export MLA_CODEOBJECT_DIR=$Z
echo "== decode_test stsm"; timeout 150 build-lead/tests/gpu/gpu_decode_test > $O/decode_test_stsm.log 2>&1; echo "rc=$?"; tail -2 $O/decode_test_stsm.log
echo "== python gpu stsm"; LIBMLA_PATH=$PWD/build-lead/src/libmla.so.0 PYTHONPATH=$PWD/bindings/python timeout 40 python3 -m pytest -q -p no:cacheprovider tests/python -m gpu 2>&1 | tail -1
for a in "--batch 3 --kv-len 300 --heads 16" "--batch 3 --kv-len 300 --heads 32 --page-size 8 --qlen 2" "--batch 8 --kv-len 2000 --dtype bf16 --kv-dtype fp8 --heads 16" "--batch 3 --kv-len 300 --dtype fp8 --heads 16 --page-size 16 --qlen 3"; do
  echo "== memcheck stsm $a"; timeout 30 compute-sanitizer --tool memcheck --error-exitcode 9 $T run $a --iters 1 --check -1 2>&1 | grep -E "check:|ERROR SUMMARY"
done
echo "== synccheck stsm"; timeout 30 compute-sanitizer --tool synccheck --num-cuda-barriers 64 --error-exitcode 9 $T run --batch 40 --kv-len 2000 --iters 1 --check -1 2>&1 | grep -E "check:|ERROR SUMMARY"
unset MLA_CODEOBJECT_DIR
echo "== b64"; ROUNDS=5 timeout 40 $V run "--batch 64 --kv-len 1024 --fixed --iters 30" $L $Z
echo "== 16x2"; ROUNDS=3 timeout 45 $V run "--batch 128 --kv-len 4096 --fixed --qlen 2 --iters 30" $L $Z
echo "== main"; ROUNDS=3 timeout 40 $V run "--batch 128 --kv-len 4096 --fixed --iters 30" $L $Z
echo "== bf16/fp8"; ROUNDS=3 timeout 35 $V run "--batch 128 --kv-len 4096 --fixed --dtype bf16 --kv-dtype fp8 --iters 30" $L $Z
echo "== fp8 16h"; ROUNDS=3 timeout 35 $V run "--batch 128 --kv-len 4096 --fixed --dtype fp8 --iters 30" $L $Z
echo done
