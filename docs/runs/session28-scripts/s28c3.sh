#!/usr/bin/env bash
# session 28 call 3: traces of the shipped 16- and 32-row kernels, S chain-count variants, ncu of
# the 32-row kernel
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
exec > >(tee $O/s28c3.txt) 2>&1
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
T=build-lead/tools/mla/mla; S=build-lead/tests/gpu/s28
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
for a in "--batch 128 --kv-len 4096 --heads 32" "--batch 64 --kv-len 1024"; do
  echo "== trace $a"; MLA_CODEOBJECT_DIR=$PWD/$S/tr LIBMLA_PATH=$PWD/build-lead/src/libmla.so.0 PYTHONPATH=$PWD/bindings/python \
    timeout 60 python3 benchmarks/decode_trace.py $a --iters 10 2>&1 | grep -vE "^(2[0-9]|1[6-9]|3[2-7]) "
done
V=scripts/variant_bench.sh; L=build-lead/codeobjects
echo "== 16x2"; ROUNDS=3 timeout 60 $V run "--batch 128 --kv-len 4096 --fixed --qlen 2 --iters 30" $L $S/c32_1 $S/c16_2
echo "== b64"; ROUNDS=5 timeout 60 $V run "--batch 64 --kv-len 1024 --fixed --iters 30" $L $S/c16_2 $S/c32_1
echo "== main"; ROUNDS=3 timeout 60 $V run "--batch 128 --kv-len 4096 --fixed --iters 30" $L $S/c16_2
echo "== ncu m32"; BUILD=build-lead OUT=$O timeout 90 scripts/ncu_profile.sh m32 mla_decode_wg "--batch 128 --kv-len 4096 --qlen 2 --fixed"
rm -f $O/m32.ncu-rep; grep -E "Duration|SM Frequency|DRAM Throughput|Registers Per|Issue Slots Busy" $O/m32-details.txt | head -10
echo done
