#!/usr/bin/env bash
# session 29 call 1: the lazy running max (lz) and the softmax ablation (ab128) against the shipped
# cubins: A/Bs, traces of the 32-row kernel, the decode test and Python GPU tests on lz
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
exec > >(tee $O/s29c1.txt) 2>&1
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
T=build-lead/tools/mla/mla
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
bash docs/runs/session29-scripts/build_variants.sh assemble lz ab128 tr trlz trab
V=scripts/variant_bench.sh; L=build-lead/codeobjects; Z=/tmp/s29/lz/codeobjects; A=/tmp/s29/ab128/codeobjects
echo "== decode_test lz"; MLA_CODEOBJECT_DIR=$Z timeout 200 build-lead/tests/gpu/gpu_decode_test > $O/decode_test_lz.log 2>&1; echo "rc=$?"; tail -3 $O/decode_test_lz.log
echo "== python gpu lz"; MLA_CODEOBJECT_DIR=$Z LIBMLA_PATH=$PWD/build-lead/src/libmla.so.0 PYTHONPATH=$PWD/bindings/python timeout 60 python3 -m pytest -q -p no:cacheprovider tests/python -m gpu 2>&1 | tail -2
for a in "" "--heads 128" "--qlen 2" "--dtype fp8" "--dtype bf16 --kv-dtype fp8" "--heads 64 --qlen 3"; do
  echo "== run lz $a"; MLA_CODEOBJECT_DIR=$Z timeout 30 $T run $a 2>&1 | grep -E "check:|decode:"
done
echo "== 16x2"; ROUNDS=3 timeout 70 $V run "--batch 128 --kv-len 4096 --fixed --qlen 2 --iters 30" $L $Z $A
echo "== main"; ROUNDS=3 timeout 45 $V run "--batch 128 --kv-len 4096 --fixed --iters 30" $L $Z
echo "== b64"; ROUNDS=5 timeout 50 $V run "--batch 64 --kv-len 1024 --fixed --iters 30" $L $Z $A
echo "== 64h"; ROUNDS=3 timeout 50 $V run "--batch 128 --kv-len 4096 --fixed --heads 64 --iters 30" $L $Z
echo "== 128h"; ROUNDS=3 timeout 60 $V run "--batch 128 --kv-len 4096 --fixed --heads 128 --iters 30" $L $Z
echo "== bf16/fp8"; ROUNDS=3 timeout 45 $V run "--batch 128 --kv-len 4096 --fixed --dtype bf16 --kv-dtype fp8 --iters 30" $L $Z
echo "== fp8 16h"; ROUNDS=3 timeout 45 $V run "--batch 128 --kv-len 4096 --fixed --dtype fp8 --iters 30" $L $Z
for v in tr trlz trab; do
  echo "== trace $v 32 heads b128"; MLA_CODEOBJECT_DIR=/tmp/s29/$v/codeobjects LIBMLA_PATH=$PWD/build-lead/src/libmla.so.0 PYTHONPATH=$PWD/bindings/python \
    timeout 40 python3 benchmarks/decode_trace.py --batch 128 --kv-len 4096 --heads 32 --iters 10 2>&1 | grep -vE "^(2[0-9]|1[6-9]|3[2-7]) "
done
echo done
