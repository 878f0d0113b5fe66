#!/usr/bin/env bash
# session 29 call 2: call 1's A/Bs again with absolute-path-safe variant_bench (call 1's timed the
# default cubins under every DIR); shipped-cubin checks beside call 1's lz checks; then lz's cubins
# installed over build-lead/codeobjects (this machine's copy): the target table and gpu_check on lz
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
exec > >(tee $O/s29c2.txt) 2>&1
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
T=build-lead/tools/mla/mla
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
bash docs/runs/session29-scripts/build_variants.sh assemble lz ab128
V=scripts/variant_bench.sh; L=$PWD/build-lead/codeobjects; Z=/tmp/s29/lz/codeobjects; A=/tmp/s29/ab128/codeobjects
for a in "--qlen 2" "--heads 64 --qlen 3"; do
  echo "== run shipped $a"; timeout 30 $T run $a 2>&1 | grep -E "check:"
done
echo "== 16x2"; ROUNDS=3 timeout 70 $V run "--batch 128 --kv-len 4096 --fixed --qlen 2 --iters 30" $L $Z $A
echo "== b64"; ROUNDS=5 timeout 50 $V run "--batch 64 --kv-len 1024 --fixed --iters 30" $L $Z $A
echo "== main"; ROUNDS=3 timeout 45 $V run "--batch 128 --kv-len 4096 --fixed --iters 30" $L $Z $A
echo "== 128h"; ROUNDS=3 timeout 60 $V run "--batch 128 --kv-len 4096 --fixed --heads 128 --iters 30" $L $Z
echo "== 64h"; ROUNDS=3 timeout 50 $V run "--batch 128 --kv-len 4096 --fixed --heads 64 --iters 30" $L $Z
echo "== bf16/fp8"; ROUNDS=3 timeout 45 $V run "--batch 128 --kv-len 4096 --fixed --dtype bf16 --kv-dtype fp8 --iters 30" $L $Z
echo "== fp8 16h"; ROUNDS=3 timeout 45 $V run "--batch 128 --kv-len 4096 --fixed --dtype fp8 --iters 30" $L $Z
echo "== install lz"; cp build-lead/tests/gpu/s29/lz/*.cubin build-lead/codeobjects/sm_90a/decode/ && md5sum build-lead/codeobjects/sm_90a/decode/*.cubin | cut -c1-8 | tr '\n' ' '; echo
echo "== targets lz"; timeout 150 $T bench --targets 2>&1 | tee $O/targets-lz.txt
echo "== gpu_check lz"; BUILD=build-lead OUT=$O/gc PLAN_SWEEP=600 timeout 300 scripts/gpu_check.sh 2>&1 | tail -42
(cd $O && tar czf gc.tgz gc && rm -rf gc)
echo done
