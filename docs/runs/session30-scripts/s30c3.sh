#!/usr/bin/env bash
# session 30 call 3: MLA_WG_LATESHFL (the shuffle rounds only on tiles where a max moved) checked and timed.
# Build first, from the repository root (after `ninja -C build-lead`):
#   D=codeobjects/sm_90a/decode; B=docs/runs/session29-scripts/build_variants.sh
#   $B ls "-DMLA_WG_LATESHFL=1" $D/mla_decode_wg_bf16_bf16.cu $D/mla_decode_wg_bf16_fp8.cu $D/mla_decode_wg_fp8_fp8.cu
#   cp docs/runs/session30-scripts/s30c3.sh build-lead/tests/gpu/s30c3.sh
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
exec > >(tee $O/s30c3.txt) 2>&1
export LD_LIBRARY_PATH=$PWD/build-lead/src
T=build-lead/tools/mla/mla
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
bash docs/runs/session29-scripts/build_variants.sh assemble ls
V=scripts/variant_bench.sh; L=$PWD/build-lead/codeobjects; Z=/tmp/s29/ls/codeobjects
export MLA_CODEOBJECT_DIR=$Z
echo "== decode_test ls"; timeout 150 build-lead/tests/gpu/gpu_decode_test > $O/decode_test_ls.log 2>&1; echo "rc=$?"; tail -2 $O/decode_test_ls.log
echo "== python gpu ls"; LIBMLA_PATH=$PWD/build-lead/src/libmla.so.0 PYTHONPATH=$PWD/bindings/python timeout 40 python3 -m pytest -q -p no:cacheprovider tests/python -m gpu 2>&1 | tail -1
for a in "--batch 3 --kv-len 300 --heads 16" "--batch 3 --kv-len 300 --heads 32 --page-size 8 --qlen 2" "--batch 8 --kv-len 2000 --dtype bf16 --kv-dtype fp8 --heads 32" "--batch 3 --kv-len 300 --dtype fp8 --heads 32 --page-size 16" "--batch 40 --kv-len 2000 --heads 16 --fused-reduce" "--batch 600 --kv-len 140 --heads 32 --page-size 16 --fused-reduce"; do
  echo "== memcheck ls $a"; timeout 40 compute-sanitizer --tool memcheck --error-exitcode 9 $T run $a --iters 1 --check -1 2>&1 | grep -E "check:|ERROR SUMMARY"
done
for a in "--batch 40 --kv-len 2000" "--batch 40 --kv-len 2000 --heads 32" "--batch 40 --kv-len 2000 --heads 32 --dtype bf16 --kv-dtype fp8"; do
  echo "== synccheck ls $a"; timeout 40 compute-sanitizer --tool synccheck --num-cuda-barriers 64 --error-exitcode 9 $T run $a --iters 1 --check -1 2>&1 | grep -E "check:|ERROR SUMMARY"
done
echo "== targets ls"; timeout 150 $T bench --targets 2>&1 | tee $O/targets_ls.txt
unset MLA_CODEOBJECT_DIR
echo "== b64"; ROUNDS=5 timeout 50 $V run "--batch 64 --kv-len 1024 --fixed --iters 30" $L $Z
echo "== 16x2"; ROUNDS=3 timeout 50 $V run "--batch 128 --kv-len 4096 --fixed --qlen 2 --iters 30" $L $Z
echo "== main"; ROUNDS=3 timeout 50 $V run "--batch 128 --kv-len 4096 --fixed --iters 30" $L $Z
echo "== 16x2 fp8 kv"; ROUNDS=3 timeout 50 $V run "--batch 128 --kv-len 4096 --fixed --qlen 2 --dtype bf16 --kv-dtype fp8 --iters 30" $L $Z
echo done
