#!/usr/bin/env bash
# session 29 call 3: the parts of the 16-row softmax (ablation hooks 256 / 512 / 1024 beside 128)
# at b 64 and 16 x MTP 2, and an ncu source profile of the shipped 16-row kernel at b 64
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
exec > >(tee $O/s29c3.txt) 2>&1
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
bash docs/runs/session29-scripts/build_variants.sh assemble ab128 ab256 ab512 ab1024
md5sum build-lead/codeobjects/sm_90a/decode/mla_decode_wg_bf16_bf16.cubin /tmp/s29/*/codeobjects/sm_90a/decode/mla_decode_wg_bf16_bf16.cubin
V=scripts/variant_bench.sh; L=$PWD/build-lead/codeobjects; S=/tmp/s29
echo "== b64"; ROUNDS=5 timeout 120 $V run "--batch 64 --kv-len 1024 --fixed --iters 30" $L $S/ab128/codeobjects $S/ab256/codeobjects $S/ab512/codeobjects $S/ab1024/codeobjects
echo "== 16x2"; ROUNDS=3 timeout 120 $V run "--batch 128 --kv-len 4096 --fixed --qlen 2 --iters 30" $L $S/ab128/codeobjects $S/ab256/codeobjects $S/ab512/codeobjects $S/ab1024/codeobjects
echo "== ncu b64"; BUILD=build-lead OUT=$O timeout 120 scripts/ncu_profile.sh b64 mla_decode_wg "--batch 64 --kv-len 1024 --fixed"
rm -f $O/b64.ncu-rep; grep -E "Duration|SM Frequency|DRAM Throughput|Registers Per|Issue Slots Busy" $O/b64-details.txt | head -10
python3 scripts/ncu_sass_top.py $O/b64-sass.csv 45 0
echo done
