#!/usr/bin/env bash
# session 30 call 2: the shipped set with MLA_WG_LAZY1B 1 (wg cubins) checked in full and timed.
# Build first, from the repository root (after `ninja -C build-lead`):
#   D=codeobjects/sm_90a/decode; B=docs/runs/session29-scripts/build_variants.sh
#   $B s29 "-DMLA_WG_LAZY1B=0" $D/mla_decode_wg_bf16_bf16.cu $D/mla_decode_wg_bf16_fp8.cu $D/mla_decode_wg_fp8_fp8.cu
#   $B trl "-DMLA_WG_TRACE=1" $D/mla_decode_wg_bf16_bf16.cu
#   rl1b: mla_decode_ra_bf16_fp8.cu with -DMLA_WG_LAZY1B=1, built by hand without -Werror (4-byte spill)
#   cp docs/runs/session30-scripts/s30c2.sh build-lead/tests/gpu/s30c2.sh
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
exec > >(tee $O/s30c2.txt) 2>&1
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
T=build-lead/tools/mla/mla
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
bash docs/runs/session29-scripts/build_variants.sh assemble s29 trl rl1b
V=scripts/variant_bench.sh; L=$PWD/build-lead/codeobjects; S=/tmp/s29
echo "== targets"; timeout 150 $T bench --targets 2>&1 | tee $O/targets.txt
echo "== gpu_check"; BUILD=build-lead OUT=$O/gc PLAN_SWEEP=600 timeout 300 scripts/gpu_check.sh 2>&1 | tail -42
(cd $O && tar czf gc.tgz gc && rm -rf gc)
echo "== b64"; ROUNDS=5 timeout 50 $V run "--batch 64 --kv-len 1024 --fixed --iters 30" $L $S/s29/codeobjects
echo "== 16x2"; ROUNDS=3 timeout 50 $V run "--batch 128 --kv-len 4096 --fixed --qlen 2 --iters 30" $L $S/s29/codeobjects
echo "== main"; ROUNDS=3 timeout 50 $V run "--batch 128 --kv-len 4096 --fixed --iters 30" $L $S/s29/codeobjects
echo "== 16x2 fp8 kv"; ROUNDS=3 timeout 50 $V run "--batch 128 --kv-len 4096 --fixed --qlen 2 --dtype bf16 --kv-dtype fp8 --iters 30" $L $S/s29/codeobjects
echo "== bf16/fp8"; ROUNDS=3 timeout 50 $V run "--batch 128 --kv-len 4096 --fixed --dtype bf16 --kv-dtype fp8 --iters 30" $L $S/rl1b/codeobjects
echo "== trace trl b64"; MLA_CODEOBJECT_DIR=$S/trl/codeobjects LIBMLA_PATH=$PWD/build-lead/src/libmla.so.0 PYTHONPATH=$PWD/bindings/python \
  timeout 40 python3 benchmarks/decode_trace.py --batch 64 --kv-len 1024 --iters 10 2>&1
echo done
