#!/usr/bin/env bash
# Prepared at the end of session 30 for the next session's first call (not run yet). Build first,
# on the build machine, from the repository root (after `ninja -C build-lead`):
#   D=codeobjects/sm_90a/decode; B=docs/runs/session29-scripts/build_variants.sh
#   $B f1b "-DMLA_WG_LAZY=8" $D/mla_decode_ra_fp8_fp8.cu     # 237 registers, no spill, SASS e0ac4b19
#   cp docs/runs/session30-scripts/s31c1-prepared.sh build-lead/tests/gpu/s31c1.sh
# then run `bash build-lead/tests/gpu/s31c1.sh` on the GPU machine with the usual carry.
# It runs what session 30 could not on its shipped cubins (the double-buffered P^T of call 4):
# the target table and the full gpu_check (its decode test needs 107-152 s: gpu_check gives it
# 240), then 16 x MTP 2 in variant_bench's loop beside the table's figure, then the fp8 / fp8
# register-A kernel with the one-barrier lazy max (f1b) against the shipped exact-max one.
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
exec > >(tee $O/s31c1.txt) 2>&1
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
T=build-lead/tools/mla/mla
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
bash docs/runs/session29-scripts/build_variants.sh assemble f1b
V=scripts/variant_bench.sh; L=$PWD/build-lead/codeobjects; S=/tmp/s29
echo "== targets"; timeout 150 $T bench --targets 2>&1 | tee $O/targets.txt
echo "== gpu_check"; BUILD=build-lead OUT=$O/gc PLAN_SWEEP=600 timeout 330 scripts/gpu_check.sh 2>&1 | tail -42
(cd $O && tar czf gc.tgz gc && rm -rf gc)
echo "== 16x2 loop"; ROUNDS=3 timeout 40 $V run "--batch 128 --kv-len 4096 --fixed --qlen 2 --iters 30" $L
echo "== 16x2 loop, 20 iterations"; ROUNDS=3 timeout 40 $V run "--batch 128 --kv-len 4096 --fixed --qlen 2 --iters 20" $L
echo "== fp8 16h"; ROUNDS=3 timeout 40 $V run "--batch 128 --kv-len 4096 --fixed --dtype fp8 --iters 30" $L $S/f1b/codeobjects
echo done
