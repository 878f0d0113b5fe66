#!/usr/bin/env bash
# session 28 call 1: one issuer for page boxes (MLA_KV_PBOX1) against the shipped cubins; gpu_check
# on the new build; ncu of the 32-row kernel; the racecheck report of a 32-row run
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
exec > >(tee $O/s28c1.txt) 2>&1
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
T=build-lead/tools/mla/mla; S=build-lead/tests/gpu/s28
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
for a in "--batch 128 --kv-len 4096 --heads 32"; do
 for d in trold trnew; do
  echo "== trace $d $a"
  MLA_CODEOBJECT_DIR=$PWD/$S/$d LIBMLA_PATH=$PWD/build-lead/src/libmla.so.0 PYTHONPATH=$PWD/bindings/python \
    timeout 60 python3 benchmarks/decode_trace.py $a --iters 10 2>&1 | grep -vE "^(2[0-9]|1[6-9]|3[2-7]) "
 done
done
V=scripts/variant_bench.sh; A=$S/old; B=build-lead/codeobjects
echo "== 16x2"; ROUNDS=5 timeout 60 $V run "--batch 128 --kv-len 4096 --fixed --qlen 2 --iters 30" $A $B
echo "== 32h"; ROUNDS=5 timeout 60 $V run "--batch 128 --kv-len 4096 --fixed --heads 32 --iters 30" $A $B
echo "== main"; ROUNDS=2 timeout 40 $V run "--batch 128 --kv-len 4096 --fixed --iters 30" $A $B
echo "== b64"; ROUNDS=5 timeout 40 $V run "--batch 64 --kv-len 1024 --fixed --iters 30" $A $B
echo "== 64h"; ROUNDS=2 timeout 40 $V run "--batch 128 --kv-len 4096 --fixed --heads 64 --iters 30" $A $B
echo "== 128h"; ROUNDS=2 timeout 50 $V run "--batch 128 --kv-len 4096 --fixed --heads 128 --iters 30" $A $B
echo "== b1"; ROUNDS=3 timeout 40 $V run "--batch 1 --kv-len 32768 --fixed --iters 30" $A $B
echo "== gpu_check"; BUILD=build-lead OUT=$O/gc PLAN_SWEEP=600 timeout 300 scripts/gpu_check.sh 2>&1 | tail -42
(cd $O && tar czf gc.tgz gc && rm -rf gc)
echo "== racecheck"; timeout 60 compute-sanitizer --tool racecheck $T run --batch 3 --kv-len 700 --qlen 2 --iters 1 --check -1 > $O/racecheck-m32.txt 2>&1; echo "rc=$? $(grep -c "Race reported\|hazard" $O/racecheck-m32.txt)"; tail -3 $O/racecheck-m32.txt
echo "== ncu m32"; BUILD=build-lead OUT=$O timeout 90 scripts/ncu_profile.sh m32 mla_decode_wg "--batch 128 --kv-len 4096 --qlen 2 --fixed"
rm -f $O/m32.ncu-rep; grep -E "Duration|SM Frequency|DRAM Throughput|Registers Per|Issue Slots Busy|Tensor" $O/m32-details.txt | head -14
echo done
