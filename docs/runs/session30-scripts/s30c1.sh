#!/usr/bin/env bash
# session 30 call 1 (prepared at the end of session 29 as s30c1-prepared.sh; fl added). Build first,
# on the build machine, from the repository root:
#   D=codeobjects/sm_90a/decode; B=docs/runs/session29-scripts/build_variants.sh; W=$D/mla_decode_wg_bf16_bf16.cu
#   $B et "-DMLA_WG_EARLYTOK=1" $W; $B l1b "-DMLA_WG_LAZY1B=1" $W; $B etl1b "-DMLA_WG_EARLYTOK=1 -DMLA_WG_LAZY1B=1" $W
#   $B tr "-DMLA_WG_TRACE=1" $W; $B trab "-DMLA_WG_TRACE=1 -DMLA_WG_ABLATE=128" $W
#   fl: mla_decode_ra_fp8_fp8.cu with -DMLA_WG_LAZY=8, built by hand without -Werror (4-byte spill)
#   cp docs/runs/session30-scripts/s30c1.sh build-lead/tests/gpu/s30c1.sh
# then run `bash build-lead/tests/gpu/s30c1.sh` on the GPU machine with the usual carry.
# It runs the checks that did not run on session 29's final cubins (target table, gpu_check), the
# 16-row traces with and without the softmax, and the two prepared softmax variants' A/Bs and
# decode test.
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
exec > >(tee $O/s30c1.txt) 2>&1
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
T=build-lead/tools/mla/mla
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
bash docs/runs/session29-scripts/build_variants.sh assemble et l1b etl1b tr trab fl
V=scripts/variant_bench.sh; L=$PWD/build-lead/codeobjects; S=/tmp/s29
echo "== targets"; timeout 150 $T bench --targets 2>&1 | tee $O/targets.txt
for v in tr trab; do
  echo "== trace $v b64"; MLA_CODEOBJECT_DIR=$S/$v/codeobjects LIBMLA_PATH=$PWD/build-lead/src/libmla.so.0 PYTHONPATH=$PWD/bindings/python \
    timeout 40 python3 benchmarks/decode_trace.py --batch 64 --kv-len 1024 --iters 10 2>&1
done
echo "== decode_test etl1b"; MLA_CODEOBJECT_DIR=$S/etl1b/codeobjects timeout 150 build-lead/tests/gpu/gpu_decode_test > $O/decode_test_etl1b.log 2>&1; echo "rc=$?"; tail -1 $O/decode_test_etl1b.log
echo "== b64"; ROUNDS=5 timeout 60 $V run "--batch 64 --kv-len 1024 --fixed --iters 30" $L $S/et/codeobjects $S/l1b/codeobjects $S/etl1b/codeobjects
echo "== 16x2"; ROUNDS=3 timeout 80 $V run "--batch 128 --kv-len 4096 --fixed --qlen 2 --iters 30" $L $S/et/codeobjects $S/l1b/codeobjects $S/etl1b/codeobjects
echo "== fp8 16h"; ROUNDS=3 timeout 40 $V run "--batch 128 --kv-len 4096 --fixed --dtype fp8 --iters 30" $L $S/fl/codeobjects
echo "== gpu_check"; BUILD=build-lead OUT=$O/gc PLAN_SWEEP=600 timeout 300 scripts/gpu_check.sh 2>&1 | tail -42
(cd $O && tar czf gc.tgz gc && rm -rf gc)
echo done
