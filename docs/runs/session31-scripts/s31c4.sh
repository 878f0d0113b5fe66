#!/usr/bin/env bash
# session 31 call 4: the full gpu_check on 145319d's cubins with the decode test's no_split_tiles
# cases made small (call 3's ran out of time); then the qm bf16 kernel with a late trigger (qlt:
# -DMLA_QMT_LATE_TRIG=1) on split 64-row plans (varied lengths, where the reducer runs). Build:
#   $B qlt "-DMLA_QMT_LATE_TRIG=1" codeobjects/sm_90a/decode/mla_decode_qm_bf16_bf16.cu
#   (B=docs/runs/session29-scripts/build_variants.sh); cp docs/runs/session31-scripts/s31c4.sh build-lead/tests/gpu/s31c4.sh
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
exec > >(tee $O/s31c4.txt) 2>&1
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
echo "== gpu_check"; BUILD=build-lead OUT=$O/gc PLAN_SWEEP=600 timeout 330 scripts/gpu_check.sh 2>&1 | tail -42
(cd $O && tar czf gc.tgz gc && rm -rf gc)
bash docs/runs/session29-scripts/build_variants.sh assemble qlt
V=scripts/variant_bench.sh; L=$PWD/build-lead/codeobjects; S=/tmp/s29
echo "== 64 heads varied: shipped vs qlt"; ROUNDS=3 timeout 40 $V run "--batch 128 --kv-len 4096 --heads 64 --varlen --iters 30" $L $S/qlt/codeobjects
echo "== 128 heads varied: shipped vs qlt"; ROUNDS=2 timeout 40 $V run "--batch 128 --kv-len 4096 --heads 128 --varlen --iters 20" $L $S/qlt/codeobjects
echo "== check qlt"; MLA_CODEOBJECT_DIR=$S/qlt/codeobjects timeout 30 build-lead/tools/mla/mla run --batch 24 --kv-len 3000 --heads 128 --varlen --check -1 --iters 2 2>&1 | grep -E "plan:|check|decode:"
echo done
